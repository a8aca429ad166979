// SPDX-License-Identifier: MIT
//
// hpu-fuzz: a structure-aware fuzzer of the hpu driver's ioctl interface
// (issue 9, "Tools that keep it out").
//
// It knows every ioctl of include/uapi/drm/hpu_accel.h and the DRM core
// ioctls the driver accepts (GEM close, PRIME handle <-> fd, the syncobj
// family including sync_file export and import), plus the file operations
// around them (mmap of buffers and dma-bufs, dma-buf and sync_file ioctls,
// read(2) of events, close and reopen, fork with open files). From a seeded
// PRNG it builds plausible sequences: buffers of every kind created and
// destroyed, VM_BIND maps and unmaps at mostly valid, sometimes off-by-one,
// overlapping or out-of-range ranges, well-formed and malformed command
// buffers submitted with random in/out syncobjs and short timeouts,
// dma-bufs exported, imported (also into the other HPU) and mapped,
// sync_files exported and imported, files closed and reopened; with N
// threads in each of M forked processes at once, and optionally an
// operator soft reset in the middle of the run.
//
// It counts the calls and the distinct outcomes (ioctl, errno) and prints
// calls per second and the per-ioctl table at the end. It fails (exit 1)
// when a worker process crashes, a process does not exit within the time
// limit (a hang), or something leaked: device HBM use (sysfs hbm_used),
// open fds of any process, or active objects of the driver's, drm_sched's
// and the fence slab caches. The guest's kernel log (oops, WARN, BUG) is
// checked by tools/dev/vm/hpu-vm and tests/vm/guest-suite.sh.
//
// Usage: hpu-fuzz [--seed S] [--calls N] [--threads T] [--procs P]
//                 [--device I|all] [--time-limit SEC] [--reset]
//                 [--no-dmabuf-mmap] [--no-leak-check] [--trace]
// Documentation/testing.md ("Fuzzing") describes the options and runs.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <poll.h>
#include <random>
#include <sstream>
#include <string>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <linux/dma-buf.h>
#include <linux/sync_file.h>

#include "drm/hpu_accel.h"
#include "slab_util.h"

namespace {

// ---------------------------------------------------------------------------
// Operations (rows of the table) and the outcome counters, in memory shared
// by every process of the run.

enum Op : std::uint8_t {
    OP_OPEN,
    OP_CLOSE,
    OP_INFO,
    OP_BO_CREATE,
    OP_BO_USERPTR,
    OP_BO_MMAP_OFFSET,
    OP_VM_MAP,
    OP_VM_UNMAP,
    OP_QUEUE_CREATE,
    OP_QUEUE_DESTROY,
    OP_SUBMIT,
    OP_EVENTS,
    OP_EVENT_READ,
    OP_GEM_CLOSE,
    OP_PRIME_EXPORT,
    OP_PRIME_IMPORT,
    OP_SYNCOBJ_CREATE,
    OP_SYNCOBJ_DESTROY,
    OP_SYNCOBJ_WAIT,
    OP_SYNCOBJ_TL_WAIT,
    OP_SYNCOBJ_RESET,
    OP_SYNCOBJ_SIGNAL,
    OP_SYNCOBJ_TL_SIGNAL,
    OP_SYNCOBJ_QUERY,
    OP_SYNCOBJ_TRANSFER,
    OP_SYNCOBJ_EXPORT,
    OP_SYNCOBJ_IMPORT,
    OP_MMAP_DEV,
    OP_MMAP_DMABUF,
    OP_MEM_ACCESS,
    OP_MUNMAP,
    OP_DMABUF_SYNC,
    OP_DMABUF_EXPORT_SF,
    OP_DMABUF_IMPORT_SF,
    OP_SYNC_FILE_INFO,
    OP_SYNC_MERGE,
    OP_FD_CLOSE,
    OP_UNKNOWN_IOCTL,
    OP_JOB_FENCE,
    OP_FORK,
    OP_RESET_SYSFS,
    OP_SUBMIT_ARRAY,
    OP_COUNT
};

constexpr std::array<const char *, OP_COUNT> kOpName = {
    "open(accel)",
    "close(accel)",
    "HPU_INFO",
    "HPU_BO_CREATE",
    "HPU_BO_USERPTR",
    "HPU_BO_MMAP_OFFSET",
    "HPU_VM_BIND(map)",
    "HPU_VM_BIND(unmap)",
    "HPU_QUEUE_CREATE",
    "HPU_QUEUE_DESTROY",
    "HPU_SUBMIT",
    "HPU_EVENTS",
    "read(events)",
    "GEM_CLOSE",
    "PRIME_HANDLE_TO_FD",
    "PRIME_FD_TO_HANDLE",
    "SYNCOBJ_CREATE",
    "SYNCOBJ_DESTROY",
    "SYNCOBJ_WAIT",
    "SYNCOBJ_TIMELINE_WAIT",
    "SYNCOBJ_RESET",
    "SYNCOBJ_SIGNAL",
    "SYNCOBJ_TIMELINE_SIGNAL",
    "SYNCOBJ_QUERY",
    "SYNCOBJ_TRANSFER",
    "SYNCOBJ_HANDLE_TO_FD",
    "SYNCOBJ_FD_TO_HANDLE",
    "mmap(accel)",
    "mmap(dma-buf)",
    "access(mapping)",
    "munmap",
    "DMA_BUF_IOCTL_SYNC",
    "DMA_BUF_EXPORT_SYNC_FILE",
    "DMA_BUF_IMPORT_SYNC_FILE",
    "SYNC_IOC_FILE_INFO",
    "SYNC_IOC_MERGE",
    "close(dma-buf/sync_file)",
    "unknown/short ioctl",
    "job fence status",
    "fork+child ioctls",
    "sysfs hpu_reset soft",
    "HPU_SUBMIT_ARRAY",
};

constexpr int kErrs = 134; // errno values 0..133; larger ones count as 133
constexpr std::size_t kActionCount = 24; // entries of Worker::step()'s table

struct Shared {
    std::atomic<std::uint64_t> calls;
    std::atomic<std::uint64_t> reset_at; // call count that triggers the reset
    std::atomic<int> reset_efd;
    std::array<std::array<std::atomic<std::uint64_t>, kErrs>, OP_COUNT> counts;
    // Per action of Worker::step(): how often it ran, its wall time and its calls.
    std::array<std::atomic<std::uint64_t>, kActionCount> act_runs;
    std::array<std::atomic<std::uint64_t>, kActionCount> act_ns;
    std::array<std::atomic<std::uint64_t>, kActionCount> act_calls;
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

Shared *g_sh = nullptr;
int g_reset_efd = -1;
bool g_trace = false;
thread_local std::uint64_t t_calls = 0; // calls of this thread

void record(Op op, int err)
{
    const int e = std::clamp(err, 0, kErrs - 1);
    ++t_calls;
    g_sh->counts.at(op).at(static_cast<std::size_t>(e)).fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t n = g_sh->calls.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n == g_sh->reset_at.load(std::memory_order_relaxed) && g_reset_efd >= 0) {
        const std::uint64_t one = 1;
        (void)!::write(g_reset_efd, &one, sizeof(one));
    }
    if (g_trace)
        std::fprintf(stderr, "[%d] #%" PRIu64 " %s -> %d\n", static_cast<int>(::gettid()), n, kOpName.at(op), err);
}

std::uint64_t now_ns()
{
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<std::uint64_t>(ts.tv_nsec);
}

// One ioctl, recorded; returns 0 or the errno.
int xioctl(Op op, int fd, unsigned long req, void *arg)
{
    int r = 0;
    do {
        r = ::ioctl(fd, req, arg);
    } while (r < 0 && errno == EINTR);
    const int e = r < 0 ? errno : 0;
    if (g_trace)
        std::fprintf(stderr, "[%d] fd %d: ", static_cast<int>(::gettid()), fd);
    record(op, e);
    return e;
}

std::string errname(int e)
{
    if (e == 0)
        return "ok";
    const char *n = ::strerrorname_np(e);
    return n != nullptr ? n : "E" + std::to_string(e);
}

// ---------------------------------------------------------------------------
// The PRNG: splitmix64 to derive the per-worker seeds, mt19937_64 each.

std::uint64_t splitmix(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27U)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31U);
}

class Rng {
public:
    explicit Rng(std::uint64_t seed) : g_(seed) {}
    std::uint64_t u64() { return g_(); }
    // Uniform in [0, n); 0 when n is 0.
    std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : g_() % n; }
    std::uint64_t range(std::uint64_t lo, std::uint64_t hi) { return lo + below(hi - lo + 1); }
    // True with probability pct percent.
    bool pct(unsigned p) { return below(100) < p; }
    template <typename T> T &pick(std::vector<T> &v) { return v.at(below(v.size())); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(g_()); }

private:
    std::mt19937_64 g_;
};

// ---------------------------------------------------------------------------
// State of the run, as the fuzzer believes it to be (other threads may have
// invalidated any handle: that is part of the game).

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = 1024 * KiB;
constexpr std::uint64_t GiB = 1024 * MiB;
constexpr std::uint64_t kPage = 4 * KiB;
// inaccessible pages after a user-pointer buffer's memory (a_bo_userptr)
constexpr std::uint64_t kUserptrGuard = 4;
constexpr std::uint64_t kCbSize = 64 * KiB; // per-context command buffer
constexpr std::uint64_t kCbMax = 1 * MiB;   // largest cb_size SUBMIT takes
constexpr std::size_t kMaxBos = 24;
constexpr std::size_t kMaxMaps = 32;
constexpr std::size_t kMaxSyncobjs = 16;
constexpr std::size_t kMaxQueues = 6;
constexpr std::size_t kMaxRegions = 8;
constexpr std::size_t kMaxPool = 24;

enum class Kind : std::uint8_t { Host, Hbm, Userptr, UserptrRo, Import };

struct UserMem {
    void *p = nullptr;
    std::size_t len = 0;
    UserMem() = default;
    UserMem(void *addr, std::size_t n) : p(addr), len(n) {}
    UserMem(const UserMem &) = delete;
    UserMem &operator=(const UserMem &) = delete;
    UserMem(UserMem &&) = delete;
    UserMem &operator=(UserMem &&) = delete;
    ~UserMem()
    {
        if (p != nullptr)
            ::munmap(p, len);
    }
};

struct Bo {
    std::uint32_t handle = 0;
    Kind kind = Kind::Host;
    Kind origin = Kind::Host; // what the memory really is (for imports)
    std::uint64_t size = 0;
    std::uint64_t page = kPage;
    std::shared_ptr<UserMem> umem; // userptr memory
};

struct Map {
    std::uint64_t va = 0;
    std::uint64_t size = 0;
    bool readonly = false;
};

struct Syncobj {
    std::uint32_t handle = 0;
    std::uint64_t point = 0; // last timeline point given to it
    bool fenced = false;     // was signalled or used as an out-sync
};

struct Region {
    void *p = nullptr;
    std::size_t len = 0;
    bool direct = false; // a host buffer: safe to write with the CPU
};

struct Dmabuf {
    int fd = -1;
    Kind origin = Kind::Host;
    std::uint64_t size = 0;
};

struct Ctx {
    std::mutex mu;
    int dev = 0;
    int fd = -1;
    bool shared = false;
    std::uint32_t num_dma = 1;
    std::uint64_t va_start = 0x100000000ULL;
    std::uint64_t va_end = 1ULL << 47U;
    std::uint64_t cb_va = 0; // 0: no command buffer
    void *cb_mem = nullptr;
    std::vector<Bo> bos;
    std::vector<Map> maps;
    std::vector<std::uint32_t> queues;
    std::vector<Syncobj> syncobjs;
};

// Process-wide pools of fds (checked out while in use: an fd is never used
// after its close by another thread).
struct Pool {
    std::mutex mu;
    std::vector<Dmabuf> dmabufs;
    std::vector<int> syncfiles;
    std::vector<Region> orphans; // mappings whose file or buffer may be gone
};

struct Options {
    std::uint64_t seed = 0;
    bool seed_given = false;
    std::uint64_t calls = 100000;
    unsigned threads = 3;
    unsigned procs = 3;
    int device = -1; // -1: all
    unsigned time_limit = 600;
    bool reset = false;
    bool dmabuf_mmap = true;
    bool leak_check = true;
    std::string stats_out; // append "name<TAB>errno-name<TAB>count" lines
};

