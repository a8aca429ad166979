// SPDX-License-Identifier: MIT
// libhpu 1.5 against the mocked kernel: TPC kernels (load, the built-in
// library, information), the TPC_LAUNCH and MME_GEMM packets and their
// descriptors byte for byte against Documentation/hw/tpc.md and mme.md,
// every argument rule libhpu enforces (errno and hpu_last_error()), and
// the sync-object reservation.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "drm/hpu_accel.h"
#include "fixture.h"
#include "hpu/hpu.h"
#include "mock_os.h"
#include "spec_bytes.h"
#include "tpc_binary.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;
using hpu::test::BinSpec;
using hpu::test::Bytes;
using hpu::test::Fixture;
using hpu::test::get_le;
using hpu::test::le16;
using hpu::test::le32;
using hpu::test::le64;
using hpu::test::le8;
using hpu::test::MockOs;
using hpu::test::put_le;
using hpu::test::spec_desc_packet;
using hpu::test::tpc_binary;
namespace bin_off = hpu::test::bin_off;

namespace {

constexpr std::uint32_t kTpcLaunch = 0x06;
constexpr std::uint32_t kMmeGemm = 0x07;

std::uint32_t bits(float f)
{
    return std::bit_cast<std::uint32_t>(f);
}

// The kernel of most tests: 3 tensors (0 pinned FP32, 1 any, 2 pinned
// BF16), 3 scalars, a 3-dimensional index space.
BinSpec unit_spec()
{
    BinSpec s;
    s.dtypes[0] = HPU_DTYPE_FP32;
    s.dtypes[2] = HPU_DTYPE_BF16;
    return s;
}

// The VA of the read-only HOST mapping holding a copy of bin, or 0.
std::uint64_t va_holding(const MockOs &m, const Bytes &bin)
{
    for (const auto &[va, map] : m.vm) {
        if ((map.flags & DRM_HPU_VM_READONLY) != 0 && m.read_va(va, bin.size()) == bin)
            return va;
    }
    return 0;
}

// The descriptor that the TPC_LAUNCH or MME_GEMM packet at cb[off] names,
// as the device would read it now.
Bytes descriptor(const MockOs &m, const Bytes &cb, std::size_t off)
{
    const std::uint64_t addr = get_le(cb, off + 8, 8);
    if (cb.at(off) == kMmeGemm)
        return m.read_va(addr, 128);
    const Bytes fixed = m.read_va(addr, 192);
    return fixed.empty() ? fixed : m.read_va(addr, 192 + 64 * std::uint64_t{fixed.at(20)});
}

// A tensor descriptor's fields (tpc.md, "Tensors").
struct SpecTensor {
    std::uint64_t base = 0;
    std::uint8_t dtype = 0;
    std::uint8_t ndims = 0;
    std::uint32_t pad = 0;
    std::array<std::uint32_t, 5> size{};
    std::array<std::uint32_t, 5> stride{};
};

// A launch descriptor laid out by tpc.md's table ("Launch descriptor").
Bytes spec_launch_desc(std::uint64_t binary, std::uint32_t binary_size, const std::array<std::uint32_t, 5> &index,
                       std::uint64_t seed, const std::vector<std::uint32_t> &scalars,
                       const std::vector<SpecTensor> &tensors)
{
    Bytes b;
    le32(b, 0x4c505448U); // "HTPL"
    le32(b, 0);           // flags
    le64(b, binary);
    le32(b, binary_size);
    le8(b, static_cast<std::uint8_t>(tensors.size()));
    le8(b, static_cast<std::uint8_t>(scalars.size()));
    le16(b, 0);
    for (const std::uint32_t s : index)
        le32(b, s);
    le32(b, 0);
    le64(b, seed);
    le64(b, 0);
    for (std::size_t i = 0; i < 32; ++i)
        le32(b, i < scalars.size() ? scalars[i] : 0);
    for (const SpecTensor &t : tensors) {
        le64(b, t.base);
        le8(b, t.dtype);
        le8(b, t.ndims);
        le16(b, 0); // flags
        le32(b, t.pad);
        for (const std::uint32_t s : t.size)
            le32(b, s);
        for (const std::uint32_t s : t.stride)
            le32(b, s);
        le64(b, 0);
    }
    return b;
}

// The GEMM descriptor's fields (mme.md, "The GEMM descriptor").
struct SpecGemm {
    std::uint32_t flags = 0;
    std::uint32_t m = 0, n = 0, k = 0, batch = 0;
    std::uint64_t a = 0, b = 0, c = 0, d = 0, bias = 0;
    std::uint32_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
    std::uint64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;
    float alpha = 0, beta = 0;
};

Bytes spec_gemm_desc(const SpecGemm &g)
{
    Bytes b;
    le32(b, g.flags);
    le32(b, 0);
    for (const std::uint32_t v : {g.m, g.n, g.k, g.batch})
        le32(b, v);
    for (const std::uint64_t v : {g.a, g.b, g.c, g.d, g.bias})
        le64(b, v);
    for (const std::uint32_t v : {g.lda, g.ldb, g.ldc, g.ldd})
        le32(b, v);
    for (const std::uint64_t v : {g.stride_a, g.stride_b, g.stride_c, g.stride_d})
        le64(b, v);
    le32(b, bits(g.alpha));
    le32(b, bits(g.beta));
    le64(b, 0);
    return b;
}

// The arguments of a valid launch of the unit kernel; tests break one.
struct LaunchArgs {
    std::vector<hpu_tensor> tensors;
    std::vector<std::uint32_t> scalars{bits(0.5F), 7, 0xffffffffU};
    hpu_launch l{};

