// SPDX-License-Identifier: MIT
// Faults of TPC kernels reach only the context that launched them, through
// libhpu 1.5 (issue 11, "Tests"): a kernel storing outside its context's
// mappings (MMU_FAULT with the address), a kernel's assert (TPC_ASSERT with
// its value: a bad cross-entropy label), an endless kernel (the watchdog's
// ENGINE_HANG), an illegal bundle (TPC_ILLEGAL with the bundle and the
// reason); each time another context launches on the same engines
// meanwhile and gets exact results, and the faulting context's queue runs
// its next launch. A graph whose TPC node fails, joined on the DMA queue,
// fails its launch at once with that node's error. Two contexts running
// GEMMs and kernels at once on buffers at the same device addresses each
// see only their own data.
//
//   [compute]   (hpu-vm-tests-compute in guest-suite.sh)
//
// Copyright (c) 2026 The hpu authors
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <linux/sync_file.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "hpu/hpu.hpp"
#include "tpcasm.h"
#include "vm_util.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kWaitNs = 60ULL * 1000000000ULL;
constexpr std::uint32_t kN = 4096; // elements of the test tensors
constexpr std::uint64_t kBytes = std::uint64_t{kN} * 4;

hpu::Device open_dev()
{
    const auto list = vmt::nodes_by_pci();
    REQUIRE(!list.empty());
    hpu_device_t *d = nullptr;
    REQUIRE(hpu_open_by_index(list[0].index, &d) == 0);
    REQUIRE(hpu_device_event_fd(d) >= 0);
    return hpu::Device{d};
}

struct Kernel {
    hpu_kernel_t *k = nullptr;
    Kernel(const hpu::Device &dev, const char *name)
    {
        INFO(name << ": " << hpu_last_error());
        REQUIRE(hpu_kernel_get(dev.get(), name, &k) == 0);
    }
    // A kernel assembled from source here.
    Kernel(const hpu::Device &dev, const std::string &src, const std::string &name)
    {
        const auto r = hpu::tpc::assemble(src, name + ".s");
        INFO(r.error_text());
        REQUIRE(r.ok());
        INFO(hpu_last_error());
        REQUIRE(hpu_kernel_load(dev.get(), r.binary.data(), r.binary.size(), &k) == 0);
    }
    Kernel(const Kernel &) = delete;
    Kernel &operator=(const Kernel &) = delete;
    Kernel(Kernel &&) = delete;
    Kernel &operator=(Kernel &&) = delete;
    ~Kernel() { (void)hpu_kernel_destroy(k); }
};

// A dense 1-D tensor (no assertion here: worker threads use it too, and
// Catch2's assertions are for the main thread; a bad one fails the launch).
hpu_tensor vec(std::uint64_t va, std::uint32_t n, std::uint32_t dtype = HPU_DTYPE_FP32)
{
    hpu_tensor t{};
    const std::uint32_t sizes[1] = {n};
    (void)hpu_tensor_init(&t, va, dtype, 1, static_cast<const std::uint32_t *>(sizes));
    return t;
}

// One eager launch of k over ts on q; returns its fence.
hpu::Fence launch(hpu::Queue &q, const Kernel &k, std::vector<hpu_tensor> ts, std::vector<std::uint32_t> scalars,
                  std::uint32_t index0, std::uint32_t index1 = 1)
{
    hpu_launch l{};
    l.size = sizeof(l);
    l.num_tensors = static_cast<std::uint32_t>(ts.size());
    l.tensors = ts.data();
    l.scalars = scalars.data();
    l.num_scalars = static_cast<std::uint32_t>(scalars.size());
    l.index_size[0] = index0;
    l.index_size[1] = index1;
    hpu_fence_t *f = nullptr;
    INFO(hpu_last_error());
    REQUIRE(hpu_queue_launch(q.get(), k.k, &l, nullptr, 0, &f) == 0);
    return hpu::Fence{f};
}

int wait(const hpu::Fence &f) { return hpu_fence_wait(f.get(), kWaitNs); }

