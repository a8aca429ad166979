#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# The convolutional ops of the PyTorch backend against the CPU, and a few
# training steps of a small CNN (Conv2d, BatchNorm2d, ReLU, MaxPool2d,
# Flatten, Linear) against the CPU's losses with no CPU fallback
# (Documentation/pytorch.md). Run by test_torch.py, which imports these
# classes into its process (one guest boot, one `import torch`); alone:
#   PYTHONPATH=build/python /usr/bin/python3 tests/vm/torch/test_cnn.py [-k TestConv2d]
#
# Tolerances: FP32 convolutions sum in another order than the CPU (the MME's
# FP32 GEMM, per-sample partial sums of the weight gradient), 1e-4 relative;
# pooling is exact but for the order of overlapping windows' gradient sums;
# batch norm's statistics are three-level sums (libhpu/kernels/README.md).
# BF16 results are compared with the CPU computing in FP32 on the same BF16
# inputs: the device accumulates in FP32 and rounds once, within a few BF16
# ulps of that.
#
# Copyright (c) 2026 The hpu authors
import sys

import torch
import torch.nn.functional as F

_main = sys.modules["__main__"]
if not hasattr(_main, "DeviceTest"):  # run alone: the suite's helpers
    import test_torch as _main  # noqa: E402

DeviceTest, HPU, F32, BF16, rnd = _main.DeviceTest, _main.HPU, _main.F32, _main.BF16, _main.rnd
batches, train = _main.batches, _main.train

__all__ = ["TestConv2d", "TestPooling", "TestBatchNorm", "TestInt64Add", "TestCNNTraining"]

BF16_TOL = dict(rtol=2e-2, atol=3e-2)


def leaf(t, device, dtype=F32):
    """A fresh leaf copy of t on device, of dtype, requiring its gradient."""
    return t.detach().to(device=device, dtype=dtype, copy=True).requires_grad_()


def run_both(fn, inputs, dtype, grad_seed=9):
    """fn on the CPU (in FP32 for BF16, on the BF16 values) and on the HPU;
    backward of both with the same random output gradient. Returns the
    outputs and input gradients of each: (cpu, hpu)."""
    want_dt = F32 if dtype == BF16 else dtype
    cin = [leaf(t.to(dtype), "cpu", want_dt) for t in inputs]
    hin = [leaf(t, HPU, dtype) for t in inputs]
    yc = fn(*cin)
    yh = fn(*hin)
    dy = rnd(*yc.shape, seed=grad_seed).to(dtype)
    yc.backward(dy.to(want_dt))
    yh.backward(dy.to(HPU))
    return ([yc.detach()] + [t.grad for t in cin]), ([yh.detach()] + [t.grad for t in hin])


class NNTest(DeviceTest):
    def compare(self, cpu, hpu, dtype, names, **tol):
        for name, c, h in zip(names, cpu, hpu):
            t = dict(BF16_TOL if dtype == BF16 else dict(rtol=1e-4, atol=1e-4))
            t.update(tol)
            self.close(h, c.to(dtype) if dtype == BF16 else c, dtype, what=name, **t)


# (N, C, H, W), K, kernel, stride, padding, dilation, bias
CONVS = [
    ((2, 3, 7, 9), 4, 3, 1, 1, 1, True),
    ((2, 2, 11, 13), 5, (3, 2), (2, 3), (1, 2), (1, 2), True),
    ((3, 1, 5, 70), 2, (5, 4), (2, 1), (2, 0), (2, 1), False),
    ((1, 2, 3, 130), 3, 3, 2, 1, 1, True),
    ((2, 4, 6, 5), 3, 1, 1, 0, 1, True),
    ((3, 1, 9, 23), 3, 1, 5, 0, 1, False),
    ((4, 1, 28, 28), 8, 3, 1, 1, 1, True),
]


