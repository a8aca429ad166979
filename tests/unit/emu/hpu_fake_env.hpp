// SPDX-License-Identifier: MIT
//
// The fake environment the device-model core runs in for host unit tests:
// it records raised MSI-X vectors, logged guest errors and trace points
// (counted per HpuTraceId), holds the one-shot timer until a test fires it,
// stands in for host memory with a byte array at bus address HOST_BASE,
// counts lock use and engine kicks.
// Engines are stepped synchronously by the tests.  The boot ROM's worker
// (hpum_core_fw_step()) runs synchronously too: Dev::wr() pumps it after the
// write that kicked it, unless a test sets Env::fw_manual and calls
// Dev::fw_pump() itself (to run it late, or to make a reset overtake it).
//
// Spec version 7: each NIC port's back end is a recorder of the frames
// sent (Env::sent) and a queue of arriving frames that behaves as QEMU's
// (Dev::inject(): a frame the port refuses waits, with those after it,
// until the port asks for them again through nic_rx_kick).  The transmit
// bottom half (hpum_core_nic_tx()) and the receive kick run in Dev::bh(),
// before the next access, unless a test sets Env::nic_manual and calls
// Dev::nic_bh() itself.  Every port has a back end whose link is up unless
// a test says otherwise (Dev::set_link()).
//
// Spec version 4: a Dev is fused with the public key of a test seed and,
// unless told otherwise (DevOpts), boots a signed image built with the
// firmware packer (tools/hpu-fwpack/fwimage.h) so that the management CPU is
// RUNNING when a test starts, as it was with the self-boot of version 3.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "fwimage.h"

extern "C" {
#include "hpu_core.h"
}

namespace hpu_test {

constexpr uint64_t HOST_BASE = 0x10000000;     // bus address of host[0]
constexpr size_t HOST_SIZE = 16u << 20;

struct Env {
    std::vector<unsigned int> vectors;   // MSI-X vectors raised, in order
    std::vector<std::string> errors;     // guest errors logged
    bool timer_armed = false;
    uint64_t timer_ns = 0;               // as armed, relative
    uint64_t timer_deadline = 0;         // absolute device time
    unsigned int arms = 0;
    unsigned int cancels = 0;
    std::vector<uint8_t> host = std::vector<uint8_t>(HOST_SIZE);
    uint64_t now = 1000;
    // Lock depth (must stay 0 or 1) and the thread holding the lock.  The
    // threaded tests run engines on threads of their own, so whether "the
    // lock is held" is asked of the calling thread: another thread holding
    // it while this one does DMA is no error.
    std::atomic<int> locked{0};
    std::atomic<std::thread::id> owner{};
    std::atomic<bool> lock_error{false};
    unsigned int kicks[HPU_H1_ENGINES] = {};
    unsigned int fw_kicks = 0;           // kick_fw calls
    bool fw_manual = false;              // the test pumps the fw worker
    unsigned int dma_reads = 0;
    unsigned int dma_writes = 0;
    // Of those, the calls through the bulk ops (one-copy LIN_DMA segments)
    unsigned int dma_bulk_reads = 0;
    unsigned int dma_bulk_writes = 0;
    bool reset_bh = false;               // reset_drained called, not run
    unsigned int drained = 0;            // reset_drained calls
    // Trace points hit, per HpuTraceId (atomic: engine threads trace too)
    unsigned int traces[HPU_TRACE_COUNT] = {};
    // The arguments of each trace point's last hit (as the call passed them)
    uint64_t trace_args[HPU_TRACE_COUNT][HPU_TRACE_ARGS] = {};
    // Called (without the core lock) before each host read: lets a test
    // act while an engine is in the middle of a step.
    std::function<void(uint64_t addr)> on_dma_read;
    // The same before each host write (before the bytes land).
    std::function<void(uint64_t addr)> on_dma_write;
    // Called with each guest error logged (under the core lock, so it must
    // not take it).
    std::function<void(const char *msg)> on_log;

