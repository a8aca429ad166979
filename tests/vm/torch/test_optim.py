#!/usr/bin/python3
# SPDX-License-Identifier: MIT
#
# hpu_torch.optim's fused optimizers (FusedSGD, FusedAdamW, FusedAdagrad,
# FusedLamb; Documentation/pytorch.md, "Fused optimizers") against
# torch.optim's SGD, AdamW, Adagrad and a LAMB written below in plain torch,
# on the CPU. Run by test_torch.py, which imports these classes into its
# process (one guest boot, one `import torch`); alone:
#   PYTHONPATH=build/python /usr/bin/python3 tests/vm/torch/test_optim.py [-k TestFusedOptim]
#
# Tolerances, stated:
# - FP32: several steps on their own trajectories (device and CPU never
#   resynchronised) agree within 1e-5 relative + 1e-6 absolute, parameters
#   and state: the kernels fuse multiply-adds (one rounding) where PyTorch
#   rounds twice, and compute sqrt(v c2) where PyTorch divides by
#   sqrt(1 - beta2^t).
# - BF16: the kernels compute each step in FP32 on the widened values and
#   round every stored tensor once. Each step is checked from the device's
#   state: the CPU optimizer gets the device optimizer's state_dict (widened
#   to FP32 by load_state_dict), steps in FP32, and its results rounded to
#   BF16 must be within 1 BF16 ulp (2^-7 relative; 1e-6 absolute near 0)
#   of the device's.
# - Lazy mode runs the same kernels in the same order: bit for bit eager
#   mode's results.
#
# Copyright (c) 2026 The hpu authors
import sys
import time

import torch

_main = sys.modules["__main__"]
if not hasattr(_main, "DeviceTest"):  # run alone: the suite's helpers
    import test_torch as _main  # noqa: E402

from hpu_torch import core, hpu  # noqa: E402
from hpu_torch.optim import FusedAdagrad, FusedAdamW, FusedLamb, FusedSGD  # noqa: E402

DeviceTest, LazyModeTest, HPU, F32, BF16 = _main.DeviceTest, _main.LazyModeTest, _main.HPU, _main.F32, _main.BF16

__all__ = ["TestFusedOptim", "TestFusedOptimMasterWeights", "TestFusedOptimLazy", "TestFusedOptimArguments",
           "TestFusedOptimFigures"]

F32_TOL = dict(rtol=1e-5, atol=1e-6)
BF16_TOL = dict(rtol=2.0 ** -7, atol=1e-6)
STEPS = 4
# Sizes around the kernels' 256-element members (tails), a scalar and 3-D.
SHAPES = ((37, 5), (300,), (4, 3, 17), (1,), (2, 640))


class RefLamb(torch.optim.Optimizer):
    """LAMB in plain torch (FP32 on the CPU), FusedLamb's formula:
    m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
    u = m / (1 - b1^t) / (sqrt(v / (1 - b2^t)) + eps) + wd w;
    r = ||w|| / ||u|| (1 if either is 0); w = w - lr r u."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01, *, maximize=False):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if not st:
                    st["step"] = torch.tensor(0.0)
                    st["exp_avg"] = torch.zeros_like(p)
                    st["exp_avg_sq"] = torch.zeros_like(p)
                st["step"] += 1
                t = float(st["step"])
                g, m, v = p.grad, st["exp_avg"], st["exp_avg_sq"]
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                u = (m / (1 - b1 ** t)) / ((v / (1 - b2 ** t)).sqrt() + group["eps"]) + group["weight_decay"] * p
                wn, un = p.double().norm(), u.double().norm()
                r = float(wn / un) if wn > 0 and un > 0 else 1.0
                p.sub_(u, alpha=group["lr"] * r)


# (name, fused class, reference class, options): the cases every test runs.
CASES = (
    ("sgd", FusedSGD, torch.optim.SGD, dict(lr=0.1)),
    ("sgd_wd", FusedSGD, torch.optim.SGD, dict(lr=0.05, weight_decay=0.01)),
    ("sgd_momentum", FusedSGD, torch.optim.SGD, dict(lr=0.05, momentum=0.9, weight_decay=0.01)),
    ("sgd_nesterov", FusedSGD, torch.optim.SGD, dict(lr=0.05, momentum=0.8, nesterov=True)),
    ("adamw", FusedAdamW, torch.optim.AdamW, dict(lr=1e-2, betas=(0.8, 0.95), weight_decay=0.05)),
    ("adagrad", FusedAdagrad, torch.optim.Adagrad,
     dict(lr=0.1, lr_decay=0.01, weight_decay=0.01, initial_accumulator_value=0.1, eps=1e-10)),
    ("lamb", FusedLamb, RefLamb, dict(lr=1e-2, betas=(0.9, 0.99), eps=1e-6, weight_decay=0.01)),
)


def params_for(seed, dtype):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=g).to(dtype) for s in SHAPES]


def grads_for(step, dtype):
    g = torch.Generator().manual_seed(1000 + step)
    return [torch.randn(*s, generator=g).to(dtype) for s in SHAPES]


def leaves(values, device):
    return [torch.nn.Parameter(v.detach().clone().to(device)) for v in values]


def state_tensors(opt):
    """The optimizer's state tensors (not the step counts) in parameter order, on the CPU."""
    out = []
    for group in opt.param_groups:
        for p in group["params"]:
            for k, v in sorted(opt.state[p].items()):
                if torch.is_tensor(v) and k != "step":
                    out.append((k, v.detach().cpu()))
    return out