class TestConv2d(NNTest):
    def check(self, dtype):
        for i, (shape, k, ks, st, pad, dil, bias) in enumerate(CONVS):
            what = f"{dtype} conv {shape} k{k} {ks} s{st} p{pad} d{dil} bias {bias}"
            kh, kw = (ks, ks) if isinstance(ks, int) else ks
            ins = [rnd(*shape, seed=i), rnd(k, shape[1], kh, kw, seed=i + 50) * 0.5]
            if bias:
                ins.append(rnd(k, seed=i + 90))

            def conv(x, w, b=None):
                return F.conv2d(x, w, b, stride=st, padding=pad, dilation=dil)

            cpu, hpu = run_both(conv, ins, dtype)
            self.compare(cpu, hpu, dtype, [what + " y", what + " dx", what + " dw", what + " db"])
        self.assert_on_device()

    def test_forward_backward_f32(self):
        self.check(F32)

    def test_forward_backward_bf16(self):
        self.check(BF16)

    def test_strided_input_and_module(self):
        x = rnd(2, 5, 9, 10)
        conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        want = conv(x[:, 1:4, :, 1:])
        h = torch.nn.Conv2d(3, 4, 3, padding=1).to(HPU)
        h.load_state_dict(conv.state_dict())
        got = h(x.to(HPU)[:, 1:4, :, 1:])
        self.close(got.detach(), want.detach(), F32, "sliced input", rtol=1e-4, atol=1e-4)
        cl = x.contiguous(memory_format=torch.channels_last)
        conv2 = torch.nn.Conv2d(5, 2, 2, stride=2)
        h2 = torch.nn.Conv2d(5, 2, 2, stride=2).to(HPU)
        h2.load_state_dict(conv2.state_dict())
        self.close(h2(cl.to(HPU)).detach(), conv2(cl).detach(), F32, "channels_last input", rtol=1e-4, atol=1e-4)
        self.assert_on_device()

    def test_groups_fall_back(self):
        x, w = rnd(1, 4, 5, 5), rnd(4, 2, 3, 3)
        got = F.conv2d(x.to(HPU), w.to(HPU), groups=2)
        self.close(got, F.conv2d(x, w, groups=2), F32, "groups 2")
        self.assertIn("aten::convolution", _main.core.fallback_counts())
        xh, wh = leaf(x, HPU), leaf(w, HPU)
        F.conv2d(xh, wh, groups=2).sum().backward()
        xc, wc = leaf(x, "cpu"), leaf(w, "cpu")
        F.conv2d(xc, wc, groups=2).sum().backward()
        self.close(xh.grad, xc.grad, F32, "groups 2 dx")
        self.close(wh.grad, wc.grad, F32, "groups 2 dw")
        self.assertIn("aten::convolution_backward", _main.core.fallback_counts())


# (N, C, H, W), kernel, stride, padding, dilation, ceil_mode
MAXPOOLS = [
    ((2, 3, 8, 10), 2, 2, 0, 1, False),
    ((1, 2, 7, 9), 3, 2, 1, 1, False),
    ((2, 1, 5, 65), 3, 1, 1, 1, False),
    ((1, 2, 6, 11), (2, 3), (1, 3), (0, 1), (2, 1), False),
    ((1, 1, 3, 131), 3, 2, 0, 1, False),
    ((2, 2, 7, 7), 2, 2, 0, 1, True),
    ((2, 3, 9, 8), 3, 2, 1, 1, True),
    ((3, 5, 5), 2, 1, 0, 1, False),  # unbatched [C, H, W]
    ((4, 8, 28, 28), 2, 2, 0, 1, False),
]

# (N, C, H, W), kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
AVGPOOLS = [
    ((2, 3, 8, 10), 2, 2, 0, False, True, None),
    ((1, 2, 7, 9), 3, 2, 1, False, True, None),
    ((1, 2, 7, 9), 3, 2, 1, False, False, None),
    ((2, 1, 5, 65), 3, 1, 1, True, False, None),
    ((2, 2, 7, 7), 2, 2, 1, True, True, None),
    ((1, 1, 6, 6), 3, 3, 0, False, True, 4),
]


