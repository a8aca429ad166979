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

from . import core  # noqa: E402
from . import hpu  # noqa: E402
from . import optim  # noqa: E402

__all__ = ["core", "hpu", "optim"]
