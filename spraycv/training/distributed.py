"""DistributedDataParallel set-up under torchrun: gloo on the CPU, NCCL on GPUs."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist


@dataclass(frozen=True)
class DistInfo:
    """This process's place in the job (a single process is rank 0 of 1)."""

    rank: int = 0
    local_rank: int = 0
    world_size: int = 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1


def init_distributed(device_type: str) -> DistInfo:
    """Join the process group that torchrun describes in the environment, if any."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return DistInfo()
    info = DistInfo(int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0")), world)
    if not dist.is_initialized():
        backend = "nccl" if device_type == "cuda" else "gloo"
        if device_type == "cuda":
            torch.cuda.set_device(info.local_rank)
        dist.init_process_group(backend=backend)
    return info


def all_reduce_sum(values: np.ndarray, info: DistInfo, device: torch.device) -> np.ndarray:
    """Element-wise sum of a float array over all ranks (identity for one process)."""
    if not info.enabled:
        return values
    tensor = torch.as_tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor.cpu().numpy()


def any_rank(flag: bool, info: DistInfo, device: torch.device) -> bool:
    """True on every rank when any rank says True (e.g. the time budget ran out)."""
    return bool(all_reduce_sum(np.array([float(flag)]), info, device)[0] > 0)


def cleanup(info: DistInfo) -> None:
    """Leave the process group."""
    if info.enabled and dist.is_initialized():
        dist.destroy_process_group()
