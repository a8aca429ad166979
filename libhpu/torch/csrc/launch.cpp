// SPDX-License-Identifier: MIT
// launch.cpp - TPC launches over torch tensors (launch.h).
//
// Copyright (c) 2026 The hpu authors
#include "launch.h"

#include <algorithm>
#include <limits>

namespace hpu_torch {

namespace {

constexpr std::int64_t kEwLanes = 256; // elements of dimension 0 per member (README "Layout rules")
constexpr std::size_t kRowDims = 2;    // row kernels: [N, R1, R2]

std::uint32_t u32_size(std::int64_t v)
{
    TORCH_CHECK(v > 0 && v <= std::numeric_limits<std::int32_t>::max(), "HPU: a dimension of ", v,
                " elements is beyond a tensor descriptor (sizes 1 to 2^31-1)");
    return static_cast<std::uint32_t>(v);
}

std::uint32_t u32_stride(std::int64_t v)
{
    TORCH_CHECK(v >= 0 && v <= std::numeric_limits<std::uint32_t>::max(), "HPU: a stride of ", v,
                " elements is beyond a tensor descriptor (0 to 2^32-1)");
    return static_cast<std::uint32_t>(v);
}

// Dimensions in descriptor order (innermost first) of a launch over sizes,
// size-1 dimensions dropped and neighbours merged where every operand is
// contiguous across them. strides[i] are operand i's.
struct Shape {
    std::vector<std::int64_t> sizes;
    std::vector<std::vector<std::int64_t>> strides;
};

Shape merge(at::IntArrayRef sizes, const std::vector<std::vector<std::int64_t>> &strides)
{
    Shape s;
    s.strides.resize(strides.size());
    for (std::size_t d = 0; d < sizes.size(); ++d) { // torch order: outermost first
        if (sizes[d] == 1)
            continue;
        bool mergeable = !s.sizes.empty();
        for (std::size_t i = 0; mergeable && i < strides.size(); ++i)
            mergeable = s.strides[i].back() == strides[i][d] * sizes[d];
        if (mergeable) {
            s.sizes.back() *= sizes[d];
            for (std::size_t i = 0; i < strides.size(); ++i)
                s.strides[i].back() = strides[i][d];
            continue;
        }
        s.sizes.push_back(sizes[d]);
        for (std::size_t i = 0; i < strides.size(); ++i)
            s.strides[i].push_back(strides[i][d]);
    }
    std::reverse(s.sizes.begin(), s.sizes.end());
    for (auto &v : s.strides)
        std::reverse(v.begin(), v.end());
    if (s.sizes.empty()) { // one element
        s.sizes.push_back(1);
        for (auto &v : s.strides)
            v.push_back(1);
    }
    return s;
}

hpu_tensor describe(std::uint64_t va, std::uint32_t dtype, std::uint32_t pad, const std::vector<std::int64_t> &sizes,
                    const std::vector<std::int64_t> &strides, std::size_t nd)
{
    hpu_tensor t{};
    t.va = va;
    t.dtype = dtype;
    t.ndims = static_cast<std::uint32_t>(nd);
    t.pad = pad;
    for (std::size_t d = 0; d < nd; ++d) {
        t.sizes[d] = u32_size(sizes[d]);        // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
        t.strides[d] = u32_stride(strides[d]);  // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    }
    return t;
}

std::uint32_t ceil_div(std::int64_t a, std::int64_t b) { return u32_size((a + b - 1) / b); }

// Calls fn(offsets) for every coordinate of the dimensions from `from` on
// (those beyond what one launch describes), offsets in elements per operand.
template <typename Fn>
void for_outer(const std::vector<std::int64_t> &sizes, const std::vector<std::vector<std::int64_t>> &strides,
               std::size_t from, Fn &&fn)
{
    std::vector<std::int64_t> c(sizes.size(), 0);
    std::vector<std::int64_t> off(strides.size(), 0);
    for (;;) {
        fn(off);
        std::size_t d = from;
        for (; d < sizes.size(); ++d) {
            if (++c[d] < sizes[d]) {
                for (std::size_t i = 0; i < strides.size(); ++i)
                    off[i] += strides[i][d];
                break;
            }
            for (std::size_t i = 0; i < strides.size(); ++i)
                off[i] -= strides[i][d] * (sizes[d] - 1);
            c[d] = 0;
        }
        if (d >= sizes.size())
            return;
    }
}

} // namespace

std::uint32_t device_dtype(c10::ScalarType t) noexcept
{
    switch (t) {
    case c10::ScalarType::Float:
        return HPU_DTYPE_FP32;
    case c10::ScalarType::BFloat16:
        return HPU_DTYPE_BF16;
    case c10::ScalarType::Int:
        return HPU_DTYPE_INT32;
    case c10::ScalarType::Short:
        return HPU_DTYPE_INT16;
    case c10::ScalarType::Char:
        return HPU_DTYPE_INT8;
    case c10::ScalarType::Byte:
    case c10::ScalarType::Bool:
        return HPU_DTYPE_UINT8;
    default:
        return 0;
    }
}

const char *dtype_suffix(std::uint32_t dtype)
{
    switch (dtype) {
    case HPU_DTYPE_FP32:
        return "f32";
    case HPU_DTYPE_BF16:
        return "bf16";
    case HPU_DTYPE_INT32:
        return "i32";
    case HPU_DTYPE_UINT32:
        return "u32";
    case HPU_DTYPE_INT16:
        return "i16";
    case HPU_DTYPE_UINT16:
        return "u16";
    case HPU_DTYPE_INT8:
        return "i8";
    default:
        return "u8";
    }
}

std::string float_suffix(c10::ScalarType t)
{
    if (t == c10::ScalarType::Float)
        return "f32";
    if (t == c10::ScalarType::BFloat16)
        return "bf16";
    return {};
}

Operand operand_as(const at::Tensor &t, at::IntArrayRef sizes, std::uint32_t dtype)
{
    Operand o;
    o.va = va_of(t);
    o.dtype = dtype;
    o.strides.assign(sizes.size(), 0);
    const auto nd = static_cast<std::int64_t>(sizes.size());
    for (std::int64_t i = 0; i < t.dim(); ++i) {
        const std::int64_t d = nd - t.dim() + i;
        TORCH_INTERNAL_ASSERT(d >= 0);
        if (t.size(i) != 1)
            o.strides[static_cast<std::size_t>(d)] = t.stride(i);
    }
    return o;
}

Operand operand(const at::Tensor &t, at::IntArrayRef sizes)
{
    const std::uint32_t dt = device_dtype(t.scalar_type());
    TORCH_CHECK(dt != 0, "HPU: no device type for ", t.scalar_type());
    return operand_as(t, sizes, dt);
}

namespace {

// Issues one launch of kernel per coordinate of the dimensions of s from
// nd on: operand i's descriptor from tensor(i, its element offset), the
// index space `index`.
template <typename TensorFn>
void issue(DeviceContext &ctx, const std::string &kernel, const Shape &s, std::size_t nd, std::size_t nops,
           TensorFn &&tensor, const std::vector<std::uint32_t> &index, const std::vector<std::uint32_t> &scalars,
           std::uint64_t seed)
{
    const hpu::Kernel &k = ctx.kernel(kernel);
    for_outer(s.sizes, s.strides, nd, [&](const std::vector<std::int64_t> &off) {
        Job job;
        job.kind = Job::Kind::Launch;
        job.what = kernel;
        job.kernel = &k;
        for (std::size_t i = 0; i < nops; ++i)
            job.launch.tensor(hpu::Tensor(tensor(i, off[i])));
        for (const std::uint32_t v : scalars)
            job.launch.scalar(v);
        job.launch.index_space(index);
        job.launch.seed(seed);
        ctx.submit(std::move(job));
    });
}

bool any_empty(at::IntArrayRef sizes)
{
    return std::any_of(sizes.begin(), sizes.end(), [](std::int64_t v) { return v == 0; });
}

template <typename Op>
Shape merge_ops(at::IntArrayRef sizes, const std::vector<Op> &ops, std::vector<std::int64_t> Op::*strides)
{
    std::vector<std::vector<std::int64_t>> st;
    st.reserve(ops.size());
    for (const Op &o : ops)
        st.push_back(o.*strides);
    return merge(sizes, st);
}

// The index space of an elementwise launch over the first nd merged
// dimensions: the innermost in groups of kEwLanes lanes.
std::vector<std::uint32_t> ew_index_space(const Shape &s, std::size_t nd)
{
    std::vector<std::uint32_t> index{ceil_div(s.sizes[0], kEwLanes)};
    for (std::size_t d = 1; d < nd; ++d)
        index.push_back(u32_size(s.sizes[d]));
    return index;
}

} // namespace

void launch_ew(DeviceContext &ctx, const std::string &kernel, at::IntArrayRef sizes, const std::vector<Operand> &ops,
               const std::vector<std::uint32_t> &scalars, std::uint64_t seed, std::size_t max_dims)
{
    if (any_empty(sizes))
        return;
    const Shape s = merge_ops(sizes, ops, &Operand::strides);
    const std::size_t nd = std::min(s.sizes.size(), max_dims);
    const std::vector<std::uint32_t> index = ew_index_space(s, nd);
    auto tensor = [&](std::size_t i, std::int64_t off) {
        const Operand &o = ops[i];
        const std::uint64_t va = o.va + static_cast<std::uint64_t>(off) * hpu::dtype_size(o.dtype);
        return describe(va, o.dtype, o.pad, s.sizes, s.strides[i], nd);
    };
    issue(ctx, kernel, s, nd, ops.size(), tensor, index, scalars, seed);
}

void launch_widen(DeviceContext &ctx, const std::string &kernel, at::IntArrayRef sizes, const Operand &x,
                  const Operand &y)
{
    constexpr std::size_t kDims = 4; // x's dimensions; y's fifth is the word
    if (any_empty(sizes))
        return;
    const std::vector<Operand> ops{x, y};
    const Shape s = merge_ops(sizes, ops, &Operand::strides);
    const std::size_t nd = std::min(s.sizes.size(), kDims);
    const std::vector<std::uint32_t> index = ew_index_space(s, nd);
    auto tensor = [&](std::size_t i, std::int64_t off) {
        const Operand &o = ops[i];
        const std::uint64_t va = o.va + static_cast<std::uint64_t>(off) * hpu::dtype_size(o.dtype);
        std::vector<std::int64_t> sz(s.sizes.begin(), s.sizes.begin() + static_cast<std::ptrdiff_t>(nd));
        std::vector<std::int64_t> st(s.strides[i].begin(), s.strides[i].begin() + static_cast<std::ptrdiff_t>(nd));
        if (i == 0)
            return describe(va, o.dtype, o.pad, sz, st, nd);
        sz.resize(kDims, 1); // [N0, N1, N2, N3, 2]: the word innermost-last, stride 1
        st.resize(kDims, 0);
        sz.push_back(2);
        st.push_back(1);
        return describe(va, o.dtype, 0, sz, st, kDims + 1);
    };
    issue(ctx, kernel, s, nd, ops.size(), tensor, index, {}, 0);
}

void launch_rows(DeviceContext &ctx, const std::string &kernel, at::IntArrayRef row_sizes,
                 const std::vector<RowOperand> &ops, const std::vector<std::uint32_t> &scalars)
{
    if (any_empty(row_sizes))
        return;
    const Shape s = merge_ops(row_sizes, ops, &RowOperand::row_strides);
    const std::size_t nd = std::min(s.sizes.size(), kRowDims);
    std::vector<std::uint32_t> index{1};
    for (std::size_t d = 0; d < nd; ++d)
        index.push_back(u32_size(s.sizes[d]));
    auto tensor = [&](std::size_t i, std::int64_t off) {
        const RowOperand &o = ops[i];
        std::vector<std::int64_t> sz{o.size0};
        std::vector<std::int64_t> st{o.size0 == 1 ? 0 : o.stride0};
        for (std::size_t d = 0; d < nd; ++d) {
            sz.push_back(s.sizes[d]);
            st.push_back(s.strides[i][d]);
        }
        const std::uint64_t va = o.va + static_cast<std::uint64_t>(off) * hpu::dtype_size(o.dtype);
        return describe(va, o.dtype, o.pad, sz, st, nd + 1);
    };
    issue(ctx, kernel, s, nd, ops.size(), tensor, index, scalars, 0);
}

void launch(DeviceContext &ctx, const std::string &kernel, const std::vector<hpu_tensor> &ts,
            const std::vector<std::uint32_t> &scalars, const std::vector<std::uint32_t> &index)
{
    Job job;
    job.kind = Job::Kind::Launch;
    job.what = kernel;
    job.kernel = &ctx.kernel(kernel);
    for (const hpu_tensor &t : ts)
        job.launch.tensor(hpu::Tensor(t));
    for (const std::uint32_t s : scalars)
        job.launch.scalar(s);
    job.launch.index_space(index);
    ctx.submit(std::move(job));
}

RowOperand row_operand(const at::Tensor &t, std::int64_t dim, std::uint32_t pad)
{
    RowOperand o;
    o.va = va_of(t);
    o.dtype = device_dtype(t.scalar_type());
    o.pad = pad;
    if (t.dim() > 0) {
        o.size0 = t.size(dim);
        o.stride0 = t.stride(dim);
        for (std::int64_t d = 0; d < t.dim(); ++d) {
            if (d != dim)
                o.row_strides.push_back(t.stride(d));
        }
    }
    return o;
}

std::vector<std::int64_t> row_sizes(const at::Tensor &t, std::int64_t dim)
{
    std::vector<std::int64_t> r;
    for (std::int64_t d = 0; d < t.dim(); ++d) {
        if (d != dim)
            r.push_back(t.size(d));
    }
    return r;
}

} // namespace hpu_torch