// The failed fence's error information, once the device event with the
// address and info (sent after the job's own event) has arrived.
hpu_error_info error_info(const hpu::Fence &f, bool want_detail)
{
    hpu_error_info i{};
    const auto end = Clock::now() + std::chrono::seconds(30);
    do {
        i = {};
        i.size = sizeof(i);
        REQUIRE(hpu_fence_error_info(f.get(), &i) == 0);
        if (i.kind != HPU_ERROR_NONE && (!want_detail || i.address != 0))
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } while (Clock::now() < end);
    return i;
}

float *f32(const hpu::Buffer &b) { return static_cast<float *>(b.host_ptr()); }

// Another context launching add_f32 over and over while a fault happens in
// the first; every result must be exact.
class Bystander {
public:
    Bystander()
        : dev_(open_dev()), add_(dev_, "add_f32"), q_(hpu::Queue::create(dev_, 0, HPU_ENGINE_CLASS_TPC)),
          a_(hpu::Buffer::create(dev_, kBytes, HPU_MEM_HOST)), b_(hpu::Buffer::create(dev_, kBytes, HPU_MEM_HOST)),
          c_(hpu::Buffer::create(dev_, kBytes, HPU_MEM_HOST))
    {
        thread_ = std::thread([this] { loop(); });
    }
    Bystander(const Bystander &) = delete;
    Bystander &operator=(const Bystander &) = delete;
    Bystander(Bystander &&) = delete;
    Bystander &operator=(Bystander &&) = delete;
    ~Bystander() { stop(); }

    void stop()
    {
        stop_ = true;
        if (thread_.joinable())
            thread_.join();
    }
    [[nodiscard]] int good() const { return good_; }
    // Waits until the bystander has finished a round: it is running when
    // the test's fault happens, and must keep running after it.
    void wait_running() const
    {
        const auto end = Clock::now() + std::chrono::seconds(60);
        while (good_ + bad_ == 0 && Clock::now() < end)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    [[nodiscard]] int rounds() const { return good_ + bad_; }
    [[nodiscard]] int bad() const { return bad_; }

private:
    void loop()
    {
        for (int round = 0; !stop_ || round < 3; ++round) {
            for (std::uint32_t i = 0; i < kN; ++i) {
                f32(a_)[i] = static_cast<float>(i + round);
                f32(b_)[i] = 0.5F * static_cast<float>(round);
                f32(c_)[i] = -1.0F;
            }
            hpu_launch l{};
            const hpu_tensor ts[3] = {vec(a_.va(), kN), vec(b_.va(), kN), vec(c_.va(), kN)};
            l.size = sizeof(l);
            l.num_tensors = 3;
            l.tensors = static_cast<const hpu_tensor *>(ts);
            l.index_size[0] = kN / 256;
            hpu_fence_t *f = nullptr;
            if (hpu_queue_launch(q_.get(), add_.k, &l, nullptr, 0, &f) != 0 || hpu_fence_wait(f, kWaitNs) != 0) {
                ++bad_;
            } else {
                bool ok = true;
                for (std::uint32_t i = 0; i < kN; ++i)
                    ok = ok && f32(c_)[i] == f32(a_)[i] + f32(b_)[i];
                ok ? ++good_ : ++bad_;
            }
            (void)hpu_fence_destroy(f);
        }
    }

    hpu::Device dev_;
    Kernel add_;
    hpu::Queue q_;
    hpu::Buffer a_, b_, c_;
    std::atomic<bool> stop_{false};
    std::atomic<int> good_{0};
    std::atomic<int> bad_{0};
    std::thread thread_;
};

// After a fault: the context's TPC queue runs an exact add again.
void check_queue_works(const hpu::Device &dev, hpu::Queue &q)
{
    const Kernel add(dev, "add_f32");
    auto a = hpu::Buffer::create(dev, kBytes, HPU_MEM_HOST);
    for (std::uint32_t i = 0; i < kN; ++i)
        f32(a)[i] = static_cast<float>(i);
    const auto f = launch(q, add, {vec(a.va(), kN), vec(a.va(), kN), vec(a.va(), kN)}, {}, kN / 256);
    REQUIRE(wait(f) == 0);
    for (std::uint32_t i = 0; i < kN; ++i)
        REQUIRE(f32(a)[i] == 2.0F * static_cast<float>(i));
}

// After a fault: the faulting context's queue works again, and the
// bystander goes on with exact results (two more rounds at least).
void after_fault(const hpu::Device &dev, hpu::Queue &q, Bystander &by)
{
    check_queue_works(dev, q);
    const int seen = by.rounds();
    const auto end = Clock::now() + std::chrono::seconds(60);
    while (by.rounds() < seen + 2 && Clock::now() < end)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    by.stop();
    CHECK(by.rounds() >= seen + 2);
    CHECK(by.good() >= 3);
    CHECK(by.bad() == 0);
}

} // namespace