def fused_run(cls, opts, dtype, steps=STEPS, lr_at=None):
    """steps of cls on HPU parameters (lr_at(step) sets the lr): (parameters, state, jobs per step)."""
    ps = leaves(params_for(1, dtype), HPU)
    opt = cls(ps, **opts)
    jobs = []
    for s in range(steps):
        if lr_at is not None:
            for group in opt.param_groups:
                group["lr"] = lr_at(s)
        for p, g in zip(ps, grads_for(s, dtype)):
            if p.grad is None:
                p.grad = g.to(HPU)
            else:  # as autograd accumulates: into the .grad the optimizer made a view of its flat buffer
                p.grad.copy_(g.to(HPU))
        hpu.synchronize()
        j0 = core.jobs(0)
        opt.step()
        core.mark_step()
        hpu.synchronize()
        jobs.append(core.jobs(0) - j0)
    return [p.detach().cpu() for p in ps], state_tensors(opt), jobs


class OptimTest(LazyModeTest):
    """Runs a check over optimizer cases, each a subTest; lazy mode restored after each test."""

    def each_case(self, cases, check, **kw):
        """check(name, cls, ref_cls, opts, **kw) for each case, then: device work, no fallback."""
        for name, cls, ref_cls, opts in cases:
            with self.subTest(name):
                check(name, cls, ref_cls, opts, **kw)
        self.assert_on_device()

    def step_alike(self, name, oa, a, ob, b, steps, dtype):
        """Steps oa over a and ob over b with the same gradients: the parameters must stay equal."""
        for s in steps:
            for p, q, g in zip(a, b, grads_for(s, dtype)):
                p.grad = g.to(HPU)
                q.grad = g.to(HPU)
            oa.step()
            ob.step()
        for p, q in zip(a, b):
            self.assertTrue(torch.equal(p.detach().cpu(), q.detach().cpu()), name)


