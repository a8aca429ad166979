#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# Lazy mode's elementwise fusion (Documentation/pytorch.md, "Fusion"):
# chains of FP32 elementwise kernels run as one generated kernel, bit for
# bit what eager mode and lazy mode with fusion off give; intermediates
# that are read later stay correct; broadcast and non-contiguous operands
# either fuse or run unfused, correct both ways; the MLP's training steps
# give the same losses and parameters with fusion on and off, in fewer
# kernel launches. Run by test_torch.py in its process; alone:
#   PYTHONPATH=build/python PT_HPU_LAZY_MODE=1 /usr/bin/python3 tests/vm/torch/test_fusion.py
#
# Copyright (c) 2026 The hpu authors
import sys
import time

import torch

_main = sys.modules["__main__"]
if not hasattr(_main, "DeviceTest"):  # run alone: the suite's helpers
    import test_torch as _main  # noqa: E402

LazyModeTest, HPU, F32, rnd, batches = _main.LazyModeTest, _main.HPU, _main.F32, _main.rnd, _main.batches
core, hpu = _main.core, _main.hpu

__all__ = ["TestFusion"]


def bits(t):
    """t's FP32 values as their bit patterns on the CPU (NaNs compare too)."""
    return t.detach().cpu().contiguous().view(torch.int32)


def specials(*shape, seed=0):
    """Random FP32 values with NaN, infinities, signed zeros and tiny values among them."""
    x = rnd(*shape, seed=seed).reshape(-1)
    sp = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e-45, -3e-39])
    x[::13] = sp.repeat(x[::13].numel() // sp.numel() + 1)[:x[::13].numel()]
    return x.reshape(shape)


def mlp256():
    """The MLP of the fusion issue: Linear 784->256, ReLU, Linear 256->10."""
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 256), torch.nn.ReLU(),
                               torch.nn.Linear(256, 10))


