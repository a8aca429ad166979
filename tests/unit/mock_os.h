// SPDX-License-Identifier: MIT
// A fake kernel for libhpu's unit tests: a mock Os with an in-memory sysfs
// (files, symbolic links, directories), device nodes answering the hpu
// ioctls (INFO, buffer objects, VM_BIND, queues, SUBMIT) and the standard
// DRM ones libhpu uses (GEM close, PRIME, syncobjs), sync_file fds, mmap, a
// settable monotonic clock, call counters and failure injection. Every
// kernel object it hands out is tracked, so a test can check that each was
// released exactly once (leaks() and misuse).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_MOCK_OS_H
#define HPU_TESTS_MOCK_OS_H

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <deque>
#include <linux/sync_file.h>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>

#include "drm/hpu_accel.h"
#include "os.h"

namespace hpu::test {

class MockOs final : public hpu::detail::Os {
public:
    // Fake file system.
    std::map<std::string, std::string> files;
    std::map<std::string, std::string> links;
    std::map<std::string, std::vector<std::string>> dirs;
    // Device nodes that open() accepts, with the INFO answer of each.
    std::map<std::string, drm_hpu_info_device> nodes;

    // Injected failures: path -> negative errno.
    std::map<std::string, int> open_fail;
    std::map<std::string, int> read_fail;
    std::map<std::string, int> list_fail;
    std::map<std::string, int> link_fail;
    int ioctl_fail = 0;      // returned by every ioctl when non-zero
    int close_fail = 0;      // returned by close when non-zero
    int answer_size = -1;    // overrides the size reported back when >= 0

    // Observations.
    int open_calls = 0;
    int close_calls = 0;
    int ioctl_calls = 0;
    int last_open_flags = 0;
    unsigned long last_request = 0;
    drm_hpu_info last_info{};        // the request as received
    std::map<int, std::string> open_fds;   // fd -> node
    std::vector<int> closed_fds;

    // ---- The fake driver (issue 3 ioctls) ----
    struct Fence {
        bool signalled = false;
        int error = 0; // negative errno of a failed job
    };
    struct Bo {
        std::uint64_t size = 0;
        std::uint32_t flags = 0;      // DRM_HPU_BO_*, 0 for userptr
        bool userptr = false;
        std::uint64_t user_addr = 0;
        std::uint64_t mmap_offset = 0;
        std::vector<std::uint8_t> mem; // backing store of HOST objects
    };
    struct Mapping {
        std::uint32_t handle = 0;
        std::shared_ptr<Bo> bo;
        std::uint64_t size = 0;
        std::uint32_t flags = 0;
    };
    struct Syncobj {
        std::shared_ptr<Fence> fence;                         // binary
        std::map<std::uint64_t, std::shared_ptr<Fence>> points; // timeline
    };
    struct Job {
        drm_hpu_submit req{};
        std::vector<std::uint8_t> cb;  // the command buffer as submitted
        std::vector<drm_hpu_sync> in, out;
        std::shared_ptr<Fence> fence;
    };
    struct Aux { // a dma-buf or sync_file fd
        std::shared_ptr<Bo> bo;
        std::shared_ptr<Fence> fence;
    };

    drm_hpu_info_memory memory_answer{};
    std::map<std::uint32_t, std::shared_ptr<Bo>> gem;      // handle -> object
    std::map<std::uint64_t, Mapping> vm;                   // va -> mapping
    std::map<std::uint32_t, Syncobj> syncobjs;
    std::set<std::uint32_t> queues;
    std::map<int, Aux> aux_fds;
    std::map<void *, int> mmaps;                           // address -> count
    std::vector<Job> jobs;
    bool auto_complete = true;  // jobs signal at submit
    int job_error = 0;          // error of auto-completed jobs

    // Monotonic clock (ns) and the syncobj waits seen.
    std::int64_t now_ns = 1000000000LL;
    std::vector<std::int64_t> wait_deadlines;
    std::deque<int> wait_script;           // results of the next waits (e.g. -EINTR)
    std::int64_t wait_advance_ns = 0;      // the clock moves this much per wait
    std::function<void()> on_wait;         // runs inside each wait

    // Failure injection: the fail_at-th "acquiring" call (ioctl other than a
    // release, or mmap; counted from 1) returns fail_errno.
    int fail_at = 0;
    int fail_errno = -ENOMEM;
    int acquire_calls = 0;
    std::map<unsigned long, int> request_fail; // request -> errno (every call)

    // Observations.
    std::map<unsigned long, int> request_calls;
    int misuse = 0;          // releases of unknown objects, double closes
    int mmap_calls = 0;
    int munmap_calls = 0;

    // Signals every pending job (with error).
    void complete_jobs(int error = 0)
    {
        for (auto &j : jobs) {
            if (!j.fence->signalled) {
                j.fence->signalled = true;
                j.fence->error = error;
            }
        }
    }