    LaunchArgs() : tensors(3)
    {
        const std::array<std::uint32_t, 2> s0{5, 4};
        REQUIRE(hpu_tensor_init(&tensors[0], 0x20000040ULL, HPU_DTYPE_FP32, 2, s0.data()) == 0);
        tensors[0].pad = bits(-INFINITY);
        // An INT8 view with a broadcast dimension (stride 0), built by hand.
        hpu_tensor &t1 = tensors[1];
        t1.va = 0x30000001ULL;
        t1.dtype = HPU_DTYPE_INT8;
        t1.ndims = 3;
        t1.sizes[0] = 3;
        t1.sizes[1] = 2;
        t1.sizes[2] = 2;
        t1.strides[0] = 1;
        t1.strides[1] = 0;
        t1.strides[2] = 6;
        t1.pad = 0x7f;
        const std::array<std::uint32_t, 1> s2{10};
        REQUIRE(hpu_tensor_init(&tensors[2], 0x40000000ULL, HPU_DTYPE_BF16, 1, s2.data()) == 0);
        tensors[2].pad = 0x3f80; // 1.0
        l.size = sizeof(l);
        l.num_tensors = 3;
        l.tensors = tensors.data();
        l.scalars = scalars.data();
        l.num_scalars = 3;
        l.index_size[0] = 7;
        l.index_size[1] = 3; // [2] stays 0: read as 1
        l.seed = 0x0123456789abcdefULL;
    }
    LaunchArgs(const LaunchArgs &) = delete;
    LaunchArgs &operator=(const LaunchArgs &) = delete;
    LaunchArgs(LaunchArgs &&) = delete;
    LaunchArgs &operator=(LaunchArgs &&) = delete;
    ~LaunchArgs() = default;
};

// The descriptor tpc.md gives for LaunchArgs' launch of the unit kernel at binary.
Bytes expected_launch(std::uint64_t binary, std::uint32_t binary_size)
{
    std::vector<SpecTensor> t(3);
    t[0] = {0x20000040ULL, HPU_DTYPE_FP32, 2, 0xff800000U, {5, 4, 0, 0, 0}, {1, 5, 0, 0, 0}};
    t[1] = {0x30000001ULL, HPU_DTYPE_INT8, 3, 0x7f, {3, 2, 2, 0, 0}, {1, 0, 6, 0, 0}};
    t[2] = {0x40000000ULL, HPU_DTYPE_BF16, 1, 0x3f80, {10, 0, 0, 0, 0}, {1, 0, 0, 0, 0}};
    return spec_launch_desc(binary, binary_size, {7, 3, 1, 1, 1}, 0x0123456789abcdefULL,
                            {0x3f000000U, 7, 0xffffffffU}, t);
}

// A valid FP32 GEMM, 4 x 6 = (4 x 5)(5 x 6); tests break one field.
hpu_gemm base_gemm()
{
    hpu_gemm g{};
    g.size = sizeof(g);
    g.in_dtype = HPU_DTYPE_FP32;
    g.out_dtype = HPU_DTYPE_FP32;
    g.m = 4;
    g.n = 6;
    g.k = 5;
    g.a = 0x10000;
    g.b = 0x20000;
    g.d = 0x30000;
    g.alpha = 1.0F;
    return g;
}

// A fixture with the unit kernel loaded.
struct KernelFixture : Fixture {
    Bytes bin = tpc_binary(unit_spec());
    hpu_kernel_t *k = nullptr;
    KernelFixture() { REQUIRE(hpu_kernel_load(dev, bin.data(), bin.size(), &k) == 0); }
    KernelFixture(const KernelFixture &) = delete;
    KernelFixture &operator=(const KernelFixture &) = delete;
    KernelFixture(KernelFixture &&) = delete;
    KernelFixture &operator=(KernelFixture &&) = delete;
    ~KernelFixture() { (void)hpu_kernel_destroy(k); }

    // Destroys the kernel, then checks that every object went.
    void release_and_check()
    {
        CHECK(hpu_kernel_destroy(k) == 0);
        k = nullptr;
        check_clean();
    }
};

// The three ways to hand libhpu a launch or a GEMM: a command list, an
// eager call on a queue of engine class cls, a graph.
struct Targets {
    hpu_cmdlist_t *cl = nullptr;
    hpu_queue_t *q = nullptr;
    hpu_graph_t *g = nullptr;
    Targets(hpu_device_t *dev, std::uint32_t cls)
    {
        REQUIRE(hpu_cmdlist_create(dev, &cl) == 0);
        REQUIRE(hpu_queue_create(dev, cls, 0, &q) == 0);
        REQUIRE(hpu_graph_create(dev, &g) == 0);
    }
    Targets(const Targets &) = delete;
    Targets &operator=(const Targets &) = delete;
    Targets(Targets &&) = delete;
    Targets &operator=(Targets &&) = delete;
    ~Targets()
    {
        CHECK(hpu_graph_destroy(g) == 0);
        CHECK(hpu_cmdlist_destroy(cl) == 0);
        CHECK(hpu_queue_destroy(q) == 0);
    }
    // Nothing was recorded, added or submitted.
    void check_untouched(const MockOs &m) const
    {
        CHECK(hpu_cmdlist_size(cl) == 0);
        CHECK(hpu_graph_size(g) == 0);
        CHECK(m.jobs.empty());
    }
};

// The call was refused -EINVAL with message in hpu_last_error().
void refused(int rc, const char *message)
{
    CHECK(rc == -EINVAL);
    CHECK_THAT(hpu_last_error(), ContainsSubstring(message));
}

// The same for an eager call(&fence), which also clears the fence.
template <typename Call>
void refused_eager(Call &&call, const char *message)
{
    auto *f = reinterpret_cast<hpu_fence_t *>(&message); // any non-null value
    refused(call(&f), message);
    CHECK(f == nullptr);
}

} // namespace

TEST_CASE("a kernel binary is checked, copied read-only into the device and described", "[libhpu][compute]")
{
    Fixture fx;
    const BinSpec spec = unit_spec();
    const Bytes bin = tpc_binary(spec);
    hpu_kernel_t *k = nullptr;
    REQUIRE(hpu_kernel_load(fx.dev, bin.data(), bin.size(), &k) == 0);
    CHECK(va_holding(fx.m, bin) % 64 == 0);
    CHECK(va_holding(fx.m, bin) != 0);

    hpu_kernel_info info{};
    info.size = sizeof(info);
    REQUIRE(hpu_kernel_get_info(k, &info) == 0);
    CHECK(info.size == sizeof(info));
    CHECK(info.num_tensors == 3);
    CHECK(info.num_scalars == 3);
    CHECK(info.index_dims == 3);
    CHECK(info.num_bundles == 2);
    CHECK(info.slm_size == 16);
    CHECK(info.vlm_size == 256);
    CHECK(info.binary_size == bin.size());
    CHECK(std::vector<std::uint8_t>(std::begin(info.tensor_dtype), std::end(info.tensor_dtype)) ==
          std::vector<std::uint8_t>(spec.dtypes.begin(), spec.dtypes.end()));
    CHECK(std::string(static_cast<const char *>(info.name)) == "unit_kernel");

    // A smaller structure gets only its prefix; below 4 bytes is refused.
    hpu_kernel_info small{};
    std::memset(&small, 0xee, sizeof(small));
    small.size = 8;
    REQUIRE(hpu_kernel_get_info(k, &small) == 0);
    CHECK(small.size == 8);
    CHECK(small.num_tensors == 3);
    CHECK(small.num_scalars == 0xeeeeeeeeU);
    small.size = 2;
    CHECK(hpu_kernel_get_info(k, &small) == -EINVAL);
    CHECK(hpu_kernel_get_info(nullptr, &info) == -EINVAL);

    CHECK(hpu_kernel_destroy(k) == 0);
    CHECK(va_holding(fx.m, bin) == 0);
    CHECK(hpu_kernel_destroy(nullptr) == 0);
    fx.check_clean();
}

