// SPDX-License-Identifier: MIT
// TPC kernels (load, the built-in library, information), launch and GEMM
// descriptors, tensors, and the per-thread message of hpu_last_error().
//
// The checks here are the device's own (include/hw/hpu_tpc.h holds the
// TPC rules in the form both the device model and libhpu use; mme.md's
// rules are written out below), so a mistake is refused at the call with a
// message instead of failing the job with BAD_LAUNCH later.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "compute.h"

#include "common.h"
#include "device.h"
#include "packets.h"
#include "tpc_kernels.h"

namespace hpu::detail {

namespace {

using pkt::put32;
using pkt::put64;

thread_local std::string g_last_error; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

const char *rule_name(std::uint32_t rule)
{
    switch (rule) {
#define HPU_RULE_CASE_(name, value) \
    case (value):                   \
        return #name;
        HPU_TPC_LAUNCH_RULES(HPU_RULE_CASE_)
#undef HPU_RULE_CASE_
    default:
        return "unknown rule";
    }
}

std::string hex(std::uint64_t v)
{
    static constexpr const char *digits = "0123456789abcdef";
    std::string s;
    do {
        s.insert(s.begin(), digits[v & 0xfU]); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        v >>= 4U;
    } while (v != 0);
    return "0x" + s;
}

void fill_info(KernelImage &img, std::uint32_t size)
{
    const std::uint8_t *h = img.header.data();
    hpu_kernel_info &i = img.info;
    i.size = sizeof(i);
    i.num_tensors = h[HPU_TPC_BIN_OFF(num_tensors)];      // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    i.num_scalars = h[HPU_TPC_BIN_OFF(num_scalars)];      // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    i.index_dims = h[HPU_TPC_BIN_OFF(index_dims)];        // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    i.num_bundles = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(num_bundles)); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    i.slm_size = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(slm_size));    // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    i.vlm_size = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(vlm_size));    // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    i.binary_size = size;
    std::memcpy(static_cast<void *>(i.tensor_dtype), h + HPU_TPC_BIN_OFF(tensor_dtype), // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
                HPU_KERNEL_MAX_TENSORS);
    std::memcpy(static_cast<void *>(i.name), h + HPU_TPC_BIN_OFF(name), HPU_TPC_NAME_SIZE); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    i.name[HPU_KERNEL_NAME_MAX - 1] = '\0';
}

// The device's element size of an MME operand type, or 0.
std::uint32_t mme_type(std::uint32_t dtype, std::uint32_t &elem)
{
    if (dtype == HPU_DTYPE_FP32) {
        elem = 4;
        return HPU_MME_TYPE_FP32;
    }
    if (dtype == HPU_DTYPE_BF16) {
        elem = 2;
        return HPU_MME_TYPE_BF16;
    }
    elem = 0;
    return 0;
}

// What the device's tensor rules (hpu_tpc_check_tensor()) cannot see: fields
// wider than the descriptor's (dtype and ndims are one byte there).
int check_tensor_arg(const hpu_tensor &t, unsigned int i)
{
    const std::string who = "tensor " + std::to_string(i) + ": ";
    if (t.reserved != 0)
        return set_error(-EINVAL, who + "reserved is not zero");
    if (hpu_dtype_size(t.dtype) == 0)
        return set_error(-EINVAL, who + "dtype " + std::to_string(t.dtype) + " is not an HPU_DTYPE_*");
    if (t.ndims < 1 || t.ndims > HPU_TENSOR_MAX_DIMS)
        return set_error(-EINVAL, who + "ndims " + std::to_string(t.ndims) + " is not 1 to 5");
    return 0;
}

std::string shape(const std::uint32_t (&v)[HPU_TENSOR_MAX_DIMS]) // NOLINT(modernize-avoid-c-arrays)
{
    std::string s;
    for (const std::uint32_t x : v)
        s += (s.empty() ? "" : "x") + std::to_string(x);
    return s;
}

} // namespace

void clear_error() noexcept
{
    g_last_error.clear();
}

int set_error(int err, const std::string &msg) noexcept
{
    try {
        g_last_error = msg;
    } catch (...) { // NOLINT(bugprone-empty-catch)
        // Out of memory for the message: the errno still tells.
    }
    return err;
}

int kernel_image_load(hpu_device *dev, const void *data, std::size_t size, KernelRef &out)
{
    if (data == nullptr)
        return set_error(-EINVAL, "kernel binary: data is NULL");
    if (size < HPU_TPC_BIN_HEADER_SIZE || size > HPU_TPC_MAX_BINARY) {
        return set_error(-ENOEXEC, "kernel binary: " + std::to_string(size) +
                                       " bytes (BIN_SIZE: 128 bytes to 1 MiB)");
    }
    const auto *b = static_cast<const std::uint8_t *>(data);
    const std::uint32_t rule = hpu_tpc_check_binary(b, static_cast<std::uint32_t>(size));
    if (rule != HPU_TPC_BL_OK) {
        return set_error(-ENOEXEC, std::string("kernel binary: rule ") + rule_name(rule) + " broken (" +
                                       std::to_string(size) + " bytes; Documentation/hw/tpc.md)");
    }
    auto img = std::make_shared<KernelImage>();
    std::memcpy(img->header.data(), b, HPU_TPC_BIN_HEADER_SIZE);
    fill_info(*img, static_cast<std::uint32_t>(size));
    if (const int err = buffer_create(dev, size, HPU_MEM_HOST | HPU_MEM_READONLY, img->buf); err < 0)
        return err;
    std::memcpy(img->buf->mmap_addr, b, size);
    out = std::move(img);
    return 0;
}

std::size_t launch_size(const KernelImage &k)
{
    return hpu_tpc_launch_size(k.info.num_tensors);
}

int encode_launch(const KernelImage &k, const hpu_launch *l, std::uint8_t *d)
{
    // NOLINTBEGIN(cppcoreguidelines-pro-bounds-pointer-arithmetic,cppcoreguidelines-pro-bounds-constant-array-index)
    if (l == nullptr)
        return set_error(-EINVAL, "launch: struct hpu_launch is NULL");
    if (l->size < sizeof(hpu_launch)) {
        return set_error(-EINVAL, "launch: size " + std::to_string(l->size) + " below sizeof(struct hpu_launch) " +
                                      std::to_string(sizeof(hpu_launch)));
    }
    const hpu_kernel_info &ki = k.info;
    if (l->num_tensors != ki.num_tensors) {
        return set_error(-EINVAL, std::string("launch of ") + static_cast<const char *>(ki.name) + ": " +
                                      std::to_string(l->num_tensors) + " tensors, the kernel takes " +
                                      std::to_string(ki.num_tensors));
    }
    if (l->num_scalars != ki.num_scalars) {
        return set_error(-EINVAL, std::string("launch of ") + static_cast<const char *>(ki.name) + ": " +
                                      std::to_string(l->num_scalars) + " scalars, the kernel takes " +
                                      std::to_string(ki.num_scalars));
    }
    if ((l->num_tensors != 0 && l->tensors == nullptr) || (l->num_scalars != 0 && l->scalars == nullptr))
        return set_error(-EINVAL, "launch: tensors or scalars is NULL");
    put32(d + HPU_TPC_LAUNCH_OFF(magic), HPU_TPC_LAUNCH_MAGIC);
    put64(d + HPU_TPC_LAUNCH_OFF(binary), k.buf->map_va);
    put32(d + HPU_TPC_LAUNCH_OFF(binary_size), ki.binary_size);
    d[HPU_TPC_LAUNCH_OFF(num_tensors)] = static_cast<std::uint8_t>(ki.num_tensors);
    d[HPU_TPC_LAUNCH_OFF(num_scalars)] = static_cast<std::uint8_t>(ki.num_scalars);
    for (unsigned int i = 0; i < HPU_TENSOR_MAX_DIMS; ++i) {
        const std::uint32_t s = l->index_size[i] == 0 ? 1 : l->index_size[i];
        put32(d + HPU_TPC_LAUNCH_OFF(index_size) + std::size_t{4} * i, s);
    }
    put64(d + HPU_TPC_LAUNCH_OFF(seed), l->seed);
    for (unsigned int i = 0; i < ki.num_scalars; ++i)
        put32(d + HPU_TPC_LAUNCH_OFF(scalars) + std::size_t{4} * i, l->scalars[i]);
    for (unsigned int i = 0; i < ki.num_tensors; ++i) {
        const hpu_tensor &t = l->tensors[i];
        if (const int err = check_tensor_arg(t, i); err < 0)
            return err;
        std::uint8_t *td = d + HPU_TPC_LAUNCH_FIXED_SIZE + HPU_TPC_TENSOR_DESC_SIZE * std::size_t{i};
        put64(td + HPU_TPC_TENSOR_OFF(base), t.va);
        td[HPU_TPC_TENSOR_OFF(dtype)] = static_cast<std::uint8_t>(t.dtype);
        td[HPU_TPC_TENSOR_OFF(ndims)] = static_cast<std::uint8_t>(t.ndims);
        put32(td + HPU_TPC_TENSOR_OFF(pad), t.pad);
        for (unsigned int dim = 0; dim < HPU_TENSOR_MAX_DIMS; ++dim) {
            put32(td + HPU_TPC_TENSOR_OFF(size) + std::size_t{4} * dim, t.sizes[dim]);
            put32(td + HPU_TPC_TENSOR_OFF(stride) + std::size_t{4} * dim, t.strides[dim]);
        }
    }
    // The device's checks, in its order (tpc.md, "Launch rules").
    std::uint32_t rule = hpu_tpc_check_launch_fixed(d);
    if (rule == HPU_TPC_BL_OK)
        rule = hpu_tpc_check_launch_args(d, k.header.data());
    if (rule != HPU_TPC_BL_OK) {
        return set_error(-EINVAL, std::string("launch of ") + static_cast<const char *>(ki.name) + ": rule " +
                                      rule_name(rule) + " broken (index space " + shape(l->index_size) +
                                      ", index_dims " + std::to_string(ki.index_dims) + ")");
    }
    for (unsigned int i = 0; i < ki.num_tensors; ++i) {
        const std::uint8_t *td = d + HPU_TPC_LAUNCH_FIXED_SIZE + HPU_TPC_TENSOR_DESC_SIZE * std::size_t{i};
        rule = hpu_tpc_check_tensor(td, ki.tensor_dtype[i]);
        if (rule != HPU_TPC_BL_OK) {
            std::string why = std::string("launch of ") + static_cast<const char *>(ki.name) + ": tensor " +
                              std::to_string(i) + ": rule " + rule_name(rule) + " broken";
            if (rule == HPU_TPC_BL_TENSOR_DTYPE) {
                why += " (the kernel wants dtype " + std::to_string(ki.tensor_dtype[i]) + ", got " +
                       std::to_string(l->tensors[i].dtype) + ")";
            } else if (rule == HPU_TPC_BL_TENSOR_ALIGN || rule == HPU_TPC_BL_TENSOR_RANGE) {
                why += " (va " + hex(l->tensors[i].va) + ")";
            } else if (rule == HPU_TPC_BL_TENSOR_SHAPE) {
                why += " (ndims " + std::to_string(l->tensors[i].ndims) + ", sizes " + shape(l->tensors[i].sizes) +
                       ", strides " + shape(l->tensors[i].strides) + "; sizes 1 to 2^31-1 below ndims, 0 beyond)";
            }
            return set_error(-EINVAL, why);
        }
    }
    return 0;
    // NOLINTEND(cppcoreguidelines-pro-bounds-pointer-arithmetic,cppcoreguidelines-pro-bounds-constant-array-index)
}

// Bytes from the first element of a batched operand to past its last
// (mme.md rule 14); false when that overflows 64 bits.
bool extent(std::uint64_t batch, std::uint64_t stride, std::uint64_t rows, std::uint64_t ld, std::uint64_t cols,
            std::uint64_t elem, std::uint64_t &bytes)
{
    std::uint64_t x = 0;
    std::uint64_t y = 0;
    return !__builtin_mul_overflow(batch - 1, stride, &x) && !__builtin_mul_overflow(rows - 1, ld, &y) &&
           !__builtin_add_overflow(x, y, &x) && !__builtin_add_overflow(x, cols, &x) &&
           !__builtin_mul_overflow(x, elem, &bytes);
}

// Whether [va, va + bytes) ends below 2^64 (an operand whose last byte is
// at 2^64 - 1 is refused too, as the device does).
bool ends_below_2_64(std::uint64_t va, std::uint64_t bytes) { return va + bytes > va; }

bool overlaps(std::uint64_t a, std::uint64_t alen, std::uint64_t b, std::uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

int encode_gemm(const hpu_gemm *g, std::uint8_t *d)
{
    // NOLINTBEGIN(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    if (g == nullptr)
        return set_error(-EINVAL, "gemm: struct hpu_gemm is NULL");
    if (g->size < sizeof(hpu_gemm)) {
        return set_error(-EINVAL, "gemm: size " + std::to_string(g->size) + " below sizeof(struct hpu_gemm) " +
                                      std::to_string(sizeof(hpu_gemm)));
    }
    constexpr std::uint32_t kFlags = HPU_GEMM_TRANS_A | HPU_GEMM_TRANS_B | HPU_GEMM_BIAS;
    if ((g->flags & ~kFlags) != 0)
        return set_error(-EINVAL, "gemm: undefined flags " + hex(g->flags & ~kFlags));
    if (g->reserved != 0)
        return set_error(-EINVAL, "gemm: reserved is not zero");
    std::uint32_t in_elem = 0;
    std::uint32_t out_elem = 0;
    const std::uint32_t in_type = mme_type(g->in_dtype, in_elem);
    const std::uint32_t out_type = mme_type(g->out_dtype, out_elem);
    if (in_elem == 0)
        return set_error(-EINVAL, "gemm: in_dtype " + std::to_string(g->in_dtype) + " is not FP32 or BF16");
    if (out_elem == 0)
        return set_error(-EINVAL, "gemm: out_dtype " + std::to_string(g->out_dtype) + " is not FP32 or BF16");
    if (g->act > HPU_GEMM_ACT_GELU_TANH)
        return set_error(-EINVAL, "gemm: act " + std::to_string(g->act) + " is not an HPU_GEMM_ACT_*");
    for (const auto &[v, name] : {std::pair{g->m, "m"}, std::pair{g->n, "n"}, std::pair{g->k, "k"}}) {
        if (v < 1 || v > HPU_MME_DIM_MAX)
            return set_error(-EINVAL, std::string("gemm: ") + name + " is " + std::to_string(v) + " (1 to 65536)");
    }
    const std::uint32_t batch = g->batch == 0 ? 1 : g->batch;
    if (batch > HPU_MME_BATCH_MAX)
        return set_error(-EINVAL, "gemm: batch " + std::to_string(batch) + " is above 65536");
    const bool ta = (g->flags & HPU_GEMM_TRANS_A) != 0;
    const bool tb = (g->flags & HPU_GEMM_TRANS_B) != 0;
    const bool has_c = g->beta != 0.0F;
    // Stored row lengths: A is m x k (k x m transposed), B k x n (n x k), C and D m x n.
    const std::uint32_t row_a = ta ? g->m : g->k;
    const std::uint32_t row_b = tb ? g->k : g->n;
    const std::uint32_t lda = g->lda == 0 ? row_a : g->lda;
    const std::uint32_t ldb = g->ldb == 0 ? row_b : g->ldb;
    const std::uint32_t ldc = g->ldc == 0 ? g->n : g->ldc;
    const std::uint32_t ldd = g->ldd == 0 ? g->n : g->ldd;
    if (lda < row_a)
        return set_error(-EINVAL, "gemm: lda " + std::to_string(lda) + " below A's row of " + std::to_string(row_a));
    if (ldb < row_b)
        return set_error(-EINVAL, "gemm: ldb " + std::to_string(ldb) + " below B's row of " + std::to_string(row_b));
    if (has_c && ldc < g->n)
        return set_error(-EINVAL, "gemm: ldc " + std::to_string(ldc) + " below n " + std::to_string(g->n));
    if (ldd < g->n)
        return set_error(-EINVAL, "gemm: ldd " + std::to_string(ldd) + " below n " + std::to_string(g->n));
    if (g->a % in_elem != 0 || g->b % in_elem != 0 || g->d % out_elem != 0 || (has_c && g->c % out_elem != 0) ||
        ((g->flags & HPU_GEMM_BIAS) != 0 && g->bias % 4 != 0))
        return set_error(-EINVAL, "gemm: an address is not aligned to its element size");
    // mme.md rules 14 to 16: extents within the address space, the batch's D
    // matrices apart, D apart from every input (C may be exactly D).
    const std::uint32_t rows_a = ta ? g->k : g->m;
    const std::uint32_t rows_b = tb ? g->n : g->k;
    const std::uint64_t bias_bytes = (g->flags & HPU_GEMM_BIAS) != 0 ? 4ULL * g->n : 0;
    std::uint64_t ea = 0;
    std::uint64_t eb = 0;
    std::uint64_t ec = 0;
    std::uint64_t ed = 0;
    if (!extent(batch, g->stride_a, rows_a, lda, row_a, in_elem, ea) ||
        !extent(batch, g->stride_b, rows_b, ldb, row_b, in_elem, eb) ||
        !extent(batch, g->stride_d, g->m, ldd, g->n, out_elem, ed) ||
        (has_c && !extent(batch, g->stride_c, g->m, ldc, g->n, out_elem, ec)) || !ends_below_2_64(g->a, ea) ||
        !ends_below_2_64(g->b, eb) || !ends_below_2_64(g->d, ed) || (has_c && !ends_below_2_64(g->c, ec)) ||
        (bias_bytes != 0 && !ends_below_2_64(g->bias, bias_bytes)))
        return set_error(-EINVAL, "gemm: an operand runs past the end of the address space (mme.md rule 14)");
    if (batch > 1 && g->stride_d < static_cast<std::uint64_t>(g->m - 1) * ldd + g->n) {
        return set_error(-EINVAL, "gemm: stride_d " + std::to_string(g->stride_d) + " with batch " +
                                      std::to_string(batch) + ": the D matrices overlap (at least " +
                                      std::to_string(static_cast<std::uint64_t>(g->m - 1) * ldd + g->n) +
                                      ", mme.md rule 15)");
    }
    // C is exactly D only with the very same layout (mme.md): the same address,
    // ldc == ldd and, with a batch, stride_c == stride_d. Equal extents are not
    // enough: with m == 1 any two leading dimensions give the same extent.
    const bool c_is_d = has_c && g->c == g->d && ldc == ldd && (batch == 1 || g->stride_c == g->stride_d);
    if (overlaps(g->d, ed, g->a, ea) || overlaps(g->d, ed, g->b, eb) ||
        (bias_bytes != 0 && overlaps(g->d, ed, g->bias, bias_bytes)))
        return set_error(-EINVAL, "gemm: D overlaps an input (mme.md rule 16; C may be exactly D)");
    if (has_c && !c_is_d && overlaps(g->d, ed, g->c, ec)) {
        return set_error(-EINVAL, "gemm: D overlaps an input (mme.md rule 16): C overlaps D without being exactly D "
                                  "(c == d, ldc == ldd and, with a batch, stride_c == stride_d; here ldc " +
                                      std::to_string(ldc) + ", ldd " + std::to_string(ldd) + ", stride_c " +
                                      std::to_string(g->stride_c) + ", stride_d " + std::to_string(g->stride_d) + ")");
    }
    std::uint32_t flags = in_type | (out_type << HPU_MME_F_OUT_TYPE_SHIFT) | (g->act << HPU_MME_F_ACT_SHIFT);
    if (ta)
        flags |= HPU_MME_F_TRANS_A;
    if (tb)
        flags |= HPU_MME_F_TRANS_B;
    if ((g->flags & HPU_GEMM_BIAS) != 0)
        flags |= HPU_MME_F_BIAS;
    std::uint32_t alpha = 0;
    std::uint32_t beta = 0;
    std::memcpy(&alpha, &g->alpha, 4);
    std::memcpy(&beta, &g->beta, 4);
    put32(d + HPU_MME_D_FLAGS, flags);
    put32(d + HPU_MME_D_M, g->m);
    put32(d + HPU_MME_D_N, g->n);
    put32(d + HPU_MME_D_K, g->k);
    put32(d + HPU_MME_D_BATCH, batch);
    put64(d + HPU_MME_D_A, g->a);
    put64(d + HPU_MME_D_B, g->b);
    put64(d + HPU_MME_D_C, has_c ? g->c : 0);
    put64(d + HPU_MME_D_D, g->d);
    put64(d + HPU_MME_D_BIAS, (g->flags & HPU_GEMM_BIAS) != 0 ? g->bias : 0);
    put32(d + HPU_MME_D_LDA, lda);
    put32(d + HPU_MME_D_LDB, ldb);
    put32(d + HPU_MME_D_LDC, has_c ? ldc : 0);
    put32(d + HPU_MME_D_LDD, ldd);
    put64(d + HPU_MME_D_STRIDE_A, g->stride_a);
    put64(d + HPU_MME_D_STRIDE_B, g->stride_b);
    put64(d + HPU_MME_D_STRIDE_C, has_c ? g->stride_c : 0);
    put64(d + HPU_MME_D_STRIDE_D, g->stride_d);
    put32(d + HPU_MME_D_ALPHA, alpha);
    put32(d + HPU_MME_D_BETA, beta);
    return 0;
    // NOLINTEND(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

} // namespace hpu::detail

using namespace hpu::detail; // NOLINT(google-build-using-namespace)

namespace {

int kernel_handle(hpu_device *dev, KernelRef img, hpu_kernel_t **out)
{
    auto k = std::make_unique<hpu_kernel>();
    k->dev = dev;
    k->epoch = dev->epoch;
    k->img = std::move(img);
    *out = k.release();
    return 0;
}

} // namespace

extern "C" {

HPU_EXPORT const char *hpu_last_error(void)
{
    return g_last_error.c_str();
}

HPU_EXPORT size_t hpu_dtype_size(uint32_t dtype)
{
    return dtype > HPU_DTYPE_UINT8 ? 0 : hpu_tpc_dtype_size(dtype);
}

HPU_EXPORT int hpu_tensor_init(struct hpu_tensor *t, uint64_t va, uint32_t dtype, uint32_t ndims,
                               const uint32_t *sizes)
{
    clear_error();
    if (t == nullptr || sizes == nullptr)
        return set_error(-EINVAL, "hpu_tensor_init: NULL tensor or sizes");
    if (hpu_dtype_size(dtype) == 0)
        return set_error(-EINVAL, "hpu_tensor_init: dtype " + std::to_string(dtype) + " is not an HPU_DTYPE_*");
    if (ndims < 1 || ndims > HPU_TENSOR_MAX_DIMS)
        return set_error(-EINVAL, "hpu_tensor_init: ndims " + std::to_string(ndims) + " is not 1 to 5");
    hpu_tensor n{};
    n.va = va;
    n.dtype = dtype;
    n.ndims = ndims;
    std::uint64_t stride = 1;
    for (std::uint32_t d = 0; d < ndims; ++d) {
        const std::uint32_t s = sizes[d]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        if (s == 0 || s > HPU_TPC_MAX_DIM_SIZE || stride > std::numeric_limits<std::uint32_t>::max()) {
            return set_error(-EINVAL, "hpu_tensor_init: sizes[" + std::to_string(d) + "] is " + std::to_string(s) +
                                          " or the tensor needs a stride beyond 2^32-1");
        }
        n.sizes[d] = s;                                  // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
        n.strides[d] = static_cast<std::uint32_t>(stride); // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
        stride *= s;
    }
    *t = n;
    return 0;
}

HPU_EXPORT int hpu_kernel_load(hpu_device_t *dev, const void *data, size_t size, hpu_kernel_t **out)
{
    clear_error();
    if (out == nullptr)
        return set_error(-EINVAL, "hpu_kernel_load: out is NULL");
    *out = nullptr;
    if (dev == nullptr)
        return set_error(-EINVAL, "hpu_kernel_load: dev is NULL");
    return guarded([&]() {
        KernelRef img;
        if (const int err = kernel_image_load(dev, data, size, img); err < 0)
            return err;
        return kernel_handle(dev, std::move(img), out);
    });
}

HPU_EXPORT int hpu_kernel_load_file(hpu_device_t *dev, const char *path, hpu_kernel_t **out)
{
    clear_error();
    if (out == nullptr || path == nullptr)
        return set_error(-EINVAL, "hpu_kernel_load_file: path or out is NULL");
    *out = nullptr;
    return guarded([&]() {
        if (dev == nullptr)
            return set_error(-EINVAL, "hpu_kernel_load_file: dev is NULL");
        // Through the OS layer, which stops reading once past the limit.
        std::string bytes;
        const int rerr = dev->os().read_file_max(path, bytes, HPU_TPC_MAX_BINARY);
        if (rerr == -EFBIG) {
            return set_error(-ENOEXEC, std::string("kernel binary ") + path + ": more than " +
                                           std::to_string(HPU_TPC_MAX_BINARY) + " bytes (BIN_SIZE: at most 1 MiB)");
        }
        if (rerr < 0) {
            return set_error(rerr, std::string("kernel binary ") + path + ": cannot be opened or read (errno " +
                                       std::to_string(-rerr) + ")");
        }
        const int err = hpu_kernel_load(dev, bytes.data(), bytes.size(), out);
        if (err < 0 && !g_last_error.empty())
            (void)set_error(err, std::string(path) + ": " + g_last_error);
        return err;
    });
}

HPU_EXPORT int hpu_kernel_get(hpu_device_t *dev, const char *name, hpu_kernel_t **out)
{
    clear_error();
    if (out == nullptr)
        return set_error(-EINVAL, "hpu_kernel_get: out is NULL");
    *out = nullptr;
    if (dev == nullptr || name == nullptr)
        return set_error(-EINVAL, "hpu_kernel_get: dev or name is NULL");
    return guarded([&]() {
        const hpu::kernels::TpcKernel *lib = hpu::kernels::find_tpc_kernel(name);
        if (lib == nullptr) {
            return set_error(-ENOENT, std::string("hpu_kernel_get: no kernel \"") + name +
                                          "\" in the library (libhpu/kernels/README.md)");
        }
        // Buffers take dev->mu (GEM handle counts): load outside the lock;
        // a racing thread's copy, if it won, replaces ours.
        KernelRef img;
        {
            const std::lock_guard<std::mutex> lock(dev->mu);
            if (auto it = dev->kernels.find(lib->name); it != dev->kernels.end())
                img = it->second;
        }
        if (!img) {
            KernelRef fresh;
            if (const int err = kernel_image_load(dev, lib->data, lib->size, fresh); err < 0)
                return err;
            {
                const std::lock_guard<std::mutex> lock(dev->mu);
                img = dev->kernels.emplace(lib->name, fresh).first->second;
            }
        }
        return kernel_handle(dev, std::move(img), out);
    });
}

HPU_EXPORT size_t hpu_kernel_library_size(void)
{
    return hpu::kernels::tpc_kernels().size();
}

HPU_EXPORT const char *hpu_kernel_library_name(size_t i)
{
    const auto all = hpu::kernels::tpc_kernels();
    return i < all.size() ? all[i].name : nullptr;
}

HPU_EXPORT int hpu_kernel_get_info(const hpu_kernel_t *k, struct hpu_kernel_info *out)
{
    hpu::detail::clear_error();
    if (k == nullptr || out == nullptr || out->size < sizeof(out->size))
        return -EINVAL;
    hpu_kernel_info info = k->img->info;
    fill_sized(info, out);
    return 0;
}

HPU_EXPORT int hpu_kernel_destroy(hpu_kernel_t *k)
{
    hpu::detail::clear_error();
    delete k; // NOLINT(cppcoreguidelines-owning-memory)
    return 0;
}

} // extern "C"