    // ---- Events, reset and sysfs writes (issue 4) ----
    // Everything below marked "locked" is guarded by ev_mu_ because the
    // library's event thread calls poll() and read() concurrently with the
    // test's thread; the rest of the mock is used by one thread only.
    drm_hpu_info_errors errors_answer{};
    std::set<int> dead_fds;                          // ioctls fail with -ENODEV (hard reset)
    std::map<std::string, int> write_fail;           // path -> errno of write_file
    std::vector<std::pair<std::string, std::string>> written; // write_file calls
    std::atomic<int> poll_calls{0};
    std::atomic<int> read_calls{0};
    int eventfd_fail = 0;                            // eventfd() returns it when non-zero

    // Queues one read(2)'s worth of bytes on device fd (locked).
    void push_read(int fd, std::vector<std::uint8_t> bytes)
    {
        const std::lock_guard<std::mutex> lock(ev_mu_);
        ev_queue_[fd].push_back(std::move(bytes));
        ev_cv_.notify_all();
    }
    // Makes the next read of fd fail with err (locked).
    void fail_next_read(int fd, int err)
    {
        const std::lock_guard<std::mutex> lock(ev_mu_);
        read_fail_fd_[fd] = err;
        ev_queue_[fd].emplace_back(); // makes the fd readable
        ev_cv_.notify_all();
    }
    // Whether DRM_HPU_EVENTS_ENABLE is on for fd (locked).
    bool events_on(int fd)
    {
        const std::lock_guard<std::mutex> lock(ev_mu_);
        return events_enabled_.count(fd) != 0;
    }
    // Bytes still queued for fd (locked).
    std::size_t queued(int fd)
    {
        const std::lock_guard<std::mutex> lock(ev_mu_);
        const auto it = ev_queue_.find(fd);
        return it == ev_queue_.end() ? 0 : it->second.size();
    }
    // Open eventfds (locked).
    std::size_t eventfds() const
    {
        const std::lock_guard<std::mutex> lock(ev_mu_);
        return efd_.size();
    }

    static std::vector<std::uint8_t> error_event(std::uint32_t kind, std::uint32_t engine, std::uint32_t queue_id,
                                                 std::uint32_t errno_value, std::uint64_t seq, std::uint64_t address,
                                                 std::uint64_t ts)
    {
        drm_hpu_event_error e{};
        e.base.type = DRM_HPU_EVENT_ERROR;
        e.base.length = sizeof(e);
        e.kind = kind;
        e.engine = engine;
        e.queue_id = queue_id;
        e.errno_value = errno_value;
        e.seq = seq;
        e.address = address;
        e.timestamp_ns = ts;
        return bytes_of(e);
    }
    static std::vector<std::uint8_t> reset_event(bool hard, std::uint64_t generation, std::uint64_t ts)
    {
        drm_hpu_event_reset e{};
        e.base.type = DRM_HPU_EVENT_RESET;
        e.base.length = sizeof(e);
        e.hard = hard ? 1 : 0;
        e.generation = generation;
        e.timestamp_ns = ts;
        return bytes_of(e);
    }
    template <typename T>
    static std::vector<std::uint8_t> bytes_of(const T &v)
    {
        std::vector<std::uint8_t> b(sizeof(T));
        std::memcpy(b.data(), &v, sizeof(T));
        return b;
    }
    static std::vector<std::uint8_t> cat(std::initializer_list<std::vector<std::uint8_t>> parts)
    {
        std::vector<std::uint8_t> out;
        for (const auto &p : parts)
            out.insert(out.end(), p.begin(), p.end());
        return out;
    }

    // A hard reset as the driver does it: every open device file goes stale
    // (ioctls fail with -ENODEV) and those with events on get a reset event.
    void hard_reset(std::uint64_t generation)
    {
        for (const auto &f : open_fds) {
            dead_fds.insert(f.first);
            if (events_on(f.first))
                push_read(f.first, reset_event(true, generation, 5000));
        }
        errors_answer.reset_generation = generation;
    }