class TestPooling(NNTest):
    def check_max(self, dtype):
        for i, (shape, ks, st, pad, dil, ceil) in enumerate(MAXPOOLS):
            what = f"{dtype} maxpool {shape} {ks} s{st} p{pad} d{dil} ceil {ceil}"
            x = rnd(*shape, seed=i)
            xc, xh = leaf(x, "cpu", dtype), leaf(x, HPU, dtype)
            yc, ic = F.max_pool2d(xc, ks, st, pad, dil, ceil_mode=ceil, return_indices=True)
            yh, ih = F.max_pool2d(xh, ks, st, pad, dil, ceil_mode=ceil, return_indices=True)
            self.assertTrue(torch.equal(yh.detach().cpu(), yc.detach()), what + " y")
            self.assertTrue(torch.equal(ih.cpu(), ic), what + " indices")
            dy = rnd(*yc.shape, seed=i + 7).to(dtype)
            yc.backward(dy)
            yh.backward(dy.to(HPU))
            # Overlapping windows: sums in another order (BF16: in FP32, rounded once).
            self.close(xh.grad, xc.grad, dtype, what + " dx",
                       **(dict(rtol=1e-6, atol=1e-6) if dtype == F32 else BF16_TOL))
        self.assert_on_device()

    def test_max_pool_f32(self):
        self.check_max(F32)

    def test_max_pool_bf16(self):
        self.check_max(BF16)

    def check_avg(self, dtype):
        for i, (shape, ks, st, pad, ceil, cip, div) in enumerate(AVGPOOLS):
            what = f"{dtype} avgpool {shape} {ks} s{st} p{pad} ceil {ceil} cip {cip} div {div}"

            def pool(x):
                return F.avg_pool2d(x, ks, st, pad, ceil_mode=ceil, count_include_pad=cip, divisor_override=div)

            cpu, hpu = run_both(pool, [rnd(*shape, seed=i)], dtype)
            tol = dict(rtol=1e-5, atol=1e-6) if dtype == F32 else {}
            self.compare(cpu, hpu, dtype, [what + " y", what + " dx"], **tol)
        self.assert_on_device()

    def test_avg_pool_f32(self):
        self.check_avg(F32)

    def test_avg_pool_bf16(self):
        self.check_avg(BF16)

    def test_adaptive_avg_pool(self):
        for dtype in (F32, BF16):
            for size in (1, 2, (4, 3)):
                cpu, hpu = run_both(lambda x: F.adaptive_avg_pool2d(x, size), [rnd(3, 4, 8, 9 if size == 1 else 6)],
                                    dtype)
                tol = dict(rtol=1e-5, atol=1e-6) if dtype == F32 else {}
                self.compare(cpu, hpu, dtype, [f"adaptive {size} y", f"adaptive {size} dx"], **tol)
        self.assert_on_device()


class TestBatchNorm(NNTest):
    def pair(self, make, dtype=F32):
        torch.manual_seed(3)
        c = make()
        h = make()
        with torch.no_grad():
            for p in c.parameters():
                p.uniform_(0.5, 1.5)
            c.running_mean.uniform_(-1, 1) if c.running_mean is not None else None
            c.running_var.uniform_(0.5, 2) if c.running_var is not None else None
        h.load_state_dict(c.state_dict())
        return c.to(dtype), h.to(dtype).to(HPU)

    def check(self, make, shape, dtype=F32, train_mode=True, what=""):
        c, h = self.pair(make, dtype)
        c.train(train_mode)
        h.train(train_mode)
        x = rnd(*shape, seed=4) * 2 + 0.5
        xc, xh = leaf(x, "cpu", dtype), leaf(x, HPU, dtype)
        yc, yh = c(xc), h(xh)
        dy = rnd(*shape, seed=6).to(dtype)
        yc.backward(dy)
        yh.backward(dy.to(HPU))
        tol = BF16_TOL if dtype == BF16 else dict(rtol=1e-4, atol=1e-4)
        self.close(yh.detach(), yc.detach(), dtype, what + " y", **tol)
        self.close(xh.grad, xc.grad, dtype, what + " dx", **tol)
        if c.weight is not None:
            self.close(h.weight.grad, c.weight.grad, dtype, what + " dgamma", **tol)
            self.close(h.bias.grad, c.bias.grad, dtype, what + " dbeta", **tol)
        if c.running_mean is not None:
            self.close(h.running_mean, c.running_mean, dtype, what + " running_mean", **tol)
            self.close(h.running_var, c.running_var, dtype, what + " running_var", **tol)
            self.assertEqual(h.num_batches_tracked.item(), c.num_batches_tracked.item(), what)

    def test_batchnorm2d_train_and_eval(self):
        for dtype in (F32, BF16):
            for shape in ((4, 3, 5, 7), (2, 5, 3, 130), (1, 2, 1, 200), (3, 8, 28, 28)):
                for mode in (True, False):
                    self.check(lambda: torch.nn.BatchNorm2d(shape[1]), shape, dtype, mode,
                               f"{dtype} {shape} train {mode}")
        self.assert_on_device()

    def test_batchnorm_variants(self):
        self.check(lambda: torch.nn.BatchNorm2d(3, affine=False), (2, 3, 4, 5), what="affine=False")
        self.check(lambda: torch.nn.BatchNorm2d(3, track_running_stats=False), (2, 3, 4, 5), what="no running stats")
        self.check(lambda: torch.nn.BatchNorm2d(3, momentum=None), (2, 3, 4, 5), what="cumulative average")
        self.check(lambda: torch.nn.BatchNorm1d(6), (5, 6), what="BatchNorm1d [N, C]")
        self.check(lambda: torch.nn.BatchNorm1d(4), (3, 4, 9), what="BatchNorm1d [N, C, L]")
        self.check(lambda: torch.nn.BatchNorm3d(2), (2, 2, 3, 4, 5), what="BatchNorm3d")
        self.assert_on_device()

    def test_mixed_bf16_input_fp32_parameters(self):
        c, h = self.pair(lambda: torch.nn.BatchNorm2d(3))
        x = rnd(2, 3, 4, 6).to(BF16)
        yc = torch.native_batch_norm(x, c.weight, c.bias, c.running_mean, c.running_var, True, 0.1, 1e-5)
        yh = torch.native_batch_norm(x.to(HPU), h.weight, h.bias, h.running_mean, h.running_var, True, 0.1, 1e-5)
        for i, (a, b) in enumerate(zip(yh, yc)):
            self.close(a.detach(), b.detach(), BF16 if i == 0 else F32, f"output {i}",
                       **(BF16_TOL if i == 0 else dict(rtol=1e-4, atol=1e-4)))
        self.assert_on_device()


