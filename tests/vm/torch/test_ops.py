#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# Every aten op hpu_torch registers for the HPU dispatch key against the CPU,
# table-driven (Documentation/pytorch.md, "Op coverage"); imported and run by
# test_torch.py in its process.
#
# OPS maps each registration (as the dispatcher names it) to a case function
# that runs the op on the shapes it supports: contiguous, transposed or
# sliced (non-contiguous), broadcast, empty and odd shapes, in FP32 and BF16
# where the op takes them, each compared with the CPU on the same values
# within TOL (below) and with no CPU fallback. EXCLUDED names the few
# registrations with no case of their own and why. test_table_covers_every_
# registration asks the dispatcher (torch._C._dispatch_get_registrations_for_
# dispatch_key("HPU")) for the list and fails naming any aten op that is in
# neither, or any table entry that is no longer registered.
#
# Tolerances: FP32 elementwise within 1e-5 relative + 1e-5; reductions,
# GEMMs, convolutions, normalisations within 1e-4 + 1e-4 (another order of
# summation); BF16 within 1.6e-2 relative + 1e-2 (the device computes in FP32
# and rounds once, the CPU rounds after each step), reductions and GEMMs in
# BF16 within 3e-2 + 3e-2.
#
# Known fallbacks (by design, each allowed only in its case and named in
# pytorch.md, "Ops on the device"): log-softmax of an empty tensor, max along
# a dim of an empty tensor, a GEMM with k = 0, argmax of a 0-dim tensor or
# over all elements of a non-contiguous one, int64 <-> float casts (host
# casts, counted as "copy Long -> Float"). Any other fallback fails the case.
#
# Copyright (c) 2026 The hpu authors
import sys
import unittest

import torch
import torch.nn.functional as F

from hpu_torch import core, hpu

HPU = torch.device("hpu:0")
F32, BF16 = torch.float32, torch.bfloat16
EW = {F32: dict(rtol=1e-5, atol=1e-5), BF16: dict(rtol=1.6e-2, atol=1e-2)}
RED = {F32: dict(rtol=1e-4, atol=1e-4), BF16: dict(rtol=3e-2, atol=3e-2)}


def mk(*shape, dtype=F32, seed=0, lo=None):
    g = torch.Generator().manual_seed(seed * 101 + sum(shape) + len(shape))
    t = torch.randn(*shape, generator=g)
    if lo is not None:  # a domain: |x| + lo
        t = t.abs() + lo
    return t.to(dtype)


def to_dev(t):
    """The same tensor on the HPU, keeping a view a view (strides and offset
    of the device copy of its base)."""
    if not isinstance(t, torch.Tensor):
        return t
    if t._base is not None:
        return t._base.to(HPU).as_strided(t.size(), t.stride(), t.storage_offset())
    return t.to(HPU)


def operands(n, dtype, lo=None):
    """(case name, n operands) over the shape cases; views made on the CPU
    and mirrored on the device by to_dev."""
    def m(*s, seed=0):
        return mk(*s, dtype=dtype, seed=seed, lo=lo)
    same = {
        "contiguous": lambda i: m(5, 7, seed=i),
        "transposed": lambda i: m(7, 5, seed=i).t(),
        "sliced": lambda i: m(5, 14, seed=i)[:, 1::2],
        "empty": lambda i: m(0, 7, seed=i),
        "odd": lambda i: m(3, 1, 131, seed=i),
        "0-dim": lambda i: m(1, seed=i)[0],
    }
    for name, f in same.items():
        yield name, [f(i) for i in range(n)]
    bshapes = [(5, 1, 7), (3, 1), (1, 7)][:n]
    yield "broadcast", [m(*s, seed=i) for i, s in enumerate(bshapes)]
    yield "broadcast+transposed", [m(7, 5, seed=0).t()] + [m(5, 1, seed=i) for i in range(1, n)]