    int poll(pollfd *fds, std::size_t nfds, int timeout_ms) override
    {
        ++poll_calls;
        std::unique_lock<std::mutex> lock(ev_mu_);
        const auto ready = [&]() {
            int n = 0;
            for (std::size_t i = 0; i < nfds; ++i) {
                pollfd &p = fds[i]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
                p.revents = 0;
                if (const auto q = ev_queue_.find(p.fd); dev_fds_.count(p.fd) != 0) {
                    if (q != ev_queue_.end() && !q->second.empty())
                        p.revents = static_cast<short>(p.events & POLLIN);
                } else if (const auto e = efd_.find(p.fd); e != efd_.end()) {
                    if (e->second > 0)
                        p.revents = static_cast<short>(p.events & POLLIN);
                } else {
                    p.revents = POLLNVAL;
                }
                n += p.revents != 0 ? 1 : 0;
            }
            return n;
        };
        int n = ready();
        if (n > 0 || timeout_ms == 0)
            return n;
        if (timeout_ms < 0) {
            ev_cv_.wait(lock, [&]() { return (n = ready()) > 0; });
        } else {
            ev_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&]() { return (n = ready()) > 0; });
        }
        return n;
    }

    long read(int fd, void *buf, std::size_t len) override
    {
        ++read_calls;
        const std::lock_guard<std::mutex> lock(ev_mu_);
        if (const auto e = efd_.find(fd); e != efd_.end()) {
            if (len < 8)
                return -EINVAL;
            if (e->second == 0)
                return -EAGAIN;
            std::memcpy(buf, &e->second, 8);
            e->second = 0;
            return 8;
        }
        if (dev_fds_.count(fd) == 0)
            return -EBADF;
        auto &q = ev_queue_[fd];
        if (const auto f = read_fail_fd_.find(fd); f != read_fail_fd_.end()) {
            const int err = f->second;
            read_fail_fd_.erase(f);
            if (!q.empty())
                q.pop_front();
            return err;
        }
        if (q.empty())
            return -EAGAIN; // the library must never block here
        const auto &front = q.front();
        if (front.size() > len)
            return 0; // like drm_read: the event stays queued
        std::memcpy(buf, front.data(), front.size());
        const auto n = static_cast<long>(front.size());
        q.pop_front();
        return n;
    }

    long write(int fd, const void *buf, std::size_t len) override
    {
        const std::lock_guard<std::mutex> lock(ev_mu_);
        const auto e = efd_.find(fd);
        if (e == efd_.end())
            return -EBADF;
        if (len != 8)
            return -EINVAL;
        std::uint64_t v = 0;
        std::memcpy(&v, buf, 8);
        e->second += v;
        ev_cv_.notify_all();
        return 8;
    }

    int eventfd() override
    {
        if (eventfd_fail != 0)
            return eventfd_fail;
        const std::lock_guard<std::mutex> lock(ev_mu_);
        const int fd = next_fd_++;
        efd_[fd] = 0;
        return fd;
    }

    int write_file(const std::string &path, const std::string &data) override
    {
        written.emplace_back(path, data);
        if (const auto it = write_fail.find(path); it != write_fail.end())
            return it->second;
        if (files.count(path) == 0)
            return -ENOENT;
        files[path] = data;
        return 0;
    }

    // Objects never released (0 when the library cleaned up everything).
    [[nodiscard]] std::size_t leaks() const
    {
        std::size_t n = gem.size() + vm.size() + syncobjs.size() + queues.size() + aux_fds.size() + eventfds();
        for (const auto &m : mmaps)
            n += static_cast<std::size_t>(m.second);
        return n;
    }

    // The bytes of the command buffer of job i.
    [[nodiscard]] const std::vector<std::uint8_t> &cb(std::size_t i) const { return jobs.at(i).cb; }

    // Adds /sys/class/accel/accel<index> for a PCI device at bdf. driver:
    // name of the bound driver ("" for no driver link); vendor/device: the
    // PCI ids in the sysfs files.
    void add_accel(unsigned int index, const std::string &bdf, const std::string &driver,
                   unsigned int vendor = 0x1234, unsigned int device = 0x4850)
    {
        const std::string name = "accel" + std::to_string(index);
        const std::string dir = "/sys/class/accel/" + name;
        dirs["/sys/class/accel"].push_back(name);
        links[dir + "/device"] = "../../../" + bdf;
        if (!driver.empty())
            links[dir + "/device/driver"] = "../../../bus/pci/drivers/" + driver;
        files[dir + "/device/vendor"] = hex(vendor);
        files[dir + "/device/device"] = hex(device);
    }

    // Adds an HPU: sysfs entry, driver link "hpu" and a device node.
    void add_hpu(unsigned int index, const std::string &bdf, const drm_hpu_info_device &answer)
    {
        add_accel(index, bdf, "hpu");
        nodes["/dev/accel/accel" + std::to_string(index)] = answer;
    }

    int open(const std::string &path, int flags) override
    {
        ++open_calls;
        last_open_flags = flags;
        if (auto it = open_fail.find(path); it != open_fail.end())
            return it->second;
        if (nodes.find(path) == nodes.end())
            return -ENOENT;
        const std::lock_guard<std::mutex> lock(ev_mu_);
        const int fd = next_fd_++;
        open_fds[fd] = path;
        dev_fds_.insert(fd);
        return fd;
    }

    int close(int fd) override
    {
        ++close_calls;
        closed_fds.push_back(fd);
        if (aux_fds.erase(fd) == 1)
            return 0;
        {
            const std::lock_guard<std::mutex> lock(ev_mu_);
            if (efd_.erase(fd) == 1)
                return 0;
            dev_fds_.erase(fd);
            ev_queue_.erase(fd);
            events_enabled_.erase(fd);
            ev_cv_.notify_all();
        }
        if (open_fds.erase(fd) == 0) {
            ++misuse;
            return -EBADF;
        }
        return close_fail;
    }

    int ioctl(int fd, unsigned long request, void *arg) override
    {
        ++ioctl_calls;
        ++request_calls[request];
        last_request = request;
        if (const auto a = aux_fds.find(fd); a != aux_fds.end())
            return aux_ioctl(a->second, request, arg);
        const auto node = open_fds.find(fd);
        if (node == open_fds.end())
            return -EBADF;
        if (request == DRM_IOCTL_HPU_INFO)
            last_info = *static_cast<drm_hpu_info *>(arg);
        if (ioctl_fail != 0)
            return ioctl_fail;
        if (dead_fds.count(fd) != 0)
            return -ENODEV;
        if (const auto f = request_fail.find(request); f != request_fail.end())
            return f->second;
        if (!is_release(request, arg) && fail_at > 0 && ++acquire_calls == fail_at)
            return fail_errno;
        switch (request) {
        case DRM_IOCTL_HPU_INFO:
            return do_info(node->second, *static_cast<drm_hpu_info *>(arg));
        case DRM_IOCTL_HPU_BO_CREATE:
            return do_bo_create(*static_cast<drm_hpu_bo_create *>(arg));
        case DRM_IOCTL_HPU_BO_USERPTR:
            return do_userptr(*static_cast<drm_hpu_bo_userptr *>(arg));
        case DRM_IOCTL_HPU_BO_MMAP_OFFSET:
            return do_mmap_offset(*static_cast<drm_hpu_bo_mmap_offset *>(arg));
        case DRM_IOCTL_HPU_VM_BIND:
            return do_vm_bind(*static_cast<drm_hpu_vm_bind *>(arg));
        case DRM_IOCTL_HPU_QUEUE_CREATE:
            return do_queue_create(node->second, *static_cast<drm_hpu_queue_create *>(arg));
        case DRM_IOCTL_HPU_QUEUE_DESTROY:
            return do_queue_destroy(*static_cast<drm_hpu_queue_destroy *>(arg));
        case DRM_IOCTL_HPU_SUBMIT:
            return do_submit(*static_cast<drm_hpu_submit *>(arg));
        case DRM_IOCTL_HPU_EVENTS:
            return do_events(fd, *static_cast<drm_hpu_events *>(arg));
        case DRM_IOCTL_GEM_CLOSE:
            return do_gem_close(*static_cast<drm_gem_close *>(arg));
        case DRM_IOCTL_PRIME_HANDLE_TO_FD:
            return do_prime_export(*static_cast<drm_prime_handle *>(arg));
        case DRM_IOCTL_PRIME_FD_TO_HANDLE:
            return do_prime_import(*static_cast<drm_prime_handle *>(arg));
        case DRM_IOCTL_SYNCOBJ_CREATE:
            return do_syncobj_create(*static_cast<drm_syncobj_create *>(arg));
        case DRM_IOCTL_SYNCOBJ_DESTROY:
            return do_syncobj_destroy(*static_cast<drm_syncobj_destroy *>(arg));
        case DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD:
            return do_syncobj_export(*static_cast<drm_syncobj_handle *>(arg));
        case DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE:
            return do_syncobj_import(*static_cast<drm_syncobj_handle *>(arg));
        case DRM_IOCTL_SYNCOBJ_WAIT:
            return do_wait(*static_cast<drm_syncobj_wait *>(arg));
        case DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT:
            return do_timeline_wait(*static_cast<drm_syncobj_timeline_wait *>(arg));
        default:
            return -ENOTTY;
        }
    }

    int mmap(std::size_t len, int prot, int flags, int fd, std::int64_t offset, void **out) override
    {
        ++mmap_calls;
        if (fail_at > 0 && ++acquire_calls == fail_at)
            return fail_errno;
        if (open_fds.count(fd) == 0)
            return -EBADF;
        if (prot != (PROT_READ | PROT_WRITE) || flags != MAP_SHARED)
            return -EINVAL;
        for (auto &g : gem) {
            Bo &bo = *g.second;
            if (bo.mmap_offset != 0 && bo.mmap_offset == static_cast<std::uint64_t>(offset)) {
                if (len == 0 || len > bo.mem.size())
                    return -EINVAL;
                *out = bo.mem.data();
                ++mmaps[*out];
                return 0;
            }
        }
        return -EINVAL;
    }

    int munmap(void *addr, std::size_t /*len*/) override
    {
        ++munmap_calls;
        const auto it = mmaps.find(addr);
        if (it == mmaps.end()) {
            ++misuse;
            return -EINVAL;
        }
        if (--it->second == 0)
            mmaps.erase(it);
        return 0;
    }

    std::int64_t monotonic_ns() override { return now_ns; }

    // ---- Telemetry, firmware, processes (libhpu 1.3) ----
    drm_hpu_info_telemetry telemetry_answer{};
    drm_hpu_info_firmware firmware_answer{};
    bool has_telemetry = true;   // false: INFO TELEMETRY is -EINVAL (an older driver)
    bool has_firmware = true;
    std::vector<std::int64_t> sleeps;      // sleep_ns() calls
    std::function<void()> on_sleep;        // runs inside each sleep (after the clock moved)
    std::map<std::string, int> read_calls_by_path;

    void sleep_ns(std::int64_t ns) override
    {
        sleeps.push_back(ns);
        now_ns += ns;
        if (on_sleep)
            on_sleep();
    }

    // A process pid with name comm holding fds (fd number -> fdinfo text)
    // on /dev/accel/accel<node_index> (every fd; other fds via add_fd).
    void add_process(int pid, const std::string &comm)
    {
        const std::string p = std::to_string(pid);
        dirs["/proc"].push_back(p);
        dirs["/proc/" + p + "/fd"];
        files["/proc/" + p + "/comm"] = comm + "\n";
    }
    void add_fd(int pid, int fd, const std::string &target, const std::string &fdinfo)
    {
        const std::string p = "/proc/" + std::to_string(pid);
        dirs[p + "/fd"].push_back(std::to_string(fd));
        links[p + "/fd/" + std::to_string(fd)] = target;
        files[p + "/fdinfo/" + std::to_string(fd)] = fdinfo;
    }

    std::function<void(const std::string &)> on_read; // runs at each read_file() (before it reads)

    int read_file(const std::string &path, std::string &out) override
    {
        ++read_calls_by_path[path];
        if (on_read)
            on_read(path);
        if (auto it = read_fail.find(path); it != read_fail.end())
            return it->second;
        const auto it = files.find(path);
        if (it == files.end())
            return -ENOENT;
        out = it->second;
        return 0;
    }

    int list_dir(const std::string &path, std::vector<std::string> &out) override
    {
        if (auto it = list_fail.find(path); it != list_fail.end())
            return it->second;
        const auto it = dirs.find(path);
        if (it == dirs.end())
            return -ENOENT;
        out = it->second;
        return 0;
    }

    int read_link(const std::string &path, std::string &out) override
    {
        if (auto it = link_fail.find(path); it != link_fail.end())
            return it->second;
        const auto it = links.find(path);
        if (it == links.end())
            return -ENOENT;
        out = it->second;
        return 0;
    }

