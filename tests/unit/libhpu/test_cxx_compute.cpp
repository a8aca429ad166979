// SPDX-License-Identifier: MIT
// The C++ wrappers of libhpu 1.5 (hpu.hpp: Kernel, Tensor, Launch, Gemm,
// SyncObject, Graph, CommandList::launch/gemm, Queue::launch/gemm)
// against the mocked kernel: what they hand the C ABI, RAII, and errors
// that carry hpu_last_error().
//
// Copyright (c) 2026 The hpu authors
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "hpu/hpu.hpp"
#include "mock_os.h"
#include "spec_bytes.h"
#include "tpc_binary.h"

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using hpu::test::BinSpec;
using hpu::test::Bytes;
using hpu::test::get_le;
using hpu::test::make_answer;
using hpu::test::MockOs;
using hpu::test::ScopedMock;
using hpu::test::tpc_binary;

static_assert(!std::is_copy_constructible_v<hpu::Kernel>);
static_assert(std::is_nothrow_move_constructible_v<hpu::Kernel>);
static_assert(std::is_nothrow_move_assignable_v<hpu::Kernel>);
static_assert(!std::is_copy_constructible_v<hpu::Graph>);
static_assert(std::is_nothrow_move_constructible_v<hpu::Graph>);
static_assert(std::is_nothrow_move_assignable_v<hpu::Graph>);
static_assert(!std::is_copy_constructible_v<hpu::SyncObject>);
static_assert(!std::is_copy_assignable_v<hpu::SyncObject>);
static_assert(std::is_nothrow_move_constructible_v<hpu::SyncObject>);
static_assert(std::is_nothrow_move_assignable_v<hpu::SyncObject>);
static_assert(std::is_copy_constructible_v<hpu::Tensor>);
static_assert(std::is_copy_constructible_v<hpu::Launch>);
static_assert(std::is_copy_constructible_v<hpu::Gemm>);
// Scalars are 32-bit words: a double or a 64-bit integer does not compile.
static_assert(hpu::ScalarWord<float> && hpu::ScalarWord<std::int32_t> && hpu::ScalarWord<std::uint32_t>);
static_assert(!hpu::ScalarWord<double> && !hpu::ScalarWord<std::uint64_t> && !hpu::ScalarWord<bool>);

namespace {

// A mock with one HPU, installed for the test, which opens it with
// hpu::Device::open(0).
struct OneHpu {
    MockOs m;
    ScopedMock scoped{m};
    OneHpu() { m.add_hpu(0, "0000:00:03.0", make_answer("SER-A", 1ULL << 31, 3)); }
    // Every kernel object released exactly once (after the test's wrappers went).
    void check_clean() const
    {
        CHECK(m.leaks() == 0);
        CHECK(m.misuse == 0);
    }
};

// A kernel with two tensors (the first pinned FP32) and two scalars.
Bytes pair_binary()
{
    BinSpec s;
    s.num_tensors = 2;
    s.num_scalars = 2;
    s.index_dims = 2;
    s.dtypes[0] = HPU_DTYPE_FP32;
    s.name = "pair";
    return tpc_binary(s);
}

// The what() of the hpu::Error that f throws (with errno err).
template <typename F>
std::string what_of(F &&f, int err)
{
    try {
        f();
    } catch (const hpu::Error &e) {
        CHECK(e.errnum() == err);
        return e.what();
    }
    FAIL("no hpu::Error");
    return {};
}

// The descriptor named by the packet at cb[0] (TPC_LAUNCH: 192 + 2 * 64 bytes here).
Bytes first_descriptor(const MockOs &m, std::size_t size)
{
    const Bytes &cb = m.jobs.back().cb;
    return m.read_va(get_le(cb, 8, 8), size);
}

} // namespace

