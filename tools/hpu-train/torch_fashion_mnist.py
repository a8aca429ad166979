#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# The getting-started script of the PyTorch guide (Documentation/pytorch.md):
# Flatten 28x28 -> Linear 10, cross-entropy from logits, SGD lr 0.01, batch
# 128, 5 epochs on Fashion-MNIST (Debian's dataset-fashion-mnist), printing
# the loss of each epoch and the test accuracy. It is a plain CPU PyTorch
# script but for the lines marked "HPU" (the guide's few lines); with
# --device cpu it is the CPU script itself, to compare. --model cnn trains the
# guide's second example instead, a small CNN: Conv2d 1->8 3x3 (padding 1),
# BatchNorm2d, ReLU, MaxPool2d 2, Flatten, Linear 8*14*14 -> 10, with the
# same loss, optimizer and batches. --optimizer fused-sgd steps with
# hpu_torch.optim.FusedSGD (one TPC launch per parameter) instead of
# torch.optim.SGD, same lr: the same update, the HPU only.
#
#   PYTHONPATH=build/python /usr/bin/python3 tools/hpu-train/torch_fashion_mnist.py [--device cpu] \
#       [--model cnn] [--optimizer fused-sgd] [--epochs N] [--limit N]
#
# Copyright (c) 2026 The hpu authors
import argparse
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


def dataset(kind, limit):
    images = read_idx(os.path.join(DATA, f"{kind}-images-idx3-ubyte.gz"))[:limit]
    labels = read_idx(os.path.join(DATA, f"{kind}-labels-idx1-ubyte.gz"))[:limit]
    x = torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)  # [N, 1, 28, 28]
    return TensorDataset(x, torch.from_numpy(labels.astype(np.int64)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="hpu", choices=["hpu", "cpu"])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--limit", type=int, default=None, help="use only the first N images of each set")
    ap.add_argument("--model", default="linear", choices=["linear", "cnn"])
    ap.add_argument("--optimizer", default="sgd", choices=["sgd", "fused-sgd"],
                    help="fused-sgd: hpu_torch.optim.FusedSGD (HPU only)")
    args = ap.parse_args()
    if args.optimizer == "fused-sgd" and args.device != "hpu":
        ap.error("--optimizer fused-sgd steps HPU parameters only")

    if args.device == "hpu":
        import hpu_torch  # HPU: load the HPU backend
        from hpu_torch.core import mark_step  # HPU
        device = torch.device("hpu")  # HPU
    else:
        device = torch.device("cpu")
    lazy = os.environ.get("PT_HPU_LAZY_MODE", "0") == "1"  # HPU

    torch.manual_seed(0)
    train_loader = DataLoader(dataset("train", args.limit), batch_size=128, shuffle=True)
    test_loader = DataLoader(dataset("t10k", args.limit), batch_size=1000)

    if args.model == "cnn":
        model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(8 * 14 * 14, 10)).to(device)
    else:
        model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 10)).to(device)
    loss_fn = nn.CrossEntropyLoss()
    if args.optimizer == "fused-sgd":
        optimizer = hpu_torch.optim.FusedSGD(model.parameters(), lr=0.01)  # HPU: the fused step
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    for epoch in range(args.epochs):
        t0 = time.monotonic()
        model.train()
        total, seen = 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            if device.type == "hpu" and lazy:  # HPU
                mark_step()  # HPU
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
    if device.type == "hpu":
        print(f"hpu: ops run on the CPU by the fallback: {hpu_torch.core.fallback_counts() or 'none'}")
        if lazy:  # HPU
            print(f"hpu: lazy mode: {hpu_torch.core.lazy_stats()}")


if __name__ == "__main__":
    main()