TEST_CASE("malformed kernel binaries are -ENOEXEC naming the rule, with no system call", "[libhpu][compute]")
{
    Fixture fx;
    struct Case {
        const char *rule;
        std::function<void(Bytes &)> breakit;
    };
    const std::vector<Case> cases = {
        {"BIN_MAGIC", [](Bytes &b) { put_le(b, bin_off::kMagic, 0x43505449U, 4); }},
        {"BIN_VERSION", [](Bytes &b) { put_le(b, bin_off::kVersion, 2, 2); }},
        {"BIN_SIZE", [](Bytes &b) { put_le(b, bin_off::kTotal, b.size() + 64, 4); }},
        {"BIN_RESERVED", [](Bytes &b) { put_le(b, bin_off::kFlags, 1, 4); }},
        {"BIN_CODE", [](Bytes &b) { put_le(b, bin_off::kCodeOffset, 136, 4); }},
        {"BIN_ENTRY", [](Bytes &b) { put_le(b, bin_off::kEntry, 2, 4); }},
        {"BIN_COUNTS", [](Bytes &b) { put_le(b, bin_off::kIndexDims, 6, 1); }},
        {"BIN_LOCAL", [](Bytes &b) { put_le(b, bin_off::kSlm, 18, 4); }},
        {"BIN_DTYPE", [](Bytes &b) { put_le(b, bin_off::kDtypes + 3, HPU_DTYPE_FP32, 1); }},
        {"BIN_NAME", [](Bytes &b) { put_le(b, bin_off::kName + 2, 0x07, 1); }},
        {"BIN_META", [](Bytes &b) { b.back() = 'x'; }},              // not NUL-terminated
        {"BIN_META", [](Bytes &b) { put_le(b, bin_off::kMetaOffset, 200, 4); }}, // overlaps the code
    };
    const int calls = fx.m.ioctl_calls;
    for (const Case &c : cases) {
        INFO(c.rule);
        Bytes bin = tpc_binary(unit_spec());
        c.breakit(bin);
        auto *k = reinterpret_cast<hpu_kernel_t *>(&bin);
        CHECK(hpu_kernel_load(fx.dev, bin.data(), bin.size(), &k) == -ENOEXEC);
        CHECK(k == nullptr);
        CHECK_THAT(hpu_last_error(), StartsWith(std::string("kernel binary: rule ") + c.rule + " broken ("));
    }
    hpu_kernel_t *k = nullptr;
    const Bytes bin = tpc_binary(unit_spec());
    CHECK(hpu_kernel_load(fx.dev, bin.data(), 127, &k) == -ENOEXEC);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("127 bytes (BIN_SIZE: 128 bytes to 1 MiB)"));
    const Bytes big((1U << 20) + 64, 0);
    CHECK(hpu_kernel_load(fx.dev, big.data(), big.size(), &k) == -ENOEXEC);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("BIN_SIZE"));
    CHECK(hpu_kernel_load(fx.dev, nullptr, 256, &k) == -EINVAL);
    CHECK_THAT(hpu_last_error(), Catch::Matchers::Equals("kernel binary: data is NULL"));
    CHECK(hpu_kernel_load(nullptr, bin.data(), bin.size(), &k) == -EINVAL);
    CHECK(hpu_kernel_load(fx.dev, bin.data(), bin.size(), nullptr) == -EINVAL);
    CHECK(fx.m.ioctl_calls == calls);

    // A later good call clears the message.
    REQUIRE(hpu_kernel_load(fx.dev, bin.data(), bin.size(), &k) == 0);
    CHECK(std::string(hpu_last_error()).empty());
    CHECK(hpu_kernel_destroy(k) == 0);
    fx.check_clean();
}

TEST_CASE("built-in kernels by name: one copy per device, every handle destroyed", "[libhpu][compute]")
{
    Fixture fx;
    const std::size_t n = hpu_kernel_library_size();
    REQUIRE(n > 0);
    std::vector<std::string> names;
    for (std::size_t i = 0; i < n; ++i)
        names.emplace_back(hpu_kernel_library_name(i));
    CHECK(std::is_sorted(names.begin(), names.end()));
    CHECK(std::find(names.begin(), names.end(), "add_f32") != names.end());
    CHECK(hpu_kernel_library_name(n) == nullptr);

    hpu_kernel_t *a = nullptr;
    hpu_kernel_t *b = nullptr;
    REQUIRE(hpu_kernel_get(fx.dev, "add_f32", &a) == 0);
    const std::size_t objects = fx.m.gem.size();
    const int calls = fx.m.ioctl_calls;
    REQUIRE(hpu_kernel_get(fx.dev, "add_f32", &b) == 0);
    CHECK(fx.m.gem.size() == objects); // the device's copy is shared
    CHECK(fx.m.ioctl_calls == calls);
    hpu_kernel_info info{};
    info.size = sizeof(info);
    REQUIRE(hpu_kernel_get_info(b, &info) == 0);
    CHECK(std::string(static_cast<const char *>(info.name)) == "add_f32");
    CHECK(info.num_tensors == 3);
    CHECK(hpu_kernel_destroy(a) == 0);
    CHECK(hpu_kernel_destroy(b) == 0);

    hpu_kernel_t *none = nullptr;
    CHECK(hpu_kernel_get(fx.dev, "add_f33", &none) == -ENOENT);
    CHECK(none == nullptr);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("no kernel \"add_f33\" in the library"));
    CHECK(hpu_kernel_get(fx.dev, nullptr, &none) == -EINVAL);
    CHECK(hpu_kernel_get(nullptr, "add_f32", &none) == -EINVAL);
    CHECK(hpu_kernel_get(fx.dev, "add_f32", nullptr) == -EINVAL);
    // The library's copies are freed with the device (check_clean after close).
    CHECK(hpu_close(fx.dev) == 0);
    fx.dev = nullptr;
    fx.check_clean();
}

TEST_CASE("every call starts with hpu_last_error() empty, not with an older call's message", "[libhpu][compute]")
{
    Fixture fx;
    hpu_kernel_t *none = nullptr;
    const auto stale = [&] {
        REQUIRE(hpu_kernel_get(fx.dev, "add_f33", &none) == -ENOENT);
        REQUIRE(!std::string(hpu_last_error()).empty());
    };
    // Calls from before 1.5 give no message of their own when they refuse.
    stale();
    CHECK(hpu_queue_submit(nullptr, nullptr, nullptr, 0, nullptr) < 0);
    CHECK(std::string(hpu_last_error()).empty());
    stale();
    CHECK(hpu_cmd_nop(nullptr) < 0);
    CHECK(std::string(hpu_last_error()).empty());
    stale();
    CHECK(hpu_fence_wait(nullptr, 0) == -EINVAL);
    CHECK(std::string(hpu_last_error()).empty());
    stale();
    CHECK(hpu_buffer_create(nullptr, 4096, HPU_MEM_DEVICE, nullptr) < 0);
    CHECK(std::string(hpu_last_error()).empty());
    stale();
    CHECK(hpu_kernel_destroy(nullptr) == 0);
    CHECK(std::string(hpu_last_error()).empty());
    stale();
    CHECK(hpu_sob_free(nullptr, 0) < 0);
    CHECK(std::string(hpu_last_error()).empty());
    fx.check_clean();
}

