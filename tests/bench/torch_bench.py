#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# The PyTorch rows of `make bench` (issue 12), run in the guest by
# tests/bench/guest-bench.sh: the time of one training step of each of the
# three models of Documentation/pytorch.md on the HPU, eager and lazy, and on
# the guest's own CPU (the baseline, in the same guest):
#   linear  Flatten 28x28 -> Linear 10, cross-entropy, SGD lr 0.01
#   mlp     Linear 784 -> 256, ReLU, Dropout 0.2, Linear 256 -> 10,
#           cross-entropy, AdamW lr 1e-3
#   cnn     Conv2d 1->8 3x3 pad 1, BatchNorm2d, ReLU, MaxPool2d 2, Flatten,
#           Linear 8*14*14 -> 10, cross-entropy, SGD lr 0.01
# A step is what the getting-started script does per batch of 128: the batch
# copied to the device, zero_grad, forward, loss, backward, optimizer step,
# mark_step() in lazy mode, and loss.item() (which waits for the step). The
# batches are fixed random images (the data does not change the work).
# Prints "BENCH torch_<model>_<cpu|eager|lazy>_step_ms=<median>" and
# "BENCH torch_<model>_<eager|lazy>_fallbacks=<ops run on the CPU per step>".
#
# Copyright (c) 2026 The hpu authors
import statistics
import sys
import time

import torch
from torch import nn

WARMUP = 3


def make_model(name):
    if name == "linear":
        return nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 10))
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 256), nn.ReLU(), nn.Dropout(0.2),
                             nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(8 * 14 * 14, 10))


def step_times(name, device, steps, lazy=False):
    """The median milliseconds of `steps` training steps after a warm-up,
    and the ops the fallback ran per step."""
    core = None
    if device.type == "hpu":
        from hpu_torch import core
        core.set_lazy(lazy)
    torch.manual_seed(0)
    model = make_model(name).to(device)
    params = model.parameters()
    opt = torch.optim.AdamW(params, lr=1e-3) if name == "mlp" else torch.optim.SGD(params, lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(1)
    batches = [(torch.rand(128, 1, 28, 28, generator=g), torch.randint(0, 10, (128,), generator=g))
               for _ in range(4)]
    times = []
    for i in range(WARMUP + steps):
        if i == WARMUP and core is not None:
            core.reset_fallback_counts()
        x, y = batches[i % len(batches)]
        t0 = time.perf_counter()
        x, y = x.to(device), y.to(device)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if core is not None and lazy:
            core.mark_step()
        loss.item()
        times.append(time.perf_counter() - t0)
    fallbacks = sum(core.fallback_counts().values()) / steps if core is not None else 0
    if core is not None:
        core.set_lazy(False)
    return 1000 * statistics.median(times[WARMUP:]), fallbacks


def main():
    # The CPU of the guest is emulated: the CNN's CPU step takes over a second.
    steps = {"linear": 20, "mlp": 20, "cnn": 8}
    models = sys.argv[1:] or ["linear", "mlp", "cnn"]
    import hpu_torch  # noqa: F401  (registers the HPU backend)
    hpu = torch.device("hpu")
    rc = 0
    for m in models:
        for label, dev, lazy in (("cpu", torch.device("cpu"), False), ("eager", hpu, False),
                                 ("lazy", hpu, True)):
            try:
                ms, fb = step_times(m, dev, steps[m], lazy)
            except Exception as e:  # noqa: BLE001  (reported, then the next figure)
                print(f"ERROR torch {m} {label}: {type(e).__name__}: {e}", flush=True)
                rc = 1
                continue
            print(f"BENCH torch_{m}_{label}_step_ms={ms:.3f}", flush=True)
            if dev.type == "hpu":
                print(f"BENCH torch_{m}_{label}_fallbacks={fb:g}", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
