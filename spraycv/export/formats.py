"""The export formats (the rows of `spraycv.formats.MODEL_FORMATS` that have an exporter),
and the up-front validation of an export request."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import MappingProxyType

from spraycv.formats import (
    CHECKPOINT,
    FORMAT_FLAGS,
    MODEL_FORMATS,
    Flag,
    FlagValue,
    ModelFormat,
    cli_flag,
)


class ExportError(ValueError):
    """An export that cannot be done as asked: bad format, flag, file or missing dependency."""


# The export targets by name, in table order (the checkpoint is the source, not a target).
FORMATS: Mapping[str, ModelFormat] = MappingProxyType(
    {f.name: f for f in MODEL_FORMATS if f.exporter is not None}
)
# Every format-specific flag's value when not given; one that differs counts as "given".
FLAG_DEFAULTS: Mapping[str, FlagValue] = MappingProxyType(
    {name: flag.default for name, flag in FORMAT_FLAGS.items()}
)
# Options of every format (they steer the export, not the file format).
COMMON_FLAGS = frozenset({"opset", "parity_images"})
SOURCE_SUFFIX = CHECKPOINT.suffix  # every export starts from a checkpoint


def get_format(name: str) -> ModelFormat:
    """Look a format up by name; the error lists the valid names."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ExportError(f"unknown export format {name!r}; valid: {', '.join(FORMATS)}") from None


def formats_with(flag: Flag) -> list[str]:
    """The names of the export formats a flag applies to."""
    return [name for name, fmt in FORMATS.items() if flag in fmt.flags]


def flag_help(flag: Flag) -> str:
    """The CLI help of a flag: the formats it applies to, then what it does."""
    return f"{', '.join(formats_with(flag))}: {flag.help}"


def check_dependency(fmt: ModelFormat) -> None:
    """Raise ExportError naming the package to install when the format's module is missing."""
    top = fmt.requires.split(".")[0]
    try:
        found = importlib.util.find_spec(top) is not None and (
            top == fmt.requires or importlib.util.find_spec(fmt.requires) is not None
        )
    except (ImportError, ValueError):
        found = False
    if not found:
        hint = f"pip install 'spraycv[{fmt.extra}]'" if fmt.extra else f"pip install {top}"
        raise ExportError(f"format {fmt.name!r} needs the Python module {fmt.requires!r}: {hint}")


def check_gpu(fmt: ModelFormat) -> None:
    """Raise ExportError when a GPU-only format is asked for on a machine without CUDA."""
    if fmt.device != "gpu":
        return
    import torch

    if not torch.cuda.is_available():
        raise ExportError(
            f"format {fmt.name!r} builds for the GPU it runs on, and no CUDA GPU is visible "
            "here; export 'onnx' and build the engine on the target machine"
        )


def check_flags(fmt: ModelFormat, flags: Iterable[str]) -> None:
    """Raise ExportError when a given flag does not apply to the format, naming the formats
    it applies to and the format's own flags."""
    wrong = sorted(set(flags) - fmt.flag_names - COMMON_FLAGS)
    if not wrong:
        return
    where = [n for n, f in FORMATS.items() if all(w in f.flag_names for w in wrong)]
    hint = f" (they apply to: {', '.join(where)})" if where else ""
    valid = ", ".join(cli_flag(f) for f in sorted(fmt.flag_names)) or "none"
    verb = "does" if len(wrong) == 1 else "do"
    raise ExportError(
        f"{', '.join(cli_flag(w) for w in wrong)} {verb} not apply to format {fmt.name!r}"
        f"{hint}; its flags: {valid}"
    )


def validate_request(
    format_name: str,
    flags: Iterable[str] = (),
    out: Path | None = None,
    check_runtime: bool = True,
) -> ModelFormat:
    """Check an export request before any work is done.

    Args:
        format_name: a key of FORMATS.
        flags: the format-specific options that were given (set to a non-default value),
            as names like "half" or "calib_images".
        out: the output path, whose suffix must be the format's.
        check_runtime: also check the needed module and, for GPU formats, a CUDA GPU.
    Returns:
        The format.
    Raises:
        ExportError: listing the valid formats, the flags that apply, or what to install.
    """
    fmt = get_format(format_name)
    check_flags(fmt, flags)
    if out is not None and not str(out).lower().endswith(fmt.suffix):
        raise ExportError(f"format {fmt.name!r} writes {fmt.suffix} files; got --out {out}")
    if check_runtime:
        check_dependency(fmt)
        check_gpu(fmt)
    return fmt


def format_table() -> str:
    """The formats as a plain-text table (for `spraycv export --list`)."""
    rows = [("format", "suffix", "runs on", "flags")]
    rows += [
        (f.name, f.suffix, f.device, " ".join(cli_flag(x) for x in sorted(f.flag_names)) or "-")
        for f in FORMATS.values()
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows
    )
