"""A nozzle-apex heatmap head beside the segmentation head.

From the mask alone a triangle-like plume reads as a wedge from any of its corners; the
image settles it (the nozzle sits at the apex). The head turns the decoder's last features,
pooled to 1/4 of the input, into apex logits through dilated 3x3 convolutions (a wide view
for little compute). The model then returns one tensor, (N, 2, H, W): channel 0 the spray
mask logits as before, channel 1 the apex logits resized to the input, so that every runtime
backend and export keeps a single output.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

APEX_STRIDE = 4  # the heatmap is computed at 1/4 of the input size
APEX_PRIOR_BIAS = -2.19  # sigmoid ~0.1 at start, as in CenterNet: few false peaks early on


class ApexHead(nn.Module):
    """(N, C, h, w) features -> (N, 1, h, w) apex logits."""

    def __init__(
        self, in_channels: int, width: int = 32, dilations: tuple[int, ...] = (1, 2, 4, 8)
    ):
        super().__init__()
        layers: list[nn.Module] = []
        c = in_channels
        for d in dilations:
            layers += [nn.Conv2d(c, width, 3, padding=d, dilation=d), nn.ReLU(inplace=True)]
            c = width
        self.body = nn.Sequential(*layers)
        self.out = nn.Conv2d(width, 1, 1)
        nn.init.constant_(self.out.bias, APEX_PRIOR_BIAS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.body(x))


def decoder_channels(net: nn.Module) -> int:
    """Channels of an smp model's decoder output (the segmentation head's input)."""
    first = next(m for m in net.segmentation_head.modules() if isinstance(m, nn.Conv2d))
    return int(first.in_channels)


class WithApexHead(nn.Module):
    """An smp segmentation model plus an ApexHead on its decoder features.

    forward: (N, 3, H, W) -> (N, 2, H, W) logits (mask, apex). `net` keeps the smp model's
    own parameter names under "net.", the head's under "apex.". With `fine`, a 3x3 convolution
    of the decoder's full-resolution features ("apex_fine.", zero at start) is added to the
    upsampled apex logits: the quarter-resolution head finds the apex, the correction places
    it within a pixel (the refiner's crops, where a pixel of apex moves the angle).
    """

    def __init__(self, net: nn.Module, fine: bool = False):
        super().__init__()
        self.net = net
        self.apex = ApexHead(decoder_channels(net))
        self.apex_fine = None
        if fine:
            self.apex_fine = nn.Conv2d(decoder_channels(net), 1, 3, padding=1)
            nn.init.zeros_(self.apex_fine.weight)
            nn.init.zeros_(self.apex_fine.bias)

    def _decoded(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(the decoder's output (N, C, h, w), apex-head input (N, C, H/4, W/4))."""
        decoded = self.net.decoder(self.net.encoder(x))
        # a Python int at trace time: the pooling is a constant in exported graphs
        pool = max(1, int(decoded.shape[-1]) * APEX_STRIDE // int(x.shape[-1]))
        return decoded, F.avg_pool2d(decoded, pool) if pool > 1 else decoded

    def _mask_and_fine(self, decoded: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(mask logits (N, 1, h, w), the fine apex correction (N, 1, h, w) or None).

        Where the segmentation head is a bare convolution shaped as the correction's, both
        run as one two-channel convolution: ONNX Runtime's blocked layout pads a one-channel
        output to 16 channels, so two one-channel convolutions cost twice one with two
        (docs/benchmarks.md, "The refiner's two heads as one convolution")."""
        head, fine = self.net.segmentation_head, self.apex_fine
        if fine is None or not _bare_like(head, fine):
            return head(decoded), None if fine is None else fine(decoded)
        weight = torch.cat([head[0].weight, fine.weight])
        both = F.conv2d(decoded, weight, torch.cat([head[0].bias, fine.bias]),
                        padding=fine.padding)  # fmt: skip
        return both[:, :1], both[:, 1:]

    def features(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mask logits (N, 1, H, W), apex-head input (N, C, H/4, W/4))."""
        decoded, feats = self._decoded(x)
        return self.net.segmentation_head(decoded), feats

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        decoded, feats = self._decoded(x)
        mask, fine = self._mask_and_fine(decoded)
        apex = F.interpolate(self.apex(feats), size=mask.shape[-2:], mode="bilinear")
        if fine is not None:
            if fine.shape[-2:] != apex.shape[-2:]:  # a decoder that ends below full size
                fine = F.interpolate(fine, size=apex.shape[-2:], mode="bilinear")
            apex = apex + fine
        return torch.cat([mask, apex], dim=1)


def _bare_like(head: nn.Module, conv: nn.Conv2d) -> bool:
    """Whether an smp segmentation head is only a convolution (no upsampling, no
    activation) with the kernel, padding, stride, dilation and groups of `conv`."""
    first, *rest = list(head.children()) or [None]
    rest = [getattr(m, "activation", m) for m in rest]  # smp wraps its activation
    return (
        isinstance(first, nn.Conv2d)
        and first.bias is not None
        and all(isinstance(m, nn.Identity) for m in rest)
        and all(getattr(first, a) == getattr(conv, a)
                for a in ("kernel_size", "padding", "stride", "dilation", "groups"))
    )  # fmt: skip
