"""`spraycv synth`: render a synthetic spray dataset."""

from __future__ import annotations

from pathlib import Path

import typer

from spraycv.cli.errors import ExitCode, exits


@exits(((FileExistsError, ValueError), ExitCode.BAD_REQUEST))  # ConfigError is a ValueError
def synth(
    ctx: typer.Context,
    overrides: list[str] = typer.Argument(
        None, help="Renderer config overrides, e.g. appearance.prob_dyed=0.5"
    ),
    config: Path | None = typer.Option(None, "--config", "-c", help="Renderer YAML config."),
    out: Path = typer.Option(..., "--out", help="Output dataset folder (must be empty)."),
    n: int = typer.Option(100, "--n", help="Number of images."),
    size: int = typer.Option(512, "--size", help="Image width (and height), px."),
    height: int | None = typer.Option(
        None, "--height", help="Image height, px, for frames that are not square (default: --size)."
    ),
    seed: int = typer.Option(0, "--seed", help="Dataset seed: same seed, same dataset."),
    workers: int = typer.Option(0, help="Worker processes; 0 = all cores."),
    image_format: str = typer.Option(
        "jpg",
        help="Image format: jpg (quality 95), png, or png16 (PNG; the raw 10-12-bit frames "
        "of the hdr style as 16-bit PNG).",
    ),
    overwrite: bool = typer.Option(False, help="Replace the dataset files in a non-empty --out."),
) -> None:
    """Render synthetic nozzle-spray images with exact cone-angle ground truth.

    Writes OUT/images, OUT/masks (0/255 PNG, threshold > 127), OUT/instances (nozzle
    index + 1), OUT/labels.jsonl (one ground-truth record per image) and OUT/dataset.json.
    """
    from spraycv.config.loader import load_config
    from spraycv.config.render import RenderConfig
    from spraycv.data.synth import write_dataset  # heavy imports only when run

    render_config = load_config(RenderConfig, config, list(overrides or []))
    # the other options are write_dataset's parameters, under the same names
    options = {k: v for k, v in ctx.params.items() if k not in ("overrides", "config")}
    path = write_dataset(**options, config=render_config)
    typer.echo(f"wrote {n} samples to {path}")
