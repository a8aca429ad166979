// SPDX-License-Identifier: MIT
// err_util.h: helpers of the issue-4 VM tests (errors, timeouts, reset and
// recovery): INFO ERRORS, DRM error/reset events read from the device file,
// the driver's debugfs fault injection and sysfs files, leak snapshots, and
// a "bystander" process that keeps running DMA jobs and checks their data
// while a test provokes a fault elsewhere.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_VM_ERR_UTIL_H
#define HPU_TESTS_VM_ERR_UTIL_H

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slab_util.h"
#include "vm_util.h"

namespace vmt {

inline double ms_since(std::uint64_t t0_ns) { return static_cast<double>(now_ns() - t0_ns) / 1e6; }

// Polls `cond` every 20 ms until it holds or timeout_ms passes.
template <typename F> bool eventually(F cond, int timeout_ms)
{
    const std::uint64_t t0 = now_ns();
    for (;;) {
        if (cond())
            return true;
        if (ms_since(t0) > timeout_ms)
            return false;
        ::usleep(20000);
    }
}

// Index N of /dev/accel/accelN.
inline std::string minor_of(const std::string &node)
{
    const auto p = node.find("accel/accel");
    return p == std::string::npos ? std::string() : node.substr(p + 11);
}

// sysfs directory of the PCI device behind an accel node.
inline std::string sysfs_dir(const std::string &node)
{
    return "/sys/class/accel/accel" + minor_of(node) + "/device";
}

inline std::optional<std::string> read_text(const std::string &path)
{
    std::ifstream f(path);
    if (!f)
        return std::nullopt;
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline std::optional<std::uint64_t> read_u64(const std::string &path)
{
    auto t = read_text(path);
    if (!t)
        return std::nullopt;
    try {
        return std::stoull(*t, nullptr, 0);
    } catch (...) {
        return std::nullopt;
    }
}

// Writes s to a file in one write(2); returns 0 or the errno.
inline int write_text(const std::string &path, const std::string &s)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    if (fd < 0)
        return errno;
    const ssize_t n = ::write(fd, s.data(), s.size());
    const int e = n < 0 ? errno : (static_cast<std::size_t>(n) == s.size() ? 0 : EIO);
    ::close(fd);
    return e;
}

// The driver's debugfs directory of a device: the one that holds the fault
// injection files, named after the accel minor (DRM's accel/<minor>) or the
// PCI address; HPU_DEBUGFS overrides it.
inline std::string debugfs_dir(const std::string &node)
{
    if (const char *e = std::getenv("HPU_DEBUGFS"))
        return e;
    const std::string minor = minor_of(node);
    std::string pci;
    char buf[256] = {};
    const std::string link = sysfs_dir(node);
    const ssize_t n = ::readlink(link.c_str(), buf, sizeof(buf) - 1);
    if (n > 0) {
        pci = std::string(buf, static_cast<std::size_t>(n));
        pci = pci.substr(pci.rfind('/') + 1);
    }
    const std::vector<std::string> cands = {
        "/sys/kernel/debug/accel/" + minor,      "/sys/kernel/debug/accel/" + pci,
        "/sys/kernel/debug/hpu/" + pci,          "/sys/kernel/debug/hpu/accel" + minor,
        "/sys/kernel/debug/hpu/" + minor,        "/sys/kernel/debug/dri/" + minor,
        "/sys/kernel/debug/accel/" + minor + "/hpu",
    };
    for (const auto &c : cands) {
        struct stat st {};
        if (::stat((c + "/inject_hang").c_str(), &st) == 0)
            return c;
    }
    FAIL("no debugfs fault-injection directory found for " << node << " (pci " << pci << ")");
    return {};
}

// Injects a fault: writes `what` to debugfs file `file` of the device.
inline void inject(const std::string &node, const std::string &file, const std::string &what)
{
    const std::string p = debugfs_dir(node) + "/" + file;
    const int e = write_text(p, what);
    INFO("write '" << what << "' to " << p << ": " << std::strerror(e));
    REQUIRE(e == 0);
}

// The driver's sysfs reset action on the PCI device ("soft" or "hard",
// root only): the writable attribute with "reset" in its name that is not
// the PCI core's own reset/reset_method nor a counter. HPU_RESET_ATTR
// names it explicitly.
inline std::string reset_attr(const std::string &node)
{
    const std::string dir = sysfs_dir(node);
    if (const char *e = std::getenv("HPU_RESET_ATTR"))
        return dir + "/" + e;
    std::string found;
    if (DIR *d = ::opendir(dir.c_str())) {
        while (const dirent *de = ::readdir(d)) {
            const std::string n = de->d_name;
            if (n.find("reset") == std::string::npos || n == "reset" || n == "reset_method" ||
                n.find("count") != std::string::npos || n.find("generation") != std::string::npos ||
                (n.size() > 7 && n.substr(n.size() - 7) == "_resets"))
                continue;
            struct stat st {};
            std::string full = dir;
            full += "/";
            full += n;
            if (::stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IWUSR) != 0)
                found = full;
        }
        ::closedir(d);
    }
    if (found.empty())
        FAIL("no sysfs reset attribute in " << dir);
    return found;
}