    // Spec version 7: the NIC ports' back ends
    struct Frame {
        unsigned int port;
        std::vector<uint8_t> bytes;
    };
    std::vector<Frame> sent;                    // nic_send, in order
    std::function<void(unsigned int port)> on_nic_send;  // before recording
    uint32_t link[HPU_NIC_MAX_PORTS];           // what nic_link answers
    unsigned int tx_kicks[HPU_NIC_MAX_PORTS] = {};
    unsigned int rx_kicks[HPU_NIC_MAX_PORTS] = {};
    unsigned int rx_purges[HPU_NIC_MAX_PORTS] = {};
    bool tx_pending[HPU_NIC_MAX_PORTS] = {};    // the transmit bottom half
    bool rx_pending[HPU_NIC_MAX_PORTS] = {};    // the receive kick
    bool purge_pending[HPU_NIC_MAX_PORTS] = {};
    // Frames the back end holds for a port (QEMU's queue) while the port
    // refuses them (QEMU's receive_disabled).
    std::deque<std::vector<uint8_t>> rxq[HPU_NIC_MAX_PORTS];
    bool rx_disabled[HPU_NIC_MAX_PORTS] = {};
    bool nic_manual = false;                    // the test runs nic_bh()
    bool roce_pending = false;                  // the RoCE bottom half
    unsigned int roce_kicks = 0;
    bool roce_manual = false;                   // the test runs roce_bh()

    Env()
    {
        for (auto &l : link) {
            l = HPU_NIC_LINK_STATUS_ATTACHED | HPU_NIC_LINK_STATUS_UP;
        }
    }

    bool host_range(uint64_t addr, uint64_t len) const
    {
        return addr >= HOST_BASE && addr - HOST_BASE <= host.size() &&
               len <= host.size() - (addr - HOST_BASE);
    }

