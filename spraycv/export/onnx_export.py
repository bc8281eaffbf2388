"""PyTorch -> ONNX: dynamic batch (and height/width where the graph allows), metadata, checker."""

from __future__ import annotations

import copy
import json
import math
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from spraycv.export.formats import ExportError
from spraycv.runtime.processing import ModelIO

MIN_OPSET = 17
INPUT_NAME, OUTPUT_NAME = "image", "logits"
METADATA_KEY = "spraycv"  # JSON with everything a predictor needs (see model_metadata)
METADATA_FORMAT = "spraycv-onnx/1"
PROTOBUF_LIMIT = 2**31 - 2**24  # under 2 GiB one file holds the weights; above, external data


@dataclass(frozen=True)
class OnnxExport:
    """What was written: the file, and which input sizes the graph accepts."""

    path: Path
    dynamic_hw: bool
    valid_sizes: str  # human-readable, e.g. "H and W multiples of 32" or "exactly 256x256"


def model_metadata(meta: dict[str, Any], **extra: Any) -> dict[str, str]:
    """ONNX metadata_props from a checkpoint sidecar.

    One "spraycv" key holds the sidecar subset as JSON (what OnnxPredictor reads); flat keys
    repeat the essentials for tools such as Netron.
    """
    model = meta.get("model", {})
    body = {
        "format": METADATA_FORMAT,
        "model": model,
        **ModelIO.from_sidecar(meta).to_sidecar(),  # what the runtime reads, in one place
        "spraycv_version": meta.get("spraycv_version"),
        **extra,
    }
    norm = meta["normalization"]
    return {
        METADATA_KEY: json.dumps(body, default=str),
        "arch": str(model.get("arch", "?")),
        "encoder": str(model.get("encoder", "?")),
        "input_size": "x".join(str(v) for v in meta["input_size"]),
        "mean": ",".join(str(v) for v in norm["mean"]),
        "std": ",".join(str(v) for v in norm["std"]),
        "threshold": str(meta["threshold"]),
    }


def write_metadata(path: Path, props: dict[str, str]) -> None:
    """Replace the metadata_props of an ONNX file in place (kept one file when it fits)."""
    import onnx

    proto = onnx.load(str(path))
    del proto.metadata_props[:]
    for key, value in props.items():
        proto.metadata_props.add(key=key, value=value)
    save_model(proto, path)


def save_model(proto: Any, path: Path) -> None:
    """Save an ONNX ModelProto as one self-contained file, or with external data past 2 GiB."""
    import onnx

    big = proto.ByteSize() > PROTOBUF_LIMIT
    onnx.save_model(
        proto,
        str(path),
        save_as_external_data=big,
        all_tensors_to_one_file=True,
        location=f"{Path(path).name}.data" if big else None,
    )