// INFO ERRORS through a file; returns the errno.
inline int info_errors(int fd, drm_hpu_info_errors &out)
{
    out = {};
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_ERRORS;
    req.ptr = reinterpret_cast<std::uintptr_t>(&out); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = sizeof(out);
    return xioctl(fd, DRM_IOCTL_HPU_INFO, &req);
}

// INFO ERRORS through a fresh open of the node.
inline drm_hpu_info_errors errors_now(const std::string &node)
{
    const int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    REQUIRE(fd >= 0);
    drm_hpu_info_errors e{};
    const int r = info_errors(fd, e);
    ::close(fd);
    REQUIRE(r == 0);
    return e;
}

inline int info_memory(int fd, drm_hpu_info_memory &out)
{
    out = {};
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_MEMORY;
    req.ptr = reinterpret_cast<std::uintptr_t>(&out); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = sizeof(out);
    return xioctl(fd, DRM_IOCTL_HPU_INFO, &req);
}

inline drm_hpu_info_memory memory_now(const std::string &node)
{
    const int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    REQUIRE(fd >= 0);
    drm_hpu_info_memory m{};
    const int r = info_memory(fd, m);
    ::close(fd);
    REQUIRE(r == 0);
    return m;
}

inline drm_hpu_info_device device_now(const std::string &node)
{
    const int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    REQUIRE(fd >= 0);
    drm_hpu_info_device d{};
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_DEVICE;
    req.ptr = reinterpret_cast<std::uintptr_t>(&d); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = sizeof(d);
    const int r = xioctl(fd, DRM_IOCTL_HPU_INFO, &req);
    ::close(fd);
    REQUIRE(r == 0);
    return d;
}

// Waits (polling INFO MEMORY) until the device's hbm_used is back to `want`;
// returns the last value seen.
inline std::uint64_t wait_hbm_used(const std::string &node, std::uint64_t want, int timeout_ms = 5000)
{
    const std::uint64_t t0 = now_ns();
    std::uint64_t got = 0;
    for (;;) {
        got = memory_now(node).hbm_used;
        if (got == want || ms_since(t0) > timeout_ms)
            return got;
        ::usleep(20000);
    }
}

// Asks for DRM error/reset events on a file; returns the errno.
inline int enable_events(int fd, std::uint32_t flags = DRM_HPU_EVENTS_ENABLE)
{
    drm_hpu_events ev{};
    ev.flags = flags;
    return xioctl(fd, DRM_IOCTL_HPU_EVENTS, &ev);
}

struct Event {
    std::uint32_t type = 0;
    std::uint32_t length = 0; // drm_event.length: the bytes the driver sent
    drm_hpu_event_error err{};
    drm_hpu_event_reset rst{};
};

