# SPDX-License-Identifier: MIT
"""Fused optimizers for HPU parameters: FusedSGD, FusedAdamW, FusedAdagrad, FusedLamb.

Each is a torch.optim.Optimizer with the constructor arguments, parameter
groups, state names and state_dict()/load_state_dict() of the PyTorch
optimizer it replaces (torch.optim.SGD, AdamW, Adagrad; LAMB has none in
PyTorch and keeps AdamW's state names). step() updates every parameter of
a group with one TPC launch of the kernel library's fused optimizer kernel
(LAMB: three), through the custom ops torch.ops.hpu_torch.fused_*: no
per-element host work and no CPU fallback. In lazy mode the launches are
recorded into the step's graph; the learning rate and the bias corrections
are launch scalars, so changing them does not build a new graph.

Parameters must be contiguous float32 or bfloat16 HPU tensors; anything
else raises ValueError or TypeError naming the group and the parameter.
BF16 parameters keep BF16 state (as PyTorch's optimizers do): each step is
computed in FP32 on the widened values and every stored tensor rounded
once. With master_weights=True (FusedSGD, FusedAdamW, FusedAdagrad) a BF16
parameter gets an FP32 master copy (state 'master_weight') and FP32 state:
the step updates the master copy in FP32 and writes the parameter as the
master rounded once, in the same launch (the library's *_master_bf16
kernels). See Documentation/pytorch.md, "Fused optimizers".
"""
import itertools

import torch
from torch.optim.optimizer import required

_ops = torch.ops.hpu_torch

__all__ = ["FusedSGD", "FusedAdamW", "FusedAdagrad", "FusedLamb"]

_DTYPES = (torch.float32, torch.bfloat16)


def _require(ok, what):
    if not ok:
        raise ValueError(what)


