// SPDX-License-Identifier: MIT
// ops_math.cpp - the compute ops of the HPU backend: elementwise
// arithmetic, reductions, log-softmax, ReLU, dropout, argmax on the TPC
// (libhpu's kernel library), matrix products on the MME. An op whose
// dtypes or arguments no kernel covers hands its arguments to the CPU
// fallback (fallback.cpp), which counts it.
//
// Copyright (c) 2026 The hpu authors
#include <ATen/Operators.h>
#include <ATen/ExpandUtils.h>
#include <ATen/ScalarOps.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>
#include <ATen/ops/dropout_native.h>
#include <torch/library.h>

#include <bit>
#include <numeric>

#include "launch.h"
#include "ops_nn.h"

namespace hpu_torch {

namespace {

template <class Op>
using Fallback = at::native::call_fallback_fn<&cpu_fallback, Op>;

std::uint32_t fbits(float f) { return std::bit_cast<std::uint32_t>(f); }

// A CPU tensor of one element (a Python number or a 0-dim CPU tensor).
bool host_scalar(const at::Tensor &t) { return !is_hpu(t) && t.dim() == 0; }

// t as an HPU tensor of dtype (a host scalar filled on the device, another
// dtype cast by a kernel); t itself when it already is one.
at::Tensor on_device(const at::Tensor &t, c10::ScalarType dtype, c10::Device device)
{
    if (host_scalar(t)) {
        at::Tensor d = empty_hpu({}, dtype, device);
        fill_hpu(d, t.item());
        return d;
    }
    if (t.scalar_type() == dtype)
        return t;
    at::Tensor d = empty_hpu(t.sizes(), dtype, device);
    copy_into(d, t);
    return d;
}

// An out= tensor of another shape is resized to the result's (the
// structured ops' wrappers size their own outputs; out= arguments come as
// the caller gave them).
void fit(const at::Tensor &out, at::IntArrayRef shape)
{
    if (out.sizes() != shape)
        (void)at::native::resize_output(out, shape);
}

std::vector<std::int64_t> broadcast(std::initializer_list<const at::Tensor *> ts)
{
    std::vector<std::int64_t> shape;
    for (const at::Tensor *t : ts)
        shape = at::infer_size(shape, t->sizes());
    return shape;
}

// Whether the TPC library has the kernel "<base>_<suffix of dtype>".
std::string kernel_for(const char *base, c10::ScalarType dtype)
{
    const std::uint32_t dt = device_dtype(dtype);
    if (dt == 0 || dtype == c10::ScalarType::Bool)
        return {};
    std::string k = std::string(base) + "_" + dtype_suffix(dt);
    return DeviceContext::has_kernel(k) ? k : std::string();
}

// Inputs on the out's device or host scalars; out on an HPU.
bool placeable(const at::Tensor &out, std::initializer_list<const at::Tensor *> in)
{
    if (!is_hpu(out))
        return false;
    for (const at::Tensor *t : in)
        check_same_device(out, *t);
    return std::all_of(in.begin(), in.end(), [&](const at::Tensor *t) {
        return host_scalar(*t) || (is_hpu(*t) && t->device() == out.device());
    });
}

// An out= tensor takes a result only of a type it can be cast to, as on
// the CPU (float into an integer out is an error, not a truncation).
void check_out_type(const at::Tensor &out, const at::Tensor &a, const at::Tensor &b)
{
    const c10::ScalarType t = at::result_type(a, b);
    TORCH_CHECK(at::canCast(t, out.scalar_type()), "result type ", t, " can't be cast to the desired output type ",
                out.scalar_type());
}

// The type PyTorch computes an elementwise op in: its inputs' common
// type (out= excluded), an integral one made the default float type for
// ops that promote integers (true division, exp, ...).
c10::ScalarType common_type(std::initializer_list<const at::Tensor *> in, bool int_to_float = false)
{
    at::native::ResultTypeState state{};
    for (const at::Tensor *t : in)
        state = at::native::update_result_type_state(*t, state);
    const c10::ScalarType t = at::native::result_type(state);
    if (int_to_float && at::isIntegralType(t, /*includeBool=*/true))
        return c10::typeMetaToScalarType(at::get_default_dtype());
    return t;
}

// TensorIterator computes in the common type and casts the result to out
// (cast_common_dtype_to_outputs): when out's type is another, run(tmp)
// computes into a temporary of type common, which is then cast into out
// (int32 products wrap, BF16 results are rounded, as on the CPU). False
// when out already has that type, or out is not on an HPU: the caller
// computes in place.
template <class Fn>
bool via_common_type(c10::ScalarType common, at::IntArrayRef shape, const at::Tensor &out, Fn &&run)
{
    if (!is_hpu(out) || common == out.scalar_type())
        return false;
    at::Tensor tmp = empty_hpu(shape, common, out.device());
    run(tmp);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, shape);
    copy_into(out, tmp);
    return true;
}

// out = kernel(a, b) elementwise, a and b broadcast to out.
void binary(DeviceContext &ctx, const std::string &k, const at::Tensor &a, const at::Tensor &b, const at::Tensor &out)
{
    const at::Tensor da = on_device(a, out.scalar_type(), out.device());
    const at::Tensor db = on_device(b, out.scalar_type(), out.device());
    launch_ew(ctx, k, out.sizes(), {operand(da, out.sizes()), operand(db, out.sizes()), operand(out, out.sizes())});
}

// out = alpha x + y (one rounding), x and y broadcast to out.
void axpy(DeviceContext &ctx, const std::string &k, float alpha, const at::Tensor &x, const at::Tensor &y,
          const at::Tensor &out)
{
    const at::Tensor dx = on_device(x, out.scalar_type(), out.device());
    const at::Tensor dy = on_device(y, out.scalar_type(), out.device());
    launch_ew(ctx, k, out.sizes(), {operand(dx, out.sizes()), operand(dy, out.sizes()), operand(out, out.sizes())},
              {fbits(alpha)});
}

// ---- elementwise ---------------------------------------------------------

// out = self + sign alpha other: the add or sub kernel, or axpy with
// alpha other (one rounding) when alpha is not 1.
template <class Op>
at::Tensor &add_sub(const char *base, float sign, const at::Tensor &self, const at::Tensor &other,
                    const c10::Scalar &alpha, at::Tensor &out)
{
    check_out_type(out, self, other);
    if (placeable(out, {&self, &other}) &&
        via_common_type(common_type({&self, &other}), broadcast({&self, &other}), out,
                        [&](at::Tensor &t) { add_sub<Op>(base, sign, self, other, alpha, t); }))
        return out;
    const bool one = alpha.equal(1);
    if (out.scalar_type() == c10::ScalarType::Long && alpha.isIntegral(false) &&
        add_int64(self, other, sign < 0 ? c10::Scalar(-alpha.toLong()) : alpha, out))
        return out; // ops_nn.cpp
    const std::string k = kernel_for(one ? base : "axpy", out.scalar_type());
    if (k.empty() || !placeable(out, {&self, &other}))
        return Fallback<Op>::call(self, other, alpha, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, broadcast({&self, &other}));
    if (one) {
        binary(ctx, k, self, other, out);
    } else {
        axpy(ctx, k, sign * alpha.toFloat(), other, self, out);
    }
    return out;
}

at::Tensor &add_out(const at::Tensor &self, const at::Tensor &other, const c10::Scalar &alpha, at::Tensor &out)
{
    return add_sub<ATEN_OP2(add, out)>("add", 1.0F, self, other, alpha, out);
}

at::Tensor &sub_out(const at::Tensor &self, const at::Tensor &other, const c10::Scalar &alpha, at::Tensor &out)
{
    return add_sub<ATEN_OP2(sub, out)>("sub", -1.0F, self, other, alpha, out);
}

at::Tensor &mul_out(const at::Tensor &self, const at::Tensor &other, at::Tensor &out)
{
    check_out_type(out, self, other);
    if (placeable(out, {&self, &other}) && via_common_type(common_type({&self, &other}), broadcast({&self, &other}),
                                                           out, [&](at::Tensor &t) { mul_out(self, other, t); }))
        return out;
    const std::string k = kernel_for("mul", out.scalar_type());
    if (k.empty() || !placeable(out, {&self, &other}))
        return Fallback<ATEN_OP2(mul, out)>::call(self, other, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, broadcast({&self, &other}));
    binary(ctx, k, self, other, out);
    return out;
}

at::Tensor &div_out(const at::Tensor &self, const at::Tensor &other, at::Tensor &out)
{
    // Integer division is true division in PyTorch (a float out): only
    // the float kernels apply.
    check_out_type(out, self, other);
    if (placeable(out, {&self, &other}) &&
        via_common_type(common_type({&self, &other}, true), broadcast({&self, &other}), out,
                        [&](at::Tensor &t) { div_out(self, other, t); }))
        return out;
    const std::string k = at::isFloatingType(out.scalar_type()) ? kernel_for("div", out.scalar_type()) : "";
    if (k.empty() || !placeable(out, {&self, &other}))
        return Fallback<ATEN_OP2(div, out)>::call(self, other, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, broadcast({&self, &other}));
    binary(ctx, k, self, other, out);
    return out;
}

// out = self + (value t1) op t2 (PyTorch's CPU order, each operation
// rounded): the fused addcmul_/addcdiv_ kernels.
at::Tensor &addc(const char *op, const at::Tensor &self, const at::Tensor &t1, const at::Tensor &t2,
                 const c10::Scalar &value, at::Tensor &out)
{
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, broadcast({&self, &t1, &t2}));
    const auto &sz = out.sizes();
    const c10::ScalarType dt = out.scalar_type();
    const c10::Device d = out.device();
    launch_ew(ctx, kernel_for(op, dt), sz,
              {operand(on_device(self, dt, d), sz), operand(on_device(t1, dt, d), sz), operand(on_device(t2, dt, d), sz),
               operand(out, sz)},
              {fbits(value.toFloat())});
    return out;
}