inline std::string describe(const Event &e)
{
    std::ostringstream o;
    if (e.type == DRM_HPU_EVENT_ERROR) {
        o << "ERROR kind " << e.err.kind << " engine " << e.err.engine << " queue " << e.err.queue_id << " errno "
          << e.err.errno_value << " seq " << e.err.seq << " job " << e.err.job_queue_id << "/" << e.err.job_seq
          << " info " << e.err.info << " address 0x" << std::hex << e.err.address;
    } else if (e.type == DRM_HPU_EVENT_RESET) {
        o << "RESET hard " << e.rst.hard << " generation " << e.rst.generation;
    } else {
        o << "event type 0x" << std::hex << e.type;
    }
    return o.str();
}

// Reads the DRM events queued on a file, waiting up to timeout_ms for the
// first one that `stop` accepts (all events read are appended to `all`).
// Returns true when such an event came.
template <typename Pred>
bool read_events_until(int fd, std::vector<Event> &all, int timeout_ms, Pred stop)
{
    const std::uint64_t t0 = now_ns();
    for (;;) {
        const int left = timeout_ms - static_cast<int>(ms_since(t0));
        pollfd p{fd, POLLIN, 0};
        const int r = ::poll(&p, 1, std::max(left, 0));
        if (r <= 0 || (p.revents & POLLIN) == 0)
            return false;
        alignas(8) unsigned char buf[4096];
        const ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n <= 0)
            return false;
        bool hit = false;
        for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(drm_event)) <= n;) {
            drm_event h{};
            std::memcpy(&h, buf + off, sizeof(h)); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            if (h.length < sizeof(h) || off + h.length > n)
                break;
            Event e;
            e.type = h.type;
            e.length = h.length;
            if (h.type == DRM_HPU_EVENT_ERROR) {
                std::memcpy(&e.err, buf + off, std::min<std::size_t>(h.length, sizeof(e.err))); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            } else if (h.type == DRM_HPU_EVENT_RESET) {
                std::memcpy(&e.rst, buf + off, std::min<std::size_t>(h.length, sizeof(e.rst))); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            }
            all.push_back(e);
            hit = hit || stop(e);
            off += h.length;
        }
        if (hit)
            return true;
    }
}

inline std::string describe(const std::vector<Event> &v)
{
    std::string s;
    for (const auto &e : v)
        s += describe(e) + "; ";
    return s.empty() ? "(no events)" : s;
}

// Objects of the slab caches whose name contains one of `names` (active
// objects), e.g. the driver's own caches and drm_sched_fence. The caches
// are shrunk first (the tests run as root): that flushes their per-CPU
// slabs and, on the debug kernel, KASAN's quarantine of freed objects,
// which would otherwise count as in use.
inline std::map<std::string, long> slab_objects(const std::vector<std::string> &names)
{
    return slabutil::objects(names, true);
}

// Polls slab_objects(names) until no cache holds more than `slack` objects
// above `before`, for up to 10 s (freed objects go back through RCU and
// the schedulers' free_job work, slower on the debug kernel); returns the
// last counts. A leak of one object per job never settles.
inline std::map<std::string, long> slab_settled(const std::vector<std::string> &names,
                                                const std::map<std::string, long> &before, long slack)
{
    std::map<std::string, long> now;
    for (int i = 0; i < 100; ++i) {
        now = slab_objects(names);
        bool ok = true;
        for (const auto &[k, v] : now)
            ok = ok && v <= (before.count(k) != 0U ? before.at(k) : 0) + slack;
        if (ok)
            break;
        ::usleep(100000);
    }
    return now;
}

inline int open_fds()
{
    int n = 0;
    if (DIR *d = ::opendir("/proc/self/fd")) {
        while (::readdir(d) != nullptr)
            ++n;
        ::closedir(d);
    }
    return n - 3; // ".", ".." and the directory's own fd
}