class TestEveryOp(unittest.TestCase):
    """Each registered aten op against the CPU (see OPS)."""

    def setUp(self):
        core.reset_fallback_counts()

    def cmp(self, got, want, what, tol):
        if isinstance(want, (tuple, list)):
            self.assertEqual(len(got), len(want), what)
            for i, (g, w) in enumerate(zip(got, want)):
                self.cmp(g, w, f"{what}[{i}]", tol)
            return
        if not isinstance(want, torch.Tensor):
            self.assertAlmostEqual(got, want, places=4, msg=what)
            return
        self.assertEqual(got.device.type, "hpu", what)
        self.assertEqual(got.dtype, want.dtype, what)
        self.assertEqual(got.shape, want.shape, what)
        if want.dtype in (F32, BF16, torch.float64):
            torch.testing.assert_close(got.cpu(), want, msg=lambda m: f"{what}: {m}", equal_nan=True, **tol)
        else:
            self.assertTrue(torch.equal(got.cpu(), want), f"{what}: {got.cpu()} != {want}")

    def no_fallback(self, what, allowed=()):
        hpu.synchronize()
        fb = {k: v for k, v in core.fallback_counts().items() if k not in allowed}
        self.assertEqual(fb, {}, f"{what}: ops fell back to the CPU")
        core.reset_fallback_counts()

    def run_case(self, what, fn, args, dtype=F32, tol=EW, allowed=(), ref32=False):
        # The device's operands first: an in-place op (fill_, zero_) run for the reference
        # changes args, and a device op that did nothing would then still agree.
        dev = [to_dev(a) for a in args]
        if ref32:  # the CPU in FP32 on the same values, rounded once
            want = fn(*[a.float() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                        for a in args]).to(dtype)
        else:
            want = fn(*args)
        got = fn(*dev)
        self.cmp(got, want, what, tol[dtype])
        self.no_fallback(what, allowed)

    def shapes(self, op, fn, n, dtypes=(F32, BF16), lo=None, tol=EW, skip=()):
        for dt in dtypes:
            for case, args in operands(n, dt, lo):
                if case not in skip:
                    self.run_case(f"{op} {dt} {case}", fn, args, dt, tol)

    def grad_case(self, what, fn, args, dtype=F32, tol=RED, allowed=(), ref32=False):
        """fn's output and the gradients of its floating inputs; ref32: the
        CPU computes in FP32 on the same values, rounded to dtype after."""
        def run(xs):
            xs = [x.detach().requires_grad_(True) if isinstance(x, torch.Tensor) and x.is_floating_point()
                  else x for x in xs]
            y = fn(*xs)
            g = torch.ones_like(y) if y.dim() == 0 else (torch.arange(y.numel(), dtype=F32) % 7 - 3).reshape(
                y.shape).to(y.dtype).to(y.device)
            y.backward(g)
            return [y.detach()] + [x.grad for x in xs if isinstance(x, torch.Tensor) and x.requires_grad]
        if ref32:
            want = [w.to(dtype) for w in run([a.float() if a.is_floating_point() else a for a in args])]
        else:
            want = run(list(args))
        got = run([to_dev(a) for a in args])
        self.cmp(got, want, what, tol[dtype])
        self.no_fallback(what, allowed)


def _case(name):
    def deco(f):
        OPS.setdefault(name, []).append(f)
        return f
    return deco


OPS = {}
EXCLUDED = {
    "aten::record_stream": "no values to compare: its allocator semantics are test_streams.py's TestRecordStream",
}


def unary(ops, fn, lo=None, dtypes=(F32, BF16)):
    def t(self):
        self.shapes(ops[0], fn, 1, dtypes, lo)
    for o in ops:
        OPS.setdefault(o, []).append(t)


def binary(ops, fn, dtypes=(F32, BF16), n=2, lo=None, skip=()):
    def t(self):
        self.shapes(ops[0], fn, n, dtypes, lo, skip=skip)
    for o in ops:
        OPS.setdefault(o, []).append(t)


for _n, _f, _lo in (("abs", torch.abs, None), ("exp", torch.exp, None), ("log", torch.log, 0.1),
                    ("neg", torch.neg, None), ("reciprocal", torch.reciprocal, 0.5), ("rsqrt", torch.rsqrt, 0.1),
                    ("sigmoid", torch.sigmoid, None), ("sign", torch.sign, None), ("sqrt", torch.sqrt, 0.1),
                    ("tanh", torch.tanh, None)):
    unary([f"aten::{_n}.out"], _f, _lo)