class _Fused(torch.optim.Optimizer):
    """What the fused optimizers share: option and parameter checks, step()."""

    def add_param_group(self, param_group):
        """torch.optim.Optimizer.add_param_group, then the fused kernels' checks of its options.

        A refused group is taken out again before the ValueError reaches the caller.
        """
        super().add_param_group(param_group)
        try:
            self._check_group(self.param_groups[-1])
        except ValueError:
            self.param_groups.pop()
            raise

    def _check_group(self, group):
        """Raises ValueError for an option of group the kernels do not honour."""
        _require(group["lr"] >= 0.0, f"Invalid learning rate: {group['lr']}")
        _require(group["weight_decay"] >= 0.0, f"Invalid weight_decay value: {group['weight_decay']}")
        _require(not group.get("maximize", False),
                 f"{type(self).__name__}: maximize=True is not supported (the fused kernels descend)")
        _require(not group.get("differentiable", False),
                 f"{type(self).__name__}: differentiable=True is not supported (the step runs on the device, "
                 f"outside autograd)")
        _require(not group.get("capturable", False),
                 f"{type(self).__name__}: capturable=True is not supported (the step counts stay on the host; "
                 f"lazy mode records the step with its scalars)")

    def _with_grads(self, gi, group):
        """The parameters of group gi that have a gradient, checked for the fused kernels."""
        name = type(self).__name__
        params = []
        for i, p in enumerate(group["params"]):
            if p.grad is None:
                continue
            where = f"{name}: parameter {i} of group {gi}"
            if p.device.type != "hpu":
                raise ValueError(f"{where} is on {p.device}, not an HPU: the fused optimizers step HPU "
                                 f"parameters only (move the model to the HPU before the first step)")
            if p.dtype not in _DTYPES:
                raise TypeError(f"{where} is {p.dtype}: the fused optimizers take float32 and bfloat16 parameters")
            if not p.is_contiguous():
                raise ValueError(f"{where} is not contiguous (sizes {tuple(p.shape)}, strides {p.stride()}): "
                                 f"the fused optimizers take contiguous parameters")
            if p.grad.is_sparse:
                raise ValueError(f"{where} has a sparse gradient: the fused optimizers take dense gradients")
            params.append(p)
        return params

    @torch.no_grad()
    def step(self, closure=None):
        """Performs one optimization step (one fused launch per parameter; LAMB three).

        closure, if given, reevaluates the model and returns the loss,
        which step() returns.
        """
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for gi, group in enumerate(self.param_groups):
            params = self._with_grads(gi, group)
            if params:
                self._step_group(group, params)
        return loss

    def _master(self, group, p):
        """Whether p is a BF16 parameter kept as an FP32 master copy (master_weights=True)."""
        return group.get("master_weights", False) and p.dtype == torch.bfloat16

    def _state_like(self, group, p, value=0.0):
        """A new state tensor for p filled with value: FP32 with master weights, else p's dtype."""
        dtype = torch.float32 if self._master(group, p) else p.dtype
        return torch.full_like(p, value, dtype=dtype, memory_format=torch.contiguous_format)

    def _launch(self, op, group, params, per_param, *scalars):
        """op(params, grads, *per_param, *scalars, master_weights) for params.

        per_param are lists of one value per parameter (state tensors, step
        counts; an empty list stays empty). BF16 parameters with master
        weights (made here on their first step) go in a call of their own.
        """
        plain, mastered = [], []
        for i, p in enumerate(params):
            if self._master(group, p):
                state = self.state[p]
                if "master_weight" not in state:
                    state["master_weight"] = p.detach().float()  # widened on the device, exact
                mastered.append(i)
            else:
                plain.append(i)
        for idx, masters in ((plain, None), (mastered, "master_weight")):
            if not idx:
                continue
            args = [[params[i] for i in idx], [params[i].grad for i in idx]]
            args += [[lst[i] for i in idx] if lst else [] for lst in per_param]
            args += scalars
            args.append([self.state[params[i]][masters] for i in idx] if masters else [])
            op(*args)

    def load_state_dict(self, state_dict):
        """torch.optim.Optimizer.load_state_dict, but FP32 state of master-weight parameters stays FP32.

        PyTorch casts every floating-point state tensor to its parameter's
        dtype; an FP32 master copy and its FP32 state would lose their
        precision to BF16 that way.
        """
        super().load_state_dict(state_dict)
        saved = itertools.chain.from_iterable(g["params"] for g in state_dict["param_groups"])
        for sid, (group, p) in zip(saved, ((g, p) for g in self.param_groups for p in g["params"])):
            if not self._master(group, p):
                continue
            for k, v in state_dict["state"].get(sid, {}).items():
                if torch.is_tensor(v) and k != "step" and v.dtype == torch.float32:
                    self.state[p][k] = v.to(device=p.device, copy=True)

    def _steps(self, params):
        """Advances the host step count of each parameter: the new counts (1 on the first step)."""
        out = []
        for p in params:
            step = self.state[p]["step"]
            step += 1
            out.append(int(step.item()))
        return out

    def _moments(self, group, params):
        """AdamW's and LAMB's state: step, exp_avg, exp_avg_sq (made on the first step)."""
        for p in params:
            state = self.state[p]
            if "step" not in state:
                state["step"] = torch.tensor(0.0)
                state["exp_avg"] = self._state_like(group, p)
                state["exp_avg_sq"] = self._state_like(group, p)
        return [[self.state[p]["exp_avg"] for p in params], [self.state[p]["exp_avg_sq"] for p in params],
                self._steps(params)]

    def _check_betas(self, group):
        b1, b2 = group["betas"]
        _require(0.0 <= b1 < 1.0, f"Invalid beta parameter at index 0: {b1}")
        _require(0.0 <= b2 < 1.0, f"Invalid beta parameter at index 1: {b2}")
        _require(group["eps"] >= 0.0, f"Invalid epsilon value: {group['eps']}")

    def _step_group(self, group, params):
        raise NotImplementedError


class FusedSGD(_Fused):
    """torch.optim.SGD on the HPU: sgd_* (momentum 0) or sgd_momentum_* kernels.

    g' = g + weight_decay w; with momentum: buf = momentum buf + g' (buf 0
    before the first step, so buf = g' then, as PyTorch), d = g' + momentum
    buf with nesterov, else buf; w = w - lr d (without momentum d = g').
    dampening must be 0 (ValueError otherwise: the kernels have no
    dampening term); maximize and differentiable must be False; foreach is
    accepted and ignored. State: 'momentum_buffer' (None with momentum 0,
    as PyTorch stores it).
    """

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False, master_weights=False):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        master_weights=master_weights)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        _require(group["momentum"] >= 0.0, f"Invalid momentum value: {group['momentum']}")
        _require(not group["nesterov"] or (group["momentum"] > 0 and group["dampening"] == 0),
                 "Nesterov momentum requires a momentum and zero dampening")
        _require(group["dampening"] == 0,
                 f"FusedSGD: dampening={group['dampening']} is not supported (the fused kernels compute "
                 f"buf = momentum buf + g); use dampening=0")

    def _step_group(self, group, params):
        bufs = []
        for p in params:
            state = self.state[p]
            if group["momentum"] == 0:
                state["momentum_buffer"] = None
            else:
                if state.get("momentum_buffer") is None:
                    state["momentum_buffer"] = self._state_like(group, p)
                bufs.append(state["momentum_buffer"])
        self._launch(_ops.fused_sgd, group, params, [bufs], group["lr"], group["momentum"], group["weight_decay"],
                     group["nesterov"])