Options g_opt;
std::vector<std::string> g_nodes; // selected /dev/accel/accelN
std::uint64_t g_soft_deadline = 0;

int open_fds()
{
    int n = 0;
    if (DIR *d = ::opendir("/proc/self/fd")) {
        while (::readdir(d) != nullptr)
            ++n;
        ::closedir(d);
    }
    return n - 3;
}

std::optional<std::uint64_t> read_u64(const std::string &path)
{
    std::ifstream f(path);
    std::uint64_t v = 0;
    if (f >> v)
        return v;
    return std::nullopt;
}

std::string sysfs_dir(const std::string &node)
{
    return "/sys/class/accel/" + node.substr(node.rfind('/') + 1) + "/device";
}

// ---------------------------------------------------------------------------
// Small syscall wrappers that record their outcome.

int do_close(Op op, int fd)
{
    const int e = ::close(fd) < 0 ? errno : 0;
    record(op, e);
    return e;
}

void *do_mmap(Op op, int fd, std::size_t len, int prot, std::uint64_t off)
{
    void *p = ::mmap(nullptr, len, prot, MAP_SHARED, fd, static_cast<off_t>(off));
    record(op, p == MAP_FAILED ? errno : 0);
    return p == MAP_FAILED ? nullptr : p;
}

void do_munmap(const Region &r)
{
    record(OP_MUNMAP, ::munmap(r.p, r.len) < 0 ? errno : 0);
}

// Reads and writes a mapping through the kernel (a pipe), so a refused
// access is an errno rather than a signal; a host buffer is also written
// directly by the CPU.
void access_region(Rng &rng, const Region &r, const int pipefd[2])
{
    const std::size_t off = rng.below(r.len / kPage) * kPage;
    const std::size_t n = std::min<std::size_t>(r.len - off, 1 + rng.below(kPage));
    auto *base = static_cast<unsigned char *>(r.p) + off;
    if (r.direct)
        std::memset(base, static_cast<int>(rng.below(256)), n);
    ssize_t w = ::write(pipefd[1], base, n);
    int e = w < 0 ? errno : 0;
    if (w > 0) {
        const ssize_t rd = ::read(pipefd[0], base, static_cast<std::size_t>(w));
        e = rd < 0 ? errno : 0;
        if (rd < 0) { // drain what the failed read left
            std::array<unsigned char, 4096> sink{};
            while (w > 0) {
                const ssize_t k = ::read(pipefd[0], sink.data(), std::min<std::size_t>(sink.size(), static_cast<std::size_t>(w)));
                if (k <= 0)
                    break;
                w -= k;
            }
        }
    }
    record(OP_MEM_ACCESS, e);
}

// ---------------------------------------------------------------------------
// Command buffers.

constexpr std::uint32_t PKT_NOP = 0;
constexpr std::uint32_t PKT_LIN_DMA = 1;
constexpr std::uint32_t PKT_WRITE_VALUE = 2;
constexpr std::uint32_t PKT_SOB_UPDATE = 3;
constexpr std::uint32_t PKT_WAIT = 4;
constexpr std::uint32_t PKT_WREG = 5;

struct Target {
    std::uint64_t va = 0;
    std::uint64_t size = 0;
};

class CbGen {
public:
    CbGen(Rng &rng, std::vector<Target> targets) : rng_(rng), t_(std::move(targets)) {}

    // Appends one packet; malformed with probability bad percent.
    void packet(unsigned bad)
    {
        const bool mal = rng_.pct(bad);
        const auto op = static_cast<std::uint32_t>(rng_.below(mal ? 8 : 5)); // WREG and unknown only when malformed
        const std::uint32_t hdr = mal && rng_.pct(20) ? (op | (1U + rng_.below(0xffffff)) << 8U) : op;
        switch (op) {
        case PKT_NOP:
            w(hdr, mal && rng_.pct(50) ? rng_.u32() : 0);
            break;
        case PKT_LIN_DMA: {
            const Target d = tgt();
            std::uint64_t doff = rng_.below(d.size);
            std::uint64_t size = 1 + rng_.below(std::min<std::uint64_t>(d.size - doff, 256 * KiB));
            std::uint32_t flags = rng_.pct(40) ? 1U : 0U;
            std::uint64_t src = flags != 0U ? rng_.u64() : 0;
            if (flags == 0U) {
                const Target s = tgt();
                const std::uint64_t soff = rng_.below(s.size);
                size = std::min(size, s.size - soff);
                src = s.va + soff;
            }
            std::uint64_t dst = d.va + doff;
            if (mal) {
                switch (rng_.below(6)) {
                case 0: size = 0; break;
                case 1: size = (1ULL << 32U) + 1 + rng_.below(100); break;
                case 2: flags |= 2U << rng_.below(30); break;
                case 3: dst = ~0ULL - rng_.below(size); break;
                case 4: dst = rng_.u64(); break;
                default: size += d.size; break; // past the mapping
                }
            }
            w(hdr, flags);
            q(src);
            q(dst);
            q(size);
            break;
        }
        case PKT_WRITE_VALUE: {
            const Target d = tgt();
            std::uint64_t addr = d.va + (rng_.below(d.size / 4) * 4);
            if (mal)
                addr = rng_.pct(50) ? addr + 1 + rng_.below(3) : rng_.u64();
            w(hdr, rng_.u32());
            q(addr);
            break;
        }
        case PKT_SOB_UPDATE:
        case PKT_WAIT: {
            auto sob = static_cast<std::uint32_t>(rng_.below(32));
            // WAIT values mostly hold at once (GE 0) so few jobs block.
            std::uint32_t value = op == PKT_WAIT && rng_.pct(70) ? 0 : static_cast<std::uint32_t>(rng_.below(4));
            auto cond = static_cast<std::uint32_t>(rng_.below(2));
            if (op == PKT_WAIT && value == 0)
                cond = 0;
            if (mal) {
                if (rng_.pct(50)) {
                    sob = 32 + static_cast<std::uint32_t>(rng_.below(3000));
                } else {
                    cond = 2 + static_cast<std::uint32_t>(rng_.below(1000));
                }
            }
            if (op == PKT_WAIT)
                has_wait_ = true;
            w(hdr, sob);
            w(value, cond);
            break;
        }
        case PKT_WREG: // privileged: PRIV from a user context
            w(hdr, static_cast<std::uint32_t>(rng_.below(0x200000)) & ~3U);
            w(rng_.u32(), rng_.pct(80) ? 0 : rng_.u32());
            break;
        default: // unknown opcode, random payload
            w(rng_.pct(50) ? op : static_cast<std::uint32_t>(rng_.range(6, 255)) | (hdr & ~0xffU), rng_.u32());
            for (std::uint64_t i = rng_.below(4); i > 0; --i)
                q(rng_.u64());
            break;
        }
    }
    [[nodiscard]] const std::vector<std::uint64_t> &words() const { return words_; }
    [[nodiscard]] bool has_wait() const { return has_wait_; }

private:
    Target tgt() { return t_.at(rng_.below(t_.size())); }
    void w(std::uint32_t lo, std::uint32_t hi) { words_.push_back(lo | (static_cast<std::uint64_t>(hi) << 32U)); }
    void q(std::uint64_t v) { words_.push_back(v); }

    Rng &rng_;
    std::vector<Target> t_;
    std::vector<std::uint64_t> words_;
    bool has_wait_ = false;
};

// ---------------------------------------------------------------------------
// A worker thread.

class Worker {
public:
    Worker(std::uint64_t seed, std::uint64_t budget, std::vector<std::shared_ptr<Ctx>> shared, Pool &pool)
        : rng_(seed), budget_(budget), shared_(std::move(shared)), pool_(pool)
    {
        if (::pipe2(pipe_.data(), O_CLOEXEC) < 0)
            pipe_ = {-1, -1};
        for (std::size_t d = 0; d < g_nodes.size(); ++d)
            own_.push_back(open_ctx(static_cast<int>(d), false));
    }
    Worker(const Worker &) = delete;
    Worker &operator=(const Worker &) = delete;
    Worker(Worker &&) = delete;
    Worker &operator=(Worker &&) = delete;
    ~Worker()
    {
        for (auto &c : own_)
            close_ctx(*c, rng_.pct(50));
        for (const auto &r : regions_)
            do_munmap(r);
        for (const int fd : pipe_) {
            if (fd >= 0)
                ::close(fd);
        }
    }

    void run()
    {
        std::uint64_t mine = 0;
        while (mine < budget_ && now_ns() < g_soft_deadline) {
            const std::uint64_t before = calls_now();
            step();
            mine += calls_now() - before;
        }
    }

    // Opens a context: INFO DEVICE and MEMORY, a 64 KiB host command buffer
    // mapped by the CPU and in the device's address space.
    static std::shared_ptr<Ctx> open_ctx(int dev, bool shared)
    {
        auto c = std::make_shared<Ctx>();
        c->dev = dev;
        c->shared = shared;
        reopen(*c);
        return c;
    }

private:
    static std::uint64_t calls_now() { return t_calls; }

