"""`spraycv bench`: every available backend side by side, per stage, against PyTorch eager."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from spraycv.cli.errors import bad_request, exits
from spraycv.paths import default_checkpoint

if TYPE_CHECKING:
    from spraycv.runtime.bench import BackendTiming


def _siblings(weights: Path) -> list[Path]:
    """Exported files next to a checkpoint, under the names `spraycv export` gives them."""
    from spraycv.export.formats import FORMATS

    names = [FORMATS["onnx"].default_output(weights), FORMATS["onnx-int8"].default_output(weights)]
    names += [weights.with_name(f"{weights.stem}.{p}.engine") for p in ("fp32", "fp16", "int8")]
    return [p for p in names if p.is_file()]


def _export_missing(weights: Path, found: list[Path], tmp: Path, log) -> list[Path]:
    """Export the ONNX formats not found, quickly (8 parity images; a failed parity is noted)."""
    from spraycv.export import ParityError, export_model

    have_int8 = any(p.name.endswith(".int8.onnx") for p in found)
    have_fp32 = any(p.suffix == ".onnx" and not p.name.endswith(".int8.onnx") for p in found)
    wanted = [f for f, have in (("onnx", have_fp32), ("onnx-int8", have_int8)) if not have]
    made = []
    for fmt in wanted:
        out = tmp / (f"{weights.stem}.int8.onnx" if fmt == "onnx-int8" else f"{weights.stem}.onnx")
        try:
            export_model(weights, fmt, out, parity_images=8, keep_failed=True, log=log)
        except ParityError as exc:
            log(f"note: {fmt} benchmarked although {exc}")
        made.append(out)
    return made


def _label(predictor: Any, path: Path, taken: set[str]) -> str:
    """ "onnxruntime-int8", or with the file name where two files share a backend."""
    precision = predictor.meta.get("precision")
    label = predictor.backend + (f"-{precision}" if precision else "")
    if label in taken:
        label += f" ({path.name})"
    taken.add(label)
    return label


def _log(message: str) -> None:
    """Print a progress or skip note on stderr."""
    typer.echo(message, err=True)


def _load_predictors(
    paths: list[Path],
    device: str,
    threads: int | None,
    refine: bool,
    log: Callable[[str], None],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(predictors by label, refiners by their model's label) of the files that load; the
    others are logged and skipped. A refiner is loaded where `refine` and one lies beside."""
    from spraycv.formats import refiner_companion
    from spraycv.refine.stage import Refiner
    from spraycv.runtime.predictor import backend_for

    predictors, refiners, taken = {}, {}, set()
    for path in dict.fromkeys(paths):  # unique, in order
        try:
            cls = backend_for(path).load()
            extra = {"threads": threads} if threads and cls.backend == "onnxruntime" else {}
            predictor = cls(path, device, **extra)
        except (ValueError, FileNotFoundError) as exc:
            log(f"skipped {path}: {exc}")
            continue
        label = _label(predictor, path, taken)
        predictors[label] = predictor
        if refine and refiner_companion(path).is_file():
            refiners[label] = Refiner(cls(refiner_companion(path), device, **extra))
    return predictors, refiners


def _context(
    frames: int,
    size: tuple[int, int],
    device: str,
    threads: int | None,
    nozzles: int | None,
    predictors: dict[str, Any],
    refiners: dict[str, Any],
) -> dict[str, Any]:
    """The conditions of a run (frames, size, cores, load, models), reported with its figures."""
    from spraycv.runtime.onnx_backend import cpu_cores

    h, w = size
    return {
        "frames": frames,
        "frame_size": [h, w],
        "batch": 1,
        "device": device,
        "cpu_cores": cpu_cores(),
        "threads": threads or cpu_cores(),
        "load_average_1min": os.getloadavg()[0],
        "models": {label: p.name for label, p in predictors.items()},
        "nozzles_per_frame": nozzles,
        "refined": sorted(refiners),
    }


def _print_results(
    timings: Sequence[BackendTiming], context: dict[str, Any], as_json: bool
) -> None:
    """Print the timings: as JSON, or a line of conditions and the table."""
    from spraycv.runtime.bench import format_table, to_json
    from spraycv.runtime.onnx_backend import cpu_cores

    if as_json:
        typer.echo(json.dumps(to_json(timings, context), indent=2))
        return
    h, w = context["frame_size"]
    load = context["load_average_1min"]
    typer.echo(
        f"{context['frames']} frames {h}x{w}, batch 1, {context['device']}, "
        f"{context['threads']} of {cpu_cores()} cores, load average {load:.2f}"
    )
    typer.echo(format_table(timings))


@exits()
def bench(
    weights: Path | None = typer.Option(None, help="The .safetensors checkpoint (PyTorch)."),
    models: list[Path] = typer.Option([], "--model", help="More model files: .onnx, .engine."),
    frames: int = typer.Option(50, min=1, help="Frames timed per backend (medians)."),
    warmup: int = typer.Option(5, min=0, help="Untimed frames first."),
    size: str | None = typer.Option(None, help="Frame size HxW (default: the model's input)."),
    export_missing: bool = typer.Option(True, help="Export ONNX FP32/INT8 if none is found."),
    device: str = typer.Option("cpu", help="cpu | cuda, for the PyTorch and ONNX backends."),
    threads: int | None = typer.Option(
        None, min=1, help="CPU threads for PyTorch and ONNX Runtime (default: all cores)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as JSON instead."),
    nozzles: int | None = typer.Option(
        None, min=1, help="Only frames with this many spraying nozzles (e.g. 3)."
    ),
    refine: bool = typer.Option(
        True, help="Time each model's refiner (stored beside it) as the refine stage."
    ),
) -> None:
    """Latency per stage (decode, pre-process, inference, post-process, geometry) and frames
    per second of every backend available, measured side by side, with the ratio against
    PyTorch eager. Exported files next to the weights are found by their default names."""
    import torch

    from spraycv.runtime.bench import encoded_frames, run_bench
    from spraycv.runtime.onnx_backend import cpu_cores

    weights = weights or default_checkpoint()
    if not weights.is_file():
        raise bad_request(f"weights file not found: {weights} (pass --weights)")
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(threads or cpu_cores())  # both runtimes get the same cores
    with tempfile.TemporaryDirectory() as tmp:
        paths = [weights, *models, *_siblings(weights)]
        if export_missing:
            paths += _export_missing(weights, paths, Path(tmp), _log)
        predictors, refiners = _load_predictors(paths, device, threads, refine, _log)
        io = next(iter(predictors.values())).io
        h, w = (int(v) for v in size.lower().split("x")) if size else io.input_size
        data = encoded_frames(frames, h, w, nozzles=nozzles)
        timings = run_bench(predictors, data, warmup=warmup, refiners=refiners)
    torch.set_num_threads(torch_threads)
    context = _context(frames, (h, w), device, threads, nozzles, predictors, refiners)
    _print_results(timings, context, as_json)
