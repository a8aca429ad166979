// SPDX-License-Identifier: MIT
// Recovery from a hung compute engine (issue 11 review): when the watchdog
// finds the TPC engine hung, the driver disables its hung streams one at a
// time until the engine lets go (Documentation/driver/submission.md,
// "Compute engines"; reset.md). These tests build the situations the
// review found mishandled, on the device model:
//
//   - a sibling stream that waits for the engine and so does not go idle
//     when disabled (it must be left halted while the next is tried);
//   - sibling jobs stopped before anything of them ran (put back) and
//     after part of them ran (failed -ECANCELED: running them again would
//     repeat their sync-object updates);
//   - the hung job finishing on its own while another stream is stopped
//     (nobody is to blame);
//   - a soft reset that comes while the engine hangs (only the job that
//     holds the engine fails).
//
// Each test orders the engine's work with a "gate": a TPC launch on one
// stream that spins until the test releases it, while the other jobs are
// put on the other streams. The engine takes streams in round robin at
// packet boundaries (hw/memory-and-queues.md), starting after the gate's
// stream, so which sibling has fetched its descriptor, run a packet or
// nothing when the hanging launch starts is known. Nothing here sleeps for
// the device or the driver: the gate is known to run when its kernel has
// marked its word, and the jobs submitted meanwhile to be on their rings
// when debugfs `streams` counts them pushed (errors.md); the soft reset of
// the last test is asked for once INFO ERRORS counts the job timeout it
// must follow. The hanging launch is
// the same spin kernel on a flag the test never (or later) sets: one index
// member that never ends makes no progress (hw/compute.md, "Watchdog").
// Queues are placed on the stream with the fewest queues, ties to the
// lowest (hpu_stream_pick()): the four queues of one fresh context are on
// streams 0 to 3.
//
//   [compute]   (hpu-vm-tests-compute in guest-suite.sh)
//   [hang]      these tests only
//
// Copyright (c) 2026 The hpu authors
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "hw/hpu_tpc.h"
#include "tpcasm.h"
#include "vm_util.h"

using namespace vmt;

namespace {

// Unbinds the drivers of the HPU's auxiliary devices (hpu.eth.*, hpu.rdma.*:
// its netdevs and RDMA device) for a scope, and binds any of them that is
// still there without a driver again at its end. A reset first deletes
// those devices (hpu_nic_reset_prepare()), before it waits for the reset
// lock; with their drivers bound that takes as long as unregistering the
// netdevs (seconds on the debug kernel), without them a few milliseconds.
// A reset that ran meanwhile adds them again, and their drivers bind them.
class NicDriversAway {
public:
    explicit NicDriversAway(const std::string &node)
    {
        const std::string dir = sysfs_dir(node);
        for (const auto &e : std::filesystem::directory_iterator(dir)) {
            const std::string name = e.path().filename().string();
            const std::filesystem::path drv = e.path() / "driver";
            std::error_code ec;
            if (name.rfind("hpu.", 0) != 0 || !std::filesystem::is_symlink(drv, ec))
                continue;
            const std::string drv_dir = std::filesystem::canonical(drv, ec).string();
            REQUIRE(!ec);
            REQUIRE(write_text(drv_dir + "/unbind", name) == 0);
            away_.emplace_back(e.path().string(), drv_dir);
        }
    }
    NicDriversAway(const NicDriversAway &) = delete;
    NicDriversAway &operator=(const NicDriversAway &) = delete;
    NicDriversAway(NicDriversAway &&) = delete;
    NicDriversAway &operator=(NicDriversAway &&) = delete;
    ~NicDriversAway()
    {
        for (const auto &[dev, drv_dir] : away_) {
            std::error_code ec;
            if (std::filesystem::exists(dev, ec) && !std::filesystem::exists(dev + "/driver", ec))
                write_text(drv_dir + "/bind", std::filesystem::path(dev).filename().string());
        }
    }

private:
    std::vector<std::pair<std::string, std::string>> away_;
};

constexpr std::uint32_t kTpcIndex = DRM_HPU_ENGINE_INDEX_TPC;
// How long the driver waits for a disabled stream to stop
// (HPU_STREAM_STOP_TIMEOUT_US, a constant of hpu_stream.c).
constexpr int kStopMs = 1000;
// Beyond a period of the device or the driver: how late the guest (under
// TCG, on a shared host) may run the interrupt and work that report it.
constexpr int kLatencyMs = 8000;

// The engine watchdog's period: the wdt_ms module parameter (a stream
// that completes no packet for that long is hung).
int wdt_ms()
{
    const auto v = read_u64("/sys/module/hpu/parameters/wdt_ms");
    REQUIRE(v.has_value());
    REQUIRE(*v > 0); // 0: the watchdog is off, nothing here can happen
    return static_cast<int>(*v);
}

// One member that marks tensor 1 (it runs: the engine is held), then loads
// the i32 of tensor 0 until it is not zero.
constexpr const char *kSpinSource = R"(.kernel spin_until_set
.tensors 2
.index_dims 1
.tensor 0, i32
.tensor 1, i32
        mov s2, 1
        st.ts.i32 t1, i0, s2
again:  ld.ts.i32 s1, t0, i0
        cmp.eq.i32 sp1, s1, 0
        (sp1) jmp again
        halt
)";