TEST_CASE("a kernel binary from a file, read through the OS layer", "[libhpu][compute]")
{
    Fixture fx;
    Bytes bin = tpc_binary(unit_spec());
    const std::string path = "/opt/kernels/k.bin";
    fx.m.files[path] = std::string(bin.begin(), bin.end());
    hpu_kernel_t *k = nullptr;
    REQUIRE(hpu_kernel_load_file(fx.dev, path.c_str(), &k) == 0);
    CHECK(fx.m.read_calls_by_path[path] == 1);
    CHECK(va_holding(fx.m, bin) != 0);
    CHECK(hpu_kernel_destroy(k) == 0);

    SECTION("a binary that breaks a rule: -ENOEXEC, the path in the message")
    {
        bin[bin_off::kMagic] ^= 1U;
        fx.m.files[path] = std::string(bin.begin(), bin.end());
        CHECK(hpu_kernel_load_file(fx.dev, path.c_str(), &k) == -ENOEXEC);
        CHECK_THAT(hpu_last_error(), StartsWith(path + ": kernel binary: rule BIN_MAGIC broken"));
    }
    SECTION("a missing file: -ENOENT")
    {
        fx.m.files.erase(path);
        CHECK(hpu_kernel_load_file(fx.dev, path.c_str(), &k) == -ENOENT);
        CHECK_THAT(hpu_last_error(), ContainsSubstring("cannot be opened"));
    }
    SECTION("a file that cannot be read: its errno")
    {
        fx.m.read_fail[path] = -EACCES;
        CHECK(hpu_kernel_load_file(fx.dev, path.c_str(), &k) == -EACCES);
        CHECK_THAT(hpu_last_error(), ContainsSubstring(path));
        fx.m.read_fail[path] = -EIO;
        CHECK(hpu_kernel_load_file(fx.dev, path.c_str(), &k) == -EIO);
    }
    SECTION("a short read (the file cut while read): refused by the binary's own sizes")
    {
        fx.m.read_short[path] = bin.size() - 4;
        CHECK(hpu_kernel_load_file(fx.dev, path.c_str(), &k) == -ENOEXEC);
        CHECK_THAT(hpu_last_error(), StartsWith(path + ": kernel binary: "));
        fx.m.read_short[path] = 0;
        CHECK(hpu_kernel_load_file(fx.dev, path.c_str(), &k) == -ENOEXEC);
    }
    SECTION("a file larger than 1 MiB: -ENOEXEC without loading it")
    {
        fx.m.files[path] = std::string((std::size_t{1} << 20U) + 1, '\0'); // BIN_SIZE: at most 1 MiB
        CHECK(hpu_kernel_load_file(fx.dev, path.c_str(), &k) == -ENOEXEC);
        CHECK_THAT(hpu_last_error(), ContainsSubstring("BIN_SIZE: at most 1 MiB"));
    }
    CHECK(k == nullptr);
    CHECK(hpu_kernel_load_file(fx.dev, nullptr, &k) == -EINVAL);
    CHECK(hpu_kernel_load_file(nullptr, path.c_str(), &k) == -EINVAL);
    fx.check_clean();
}

TEST_CASE("TPC_LAUNCH names a descriptor laid out as tpc.md says", "[libhpu][compute]")
{
    KernelFixture fx;
    const std::uint64_t binary = va_holding(fx.m, fx.bin);
    REQUIRE(binary != 0);
    const Bytes want = expected_launch(binary, static_cast<std::uint32_t>(fx.bin.size()));
    const LaunchArgs args;
    Bytes desc;
    const Bytes cb = fx.recorded([&](hpu_cmdlist_t *cl) { REQUIRE(hpu_cmd_launch(cl, fx.k, &args.l) == 0); },
                                 HPU_ENGINE_CLASS_TPC, [&]() { desc = descriptor(fx.m, fx.m.jobs.back().cb, 0); });
    CHECK(fx.m.last_queue_class == DRM_HPU_ENGINE_TPC);
    REQUIRE(cb.size() == 16);
    const std::uint64_t addr = get_le(cb, 8, 8);
    CHECK(cb == spec_desc_packet(kTpcLaunch, addr));
    CHECK(addr % 64 == 0);
    CHECK(desc.size() == 192 + 3 * 64);
    CHECK(desc == want);
    fx.release_and_check();
}

TEST_CASE("launches in one list get descriptors of their own; eager launches the same bytes", "[libhpu][compute]")
{
    KernelFixture fx;
    const std::uint64_t binary = va_holding(fx.m, fx.bin);
    LaunchArgs args;
    hpu_cmdlist_t *cl = nullptr;
    hpu_queue_t *q = nullptr;
    REQUIRE(hpu_cmdlist_create(fx.dev, &cl) == 0);
    REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_TPC, 0, &q) == 0);
    REQUIRE(hpu_cmd_launch(cl, fx.k, &args.l) == 0);
    args.l.seed = 42;
    args.scalars[1] = 8;
    REQUIRE(hpu_cmd_launch(cl, fx.k, &args.l) == 0);
    REQUIRE(hpu_queue_submit(q, cl, nullptr, 0, nullptr) == 0);
    const Bytes cb = fx.m.jobs.back().cb;
    REQUIRE(cb.size() == 32);
    CHECK(get_le(cb, 16, 4) == kTpcLaunch);
    Bytes first = descriptor(fx.m, cb, 0);
    const Bytes second = descriptor(fx.m, cb, 16);
    CHECK(get_le(cb, 24, 8) % 64 == 0);
    CHECK(get_le(cb, 24, 8) != get_le(cb, 8, 8));
    CHECK(first == expected_launch(binary, static_cast<std::uint32_t>(fx.bin.size())));
    CHECK(get_le(second, 48, 8) == 42);  // seed
    CHECK(get_le(second, 64 + 4, 4) == 8); // scalars[1]

    // The kernel handle may go: the list keeps the binary while it needs it.
    REQUIRE(hpu_kernel_destroy(fx.k) == 0);
    fx.k = nullptr;
    CHECK(va_holding(fx.m, fx.bin) == binary);

    hpu_fence_t *f = nullptr;
    hpu_kernel_t *k2 = nullptr;
    REQUIRE(hpu_kernel_load(fx.dev, fx.bin.data(), fx.bin.size(), &k2) == 0);
    args.l.seed = 0x0123456789abcdefULL;
    args.scalars[1] = 7;
    REQUIRE(hpu_queue_launch(q, k2, &args.l, nullptr, 0, &f) == 0);
    REQUIRE(f != nullptr);
    const Bytes eager = descriptor(fx.m, fx.m.jobs.back().cb, 0);
    // The recorded descriptor but for the binary's address (k2 has its own copy).
    REQUIRE(eager.size() == first.size());
    CHECK(get_le(eager, 8, 8) != binary);
    put_le(first, 8, get_le(eager, 8, 8), 8);
    CHECK(eager == first);
    CHECK(hpu_fence_destroy(f) == 0);
    CHECK(hpu_kernel_destroy(k2) == 0);
    CHECK(hpu_cmdlist_destroy(cl) == 0);
    CHECK(va_holding(fx.m, fx.bin) != binary); // the list's binary went with it
    CHECK(va_holding(fx.m, fx.bin) != 0);      // the queue's eager list still holds k2's
    CHECK(hpu_queue_destroy(q) == 0);
    CHECK(va_holding(fx.m, fx.bin) == 0);
    fx.release_and_check();
}

