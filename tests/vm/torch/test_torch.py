#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# The PyTorch backend's tests (Documentation/pytorch.md), run in the guest by
# tests/vm/guest-suite.sh in one python3 process (importing torch takes about
# 20 s under TCG):
#   PYTHONPATH=build/python /usr/bin/python3 tests/vm/torch/test_torch.py \
#       [--junit FILE] [unittest arguments]
# Every registered op against the CPU (dense and strided operands,
# broadcasting, FP32 and BF16, empty and odd shapes), and that it ran on the
# device (jobs issued, no fallback); a few training steps of the seed's model
# and an MLP against the CPU's losses; the CPU fallback; the allocator; the
# error paths (HBM exhausted, a failing job, a hard reset); hpu:1; streams
# and events.
#
# Copyright (c) 2026 The hpu authors
import json
import os
import re
import select
import subprocess
import sys
import time
import unittest
import warnings
import xml.etree.ElementTree as ET

# Before the first fallback: its warnings are tested below.
os.environ["PT_HPU_LOG_FALLBACK"] = "1"

import torch  # noqa: E402

import hpu_torch  # noqa: E402
from hpu_torch import core, hpu  # noqa: E402

HPU = torch.device("hpu:0")
F32, BF16 = torch.float32, torch.bfloat16

# Tolerances: FP32 ops the device rounds as the CPU does are exact; sums,
# GEMMs and transcendental kernels differ in the order of operations or a few
# ulps (libhpu/kernels/README.md bounds them).
TOL = {F32: dict(rtol=1e-5, atol=1e-5), BF16: dict(rtol=1.6e-2, atol=1e-2)}


def rnd(*shape, dtype=F32, seed=0):
    g = torch.Generator().manual_seed(seed + 17 * len(shape))
    return torch.randn(*shape, generator=g).to(dtype)


def child(env, code):
    """Runs code in a new python3 with env's variables added to ours: the
    last line it printed (it must exit with 0)."""
    e = dict(os.environ)
    e.update(env)
    r = subprocess.run([sys.executable, "-c", code], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=600)
    assert r.returncode == 0, f"the child with {env} failed: {r.stderr[-2000:]}"
    return r.stdout.strip().splitlines()[-1]


class DeviceTest(unittest.TestCase):
    """Helpers: run on the device, assert device work and no fallback."""

    def setUp(self):
        core.reset_fallback_counts()
        self.jobs0 = core.jobs(0)

    def assert_on_device(self, allowed=()):
        hpu.synchronize()
        fb = {k: v for k, v in core.fallback_counts().items() if k not in allowed}
        self.assertEqual(fb, {}, "ops fell back to the CPU")
        self.assertGreater(core.jobs(0), self.jobs0, "no device job was issued")

    def close(self, got, want, dtype=F32, what=None, **tol):
        self.assertEqual(got.device.type, "hpu", what)
        self.assertEqual(got.dtype, want.dtype, what)
        self.assertEqual(got.shape, want.shape, what)
        t = dict(TOL[dtype])
        t.update(tol)
        torch.testing.assert_close(got.cpu(), want, msg=(lambda m: f"{what}: {m}") if what else None, **t)


class TestCopies(DeviceTest):
    def test_roundtrip_every_dtype(self):
        for dt in (F32, BF16, torch.int32, torch.int64, torch.int16, torch.int8, torch.uint8,
                   torch.bool, torch.float64):
            x = (rnd(3, 5) * 50).to(dt)
            self.assertTrue(torch.equal(x.to(HPU).cpu(), x), str(dt))

    def test_strided_sources_and_destinations(self):
        x = rnd(6, 8)
        d = x.to(HPU)
        self.assertTrue(torch.equal(d.t().contiguous().cpu(), x.t().contiguous()))
        self.assertTrue(torch.equal(d[:, 1::3].cpu(), x[:, 1::3]))
        y = torch.zeros(8, 6, device=HPU)
        y.t().copy_(d)  # strided destination
        self.assertTrue(torch.equal(y.cpu(), x.t()))
        z = torch.zeros(4, 6, 8, device=HPU)
        z.copy_(d)  # broadcast source
        self.assertTrue(torch.equal(z.cpu(), x.expand(4, 6, 8)))
        host = torch.zeros(8, 6)
        host.t().copy_(d)  # strided host destination
        self.assertTrue(torch.equal(host, x.t()))
        w = rnd(2, 3, 4, 5, 6, 7)
        self.assertTrue(torch.equal(w.to(HPU).permute(5, 3, 1, 0, 4, 2).contiguous().cpu(),
                                    w.permute(5, 3, 1, 0, 4, 2).contiguous()))
        self.assertTrue(torch.equal(torch.arange(20).to(HPU)[::3].contiguous().cpu(),
                                    torch.arange(20)[::3]))
        self.assert_on_device()

    def test_casts_on_the_device(self):
        # Within each type's range (PyTorch leaves float -> integer casts
        # out of range undefined; the device saturates).
        x = rnd(7, 9) * 40
        d = x.to(HPU)
        for dt in (BF16, torch.int32, torch.int16, torch.int8):
            self.assertTrue(torch.equal(d.to(dt).cpu(), x.to(dt)), str(dt))
        self.assertTrue(torch.equal(x.abs().to(HPU).to(torch.uint8).cpu(), x.abs().to(torch.uint8)))
        labels = torch.tensor([3, -2, 70000, 9])
        self.assertTrue(torch.equal(labels.to(HPU).to(torch.int32).cpu(), labels.to(torch.int32)))
        b = rnd(4, 4).to(BF16)
        self.assertTrue(torch.equal(b.to(HPU).float().cpu(), b.float()))
        self.assert_on_device()

    def test_host_side_casts(self):
        # Types without a device kernel (64-bit results, bool) go through the host.
        x = rnd(5, 3) * 10
        d = x.to(HPU)
        self.assertTrue(torch.equal(d.to(torch.int64).cpu(), x.to(torch.int64)))
        self.assertTrue(torch.equal(d.to(torch.bool).cpu(), x.to(torch.bool)))
        self.assertTrue(torch.equal(d.double().cpu(), x.double()))

    def test_between_two_hpus(self):
        if hpu.device_count() < 2:
            self.skipTest("one HPU")
        x = rnd(33, 7)
        a = x.to("hpu:1")
        self.assertEqual(a.device, torch.device("hpu:1"))
        self.assertTrue(torch.equal((a * 2).cpu(), x * 2))
        self.assertTrue(torch.equal(a.to("hpu:0").cpu(), x))
        self.assertTrue(torch.equal(x.to("hpu:0").to("hpu:1").cpu(), x))

    def test_empty_and_odd_shapes(self):
        for shape in ((0,), (0, 3), (1,), (1, 1), (257,), (3, 1, 65), (1000, 3)):
            x = rnd(*shape)
            self.assertTrue(torch.equal(x.to(HPU).cpu(), x), str(shape))
            self.assertTrue(torch.equal((x.to(HPU) + 1).cpu(), x + 1), str(shape))


class TestCoreOps(DeviceTest):
    def test_fill_zero(self):
        for dt in (F32, BF16, torch.int32, torch.int64, torch.uint8, torch.bool):
            t = torch.empty(5, 7, dtype=dt, device=HPU)
            t.fill_(1)
            self.assertTrue(torch.equal(t.cpu(), torch.ones(5, 7, dtype=dt)), str(dt))
            t.zero_()
            self.assertTrue(torch.equal(t.cpu(), torch.zeros(5, 7, dtype=dt)), str(dt))
        t = torch.zeros(6, 6, device=HPU)
        t[:, 2].fill_(-3.5)  # strided fill
        want = torch.zeros(6, 6)
        want[:, 2] = -3.5
        self.assertTrue(torch.equal(t.cpu(), want))
        self.assertTrue(torch.equal(torch.full((2, 3), 7.25, device=HPU).cpu(), torch.full((2, 3), 7.25)))
        self.assert_on_device()

    def test_views(self):
        x = rnd(4, 6)
        d = x.to(HPU)
        self.assertTrue(torch.equal(d.view(3, 8).cpu(), x.view(3, 8)))
        self.assertTrue(torch.equal(d.reshape(24).cpu(), x.reshape(24)))
        self.assertTrue(torch.equal(d.t().reshape(24).cpu(), x.t().reshape(24)))
        self.assertTrue(torch.equal(d.as_strided((2, 2), (1, 6), 1).cpu(), x.as_strided((2, 2), (1, 6), 1)))
        self.assertEqual(d.view(24).data_ptr(), d.data_ptr())  # a view shares memory
        self.assertTrue(torch.equal(d.unsqueeze(0).expand(3, 4, 6).cpu(), x.expand(3, 4, 6)))

    def test_item_and_resize(self):
        x = rnd(3, 4)
        d = x.to(HPU)
        self.assertEqual(d[2, 1].item(), x[2, 1].item())
        self.assertEqual(torch.tensor(12345678901, device=HPU).item(), 12345678901)
        out = torch.empty(0, device=HPU)
        torch.add(d, 1, out=out)  # resize_ of an out= tensor
        self.assertTrue(torch.equal(out.cpu(), x + 1))
        s = torch.empty(0, device=HPU)
        torch.sum(d, 0, out=s)
        torch.testing.assert_close(s.cpu(), x.sum(0))
        r = torch.arange(6.0).to(HPU)
        r.resize_(10)
        self.assertTrue(torch.equal(r[:6].cpu(), torch.arange(6.0)))
        self.assert_on_device()