hpu::tpc::Bytes spin_binary()
{
    const auto r = hpu::tpc::assemble(kSpinSource, "spin.s");
    INFO(r.error_text());
    REQUIRE(r.ok());
    return r.binary;
}

// A context with four TPC queues (streams 0-3), a spin kernel and flags.
class Rig {
public:
    static constexpr unsigned kFlags = 8;

    explicit Rig(const std::string &path) : path_(path), c_(path), streams_(debugfs_dir(path) + "/streams")
    {
        REQUIRE(enable_events(c_.fd()) == 0);
        mem_ = c_.host_buf(64 * KiB);
        const auto bin = spin_binary();
        REQUIRE(bin.size() <= kDescOff);
        bin_size_ = static_cast<std::uint32_t>(bin.size());
        std::memcpy(mem_.ptr, bin.data(), bin.size());
        for (unsigned f = 0; f < kFlags; ++f)
            put_launch(f);
        for (auto &q : q_)
            REQUIRE(c_.queue_create(0, q, DRM_HPU_ENGINE_TPC) == 0);
        REQUIRE(c_.queue_create(0, dma_q_) == 0);
    }
    Rig(const Rig &) = delete;
    Rig &operator=(const Rig &) = delete;
    Rig(Rig &&) = delete;
    Rig &operator=(Rig &&) = delete;
    ~Rig()
    {
        for (const std::uint32_t so : syncobjs_)
            syncobj_destroy(c_.fd(), so);
    }

    Ctx &ctx() { return c_; }
    [[nodiscard]] std::uint32_t queue(unsigned stream) const { return q_.at(stream); }
    [[nodiscard]] std::uint32_t dma_queue() const { return dma_q_; }

    // Address of result word i, and its value.
    [[nodiscard]] std::uint64_t word_va(unsigned i) const { return mem_.va + kWordOff + 4ULL * i; }
    [[nodiscard]] std::uint32_t word(unsigned i) const
    {
        return __atomic_load_n(reinterpret_cast<const std::uint32_t *>(mem_.ptr + kWordOff + 4ULL * i), // NOLINT
                               __ATOMIC_ACQUIRE);
    }
    // Whether a launch on flag f has started (its kernel marked its word).
    [[nodiscard]] bool running(unsigned f) const
    {
        return __atomic_load_n(reinterpret_cast<const std::uint32_t *>(mem_.ptr + kRunOff + 64ULL * f), // NOLINT
                               __ATOMIC_ACQUIRE) != 0;
    }
    // Lets the launches that spin on flag f end.
    void set_flag(unsigned f) const
    {
        __atomic_store_n(reinterpret_cast<std::uint32_t *>(mem_.ptr + kFlagOff + 64ULL * f), 1U, // NOLINT
                         __ATOMIC_RELEASE);
    }
    // cb with a TPC_LAUNCH of the spin kernel on flag f appended.
    [[nodiscard]] Cb launch(Cb cb, unsigned f) const
    {
        const std::uint64_t d = mem_.va + kDescOff + kDescStride * f;
        cb.raw(HPU_PKT_TPC_LAUNCH, 0).raw(static_cast<std::uint32_t>(d), static_cast<std::uint32_t>(d >> 32));
        return cb;
    }

