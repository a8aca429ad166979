// SPDX-License-Identifier: MIT
// libhpu 1.5's compute API on the device (issue 11): built-in kernels by
// name launched eagerly and from command lists, GEMMs on the MMEs against a
// host reference, graphs that chain DMA, GEMM and TPC work across engines
// with sync-manager dependencies and are launched many times with a scalar
// changed in between, and the inputs libhpu refuses before the device sees
// them (each with its errno and hpu_last_error()).
//
//   [compute]   (hpu-vm-tests-compute in guest-suite.sh)
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "hpu/hpu.hpp"
#include "tpcasm.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint64_t kWaitNs = 60ULL * 1000000000ULL;

hpu::Device open_first()
{
    const auto list = nodes_by_pci();
    REQUIRE(!list.empty());
    hpu_device_t *d = nullptr;
    REQUIRE(hpu_open_by_index(list[0].index, &d) == 0);
    return hpu::Device{d};
}

struct Kernel {
    hpu_kernel_t *k = nullptr;
    Kernel(hpu_device_t *dev, const char *name)
    {
        INFO(name << ": " << hpu_last_error());
        REQUIRE(hpu_kernel_get(dev, name, &k) == 0);
    }
    Kernel(const Kernel &) = delete;
    Kernel &operator=(const Kernel &) = delete;
    Kernel(Kernel &&) = delete;
    Kernel &operator=(Kernel &&) = delete;
    ~Kernel() { (void)hpu_kernel_destroy(k); }
};

struct Queue {
    hpu_queue_t *q = nullptr;
    Queue(hpu_device_t *dev, std::uint32_t cls, std::uint32_t engine = 0)
    {
        REQUIRE(hpu_queue_create(dev, cls, engine, &q) == 0);
    }
    Queue(const Queue &) = delete;
    Queue &operator=(const Queue &) = delete;
    Queue(Queue &&) = delete;
    Queue &operator=(Queue &&) = delete;
    ~Queue() { (void)hpu_queue_destroy(q); }
};

void wait_ok(hpu_fence_t *f)
{
    REQUIRE(f != nullptr);
    const int err = hpu_fence_wait(f, kWaitNs);
    hpu_error_info info{};
    info.size = sizeof(info);
    (void)hpu_fence_error_info(f, &info);
    INFO("fence error " << err << " kind " << info.kind << " info " << info.info);
    (void)hpu_fence_destroy(f);
    REQUIRE(err == 0);
}

float *host_f32(const hpu::Buffer &b)
{
    return static_cast<float *>(b.host_ptr());
}

hpu_tensor vec(std::uint64_t va, std::uint32_t n, std::uint32_t dtype = HPU_DTYPE_FP32)
{
    hpu_tensor t{};
    const std::uint32_t sizes[1] = {n}; // NOLINT(modernize-avoid-c-arrays)
    REQUIRE(hpu_tensor_init(&t, va, dtype, 1, static_cast<const std::uint32_t *>(sizes)) == 0);
    return t;
}

std::uint32_t bits(float f)
{
    std::uint32_t u = 0;
    std::memcpy(&u, &f, 4);
    return u;
}

// An FP32 GEMM D (m x n) = A (m x k) B (k x n), packed, alpha 1, no C.
hpu_gemm gemm_f32(std::uint32_t m, std::uint32_t n, std::uint32_t k, std::uint64_t a, std::uint64_t b,
                  std::uint64_t d)
{
    hpu_gemm g{};
    g.size = sizeof(g);
    g.in_dtype = HPU_DTYPE_FP32;
    g.out_dtype = HPU_DTYPE_FP32;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = a;
    g.b = b;
    g.d = d;
    g.alpha = 1.0F;
    return g;
}

// Host reference of a row-major GEMM D = A (m x k) B (k x n) + bias.
std::vector<float> ref_gemm(const float *a, const float *b, const float *bias, std::uint32_t m, std::uint32_t n,
                            std::uint32_t k)
{
    std::vector<float> d(static_cast<std::size_t>(m) * n);
    for (std::uint32_t i = 0; i < m; ++i) {
        for (std::uint32_t j = 0; j < n; ++j) {
            double acc = 0;
            for (std::uint32_t p = 0; p < k; ++p)
                acc += static_cast<double>(a[i * k + p]) * b[p * n + j]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            d[i * n + j] = static_cast<float>(acc) + (bias != nullptr ? bias[j] : 0.0F); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        }
    }
    return d;
}

} // namespace