class TestFusedOptim(OptimTest):
    """Eager mode: several steps against torch.optim on the CPU; one launch per parameter group."""

    def check_f32(self, name, cls, ref_cls, opts):
        got, got_state, jobs = fused_run(cls, opts, F32)
        ref = leaves(params_for(1, F32), "cpu")
        ropt = ref_cls(ref, **opts)
        for s in range(STEPS):
            for p, g in zip(ref, grads_for(s, F32)):
                p.grad = g
            ropt.step()
        for i, (a, b) in enumerate(zip(got, ref)):
            torch.testing.assert_close(a, b.detach(), msg=lambda m: f"{name} parameter {i}: {m}", **F32_TOL)
        want_state = state_tensors(ropt)
        self.assertEqual([k for k, _ in got_state], [k for k, _ in want_state], name)
        for (k, a), (_, b) in zip(got_state, want_state):
            torch.testing.assert_close(a, b, msg=lambda m: f"{name} state {k}: {m}", **F32_TOL)
        # After the first step (state made, tensors moved into the flat buffers), the group is
        # one launch; LAMB four (lamb_update_*, the fill zeroing the norms, lamb_norms_f32,
        # lamb_apply_*) whatever the number of parameters.
        per = 4 if cls is FusedLamb else 1
        self.assertEqual(jobs[1:], [per] * (STEPS - 1), f"{name}: jobs per step {jobs}")

    def check_bf16(self, name, cls, ref_cls, opts):
        ps = leaves(params_for(2, BF16), HPU)
        opt = cls(ps, **opts)
        for s in range(STEPS):
            # The CPU optimizer starts each step from the device's parameters and state.
            ref = leaves([p.detach().cpu().float() for p in ps], "cpu")
            ropt = ref_cls(ref, **opts)
            ropt.load_state_dict(opt.state_dict())
            for p, r, g in zip(ps, ref, grads_for(s, BF16)):
                p.grad = g.to(HPU)
                r.grad = g.float()
            opt.step()
            ropt.step()
            for i, (a, b) in enumerate(zip(ps, ref)):
                self.assertEqual(a.dtype, BF16)
                torch.testing.assert_close(a.detach().cpu(), b.detach().to(BF16),
                                           msg=lambda m: f"{name} step {s} parameter {i}: {m}", **BF16_TOL)
            for (k, a), (_, b) in zip(state_tensors(opt), state_tensors(ropt)):
                self.assertEqual(a.dtype, BF16, k)
                torch.testing.assert_close(a, b.to(BF16), msg=lambda m: f"{name} step {s} state {k}: {m}",
                                           **BF16_TOL)

    def test_f32_against_torch_optim(self):
        self.each_case(CASES, self.check_f32)

    def test_bf16_each_step_within_one_ulp(self):
        self.each_case(CASES, self.check_bf16)

    def test_state_dict_round_trip(self):
        for name, cls, ref_cls, opts in CASES:
            with self.subTest(name):
                a = leaves(params_for(3, F32), HPU)
                oa = cls(a, **opts)
                for s in range(2):
                    for p, g in zip(a, grads_for(s, F32)):
                        p.grad = g.to(HPU)
                    oa.step()
                sd = oa.state_dict()
                self.assertEqual(len(sd["state"]), len(SHAPES), name)
                # Into a new optimizer over copies of the parameters: both continue alike.
                b = leaves([p.detach() for p in a], HPU)
                ob = cls(b, **opts)
                ob.load_state_dict(sd)
                self.step_alike(name, oa, a, ob, b, range(2, 4), F32)
                self.assertEqual([k for k, _ in state_tensors(oa)], [k for k, _ in state_tensors(ob)])
                for (k, x), (_, y) in zip(state_tensors(oa), state_tensors(ob)):
                    self.assertTrue(torch.equal(x, y), f"{name} {k}")
                steps = [float(ob.state[p]["step"]) for p in b if "step" in ob.state[p]]
                self.assertTrue(all(s == 4.0 for s in steps), steps)
        self.assert_on_device()

    def test_state_names_and_torch_state_dict_loads(self):
        # A torch.optim state_dict (made by torch.optim's own step on the
        # HPU) loads into the fused optimizer, which continues from it.
        for name, cls, ref_cls, opts in CASES[:-1]:  # LAMB has no torch.optim counterpart
            with self.subTest(name):
                a = leaves(params_for(4, F32), HPU)
                ta = ref_cls(a, **opts)
                for p, g in zip(a, grads_for(0, F32)):
                    p.grad = g.to(HPU)
                ta.step()
                fused = cls(a, **opts)
                fused.load_state_dict(ta.state_dict())
                self.assertEqual(sorted(fused.state_dict()["state"][0]), sorted(ta.state_dict()["state"][0]))
                ref = leaves([p.detach().cpu() for p in a], "cpu")
                ropt = ref_cls(ref, **opts)
                ropt.load_state_dict(ta.state_dict())
                for p, r, g in zip(a, ref, grads_for(1, F32)):
                    p.grad = g.to(HPU)
                    r.grad = g
                fused.step()
                ropt.step()
                for p, r in zip(a, ref):
                    torch.testing.assert_close(p.detach().cpu(), r.detach(), **F32_TOL)

    def test_groups_one_launch_each_in_place_grads_and_differing_steps(self):
        # Two groups, a parameter without a gradient in one step (its step count then lags the
        # others'), gradients from autograd: against torch.optim on the CPU, one launch per
        # group in steady steps (LAMB three), and backward accumulating into the flat gradient in
        # place; LAMB's runs each with their own segment table.
        for name, cls, ref_cls, opts in (CASES[2], CASES[4], CASES[5], CASES[6]):
            with self.subTest(name):
                vals = params_for(7, F32)
                a, r = leaves(vals, HPU), leaves(vals, "cpu")
                groups = lambda ps: [{"params": ps[:3]}, {"params": ps[3:], "lr": 0.03}]  # noqa: E731
                opt, ropt = cls(groups(a), **opts), ref_cls(groups(r), **opts)
                jobs, grads_at = [], None
                for s in range(6):
                    skip = 1 if s == 2 else None  # parameter 1: no gradient in step 2
                    for ps, o in ((a, opt), (r, ropt)):
                        o.zero_grad(set_to_none=False)
                        loss = sum(((p * p) * (k + 1 + s)).sum() for k, p in enumerate(ps) if k != skip)
                        loss.backward()
                        if skip is not None:
                            ps[skip].grad = None
                    if s == 5:  # steady: .grad is still the view the optimizer made
                        self.assertEqual([p.grad.data_ptr() for p in a], grads_at, f"{name}: .grad moved")
                    grads_at = [None if p.grad is None else p.grad.data_ptr() for p in a]
                    hpu.synchronize()
                    j0 = core.jobs(0)
                    opt.step()
                    hpu.synchronize()
                    jobs.append(core.jobs(0) - j0)
                    ropt.step()
                for i, (p, q) in enumerate(zip(a, r)):
                    torch.testing.assert_close(p.detach().cpu(), q.detach(), msg=lambda m: f"{name} {i}: {m}",
                                               **F32_TOL)
                for (k, x), (_, y) in zip(state_tensors(opt), state_tensors(ropt)):
                    torch.testing.assert_close(x, y, msg=lambda m: f"{name} state {k}: {m}", **F32_TOL)
                # Step 1: one launch per group. Step 2: parameter 1 skipped, its neighbours are two
                # runs. Steps 4 and 5: parameter 1 one step behind (AdamW, Adagrad: bias
                # correction, lr decay) splits group 0 into three runs; SGD has no step count. LAMB:
                # three launches a run.
                lag = 2 if cls is FusedSGD else 4
                per = 4 if cls is FusedLamb else 1  # as above
                self.assertEqual([jobs[1], jobs[2], jobs[4], jobs[5]], [2 * per, 3 * per, lag * per, lag * per],
                                 f"{name}: jobs {jobs}")
        self.assert_on_device()

    def test_equal_groups_and_a_reload_keep_their_buffers(self):
        # Groups with the same options and as many parameters compare equal as dicts until
        # their tensors are compared: the layouts are told apart by identity. A state_dict
        # loaded back (new group dicts, the same parameters) keeps the flat buffers.
        for name, cls, ref_cls, opts in (CASES[2], CASES[4], CASES[5]):
            with self.subTest(name):
                vals = params_for(8, F32)[:4]
                a, r = leaves(vals, HPU), leaves(vals, "cpu")
                groups = lambda ps: [{"params": ps[:2]}, {"params": ps[2:]}]  # noqa: E731
                opt, ropt = cls(groups(a), **opts), ref_cls(groups(r), **opts)
                at = None
                for s in range(4):
                    for p, q, g in zip(a, r, grads_for(s, F32)):
                        p.grad, q.grad = g.to(HPU), g.clone()
                    opt.step()
                    ropt.step()
                    if s == 1:
                        at = [p.data_ptr() for p in a]
                        opt.load_state_dict(opt.state_dict())
                        ropt.load_state_dict(ropt.state_dict())
                self.assertEqual([p.data_ptr() for p in a], at, f"{name}: new buffers after the reload")
                for i, (p, q) in enumerate(zip(a, r)):
                    torch.testing.assert_close(p.detach().cpu(), q.detach(), msg=lambda m: f"{name} {i}: {m}",
                                               **F32_TOL)
        self.assert_on_device()

    def test_a_parameter_twice_in_a_group_refused(self):
        a = leaves(params_for(9, F32)[:1], HPU)[0]
        for cls in (FusedSGD, FusedAdamW, FusedAdagrad, FusedLamb):
            with self.subTest(cls.__name__), self.assertRaisesRegex(ValueError, "more than once in a group"):
                cls([a, a], lr=0.1)

    def test_param_groups_zero_grad_closure_and_params_without_grad(self):
        a, b, c = leaves(params_for(5, F32)[:3], HPU)
        opt = FusedSGD([{"params": [a]}, {"params": [b, c], "lr": 0.5}], lr=0.1, momentum=0.9)
        a0, b0, c0 = a.detach().cpu(), b.detach().cpu(), c.detach().cpu()
        ga, gb = grads_for(0, F32)[:2]

        def closure():
            opt.zero_grad()
            a.grad, b.grad = ga.to(HPU), gb.to(HPU)
            return torch.tensor(7.0)

        self.assertEqual(float(opt.step(closure)), 7.0)
        torch.testing.assert_close(a.detach().cpu(), a0 - 0.1 * ga, **F32_TOL)
        torch.testing.assert_close(b.detach().cpu(), b0 - 0.5 * gb, **F32_TOL)
        self.assertTrue(torch.equal(c.detach().cpu(), c0), "a parameter without gradient moved")
        self.assertNotIn("momentum_buffer", opt.state[c])
        opt.zero_grad(set_to_none=True)
        self.assertIsNone(a.grad)
        self.assert_on_device()