class FusedAdamW(_Fused):
    """torch.optim.AdamW on the HPU: one adamw_* launch per parameter.

    With t the parameter's step, c1 = 1 / (1 - beta1^t), c2 = 1 / (1 - beta2^t)
    (computed in double on the host, passed as FP32 scalars):
    w = w (1 - lr weight_decay); m = beta1 m + (1 - beta1) g;
    v = beta2 v + (1 - beta2) g^2; w = w - lr (m c1) / (sqrt(v c2) + eps).
    amsgrad=True is refused (ValueError), as are maximize, capturable.
    State: 'step' (a host tensor, as PyTorch's), 'exp_avg', 'exp_avg_sq'.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, master_weights=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        foreach=foreach, maximize=maximize, capturable=capturable, master_weights=master_weights)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        self._check_betas(group)
        _require(not group["amsgrad"], "FusedAdamW: amsgrad=True is not supported (no fused kernel keeps "
                 "max_exp_avg_sq); use amsgrad=False")

    def _step_group(self, group, params):
        b1, b2 = group["betas"]
        self._launch(_ops.fused_adamw, group, params, self._moments(group, params), group["lr"], b1, b2,
                     group["eps"], group["weight_decay"])


class FusedAdagrad(_Fused):
    """torch.optim.Adagrad on the HPU: one adagrad_* launch per parameter.

    clr = lr / (1 + (t - 1) lr_decay) (host, double); g' = g + weight_decay w;
    sum = sum + g'^2; w = w - clr g' / (sqrt(sum) + eps). State 'step'
    and 'sum' (initial_accumulator_value) are made when the optimizer is, as
    PyTorch's. maximize=True is refused; foreach is accepted and ignored.
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, master_weights=False):
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        master_weights=master_weights)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = torch.tensor(0.0)
                state["sum"] = self._state_like(group, p, group["initial_accumulator_value"])

    def _check_group(self, group):
        super()._check_group(group)
        _require(group["lr_decay"] >= 0.0, f"Invalid lr_decay value: {group['lr_decay']}")
        _require(group["initial_accumulator_value"] >= 0.0,
                 f"Invalid initial_accumulator_value value: {group['initial_accumulator_value']}")
        _require(group["eps"] >= 0.0, f"Invalid epsilon value: {group['eps']}")

    def _step_group(self, group, params):
        sums = [self.state[p]["sum"] for p in params]
        self._launch(_ops.fused_adagrad, group, params, [sums, self._steps(params)], group["lr"],
                     group["lr_decay"], group["weight_decay"], group["eps"])


class FusedLamb(_Fused):
    """LAMB (You et al., 2019) on the HPU: lamb_update_*, reduce_sum_f32, lamb_apply_* per parameter.

    With t the parameter's step and c1 = 1 / (1 - beta1^t), c2 = 1 / (1 - beta2^t)
    (bias correction always on, as the kernel library defines it):
    m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
    u = (m c1) / (sqrt(v c2) + eps) + weight_decay w;
    r = ||w|| / ||u|| over the whole parameter (1 when either norm is 0);
    w = w - (lr r) u. The norms are FP32 sums of squares on the device.
    State: 'step', 'exp_avg', 'exp_avg_sq' (AdamW's names). maximize is
    refused.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01, *, maximize=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        self._check_betas(group)

    def _step_group(self, group, params):
        b1, b2 = group["betas"]
        self._launch(_ops.fused_lamb, group, params, self._moments(group, params), group["lr"], b1, b2,
                     group["eps"], group["weight_decay"])
