# SPDX-License-Identifier: MIT
"""hpu_torch: the PyTorch backend of the "hpu" device.

``import hpu_torch`` loads the C++ extension (libhpu_torch.so, next to this
file), which registers the HPU device guard, the caching allocator over
HBM, the HPU kernels of the ops and the CPU fallback with PyTorch. Then
``torch.device("hpu")`` works as any device. See Documentation/pytorch.md.
"""
import atexit
import os

import torch

_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libhpu_torch.so")
torch.ops.load_library(_LIB)
# At exit: wait for the devices and give the free HBM slabs back.
atexit.register(torch.ops.hpu_torch.shutdown)


def _patch_printing():
    """Printing an HPU tensor formats a host copy of its values, as PyTorch
    does for its own lazy devices (xla, lazy, ipu): one read of the tensor
    (one synchronisation) instead of the formatter's dozens of small ops
    (masked_select, float64 min/max, ceil...) and a read per element. The
    printed text still says device='hpu:N'."""
    import torch._tensor_str as ts

    orig = ts._tensor_str

    def _tensor_str(self, indent):
        if self.device.type == "hpu":
            self = self.cpu()
        return orig(self, indent)

    ts._tensor_str = _tensor_str


_patch_printing()

from . import core  # noqa: E402
from . import hpu  # noqa: E402
from . import optim  # noqa: E402
from . import random  # noqa: E402

# torch.manual_seed / torch.seed seed the HPUs' generators too.
random._patch_torch_seeding()

__all__ = ["core", "hpu", "optim", "random"]