class TestElementwise(DeviceTest):
    def binops(self, dt):
        a, b = rnd(9, 13, dtype=dt, seed=1), rnd(9, 13, dtype=dt, seed=2)
        b = b.abs() + 0.5  # a safe divisor
        cases = [
            (lambda x, y: x + y, False), (lambda x, y: x - y, False), (lambda x, y: x * y, False),
            (lambda x, y: x / y, False), (lambda x, y: torch.add(x, y, alpha=0.25), True),
            (lambda x, y: torch.sub(x, y, alpha=3), True),
        ]
        for fn, fma in cases:
            tol = dict(rtol=1.3e-6, atol=1e-6) if dt == F32 and fma else {}
            self.close(fn(a.to(HPU), b.to(HPU)), fn(a, b), dt, **tol)
            # strided, broadcast, host scalars, 0-dim tensors
            self.close(fn(a.to(HPU).t(), b.to(HPU).t()), fn(a.t(), b.t()), dt, **tol)
            self.close(fn(a.to(HPU), b[0].to(HPU)), fn(a, b[0]), dt, **tol)
            self.close(fn(a[:, :1].to(HPU), b.to(HPU)), fn(a[:, :1], b), dt, **tol)
            self.close(fn(a.to(HPU), 1.5), fn(a, 1.5), dt, **tol)
            self.close(fn(a.to(HPU), torch.tensor(2.5)), fn(a, torch.tensor(2.5)), dt, **tol)
        x = rnd(2, 3, 4, 5, 6, dtype=dt)  # more dimensions than one launch takes
        self.close(x.to(HPU).transpose(1, 3) * 2 + x.to(HPU).transpose(1, 3),
                   x.transpose(1, 3) * 2 + x.transpose(1, 3), dt)
        self.close(rnd(0, 4, dtype=dt).to(HPU) + 1, rnd(0, 4, dtype=dt) + 1, dt)
        self.close(rnd(1, 1000, dtype=dt).to(HPU) * 3, rnd(1, 1000, dtype=dt) * 3, dt)
        y = a.to(HPU)
        y.add_(b.to(HPU))  # in place
        self.close(y, a + b, dt)
        self.assert_on_device()

    def test_binary_f32(self):
        self.binops(F32)

    def test_binary_bf16(self):
        self.binops(BF16)

    def test_mixed_dtypes_promote(self):
        a, b = rnd(5, 6), rnd(5, 6, dtype=BF16)
        self.close(a.to(HPU) + b.to(HPU), a + b)
        self.close(a.to(HPU) * 2, a * 2)
        self.assert_on_device()

    def test_integer_add_mul(self):
        a = torch.randint(-100, 100, (7, 11), dtype=torch.int32)
        b = torch.randint(-100, 100, (7, 11), dtype=torch.int32)
        self.assertTrue(torch.equal((a.to(HPU) + b.to(HPU)).cpu(), a + b))
        self.assertTrue(torch.equal((a.to(HPU) * b.to(HPU)).cpu(), a * b))
        self.assert_on_device()

    def test_addcmul_addcdiv(self):
        for dt in (F32, BF16):
            s, t1, t2 = rnd(8, 5, dtype=dt, seed=3), rnd(8, 5, dtype=dt, seed=4), rnd(8, 5, dtype=dt, seed=5)
            t2 = t2.abs() + 0.5
            tol = dict(rtol=1e-5, atol=1e-5) if dt == F32 else dict(rtol=3e-2, atol=3e-2)
            self.close(torch.addcmul(s.to(HPU), t1.to(HPU), t2.to(HPU), value=0.3),
                       torch.addcmul(s, t1, t2, value=0.3), dt, **tol)
            self.close(torch.addcdiv(s.to(HPU), t1.to(HPU), t2.to(HPU), value=-2),
                       torch.addcdiv(s, t1, t2, value=-2), dt, **tol)
            self.close(torch.addcmul(s.to(HPU), t1[0].to(HPU), t2.to(HPU)), torch.addcmul(s, t1[0], t2), dt, **tol)
        self.assert_on_device()

    def test_relu_and_its_gradient(self):
        for dt in (F32, BF16):
            x = rnd(17, 300, dtype=dt)
            self.close(torch.relu(x.to(HPU)), torch.relu(x), dt, rtol=0, atol=0)
            self.close(torch.relu(x.to(HPU).t()), torch.relu(x.t()), dt, rtol=0, atol=0)
            y = x.to(HPU)
            y.relu_()
            self.close(y, torch.relu(x), dt, rtol=0, atol=0)
            xh = x.to(HPU).requires_grad_()
            xc = x.clone().requires_grad_()
            g = rnd(17, 300, dtype=dt, seed=9)
            torch.relu(xh).backward(g.to(HPU))
            torch.relu(xc).backward(g)
            self.close(xh.grad, xc.grad, dt, rtol=0, atol=0)
        self.assert_on_device()

    def test_dropout(self):
        x = rnd(64, 300)
        for dt in (F32, BF16):
            torch.manual_seed(11)
            out, mask = torch.ops.aten.native_dropout(x.to(dt).to(HPU), 0.25, True)
            out_c, mask_c = out.cpu(), mask.cpu()
            self.assertEqual(mask_c.dtype, torch.bool)
            kept = mask_c.float().mean().item()
            self.assertTrue(0.72 < kept < 0.78, kept)  # p = 0.25 over 19200 draws
            torch.testing.assert_close(out_c, (x.to(dt) * mask_c / 0.75).to(dt), **TOL[dt])
            # the same seed gives the same mask; backward applies it
            torch.manual_seed(11)
            _, mask2 = torch.ops.aten.native_dropout(x.to(dt).to(HPU), 0.25, True)
            self.assertTrue(torch.equal(mask2.cpu(), mask_c))
            g = rnd(64, 300, dtype=dt, seed=3)
            dx = torch.ops.aten.native_dropout_backward(g.to(HPU), mask, 1 / 0.75)
            torch.testing.assert_close(dx.cpu(), (g * mask_c / 0.75).to(dt), **TOL[dt])
        self.assert_on_device()


class TestReductionsAndRows(DeviceTest):
    def test_sum_mean(self):
        for dt in (F32, BF16):
            x = rnd(6, 7, 130, dtype=dt)
            tol = dict(rtol=1e-4, atol=1e-4) if dt == F32 else dict(rtol=2e-2, atol=5e-2)
            d = x.to(HPU)
            for dims in ((0,), (1,), (2,), (0, 2), (0, 1, 2), (-1,)):
                for keep in (False, True):
                    self.close(d.sum(dims, keepdim=keep), x.sum(dims, keepdim=keep), dt, **tol)
                    self.close(d.mean(dims, keepdim=keep), x.mean(dims, keepdim=keep), dt, **tol)
            self.close(d.sum(), x.sum(), dt, **tol)
            self.close(d.mean(), x.mean(), dt, **tol)
            self.close(d.transpose(0, 2).sum(1), x.transpose(0, 2).sum(1), dt, **tol)
            self.close(rnd(0, 5, dtype=dt).to(HPU).sum(0), rnd(0, 5, dtype=dt).sum(0), dt)
        self.assert_on_device()

    def test_log_softmax_and_backward(self):
        for dt in (F32, BF16):
            x = rnd(33, 10, dtype=dt) * 3
            tol = dict(rtol=1e-5, atol=2e-5) if dt == F32 else dict(rtol=2e-2, atol=3e-2)
            for dim in (1, 0, -1):
                xh = x.to(HPU).requires_grad_()
                xc = x.clone().requires_grad_()
                yh, yc = torch.log_softmax(xh, dim), torch.log_softmax(xc, dim)
                self.close(yh.detach(), yc.detach(), dt, **tol)
                g = rnd(33, 10, dtype=dt, seed=4)
                yh.backward(g.to(HPU))
                yc.backward(g)
                self.close(xh.grad, xc.grad, dt, **tol)
        self.assert_on_device()

    def test_nll_loss(self):
        for dt in (F32, BF16):
            logp = torch.log_softmax(rnd(20, 10, dtype=F32), 1).to(dt)
            y = torch.randint(0, 10, (20,), generator=torch.Generator().manual_seed(1))
            y[3] = -100
            for red in ("mean", "sum", "none"):
                for ign in (-100, 4):
                    lh = logp.to(HPU).requires_grad_()
                    lc = logp.clone().requires_grad_()
                    yc = y if ign == -100 else y.clamp(min=0)
                    yh = y.to(HPU) if ign == -100 else yc.to(HPU)
                    oh = torch.nn.functional.nll_loss(lh, yh, reduction=red, ignore_index=ign)
                    oc = torch.nn.functional.nll_loss(lc, yc, reduction=red, ignore_index=ign)
                    self.close(oh.detach(), oc.detach(), dt, **TOL[dt])
                    g = torch.ones_like(oc) if red != "none" else rnd(20, dtype=dt)
                    oh.backward(g.to(HPU))
                    oc.backward(g)
                    self.close(lh.grad, lc.grad, dt, **TOL[dt])
        self.assert_on_device()

    def test_cross_entropy(self):
        x = rnd(128, 10)
        y = torch.randint(0, 10, (128,), generator=torch.Generator().manual_seed(2))
        xh = x.to(HPU).requires_grad_()
        xc = x.clone().requires_grad_()
        lh = torch.nn.functional.cross_entropy(xh, y.to(HPU))
        lc = torch.nn.functional.cross_entropy(xc, y)
        self.close(lh.detach(), lc.detach())
        lh.backward()
        lc.backward()
        self.close(xh.grad, xc.grad)
        self.assert_on_device()

    def test_argmax(self):
        for dt in (F32, BF16):
            x = rnd(50, 10, dtype=dt)
            d = x.to(HPU)
            self.assertTrue(torch.equal(d.argmax(1).cpu(), x.argmax(1)))
            self.assertTrue(torch.equal(d.argmax(0).cpu(), x.argmax(0)))
            self.assertTrue(torch.equal(d.argmax(1, keepdim=True).cpu(), x.argmax(1, keepdim=True)))
            self.assertTrue(torch.equal(d.argmax().cpu(), x.argmax()))
        self.assert_on_device()