// Result of a bystander process (fixed layout: sent through a pipe).
struct ByStats {
    std::uint32_t good = 0;      // jobs that completed with correct data
    std::uint32_t bad_data = 0;  // jobs that reported success with wrong data: never allowed
    std::uint32_t failed = 0;    // jobs whose fence failed (not allowed unless tolerant)
    std::uint32_t lost = 0;      // tolerant mode: jobs lost to a hard reset (ECANCELED/ENODEV/EIO)
    std::uint32_t reopened = 0;  // tolerant mode: reopens after -ENODEV
    std::int32_t last_err = 0;   // last fence status / errno seen on a failure
    std::uint32_t setup = 0;     // 1: could not set up
    std::uint32_t good_after_reopen = 0;
};

// A forked process that runs host -> HBM -> host copies on one engine of
// the device, checks every byte, and keeps going until stopped. In tolerant
// mode (hard reset tests) a job may fail with -ECANCELED/-ENODEV/-EIO and an
// ioctl with ENODEV: it then reopens the device and goes on; a job that
// reports success must still have correct data.
class Bystander {
public:
    Bystander(const std::string &node, std::uint32_t engine, bool tolerant, std::uint64_t size = 1 * MiB)
    {
        int up[2] = {-1, -1};
        int down[2] = {-1, -1};
        REQUIRE(::pipe(up) == 0);   // NOLINT(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
        REQUIRE(::pipe(down) == 0); // NOLINT(cppcoreguidelines-pro-bounds-array-to-pointer-decay)
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            ::close(up[0]);
            ::close(down[1]);
            child(node, engine, tolerant, size, up[1], down[0]);
        }
        ::close(up[1]);
        ::close(down[0]);
        res_ = up[0];
        stop_ = down[1];
        // Wait for the first good job (or a setup failure).
        char c = 0;
        ready_ = ::read(res_, &c, 1) == 1 && c == 'r';
    }
    Bystander(const Bystander &) = delete;
    Bystander &operator=(const Bystander &) = delete;
    Bystander(Bystander &&) = delete;
    Bystander &operator=(Bystander &&) = delete;
    ~Bystander()
    {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (res_ >= 0)
            ::close(res_);
        if (stop_ >= 0)
            ::close(stop_);
    }
    [[nodiscard]] bool ready() const { return ready_; }
    // Waits until the process has run a good job on a reopened device
    // (tolerant mode), at most timeout_ms. It keeps running.
    bool wait_good_after_reopen(int timeout_ms)
    {
        if (a_seen_)
            return true;
        pollfd p{res_, POLLIN, 0};
        char c = 0;
        if (::poll(&p, 1, timeout_ms) == 1 && ::read(res_, &c, 1) == 1 && c == 'a')
            a_seen_ = true;
        return a_seen_;
    }
    // Stops the process and returns its counts.
    ByStats finish()
    {
        ::close(stop_);
        stop_ = -1;
        ByStats s{};
        s.setup = 1;
        // The stream holds an optional 'a' byte (not yet consumed) and the
        // counts; the child exits after writing them.
        std::array<char, sizeof(ByStats) + 1> buf{};
        std::size_t got = 0;
        for (;;) {
            const ssize_t n = ::read(res_, buf.data() + got, buf.size() - got);
            if (n <= 0)
                break;
            got += static_cast<std::size_t>(n);
            if (got == buf.size())
                break;
        }
        const std::size_t skip = (got == buf.size() && buf[0] == 'a') ? 1 : 0;
        if (got - skip == sizeof(s)) {
            std::memcpy(&s, buf.data() + skip, sizeof(s));
        } else {
            s.setup = 2;
        }
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        return s;
    }

