# SPDX-License-Identifier: MIT
"""The HPU device module (what torch.cuda is to CUDA devices): devices, memory, streams, events and
random number generators (hpu_torch.random)."""
import torch

from .core import _index
from .random import (Generator, default_generator, default_generators, get_rng_state,  # noqa: F401
                     get_rng_state_all, initial_seed, manual_seed, manual_seed_all, seed, seed_all,
                     set_rng_state, set_rng_state_all)

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
    """Waits for every op issued to the device, on every stream; raises RuntimeError if one failed."""
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


# ---- streams and events -----------------------------------------------------

_HPU_TYPE = 15  # c10::DeviceType::HPU: the device type in a packed stream
_ID_BITS = 48


def _pack(device, stream_id):
    return (_HPU_TYPE << 56) | (device << _ID_BITS) | stream_id


def _device_index(device):
    """The HPU index of device (None: the current HPU)."""
    if device is None:
        return current_device()
    i = _index(device)
    return current_device() if i < 0 else i


class Stream(torch._C.Stream):
    """A stream of an HPU (torch.cuda.Stream's API): the ops issued while it
    is current (stream(s) / set_stream(s)) run in order on queues of its own,
    concurrently with other streams' ops unless an event orders them.

    Stream(device=None, priority=0) takes the next stream of the device's
    pool (4 streams per HPU, round robin, as CUDA's pool); priority is
    accepted and kept, but every stream runs at the same priority (the
    driver's queues have one). Being a torch.Stream, it is what
    Tensor.record_stream() takes.
    """

    def __new__(cls, device=None, priority=0, **kwargs):
        if "_cdata" in kwargs:
            return super().__new__(cls, _cdata=kwargs["_cdata"])
        d = _device_index(device)
        sid = _ops.pool_stream(d, priority < 0)
        return super().__new__(cls, _cdata=_pack(d, sid))

    def __init__(self, device=None, priority=0, **kwargs):
        super().__init__()
        self.priority = priority

    @classmethod
    def _of(cls, device, stream_id):
        s = cls(_cdata=_pack(device, stream_id))
        return s

    @property
    def stream_id(self):
        """The stream's id on its device: 0 the default stream, 1-4 the pool."""
        return self._cdata & ((1 << _ID_BITS) - 1)

    def wait_event(self, event):
        """Makes the ops issued on this stream from now on wait for event (on the device side)."""
        event.wait(self)

    def wait_stream(self, stream):
        """Makes the ops issued on this stream from now on wait for the ops issued on stream so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Records event (a new Event if None) on this stream; returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    def query(self):
        """Whether every op issued on this stream has finished."""
        return _ops.query_stream(self.device.index, self.stream_id)

    def synchronize(self):
        """Waits for every op issued on this stream; raises RuntimeError if one of them failed."""
        _ops.synchronize_stream(self.device.index, self.stream_id)

    def __eq__(self, other):
        return isinstance(other, torch._C.Stream) and self._cdata == other._cdata

    def __hash__(self):
        return hash(self._cdata)

    def __repr__(self):
        return f"<hpu_torch.hpu.Stream device={self.device} stream_id={self.stream_id}>"


def current_stream(device=None):
    """This thread's current stream of device (None: the current HPU)."""
    d = _device_index(device)
    return Stream._of(d, _ops.current_stream(d))


def default_stream(device=None):
    """The default stream of device (None: the current HPU): id 0, where ops run unless another stream is current."""
    return Stream._of(_device_index(device), 0)


def set_stream(stream):
    """Makes stream this thread's current stream of its device, and its device the current HPU (as torch.cuda.set_stream)."""
    if stream is None:
        return
    set_device(stream.device.index)
    _ops.exchange_stream(stream.device.index, stream.stream_id)


class StreamContext:
    """The context manager of stream(): makes a stream current, then restores
    the previous current stream (and HPU)."""

    def __init__(self, stream):
        self.stream = stream
        self._prev_device = None
        self._prev_src = None
        self._prev_dst = None

    def __enter__(self):
        s = self.stream
        if s is None:
            return None
        self._prev_device = current_device()
        self._prev_src = current_stream(self._prev_device)
        self._prev_dst = current_stream(s.device.index)
        set_stream(s)
        return s

    def __exit__(self, *exc):
        if self.stream is None:
            return
        _ops.exchange_stream(self._prev_dst.device.index, self._prev_dst.stream_id)
        _ops.exchange_stream(self._prev_src.device.index, self._prev_src.stream_id)
        set_device(self._prev_device)


def stream(s):
    """with stream(s): ops issued in the block run on s (None: no change)."""
    return StreamContext(s)


class Event:
    """An event of an HPU (torch.cuda.Event's API): a point in a stream's work.

    record(stream=None) marks the ops issued on the stream (the current one
    by default) so far; wait(stream=None) makes the stream's later ops wait
    for them on the device side (the driver's scheduler holds the later
    jobs; the host does not wait); query() and synchronize() check or wait
    for them. With enable_timing=True, record() issues a marker job and
    elapsed_time(end) is the time in ms between the two markers' completions
    as the driver timestamped them (the kernel's CLOCK_MONOTONIC when it
    signalled their fences: device completion times seen by the host's
    driver, not device clock cycles). blocking is accepted (waits always
    sleep); interprocess=True is refused.
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise ValueError("hpu_torch.hpu.Event: interprocess events are not supported")
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self._ev = torch.classes.hpu_torch.Event(self.enable_timing)

    def record(self, stream=None):
        """Records the event on stream (None: the current stream of the current HPU)."""
        if stream is None:
            stream = current_stream()
        self._ev.record(stream.device.index, stream.stream_id)

    def wait(self, stream=None):
        """Makes stream's later ops wait for the event (None: the current stream), on the
        device side; the event may have been recorded on another HPU than the stream's."""
        if stream is None:
            stream = current_stream()
        self._ev.block(stream.device.index, stream.stream_id)

    def query(self):
        """Whether the ops before the event have finished (True if never recorded)."""
        return self._ev.query()

    def synchronize(self):
        """Waits for the ops before the event; RuntimeError if the last of them failed."""
        self._ev.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds from this event to end_event: both timing events, recorded and completed."""
        return self._ev.elapsed_time(end_event._ev)

    @property
    def device(self):
        """The HPU it was recorded on, or None."""
        d = self._ev.device()
        return None if d < 0 else torch.device("hpu", d)

    def __repr__(self):
        return f"<hpu_torch.hpu.Event device={self.device} enable_timing={self.enable_timing}>"
