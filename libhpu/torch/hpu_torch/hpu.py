# SPDX-License-Identifier: MIT
"""The HPU device module (what torch.cuda is to CUDA devices)."""
import torch

from .core import _index

_ops = torch.ops.hpu_torch

# The order of the values torch.ops.hpu_torch.memory_stats() returns.
_STATS = ("allocated_bytes", "peak_allocated_bytes", "reserved_bytes", "peak_reserved_bytes",
          "active_blocks", "slabs", "num_allocs", "num_frees", "num_slab_allocs",
          "num_slab_frees", "num_cache_hits")


def _dev(device):
    return -1 if device is None else _index(device)


def is_available():
    """Whether at least one HPU is present."""
    return device_count() > 0


def device_count():
    """Number of HPUs (hpu:0 .. hpu:N-1)."""
    return _ops.device_count()


def current_device():
    """Index of this thread's current HPU."""
    return _ops.current_device()


def set_device(device):
    """Makes device (an index, "hpu:N" or a torch.device) this thread's current HPU."""
    _ops.set_device(_index(device) if not isinstance(device, int) else device)


def synchronize(device=None):
    """Waits for every op issued to the device; raises RuntimeError if one failed."""
    _ops.synchronize(_dev(device))


def memory_stats(device=None):
    """The caching allocator's statistics of the device, a dict (bytes and counts)."""
    return dict(zip(_STATS, _ops.memory_stats(_dev(device))))


def memory_allocated(device=None):
    """Bytes of HBM held by tensors (their blocks, rounded to 512 bytes)."""
    return memory_stats(device)["allocated_bytes"]


def max_memory_allocated(device=None):
    """The peak of memory_allocated() since the start or the last reset."""
    return memory_stats(device)["peak_allocated_bytes"]


def memory_reserved(device=None):
    """Bytes of HBM the caching allocator holds (slabs)."""
    return memory_stats(device)["reserved_bytes"]


def reset_peak_memory_stats(device=None):
    """Restarts the peaks from the current values."""
    _ops.reset_peak_memory_stats(_dev(device))


def empty_cache(device=None):
    """Waits for the device and gives the slabs no tensor uses back to the driver."""
    _ops.empty_cache(_dev(device))
