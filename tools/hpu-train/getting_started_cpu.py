#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# The getting-started example of the PyTorch guide (Documentation/pytorch.md),
# in two files: getting_started_cpu.py is a plain CPU PyTorch script;
# getting_started_hpu.py is the same script on the HPU and differs from it by
# exactly the lines the guide shows (import hpu_torch, mark_step, the device
# "hpu", mark_step() after optimizer.step()); tools/dev/check-docs.py fails on
# any other difference. The seed's model: Flatten 28x28 -> Linear 10,
# cross-entropy from logits, SGD lr 0.01, batch 128, 5 epochs on Fashion-MNIST
# (Debian's dataset-fashion-mnist), printing the loss of each epoch and the
# test accuracy. make run runs the CPU file on the host and the HPU file in a
# guest in lazy mode:
#
#   /usr/bin/python3 tools/hpu-train/getting_started_cpu.py
#   PT_HPU_LAZY_MODE=1 PYTHONPATH=build/python /usr/bin/python3 tools/hpu-train/getting_started_hpu.py
#
# Copyright (c) 2026 The hpu authors
import gzip
import os
import struct
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """An IDX file (gzipped) as a uint8 numpy array of its shape."""
    with gzip.open(path, "rb") as f:
        data = f.read()
    _, _, _, ndim = struct.unpack(">BBBB", data[:4])
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def dataset(kind):
    images = read_idx(os.path.join(DATA, f"{kind}-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(DATA, f"{kind}-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)  # [N, 1, 28, 28]
    return TensorDataset(x, torch.from_numpy(labels.astype(np.int64)))


device = torch.device("cpu")

torch.manual_seed(0)
train_loader = DataLoader(dataset("train"), batch_size=128, shuffle=True)
test_loader = DataLoader(dataset("t10k"), batch_size=1000)
model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 10)).to(device)
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

for epoch in range(5):
    t0 = time.monotonic()
    model.train()
    total, seen = 0.0, 0
    for x, y in train_loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(y)
        seen += len(y)
    secs = time.monotonic() - t0
    model.eval()
    correct, count = 0, 0
    with torch.no_grad():
        for x, y in test_loader:
            pred = model(x.to(device)).argmax(1)
            correct += (pred.cpu() == y).sum().item()
            count += len(y)
    print(f"{device.type} epoch {epoch + 1}: loss {total / seen:.4f}, test accuracy "
          f"{100.0 * correct / count:.2f}%, {secs:.1f} s ({1000 * secs / len(train_loader):.1f} ms/step)",
          flush=True)
