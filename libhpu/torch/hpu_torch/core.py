# SPDX-License-Identifier: MIT
"""Execution control of the HPU backend: step marks and the CPU fallback's counts."""
import os

import torch

_ops = torch.ops.hpu_torch


def lazy_mode():
    """Whether PT_HPU_LAZY_MODE=1 asked for lazy mode (recorded graphs).

    This version runs eagerly in either case: every op is issued to the
    device when it is called.
    """
    return os.environ.get("PT_HPU_LAZY_MODE", "0") == "1"


def mark_step(device=None):
    """Marks the end of a step: in lazy mode the recorded ops run here.

    In eager mode every op was already issued when it was called, so there
    is nothing to flush and this returns at once (it does not wait for the
    device; hpu_torch.hpu.synchronize() does).
    """
    _ops.mark_step(-1 if device is None else _index(device))


def fallback_counts():
    """{op name: times it ran on the CPU through the fallback} since the last reset."""
    names, counts = _ops.fallback_counts()
    return dict(zip(names, counts))


def reset_fallback_counts():
    """Forgets the fallback counts."""
    _ops.reset_fallback_counts()


def jobs(device=None):
    """Jobs (DMA, TPC, MME) issued to the device by this process so far."""
    return _ops.jobs(-1 if device is None else _index(device))


def _index(device):
    if isinstance(device, int):
        return device
    d = torch.device(device)
    if d.type != "hpu":
        raise ValueError(f"not an HPU device: {d}")
    return -1 if d.index is None else d.index
