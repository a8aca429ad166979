// SPDX-License-Identifier: MIT
// ops_optim.cpp - the fused optimizer steps of hpu_torch.optim as custom
// ops (torch.ops.hpu_torch.fused_sgd, fused_adamw, fused_adagrad,
// fused_lamb): each listed tensor's whole update is one launch of the
// kernel library's optimizer kernels (libhpu/kernels/README.md, "sgd_*",
// "adamw_*", "adagrad_*"), or LAMB's three (moments and direction, the two
// squared norms, the trust-ratio step). Parameters and their state are
// described as flat 1-D tensors, so one launch covers a whole contiguous
// tensor: hpu_torch.optim passes FusedSGD's, FusedAdamW's and
// FusedAdagrad's flat per-group buffers (one tensor per list), so a
// group's step is one launch; FusedLamb passes its flat buffers (each
// parameter padded to whole 256-element members) with a segment table of
// the parameters' first members, so a group's step is LAMB's three
// launches (lamb_norms_f32 the per-parameter norms).
// BF16 parameters with an FP32 master copy (master_weights) use
// the *_master_bf16 kernels: the FP32 master and state updated, the BF16
// parameter written as the master rounded, in the same launch. The jobs go
// through DeviceContext::submit(): issued at once in
// eager mode, recorded into the step's graph in lazy mode, where the
// learning rate and the bias corrections are launch scalars, not part of
// the graph cache's key.
//
// Copyright (c) 2026 The hpu authors
#include <torch/library.h>

#include <bit>
#include <cmath>
#include <limits>

#include "launch.h"

namespace hpu_torch {

namespace {

constexpr std::int64_t kLanes = 256; // elements of a member of the optimizer kernels

std::uint32_t fword(double v) { return std::bit_cast<std::uint32_t>(static_cast<float>(v)); }

// A contiguous tensor's elements as one 1-D descriptor of dtype.
hpu_tensor flat(const at::Tensor &t, std::uint32_t dtype)
{
    hpu_tensor d{};
    d.va = va_of(t);
    d.dtype = dtype;
    d.ndims = 1;
    d.sizes[0] = static_cast<std::uint32_t>(t.numel());
    d.strides[0] = 1;
    return d;
}

// The members of a launch over n elements.
std::uint32_t members(std::int64_t n) { return static_cast<std::uint32_t>((n + kLanes - 1) / kLanes); }

// One parameter of a step with its gradient (made contiguous on the
// device when it is not), its state tensors and, for a BF16 parameter
// with master weights, its FP32 master copy, checked.
struct Slot {
    at::Tensor p;
    at::Tensor g;
    std::vector<at::Tensor> state;
    at::Tensor master;
    std::uint32_t dtype = 0;