TEST_CASE("every launch rule libhpu enforces is -EINVAL with a message, before any system call",
          "[libhpu][compute]")
{
    KernelFixture fx;
    {
        const Targets t(fx.dev, HPU_ENGINE_CLASS_TPC);
        struct Case {
            const char *message; // what hpu_last_error() contains
            std::function<void(LaunchArgs &)> breakit;
        };
        // Rules the device checks that no caller input can break through
        // struct hpu_launch (DESC_*, BIN_ADDR, ARG_COUNT after the count
        // checks, TENSOR_RESERVED's flags) have no case here.
        const std::vector<Case> cases = {
            {"launch: size 8 below sizeof(struct hpu_launch)", [](LaunchArgs &a) { a.l.size = 8; }},
            {"launch of unit_kernel: 2 tensors, the kernel takes 3", [](LaunchArgs &a) { a.l.num_tensors = 2; }},
            {"launch of unit_kernel: 4 scalars, the kernel takes 3", [](LaunchArgs &a) { a.l.num_scalars = 4; }},
            {"launch: tensors or scalars is NULL", [](LaunchArgs &a) { a.l.tensors = nullptr; }},
            {"launch: tensors or scalars is NULL", [](LaunchArgs &a) { a.l.scalars = nullptr; }},
            {"tensor 1: reserved is not zero", [](LaunchArgs &a) { a.tensors[1].reserved = 1; }},
            {"tensor 0: dtype 9 is not an HPU_DTYPE_*", [](LaunchArgs &a) { a.tensors[0].dtype = 9; }},
            {"tensor 1: dtype 0 is not an HPU_DTYPE_*", [](LaunchArgs &a) { a.tensors[1].dtype = 0; }},
            {"tensor 2: ndims 6 is not 1 to 5", [](LaunchArgs &a) { a.tensors[2].ndims = 6; }},
            {"tensor 2: ndims 0 is not 1 to 5", [](LaunchArgs &a) { a.tensors[2].ndims = 0; }},
            {"rule INDEX_SPACE broken (index space 7x3x0x2x0, index_dims 3)",
             [](LaunchArgs &a) { a.l.index_size[3] = 2; }},
            {"rule INDEX_SPACE broken", [](LaunchArgs &a) { a.l.index_size[0] = 0x80000000U; }},
            {"rule INDEX_SPACE broken", // 2^62 members, above 2^48
             [](LaunchArgs &a) {
                 a.l.index_size[0] = 0x7fffffffU;
                 a.l.index_size[1] = 0x7fffffffU;
             }},
            {"rule INDEX_SPACE broken (index space 16777216x16777216x65536x0x0", // 2^64: wraps to 0
             [](LaunchArgs &a) {
                 a.l.index_size[0] = 1U << 24;
                 a.l.index_size[1] = 1U << 24;
                 a.l.index_size[2] = 1U << 16;
             }},
            {"rule INDEX_SPACE broken (index space 16777216x16777216x65537x0x0", // wraps to 2^48
             [](LaunchArgs &a) {
                 a.l.index_size[0] = 1U << 24;
                 a.l.index_size[1] = 1U << 24;
                 a.l.index_size[2] = (1U << 16) + 1;
             }},
            {"tensor 0: rule TENSOR_DTYPE broken (the kernel wants dtype 1, got 3)",
             [](LaunchArgs &a) { a.tensors[0].dtype = HPU_DTYPE_INT32; }},
            {"tensor 0: rule TENSOR_SHAPE broken (ndims 2, sizes 5x0x0x0x0",
             [](LaunchArgs &a) { a.tensors[0].sizes[1] = 0; }},
            {"tensor 2: rule TENSOR_SHAPE broken", [](LaunchArgs &a) { a.tensors[2].sizes[0] = 0x80000000U; }},
            {"tensor 0: rule TENSOR_SHAPE broken", [](LaunchArgs &a) { a.tensors[0].sizes[2] = 1; }},
            {"tensor 1: rule TENSOR_SHAPE broken", [](LaunchArgs &a) { a.tensors[1].strides[3] = 4; }},
            {"tensor 0: rule TENSOR_ALIGN broken (va 0x20000042)", [](LaunchArgs &a) { a.tensors[0].va = 0x20000042; }},
            {"tensor 2: rule TENSOR_RANGE broken (va 0xfffffffffffffff0)",
             [](LaunchArgs &a) { a.tensors[2].va = 0xfffffffffffffff0ULL; }},
            {"tensor 1: rule TENSOR_RANGE broken (va 0x30000001)", // a span past 2^64
             [](LaunchArgs &a) {
                 hpu_tensor &t = a.tensors[1];
                 t.sizes[0] = t.sizes[1] = t.sizes[2] = 0x7fffffffU;
                 t.strides[0] = t.strides[1] = t.strides[2] = 0xffffffffU;
             }},
            {"tensor 2: rule TENSOR_PAD broken", [](LaunchArgs &a) { a.tensors[2].pad = 0x10000; }},
            {"tensor 1: rule TENSOR_PAD broken", [](LaunchArgs &a) { a.tensors[1].pad = 0x100; }},
        };
        const int calls = fx.m.ioctl_calls;
        const int creates = fx.m.request_calls[DRM_IOCTL_SYNCOBJ_CREATE];
        for (const Case &c : cases) {
            INFO(c.message);
            LaunchArgs a;
            c.breakit(a);
            refused(hpu_cmd_launch(t.cl, fx.k, &a.l), c.message);
            refused_eager([&](hpu_fence_t **f) { return hpu_queue_launch(t.q, fx.k, &a.l, nullptr, 0, f); }, c.message);
            refused(hpu_graph_add_launch(t.g, fx.k, &a.l, nullptr, 0), c.message);
        }
        refused(hpu_cmd_launch(t.cl, fx.k, nullptr), "launch: struct hpu_launch is NULL");
        const LaunchArgs good;
        refused(hpu_cmd_launch(nullptr, fx.k, &good.l), "launch: command list or kernel is NULL");
        refused(hpu_cmd_launch(t.cl, nullptr, &good.l), "launch: command list or kernel is NULL");
        CHECK(hpu_queue_launch(nullptr, fx.k, &good.l, nullptr, 0, nullptr) == -EINVAL);
        t.check_untouched(fx.m);
        // No system call but the eager pool's first command list (its syncobj).
        CHECK(fx.m.ioctl_calls == calls + 1);
        CHECK(fx.m.request_calls[DRM_IOCTL_SYNCOBJ_CREATE] == creates + 1);

        // A kernel of another device.
        hpu_device_t *other = nullptr;
        REQUIRE(hpu_open_by_index(1, &other) == 0);
        hpu_kernel_t *k1 = nullptr;
        REQUIRE(hpu_kernel_load(other, fx.bin.data(), fx.bin.size(), &k1) == 0);
        CHECK(hpu_cmd_launch(t.cl, k1, &good.l) == -EXDEV);
        CHECK_THAT(hpu_last_error(), ContainsSubstring("another device"));
        CHECK(hpu_graph_add_launch(t.g, k1, &good.l, nullptr, 0) == -EXDEV);
        CHECK(hpu_kernel_destroy(k1) == 0);
        CHECK(hpu_close(other) == 0);

        // The valid launch passes after all that.
        CHECK(hpu_cmd_launch(t.cl, fx.k, &good.l) == 0);
        CHECK(std::string(hpu_last_error()).empty());
    } // the targets go first
    fx.release_and_check();
}

