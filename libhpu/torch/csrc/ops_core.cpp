// SPDX-License-Identifier: MIT
// ops_core.cpp - the core ops of the HPU backend: allocation (empty,
// empty_strided), copies between the host and HBM and within HBM
// (_copy_from: DMA for dense bytes, TPC kernels for strided views and
// casts), views, fills, resize_ and reading a scalar.
//
// Copyright (c) 2026 The hpu authors
#include <ATen/EmptyTensor.h>
#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/BFloat16.h>
#include <torch/library.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "launch.h"
#include "lazy.h"

namespace hpu_torch {

namespace {

constexpr std::uint64_t kStagingChunk = 8ULL << 20U; // bytes per staged DMA

c10::Device hpu_device(c10::optional<c10::Device> d)
{
    if (!d || !d->has_index())
        return {c10::DeviceType::HPU, static_cast<c10::DeviceIndex>(current_device())};
    return *d;
}

bool dense(const at::Tensor &t) { return t.is_contiguous(); }

// The copy kernel of an element size (libhpu/kernels/README.md, "Data
// kernels": any type of that size described as the unsigned one; 5-D);
// *dims the dimensions it takes.
const char *bitcopy_kernel(std::size_t esize, std::uint32_t *in, std::uint32_t *out, std::size_t *dims)
{
    *dims = 5;
    switch (esize) {
    case 4:
        *in = *out = HPU_DTYPE_UINT32;
        return "copy_b32";
    case 2:
        *in = *out = HPU_DTYPE_UINT16;
        return "copy_b16";
    default:
        *in = *out = HPU_DTYPE_UINT8;
        return "copy_b8";
    }
}

// dst = src (both HPU, same device and dtype; src broadcast to dst's shape).
void copy_same_dtype(DeviceContext &ctx, const at::Tensor &dst, const at::Tensor &src)
{
    if (dst.numel() == 0)
        return;
    if (dense(dst) && dense(src) && src.sizes() == dst.sizes()) {
        if (va_of(dst) == va_of(src))
            return;
        Job job;
        job.kind = Job::Kind::Copy;
        job.what = "copy (DMA)";
        job.dst = va_of(dst);
        job.src = va_of(src);
        job.size = dst.nbytes();
        ctx.submit(std::move(job));
        return;
    }
    const std::size_t esize = dst.element_size();
    std::vector<std::int64_t> sizes = dst.sizes().vec();
    Operand in;
    Operand out;
    std::size_t dims = 0;
    // Elements of 8 bytes or more (int64, double, complex128) are copied
    // as their 32-bit words.
    const std::size_t words = esize >= 8 ? esize / 4 : 1;
    const char *k = bitcopy_kernel(words > 1 ? 4 : esize, &in.dtype, &out.dtype, &dims);
    const Operand si = operand_as(src, dst.sizes(), in.dtype);
    const Operand so = operand_as(dst, dst.sizes(), out.dtype);
    in.va = si.va;
    in.strides = si.strides;
    out.va = so.va;
    out.strides = so.strides;
    if (words > 1) {
        sizes.push_back(static_cast<std::int64_t>(words));
        for (Operand *o : {&in, &out}) {
            for (auto &s : o->strides)
                s *= static_cast<std::int64_t>(words);
            o->strides.push_back(1);
        }
    }
    launch_ew(ctx, k, sizes, {in, out}, {}, 0, dims);
}

// An int64 tensor's low words as an I32 operand over sizes (strides
// doubled; "int64 read as int32" in Documentation/pytorch.md).
Operand low_words(const at::Tensor &t, at::IntArrayRef sizes, std::int64_t word = 0)
{
    Operand o = operand_as(t, sizes, HPU_DTYPE_INT32);
    for (auto &s : o.strides)
        s *= 2;
    o.va += static_cast<std::uint64_t>(word) * 4U;
    return o;
}

// dst (int64) = src widened by widen_*_i64. False when the device has no
// type for src, or src is a float: the device's casts to integers saturate
// at INT32's limits, where int64 holds floats up to 2^63 (those casts run
// on the host, counted as a fallback by copy_into).
bool copy_to_long(DeviceContext &ctx, const at::Tensor &dst, const at::Tensor &src)
{
    const std::uint32_t from = device_dtype(src.scalar_type());
    if (from == 0 || from == HPU_DTYPE_FP32 || from == HPU_DTYPE_BF16)
        return false;
    const auto &sz = dst.sizes();
    const Operand in = operand_as(src, sz, from);
    launch_widen(ctx, std::string("widen_") + dtype_suffix(from) + "_i64", sz, in, low_words(dst, sz));
    return true;
}

// dst (bool) = src != 0 (bool(x) is not a truncation): ne_* against a zero
// of src's type; int64 compares both words (ne_i32 twice, or'ed by max_u8).
bool copy_to_bool(DeviceContext &ctx, const at::Tensor &dst, const at::Tensor &src)
{
    const bool wide = src.scalar_type() == c10::ScalarType::Long;
    const std::uint32_t dt = wide ? HPU_DTYPE_INT32 : device_dtype(src.scalar_type());
    if (dt == 0)
        return false;
    const auto &sz = dst.sizes();
    at::Tensor zero = empty_hpu({}, wide ? c10::ScalarType::Int : src.scalar_type(), dst.device());
    fill_hpu(zero, 0);
    const Operand z = operand_as(zero, sz, dt);
    const std::string ne = std::string("ne_") + dtype_suffix(dt);
    if (!wide) {
        launch_ew(ctx, ne, sz, {operand_as(src, sz, dt), z, operand_as(dst, sz, HPU_DTYPE_UINT8)});
        return true;
    }
    at::Tensor lo = empty_hpu(sz, c10::ScalarType::Bool, dst.device());
    at::Tensor hi = empty_hpu(sz, c10::ScalarType::Bool, dst.device());
    launch_ew(ctx, ne, sz, {low_words(src, sz), z, operand_as(lo, sz, HPU_DTYPE_UINT8)});
    launch_ew(ctx, ne, sz, {low_words(src, sz, 1), z, operand_as(hi, sz, HPU_DTYPE_UINT8)});
    launch_ew(ctx, "max_u8", sz,
              {operand_as(lo, sz, HPU_DTYPE_UINT8), operand_as(hi, sz, HPU_DTYPE_UINT8),
               operand_as(dst, sz, HPU_DTYPE_UINT8)});
    return true;
}

// dst = src cast on the device, when kernels exist for the pair; false
// when they do not (64-bit floats).
bool copy_cast(DeviceContext &ctx, const at::Tensor &dst, const at::Tensor &src)
{
    const c10::ScalarType st = src.scalar_type();
    const c10::ScalarType dt = dst.scalar_type();
    if (dt == c10::ScalarType::Bool)
        return copy_to_bool(ctx, dst, src);
    if (dt == c10::ScalarType::Long)
        return copy_to_long(ctx, dst, src);
    std::uint32_t in_dtype = device_dtype(st);
    Operand in;
    if (st == c10::ScalarType::Long && (dt == c10::ScalarType::Float || dt == c10::ScalarType::BFloat16))
        return false; // the nearest float of both words: on the host (copy_into counts it)
    if (st == c10::ScalarType::Long && device_dtype(dt) != 0) {
        // int64 -> narrower integers wrap: the low words (little-endian)
        // read by an I32 descriptor of doubled strides.
        in = low_words(src, dst.sizes());
        in_dtype = HPU_DTYPE_INT32;
    } else {
        if (in_dtype == 0)
            return false;
        in = operand(src, dst.sizes());
    }
    const std::uint32_t out_dtype = device_dtype(dt);
    if (out_dtype == 0)
        return false;
    if (in_dtype == out_dtype) {
        if (st == c10::ScalarType::Long) { // low words as they are
            std::uint32_t a = 0;
            std::uint32_t b = 0;
            std::size_t dims = 0;
            const char *k = bitcopy_kernel(4, &a, &b, &dims);
            in.dtype = a;
            Operand out = operand_as(dst, dst.sizes(), b);
            launch_ew(ctx, k, dst.sizes(), {in, out}, {}, 0, dims);
            return true;
        }
        copy_same_dtype(ctx, dst, src); // bool -> uint8: the same bytes
        return true;
    }
    const std::string k = std::string("cast_") + dtype_suffix(in_dtype) + "_" + dtype_suffix(out_dtype);
    if (!DeviceContext::has_kernel(k))
        return false;
    launch_ew(ctx, k, dst.sizes(), {in, operand(dst, dst.sizes())});
    return true;
}

// Host bytes to HBM through staging buffers (waits only for a staging
// buffer to be free: the device works meanwhile).
void upload(DeviceContext &ctx, std::uint64_t dst, const void *src, std::uint64_t bytes)
{
    const auto *p = static_cast<const std::uint8_t *>(src);
    for (std::uint64_t done = 0; done < bytes;) {
        const std::uint64_t n = std::min(bytes - done, kStagingChunk);
        const DeviceContext::Staging st = ctx.upload_staging(n);
        std::memcpy(st.host, p + done, n); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        Job job;
        job.kind = Job::Kind::Copy;
        job.what = "copy to the HPU (DMA)";
        job.dst = dst + done;
        job.src = st.va;
        job.size = n;
        ctx.submit(std::move(job));
        ctx.staging_used(st.slot);
        done += n;
    }
}

// HBM bytes to the host through a staging buffer: waits for the copy, so
// for every job issued before it (stream order).
void download(DeviceContext &ctx, void *dst, std::uint64_t src, std::uint64_t bytes)
{
    auto *p = static_cast<std::uint8_t *>(dst);
    for (std::uint64_t done = 0; done < bytes;) {
        const std::uint64_t n = std::min(bytes - done, kStagingChunk);
        const DeviceContext::Staging st = ctx.staging(n);
        Job job;
        job.kind = Job::Kind::Copy;
        job.what = "copy from the HPU (DMA)";
        job.dst = st.va;
        job.src = src + done;
        job.size = n;
        ctx.submit_now(std::move(job)); // lazy mode: after the recorded step
        ctx.staging_used(st.slot);
        ctx.wait_last();
        std::memcpy(p + done, st.host, n); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        done += n;
    }
}

// A dense HPU copy of src (itself when it is dense).
at::Tensor dense_on_device(DeviceContext &ctx, const at::Tensor &src)
{
    if (dense(src))
        return src;
    at::Tensor t = empty_hpu(src.sizes(), src.scalar_type(), src.device());
    copy_same_dtype(ctx, t, src);
    return t;
}

// dst (CPU) = src (HPU).
void to_host(const at::Tensor &dst, const at::Tensor &src)
{
    DeviceContext &ctx = context_of(src);
    auto lock = ctx.lock();
    at::Tensor s = src;
    if (src.scalar_type() != dst.scalar_type()) {
        at::Tensor cast = empty_hpu(src.sizes(), dst.scalar_type(), src.device());
        if (copy_cast(ctx, cast, src))
            s = cast;
    }
    s = dense_on_device(ctx, s);
    if (dense(dst) && dst.scalar_type() == s.scalar_type() && dst.sizes() == s.sizes()) {
        download(ctx, dst.data_ptr(), va_of(s), s.nbytes());
        return;
    }
    at::Tensor host = at::empty(s.sizes(), s.options().device(c10::kCPU));
    download(ctx, host.data_ptr(), va_of(s), s.nbytes());
    dst.copy_(host);
}

// dst (HPU) = src (CPU).
void from_host(const at::Tensor &dst, const at::Tensor &src)
{
    DeviceContext &ctx = context_of(dst);
    auto lock = ctx.lock();
    at::Tensor s = src.expand(dst.sizes());
    const bool device_cast = s.scalar_type() != dst.scalar_type() && device_dtype(s.scalar_type()) != 0 &&
                             dst.scalar_type() != c10::ScalarType::Bool && device_dtype(dst.scalar_type()) != 0;
    if (s.scalar_type() != dst.scalar_type() && !device_cast)
        s = s.to(dst.scalar_type()); // types the device has no kernel for: cast on the host
    s = s.contiguous();
    if (dense(dst) && s.scalar_type() == dst.scalar_type()) {
        upload(ctx, va_of(dst), s.data_ptr(), s.nbytes());
        return;
    }
    at::Tensor staged = empty_hpu(s.sizes(), s.scalar_type(), dst.device());
    upload(ctx, va_of(staged), s.data_ptr(), s.nbytes());
    copy_into(dst, staged);
}

// ---- the registered kernels --------------------------------------------

at::Tensor empty_memory_format(c10::SymIntArrayRef size, c10::optional<at::ScalarType> dtype,
                               c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                               c10::optional<bool> pin_memory, c10::optional<at::MemoryFormat> memory_format)
{
    TORCH_CHECK(!layout || *layout == at::kStrided, "HPU tensors are strided only");
    TORCH_CHECK(!pin_memory || !*pin_memory, "HPU tensors cannot be pinned");
    const c10::Device d = hpu_device(device);
    const c10::DeviceGuard guard(d);
    return at::detail::empty_generic(c10::asIntArrayRefSlow(size), hpu_allocator(),
                                     c10::DispatchKeySet(c10::DispatchKey::HPU),
                                     dtype.value_or(at::get_default_dtype_as_scalartype()), memory_format);
}

at::Tensor empty_strided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride, c10::optional<at::ScalarType> dtype,
                         c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                         c10::optional<bool> pin_memory)
{
    TORCH_CHECK(!layout || *layout == at::kStrided, "HPU tensors are strided only");
    TORCH_CHECK(!pin_memory || !*pin_memory, "HPU tensors cannot be pinned");
    const c10::Device d = hpu_device(device);
    const c10::DeviceGuard guard(d);
    return at::detail::empty_strided_generic(c10::asIntArrayRefSlow(size), c10::asIntArrayRefSlow(stride),
                                             hpu_allocator(), c10::DispatchKeySet(c10::DispatchKey::HPU),
                                             dtype.value_or(at::get_default_dtype_as_scalartype()));
}

// What the CPU's copy_ checks in its TensorIterator (ATen re-dispatches
// to _copy_from before it): src broadcasts to dst's shape, no element of
// dst is written twice, and dst and src on one HPU are the same elements
// or disjoint (a copy between two overlapping views would read what it
// already wrote).
void check_copy(const at::Tensor &dst, const at::Tensor &src)
{
    const std::vector<std::int64_t> shape = at::infer_size(dst.sizes(), src.sizes());
    TORCH_CHECK(at::IntArrayRef(shape) == dst.sizes(), "output with shape ", dst.sizes(),
                " doesn't match the broadcast shape ", at::IntArrayRef(shape));
    if (!is_hpu(dst))
        return;
    at::assert_no_internal_overlap(dst);
    if (is_hpu(src) && src.device() == dst.device())
        at::assert_no_partial_overlap(dst, src);
}

at::Tensor copy_from(const at::Tensor &self, const at::Tensor &dst, bool /*non_blocking*/)
{
    check_copy(dst, self);
    if (dst.numel() == 0)
        return dst;
    if (is_hpu(dst) && is_hpu(self)) {
        if (dst.device() == self.device()) {
            copy_into(dst, self.expand(dst.sizes()));
        } else { // between two HPUs: through the host
            from_host(dst, self.cpu());
        }
    } else if (is_hpu(dst)) {
        from_host(dst, self);
    } else {
        to_host(dst, self);
    }
    return dst;
}

c10::Scalar local_scalar_dense(const at::Tensor &self)
{
    at::Tensor host = at::empty({}, self.options().device(c10::kCPU));
    to_host(host, self);
    return host.item();
}

at::Tensor view(const at::Tensor &self, c10::SymIntArrayRef size)
{
    return at::native::view(self, c10::asIntArrayRefSlow(size));
}

at::Tensor as_strided(const at::Tensor &self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                      c10::optional<c10::SymInt> storage_offset)
{
    c10::optional<std::int64_t> off;
    if (storage_offset)
        off = storage_offset->expect_int();
    return at::native::as_strided_tensorimpl(self, c10::asIntArrayRefSlow(size), c10::asIntArrayRefSlow(stride), off);
}

at::Tensor reshape_alias(const at::Tensor &self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride)
{
    return at::native::_reshape_alias(self, c10::asIntArrayRefSlow(size), c10::asIntArrayRefSlow(stride));
}

at::Tensor &fill_scalar(at::Tensor &self, const c10::Scalar &value)
{
    if (static_cast<std::size_t>(self.element_size()) > sizeof(std::uint64_t)) // no 64-bit pattern: on the CPU
        return at::native::call_fallback_fn<&cpu_fallback, ATEN_OP2(fill_, Scalar)>::call(self, value);
    fill_hpu(self, value);
    return self;
}

at::Tensor &zero(at::Tensor &self)
{
    fill_hpu(self, 0);
    return self;
}

// Grows the storage on the device (the old bytes copied by DMA), then
// restrides contiguously: what out= arguments of the wrong size need.
void grow_and_restride(const at::Tensor &self, at::IntArrayRef sizes)
{
    auto *impl = self.unsafeGetTensorImpl();
    std::int64_t numel = 1;
    for (const std::int64_t s : sizes)
        numel *= s;
    const auto needed = static_cast<std::size_t>((self.storage_offset() + numel) * self.element_size());
    c10::StorageImpl *storage = impl->storage().unsafeGetStorageImpl();
    if (numel > 0 && needed > storage->nbytes()) {
        const c10::DeviceGuard guard(self.device());
        DeviceContext &ctx = context_of(self);
        auto lock = ctx.lock();
        c10::DataPtr fresh = hpu_allocator()->allocate(needed);
        const std::size_t old_bytes = storage->nbytes();
        if (old_bytes > 0) {
            Job job;
            job.kind = Job::Kind::Copy;
            job.what = "resize_ (DMA)";
            job.dst = reinterpret_cast<std::uint64_t>(fresh.get());
            job.src = reinterpret_cast<std::uint64_t>(storage->data());
            job.size = old_bytes;
            ctx.submit(std::move(job));
        }
        // The old block is freed here, after the job that reads it was issued.
        (void)storage->set_data_ptr(std::move(fresh));
        storage->set_nbytes(needed);
    }
    impl->set_sizes_contiguous(sizes);
}

const at::Tensor &resize(const at::Tensor &self, c10::SymIntArrayRef size,
                         c10::optional<at::MemoryFormat> memory_format)
{
    const at::IntArrayRef sizes = c10::asIntArrayRefSlow(size);
    TORCH_CHECK(!memory_format || *memory_format != at::MemoryFormat::Preserve, "Unsupported memory format",
                *memory_format);
    // As the CPU's resize_: the same sizes keep the strides (a transposed
    // tensor stays one); only a memory format restrides.
    if (self.sizes() != sizes)
        grow_and_restride(self, sizes);
    if (memory_format)
        self.unsafeGetTensorImpl()->empty_tensor_restride(*memory_format);
    return self;
}

// What the CPU fallback calls for results whose size it changed.
at::Tensor copy_from_and_resize(const at::Tensor &self, const at::Tensor &dst)
{
    if (dst.sizes() != self.sizes())
        (void)resize(dst, self.sym_sizes(), c10::nullopt);
    return copy_from(self, dst, false);
}

} // namespace