TEST_CASE_METHOD(OneHpu, "C++ kernels: by name, from memory and from a file, destroyed once", "[cxx][compute]")
{
    {
        const auto dev = hpu::Device::open(0);
        const auto names = hpu::Kernel::library();
        REQUIRE(names.size() == hpu_kernel_library_size());
        CHECK(names.front() == hpu_kernel_library_name(0));

        const auto add = hpu::Kernel::by_name(dev, "add_f32");
        CHECK(add.name() == "add_f32");
        CHECK(add.info().num_tensors == 3);

        const Bytes bin = pair_binary();
        const std::size_t objects = m.gem.size();
        {
            auto k = hpu::Kernel::load(dev, bin);
            CHECK(m.gem.size() == objects + 1);
            const hpu_kernel_info i = k.info();
            CHECK(i.num_scalars == 2);
            CHECK(i.binary_size == bin.size());
            hpu::Kernel moved(std::move(k));
            CHECK_FALSE(k); // NOLINT(bugprone-use-after-move,hicpp-invalid-access-moved)
            CHECK(moved.name() == "pair");
        }
        CHECK(m.gem.size() == objects);

        const std::string file = "/opt/kernels/pair.bin";
        m.files[file] = std::string(bin.begin(), bin.end());
        CHECK(hpu::Kernel::load_file(dev, file).name() == "pair");
        m.files.erase(file);

        const std::string nope = what_of([&] { (void)hpu::Kernel::by_name(dev, "nope"); }, ENOENT);
        CHECK_THAT(nope, StartsWith("getting TPC kernel nope: No such file or directory"));
        CHECK_THAT(nope, EndsWith(std::string(": ") + hpu_last_error()));
        CHECK_THAT(nope, ContainsSubstring("no kernel \"nope\" in the library"));
        Bytes bad = bin;
        bad[0] ^= 1U;
        const std::string malformed = what_of([&] { (void)hpu::Kernel::load(dev, bad.data(), bad.size()); }, ENOEXEC);
        CHECK_THAT(malformed, EndsWith(std::string(": ") + hpu_last_error()));
        CHECK_THAT(malformed, ContainsSubstring("rule BIN_MAGIC broken"));
        CHECK_THROWS_AS(hpu::Kernel::load_file(dev, file), hpu::Error);
        const hpu::Kernel none;
        CHECK_THROWS_AS(none.info(), hpu::Error);
    }
    check_clean();
}

TEST_CASE_METHOD(OneHpu, "C++ tensors: dense from a buffer, pads, strides, refusals", "[cxx][compute]")
{
    const auto dev = hpu::Device::open(0);
    const auto buf = hpu::Buffer::create(dev, 1 << 20, HPU_MEM_DEVICE);

    hpu::Tensor t(buf, HPU_DTYPE_BF16, {8, 3, 2}, 64);
    CHECK(t.va() == buf.va() + 64);
    CHECK(t.dtype() == HPU_DTYPE_BF16);
    CHECK(t.ndims() == 3);
    CHECK(t.size(0) == 8);
    CHECK(t.size(2) == 2);
    CHECK(t.size(4) == 1);
    CHECK(t.stride(1) == 8);
    CHECK(t.stride(2) == 24);
    CHECK(t.stride(3) == 0);
    CHECK(t.pad(-INFINITY).pad() == 0xff80U);
    CHECK(t.pad(1.0F).pad() == 0x3f80U);
    CHECK(t.pad(1.00390625F).pad() == 0x3f80U); // halfway: to even
    CHECK(t.pad(1.01171875F).pad() == 0x3f82U); // halfway: to even, up
    CHECK(t.pad(std::nanf("")).pad() == 0x7fc0U);
    CHECK(t.stride(1, 0).stride(1) == 0); // broadcast
    CHECK(t.raw().strides[1] == 0);

    const std::array<std::uint32_t, 2> sizes{4, 4};
    hpu::Tensor f(0x1000, HPU_DTYPE_FP32, std::span<const std::uint32_t>(sizes));
    CHECK(f.pad(-1.5F).pad() == std::bit_cast<std::uint32_t>(-1.5F));
    CHECK(f.pad_bits(7).pad() == 7);

    hpu::Tensor i(0x1000, HPU_DTYPE_INT32, {4});
    CHECK(what_of([&] { (void)i.pad(1.0F); }, EINVAL) ==
          "setting a float pad: Invalid argument: the tensor is not FP32 or BF16 (use pad_bits())");
    CHECK_THROWS_AS(i.stride(1, 4), hpu::Error);
    const std::string six = what_of([] { (void)hpu::Tensor(0x1000, HPU_DTYPE_FP32, {1, 2, 3, 4, 5, 6}); }, EINVAL);
    CHECK(six == std::string("describing a tensor: Invalid argument: ") + hpu_last_error());
    CHECK_THAT(six, ContainsSubstring("ndims 6 is not 1 to 5"));
    CHECK_THROWS_AS(hpu::Tensor(0x1000, 99, {4}), hpu::Error);
    CHECK_THROWS_AS(hpu::Tensor(0x1000, HPU_DTYPE_FP32, {4, 0}), hpu::Error);

    hpu_tensor raw{};
    raw.va = 0x2000;
    raw.dtype = HPU_DTYPE_UINT8;
    raw.ndims = 1;
    raw.sizes[0] = 5;
    const hpu::Tensor wrapped(raw);
    CHECK(wrapped.size(0) == 5);
    CHECK(wrapped.stride(0) == 0);
    CHECK(hpu::dtype_size(HPU_DTYPE_BF16) == 2);
}