unary(["aten::clamp.out"], lambda x: torch.clamp(x, -0.5, 0.7))
unary(["aten::relu"], torch.relu)
unary(["aten::relu_"], lambda x: x.clone().relu_())
unary(["aten::gelu.out"], F.gelu)
unary(["aten::fill_.Scalar"], lambda x: x.fill_(2.5))  # in place, views included
unary(["aten::zero_"], lambda x: x.zero_())
binary(["aten::add.out"], lambda a, b: torch.add(a, b, alpha=2))
binary(["aten::sub.out"], lambda a, b: torch.sub(a, b, alpha=0.5))
binary(["aten::mul.out"], torch.mul)
binary(["aten::div.out"], torch.div, lo=0.5)
binary(["aten::addcmul.out"], lambda a, b, c: torch.addcmul(a, b, c, value=0.5), n=3)
binary(["aten::addcdiv.out"], lambda a, b, c: torch.addcdiv(a, b, c, value=0.5), n=3, lo=0.5)
binary(["aten::where.self", "aten::where.self_out"], lambda c, a, b: torch.where(c > 0.7, a, b), n=3)
for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    binary([f"aten::{_n}.Tensor_out"], lambda a, b, _o=getattr(torch, _n): _o(a, b))
    unary([f"aten::{_n}.Scalar_out"], lambda a, _o=getattr(torch, _n): _o(a, 0.25))


@_case("aten::sigmoid_backward.grad_input")
@_case("aten::tanh_backward.grad_input")
@_case("aten::threshold_backward.grad_input")
@_case("aten::gelu_backward.grad_input")
def _activation_grads(self):
    for dt in (F32, BF16):
        for case, (x,) in operands(1, dt):
            for name, f in (("sigmoid", torch.sigmoid), ("tanh", torch.tanh), ("relu", torch.relu),
                            ("gelu", F.gelu)):
                self.grad_case(f"{name} backward {dt} {case}", f, [x], dt, EW)


@_case("aten::sum.IntList_out")
@_case("aten::mean.out")
@_case("aten::amax.out")
@_case("aten::amin.out")
@_case("aten::std.correction")
@_case("aten::var.correction")
def _reductions(self):
    fns = {"sum": lambda x, d: x.sum(d), "mean": lambda x, d: x.mean(d), "amax": lambda x, d: x.amax(d),
           "amin": lambda x, d: x.amin(d), "std": lambda x, d: x.std(d), "var": lambda x, d: x.var(d, correction=0),
           "sum keepdim": lambda x, d: x.sum(d, keepdim=True)}
    for dt in (F32, BF16):
        for case, (x,) in operands(1, dt):
            if case in ("0-dim", "empty"):
                continue
            for dim in (0, -1, None):
                for name, f in fns.items():
                    if dim is None:
                        g = {"sum": torch.sum, "mean": torch.mean, "std": torch.std, "var": torch.var}.get(name)
                        if g is None:
                            continue
                        self.run_case(f"{name} {dt} {case} all", g, [x], dt, RED)
                    else:
                        self.run_case(f"{name} {dt} {case} dim {dim}", lambda t, f=f, dim=dim: f(t, dim), [x], dt, RED)
        e = mk(0, 7, dtype=dt)
        self.run_case(f"sum {dt} empty", lambda t: t.sum(0), [e], dt, RED)
        self.run_case(f"sum {dt} empty all", torch.sum, [e], dt, RED)
        self.run_case(f"sum {dt} 0-dim", torch.sum, [mk(1, dtype=dt)[0]], dt, RED)


@_case("aten::max")
@_case("aten::min")
@_case("aten::max.dim_max")
@_case("aten::min.dim_min")
@_case("aten::argmax.out")
@_case("aten::all.all_out")
@_case("aten::any.all_out")
def _extrema(self):
    for dt in (F32, BF16):
        for case, (x,) in operands(1, dt):
            if case == "empty":
                # known: max/min along a dim of an empty tensor fall back
                self.run_case(f"max dim {dt} empty", lambda t: torch.max(t, 1), [x], dt,
                              allowed=("aten::max.dim_max",))
                self.run_case(f"all {dt} empty", lambda t: torch.all(t > 0), [x], dt)
                self.run_case(f"any {dt} empty", lambda t: torch.any(t > 0), [x], dt)
                continue
            self.run_case(f"max {dt} {case}", torch.max, [x], dt)
            self.run_case(f"min {dt} {case}", torch.min, [x], dt)
            self.run_case(f"argmax {dt} {case}", torch.argmax, [x], dt,
                          allowed=() if x.is_contiguous() and x.dim() > 0 else ("aten::argmax.out",))  # known
            self.run_case(f"all {dt} {case}", lambda t: torch.all(t > -3), [x], dt)
            self.run_case(f"any {dt} {case}", lambda t: torch.any(t > 1), [x], dt)
            if x.dim() > 0:
                for d in (0, -1):
                    self.run_case(f"max dim {d} {dt} {case}", lambda t, d=d: tuple(torch.max(t, d)), [x], dt)
                    self.run_case(f"min dim {d} {dt} {case}", lambda t, d=d: tuple(torch.min(t, d)), [x], dt)
                    self.run_case(f"argmax dim {d} {dt} {case}", lambda t, d=d: torch.argmax(t, d), [x], dt)