    // The kernel's name and tensors: base_SFX (w, g, state...), or for a
    // master copy base_master_bf16 (master, g, FP32 state..., w16).
    [[nodiscard]] std::string kernel(const std::string &base) const
    {
        return base + (master.defined() ? "_master_bf16" : std::string("_") + dtype_suffix(dtype));
    }
    [[nodiscard]] std::vector<hpu_tensor> tensors() const
    {
        const std::uint32_t sdt = master.defined() ? HPU_DTYPE_FP32 : dtype;
        std::vector<hpu_tensor> ts{master.defined() ? flat(master, HPU_DTYPE_FP32) : flat(p, dtype), flat(g, dtype)};
        for (const at::Tensor &t : state)
            ts.push_back(flat(t, sdt));
        if (master.defined())
            ts.push_back(flat(p, dtype));
        return ts;
    }
};

// Checks that t, a tensor named what of parameter i, is a contiguous
// tensor of p's sizes on p's device, of dtype.
void check_like(std::size_t i, const char *what, const at::Tensor &t, const at::Tensor &p, c10::ScalarType dtype)
{
    TORCH_CHECK_VALUE(t.defined() && t.device() == p.device() && t.sizes() == p.sizes() && t.is_contiguous(),
                      "hpu_torch.optim: state '", what, "' of parameter ", i,
                      " must be a contiguous tensor of the parameter's sizes on its device (", p.device(), ", ",
                      p.sizes(), ")");
    TORCH_CHECK_TYPE(t.scalar_type() == dtype, "hpu_torch.optim: state '", what, "' of parameter ", i, " is ",
                     t.scalar_type(), ", expected ", dtype);
}

// Checks parameter i of a fused step and returns it with its gradient,
// state (states[k][i], named names[k]) and master copy (masters[i] when
// masters is not empty: FP32 state then). Raises ValueError (where it is,
// its layout, its state) or TypeError (its dtype) naming the parameter.
Slot slot(std::size_t i, const at::Tensor &p, const at::Tensor &g, const std::vector<at::TensorList> &states,
          const std::vector<const char *> &names, at::TensorList masters)
{
    TORCH_CHECK_VALUE(p.defined(), "hpu_torch.optim: parameter ", i, " is undefined");
    TORCH_CHECK_VALUE(is_hpu(p), "hpu_torch.optim: parameter ", i, " is on ", p.device(),
                      ", not on an HPU: the fused optimizers step HPU parameters only (no CPU fallback)");
    const std::string sfx = float_suffix(p.scalar_type());
    TORCH_CHECK_TYPE(!sfx.empty(), "hpu_torch.optim: parameter ", i, " is ", p.scalar_type(),
                     ": the fused optimizers take Float (float32) and BFloat16 parameters");
    TORCH_CHECK_VALUE(p.is_contiguous(), "hpu_torch.optim: parameter ", i, " is not contiguous (sizes ", p.sizes(),
                      ", strides ", p.strides(), "): the fused optimizers take contiguous parameters");
    TORCH_CHECK_VALUE(p.numel() <= std::numeric_limits<std::int32_t>::max(), "hpu_torch.optim: parameter ", i,
                      " has ", p.numel(), " elements, more than a tensor descriptor holds (2^31 - 1)");
    TORCH_CHECK_VALUE(g.defined() && g.layout() == c10::kStrided, "hpu_torch.optim: parameter ", i,
                      " has no dense gradient (sparse gradients are not supported)");
    TORCH_CHECK_VALUE(g.device() == p.device() && g.sizes() == p.sizes(), "hpu_torch.optim: the gradient of parameter ",
                      i, " (", g.device(), ", sizes ", g.sizes(), ") does not match the parameter (", p.device(),
                      ", sizes ", p.sizes(), ")");
    TORCH_CHECK_TYPE(g.scalar_type() == p.scalar_type(), "hpu_torch.optim: the gradient of parameter ", i, " is ",
                     g.scalar_type(), ", the parameter ", p.scalar_type());
    Slot s{p, g.is_contiguous() ? g : g.contiguous(), {}, {}, device_dtype(p.scalar_type())};
    auto sdt = p.scalar_type();
    if (!masters.empty() && masters[i].defined()) {
        TORCH_CHECK_TYPE(p.scalar_type() == c10::ScalarType::BFloat16, "hpu_torch.optim: parameter ", i,
                         " is ", p.scalar_type(), ": master weights are for BFloat16 parameters");
        check_like(i, "master_weight", masters[i], p, c10::ScalarType::Float);
        s.master = masters[i];
        sdt = c10::ScalarType::Float;
    }
    for (std::size_t k = 0; k < states.size(); ++k) {
        check_like(i, names[k], states[k][i], p, sdt);
        s.state.push_back(states[k][i]);
    }
    return s;
}

// Runs step(ctx, slot, i) for every parameter under its device's lock,
// after checking every one (nothing is launched when one is refused).
template <typename Step>
void for_each_param(at::TensorList params, at::TensorList grads, const std::vector<at::TensorList> &states,
                    const std::vector<const char *> &names, at::TensorList masters, Step &&step)
{
    TORCH_CHECK_VALUE(grads.size() == params.size(), "hpu_torch.optim: ", params.size(), " parameters but ",
                      grads.size(), " gradients");
    for (std::size_t k = 0; k < states.size(); ++k) {
        TORCH_CHECK_VALUE(states[k].size() == params.size(), "hpu_torch.optim: ", params.size(), " parameters but ",
                          states[k].size(), " '", names[k], "' tensors");
    }
    TORCH_CHECK_VALUE(masters.empty() || masters.size() == params.size(), "hpu_torch.optim: ", params.size(),
                      " parameters but ", masters.size(), " master weights");
    std::vector<Slot> slots;
    slots.reserve(params.size());
    for (std::size_t i = 0; i < params.size(); ++i)
        slots.push_back(slot(i, params[i], grads[i], states, names, masters));
    for (std::size_t i = 0; i < slots.size(); ++i) {
        if (slots[i].p.numel() == 0)
            continue;
        DeviceContext &ctx = context_of(slots[i].p);
        auto lock = ctx.lock();
        step(ctx, slots[i], i);
    }
}

// The step number of parameter i (1 for its first step).
double step_of(c10::ArrayRef<std::int64_t> steps, std::size_t i)
{
    TORCH_CHECK_VALUE(i < steps.size() && steps[i] >= 1, "hpu_torch.optim: parameter ", i,
                      " has no valid step count (steps start at 1)");
    return static_cast<double>(steps[i]);
}

// 1 / (1 - beta^t): Adam's and LAMB's bias correction, in double as PyTorch's.
double correction(double beta, double t) { return 1.0 / (1.0 - std::pow(beta, t)); }

void op_fused_sgd(at::TensorList params, at::TensorList grads, at::TensorList bufs, double lr, double momentum,
                  double weight_decay, bool nesterov, at::TensorList masters)
{
    const bool mom = momentum != 0.0;
    TORCH_CHECK_VALUE(!mom || bufs.size() == params.size(), "hpu_torch.optim: SGD with momentum takes one ",
                      "momentum buffer per parameter");
    std::vector<at::TensorList> states;
    if (mom)
        states.push_back(bufs);
    for_each_param(params, grads, states, {"momentum_buffer"}, masters,
                   [&](DeviceContext &ctx, const Slot &s, std::size_t) {
                       if (!mom) {
                           launch(ctx, s.kernel("sgd"), s.tensors(), {fword(lr), fword(weight_decay)},
                                  {members(s.p.numel())});
                           return;
                       }
                       launch(ctx, s.kernel("sgd_momentum"), s.tensors(),
                              {fword(lr), fword(momentum), fword(weight_decay), nesterov ? 1U : 0U},
                              {members(s.p.numel())});
                   });
}

void op_fused_adamw(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                    c10::ArrayRef<std::int64_t> steps, double lr, double beta1, double beta2, double eps,
                    double weight_decay, at::TensorList masters)
{
    for_each_param(params, grads, {exp_avgs, exp_avg_sqs}, {"exp_avg", "exp_avg_sq"}, masters,
                   [&](DeviceContext &ctx, const Slot &s, std::size_t i) {
                       const double t = step_of(steps, i);
                       launch(ctx, s.kernel("adamw"), s.tensors(),
                              {fword(lr), fword(beta1), fword(beta2), fword(eps), fword(weight_decay),
                               fword(correction(beta1, t)), fword(correction(beta2, t))},
                              {members(s.p.numel())});
                   });
}

void op_fused_adagrad(at::TensorList params, at::TensorList grads, at::TensorList sums,
                      c10::ArrayRef<std::int64_t> steps, double lr, double lr_decay, double weight_decay, double eps,
                      at::TensorList masters)
{
    for_each_param(params, grads, {sums}, {"sum"}, masters, [&](DeviceContext &ctx, const Slot &s, std::size_t i) {
        const double clr = lr / (1.0 + (step_of(steps, i) - 1.0) * lr_decay);
        launch(ctx, s.kernel("adagrad"), s.tensors(), {fword(clr), fword(eps), fword(weight_decay)},
               {members(s.p.numel())});
    });
}

void op_fused_lamb(at::TensorList params, at::TensorList grads, at::TensorList exp_avgs, at::TensorList exp_avg_sqs,
                   c10::ArrayRef<std::int64_t> steps, double lr, double beta1, double beta2, double eps,
                   double weight_decay, at::TensorList masters, at::TensorList segments)
{
    TORCH_CHECK_VALUE(masters.empty(), "hpu_torch.optim: LAMB has no master-weight kernel (master_weights must be [])");
    TORCH_CHECK_VALUE(segments.empty() || segments.size() == params.size(), "hpu_torch.optim: ", params.size(),
                      " parameters but ", segments.size(), " segment tables");
    for_each_param(
        params, grads, {exp_avgs, exp_avg_sqs}, {"exp_avg", "exp_avg_sq"}, {},
        [&](DeviceContext &ctx, const Slot &s, std::size_t i) {
            const double t = step_of(steps, i);
            const std::int64_t n = s.p.numel();
            const std::uint32_t parts = members(n);
            // segments[i]: params[i] is a flat buffer of several parameters,
            // each padded with zeros to whole members; the table holds their
            // first members and the end (int32 [S + 1], ascending, from 0 to
            // parts). Without it params[i] is one parameter.
            const bool seg = !segments.empty();
            std::uint32_t nseg = 1;
            if (seg) {
                const at::Tensor &st = segments[i];
                TORCH_CHECK_VALUE(n % kLanes == 0, "hpu_torch.optim: LAMB's flat buffer ", i, " has ", n,
                                  " elements, not a multiple of ", kLanes, " (each parameter padded to members)");
                TORCH_CHECK_VALUE(st.defined() && st.device() == s.p.device() && st.dim() == 1 &&
                                      st.numel() >= 2 && st.is_contiguous(),
                                  "hpu_torch.optim: the segment table of LAMB's flat buffer ", i,
                                  " must be a contiguous 1-D tensor of at least 2 offsets on the buffer's device");
                TORCH_CHECK_TYPE(st.scalar_type() == c10::ScalarType::Int, "hpu_torch.optim: the segment table of ",
                                 "LAMB's flat buffer ", i, " is ", st.scalar_type(), ", expected Int");
                nseg = static_cast<std::uint32_t>(st.numel() - 1);
            }
            // FP32 scratch (BF16 parameters too): the direction u, the
            // members' partial squared norms [P, 2] and the norms: [1, 2],
            // or per member [P, 2] (each its parameter's) with segments.
            const std::uint32_t rows = seg ? parts : 1;
            const at::Tensor u = empty_hpu({n}, c10::ScalarType::Float, s.p.device());
            const at::Tensor part = empty_hpu({2, parts}, c10::ScalarType::Float, s.p.device());
            const at::Tensor norms = empty_hpu({2, rows}, c10::ScalarType::Float, s.p.device());
            hpu_tensor pd = flat(part, HPU_DTYPE_FP32);
            pd.ndims = 2;
            pd.sizes[0] = parts;
            pd.sizes[1] = 2;
            pd.strides[1] = parts;
            hpu_tensor nd = flat(norms, HPU_DTYPE_FP32);
            nd.ndims = 2;
            nd.sizes[0] = rows;
            nd.sizes[1] = 2;
            nd.strides[1] = rows;
            const std::string sfx = dtype_suffix(s.dtype);
            const hpu_tensor w = flat(s.p, s.dtype);
            const hpu_tensor ud = flat(u, HPU_DTYPE_FP32);
            launch(ctx, "lamb_update_" + sfx,
                   {w, flat(s.g, s.dtype), flat(s.state[0], s.dtype), flat(s.state[1], s.dtype), ud, pd},
                   {fword(beta1), fword(beta2), fword(eps), fword(weight_decay), fword(correction(beta1, t)),
                    fword(correction(beta2, t))},
                   {parts});
            if (seg) {
                // Zeros first: rows no segment covers (a table not spanning
                // 0..parts, which the op cannot check on the device) are
                // never written by lamb_norms_f32; left uninitialised they
                // would hand lamb_apply stale norms. Zero norms give those
                // members trust ratio 1 (README), deterministic. A TPC fill,
                // on the queue of the launches around it.
                launch_ew(ctx, "fill_b32", norms.sizes(), {operand_as(norms, norms.sizes(), HPU_DTYPE_UINT32)}, {0});
                launch(ctx, "lamb_norms_f32", {pd, flat(segments[i], HPU_DTYPE_INT32), nd}, {}, {nseg});
            } else {
                launch(ctx, "reduce_sum_f32", {pd, nd}, {}, {1, 2});
            }
            launch(ctx, "lamb_apply_" + sfx, {w, ud, nd}, {fword(lr)}, {parts});
        });
}

} // namespace

TORCH_LIBRARY_FRAGMENT(hpu_torch, m)
{
    m.def("fused_sgd(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] momentum_buffers, float lr, "
          "float momentum, float weight_decay, bool nesterov, Tensor(c!)[] master_weights) -> ()",
          &op_fused_sgd);
    m.def("fused_adamw(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, "
          "int[] steps, float lr, float beta1, float beta2, float eps, float weight_decay, "
          "Tensor(d!)[] master_weights) -> ()",
          &op_fused_adamw);
    m.def("fused_adagrad(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] sums, int[] steps, float lr, "
          "float lr_decay, float weight_decay, float eps, Tensor(c!)[] master_weights) -> ()",
          &op_fused_adagrad);
    m.def("fused_lamb(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, "
          "int[] steps, float lr, float beta1, float beta2, float eps, float weight_decay, "
          "Tensor[] master_weights, Tensor[] segments) -> ()",
          &op_fused_lamb);
}

} // namespace hpu_torch