at::Tensor &addcmul_out(const at::Tensor &self, const at::Tensor &t1, const at::Tensor &t2, const c10::Scalar &value,
                        at::Tensor &out)
{
    if (float_suffix(out.scalar_type()).empty() || !placeable(out, {&self, &t1, &t2}))
        return Fallback<ATEN_OP2(addcmul, out)>::call(self, t1, t2, value, out);
    if (via_common_type(common_type({&self, &t1, &t2}), broadcast({&self, &t1, &t2}), out,
                        [&](at::Tensor &t) { addcmul_out(self, t1, t2, value, t); }))
        return out;
    return addc("addcmul", self, t1, t2, value, out);
}

at::Tensor &addcdiv_out(const at::Tensor &self, const at::Tensor &t1, const at::Tensor &t2, const c10::Scalar &value,
                        at::Tensor &out)
{
    if (float_suffix(out.scalar_type()).empty() || !placeable(out, {&self, &t1, &t2}))
        return Fallback<ATEN_OP2(addcdiv, out)>::call(self, t1, t2, value, out);
    if (via_common_type(common_type({&self, &t1, &t2}), broadcast({&self, &t1, &t2}), out,
                        [&](at::Tensor &t) { addcdiv_out(self, t1, t2, value, t); }))
        return out;
    return addc("addcdiv", self, t1, t2, value, out);
}

at::Tensor relu(const at::Tensor &self)
{
    const std::string k = kernel_for("relu", self.scalar_type());
    if (k.empty() || float_suffix(self.scalar_type()).empty())
        return Fallback<ATEN_OP(relu)>::call(self);
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    at::Tensor out = empty_hpu(self.sizes(), self.scalar_type(), self.device());
    launch_ew(ctx, k, out.sizes(), {operand(self, out.sizes()), operand(out, out.sizes())});
    return out;
}

at::Tensor &relu_(at::Tensor &self)
{
    const std::string k = float_suffix(self.scalar_type()).empty() ? "" : kernel_for("relu", self.scalar_type());
    if (k.empty())
        return Fallback<ATEN_OP(relu_)>::call(self);
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    launch_ew(ctx, k, self.sizes(), {operand(self, self.sizes()), operand(self, self.sizes())});
    return self;
}

// ReLU's gradient: grad where self > threshold (0), else 0.
at::Tensor &threshold_backward_out(const at::Tensor &grad, const at::Tensor &self, const c10::Scalar &threshold,
                                   at::Tensor &grad_input)
{
    const std::string k = float_suffix(grad_input.scalar_type()).empty()
                              ? ""
                              : kernel_for("relu_grad", grad_input.scalar_type());
    if (k.empty() || !threshold.equal(0) || !placeable(grad_input, {&grad, &self}))
        return Fallback<ATEN_OP2(threshold_backward, grad_input)>::call(grad, self, threshold, grad_input);
    if (via_common_type(common_type({&grad, &self}), broadcast({&grad, &self}), grad_input,
                        [&](at::Tensor &t) { threshold_backward_out(grad, self, threshold, t); }))
        return grad_input;
    DeviceContext &ctx = context_of(grad_input);
    auto lock = ctx.lock();
    fit(grad_input, broadcast({&grad, &self}));
    const auto &sz = grad_input.sizes();
    const at::Tensor x = on_device(self, grad_input.scalar_type(), grad_input.device());
    const at::Tensor dy = on_device(grad, grad_input.scalar_type(), grad_input.device());
    launch_ew(ctx, k, sz, {operand(x, sz), operand(dy, sz), operand(grad_input, sz)});
    return grad_input;
}

// ---- unary math and comparisons ------------------------------------------

// out = kernel(self) elementwise, for the float types the library covers;
// false when no kernel applies (the caller falls back). A floating op
// (exp, ...) computes in self's type (integers as the default float type)
// and casts into out; the others (neg, abs, sign, GELU) take an out of
// self's type only, as on the CPU (whose error the fallback raises).
bool unary(const char *base, const at::Tensor &self, at::Tensor &out, bool floating)
{
    const std::string k = float_suffix(out.scalar_type()).empty() ? "" : kernel_for(base, out.scalar_type());
    if (k.empty() || !placeable(out, {&self}) || host_scalar(self))
        return false;
    const c10::ScalarType common = common_type({&self}, floating);
    if (common != out.scalar_type()) {
        if (!floating || float_suffix(common).empty() || kernel_for(base, common).empty())
            return false;
        return via_common_type(common, self.sizes(), out, [&](at::Tensor &t) { (void)unary(base, self, t, true); });
    }
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, self.sizes());
    const at::Tensor x = on_device(self, out.scalar_type(), out.device());
    launch_ew(ctx, k, out.sizes(), {operand(x, out.sizes()), operand(out, out.sizes())});
    return true;
}