@_case("aten::_log_softmax.out")
@_case("aten::_log_softmax_backward_data.out")
def _log_softmax(self):
    for dt in (F32, BF16):
        for case, (x,) in operands(1, dt):
            if x.dim() == 0:
                continue
            known = ("aten::_log_softmax.out", "aten::_log_softmax_backward_data.out") if x.numel() == 0 else ()
            self.grad_case(f"log_softmax {dt} {case}", lambda t: torch.log_softmax(t, -1), [x], dt, allowed=known)


@_case("aten::nll_loss_forward.output")
@_case("aten::nll_loss_backward.grad_input")
def _nll_loss(self):
    for dt in (F32, BF16):
        for n, c in ((5, 7), (1, 3), (33, 10)):
            x = mk(n, c, dtype=dt)
            y = torch.arange(n) * 3 % c
            for red in ("mean", "sum", "none"):
                self.grad_case(f"nll_loss {dt} {n}x{c} {red}", lambda t, y=y, red=red: F.nll_loss(t, y, reduction=red),
                               [x, y], dt)
            xt = mk(c, n, dtype=dt).t()
            self.grad_case(f"nll_loss {dt} transposed", lambda t, y=y: F.nll_loss(t, y), [xt, y], dt)
            self.grad_case(f"cross_entropy {dt}", lambda t, y=y: F.cross_entropy(t, y), [x, y], dt)


@_case("aten::addmm.out")
@_case("aten::mm.out")
@_case("aten::bmm.out")
def _gemms(self):
    # BF16: against the CPU's FP32 product of the same values rounded once
    # (the MME accumulates in FP32; the CPU's BF16 GEMV rounds as it goes).
    for dt in (F32, BF16):
        for m, k, n in ((5, 7, 3), (1, 131, 65), (64, 33, 17), (0, 4, 3), (4, 0, 3)):
            known = ("aten::mm.out", "aten::addmm.out", "aten::bmm.out") if k == 0 else ()
            a, b, bias = mk(m, k, dtype=dt), mk(k, n, dtype=dt, seed=1), mk(n, dtype=dt, seed=2)
            self.run_case(f"mm {dt} {m}x{k}x{n}", torch.mm, [a, b], dt, RED, allowed=known, ref32=dt == BF16)
            self.run_case(f"addmm {dt} {m}x{k}x{n} broadcast bias", lambda c, x, y: torch.addmm(c, x, y, beta=0.5),
                          [bias, a, b], dt, RED, allowed=known, ref32=dt == BF16)
            at, bt = mk(k, m, dtype=dt).t(), mk(n, k, dtype=dt, seed=1).t()
            self.run_case(f"mm {dt} {m}x{k}x{n} transposed", torch.mm, [at, bt], dt, RED, allowed=known, ref32=dt == BF16)
            self.run_case(f"addmm {dt} {m}x{k}x{n} transposed", torch.addmm, [mk(m, n, dtype=dt, seed=3), at, b],
                          dt, RED, allowed=known, ref32=dt == BF16)
            a3, b3 = mk(3, m, k, dtype=dt), mk(3, k, n, dtype=dt, seed=1)
            self.run_case(f"bmm {dt} 3x{m}x{k}x{n}", torch.bmm, [a3, b3], dt, RED, allowed=known, ref32=dt == BF16)
            self.run_case(f"bmm {dt} 3x{m}x{k}x{n} transposed", torch.bmm, [a3, b3.transpose(1, 2).contiguous().
                                                                             transpose(1, 2)], dt, RED, allowed=known, ref32=dt == BF16)
        self.grad_case(f"linear {dt}", lambda x, w, b: F.linear(x, w, b),
                       [mk(9, 13, dtype=dt), mk(5, 13, dtype=dt, seed=1), mk(5, dtype=dt, seed=2)], dt)