def _same_pads(size, kernel, stride, dilation) -> tuple[int, int, int, int]:
    """TF 'SAME' padding (left, right, top, bottom) of a (H, W) input, as timm computes it."""
    pads = []
    for x, k, s, d in zip(size, kernel, stride, dilation, strict=True):
        total = max((math.ceil(x / s) - 1) * s + (k - 1) * d + 1 - x, 0)
        pads.append((total // 2, total - total // 2))
    (top, bottom), (left, right) = pads
    return left, right, top, bottom


def _pair(v: Any) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


def _static_same(module: Any, size: tuple[int, int]) -> Any:
    """A timm Conv2dSame / MaxPool2dSame as constant padding + the plain layer."""
    from torch import nn

    k, s, d = _pair(module.kernel_size), _pair(module.stride), _pair(module.dilation)
    pads = _same_pads(size, k, s, d)
    if isinstance(module, nn.Conv2d):
        plain = nn.Conv2d(module.in_channels, module.out_channels, k, s, 0, d, module.groups)
        plain.weight, plain.bias = module.weight, module.bias  # shared; bias may be None
        return nn.Sequential(nn.ZeroPad2d(pads), plain)
    return nn.Sequential(
        nn.ConstantPad2d(pads, -math.inf), nn.MaxPool2d(k, s, 0, d, ceil_mode=module.ceil_mode)
    )


def _same_padded(model: Any) -> list[Any]:
    """timm's layers that pad 'SAME' from the input shape at run time."""
    return [m for m in model.modules() if type(m).__name__ in ("Conv2dSame", "MaxPool2dSame")]


def freeze_same_padding(model: Any, input_size: tuple[int, int]) -> Any:
    """A copy of `model` whose runtime 'SAME' padding (timm encoders) is constant for one size.

    timm computes those pads from the input shape at run time; exported, that is a chain of
    Shape/Div/Ceil nodes per layer, which costs time and which a quantiser must not touch.
    """
    import torch

    if not _same_padded(model):
        return model  # itself: nothing to freeze
    model = copy.deepcopy(model)
    targets = _same_padded(model)
    sizes: dict[Any, tuple[int, int]] = {}

    def record(module: Any, args: tuple) -> None:  # returns None: the input stays as it is
        sizes[module] = tuple(args[0].shape[-2:])

    hooks = [m.register_forward_pre_hook(record) for m in targets]
    with torch.inference_mode():
        model(torch.zeros(1, 3, *input_size))
    for hook in hooks:
        hook.remove()
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if child in sizes:
                setattr(parent, name, _static_same(child, sizes[child]))
    return model


def _torch_export(model: Any, sample: Any, path: Path, opset: int, dynamic_hw: bool) -> None:
    import torch

    axes = {0: "batch", 2: "height", 3: "width"} if dynamic_hw else {0: "batch"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about Python ints in smp's checks
        torch.onnx.export(
            model,
            (sample,),
            str(path),
            dynamo=False,  # the TorchScript exporter: no onnxscript needed, exports in seconds
            opset_version=opset,
            input_names=[INPUT_NAME],
            output_names=[OUTPUT_NAME],
            dynamic_axes={INPUT_NAME: axes, OUTPUT_NAME: axes},
            do_constant_folding=True,
        )


def _export_dynamic(model: Any, sample: Any, path: Path, opset: int, multiple: int) -> bool:
    """Export with dynamic H and W; whether the graph gives PyTorch's logits at another size.

    'SAME' pads frozen at the sample's size first: at any multiple of `multiple` every
    stride-2 layer sees an even size, so its pads are the same constants, and the graph has
    no shape arithmetic to slow it or to trouble a quantiser. Else the traced pads.
    """
    size = tuple(sample.shape[-2:])
    frozen = freeze_same_padding(model, size)
    for candidate in (frozen, model) if frozen is not model else (model,):
        _torch_export(candidate, sample, path, opset, True)
        if _other_size_works(model, path, size, multiple):
            return True
    return False


def _other_size_works(model: Any, path: Path, size: tuple[int, int], multiple: int) -> bool:
    """Whether the dynamic-H/W graph gives PyTorch's logits at a second valid size."""
    import onnxruntime as ort
    import torch

    h, w = size[0] + multiple, size[1] + multiple
    x = torch.randn(1, 3, h, w, generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        ref = model(x).float().numpy()
    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        got = session.run([OUTPUT_NAME], {INPUT_NAME: x.numpy()})[0]
    except Exception:  # onnxruntime raises its own exception types for shape errors
        return False
    scale = max(1.0, float(np.abs(ref).max()))
    return got.shape == ref.shape and float(np.abs(got - ref).max()) <= 1e-3 * scale


def export_onnx(
    model: Any,
    meta: dict[str, Any],
    out: Path,
    opset: int = MIN_OPSET,
    dynamic_hw: bool = True,
    size_multiple: int = 32,
    **extra_meta: Any,
) -> OnnxExport:
    """Export a float32 eval-mode model to one ONNX file with its metadata, then check it.

    Args:
        model: the PyTorch module, (N, 3, H, W) float32 -> (N, 1, H, W) logits, on the CPU.
        meta: its checkpoint sidecar (model, input_size, normalization, threshold).
        dynamic_hw: try dynamic height/width; kept only if the graph gives PyTorch's logits
            at another size (some decoders bake sizes in); otherwise fixed to input_size.
        size_multiple: the architecture's size constraint (Architecture.size_multiple).
    """
    import onnx
    import torch

    if opset < MIN_OPSET:
        raise ExportError(f"opset {opset} is too old; use {MIN_OPSET} or newer")
    model = model.float().eval().cpu()
    h, w = (int(v) for v in meta["input_size"])
    sample = torch.zeros(1, 3, h, w)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        raw = Path(tmp) / "raw.onnx"
        dynamic_hw = dynamic_hw and _export_dynamic(model, sample, raw, opset, size_multiple)
        if not dynamic_hw:
            _torch_export(freeze_same_padding(model, (h, w)), sample, raw, opset, False)
        valid = f"H and W multiples of {size_multiple}" if dynamic_hw else f"exactly {h}x{w}"
        proto = onnx.load(str(raw))
        proto.producer_name = "spraycv"
        props = model_metadata(
            meta,
            precision="fp32",
            opset=opset,
            dynamic_hw=dynamic_hw,
            size_multiple=size_multiple,
            valid_sizes=valid,
            # a graph of one size can only stretch a frame of another shape to it
            resize=meta.get("resize", "stretch") if dynamic_hw else "stretch",
            **extra_meta,
        )
        for key, value in props.items():
            proto.metadata_props.add(key=key, value=value)
        save_model(proto, out)
    try:
        onnx.checker.check_model(str(out), full_check=True)
    except onnx.checker.ValidationError as exc:
        raise ExportError(f"{out}: the exported graph fails onnx.checker: {exc}") from None
    return OnnxExport(out, dynamic_hw, valid)
