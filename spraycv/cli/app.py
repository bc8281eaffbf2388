"""The `spraycv` command line: one Typer app, one module per command."""

from __future__ import annotations

import typer

from spraycv.cli.apex_head import apex_head
from spraycv.cli.bench import bench
from spraycv.cli.calibrate import calibrate
from spraycv.cli.daemon import daemon
from spraycv.cli.dashboard import dashboard
from spraycv.cli.data import data_app
from spraycv.cli.db import db_app
from spraycv.cli.evaluate import compare, evaluate
from spraycv.cli.export import export
from spraycv.cli.finetune import finetune
from spraycv.cli.label import label_app
from spraycv.cli.measure import measure
from spraycv.cli.predict import predict
from spraycv.cli.refiner import refiner_app
from spraycv.cli.synth import synth
from spraycv.cli.train import train
from spraycv.io.native_logs import quiet_native_logs

app = typer.Typer(
    name="spraycv",
    help="Measure agricultural nozzle spray cone angles from camera images.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.command()(measure)
app.command()(train)
app.command()(finetune)
app.command("apex-head")(apex_head)
app.command("eval")(evaluate)
app.command()(compare)
app.command()(synth)
app.add_typer(data_app, name="data")
app.command()(export)
app.command()(predict)
app.command()(bench)
app.command()(daemon)
app.command()(dashboard)
app.command()(calibrate)
app.add_typer(label_app, name="label")
app.add_typer(refiner_app, name="refiner")
app.add_typer(db_app, name="db")


def main() -> None:
    """Console-script entry point."""
    quiet_native_logs()
    app()
