// SPDX-License-Identifier: MIT
// ops_index.cpp - the indexing ops of the HPU backend: cat (copies into
// slices), index_select and x[idx] (index_select_b32 gathers, other
// element sizes through exact casts to 32 bits, int64 as two words),
// boolean masks (nonzero), and arange. Indices are checked on the host
// before any launch (IndexError as on the CPU, negatives counted from the
// end), so the device only ever sees indices in range.
//
// Copyright (c) 2026 The hpu authors
#include <ATen/MemoryOverlap.h>
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <numeric>

#include "launch.h"

namespace hpu_torch {

namespace {

template <class Op>
using Fallback = at::native::call_fallback_fn<&cpu_fallback, Op>;

// ---- cat ---------------------------------------------------------------------

// PyTorch skips 1-D empty tensors in cat whatever the other shapes (a legacy rule).
bool skipped(const at::Tensor &t) { return t.dim() == 1 && t.size(0) == 0; }

// out = the tensors joined along dim: one copy (DMA or copy kernel, a cast
// when a tensor's type differs from out's) into each slice of out.
at::Tensor &cat_out(const at::ITensorListRef &tensors, std::int64_t dim, at::Tensor &out)
{
    const std::vector<at::Tensor> ts(tensors.begin(), tensors.end());
    // As ATen's cat meta function, which cat.out's callers bypass.
    for (std::size_t i = 0; i < ts.size(); ++i) {
        TORCH_CHECK(ts[i].dim() > 0, "zero-dimensional tensor (at position ", i, ") cannot be concatenated");
    }
    const at::Tensor *first = nullptr;
    bool ok = is_hpu(out);
    for (const at::Tensor &t : ts) {
        check_same_device(out, t);
        ok = ok && is_hpu(t) && at::canCast(t.scalar_type(), out.scalar_type());
        if (first == nullptr && !skipped(t))
            first = &t;
    }
    if (!ok || first == nullptr)
        return Fallback<ATEN_OP2(cat, out)>::call(tensors, dim, out);
    // As ATen: an out that overlaps itself or an input is an error (the
    // copies into its slices would read what earlier ones wrote).
    at::assert_no_internal_overlap(out);
    for (const at::Tensor &t : ts)
        at::assert_no_overlap(out, t);
    const std::int64_t d = c10::maybe_wrap_dim(dim, first->dim());
    std::vector<std::int64_t> shape = first->sizes().vec();
    shape[static_cast<std::size_t>(d)] = 0;
    for (const at::Tensor &t : ts) {
        if (skipped(t))
            continue;
        TORCH_CHECK(t.dim() == first->dim(), "Tensors must have same number of dimensions: got ", first->dim(),
                    " and ", t.dim());
        for (std::int64_t i = 0; i < t.dim(); ++i) {
            TORCH_CHECK(i == d || t.size(i) == first->size(i), "Sizes of tensors must match except in dimension ", d,
                        ". Expected size ", first->size(i), " but got size ", t.size(i), " for tensor number ",
                        &t - ts.data(), " in the list.");
        }
        shape[static_cast<std::size_t>(d)] += t.size(d);
    }
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    if (out.sizes() != at::IntArrayRef(shape))
        (void)at::native::resize_output(out, shape);
    std::int64_t off = 0;
    for (const at::Tensor &t : ts) {
        if (skipped(t))
            continue;
        copy_into(out.narrow(d, off, t.size(d)), t);
        off += t.size(d);
    }
    return out;
}

// ---- index_select ----------------------------------------------------------

// An index tensor (int64 or int32, at most 1-D) as the I32 [N] operand of
// index_select_b32: int64 through its low words.
hpu_tensor index_desc(const at::Tensor &index)
{
    hpu_tensor t{};
    const std::int64_t f = index.scalar_type() == c10::ScalarType::Long ? 2 : 1;
    t.va = va_of(index);
    t.dtype = HPU_DTYPE_INT32;
    t.ndims = 1;
    t.sizes[0] = static_cast<std::uint32_t>(index.numel());
    t.strides[0] = static_cast<std::uint32_t>(index.dim() == 0 ? 1 : index.stride(0) * f);
    return t;
}

// out = self gathered along dim by index, self and out of 4-byte
// elements (u32 words): one index_select_b32 launch per coordinate of
// the dims that cannot be merged into the table's D dimension.
void gather_b32(DeviceContext &ctx, const at::Tensor &self, std::int64_t dim, const at::Tensor &index,
                const at::Tensor &out, std::int64_t words = 1, std::int64_t word = 0)
{
    // The other dims, outermost first, merged where both tensors allow.
    std::vector<std::int64_t> sizes;
    std::vector<std::int64_t> xs;
    std::vector<std::int64_t> os;
    for (std::int64_t d = 0; d < self.dim(); ++d) {
        if (d == dim || self.size(d) == 1)
            continue;
        const std::int64_t sx = self.stride(d) * words;
        const std::int64_t so = out.stride(d) * words;
        if (!sizes.empty() && xs.back() == sx * self.size(d) && os.back() == so * self.size(d)) {
            sizes.back() *= self.size(d);
            xs.back() = sx;
            os.back() = so;
            continue;
        }
        sizes.push_back(self.size(d));
        xs.push_back(sx);
        os.push_back(so);
    }
    if (sizes.empty()) {
        sizes.push_back(1);
        xs.push_back(words);
        os.push_back(words);
    }
    const std::int64_t n = index.numel();
    const std::uint64_t xbase = va_of(self) + static_cast<std::uint64_t>(word) * 4U;
    const std::uint64_t obase = va_of(out) + static_cast<std::uint64_t>(word) * 4U;
    const std::size_t inner = sizes.size() - 1;
    const std::int64_t dsize = sizes[inner];
    std::int64_t outer = 1;
    for (std::size_t i = 0; i < inner; ++i)
        outer *= sizes[i];
    const hpu::Kernel &k = ctx.kernel("index_select_b32");
    const auto members = static_cast<std::uint32_t>((dsize + 255) / 256);
    for (std::int64_t c = 0; c < outer; ++c) {
        std::int64_t rem = c;
        std::int64_t xo = 0;
        std::int64_t oo = 0;
        for (std::size_t i = inner; i-- > 0;) {
            const std::int64_t ci = rem % sizes[i];
            rem /= sizes[i];
            xo += ci * xs[i];
            oo += ci * os[i];
        }
        hpu_tensor table{};
        table.va = xbase + static_cast<std::uint64_t>(xo) * 4U;
        table.dtype = HPU_DTYPE_UINT32;
        table.ndims = 2;
        table.sizes[0] = static_cast<std::uint32_t>(dsize);
        table.strides[0] = static_cast<std::uint32_t>(xs[inner]);
        table.sizes[1] = static_cast<std::uint32_t>(self.size(dim));
        table.strides[1] = static_cast<std::uint32_t>(self.stride(dim) * words);
        hpu_tensor o = table;
        o.va = obase + static_cast<std::uint64_t>(oo) * 4U;
        o.strides[0] = static_cast<std::uint32_t>(os[inner]);
        o.sizes[1] = static_cast<std::uint32_t>(n);
        o.strides[1] = static_cast<std::uint32_t>(out.stride(dim) * words);
        Job job;
        job.kind = Job::Kind::Launch;
        job.what = "index_select_b32";
        job.kernel = &k;
        job.launch.tensor(hpu::Tensor(table));
        job.launch.tensor(hpu::Tensor(index_desc(index)));
        job.launch.tensor(hpu::Tensor(o));
        job.launch.index_space({members, static_cast<std::uint32_t>(n)});
        ctx.submit(std::move(job));
    }
}

// The index to gather with, its values checked on the host against the
// indexed dim's size (reading the index is a synchronisation; an index is
// usually small), as the CPU checks them: index_select takes 0 <= i < size,
// x[idx] (dim >= 0: the indexed dim) -size <= i < size, a negative i
// counting from the end; else an IndexError with the CPU's message. The
// index itself when every value is in [0, size) (int64 values then equal
// their low words), else an int32 copy with the negatives wrapped.
at::Tensor checked_index(const at::Tensor &index, std::int64_t size, std::int64_t dim = -1)
{
    if (index.numel() == 0)
        return index;
    const at::Tensor host = index.cpu().to(c10::ScalarType::Long).contiguous().view({-1});
    const std::int64_t *v = host.data_ptr<std::int64_t>();
    const std::int64_t n = host.numel();
    bool negative = false;
    for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t x = v[i]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        if (x < (dim >= 0 ? -size : 0) || x >= size) {
            TORCH_CHECK_INDEX(dim < 0, "index ", x, " is out of bounds for dimension ", dim, " with size ", size);
            TORCH_CHECK_INDEX(false, "index out of range in self");
        }
        negative = negative || x < 0;
    }
    if (!negative)
        return index;
    at::Tensor wrapped = (host + size).remainder(size).to(c10::ScalarType::Int).view(index.sizes());
    return wrapped.to(index.device());
}

bool index_ok(const at::Tensor &self, const at::Tensor &index, const at::Tensor &out)
{
    const c10::ScalarType it = index.scalar_type();
    const std::size_t es = self.element_size();
    return is_hpu(self) && is_hpu(index) && is_hpu(out) && self.device() == out.device() &&
           index.device() == out.device() && (it == c10::ScalarType::Long || it == c10::ScalarType::Int) &&
           index.dim() <= 1 && self.dim() >= 1 && out.scalar_type() == self.scalar_type() &&
           (es == 1 || es == 2 || es == 4 || es == 8) && self.numel() < std::numeric_limits<std::int32_t>::max() &&
           index.numel() < std::numeric_limits<std::int32_t>::max();
}

// out = self gathered along dim (index_select's shape); the caller checked index_ok.
void index_select_into(DeviceContext &ctx, const at::Tensor &self, std::int64_t dim, const at::Tensor &index,
                       const at::Tensor &out)
{
    if (out.numel() == 0)
        return;
    const std::size_t es = self.element_size();
    if (es == 4) {
        gather_b32(ctx, self, dim, index, out);
    } else if (es == 8) { // int64, float64: the low and the high words
        gather_b32(ctx, self, dim, index, out, 2, 0);
        gather_b32(ctx, self, dim, index, out, 2, 1);
    } else { // 1- and 2-byte types: widened to u32 and narrowed back, bits kept
        const std::uint32_t small = es == 2 ? HPU_DTYPE_UINT16 : HPU_DTYPE_UINT8;
        const std::string sfx = dtype_suffix(small);
        at::Tensor wide = empty_hpu(self.sizes(), c10::ScalarType::Int, self.device());
        at::Tensor picked = empty_hpu(out.sizes(), c10::ScalarType::Int, out.device());
        launch_ew(ctx, "cast_" + sfx + "_u32", self.sizes(),
                  {operand_as(self, self.sizes(), small), operand_as(wide, self.sizes(), HPU_DTYPE_UINT32)});
        gather_b32(ctx, wide, dim, index, picked);
        launch_ew(ctx, "cast_u32_" + sfx, out.sizes(),
                  {operand_as(picked, out.sizes(), HPU_DTYPE_UINT32), operand_as(out, out.sizes(), small)});
    }
}

at::Tensor &index_select_out(const at::Tensor &self, std::int64_t dim, const at::Tensor &in_index, at::Tensor &out)
{
    if (is_hpu(out)) { // as ATen: out may alias neither itself nor an input
        at::assert_no_internal_overlap(out);
        at::assert_no_overlap(out, self);
        at::assert_no_overlap(out, in_index);
    }
    if (!index_ok(self, in_index, out))
        return Fallback<ATEN_OP2(index_select, out)>::call(self, dim, in_index, out);
    const std::int64_t d = c10::maybe_wrap_dim(dim, self.dim());
    const at::Tensor index = checked_index(in_index, self.size(d));
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    std::vector<std::int64_t> shape = self.sizes().vec();
    shape[static_cast<std::size_t>(d)] = index.numel();
    if (out.sizes() != at::IntArrayRef(shape))
        (void)at::native::resize_output(out, shape);
    index_select_into(ctx, self, d, index, out);
    return out;
}

at::Tensor index_select(const at::Tensor &self, std::int64_t dim, const at::Tensor &index)
{
    at::Tensor out = empty_hpu({0}, self.scalar_type(), self.device());
    return index_select_out(self, dim, index, out);
}

// ---- boolean masks and x[idx] ------------------------------------------------

// The indices of a mask's non-zero elements: the result's size depends on
// the values, so the mask is read to the host (a synchronisation, as on
// CUDA), the indices found there and uploaded.
at::Tensor nonzero(const at::Tensor &self)
{
    return at::nonzero(self.cpu()).to(self.device());
}

// out = self[indices] for one index tensor (int64; int32 is an IndexError,
// as on PyTorch 1.13's CPU) at some dim, or
// one bool mask over consecutive dims, the others None: index_select
// along that dim (the mask's dims flattened, its flat indices from the
// host). Other forms go to the CPU fallback.
at::Tensor &index_out(const at::Tensor &self, const c10::List<c10::optional<at::Tensor>> &indices, at::Tensor &out)
{
    std::int64_t at_dim = -1;
    at::Tensor idx;
    bool ok = is_hpu(self) && is_hpu(out) && self.device() == out.device() &&
              out.scalar_type() == self.scalar_type();
    for (std::size_t i = 0; ok && i < indices.size(); ++i) {
        const c10::optional<at::Tensor> t = indices.get(i);
        if (!t.has_value() || !t->defined())
            continue;
        ok = at_dim < 0 && is_hpu(*t) && t->device() == self.device();
        at_dim = static_cast<std::int64_t>(i);
        idx = *t;
    }
    if (!ok || at_dim < 0)
        return Fallback<ATEN_OP2(index, Tensor_out)>::call(self, indices, out);
    const c10::ScalarType it = idx.scalar_type();
    TORCH_CHECK_INDEX(it == c10::ScalarType::Long || it == c10::ScalarType::Byte || it == c10::ScalarType::Bool,
                      "tensors used as indices must be long, byte or bool tensors"); // as PyTorch 1.13's CPU
    at::assert_no_internal_overlap(out); // as ATen
    at::assert_no_overlap(out, self);
    at::assert_no_overlap(out, idx);
    at::Tensor src = self;
    bool from_mask = false;
    if (idx.scalar_type() == c10::ScalarType::Bool || idx.scalar_type() == c10::ScalarType::Byte) {
        const std::int64_t m = idx.dim();
        TORCH_CHECK_INDEX(at_dim + m <= self.dim(), "too many indices for tensor of dimension ", self.dim());
        for (std::int64_t j = 0; j < m; ++j) {
            TORCH_CHECK_INDEX(idx.size(j) == self.size(at_dim + j), "The shape of the mask ", idx.sizes(),
                              " at index ", j, " does not match the shape of the indexed tensor ", self.sizes(),
                              " at index ", at_dim + j);
        }
        if (m != 1)
            src = self.flatten(at_dim, at_dim + m - 1);
        if (m == 0)
            src = self.unsqueeze(at_dim);
        idx = at::nonzero(idx.reshape({-1}).cpu()).reshape({-1}).to(self.device());
        from_mask = true; // in range by construction
    }
    at::Tensor flat = idx.reshape({-1});
    if (!index_ok(src, flat, out))
        return Fallback<ATEN_OP2(index, Tensor_out)>::call(self, indices, out);
    if (!from_mask)
        flat = checked_index(flat, src.size(at_dim), at_dim);
    DeviceContext &ctx = context_of(out);
    auto lock = ctx.lock();
    std::vector<std::int64_t> sel_shape = src.sizes().vec();
    sel_shape[static_cast<std::size_t>(at_dim)] = flat.numel();
    at::Tensor sel = empty_hpu(sel_shape, src.scalar_type(), src.device());
    index_select_into(ctx, src, at_dim, flat, sel);
    // The index's own shape in place of the indexed dim.
    std::vector<std::int64_t> shape(src.sizes().begin(), src.sizes().begin() + at_dim);
    for (const std::int64_t s : idx.sizes())
        shape.push_back(s);
    for (std::int64_t d = at_dim + 1; d < src.dim(); ++d)
        shape.push_back(src.size(d));
    if (out.sizes() != at::IntArrayRef(shape))
        (void)at::native::resize_output(out, shape);
    copy_into(out, sel.view(shape));
    return out;
}

// ---- arange ------------------------------------------------------------------

// out = start, start + step, ... below end. No input to read: the values
// are made on the host (PyTorch's own arange, so its rounding and sizes)
// and uploaded by DMA.
at::Tensor &arange_out(const c10::Scalar &start, const c10::Scalar &end, const c10::Scalar &step, at::Tensor &out)
{
    if (!is_hpu(out))
        return Fallback<ATEN_OP2(arange, start_out)>::call(start, end, step, out);
    at::Tensor host = at::empty({0}, out.options().device(c10::kCPU));
    at::arange_out(host, start, end, step);
    if (out.sizes() != host.sizes())
        (void)at::native::resize_output(out, host.sizes());
    copy_into(out, host);
    return out;
}

} // namespace

TORCH_LIBRARY_IMPL(aten, HPU, m)
{
    m.impl("cat.out", TORCH_FN(cat_out));
    m.impl("index_select", TORCH_FN(index_select));
    m.impl("index_select.out", TORCH_FN(index_select_out));
    m.impl("nonzero", TORCH_FN(nonzero));
    m.impl("index.Tensor_out", TORCH_FN(index_out));
    m.impl("arange.start_out", TORCH_FN(arange_out));
}

} // namespace hpu_torch