class TestMath(DeviceTest):
    def test_unary(self):
        for dt in (F32, BF16):
            x = rnd(9, 70, dtype=dt)
            pos = x.abs() + 0.25
            cases = [(torch.neg, x, 0), (torch.abs, x, 0), (torch.sign, x, 0), (torch.exp, x, 2e-6),
                     (torch.log, pos, 2e-6), (torch.sqrt, pos, 0), (torch.rsqrt, pos, 4e-7),
                     (torch.reciprocal, pos, 0)]
            for fn, arg, rtol in cases:
                tol = dict(rtol=rtol, atol=1e-7) if dt == F32 else {}
                self.close(fn(arg.to(HPU)), fn(arg), dt, what=f"{fn.__name__} {dt}", **tol)
                self.close(fn(arg.to(HPU).t()), fn(arg.t()), dt, what=f"{fn.__name__} {dt} strided", **tol)
            y = pos.to(HPU)
            y.sqrt_()
            self.close(y, pos.sqrt(), dt)
        self.assert_on_device()

    def test_activations_and_gradients(self):
        # tanh 2 ulp, sigmoid and GELU 4 ulp, gradients up to 8 ulp of their
        # operands (libhpu/kernels/README.md): within 2e-6 relative here.
        for dt in (F32, BF16):
            x = rnd(13, 90, dtype=dt) * 3
            g = rnd(13, 90, dtype=dt, seed=6)
            tol = dict(rtol=2e-6, atol=2e-6) if dt == F32 else {}
            for fn in (torch.tanh, torch.sigmoid, torch.nn.functional.gelu):
                xh = x.to(HPU).requires_grad_()
                xc = x.clone().requires_grad_()
                yh, yc = fn(xh), fn(xc)
                self.close(yh.detach(), yc.detach(), dt, what=f"{fn.__name__} {dt}", **tol)
                yh.backward(g.to(HPU))
                yc.backward(g)
                self.close(xh.grad, xc.grad, dt, what=f"{fn.__name__} gradient {dt}", **tol)
        self.assert_on_device()

    def test_clamp_where(self):
        for dt in (F32, BF16):
            x = rnd(9, 33, dtype=dt) * 2
            d = x.to(HPU)
            self.close(d.clamp(-0.5, 1.25), x.clamp(-0.5, 1.25), dt, rtol=0, atol=0)
            self.close(d.clamp(min=0), x.clamp(min=0), dt, rtol=0, atol=0)
            self.close(d.t().clamp(max=0.3), x.t().clamp(max=0.3), dt, rtol=0, atol=0)
            c = x > 0
            y = rnd(9, 33, dtype=dt, seed=8)
            self.close(torch.where(c.to(HPU), d, y.to(HPU)), torch.where(c, x, y), dt, rtol=0, atol=0)
            self.close(torch.where(c.to(HPU), d, y[0].to(HPU)), torch.where(c, x, y[0]), dt, rtol=0, atol=0)
        i = torch.arange(12, dtype=torch.int32).view(3, 4)
        ci = torch.tensor([True, False, True, False])
        self.assertTrue(torch.equal(torch.where(ci.to(HPU), i.to(HPU), i.to(HPU) * 2).cpu(), torch.where(ci, i, i * 2)))
        self.assert_on_device()

    def test_comparisons(self):
        ops = (torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge)
        for dt in (F32, BF16, torch.int32):
            a = (rnd(8, 9) * 3).round().to(dt)
            b = (rnd(8, 9, seed=4) * 3).round().to(dt)
            for op in ops:
                what = f"{op.__name__} {dt}"
                self.assertTrue(torch.equal(op(a.to(HPU), b.to(HPU)).cpu(), op(a, b)), what)
                self.assertTrue(torch.equal(op(a.to(HPU), b[0].to(HPU)).cpu(), op(a, b[0])), what + " broadcast")
                self.assertTrue(torch.equal(op(a.to(HPU), 1).cpu(), op(a, 1)), what + " scalar")
        # int64 equality compares both words: 1 and 1 + 2^32 differ.
        big = torch.tensor([1, 1 + (1 << 32), -1, 7, -(1 << 40)])
        other = torch.tensor([1, 1, -1, 8, -(1 << 40)])
        self.assertTrue(torch.equal((big.to(HPU) == other.to(HPU)).cpu(), big == other))
        self.assertTrue(torch.equal((big.to(HPU) != other.to(HPU)).cpu(), big != other))
        self.assertTrue(torch.equal((big.to(HPU) == 7).cpu(), big == 7))
        self.assert_on_device()

    def test_accuracy_idioms(self):
        out, y = rnd(40, 10), torch.randint(0, 10, (40,))
        pred = out.to(HPU).argmax(1)
        self.assertTrue(torch.equal((pred == y.to(HPU)).cpu(), out.argmax(1) == y))
        # sum of a bool tensor (an int64 result): on the device too
        self.assertEqual((pred == y.to(HPU)).sum().item(), (out.argmax(1) == y).sum().item())
        for dt in (F32, BF16):
            x = rnd(40, 10, dtype=dt)
            for fn in (torch.max, torch.min):
                for dim, keep in ((1, False), (0, False), (1, True)):
                    vh, ih = fn(x.to(HPU), dim, keepdim=keep)
                    vc, ic = fn(x, dim, keepdim=keep)
                    self.close(vh, vc, dt, rtol=0, atol=0)
                    self.assertTrue(torch.equal(ih.cpu(), ic), f"{fn.__name__} {dt} {dim}")
        self.assert_on_device()

    def test_random_fills(self):
        for dt in (F32, BF16):
            torch.manual_seed(3)
            u = torch.rand(200, 300, dtype=dt, device=HPU)
            n = torch.randn(200, 300, dtype=dt, device=HPU)
            torch.manual_seed(3)
            u2 = torch.rand(200, 300, dtype=dt, device=HPU)
            uc, nc = u.float().cpu(), n.float().cpu()
            self.assertTrue(torch.equal(u2.cpu(), u.cpu()), "manual_seed repeats a draw")
            self.assertTrue(bool((uc >= 0).all()) and bool((uc <= 1).all()))
            self.assertLess(abs(uc.mean().item() - 0.5), 0.01)
            self.assertLess(abs(nc.mean().item()), 0.01)
            self.assertLess(abs(nc.std().item() - 1), 0.01)
            w = torch.empty(50, 40, device=HPU).t()
            w.uniform_(-2, 3)  # strided
            self.assertTrue(bool((w.cpu() >= -2).all()) and bool((w.cpu() <= 3).all()))
        lin = torch.nn.Linear(300, 20, device=HPU)  # initialised on the device
        self.assertEqual(lin.weight.device.type, "hpu")
        self.assertLessEqual(lin.weight.abs().max().item(), 300 ** -0.5 + 1e-6)
        self.assert_on_device()


