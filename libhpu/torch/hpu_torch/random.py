# SPDX-License-Identifier: MIT
"""The HPUs' random number generators (torch.cuda.random's API; hpu_torch.hpu
exports these functions).

Each HPU has a default generator, a torch.Generator whose device is the
HPU: a 64-bit seed and a 64-bit offset. Every random draw on the device
(rand, randn, uniform_, normal_, randint, dropout, and the random ops the
CPU fallback runs: bernoulli_, randperm...) takes the key derived from
(seed, offset) and advances the offset, so HPU draws never advance
PyTorch's CPU generator, and the same seed repeats the same draws. A
generator passed to an op (generator=g) is used instead: an HPU generator
(default_generators, Generator()) as the default one; a CPU generator
(torch.Generator()) gives each draw its next 64 bits as the draw's seed
(that generator advances, as before HPU generators existed).

``import hpu_torch`` makes torch.manual_seed(s) and torch.seed() seed
every HPU's default generator too (_patch_torch_seeding below), as they do
CUDA's. torch.Generator(device="hpu") is refused by PyTorch 1.13 (its
constructor knows CPU and CUDA only): Generator() here makes one.
"""
import functools

import torch

from .core import _index

_ops = torch.ops.hpu_torch

# The state's size in bytes (get_rng_state(): "HPUG" tag and version, seed,
# offset, three little-endian 64-bit words).
STATE_BYTES = 24


def _device_index(device):
    if device is None:
        return _ops.current_device()
    if isinstance(device, int):
        return device
    i = _index(device)
    return _ops.current_device() if i < 0 else i


def default_generator(device=None):
    """The default generator of device (None: the current HPU), a torch.Generator."""
    return _ops.default_generator(_device_index(device))


class _DefaultGenerators:
    """default_generators[i]: hpu:i's default generator (made on first use)."""

    def __len__(self):
        return _ops.device_count()

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return tuple(self[j] for j in range(n)[i])
        if not -n <= i < n:
            raise IndexError(f"hpu_torch.hpu.default_generators: index {i} out of range ({n} HPU(s))")
        return default_generator(i % n)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        return f"<hpu_torch.hpu.default_generators of {len(self)} HPU(s)>"


default_generators = _DefaultGenerators()


def Generator(device="hpu"):  # noqa: N802: torch.Generator's name
    """A new generator of an HPU (what torch.Generator(device="hpu") would
    be): a torch.Generator whose device is the HPU, with PyTorch's default
    seed; generator=g in a draw on any HPU uses it."""
    d = torch.device(device) if not isinstance(device, int) else torch.device("hpu", device)
    if d.type != "hpu":
        raise ValueError(f"hpu_torch.hpu.Generator: an HPU device, not {d}")
    return _ops.new_generator(-1 if d.index is None else d.index)


def get_rng_state(device="hpu"):
    """The state of device's default generator (a CPU torch.ByteTensor of STATE_BYTES bytes)."""
    return default_generator(device).get_state()


def get_rng_state_all():
    """The states of every HPU's default generator, a list."""
    return [g.get_state() for g in default_generators]


def set_rng_state(new_state, device="hpu"):
    """Sets device's default generator's state (one get_rng_state() returned).

    RuntimeError when new_state is not an HPU generator's state (its size,
    tag or version); TypeError when it is not a CPU torch.ByteTensor."""
    default_generator(device).set_state(new_state.clone(memory_format=torch.contiguous_format))


def set_rng_state_all(new_states):
    """Sets every HPU's default generator's state (from get_rng_state_all())."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed):
    """Seeds the current HPU's default generator (its offset back to 0)."""
    default_generator().manual_seed(int(seed))


def manual_seed_all(seed):
    """Seeds every HPU's default generator (none without HPUs)."""
    seed = int(seed)
    for g in default_generators:
        g.manual_seed(seed)


def seed():
    """Seeds the current HPU's default generator with a non-deterministic random number."""
    default_generator().seed()


def seed_all():
    """Seeds every HPU's default generator with one non-deterministic random number."""
    gens = list(default_generators)
    if gens:
        manual_seed_all(gens[0].seed())


def initial_seed():
    """The current HPU's default generator's seed."""
    return default_generator().initial_seed()


def _patch_torch_seeding():
    """torch.manual_seed(s) (and torch.random.manual_seed) seeds every HPU's
    default generator after the CPU's and CUDA's, with the same signature
    and result (the CPU's default generator); torch.seed() (and
    torch.random.seed) seeds them with the seed it chose. PyTorch 1.13
    calls torch.cuda.manual_seed_all only."""
    # Wrapped once: a second call (importlib.reload) wraps the originals again.
    orig_manual_seed = getattr(torch.random.manual_seed, "_hpu_torch_orig", torch.random.manual_seed)
    orig_seed = getattr(torch.random.seed, "_hpu_torch_orig", torch.random.seed)

    @functools.wraps(orig_manual_seed)
    def manual_seed_wrapper(seed):
        gen = orig_manual_seed(seed)
        manual_seed_all(int(seed))
        return gen

    @functools.wraps(orig_seed)
    def seed_wrapper():
        s = orig_seed()
        manual_seed_all(s)
        return s

    manual_seed_wrapper._hpu_torch_orig = orig_manual_seed
    seed_wrapper._hpu_torch_orig = orig_seed
    torch.manual_seed = torch.random.manual_seed = manual_seed_wrapper
    torch.seed = torch.random.seed = seed_wrapper