TEST_CASE("libhpu: add_f32 by name, eager and from a command list", "[compute]")
{
    auto dev = open_first();
    const Kernel add(dev.get(), "add_f32");
    hpu_kernel_info ki{};
    ki.size = sizeof(ki);
    REQUIRE(hpu_kernel_get_info(add.k, &ki) == 0);
    CHECK(std::string(static_cast<const char *>(ki.name)) == "add_f32");
    CHECK(ki.num_tensors == 3);
    const Queue tpc(dev.get(), HPU_ENGINE_CLASS_TPC);
    constexpr std::uint32_t n = 1000; // not a multiple of 256: the tail lanes
    auto a = hpu::Buffer::create(dev, std::uint64_t{n} * 4, HPU_MEM_HOST);
    auto b = hpu::Buffer::create(dev, std::uint64_t{n} * 4, HPU_MEM_HOST);
    auto c = hpu::Buffer::create(dev, std::uint64_t{n + 16} * 4, HPU_MEM_HOST);
    for (std::uint32_t i = 0; i < n; ++i) {
        host_f32(a)[i] = static_cast<float>(i) * 0.5F; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        host_f32(b)[i] = 3.0F - static_cast<float>(i);  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
    for (std::uint32_t i = 0; i < n + 16; ++i)
        host_f32(c)[i] = -7.0F; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    const hpu_tensor ts[3] = {vec(a.va(), n), vec(b.va(), n), vec(c.va(), n)}; // NOLINT(modernize-avoid-c-arrays)
    hpu_launch l{};
    l.size = sizeof(l);
    l.num_tensors = 3;
    l.tensors = static_cast<const hpu_tensor *>(ts);
    l.index_size[0] = (n + 255) / 256;
    hpu_fence_t *f = nullptr;
    INFO(hpu_last_error());
    REQUIRE(hpu_queue_launch(tpc.q, add.k, &l, nullptr, 0, &f) == 0);
    wait_ok(f);
    for (std::uint32_t i = 0; i < n; ++i)
        REQUIRE(host_f32(c)[i] == host_f32(a)[i] + host_f32(b)[i]); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(host_f32(c)[n] == -7.0F); // nothing written past the tensor

    // The same launch recorded, submitted twice, with the inputs changed between.
    hpu::CommandList cl = hpu::CommandList::create(dev);
    REQUIRE(hpu_cmd_launch(cl.get(), add.k, &l) == 0);
    for (int round = 0; round < 2; ++round) {
        for (std::uint32_t i = 0; i < n; ++i)
            host_f32(a)[i] = static_cast<float>(round + 1); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        hpu_fence_t *g = nullptr;
        REQUIRE(hpu_queue_submit(tpc.q, cl.get(), nullptr, 0, &g) == 0);
        wait_ok(g);
        CHECK(host_f32(c)[n - 1] == static_cast<float>(round + 1) + host_f32(b)[n - 1]); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
}

TEST_CASE("libhpu: GEMM with bias and ReLU on both MMEs against the host", "[compute]")
{
    auto dev = open_first();
    REQUIRE(hpu_device_engines(dev.get(), HPU_ENGINE_CLASS_MME) == 2);
    constexpr std::uint32_t m = 37;
    constexpr std::uint32_t n = 130;
    constexpr std::uint32_t k = 65;
    auto a = hpu::Buffer::create(dev, std::uint64_t{m} * k * 4, HPU_MEM_HOST);
    auto b = hpu::Buffer::create(dev, std::uint64_t{k} * n * 4, HPU_MEM_HOST);
    auto bias = hpu::Buffer::create(dev, std::uint64_t{n} * 4, HPU_MEM_HOST);
    auto d = hpu::Buffer::create(dev, std::uint64_t{m} * n * 4, HPU_MEM_HOST);
    for (std::uint32_t i = 0; i < m * k; ++i)
        host_f32(a)[i] = static_cast<float>((i * 7) % 11) - 5.0F; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    for (std::uint32_t i = 0; i < k * n; ++i)
        host_f32(b)[i] = static_cast<float>((i * 3) % 13) * 0.25F - 1.0F; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    for (std::uint32_t j = 0; j < n; ++j)
        host_f32(bias)[j] = static_cast<float>(j % 5) - 2.0F; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    const auto want = ref_gemm(host_f32(a), host_f32(b), host_f32(bias), m, n, k);
    for (std::uint32_t mme = 0; mme < 2; ++mme) {
        const Queue q(dev.get(), HPU_ENGINE_CLASS_MME, mme);
        std::memset(d.host_ptr(), 0xff, std::uint64_t{m} * n * 4);
        hpu_gemm g = gemm_f32(m, n, k, a.va(), b.va(), d.va());
        g.flags = HPU_GEMM_BIAS;
        g.act = HPU_GEMM_ACT_RELU;
        g.bias = bias.va();
        hpu_fence_t *f = nullptr;
        INFO(hpu_last_error());
        REQUIRE(hpu_queue_gemm(q.q, &g, nullptr, 0, &f) == 0);
        wait_ok(f);
        for (std::uint32_t i = 0; i < m * n; ++i) {
            const float w = std::max(want[i], 0.0F);
            REQUIRE(std::fabs(host_f32(d)[i] - w) <= 1e-4F * (1.0F + std::fabs(w))); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        }
    }
}

TEST_CASE("libhpu: a graph of copy, GEMM and TPC work across four engines, launched 6 times", "[compute]")
{
    auto dev = open_first();
    constexpr std::uint32_t m = 16;
    constexpr std::uint32_t n = 64;
    constexpr std::uint32_t k = 32;
    auto src = hpu::Buffer::create(dev, std::uint64_t{m} * k * 4, HPU_MEM_HOST);
    auto a = hpu::Buffer::create(dev, std::uint64_t{m} * k * 4, HPU_MEM_DEVICE);
    auto b = hpu::Buffer::create(dev, std::uint64_t{k} * n * 4, HPU_MEM_HOST);
    auto d0 = hpu::Buffer::create(dev, std::uint64_t{m} * n * 4, HPU_MEM_DEVICE);
    auto d1 = hpu::Buffer::create(dev, std::uint64_t{m} * n * 4, HPU_MEM_DEVICE);
    auto sum = hpu::Buffer::create(dev, std::uint64_t{m} * n * 4, HPU_MEM_DEVICE);
    auto out = hpu::Buffer::create(dev, std::uint64_t{m} * n * 4, HPU_MEM_HOST);
    for (std::uint32_t i = 0; i < k * n; ++i)
        host_f32(b)[i] = static_cast<float>(i % 7) - 3.0F; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    const Kernel add(dev.get(), "add_f32");
    const Kernel scale(dev.get(), "scale_f32");

    hpu_graph_t *g = nullptr;
    REQUIRE(hpu_graph_create(dev.get(), &g) == 0);
    // DMA: src -> a (HBM).
    const int copy_in = hpu_graph_add_copy(g, a.va(), src.va(), std::uint64_t{m} * k * 4, nullptr, 0);
    REQUIRE(copy_in == 0);
    // Two GEMMs (they alternate between MME0 and MME1) after the copy.
    hpu_gemm gm = gemm_f32(m, n, k, a.va(), b.va(), d0.va());
    const auto dep_in = static_cast<std::uint32_t>(copy_in);
    const int g0 = hpu_graph_add_gemm(g, &gm, &dep_in, 1);
    gm.alpha = 2.0F;
    gm.d = d1.va();
    const int g1 = hpu_graph_add_gemm(g, &gm, &dep_in, 1);
    REQUIRE(g0 == 1);
    REQUIRE(g1 == 2);
    // TPC: sum = d0 + d1, then sum *= alpha (a scalar changed per launch).
    const hpu_tensor t3[3] = {vec(d0.va(), m * n), vec(d1.va(), m * n), vec(sum.va(), m * n)}; // NOLINT(modernize-avoid-c-arrays)
    hpu_launch l{};
    l.size = sizeof(l);
    l.num_tensors = 3;
    l.tensors = static_cast<const hpu_tensor *>(t3);
    l.index_size[0] = (m * n + 255) / 256;
    const std::uint32_t both[2] = {1, 2}; // NOLINT(modernize-avoid-c-arrays)
    const int add_node = hpu_graph_add_launch(g, add.k, &l, static_cast<const std::uint32_t *>(both), 2);
    REQUIRE(add_node == 3);
    const hpu_tensor t2[2] = {vec(sum.va(), m * n), vec(sum.va(), m * n)}; // NOLINT(modernize-avoid-c-arrays)
    const std::uint32_t one = bits(1.0F);
    hpu_launch ls{};
    ls.size = sizeof(ls);
    ls.num_tensors = 2;
    ls.tensors = static_cast<const hpu_tensor *>(t2);
    ls.num_scalars = 1;
    ls.scalars = &one;
    ls.index_size[0] = (m * n + 255) / 256;
    const auto dep_add = static_cast<std::uint32_t>(add_node);
    const int scale_node = hpu_graph_add_launch(g, scale.k, &ls, &dep_add, 1);
    REQUIRE(scale_node == 4);
    // DMA: sum -> host.
    const auto dep_scale = static_cast<std::uint32_t>(scale_node);
    REQUIRE(hpu_graph_add_copy(g, out.va(), sum.va(), std::uint64_t{m} * n * 4, &dep_scale, 1) == 5);
    CHECK(hpu_graph_size(g) == 6);

    for (int step = 0; step < 6; ++step) {
        for (std::uint32_t i = 0; i < m * k; ++i)
            host_f32(src)[i] = static_cast<float>((i + step) % 5) - 2.0F; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        const float alpha = 0.5F * static_cast<float>(step + 1);
        REQUIRE(hpu_graph_set_scalar(g, 4, 0, bits(alpha)) == 0);
        hpu_fence_t *f = nullptr;
        INFO("step " << step << ": " << hpu_last_error());
        REQUIRE(hpu_graph_launch(g, nullptr, 0, &f) == 0);
        wait_ok(f);
        const auto ref = ref_gemm(host_f32(src), host_f32(b), nullptr, m, n, k);
        for (std::uint32_t i = 0; i < m * n; ++i) {
            const float want = (ref[i] + 2.0F * ref[i]) * alpha;
            REQUIRE(std::fabs(host_f32(out)[i] - want) <= 1e-4F * (1.0F + std::fabs(want))); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        }
    }
    // Launches back to back without waiting in between: they run in order.
    hpu_fence_t *last = nullptr;
    for (int i = 0; i < 5; ++i) {
        hpu_fence_t *f = nullptr;
        REQUIRE(hpu_graph_launch(g, nullptr, 0, &f) == 0);
        if (last != nullptr)
            (void)hpu_fence_destroy(last);
        last = f;
    }
    wait_ok(last);
    REQUIRE(hpu_graph_destroy(g) == 0);
}

TEST_CASE("libhpu: compute inputs refused before the device, each with its errno and message", "[compute]")
{
    auto dev = open_first();
    const Kernel add(dev.get(), "add_f32");
    auto buf = hpu::Buffer::create(dev, 4096, HPU_MEM_HOST);
    hpu_kernel_t *k = nullptr;
    CHECK(hpu_kernel_get(dev.get(), "no_such_kernel", &k) == -ENOENT);
    CHECK(std::string(hpu_last_error()).find("no_such_kernel") != std::string::npos);
    std::vector<std::uint8_t> junk(256, 0);
    CHECK(hpu_kernel_load(dev.get(), junk.data(), junk.size(), &k) == -ENOEXEC);
    CHECK(std::string(hpu_last_error()).find("BIN_MAGIC") != std::string::npos);
    CHECK(k == nullptr);

    hpu_tensor ts[3] = {vec(buf.va(), 64), vec(buf.va(), 64), vec(buf.va(), 64)}; // NOLINT(modernize-avoid-c-arrays)
    hpu_launch l{};
    l.size = sizeof(l);
    l.num_tensors = 2; // the kernel takes 3
    l.tensors = static_cast<const hpu_tensor *>(ts);
    l.index_size[0] = 1;
    hpu::CommandList cl = hpu::CommandList::create(dev);
    CHECK(hpu_cmd_launch(cl.get(), add.k, &l) == -EINVAL);
    CHECK(std::string(hpu_last_error()).find("takes 3") != std::string::npos);
    l.num_tensors = 3;
    l.index_size[1] = 2; // beyond index_dims? add_f32 uses 4: allowed; dim 4 must be 1
    l.index_size[4] = 2;
    CHECK(hpu_cmd_launch(cl.get(), add.k, &l) == -EINVAL);
    CHECK(std::string(hpu_last_error()).find("INDEX_SPACE") != std::string::npos);
    l.index_size[4] = 0;
    ts[1].va = buf.va() + 2; // misaligned FP32
    CHECK(hpu_cmd_launch(cl.get(), add.k, &l) == -EINVAL);
    CHECK(std::string(hpu_last_error()).find("TENSOR_ALIGN") != std::string::npos);
    ts[1].va = buf.va();
    ts[2].dtype = HPU_DTYPE_INT32; // add_f32 pins FP32
    CHECK(hpu_cmd_launch(cl.get(), add.k, &l) == -EINVAL);
    CHECK(std::string(hpu_last_error()).find("TENSOR_DTYPE") != std::string::npos);
    ts[2].dtype = HPU_DTYPE_FP32;
    CHECK(hpu_cmd_launch(cl.get(), add.k, &l) == 0);
    CHECK(hpu_cmdlist_size(cl.get()) == 16);

    hpu_gemm g{};
    g.size = sizeof(g);
    g.in_dtype = HPU_DTYPE_INT8;
    g.out_dtype = HPU_DTYPE_FP32;
    g.m = g.n = g.k = 4;
    CHECK(hpu_cmd_gemm(cl.get(), &g) == -EINVAL);
    CHECK(std::string(hpu_last_error()).find("in_dtype") != std::string::npos);
    g.in_dtype = HPU_DTYPE_FP32;
    g.k = 0;
    CHECK(hpu_cmd_gemm(cl.get(), &g) == -EINVAL);
    g.k = 4;
    g.lda = 3;
    CHECK(hpu_cmd_gemm(cl.get(), &g) == -EINVAL);
    CHECK(std::string(hpu_last_error()).find("lda") != std::string::npos);

    hpu_graph_t *gr = nullptr;
    REQUIRE(hpu_graph_create(dev.get(), &gr) == 0);
    CHECK(hpu_graph_launch(gr, nullptr, 0, nullptr) == -EINVAL);
    const std::uint32_t bad_dep = 0;
    CHECK(hpu_graph_add_copy(gr, buf.va(), buf.va() + 2048, 1024, &bad_dep, 1) == -EINVAL);
    CHECK(hpu_graph_add_copy(gr, buf.va(), buf.va() + 2048, 1024, nullptr, 0) == 0);
    CHECK(hpu_graph_set_scalar(gr, 0, 0, 1) == -EINVAL); // a copy node
    REQUIRE(hpu_graph_destroy(gr) == 0);
    CHECK(hpu_kernel_destroy(nullptr) == 0);
}

TEST_CASE("libhpu: hpu_fence_error_info gives each failed launch the details of its own device event", "[compute]")
{
    // Two launches of a kernel that asserts with its scalar argument, on
    // two TPC queues of one device: same kind, same engine, one after the
    // other. Each fence gets the value its own launch asserted with, not
    // the latest of its kind and engine.
    const auto r = hpu::tpc::assemble(R"(.kernel assert_arg
.scalars 1
.index_dims 1
        ldarg s1, 0
        assert sp1, s1
        halt
)",
                                      "assert_arg.s");
    INFO(r.error_text());
    REQUIRE(r.ok());
    auto dev = open_first();
    REQUIRE(hpu_device_event_fd(dev.get()) >= 0);
    hpu_kernel_t *k = nullptr;
    REQUIRE(hpu_kernel_load(dev.get(), r.binary.data(), r.binary.size(), &k) == 0);
    {
        const Queue q1(dev.get(), HPU_ENGINE_CLASS_TPC);
        const Queue q2(dev.get(), HPU_ENGINE_CLASS_TPC);
        std::vector<hpu_fence_t *> fences;
        for (const auto &[q, value] : {std::pair{q1.q, 0x1111U}, std::pair{q2.q, 0x2222U}}) {
            const std::uint32_t scalars[1] = {value}; // NOLINT(modernize-avoid-c-arrays)
            hpu_launch l{};
            l.size = sizeof(l);
            l.scalars = static_cast<const std::uint32_t *>(scalars);
            l.num_scalars = 1;
            hpu_fence_t *f = nullptr;
            INFO(hpu_last_error());
            REQUIRE(hpu_queue_launch(q, k, &l, nullptr, 0, &f) == 0);
            CHECK(hpu_fence_wait(f, kWaitNs) == -EDOM);
            fences.push_back(f);
        }
        for (std::size_t i = 0; i < fences.size(); ++i) {
            hpu_error_info info{};
            info.size = sizeof(info);
            // The events may still be on their way.
            for (int tries = 0; tries < 100; ++tries) {
                REQUIRE(hpu_fence_error_info(fences[i], &info) == 0);
                if (info.kind != HPU_ERROR_NONE && info.info != 0)
                    break;
                ::usleep(20000);
            }
            INFO("launch " << i << ": kind " << info.kind << " info 0x" << std::hex << info.info);
            CHECK(info.error == -EDOM);
            CHECK(info.kind == HPU_ERROR_TPC_ASSERT);
            CHECK(info.engine == HPU_ENGINE_INDEX_TPC);
            CHECK(info.info == (i == 0 ? 0x1111U : 0x2222U));
            (void)hpu_fence_destroy(fences[i]);
        }
    }
    (void)hpu_kernel_destroy(k);
}