class TestGenerators(DeviceTest):
    """The HPUs' own generators (hpu_torch.random): seeded by
    torch.manual_seed, apart from the CPU's, with states that replay."""

    @staticmethod
    def draws(device=HPU):
        """A draw of each kind: rand, randn, dropout, on the host."""
        return [torch.rand(1000, device=device).cpu(), torch.randn(1000, device=device).cpu(),
                torch.nn.functional.dropout(torch.ones(1000, device=device), 0.5, training=True).cpu()]

    def assert_same(self, a, b, what):
        for kind, x, y in zip(("rand", "randn", "dropout"), a, b):
            self.assertTrue(torch.equal(x, y), f"{what}: {kind}")

    def test_manual_seed_repeats_rand_randn_dropout(self):
        torch.manual_seed(21)
        a = self.draws()
        torch.manual_seed(21)
        self.assert_same(self.draws(), a, "torch.manual_seed repeats")
        hpu.manual_seed(21)
        self.assert_same(self.draws(), a, "hpu.manual_seed repeats")
        self.assertEqual(hpu.initial_seed(), 21)
        torch.manual_seed(22)
        for kind, x, y in zip(("rand", "randn", "dropout"), self.draws(), a):
            self.assertFalse(torch.equal(x, y), f"another seed, the same {kind}")
        self.assertFalse(torch.equal(a[0], torch.rand(1000, device=HPU).cpu()), "two draws, the same numbers")
        self.assert_on_device()

    def test_hpu_draws_leave_the_cpu_generator(self):
        torch.manual_seed(5)
        want = torch.rand(8)
        torch.manual_seed(5)
        self.draws()
        torch.nn.Linear(64, 8, device=HPU)  # initialised on the device
        torch.randint(0, 16, (100,), device=HPU)
        torch.randint(0, 10, (100,), device=HPU)  # drawn by the CPU fallback
        torch.bernoulli(torch.full((100,), 0.5, device=HPU))  # the CPU fallback too
        for dtype in (torch.float16, torch.float64):  # no dropout kernel: on the host
            self.dropout(torch.ones(100, dtype=dtype, device=HPU))
        self.assertTrue(torch.equal(torch.rand(8), want), "HPU draws advanced the CPU's generator")

    @staticmethod
    def dropout(x):
        # F.dropout of float16 raises on the HPU as on the CPU (PyTorch 1.13
        # composes it from bernoulli_, which the CPU lacks for float16);
        # native_dropout, the op of the fused path, has a host path for it.
        if x.dtype == torch.float16:
            return torch.native_dropout(x, 0.5, True)[0]
        return torch.nn.functional.dropout(x, 0.5, training=True)

    def test_dropout_without_a_kernel_follows_the_hpu_generator(self):
        for dtype in (torch.float16, torch.float64):
            x = torch.ones(1000, dtype=dtype, device=HPU)
            torch.manual_seed(9)
            a = self.dropout(x).cpu()
            hpu.manual_seed(9)
            torch.random.default_generator.manual_seed(10)  # another CPU seed: no effect
            self.assertTrue(torch.equal(self.dropout(x).cpu(), a), dtype)
            self.assertEqual(a.dtype, dtype)
            self.assertEqual(sorted(a.double().unique().tolist()), [0.0, 2.0], dtype)
            self.assertLess(abs((a != 0).double().mean().item() - 0.5), 0.1, dtype)

    def test_fallback_draws_follow_the_hpu_generator(self):
        p = torch.full((1000,), 0.5, device=HPU)
        torch.manual_seed(6)
        a = torch.bernoulli(p).cpu()
        hpu.manual_seed(6)
        torch.random.default_generator.manual_seed(7)  # another CPU seed: no effect
        self.assertTrue(torch.equal(torch.bernoulli(p).cpu(), a), "bernoulli repeats with the HPU's seed")
        self.assertTrue(any(k.startswith("aten::bernoulli") for k in core.fallback_counts()), core.fallback_counts())

    def test_fallback_cpu_generators_use_the_whole_key(self):
        # A fallback draw's CPU generator is made from a 64-bit key: keys
        # that differ only in their high 32 bits (which at::mt19937(seed)
        # ignores) or in one low bit give unrelated streams.
        make = torch.ops.hpu_torch.cpu_generator_from_key
        key = 0x0123456789ABCDEF
        draws = {}
        for k in (key, key ^ (1 << 32), key ^ (1 << 62), key ^ 1, key & 0xFFFFFFFF):
            draws[k] = torch.randint(0, 1 << 62, (8,), generator=make(k)).tolist()
        self.assertEqual(len({tuple(d) for d in draws.values()}), len(draws), draws)
        self.assertEqual(torch.randint(0, 1 << 62, (8,), generator=make(key)).tolist(), draws[key], "not repeatable")
        self.assertEqual(make(key).initial_seed(), key)

    def test_rng_state_round_trip(self):
        torch.manual_seed(7)
        torch.rand(10, device=HPU)
        state = hpu.get_rng_state()
        self.assertEqual((state.dtype, state.device.type, state.numel()), (torch.uint8, "cpu", 24))
        a = self.draws()
        hpu.set_rng_state(state)
        self.assert_same(self.draws(), a, "set_rng_state replays")
        hpu.set_rng_state(state, "hpu:0")
        self.assert_same(self.draws(), a, "set_rng_state(hpu:0) replays")
        hpu.set_rng_state_all([state] * hpu.device_count())
        self.assertEqual(len(hpu.get_rng_state_all()), hpu.device_count())
        self.assert_same(self.draws(), a, "set_rng_state_all replays")
        self.assertTrue(torch.equal(hpu.default_generators[0].get_state(), hpu.get_rng_state()))
        self.assertEqual(hpu.default_generators[0].device, HPU)

    def test_explicit_generators(self):
        g = hpu.Generator()
        self.assertIsInstance(g, torch.Generator)
        self.assertEqual(g.device, HPU)
        g.manual_seed(3)
        x = torch.rand(100, device=HPU, generator=g).cpu()
        s = g.get_state()
        default = hpu.get_rng_state()
        y = torch.randn(100, device=HPU, generator=g).cpu()
        self.assertTrue(torch.equal(hpu.get_rng_state(), default), "an explicit generator moved the default one")
        g.set_state(s)
        self.assertTrue(torch.equal(torch.randn(100, device=HPU, generator=g).cpu(), y), "its state replays")
        g.manual_seed(3)
        self.assertTrue(torch.equal(torch.rand(100, device=HPU, generator=g).cpu(), x), "its seed repeats")
        hpu.manual_seed(3)
        self.assertTrue(torch.equal(torch.rand(100, device=HPU).cpu(), x), "the same seed as the default one")
        # A CPU generator: each draw's seed is its next 64 bits, as before.
        c1, c2 = torch.Generator().manual_seed(4), torch.Generator().manual_seed(4)
        u = torch.rand(100, device=HPU, generator=c1).cpu()
        self.assertTrue(torch.equal(torch.rand(100, device=HPU, generator=c2).cpu(), u))
        self.assertFalse(torch.equal(c1.get_state(), torch.Generator().manual_seed(4).get_state()), "not advanced")
        with self.assertRaisesRegex(ValueError, "an HPU device"):
            hpu.Generator("cpu")
        self.assert_on_device()

    def test_second_hpu_has_its_own_state(self):
        if hpu.device_count() < 2:
            self.skipTest("one HPU")
        torch.manual_seed(9)
        s1 = hpu.get_rng_state("hpu:1")
        a0 = torch.rand(100, device="hpu:0").cpu()
        self.assertTrue(torch.equal(hpu.get_rng_state("hpu:1"), s1), "hpu:0's draw moved hpu:1's state")
        self.assertTrue(torch.equal(torch.rand(100, device="hpu:1").cpu(), a0), "the same seed on hpu:1")
        self.assertFalse(torch.equal(hpu.get_rng_state("hpu:1"), s1))
        hpu.manual_seed(1)  # the current HPU's only
        self.assertEqual(hpu.default_generators[0].initial_seed(), 1)
        self.assertEqual(hpu.default_generators[1].initial_seed(), 9)
        self.assertEqual(hpu.default_generators[1].device, torch.device("hpu:1"))
        hpu.manual_seed_all(2)
        self.assertEqual([g.initial_seed() for g in hpu.default_generators], [2] * hpu.device_count())

    def test_bad_state_raises(self):
        good = hpu.get_rng_state()
        with self.assertRaisesRegex(RuntimeError, "24 bytes"):
            hpu.set_rng_state(torch.zeros(16, dtype=torch.uint8))
        with self.assertRaisesRegex(RuntimeError, "24 bytes"):
            hpu.set_rng_state(torch.get_rng_state())  # the CPU's
        with self.assertRaisesRegex(RuntimeError, "not an HPU generator state"):
            hpu.set_rng_state(torch.zeros(24, dtype=torch.uint8))
        newer = good.clone()
        newer[4] = 2
        with self.assertRaisesRegex(RuntimeError, "version 2"):
            hpu.set_rng_state(newer)
        with self.assertRaises(TypeError):
            hpu.set_rng_state(torch.zeros(24))
        self.assertTrue(torch.equal(hpu.get_rng_state(), good), "a refused state changed the generator")

    def test_torch_seeding_wrappers(self):
        self.assertIs(torch.manual_seed(3), torch.default_generator, "torch.manual_seed's result")
        self.assertIs(torch.random.manual_seed, torch.manual_seed)
        self.assertEqual(torch.manual_seed.__name__, "manual_seed")
        self.assertEqual(hpu.initial_seed(), 3)
        s = torch.seed()
        self.assertEqual((torch.initial_seed(), hpu.initial_seed()), (s, s))
        hpu.seed_all()
        t = hpu.initial_seed()
        self.assertEqual([g.initial_seed() for g in hpu.default_generators], [t] * hpu.device_count())
        hpu.seed()
        self.assertNotEqual(hpu.initial_seed(), t)
        with self.assertRaises(RuntimeError):
            torch.Generator(device="hpu")  # refused by PyTorch 1.13: hpu.Generator() instead

    def test_torch_seeding_is_wrapped_once(self):
        from hpu_torch import random as hpu_random
        wrapper = torch.manual_seed
        orig = wrapper._hpu_torch_orig
        self.addCleanup(setattr, torch, "manual_seed", wrapper)
        self.addCleanup(setattr, torch.random, "manual_seed", wrapper)
        self.addCleanup(setattr, torch, "seed", torch.seed)
        self.addCleanup(setattr, torch.random, "seed", torch.seed)
        hpu_random._patch_torch_seeding()  # as importlib.reload(hpu_torch) does
        self.assertIs(torch.manual_seed._hpu_torch_orig, orig)
        self.assertIs(torch.manual_seed.__wrapped__, orig, "the wrapper was wrapped")
        self.assertFalse(hasattr(torch.seed.__wrapped__, "_hpu_torch_orig"), "the wrapper was wrapped")

    def test_distributions(self):
        n = 1 << 16
        torch.manual_seed(8)
        u = torch.rand(n, device=HPU).cpu()
        u2 = torch.rand(n, device=HPU).cpu()
        z = torch.randn(n, device=HPU).cpu()
        keep = torch.nn.functional.dropout(torch.ones(n, device=HPU), 0.3, training=True).cpu() != 0
        counts = torch.histc(u, bins=10, min=0, max=1)
        self.assertLess((counts - n / 10).abs().max().item(), 0.006 * n, f"uniform deciles {counts.tolist()}")
        self.assertLess(abs(torch.corrcoef(torch.stack([u, u2]))[0, 1].item()), 0.02, "consecutive draws correlate")
        self.assertLess(abs((z.abs() < 1).float().mean().item() - 0.682689), 0.01, "normal: P(|z| < 1)")
        self.assertLess(abs(keep.float().mean().item() - 0.7), 0.01, "dropout(0.3) keeps 70%")
        self.assert_on_device()