# The optimizers with master weights (FusedLamb has no master kernel).
MASTER_CASES = tuple(c for c in CASES if c[1] is not FusedLamb)


class TestFusedOptimMasterWeights(OptimTest):
    """master_weights=True: BF16 parameters with an FP32 master copy and FP32
    state. The master follows torch.optim in FP32 (from the BF16 gradients
    widened) within the FP32 tolerance; the BF16 parameter is the master
    rounded, exactly."""

    def run_master(self, name, cls, ref_cls, opts, lazy=False):
        core.set_lazy(lazy)
        ps = leaves(params_for(6, BF16), HPU)
        opt = cls(ps, master_weights=True, **opts)
        ref = leaves([p.detach().float() for p in params_for(6, BF16)], "cpu")
        ropt = ref_cls(ref, **opts)
        for s in range(STEPS):
            for p, r, g in zip(ps, ref, grads_for(s, BF16)):
                p.grad = g.to(HPU)
                r.grad = g.float()
            opt.step()
            ropt.step()
            core.mark_step()
        core.set_lazy(False)
        for i, (p, r) in enumerate(zip(ps, ref)):
            master = opt.state[p]["master_weight"].cpu()
            self.assertEqual(master.dtype, F32)
            torch.testing.assert_close(master, r.detach(), msg=lambda m: f"{name} master {i}: {m}", **F32_TOL)
            self.assertTrue(torch.equal(p.detach().cpu(), master.to(BF16)), f"{name}: w16 is not the master rounded")
        got = [(k, t) for k, t in state_tensors(opt) if k != "master_weight"]
        self.assertEqual([k for k, _ in got], [k for k, _ in state_tensors(ropt)], name)
        for (k, a), (_, b) in zip(got, state_tensors(ropt)):
            self.assertEqual(a.dtype, F32, k)
            torch.testing.assert_close(a, b, msg=lambda m: f"{name} state {k}: {m}", **F32_TOL)
        return opt, ps

    def test_master_weights_against_torch_optim_fp32(self):
        self.each_case(MASTER_CASES, self.run_master)

    def test_master_weights_lazy(self):
        self.each_case(MASTER_CASES, self.run_master, lazy=True)

    def test_master_weights_state_dict_keeps_fp32(self):
        for name, cls, ref_cls, opts in MASTER_CASES:
            with self.subTest(name):
                opt, ps = self.run_master(name, cls, ref_cls, opts)
                copies = leaves([p.detach() for p in ps], HPU)
                other = cls(copies, master_weights=True, **opts)
                other.load_state_dict(opt.state_dict())
                for p, q in zip(ps, copies):
                    self.assertEqual(other.state[q]["master_weight"].dtype, F32)
                    self.assertTrue(torch.equal(other.state[q]["master_weight"].cpu(),
                                                opt.state[p]["master_weight"].cpu()))
                self.step_alike(name, opt, ps, other, copies, [9], BF16)

    def test_master_weights_leave_fp32_parameters_plain(self):
        p = torch.nn.Parameter(torch.ones(8, device=HPU))
        p.grad = torch.ones_like(p)
        opt = FusedAdamW([p], master_weights=True)
        opt.step()
        self.assertNotIn("master_weight", opt.state[p])
        self.assertEqual(opt.state[p]["exp_avg"].dtype, F32)


