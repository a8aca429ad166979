# SPDX-License-Identifier: MIT
"""Fused optimizers for HPU parameters: FusedSGD, FusedAdamW, FusedAdagrad, FusedLamb.

Each is a torch.optim.Optimizer with the constructor arguments, parameter
groups, state names and state_dict()/load_state_dict() of the PyTorch
optimizer it replaces (torch.optim.SGD, AdamW, Adagrad; LAMB has none in
PyTorch and keeps AdamW's state names). step() updates every parameter of
a group with one TPC launch of the kernel library's fused optimizer kernel
(LAMB: four, the norms zeroed first), through the custom ops torch.ops.hpu_torch.fused_*: no
per-element host work and no CPU fallback. The optimizers keep each
group's parameters, gradients and state in flat HBM buffers (the tensors
are views of them; see _Kind), so the launch covers the whole group;
parameters without a gradient or with a different step count split it into
runs. FusedLamb pads each parameter in its buffers with zeros to whole
256-element members, so that the kernels' per-member partial norms belong
to one parameter, and passes a segment table of the parameters' first
members (lamb_norms_f32 sums each parameter's partials). In lazy mode the launches are
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


def _flat_ok(p):
    """Whether p can live in a flat buffer: a dense contiguous float32/bfloat16 HPU tensor."""
    return p.device.type == "hpu" and p.dtype in _DTYPES and p.layout == torch.strided and p.is_contiguous()


class _Kind:
    """The parameters of one group that share a device, a dtype and master weights (or not),
    laid out one after the other in flat 1-D HBM buffers: 'param' (the parameters' data are
    views of it), 'grad' (their .grad are made views of it) and one per state tensor
    ('master_weight' and the state: FP32 with master weights, else the parameters' dtype)."""

    def __init__(self, params, device, dtype, master, state_names, align=1):
        self.params, self.device, self.dtype, self.master = params, device, dtype, master
        self.align, self.offsets, self.ends, n = align, [], [], 0
        for p in params:
            self.offsets.append(n)
            n += -(-p.numel() // align) * align
            self.ends.append(n)  # the end of p's padded segment
        sdt = torch.float32 if master else dtype
        names = (["master_weight"] if master else []) + list(state_names)
        # padded (align > 1, FusedLamb): every buffer made zeros, so the padding stays zero
        new = torch.zeros if align > 1 else torch.empty
        self.flats = {"param": new(n, dtype=dtype, device=device),
                      "grad": torch.zeros(n, dtype=dtype, device=device)}
        for name in names:
            self.flats[name] = new(n, dtype=sdt, device=device)
        # FusedLamb: each parameter's first member and the end (int32, on the device), made
        # once; a run of parameters takes its slice (lamb_norms_f32 subtracts the first entry)
        self.segment_table = (torch.tensor([o // align for o in self.offsets] + [n // align], dtype=torch.int32)
                              .to(device) if align > 1 else None)
        self.views = {k: [f[o:o + p.numel()].view(p.shape) for o, p in zip(self.offsets, params)]
                      for k, f in self.flats.items()}

    @staticmethod
    def _home(t, v):
        return (t is v or (t is not None and t.data_ptr() == v.data_ptr() and t.dtype == v.dtype
                           and t.shape == v.shape and t.is_contiguous()))

    def home_params(self):
        """Makes every parameter's data its view of the flat parameter buffer (one copy each
        parameter that is elsewhere: the first step, or after param.data was replaced)."""
        for p, v in zip(self.params, self.views["param"]):
            if not self._home(p.data, v):
                v.copy_(p.data)
                p.data = v

    def grad_home(self, i):
        g = self.params[i].grad
        return g is not None and self._home(g, self.views["grad"][i])

    def home_grad(self, i):
        """Makes parameter i's .grad its view of the flat gradient buffer: autograd then
        accumulates into it in place. A gradient elsewhere (the first backward, a .grad
        assigned or made anew after zero_grad(set_to_none=True)) is copied in once."""
        p, v = self.params[i], self.views["grad"][i]
        if not self._home(p.grad, v):
            v.copy_(p.grad)
            p.grad = v

    def home_state(self, i, state, name, fill):
        """Makes state[name] of parameter i its view of the flat buffer name: a tensor made
        elsewhere (load_state_dict) is copied in, a missing one made (fill, or for
        'master_weight' the parameter widened)."""
        v = self.views[name][i]
        t = state.get(name)
        if t is None:
            if name == "master_weight":
                v.copy_(self.params[i].data)
            else:
                v.fill_(fill)
            state[name] = v
        elif not self._home(t, v):
            v.copy_(t)
            state[name] = v

    def segments(self, run):
        """The segment table of run, consecutive parameters (FusedLamb): the slice of the
        kind's table from the run's first parameter to its end."""
        return self.segment_table[run[0]:run[-1] + 2]


class _Layout:
    """A parameter group's flat buffers: one _Kind per (device, dtype, master weights)."""

    @staticmethod
    def signature(opt, group):
        """What the layout depends on: the state names, and each parameter that can be laid out
        (its identity, device, dtype, shape, master weights)."""
        params = tuple((id(p), str(p.device), p.dtype, tuple(p.shape), opt._master(group, p))
                       for p in group["params"] if _flat_ok(p))
        return (tuple(opt._state_names(group)),) + params

    def __init__(self, opt, group, sig):
        self.group, self.sig = group, sig
        by_kind = {}
        for p in group["params"]:
            if _flat_ok(p):
                by_kind.setdefault((str(p.device), p.dtype, opt._master(group, p)), []).append(p)
        names = opt._state_names(group)
        self.kinds = [_Kind(ps, ps[0].device, dt, m, names, opt._ALIGN) for (_, dt, m), ps in by_kind.items()]


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
        ids = [id(p) for p in group["params"]]
        _require(len(set(ids)) == len(ids),
                 f"{type(self).__name__}: a parameter appears more than once in a group (each would be "
                 f"stepped twice with one state)")
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
        """Performs one optimization step: one fused launch per parameter group (LAMB: four, the norms zeroed first).

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
        # After the groups took theirs: a group replaced by an equal one reuses its buffers.
        self._prune_layouts()
        return loss

    @torch.no_grad()
    def zero_grad(self, set_to_none=False):
        """torch.optim.Optimizer.zero_grad; gradients that are views of a group's flat gradient
        buffer are zeroed by one fill of the buffer (per kind), the others one by one."""
        if set_to_none:
            return super().zero_grad(set_to_none)
        for group in self.param_groups:
            layout = self._layouts().get(id(group))
            home = set()
            if layout is not None and layout.group is group:
                for kind in layout.kinds:
                    if any(kind.grad_home(i) for i in range(len(kind.params))):
                        kind.flats["grad"].zero_()
                        home.update(id(p) for i, p in enumerate(kind.params) if kind.grad_home(i))
            for p in group["params"]:
                if p.grad is None or id(p) in home:
                    continue
                if p.grad.grad_fn is not None:
                    p.grad.detach_()
                else:
                    p.grad.requires_grad_(False)
                p.grad.zero_()
        return None

    # --- The flat buffers ---

    _ALIGN = 1  # FusedLamb: 256, each parameter padded to whole members of the kernels

    def _layouts(self):
        """id(group) -> _Layout; made on demand (not part of the pickled or saved state)."""
        try:
            return self.__dict__["_flat_layouts"]
        except KeyError:
            self.__dict__["_flat_layouts"] = {}
            return self.__dict__["_flat_layouts"]

    def _prune_layouts(self):
        """Drops the layouts (and their buffers) of groups no longer in param_groups (by identity:
        group dicts compare by value, and comparing their parameter lists compares tensors)."""
        live = {id(g): g for g in self.param_groups}
        layouts = self._layouts()
        for k in [k for k, v in layouts.items() if live.get(k) is not v.group]:
            del layouts[k]

    def _layout(self, group):
        """group's _Layout, rebuilt when its parameters (set, device, dtype, shape, master) changed.

        A group replaced by one with the same parameters (load_state_dict() makes new group
        dicts) keeps the buffers of the one it replaced instead of a second set."""
        layouts = self._layouts()
        sig = _Layout.signature(self, group)
        layout = layouts.get(id(group))
        if layout is not None and layout.group is group and layout.sig == sig:
            return layout
        live = {id(g): g for g in self.param_groups}
        for k, old in list(layouts.items()):
            if old.sig == sig and live.get(k) is not old.group:
                del layouts[k]
                old.group = group
                layouts[id(group)] = old
                return old
        # The group's old buffers go before the new ones are made.
        layouts.pop(id(group), None)
        layout = _Layout(self, group, sig)
        layouts[id(group)] = layout
        return layout

    def _state_names(self, group):
        """The names of the state tensors (besides 'master_weight') that the step keeps per parameter."""
        raise NotImplementedError

    def _state_fill(self, group, name):
        """The value a new state tensor name starts with."""
        return 0.0

    def _flat_step(self, group, params, op, scalars, steps=None, segments=False):
        """Steps params (the parameters of group with a gradient) over the group's flat buffers:
        op(params, grads, *states, [steps,] *scalars, masters[, segment tables]) once per kind
        and run of consecutive stepped parameters with equal step counts (one call per group
        when every parameter has a gradient and the same step count). steps: parameter -> step
        count; segments: pass the run's segment table (FusedLamb)."""
        layout = self._layout(group)
        stepped = {id(p) for p in params}
        names = self._state_names(group)
        for kind in layout.kinds:
            idx = [i for i, p in enumerate(kind.params) if id(p) in stepped]
            if not idx:
                continue
            kind.home_params()
            for i in idx:
                kind.home_grad(i)
                state = self.state[kind.params[i]]
                if kind.master:
                    kind.home_state(i, state, "master_weight", None)
                for name in names:
                    kind.home_state(i, state, name, self._state_fill(group, name))
            runs, cur, last = [], [], None
            for i in idx:
                key = steps[id(kind.params[i])] if steps is not None else None
                if cur and (i != cur[-1] + 1 or key != last):
                    runs.append(cur)
                    cur = []
                cur.append(i)
                last = key
            runs.append(cur)
            for run in runs:
                lo, hi = kind.offsets[run[0]], kind.ends[run[-1]]
                args = [[kind.flats["param"][lo:hi]], [kind.flats["grad"][lo:hi]]]
                args += [[kind.flats[name][lo:hi]] for name in names]
                if steps is not None:
                    args.append([steps[id(kind.params[run[0]])]])
                args += scalars
                args.append([kind.flats["master_weight"][lo:hi]] if kind.master else [])
                if segments:
                    args.append([kind.segments(run)])
                op(*args)

    def _master(self, group, p):
        """Whether p is a BF16 parameter kept as an FP32 master copy (master_weights=True)."""
        return group.get("master_weights", False) and p.dtype == torch.bfloat16

    def _state_like(self, group, p, value=0.0):
        """A new state tensor for p filled with value: FP32 with master weights, else p's dtype."""
        dtype = torch.float32 if self._master(group, p) else p.dtype
        return torch.full_like(p, value, dtype=dtype, memory_format=torch.contiguous_format)

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
        out = {}
        for p in params:
            step = self.state[p]["step"]
            step += 1
            out[id(p)] = int(step.item())
        return out

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

    def _state_names(self, group):
        return ["momentum_buffer"] if group["momentum"] != 0 else []

    def _step_group(self, group, params):
        if group["momentum"] == 0:
            for p in params:
                self.state[p]["momentum_buffer"] = None

            def op(ps, gs, *rest):
                _ops.fused_sgd(ps, gs, [], *rest)
        else:
            op = _ops.fused_sgd  # a momentum_buffer None (momentum was 0) is made anew, zero
        self._flat_step(group, params, op, [group["lr"], group["momentum"], group["weight_decay"],
                                            group["nesterov"]])


class FusedAdamW(_Fused):
    """torch.optim.AdamW on the HPU: one adamw_* launch per parameter group (over its flat buffers).

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

    def _state_names(self, group):
        return ["exp_avg", "exp_avg_sq"]

    def _step_group(self, group, params):
        b1, b2 = group["betas"]
        for p in params:
            self.state[p].setdefault("step", torch.tensor(0.0))
        self._flat_step(group, params, _ops.fused_adamw, [group["lr"], b1, b2, group["eps"], group["weight_decay"]],
                        steps=self._steps(params))


class FusedAdagrad(_Fused):
    """torch.optim.Adagrad on the HPU: one adagrad_* launch per parameter group (over its flat buffers).

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

    def _state_names(self, group):
        return ["sum"]

    def _state_fill(self, group, name):
        return group["initial_accumulator_value"]

    def _step_group(self, group, params):
        for p in params:
            self.state[p].setdefault("step", torch.tensor(0.0))
        self._flat_step(group, params, _ops.fused_adagrad, [group["lr"], group["lr_decay"], group["weight_decay"],
                                                            group["eps"]], steps=self._steps(params))


class FusedLamb(_Fused):
    """LAMB (You et al., 2019) on the HPU: lamb_update_*, lamb_norms_f32, lamb_apply_* per parameter group.

    The trust ratio needs each parameter's norms: the flat buffers hold
    each parameter padded with zeros to whole 256-element members, so
    lamb_update_*'s per-member partial norms each belong to one parameter;
    lamb_norms_f32 sums them per parameter (the segment table of the
    parameters' first members) and lamb_apply_* reads its member's. Three
    launches per group and step, whatever the number of parameters.

    With t the parameter's step and c1 = 1 / (1 - beta1^t), c2 = 1 / (1 - beta2^t)
    (bias correction always on, as the kernel library defines it):
    m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g^2;
    u = (m c1) / (sqrt(v c2) + eps) + weight_decay w;
    r = ||w|| / ||u|| over the whole parameter (1 when either norm is 0);
    w = w - (lr r) u. The norms are FP32 sums of squares on the device.
    State: 'step', 'exp_avg', 'exp_avg_sq' (AdamW's names). maximize is
    refused.
    """

    _ALIGN = 256

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01, *, maximize=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        self._check_betas(group)

    def _state_names(self, group):
        return ["exp_avg", "exp_avg_sq"]

    def _step_group(self, group, params):
        b1, b2 = group["betas"]
        for p in params:
            self.state[p].setdefault("step", torch.tensor(0.0))
        self._flat_step(group, params, _ops.fused_lamb, [group["lr"], b1, b2, group["eps"], group["weight_decay"]],
                        steps=self._steps(params), segments=True)