private:
    static void *ptr(__u64 p) { return reinterpret_cast<void *>(static_cast<uintptr_t>(p)); } // NOLINT(performance-no-int-to-ptr,cppcoreguidelines-pro-type-reinterpret-cast)

    static bool is_release(unsigned long request, void *arg)
    {
        if (request == DRM_IOCTL_GEM_CLOSE || request == DRM_IOCTL_SYNCOBJ_DESTROY ||
            request == DRM_IOCTL_HPU_QUEUE_DESTROY)
            return true;
        return request == DRM_IOCTL_HPU_VM_BIND && static_cast<drm_hpu_vm_bind *>(arg)->op == DRM_HPU_VM_UNMAP;
    }

    int do_info(const std::string &node, drm_hpu_info &req)
    {
        if (req.flags != 0 || req.pad != 0)
            return -EINVAL;
        const void *src = nullptr;
        std::size_t full = 0;
        if (req.op == DRM_HPU_INFO_DEVICE) {
            src = &nodes.at(node);
            full = sizeof(drm_hpu_info_device);
        } else if (req.op == DRM_HPU_INFO_MEMORY) {
            src = &memory_answer;
            full = sizeof(drm_hpu_info_memory);
        } else if (req.op == DRM_HPU_INFO_ERRORS) {
            src = &errors_answer;
            full = sizeof(drm_hpu_info_errors);
        } else if (req.op == DRM_HPU_INFO_TELEMETRY && has_telemetry) {
            src = &telemetry_answer;
            full = sizeof(drm_hpu_info_telemetry);
        } else if (req.op == DRM_HPU_INFO_FIRMWARE && has_firmware) {
            src = &firmware_answer;
            full = sizeof(drm_hpu_info_firmware);
        } else {
            return -EINVAL;
        }
        const std::size_t avail = full;
        if (answer_size >= 0)
            full = static_cast<std::size_t>(answer_size);
        const auto n = std::min<std::size_t>({req.size, full, avail});
        if (n > 0 && req.ptr == 0)
            return -EFAULT;
        if (n > 0)
            std::memcpy(ptr(req.ptr), src, n);
        req.size = static_cast<__u32>(full);
        return 0;
    }

    std::uint32_t new_handle(std::shared_ptr<Bo> bo)
    {
        const std::uint32_t h = next_handle_++;
        gem[h] = std::move(bo);
        return h;
    }

    int do_bo_create(drm_hpu_bo_create &req)
    {
        const std::uint32_t kind = req.flags & (DRM_HPU_BO_HBM | DRM_HPU_BO_HOST);
        if (req.size == 0 || (req.flags & ~(DRM_HPU_BO_HBM | DRM_HPU_BO_HOST | DRM_HPU_BO_CONTIGUOUS)) != 0 ||
            (kind != DRM_HPU_BO_HBM && kind != DRM_HPU_BO_HOST) ||
            (kind == DRM_HPU_BO_HOST && ((req.flags & DRM_HPU_BO_CONTIGUOUS) != 0 || req.page_size != 0)))
            return -EINVAL;
        const std::uint64_t page = kind == DRM_HPU_BO_HBM ? (2ULL << 20) : 4096ULL;
        auto bo = std::make_shared<Bo>();
        bo->size = (req.size + page - 1) / page * page;
        bo->flags = req.flags;
        if (kind == DRM_HPU_BO_HOST)
            bo->mem.resize(bo->size);
        req.size = bo->size;
        req.handle = new_handle(std::move(bo));
        return 0;
    }

    int do_userptr(drm_hpu_bo_userptr &req)
    {
        if (req.size == 0 || (req.addr & 4095U) != 0 || (req.size & 4095U) != 0 ||
            (req.flags & ~DRM_HPU_USERPTR_READONLY) != 0)
            return -EINVAL;
        auto bo = std::make_shared<Bo>();
        bo->size = req.size;
        bo->userptr = true;
        bo->user_addr = req.addr;
        req.handle = new_handle(std::move(bo));
        return 0;
    }

    int do_mmap_offset(drm_hpu_bo_mmap_offset &req)
    {
        if (req.pad != 0)
            return -EINVAL;
        const auto it = gem.find(req.handle);
        if (it == gem.end())
            return -ENOENT;
        if ((it->second->flags & DRM_HPU_BO_HOST) == 0)
            return -EINVAL;
        if (it->second->mmap_offset == 0)
            it->second->mmap_offset = (static_cast<std::uint64_t>(req.handle) + 1) << 32;
        req.offset = it->second->mmap_offset;
        return 0;
    }

    int do_vm_bind(drm_hpu_vm_bind &req)
    {
        if (req.pad != 0)
            return -EINVAL;
        if (req.op == DRM_HPU_VM_UNMAP) {
            if (req.flags != 0 || req.handle != 0 || req.bo_offset != 0 || req.size != 0)
                return -EINVAL;
            if (vm.erase(req.va) == 0) {
                ++misuse;
                return -ENOENT;
            }
            return 0;
        }
        if (req.op != DRM_HPU_VM_MAP || (req.flags & ~(DRM_HPU_VM_READONLY | DRM_HPU_VM_FIXED)) != 0)
            return -EINVAL;
        const auto it = gem.find(req.handle);
        if (it == gem.end())
            return -ENOENT;
        if (req.size == 0 || req.bo_offset + req.size > it->second->size)
            return -EINVAL;
        const std::uint64_t va = next_va_;
        next_va_ += (req.size + (2ULL << 20) - 1) / (2ULL << 20) * (2ULL << 20);
        vm[va] = Mapping{req.handle, it->second, req.size, req.flags};
        req.va = va;
        return 0;
    }

    int do_queue_create(const std::string &node, drm_hpu_queue_create &req)
    {
        if (req.flags != 0 || req.engine_class != DRM_HPU_ENGINE_DMA || req.engine >= nodes.at(node).num_dma)
            return -EINVAL;
        req.queue_id = next_queue_++;
        queues.insert(req.queue_id);
        return 0;
    }

    int do_queue_destroy(const drm_hpu_queue_destroy &req)
    {
        if (req.pad != 0)
            return -EINVAL;
        if (queues.erase(req.queue_id) == 0) {
            ++misuse;
            return -ENOENT;
        }
        return 0;
    }

    // The host bytes behind [va, va + size) of a HOST mapping, or nullptr.
    [[nodiscard]] const std::uint8_t *host_bytes(std::uint64_t va, std::uint64_t size) const
    {
        auto it = vm.upper_bound(va);
        if (it == vm.begin())
            return nullptr;
        --it;
        const Mapping &m = it->second;
        if (va + size > it->first + m.size || m.bo->mem.empty())
            return nullptr;
        return m.bo->mem.data() + (va - it->first); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }

    int do_submit(drm_hpu_submit &req)
    {
        if (req.flags != 0 || req.timeout_ms > 3600000U || queues.count(req.queue_id) == 0 || (req.cb_va & 7U) != 0 ||
            req.cb_size < 8 || (req.cb_size & 7U) != 0 || req.cb_size > (1U << 20) ||
            req.num_in_syncs > DRM_HPU_MAX_SYNCS || req.num_out_syncs > DRM_HPU_MAX_SYNCS)
            return -EINVAL;
        Job job;
        job.req = req;
        const auto *in = static_cast<const drm_hpu_sync *>(ptr(req.in_syncs));
        const auto *out = static_cast<const drm_hpu_sync *>(ptr(req.out_syncs));
        if ((req.num_in_syncs > 0 && in == nullptr) || (req.num_out_syncs > 0 && out == nullptr))
            return -EFAULT;
        job.in.assign(in, in + req.num_in_syncs);    // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        job.out.assign(out, out + req.num_out_syncs); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        for (const auto &s : job.in) {
            if (s.flags != 0)
                return -EINVAL;
            if (syncobjs.count(s.handle) == 0)
                return -ENOENT;
        }
        for (const auto &s : job.out) {
            if (s.flags != 0)
                return -EINVAL;
            if (syncobjs.count(s.handle) == 0)
                return -ENOENT;
        }
        const std::uint8_t *cb = host_bytes(req.cb_va, req.cb_size);
        if (cb == nullptr)
            return -EFAULT;
        job.cb.assign(cb, cb + req.cb_size); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        job.fence = std::make_shared<Fence>();
        if (auto_complete) {
            job.fence->signalled = true;
            job.fence->error = job_error;
        }
        for (const auto &s : job.out) {
            Syncobj &so = syncobjs[s.handle];
            if (s.point == 0) {
                so.fence = job.fence;
            } else {
                if (!so.points.empty() && so.points.rbegin()->first >= s.point)
                    ++misuse; // timeline points must increase
                so.points[s.point] = job.fence;
            }
        }
        req.seq = jobs.size() + 1;
        job.req.seq = req.seq;
        jobs.push_back(std::move(job));
        return 0;
    }

    int do_events(int fd, const drm_hpu_events &req)
    {
        if (req.pad != 0 || (req.flags & ~DRM_HPU_EVENTS_ENABLE) != 0)
            return -EINVAL;
        const std::lock_guard<std::mutex> lock(ev_mu_);
        if ((req.flags & DRM_HPU_EVENTS_ENABLE) != 0) {
            events_enabled_.insert(fd);
        } else {
            events_enabled_.erase(fd);
            ev_queue_.erase(fd);
        }
        return 0;
    }

    int do_gem_close(const drm_gem_close &req)
    {
        if (req.pad != 0)
            return -EINVAL;
        if (gem.erase(req.handle) == 0) {
            ++misuse;
            return -EINVAL;
        }
        return 0;
    }

    int do_prime_export(drm_prime_handle &req)
    {
        const auto it = gem.find(req.handle);
        if (it == gem.end())
            return -ENOENT;
        if (it->second->userptr)
            return -EINVAL;
        if ((req.flags & ~static_cast<__u32>(DRM_CLOEXEC | DRM_RDWR)) != 0)
            return -EINVAL;
        req.fd = next_fd_++;
        aux_fds[req.fd] = Aux{it->second, nullptr};
        return 0;
    }

    int do_prime_import(drm_prime_handle &req)
    {
        const auto a = aux_fds.find(req.fd);
        if (a == aux_fds.end() || !a->second.bo)
            return -EBADF;
        // Like the kernel: an object this file already has keeps its handle.
        for (const auto &g : gem) {
            if (g.second == a->second.bo) {
                req.handle = g.first;
                return 0;
            }
        }
        req.handle = new_handle(a->second.bo);
        return 0;
    }

    int do_syncobj_create(drm_syncobj_create &req)
    {
        if (req.flags != 0)
            return -EINVAL;
        req.handle = next_syncobj_++;
        syncobjs[req.handle] = Syncobj{};
        return 0;
    }

    int do_syncobj_destroy(const drm_syncobj_destroy &req)
    {
        if (req.pad != 0)
            return -EINVAL;
        if (syncobjs.erase(req.handle) == 0) {
            ++misuse;
            return -EINVAL;
        }
        return 0;
    }

    int do_syncobj_export(drm_syncobj_handle &req)
    {
        if (req.flags != DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE || req.pad != 0)
            return -EINVAL;
        const auto it = syncobjs.find(req.handle);
        if (it == syncobjs.end())
            return -ENOENT;
        if (!it->second.fence)
            return -EINVAL; // no fence yet
        req.fd = next_fd_++;
        aux_fds[req.fd] = Aux{nullptr, it->second.fence};
        return 0;
    }

    int do_syncobj_import(const drm_syncobj_handle &req)
    {
        if (req.flags != DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE || req.pad != 0)
            return -EINVAL;
        const auto it = syncobjs.find(req.handle);
        if (it == syncobjs.end())
            return -ENOENT;
        const auto a = aux_fds.find(req.fd);
        if (a == aux_fds.end() || !a->second.fence)
            return -EINVAL;
        it->second.fence = a->second.fence;
        return 0;
    }

    static int aux_ioctl(Aux &aux, unsigned long request, void *arg)
    {
        if (request != SYNC_IOC_FILE_INFO || !aux.fence)
            return -ENOTTY;
        auto &info = *static_cast<sync_file_info *>(arg);
        if (info.flags != 0 || info.pad != 0)
            return -EINVAL;
        info.status = !aux.fence->signalled ? 0 : (aux.fence->error != 0 ? aux.fence->error : 1);
        info.num_fences = 1;
        return 0;
    }

    // Shared by both waits: 0 when ready() holds, else -ETIME at the deadline.
    template <typename Ready>
    int wait_common(std::int64_t deadline, Ready &&ready)
    {
        wait_deadlines.push_back(deadline);
        if (on_wait)
            on_wait();
        now_ns += wait_advance_ns;
        if (!wait_script.empty()) {
            const int r = wait_script.front();
            wait_script.pop_front();
            if (r != 0)
                return r;
        }
        const int r = ready();
        if (r <= 0)
            return r;
        // Not ready: the wait blocks until the deadline passes.
        now_ns = std::max(now_ns, deadline);
        return -ETIME;
    }

    int do_wait(drm_syncobj_wait &req)
    {
        if (req.count_handles == 0 || req.pad != 0 ||
            (req.flags & ~static_cast<__u32>(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT)) != 0)
            return -EINVAL;
        const auto *h = static_cast<const __u32 *>(ptr(req.handles));
        return wait_common(req.timeout_nsec, [&]() {
            for (__u32 i = 0; i < req.count_handles; ++i) {
                const auto it = syncobjs.find(h[i]); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
                if (it == syncobjs.end())
                    return -ENOENT;
                if (!it->second.fence && (req.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT) == 0)
                    return -EINVAL;
                if (!it->second.fence || !it->second.fence->signalled)
                    return 1;
            }
            return 0;
        });
    }

    int do_timeline_wait(drm_syncobj_timeline_wait &req)
    {
        if (req.count_handles == 0 || req.pad != 0 ||
            (req.flags & ~static_cast<__u32>(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT)) != 0)
            return -EINVAL;
        const auto *h = static_cast<const __u32 *>(ptr(req.handles));
        const auto *p = static_cast<const __u64 *>(ptr(req.points));
        return wait_common(req.timeout_nsec, [&]() {
            for (__u32 i = 0; i < req.count_handles; ++i) {
                const auto it = syncobjs.find(h[i]); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
                if (it == syncobjs.end())
                    return -ENOENT;
                const auto &pts = it->second.points;
                const __u64 point = p[i]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
                if (pts.empty() || pts.rbegin()->first < point)
                    return (req.flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT) != 0 ? 1 : -EINVAL;
                for (const auto &e : pts) {
                    if (e.first <= point && !e.second->signalled)
                        return 1;
                }
            }
            return 0;
        });
    }

    static std::string hex(unsigned int v)
    {
        static constexpr const char *digits = "0123456789abcdef";
        std::string s;
        for (int shift = 12; shift >= 0; shift -= 4)
            s += digits[(v >> static_cast<unsigned>(shift)) & 0xfU]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        return "0x" + s + "\n";
    }

    mutable std::mutex ev_mu_;
    std::condition_variable ev_cv_;
    std::set<int> dev_fds_;                                        // locked
    std::map<int, std::deque<std::vector<std::uint8_t>>> ev_queue_; // locked
    std::map<int, std::uint64_t> efd_;                             // locked: eventfd counters
    std::set<int> events_enabled_;                                 // locked
    std::map<int, int> read_fail_fd_;                              // locked
    int next_fd_ = 100;
    std::uint32_t next_handle_ = 1;
    std::uint32_t next_syncobj_ = 1000;
    std::uint32_t next_queue_ = 1;
    std::uint64_t next_va_ = 0x100000000ULL;
};

