"""`spraycv export`'s format flags are spelled out in its signature; they must match the
format table (spraycv.formats) in name, type, default and help."""

from __future__ import annotations

import inspect

from typer.testing import CliRunner

from spraycv.cli.app import app
from spraycv.cli.export import export
from spraycv.export.formats import flag_help
from spraycv.formats import FORMAT_FLAGS

# the options that steer every export, not one format (not in the table)
GENERAL_OPTIONS = {
    "ctx",
    "weights",
    "fmt",
    "out",
    "opset",
    "parity_images",
    "image_size",
    "keep_failed",
    "list_formats",
}


def _parameters() -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(export, eval_str=True).parameters)


def test_the_cli_has_exactly_the_table_flags():
    assert set(_parameters()) - GENERAL_OPTIONS == set(FORMAT_FLAGS)


def test_each_flag_has_the_table_type_default_and_help():
    parameters = _parameters()
    for name, flag in FORMAT_FLAGS.items():
        parameter = parameters[name]
        assert parameter.annotation is type(flag.default), name
        assert parameter.default.default == flag.default, name
        assert parameter.default.help == flag_help(flag), name  # the option reads its own row


def test_the_help_lists_every_flag_with_the_formats_it_applies_to():
    result = CliRunner().invoke(app, ["export", "--help"], env={"COLUMNS": "240"})
    assert result.exit_code == 0
    for flag in FORMAT_FLAGS.values():
        assert flag.cli in result.output
    assert "onnx-int8, tensorrt: rendered images to calibrate INT8 on." in result.output