TEST_CASE("TPC: a kernel storing outside its context's mappings faults that context only", "[compute]")
{
    auto dev = open_dev();
    Bystander by;
    by.wait_running();
    auto q = hpu::Queue::create(dev, 0, HPU_ENGINE_CLASS_TPC);
    const Kernel add(dev, "add_f32");
    auto a = hpu::Buffer::create(dev, kBytes, HPU_MEM_HOST);
    // One launch first, so that the queue's own command and descriptor
    // buffers exist before the address below is freed (none takes it).
    REQUIRE(wait(launch(q, add, {vec(a.va(), kN), vec(a.va(), kN), vec(a.va(), kN)}, {}, kN / 256)) == 0);
    std::uint64_t gone = 0;
    {
        // An address this context had mapped, and unmapped again.
        auto tmp = hpu::Buffer::create(dev, 2U << 20U, HPU_MEM_DEVICE);
        gone = tmp.va();
    }
    const auto f = launch(q, add, {vec(a.va(), kN), vec(a.va(), kN), vec(gone, kN)}, {}, kN / 256);
    CHECK(wait(f) == -EFAULT);
    const hpu_error_info i = error_info(f, true);
    INFO("kind " << hpu_error_kind_name(i.kind) << " engine " << i.engine << " address 0x" << std::hex << i.address);
    CHECK(i.kind == HPU_ERROR_MMU_FAULT);
    CHECK(i.engine == HPU_ENGINE_INDEX_TPC);
    CHECK(i.address >= gone);
    CHECK(i.address < gone + kBytes);
    after_fault(dev, q, by);
}

TEST_CASE("TPC: an assert reaches its context with the value (a cross-entropy label out of range)", "[compute]")
{
    auto dev = open_dev();
    Bystander by;
    by.wait_running();
    auto q = hpu::Queue::create(dev, 0, HPU_ENGINE_CLASS_TPC);
    const Kernel ce(dev, "cross_entropy_f32");
    constexpr std::uint32_t kC = 10;
    constexpr std::uint32_t kRows = 8;
    auto x = hpu::Buffer::create(dev, std::uint64_t{kC} * kRows * 4, HPU_MEM_HOST);
    auto y = hpu::Buffer::create(dev, std::uint64_t{kRows} * 4, HPU_MEM_HOST);
    auto loss = hpu::Buffer::create(dev, std::uint64_t{kRows} * 4, HPU_MEM_HOST);
    auto dx = hpu::Buffer::create(dev, std::uint64_t{kC} * kRows * 4, HPU_MEM_HOST);
    auto *labels = static_cast<std::int32_t *>(y.host_ptr());
    for (std::uint32_t r = 0; r < kRows; ++r)
        labels[r] = static_cast<std::int32_t>(r % kC);
    labels[5] = 12; // not a class
    std::memset(x.host_ptr(), 0, std::size_t{kC} * kRows * 4);
    auto rows = [](std::uint64_t va, std::uint32_t dtype, std::uint32_t n0, std::uint32_t pad) {
        hpu_tensor t{};
        const std::uint32_t sizes[2] = {n0, kRows};
        REQUIRE(hpu_tensor_init(&t, va, dtype, 2, static_cast<const std::uint32_t *>(sizes)) == 0);
        t.pad = pad;
        return t;
    };
    const float scale = 1.0F / kRows;
    std::uint32_t sbits = 0;
    std::memcpy(&sbits, &scale, 4);
    const auto f = launch(q, ce,
                          {rows(x.va(), HPU_DTYPE_FP32, kC, 0xff800000U), rows(y.va(), HPU_DTYPE_INT32, 1, 0),
                           rows(loss.va(), HPU_DTYPE_FP32, 1, 0), rows(dx.va(), HPU_DTYPE_FP32, kC, 0)},
                          {sbits}, 1, kRows);
    CHECK(wait(f) == -EDOM);
    const hpu_error_info i = error_info(f, true);
    INFO("kind " << hpu_error_kind_name(i.kind) << " info " << i.info << " address 0x" << std::hex << i.address);
    CHECK(i.kind == HPU_ERROR_TPC_ASSERT);
    CHECK(i.engine == HPU_ENGINE_INDEX_TPC);
    CHECK(i.info == 12);
    after_fault(dev, q, by);
}