DeviceContext &context_of(const at::Tensor &t)
{
    TORCH_CHECK(is_hpu(t), "expected an HPU tensor, got one on ", t.device());
    return DeviceContext::get(t.device().index());
}

at::Tensor empty_hpu(at::IntArrayRef sizes, c10::ScalarType dtype, c10::Device device)
{
    const c10::DeviceGuard guard(device);
    return at::detail::empty_generic(sizes, hpu_allocator(), c10::DispatchKeySet(c10::DispatchKey::HPU), dtype,
                                     c10::nullopt);
}

void check_same_device(const at::Tensor &a, const at::Tensor &b)
{
    TORCH_CHECK(!is_hpu(a) || !is_hpu(b) || a.device() == b.device(),
                "Expected all tensors to be on the same device, but found at least two devices, ", a.device(), " and ",
                b.device(), "!");
}

void copy_into(const at::Tensor &dst, const at::Tensor &src)
{
    if (dst.numel() == 0)
        return;
    if (!is_hpu(src)) {
        from_host(dst, src);
        return;
    }
    check_same_device(dst, src);
    DeviceContext &ctx = context_of(dst);
    auto lock = ctx.lock();
    if (src.scalar_type() == dst.scalar_type()) {
        copy_same_dtype(ctx, dst, src);
    } else if (!copy_cast(ctx, dst, src)) {
        // No exact kernel for the pair (64-bit floats; int64 <-> float,
        // counted as a fallback as the device has the types): on the host.
        const c10::ScalarType a = src.scalar_type();
        const c10::ScalarType b = dst.scalar_type();
        const auto flt = [](c10::ScalarType t) { return t == c10::ScalarType::Float || t == c10::ScalarType::BFloat16; };
        if ((a == c10::ScalarType::Long && flt(b)) || (flt(a) && b == c10::ScalarType::Long)) {
            count_fallback(std::string("copy ") + c10::toString(src.scalar_type()) + " -> " +
                           c10::toString(dst.scalar_type()));
        }
        from_host(dst, src.cpu().to(dst.scalar_type()));
    }
}