TEST_CASE("hpu_tensor_init: dense strides, and its refusals", "[libhpu][compute]")
{
    const Fixture fx;
    hpu_tensor t{};
    const std::array<std::uint32_t, 5> sizes{3, 4, 5, 6, 7};
    REQUIRE(hpu_tensor_init(&t, 0x1000, HPU_DTYPE_UINT16, 5, sizes.data()) == 0);
    CHECK(t.va == 0x1000);
    CHECK(t.dtype == HPU_DTYPE_UINT16);
    CHECK(t.ndims == 5);
    CHECK(std::vector<std::uint32_t>(std::begin(t.sizes), std::end(t.sizes)) ==
          std::vector<std::uint32_t>{3, 4, 5, 6, 7});
    CHECK(std::vector<std::uint32_t>(std::begin(t.strides), std::end(t.strides)) ==
          std::vector<std::uint32_t>{1, 3, 12, 60, 360});
    CHECK(t.pad == 0);
    CHECK(t.reserved == 0);
    REQUIRE(hpu_tensor_init(&t, 0x2000, HPU_DTYPE_FP32, 2, sizes.data()) == 0);
    CHECK(std::vector<std::uint32_t>(std::begin(t.sizes), std::end(t.sizes)) ==
          std::vector<std::uint32_t>{3, 4, 0, 0, 0});
    CHECK(std::vector<std::uint32_t>(std::begin(t.strides), std::end(t.strides)) ==
          std::vector<std::uint32_t>{1, 3, 0, 0, 0});

    const hpu_tensor before = t;
    const std::array<std::uint32_t, 3> zero{4, 0, 2};
    const std::array<std::uint32_t, 1> huge{0x80000000U};
    const std::array<std::uint32_t, 3> wide{65536, 65536, 2}; // the third stride is 2^32
    CHECK(hpu_tensor_init(&t, 0, 0, 1, sizes.data()) == -EINVAL);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("dtype 0 is not an HPU_DTYPE_*"));
    CHECK(hpu_tensor_init(&t, 0, HPU_DTYPE_UINT8 + 1, 1, sizes.data()) == -EINVAL);
    CHECK(hpu_tensor_init(&t, 0, HPU_DTYPE_FP32, 0, sizes.data()) == -EINVAL);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("ndims 0 is not 1 to 5"));
    CHECK(hpu_tensor_init(&t, 0, HPU_DTYPE_FP32, 6, sizes.data()) == -EINVAL);
    CHECK(hpu_tensor_init(&t, 0, HPU_DTYPE_FP32, 3, zero.data()) == -EINVAL);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("sizes[1] is 0"));
    CHECK(hpu_tensor_init(&t, 0, HPU_DTYPE_FP32, 1, huge.data()) == -EINVAL);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("sizes[0] is 2147483648"));
    CHECK(hpu_tensor_init(&t, 0, HPU_DTYPE_FP32, 3, wide.data()) == -EINVAL);
    CHECK_THAT(hpu_last_error(), ContainsSubstring("sizes[2] is 2 or the tensor needs a stride beyond 2^32-1"));
    CHECK(std::memcmp(&t, &before, sizeof(t)) == 0); // untouched by the refusals
    CHECK(hpu_tensor_init(nullptr, 0, HPU_DTYPE_FP32, 1, sizes.data()) == -EINVAL);
    CHECK(hpu_tensor_init(&t, 0, HPU_DTYPE_FP32, 1, nullptr) == -EINVAL);

    CHECK(hpu_dtype_size(HPU_DTYPE_FP32) == 4);
    CHECK(hpu_dtype_size(HPU_DTYPE_BF16) == 2);
    CHECK(hpu_dtype_size(HPU_DTYPE_INT32) == 4);
    CHECK(hpu_dtype_size(HPU_DTYPE_UINT32) == 4);
    CHECK(hpu_dtype_size(HPU_DTYPE_INT16) == 2);
    CHECK(hpu_dtype_size(HPU_DTYPE_UINT16) == 2);
    CHECK(hpu_dtype_size(HPU_DTYPE_INT8) == 1);
    CHECK(hpu_dtype_size(HPU_DTYPE_UINT8) == 1);
    CHECK(hpu_dtype_size(0) == 0);
    CHECK(hpu_dtype_size(9) == 0);
}

TEST_CASE("MME_GEMM names a 128-byte descriptor laid out as mme.md says", "[libhpu][compute]")
{
    Fixture fx;
    hpu_gemm g = base_gemm(); // FP32 out
    g.flags = HPU_GEMM_TRANS_A | HPU_GEMM_TRANS_B | HPU_GEMM_BIAS;
    g.in_dtype = HPU_DTYPE_BF16;
    g.act = HPU_GEMM_ACT_GELU_TANH;
    g.m = 300;
    g.n = 70;
    g.k = 65536;
    g.batch = 3;
    g.lda = 301; // A stored k x m
    g.ldb = 65540; // B stored n x k
    g.ldc = 72;
    g.ldd = 71;
    g.a = 0x1000000002ULL;
    g.b = 0x2000000004ULL;
    g.c = 0x3000000008ULL;
    g.d = 0x40000000010ULL;
    g.bias = 0x5000000020ULL;
    g.stride_a = 0x111111111ULL;
    g.stride_b = 0;
    g.stride_c = 0x333333333ULL;
    g.stride_d = 0x444444444ULL;
    g.alpha = -1.5F;
    g.beta = 0.25F;
    SpecGemm want{.flags = 1U /* IN_TYPE BF16 */ | (0U << 2) /* OUT_TYPE FP32 */ | (1U << 4) /* TRANS_A */ |
                           (1U << 5) /* TRANS_B */ | (1U << 6) /* BIAS */ | (2U << 8) /* ACT GELU */,
                  .m = 300,
                  .n = 70,
                  .k = 65536,
                  .batch = 3,
                  .a = 0x1000000002ULL,
                  .b = 0x2000000004ULL,
                  .c = 0x3000000008ULL,
                  .d = 0x40000000010ULL,
                  .bias = 0x5000000020ULL,
                  .lda = 301,
                  .ldb = 65540,
                  .ldc = 72,
                  .ldd = 71,
                  .stride_a = 0x111111111ULL,
                  .stride_b = 0,
                  .stride_c = 0x333333333ULL,
                  .stride_d = 0x444444444ULL,
                  .alpha = -1.5F,
                  .beta = 0.25F};

    SECTION("every field")
    {
        Bytes desc;
        const Bytes cb = fx.recorded([&](hpu_cmdlist_t *cl) { REQUIRE(hpu_cmd_gemm(cl, &g) == 0); },
                                     HPU_ENGINE_CLASS_MME, [&]() { desc = descriptor(fx.m, fx.m.jobs.back().cb, 0); });
        CHECK(fx.m.last_queue_class == DRM_HPU_ENGINE_MME);
        REQUIRE(cb.size() == 16);
        CHECK(cb == spec_desc_packet(kMmeGemm, get_le(cb, 8, 8)));
        CHECK(get_le(cb, 8, 8) % 64 == 0);
        CHECK(desc == spec_gemm_desc(want));
    }
    SECTION("defaults: packed leading dimensions, batch 1, no C without beta, no bias without BIAS")
    {
        g.flags = 0;
        g.in_dtype = HPU_DTYPE_FP32;
        g.a = 0x1000000004ULL;
        g.out_dtype = HPU_DTYPE_BF16;
        g.act = HPU_GEMM_ACT_RELU;
        g.k = 9;
        g.batch = 0;
        g.lda = g.ldb = g.ldd = 0;
        g.ldc = 1;       // below n, but C is not read
        g.c = 0x3001;    // misaligned, but C is not read
        g.bias = 0x5001; // misaligned, but no BIAS
        g.beta = -0.0F;  // -0 is "no C" too
        g.stride_d = 0;  // allowed with one member
        want.flags = 0U | (1U << 2) | (1U << 8);
        want.k = 9;
        want.a = g.a;
        want.batch = 1;
        want.lda = 9;
        want.ldb = 70;
        want.ldd = 70;
        want.c = want.ldc = 0;
        want.stride_c = want.stride_d = 0;
        want.bias = 0;
        want.beta = -0.0F;
        Bytes desc;
        hpu_fence_t *f = nullptr;
        hpu_queue_t *q = nullptr;
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_MME, 1, &q) == 0);
        REQUIRE(hpu_queue_gemm(q, &g, nullptr, 0, &f) == 0); // eager
        desc = descriptor(fx.m, fx.m.jobs.back().cb, 0);
        CHECK(desc == spec_gemm_desc(want));
        CHECK(hpu_fence_destroy(f) == 0);
        CHECK(hpu_queue_destroy(q) == 0);
    }
    fx.check_clean();
}