@_case("aten::convolution_overrideable")
@_case("aten::convolution_backward_overrideable")
def _conv(self):
    for dt in (F32, BF16):
        for x, w, kw in ((mk(2, 3, 9, 11, dtype=dt), mk(4, 3, 3, 3, dtype=dt, seed=1), dict(padding=1)),
                         (mk(1, 2, 7, 13, dtype=dt), mk(3, 2, 2, 5, dtype=dt, seed=1), dict(stride=(2, 1))),
                         (mk(2, 3, 10, 12, dtype=dt)[:, :, ::2, 1:], mk(2, 3, 1, 1, dtype=dt, seed=1), {})):
            # BF16: against the CPU's FP32 on the same BF16 values (its BF16
            # convolution rounds each partial sum; the MME accumulates in FP32).
            self.grad_case(f"conv2d {dt} {tuple(x.shape)} {kw}",
                           lambda a, b, c, kw=kw: F.conv2d(a, b, c, **kw), [x, w, mk(w.shape[0], dtype=dt, seed=2)], dt,
                           ref32=dt == BF16)


@_case("aten::max_pool2d_with_indices.out")
@_case("aten::max_pool2d_with_indices_backward.grad_input")
@_case("aten::avg_pool2d.out")
@_case("aten::avg_pool2d_backward.grad_input")
@_case("aten::_adaptive_avg_pool2d")
@_case("aten::_adaptive_avg_pool2d_backward")
def _pools(self):
    for dt in (F32, BF16):
        for x in (mk(2, 3, 8, 8, dtype=dt), mk(1, 2, 7, 13, dtype=dt), mk(2, 3, 9, 8, dtype=dt).transpose(2, 3)):
            s = tuple(x.shape)
            self.grad_case(f"max_pool2d {dt} {s}", lambda t: F.max_pool2d(t, 2), [x], dt)
            self.grad_case(f"avg_pool2d {dt} {s}", lambda t: F.avg_pool2d(t, 3, 2, 1), [x], dt)
            self.grad_case(f"adaptive_avg_pool2d {dt} {s}", lambda t: F.adaptive_avg_pool2d(t, (1, 1)), [x], dt)


@_case("aten::native_batch_norm")
@_case("aten::native_batch_norm_backward")
def _batch_norm(self):
    for dt in (F32,):  # BF16 batch norm keeps FP32 statistics: covered by test_cnn.py
        for x in (mk(4, 3, 5, 6), mk(2, 5, 3, 7).transpose(2, 3), mk(3, 2, 1, 1)):
            rm, rv = torch.zeros(x.shape[1]), torch.ones(x.shape[1])
            self.grad_case(f"batch_norm train {tuple(x.shape)}", lambda t, w, b: F.batch_norm(
                t, None, None, w, b, training=True), [x, mk(x.shape[1], seed=1), mk(x.shape[1], seed=2)], dt)
            self.run_case(f"batch_norm eval {tuple(x.shape)}", lambda t, m, v: F.batch_norm(t, m, v, training=False),
                          [x, rm + 0.1, rv * 2], dt, RED)


@_case("aten::native_dropout")
@_case("aten::native_dropout_backward")
def _dropout(self):
    # Random masks: the device's own output checked against the CPU's
    # arithmetic on the device's mask.
    for dt in (F32, BF16):
        for case, (x,) in operands(1, dt):
            d = to_dev(x)
            y, mask = torch.native_dropout(d, 0.25, True)
            want = x * mask.cpu().to(dt) * (1 / 0.75)
            self.cmp(y, want, f"native_dropout {dt} {case}", EW[dt])
            g = torch.ops.aten.native_dropout_backward(d, mask, 1 / 0.75)
            self.cmp(g, want, f"native_dropout_backward {dt} {case}", EW[dt])
            self.assertEqual(core.fallback_counts(), {}, "dropout fell back")