    // Submits cb on queue q; returns the out syncobj.
    std::uint32_t submit(std::uint32_t q, const Cb &cb, std::uint32_t timeout_ms = 0)
    {
        const std::uint64_t va = c_.put_cb(cb);
        std::uint32_t so = 0;
        REQUIRE(syncobj_create(c_.fd(), so) == 0);
        syncobjs_.push_back(so);
        REQUIRE(c_.submit(q, va, cb.bytes(), so, {}, timeout_ms) == 0);
        ++submitted_;
        return so;
    }
    // Jobs put on the TPC engine's rings since probe (debugfs `streams`).
    [[nodiscard]] std::uint64_t tpc_pushed() const
    {
        const auto t = read_text(streams_);
        REQUIRE(t.has_value());
        std::istringstream in(*t);
        std::string line;
        std::uint64_t sum = 0;
        // "<engine> <stream> pushed <n> pi <n> ..." (later fields ignored).
        while (std::getline(in, line)) {
            std::istringstream l(line);
            std::string engine;
            std::string word;
            unsigned stream = 0;
            std::uint64_t pushed = 0;
            if ((l >> engine >> stream >> word >> pushed) && engine == "tpc")
                sum += pushed;
        }
        return sum;
    }
    // Waits for a job and returns its fence status (1 OK, negative errno).
    int result(std::uint32_t so)
    {
        const int w = syncobj_wait(c_.fd(), so, 60ULL * 1000000000ULL);
        return w == 0 ? syncobj_status(c_.fd(), so) : 2000 + w;
    }

    // Starts the gate on stream g: a launch spinning on kGate once it has
    // written word kStarted. Returns when the engine spins in it: its
    // kernel has marked its word, so the engine takes no other stream.
    void gate(unsigned g)
    {
        Cb cb;
        cb.write_value(word_va(kStarted), 1);
        const std::uint64_t pushed0 = tpc_pushed();
        submitted_ = 0;
        gate_so_ = submit(q_.at(g), launch(cb, kGate));
        REQUIRE(eventually([&] { return word(kStarted) == 1 && running(kGate); }, 10000));
        gate_pushed_ = pushed0;
    }
    // Lets the gate end once the jobs submitted meanwhile are on their
    // rings (debugfs counts them pushed): the engine then fetches them, in
    // stream order after the gate's.
    void release()
    {
        const std::uint64_t want = gate_pushed_ + submitted_;
        std::uint64_t got = 0;
        const bool on_rings = eventually(
            [&] {
                got = tpc_pushed();
                return got >= want;
            },
            10000);
        INFO("TPC jobs pushed since the gate: " << got - gate_pushed_ << " of " << submitted_);
        REQUIRE(on_rings);
        set_flag(kGate);
        REQUIRE(result(gate_so_) == 1);
    }

    // INFO ERRORS through this context's file.
    drm_hpu_info_errors errors()
    {
        drm_hpu_info_errors e{};
        REQUIRE(info_errors(c_.fd(), e) == 0);
        return e;
    }
    // Waits until the watchdog has reported `n` more ENGINE_HANGs than
    // `before` (polled, for the tests that act while the driver recovers).
    bool hangs_reported(std::uint64_t before, std::uint64_t n, int timeout_ms)
    {
        const std::uint64_t t0 = now_ns();
        for (;;) {
            if (errors().engine_hangs >= before + n)
                return true;
            if (ms_since(t0) > timeout_ms)
                return false;
            ::usleep(2000);
        }
    }

    // The value of sync object `sob` is `want`: a DMA job waiting for it
    // (EQ) completes within its 3 s timeout.
    bool sob_is(std::uint32_t sob, std::uint32_t want)
    {
        Cb cb;
        cb.wait(sob, want, HPU_WAIT_EQ).write_value(word_va(kSobSeen), want);
        return c_.run(dma_q_, cb, nullptr, 3000) == 1;
    }

    // Events read so far and now (this context's file).
    std::vector<Event> &events()
    {
        (void)read_events_until(c_.fd(), ev_, 500, [](const Event &) { return false; });
        return ev_;
    }
    // This context's error event of the job on queue q, if any.
    const Event *job_event(std::uint32_t q)
    {
        for (const auto &e : events()) {
            if (e.type == DRM_HPU_EVENT_ERROR && e.err.queue_id == q)
                return &e;
        }
        return nullptr;
    }

    // Result words and flags.
    static constexpr unsigned kStarted = 0;
    static constexpr unsigned kSobSeen = 1;
    static constexpr unsigned kGate = 0;

private:
    static constexpr std::uint64_t kDescOff = 4096; // kFlags descriptors of 512 bytes
    static constexpr std::uint64_t kDescStride = 512;
    static constexpr std::uint64_t kFlagOff = 8192;
    static constexpr std::uint64_t kWordOff = 12288;
    static constexpr std::uint64_t kRunOff = 16384;