TEST_CASE("every GEMM rule libhpu enforces is -EINVAL with a message, before any system call", "[libhpu][compute]")
{
    Fixture fx;
    {
        const Targets t(fx.dev, HPU_ENGINE_CLASS_MME);
        struct Case {
            const char *message;
            std::function<void(hpu_gemm &)> breakit;
        };
        constexpr const char *kAlign = "gemm: an address is not aligned to its element size";
        constexpr const char *kRange = "gemm: an operand runs past the end of the address space (mme.md rule 14)";
        constexpr const char *kOverlap = "gemm: D overlaps an input (mme.md rule 16";
        // mme.md's rule 1 (descriptor alignment) is the device's; whether the
        // addresses are mapped is the device's too.
        const std::vector<Case> cases = {
            {"gemm: size 4 below sizeof(struct hpu_gemm)", [](hpu_gemm &g) { g.size = 4; }},
            {"gemm: undefined flags 0x8", [](hpu_gemm &g) { g.flags = 0x8; }},
            {"gemm: reserved is not zero", [](hpu_gemm &g) { g.reserved = 1; }},
            {"gemm: in_dtype 7 is not FP32 or BF16", [](hpu_gemm &g) { g.in_dtype = HPU_DTYPE_INT8; }},
            {"gemm: out_dtype 4 is not FP32 or BF16", [](hpu_gemm &g) { g.out_dtype = HPU_DTYPE_UINT32; }},
            {"gemm: act 3 is not an HPU_GEMM_ACT_*", [](hpu_gemm &g) { g.act = 3; }},
            {"gemm: m is 0 (1 to 65536)", [](hpu_gemm &g) { g.m = 0; }},
            {"gemm: n is 65537 (1 to 65536)", [](hpu_gemm &g) { g.n = 65537; }},
            {"gemm: k is 0 (1 to 65536)", [](hpu_gemm &g) { g.k = 0; }},
            {"gemm: batch 65537 is above 65536", [](hpu_gemm &g) { g.batch = 65537; }},
            {"gemm: lda 4 below A's row of 5", [](hpu_gemm &g) { g.lda = 4; }},
            {"gemm: lda 3 below A's row of 4", // transposed: A is stored k x m
             [](hpu_gemm &g) {
                 g.flags = HPU_GEMM_TRANS_A;
                 g.lda = 3;
             }},
            {"gemm: ldb 5 below B's row of 6", [](hpu_gemm &g) { g.ldb = 5; }},
            {"gemm: ldb 4 below B's row of 5", // transposed: B is stored n x k
             [](hpu_gemm &g) {
                 g.flags = HPU_GEMM_TRANS_B;
                 g.ldb = 4;
             }},
            {"gemm: ldc 5 below n 6",
             [](hpu_gemm &g) {
                 g.beta = 1.0F;
                 g.c = 0x40000;
                 g.ldc = 5;
             }},
            {"gemm: ldd 5 below n 6", [](hpu_gemm &g) { g.ldd = 5; }},
            {kAlign, [](hpu_gemm &g) { g.a = 0x10002; }},
            {kAlign,
             [](hpu_gemm &g) {
                 g.in_dtype = HPU_DTYPE_BF16;
                 g.b = 0x20001;
             }},
            {kAlign, [](hpu_gemm &g) { g.d = 0x30002; }},
            {kAlign,
             [](hpu_gemm &g) {
                 g.beta = 2.0F;
                 g.c = 0x40002;
             }},
            {kAlign,
             [](hpu_gemm &g) {
                 g.flags = HPU_GEMM_BIAS;
                 g.bias = 0x50002;
             }},
            // mme.md rule 14: an operand past the end of the address space
            // (also one ending exactly at 2^64), or an extent overflowing.
            {kRange, [](hpu_gemm &g) { g.a = 0xfffffffffffffff0ULL; }},
            {kRange, [](hpu_gemm &g) { g.b = 0ULL - 5ULL * 6 * 4; }},
            {kRange,
             [](hpu_gemm &g) {
                 g.batch = 2;
                 g.stride_d = 1ULL << 62U;
             }},
            {kRange,
             [](hpu_gemm &g) {
                 g.flags = HPU_GEMM_BIAS;
                 g.bias = 0xfffffffffffffff8ULL;
             }},
            // rule 15: the batch's D matrices overlap (stride 0, and one short of a matrix).
            {"gemm: stride_d 0 with batch 2: the D matrices overlap", [](hpu_gemm &g) { g.batch = 2; }},
            {"gemm: stride_d 23 with batch 2: the D matrices overlap (at least 24",
             [](hpu_gemm &g) {
                 g.batch = 2;
                 g.stride_a = 20;
                 g.stride_b = 30;
                 g.stride_d = 23;
             }},
            // rule 16: D overlapping A, B, the bias, or C other than exactly D.
            {kOverlap, [](hpu_gemm &g) { g.d = g.a + 4; }},
            {kOverlap, [](hpu_gemm &g) { g.d = g.b; }},
            {kOverlap,
             [](hpu_gemm &g) {
                 g.flags = HPU_GEMM_BIAS;
                 g.bias = g.d + 8;
             }},
            {kOverlap,
             [](hpu_gemm &g) {
                 g.beta = 1.0F;
                 g.c = g.d + 4;
             }},
            // C at D's address is exactly D only with the same layout: the
            // same extent (m == 1) with another leading dimension is not.
            {"C overlaps D without being exactly D (c == d, ldc == ldd and, with a batch, stride_c == stride_d; "
             "here ldc 4, ldd 8, stride_c 0, stride_d 0)",
             [](hpu_gemm &g) {
                 g.m = 1;
                 g.n = g.k = 4;
                 g.beta = 1.0F;
                 g.c = g.d;
                 g.ldc = 0; // read as n, 4
                 g.ldd = 8;
             }},
            // Nor is a batch whose C and D share the extent with other strides:
            // (batch - 1)(stride_c - stride_d) == (m - 1)(ldd - ldc).
            {"here ldc 2, ldd 4, stride_c 10, stride_d 8)",
             [](hpu_gemm &g) {
                 g.batch = g.m = g.n = g.k = 2;
                 g.stride_a = g.stride_b = g.ldd = 4;
                 g.beta = 1.0F;
                 g.c = g.d;
                 g.ldc = 2;
                 g.stride_c = 10;
                 g.stride_d = 8;
             }},
        };
        const int calls = fx.m.ioctl_calls;
        const int creates = fx.m.request_calls[DRM_IOCTL_SYNCOBJ_CREATE];
        for (const Case &c : cases) {
            INFO(c.message);
            hpu_gemm g = base_gemm();
            c.breakit(g);
            refused(hpu_cmd_gemm(t.cl, &g), c.message);
            refused_eager([&](hpu_fence_t **f) { return hpu_queue_gemm(t.q, &g, nullptr, 0, f); }, c.message);
            refused(hpu_graph_add_gemm(t.g, &g, nullptr, 0), c.message);
        }
        refused(hpu_cmd_gemm(t.cl, nullptr), "gemm: struct hpu_gemm is NULL");
        const hpu_gemm good = base_gemm();
        refused(hpu_cmd_gemm(nullptr, &good), "gemm: command list is NULL");
        t.check_untouched(fx.m);
        CHECK(fx.m.ioctl_calls == calls + 1); // the eager pool's first list, as above
        CHECK(fx.m.request_calls[DRM_IOCTL_SYNCOBJ_CREATE] == creates + 1);
        CHECK(hpu_cmd_gemm(t.cl, &good) == 0);
        CHECK(std::string(hpu_last_error()).empty());
        // C exactly D (accumulating in place) is allowed: ldc read as n,
        // and with a batch the same strides.
        hpu_gemm acc = base_gemm();
        acc.beta = 1.0F;
        acc.c = acc.d;
        acc.ldd = 6;
        CHECK(hpu_cmd_gemm(t.cl, &acc) == 0);
        acc.batch = 3;
        acc.stride_a = acc.stride_b = 64;
        acc.stride_c = acc.stride_d = 24;
        CHECK(hpu_cmd_gemm(t.cl, &acc) == 0);
    } // the targets go first
    fx.check_clean();
}