#define HPU_UNARY(name, floating)                                                                                    \
    at::Tensor &name##_out(const at::Tensor &self, at::Tensor &out)                                                  \
    {                                                                                                                \
        if (!unary(#name, self, out, floating))                                                                      \
            return Fallback<ATEN_OP2(name, out)>::call(self, out);                                                   \
        return out;                                                                                                  \
    }
HPU_UNARY(neg, false)
HPU_UNARY(abs, false)
HPU_UNARY(sign, false)
HPU_UNARY(exp, true)
HPU_UNARY(log, true)
HPU_UNARY(sqrt, true)
HPU_UNARY(rsqrt, true)
HPU_UNARY(reciprocal, true)
HPU_UNARY(tanh, true)
HPU_UNARY(sigmoid, true)
#undef HPU_UNARY

at::Tensor &gelu_out(const at::Tensor &self, c10::string_view approximate, at::Tensor &out)
{
    // The library's GELU is the erf form.
    if (approximate != "none" || !unary("gelu", self, out, false))
        return Fallback<ATEN_OP2(gelu, out)>::call(self, approximate, out);
    return out;
}

// dx = kernel(first, dy): the gradients of the activations, first being
// the forward output (tanh, sigmoid) or input (GELU).
bool activation_grad(const char *base, const at::Tensor &first, const at::Tensor &dy, at::Tensor &dx)
{
    const std::string k = float_suffix(dx.scalar_type()).empty() ? "" : kernel_for(base, dx.scalar_type());
    if (k.empty() || !placeable(dx, {&first, &dy}) || host_scalar(first) || host_scalar(dy))
        return false;
    const c10::ScalarType common = common_type({&first, &dy});
    if (common != dx.scalar_type()) {
        if (float_suffix(common).empty() || kernel_for(base, common).empty())
            return false;
        return via_common_type(common, broadcast({&first, &dy}), dx,
                               [&](at::Tensor &t) { (void)activation_grad(base, first, dy, t); });
    }
    DeviceContext &ctx = context_of(dx);
    auto lock = ctx.lock();
    fit(dx, broadcast({&first, &dy}));
    const auto &sz = dx.sizes();
    launch_ew(ctx, k, sz,
              {operand(on_device(first, dx.scalar_type(), dx.device()), sz),
               operand(on_device(dy, dx.scalar_type(), dx.device()), sz), operand(dx, sz)});
    return true;
}

at::Tensor &tanh_backward_out(const at::Tensor &grad_output, const at::Tensor &output, at::Tensor &grad_input)
{
    if (!activation_grad("tanh_grad", output, grad_output, grad_input))
        return Fallback<ATEN_OP2(tanh_backward, grad_input)>::call(grad_output, output, grad_input);
    return grad_input;
}

at::Tensor &sigmoid_backward_out(const at::Tensor &grad_output, const at::Tensor &output, at::Tensor &grad_input)
{
    if (!activation_grad("sigmoid_grad", output, grad_output, grad_input))
        return Fallback<ATEN_OP2(sigmoid_backward, grad_input)>::call(grad_output, output, grad_input);
    return grad_input;
}

at::Tensor &gelu_backward_out(const at::Tensor &grad_output, const at::Tensor &self, c10::string_view approximate,
                              at::Tensor &grad_input)
{
    if (approximate != "none" || !activation_grad("gelu_grad", self, grad_output, grad_input))
        return Fallback<ATEN_OP2(gelu_backward, grad_input)>::call(grad_output, self, approximate, grad_input);
    return grad_input;
}

at::Tensor &clamp_out(const at::Tensor &self, const c10::optional<c10::Scalar> &min,
                      const c10::optional<c10::Scalar> &max, at::Tensor &out)
{
    const std::string k = float_suffix(out.scalar_type()).empty() ? "" : kernel_for("clamp", out.scalar_type());
    // An out of another type than self's: the CPU's rules (type promotion
    // with the bounds, an error for others), there.
    if (k.empty() || !placeable(out, {&self}) || host_scalar(self) || (!min.has_value() && !max.has_value()) ||
        self.scalar_type() != out.scalar_type())
        return Fallback<ATEN_OP2(clamp, out)>::call(self, min, max, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, self.sizes());
    const float lo = min.has_value() ? min->toFloat() : -std::numeric_limits<float>::infinity();
    const float hi = max.has_value() ? max->toFloat() : std::numeric_limits<float>::infinity();
    const auto &sz = out.sizes();
    launch_ew(ctx, k, sz, {operand(on_device(self, out.scalar_type(), out.device()), sz), operand(out, sz)},
              {fbits(lo), fbits(hi)});
    return out;
}

at::Tensor &where_out(const at::Tensor &condition, const at::Tensor &self, const at::Tensor &other, at::Tensor &out);

// torch.where(c, a, b): the result in the promoted type, broadcast.
at::Tensor where(const at::Tensor &condition, const at::Tensor &self, const at::Tensor &other)
{
    const c10::Device d = is_hpu(self) ? self.device() : is_hpu(other) ? other.device() : condition.device();
    at::Tensor out = empty_hpu(broadcast({&condition, &self, &other}), at::result_type(self, other), d);
    return where_out(condition, self, other, out);
}

// out = condition ? self : other, moving bits (where_b32, where_b16).
at::Tensor &where_out(const at::Tensor &condition, const at::Tensor &self, const at::Tensor &other, at::Tensor &out)
{
    const std::size_t esize = out.element_size();
    const bool ok = (esize == 4 || esize == 2) && device_dtype(out.scalar_type()) != 0 &&
                    condition.scalar_type() == c10::ScalarType::Bool && is_hpu(condition) &&
                    placeable(out, {&condition, &self, &other}) &&
                    at::result_type(self, other) == out.scalar_type(); // else the CPU's error
    if (!ok)
        return Fallback<ATEN_OP2(where, self_out)>::call(condition, self, other, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, broadcast({&condition, &self, &other}));
    const auto &sz = out.sizes();
    const std::uint32_t bits = esize == 4 ? HPU_DTYPE_UINT32 : HPU_DTYPE_UINT16;
    launch_ew(ctx, esize == 4 ? "where_b32" : "where_b16", sz,
              {operand_as(condition, sz, HPU_DTYPE_UINT8),
               operand_as(on_device(self, out.scalar_type(), out.device()), sz, bits),
               operand_as(on_device(other, out.scalar_type(), out.device()), sz, bits), operand_as(out, sz, bits)});
    return out;
}

// The type both sides of a comparison are compared in, or Undefined when
// no kernel covers it.
c10::ScalarType compare_type(const at::Tensor &a, const at::Tensor &b)
{
    const c10::ScalarType t = at::result_type(a, b);
    if (t == c10::ScalarType::Float || t == c10::ScalarType::BFloat16 || t == c10::ScalarType::Int ||
        t == c10::ScalarType::Long)
        return t;
    return c10::ScalarType::Undefined;
}

// int64 a op b for eq and ne: both 32-bit words compared (eq_i32 or
// ne_i32), combined with mul_u8 (and) or max_u8 (or).
void compare_long(DeviceContext &ctx, bool eq, const at::Tensor &a, const at::Tensor &b, const at::Tensor &out)
{
    const auto &sz = out.sizes();
    const at::Tensor da = on_device(a, c10::ScalarType::Long, out.device());
    const at::Tensor db = on_device(b, c10::ScalarType::Long, out.device());
    at::Tensor lo = empty_hpu(sz, c10::ScalarType::Bool, out.device());
    at::Tensor hi = empty_hpu(sz, c10::ScalarType::Bool, out.device());
    for (const bool high : {false, true}) {
        std::vector<Operand> ops;
        for (const at::Tensor *t : {&da, &db}) {
            Operand o = operand_as(*t, sz, HPU_DTYPE_INT32);
            for (auto &st : o.strides)
                st *= 2;
            if (high)
                o.va += 4;
            ops.push_back(o);
        }
        ops.push_back(operand_as(high ? hi : lo, sz, HPU_DTYPE_UINT8));
        launch_ew(ctx, eq ? "eq_i32" : "ne_i32", sz, ops);
    }
    launch_ew(ctx, eq ? "mul_u8" : "max_u8", sz,
              {operand_as(lo, sz, HPU_DTYPE_UINT8), operand_as(hi, sz, HPU_DTYPE_UINT8),
               operand_as(out, sz, HPU_DTYPE_UINT8)});
}

// out (bool) = a op b, on the device when a kernel covers the type.
bool compare(const char *op, const at::Tensor &a, const at::Tensor &b, at::Tensor &out)
{
    const c10::ScalarType t = compare_type(a, b);
    const bool equality = std::string(op) == "eq" || std::string(op) == "ne";
    if (t == c10::ScalarType::Undefined || (t == c10::ScalarType::Long && !equality) ||
        out.scalar_type() != c10::ScalarType::Bool || !placeable(out, {&a, &b}))
        return false;
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, broadcast({&a, &b}));
    if (t == c10::ScalarType::Long) {
        compare_long(ctx, std::string(op) == "eq", a, b, out);
        return true;
    }
    const auto &sz = out.sizes();
    const at::Tensor da = on_device(a, t, out.device());
    const at::Tensor db = on_device(b, t, out.device());
    launch_ew(ctx, std::string(op) + "_" + dtype_suffix(device_dtype(t)), sz,
              {operand(da, sz), operand(db, sz), operand_as(out, sz, HPU_DTYPE_UINT8)});
    return true;
}

#define HPU_COMPARE(name)                                                                                            \
    at::Tensor &name##_tensor_out(const at::Tensor &self, const at::Tensor &other, at::Tensor &out)                  \
    {                                                                                                                \
        if (!compare(#name, self, other, out))                                                                       \
            return Fallback<ATEN_OP2(name, Tensor_out)>::call(self, other, out);                                    \
        return out;                                                                                                  \
    }                                                                                                                \
    at::Tensor &name##_scalar_out(const at::Tensor &self, const c10::Scalar &other, at::Tensor &out)                 \
    {                                                                                                                \
        if (!compare(#name, self, at::native::wrapped_scalar_tensor(other), out))                                    \
            return Fallback<ATEN_OP2(name, Scalar_out)>::call(self, other, out);                                    \
        return out;                                                                                                  \
    }
HPU_COMPARE(eq)
HPU_COMPARE(ne)
HPU_COMPARE(lt)
HPU_COMPARE(le)
HPU_COMPARE(gt)
HPU_COMPARE(ge)
#undef HPU_COMPARE

// ---- random fills ------------------------------------------------------------

// self = kernel(a, b) drawn on the device (dense; a strided self through a
// dense temporary).
at::Tensor &random_fill(const char *base, at::Tensor &self, float a, float b,
                        const c10::optional<at::Generator> &gen)
{
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    const std::string k = std::string(base) + "_" + float_suffix(self.scalar_type());
    at::Tensor target = self.is_contiguous() ? self : empty_hpu(self.sizes(), self.scalar_type(), self.device());
    const std::int64_t n = target.numel();
    if (n > 0) {
        const at::Tensor flat = target.view({n});
        launch_ew(ctx, k, {n}, {operand(flat, {n})}, {fbits(a), fbits(b)}, next_seed(gen, self.device()));
    }
    if (!self.is_contiguous())
        copy_into(self, target);
    return self;
}

at::Tensor &uniform_(at::Tensor &self, double from, double to, c10::optional<at::Generator> gen)
{
    if (float_suffix(self.scalar_type()).empty())
        return Fallback<ATEN_OP(uniform_)>::call(self, from, to, std::move(gen));
    return random_fill("uniform", self, static_cast<float>(from), static_cast<float>(to), gen);
}

at::Tensor &normal_(at::Tensor &self, double mean, double std, c10::optional<at::Generator> gen)
{
    if (float_suffix(self.scalar_type()).empty())
        return Fallback<ATEN_OP(normal_)>::call(self, mean, std, std::move(gen));
    return random_fill("normal", self, static_cast<float>(mean), static_cast<float>(std), gen);
}

// self = integers drawn uniformly from [from, to) (torch.randint): FP32
// uniform_f32 draws in [0, to - from) cut toward zero (cast_f32_i32), kept
// below to - from (min_i32, a guard), from added (add_i32), then cast or
// widened into self. Only spans 2^m up to 2^24: uniform_f32's u is k 2^-24
// for k uniform in [0, 2^24), so u 2^m = k 2^(m-24) is exact and its
// integer part k >> (24 - m) exactly uniform. No 24-bit draw maps onto
// another span uniformly (2^24 is not a multiple of it): those go to the
// CPU (the fallback).
at::Tensor &random_from(at::Tensor &self, std::int64_t from, c10::optional<std::int64_t> to,
                        c10::optional<at::Generator> gen)
{
    constexpr std::int64_t kSpan = 1 << 24;
    const std::int64_t span = to.has_value() ? *to - from : 0;
    const c10::ScalarType t = self.scalar_type();
    const bool typed = t == c10::ScalarType::Long || t == c10::ScalarType::Int || !float_suffix(t).empty();
    if (!typed || span <= 0 || span > kSpan || (span & (span - 1)) != 0 || from < std::numeric_limits<std::int32_t>::min() ||
        *to > std::numeric_limits<std::int32_t>::max())
        return Fallback<ATEN_OP2(random_, from)>::call(self, from, to, std::move(gen));
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    const std::int64_t n = self.numel();
    if (n == 0)
        return self;
    const c10::Device d = self.device();
    at::Tensor u = empty_hpu({n}, c10::ScalarType::Float, d);
    launch_ew(ctx, "uniform_f32", {n}, {operand(u, {n})}, {fbits(0.0F), fbits(static_cast<float>(span))},
              next_seed(gen, self.device()));
    at::Tensor i = empty_hpu({n}, c10::ScalarType::Int, d);
    launch_ew(ctx, "cast_f32_i32", {n}, {operand(u, {n}), operand(i, {n})});
    at::Tensor top = empty_hpu({}, c10::ScalarType::Int, d);
    fill_hpu(top, span - 1);
    launch_ew(ctx, "min_i32", {n}, {operand(i, {n}), operand(top, {n}), operand(i, {n})});
    if (from != 0) {
        at::Tensor base = empty_hpu({}, c10::ScalarType::Int, d);
        fill_hpu(base, from);
        launch_ew(ctx, "add_i32", {n}, {operand(i, {n}), operand(base, {n}), operand(i, {n})});
    }
    copy_into(self, i.view(self.sizes()));
    return self;
}

// ---- dropout -------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor> native_dropout(const at::Tensor &input, double p, c10::optional<bool> train)
{
    const std::string sfx = float_suffix(input.scalar_type());
    if ((train.has_value() && !*train) || p <= 0 || p >= 1)
        return Fallback<ATEN_OP(native_dropout)>::call(input, p, train); // draws nothing
    if (sfx.empty()) {
        // No kernel (float16, float64): on the host as ATen's CPU kernel
        // does, but the mask drawn with a CPU generator of the HPU
        // generator's next key (native_dropout has no generator argument
        // for the fallback to replace: it would draw from the CPU's).
        count_fallback("aten::native_dropout");
        at::Generator g = cpu_generator_for(c10::nullopt, input.device());
        // The CPU has no float16 bernoulli_: the mask and the product are
        // computed in float32 then, the result rounded once to float16.
        const at::ScalarType wt = input.scalar_type() == at::kHalf ? at::kFloat : input.scalar_type();
        const at::Tensor x = input.cpu().to(wt);
        const double keep_p = 1.0 - p;
        at::Tensor keep = at::empty(x.sizes(), x.options()).bernoulli_(keep_p, g);
        at::Tensor out = x.mul(keep).mul_(1.0 / keep_p).to(input.scalar_type());
        return {out.to(input.device()), keep.to(at::kBool).to(input.device())};
    }
    DeviceContext &ctx = context_of(input);
    auto lock = ctx.lock();
    const auto &sz = input.sizes();
    const at::Tensor x = input.is_contiguous() ? input : input.contiguous();
    at::Tensor out = empty_hpu(sz, input.scalar_type(), input.device());
    at::Tensor ones = empty_hpu(sz, c10::ScalarType::Float, input.device());
    at::Tensor keep = empty_hpu(sz, c10::ScalarType::Float, input.device());
    at::Tensor mask = empty_hpu(sz, c10::ScalarType::Bool, input.device());
    fill_hpu(ones, 1.0);
    const auto pf = static_cast<float>(p);
    const float scale = 1.0F / (1.0F - pf);
    const std::uint64_t seed = next_seed(c10::nullopt, input.device());
    // The mask depends on the seed and the element's place only: the same
    // draw on ones (scale 1) gives it as 1 or 0, cast to bool.
    launch_ew(ctx, "dropout_" + sfx, sz, {operand(x, sz), operand(out, sz)}, {fbits(pf), fbits(scale)}, seed);
    launch_ew(ctx, "dropout_f32", sz, {operand(ones, sz), operand(keep, sz)}, {fbits(pf), fbits(1.0F)}, seed);
    launch_ew(ctx, "cast_f32_u8", sz, {operand(keep, sz), operand(mask, sz)});
    return {out, mask};
}

at::Tensor native_dropout_backward(const at::Tensor &grad, const at::Tensor &mask, double scale)
{
    const std::string sfx = float_suffix(grad.scalar_type());
    if (sfx.empty() || mask.scalar_type() != c10::ScalarType::Bool || !is_hpu(mask))
        return Fallback<ATEN_OP(native_dropout_backward)>::call(grad, mask, scale);
    DeviceContext &ctx = context_of(grad);
    auto lock = ctx.lock();
    const auto &sz = grad.sizes();
    at::Tensor m = empty_hpu(sz, grad.scalar_type(), grad.device());
    launch_ew(ctx, "cast_u8_" + sfx, sz, {operand_as(mask, sz, HPU_DTYPE_UINT8), operand(m, sz)});
    at::Tensor tmp = empty_hpu(sz, grad.scalar_type(), grad.device());
    binary(ctx, "mul_" + sfx, grad, m, tmp);
    at::Tensor out = empty_hpu(sz, grad.scalar_type(), grad.device());
    launch_ew(ctx, "scale_" + sfx, sz, {operand(tmp, sz), operand(out, sz)}, {fbits(static_cast<float>(scale))});
    return out;
}

// nn.Dropout calls aten::dropout, a composite op that PyTorch decomposes
// into bernoulli_ and a multiplication except on CUDA, where it takes the
// fused native_dropout (with native_dropout_backward as its gradient). The
// HPU takes the fused path too: this kernel sits at the AutogradHPU key, so
// the native_dropout it calls records its own backward, as on CUDA.
at::Tensor dropout(const at::Tensor &input, double p, bool train)
{
    if (train && p > 0 && p < 1 && input.numel() > 0 && !float_suffix(input.scalar_type()).empty())
        return std::get<0>(at::native_dropout(input, p, train));
    return at::native::dropout(input, p, train);
}

// ---- reductions and rows -------------------------------------------------

// x with the dims of `reduce` moved last and merged into one (a dense copy
// when they cannot be merged): the row operand over them, and the kept
// dims' sizes.
struct Rows {
    RowOperand x;
    std::vector<std::int64_t> sizes;
};

Rows reduce_rows(DeviceContext &ctx, const at::Tensor &self, const std::vector<bool> &reduce, std::uint32_t pad)
{
    std::vector<std::int64_t> perm;
    for (std::int64_t d = 0; d < self.dim(); ++d) {
        if (!reduce[static_cast<std::size_t>(d)])
            perm.push_back(d);
    }
    const auto kept = static_cast<std::int64_t>(perm.size());
    for (std::int64_t d = 0; d < self.dim(); ++d) {
        if (reduce[static_cast<std::size_t>(d)])
            perm.push_back(d);
    }
    at::Tensor xp = self.permute(perm);
    // Size-1 dims take no part: their strides are arbitrary. Each other
    // reduced dim must step over the whole of the next such dim.
    bool mergeable = true;
    std::int64_t inner = -1; // the next reduced dim of more than one element
    for (std::int64_t d = xp.dim() - 1; d >= kept; --d) {
        if (xp.size(d) == 1)
            continue;
        if (inner >= 0)
            mergeable = mergeable && xp.stride(d) == xp.stride(inner) * xp.size(inner);
        inner = d;
    }
    if (!mergeable) {
        at::Tensor c = empty_hpu(xp.sizes(), xp.scalar_type(), xp.device());
        copy_into(c, xp);
        xp = c;
    }
    Rows r;
    r.x.va = va_of(xp);
    r.x.dtype = device_dtype(xp.scalar_type());
    r.x.pad = pad;
    r.x.size0 = 1;
    r.x.stride0 = 1;
    for (std::int64_t d = xp.dim() - 1; d >= kept; --d) {
        if (xp.size(d) != 1 && r.x.size0 == 1)
            r.x.stride0 = xp.stride(d); // the innermost dimension of more than one element
        r.x.size0 *= xp.size(d);
    }
    for (std::int64_t d = 0; d < kept; ++d) {
        r.sizes.push_back(xp.size(d));
        r.x.row_strides.push_back(xp.stride(d));
    }
    (void)ctx;
    return r;
}

// The per-row result operand: out's strides of the kept dims.
RowOperand row_result(const at::Tensor &out, const std::vector<bool> &reduce, bool keepdim, std::uint32_t dtype)
{
    RowOperand o;
    o.va = va_of(out);
    o.dtype = dtype;
    std::int64_t od = 0;
    for (const bool r : reduce) {
        if (r) {
            if (keepdim)
                ++od;
            continue;
        }
        o.row_strides.push_back(out.stride(od++));
    }
    return o;
}

// The dims of self a reduction over dim reduces. A 0-dim tensor has none
// (its dims 0 and -1 name the tensor itself, as on the CPU).
std::vector<bool> reduced_dims(const at::Tensor &self, at::OptionalIntArrayRef dim)
{
    std::vector<bool> r(static_cast<std::size_t>(self.dim()), !dim.has_value() || dim->empty());
    if (dim.has_value()) {
        for (const std::int64_t d : *dim) {
            const std::int64_t w = c10::maybe_wrap_dim(d, self.dim()); // IndexError out of range
            if (self.dim() > 0)
                r.at(static_cast<std::size_t>(w)) = true;
        }
    }
    return r;
}

// The shape of a reduction of self over the dims of `reduce`.
std::vector<std::int64_t> reduced_shape(const at::Tensor &self, const std::vector<bool> &reduce, bool keepdim)
{
    std::vector<std::int64_t> shape;
    for (std::int64_t d = 0; d < self.dim(); ++d) {
        if (!reduce[static_cast<std::size_t>(d)]) {
            shape.push_back(self.size(d));
        } else if (keepdim) {
            shape.push_back(1);
        }
    }
    return shape;
}

// out (int64 or int32) = the sum of a bool or small integer self over
// dims: self cast to FP32, reduce_sum_f32, the FP32 sums cast to INT32
// (exact) and widened for int64. Exact, in any order of summation, while
// every partial sum is an integer of magnitude at most 2^24: at most 2^24
// elements per sum of bools, 2^16 of 8-bit integers, 2^8 of 16-bit ones.
// Other sums (int32, int64, more elements) go to the CPU (the caller's
// fallback): the device has no exact path for them.
bool sum_integers(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim, const at::Tensor &out)
{
    const c10::ScalarType ot = out.scalar_type();
    const c10::ScalarType st = self.scalar_type();
    if (!at::isIntegralType(st, true) || (ot != c10::ScalarType::Long && ot != c10::ScalarType::Int) ||
        !placeable(out, {&self}) || host_scalar(self))
        return false;
    const std::vector<bool> red = reduced_dims(self, dim);
    std::int64_t per_sum = 1;
    for (std::size_t d = 0; d < red.size(); ++d)
        per_sum *= red[d] ? self.size(static_cast<std::int64_t>(d)) : 1;
    const bool byte = st == c10::ScalarType::Byte || st == c10::ScalarType::Char;
    const int bits = st == c10::ScalarType::Bool ? 24 : byte ? 16 : st == c10::ScalarType::Short ? 8 : -1;
    if (bits < 0 || per_sum > (std::int64_t{1} << bits))
        return false;
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    const std::vector<std::int64_t> shape = reduced_shape(self, red, keepdim);
    fit(out, shape);
    if (self.numel() == 0) {
        fill_hpu(out, 0);
        return true;
    }
    if (self.dim() == 0) { // the sum of one element: itself
        copy_into(out, self);
        return true;
    }
    const at::Tensor x = on_device(self, c10::ScalarType::Float, out.device());
    at::Tensor sums = empty_hpu(shape, c10::ScalarType::Float, out.device());
    const Rows r = reduce_rows(ctx, x, red, 0);
    launch_rows(ctx, "reduce_sum_f32", r.sizes, {r.x, row_result(sums, red, keepdim, HPU_DTYPE_FP32)});
    at::Tensor ints = empty_hpu(shape, c10::ScalarType::Int, out.device());
    launch_ew(ctx, "cast_f32_i32", ints.sizes(), {operand(sums, ints.sizes()), operand(ints, ints.sizes())});
    copy_into(out, ints);
    return true;
}

// out = reduce_<op> of self over dims (sum or mean), on the TPC.
bool reduce(const char *op, const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
            c10::optional<at::ScalarType> dtype, const at::Tensor &out)
{
    if (std::string(op) == "sum" && (!dtype || *dtype == out.scalar_type()) &&
        sum_integers(self, dim, keepdim, out))
        return true;
    const std::string sfx = float_suffix(self.scalar_type());
    if (sfx.empty() || out.scalar_type() != self.scalar_type() || (dtype && *dtype != self.scalar_type()) ||
        !is_hpu(self) || !is_hpu(out) || self.device() != out.device())
        return false;
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    if (self.numel() == 0 && std::string(op) != "sum")
        return false; // the mean of nothing: NaN, and errors, as the CPU says
    const std::vector<bool> red = reduced_dims(self, dim);
    fit(out, reduced_shape(self, red, keepdim));
    if (self.numel() == 0) { // the sum of nothing
        fill_hpu(out, 0);
        return true;
    }
    if (self.dim() == 0) { // the sum or mean of one element: itself
        copy_into(out, self);
        return true;
    }
    const Rows r = reduce_rows(ctx, self, red, 0);
    const RowOperand o = row_result(out, red, keepdim, device_dtype(out.scalar_type()));
    launch_rows(ctx, std::string("reduce_") + op + "_" + sfx, r.sizes, {r.x, o});
    return true;
}

at::Tensor &sum_out(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                    c10::optional<at::ScalarType> dtype, at::Tensor &out)
{
    if (!reduce("sum", self, dim, keepdim, dtype, out))
        return Fallback<ATEN_OP2(sum, IntList_out)>::call(self, dim, keepdim, dtype, out);
    return out;
}

at::Tensor &mean_out(const at::Tensor &self, at::OptionalIntArrayRef dim, bool keepdim,
                     c10::optional<at::ScalarType> dtype, at::Tensor &out)
{
    if (!reduce("mean", self, dim, keepdim, dtype, out))
        return Fallback<ATEN_OP2(mean, out)>::call(self, dim, keepdim, dtype, out);
    return out;
}

at::Tensor &log_softmax_out(const at::Tensor &self, std::int64_t dim, bool half_to_float, at::Tensor &out)
{
    const std::string sfx = float_suffix(self.scalar_type());
    if (sfx.empty() || half_to_float || out.scalar_type() != self.scalar_type() || self.dim() == 0 ||
        self.numel() == 0) // no rows, or rows of no element
        return Fallback<ATEN_OP2(_log_softmax, out)>::call(self, dim, half_to_float, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    const std::int64_t d = c10::maybe_wrap_dim(dim, self.dim());
    fit(out, self.sizes());
    const std::uint32_t ninf = sfx == "f32" ? kNegInfF32 : kNegInfBf16;
    launch_rows(ctx, "log_softmax_" + sfx, row_sizes(self, d), {row_operand(self, d, ninf), row_operand(out, d)});
    return out;
}

at::Tensor &log_softmax_backward_out(const at::Tensor &grad, const at::Tensor &output, std::int64_t dim,
                                     at::ScalarType input_dtype, at::Tensor &out)
{
    const std::string sfx = float_suffix(output.scalar_type());
    if (sfx.empty() || input_dtype != output.scalar_type() || grad.scalar_type() != output.scalar_type() ||
        output.dim() == 0 || output.numel() == 0) {
        return Fallback<ATEN_OP2(_log_softmax_backward_data, out)>::call(grad, output, dim, input_dtype, out);
    }
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    const std::int64_t d = c10::maybe_wrap_dim(dim, output.dim());
    fit(out, output.sizes());
    launch_rows(ctx, "log_softmax_grad_" + sfx, row_sizes(output, d),
                {row_operand(output, d), row_operand(grad, d), row_operand(out, d)});
    return out;
}

// The index of the first maximum; int64 out written as I32 low words over
// a zeroed tensor (indices are never negative).
at::Tensor &argmax_out(const at::Tensor &self, c10::optional<std::int64_t> dim, bool keepdim, at::Tensor &out)
{
    const std::string sfx = float_suffix(self.scalar_type());
    if (sfx.empty() || self.numel() == 0 || self.dim() == 0 || out.scalar_type() != c10::ScalarType::Long ||
        (!dim.has_value() && !self.is_contiguous()) || self.numel() > std::numeric_limits<std::int32_t>::max()) {
        return Fallback<ATEN_OP2(argmax, out)>::call(self, dim, keepdim, out);
    }
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    const at::Tensor x = dim.has_value() ? self : self.reshape({-1});
    const std::int64_t d = dim.has_value() ? c10::maybe_wrap_dim(*dim, std::max<std::int64_t>(self.dim(), 1)) : 0;
    std::vector<bool> self_red(static_cast<std::size_t>(self.dim()), !dim.has_value());
    if (dim.has_value() && self.dim() > 0)
        self_red.at(static_cast<std::size_t>(d)) = true;
    fit(out, reduced_shape(self, self_red, keepdim));
    fill_hpu(out, 0);
    const std::uint32_t ninf = sfx == "f32" ? kNegInfF32 : kNegInfBf16;
    std::vector<bool> red(static_cast<std::size_t>(std::max<std::int64_t>(x.dim(), 1)), false);
    if (x.dim() > 0)
        red.at(static_cast<std::size_t>(d)) = true;
    RowOperand o = row_result(out, red, keepdim && dim.has_value(), HPU_DTYPE_INT32);
    if (!dim.has_value())
        o.row_strides.clear();
    for (auto &s : o.row_strides)
        s *= 2;
    const RowOperand xi = x.dim() == 0 ? RowOperand{va_of(x), device_dtype(x.scalar_type()), 1, 1, {}, ninf}
                                       : row_operand(x, d, ninf);
    launch_rows(ctx, "argmax_" + sfx, row_sizes(x, d), {xi, o});
    return out;
}

// ---- max and min along a dim ---------------------------------------------------


// values and indices (int64, as argmax's) of the maximum or minimum along dim.
template <class Op>
std::tuple<at::Tensor &, at::Tensor &> extreme_dim(bool max, const at::Tensor &self, std::int64_t dim, bool keepdim,
                                                   at::Tensor &values, at::Tensor &indices)
{
    const std::string sfx = float_suffix(self.scalar_type());
    if (sfx.empty() || self.numel() == 0 || self.dim() == 0 || values.scalar_type() != self.scalar_type() ||
        indices.scalar_type() != c10::ScalarType::Long || !placeable(values, {&self}) ||
        !placeable(indices, {&self})) {
        return Fallback<Op>::call(self, dim, keepdim, values, indices);
    }
    DeviceContext &ctx = context_of(values);
    auto lock = ctx.lock();
    const std::int64_t d = c10::maybe_wrap_dim(dim, self.dim());
    std::vector<bool> red(static_cast<std::size_t>(self.dim()), false);
    red.at(static_cast<std::size_t>(d)) = true;
    const std::vector<std::int64_t> shape = reduced_shape(self, red, keepdim);
    fit(values, shape);
    fit(indices, shape);
    fill_hpu(indices, 0);
    const bool f32 = sfx == "f32";
    const std::uint32_t pad = max ? (f32 ? kNegInfF32 : kNegInfBf16) : (f32 ? 0x7f800000U : 0x7f80U);
    const auto rows = row_sizes(self, d);
    launch_rows(ctx, std::string(max ? "reduce_max_" : "reduce_min_") + sfx, rows,
                {row_operand(self, d, pad), row_result(values, red, keepdim, device_dtype(values.scalar_type()))});
    RowOperand idx = row_result(indices, red, keepdim, HPU_DTYPE_INT32);
    for (auto &st : idx.row_strides)
        st *= 2;
    launch_rows(ctx, std::string(max ? "argmax_" : "argmin_") + sfx, rows, {row_operand(self, d, pad), idx});
    return {values, indices};
}

// The maximum or minimum of every element: one row over the whole tensor.
template <class Op>
at::Tensor extreme_all(bool max, const at::Tensor &self)
{
    const std::string sfx = float_suffix(self.scalar_type());
    if (sfx.empty() || self.numel() == 0 || !is_hpu(self))
        return Fallback<Op>::call(self);
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    at::Tensor out = empty_hpu({}, self.scalar_type(), self.device());
    const bool f32 = sfx == "f32";
    const std::uint32_t pad = max ? (f32 ? kNegInfF32 : kNegInfBf16) : (f32 ? 0x7f800000U : 0x7f80U);
    const std::vector<bool> all(static_cast<std::size_t>(self.dim()), true);
    const Rows r = reduce_rows(ctx, self, all, pad);
    launch_rows(ctx, std::string(max ? "reduce_max_" : "reduce_min_") + sfx, r.sizes,
                {r.x, row_result(out, all, false, device_dtype(out.scalar_type()))});
    return out;
}

// amax/amin over dims (every dim when none is given), reduce_max/min_*.
template <class Op>
at::Tensor &extreme_dims(bool max, const at::Tensor &self, at::IntArrayRef dim, bool keepdim, at::Tensor &out)
{
    const std::string sfx = float_suffix(self.scalar_type());
    if (sfx.empty() || self.numel() == 0 || out.scalar_type() != self.scalar_type() || !placeable(out, {&self}) ||
        host_scalar(self))
        return Fallback<Op>::call(self, dim, keepdim, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    const std::vector<bool> red = reduced_dims(self, dim);
    fit(out, reduced_shape(self, red, keepdim));
    if (self.dim() == 0) { // the extreme of one element (dims 0 and -1 allowed, as on the CPU)
        copy_into(out, self);
        return out;
    }
    const bool f32 = sfx == "f32";
    const std::uint32_t pad = max ? (f32 ? kNegInfF32 : kNegInfBf16) : (f32 ? 0x7f800000U : 0x7f80U);
    const Rows r = reduce_rows(ctx, self, red, pad);
    launch_rows(ctx, std::string(max ? "reduce_max_" : "reduce_min_") + sfx, r.sizes,
                {r.x, row_result(out, red, keepdim, device_dtype(out.scalar_type()))});
    return out;
}

at::Tensor &amax_out(const at::Tensor &self, at::IntArrayRef dim, bool keepdim, at::Tensor &out)
{
    return extreme_dims<ATEN_OP2(amax, out)>(true, self, dim, keepdim, out);
}

at::Tensor &amin_out(const at::Tensor &self, at::IntArrayRef dim, bool keepdim, at::Tensor &out)
{
    return extreme_dims<ATEN_OP2(amin, out)>(false, self, dim, keepdim, out);
}

// all() / any() of every element: (x != 0) as FP32, its minimum (all) or
// maximum (any), != 0 into the bool out. All of nothing is true, any false.
template <class Op>
at::Tensor &all_any(bool all, const at::Tensor &self, at::Tensor &out)
{
    if (out.scalar_type() != c10::ScalarType::Bool || !placeable(out, {&self}) || host_scalar(self) ||
        (device_dtype(self.scalar_type()) == 0 && self.scalar_type() != c10::ScalarType::Long))
        return Fallback<Op>::call(self, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, {});
    if (self.numel() == 0) {
        fill_hpu(out, all ? 1 : 0);
        return out;
    }
    const c10::Device d = out.device();
    const at::Tensor b = on_device(self, c10::ScalarType::Bool, d);
    const at::Tensor x = on_device(b, c10::ScalarType::Float, d);
    at::Tensor r = empty_hpu({}, c10::ScalarType::Float, d);
    const std::vector<bool> every(static_cast<std::size_t>(x.dim()), true);
    const Rows rows = reduce_rows(ctx, x, every, all ? 0x7f800000U : kNegInfF32);
    launch_rows(ctx, all ? "reduce_min_f32" : "reduce_max_f32", rows.sizes,
                {rows.x, row_result(r, every, false, HPU_DTYPE_FP32)});
    copy_into(out, r);
    return out;
}

at::Tensor &all_out(const at::Tensor &self, at::Tensor &out) { return all_any<ATEN_OP2(all, all_out)>(true, self, out); }
at::Tensor &any_out(const at::Tensor &self, at::Tensor &out) { return all_any<ATEN_OP2(any, all_out)>(false, self, out); }

// The variance over dims from device ops: the mean, the squared
// deviations' sum, divided by N - correction (at least 0; 1 by default).
c10::optional<at::Tensor> variance(const at::Tensor &self, at::OptionalIntArrayRef dim,
                                   c10::optional<std::int64_t> correction, bool keepdim)
{
    if (float_suffix(self.scalar_type()).empty() || !is_hpu(self) || self.numel() == 0)
        return c10::nullopt;
    const std::vector<bool> red = reduced_dims(self, dim);
    std::int64_t n = 1;
    for (std::int64_t d = 0; d < self.dim(); ++d)
        n *= red[static_cast<std::size_t>(d)] ? self.size(d) : 1;
    const at::Tensor dev = self - at::mean(self, dim, true);
    const at::Tensor ss = at::sum(dev * dev, dim, keepdim);
    const double denom = std::max<double>(0.0, static_cast<double>(n - correction.value_or(1)));
    return ss / denom;
}

at::Tensor var(const at::Tensor &self, at::OptionalIntArrayRef dim, c10::optional<std::int64_t> correction,
               bool keepdim)
{
    c10::optional<at::Tensor> v = variance(self, dim, correction, keepdim);
    if (!v)
        return Fallback<ATEN_OP2(var, correction)>::call(self, dim, correction, keepdim);
    return *v;
}

at::Tensor std_dev(const at::Tensor &self, at::OptionalIntArrayRef dim, c10::optional<std::int64_t> correction,
                   bool keepdim)
{
    c10::optional<at::Tensor> v = variance(self, dim, correction, keepdim);
    if (!v)
        return Fallback<ATEN_OP2(std, correction)>::call(self, dim, correction, keepdim);
    return at::sqrt(*v);
}

at::Tensor max_all(const at::Tensor &self) { return extreme_all<ATEN_OP(max)>(true, self); }
at::Tensor min_all(const at::Tensor &self) { return extreme_all<ATEN_OP(min)>(false, self); }

std::tuple<at::Tensor &, at::Tensor &> max_dim_out(const at::Tensor &self, std::int64_t dim, bool keepdim,
                                                   at::Tensor &values, at::Tensor &indices)
{
    return extreme_dim<ATEN_OP2(max, dim_max)>(true, self, dim, keepdim, values, indices);
}

std::tuple<at::Tensor &, at::Tensor &> min_dim_out(const at::Tensor &self, std::int64_t dim, bool keepdim,
                                                   at::Tensor &values, at::Tensor &indices)
{
    return extreme_dim<ATEN_OP2(min, dim_min)>(false, self, dim, keepdim, values, indices);
}

// ---- negative log-likelihood (libhpu/kernels/README.md, "Losses") ------------

// The labels of an nll_loss as an I32 row operand [1, N]: an int64 tensor
// through its low words (stride 2; labels always fit in 32 bits).
RowOperand label_rows(const at::Tensor &target)
{
    RowOperand o;
    o.va = va_of(target);
    o.dtype = HPU_DTYPE_INT32;
    const std::int64_t f = target.scalar_type() == c10::ScalarType::Long ? 2 : 1;
    o.row_strides.push_back(target.dim() == 0 ? 0 : target.stride(0) * f);
    return o;
}

// A dense [n] FP32 per-row operand of a temporary.
RowOperand f32_rows(const at::Tensor &t)
{
    RowOperand o;
    o.va = va_of(t);
    o.dtype = HPU_DTYPE_FP32;
    o.row_strides.push_back(t.dim() == 0 ? 0 : t.stride(0));
    return o;
}

bool nll_ok(const at::Tensor &self, const at::Tensor &target, const c10::optional<at::Tensor> &weight,
            const at::Tensor &out)
{
    const bool labels = target.scalar_type() == c10::ScalarType::Long || target.scalar_type() == c10::ScalarType::Int;
    return !float_suffix(self.scalar_type()).empty() && (!weight.has_value() || !weight->defined()) && labels &&
           (self.dim() == 1 || self.dim() == 2) && is_hpu(self) && is_hpu(target) && is_hpu(out) &&
           self.device() == out.device() && target.device() == out.device() && self.size(-1) > 0 &&
           self.size(-1) <= std::numeric_limits<std::int32_t>::max() &&
           DeviceContext::has_kernel("nll_loss_" + float_suffix(self.scalar_type()));
}

std::tuple<at::Tensor &, at::Tensor &> nll_loss_forward_out(const at::Tensor &self, const at::Tensor &target,
                                                            const c10::optional<at::Tensor> &weight,
                                                            std::int64_t reduction, std::int64_t ignore_index,
                                                            at::Tensor &output, at::Tensor &total_weight)
{
    if (!nll_ok(self, target, weight, output) || ignore_index < std::numeric_limits<std::int32_t>::min() ||
        ignore_index > std::numeric_limits<std::int32_t>::max()) {
        return Fallback<ATEN_OP2(nll_loss_forward, output)>::call(self, target, weight, reduction, ignore_index,
                                                                  output, total_weight);
    }
    DeviceContext &ctx = context_of(output);
    auto lock = ctx.lock();
    const std::string sfx = float_suffix(self.scalar_type());
    const at::Tensor x = self.dim() == 1 ? self.unsqueeze(0) : self;
    const std::int64_t n = x.size(0);
    const c10::Device d = output.device();
    if (reduction == at::Reduction::None && self.dim() == 2) {
        fit(output, {n});
    } else {
        fit(output, {});
    }
    fit(total_weight, {});
    at::Tensor loss = empty_hpu({n}, c10::ScalarType::Float, d);
    at::Tensor wt = empty_hpu({n}, c10::ScalarType::Float, d);
    if (n > 0) {
        launch_rows(ctx, "nll_loss_" + sfx, {n}, {row_operand(x, 1), label_rows(target), f32_rows(loss), f32_rows(wt)},
                    {static_cast<std::uint32_t>(static_cast<std::int32_t>(ignore_index))});
    }
    // Results in self's type: copies cast on the device when it is BF16.
    if (reduction == at::Reduction::None) {
        copy_into(output, loss.reshape(output.sizes()));
        return {output, total_weight};
    }
    at::Tensor lsum = empty_hpu({}, c10::ScalarType::Float, d);
    at::Tensor wsum = empty_hpu({}, c10::ScalarType::Float, d);
    if (n == 0) {
        fill_hpu(lsum, 0);
        fill_hpu(wsum, 0);
    } else {
        RowOperand all = f32_rows(loss);
        all.size0 = n;
        all.stride0 = 1;
        all.row_strides.clear();
        RowOperand one;
        one.va = va_of(lsum);
        one.dtype = HPU_DTYPE_FP32;
        launch_rows(ctx, "reduce_sum_f32", {}, {all, one});
        all.va = va_of(wt);
        one.va = va_of(wsum);
        launch_rows(ctx, "reduce_sum_f32", {}, {all, one});
    }
    copy_into(total_weight, wsum.reshape(total_weight.sizes()));
    if (reduction == at::Reduction::Sum) {
        copy_into(output, lsum.reshape(output.sizes()));
    } else {
        at::Tensor mean = empty_hpu({}, c10::ScalarType::Float, d);
        binary(ctx, "div_f32", lsum, wsum, mean);
        copy_into(output, mean.reshape(output.sizes()));
    }
    return {output, total_weight};
}

at::Tensor &nll_loss_backward_out(const at::Tensor &grad_output, const at::Tensor &self, const at::Tensor &target,
                                  const c10::optional<at::Tensor> &weight, std::int64_t reduction,
                                  std::int64_t ignore_index, const at::Tensor &total_weight, at::Tensor &grad_input)
{
    if (!nll_ok(self, target, weight, grad_input) || grad_input.scalar_type() != self.scalar_type() ||
        !is_hpu(grad_output) || ignore_index < std::numeric_limits<std::int32_t>::min() ||
        ignore_index > std::numeric_limits<std::int32_t>::max()) {
        return Fallback<ATEN_OP2(nll_loss_backward, grad_input)>::call(grad_output, self, target, weight, reduction,
                                                                        ignore_index, total_weight, grad_input);
    }
    DeviceContext &ctx = context_of(grad_input);
    auto lock = ctx.lock();
    const std::string sfx = float_suffix(self.scalar_type());
    fit(grad_input, self.sizes());
    const at::Tensor dx = self.dim() == 1 ? grad_input.unsqueeze(0) : grad_input;
    const std::int64_t n = dx.size(0);
    const c10::Device d = grad_input.device();
    if (n == 0)
        return grad_input;
    at::Tensor dy = on_device(grad_output, c10::ScalarType::Float, d);
    if (reduction == at::Reduction::Mean) {
        at::Tensor scaled = empty_hpu({}, c10::ScalarType::Float, d);
        binary(ctx, "div_f32", dy.reshape({}), on_device(total_weight, c10::ScalarType::Float, d).reshape({}), scaled);
        dy = scaled;
    }
    RowOperand dyo;
    dyo.va = va_of(dy);
    dyo.dtype = HPU_DTYPE_FP32;
    dyo.row_strides.push_back(reduction == at::Reduction::None && dy.dim() > 0 ? dy.stride(0) : 0);
    launch_rows(ctx, "nll_loss_grad_" + sfx, {n}, {label_rows(target), dyo, row_operand(dx, 1)},
                {static_cast<std::uint32_t>(static_cast<std::int32_t>(ignore_index)), fbits(1.0F)});
    return grad_input;
}

// ---- matrix products on the MME -------------------------------------------

// A matrix operand of a GEMM: row-major with a leading dimension, or
// transposed (stored as its transpose, row-major).
struct Mat {
    at::Tensor t; // keeps a dense copy alive
    std::uint64_t va = 0;
    std::uint32_t ld = 0;
    bool trans = false;
};

Mat gemm_operand(const at::Tensor &x)
{
    Mat m;
    const std::int64_t r = x.size(0);
    const std::int64_t c = x.size(1);
    auto fits = [](std::int64_t v) { return v >= 1 && v <= std::numeric_limits<std::int32_t>::max(); };
    if ((x.stride(1) == 1 || c == 1) && x.stride(0) >= c && fits(x.stride(0))) {
        m.t = x;
        m.ld = static_cast<std::uint32_t>(r == 1 ? c : x.stride(0));
    } else if ((x.stride(0) == 1 || r == 1) && x.stride(1) >= r && fits(x.stride(1))) {
        m.t = x;
        m.ld = static_cast<std::uint32_t>(c == 1 ? r : x.stride(1));
        m.trans = true;
    } else {
        m.t = x.contiguous();
        m.ld = static_cast<std::uint32_t>(c);
    }
    m.va = va_of(m.t);
    return m;
}

bool gemm_ok(const at::Tensor &out, const at::Tensor &a, const at::Tensor &b)
{
    constexpr std::int64_t kMax = 65536;
    const std::string sfx = float_suffix(out.scalar_type());
    if (sfx.empty() || a.scalar_type() != out.scalar_type() || b.scalar_type() != out.scalar_type())
        return false;
    if (!is_hpu(a) || !is_hpu(b) || !is_hpu(out) || a.device() != out.device() || b.device() != out.device())
        return false;
    if (a.dim() != 2 || b.dim() != 2 || a.size(1) != b.size(0))
        return false;
    const std::int64_t m = a.size(0);
    const std::int64_t k = a.size(1);
    const std::int64_t n = b.size(1);
    return m <= kMax && n <= kMax && k >= 1 && k <= kMax;
}

// out = alpha a b (+ beta C or + bias), out row-major: a GEMM on MME 0.
void gemm(DeviceContext &ctx, const at::Tensor &out, const at::Tensor &a, const at::Tensor &b, float alpha,
          const at::Tensor *c, float beta, const at::Tensor *bias)
{
    if (out.numel() == 0)
        return;
    const std::uint32_t dt = device_dtype(out.scalar_type());
    const Mat ma = gemm_operand(a);
    const Mat mb = gemm_operand(b);
    const bool row_major = (out.stride(1) == 1 || out.size(1) == 1) && out.stride(0) >= out.size(1);
    at::Tensor d = row_major ? out : empty_hpu(out.sizes(), out.scalar_type(), out.device());
    if (!row_major && c != nullptr)
        copy_into(d, *c);
    Job job;
    job.kind = Job::Kind::Gemm;
    job.what = "GEMM";
    hpu_gemm &g = job.gemm;
    g.size = sizeof(g);
    g.in_dtype = dt;
    g.out_dtype = dt;
    g.m = static_cast<std::uint32_t>(a.size(0));
    g.n = static_cast<std::uint32_t>(b.size(1));
    g.k = static_cast<std::uint32_t>(a.size(1));
    g.batch = 1;
    g.alpha = alpha;
    g.a = ma.va;
    g.lda = ma.ld;
    g.b = mb.va;
    g.ldb = mb.ld;
    g.d = va_of(d);
    g.ldd = static_cast<std::uint32_t>(d.size(0) == 1 ? d.size(1) : d.stride(0));
    if (ma.trans)
        g.flags |= HPU_GEMM_TRANS_A;
    if (mb.trans)
        g.flags |= HPU_GEMM_TRANS_B;
    if (c != nullptr && beta != 0) {
        g.c = va_of(d); // C was copied into D (or is D)
        g.ldc = g.ldd;
        g.beta = beta;
    }
    if (bias != nullptr) {
        g.bias = va_of(*bias);
        g.flags |= HPU_GEMM_BIAS;
    }
    ctx.submit(std::move(job));
    if (!row_major)
        copy_into(out, d);
}

at::Tensor &mm_out(const at::Tensor &self, const at::Tensor &mat2, at::Tensor &out)
{
    if (!gemm_ok(out, self, mat2))
        return Fallback<ATEN_OP2(mm, out)>::call(self, mat2, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, {self.size(0), mat2.size(1)});
    gemm(ctx, out, self, mat2, 1.0F, nullptr, 0.0F, nullptr);
    return out;
}

at::Tensor &addmm_out(const at::Tensor &self, const at::Tensor &mat1, const at::Tensor &mat2,
                      const c10::Scalar &beta, const c10::Scalar &alpha, at::Tensor &out)
{
    for (const at::Tensor *t : {&self, &mat1, &mat2})
        check_same_device(out, *t);
    if (!gemm_ok(out, mat1, mat2) || !(is_hpu(self) || host_scalar(self)))
        return Fallback<ATEN_OP2(addmm, out)>::call(self, mat1, mat2, beta, alpha, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, {mat1.size(0), mat2.size(1)});
    const float b = beta.toFloat();
    const float a = alpha.toFloat();
    if (b == 0) {
        gemm(ctx, out, mat1, mat2, a, nullptr, 0.0F, nullptr);
        return out;
    }
    // A row vector added to every row with beta 1 (nn.Linear's bias): the
    // MME's FP32 bias.
    const bool vector = is_hpu(self) && (self.dim() == 1 || (self.dim() == 2 && self.size(0) == 1)) &&
                        self.size(-1) == out.size(1);
    if (vector && b == 1) {
        const at::Tensor bias = on_device(self.reshape({-1}), c10::ScalarType::Float, out.device()).contiguous();
        gemm(ctx, out, mat1, mat2, a, nullptr, 0.0F, &bias);
        return out;
    }
    const bool same = is_hpu(self) && self.data_ptr() == out.data_ptr() && self.strides() == out.strides() &&
                      self.sizes() == out.sizes();
    if (!same)
        copy_into(out, on_device(self, out.scalar_type(), out.device()).expand(out.sizes()));
    gemm(ctx, out, mat1, mat2, a, &out, b, nullptr);
    return out;
}

// A batch of matrices [B, r, c] as a GEMM operand: gemm_operand's layout
// of the first, the same for every member (a dense copy of the whole batch
// when the first needed one), and the batch stride (0 for one member).
Mat batch_operand(const at::Tensor &x, std::int64_t *stride)
{
    Mat m = gemm_operand(x.select(0, 0));
    if (m.va != va_of(x)) { // gemm_operand copied the first member
        const at::Tensor dense = x.contiguous();
        m = gemm_operand(dense.select(0, 0));
        m.t = dense;
    }
    *stride = x.size(0) == 1 ? 0 : x.stride(0);
    return m;
}

// out[b] = self[b] mat2[b]: one batched GEMM on MME 0 (FP32 accumulation),
// each operand's batch stride from its tensor; out through a dense
// temporary when it is not.
at::Tensor &bmm_out(const at::Tensor &self, const at::Tensor &mat2, at::Tensor &out)
{
    constexpr std::int64_t kMax = 65536;
    const bool ok = self.dim() == 3 && mat2.dim() == 3 && self.size(0) == mat2.size(0) && self.size(0) >= 1 &&
                    self.size(0) <= kMax && gemm_ok(out, self.select(0, 0), mat2.select(0, 0));
    if (!ok)
        return Fallback<ATEN_OP2(bmm, out)>::call(self, mat2, out);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    fit(out, {self.size(0), self.size(1), mat2.size(2)});
    if (out.numel() == 0)
        return out;
    std::int64_t sa = 0;
    std::int64_t sb = 0;
    const Mat ma = batch_operand(self, &sa);
    const Mat mb = batch_operand(mat2, &sb);
    at::Tensor d = out.is_contiguous() ? out : empty_hpu(out.sizes(), out.scalar_type(), out.device());
    Job job;
    job.kind = Job::Kind::Gemm;
    job.what = "batched GEMM";
    hpu_gemm &g = job.gemm;
    g.size = sizeof(g);
    g.in_dtype = device_dtype(out.scalar_type());
    g.out_dtype = g.in_dtype;
    g.m = static_cast<std::uint32_t>(self.size(1));
    g.n = static_cast<std::uint32_t>(mat2.size(2));
    g.k = static_cast<std::uint32_t>(self.size(2));
    g.batch = static_cast<std::uint32_t>(self.size(0));
    g.alpha = 1.0F;
    g.a = ma.va;
    g.lda = ma.ld;
    g.b = mb.va;
    g.ldb = mb.ld;
    g.d = va_of(d);
    g.ldd = g.n;
    g.stride_a = static_cast<std::uint64_t>(sa);
    g.stride_b = static_cast<std::uint64_t>(sb);
    g.stride_d = static_cast<std::uint64_t>(d.size(1) * d.size(2));
    if (ma.trans)
        g.flags |= HPU_GEMM_TRANS_A;
    if (mb.trans)
        g.flags |= HPU_GEMM_TRANS_B;
    ctx.submit(std::move(job));
    if (!d.is_same(out))
        copy_into(out, d);
    return out;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, HPU, m)
{
    m.impl("bmm.out", TORCH_FN(bmm_out));
    m.impl("add.out", TORCH_FN(add_out));
    m.impl("sub.out", TORCH_FN(sub_out));
    m.impl("mul.out", TORCH_FN(mul_out));
    m.impl("div.out", TORCH_FN(div_out));
    m.impl("addcmul.out", TORCH_FN(addcmul_out));
    m.impl("addcdiv.out", TORCH_FN(addcdiv_out));
    m.impl("relu", TORCH_FN(relu));
    m.impl("relu_", TORCH_FN(relu_));
    m.impl("threshold_backward.grad_input", TORCH_FN(threshold_backward_out));
    m.impl("native_dropout", TORCH_FN(native_dropout));
    m.impl("native_dropout_backward", TORCH_FN(native_dropout_backward));
    m.impl("sum.IntList_out", TORCH_FN(sum_out));
    m.impl("mean.out", TORCH_FN(mean_out));
    m.impl("_log_softmax.out", TORCH_FN(log_softmax_out));
    m.impl("_log_softmax_backward_data.out", TORCH_FN(log_softmax_backward_out));
    m.impl("argmax.out", TORCH_FN(argmax_out));
    m.impl("nll_loss_forward.output", TORCH_FN(nll_loss_forward_out));
    m.impl("nll_loss_backward.grad_input", TORCH_FN(nll_loss_backward_out));
    m.impl("mm.out", TORCH_FN(mm_out));
    m.impl("addmm.out", TORCH_FN(addmm_out));
    m.impl("neg.out", TORCH_FN(neg_out));
    m.impl("abs.out", TORCH_FN(abs_out));
    m.impl("sign.out", TORCH_FN(sign_out));
    m.impl("exp.out", TORCH_FN(exp_out));
    m.impl("log.out", TORCH_FN(log_out));
    m.impl("sqrt.out", TORCH_FN(sqrt_out));
    m.impl("rsqrt.out", TORCH_FN(rsqrt_out));
    m.impl("reciprocal.out", TORCH_FN(reciprocal_out));
    m.impl("eq.Tensor_out", TORCH_FN(eq_tensor_out));
    m.impl("eq.Scalar_out", TORCH_FN(eq_scalar_out));
    m.impl("ne.Tensor_out", TORCH_FN(ne_tensor_out));
    m.impl("ne.Scalar_out", TORCH_FN(ne_scalar_out));
    m.impl("lt.Tensor_out", TORCH_FN(lt_tensor_out));
    m.impl("lt.Scalar_out", TORCH_FN(lt_scalar_out));
    m.impl("le.Tensor_out", TORCH_FN(le_tensor_out));
    m.impl("le.Scalar_out", TORCH_FN(le_scalar_out));
    m.impl("gt.Tensor_out", TORCH_FN(gt_tensor_out));
    m.impl("gt.Scalar_out", TORCH_FN(gt_scalar_out));
    m.impl("ge.Tensor_out", TORCH_FN(ge_tensor_out));
    m.impl("ge.Scalar_out", TORCH_FN(ge_scalar_out));
    m.impl("uniform_", TORCH_FN(uniform_));
    m.impl("normal_", TORCH_FN(normal_));
    m.impl("max.dim_max", TORCH_FN(max_dim_out));
    m.impl("min.dim_min", TORCH_FN(min_dim_out));
    m.impl("tanh.out", TORCH_FN(tanh_out));
    m.impl("sigmoid.out", TORCH_FN(sigmoid_out));
    m.impl("gelu.out", TORCH_FN(gelu_out));
    m.impl("tanh_backward.grad_input", TORCH_FN(tanh_backward_out));
    m.impl("sigmoid_backward.grad_input", TORCH_FN(sigmoid_backward_out));
    m.impl("gelu_backward.grad_input", TORCH_FN(gelu_backward_out));
    m.impl("clamp.out", TORCH_FN(clamp_out));
    m.impl("where.self_out", TORCH_FN(where_out));
    m.impl("where.self", TORCH_FN(where));
    m.impl("max", TORCH_FN(max_all));
    m.impl("amax.out", TORCH_FN(amax_out));
    m.impl("amin.out", TORCH_FN(amin_out));
    m.impl("all.all_out", TORCH_FN(all_out));
    m.impl("any.all_out", TORCH_FN(any_out));
    m.impl("var.correction", TORCH_FN(var));
    m.impl("std.correction", TORCH_FN(std_dev));
    m.impl("random_.from", TORCH_FN(random_from));
    m.impl("min", TORCH_FN(min_all));
}

TORCH_LIBRARY_IMPL(aten, AutogradHPU, m)
{
    m.impl("dropout", TORCH_FN(dropout));
}

} // namespace hpu_torch