@_case("aten::normal_")
@_case("aten::uniform_")
@_case("aten::random_.from")
def _random(self):
    # No CPU result to compare with: the same numbers again after
    # manual_seed, the distribution's range and moments, strided targets.
    for dt in (F32, BF16):
        for fill, check in (
                (lambda t: t.normal_(1.0, 2.0), lambda v: abs(v.mean() - 1) < 0.1 and abs(v.std() - 2) < 0.1),
                (lambda t: t.uniform_(-1.0, 3.0), lambda v: v.min() >= -1 and v.max() <= 3 and abs(v.mean() - 1) < 0.1),
                (lambda t: t.random_(0, 8), lambda v: v.min() == 0 and v.max() == 7 and torch.equal(v, v.round()))):
            torch.manual_seed(4)
            a = fill(torch.empty(8192, dtype=dt, device=HPU)).cpu().float()
            torch.manual_seed(4)
            b = fill(torch.empty(8192, dtype=dt, device=HPU)).cpu().float()
            self.assertTrue(torch.equal(a, b), "not repeated by manual_seed")
            self.assertTrue(check(a), f"{dt}: {a[:8]}")
            base = torch.full((64, 32), -1.0, dtype=dt, device=HPU)
            fill(base.t()[:, ::2])
            c = base.cpu()
            self.assertTrue(torch.all(c[1::2] == -1), "wrote outside the strided target")
            self.assertGreater((c[::2] != -1).float().mean().item(), 0.99, "strided target not filled")
            self.assertEqual(fill(torch.empty(0, dtype=dt, device=HPU)).shape, (0,))
    hpu.synchronize()
    self.assertEqual(core.fallback_counts(), {})


@_case("aten::empty.memory_format")
@_case("aten::empty_strided")
@_case("aten::_copy_from")
@_case("aten::_local_scalar_dense")
def _factories_and_copies(self):
    for dt in (F32, BF16, torch.int64, torch.int32, torch.bool):
        for shape in ((5, 7), (0, 3), (), (3, 1, 131)):
            e = torch.empty(shape, dtype=dt, device=HPU)
            self.assertEqual((e.device.type, e.dtype, tuple(e.shape)), ("hpu", dt, shape))
        s = torch.empty_strided((4, 5), (1, 4), dtype=dt, device=HPU)
        self.assertEqual(s.stride(), (1, 4))
        x = (mk(7, 5) * 9).to(dt)
        for case, t in (("contiguous", x), ("transposed", x.t()), ("sliced", x[1::2, 1:]), ("empty", x[:0])):
            self.run_case(f"copy {dt} {case} to the device and back", lambda v: v.clone(), [t], F32)
            d = to_dev(t)
            self.assertTrue(torch.equal(d.cpu(), t), f"cpu() {dt} {case}")
            self.assertTrue(torch.equal(d.to(F32).cpu(), t.to(F32)), f"cast {dt} {case}")
            # int64 -> float: a host cast by design (known, counted).
            self.no_fallback(f"cast {dt} {case}", ("copy Long -> Float",) if dt == torch.int64 else ())
            dst = torch.zeros(t.t().shape, dtype=dt, device=HPU).t()
            dst.copy_(d)
            self.assertTrue(torch.equal(dst.cpu(), t), f"copy_ into a strided {dt} {case}")
        v = x[2, 3]
        self.assertEqual(to_dev(v).item(), v.item(), f"item {dt}")
    hpu.synchronize()
    self.assertEqual(core.fallback_counts(), {})


@_case("aten::_copy_from_and_resize")
def _copy_and_resize(self):
    for dt in (F32, BF16):
        x = mk(6, 5, dtype=dt)
        dst = torch.empty(0, dtype=dt, device=HPU)
        torch.ops.aten._copy_from_and_resize(x.to(HPU), dst)
        self.assertEqual(dst.shape, x.shape)
        self.assertTrue(torch.equal(dst.cpu(), x))
    self.assertEqual(core.fallback_counts(), {})


@_case("aten::view")
@_case("aten::_reshape_alias")
@_case("aten::as_strided")
@_case("aten::resize_")
def _views(self):
    for dt in (F32, BF16):
        x = mk(6, 10, dtype=dt)
        self.run_case(f"view {dt}", lambda t: t.view(3, 20), [x], dt)
        self.run_case(f"_reshape_alias {dt}", lambda t: torch.ops.aten._reshape_alias(t, (10, 6), (1, 10)), [x], dt)
        self.run_case(f"reshape of a transposed {dt}", lambda t: t.t().reshape(5, 2, 6), [x], dt)
        self.run_case(f"as_strided {dt}", lambda t: torch.as_strided(t, (4, 3), (7, 2), 5), [x], dt)
        self.run_case(f"as_strided empty {dt}", lambda t: torch.as_strided(t, (0, 3), (7, 2), 5), [x], dt)
        d = x.to(HPU)
        d.resize_(3, 10)
        self.assertTrue(torch.equal(d.cpu(), x[:3]))
        d.resize_(6, 10)
        self.assertTrue(torch.equal(d.cpu(), x), "resize_ back within the storage")
        d.resize_(8, 11)
        self.assertEqual(d.shape, (8, 11))
        self.assertTrue(torch.equal(d.cpu().flatten()[:60], x.flatten()), "resize_ that grows keeps the data")
    self.assertEqual(core.fallback_counts(), {})