TEST_CASE("TPC: an endless kernel is stopped by the watchdog; the engine runs on, for every context", "[compute]")
{
    auto dev = open_dev();
    const Kernel forever(dev, R"(
.kernel forever
.tensors 1
.index_dims 1
.tensor 0, f32
        iid i0
again:
        vadd.f32 v0, v0, 1.0 ; st.t.f32 t0, i0, v0
        jmp again
)",
                         "forever");
    auto q = hpu::Queue::create(dev, 0, HPU_ENGINE_CLASS_TPC);
    auto t = hpu::Buffer::create(dev, std::uint64_t{64} * 4 * 8, HPU_MEM_HOST);
    const auto t0 = Clock::now();
    const auto f = launch(q, forever, {vec(t.va(), 64 * 8)}, {}, 8);
    // Another context's launch queued behind it on the same engine.
    Bystander by;
    CHECK(wait(f) == -ETIMEDOUT);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    const hpu_error_info i = error_info(f, false);
    INFO("endless kernel failed after " << s << " s: kind " << hpu_error_kind_name(i.kind));
    CHECK(i.kind == HPU_ERROR_ENGINE_HANG);
    CHECK(i.engine == HPU_ENGINE_INDEX_TPC);
    CHECK(f32(t)[0] > 0.0F); // it did run
    after_fault(dev, q, by);
}

namespace {

// A kernel the assembler takes but the device refuses when a member runs
// it: the store to local memory at byte 4096 lies beyond its 16 bytes of
// SLM (tpc.md, "Local memory": TPC_ILLEGAL, reason LOCAL) in its second
// bundle.
constexpr const char *kBadLocalSource = R"(
.kernel bad_local
.tensors 1
.index_dims 1
.tensor 0, f32
.slm 16
        mov s1, 4096
        st.l [s1], s1
        halt
)";
constexpr std::uint32_t kIllegalLocal = 8; // tpc.md, "TPC_ILLEGAL and TPC_ASSERT"

} // namespace

TEST_CASE("TPC: an illegal bundle (TPC_ILLEGAL) reaches its context with the bundle and reason; others run on",
          "[compute]")
{
    auto dev = open_dev();
    Bystander by;
    by.wait_running();
    auto q = hpu::Queue::create(dev, 0, HPU_ENGINE_CLASS_TPC);
    const Kernel bad(dev, kBadLocalSource, "bad_local");
    auto t = hpu::Buffer::create(dev, kBytes, HPU_MEM_HOST);
    const auto f = launch(q, bad, {vec(t.va(), kN)}, {}, 1);
    CHECK(wait(f) == -EILSEQ);
    const hpu_error_info i = error_info(f, true);
    INFO("kind " << hpu_error_kind_name(i.kind) << " info 0x" << std::hex << i.info << " address 0x" << i.address);
    CHECK(i.kind == HPU_ERROR_TPC_ILLEGAL);
    CHECK(i.engine == HPU_ENGINE_INDEX_TPC);
    CHECK(i.error == -EILSEQ);
    CHECK(i.address != 0);                        // the second bundle's offset in the code
    CHECK(((i.info >> 8U) & 0xffU) == kIllegalLocal); // [15:8] the reason
    after_fault(dev, q, by);
}

