"""The architectures spraycv can train: a name -> Architecture table (data only, no torch).

`ModelConfig.arch` is checked against it, and `spraycv.models.create_model` builds from it;
it lives here, below both, so that the config does not import the models (no cycle).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Architecture:
    """One trainable architecture: its smp name, a default encoder, and what it needs."""

    smp_name: str
    default_encoder: str
    size_multiple: int  # input height and width must be multiples of this
    description: str


ARCHITECTURES: dict[str, Architecture] = {
    "Unet": Architecture("unet", "mobilenet_v2", 32, "U-Net: skip connections at every scale"),
    "UnetPlusPlus": Architecture("unetplusplus", "resnet18", 32, "U-Net++: nested dense skips"),
    "FPN": Architecture("fpn", "resnet18", 32, "Feature Pyramid Network decoder"),
    "DeepLabV3Plus": Architecture("deeplabv3plus", "resnet18", 16, "atrous pyramid + decoder"),
    "Segformer": Architecture("segformer", "mit_b0", 32, "transformer encoder, MLP decoder"),
    "Linknet": Architecture("linknet", "resnet18", 32, "light U-Net with additive skips"),
    "MAnet": Architecture("manet", "resnet18", 32, "U-Net with attention blocks"),
}


def get_architecture(name: str) -> Architecture:
    """Look an architecture up by name; the error lists the valid names."""
    try:
        return ARCHITECTURES[name]
    except KeyError:
        valid = ", ".join(ARCHITECTURES)
        raise ValueError(f"unknown architecture {name!r}; valid names: {valid}") from None