TEST_CASE("C++ Launch and Gemm build the C structures", "[cxx][compute]")
{
    const hpu::Tensor a(0x1000, HPU_DTYPE_FP32, {16});
    const hpu::Tensor b(0x2000, HPU_DTYPE_FP32, {16});
    hpu::Launch l;
    l.tensors({a, b}).scalar(0.5F).scalar(-2).scalar(7U).index_space({4, 2}).seed(99);
    hpu_launch r = l.raw();
    CHECK(r.size == sizeof(hpu_launch));
    CHECK(r.num_tensors == 2);
    CHECK(r.tensors[1].va == 0x2000); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    REQUIRE(r.num_scalars == 3);
    CHECK(r.scalars[0] == 0x3f000000U);
    CHECK(r.scalars[1] == 0xfffffffeU); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(r.scalars[2] == 7);           // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK(std::vector<std::uint32_t>(std::begin(r.index_size), std::end(r.index_size)) ==
          std::vector<std::uint32_t>{4, 2, 1, 1, 1});
    CHECK(r.seed == 99);
    l.set_scalar(1, 3.0F);
    r = l.raw();
    CHECK(r.scalars[1] == 0x40400000U); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    CHECK_THROWS_AS(l.set_scalar(3, 1), hpu::Error);
    CHECK_THROWS_AS(l.index_space({1, 1, 1, 1, 1, 1}), hpu::Error);
    CHECK(hpu::Launch().raw().index_size[4] == 1);

    const hpu::Gemm g = hpu::Gemm(8, 16, 32)
                            .types(HPU_DTYPE_BF16, HPU_DTYPE_FP32)
                            .a(0x1000, 40)
                            .b(0x2000)
                            .c(0x3000, 0.5F, 17)
                            .d(0x4000, 18)
                            .bias(0x5000)
                            .trans_a()
                            .trans_b()
                            .trans_b(false)
                            .act(HPU_GEMM_ACT_RELU)
                            .alpha(2.0F)
                            .batch(3, 1000, 0, 2000, 3000);
    const hpu_gemm &gr = g.raw();
    CHECK(gr.size == sizeof(hpu_gemm));
    CHECK(gr.flags == (HPU_GEMM_TRANS_A | HPU_GEMM_BIAS));
    CHECK(gr.in_dtype == HPU_DTYPE_BF16);
    CHECK(gr.out_dtype == HPU_DTYPE_FP32);
    CHECK((gr.m == 8 && gr.n == 16 && gr.k == 32));
    CHECK((gr.a == 0x1000 && gr.lda == 40 && gr.b == 0x2000 && gr.ldb == 0));
    CHECK((gr.c == 0x3000 && gr.beta == 0.5F && gr.ldc == 17 && gr.d == 0x4000 && gr.ldd == 18));
    CHECK(gr.bias == 0x5000);
    CHECK(gr.act == HPU_GEMM_ACT_RELU);
    CHECK(gr.alpha == 2.0F);
    CHECK((gr.batch == 3 && gr.stride_a == 1000 && gr.stride_b == 0 && gr.stride_c == 2000 && gr.stride_d == 3000));
    CHECK(hpu::Gemm(1, 1, 1).beta(1.0F).raw().beta == 1.0F);
}

