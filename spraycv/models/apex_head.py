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

    def _decoded(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(mask logits (N, 1, H, W), apex-head input (N, C, H/4, W/4), the decoder's
        output (N, C, h, w))."""
        decoded = self.net.decoder(self.net.encoder(x))
        mask = self.net.segmentation_head(decoded)
        # a Python int at trace time: the pooling is a constant in exported graphs
        pool = max(1, int(decoded.shape[-1]) * APEX_STRIDE // int(x.shape[-1]))
        return mask, F.avg_pool2d(decoded, pool) if pool > 1 else decoded, decoded

    def features(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(mask logits (N, 1, H, W), apex-head input (N, C, H/4, W/4))."""
        return self._decoded(x)[:2]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask, feats, decoded = self._decoded(x)
        apex = F.interpolate(self.apex(feats), size=mask.shape[-2:], mode="bilinear")
        if self.apex_fine is not None:
            fine = self.apex_fine(decoded)
            if fine.shape[-2:] != apex.shape[-2:]:  # a decoder that ends below full size
                fine = F.interpolate(fine, size=apex.shape[-2:], mode="bilinear")
            apex = apex + fine
        return torch.cat([mask, apex], dim=1)