    // Launch descriptor f: the spin kernel, one member, tensor 0 = flag f,
    // tensor 1 = its running mark.
    void put_launch(unsigned f) const
    {
        hpu_tpc_launch_desc d{};
        d.magic = HPU_TPC_LAUNCH_MAGIC;
        d.binary = mem_.va;
        d.binary_size = bin_size_;
        d.num_tensors = 2;
        for (auto &s : d.index_size)
            s = 1;
        hpu_tpc_tensor_desc t{};
        t.base = mem_.va + kFlagOff + 64ULL * f;
        t.dtype = HPU_TPC_DT_I32;
        t.ndims = 1;
        t.size[0] = 1;
        t.stride[0] = 1;
        hpu_tpc_tensor_desc run = t;
        run.base = mem_.va + kRunOff + 64ULL * f;
        static_assert(sizeof(d) + 2 * sizeof(t) <= kDescStride);
        unsigned char *p = mem_.ptr + kDescOff + kDescStride * f; // NOLINT
        std::memcpy(p, &d, sizeof(d));
        std::memcpy(p + sizeof(d), &t, sizeof(t));                // NOLINT
        std::memcpy(p + sizeof(d) + sizeof(t), &run, sizeof(run)); // NOLINT
    }

    std::string path_;
    Ctx c_;
    Ctx::HostBuf mem_;
    std::uint32_t bin_size_ = 0;
    std::array<std::uint32_t, 4> q_{};
    std::uint32_t dma_q_ = 0;
    std::string streams_; // debugfs `streams`
    std::uint32_t gate_so_ = 0;
    std::uint64_t gate_pushed_ = 0; // TPC jobs pushed before the gate's
    std::uint64_t submitted_ = 0;   // jobs submitted since the gate's, the gate's included
    std::vector<std::uint32_t> syncobjs_;
    std::vector<Event> ev_;
};

// The queues of the rig run a job again after the recovery.
void check_queues_run(Rig &r)
{
    for (unsigned s = 0; s < 4; ++s) {
        INFO("stream " << s);
        CHECK(r.ctx().run(r.queue(s), Cb().write_value(r.word_va(8 + s), 7)) == 1);
        CHECK(r.word(8 + s) == 7);
    }
}

// Gate on stream 1; then H on stream 2 fetches and runs its launch on
// flag 1 (endless until the flag is set) while X on stream 0 has only
// fetched its descriptor (a NOP, then word 2 = 1): X is hung too (a
// descriptor in flight, no progress) but waits for the engine, and is the
// first stream the driver disables.
struct WaitingSibling {
    std::uint32_t so_h = 0;
    std::uint32_t so_x = 0;
};
WaitingSibling hang_with_waiting_sibling(Rig &r)
{
    WaitingSibling w;
    r.gate(1);
    w.so_h = r.submit(r.queue(2), r.launch(Cb(), 1));
    w.so_x = r.submit(r.queue(0), Cb().nop().write_value(r.word_va(2), 1));
    r.release();
    return w;
}

} // namespace

TEST_CASE("a hung TPC engine: a sibling stream that waits for the engine is left halted, the engine's holder alone "
          "fails, and no reset",
          "[compute][hang]")
{
    // H's launch never ends. Disabling X completes nothing until the
    // engine lets go, so X must not be blamed (nor a soft reset started).
    Rig r(node(0));
    const auto e0 = r.errors();
    const auto w = hang_with_waiting_sibling(r);

    const int st_h = r.result(w.so_h);
    const int st_x = r.result(w.so_x);
    INFO("H " << st_h << ", X " << st_x << "; events: " << describe(r.events()));
    CHECK(st_h == -ETIMEDOUT);
    CHECK(st_x == 1); // nothing of it had run: put back, and ran
    CHECK(r.word(2) == 1);
    const Event *eh = r.job_event(r.queue(2));
    REQUIRE(eh != nullptr);
    CHECK(eh->err.kind == DRM_HPU_ERROR_ENGINE_HANG);
    CHECK(eh->err.errno_value == ETIMEDOUT);
    CHECK(eh->err.engine == kTpcIndex);
    CHECK(r.job_event(r.queue(0)) == nullptr);
    for (const auto &e : r.events())
        CHECK(e.type != DRM_HPU_EVENT_RESET);
    const auto e1 = r.errors();
    CHECK(e1.engine_hangs >= e0.engine_hangs + 2); // X and H were both hung
    CHECK(e1.soft_resets == e0.soft_resets);
    CHECK(e1.hard_resets == e0.hard_resets);
    check_queues_run(r);
}