TEST_CASE_METHOD(OneHpu, "C++ launches and GEMMs on command lists and queues", "[cxx][compute]")
{
    {
        const auto dev = hpu::Device::open(0);
        const Bytes bin = pair_binary();
        const auto k = hpu::Kernel::load(dev, bin);
        const auto hbm = hpu::Buffer::create(dev, 1 << 20, HPU_MEM_DEVICE);
        hpu::Launch l;
        l.tensor(hpu::Tensor(hbm, HPU_DTYPE_FP32, {64}).pad(-INFINITY))
            .tensor(hpu::Tensor(hbm, HPU_DTYPE_INT8, {3, 5}, 4096))
            .scalar(0.25F)
            .scalar(5)
            .index_space({2, 3})
            .seed(0xabcULL);

        auto tpc = hpu::Queue::create(dev, 0, HPU_ENGINE_CLASS_TPC);
        auto cl = hpu::CommandList::create(dev);
        cl.launch(k, l);
        CHECK(cl.bytes() == 16);
        const auto f1 = tpc.submit(cl);
        Bytes d = first_descriptor(m, 192 + 2 * 64);
        REQUIRE(d.size() == 320);
        CHECK(get_le(d, 24, 4) == 2);            // index_size[0]
        CHECK(get_le(d, 28, 4) == 3);            // index_size[1]
        CHECK(get_le(d, 32, 4) == 1);            // index_size[2]
        CHECK(get_le(d, 48, 8) == 0xabc);        // seed
        CHECK(get_le(d, 64, 4) == 0x3e800000U);  // 0.25F as its bits
        CHECK(get_le(d, 68, 4) == 5);
        CHECK(get_le(d, 192, 8) == hbm.va());    // tensor 0
        CHECK(get_le(d, 192 + 12, 4) == 0xff800000U);
        CHECK(get_le(d, 256, 8) == hbm.va() + 4096); // tensor 1
        CHECK(get_le(d, 256 + 36 + 4, 4) == 3);  // its stride[1]

        // Eager, after f1: the job waits for f1's syncobj.
        const auto f2 = tpc.launch(k, l, {&f1});
        CHECK(m.jobs.back().in.size() == 1);
        CHECK(m.jobs.back().cb.size() == 16);
        CHECK(f2.wait());

        auto mme = hpu::Queue::create(dev, 1, HPU_ENGINE_CLASS_MME);
        const hpu::Gemm g = hpu::Gemm(4, 4, 4).a(hbm.va()).b(hbm.va() + 256).d(hbm.va() + 512);
        const auto f3 = mme.gemm(g, {&f1, &f2});
        CHECK(m.jobs.back().in.size() == 2);
        d = first_descriptor(m, 128);
        CHECK(get_le(d, 0x30, 8) == hbm.va() + 512); // d
        CHECK(get_le(d, 0x70, 4) == 0x3f800000U);    // alpha 1
        auto mcl = hpu::CommandList::create(dev);
        mcl.gemm(g).gemm(g);
        CHECK(mcl.bytes() == 32);

        // A refusal names the rule in what(), after the errno's text.
        hpu::Launch short_of_one;
        short_of_one.tensor(hpu::Tensor(hbm, HPU_DTYPE_FP32, {64})).scalar(1).scalar(2);
        const std::string refused = what_of([&] { cl.launch(k, short_of_one); }, EINVAL);
        CHECK(refused == "recording a TPC launch: Invalid argument: launch of pair: 1 tensors, the kernel takes 2");
        CHECK_THAT(refused, EndsWith(hpu_last_error()));
        CHECK(cl.bytes() == 16); // unchanged
        CHECK_THROWS_AS(tpc.launch(k, short_of_one), hpu::Error);
        CHECK(what_of([&] { (void)mme.gemm(hpu::Gemm(0, 4, 4)); }, EINVAL) ==
              "submitting a GEMM: Invalid argument: gemm: m is 0 (1 to 65536)");
        CHECK_THROWS_AS(mcl.gemm(hpu::Gemm(4, 4, 4).types(HPU_DTYPE_INT8, HPU_DTYPE_FP32)), hpu::Error);
        // A queue of another engine class: refused at the call, the class named.
        const std::size_t jobs = m.jobs.size();
        CHECK(what_of([&] { (void)tpc.gemm(g); }, EINVAL) ==
              "submitting a GEMM: Invalid argument: gemm (MME_GEMM) on a TPC queue: it runs only on an MME queue");
        CHECK(what_of([&] { (void)mme.launch(k, l); }, EINVAL) ==
              "submitting a TPC launch: Invalid argument: launch (TPC_LAUNCH) on an MME queue: it runs only on a TPC "
              "queue");
        CHECK(what_of([&] { (void)tpc.copy(hbm.va(), hbm.va() + 4096, 64); }, EINVAL) ==
              "submitting a copy: Invalid argument: copy (LIN_DMA) on a TPC queue: it runs only on a DMA queue");
        CHECK(what_of([&] { (void)mme.memset(hbm.va(), 0, 64); }, EINVAL) ==
              "submitting a memset: Invalid argument: memset (LIN_DMA) on an MME queue: it runs only on a DMA queue");
        CHECK(m.jobs.size() == jobs);
    }
    check_clean();
}