TEST_CASE("an eager launch, GEMM, copy or memset on a queue of another engine class is -EINVAL at the call",
          "[libhpu][compute]")
{
    KernelFixture fx;
    {
        const LaunchArgs args;
        const hpu_gemm g = base_gemm();
        hpu_queue_t *dma = nullptr;
        hpu_queue_t *tpc = nullptr;
        hpu_queue_t *mme = nullptr;
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_DMA, 0, &dma) == 0);
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_TPC, 0, &tpc) == 0);
        REQUIRE(hpu_queue_create(fx.dev, HPU_ENGINE_CLASS_MME, 0, &mme) == 0);
        const int calls = fx.m.ioctl_calls;
        for (hpu_queue_t *q : {dma, mme}) {
            refused_eager([&](hpu_fence_t **f) { return hpu_queue_launch(q, fx.k, &args.l, nullptr, 0, f); },
                          q == dma ? "launch (TPC_LAUNCH) on a DMA queue: it runs only on a TPC queue"
                                   : "launch (TPC_LAUNCH) on an MME queue: it runs only on a TPC queue");
        }
        for (hpu_queue_t *q : {dma, tpc}) {
            refused_eager([&](hpu_fence_t **f) { return hpu_queue_gemm(q, &g, nullptr, 0, f); },
                          q == dma ? "gemm (MME_GEMM) on a DMA queue: it runs only on an MME queue"
                                   : "gemm (MME_GEMM) on a TPC queue: it runs only on an MME queue");
        }
        for (hpu_queue_t *q : {tpc, mme}) {
            const std::string cls = q == tpc ? "a TPC" : "an MME";
            refused_eager([&](hpu_fence_t **f) { return hpu_queue_copy(q, 0x1000, 0x2000, 64, f); },
                          ("copy (LIN_DMA) on " + cls + " queue: it runs only on a DMA queue").c_str());
            refused_eager([&](hpu_fence_t **f) { return hpu_queue_memset(q, 0x1000, 0, 64, f); },
                          ("memset (LIN_DMA) on " + cls + " queue: it runs only on a DMA queue").c_str());
        }
        // Refused before any system call; nothing was submitted.
        CHECK(fx.m.ioctl_calls == calls);
        CHECK(fx.m.jobs.empty());
        // The right class still takes each.
        CHECK(hpu_queue_launch(tpc, fx.k, &args.l, nullptr, 0, nullptr) == 0);
        CHECK(hpu_queue_gemm(mme, &g, nullptr, 0, nullptr) == 0);
        CHECK(hpu_queue_copy(dma, 0x1000, 0x2000, 64, nullptr) == 0);
        CHECK(hpu_queue_memset(dma, 0x1000, 0, 64, nullptr) == 0);
        CHECK(std::string(hpu_last_error()).empty());
        CHECK(fx.m.jobs.size() == 4);
        CHECK(hpu_queue_destroy(dma) == 0);
        CHECK(hpu_queue_destroy(tpc) == 0);
        CHECK(hpu_queue_destroy(mme) == 0);
    }
    fx.release_and_check();
}

TEST_CASE("sync objects are reserved from the top, run out, and come back", "[libhpu][compute]")
{
    Fixture fx;
    std::vector<std::uint32_t> got;
    for (unsigned int i = 0; i < HPU_NUM_SOBS_PER_CONTEXT; ++i) {
        std::uint32_t s = 0;
        REQUIRE(hpu_sob_alloc(fx.dev, &s) == 0);
        got.push_back(s);
    }
    std::vector<std::uint32_t> want;
    for (std::uint32_t s = HPU_NUM_SOBS_PER_CONTEXT; s-- > 0;)
        want.push_back(s);
    CHECK(got == want);
    std::uint32_t s = 99;
    CHECK(hpu_sob_alloc(fx.dev, &s) == -EBUSY);
    CHECK(s == 99);

    // Another device (file) has its own 32.
    hpu_device_t *other = nullptr;
    REQUIRE(hpu_open_by_index(1, &other) == 0);
    REQUIRE(hpu_sob_alloc(other, &s) == 0);
    CHECK(s == 31);
    CHECK(hpu_close(other) == 0);

    CHECK(hpu_sob_free(fx.dev, 5) == 0);
    CHECK(hpu_sob_free(fx.dev, 5) == -EINVAL); // not reserved any more
    REQUIRE(hpu_sob_alloc(fx.dev, &s) == 0);
    CHECK(s == 5);
    CHECK(hpu_sob_free(fx.dev, HPU_NUM_SOBS_PER_CONTEXT) == -EINVAL);
    CHECK(hpu_sob_free(nullptr, 1) == -EINVAL);
    CHECK(hpu_sob_alloc(nullptr, &s) == -EINVAL);
    CHECK(hpu_sob_alloc(fx.dev, nullptr) == -EINVAL);
    for (const std::uint32_t o : got)
        CHECK(hpu_sob_free(fx.dev, o) == 0);
    REQUIRE(hpu_sob_alloc(fx.dev, &s) == 0);
    CHECK(s == 31);
    CHECK(hpu_sob_free(fx.dev, s) == 0);
    fx.check_clean();
}