class TestFusion(LazyModeTest):
    """Lazy mode's elementwise fusion against eager mode and fusion off."""

    def setUp(self):
        super().setUp()
        self.was_fusion = core.lazy_fusion()

    def tearDown(self):
        core.set_lazy_fusion(self.was_fusion)
        super().tearDown()

    def run_mode(self, fn, mode, *inputs):
        """fn(*inputs on the HPU) in mode "eager", "lazy" (fusion off) or
        "fused": (its results on the CPU, lazy_stats delta, last step's nodes)."""
        core.set_lazy(mode != "eager")
        core.set_lazy_fusion(mode == "fused")
        dev = [t.to(HPU) for t in inputs]
        core.mark_step()
        hpu.synchronize()
        s0 = core.lazy_stats(0)
        out = fn(*dev)
        out = out if isinstance(out, tuple) else (out,)
        core.mark_step()
        hpu.synchronize()
        s1 = core.lazy_stats(0)
        nodes = core.lazy_last_step(0) if mode != "eager" else []
        res = [o.cpu() for o in out]
        core.set_lazy(False)
        return res, {k: s1[k] - s0[k] for k in s1}, nodes

    def check_modes(self, fn, *inputs, fuses=True):
        """fn in the three modes: bit-identical results; with fuses, fewer TPC
        launches when fused; with fuses False, none fused and as many launches;
        with None, either. Returns the fused run's stats and nodes."""
        eager, _, _ = self.run_mode(fn, "eager", *inputs)
        lazy, ds_off, _ = self.run_mode(fn, "lazy", *inputs)
        fused, ds_on, nodes = self.run_mode(fn, "fused", *inputs)
        for e, lz, f in zip(eager, lazy, fused):
            self.assertTrue(torch.equal(bits(lz), bits(e)), "lazy (fusion off) differs from eager")
            self.assertTrue(torch.equal(bits(f), bits(e)), f"fused differs from eager: {nodes}")
        self.assertEqual(ds_off["fused"], 0)
        if fuses:
            self.assertGreater(ds_on["fused"], 0, nodes)
            self.assertLess(ds_on["tpc_launches"], ds_off["tpc_launches"])
            self.assertTrue(any(n.startswith("fused(") for n in nodes), nodes)
        elif fuses is False:
            self.assertEqual(ds_on["fused"], 0, nodes)
            self.assertEqual(ds_on["tpc_launches"], ds_off["tpc_launches"])
        return ds_on, nodes

    def test_switch(self):
        # PT_HPU_LAZY_FUSION is read when hpu_torch loads: new processes.
        code = ("import torch, hpu_torch\nfrom hpu_torch import core\n"
                "x, y = torch.rand(1000).to('hpu'), torch.rand(1000).to('hpu')\ncore.mark_step()\n"
                "f0 = core.lazy_stats(0)['fused']\nz = torch.relu(x + y)\ncore.mark_step()\n"
                "print(core.lazy_fusion(), core.lazy_stats(0)['fused'] - f0, "
                "torch.equal(z.cpu(), torch.relu(x.cpu() + y.cpu())))")
        for value, want in (("0", "False 0 True"), ("1", "True 1 True")):
            self.assertEqual(_main.child({"PT_HPU_LAZY_MODE": "1", "PT_HPU_LAZY_FUSION": value}, code), want)

    def test_relu_of_mul_add_bit_identical(self):
        ds, nodes = self.check_modes(lambda x, y: torch.relu(x * 2 + y), specials(1000, 37, seed=1),
                                     specials(1000, 37, seed=2))
        print(f"\n  relu(x*2+y): {nodes} {ds}", file=sys.stderr)
        # add and relu at least: the mul joins them unless its scalar's
        # block (freed after the mul) is the add's output, as the caching
        # allocator often does (an overlap the fused kernel must not have).
        self.assertGreaterEqual(ds["fused_ops"], 2, nodes)

    def test_chain_with_scalars_and_in_place(self):
        def fn(x, y, w):
            t = x.mul(0.5).add_(y, alpha=-3.0)  # scale-like, then axpy in place
            w.add_(t, alpha=0.01)
            return w, t
        self.check_modes(fn, specials(3000, seed=3), rnd(3000, seed=4), rnd(3000, seed=5))

    def test_intermediates_read_later_are_correct(self):
        def fn(x, y):
            t = x * 2
            u = t + y
            z = torch.relu(u)
            w = t * 3  # t read again in the same step: t is stored
            return z, u, t, w
        ds, nodes = self.check_modes(fn, rnd(512, 64, seed=6), rnd(512, 64, seed=7))
        print(f"\n  read-later: {nodes} {ds}", file=sys.stderr)
        # Printed and read through .cpu() after the step: still right.
        core.set_lazy(True)
        core.set_lazy_fusion(True)
        x = torch.arange(8.0).to(HPU)
        t = x * 2
        u = torch.relu(t - 5)
        core.mark_step()
        self.assertIn("14.", str(t))
        self.assertTrue(torch.equal(u.cpu(), torch.relu(torch.arange(8.0) * 2 - 5)))
        self.assertTrue(torch.equal(t.cpu(), torch.arange(8.0) * 2))

    def test_broadcast_operands(self):
        # A bias row and a scalar broadcast over [N, C]: fused, bit-identical.
        self.check_modes(lambda x, b: torch.relu(x + b) * 0.25, specials(64, 300, seed=8), rnd(300, seed=9))
        # A [N, 1] column: the sub's launch cannot merge the dimensions the
        # relu's does (its descriptors differ), so it is left unfused.
        ds, nodes = self.check_modes(lambda x, c: torch.relu(x - c), rnd(33, 700, seed=10), rnd(33, 1, seed=11),
                                     fuses=False)
        print(f"\n  column broadcast: {nodes}", file=sys.stderr)

    def test_non_contiguous_operands(self):
        # Transposed and strided views: fused or not, bit-identical.
        def fn(x, y):
            return torch.relu(x.t() * y[::2].t() + 1.0)
        self.check_modes(fn, rnd(40, 300, seed=12), rnd(80, 300, seed=13), fuses=True)

    def test_unfusable_left_alone(self):
        # A single elementwise op, integer ops and a BF16 chain: nothing fuses.
        self.check_modes(lambda x: torch.relu(x), rnd(1000, seed=14), fuses=False)
        self.check_modes(lambda a: (a + 3) * 2, torch.arange(1000, dtype=torch.int32), fuses=False)
        self.check_modes(lambda x, y: torch.relu(x + y), rnd(1000, seed=15).to(torch.bfloat16),
                         rnd(1000, seed=16).to(torch.bfloat16), fuses=False)
        # A GEMM between two elementwise ops breaks the chain.
        self.check_modes(lambda a, b: torch.relu((a * 2) @ b), rnd(64, 64, seed=17), rnd(64, 64, seed=18),
                         fuses=False)

    def train(self, make, opt_fn, data, mode):
        """Training steps in mode: losses, parameters, per-step stats deltas and times."""
        core.set_lazy(mode != "eager")
        core.set_lazy_fusion(mode == "fused")
        model = make().to(HPU)
        opt = opt_fn(model.parameters())
        loss_fn = torch.nn.CrossEntropyLoss()
        losses, stats, times, nodes = [], [], [], []
        for x, y in data:
            hpu.synchronize()
            s0 = core.lazy_stats(0)
            t0 = time.monotonic()
            opt.zero_grad()
            loss = loss_fn(model(x.to(HPU)), y.to(HPU))
            loss.backward()
            opt.step()
            core.mark_step()
            losses.append(loss.item())
            hpu.synchronize()
            times.append(time.monotonic() - t0)
            s1 = core.lazy_stats(0)
            stats.append({k: s1[k] - s0[k] for k in s1})
            nodes = core.lazy_last_step(0)
        params = [p.detach().cpu() for p in model.parameters()]
        core.set_lazy(False)
        return losses, params, stats, times, nodes

    def compare_training(self, make, opt_fn, steps, name):
        data = batches(steps)
        runs = {m: self.train(make, opt_fn, data, m) for m in ("eager", "lazy", "fused")}
        for m in ("lazy", "fused"):
            self.assertEqual(runs[m][0], runs["eager"][0], f"{m} losses differ from eager")
            for pe, pm in zip(runs["eager"][1], runs[m][1]):
                self.assertTrue(torch.equal(bits(pe), bits(pm)), f"{m} parameters differ from eager")
        off, on = runs["lazy"][2][-1], runs["fused"][2][-1]
        ms = {m: round(1000 * sorted(runs[m][3][1:])[len(runs[m][3][1:]) // 2], 1) for m in runs}
        print(f"\n  {name}: losses {runs['fused'][0]}\n  steady step, fusion off: {off}"
              f"\n  steady step, fusion on:  {on}\n  median ms/step (steps 2..): {ms}"
              f"\n  fusion off nodes: {runs['lazy'][4]}\n  fusion on nodes:  {runs['fused'][4]}",
              file=sys.stderr)
        return off, on

    def test_seed_model_sgd_steps(self):
        self.compare_training(_main.seed_model, lambda p: torch.optim.SGD(p, lr=0.01), 5, "seed model, SGD")

    def test_mlp_sgd_steps_fused(self):
        off, on = self.compare_training(mlp256, lambda p: torch.optim.SGD(p, lr=0.01), 5, "MLP 784-256-10, SGD")
        self.assertGreater(on["fused"], 0)
        self.assertLess(on["tpc_launches"], off["tpc_launches"])
        self.assertEqual(on["cache_hits"], 1, "the steady fused step is a cached graph")
        self.assertEqual(on["graphs_built"], 0)

    def test_mlp_sgd_weight_decay_momentum(self):
        self.compare_training(mlp256, lambda p: torch.optim.SGD(p, lr=0.01, momentum=0.9, weight_decay=1e-4), 4,
                              "MLP, SGD momentum + weight decay")


if __name__ == "__main__":
    import unittest
    unittest.main()