class TestFusedOptimLazy(LazyModeTest):
    """Lazy mode: the same results as eager mode bit for bit; a changed lr
    takes effect without building a new graph."""

    def test_f32_and_bf16_identical_to_eager(self):
        for name, cls, _, opts in CASES:
            for dtype in (F32, BF16):
                with self.subTest(f"{name} {dtype}"):
                    core.set_lazy(False)
                    eager = fused_run(cls, opts, dtype)
                    core.set_lazy(True)
                    lazy = fused_run(cls, opts, dtype)
                    core.set_lazy(False)
                    for a, b in zip(eager[0], lazy[0]):
                        self.assertTrue(torch.equal(a, b), f"{name}: lazy parameters differ from eager")
                    for (k, a), (_, b) in zip(eager[1], lazy[1]):
                        self.assertTrue(torch.equal(a, b), f"{name}: lazy {k} differs from eager")
        self.assert_on_device()

    def test_changing_lr_hits_the_cache(self):
        def lr_at(s):
            return 0.05 / (1 + s)

        for name, cls, _, opts in (CASES[2], CASES[4], CASES[5], CASES[6]):
            with self.subTest(name):
                core.set_lazy(False)
                eager = fused_run(cls, opts, F32, steps=7, lr_at=lr_at)
                const = fused_run(cls, opts, F32, steps=7)
                core.set_lazy(True)
                ps = leaves(params_for(1, F32), HPU)
                opt = cls(ps, **opts)
                for s in range(7):
                    if s == 3:
                        s0 = core.lazy_stats(0)
                    for group in opt.param_groups:
                        group["lr"] = lr_at(s)
                    opt.zero_grad(set_to_none=True)  # the gradients' blocks come back at the same addresses
                    for p, g in zip(ps, grads_for(s, F32)):
                        p.grad = g.to(HPU)
                    opt.step()
                    core.mark_step()
                    hpu.synchronize()  # the next step's uploads reuse the same staging area
                s1 = core.lazy_stats(0)
                core.set_lazy(False)
                print(f"\n  {name}: lazy stats over steps 3-6 with a new lr each step: "
                      f"{ {k: s1[k] - s0[k] for k in ('launches', 'graphs_built', 'cache_hits')} }",
                      file=sys.stderr)
                self.assertEqual(s1["graphs_built"], s0["graphs_built"], f"{name}: a new lr built a new graph")
                self.assertEqual(s1["cache_hits"] - s0["cache_hits"], 4, f"{name}: steady steps must hit the cache")
                self.assertEqual(s1["launches"] - s0["launches"], 4, f"{name}: one graph launch per step")
                for a, b, c in zip(ps, eager[0], const[0]):
                    got = a.detach().cpu()
                    self.assertTrue(torch.equal(got, b), f"{name}: lazy differs from eager with the same lrs")
                    self.assertFalse(torch.equal(got, c), f"{name}: the changed lr had no effect")
        self.assert_on_device()


