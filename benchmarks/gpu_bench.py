"""GPU benchmark of the segmentation model: precision x execution mode x batch, and TensorRT.

    python benchmarks/gpu_bench.py --weights runs/unet_mobilenetv3_small/best.safetensors

Variants: torch fp32 / fp16 / bf16 (weights and inputs cast, channels_last) run eager, through
torch.compile, and replayed as a CUDA graph; at batch 1 and 64. TensorRT FP16 and INT8
engines (built here from an ONNX export, INT8 calibrated on rendered images) are added when
`import tensorrt` works. Times are CUDA-event medians of the network alone (no pre- or
post-processing); max |dlogit| compares each variant with fp32 eager on the same batch.
Runs offline from the repository tree (`PYTHONPATH=.` is set up below); the table is
printed last. Without --weights, an untrained model of the default config is timed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
DEFAULT_MODEL = {  # configs/unet_mobilenetv3_small.yaml
    "arch": "Unet",
    "encoder": "tu-tf_mobilenetv3_small_100",
    "kwargs": {"decoder_channels": [128, 64, 32, 16, 16]},
}
DEFAULT_IO = {
    "input_size": [256, 256],
    "normalization": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
    "threshold": 0.5,
}


def load_model(weights: Path | None) -> tuple[torch.nn.Module, dict]:
    """The checkpoint's model in fp32 eval mode; without pydantic (not on every GPU image)
    the sidecar is read directly (smp names are the architecture names in lower case)."""
    import segmentation_models_pytorch as smp

    if weights is None:
        meta = {"model": DEFAULT_MODEL, **DEFAULT_IO, "note": "untrained (no --weights)"}
    else:
        meta = json.loads(weights.with_suffix(".json").read_text())
    cfg = meta["model"]
    model = smp.create_model(
        cfg["arch"].lower(),
        encoder_name=cfg["encoder"],
        encoder_weights=None,
        in_channels=3,
        classes=1,
        **cfg.get("kwargs", {}),
    )
    if weights is not None:
        from safetensors.torch import load_file

        state = {k: v.float() for k, v in load_file(str(weights)).items()}
        model.load_state_dict(state, strict=True)
    return model.eval(), meta


def cuda_time(fn: Callable[[], object], iters: int, warmup: int) -> float:
    """Median milliseconds of fn() between CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def cuda_graph(model: torch.nn.Module, x: torch.Tensor) -> tuple[Callable[[], object], object]:
    """Capture one forward pass as a CUDA graph; returns (replay, static output)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):  # warm up allocations and cuDNN choices outside the capture
            model(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = model(x)
    return graph.replay, out


def torch_rows(model: torch.nn.Module, meta: dict, args: argparse.Namespace) -> list[dict]:
    h, w = meta["input_size"]
    rows = []
    for batch in args.batches:
        x32 = torch.randn(batch, 3, h, w, device="cuda").contiguous(
            memory_format=torch.channels_last
        )
        with torch.inference_mode():  # same layout as the variants; cuDNN may use TF32 in fp32
            reference = model.to("cuda", torch.float32).to(memory_format=torch.channels_last)(x32)
        for name in args.dtypes:
            net = model.to("cuda", DTYPES[name]).to(memory_format=torch.channels_last)
            x = x32.to(DTYPES[name]).contiguous(memory_format=torch.channels_last)
            for mode in args.modes:
                try:
                    with torch.inference_mode():
                        tic = time.perf_counter()
                        fn, out = MODES[mode](net, x)
                        setup = time.perf_counter() - tic
                        ms = cuda_time(fn, args.iters, args.warmup)
                        logits = (out if out is not None else fn()).float()
                except Exception as exc:  # one failing variant must not lose the others
                    print(f"  torch {name} {mode} batch {batch} failed: {exc!r}", flush=True)
                    continue
                diff = float((logits - reference).abs().max())
                rows.append(
                    {
                        "variant": f"torch {name} {mode}",
                        "batch": batch,
                        "ms": ms,
                        "setup_s": setup,
                        "max_dlogit": diff,
                    }
                )
                print(f"  {rows[-1]['variant']:28s} batch {batch:3d}: {ms:8.3f} ms", flush=True)
        model.float()
    return rows


def _eager(net: torch.nn.Module, x: torch.Tensor) -> tuple[Callable[[], object], None]:
    return (lambda: net(x)), None


def _compiled(net: torch.nn.Module, x: torch.Tensor) -> tuple[Callable[[], object], None]:
    compiled = torch.compile(net)  # inductor defaults: max-autotune takes minutes per shape
    compiled(x)  # compile now, so that its time is reported apart
    return (lambda: compiled(x)), None


MODES = {"eager": _eager, "compile": _compiled, "cudagraph": cuda_graph}


def tensorrt_rows(model: torch.nn.Module, meta: dict, args: argparse.Namespace) -> list[dict]:
    try:
        import tensorrt  # noqa: F401
    except ImportError as exc:
        print(f"TensorRT skipped: {exc}")
        return []
    import numpy as np

    from spraycv.export.onnx_export import export_onnx
    from spraycv.export.tensorrt_build import Profile, build_engine
    from spraycv.runtime.tensorrt_backend import TensorRTPredictor

    h, w = meta["input_size"]
    calibration = np.random.default_rng(0).standard_normal((64, 3, h, w)).astype(np.float32)
    try:  # real images when the renderer's dependencies are there
        from spraycv.export.parity import CALIB_SEED0, rendered_images
        from spraycv.runtime.processing import ModelIO, preprocess

        images = rendered_images(64, 384, CALIB_SEED0)
        calibration = preprocess(images, ModelIO.from_sidecar({**DEFAULT_IO, **meta}))
    except ImportError as exc:
        print(f"INT8 calibration on random data ({exc})")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path = export_onnx(model.float().cpu(), meta, Path(tmp) / "m.onnx", dynamic_hw=False)
        for precision in ("fp16", "int8"):
            tic = time.perf_counter()
            out = Path(tmp) / f"m.{precision}.engine"
            profile = Profile(1, 1, max(args.batches))
            engine = build_engine(onnx_path.path, out, meta, precision, calibration, profile)
            setup = time.perf_counter() - tic
            predictor = TensorRTPredictor(engine)
            net = model.to("cuda", torch.float32)
            for batch in args.batches:
                x = torch.randn(batch, 3, h, w, device="cuda")
                with torch.inference_mode():
                    ms = cuda_time(lambda p=predictor, x=x: p.run_cuda(x), args.iters, args.warmup)
                    diff = float((predictor.run_cuda(x).float() - net(x)).abs().max())
                rows.append(
                    {
                        "variant": f"tensorrt {precision}",
                        "batch": batch,
                        "ms": ms,
                        "setup_s": setup,
                        "max_dlogit": diff,
                    }
                )
                print(f"  {rows[-1]['variant']:28s} batch {batch:3d}: {ms:8.3f} ms", flush=True)
    return rows


def table(rows: list[dict]) -> str:
    base = {r["batch"]: r["ms"] for r in rows if r["variant"] == "torch fp32 eager"}
    head = ["variant", "batch", "ms/batch", "img/s", "x fp32 eager", "setup s", "max|dlogit|"]
    lines = [head]
    for r in sorted(rows, key=lambda r: (r["batch"], r["ms"])):
        speed = base.get(r["batch"], float("nan")) / r["ms"]
        ips = 1000 * r["batch"] / r["ms"]
        lines.append(
            [
                r["variant"],
                str(r["batch"]),
                f"{r['ms']:.3f}",
                f"{ips:.0f}",
                f"{speed:.2f}",
                f"{r['setup_s']:.1f}",
                f"{r['max_dlogit']:.2e}",
            ]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    return "\n".join(
        "  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) for line in lines
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weights", type=Path, default=None)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64])
    parser.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=list(DTYPES))
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--no-tensorrt", action="store_true")
    parser.add_argument("--json", type=Path, default=None, help="Also write the rows here.")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA GPU: this benchmark is for the GPU machine")
    torch.backends.cudnn.benchmark = True
    model, meta = load_model(args.weights)
    note = f", {meta['note']}" if "note" in meta else ""
    print(
        f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {meta['model']}, "
        f"input {meta['input_size']}{note}"
    )
    rows = torch_rows(model, meta, args)
    if not args.no_tensorrt:
        try:
            rows += tensorrt_rows(model, meta, args)
        except Exception as exc:  # report the torch rows anyway
            print(f"TensorRT failed: {exc!r}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