TEST_CASE("a hung TPC engine: a sibling stopped after part of it ran fails -ECANCELED, one stopped before anything "
          "ran is put back",
          "[compute][hang]")
{
    // Gate on stream 1; round robin from stream 2: X (2) fetches, H (3)
    // fetches, W (0) fetches; X runs its SOB_UPDATE, then H's launch
    // hangs the engine. W has run nothing, X one packet. Once the watchdog
    // reports it, H's launch is let finish: the engine is free but H stays
    // HUNG (its descriptor has a NOP left), so disabling W and X stops
    // them at once with ABORTED records (W at offset 0, X at 16) while H
    // still holds the engine: both are innocent. Running X again would add
    // to sync object 5 a second time, with no reset to clear it.
    Rig r(node(0));
    const auto e0 = r.errors();
    r.gate(1);
    Cb x;
    x.sob_update(5, 1, HPU_SOB_OP_ADD).nop().write_value(r.word_va(2), 1);
    const std::uint32_t so_x = r.submit(r.queue(2), x);
    const std::uint32_t so_h = r.submit(r.queue(3), r.launch(Cb(), 1).nop());
    const std::uint32_t so_w = r.submit(r.queue(0), Cb().write_value(r.word_va(3), 1));
    r.release();
    REQUIRE(r.hangs_reported(e0.engine_hangs, 1, wdt_ms() + kLatencyMs));
    r.set_flag(1);

    const int st_h = r.result(so_h);
    const int st_x = r.result(so_x);
    const int st_w = r.result(so_w);
    INFO("H " << st_h << ", X " << st_x << ", W " << st_w << "; events: " << describe(r.events()));
    CHECK(st_h == -ETIMEDOUT);
    CHECK(st_x == -ECANCELED);
    CHECK(r.word(2) == 0);
    CHECK(r.sob_is(5, 1)); // X's update counted once
    CHECK(st_w == 1);
    CHECK(r.word(3) == 1);
    const Event *ex = r.job_event(r.queue(2));
    REQUIRE(ex != nullptr);
    CHECK(ex->err.kind == DRM_HPU_ERROR_ENGINE_HANG);
    CHECK(ex->err.errno_value == ECANCELED);
    CHECK(r.job_event(r.queue(0)) == nullptr);
    const auto e1 = r.errors();
    CHECK(e1.soft_resets == e0.soft_resets);
    check_queues_run(r);
}

TEST_CASE("a hung TPC engine whose hung job finishes while a sibling is being stopped: nobody is blamed", "[compute][hang]")
{
    // The driver disables X first and waits for it; meanwhile H's launch
    // is let finish: its descriptor completes and the engine lets go,
    // which completes X's ABORTED record. No stream is hung any more, but
    // X did not hold the engine.
    Rig r(node(0));
    const auto e0 = r.errors();
    const auto w = hang_with_waiting_sibling(r);
    REQUIRE(r.hangs_reported(e0.engine_hangs, 1, wdt_ms() + kLatencyMs));
    const std::uint64_t t_hang = now_ns();
    r.set_flag(1);

    const int st_h = r.result(w.so_h);
    const int st_x = r.result(w.so_x);
    INFO("flag set " << ms_since(t_hang) << " ms ago; H " << st_h << ", X " << st_x
                     << "; events: " << describe(r.events()));
    CHECK(st_h == 1);
    CHECK(st_x == 1);
    CHECK(r.word(2) == 1);
    CHECK(r.job_event(r.queue(0)) == nullptr);
    CHECK(r.job_event(r.queue(2)) == nullptr);
    const auto e1 = r.errors();
    CHECK(e1.soft_resets == e0.soft_resets);
    check_queues_run(r);
}