    static void reopen(Ctx &c)
    {
        c.fd = ::open(g_nodes.at(static_cast<std::size_t>(c.dev)).c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
        record(OP_OPEN, c.fd < 0 ? errno : 0);
        c.cb_va = 0;
        c.cb_mem = nullptr;
        if (c.fd < 0)
            return;
        drm_hpu_info_device dev{};
        drm_hpu_info info{};
        info.op = DRM_HPU_INFO_DEVICE;
        info.ptr = reinterpret_cast<std::uintptr_t>(&dev);
        info.size = sizeof(dev);
        if (xioctl(OP_INFO, c.fd, DRM_IOCTL_HPU_INFO, &info) == 0 && dev.num_dma > 0)
            c.num_dma = dev.num_dma;
        drm_hpu_info_memory mem{};
        info = {};
        info.op = DRM_HPU_INFO_MEMORY;
        info.ptr = reinterpret_cast<std::uintptr_t>(&mem);
        info.size = sizeof(mem);
        if (xioctl(OP_INFO, c.fd, DRM_IOCTL_HPU_INFO, &info) == 0 && mem.va_end > mem.va_start) {
            c.va_start = mem.va_start;
            c.va_end = mem.va_end;
        }
        drm_hpu_bo_create bc{};
        bc.size = kCbSize;
        bc.flags = DRM_HPU_BO_HOST;
        if (xioctl(OP_BO_CREATE, c.fd, DRM_IOCTL_HPU_BO_CREATE, &bc) != 0)
            return;
        drm_hpu_bo_mmap_offset mo{};
        mo.handle = bc.handle;
        if (xioctl(OP_BO_MMAP_OFFSET, c.fd, DRM_IOCTL_HPU_BO_MMAP_OFFSET, &mo) != 0)
            return;
        void *p = do_mmap(OP_MMAP_DEV, c.fd, kCbSize, PROT_READ | PROT_WRITE, mo.offset);
        if (p == nullptr)
            return;
        drm_hpu_vm_bind vb{};
        vb.op = DRM_HPU_VM_MAP;
        vb.handle = bc.handle;
        vb.size = kCbSize;
        if (xioctl(OP_VM_MAP, c.fd, DRM_IOCTL_HPU_VM_BIND, &vb) != 0) {
            ::munmap(p, kCbSize);
            return;
        }
        c.cb_mem = p;
        c.cb_va = vb.va;
    }

    // Closes a context: with tidy, destroys what it has first (explicit
    // paths); otherwise close(2) alone has to clean up everything.
    void close_ctx(Ctx &c, bool tidy)
    {
        std::lock_guard<std::mutex> lk(c.mu);
        if (c.fd >= 0 && tidy) {
            for (const auto q : c.queues) {
                drm_hpu_queue_destroy d{};
                d.queue_id = q;
                (void)xioctl(OP_QUEUE_DESTROY, c.fd, DRM_IOCTL_HPU_QUEUE_DESTROY, &d);
            }
            for (const auto &m : c.maps) {
                drm_hpu_vm_bind vb{};
                vb.op = DRM_HPU_VM_UNMAP;
                vb.va = m.va;
                (void)xioctl(OP_VM_UNMAP, c.fd, DRM_IOCTL_HPU_VM_BIND, &vb);
            }
            for (const auto &b : c.bos) {
                drm_gem_close gc{};
                gc.handle = b.handle;
                (void)xioctl(OP_GEM_CLOSE, c.fd, DRM_IOCTL_GEM_CLOSE, &gc);
            }
            for (const auto &s : c.syncobjs) {
                drm_syncobj_destroy d{};
                d.handle = s.handle;
                (void)xioctl(OP_SYNCOBJ_DESTROY, c.fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
            }
        }
        if (c.fd >= 0)
            (void)do_close(OP_CLOSE, c.fd);
        c.fd = -1;
        if (c.cb_mem != nullptr) {
            // Sometimes the command buffer's mapping outlives its file.
            if (rng_.pct(30) && regions_.size() < kMaxRegions) {
                regions_.push_back({c.cb_mem, kCbSize, true});
            } else {
                do_munmap({c.cb_mem, kCbSize, true});
            }
        }
        c.cb_mem = nullptr;
        c.cb_va = 0;
        c.bos.clear();
        c.maps.clear();
        c.queues.clear();
        c.syncobjs.clear();
    }

    Ctx &pick_ctx()
    {
        if (!shared_.empty() && rng_.pct(30))
            return *rng_.pick(shared_);
        return *rng_.pick(own_);
    }

    Ctx &other_ctx(const Ctx &c)
    {
        // Another device when there is one, mostly; else any context.
        for (int i = 0; i < 4; ++i) {
            Ctx &o = pick_ctx();
            if (o.dev != c.dev || g_nodes.size() == 1 || rng_.pct(30))
                return o;
        }
        return pick_ctx();
    }

    std::uint32_t bad_handle() { return rng_.pct(50) ? static_cast<std::uint32_t>(rng_.below(64)) : rng_.u32(); }

    // --- the actions ------------------------------------------------------

public:
    using Fn = void (Worker::*)();
    struct Action {
        unsigned weight;
        Fn fn;
        const char *name;
    };

    // The actions step() picks from, with their weights.
    static const std::array<Action, kActionCount> &actions()
    {
        static constexpr std::array<Action, kActionCount> kActions = {{
            {3, &Worker::a_info, "info"},
            {8, &Worker::a_bo_create, "bo_create"},
            {4, &Worker::a_bo_userptr, "bo_userptr"},
            {6, &Worker::a_gem_close, "gem_close"},
            {4, &Worker::a_mmap_bo, "mmap_bo"},
            {4, &Worker::a_mem_access, "mem_access"},
            {10, &Worker::a_vm_map, "vm_map"},
            {6, &Worker::a_vm_unmap, "vm_unmap"},
            {3, &Worker::a_queue_create, "queue_create"},
            {2, &Worker::a_queue_destroy, "queue_destroy"},
            {16, &Worker::a_submit, "submit"},
            {4, &Worker::a_syncobj_create, "syncobj_create"},
            {2, &Worker::a_syncobj_destroy, "syncobj_destroy"},
            {4, &Worker::a_syncobj_wait, "syncobj_wait"},
            {4, &Worker::a_syncobj_misc, "syncobj_misc"},
            {4, &Worker::a_syncobj_export, "syncobj_export"},
            {3, &Worker::a_sync_file, "sync_file"},
            {4, &Worker::a_prime_export, "prime_export"},
            {4, &Worker::a_prime_import, "prime_import"},
            {3, &Worker::a_dmabuf, "dmabuf"},
            {2, &Worker::a_events, "events"},
            {1, &Worker::a_reopen, "reopen"},
            {1, &Worker::a_unknown_ioctl, "unknown_ioctl"},
            {1, &Worker::a_fork, "fork"},
        }};
        return kActions;
    }

private:
    void step()
    {
        const auto &kActions = actions();
        static const unsigned total = [] {
            unsigned t = 0;
            for (const auto &a : actions())
                t += a.weight;
            return t;
        }();
        auto r = static_cast<unsigned>(rng_.below(total));
        for (std::size_t i = 0; i < kActions.size(); ++i) {
            const Action &a = kActions.at(i);
            if (r < a.weight) {
                const std::uint64_t t0 = now_ns();
                const std::uint64_t c0 = t_calls;
                (this->*a.fn)();
                g_sh->act_runs.at(i).fetch_add(1, std::memory_order_relaxed);
                g_sh->act_ns.at(i).fetch_add(now_ns() - t0, std::memory_order_relaxed);
                g_sh->act_calls.at(i).fetch_add(t_calls - c0, std::memory_order_relaxed);
                return;
            }
            r -= a.weight;
        }
    }

    void a_info()
    {
        Ctx &c = pick_ctx();
        std::array<std::uint64_t, 128> buf{};
        drm_hpu_info info{};
        info.op = static_cast<std::uint32_t>(rng_.pct(90) ? rng_.below(5) : rng_.range(5, 0xffffffffULL));
        info.ptr = reinterpret_cast<std::uintptr_t>(buf.data());
        switch (rng_.below(6)) {
        case 0: info.size = 0; break;
        case 1: info.size = static_cast<std::uint32_t>(rng_.below(sizeof(buf))); break;
        case 2: info.size = sizeof(buf); info.ptr = rng_.pct(50) ? 1 : ~0ULL - 64; break; // bad pointer
        case 3: info.size = ~0U; break; // larger than any answer
        default: info.size = 512; break;
        }
        if (rng_.pct(5))
            info.flags = 1U << rng_.below(32);
        if (rng_.pct(5))
            info.pad = 1U + rng_.u32() % 7;
        (void)xioctl(OP_INFO, c.fd, DRM_IOCTL_HPU_INFO, &info);
    }

    void a_bo_create()
    {
        Ctx &c = pick_ctx();
        drm_hpu_bo_create bc{};
        Bo b;
        const bool hbm = rng_.pct(45);
        if (hbm) {
            b.kind = b.origin = Kind::Hbm;
            b.page = rng_.pct(85) ? 2 * MiB : (2 * MiB) << rng_.below(10); // up to 1 GiB
            bc.page_size = b.page == 2 * MiB && rng_.pct(50) ? 0 : b.page;
            bc.size = rng_.pct(90) ? b.page * rng_.range(1, 8) - rng_.below(b.page) : b.page * rng_.range(1, 1024);
            bc.flags = DRM_HPU_BO_HBM | (rng_.pct(30) ? DRM_HPU_BO_CONTIGUOUS : 0U);
        } else {
            bc.size = rng_.pct(90) ? rng_.range(1, 64 * KiB) : rng_.range(1, 4 * MiB);
            bc.flags = DRM_HPU_BO_HOST;
        }
        if (rng_.pct(8)) { // malformed
            switch (rng_.below(7)) {
            case 0: bc.size = 0; break;
            case 1: bc.flags = DRM_HPU_BO_HBM | DRM_HPU_BO_HOST; break;
            case 2: bc.flags |= 1U << rng_.range(3, 31); break;
            case 3: bc.page_size = hbm ? (2 * MiB) + kPage : kPage; break;
            case 4: bc.size = ~0ULL - rng_.below(2 * MiB); break;
            case 5: bc.flags = rng_.pct(50) ? 0 : DRM_HPU_BO_HOST | DRM_HPU_BO_CONTIGUOUS; break;
            default: bc.page_size = 2 * GiB; break;
            }
        }
        if (xioctl(OP_BO_CREATE, c.fd, DRM_IOCTL_HPU_BO_CREATE, &bc) != 0)
            return;
        b.handle = bc.handle;
        b.size = bc.size;
        if (b.kind == Kind::Host)
            b.page = kPage;
        add_bo(c, b);
    }

    void add_bo(Ctx &c, const Bo &b)
    {
        std::lock_guard<std::mutex> lk(c.mu);
        c.bos.push_back(b);
        if (c.bos.size() > kMaxBos) { // forget the oldest (still open: the file's close frees it)
            c.bos.erase(c.bos.begin());
        }
    }

    void a_bo_userptr()
    {
        Ctx &c = pick_ctx();
        const std::size_t pages = rng_.pct(90) ? rng_.range(1, 16) : rng_.range(17, 256);
        const bool ro = rng_.pct(35);
        // kUserptrGuard inaccessible pages follow the memory, so that a
        // size past the mapping (below) runs into them and fails with
        // EFAULT: were the next pages another mapping of this process
        // (its shared statistics, a heap), the driver would rightly pin
        // them and jobs would write there.
        const std::size_t len = (pages + kUserptrGuard) * kPage;
        void *p = ::mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return;
        auto um = std::make_shared<UserMem>(p, len);
        if (::mprotect(p, pages * kPage, ro ? PROT_READ : PROT_READ | PROT_WRITE) != 0 ||
            ::madvise(p, pages * kPage, ro ? MADV_POPULATE_READ : MADV_POPULATE_WRITE) != 0)
            return;
        drm_hpu_bo_userptr up{};
        up.addr = reinterpret_cast<std::uintptr_t>(p);
        up.size = pages * kPage;
        up.flags = ro || rng_.pct(20) ? DRM_HPU_USERPTR_READONLY : 0;
        if (rng_.pct(10)) {
            switch (rng_.below(6)) {
            case 0: up.addr += 1 + rng_.below(kPage - 1); break;
            case 1: up.size -= 1 + rng_.below(kPage - 1); break;
            case 2: up.size += kPage * rng_.range(1, kUserptrGuard); break; // past the mapping: EFAULT
            case 3: up.size = 0; break;
            case 4: up.flags |= 1U << rng_.range(1, 31); break;
            default: up.addr = 0; break;
            }
        }
        if (xioctl(OP_BO_USERPTR, c.fd, DRM_IOCTL_HPU_BO_USERPTR, &up) != 0)
            return;
        Bo b;
        b.handle = up.handle;
        b.kind = b.origin = (up.flags & DRM_HPU_USERPTR_READONLY) != 0U ? Kind::UserptrRo : Kind::Userptr;
        b.size = up.size;
        b.umem = std::move(um);
        add_bo(c, b);
    }

    void a_gem_close()
    {
        Ctx &c = pick_ctx();
        drm_gem_close gc{};
        {
            std::lock_guard<std::mutex> lk(c.mu);
            if (!c.bos.empty() && rng_.pct(90)) {
                const std::size_t i = rng_.below(c.bos.size());
                gc.handle = c.bos.at(i).handle;
                if (rng_.pct(85))
                    c.bos.erase(c.bos.begin() + static_cast<std::ptrdiff_t>(i)); // else: closed twice later
            } else {
                gc.handle = bad_handle();
            }
        }
        if (rng_.pct(3))
            gc.pad = 1;
        (void)xioctl(OP_GEM_CLOSE, c.fd, DRM_IOCTL_GEM_CLOSE, &gc);
    }

    std::optional<Bo> peek_bo(Ctx &c)
    {
        std::lock_guard<std::mutex> lk(c.mu);
        if (c.bos.empty())
            return std::nullopt;
        return rng_.pick(c.bos);
    }

    // With --no-dmabuf-mmap (defect 1 of issue 9: mmap of an HBM or
    // user-pointer dma-buf, also through BO_MMAP_OFFSET of its import, oopses),
    // device-file mmaps go only to this thread's own contexts and imports
    // only to the shared ones, so no handle that is mapped (however stale)
    // can be an import; and no dma-buf fd is mapped at all.
    Ctx &mmap_ctx() { return g_opt.dmabuf_mmap ? pick_ctx() : *rng_.pick(own_); }
    Ctx &import_ctx() { return g_opt.dmabuf_mmap ? pick_ctx() : *rng_.pick(shared_); }

    void a_mmap_bo()
    {
        Ctx &c = mmap_ctx();
        drm_hpu_bo_mmap_offset mo{};
        const auto b = peek_bo(c);
        mo.handle = b ? b->handle : bad_handle();
        if (rng_.pct(3))
            mo.pad = 1;
        if (rng_.pct(5)) { // an offset nobody handed out
            const std::size_t len = kPage * rng_.range(1, 4);
            void *p = do_mmap(OP_MMAP_DEV, c.fd, len, PROT_READ, rng_.u64() & ~(kPage - 1));
            if (p != nullptr)
                ::munmap(p, len);
            return;
        }
        if (xioctl(OP_BO_MMAP_OFFSET, c.fd, DRM_IOCTL_HPU_BO_MMAP_OFFSET, &mo) != 0 || !b)
            return;
        const std::uint64_t size = (b->size + kPage - 1) & ~(kPage - 1);
        std::uint64_t len = size;
        std::uint64_t off = mo.offset;
        if (rng_.pct(10)) {
            len += kPage; // past the end
        } else if (rng_.pct(20) && size > kPage) {
            off += kPage * rng_.below(size / kPage);
            len = size - (off - mo.offset);
        }
        const bool rw = rng_.pct(80);
        void *p = do_mmap(OP_MMAP_DEV, c.fd, len, rw ? PROT_READ | PROT_WRITE : PROT_READ, off);
        if (p == nullptr)
            return;
        add_region({p, len, rw && b->kind == Kind::Host && len <= size && off == mo.offset});
    }

    void add_region(const Region &r)
    {
        Region nr = r;
        // A read-only mapping is never written by the CPU.
        if (rng_.pct(60))
            access_region(rng_, nr, pipe_.data());
        regions_.push_back(nr);
        if (regions_.size() > kMaxRegions) {
            do_munmap(regions_.front());
            regions_.erase(regions_.begin());
        }
    }

    void a_mem_access()
    {
        if (regions_.empty())
            return;
        const std::size_t i = rng_.below(regions_.size());
        if (rng_.pct(30)) {
            do_munmap(regions_.at(i));
            regions_.erase(regions_.begin() + static_cast<std::ptrdiff_t>(i));
            return;
        }
        access_region(rng_, regions_.at(i), pipe_.data());
    }

    // Page-aligned address in a window near va_start (so maps collide).
    std::uint64_t fixed_va(const Ctx &c, std::uint64_t align)
    {
        const std::uint64_t window = 64 * GiB;
        return ((c.va_start + rng_.below(window)) & ~(align - 1)) + (c.va_start % align);
    }

    void a_vm_map()
    {
        Ctx &c = pick_ctx();
        const auto ob = peek_bo(c);
        drm_hpu_vm_bind vb{};
        vb.op = DRM_HPU_VM_MAP;
        Bo b = ob.value_or(Bo{bad_handle(), Kind::Host, Kind::Host, 64 * KiB, kPage, nullptr});
        vb.handle = b.handle;
        const std::uint64_t pages = std::max<std::uint64_t>(1, (b.size + b.page - 1) / b.page);
        const std::uint64_t first = rng_.below(pages);
        vb.bo_offset = rng_.pct(60) ? 0 : first * b.page;
        vb.size = (rng_.pct(60) ? pages - vb.bo_offset / b.page : rng_.range(1, pages - vb.bo_offset / b.page)) * b.page;
        if (b.kind == Kind::UserptrRo || rng_.pct(15))
            vb.flags |= DRM_HPU_VM_READONLY;
        if (rng_.pct(40)) {
            vb.flags |= DRM_HPU_VM_FIXED;
            std::lock_guard<std::mutex> lk(c.mu);
            if (!c.maps.empty() && rng_.pct(30)) { // next to or on top of a mapping
                const Map &m = rng_.pick(c.maps);
                const std::uint64_t cand[] = {m.va + m.size, m.va - vb.size, m.va, m.va + b.page, m.va + m.size - b.page};
                vb.va = cand[rng_.below(5)];
            } else {
                vb.va = fixed_va(c, b.page);
            }
        }
        if (rng_.pct(12)) { // off by one / out of range
            switch (rng_.below(11)) {
            case 0: vb.size += b.page; break;
            case 1: vb.bo_offset += vb.size; break;
            case 2: vb.bo_offset += 1 + rng_.below(b.page - 1); break;
            case 3: vb.size = rng_.pct(50) ? 0 : vb.size - 1; break;
            case 4: vb.flags |= DRM_HPU_VM_FIXED; vb.va = c.va_end - vb.size + b.page; break;
            case 5: vb.flags |= DRM_HPU_VM_FIXED; vb.va = c.va_start - b.page; break;
            case 6: vb.flags |= DRM_HPU_VM_FIXED; vb.va = rng_.u64() & ~(kPage - 1); break;
            case 7: vb.flags &= ~DRM_HPU_VM_READONLY; break; // a read-only userptr written
            case 8: vb.flags |= 1U << rng_.range(2, 31); break;
            case 9: vb.size = ~0ULL - vb.bo_offset + 1 - b.page; break; // wraps
            default: vb.pad = 1; vb.va = rng_.pct(50) ? 0 : 1; break;
            }
        }
        if ((vb.flags & DRM_HPU_VM_FIXED) != 0U && rng_.pct(5))
            vb.va += kPage / 2;
        if (xioctl(OP_VM_MAP, c.fd, DRM_IOCTL_HPU_VM_BIND, &vb) != 0)
            return;
        std::lock_guard<std::mutex> lk(c.mu);
        c.maps.push_back({vb.va, vb.size, (vb.flags & DRM_HPU_VM_READONLY) != 0U});
        if (c.maps.size() > kMaxMaps)
            c.maps.erase(c.maps.begin());
    }

    void a_vm_unmap()
    {
        Ctx &c = pick_ctx();
        drm_hpu_vm_bind vb{};
        vb.op = rng_.pct(97) ? DRM_HPU_VM_UNMAP : static_cast<std::uint32_t>(rng_.range(2, 100));
        bool known = false;
        {
            std::lock_guard<std::mutex> lk(c.mu);
            if (!c.maps.empty() && rng_.pct(85)) {
                const std::size_t i = rng_.below(c.maps.size());
                vb.va = c.maps.at(i).va;
                if (rng_.pct(10)) {
                    vb.va += kPage * rng_.range(1, 16); // the middle of a mapping
                } else {
                    c.maps.erase(c.maps.begin() + static_cast<std::ptrdiff_t>(i));
                    known = true;
                }
            } else {
                vb.va = rng_.pct(50) ? fixed_va(c, kPage) : rng_.u64();
            }
        }
        if (rng_.pct(5)) {
            switch (rng_.below(4)) {
            case 0: vb.flags = DRM_HPU_VM_READONLY; break;
            case 1: vb.handle = 1; break;
            case 2: vb.size = kPage; break;
            default: vb.bo_offset = kPage; break;
            }
        }
        (void)known;
        (void)xioctl(OP_VM_UNMAP, c.fd, DRM_IOCTL_HPU_VM_BIND, &vb);
    }

    void a_queue_create()
    {
        Ctx &c = pick_ctx();
        {
            std::lock_guard<std::mutex> lk(c.mu);
            if (c.queues.size() >= kMaxQueues && rng_.pct(80)) {
                // full: destroy one instead
                drm_hpu_queue_destroy d{};
                d.queue_id = c.queues.front();
                c.queues.erase(c.queues.begin());
                (void)xioctl(OP_QUEUE_DESTROY, c.fd, DRM_IOCTL_HPU_QUEUE_DESTROY, &d);
                return;
            }
        }
        drm_hpu_queue_create qc{};
        qc.engine = static_cast<std::uint32_t>(rng_.below(c.num_dma));
        if (rng_.pct(8)) {
            switch (rng_.below(4)) {
            case 0: qc.engine_class = 1 + rng_.u32() % 8; break;
            case 1: qc.engine = c.num_dma + static_cast<std::uint32_t>(rng_.below(3)); break;
            case 2: qc.flags = 1U << rng_.below(32); break;
            default: qc.engine = ~0U; break;
            }
        }
        if (xioctl(OP_QUEUE_CREATE, c.fd, DRM_IOCTL_HPU_QUEUE_CREATE, &qc) != 0)
            return;
        std::lock_guard<std::mutex> lk(c.mu);
        c.queues.push_back(qc.queue_id);
    }

    void a_queue_destroy()
    {
        Ctx &c = pick_ctx();
        drm_hpu_queue_destroy d{};
        {
            std::lock_guard<std::mutex> lk(c.mu);
            if (!c.queues.empty() && rng_.pct(85)) {
                const std::size_t i = rng_.below(c.queues.size());
                d.queue_id = c.queues.at(i);
                c.queues.erase(c.queues.begin() + static_cast<std::ptrdiff_t>(i));
            } else {
                d.queue_id = bad_handle();
            }
        }
        if (rng_.pct(3))
            d.pad = 1;
        (void)xioctl(OP_QUEUE_DESTROY, c.fd, DRM_IOCTL_HPU_QUEUE_DESTROY, &d);
    }

    std::uint32_t ensure_syncobj(Ctx &c)
    {
        drm_syncobj_create sc{};
        if (xioctl(OP_SYNCOBJ_CREATE, c.fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc) != 0)
            return 0;
        std::lock_guard<std::mutex> lk(c.mu);
        c.syncobjs.push_back({sc.handle, 0, false});
        return sc.handle;
    }

    void a_submit()
    {
        Ctx &c = pick_ctx();
        std::uint32_t queue = 0;
        std::vector<Target> targets;
        bool have_queue = false;
        {
            std::lock_guard<std::mutex> lk(c.mu);
            if (!c.queues.empty()) {
                queue = rng_.pick(c.queues);
                have_queue = true;
            }
            for (const auto &m : c.maps) {
                if (!m.readonly || rng_.pct(5))
                    targets.push_back({m.va, std::min<std::uint64_t>(m.size, 4 * MiB)});
            }
        }
        if (!have_queue) {
            drm_hpu_queue_create qc{};
            qc.engine = static_cast<std::uint32_t>(rng_.below(c.num_dma));
            if (xioctl(OP_QUEUE_CREATE, c.fd, DRM_IOCTL_HPU_QUEUE_CREATE, &qc) != 0)
                return;
            std::lock_guard<std::mutex> lk(c.mu);
            c.queues.push_back(qc.queue_id);
            queue = qc.queue_id;
        }
        // Packets go into the first half of the command buffer at a random
        // 8-byte offset; its second half is always a valid DMA target.
        if (c.cb_va != 0)
            targets.push_back({c.cb_va + kCbSize / 2, kCbSize / 2});
        if (targets.empty())
            targets.push_back({c.va_start, 64 * KiB}); // unmapped: MMU faults
        const unsigned bad = rng_.pct(70) ? 0 : static_cast<unsigned>(rng_.range(5, 60));
        CbGen gen(rng_, std::move(targets));
        const std::uint64_t npk = rng_.range(1, rng_.pct(90) ? 8 : 64);
        for (std::uint64_t i = 0; i < npk; ++i)
            gen.packet(bad);
        const auto &words = gen.words();
        const std::size_t bytes = std::min<std::size_t>(words.size() * 8, kCbSize / 2);
        const std::uint64_t off = rng_.below((kCbSize / 2 - bytes) / 8 + 1) * 8;
        if (c.cb_mem != nullptr)
            std::memcpy(static_cast<unsigned char *>(c.cb_mem) + off, words.data(), bytes);

        drm_hpu_submit s{};
        s.queue_id = rng_.pct(97) ? queue : bad_handle();
        s.cb_va = c.cb_va != 0 ? c.cb_va + off : c.va_start;
        s.cb_size = static_cast<std::uint32_t>(bytes);
        if (rng_.pct(8)) { // malformed call
            switch (rng_.below(9)) {
            case 0: s.cb_size = 0; break;
            case 1: s.cb_size -= 8 * static_cast<std::uint32_t>(rng_.range(1, std::max<std::uint64_t>(1, bytes / 8 - 1))); break; // a packet past the end
            case 2: s.cb_size += 1 + static_cast<std::uint32_t>(rng_.below(7)); break;
            case 3: s.cb_va += 1 + rng_.below(7); break;
            case 4: s.cb_size = static_cast<std::uint32_t>(kCbMax + 8 * rng_.range(1, 1000)); break;
            case 5: s.cb_va = c.va_end - 8 * rng_.range(0, 3); s.cb_size = 64; break;
            case 6: s.cb_va = rng_.pct(50) ? 0 : c.va_start - 8; break;
            case 7: s.flags = 1U << rng_.below(32); break;
            default: s.cb_size += static_cast<std::uint32_t>(kCbSize); break; // runs past the mapping
            }
        }
        // Timeouts: short, so that jobs blocked in WAIT end soon; the
        // driver default (0) only for buffers without WAIT.
        s.timeout_ms = static_cast<std::uint32_t>(rng_.pct(80) ? rng_.range(1, 50) : rng_.range(51, 200));
        if (!gen.has_wait() && rng_.pct(10))
            s.timeout_ms = 0;
        if (rng_.pct(2))
            s.timeout_ms = 3600001 + static_cast<std::uint32_t>(rng_.below(1000000));

        std::vector<drm_hpu_sync> in;
        std::vector<drm_hpu_sync> out;
        std::vector<std::size_t> out_idx;
        {
            std::lock_guard<std::mutex> lk(c.mu);
            const std::uint64_t nin = c.syncobjs.empty() ? 0 : rng_.below(rng_.pct(95) ? 3 : 6);
            for (std::uint64_t i = 0; i < nin; ++i) {
                const Syncobj &so = rng_.pick(c.syncobjs);
                if (!so.fenced && rng_.pct(90))
                    continue;
                drm_hpu_sync y{};
                y.handle = so.handle;
                y.point = so.point != 0 && rng_.pct(80) ? rng_.range(1, so.point) : 0;
                in.push_back(y);
            }
            const std::uint64_t nout = c.syncobjs.empty() ? 0 : rng_.below(3);
            for (std::uint64_t i = 0; i < nout; ++i) {
                const std::size_t k = rng_.below(c.syncobjs.size());
                drm_hpu_sync y{};
                y.handle = c.syncobjs.at(k).handle;
                if (rng_.pct(30))
                    y.point = c.syncobjs.at(k).point + (rng_.pct(90) ? 1 : 0); // sometimes not above the last
                out.push_back(y);
                out_idx.push_back(k);
            }
        }
        if (rng_.pct(4)) { // unknown handles, flags
            drm_hpu_sync y{};
            y.handle = bad_handle();
            if (rng_.pct(40))
                y.flags = 1;
            (rng_.pct(50) ? in : out).push_back(y);
        }
        s.num_in_syncs = static_cast<std::uint32_t>(in.size());
        s.num_out_syncs = static_cast<std::uint32_t>(out.size());
        s.in_syncs = in.empty() ? 0 : reinterpret_cast<std::uintptr_t>(in.data());
        s.out_syncs = out.empty() ? 0 : reinterpret_cast<std::uintptr_t>(out.data());
        if (rng_.pct(2)) {
            switch (rng_.below(3)) {
            case 0: s.num_in_syncs = DRM_HPU_MAX_SYNCS + 1; break;
            case 1: s.in_syncs = 8; s.num_in_syncs = 1; break;
            default: s.out_syncs = ~0ULL - 16; s.num_out_syncs = 2; break;
            }
        }
        if (rng_.pct(20)) {
            if (submit_array(c, s) != 0)
                return;
        } else if (xioctl(OP_SUBMIT, c.fd, DRM_IOCTL_HPU_SUBMIT, &s) != 0) {
            return;
        }
        std::uint32_t wait_on = 0;
        {
            std::lock_guard<std::mutex> lk(c.mu);
            for (std::size_t i = 0; i < out_idx.size(); ++i) {
                if (out_idx[i] < c.syncobjs.size() && c.syncobjs[out_idx[i]].handle == out[i].handle) {
                    c.syncobjs[out_idx[i]].fenced = true;
                    c.syncobjs[out_idx[i]].point = std::max<std::uint64_t>(c.syncobjs[out_idx[i]].point, out[i].point);
                    if (out[i].point == 0)
                        wait_on = out[i].handle;
                }
            }
        }
        // Now and then, wait for the job and count its fence's status.
        if (wait_on != 0 && rng_.pct(25))
            job_status(c, wait_on);
    }

    // DRM_IOCTL_HPU_SUBMIT_ARRAY of s and up to 7 more entries (copies of
    // it on the file's queues, one of them now and then spoilt), or a
    // malformed call. Returns the errno; s gets the first entry's seq.
    int submit_array(Ctx &c, drm_hpu_submit &s)
    {
        std::vector<drm_hpu_submit> subs(1 + rng_.below(8), s);
        {
            std::lock_guard<std::mutex> lk(c.mu);
            for (std::size_t i = 1; i < subs.size(); ++i) {
                if (!c.queues.empty() && rng_.pct(70))
                    subs[i].queue_id = rng_.pick(c.queues);
                // Only the first entry signals (an entry waiting for what
                // an earlier one signals is refused); half wait for nothing
                // and may go to their streams directly.
                subs[i].num_out_syncs = 0;
                if (rng_.pct(50))
                    subs[i].num_in_syncs = 0;
            }
        }
        if (rng_.pct(5)) { // a bad entry anywhere: nothing of the call runs
            drm_hpu_submit &b = subs.at(rng_.below(subs.size()));
            switch (rng_.below(4)) {
            case 0: b.cb_size = 7; break;
            case 1: b.flags = 1U << rng_.below(32); break;
            case 2: b.queue_id = bad_handle(); break;
            default: b.in_syncs = 8; b.num_in_syncs = 1; break;
            }
        }
        drm_hpu_submit_array a{};
        a.count = static_cast<std::uint32_t>(subs.size());
        a.submits = reinterpret_cast<std::uintptr_t>(subs.data());
        a.entry_size = sizeof(drm_hpu_submit);
        if (rng_.pct(4)) { // malformed call
            switch (rng_.below(7)) {
            case 4: a.entry_size = static_cast<std::uint32_t>(rng_.below(DRM_HPU_SUBMIT_SIZE_V1)); break;
            case 5: a.pad = 1U << rng_.below(32); break;
            case 0: a.count = 0; break;
            case 1: a.count = DRM_HPU_MAX_SUBMITS + 1 + static_cast<std::uint32_t>(rng_.below(1000)); break;
            case 2: a.flags = 1U << rng_.below(32); break;
            case 3: a.submits = rng_.pct(50) ? 8 : ~0ULL - 64; break;
            default: a.submits = 0; break;
            }
        }
        const int e = xioctl(OP_SUBMIT_ARRAY, c.fd, DRM_IOCTL_HPU_SUBMIT_ARRAY, &a);
        if (e == 0)
            s.seq = subs[0].seq;
        return e;
    }

    void job_status(Ctx &c, std::uint32_t so)
    {
        drm_syncobj_wait w{};
        w.handles = reinterpret_cast<std::uintptr_t>(&so);
        w.count_handles = 1;
        w.timeout_nsec = static_cast<std::int64_t>(now_ns() + 300 * 1000000ULL);
        if (xioctl(OP_SYNCOBJ_WAIT, c.fd, DRM_IOCTL_SYNCOBJ_WAIT, &w) != 0)
            return;
        drm_syncobj_handle h{};
        h.handle = so;
        h.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
        h.fd = -1;
        if (xioctl(OP_SYNCOBJ_EXPORT, c.fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h) != 0)
            return;
        sync_file_info fi{};
        if (xioctl(OP_SYNC_FILE_INFO, h.fd, SYNC_IOC_FILE_INFO, &fi) == 0)
            record(OP_JOB_FENCE, fi.status < 0 ? -fi.status : 0);
        (void)do_close(OP_FD_CLOSE, h.fd);
    }

    void a_syncobj_create()
    {
        Ctx &c = pick_ctx();
        {
            std::lock_guard<std::mutex> lk(c.mu);
            if (c.syncobjs.size() >= kMaxSyncobjs) {
                drm_syncobj_destroy d{};
                d.handle = c.syncobjs.front().handle;
                c.syncobjs.erase(c.syncobjs.begin());
                (void)xioctl(OP_SYNCOBJ_DESTROY, c.fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
                return;
            }
        }
        drm_syncobj_create sc{};
        if (rng_.pct(30))
            sc.flags = DRM_SYNCOBJ_CREATE_SIGNALED;
        if (rng_.pct(3))
            sc.flags |= 1U << rng_.range(1, 31);
        if (xioctl(OP_SYNCOBJ_CREATE, c.fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc) != 0)
            return;
        std::lock_guard<std::mutex> lk(c.mu);
        c.syncobjs.push_back({sc.handle, 0, (sc.flags & DRM_SYNCOBJ_CREATE_SIGNALED) != 0U});
    }

    void a_syncobj_destroy()
    {
        Ctx &c = pick_ctx();
        drm_syncobj_destroy d{};
        {
            std::lock_guard<std::mutex> lk(c.mu);
            if (!c.syncobjs.empty() && rng_.pct(90)) {
                const std::size_t i = rng_.below(c.syncobjs.size());
                d.handle = c.syncobjs.at(i).handle;
                c.syncobjs.erase(c.syncobjs.begin() + static_cast<std::ptrdiff_t>(i));
            } else {
                d.handle = bad_handle();
            }
        }
        if (rng_.pct(3))
            d.pad = 1;
        (void)xioctl(OP_SYNCOBJ_DESTROY, c.fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
    }

    // Handles and points of some of the context's syncobjs (maybe a bad one).
    void some_syncobjs(Ctx &c, std::vector<std::uint32_t> &h, std::vector<std::uint64_t> &pts, std::uint64_t max)
    {
        std::lock_guard<std::mutex> lk(c.mu);
        const std::uint64_t n = rng_.range(1, max);
        for (std::uint64_t i = 0; i < n && !c.syncobjs.empty(); ++i) {
            const Syncobj &so = rng_.pick(c.syncobjs);
            h.push_back(so.handle);
            pts.push_back(so.point != 0 ? rng_.range(0, so.point + 1) : 0);
        }
        if (h.empty() || rng_.pct(5)) {
            h.push_back(bad_handle());
            pts.push_back(rng_.below(4));
        }
    }

    void a_syncobj_wait()
    {
        Ctx &c = pick_ctx();
        std::vector<std::uint32_t> h;
        std::vector<std::uint64_t> pts;
        some_syncobjs(c, h, pts, 4);
        // Absolute deadlines, at most 200 ms away (0: poll).
        const std::int64_t deadline = rng_.pct(20) ? 0 : static_cast<std::int64_t>(now_ns() + rng_.range(1, 200) * 1000000ULL);
        auto flags = static_cast<std::uint32_t>(rng_.below(4)); // WAIT_ALL, WAIT_FOR_SUBMIT
        if (rng_.pct(3))
            flags |= 1U << rng_.range(3, 31);
        if (rng_.pct(50)) {
            drm_syncobj_wait w{};
            w.handles = reinterpret_cast<std::uintptr_t>(h.data());
            w.count_handles = static_cast<std::uint32_t>(h.size());
            w.timeout_nsec = deadline;
            w.flags = flags;
            if (rng_.pct(2))
                w.count_handles = 0;
            (void)xioctl(OP_SYNCOBJ_WAIT, c.fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
        } else {
            drm_syncobj_timeline_wait w{};
            w.handles = reinterpret_cast<std::uintptr_t>(h.data());
            w.points = reinterpret_cast<std::uintptr_t>(pts.data());
            w.count_handles = static_cast<std::uint32_t>(h.size());
            w.timeout_nsec = deadline;
            w.flags = flags | (rng_.pct(20) ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE : 0U);
            (void)xioctl(OP_SYNCOBJ_TL_WAIT, c.fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
        }
    }

    void a_syncobj_misc()
    {
        Ctx &c = pick_ctx();
        std::vector<std::uint32_t> h;
        std::vector<std::uint64_t> pts;
        some_syncobjs(c, h, pts, 3);
        switch (rng_.below(5)) {
        case 0:
        case 1: {
            drm_syncobj_array a{};
            a.handles = reinterpret_cast<std::uintptr_t>(h.data());
            a.count_handles = static_cast<std::uint32_t>(h.size());
            if (rng_.pct(3))
                a.pad = 1;
            const bool sig = rng_.pct(60);
            if (xioctl(sig ? OP_SYNCOBJ_SIGNAL : OP_SYNCOBJ_RESET, c.fd,
                       sig ? DRM_IOCTL_SYNCOBJ_SIGNAL : DRM_IOCTL_SYNCOBJ_RESET, &a) == 0)
                mark(c, h, sig, pts, false);
            break;
        }
        case 2: { // timeline signal: points above the last one
            std::lock_guard<std::mutex> lk(c.mu);
            for (std::size_t i = 0; i < h.size(); ++i) {
                for (const auto &so : c.syncobjs) {
                    if (so.handle == h[i])
                        pts[i] = so.point + rng_.range(rng_.pct(90) ? 1 : 0, 3);
                }
            }
        }
            {
                drm_syncobj_timeline_array a{};
                a.handles = reinterpret_cast<std::uintptr_t>(h.data());
                a.points = reinterpret_cast<std::uintptr_t>(pts.data());
                a.count_handles = static_cast<std::uint32_t>(h.size());
                if (rng_.pct(3))
                    a.flags = 1;
                if (xioctl(OP_SYNCOBJ_TL_SIGNAL, c.fd, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a) == 0)
                    mark(c, h, true, pts, true);
            }
            break;
        case 3: {
            drm_syncobj_timeline_array a{};
            a.handles = reinterpret_cast<std::uintptr_t>(h.data());
            a.points = reinterpret_cast<std::uintptr_t>(pts.data());
            a.count_handles = static_cast<std::uint32_t>(h.size());
            a.flags = rng_.pct(50) ? DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED : 0;
            (void)xioctl(OP_SYNCOBJ_QUERY, c.fd, DRM_IOCTL_SYNCOBJ_QUERY, &a);
            break;
        }
        default: {
            drm_syncobj_transfer t{};
            t.src_handle = h.front();
            t.dst_handle = h.back();
            t.src_point = pts.front();
            std::uint64_t dst_last = 0;
            {
                std::lock_guard<std::mutex> lk(c.mu);
                for (const auto &so : c.syncobjs) {
                    if (so.handle == t.dst_handle)
                        dst_last = so.point;
                }
            }
            t.dst_point = rng_.pct(50) ? 0 : dst_last + 1;
            t.flags = rng_.pct(20) ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT : 0;
            if (xioctl(OP_SYNCOBJ_TRANSFER, c.fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &t) == 0) {
                const std::vector<std::uint32_t> d = {t.dst_handle};
                const std::vector<std::uint64_t> p = {t.dst_point};
                mark(c, d, true, p, t.dst_point != 0);
            }
            break;
        }
        }
    }

    // Bookkeeping after a signal or reset of syncobjs.
    static void mark(Ctx &c, const std::vector<std::uint32_t> &h, bool fenced, const std::vector<std::uint64_t> &pts, bool timeline)
    {
        std::lock_guard<std::mutex> lk(c.mu);
        for (std::size_t i = 0; i < h.size(); ++i) {
            for (auto &so : c.syncobjs) {
                if (so.handle != h[i])
                    continue;
                so.fenced = fenced;
                if (timeline) {
                    so.point = std::max(so.point, pts[i]);
                } else if (!fenced) {
                    so.point = 0;
                }
            }
        }
    }

    void a_syncobj_export()
    {
        Ctx &c = pick_ctx();
        std::vector<std::uint32_t> h;
        std::vector<std::uint64_t> pts;
        some_syncobjs(c, h, pts, 1);
        drm_syncobj_handle sh{};
        sh.handle = h.front();
        sh.fd = -1;
        const bool as_sync_file = rng_.pct(60);
        sh.flags = as_sync_file ? DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE : 0;
        if (rng_.pct(3))
            sh.flags |= 1U << rng_.range(1, 31);
        if (rng_.pct(3))
            sh.pad = 1;
        if (xioctl(OP_SYNCOBJ_EXPORT, c.fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh) != 0)
            return;
        if (as_sync_file) {
            put_syncfile(sh.fd);
            return;
        }
        // A syncobj fd: imported into another context (or the same), then closed.
        Ctx &o = rng_.pct(70) ? other_ctx(c) : c;
        drm_syncobj_handle ih{};
        ih.fd = sh.fd;
        if (xioctl(OP_SYNCOBJ_IMPORT, o.fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &ih) == 0) {
            std::lock_guard<std::mutex> lk(o.mu);
            if (o.syncobjs.size() < kMaxSyncobjs)
                o.syncobjs.push_back({ih.handle, 0, false});
        }
        (void)do_close(OP_FD_CLOSE, sh.fd);
    }

    void put_syncfile(int fd)
    {
        int drop = -1;
        {
            std::lock_guard<std::mutex> lk(pool_.mu);
            pool_.syncfiles.push_back(fd);
            if (pool_.syncfiles.size() > kMaxPool) {
                drop = pool_.syncfiles.front();
                pool_.syncfiles.erase(pool_.syncfiles.begin());
            }
        }
        if (drop >= 0)
            (void)do_close(OP_FD_CLOSE, drop);
    }

    int take_syncfile()
    {
        std::lock_guard<std::mutex> lk(pool_.mu);
        if (pool_.syncfiles.empty())
            return -1;
        const std::size_t i = rng_.below(pool_.syncfiles.size());
        const int fd = pool_.syncfiles.at(i);
        pool_.syncfiles.erase(pool_.syncfiles.begin() + static_cast<std::ptrdiff_t>(i));
        return fd;
    }

    void a_sync_file()
    {
        const int fd = take_syncfile();
        if (fd < 0)
            return;
        bool keep = true;
        switch (rng_.below(5)) {
        case 0: {
            std::array<sync_fence_info, 4> fences{};
            sync_file_info fi{};
            if (rng_.pct(50)) {
                fi.num_fences = static_cast<std::uint32_t>(rng_.below(5));
                fi.sync_fence_info = reinterpret_cast<std::uintptr_t>(fences.data());
            }
            if (rng_.pct(3))
                fi.flags = 1;
            (void)xioctl(OP_SYNC_FILE_INFO, fd, SYNC_IOC_FILE_INFO, &fi);
            break;
        }
        case 1: { // into a syncobj of some context
            Ctx &c = pick_ctx();
            const std::uint32_t so = ensure_syncobj(c);
            drm_syncobj_handle ih{};
            ih.fd = fd;
            ih.handle = so != 0 && rng_.pct(95) ? so : bad_handle();
            ih.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
            if (xioctl(OP_SYNCOBJ_IMPORT, c.fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &ih) == 0)
                mark(c, {ih.handle}, true, {0}, false);
            break;
        }
        case 2: { // merged with another one
            sync_merge_data m{};
            std::snprintf(m.name, sizeof(m.name), "fuzz");
            const int other = take_syncfile();
            m.fd2 = other >= 0 ? other : fd;
            if (xioctl(OP_SYNC_MERGE, fd, SYNC_IOC_MERGE, &m) == 0)
                put_syncfile(m.fence);
            if (other >= 0)
                put_syncfile(other);
            break;
        }
        case 3: {
            pollfd p{fd, POLLIN, 0};
            (void)::poll(&p, 1, 0);
            keep = rng_.pct(50);
            break;
        }
        default:
            keep = false;
            break;
        }
        if (keep) {
            put_syncfile(fd);
        } else {
            (void)do_close(OP_FD_CLOSE, fd);
        }
    }

    void a_prime_export()
    {
        Ctx &c = pick_ctx();
        const auto b = peek_bo(c);
        drm_prime_handle ph{};
        ph.handle = b ? b->handle : bad_handle();
        ph.flags = DRM_CLOEXEC | (rng_.pct(70) ? DRM_RDWR : 0U);
        ph.fd = -1;
        if (rng_.pct(3))
            ph.flags |= 1U << rng_.range(3, 18);
        if (xioctl(OP_PRIME_EXPORT, c.fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph) != 0)
            return;
        Dmabuf d{ph.fd, b ? b->origin : Kind::Host, b ? b->size : 0};
        const off_t end = ::lseek(ph.fd, 0, SEEK_END);
        if (end > 0)
            d.size = static_cast<std::uint64_t>(end);
        int drop = -1;
        {
            std::lock_guard<std::mutex> lk(pool_.mu);
            pool_.dmabufs.push_back(d);
            if (pool_.dmabufs.size() > kMaxPool) {
                drop = pool_.dmabufs.front().fd;
                pool_.dmabufs.erase(pool_.dmabufs.begin());
            }
        }
        if (drop >= 0)
            (void)do_close(OP_FD_CLOSE, drop);
    }

    std::optional<Dmabuf> take_dmabuf()
    {
        std::lock_guard<std::mutex> lk(pool_.mu);
        if (pool_.dmabufs.empty())
            return std::nullopt;
        const std::size_t i = rng_.below(pool_.dmabufs.size());
        const Dmabuf d = pool_.dmabufs.at(i);
        pool_.dmabufs.erase(pool_.dmabufs.begin() + static_cast<std::ptrdiff_t>(i));
        return d;
    }

    void put_dmabuf(const Dmabuf &d)
    {
        std::lock_guard<std::mutex> lk(pool_.mu);
        pool_.dmabufs.push_back(d);
    }

    void a_prime_import()
    {
        const auto d = take_dmabuf();
        Ctx &c = import_ctx();
        drm_prime_handle ph{};
        ph.fd = d ? d->fd : (rng_.pct(50) ? pipe_[0] : 1000 + static_cast<int>(rng_.below(100)));
        if (rng_.pct(3))
            ph.flags = 1U << rng_.below(32);
        if (xioctl(OP_PRIME_IMPORT, c.fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &ph) == 0 && d) {
            Bo b;
            b.handle = ph.handle;
            b.kind = Kind::Import;
            b.origin = d->origin;
            b.size = d->size;
            b.page = d->origin == Kind::Hbm ? 2 * MiB : kPage; // a guess: VM_BIND says
            add_bo(c, b);
        }
        if (d)
            put_dmabuf(*d);
    }

    void a_dmabuf()
    {
        auto d = take_dmabuf();
        if (!d)
            return;
        bool keep = true;
        switch (rng_.below(5)) {
        case 0:
        case 1: { // mmap (see --no-dmabuf-mmap), access, keep or unmap
            if (!g_opt.dmabuf_mmap)
                break;
            const std::uint64_t pages = std::max<std::uint64_t>(1, d->size / kPage);
            std::uint64_t len = std::min<std::uint64_t>(pages, 256) * kPage;
            std::uint64_t off = 0;
            if (rng_.pct(10)) {
                len = d->size + kPage; // past the end
            } else if (rng_.pct(20)) {
                off = rng_.below(pages) * kPage;
                len = std::min<std::uint64_t>(len, d->size - off);
            }
            if (len == 0)
                break;
            void *p = do_mmap(OP_MMAP_DMABUF, d->fd, len, rng_.pct(70) ? PROT_READ | PROT_WRITE : PROT_READ, off);
            if (p != nullptr)
                add_region({p, len, false});
            break;
        }
        case 2: {
            dma_buf_sync s{};
            s.flags = (rng_.pct(50) ? DMA_BUF_SYNC_START : DMA_BUF_SYNC_END) | (1U + rng_.below(3));
            if (rng_.pct(3))
                s.flags |= 1U << rng_.range(3, 63);
            (void)xioctl(OP_DMABUF_SYNC, d->fd, DMA_BUF_IOCTL_SYNC, &s);
            break;
        }
        case 3: {
            if (rng_.pct(50)) {
                dma_buf_export_sync_file e{};
                e.flags = 1U + static_cast<std::uint32_t>(rng_.below(3));
                e.fd = -1;
                if (xioctl(OP_DMABUF_EXPORT_SF, d->fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e) == 0)
                    put_syncfile(e.fd);
            } else {
                const int sf = take_syncfile();
                if (sf < 0)
                    break;
                dma_buf_import_sync_file i{};
                i.flags = 1U + static_cast<std::uint32_t>(rng_.below(3));
                i.fd = sf;
                (void)xioctl(OP_DMABUF_IMPORT_SF, d->fd, DMA_BUF_IOCTL_IMPORT_SYNC_FILE, &i);
                put_syncfile(sf);
            }
            break;
        }
        default:
            keep = false;
            break;
        }
        if (keep) {
            put_dmabuf(*d);
        } else {
            (void)do_close(OP_FD_CLOSE, d->fd);
        }
    }

    void a_events()
    {
        Ctx &c = pick_ctx();
        if (rng_.pct(50)) {
            drm_hpu_events ev{};
            ev.flags = rng_.pct(70) ? DRM_HPU_EVENTS_ENABLE : 0;
            if (rng_.pct(5))
                ev.flags |= 1U << rng_.range(1, 31);
            if (rng_.pct(3))
                ev.pad = 1;
            (void)xioctl(OP_EVENTS, c.fd, DRM_IOCTL_HPU_EVENTS, &ev);
            return;
        }
        // Read what is queued; files are opened O_NONBLOCK, so a read that
        // another thread beat to the event returns EAGAIN.
        std::array<unsigned char, 4096> buf{};
        const std::size_t len = rng_.pct(80) ? buf.size() : rng_.range(1, 64); // maybe too small for an event
        const ssize_t n = ::read(c.fd, buf.data(), len);
        record(OP_EVENT_READ, n < 0 ? errno : 0);
    }

    void a_reopen()
    {
        Ctx &c = *rng_.pick(own_);
        close_ctx(c, rng_.pct(40));
        std::lock_guard<std::mutex> lk(c.mu);
        reopen(c);
    }

    void a_unknown_ioctl()
    {
        Ctx &c = pick_ctx();
        std::array<std::uint64_t, 16> buf{};
        if (rng_.pct(50)) {
            // Driver ioctl numbers past the table, any direction and size.
            const auto nr = static_cast<unsigned>(DRM_COMMAND_BASE + rng_.range(DRM_HPU_SUBMIT_ARRAY + 1, 0x3f));
            const auto size = static_cast<unsigned>(rng_.below(sizeof(buf)));
            (void)xioctl(OP_UNKNOWN_IOCTL, c.fd, _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, nr, size), buf.data());
        } else {
            // A known one with a shorter structure than ours (zero-extended
            // by the DRM core): zero-filled, so no pointer is followed.
            static constexpr std::array<unsigned long, 9> kCmds = {
                DRM_IOCTL_HPU_INFO, DRM_IOCTL_HPU_BO_CREATE, DRM_IOCTL_HPU_BO_USERPTR,
                DRM_IOCTL_HPU_BO_MMAP_OFFSET, DRM_IOCTL_HPU_VM_BIND, DRM_IOCTL_HPU_QUEUE_CREATE,
                DRM_IOCTL_HPU_SUBMIT, DRM_IOCTL_HPU_EVENTS, DRM_IOCTL_HPU_SUBMIT_ARRAY};
            const unsigned long cmd = kCmds.at(rng_.below(kCmds.size()));
            const auto size = static_cast<unsigned>(rng_.below(_IOC_SIZE(cmd)));
            const unsigned long shortened = _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), size);
            (void)xioctl(OP_UNKNOWN_IOCTL, c.fd, shortened, buf.data());
        }
    }

    // A child inherits the open files: a few calls on one of them, then it
    // exits (its jobs are cancelled, its references dropped).
    void a_fork()
    {
        Ctx &c = pick_ctx();
        std::uint32_t queue = 0;
        std::uint64_t cb_va = 0;
        {
            std::lock_guard<std::mutex> lk(c.mu);
            if (!c.queues.empty())
                queue = c.queues.front();
            cb_va = c.cb_va;
        }
        const int fd = c.fd;
        const std::uint64_t r = rng_.u64();
        const pid_t pid = ::fork();
        if (pid == 0) {
            // Only system calls and lock-free atomics in the child.
            drm_hpu_bo_create bc{};
            bc.size = 64 * KiB;
            bc.flags = (r & 1U) != 0U ? DRM_HPU_BO_HBM : DRM_HPU_BO_HOST;
            (void)xioctl(OP_BO_CREATE, fd, DRM_IOCTL_HPU_BO_CREATE, &bc);
            drm_hpu_submit s{};
            s.queue_id = queue;
            s.cb_va = cb_va;
            s.cb_size = 8;
            s.timeout_ms = 50;
            (void)xioctl(OP_SUBMIT, fd, DRM_IOCTL_HPU_SUBMIT, &s);
            if ((r & 2U) != 0U) {
                drm_gem_close gc{};
                gc.handle = bc.handle;
                (void)xioctl(OP_GEM_CLOSE, fd, DRM_IOCTL_GEM_CLOSE, &gc);
            }
            ::_exit(0);
        }
        if (pid < 0) {
            record(OP_FORK, errno);
            return;
        }
        int st = 0;
        while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        record(OP_FORK, WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : ECHILD);
    }

    Rng rng_;
    std::uint64_t budget_;
    std::vector<std::shared_ptr<Ctx>> own_;
    std::vector<std::shared_ptr<Ctx>> shared_;
    Pool &pool_;
    std::vector<Region> regions_;
    std::array<int, 2> pipe_{};
};

// ---------------------------------------------------------------------------
// One worker process: T threads, each its own contexts on every selected
// device, plus one context per device that all its threads share.

int child_main(unsigned proc)
{
    const int fds0 = open_fds();
    Pool pool;
    std::vector<std::shared_ptr<Ctx>> shared;
    for (std::size_t d = 0; d < g_nodes.size(); ++d)
        shared.push_back(Worker::open_ctx(static_cast<int>(d), true));
    const std::uint64_t workers = static_cast<std::uint64_t>(g_opt.procs) * g_opt.threads;
    std::vector<std::thread> threads;
    threads.reserve(g_opt.threads);
    for (unsigned t = 0; t < g_opt.threads; ++t) {
        const std::uint64_t id = static_cast<std::uint64_t>(proc) * g_opt.threads + t;
        const std::uint64_t budget = g_opt.calls / workers + (id < g_opt.calls % workers ? 1 : 0);
        const std::uint64_t seed = splitmix(g_opt.seed ^ splitmix(id + 1));
        threads.emplace_back([seed, budget, &shared, &pool] {
            Worker w(seed, budget, shared, pool);
            w.run();
        });
    }
    for (auto &t : threads)
        t.join();
    // The shared contexts: closed alone (close(2) cleans up).
    for (auto &c : shared) {
        if (c->fd >= 0)
            (void)do_close(OP_CLOSE, c->fd);
        if (c->cb_mem != nullptr)
            do_munmap({c->cb_mem, kCbSize, true});
    }
    shared.clear();
    for (const auto &d : pool.dmabufs)
        (void)do_close(OP_FD_CLOSE, d.fd);
    for (const int fd : pool.syncfiles)
        (void)do_close(OP_FD_CLOSE, fd);
    pool.dmabufs.clear();
    pool.syncfiles.clear();
    const int fds1 = open_fds();
    if (fds1 != fds0) {
        std::fprintf(stderr, "hpu-fuzz: process %u: %d open fds at the start, %d at the end\n", proc, fds0, fds1);
        return 3;
    }
    return 0;
}

// ---------------------------------------------------------------------------
// The supervisor: baselines, worker processes, the reset, the checks.

const std::vector<std::string> kSlabs = {"hpu", "drm_sched_fence", "dma_fence", "sync_file"};
// Without the shrink, a merged cache's count moved with its per-CPU slabs,
// i.e. with the peak number of jobs in flight (measured: up to +357); a
// leak of one object per job would be thousands. Shrunk, the counts match
// exactly (measured: 3 before, 3 after); 64 leaves room for RCU stragglers.
constexpr long kSlabSlack = 64;

std::map<std::string, long> slab_objects()
{
    return slabutil::objects(kSlabs, true);
}

std::string slab_str(const std::map<std::string, long> &m)
{
    std::string s;
    for (const auto &[k, v] : m)
        s += k + "=" + std::to_string(v) + " ";
    return s;
}

void usage(FILE *f)
{
    std::fprintf(f,
                 "usage: hpu-fuzz [options]\n"
                 "  --seed S          PRNG seed (default: fresh from the clock, printed)\n"
                 "  --calls N         total calls over all workers (default 100000)\n"
                 "  --threads T       threads per process (default 3)\n"
                 "  --procs P         worker processes (default 3)\n"
                 "  --device I|all    /dev/accel/accelI or every device (default all)\n"
                 "  --time-limit SEC  the run ends by then; a process still alive is a hang (default 600)\n"
                 "  --reset           (root) soft reset of every device through sysfs half way\n"
                 "  --no-dmabuf-mmap  no mmap of dma-bufs nor of imported buffers (defect 1 of issue 9)\n"
                 "  --no-leak-check   skip the hbm_used and slab checks (e.g. other users of the device)\n"
                 "  --stats-out FILE  append the outcome counts to FILE (call, outcome, count; tab separated)\n"
                 "  --trace           print every call to stderr\n");
}

bool parse_u64(const char *s, std::uint64_t &v)
{
    char *end = nullptr;
    errno = 0;
    v = std::strtoull(s, &end, 0);
    return errno == 0 && end != s && *end == '\0';
}

int parse(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has = i + 1 < argc;
        std::uint64_t v = 0;
        auto num = [&](std::uint64_t lo, std::uint64_t hi) {
            if (!has || !parse_u64(argv[++i], v) || v < lo || v > hi) {
                std::fprintf(stderr, "hpu-fuzz: bad value for %s\n", a.c_str());
                return false;
            }
            return true;
        };
        if (a == "--seed") {
            if (!num(0, ~0ULL))
                return 2;
            g_opt.seed = v;
            g_opt.seed_given = true;
        } else if (a == "--calls") {
            if (!num(1, 1ULL << 40U))
                return 2;
            g_opt.calls = v;
        } else if (a == "--threads") {
            if (!num(1, 64))
                return 2;
            g_opt.threads = static_cast<unsigned>(v);
        } else if (a == "--procs") {
            if (!num(1, 64))
                return 2;
            g_opt.procs = static_cast<unsigned>(v);
        } else if (a == "--time-limit") {
            if (!num(1, 7ULL * 24 * 3600))
                return 2;
            g_opt.time_limit = static_cast<unsigned>(v);
        } else if (a == "--device") {
            if (!has)
                return 2;
            const std::string d = argv[++i];
            if (d == "all") {
                g_opt.device = -1;
            } else if (parse_u64(d.c_str(), v) && v < 64) {
                g_opt.device = static_cast<int>(v);
            } else {
                std::fprintf(stderr, "hpu-fuzz: bad --device %s\n", d.c_str());
                return 2;
            }
        } else if (a == "--reset") {
            g_opt.reset = true;
        } else if (a == "--no-dmabuf-mmap") {
            g_opt.dmabuf_mmap = false;
        } else if (a == "--no-leak-check") {
            g_opt.leak_check = false;
        } else if (a == "--stats-out") {
            if (!has)
                return 2;
            g_opt.stats_out = argv[++i];
        } else if (a == "--trace") {
            g_trace = true;
        } else if (a == "--help" || a == "-h") {
            usage(stdout);
            return 1;
        } else {
            std::fprintf(stderr, "hpu-fuzz: unknown option %s\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    return 0;
}

std::vector<std::string> accel_nodes()
{
    std::vector<std::pair<int, std::string>> v;
    if (DIR *d = ::opendir("/dev/accel")) {
        while (const dirent *e = ::readdir(d)) {
            const std::string n = e->d_name;
            if (n.rfind("accel", 0) == 0 && n.size() > 5)
                v.emplace_back(std::atoi(n.c_str() + 5), "/dev/accel/" + n);
        }
        ::closedir(d);
    }
    std::sort(v.begin(), v.end());
    std::vector<std::string> out;
    out.reserve(v.size());
    for (auto &[i, n] : v)
        out.push_back(std::move(n));
    return out;
}

void soft_reset_all()
{
    for (const auto &n : g_nodes) {
        const std::string path = sysfs_dir(n) + "/hpu_reset";
        const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        int e = fd < 0 ? errno : 0;
        if (fd >= 0) {
            if (::write(fd, "soft", 4) < 0)
                e = errno;
            ::close(fd);
        }
        record(OP_RESET_SYSFS, e);
        std::printf("hpu-fuzz: soft reset of %s through sysfs: %s\n", n.c_str(), errname(e).c_str());
        std::fflush(stdout);
    }
}

void dump_hung(pid_t pid)
{
    const std::string dir = "/proc/" + std::to_string(pid) + "/task";
    if (DIR *d = ::opendir(dir.c_str())) {
        while (const dirent *e = ::readdir(d)) {
            if (e->d_name[0] == '.')
                continue;
            const std::string t = dir + "/" + e->d_name;
            std::ifstream wc(t + "/wchan");
            std::string wchan;
            std::getline(wc, wchan);
            std::fprintf(stderr, "  pid %d task %s wchan %s\n", pid, e->d_name, wchan.c_str());
            std::ifstream st(t + "/stack");
            std::string line;
            while (std::getline(st, line))
                std::fprintf(stderr, "    %s\n", line.c_str());
        }
        ::closedir(d);
    }
}

void print_table(double secs)
{
    const std::uint64_t total = g_sh->calls.load();
    std::printf("\n%-26s %10s %10s  %s\n", "call", "calls", "ok", "error paths (errno: count)");
    unsigned distinct = 0;
    unsigned distinct_err = 0;
    for (unsigned op = 0; op < OP_COUNT; ++op) {
        std::vector<std::pair<std::uint64_t, int>> outs;
        std::uint64_t n = 0;
        for (int e = 0; e < kErrs; ++e) {
            const std::uint64_t k = g_sh->counts.at(op).at(static_cast<std::size_t>(e)).load();
            if (k == 0)
                continue;
            n += k;
            ++distinct;
            if (e != 0) {
                outs.emplace_back(k, e);
                ++distinct_err;
            }
        }
        if (n == 0)
            continue;
        std::sort(outs.rbegin(), outs.rend());
        std::string errs;
        for (const auto &[k, e] : outs)
            errs += (errs.empty() ? "" : ", ") + errname(e) + ": " + std::to_string(k);
        std::printf("%-26s %10" PRIu64 " %10" PRIu64 "  [%zu] %s\n", kOpName.at(op), n,
                    g_sh->counts.at(op).at(0).load(), outs.size(), errs.c_str());
    }
    if (!g_opt.stats_out.empty()) {
        std::ofstream f(g_opt.stats_out, std::ios::app);
        for (unsigned op = 0; op < OP_COUNT; ++op) {
            for (int e = 0; e < kErrs; ++e) {
                const std::uint64_t k = g_sh->counts.at(op).at(static_cast<std::size_t>(e)).load();
                if (k != 0)
                    f << kOpName.at(op) << '\t' << errname(e) << '\t' << k << '\n';
            }
        }
        f << "#calls\t" << total << '\t' << secs << '\n';
    }
    std::uint64_t busy = 0;
    for (std::size_t i = 0; i < kActionCount; ++i)
        busy += g_sh->act_ns.at(i).load();
    std::printf("\n%-22s %9s %9s %10s %7s\n", "action", "runs", "calls", "mean us", "time %");
    for (std::size_t i = 0; i < kActionCount; ++i) {
        const std::uint64_t runs = g_sh->act_runs.at(i).load();
        const std::uint64_t ns = g_sh->act_ns.at(i).load();
        if (runs == 0)
            continue;
        std::printf("%-22s %9" PRIu64 " %9" PRIu64 " %10.1f %7.1f\n", Worker::actions().at(i).name, runs,
                    g_sh->act_calls.at(i).load(), static_cast<double>(ns) / 1e3 / static_cast<double>(runs),
                    busy != 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(busy) : 0.0);
    }
    std::printf("\nhpu-fuzz: %" PRIu64 " calls in %.1f s: %.0f calls/s; %u distinct (call, outcome) pairs, %u of them errors\n",
                total, secs, secs > 0 ? static_cast<double>(total) / secs : 0.0, distinct, distinct_err);
}

int supervise()
{
    int failures = 0;
    const int fds0 = open_fds();
    std::vector<std::uint64_t> hbm0;
    hbm0.reserve(g_nodes.size());
    for (const auto &n : g_nodes)
        hbm0.push_back(read_u64(sysfs_dir(n) + "/hbm_used").value_or(0));
    const bool slab_ok = ::access("/proc/slabinfo", R_OK) == 0;
    const auto slab0 = slab_objects();

    // The statistics sit between two inaccessible pages: no range the
    // workers hand the driver (user pointers above) can reach into them.
    const std::size_t shared_len = (sizeof(Shared) + kPage - 1) / kPage * kPage;
    void *area = ::mmap(nullptr, shared_len + 2 * kPage, PROT_NONE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (area == MAP_FAILED) {
        std::perror("hpu-fuzz: mmap");
        return 1;
    }
    void *mem = static_cast<char *>(area) + kPage;
    if (::mprotect(mem, shared_len, PROT_READ | PROT_WRITE) != 0) {
        std::perror("hpu-fuzz: mprotect");
        return 1;
    }
    g_sh = new (mem) Shared{}; // NOLINT(cppcoreguidelines-owning-memory): placement in shared memory, never freed
    g_sh->reset_at = g_opt.reset ? std::max<std::uint64_t>(1, g_opt.calls / 2) : 0;
    g_reset_efd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

    const std::uint64_t t0 = now_ns();
    const std::uint64_t limit_ns = static_cast<std::uint64_t>(g_opt.time_limit) * 1000000000ULL;
    // Workers stop starting calls at the soft deadline, leaving 15% (at
    // least 3 s) of the limit for closing their files; at the limit, a
    // process still alive is a hang.
    const std::uint64_t reserve = std::max<std::uint64_t>(limit_ns * 15 / 100, std::min<std::uint64_t>(3000000000ULL, limit_ns / 2));
    g_soft_deadline = t0 + limit_ns - reserve;
    const std::uint64_t hard_deadline = t0 + limit_ns;
    std::fflush(stdout);
    std::fflush(stderr);

    std::vector<pid_t> pids;
    std::vector<int> pidfds;
    for (unsigned p = 0; p < g_opt.procs; ++p) {
        const pid_t pid = ::fork();
        if (pid == 0)
            ::_exit(child_main(p));
        if (pid < 0) {
            std::perror("hpu-fuzz: fork");
            ++failures;
            break;
        }
        pids.push_back(pid);
        pidfds.push_back(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    }
    bool reset_done = !g_opt.reset;
    const std::uint64_t reset_time = t0 + (g_soft_deadline - t0) / 2;
    std::size_t alive = pids.size();
    std::vector<bool> done(pids.size(), false);
    bool hung = false;
    while (alive > 0) {
        std::vector<pollfd> pf;
        for (std::size_t i = 0; i < pidfds.size(); ++i)
            pf.push_back({done[i] ? -1 : pidfds[i], POLLIN, 0});
        pf.push_back({reset_done ? -1 : g_reset_efd, POLLIN, 0});
        const std::uint64_t now = now_ns();
        if (now >= hard_deadline) {
            hung = true;
            break;
        }
        std::uint64_t wake = hard_deadline;
        if (!reset_done)
            wake = std::min(wake, std::max(reset_time, now));
        const int ms = static_cast<int>(std::min<std::uint64_t>((wake - now) / 1000000 + 1, 60000));
        (void)::poll(pf.data(), pf.size(), ms);
        if (!reset_done && (pf.back().revents != 0 || now_ns() >= reset_time)) {
            reset_done = true;
            soft_reset_all();
        }
        for (std::size_t i = 0; i < pids.size(); ++i) {
            if (done[i])
                continue;
            int st = 0;
            const pid_t r = ::waitpid(pids[i], &st, WNOHANG);
            if (r != pids[i])
                continue;
            done[i] = true;
            --alive;
            if (WIFSIGNALED(st)) {
                std::fprintf(stderr, "hpu-fuzz: FAIL: worker process %zu (pid %d) killed by signal %d (%s)\n", i,
                             pids[i], WTERMSIG(st), strsignal(WTERMSIG(st)));
                ++failures;
            } else if (WEXITSTATUS(st) != 0) {
                std::fprintf(stderr, "hpu-fuzz: FAIL: worker process %zu (pid %d) exit status %d\n", i, pids[i],
                             WEXITSTATUS(st));
                ++failures;
            }
        }
    }
    const double secs = static_cast<double>(now_ns() - t0) / 1e9;
    if (hung) {
        std::fprintf(stderr, "hpu-fuzz: FAIL: %zu worker process(es) still running at the %u s time limit (hang):\n",
                     alive, g_opt.time_limit);
        for (std::size_t i = 0; i < pids.size(); ++i) {
            if (!done[i])
                dump_hung(pids[i]);
        }
        ++failures;
        for (std::size_t i = 0; i < pids.size(); ++i) {
            if (!done[i])
                ::kill(pids[i], SIGKILL);
        }
        for (std::size_t i = 0; i < pids.size(); ++i) {
            if (done[i])
                continue;
            pollfd pf{pidfds[i], POLLIN, 0};
            if (::poll(&pf, 1, 10000) == 1) {
                int st = 0;
                (void)::waitpid(pids[i], &st, 0);
            } else {
                std::fprintf(stderr, "hpu-fuzz: pid %d does not die after SIGKILL\n", pids[i]);
            }
        }
    }
    for (const int fd : pidfds) {
        if (fd >= 0)
            ::close(fd);
    }
    if (g_reset_efd >= 0)
        ::close(g_reset_efd);
    g_reset_efd = -1;

    print_table(secs);
    std::fflush(stdout);

    // Leak checks. Freeing is partly asynchronous (fences, scrubbing), so
    // the counters get up to 10 s to come back.
    const int fds1 = open_fds();
    if (fds1 != fds0) {
        std::fprintf(stderr, "hpu-fuzz: FAIL: supervisor has %d open fds, had %d\n", fds1, fds0);
        ++failures;
    }
    if (g_opt.leak_check && !hung) {
        const std::uint64_t until = now_ns() + 10000000000ULL;
        for (std::size_t d = 0; d < g_nodes.size(); ++d) {
            const std::string path = sysfs_dir(g_nodes[d]) + "/hbm_used";
            std::uint64_t v = read_u64(path).value_or(0);
            while (v != hbm0[d] && now_ns() < until) {
                ::usleep(100000);
                v = read_u64(path).value_or(0);
            }
            std::printf("hpu-fuzz: %s hbm_used %" PRIu64 " before, %" PRIu64 " after\n", g_nodes[d].c_str(), hbm0[d], v);
            if (v != hbm0[d]) {
                std::fprintf(stderr, "hpu-fuzz: FAIL: %s hbm_used %" PRIu64 " after the run, %" PRIu64 " before\n",
                             g_nodes[d].c_str(), v, hbm0[d]);
                ++failures;
            }
        }
        if (slab_ok) {
            std::map<std::string, long> slab1;
            bool ok = false;
            while (true) {
                slab1 = slab_objects();
                ok = true;
                for (const auto &[k, v] : slab1)
                    ok = ok && v <= (slab0.count(k) != 0U ? slab0.at(k) : 0) + kSlabSlack;
                if (ok || now_ns() >= until)
                    break;
                ::usleep(100000);
            }
            std::printf("hpu-fuzz: slab objects before: %s\nhpu-fuzz: slab objects after:  %s\n", slab_str(slab0).c_str(),
                        slab_str(slab1).c_str());
            if (!ok) {
                std::fprintf(stderr, "hpu-fuzz: FAIL: slab objects grew by more than %ld\n", kSlabSlack);
                ++failures;
            }
        } else {
            std::printf("hpu-fuzz: slab check skipped (/proc/slabinfo needs root)\n");
        }
    }
    std::printf("hpu-fuzz: %s\n", failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv)
{
    if (const int r = parse(argc, argv); r != 0)
        return r == 1 ? 0 : 2;
    if (!g_opt.seed_given)
        g_opt.seed = splitmix(now_ns() ^ (static_cast<std::uint64_t>(::getpid()) << 32U));
    const auto all = accel_nodes();
    if (g_opt.device < 0) {
        g_nodes = all;
    } else if (static_cast<std::size_t>(g_opt.device) < all.size()) {
        g_nodes = {all.at(static_cast<std::size_t>(g_opt.device))};
    }
    if (g_nodes.empty()) {
        std::fprintf(stderr, "hpu-fuzz: no /dev/accel/accel* device%s\n", g_opt.device < 0 ? "" : " with that index");
        return 2;
    }
    if (g_opt.reset && ::geteuid() != 0) {
        std::fprintf(stderr, "hpu-fuzz: --reset needs root\n");
        return 2;
    }
    std::string devs;
    for (const auto &n : g_nodes)
        devs += " " + n;
    std::printf("hpu-fuzz: seed 0x%016" PRIx64 ", %" PRIu64 " calls, %u procs x %u threads, time limit %u s%s%s, devices%s\n",
                g_opt.seed, g_opt.calls, g_opt.procs, g_opt.threads, g_opt.time_limit,
                g_opt.reset ? ", soft reset half way" : "", g_opt.dmabuf_mmap ? "" : ", no dma-buf mmap",
                devs.c_str());
    std::signal(SIGPIPE, SIG_IGN);
    return supervise();
}