class TestMatmul(DeviceTest):
    def test_mm_addmm(self):
        # The MME sums BF16 products in FP32 and rounds once; PyTorch 1.13's
        # CPU BF16 GEMM rounds its running sums to BF16 (errors of several
        # ulps for k = 70), so BF16 results are checked against the FP32
        # product of the same BF16 inputs, rounded to BF16.
        cases = {
            "mm": lambda a, b, c, v: a @ b,
            "mm, A transposed": lambda a, b, c, v: a.t().contiguous().t() @ b,
            "mm, B transposed": lambda a, b, c, v: a @ b.t().contiguous().t(),
            "mm of transposes": lambda a, b, c, v: (b.t() @ a.t()),
            "mm, strided (a dense copy)": lambda a, b, c, v: a[:, ::2] @ b[::2],
            "addmm, bias": lambda a, b, c, v: torch.addmm(v, a, b),
            "addmm, beta alpha": lambda a, b, c, v: torch.addmm(c, a, b, beta=0.5, alpha=2),
            "addmm, beta 0": lambda a, b, c, v: torch.addmm(v, a, b, beta=0),
            "addmm_": lambda a, b, c, v: c.clone().addmm_(a, b),
            "mm, no rows": lambda a, b, c, v: a[:0] @ b,
            "mm out=": lambda a, b, c, v: torch.mm(a, b, out=torch.empty(0, dtype=a.dtype, device=a.device)),
        }
        for dt in (F32, BF16):
            tol = dict(rtol=1e-4, atol=1e-4) if dt == F32 else dict(rtol=1e-2, atol=2e-2)
            args = [rnd(37, 70, dtype=dt), rnd(70, 19, dtype=dt), rnd(37, 19, dtype=dt), rnd(19, dtype=dt)]
            dev = [t.to(HPU) for t in args]
            for what, fn in cases.items():
                want = fn(*args) if dt == F32 else fn(*[t.float() for t in args]).to(BF16)
                self.close(fn(*dev), want, dt, what=f"{what} {dt}", **tol)
        self.assert_on_device()

    def test_linear_forward_backward(self):
        torch.manual_seed(0)
        lin = torch.nn.Linear(30, 7)
        x = rnd(16, 30)
        lh = torch.nn.Linear(30, 7).to(HPU)
        lh.load_state_dict(lin.state_dict())
        xh = x.to(HPU).requires_grad_()
        xc = x.clone().requires_grad_()
        lh(xh).sum().backward()
        lin(xc).sum().backward()
        self.close(xh.grad, xc.grad, rtol=1e-4, atol=1e-4)
        self.close(lh.weight.grad, lin.weight.grad, rtol=1e-4, atol=1e-4)
        self.close(lh.bias.grad, lin.bias.grad, rtol=1e-4, atol=1e-4)
        self.assert_on_device()


def batches(steps, seed=5):
    g = torch.Generator().manual_seed(seed)
    return [(torch.rand(128, 1, 28, 28, generator=g), torch.randint(0, 10, (128,), generator=g))
            for _ in range(steps)]


def train(model, opt_fn, device, data, mark=False, before_step=None):
    model = model.to(device)
    opt = opt_fn(model.parameters())
    loss_fn = torch.nn.CrossEntropyLoss()
    losses, times = [], []
    for i, (x, y) in enumerate(data):
        if before_step:
            before_step(i)
        t0 = time.monotonic()
        opt.zero_grad()
        loss = loss_fn(model(x.to(device)), y.to(device))
        loss.backward()
        opt.step()
        if mark:
            core.mark_step()
        losses.append(loss.item())
        times.append(time.monotonic() - t0)
    return losses, times


def seed_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(28 * 28, 10))


def mlp(p=0.0):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Dropout(p),
                               torch.nn.Linear(128, 10))


class TestTraining(DeviceTest):
    """Eager training steps against the CPU: the losses of every step agree
    within 1e-5 relative (the seed's model: SGD; the MLP: AdamW)."""

    def compare(self, make, opt_fn, steps=4, allowed=()):
        data = batches(steps)
        lc, tc = train(make(), opt_fn, "cpu", data)
        lh, th = train(make(), opt_fn, HPU, data, mark=True)
        print(f"\n  cpu losses {lc}\n  hpu losses {lh}\n  step times (s): cpu {[round(t, 3) for t in tc]}, "
              f"hpu {[round(t, 3) for t in th]}", file=sys.stderr)
        torch.testing.assert_close(torch.tensor(lh), torch.tensor(lc), rtol=1e-5, atol=1e-5)
        self.assert_on_device(allowed)
        return lh

    def test_seed_model_sgd(self):
        self.compare(seed_model, lambda p: torch.optim.SGD(p, lr=0.01))

    def test_mlp_adamw(self):
        self.compare(mlp, lambda p: torch.optim.AdamW(p, lr=1e-3))

    def test_mlp_with_dropout_trains(self):
        # Device dropout (nn.Dropout's fused path) draws other numbers than
        # the CPU's, so the losses differ: they must fall on one batch
        # repeated, as on the CPU, with no op on the CPU.
        data = batches(1) * 8
        lh, _ = train(mlp(0.2), lambda p: torch.optim.SGD(p, lr=0.1), HPU, data)
        lc, _ = train(mlp(0.2), lambda p: torch.optim.SGD(p, lr=0.1), "cpu", data)
        print(f"\n  with dropout: cpu losses {lc}\n  hpu losses {lh}", file=sys.stderr)
        self.assertLess(lh[-1], lh[0] - 0.05, lh)
        self.assertLess(abs(lh[-1] - lc[-1]), 0.1, (lh, lc))
        self.assert_on_device()

    def test_bf16_seed_model(self):
        data = batches(3)
        lc, _ = train(seed_model().to(BF16), lambda p: torch.optim.SGD(p, lr=0.01), "cpu",
                      [(x.to(BF16), y) for x, y in data])
        lh, _ = train(seed_model().to(BF16), lambda p: torch.optim.SGD(p, lr=0.01), HPU,
                      [(x.to(BF16), y) for x, y in data])
        torch.testing.assert_close(torch.tensor(lh), torch.tensor(lc), rtol=2e-2, atol=2e-2)
        self.assert_on_device()


class LazyModeTest(DeviceTest):
    """A DeviceTest that switches lazy mode: the mode is restored after each test."""

    def setUp(self):
        super().setUp()
        self.was_lazy = core.is_lazy()

    def tearDown(self):
        core.set_lazy(self.was_lazy)
        super().tearDown()


class TestLazy(LazyModeTest):
    """Lazy mode (PT_HPU_LAZY_MODE=1, here switched with core.set_lazy):
    the same kernels in the same order as eager mode, so bit-identical
    results; one cached graph per steady-state step."""

    def run_both(self, make, opt_fn, steps):
        """Trains in eager then lazy mode: (losses, parameters) of each."""
        out = []
        data = batches(steps)
        for lazy in (False, True):
            core.set_lazy(lazy)
            model = make()
            losses, times = train(model, opt_fn, HPU, data, mark=True)
            out.append((losses, [p.detach().cpu() for p in model.parameters()], times))
        core.set_lazy(False)
        print(f"\n  eager losses {out[0][0]}\n  lazy losses  {out[1][0]}\n  step times (s): eager "
              f"{[round(t, 3) for t in out[0][2]]}, lazy {[round(t, 3) for t in out[1][2]]}", file=sys.stderr)
        return out

    def assert_identical(self, eager, lazy):
        self.assertEqual(lazy[0], eager[0], "losses differ")
        for pe, pl in zip(eager[1], lazy[1]):
            self.assertTrue(torch.equal(pe, pl), "parameters differ")

    def test_env_sets_the_mode(self):
        # A new process reads PT_HPU_LAZY_MODE when hpu_torch loads: lazy,
        # the ops wait for item(), which runs them as one graph launch.
        code = ("import torch, hpu_torch\nfrom hpu_torch import core\n"
                "x = torch.ones(4, device='hpu') * 2\ns0 = core.lazy_stats(0)['launches']\nv = x.sum().item()\n"
                "print(core.is_lazy(), core.lazy_stats(0)['launches'] - s0, v)")
        self.assertEqual(child({"PT_HPU_LAZY_MODE": "1"}, code), "True 1 8.0")
        self.assertEqual(child({"PT_HPU_LAZY_MODE": "0"}, code), "False 0 8.0")

    def test_seed_model_sgd_identical_to_eager(self):
        eager, lazy = self.run_both(seed_model, lambda p: torch.optim.SGD(p, lr=0.01), 4)
        self.assert_identical(eager, lazy)
        self.assert_on_device()

    def test_mlp_dropout_adamw_identical_to_eager(self):
        # The same torch.manual_seed: the same dropout keys in the same order.
        eager, lazy = self.run_both(lambda: mlp(0.2), lambda p: torch.optim.AdamW(p, lr=1e-3), 3)
        self.assert_identical(eager, lazy)

    def steady_state(self, model, opt_fn, steps, warm):
        """Trains model for steps lazy steps: asserts that each step from
        warm on is one launch of a cached graph. Returns the losses."""
        core.set_lazy(True)
        seen = {}
        losses, _ = train(model, opt_fn, HPU, batches(steps), mark=True,
                          before_step=lambda i: seen.setdefault("s0", core.lazy_stats(0)) if i == warm else None)
        s0, s1 = seen["s0"], core.lazy_stats(0)
        print(f"\n  lazy stats before steps {warm}-{steps - 1} {s0}\n  after {s1}", file=sys.stderr)
        n = steps - warm
        self.assertEqual(s1["launches"] - s0["launches"], n, "one graph launch per step")
        self.assertEqual(s1["cache_hits"] - s0["cache_hits"], n, "every steady step is a cache hit")
        self.assertEqual(s1["graphs_built"], s0["graphs_built"], "no new graph")
        self.assertEqual(s1["failures"], s0["failures"])
        return losses

    def test_steady_state_one_launch_per_step(self):
        self.steady_state(seed_model(), lambda p: torch.optim.SGD(p, lr=0.01), 6, 2)

    def test_mlp_adamw_steady_state_hits_the_cache(self):
        # torch.optim.AdamW passes Python floats that change every step
        # (sqrt(1 - beta2^t)): each reaches the device as a scalar uploaded
        # from a scalar pool, so its value is not in the graph's key; after
        # the first steps (the two pools, and fusion's plan, which
        # alternates between two orders here) every step is a cache hit,
        # with the results of eager mode.
        steps, warm = 10, 5
        adamw = lambda p: torch.optim.AdamW(p, lr=1e-3)  # noqa: E731
        lazy_model, eager_model = mlp(), mlp()
        lazy = self.steady_state(lazy_model, adamw, steps, warm)
        core.set_lazy(False)
        eager, _ = train(eager_model, adamw, HPU, batches(steps), mark=True)
        self.assert_identical((eager, [p.detach().cpu() for p in eager_model.parameters()]),
                              (lazy, [p.detach().cpu() for p in lazy_model.parameters()]))
        self.assert_on_device()

    def test_mark_step_with_nothing_recorded(self):
        for lazy in (True, False):
            core.set_lazy(lazy)
            hpu.synchronize()
            s0 = core.lazy_stats(0)
            core.mark_step()
            core.mark_step(HPU)
            hpu.synchronize()
            self.assertEqual(core.lazy_stats(0)["launches"], s0["launches"])

    def test_item_flushes(self):
        core.set_lazy(True)
        x = torch.arange(8.0).to(HPU)
        y = x * 2 + 1
        s0 = core.lazy_stats(0)
        self.assertEqual(y.sum().item(), 64.0)  # recorded, then run by item()
        s1 = core.lazy_stats(0)
        self.assertEqual(s1["launches"], s0["launches"] + 1)
        self.assertGreater(s1["recorded"], s0["recorded"])
        self.assertIn("15.", str(y))  # printing reads the values
        z = (y - 1).cpu()
        self.assertTrue(torch.equal(z, torch.arange(8.0) * 2))

    def test_fault_is_an_error_and_the_next_step_works(self):
        core.set_lazy(True)
        x = rnd(4, 10).to(HPU)
        y = torch.tensor([1, 2, 13, 3]).to(HPU)
        core.mark_step()
        hpu.synchronize()
        f0 = core.lazy_stats(0)["failures"]
        with self.assertRaisesRegex(RuntimeError, "lazy step .*nll_loss"):
            torch.nn.functional.nll_loss(x, y).item()
        self.assertEqual(core.lazy_stats(0)["failures"], f0 + 1)
        good = torch.tensor([1, 2, 3, 3]).to(HPU)
        got = torch.nn.functional.nll_loss(x, good).item()
        want = torch.nn.functional.nll_loss(x.cpu(), good.cpu()).item()
        self.assertAlmostEqual(got, want, places=5)
        self.assertTrue(torch.equal((torch.ones(4, device=HPU) + 1).cpu(), torch.full((4,), 2.0)))

    def test_dropout_masks_differ_between_steps_and_equal_eager(self):
        x = torch.ones(4096).to(HPU)
        masks = {}
        for lazy in (False, True):
            core.set_lazy(lazy)
            torch.manual_seed(3)
            hits = core.lazy_stats(0)["cache_hits"]
            got = []
            for _ in range(3):  # each step's result read (and freed) before the next
                got.append(torch.nn.functional.dropout(x, 0.5, training=True).cpu())
            if lazy:  # the 2nd and 3rd steps replay the first one's graph with new seeds
                self.assertEqual(core.lazy_stats(0)["cache_hits"] - hits, 2)
            masks[lazy] = got
        lz = masks[True]
        self.assertFalse(torch.equal(lz[0], lz[1]))
        self.assertFalse(torch.equal(lz[1], lz[2]))
        for a, b in zip(masks[False], lz):
            self.assertTrue(torch.equal(a, b), "lazy and eager masks differ")


