// SPDX-License-Identifier: MIT
// ops_nn.cpp - the convolutional network ops of the HPU backend: 2-D
// convolution (im2col or col2im on the TPC around batched GEMMs on the
// MME), max and average pooling, batch norm (training, inference and their
// gradients) on the window and channel kernels of libhpu's library
// (libhpu/kernels/README.md, "Window kernels", "Channel kernels", "conv2d"),
// and the int64 addition of BatchNorm's batch counter. Every device step is
// a Job handed to DeviceContext::submit(): no op waits for the device.
// Arguments the kernels do not cover go to the CPU fallback, counted.
//
// Copyright (c) 2026 The hpu authors
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Pool.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <bit>
#include <limits>

#include "launch.h"
#include "ops_nn.h"

namespace hpu_torch {

namespace {

template <class Op>
using CpuOp = at::native::call_fallback_fn<&cpu_fallback, Op>;

constexpr std::int64_t kWinLanes = 64;   // window kernels: output elements of a row per member
constexpr std::int64_t kMmeMax = 65536;  // m, n, k and batch of a GEMM
constexpr std::int64_t kMaxStrideW = 512; // the window kernels' bound on the column stride
constexpr std::int64_t kPartialBytes = std::int64_t{64} << 20; // weight-gradient partial sums per chunk

std::uint32_t word(std::int64_t v)
{
    TORCH_CHECK(v >= 0 && v <= std::numeric_limits<std::uint32_t>::max(), "HPU: ", v,
                " does not fit a 32-bit descriptor field");
    return static_cast<std::uint32_t>(v);
}

std::uint32_t f32_word(double v) { return std::bit_cast<std::uint32_t>(static_cast<float>(v)); }

bool fits_i32(std::int64_t v) { return v >= 1 && v <= std::numeric_limits<std::int32_t>::max(); }

// Whether every tensor lies on dev (undefined ones are skipped).
bool all_on(c10::Device dev, std::initializer_list<const at::Tensor *> ts)
{
    return std::all_of(ts.begin(), ts.end(), [&](const at::Tensor *t) { return !t->defined() || t->device() == dev; });
}

// ---- descriptors and launches ---------------------------------------------

// A 4-D NCHW tensor t as a [W, H, C, N] descriptor of dtype (t's own when
// 0); `words` 2 reads an int64 tensor's low words (its strides doubled).
hpu_tensor nchw(const at::Tensor &t, std::uint32_t pad = 0, std::uint32_t dtype = 0, std::int64_t words = 1)
{
    TORCH_INTERNAL_ASSERT(t.dim() == 4);
    hpu_tensor d{};
    d.va = va_of(t);
    d.dtype = dtype != 0 ? dtype : device_dtype(t.scalar_type());
    d.ndims = 4;
    d.pad = pad;
    for (std::int64_t i = 0; i < 4; ++i) {
        const auto k = static_cast<std::size_t>(3 - i);
        TORCH_CHECK(fits_i32(t.size(i)), "HPU: a dimension of ", t.size(i), " elements is beyond a descriptor");
        d.sizes[k] = word(t.size(i));                                        // NOLINT(*-constant-array-index)
        d.strides[k] = t.size(i) == 1 ? 0U : word(t.stride(i) * words);     // NOLINT(*-constant-array-index)
    }
    return d;
}

// A per-channel [C] FP32 tensor.
hpu_tensor channel(const at::Tensor &t)
{
    TORCH_INTERNAL_ASSERT(t.dim() == 1 && t.scalar_type() == c10::ScalarType::Float);
    hpu_tensor d{};
    d.va = va_of(t);
    d.dtype = HPU_DTYPE_FP32;
    d.ndims = 1;
    d.sizes[0] = word(t.size(0));
    d.strides[0] = word(t.stride(0));
    return d;
}

// The index space of a window kernel: a member per 64 elements of a row of
// the [N, C, H, W] tensor it writes.
std::vector<std::uint32_t> window_index(const at::Tensor &out)
{
    return {word((out.size(3) + kWinLanes - 1) / kWinLanes), word(out.size(2)), word(out.size(1)),
            word(out.size(0))};
}

// A 2-D window: size, stride, padding, dilation (the kernels' scalars 0-7).
struct Window {
    std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;