@_case("aten::cat.out")
def _cat(self):
    for dt in (F32, BF16):
        a, b = mk(4, 5, dtype=dt), mk(4, 3, dtype=dt, seed=1)
        self.run_case(f"cat {dt} dim 1", lambda p, q: torch.cat([p, q], 1), [a, b], dt)
        self.run_case(f"cat {dt} transposed", lambda p, q: torch.cat([p.t(), q.t()], 0), [a, b], dt)
        self.run_case(f"cat {dt} with empty", lambda p, q: torch.cat([p, q[:0]], 0), [a, a], dt)
        self.run_case(f"cat {dt} odd", lambda p, q: torch.cat([p, q, p], 0), [mk(1, 131, dtype=dt), mk(2, 131, dtype=dt)],
                      dt)


@_case("aten::index.Tensor_out")
@_case("aten::index_select")
@_case("aten::index_select.out")
@_case("aten::nonzero")
def _indexing(self):
    for dt in (F32, BF16):
        x = mk(6, 5, 4, dtype=dt)
        i = torch.tensor([5, 0, 2, 2])
        self.run_case(f"index_select {dt}", lambda t, j: t.index_select(1, j), [x, i % 5], dt)
        self.run_case(f"index_select {dt} transposed", lambda t, j: t.transpose(0, 2).index_select(2, j), [x, i], dt)
        self.run_case(f"index_select.out {dt}", lambda t, j: torch.index_select(t, 0, j, out=torch.empty(
            0, dtype=t.dtype, device=t.device)), [x, i], dt)
        self.run_case(f"index_select {dt} empty index", lambda t, j: t.index_select(0, j[:0]), [x, i], dt)
        self.run_case(f"x[idx] {dt}", lambda t, j: t[j], [x, i], dt)
        self.run_case(f"x[:, idx] {dt}", lambda t, j: t[:, j], [x, i % 5], dt)
        self.run_case(f"x[mask] {dt}", lambda t: t[t > 0], [x], dt)
        self.run_case(f"nonzero {dt}", lambda t: torch.nonzero(t > 0.5), [x], dt)
        self.run_case(f"nonzero {dt} none", lambda t: torch.nonzero(t > 100), [x], dt)


@_case("aten::arange.start_out")
def _arange(self):
    for dt in (F32, torch.int64, torch.int32):
        for a in ((0, 10, 1), (-3, 7.5, 0.5), (5, 5, 1), (10, 0, -3)):
            if dt != F32 and any(isinstance(v, float) for v in a):
                continue
            got = torch.arange(*a, dtype=dt, device=HPU)
            self.cmp(got, torch.arange(*a, dtype=dt), f"arange {a} {dt}", EW[F32])
    self.assertEqual(core.fallback_counts(), {})


class TestEveryOpTable(unittest.TestCase):
    def test_table_covers_every_registration(self):
        regs = sorted(r for r in torch._C._dispatch_get_registrations_for_dispatch_key("HPU") if r.startswith("aten::"))
        self.assertGreater(len(regs), 50, regs)
        missing = [r for r in regs if r not in OPS and r not in EXCLUDED]
        stale = [s for s in sorted(set(OPS) | set(EXCLUDED)) if s not in regs]
        self.assertEqual(missing, [], "aten ops registered for HPU with no case in test_ops.OPS nor in EXCLUDED")
        self.assertEqual(stale, [], "test_ops.OPS names ops the extension no longer registers")
        print(f"\n  {len(regs)} aten ops registered for HPU, {len(OPS)} with cases", file=sys.stderr)


def _make_tests():
    """One test per case function (several ops may share one)."""
    seen = {}
    for op, fns in sorted(OPS.items()):
        for f in fns:
            seen.setdefault(f, []).append(op)
    for f, ops in seen.items():
        name = "test_" + ops[0].replace("aten::", "").replace(".", "_")
        setattr(TestEveryOp, name, f)


_make_tests()

__all__ = ["TestEveryOp", "TestEveryOpTable"]

if __name__ == "__main__":
    unittest.main()