class TestFallback(DeviceTest):
    def test_counted_and_correct(self):
        x = rnd(5, 6)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = torch.atan(x.to(HPU))
            r2 = torch.atan(x.to(HPU))
        self.assertEqual(r.device.type, "hpu")
        self.assertTrue(torch.equal(r.cpu(), torch.atan(x)))
        self.assertTrue(torch.equal(r2.cpu(), torch.atan(x)))
        self.assertEqual(core.fallback_counts().get("aten::atan.out"), 2)
        # PT_HPU_LOG_FALLBACK=1: one warning for the op, the first time only.
        self.assertEqual(sum("aten::atan" in str(m.message) for m in w), 1)
        core.reset_fallback_counts()
        self.assertEqual(core.fallback_counts(), {})

    def test_first_use_warns_once(self):
        x = rnd(4, 4)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            torch.cos(x.to(HPU))
            torch.cos(x.to(HPU))
        msgs = [str(m.message) for m in w if "aten::cos" in str(m.message)]
        self.assertEqual(len(msgs), 1, msgs)

    def test_mutated_inputs_copied_back(self):
        x = rnd(3, 7)
        d = x.to(HPU)
        d.sin_()  # in place, no kernel: the CPU result lands in the HPU tensor
        self.assertTrue(torch.equal(d.cpu(), x.sin()))
        self.assertEqual(core.fallback_counts().get("aten::sin.out"), 1)
        v = x.to(HPU)[:, 2:5]
        v.sin_()  # a view of a larger tensor
        self.assertTrue(torch.equal(v.cpu(), x[:, 2:5].sin()))

    def test_unsupported_arguments_fall_back(self):
        # Registered ops hand what their kernels do not cover to the CPU.
        a = torch.randint(1, 50, (4, 5))
        self.assertTrue(torch.equal((a.to(HPU) // 3).cpu(), a // 3))  # floor division of int64
        x = rnd(4, 5)
        self.assertTrue(torch.equal(torch.div(x.to(HPU), 2, rounding_mode="floor").cpu(),
                                    torch.div(x, 2, rounding_mode="floor")))
        self.assertGreater(sum(core.fallback_counts().values()), 0)


class TestAllocator(DeviceTest):
    def test_steady_state_and_release(self):
        hpu.synchronize()
        base = hpu.memory_allocated()
        data = batches(2)
        model = mlp().to(HPU)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        seen = []
        for i in range(4):
            x, y = data[i % 2]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x.to(HPU)), y.to(HPU)).backward()
            opt.step()
            hpu.synchronize()
            st = hpu.memory_stats()
            seen.append((hpu.memory_allocated(), st["num_slab_allocs"]))
        # No growth after the first step: the same bytes held, no new slab.
        self.assertEqual(len({a for a, _ in seen[1:]}), 1, seen)
        self.assertEqual(len({s for _, s in seen[1:]}), 1, seen)
        st = hpu.memory_stats()
        self.assertGreater(st["num_cache_hits"], 0)
        self.assertGreaterEqual(hpu.max_memory_allocated(), seen[-1][0])
        del model, opt, x, y
        hpu.synchronize()
        self.assertEqual(hpu.memory_allocated(), base)
        hpu.empty_cache()
        if base == 0:
            self.assertEqual(hpu.memory_reserved(), 0)
            self.assertEqual(hpu.memory_stats()["slabs"], 0)
        hpu.reset_peak_memory_stats()
        self.assertEqual(hpu.max_memory_allocated(), hpu.memory_allocated())

    def test_no_buffer_object_per_tensor(self):
        t = torch.empty(1000, device=HPU)
        del t
        before = hpu.memory_stats()["num_slab_allocs"]
        ts = [torch.empty(1000 + i, device=HPU) for i in range(200)]
        self.assertEqual(hpu.memory_stats()["num_slab_allocs"] - before, 0)
        del ts


class TestErrors(DeviceTest):
    def test_hbm_exhausted(self):
        with self.assertRaisesRegex(RuntimeError, "out of memory \\(HBM exhausted\\): tried to allocate 4398046511104 "
                                    "bytes .* bytes of HBM free of"):
            torch.empty(1 << 40, device=HPU)
        self.assertTrue(torch.equal((torch.ones(4, device=HPU) * 3).cpu(), torch.full((4,), 3.0)))

    def test_failing_job_is_an_error(self):
        # A label outside [0, C): the nll_loss kernel asserts on the device;
        # the failed job becomes a RuntimeError naming it when it is read.
        x = rnd(4, 10).to(HPU)
        y = torch.tensor([1, 2, 13, 3]).to(HPU)
        with self.assertRaisesRegex(RuntimeError, "nll_loss"):
            torch.nn.functional.nll_loss(x, y).item()
        # The device goes on working.
        self.assertTrue(torch.equal((torch.ones(4, device=HPU) + 1).cpu(), torch.full((4,), 2.0)))

    def test_hard_reset_then_fresh_context(self):
        accel = "/sys/class/accel/accel0/device"
        attr = os.path.join(os.path.realpath(accel), "hpu_reset")
        if os.geteuid() != 0 or not os.path.exists(attr):
            self.skipTest("needs root and the driver's reset attribute")
        x = torch.ones(8, device=HPU)
        hpu.synchronize()
        with open(attr, "w") as f:
            f.write("hard\n")
        # The first use after the reset fails, naming the reset; then the
        # device works again with a fresh context: new tensors, training
        # as on the CPU.
        with self.assertRaisesRegex(RuntimeError, "HPU 0: .*the device was reset") as cm:
            for _ in range(3):
                (x + 1).cpu()
        print(f"\n  {str(cm.exception).splitlines()[0][:300]}", file=sys.stderr)
        y = torch.arange(6.0).to(HPU) * 2
        self.assertTrue(torch.equal(y.cpu(), torch.arange(6.0) * 2))
        data = batches(2)
        lh, _ = train(seed_model(), lambda p: torch.optim.SGD(p, lr=0.01), HPU, data)
        lc, _ = train(seed_model(), lambda p: torch.optim.SGD(p, lr=0.01), "cpu", data)
        torch.testing.assert_close(torch.tensor(lh), torch.tensor(lc), rtol=1e-5, atol=1e-5)
        del x


class TestReviewFindings(DeviceTest):
    """Defects an independent review found, each fixed."""

    def test_compare_with_python_float_promotes(self):
        # int < 2.5 compares in float, not with 2.
        for dt in (torch.int32, torch.int64):
            a = torch.arange(-3, 6).to(dt)
            for op in (torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge):
                for v in (2.5, -1.5, 2):
                    what = f"{op.__name__} {dt} {v}"
                    self.assertTrue(torch.equal(op(a.to(HPU), v).cpu(), op(a, v)), what)

    def test_reduce_over_a_size1_dim_after_a_permute(self):
        x = rnd(5, 4, 1)
        for t in (x.permute(1, 2, 0), x.permute(2, 1, 0), rnd(3, 1, 4).permute(2, 1, 0)):
            d = t.to(HPU)
            self.close(d.sum(), t.sum(), what="sum")
            self.close(d.max(), t.max(), what="max")
            self.close(d.min(), t.min(), what="min")
        self.assert_on_device()

    def test_where_on_the_device(self):
        c = rnd(6, 7) > 0
        a, b = rnd(6, 7, seed=1), rnd(7, seed=2)
        got = torch.where(c.to(HPU), a.to(HPU), b.to(HPU))
        self.close(got, torch.where(c, a, b), what="where")
        self.assert_on_device()

    def test_complex128_fill_and_copy(self):
        z = torch.zeros(5, 3, dtype=torch.complex128, device=HPU)
        self.assertTrue(torch.equal(z.cpu(), torch.zeros(5, 3, dtype=torch.complex128)))
        z.fill_(1 + 2j)
        self.assertTrue(torch.equal(z.cpu(), torch.full((5, 3), 1 + 2j, dtype=torch.complex128)))
        x = torch.randn(4, 3, dtype=torch.complex128)
        self.assertTrue(torch.equal(x.to(HPU).t().contiguous().cpu(), x.t().contiguous()))
        y = torch.zeros(3, 4, dtype=torch.complex128, device=HPU)
        y[:, 1:3].zero_()
        self.assertTrue(torch.equal(y.cpu(), torch.zeros(3, 4, dtype=torch.complex128)))

    def test_tensors_on_two_hpus_are_an_error(self):
        if hpu.device_count() < 2:
            self.skipTest("one HPU")
        a, b = rnd(4, 4).to("hpu:0"), rnd(4, 4, seed=1).to("hpu:1")
        same = "Expected all tensors to be on the same device"
        with self.assertRaisesRegex(RuntimeError, same):
            a + b
        with self.assertRaisesRegex(RuntimeError, same):
            torch.addmm(torch.zeros(4, device="hpu:1"), a, a)
        with self.assertRaisesRegex(RuntimeError, same):
            torch.lt(a, b)

    def test_fallback_of_tensor_lists(self):
        # Tensor(a!)[] written back; Tensor?[] moved to the host.
        x, y = rnd(3, 4), rnd(5, seed=1)
        a, b = x.to(HPU), y.to(HPU)
        torch._foreach_add_([a, b], 1.0)
        self.assertTrue(torch.equal(a.cpu(), x + 1))
        self.assertTrue(torch.equal(b.cpu(), y + 1))
        idx = torch.tensor([2, 0, 2])
        got = a[idx.to(HPU)]
        self.assertEqual(got.device.type, "hpu")
        self.assertTrue(torch.equal(got.cpu(), (x + 1)[idx]))
        a[idx.to(HPU)] = 0.0
        want = x + 1
        want[idx] = 0.0
        self.assertTrue(torch.equal(a.cpu(), want))
        # SGD with foreach=True updates the parameters.
        w = torch.nn.Parameter(rnd(4).to(HPU))
        w0 = w.detach().cpu()
        opt = torch.optim.SGD([w], lr=0.5, foreach=True)
        w.sum().backward()
        opt.step()
        self.assertTrue(torch.allclose(w.detach().cpu(), w0 - 0.5))

    def test_tensor_from_before_a_reset_is_refused(self):
        accel = "/sys/class/accel/accel0/device"
        attr = os.path.join(os.path.realpath(accel), "hpu_reset")
        if os.geteuid() != 0 or not os.path.exists(attr):
            self.skipTest("needs root and the driver's reset attribute")
        x = torch.ones(1 << 12, device=HPU)
        hpu.synchronize()
        with open(attr, "w") as f:
            f.write("hard\n")
        for _ in range(3):  # the loss is reported, the context reopened
            try:
                torch.zeros(4, device=HPU).cpu()
                break
            except RuntimeError:
                pass
        # New tensors may take x's old addresses: x itself is refused.
        y = torch.full((1 << 12,), 5.0, device=HPU)
        for use in (lambda: x + 1, lambda: x.cpu(), lambda: y.copy_(x), lambda: x.fill_(2.0)):
            with self.assertRaisesRegex(RuntimeError, "allocated before the reset of HPU 0"):
                use()
        self.assertTrue(torch.equal(y.cpu(), torch.full((1 << 12,), 5.0)))
        del x

    def test_empty_log_softmax_and_0dim_argmax(self):
        for shape, dim in (((3, 0), 1), ((0, 4), 1), ((2, 0, 3), 1)):
            x = torch.zeros(shape)
            got = torch.log_softmax(x.to(HPU), dim)
            self.assertEqual(got.shape, x.shape)
        s = torch.tensor(2.5)
        self.assertEqual(torch.argmax(s.to(HPU)).cpu(), torch.argmax(s))
        self.assertEqual(torch.argmax(s.to(HPU), 0).cpu(), torch.argmax(s, 0))

    def test_out_of_a_type_the_result_cannot_be_cast_to(self):
        a, b = rnd(4).to(HPU), rnd(4, seed=1).to(HPU)
        for op in (torch.add, torch.sub, torch.mul):
            out = torch.empty(4, dtype=torch.int32, device=HPU)
            with self.assertRaisesRegex(RuntimeError, "can't be cast"):
                op(a, b, out=out)
        with self.assertRaisesRegex(RuntimeError, "can't be cast"):
            torch.arange(4, dtype=torch.int32).to(HPU).add_(1.5)


class TestReviewOfIssue12(DeviceTest):
    """Defects the review of issue 12 found, each fixed: each raises as the
    CPU does, or gives the CPU's result."""

    def assert_both_raise(self, regex, cpu_fn, hpu_fn):
        with self.assertRaisesRegex(RuntimeError, regex):
            cpu_fn()
        with self.assertRaisesRegex(RuntimeError, regex):
            hpu_fn()

    def test_cat_out_of_a_0dim_tensor_raises(self):
        for pos in (0, 1):
            def run(dev):
                a, b = torch.tensor(1.0, device=dev), torch.ones(1, device=dev)
                torch.cat([a, b] if pos == 0 else [b, a], out=torch.empty(2, device=dev))
            self.assert_both_raise(rf"zero-dimensional tensor \(at position {pos}\) cannot be concatenated",
                                   lambda: run("cpu"), lambda: run(HPU))
        o = torch.empty(3, device=HPU)
        torch.cat([torch.ones(1, device=HPU), torch.arange(2.0).to(HPU)], out=o)
        self.assertTrue(torch.equal(o.cpu(), torch.tensor([1.0, 0.0, 1.0])))

    def test_copy_checks_that_the_source_broadcasts(self):
        cases = (((2, 3), (2,), "must match the size of tensor b"),
                 ((1, 3), (2, 3), r"output with shape \[1, 3\] doesn't match the broadcast shape \[2, 3\]"),
                 ((3,), (1, 3), r"output with shape \[3\] doesn't match the broadcast shape \[1, 3\]"))
        for dshape, sshape, regex in cases:
            for dtype in (F32, BF16):  # the DMA or copy kernel, and a cast
                src = torch.arange(float(torch.Size(sshape).numel())).reshape(sshape)
                d = torch.full(dshape, 7.0, device=HPU)
                self.assert_both_raise(regex, lambda: torch.zeros(dshape).copy_(src.to(dtype)),
                                       lambda: d.copy_(src.to(dtype).to(HPU)))
                self.assertTrue(torch.equal(d.cpu(), torch.full(dshape, 7.0)), "the destination changed")
        # What does broadcast is copied as on the CPU.
        for dshape, sshape in (((2, 3), (3,)), ((4, 2, 3), (2, 1)), ((2, 3), ())):
            src = rnd(*sshape) if sshape else torch.tensor(2.5)
            d = torch.zeros(dshape, device=HPU)
            d.copy_(src.to(HPU))
            self.assertTrue(torch.equal(d.cpu(), torch.zeros(dshape).copy_(src)), (dshape, sshape))
        self.assert_on_device()

    def test_copy_between_overlapping_views_raises(self):
        single = "single memory location"
        for dtype, itype in ((F32, torch.int32), (BF16, torch.int16)):
            src = torch.arange(16.0).reshape(4, 4).to(dtype)
            a, c = src.to(HPU), src.clone()
            self.assert_both_raise(single, lambda: c.copy_(c.t()), lambda: a.copy_(a.t()))
            self.assert_both_raise(single, lambda: c.t().copy_(c), lambda: a.t().copy_(a))
            x, y = torch.arange(8.0).to(dtype).to(HPU), torch.arange(8.0).to(dtype)
            self.assert_both_raise(single, lambda: y[1:].copy_(y[:-1]), lambda: x[1:].copy_(x[:-1]))
            # A cast between overlapping views of one storage.
            w, v = x.view(itype), y.view(itype)
            self.assert_both_raise(single, lambda: y[1:].copy_(v[:-1]), lambda: x[1:].copy_(w[:-1]))
            # An expanded destination writes elements twice.
            e, f = torch.zeros(4, device=HPU), torch.zeros(4)
            self.assert_both_raise(single, lambda: f.expand(3, 4).copy_(rnd(3, 4)),
                                   lambda: e.expand(3, 4).copy_(rnd(3, 4).to(HPU)))
            self.assertTrue(torch.equal(a.cpu(), src), "the destination changed")
            self.assertTrue(torch.equal(x.cpu(), y), "the destination changed")
            # The same elements (a full overlap) are fine.
            a.copy_(a.view(16).view(4, 4))
            a.t().copy_(a.t())
            self.assertTrue(torch.equal(a.cpu(), src))

    def test_resize_to_the_same_sizes_keeps_the_strides(self):
        c = torch.arange(6.0).reshape(2, 3).t()
        a = c.to(HPU).t().contiguous().t()  # sizes (3, 2), strides (1, 3) as c's
        self.assertEqual(a.stride(), c.stride())
        a.resize_(3, 2)
        c.resize_(3, 2)
        self.assertEqual(a.stride(), c.stride())
        self.assertTrue(torch.equal(a.cpu(), c))
        a.resize_(3, 2, memory_format=torch.contiguous_format)  # a format restrides, as on the CPU
        c.resize_(3, 2, memory_format=torch.contiguous_format)
        self.assertEqual(a.stride(), c.stride())
        self.assertTrue(torch.equal(a.cpu(), c))
        keep = torch.preserve_format
        self.assert_both_raise("Unsupported memory format", lambda: c.resize_(3, 2, memory_format=keep),
                               lambda: a.resize_(3, 2, memory_format=keep))

    def test_out_of_a_wider_type_computes_in_the_inputs_type(self):
        # int32 results wrap before the cast to out's float.
        a = torch.tensor([2 ** 31 - 1, 1 << 20, -(2 ** 31)], dtype=torch.int32)
        b = torch.tensor([1, 1 << 12, 1], dtype=torch.int32)
        for op in (torch.mul, torch.add, torch.sub):
            want = op(a, b, out=torch.empty(3))
            got = op(a.to(HPU), b.to(HPU), out=torch.empty(3, device=HPU))
            self.assertTrue(torch.equal(got.cpu(), want), (op.__name__, got, want))
        # BF16 results are rounded to BF16, then widened.
        x, y = torch.tensor([1.0, 3.0], dtype=BF16), torch.tensor([2.0 ** -9, 2.0 ** -6], dtype=BF16)
        for op in (torch.add, torch.sub, torch.mul):  # exact in FP32, rounded once
            want = op(x, y, out=torch.empty(2))
            got = op(x.to(HPU), y.to(HPU), out=torch.empty(2, device=HPU))
            self.assertTrue(torch.equal(got.cpu(), want), (op.__name__, got, want))
        ops = ((torch.div, (x, y)), (torch.exp, (x,)), (torch.sqrt, (x,)), (torch.tanh, (x,)),
               (torch.sigmoid, (x,)), (lambda *t, out: torch.addcmul(*t, value=0.5, out=out), (x, x, y)))
        for op, args in ops:  # the CPU's BF16 result widened (its addcmul asserts with an FP32 out)
            got = op(*[t.to(HPU) for t in args], out=torch.empty(2, device=HPU)).cpu()
            self.assertTrue(torch.equal(got, got.to(BF16).float()), (op, got, "not a BF16 value"))
            torch.testing.assert_close(got, op(*args, out=torch.empty(2, dtype=BF16)).float(), **TOL[BF16])
        # In place, an FP32 operand into a BF16 tensor: added in FP32, rounded once.
        b, f = torch.tensor([1.0], dtype=BF16), torch.tensor([2.0 ** -8 + 2.0 ** -16])
        d = b.to(HPU)
        d.add_(f.to(HPU))
        self.assertTrue(torch.equal(d.cpu(), b.clone().add_(f)), (d, b.clone().add_(f)))
        self.assert_on_device()
        # An op of one type (neg) takes an out of another as the CPU does.
        try:
            want = torch.neg(x, out=torch.empty(2))
        except RuntimeError as e:
            want = e
        if isinstance(want, RuntimeError):
            with self.assertRaises(RuntimeError):
                torch.neg(x.to(HPU), out=torch.empty(2, device=HPU))
        else:
            self.assertTrue(torch.equal(torch.neg(x.to(HPU), out=torch.empty(2, device=HPU)).cpu(), want))

    def test_host_cast_warns_under_log_fallback(self):
        d = (rnd(5) * 10).to(HPU)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            d.to(torch.int64)
            d.to(torch.int64)
        msgs = [str(m.message) for m in w if "copy Float -> Long" in str(m.message)]
        self.assertEqual(len(msgs), 1, msgs)
        self.assertEqual(core.fallback_counts().get("copy Float -> Long"), 2)


class TestTwoProcesses(DeviceTest):
    """Two processes train on one HPU at once (two_procs.py): each gets its
    own context and memory, both see the CPU's losses, and hpu-smi lists
    both while they train."""

    def test_two_processes_train_on_one_hpu(self):
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, here)
        import two_procs
        child = subprocess.Popen([sys.executable, os.path.join(here, "two_procs.py"), "11", "hpu:0"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        seen = {}

        def line(what):
            # Importing torch in the second process takes minutes on a loaded host.
            ready, _, _ = select.select([child.stdout], [], [], 600)
            self.assertTrue(ready, f"the second process printed no {what} line in 600 s")
            text = child.stdout.readline()
            self.assertTrue(text.startswith(what + " "), f"second process: {text!r}")
            return text[len(what) + 1:]

        def at_mid():
            # Both processes hold device memory and are halfway through.
            seen["child_hbm"] = int(line("mid"))
            seen["own_hbm"] = hpu.memory_allocated(HPU)
            # hpu_torch sits in BUILD/python/hpu_torch; hpu-smi in BUILD/tools/hpu-smi.
            build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(hpu_torch.__file__))))
            smi = os.path.join(build, "tools", "hpu-smi", "hpu-smi")
            out = subprocess.run([smi], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
            seen["smi"] = out
            child.stdin.write("go\n")
            child.stdin.flush()

        try:
            mine = two_procs.train(7, HPU, at_mid)
            theirs = json.loads(line("losses"))
            self.assertEqual(child.wait(timeout=300), 0)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        for pid in (os.getpid(), child.pid):
            self.assertRegex(seen["smi"], re.compile(rf"^\|\s*0\s*\|\s*{pid}\s*\|", re.M),
                             f"hpu-smi does not list process {pid} on HPU 0")
        self.assertGreater(seen["child_hbm"], 0)
        self.assertGreater(seen["own_hbm"], 0)
        torch.testing.assert_close(torch.tensor(mine), torch.tensor(two_procs.train(7, "cpu")),
                                   rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(torch.tensor(theirs), torch.tensor(two_procs.train(11, "cpu")),
                                   rtol=1e-5, atol=1e-5)
        self.assert_on_device()


# The CNN's ops and training steps (test_cnn.py) run in this process too.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_cnn import *  # noqa: E402,F401,F403
from test_models import *  # noqa: E402,F401,F403
# Lazy mode's elementwise fusion (test_fusion.py).
from test_fusion import *  # noqa: E402,F401,F403
# The fused optimizers (test_optim.py).
from test_optim import *  # noqa: E402,F401,F403
# Every registered aten op against the CPU, and the table's coverage (test_ops.py).
from test_ops import *  # noqa: E402,F401,F403
# HBM exhaustion, a DMA bus error, nothing live at exit, hpu:1 (test_device.py).
from test_device import *  # noqa: E402,F401,F403
# Streams, events and record_stream (test_streams.py).
from test_streams import *  # noqa: E402,F401,F403


class JUnitResult(unittest.TextTestResult):
    """Keeps each test's outcome and time for a JUnit file."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.cases = []
        self._t0 = 0.0

    def startTest(self, test):
        self._t0 = time.monotonic()
        super().startTest(test)

    def _add(self, test, kind, text=""):
        self.cases.append((test, kind, text, time.monotonic() - self._t0))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._add(test, "ok")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._add(test, "failure", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._add(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._add(test, "skipped", reason)

    def addSubTest(self, test, subtest, err):
        # A failed subTest fails its own case: unittest then reports the
        # test itself neither as a success nor as a failure, so without
        # this the JUnit file (and make test's count) lost it.
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = "failure" if issubclass(err[0], test.failureException) else "error"
            self._add(subtest, kind, self._exc_info_to_string(err, test))


def write_junit(path, result):
    suite = ET.Element("testsuite", name="hpu_torch", tests=str(len(result.cases)),
                       failures=str(len(result.failures)), errors=str(len(result.errors)))
    for test, kind, text, secs in result.cases:
        cls, _, name = test.id().rpartition(".")
        tc = ET.SubElement(suite, "testcase", classname="torch." + cls.rpartition(".")[2], name=name,
                           time=f"{secs:.3f}")
        if kind in ("failure", "error"):
            e = ET.SubElement(tc, kind, message=text.strip().splitlines()[-1][:300] if text.strip() else kind)
            e.text = text
        elif kind == "skipped":
            ET.SubElement(tc, "skipped", message=text)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def main():
    junit = None
    argv = [sys.argv[0]]
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--junit":
            junit = next(it)
        else:
            argv.append(a)
    print(f"hpu_torch: {hpu.device_count()} HPU(s), torch {torch.__version__}", file=sys.stderr)
    prog = unittest.main(argv=argv, exit=False, verbosity=2,
                         testRunner=unittest.TextTestRunner(resultclass=JUnitResult, verbosity=2))
    if junit:
        write_junit(junit, prog.result)
    sys.exit(0 if prog.result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