TEST_CASE("a soft reset while a TPC engine hangs fails only the job holding the engine, not its hung siblings",
          "[compute][hang]")
{
    // Gate on stream 3; round robin from stream 0: X (0), Y (1) and H (2)
    // fetch, X and Y run a packet, H's launch hangs the engine. X has a
    // timeout of T = W - S/2 (W the watchdog period, wdt_ms; S the driver's
    // 1 s stop timeout): its timeout work disables X, which waits for the
    // engine, and holds the reset lock (read) for S. Meanwhile an operator
    // soft reset is asked for (it waits for the lock) and the watchdog
    // finds Y and H hung: the engine's recovery now waits behind the
    // reset, which finds both hung streams. With the default W = 2 s:
    //
    //   t(gate released)  <= +1.5 s X times out, then at once the operator reset
    //   >= +2.0 s watchdog: Y, H hung     <= +2.5 s X given up: the reset runs
    //
    // X's timeout runs from when X was put on its ring, before the gate's
    // release (which waits for X, Y and H to be on their rings): so it
    // comes up to that wait earlier than T after the release. The watchdog
    // counts W from Y's and H's last packet, which come just after the
    // release. So the watchdog comes at least S/2 after X's timeout and,
    // as long as the release took less than S/2, before X is given up. The
    // reset is asked for once INFO ERRORS counts X's timeout (counted as
    // the timeout work starts, holding the lock), not at a set time. The
    // reset must come to the lock within those S/2: the HPU's NIC drivers
    // are unbound meanwhile, so that deleting its auxiliary devices, which
    // a reset does before it takes the lock, is quick (with the drivers
    // it took 2.9 s on the debug kernel, and the watchdog's recovery took
    // the lock first).
    const int wdt = wdt_ms();
    if (wdt <= kStopMs)
        SKIP("wdt_ms " << wdt << " is not above the " << kStopMs << " ms stop timeout");
    const auto x_timeout = static_cast<std::uint32_t>(wdt - kStopMs / 2);
    const std::string path = node(0);
    NicDriversAway nic_away(path);
    Rig r(path);
    const auto e0 = r.errors();
    r.gate(3);
    const std::uint64_t t_x = now_ns();
    const std::uint32_t so_x = r.submit(r.queue(0), Cb().nop().nop().write_value(r.word_va(2), 1), x_timeout);
    Cb y;
    y.nop().sob_update(6, 1, HPU_SOB_OP_ADD).write_value(r.word_va(3), 1);
    const std::uint32_t so_y = r.submit(r.queue(1), y);
    const std::uint32_t so_h = r.submit(r.queue(2), r.launch(Cb(), 1));
    // The gate goes as soon as X, Y and H are on their rings.
    r.release();
    const std::uint64_t t_g = now_ns();
    INFO("gate released " << ms_since(t_x) << " ms after X's submission (X's timeout " << x_timeout << " ms, wdt "
                          << wdt << " ms)");

    // X's timeout work runs (and holds the reset lock): ask for the reset.
    const std::string attr = reset_attr(path);
    REQUIRE(eventually([&] { return errors_now(path).job_timeouts >= e0.job_timeouts + 1; },
                       static_cast<int>(x_timeout) + 2 * kLatencyMs));
    const double x_timed_out_ms = ms_since(t_g);
    const int reset_err = write_text(attr, "soft"); // returns once the reset ran
    INFO("after the gate: X's timeout seen and the reset asked at " << x_timed_out_ms << " ms, the reset done at "
                                                                  << ms_since(t_g) << " ms");

    const int st_h = r.result(so_h);
    const int st_y = r.result(so_y);
    const int st_x = r.result(so_x);
    const auto e1 = r.errors();
    INFO("reset write " << reset_err << "; H " << st_h << ", Y " << st_y << ", X " << st_x << "; hangs "
                        << e1.engine_hangs - e0.engine_hangs << ", soft resets " << e1.soft_resets - e0.soft_resets
                        << ", timeouts " << e1.job_timeouts - e0.job_timeouts << "; events: " << describe(r.events()));
    CHECK(reset_err == 0);
    // The scenario: Y and H were found hung together, and a reset ran.
    REQUIRE(e1.engine_hangs == e0.engine_hangs + 2);
    REQUIRE(e1.soft_resets >= e0.soft_resets + 1);
    CHECK(e1.job_timeouts == e0.job_timeouts + 1);
    CHECK(st_x == -ETIMEDOUT); // its own timeout
    CHECK(st_h == -ETIMEDOUT);
    CHECK(st_y == 1);          // put back after the reset, ran
    CHECK(r.word(3) == 1);
    const Event *eh = r.job_event(r.queue(2));
    REQUIRE(eh != nullptr);
    CHECK(eh->err.kind == DRM_HPU_ERROR_ENGINE_HANG);
    CHECK(r.job_event(r.queue(1)) == nullptr);
    check_queues_run(r);
}