private:
    [[noreturn]] static void child(const std::string &node, std::uint32_t engine, bool tolerant,
                                   std::uint64_t size, int res, int stop)
    {
        ByStats s{};
        bool told = false;
        std::uint64_t seed = 1000 + static_cast<std::uint64_t>(::getpid());
        bool after_reopen = false;
        try {
            for (;;) {
                auto c = std::make_unique<Ctx>(node);
                std::uint32_t q = 0;
                if (c->queue_create(engine, q) != 0) {
                    s.setup = 1;
                    break;
                }
                auto src = c->host_buf(size);
                auto dst = c->host_buf(size);
                const std::uint64_t hbm = c->hbm_buf(size < kHbmPage ? kHbmPage : size);
                Cb cb;
                cb.lin_dma(src.va, hbm, size).lin_dma(hbm, dst.va, size);
                const std::uint64_t cbva = c->put_cb(cb);
                std::uint32_t so = 0;
                REQUIRE(syncobj_create(c->fd(), so) == 0);
                bool reopen = false;
                while (!reopen) {
                    pollfd p{stop, POLLIN, 0};
                    if (::poll(&p, 1, 0) > 0)
                        goto done; // NOLINT(cppcoreguidelines-avoid-goto)
                    ++seed;
                    fill_words(reinterpret_cast<std::uint64_t *>(src.ptr), size / 8, seed); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
                    std::memset(dst.ptr, 0, size);
                    int e = c->submit(q, cbva, cb.bytes(), so, {}, 60000);
                    int st = 0;
                    if (e == 0) {
                        e = syncobj_wait(c->fd(), so, 60ULL * 1000000000ULL);
                        st = e == 0 ? syncobj_status(c->fd(), so) : 2000 + e;
                    } else {
                        st = 1000 + e;
                    }
                    if (st == 1) {
                        if (check_words(reinterpret_cast<const std::uint64_t *>(dst.ptr), size / 8, seed) != size / 8) { // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
                            ++s.bad_data;
                        } else {
                            ++s.good;
                            if (after_reopen)
                                ++s.good_after_reopen;
                        }
                        if (!told) {
                            const char r = 'r';
                            std::ignore = ::write(res, &r, 1);
                            told = true;
                        }
                        if (after_reopen && s.good_after_reopen == 1) {
                            const char a = 'a'; // see wait_good_after_reopen()
                            std::ignore = ::write(res, &a, 1);
                        }
                        continue;
                    }
                    s.last_err = st;
                    const bool reset_like = st == -ECANCELED || st == -ENODEV || st == -EIO ||
                                            (st >= 1000 && st % 1000 == ENODEV);
                    if (tolerant && reset_like) {
                        ++s.lost;
                        // After a hard reset every ioctl on this file fails ENODEV.
                        drm_hpu_info_errors er{};
                        if (info_errors(c->fd(), er) == ENODEV) {
                            reopen = true;
                            ++s.reopened;
                            after_reopen = true;
                        }
                        continue;
                    }
                    ++s.failed;
                    if (s.failed > 20)
                        goto done; // NOLINT(cppcoreguidelines-avoid-goto)
                }
                syncobj_destroy(c->fd(), so);
            }
        } catch (...) {
            s.setup = 3;
        }
    done:
        if (!told) {
            const char r = 'x';
            std::ignore = ::write(res, &r, 1);
        }
        std::ignore = ::write(res, &s, sizeof(s));
        ::_exit(0);
    }

    pid_t pid_ = -1;
    int res_ = -1;
    int stop_ = -1;
    bool ready_ = false;
    bool a_seen_ = false;
};

inline std::string describe(const ByStats &s)
{
    std::ostringstream o;
    o << "bystander: good " << s.good << ", bad data " << s.bad_data << ", failed " << s.failed << ", lost "
      << s.lost << ", reopened " << s.reopened << ", good after reopen " << s.good_after_reopen << ", last error "
      << s.last_err << ", setup " << s.setup;
    return o.str();
}

// Prints a line the lead collects ("RECOVERY <fault>: <ms> ms ...") to
// stdout and to $HPU_OUT/recovery.txt.
inline void report_recovery(const std::string &what, double ms, const std::string &extra = "")
{
    std::ostringstream o;
    o << "RECOVERY " << what << ": " << static_cast<long>(ms) << " ms" << (extra.empty() ? "" : " (" + extra + ")");
    std::printf("%s\n", o.str().c_str());
    std::fflush(stdout);
    if (const char *out = std::getenv("HPU_OUT")) {
        std::ofstream f(std::string(out) + "/recovery.txt", std::ios::app);
        f << o.str() << "\n";
    }
}

} // namespace vmt

#endif // HPU_TESTS_VM_ERR_UTIL_H