TEST_CASE_METHOD(OneHpu, "C++ sync objects are returned exactly once", "[cxx][compute]")
{
    const auto dev = hpu::Device::open(0);
    {
        auto a = hpu::SyncObject::alloc(dev);
        CHECK(a);
        CHECK(a.id() == 31);
        hpu::SyncObject b(std::move(a));
        CHECK_FALSE(a); // NOLINT(bugprone-use-after-move,hicpp-invalid-access-moved)
        CHECK(b.id() == 31);
        auto c = hpu::SyncObject::alloc(dev);
        CHECK(c.id() == 30);
        c = std::move(b); // returns 30
        CHECK(c.id() == 31);
        auto d = hpu::SyncObject::alloc(dev);
        CHECK(d.id() == 30);
        auto cl = hpu::CommandList::create(dev);
        cl.sob_update(d.id(), HPU_SOB_ADD, 1).wait_sob(d.id(), 1);
        d.reset();
        CHECK_FALSE(d);
        const std::uint32_t kept = c.release();
        CHECK(kept == 31);
        CHECK(hpu_sob_free(dev.get(), kept) == 0);
    }
    std::vector<hpu::SyncObject> all;
    for (unsigned int i = 0; i < HPU_NUM_SOBS_PER_CONTEXT; ++i)
        all.push_back(hpu::SyncObject::alloc(dev));
    // hpu_sob_alloc() gives no message: none is added, not even the one an
    // earlier call left behind.
    REQUIRE(hpu_tensor_init(nullptr, 0, 0, 0, nullptr) == -EINVAL);
    REQUIRE(!std::string(hpu_last_error()).empty());
    CHECK(what_of([&] { (void)hpu::SyncObject::alloc(dev); }, EBUSY) ==
          std::string("reserving a sync object: ") + hpu_strerror(-EBUSY));
    all.pop_back(); // returns sync object 0
    CHECK(hpu::SyncObject::alloc(dev).id() == 0);
    all.clear();
    CHECK(hpu::SyncObject::alloc(dev).id() == 31);
}

