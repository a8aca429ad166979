# SPDX-License-Identifier: MIT
"""Execution control of the HPU backend: lazy mode, step marks and the CPU fallback's counts."""
import torch

_ops = torch.ops.hpu_torch


# The statistics in the order torch.ops.hpu_torch.lazy_stats() returns them.
_LAZY_STATS = ("recorded", "flushes", "graphs_built", "cache_hits", "launches", "evictions", "cached",
               "failures", "fused", "fused_ops", "tpc_launches")


def is_lazy():
    """Whether ops are recorded and run as graphs (lazy mode).

    The mode starts as PT_HPU_LAZY_MODE says (1: lazy) when hpu_torch is
    imported; set_lazy() changes it.
    """
    return _ops.is_lazy()


def lazy_mode():
    """Same as is_lazy()."""
    return is_lazy()


def set_lazy(on):
    """Switches lazy mode on or off; switching off first runs what was recorded."""
    _ops.set_lazy(bool(on))


def mark_step(device=None):
    """Marks the end of a step: in lazy mode the recorded ops run here.

    In lazy mode the ops recorded since the last flush run as one graph
    (built, or found in the cache by structure) on the device, or on every
    opened HPU when device is None; this does not wait for them. In eager
    mode every op was already issued when it was called and this returns at
    once. hpu_torch.hpu.synchronize() waits.
    """
    _ops.mark_step(-1 if device is None else _index(device))


def lazy_stats(device=None):
    """Lazy mode's counters of the device, a dict.

    recorded: jobs recorded; flushes: recorded steps run; graphs_built:
    graphs made (cache misses); cache_hits: steps run by a cached graph;
    launches: graph launches; evictions: graphs dropped from the cache;
    cached: graphs in the cache; failures: lazy steps that failed on the
    device; fused: elementwise chains run as one generated kernel;
    fused_ops: library launches those chains replaced; tpc_launches: TPC
    kernel launches in the steps run (after fusion).
    """
    return dict(zip(_LAZY_STATS, _ops.lazy_stats(-1 if device is None else _index(device))))


def lazy_fusion():
    """Whether lazy mode fuses elementwise chains (PT_HPU_LAZY_FUSION, default 1)."""
    return _ops.is_lazy_fusion()


def set_lazy_fusion(on):
    """Switches lazy mode's fusion on or off for the steps recorded from now on."""
    _ops.set_lazy_fusion(bool(on))


def lazy_last_step(device=None):
    """What the last lazy step's graph ran, one name per node: a kernel, a copy, a
    GEMM, or "fused(a+b+...)" for a chain of elementwise kernels run as one."""
    return list(_ops.lazy_last_step(-1 if device is None else _index(device)))


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