    // Whether the calling thread holds the core lock.
    bool held_here() const
    {
        return locked.load() != 0 && owner.load() == std::this_thread::get_id();
    }
};

inline void env_raise_msix(void *opaque, unsigned int vector)
{
    auto *env = static_cast<Env *>(opaque);

    if (env->held_here()) {
        env->lock_error = true;         // must be called without the lock
    }
    env->vectors.push_back(vector);
}

inline void env_log(void *opaque, const char *fmt, ...)
{
    char buf[512];
    va_list ap;

    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    auto *env = static_cast<Env *>(opaque);
    env->errors.emplace_back(buf);
    if (env->on_log) {
        env->on_log(buf);
    }
}

inline void env_arm_timer(void *opaque, uint64_t ns)
{
    auto *env = static_cast<Env *>(opaque);

    env->timer_armed = true;
    env->timer_ns = ns;
    env->timer_deadline = env->now + ns;
    env->arms++;
}

inline void env_cancel_timer(void *opaque)
{
    auto *env = static_cast<Env *>(opaque);

    env->timer_armed = false;
    env->cancels++;
}

inline uint64_t env_now(void *opaque)
{
    return static_cast<Env *>(opaque)->now;
}

inline int env_dma_read(void *opaque, uint64_t addr, void *buf, uint64_t len)
{
    auto *env = static_cast<Env *>(opaque);

    if (env->held_here()) {
        env->lock_error = true;         // must be called without the lock
    }
    env->dma_reads++;
    if (env->on_dma_read) {
        env->on_dma_read(addr);
    }
    if (!env->host_range(addr, len)) {
        return -1;
    }
    std::memcpy(buf, env->host.data() + (addr - HOST_BASE), len);
    return 0;
}

inline int env_dma_write(void *opaque, uint64_t addr, const void *buf,
                         uint64_t len)
{
    auto *env = static_cast<Env *>(opaque);

    if (env->held_here()) {
        env->lock_error = true;         // must be called without the lock
    }
    env->dma_writes++;
    if (env->on_dma_write) {
        env->on_dma_write(addr);
    }
    if (!env->host_range(addr, len)) {
        return -1;
    }
    std::memcpy(env->host.data() + (addr - HOST_BASE), buf, len);
    return 0;
}

// The bulk ops: the same copies, counted apart.
inline int env_dma_read_bulk(void *opaque, uint64_t addr, void *buf, uint64_t len)
{
    static_cast<Env *>(opaque)->dma_bulk_reads++;
    return env_dma_read(opaque, addr, buf, len);
}

inline int env_dma_write_bulk(void *opaque, uint64_t addr, const void *buf,
                              uint64_t len)
{
    static_cast<Env *>(opaque)->dma_bulk_writes++;
    return env_dma_write(opaque, addr, buf, len);
}

inline void env_lock(void *opaque)
{
    auto *env = static_cast<Env *>(opaque);

    // The owner first: a thread that last held the lock must not see
    // itself as the holder between these two stores.
    env->owner = std::this_thread::get_id();
    if (env->locked++) {
        env->lock_error = true;         // recursive locking
    }
}

inline void env_unlock(void *opaque)
{
    auto *env = static_cast<Env *>(opaque);

    if (!env->held_here()) {
        env->lock_error = true;         // unlocked by a thread not holding it
    }
    env->owner = std::thread::id();
    if (--env->locked) {
        env->lock_error = true;
    }
}

inline void env_kick(void *opaque, unsigned int engine)
{
    auto *env = static_cast<Env *>(opaque);

    if (!env->held_here()) {
        env->lock_error = true;         // must be called with the lock
    }
    env->kicks[engine]++;
}

inline void env_kick_fw(void *opaque)
{
    auto *env = static_cast<Env *>(opaque);

    if (!env->held_here()) {
        env->lock_error = true;         // must be called with the lock
    }
    env->fw_kicks++;
}

// The last access begun before a power-on reset ended: the reset is to be
// finished soon (QEMU: a bottom half).  Dev runs it before its next access
// (Dev::bh()), as the main loop would.
inline void env_reset_drained(void *opaque)
{
    auto *env = static_cast<Env *>(opaque);

    if (!env->held_here()) {
        env->lock_error = true;         // must be called with the lock
    }
    env->reset_bh = true;
    env->drained++;
}

// A trace point: counted, its arguments kept (the last hit's).
inline void env_trace(void *opaque, HpuTraceId id, const uint64_t *arg)
{
    auto *env = static_cast<Env *>(opaque);

    if (id < HPU_TRACE_COUNT) {
        __atomic_fetch_add(&env->traces[id], 1u, __ATOMIC_RELAXED);
        for (unsigned int i = 0; i < HPU_TRACE_ARGS; i++) {
            __atomic_store_n(&env->trace_args[id][i], arg[i],
                             __ATOMIC_RELAXED);
        }
    }
}

inline void env_nic_send(void *opaque, unsigned int port, const uint8_t *buf,
                         uint32_t len)
{
    auto *env = static_cast<Env *>(opaque);

    if (env->held_here()) {
        env->lock_error = true;         // must be called without the lock
    }
    if (env->on_nic_send) {
        env->on_nic_send(port);
    }
    env->sent.push_back({ port, std::vector<uint8_t>(buf, buf + len) });
}

inline void env_nic_kick_tx(void *opaque, unsigned int port)
{
    auto *env = static_cast<Env *>(opaque);

    if (!env->held_here()) {
        env->lock_error = true;         // must be called with the lock
    }
    env->tx_kicks[port]++;
    env->tx_pending[port] = true;
}

inline void env_nic_rx_kick(void *opaque, unsigned int port, bool purge)
{
    auto *env = static_cast<Env *>(opaque);

    if (!env->held_here()) {
        env->lock_error = true;         // must be called with the lock
    }
    env->rx_kicks[port]++;
    env->rx_pending[port] = true;
    if (purge) {
        env->rx_purges[port]++;
        env->purge_pending[port] = true;
    }
}

inline void env_roce_kick(void *opaque)
{
    auto *env = static_cast<Env *>(opaque);

    if (!env->held_here()) {
        env->lock_error = true;         // must be called with the lock
    }
    env->roce_kicks++;
    env->roce_pending = true;
}

inline uint32_t env_nic_link(void *opaque, unsigned int port)
{
    return static_cast<Env *>(opaque)->link[port];
}

inline const HpuCoreOps env_ops = {
    .raise_msix = env_raise_msix,
    .log_guest_error = env_log,
    .arm_timer = env_arm_timer,
    .cancel_timer = env_cancel_timer,
    .now_ns = env_now,
    .dma_read = env_dma_read,
    .dma_write = env_dma_write,
    .dma_read_bulk = env_dma_read_bulk,
    .dma_write_bulk = env_dma_write_bulk,
    .lock = env_lock,
    .unlock = env_unlock,
    .kick_engine = env_kick,
    .kick_fw = env_kick_fw,
    .reset_drained = env_reset_drained,
    .trace = env_trace,
    .run_parallel = nullptr,           // TPC cores one after the other
    .nic_send = env_nic_send,
    .nic_kick_tx = env_nic_kick_tx,
    .nic_rx_kick = env_nic_rx_kick,
    .nic_link = env_nic_link,
    .roce_kick = env_roce_kick,
};

// Firmware images for the tests
inline const hpu::fw::Seed &test_seed()
{
    static const hpu::fw::Seed seed = [] {
        hpu::fw::Seed s{};
        for (size_t i = 0; i < s.size(); i++) {
            s[i] = static_cast<uint8_t>(0xa0 + i);
        }
        return s;
    }();
    return seed;
}

inline hpu::fw::PublicKey test_pubkey() { return hpu::fw::public_key(test_seed()); }

// The tables of firmware/hpu-h1.fwsrc, with a sensor period of @period_ms
// (the default 1 s keeps the sensor timer out of the way of other tests).
inline hpu::fw::Source fw_source(uint32_t period_ms = 1000)
{
    hpu::fw::Source src;

    src.version = HPU_FW_VERSION(1, 2, 3);
    src.build = "unit-test 1.2.3";
    src.info = "emu-core-tests";
    src.limits = {
        { HPU_LIMIT_TEMP_MAX, 85000, 30000, 100000 },
        { HPU_LIMIT_TEMP_CRIT, 95000, 40000, 110000 },
        { HPU_LIMIT_POWER_CAP, 350000, 50000, 450000 },
        { HPU_LIMIT_HBM_TEMP_MAX, 90000, 30000, 100000 },
    };
    src.clocks = { { 800, 750 }, { 1000, 800 }, { 1200, 850 }, { 1400, 900 },
                   { 1600, 950 } };
    src.thermal = { 25000, 150, 2000, 60000, 30000, 1600, 1200, 3000,
                    period_ms };
    return src;
}

inline std::vector<uint8_t> fw_image(const hpu::fw::Source &src = fw_source())
{
    return hpu::fw::pack(src, &test_seed());
}

// Where Dev puts an image in host memory: the first MiB, below what the Rig
// allocates.
constexpr uint64_t FW_HOST_ADDR = HOST_BASE;

struct DevOpts {
    bool boot = true;                   // boot fw_image() at construction
    bool key = true;                    // fuse test_pubkey()
    uint32_t min_version = 0;
    std::vector<uint8_t> flash;         // power-on flash content
    hpu::fw::Source source = fw_source();
    uint64_t hbm = 4ULL << 30;
    const HpuCoreOps *ops = &env_ops;  // a test's own (threaded) ops
    bool bar4_v7 = false;               // hbm-bar=64M: version 7's BAR4
};

inline const uint8_t test_uuid[HPU_UUID_LEN] = {
    0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
    0x0f, 0xed, 0xcb, 0xa9, 0x87, 0x65, 0x43, 0x21,
};

struct Dev {
    Env env;
    HpuCore core;