class TestInt64Add(DeviceTest):
    def test_carry_between_words(self):
        big = [0, 1, 2**32 - 1, 2**32, -1, -(2**32), 2**40 + 2**32 - 1, -5, 2**62]
        a = torch.tensor(big, dtype=torch.int64)
        d = a.to(HPU)
        for v in (1, 7, -1, 2**32 + 3, -(2**33)):
            self.assertTrue(torch.equal((d + v).cpu(), a + v), v)
            self.assertTrue(torch.equal((d - v).cpu(), a - v), v)
        b = torch.tensor(list(reversed(big)), dtype=torch.int64)
        self.assertTrue(torch.equal((d + b.to(HPU)).cpu(), a + b))
        self.assertTrue(torch.equal((d.view(3, 3) + b[:3].to(HPU)).cpu(), a.view(3, 3) + b[:3]))
        n = torch.tensor(2**32 - 1, device=HPU)
        n.add_(1)
        self.assertEqual(n.item(), 2**32)
        self.assert_on_device()


def cnn():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                               torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(8 * 14 * 14, 10))


class TestCNNTraining(DeviceTest):
    """A few training steps of the small CNN against the CPU's losses,
    FP32 and BF16, SGD with momentum and AdamW, with no CPU fallback; then
    evaluation (BatchNorm's running statistics, argmax)."""

    def steps(self, dtype, opt_fn, nsteps=3, batch=32):
        data = [(x[:batch].to(dtype), y[:batch]) for x, y in batches(nsteps)]
        lc, tc = train(cnn().to(dtype), opt_fn, "cpu", data)
        core = _main.core
        core.reset_fallback_counts()
        model = cnn().to(dtype)
        lh, th = train(model, opt_fn, HPU, data, mark=True)
        print(f"\n  CNN {dtype}: cpu losses {lc}\n  hpu losses {lh}\n  step times (s): cpu "
              f"{[round(t, 3) for t in tc]}, hpu {[round(t, 3) for t in th]}", file=sys.stderr)
        model.eval()
        with torch.no_grad():
            pred = model(data[0][0].to(HPU)).argmax(1)
        self.assertEqual(pred.shape, (batch,))
        self.assert_on_device()
        return lc, lh

    def test_fp32_sgd_momentum(self):
        lc, lh = self.steps(F32, lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9))
        torch.testing.assert_close(torch.tensor(lh), torch.tensor(lc), rtol=1e-4, atol=1e-5)

    def test_fp32_adamw(self):
        lc, lh = self.steps(F32, lambda p: torch.optim.AdamW(p, lr=1e-3))
        torch.testing.assert_close(torch.tensor(lh), torch.tensor(lc), rtol=1e-4, atol=1e-5)

    def test_bf16_sgd(self):
        lc, lh = self.steps(BF16, lambda p: torch.optim.SGD(p, lr=0.01))
        torch.testing.assert_close(torch.tensor(lh), torch.tensor(lc), rtol=3e-2, atol=3e-2)


if __name__ == "__main__":
    _main.main()