TEST_CASE("a graph whose TPC node fails, joined on the DMA queue: the launch fails at once with the node's error; "
          "the next launch of a good graph runs",
          "[compute]")
{
    auto dev = open_dev();
    const Kernel bad(dev, kBadLocalSource, "bad_local");
    const Kernel add(dev, "add_f32");
    auto src = hpu::Buffer::create(dev, kBytes, HPU_MEM_HOST);
    auto dst = hpu::Buffer::create(dev, kBytes, HPU_MEM_HOST);
    auto work = hpu::Buffer::create(dev, kBytes, HPU_MEM_DEVICE);
    for (std::uint32_t i = 0; i < kN; ++i)
        f32(src)[i] = static_cast<float>(i);
    std::memset(dst.host_ptr(), 0, kBytes);
    // copy in (DMA) -> launch (TPC) -> copy out (DMA: the join, the slot
    // of the last node).
    auto make = [&](const Kernel &k, std::uint32_t num_tensors) {
        hpu_graph_t *g = nullptr;
        REQUIRE(hpu_graph_create(dev.get(), &g) == 0);
        REQUIRE(hpu_graph_add_copy(g, work.va(), src.va(), kBytes, nullptr, 0) == 0);
        const hpu_tensor ts[3] = {vec(work.va(), kN), vec(work.va(), kN), vec(work.va(), kN)};
        hpu_launch l{};
        l.size = sizeof(l);
        l.num_tensors = num_tensors;
        l.tensors = static_cast<const hpu_tensor *>(ts);
        l.index_size[0] = kN / 256;
        const std::uint32_t d0 = 0;
        INFO(hpu_last_error());
        REQUIRE(hpu_graph_add_launch(g, k.k, &l, &d0, 1) == 1);
        const std::uint32_t d1 = 1;
        REQUIRE(hpu_graph_add_copy(g, dst.va(), work.va(), kBytes, &d1, 1) == 2);
        return g;
    };
    hpu_graph_t *bad_g = make(bad, 1);
    const auto t0 = Clock::now();
    hpu_fence_t *bf = nullptr;
    REQUIRE(hpu_graph_launch(bad_g, nullptr, 0, &bf) == 0);
    const hpu::Fence bad_done{bf};
    // Exported at once (before or after the TPC job failed): a sync_file
    // that signals once the launch ended, in error.
    int sync_fd = -1;
    REQUIRE(hpu_fence_export_fd(bf, &sync_fd) == 0);
    CHECK(wait(bad_done) == -EILSEQ);
    // Its status read before any poll(2) of ours (which would enable the
    // merged fence's signalling itself): 0 while pending, then the error.
    sync_file_info sfi{};
    const auto until = Clock::now() + std::chrono::seconds(10);
    do {
        sfi = {};
        REQUIRE(::ioctl(sync_fd, SYNC_IOC_FILE_INFO, &sfi) == 0);
        if (sfi.status == 0)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (sfi.status == 0 && Clock::now() < until);
    CHECK(sfi.status == -EILSEQ);
    pollfd pfd{sync_fd, POLLIN, 0};
    CHECK(::poll(&pfd, 1, 0) == 1);
    ::close(sync_fd);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    // The join's job would fail at the 10 s job timeout, -ETIMEDOUT.
    INFO("failed graph launch returned after " << s << " s");
    CHECK(s < 5.0);
    const hpu_error_info i = error_info(bad_done, true);
    INFO("kind " << hpu_error_kind_name(i.kind) << " engine " << i.engine);
    CHECK(i.kind == HPU_ERROR_TPC_ILLEGAL);
    CHECK(i.engine == HPU_ENGINE_INDEX_TPC);
    CHECK(((i.info >> 8U) & 0xffU) == kIllegalLocal);
    CHECK(hpu_graph_destroy(bad_g) == 0);

    // A good graph on the same (the device's shared) queues, twice: both
    // parities.
    hpu_graph_t *good_g = make(add, 3);
    for (int round = 0; round < 2; ++round) {
        std::memset(dst.host_ptr(), 0, kBytes);
        hpu_fence_t *gf = nullptr;
        REQUIRE(hpu_graph_launch(good_g, nullptr, 0, &gf) == 0);
        const hpu::Fence good_done{gf};
        const auto t1 = Clock::now();
        REQUIRE(wait(good_done) == 0);
        INFO("good launch " << round << " took " << std::chrono::duration<double>(Clock::now() - t1).count() << " s");
        std::uint32_t bad_values = 0;
        for (std::uint32_t e = 0; e < kN; ++e)
            bad_values += f32(dst)[e] != 2.0F * static_cast<float>(e) ? 1U : 0U;
        CHECK(bad_values == 0);
    }
    CHECK(hpu_graph_destroy(good_g) == 0);
}

TEST_CASE("two contexts' GEMMs and kernels at once, at the same device addresses, see only their own data",
          "[compute]")
{
    constexpr std::uint32_t kM = 64;
    constexpr int kRounds = 20;
    std::atomic<int> mismatches{0};
    std::atomic<int> failures{0};
    std::vector<std::uint64_t> vas(2);
    // Both contexts open on this thread (Catch2's assertions are for it);
    // the workers count what goes wrong.
    std::vector<hpu::Device> devs;
    devs.push_back(open_dev());
    devs.push_back(open_dev());
    const Kernel add0(devs[0], "add_f32");
    const Kernel add1(devs[1], "add_f32");
    auto body = [&](int who) {
        const hpu::Device &dev = devs[static_cast<std::size_t>(who)];
        const Kernel &add = who == 0 ? add0 : add1;
        auto tpc = hpu::Queue::create(dev, 0, HPU_ENGINE_CLASS_TPC);
        auto mme = hpu::Queue::create(dev, static_cast<std::uint32_t>(who), HPU_ENGINE_CLASS_MME);
        // The same sizes in the same order: each context's address space
        // puts them at the same device addresses.
        auto a = hpu::Buffer::create(dev, std::uint64_t{kM} * kM * 4, HPU_MEM_HOST);
        auto d = hpu::Buffer::create(dev, std::uint64_t{kM} * kM * 4, HPU_MEM_HOST);
        vas[static_cast<std::size_t>(who)] = a.va();
        const float base = who == 0 ? 1.0F : 3.0F;
        for (int round = 0; round < kRounds; ++round) {
            // A = base * I + round; D = A A, then D = D + A.
            for (std::uint32_t r = 0; r < kM; ++r) {
                for (std::uint32_t c = 0; c < kM; ++c)
                    f32(a)[r * kM + c] = (r == c ? base : 0.0F) + static_cast<float>(round);
            }
            hpu_gemm g{};
            g.size = sizeof(g);
            g.in_dtype = HPU_DTYPE_FP32;
            g.out_dtype = HPU_DTYPE_FP32;
            g.m = kM;
            g.n = kM;
            g.k = kM;
            g.a = a.va();
            g.b = a.va();
            g.d = d.va();
            g.alpha = 1.0F;
            hpu_fence_t *gf = nullptr;
            if (hpu_queue_gemm(mme.get(), &g, nullptr, 0, &gf) != 0) {
                ++failures;
                return;
            }
            const hpu::Fence gemm_done{gf};
            hpu_launch l{};
            const hpu_tensor ts[3] = {vec(d.va(), kM * kM), vec(a.va(), kM * kM), vec(d.va(), kM * kM)};
            l.size = sizeof(l);
            l.num_tensors = 3;
            l.tensors = static_cast<const hpu_tensor *>(ts);
            l.index_size[0] = kM * kM / 256;
            const hpu_fence_t *w = gemm_done.get();
            hpu_fence_t *lf = nullptr;
            if (hpu_queue_launch(tpc.get(), add.k, &l, &w, 1, &lf) != 0) {
                ++failures;
                return;
            }
            const hpu::Fence add_done{lf};
            if (wait(add_done) != 0) {
                ++failures;
                return;
            }
            // (bI + x)(bI + x) with x = round everywhere: b^2 I + 2 b x + k x^2, plus A.
            const auto x = static_cast<float>(round);
            for (std::uint32_t r = 0; r < kM; ++r) {
                for (std::uint32_t c = 0; c < kM; ++c) {
                    const float aa = (r == c ? base : 0.0F) + x;
                    const float want = (r == c ? base * base : 0.0F) + 2 * base * x + kM * x * x + aa;
                    if (f32(d)[r * kM + c] != want)
                        ++mismatches;
                }
            }
        }
    };
    // An exception (hpu::Error) must not leave a thread: it counts.
    auto worker = [&](int who) {
        try {
            body(who);
        } catch (const std::exception &) {
            ++failures;
        }
    };
    std::thread t0(worker, 0);
    std::thread t1(worker, 1);
    t0.join();
    t1.join();
    INFO("device addresses " << std::hex << vas[0] << " and " << vas[1]);
    CHECK(vas[0] == vas[1]);
    CHECK(failures == 0);
    CHECK(mismatches == 0);
}