    explicit Dev(uint64_t hbm = 4ULL << 30, unsigned int nics = 10,
                 const char *serial = "HPU-0000000000")
    {
        DevOpts o;

        o.hbm = hbm;
        init(o, nics, serial);
    }
    explicit Dev(const DevOpts &o) { init(o, 10, "HPU-0000000000"); }
    void init(const DevOpts &o, unsigned int nics, const char *serial)
    {
        HpuCoreConfig cfg;
        hpu::fw::PublicKey key = test_pubkey();

        hpum_core_make_config(&cfg, o.hbm, nics, serial, test_uuid);
        if (o.key) {
            std::string hex = hpu::fw::to_hex(key.data(), key.size());
            REQUIRE(hpum_core_parse_fw_key(hex.c_str(), &cfg, nullptr, 0));
        }
        cfg.fw_min_version = o.min_version;
        cfg.fw_flash = o.flash.empty() ? nullptr : o.flash.data();
        cfg.fw_flash_len = static_cast<uint32_t>(o.flash.size());
        cfg.bar4_v7 = o.bar4_v7;
        REQUIRE(hpum_core_init(&core, o.ops, &env, &cfg));
        // The boot ROM initialises for HPU_ROM_INIT_NS after power-on.
        REQUIRE(rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
        REQUIRE(env.timer_armed);
        REQUIRE(env.timer_ns == HPU_ROM_INIT_NS);
        fire_timer();
        REQUIRE(rd(HPU_REG_CPU_STATUS) == HPU_CPU_WAIT_IMAGE);
        REQUIRE_FALSE(env.timer_armed);
        if (o.boot) {
            REQUIRE(boot(fw_image(o.source)) == HPU_CPU_RUNNING);
        }
        env.vectors.clear();    // forget what init did
        env.errors.clear();
        env.arms = env.cancels = 0;
        env.dma_reads = env.dma_writes = 0;
        env.dma_bulk_reads = env.dma_bulk_writes = 0;
        env.fw_kicks = 0;
        std::memset(env.kicks, 0, sizeof(env.kicks));
        std::memset(env.tx_kicks, 0, sizeof(env.tx_kicks));
        std::memset(env.rx_kicks, 0, sizeof(env.rx_kicks));
        std::memset(env.rx_purges, 0, sizeof(env.rx_purges));
        wr(HPU_REG_IRQ_STATUS, 0xffffffff);
    }
    // Put @img in host memory at FW_HOST_ADDR and point FW_IMG_* at it
    // (@size: FW_IMG_SIZE, default the image's length).
    void load_image(const std::vector<uint8_t> &img, int64_t size = -1)
    {
        REQUIRE(img.size() <= HPU_FW_MAX_SIZE);
        std::memcpy(env.host.data() + (FW_HOST_ADDR - HOST_BASE), img.data(),
                    img.size());
        wr(HPU_REG_FW_IMG_ADDR_LO, static_cast<uint32_t>(FW_HOST_ADDR));
        wr(HPU_REG_FW_IMG_ADDR_HI, static_cast<uint32_t>(FW_HOST_ADDR >> 32));
        wr(HPU_REG_FW_IMG_SIZE, size < 0 ? static_cast<uint32_t>(img.size())
                                         : static_cast<uint32_t>(size));
    }
    // Zero what load_image() put in host memory.
    void unload_image()
    {
        std::memset(env.host.data() + (FW_HOST_ADDR - HOST_BASE), 0,
                    HPU_FW_MAX_SIZE);
    }
    // BOOT_CMD 1 with @img; let the verification time pass.  Returns
    // CPU_STATUS once the boot ended (RUNNING or BOOT_FAILED).
    uint32_t boot(const std::vector<uint8_t> &img, int64_t size = -1)
    {
        load_image(img, size);
        wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
        unload_image();         // one read, at the command
        REQUIRE(rd(HPU_REG_CPU_STATUS) == HPU_CPU_VERIFYING);
        advance(HPU_FW_VERIFY_NS);
        if (rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOTING) {
            advance(HPU_CPU_BOOT_NS);
        }
        return rd(HPU_REG_CPU_STATUS);
    }
    ~Dev()
    {
        CHECK_FALSE(env.lock_error);
        CHECK(env.locked == 0);
        hpum_core_fini(&core);
    }
    Dev(const Dev &) = delete;
    Dev &operator=(const Dev &) = delete;

    // The bottom halves: finish a power-on reset whose DMA has drained;
    // the NIC ports' (unless Env::nic_manual).
    void bh()
    {
        if (env.reset_bh) {
            env.reset_bh = false;
            hpum_core_reset_finish(&core);
        }
        if (!env.nic_manual) {
            nic_bh();
        }
        if (!env.roce_manual) {
            roce_bh();
        }
    }
    // Spec version 7 part 2: the RoCE engine's bottom half, while it has
    // work.  Not re-entered.
    void roce_bh()
    {
        if (roce_running) {
            return;
        }
        roce_running = true;
        while (env.roce_pending) {
            env.roce_pending = false;
            if (hpum_core_roce_step(&core)) {
                env.roce_pending = true;
            }
        }
        roce_running = false;
    }
    bool roce_running = false;
    // Spec version 7: run the NIC ports' bottom halves as QEMU's main loop
    // would: the transmit one while it has work, the receive kick (purge
    // the held frames, then offer them again).  Not re-entered.
    void nic_bh()
    {
        if (nic_running) {
            return;
        }
        nic_running = true;
        for (unsigned int p = 0; p < HPU_NIC_MAX_PORTS; p++) {
            while (env.tx_pending[p]) {
                env.tx_pending[p] = false;
                if (hpum_core_nic_tx(&core, p)) {
                    env.tx_pending[p] = true;
                }
            }
            if (env.purge_pending[p]) {
                env.purge_pending[p] = false;
                env.rxq[p].clear();
            }
            if (env.rx_pending[p]) {
                env.rx_pending[p] = false;
                env.rx_disabled[p] = false;
                rx_flush(p);
            }
        }
        nic_running = false;
    }
    bool nic_running = false;
    // Offer the held frames of port @p until the port refuses one.
    void rx_flush(unsigned int p)
    {
        while (!env.rxq[p].empty() && !env.rx_disabled[p]) {
            std::vector<uint8_t> f = env.rxq[p].front();

            env.rxq[p].pop_front();
            if (!hpum_core_nic_receive(&core, p, f.data(), f.size())) {
                env.rxq[p].push_front(f);
                env.rx_disabled[p] = true;
            }
        }
    }
    // A frame arrives at port @p from its back end, as QEMU delivers it:
    // queued behind held ones, or refused and then held.  Returns whether
    // the port took it.
    bool inject(unsigned int p, const std::vector<uint8_t> &f)
    {
        if (env.rx_disabled[p]) {
            env.rxq[p].push_back(f);
            return false;
        }
        if (!hpum_core_nic_receive(&core, p, f.data(), f.size())) {
            env.rxq[p].push_back(f);
            env.rx_disabled[p] = true;
            return false;
        }
        return true;
    }
    // The back end of port @p changes its link (HPU_NIC_LINK_* bits).
    void set_link(unsigned int p, uint32_t bits)
    {
        env.link[p] = bits;
        hpum_core_nic_link_changed(&core, p);
    }
    uint32_t rd(uint64_t addr, unsigned int size = 4)
    {
        bh();
        return static_cast<uint32_t>(hpum_core_read(&core, addr, size));
    }
    uint64_t rd64(uint64_t addr, unsigned int size)
    {
        bh();
        return hpum_core_read(&core, addr, size);
    }
    void wr(uint64_t addr, uint64_t val, unsigned int size = 4)
    {
        bh();
        hpum_core_write(&core, addr, val, size);
        if (!env.fw_manual) {
            fw_pump();
        }
    }
    // Run the boot ROM's worker until it has no job; returns the jobs run.
    // Not re-entered (a write from inside a job's DMA does not pump).
    unsigned int fw_pump()
    {
        unsigned int n = 0;

        if (fw_pumping) {
            return 0;
        }
        fw_pumping = true;
        while (hpum_core_fw_step(&core)) {
            n++;
        }
        fw_pumping = false;
        return n;
    }
    bool fw_pumping = false;
    // The device-time callback: only what the core armed can fire.  Device
    // time moves to the deadline first.
    void fire_timer()
    {
        REQUIRE(env.timer_armed);
        env.timer_armed = false;
        if (env.timer_deadline > env.now) {
            env.now = env.timer_deadline;
        }
        bh();
        hpum_core_timer_expired(&core);
        // A hard reset's HBM clear runs on the worker even when a test
        // pumps it itself: no other job can be latched meanwhile.
        if (!env.fw_manual || core.hbm.clear_job) {
            fw_pump();
        }
    }
    // Let @ns of device time pass, firing the timer at each deadline.
    void advance(uint64_t ns)
    {
        uint64_t end = env.now + ns;

        while (env.timer_armed && env.timer_deadline <= end) {
            fire_timer();
        }
        env.now = end;
    }
    uint32_t error() { return rd(HPU_REG_ERROR); }
};

} // namespace hpu_test