// Installs a MockOs for the lifetime of the object.
class ScopedMock {
public:
    explicit ScopedMock(MockOs &mock) : prev_(hpu::detail::set_default_os(&mock)) {}
    ScopedMock(const ScopedMock &) = delete;
    ScopedMock &operator=(const ScopedMock &) = delete;
    ScopedMock(ScopedMock &&) = delete;
    ScopedMock &operator=(ScopedMock &&) = delete;
    ~ScopedMock() { hpu::detail::set_default_os(prev_); }

private:
    hpu::detail::Os *prev_;
};

// A plausible INFO answer.
inline drm_hpu_info_device make_answer(const char *serial, __u64 hbm, __u8 bus, __u8 nics = 10)
{
    drm_hpu_info_device a{};
    a.chip_id = DRM_HPU_CHIP_H1;
    a.revision = 0x0100;
    a.hbm_size = hbm;
    a.pci_domain = 0;
    a.pci_bus = bus;
    a.pci_dev = 0;
    a.pci_func = 0;
    a.hbm_stacks = 4;
    a.num_dma = 8;
    a.num_tpc = 8;
    a.num_mme = 2;
    a.num_nic = nics;
    a.spec_version = 1;
    std::strncpy(static_cast<char *>(a.serial), serial, sizeof(a.serial) - 1);
    for (unsigned int i = 0; i < sizeof(a.uuid); ++i)
        a.uuid[i] = static_cast<__u8>(0x10 + i + bus); // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    a.driver_major = 0;
    a.driver_minor = 1;
    a.driver_patch = 2;
    a.msix_vectors = 16;
    a.reset_count = 3;
    return a;
}

} // namespace hpu::test

#endif // HPU_TESTS_MOCK_OS_H