void fill_hpu(const at::Tensor &dst, const c10::Scalar &value)
{
    if (dst.numel() == 0)
        return;
    DeviceContext &ctx = context_of(dst);
    auto lock = ctx.lock();
    // The value's bytes in dst's type, repeated over 64 bits.
    const at::Tensor one = at::scalar_tensor(value, at::TensorOptions().dtype(dst.scalar_type()));
    const std::size_t esize = dst.element_size();
    std::uint64_t pattern = 0;
    // Wider elements (complex128) fit no 64-bit pattern but zero's.
    const auto *bytes = static_cast<const std::uint8_t *>(one.data_ptr());
    const bool zero = esize > sizeof(pattern) && std::all_of(bytes, bytes + esize, [](std::uint8_t c) { return c == 0; }); // NOLINT
    TORCH_CHECK(esize <= sizeof(pattern) || zero, "hpu: no device fill of ", dst.scalar_type(),
                " with a non-zero value");
    for (std::size_t b = 0; !zero && b < sizeof(pattern); b += esize)
        std::memcpy(reinterpret_cast<std::uint8_t *>(&pattern) + b, one.data_ptr(), esize); // NOLINT
    at::Tensor target = dst;
    if (!dense(dst)) // a dense scalar, broadcast into the strided view
        target = empty_hpu({1}, dst.scalar_type(), dst.device());
    Job job;
    if (lazy_mode() && target.nbytes() <= sizeof(pattern)) {
        // Lazy mode: a scalar (a Python number an op takes, such as an
        // optimizer's bias correction) is uploaded from a slot of the
        // step's scalar pool, whose address is the graph's key where a
        // memset's pattern would be: a cached graph copies each step's value.
        std::uint64_t va = 0;
        void *host = LazyRecorder::scalar_staging(ctx, target.nbytes(), &va);
        std::memcpy(host, &pattern, target.nbytes());
        job.kind = Job::Kind::Copy;
        job.what = "fill (scalar upload)";
        job.src = va;
    } else {
        job.kind = Job::Kind::Memset;
        job.what = "fill (DMA memset)";
        job.pattern = pattern;
    }
    job.dst = va_of(target);
    job.size = target.nbytes();
    ctx.submit(std::move(job));
    if (!dense(dst))
        copy_same_dtype(ctx, dst, target.expand(dst.sizes()));
}

TORCH_LIBRARY_IMPL(aten, HPU, m)
{
    m.impl("empty.memory_format", TORCH_FN(empty_memory_format));
    m.impl("empty_strided", TORCH_FN(empty_strided));
    m.impl("_copy_from", TORCH_FN(copy_from));
    m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
    m.impl("_local_scalar_dense", TORCH_FN(local_scalar_dense));
    m.impl("view", TORCH_FN(view));
    m.impl("as_strided", TORCH_FN(as_strided));
    m.impl("_reshape_alias", TORCH_FN(reshape_alias));
    m.impl("fill_.Scalar", TORCH_FN(fill_scalar));
    m.impl("zero_", TORCH_FN(zero));
    m.impl("resize_", TORCH_FN(resize));
}

} // namespace hpu_torch