    [[nodiscard]] std::vector<std::uint32_t> scalars() const
    {
        return {word(kh), word(kw), word(sh), word(sw), word(ph), word(pw), word(dh), word(dw)};
    }
    [[nodiscard]] bool valid() const
    {
        return kh >= 1 && kw >= 1 && sh >= 1 && sw >= 1 && sw <= kMaxStrideW && ph >= 0 && pw >= 0 && dh >= 1 &&
               dw >= 1 && kh < kMmeMax && kw < kMmeMax && ph < kMmeMax && pw < kMmeMax && sh < kMmeMax &&
               dh < kMmeMax && dw < kMmeMax;
    }
};

// One or two values of an int[2] argument (PyTorch repeats a single one).
bool pair(at::IntArrayRef v, std::int64_t dflt0, std::int64_t dflt1, std::int64_t *a, std::int64_t *b)
{
    if (v.empty()) {
        *a = dflt0;
        *b = dflt1;
        return true;
    }
    if (v.size() > 2)
        return false;
    *a = v[0];
    *b = v.size() == 2 ? v[1] : v[0];
    return true;
}

bool make_window(at::IntArrayRef kernel, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                 Window *w)
{
    if (kernel.empty() || !pair(kernel, 1, 1, &w->kh, &w->kw) || !pair(stride, w->kh, w->kw, &w->sh, &w->sw) ||
        !pair(padding, 0, 0, &w->ph, &w->pw) || !pair(dilation, 1, 1, &w->dh, &w->dw))
        return false;
    return w->valid();
}

// x as 4-D NCHW: an unbatched [C, H, W] gets N = 1.
at::Tensor as_nchw(const at::Tensor &x) { return x.dim() == 3 ? x.unsqueeze(0) : x; }

// An FP32 copy of a float tensor (the tensor itself when it is one).
at::Tensor to_f32(const at::Tensor &t)
{
    if (t.scalar_type() == c10::ScalarType::Float)
        return t;
    at::Tensor f = empty_hpu(t.sizes(), c10::ScalarType::Float, t.device());
    copy_into(f, t);
    return f;
}

// A float tensor of dtype from an FP32 one (itself when it is FP32).
at::Tensor from_f32(const at::Tensor &f, c10::ScalarType dtype)
{
    if (dtype == c10::ScalarType::Float)
        return f;
    at::Tensor t = empty_hpu(f.sizes(), dtype, f.device());
    copy_into(t, f);
    return t;
}

// ---- GEMMs of the convolution ---------------------------------------------

// A batched GEMM D[b] = op(A[b]) op(B[b]) (mme.md), row-major operands.
struct Gemm {
    std::uint32_t in = HPU_DTYPE_FP32;
    std::uint32_t out = HPU_DTYPE_FP32;
    std::int64_t m = 0, n = 0, k = 0, batch = 1;
    // Each operand: its tensor, leading dimension, batch stride and offset
    // (elements), and for A and B whether it is stored transposed.
    const at::Tensor *a = nullptr;
    std::int64_t lda = 0, sa = 0, off_a = 0;
    bool ta = false;
    const at::Tensor *b = nullptr;
    std::int64_t ldb = 0, sb = 0, off_b = 0;
    bool tb = false;
    const at::Tensor *d = nullptr;
    std::int64_t ldd = 0, sd = 0, off_d = 0;
};

void submit_gemm(DeviceContext &ctx, const Gemm &p)
{
    Job job;
    job.kind = Job::Kind::Gemm;
    job.what = "conv2d GEMM";
    hpu_gemm &g = job.gemm;
    g.size = sizeof(g);
    g.in_dtype = p.in;
    g.out_dtype = p.out;
    g.m = word(p.m);
    g.n = word(p.n);
    g.k = word(p.k);
    g.batch = word(p.batch);
    const std::uint64_t ein = hpu::dtype_size(p.in);
    const std::uint64_t eout = hpu::dtype_size(p.out);
    g.a = va_of(*p.a) + static_cast<std::uint64_t>(p.off_a) * ein;
    g.b = va_of(*p.b) + static_cast<std::uint64_t>(p.off_b) * ein;
    g.d = va_of(*p.d) + static_cast<std::uint64_t>(p.off_d) * eout;
    g.lda = word(p.lda);
    g.ldb = word(p.ldb);
    g.ldd = word(p.ldd);
    g.stride_a = static_cast<std::uint64_t>(p.sa);
    g.stride_b = static_cast<std::uint64_t>(p.sb);
    g.stride_d = static_cast<std::uint64_t>(p.sd);
    g.alpha = 1.0F;
    if (p.ta)
        g.flags |= HPU_GEMM_TRANS_A;
    if (p.tb)
        g.flags |= HPU_GEMM_TRANS_B;
    ctx.submit(std::move(job));
}

// ---- convolution -----------------------------------------------------------

// out [cols] (FP32) = the sums down the rows of m, a dense FP32 [rows, cols]
// matrix (bias_grad_f32: a member per 64 columns, rows in order).
void column_sums(DeviceContext &ctx, const at::Tensor &m, std::int64_t cols, std::int64_t rows, const at::Tensor &out)
{
    hpu_tensor p{};
    p.va = va_of(m);
    p.dtype = HPU_DTYPE_FP32;
    p.ndims = 2;
    p.sizes[0] = word(cols);
    p.sizes[1] = word(rows);
    p.strides[0] = 1;
    p.strides[1] = word(cols);
    launch(ctx, "bias_grad_f32", {p, channel(out)}, {}, {word((cols + kWinLanes - 1) / kWinLanes)});
}

// A 2-D convolution the device covers: its window and sizes.
struct Conv {
    Window win;
    std::int64_t n = 0, c = 0, h = 0, w = 0; // input
    std::int64_t k = 0, oh = 0, ow = 0;      // output channels and size
    std::int64_t crs = 0;                    // C kh kw: the GEMMs' inner size
    [[nodiscard]] std::int64_t pixels() const { return oh * ow; }
};

bool conv_plan(const at::Tensor &input, const at::Tensor &weight, at::IntArrayRef stride, at::IntArrayRef padding,
               at::IntArrayRef dilation, bool transposed, std::int64_t groups, Conv *cv)
{
    if (transposed || groups != 1 || input.dim() != 4 || weight.dim() != 4 || !is_hpu(input) ||
        !is_hpu(weight) || input.device() != weight.device() || input.scalar_type() != weight.scalar_type() ||
        float_suffix(input.scalar_type()).empty() || input.size(1) != weight.size(1))
        return false;
    if (!make_window({weight.size(2), weight.size(3)}, stride, padding, dilation, &cv->win))
        return false;
    cv->n = input.size(0);
    cv->c = input.size(1);
    cv->h = input.size(2);
    cv->w = input.size(3);
    cv->k = weight.size(0);
    const Window &g = cv->win;
    cv->oh = (cv->h + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
    cv->ow = (cv->w + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
    cv->crs = cv->c * g.kh * g.kw;
    return cv->n >= 1 && cv->k >= 1 && cv->oh >= 1 && cv->ow >= 1 && cv->n <= kMmeMax && cv->k <= kMmeMax &&
           cv->pixels() <= kMmeMax && cv->crs <= kMmeMax;
}

// col [N, C kh kw, OH, OW] of x (im2col, x's dtype).
at::Tensor im2col(DeviceContext &ctx, const at::Tensor &x, const Conv &cv)
{
    at::Tensor col = empty_hpu({cv.n, cv.crs, cv.oh, cv.ow}, x.scalar_type(), x.device());
    launch(ctx, "im2col_" + float_suffix(x.scalar_type()), {nchw(x), nchw(col)}, cv.win.scalars(),
           window_index(col));
    return col;
}

// The bias [K] added to y [N, K, OH, OW] (FP32) in place.
void add_bias(DeviceContext &ctx, const at::Tensor &y, const at::Tensor &bias)
{
    const at::Tensor b = to_f32(bias).view({1, -1, 1, 1});
    launch_ew(ctx, "add_f32", y.sizes(), {operand(y, y.sizes()), operand(b, y.sizes()), operand(y, y.sizes())});
}

at::Tensor convolution(const at::Tensor &input, const at::Tensor &weight, const c10::optional<at::Tensor> &bias_opt,
                       at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                       at::IntArrayRef output_padding, std::int64_t groups)
{
    const at::Tensor bias = bias_opt.has_value() ? *bias_opt : at::Tensor();
    Conv cv;
    if (!conv_plan(input, weight, stride, padding, dilation, transposed, groups, &cv) ||
        (bias.defined() && (!is_hpu(bias) || bias.device() != input.device() || bias.numel() != cv.k))) {
        // The CPU has no convolution_overrideable: the fallback runs aten::convolution.
        return CpuOp<ATEN_OP(convolution)>::call(input, weight, bias_opt, stride, padding, dilation, transposed,
                                                  output_padding, groups);
    }
    DeviceContext &ctx = context_of(input);
    auto lock = ctx.lock();
    const c10::ScalarType dt = input.scalar_type();
    at::Tensor y = empty_hpu({cv.n, cv.k, cv.oh, cv.ow}, dt, input.device());
    const at::Tensor col = im2col(ctx, input, cv);
    const at::Tensor w = weight.contiguous();
    // y[n] = w col[n]: [K, CRS] x [CRS, OH OW], accumulated and stored in
    // FP32 for BF16 (rounded once by the cast).
    at::Tensor acc = dt == c10::ScalarType::Float ? y : empty_hpu(y.sizes(), c10::ScalarType::Float, y.device());
    submit_gemm(ctx, {.in = device_dtype(dt), .m = cv.k, .n = cv.pixels(), .k = cv.crs, .batch = cv.n,
                      .a = &w, .lda = cv.crs,
                      .b = &col, .ldb = cv.pixels(), .sb = cv.crs * cv.pixels(),
                      .d = &acc, .ldd = cv.pixels(), .sd = cv.k * cv.pixels()});
    if (bias.defined())
        add_bias(ctx, acc, bias);
    if (!acc.is_same(y))
        copy_into(y, acc);
    return y;
}

// dw [K, CRS] (FP32) = sum over n of dy[n] col[n]^T: batched GEMMs into
// per-sample FP32 partials summed over the batch by bias_grad_f32 (in
// order of n), a chunk of samples at a time.
at::Tensor conv_weight_grad(DeviceContext &ctx, const at::Tensor &dy, const at::Tensor &x, const Conv &cv)
{
    const at::Tensor col = im2col(ctx, x, cv);
    const std::int64_t per = cv.k * cv.crs; // one sample's partial
    const std::int64_t chunk = std::max<std::int64_t>(1, std::min(cv.n, kPartialBytes / (per * 4)));
    at::Tensor dw = empty_hpu({cv.k, cv.crs}, c10::ScalarType::Float, dy.device());
    at::Tensor part = empty_hpu({chunk, per}, c10::ScalarType::Float, dy.device());
    at::Tensor sum = chunk < cv.n ? empty_hpu({per}, c10::ScalarType::Float, dy.device()) : at::Tensor();
    for (std::int64_t n0 = 0; n0 < cv.n; n0 += chunk) {
        const std::int64_t nb = std::min(chunk, cv.n - n0);
        submit_gemm(ctx, {.in = device_dtype(dy.scalar_type()), .m = cv.k, .n = cv.crs, .k = cv.pixels(),
                          .batch = nb,
                          .a = &dy, .lda = cv.pixels(), .sa = cv.k * cv.pixels(), .off_a = n0 * cv.k * cv.pixels(),
                          .b = &col, .ldb = cv.pixels(), .sb = cv.crs * cv.pixels(),
                          .off_b = n0 * cv.crs * cv.pixels(), .tb = true,
                          .d = nb == 1 && n0 == 0 ? &dw : &part, .ldd = cv.crs, .sd = per});
        if (nb == 1 && n0 == 0)
            continue; // one sample: its partial is dw
        // The partials as [per columns, nb rows], summed down the rows.
        column_sums(ctx, part, per, nb, (n0 == 0 ? dw : sum).view({per}));
        if (n0 != 0) {
            const at::Tensor flat = dw.view({per});
            launch_ew(ctx, "add_f32", flat.sizes(),
                      {operand(flat, flat.sizes()), operand(sum, flat.sizes()), operand(flat, flat.sizes())});
        }
    }
    return dw;
}

// dx [N, C, H, W] (FP32) = col2im of dcol[n] = w^T dy[n].
at::Tensor conv_input_grad(DeviceContext &ctx, const at::Tensor &dy, const at::Tensor &w, const Conv &cv)
{
    at::Tensor dcol = empty_hpu({cv.n, cv.crs, cv.oh, cv.ow}, c10::ScalarType::Float, dy.device());
    submit_gemm(ctx, {.in = device_dtype(dy.scalar_type()), .m = cv.crs, .n = cv.pixels(), .k = cv.k,
                      .batch = cv.n,
                      .a = &w, .lda = cv.crs, .ta = true,
                      .b = &dy, .ldb = cv.pixels(), .sb = cv.k * cv.pixels(),
                      .d = &dcol, .ldd = cv.pixels(), .sd = cv.crs * cv.pixels()});
    at::Tensor dx = empty_hpu({cv.n, cv.c, cv.h, cv.w}, c10::ScalarType::Float, dy.device());
    launch(ctx, "col2im_f32", {nchw(dcol), nchw(dx)}, cv.win.scalars(), window_index(dx));
    return dx;
}

// db [K] (FP32) = the sum of dy over N, OH, OW: rows of OH OW summed, then
// the [N, K] sums down N.
at::Tensor conv_bias_grad(DeviceContext &ctx, const at::Tensor &dy, const Conv &cv)
{
    const at::Tensor d32 = to_f32(dy);
    at::Tensor rows = empty_hpu({cv.n, cv.k}, c10::ScalarType::Float, dy.device());
    RowOperand x;
    x.va = va_of(d32);
    x.dtype = HPU_DTYPE_FP32;
    x.size0 = cv.pixels();
    x.stride0 = 1;
    x.row_strides = {cv.k * cv.pixels(), cv.pixels()};
    RowOperand r;
    r.va = va_of(rows);
    r.dtype = HPU_DTYPE_FP32;
    r.row_strides = {cv.k, 1};
    launch_rows(ctx, "reduce_sum_f32", {cv.n, cv.k}, {x, r});
    at::Tensor db = empty_hpu({cv.k}, c10::ScalarType::Float, dy.device());
    column_sums(ctx, rows, cv.k, cv.n, db);
    return db;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
convolution_backward(const at::Tensor &grad_output, const at::Tensor &input, const at::Tensor &weight,
                     at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed,
                     at::IntArrayRef output_padding, std::int64_t groups, std::array<bool, 3> output_mask)
{
    Conv cv;
    if (!conv_plan(input, weight, stride, padding, dilation, transposed, groups, &cv) || !is_hpu(grad_output) ||
        grad_output.device() != input.device() || grad_output.scalar_type() != input.scalar_type() ||
        grad_output.sizes() != at::IntArrayRef({cv.n, cv.k, cv.oh, cv.ow})) {
        // As the forward: aten::convolution_backward on the CPU (its bias
        // gradient, when asked for, is [K]).
        const std::vector<std::int64_t> bias_sizes{weight.size(0)};
        return CpuOp<ATEN_OP(convolution_backward)>::call(
            grad_output, input, weight, output_mask[2] ? at::OptionalIntArrayRef(bias_sizes) : c10::nullopt, stride,
            padding, dilation, transposed, output_padding, groups, output_mask);
    }
    DeviceContext &ctx = context_of(input);
    auto lock = ctx.lock();
    const c10::ScalarType dt = input.scalar_type();
    const at::Tensor dy = grad_output.contiguous();
    at::Tensor dx, dw, db;
    if (output_mask[0])
        dx = from_f32(conv_input_grad(ctx, dy, weight.contiguous(), cv), dt);
    if (output_mask[1])
        dw = from_f32(conv_weight_grad(ctx, dy, input, cv), dt).view(weight.sizes());
    if (output_mask[2])
        db = from_f32(conv_bias_grad(ctx, dy, cv), dt);
    return {dx, dw, db};
}

// ---- pooling ---------------------------------------------------------------

// The pooled size of an axis (PyTorch's, ceil_mode included).
std::int64_t pooled(std::int64_t in, std::int64_t k, std::int64_t pad, std::int64_t stride, std::int64_t dil,
                    bool ceil_mode)
{
    return at::native::pooling_output_shape<std::int64_t>(in, k, pad, stride, dil, ceil_mode);
}

bool pool_ok(const at::Tensor &self, std::initializer_list<const at::Tensor *> others, const Window &w)
{
    return (self.dim() == 3 || self.dim() == 4) && is_hpu(self) && self.numel() > 0 &&
           !float_suffix(self.scalar_type()).empty() && all_on(self.device(), others) &&
           std::all_of(others.begin(), others.end(), [](const at::Tensor *t) { return t->defined(); }) &&
           w.valid();
}

// A pooled result of self's shape with OH, OW (out= tensors resized).
std::vector<std::int64_t> pooled_shape(const at::Tensor &self, std::int64_t oh, std::int64_t ow)
{
    std::vector<std::int64_t> s(self.sizes().begin(), self.sizes().end());
    s[s.size() - 2] = oh;
    s[s.size() - 1] = ow;
    return s;
}

void fit_out(const at::Tensor &out, at::IntArrayRef shape)
{
    if (out.sizes() != shape)
        (void)at::native::resize_output(out, shape);
}

std::tuple<at::Tensor &, at::Tensor &> max_pool2d_out(const at::Tensor &self, at::IntArrayRef kernel_size,
                                                      at::IntArrayRef stride, at::IntArrayRef padding,
                                                      at::IntArrayRef dilation, bool ceil_mode, at::Tensor &out,
                                                      at::Tensor &indices)
{
    Window w;
    if (!make_window(kernel_size, stride, padding, dilation, &w) || !pool_ok(self, {&out, &indices}, w) ||
        out.scalar_type() != self.scalar_type() || indices.scalar_type() != c10::ScalarType::Long) {
        return CpuOp<ATEN_OP2(max_pool2d_with_indices, out)>::call(self, kernel_size, stride, padding, dilation,
                                                                   ceil_mode, out, indices);
    }
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    const std::int64_t oh = pooled(self.size(-2), w.kh, w.ph, w.sh, w.dh, ceil_mode);
    const std::int64_t ow = pooled(self.size(-1), w.kw, w.pw, w.sw, w.dw, ceil_mode);
    const auto shape = pooled_shape(self, oh, ow);
    fit_out(out, shape);
    fit_out(indices, shape);
    // int64 indices: zeroed, then their low words written (never negative:
    // PyTorch keeps the padding within half the window).
    fill_hpu(indices, 0);
    const std::string sfx = float_suffix(self.scalar_type());
    const std::uint32_t ninf = sfx == "f32" ? kNegInfF32 : kNegInfBf16;
    const at::Tensor y = as_nchw(out);
    launch(ctx, "maxpool2d_" + sfx,
           {nchw(as_nchw(self), ninf), nchw(y), nchw(as_nchw(indices), 0, HPU_DTYPE_INT32, 2)}, w.scalars(),
           window_index(y));
    return {out, indices};
}

at::Tensor &max_pool2d_backward_out(const at::Tensor &grad_output, const at::Tensor &self,
                                    at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                    at::IntArrayRef dilation, bool ceil_mode, const at::Tensor &indices,
                                    at::Tensor &grad_input)
{
    Window w;
    if (!make_window(kernel_size, stride, padding, dilation, &w) ||
        !pool_ok(self, {&grad_output, &indices, &grad_input}, w) || grad_output.scalar_type() != self.scalar_type() ||
        grad_input.scalar_type() != self.scalar_type() || indices.scalar_type() != c10::ScalarType::Long ||
        grad_output.sizes() != indices.sizes() || grad_output.dim() != self.dim()) {
        return CpuOp<ATEN_OP2(max_pool2d_with_indices_backward, grad_input)>::call(
            grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices, grad_input);
    }
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    fit_out(grad_input, self.sizes());
    const at::Tensor dx = as_nchw(grad_input);
    launch(ctx, "maxpool2d_grad_" + float_suffix(self.scalar_type()),
           {nchw(as_nchw(grad_output)), nchw(as_nchw(indices), 0, HPU_DTYPE_INT32, 2), nchw(dx)}, w.scalars(),
           window_index(dx));
    return grad_input;
}

// avg_pool2d's window (no dilation) and its two more scalars.
std::vector<std::uint32_t> avg_scalars(const Window &w, bool count_include_pad, c10::optional<std::int64_t> divisor)
{
    std::vector<std::uint32_t> s = w.scalars();
    s.push_back(count_include_pad ? 1U : 0U);
    s.push_back(static_cast<std::uint32_t>(divisor.value_or(0)));
    return s;
}

bool divisor_ok(c10::optional<std::int64_t> divisor)
{
    return !divisor.has_value() || (*divisor != 0 && *divisor > 0 && *divisor <= std::numeric_limits<std::int32_t>::max());
}

at::Tensor &avg_pool2d_out(const at::Tensor &self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                           at::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           c10::optional<std::int64_t> divisor_override, at::Tensor &out)
{
    Window w;
    if (!make_window(kernel_size, stride, padding, {}, &w) || !pool_ok(self, {&out}, w) ||
        out.scalar_type() != self.scalar_type() || !divisor_ok(divisor_override)) {
        return CpuOp<ATEN_OP2(avg_pool2d, out)>::call(self, kernel_size, stride, padding, ceil_mode,
                                                      count_include_pad, divisor_override, out);
    }
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    const std::int64_t oh = pooled(self.size(-2), w.kh, w.ph, w.sh, 1, ceil_mode);
    const std::int64_t ow = pooled(self.size(-1), w.kw, w.pw, w.sw, 1, ceil_mode);
    fit_out(out, pooled_shape(self, oh, ow));
    const at::Tensor y = as_nchw(out);
    launch(ctx, "avgpool2d_" + float_suffix(self.scalar_type()), {nchw(as_nchw(self)), nchw(y)},
           avg_scalars(w, count_include_pad, divisor_override), window_index(y));
    return out;
}

at::Tensor &avg_pool2d_backward_out(const at::Tensor &grad_output, const at::Tensor &self,
                                    at::IntArrayRef kernel_size, at::IntArrayRef stride, at::IntArrayRef padding,
                                    bool ceil_mode, bool count_include_pad,
                                    c10::optional<std::int64_t> divisor_override, at::Tensor &grad_input)
{
    Window w;
    if (!make_window(kernel_size, stride, padding, {}, &w) || !pool_ok(self, {&grad_output, &grad_input}, w) ||
        grad_output.scalar_type() != self.scalar_type() || grad_input.scalar_type() != self.scalar_type() ||
        grad_output.dim() != self.dim() || !divisor_ok(divisor_override)) {
        return CpuOp<ATEN_OP2(avg_pool2d_backward, grad_input)>::call(grad_output, self, kernel_size, stride, padding,
                                                                      ceil_mode, count_include_pad, divisor_override,
                                                                      grad_input);
    }
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    fit_out(grad_input, self.sizes());
    const at::Tensor dx = as_nchw(grad_input);
    launch(ctx, "avgpool2d_grad_" + float_suffix(self.scalar_type()), {nchw(as_nchw(grad_output)), nchw(dx)},
           avg_scalars(w, count_include_pad, divisor_override), window_index(dx));
    return grad_input;
}

// Adaptive average pooling to a size dividing the input's: average pooling
// with the window and stride H / OH, W / OW.
bool adaptive_window(const at::Tensor &self, std::int64_t oh, std::int64_t ow, Window *w)
{
    if ((self.dim() != 3 && self.dim() != 4) || oh < 1 || ow < 1 || self.size(-2) % oh != 0 ||
        self.size(-1) % ow != 0)
        return false;
    w->kh = w->sh = self.size(-2) / oh;
    w->kw = w->sw = self.size(-1) / ow;
    return w->valid() && pool_ok(self, {}, *w);
}

at::Tensor adaptive_avg_pool2d(const at::Tensor &self, c10::SymIntArrayRef output_size)
{
    Window w;
    const auto size = c10::asIntArrayRefSlow(output_size);
    if (size.size() != 2 || !adaptive_window(self, size[0], size[1], &w)) {
        using Host = at::native::call_fallback_fn_symint<&cpu_fallback, ATEN_OP(_adaptive_avg_pool2d)>;
        return Host::call(self, output_size);
    }
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    at::Tensor out = empty_hpu(pooled_shape(self, size[0], size[1]), self.scalar_type(), self.device());
    const at::Tensor y = as_nchw(out);
    launch(ctx, "avgpool2d_" + float_suffix(self.scalar_type()), {nchw(as_nchw(self)), nchw(y)},
           avg_scalars(w, true, c10::nullopt), window_index(y));
    return out;
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor &grad_output, const at::Tensor &self)
{
    Window w;
    if (grad_output.dim() != self.dim() || !adaptive_window(self, grad_output.size(-2), grad_output.size(-1), &w) ||
        !is_hpu(grad_output) || grad_output.device() != self.device() ||
        grad_output.scalar_type() != self.scalar_type())
        return CpuOp<ATEN_OP(_adaptive_avg_pool2d_backward)>::call(grad_output, self);
    DeviceContext &ctx = context_of(self);
    auto lock = ctx.lock();
    at::Tensor dx = empty_hpu(self.sizes(), self.scalar_type(), self.device());
    const at::Tensor d4 = as_nchw(dx);
    launch(ctx, "avgpool2d_grad_" + float_suffix(self.scalar_type()), {nchw(as_nchw(grad_output)), nchw(d4)},
           avg_scalars(w, true, c10::nullopt), window_index(d4));
    return dx;
}

// ---- batch norm ------------------------------------------------------------

// x [N, C, ...] as NCHW: [N, C] and [N, C, L] get unit H (and W); 5-D
// [N, C, D, H, W] merges D and H (a dense copy when they cannot be).
at::Tensor bn_view(const at::Tensor &x)
{
    switch (x.dim()) {
    case 2:
        return x.view({x.size(0), x.size(1), 1, 1});
    case 3:
        return x.unsqueeze(2);
    case 5: {
        const at::Tensor d = x.stride(2) == x.stride(3) * x.size(3) ? x : x.contiguous();
        return d.view({d.size(0), d.size(1), d.size(2) * d.size(3), d.size(4)});
    }
    default:
        return x;
    }
}

bool bn_ok(const at::Tensor &input, std::initializer_list<const at::Tensor *> params)
{
    if (input.dim() < 2 || input.dim() > 5 || !is_hpu(input) || input.numel() == 0 ||
        float_suffix(input.scalar_type()).empty() || !all_on(input.device(), params))
        return false;
    return std::all_of(params.begin(), params.end(), [&](const at::Tensor *t) {
        return !t->defined() || (t->dim() == 1 && t->numel() == input.size(1) &&
                                 !float_suffix(t->scalar_type()).empty());
    });
}

// A per-channel FP32 parameter: t cast, or filled with value when undefined.
at::Tensor chan_f32(const at::Tensor &t, std::int64_t c, c10::Device dev, double value)
{
    if (t.defined())
        return to_f32(t);
    at::Tensor f = empty_hpu({c}, c10::ScalarType::Float, dev);
    fill_hpu(f, value);
    return f;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
native_batch_norm(const at::Tensor &input, const c10::optional<at::Tensor> &weight_opt,
                  const c10::optional<at::Tensor> &bias_opt, const c10::optional<at::Tensor> &running_mean_opt,
                  const c10::optional<at::Tensor> &running_var_opt, bool training, double momentum, double eps)
{
    const at::Tensor weight = weight_opt.value_or(at::Tensor());
    const at::Tensor bias = bias_opt.value_or(at::Tensor());
    const at::Tensor rmean = running_mean_opt.value_or(at::Tensor());
    const at::Tensor rvar = running_var_opt.value_or(at::Tensor());
    const std::int64_t per_channel = input.dim() >= 2 ? input.numel() / std::max<std::int64_t>(input.size(1), 1) : 0;
    if (!bn_ok(input, {&weight, &bias, &rmean, &rvar}) || (training && per_channel < 2) ||
        (!training && (!rmean.defined() || !rvar.defined())) || rmean.defined() != rvar.defined()) {
        return CpuOp<ATEN_OP(native_batch_norm)>::call(input, weight_opt, bias_opt, running_mean_opt,
                                                       running_var_opt, training, momentum, eps);
    }
    DeviceContext &ctx = context_of(input);
    auto lock = ctx.lock();
    const c10::Device dev = input.device();
    const c10::ScalarType dt = input.scalar_type();
    const std::string sfx = float_suffix(dt);
    const std::int64_t c = input.size(1);
    const at::Tensor x = bn_view(input);
    at::Tensor out = empty_hpu(input.sizes(), dt, dev);
    const at::Tensor y = bn_view(out);
    const at::Tensor gamma = chan_f32(weight, c, dev, 1.0);
    const at::Tensor beta = chan_f32(bias, c, dev, 0.0);
    if (!training) {
        launch(ctx, "batchnorm_infer_" + sfx,
               {nchw(x), channel(gamma), channel(beta), channel(to_f32(rmean)), channel(to_f32(rvar)), nchw(y)},
               {f32_word(eps)}, {1, word(x.size(2)), word(c), word(x.size(0))});
        return {out, empty_hpu({0}, dt, dev), empty_hpu({0}, dt, dev)};
    }
    at::Tensor mean = empty_hpu({c}, c10::ScalarType::Float, dev);
    at::Tensor rstd = empty_hpu({c}, c10::ScalarType::Float, dev);
    // The running statistics, updated in place when they are FP32; else
    // FP32 copies written back (or scratch when there are none).
    const at::Tensor rm = chan_f32(rmean, c, dev, 0.0);
    const at::Tensor rv = chan_f32(rvar, c, dev, 1.0);
    launch(ctx, "batchnorm_" + sfx,
           {nchw(x), channel(gamma), channel(beta), nchw(y), channel(mean), channel(rstd), channel(rm), channel(rv)},
           {f32_word(eps), f32_word(momentum)}, {word(c)});
    if (rmean.defined() && !rm.is_same(rmean))
        copy_into(rmean, rm);
    if (rvar.defined() && !rv.is_same(rvar))
        copy_into(rvar, rv);
    // The saved statistics in the parameters' type as on the CPU: FP32 with
    // FP32 parameters, else the input's.
    const bool mixed = (weight.defined() && weight.scalar_type() == c10::ScalarType::Float) ||
                       (rmean.defined() && rmean.scalar_type() == c10::ScalarType::Float);
    const c10::ScalarType st = mixed ? c10::ScalarType::Float : dt;
    return {out, from_f32(mean, st), from_f32(rstd, st)};
}

// The eval-mode gradient (the running statistics are constants), composed
// of device ops: dx = dy gamma rstd, dgamma = sum(dy (x - mean)) rstd,
// dbeta = sum(dy), rstd = 1 / sqrt(running_var + eps).
std::tuple<at::Tensor, at::Tensor, at::Tensor> bn_eval_grad(const at::Tensor &dy, const at::Tensor &x,
                                                            const at::Tensor &gamma, const at::Tensor &rmean,
                                                            const at::Tensor &rvar, double eps,
                                                            std::array<bool, 3> mask, c10::ScalarType wdt)
{
    const std::int64_t c = x.size(1);
    std::vector<std::int64_t> shape(static_cast<std::size_t>(x.dim()), 1);
    shape[1] = c;
    std::vector<std::int64_t> dims{0};
    for (std::int64_t d = 2; d < x.dim(); ++d)
        dims.push_back(d);
    const at::Tensor d32 = to_f32(dy);
    const at::Tensor rstd = at::rsqrt(at::add(to_f32(rvar), eps));
    at::Tensor dx, dg, db;
    if (mask[0])
        dx = at::mul(d32, at::mul(gamma, rstd).view(shape)).to(x.scalar_type());
    if (mask[1])
        dg = at::mul(at::sum(at::mul(d32, at::sub(to_f32(x), to_f32(rmean).view(shape))), dims), rstd).to(wdt);
    if (mask[2])
        db = at::sum(d32, dims).to(wdt);
    return {dx, dg, db};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
native_batch_norm_backward(const at::Tensor &grad_out, const at::Tensor &input,
                           const c10::optional<at::Tensor> &weight_opt, const c10::optional<at::Tensor> &rmean_opt,
                           const c10::optional<at::Tensor> &rvar_opt, const c10::optional<at::Tensor> &save_mean_opt,
                           const c10::optional<at::Tensor> &save_invstd_opt, bool train, double eps,
                           std::array<bool, 3> output_mask)
{
    const at::Tensor weight = weight_opt.value_or(at::Tensor());
    const at::Tensor rmean = rmean_opt.value_or(at::Tensor());
    const at::Tensor rvar = rvar_opt.value_or(at::Tensor());
    const at::Tensor smean = save_mean_opt.value_or(at::Tensor());
    const at::Tensor sinvstd = save_invstd_opt.value_or(at::Tensor());
    // Training takes the saved statistics, eval the running ones (the saved
    // are empty then).
    const at::Tensor &mean = train ? smean : rmean;
    const at::Tensor &var = train ? sinvstd : rvar;
    if (!bn_ok(input, {&weight, &mean, &var}) || !mean.defined() || !var.defined() || !is_hpu(grad_out) ||
        grad_out.device() != input.device() || grad_out.scalar_type() != input.scalar_type() ||
        grad_out.sizes() != input.sizes()) {
        return CpuOp<ATEN_OP(native_batch_norm_backward)>::call(grad_out, input, weight_opt, rmean_opt, rvar_opt,
                                                                save_mean_opt, save_invstd_opt, train, eps,
                                                                output_mask);
    }
    DeviceContext &ctx = context_of(input);
    auto lock = ctx.lock();
    const c10::Device dev = input.device();
    const c10::ScalarType dt = input.scalar_type();
    const c10::ScalarType wdt = weight.defined() ? weight.scalar_type() : dt;
    const std::int64_t c = input.size(1);
    const at::Tensor gamma = chan_f32(weight, c, dev, 1.0);
    if (!train)
        return bn_eval_grad(grad_out, input, gamma, rmean, rvar, eps, output_mask, wdt);
    at::Tensor dx = empty_hpu(input.sizes(), dt, dev);
    at::Tensor dg = empty_hpu({c}, c10::ScalarType::Float, dev);
    at::Tensor db = empty_hpu({c}, c10::ScalarType::Float, dev);
    launch(ctx, "batchnorm_grad_" + float_suffix(dt),
           {nchw(bn_view(input)), nchw(bn_view(grad_out)), channel(to_f32(smean)), channel(to_f32(sinvstd)),
            channel(gamma), nchw(bn_view(dx)), channel(dg), channel(db)},
           {}, {word(c)});
    return {output_mask[0] ? dx : at::Tensor(), output_mask[1] ? from_f32(dg, wdt) : at::Tensor(),
            output_mask[2] ? from_f32(db, wdt) : at::Tensor()};
}

} // namespace

// ---- int64 addition ------------------------------------------------------------

bool add_int64(const at::Tensor &self, const at::Tensor &other, const c10::Scalar &alpha, const at::Tensor &out)
{
    constexpr auto kLong = c10::ScalarType::Long;
    const bool host_other = !is_hpu(other) && other.dim() == 0;
    if (self.scalar_type() != kLong || other.scalar_type() != kLong || out.scalar_type() != kLong ||
        !is_hpu(self) || !is_hpu(out) || self.device() != out.device() || !alpha.isIntegral(false) ||
        (!host_other && (!is_hpu(other) || other.device() != out.device() || !alpha.equal(1))))
        return false;
    const std::vector<std::int64_t> shape = at::infer_size(self.sizes(), other.sizes());
    if (out.sizes() != at::IntArrayRef(shape))
        return false;
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    const c10::Device dev = out.device();
    at::Tensor b = other;
    if (host_other) {
        b = empty_hpu({}, kLong, dev);
        fill_hpu(b, other.item<std::int64_t>() * alpha.toLong());
    }
    // The 32-bit words of an int64 operand: low (offset 0) or high (offset 1).
    auto half = [&](const at::Tensor &t, std::uint64_t hi, std::uint32_t dtype = HPU_DTYPE_UINT32) {
        Operand o = operand_as(t, shape, dtype);
        for (auto &s : o.strides)
            s *= 2;
        o.va += 4 * hi;
        return o;
    };
    auto u32 = [&](c10::ScalarType t) { return empty_hpu(shape, t, dev); };
    const at::Tensor lo = u32(c10::ScalarType::Int);
    const at::Tensor m = u32(c10::ScalarType::Int);
    const at::Tensor carry = u32(c10::ScalarType::Bool);
    const at::Tensor c32 = u32(c10::ScalarType::Int);
    const at::Tensor hi = u32(c10::ScalarType::Int);
    auto dense = [&](const at::Tensor &t) { return operand_as(t, shape, HPU_DTYPE_UINT32); };
    // lo = a + b (mod 2^32); a carry out when lo < b unsigned, which is
    // min(lo, b) != b; hi = a' + b' + carry.
    launch_ew(ctx, "add_u32", shape, {half(self, 0), half(b, 0), dense(lo)});
    launch_ew(ctx, "min_u32", shape, {dense(lo), half(b, 0), dense(m)});
    launch_ew(ctx, "ne_i32", shape,
              {operand_as(m, shape, HPU_DTYPE_INT32), half(b, 0, HPU_DTYPE_INT32), operand_as(carry, shape, HPU_DTYPE_UINT8)});
    launch_ew(ctx, "cast_u8_u32", shape, {operand_as(carry, shape, HPU_DTYPE_UINT8), dense(c32)});
    launch_ew(ctx, "add_u32", shape, {half(self, 1), half(b, 1), dense(hi)});
    launch_ew(ctx, "add_u32", shape, {dense(hi), dense(c32), half(out, 1)});
    launch_ew(ctx, "copy_b32", shape, {dense(lo), half(out, 0)});
    return true;
}

TORCH_LIBRARY_IMPL(aten, HPU, m)
{
    m.impl("convolution_overrideable", TORCH_FN(convolution));
    m.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward));
    m.impl("max_pool2d_with_indices.out", TORCH_FN(max_pool2d_out));
    m.impl("max_pool2d_with_indices_backward.grad_input", TORCH_FN(max_pool2d_backward_out));
    m.impl("avg_pool2d.out", TORCH_FN(avg_pool2d_out));
    m.impl("avg_pool2d_backward.grad_input", TORCH_FN(avg_pool2d_backward_out));
    m.impl("_adaptive_avg_pool2d", TORCH_FN(adaptive_avg_pool2d));
    m.impl("_adaptive_avg_pool2d_backward", TORCH_FN(adaptive_avg_pool2d_backward));
    m.impl("native_batch_norm", TORCH_FN(native_batch_norm));
    m.impl("native_batch_norm_backward", TORCH_FN(native_batch_norm_backward));
}

} // namespace hpu_torch