class TestFusedOptimArguments(DeviceTest):
    """Every refused argument: its exception type and message."""

    def param(self, **kw):
        p = torch.nn.Parameter(torch.ones(8, **kw))
        p.grad = torch.ones_like(p)
        return p

    def hpu_params(self):
        return [self.param(device=HPU)]

    def test_sgd_dampening_refused(self):
        with self.assertRaisesRegex(ValueError, r"FusedSGD: dampening=0.1 is not supported"):
            FusedSGD(self.hpu_params(), lr=0.1, momentum=0.9, dampening=0.1)

    def test_sgd_dampening_in_an_added_group_refused(self):
        opt = FusedSGD(self.hpu_params(), lr=0.1, momentum=0.9)
        with self.assertRaisesRegex(ValueError, r"FusedSGD: dampening=0.5 is not supported"):
            opt.add_param_group({"params": self.hpu_params(), "dampening": 0.5})
        self.assertEqual(len(opt.param_groups), 1, "the refused group stayed")

    def test_sgd_needs_lr(self):
        with self.assertRaisesRegex(ValueError, r"required optimization parameter lr"):
            FusedSGD(self.hpu_params())

    def test_sgd_negative_lr_refused(self):
        with self.assertRaisesRegex(ValueError, r"Invalid learning rate: -0.1"):
            FusedSGD(self.hpu_params(), lr=-0.1)

    def test_sgd_negative_momentum_refused(self):
        with self.assertRaisesRegex(ValueError, r"Invalid momentum value: -0.5"):
            FusedSGD(self.hpu_params(), lr=0.1, momentum=-0.5)

    def test_sgd_negative_weight_decay_refused(self):
        with self.assertRaisesRegex(ValueError, r"Invalid weight_decay value: -1"):
            FusedSGD(self.hpu_params(), lr=0.1, weight_decay=-1)

    def test_sgd_nesterov_without_momentum_refused(self):
        with self.assertRaisesRegex(ValueError, r"Nesterov momentum requires a momentum and zero dampening"):
            FusedSGD(self.hpu_params(), lr=0.1, nesterov=True)

    def test_sgd_maximize_refused(self):
        with self.assertRaisesRegex(ValueError, r"FusedSGD: maximize=True is not supported"):
            FusedSGD(self.hpu_params(), lr=0.1, maximize=True)

    def test_sgd_differentiable_refused(self):
        with self.assertRaisesRegex(ValueError, r"FusedSGD: differentiable=True is not supported"):
            FusedSGD(self.hpu_params(), lr=0.1, differentiable=True)

    def test_adamw_amsgrad_refused(self):
        with self.assertRaisesRegex(ValueError, r"FusedAdamW: amsgrad=True is not supported"):
            FusedAdamW(self.hpu_params(), amsgrad=True)

    def test_adamw_capturable_refused(self):
        with self.assertRaisesRegex(ValueError, r"FusedAdamW: capturable=True is not supported"):
            FusedAdamW(self.hpu_params(), capturable=True)

    def test_adamw_bad_beta_refused(self):
        with self.assertRaisesRegex(ValueError, r"Invalid beta parameter at index 1: 1.0"):
            FusedAdamW(self.hpu_params(), betas=(0.9, 1.0))

    def test_adamw_negative_eps_refused(self):
        with self.assertRaisesRegex(ValueError, r"Invalid epsilon value: -1e-08"):
            FusedAdamW(self.hpu_params(), eps=-1e-8)

    def test_adagrad_negative_lr_decay_refused(self):
        with self.assertRaisesRegex(ValueError, r"Invalid lr_decay value: -0.1"):
            FusedAdagrad(self.hpu_params(), lr_decay=-0.1)

    def test_adagrad_negative_initial_accumulator_refused(self):
        with self.assertRaisesRegex(ValueError, r"Invalid initial_accumulator_value value: -1"):
            FusedAdagrad(self.hpu_params(), initial_accumulator_value=-1)

    def test_lamb_maximize_refused(self):
        with self.assertRaisesRegex(ValueError, r"FusedLamb: maximize=True is not supported"):
            FusedLamb(self.hpu_params(), maximize=True)

    def test_lamb_bad_beta_refused(self):
        with self.assertRaisesRegex(ValueError, r"Invalid beta parameter at index 0: -0.1"):
            FusedLamb(self.hpu_params(), betas=(-0.1, 0.9))

    def test_cpu_parameter_refused(self):
        for cls, kw in ((FusedSGD, dict(lr=0.1)), (FusedAdamW, {}), (FusedLamb, {})):
            opt = cls(self.hpu_params() + [self.param()], **kw)
            with self.assertRaisesRegex(ValueError, rf"{cls.__name__}: parameter 1 of group 0 is on cpu, "
                                                    r"not an HPU"):
                opt.step()

    def test_cpu_parameter_refused_by_adagrad(self):
        opt = FusedAdagrad([self.param()])
        with self.assertRaisesRegex(ValueError, r"FusedAdagrad: parameter 0 of group 0 is on cpu, not an HPU"):
            opt.step()

    def test_float64_parameter_refused(self):
        opt = FusedAdamW(self.hpu_params() + [self.param(device=HPU, dtype=torch.float64)])
        with self.assertRaisesRegex(TypeError, r"FusedAdamW: parameter 1 of group 0 is torch.float64: the fused "
                                               r"optimizers take float32 and bfloat16 parameters"):
            opt.step()

    def test_non_contiguous_parameter_refused(self):
        p = torch.nn.Parameter(torch.ones(4, 6).to(HPU).t())
        p.grad = torch.ones_like(p)
        opt = FusedSGD([{"params": self.hpu_params()}, {"params": [p]}], lr=0.1)
        with self.assertRaisesRegex(ValueError, r"FusedSGD: parameter 0 of group 1 is not contiguous "
                                                r"\(sizes \(6, 4\), strides \(1, 6\)\)"):
            opt.step()

    def test_refused_parameter_leaves_the_others_untouched(self):
        good = self.param(device=HPU)
        opt = FusedSGD([good, self.param()], lr=0.1)
        with self.assertRaises(ValueError):
            opt.step()
        self.assertTrue(torch.equal(good.detach().cpu(), torch.ones(8)))

    def test_op_checks_state_dtype(self):
        p = self.param(device=HPU)
        m = torch.zeros(8, dtype=BF16, device=HPU)
        with self.assertRaisesRegex(TypeError, r"state 'exp_avg' of parameter 0 is BFloat16, expected Float"):
            torch.ops.hpu_torch.fused_adamw([p], [p.grad], [m], [m.float()], [1], 1e-3, 0.9, 0.999, 1e-8, 0.0, [])

    def test_lamb_has_no_master_weights(self):
        with self.assertRaisesRegex(TypeError, r"unexpected keyword argument 'master_weights'"):
            FusedLamb(self.hpu_params(), master_weights=True)

    def test_op_checks_master_weights(self):
        p = self.param(device=HPU)
        with self.assertRaisesRegex(TypeError, r"parameter 0 is Float: master weights are for BFloat16 parameters"):
            torch.ops.hpu_torch.fused_sgd([p], [p.grad], [], 0.1, 0.0, 0.0, False, [p.detach().clone()])
        b = self.param(device=HPU, dtype=BF16)
        with self.assertRaisesRegex(TypeError, r"state 'master_weight' of parameter 0 is BFloat16, expected Float"):
            torch.ops.hpu_torch.fused_sgd([b], [b.grad], [], 0.1, 0.0, 0.0, False, [b.detach().clone()])

    def test_op_checks_state_shape(self):
        p = self.param(device=HPU)
        with self.assertRaisesRegex(ValueError, r"state 'sum' of parameter 0 must be a contiguous tensor of the "
                                                r"parameter's sizes"):
            torch.ops.hpu_torch.fused_adagrad([p], [p.grad], [torch.zeros(4, device=HPU)], [1], 0.1, 0.0, 0.0, 1e-10,
                                              [])

    def test_op_checks_counts(self):
        p = self.param(device=HPU)
        with self.assertRaisesRegex(ValueError, r"1 parameters but 0 gradients"):
            torch.ops.hpu_torch.fused_sgd([p], [], [], 0.1, 0.0, 0.0, False, [])
        with self.assertRaisesRegex(ValueError, r"parameter 0 has no valid step count"):
            torch.ops.hpu_torch.fused_lamb([p], [p.grad], [torch.zeros_like(p)], [torch.zeros_like(p)], [0],
                                           1e-3, 0.9, 0.999, 1e-6, 0.0, [], [])
        with self.assertRaisesRegex(ValueError, r"1 parameters but 2 segment tables"):
            torch.ops.hpu_torch.fused_lamb([p], [p.grad], [torch.zeros_like(p)], [torch.zeros_like(p)], [1],
                                           1e-3, 0.9, 0.999, 1e-6, 0.0, [], [p, p])

    def test_lamb_members_no_segment_covers_get_trust_ratio_one(self):
        # A flat buffer of 5 members (256 elements each) with a table covering members 0-2
        # only: lamb_norms_f32 writes no norms for members 3 and 4, which the op zeroes
        # first (r = 1), rather than leaving what the allocator held there. NaN-filled
        # blocks of the norms' size are freed first, so stale memory would show.
        n, lr, b1, b2, eps, wd = 5 * 256, 1e-2, 0.9, 0.99, 1e-6, 0.01
        for _ in range(4):
            torch.full((2, 5), float("nan"), device=HPU)  # freed at once
        g = torch.Generator().manual_seed(11)
        w0, grad = torch.randn(n, generator=g), torch.randn(n, generator=g)
        w = w0.to(HPU)
        seg = torch.tensor([0, 3], dtype=torch.int32, device=HPU)
        torch.ops.hpu_torch.fused_lamb([w], [grad.to(HPU)], [torch.zeros(n, device=HPU)], [torch.zeros(n, device=HPU)],
                                       [1], lr, b1, b2, eps, wd, [], [seg])
        m, v = (1 - b1) * grad, (1 - b2) * grad * grad
        u = (m / (1 - b1)) / ((v / (1 - b2)).sqrt() + eps) + wd * w0
        want = w0 - lr * u  # members 3 and 4: r = 1
        head = slice(0, 3 * 256)
        r = float(w0[head].double().norm() / u[head].double().norm())
        want[head] = w0[head] - lr * r * u[head]
        got = w.cpu()
        self.assertFalse(got.isnan().any())
        torch.testing.assert_close(got, want, **F32_TOL)

    def test_op_checks_gradient(self):
        p = self.param(device=HPU)
        with self.assertRaisesRegex(TypeError, r"the gradient of parameter 0 is BFloat16, the parameter Float"):
            torch.ops.hpu_torch.fused_sgd([p], [p.grad.to(BF16)], [], 0.1, 0.0, 0.0, False, [])
        with self.assertRaisesRegex(ValueError, r"the gradient of parameter 0 .* does not match the parameter"):
            torch.ops.hpu_torch.fused_sgd([p], [torch.ones(9, device=HPU)], [], 0.1, 0.0, 0.0, False, [])


