"""Run by test_ddp under torchrun (or alone): train, then save this rank's parameters."""

from __future__ import annotations

import os
import sys

from safetensors.torch import save_file

from spraycv.config.loader import load_config
from spraycv.config.train import TrainConfig
from spraycv.training.loop import train

if __name__ == "__main__":
    out, overrides = sys.argv[1], sys.argv[2:]
    result = train(load_config(TrainConfig, None, overrides), progress=False)
    rank = os.environ.get("RANK", "0")
    state = {k: v.contiguous() for k, v in result.model.state_dict().items()}
    save_file(state, os.path.join(out, f"rank{rank}.safetensors"))