TEST_CASE_METHOD(OneHpu, "C++ graphs: nodes, scalars, launches, errors", "[cxx][compute]")
{
    {
        auto dev = hpu::Device::open(0);
        const auto hbm = hpu::Buffer::create(dev, 1 << 20, HPU_MEM_DEVICE);
        const auto host = hpu::Buffer::create(dev, 1 << 20, HPU_MEM_HOST);
        const auto k = hpu::Kernel::load(dev, pair_binary());
        hpu::Launch l;
        l.tensor(hpu::Tensor(hbm, HPU_DTYPE_FP32, {64})).tensor(hpu::Tensor(hbm, HPU_DTYPE_FP32, {64}, 256));
        l.scalar(1.0F).scalar(0);
        auto g = hpu::Graph::create(dev);
        const auto in = g.add_copy(hbm.va(), host.va(), 4096);
        const auto zero = g.add_memset(hbm.va() + 8192, 0, 4096);
        const auto mm = g.add_gemm(hpu::Gemm(8, 8, 8).a(hbm.va()).b(hbm.va() + 256).d(hbm.va() + 8192), {in, zero});
        const auto act = g.add_launch(k, l, {mm});
        const auto out = g.add_copy(host.va(), hbm.va() + 8192, 4096, {act});
        CHECK(std::vector<hpu::Graph::NodeId>{in, zero, mm, act, out} ==
              std::vector<hpu::Graph::NodeId>{0, 1, 2, 3, 4});
        CHECK(g.size() == 5);

        auto f1 = g.launch();
        CHECK(f1.wait());
        g.set_scalar(act, 0, 0.125F);
        auto f2 = g.launch({&f1});
        // The join (the last jobs are its release job and the finish job):
        // every job of f1 (the join's and its TPC and MME0 members'
        // syncobjs) and the previous launch's end.
        CHECK(m.jobs[m.jobs.size() - 3].in.size() == 4);
        // Launch 2 is of parity 0 again: its descriptor has the new scalar.
        auto f3 = g.launch();
        // Launch 2's jobs: TPC, MME0 and the DMA join, each followed by its
        // release job, then the finish job.
        const Bytes &cb = m.jobs[m.jobs.size() - 7].cb;
        std::size_t off = 0;
        while (off < cb.size() && get_le(cb, off, 4) != 0x06)
            off += 16;
        REQUIRE(off < cb.size());
        CHECK(get_le(m.read_va(get_le(cb, off + 8, 8), 192), 64, 4) == std::bit_cast<std::uint32_t>(0.125F));
        CHECK(f3.wait());

        CHECK(what_of([&] { (void)g.add_copy(hbm.va(), host.va(), 64, {9}); }, EINVAL) ==
              "adding a copy: Invalid argument: graph: dependency 9 is not a node added before (the graph has 5)");
        CHECK_THROWS_AS(g.set_scalar(in, 0, 1), hpu::Error);
        CHECK(&g.set_seed(act, 7) == &g);
        CHECK(what_of([&] { (void)g.set_seed(in, 7); }, EINVAL) ==
              "setting a graph seed: Invalid argument: graph: node " + std::to_string(in) + " is not a launch");
        CHECK_THROWS_AS(g.add_memset(hbm.va(), 0, 0), hpu::Error);
        CHECK_THROWS_AS(g.add_launch(k, hpu::Launch()), hpu::Error);
        CHECK_THROWS_AS(g.add_gemm(hpu::Gemm(1, 1, 0)), hpu::Error);
        auto empty = hpu::Graph::create(dev);
        CHECK(what_of([&] { (void)empty.launch(); }, EINVAL) ==
              "launching a graph: Invalid argument: graph: no nodes to launch");
        hpu::Graph moved(std::move(g));
        CHECK_FALSE(g); // NOLINT(bugprone-use-after-move,hicpp-invalid-access-moved)
        CHECK(moved.size() == 5);
        // The graph, then the device (its graph queues with it).
    }
    check_clean();
}