def mlp10():
    """An MLP of 10 parameter tensors (5 Linear layers)."""
    torch.manual_seed(0)
    L = torch.nn.Linear
    return torch.nn.Sequential(torch.nn.Flatten(), L(784, 256), torch.nn.ReLU(), L(256, 128), torch.nn.ReLU(),
                               L(128, 64), torch.nn.ReLU(), L(64, 32), torch.nn.ReLU(), L(32, 10))


class TestFusedOptimFigures(LazyModeTest):
    """The optimizer step of a 10-parameter MLP: torch.optim.AdamW against
    FusedAdamW, jobs and milliseconds per step (printed; pytorch.md quotes
    them), eager and lazy; the fused step issues one launch (one parameter group)."""

    def measure(self, make_opt, lazy, steps=6):
        core.set_lazy(lazy)
        model = mlp10().to(HPU)
        opt = make_opt(model.parameters())
        x, y = _main.batches(1)[0]
        x, y = x.to(HPU), y.to(HPU)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        core.mark_step()
        jobs, graphs, times = [], [], []
        for _ in range(steps):  # the same gradients each step: the optimizer alone
            hpu.synchronize()
            j0, g0, t0 = core.jobs(0), core.lazy_stats(0)["launches"], time.monotonic()
            opt.step()
            core.mark_step()
            hpu.synchronize()
            times.append(1000 * (time.monotonic() - t0))
            jobs.append(core.jobs(0) - j0)  # lazy mode: jobs recorded
            graphs.append(core.lazy_stats(0)["launches"] - g0)
        core.set_lazy(False)
        return jobs[2:], graphs[2:], sorted(times[2:])[len(times[2:]) // 2]

    def measure_train(self, make_opt, lazy, steps=6):
        """Whole training steps (forward, backward, step, loss read): jobs and median ms per step."""
        core.set_lazy(lazy)
        model = mlp10().to(HPU)
        opt = make_opt(model.parameters())
        jobs, times = [], []
        for x, y in _main.batches(steps):
            hpu.synchronize()
            j0, t0 = core.jobs(0), time.monotonic()
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x.to(HPU)), y.to(HPU))
            loss.backward()
            opt.step()
            core.mark_step()
            loss.item()
            times.append(1000 * (time.monotonic() - t0))
            jobs.append(core.jobs(0) - j0)
        core.set_lazy(False)
        return jobs[-1], sorted(times[2:])[len(times[2:]) // 2]

    def test_mlp_adamw_step_figures(self):
        out = {}
        for lazy in (False, True):
            for name, make in (("torch.optim.AdamW", lambda p: torch.optim.AdamW(p, lr=1e-3)),
                               ("FusedAdamW", lambda p: FusedAdamW(p, lr=1e-3))):
                out[(name, lazy)] = self.measure(make, lazy)
        for (name, lazy), (jobs, graphs, ms) in out.items():
            print(f"\n  {name:18} {'lazy ' if lazy else 'eager'}: jobs per step {jobs[-1]}, graph launches "
                  f"{graphs[-1]}, {ms:.1f} ms per step (median)", file=sys.stderr)
        for lazy in (False, True):
            for name, make in (("torch.optim.AdamW", lambda p: torch.optim.AdamW(p, lr=1e-3)),
                               ("FusedAdamW", lambda p: FusedAdamW(p, lr=1e-3))):
                jobs, ms = self.measure_train(make, lazy)
                print(f"\n  training step, {name:18} {'lazy ' if lazy else 'eager'}: jobs {jobs}, {ms:.1f} ms "
                      f"(median)", file=sys.stderr)
        self.assertEqual(out[("FusedAdamW", False)][0], [1] * 4, "one launch per parameter group")
        self.assertGreater(out[("torch.optim.AdamW", False)][0][-1], 10 * 5)
        self.assertEqual(out[("FusedAdamW", True)][0], [1] * 4, "lazy: one launch recorded per parameter group")
        self.assertEqual(out[("FusedAdamW", True)][1], [1] * 4, "lazy: one graph launch per step")
        self.assert_on_device()


if __name__ == "__main__":
    _main.main()
