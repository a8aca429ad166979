#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# Two processes training on one HPU (tests/vm/torch/test_torch.py,
# TestTwoProcesses): the same few steps of the seed's model, run by the test's
# own process and by this script as a second process at the same time.
#
#   two_procs.py SEED DEVICE      (run by the test; DEVICE hpu:0 or cpu)
#
# trains STEPS steps from SEED, and halfway prints "mid <HBM allocated>" and
# waits for a line on stdin, so that the test knows both processes hold live
# device memory and contexts at once and can look at them (hpu-smi); then
# prints "losses <json list>" and exits.
#
# Copyright (c) 2026 The hpu authors
import json
import sys

import torch

STEPS = 6


def data(seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(64, 1, 28, 28, generator=g), torch.randint(0, 10, (64,), generator=g))
            for _ in range(STEPS)]


def train(seed, device, at_mid=None):
    """The seed's model (Flatten, Linear 784 -> 10, cross-entropy, SGD lr
    0.1) for STEPS steps; at_mid() runs after half of them."""
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(28 * 28, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = torch.nn.CrossEntropyLoss()
    losses = []
    for i, (x, y) in enumerate(data(seed)):
        if i == STEPS // 2 and at_mid is not None:
            at_mid()
        opt.zero_grad()
        loss = loss_fn(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    seed, device = int(sys.argv[1]), torch.device(sys.argv[2])
    if device.type == "hpu":
        import hpu_torch  # noqa: F401
        from hpu_torch import hpu

    def mid():
        used = hpu.memory_allocated(device) if device.type == "hpu" else 0
        print(f"mid {used}", flush=True)
        sys.stdin.readline()
    print("losses " + json.dumps(train(seed, device, mid)), flush=True)


if __name__ == "__main__":
    main()
