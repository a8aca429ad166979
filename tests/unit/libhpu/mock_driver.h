// SPDX-License-Identifier: MIT
// libhpu's mock OS, driver part (mock_os.h): the fake hpu driver.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_MOCK_DRIVER_H
#define HPU_TESTS_MOCK_DRIVER_H

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>

#include "drm/hpu_accel.h"
#include "mock_sync.h"

namespace hpu::test {

// The fake hpu driver: device nodes answering INFO, buffer objects,
// VM_BIND, queues and SUBMIT, GEM close and PRIME, open/close/ioctl/mmap,
// a hard reset, failure injection and the leak count.
class MockDriver : public MockSync {
public:
    // Device nodes that open() accepts, with the INFO answer of each.
    std::map<std::string, drm_hpu_info_device> nodes;

    std::map<std::string, int> open_fail;
    int ioctl_fail = 0;      // returned by every ioctl when non-zero
    int close_fail = 0;      // returned by close when non-zero
    int answer_size = -1;    // overrides the size reported back when >= 0
    std::uint32_t last_queue_class = ~0U; // engine_class of the last QUEUE_CREATE accepted
    // Every queue made: id -> (engine_class, engine).
    std::map<std::uint32_t, std::pair<std::uint32_t, std::uint32_t>> queue_engines;

    // Observations.
    int open_calls = 0;
    int close_calls = 0;
    int ioctl_calls = 0;
    int last_open_flags = 0;
    unsigned long last_request = 0;
    drm_hpu_info last_info{};        // the request as received
    std::map<int, std::string> open_fds;   // fd -> node
    std::vector<int> closed_fds;

    struct Mapping {
        std::uint32_t handle = 0;
        std::shared_ptr<Bo> bo;
        std::uint64_t size = 0;
        std::uint32_t flags = 0;
    };
    struct Job {
        drm_hpu_submit req{};
        std::vector<std::uint8_t> cb;  // the command buffer as submitted
        std::vector<drm_hpu_sync> in, out;
        std::shared_ptr<Fence> fence;
        int wc_flushes = 0; // flush_wc_stores() calls before this SUBMIT
    };

    drm_hpu_info_memory memory_answer{};
    std::map<std::uint32_t, std::shared_ptr<Bo>> gem;      // handle -> object
    std::map<std::uint64_t, Mapping> vm;                   // va -> mapping
    std::set<std::uint32_t> queues;
    std::map<void *, int> mmaps;                           // address -> count
    std::vector<Job> jobs;
    bool auto_complete = true;  // jobs signal at submit
    int job_error = 0;          // error of auto-completed jobs
    drm_hpu_info_errors errors_answer{};
    std::set<int> dead_fds;                          // ioctls fail with -ENODEV (hard reset)
    drm_hpu_info_telemetry telemetry_answer{};
    drm_hpu_info_firmware firmware_answer{};
    bool has_telemetry = true;   // false: INFO TELEMETRY is -EINVAL (an older driver)
    bool has_firmware = true;
    bool hbm_mmap = true;        // false: HBM buffers cannot be mapped (before spec version 8)

    // Failure injection: the fail_at-th "acquiring" call (ioctl other than a
    // release, or mmap; counted from 1) returns fail_errno.
    int fail_at = 0;
    int fail_errno = -ENOMEM;
    int acquire_calls = 0;
    std::map<unsigned long, int> request_fail; // request -> errno (every call)
    int submit_fail_at = 0;  // the submit_fail_at-th SUBMIT (counted from 1) returns fail_errno
    int submit_calls = 0;    // the SUBMITs seen (and the entries of SUBMIT_ARRAYs)
    int submit_array_calls = 0;              // the SUBMIT_ARRAYs seen (driver 1.1)
    std::vector<std::uint32_t> submit_array_sizes; // count of each one that succeeded

    // Observations.
    std::map<unsigned long, int> request_calls;
    int mmap_calls = 0;
    int munmap_calls = 0;

    // User queues (driver 1.2): created by UQ_CREATE, run by the test.
    struct Uq {
        drm_hpu_uq_create req{};               // as created (Out fields filled)
        std::vector<std::uint8_t> db = std::vector<std::uint8_t>(DRM_HPU_UQ_DB_SIZE); // the doorbell page
        std::uint64_t done = 0;                // descriptors completed
        std::map<std::uint64_t, int> errors;   // point -> negative errno
        int dead = 0;                          // destroyed (-ECANCELED) or faulted
        std::vector<std::pair<std::uint64_t, std::shared_ptr<Fence>>> fences; // UQ_FENCE ones
        std::vector<drm_hpu_uq_desc> ran;      // the descriptors completed, in order
        // With lag, the driver takes completions in only when a UQ_WAIT
        // with a timeout sleeps (the interrupt after the write-back
        // record): seen is what it has taken in, done what the records say.
        bool lag = false;
        bool stuck = false;                    // with lag: no interrupt comes at all
        std::uint64_t seen = 0;
        [[nodiscard]] std::uint64_t driver_done() const { return lag ? seen : done; }
    };
    std::map<std::uint32_t, Uq> uqs;           // queue id -> user queue
    drm_hpu_info_uq uq_info{12, 4, 4096, 32, 0};
    struct UqFenceCall {
        std::uint32_t queue_id = 0;
        std::uint64_t point = 0;
        std::uint32_t handle = 0;
    };
    std::vector<UqFenceCall> uq_fence_calls;
    int db_mmap_fail = 0;                      // errno of the doorbell mmaps when non-zero

    // Makes node's device one with user queues (driver 1.2).
    void enable_user_queues(const std::string &node = "/dev/accel/accel0")
    {
        nodes.at(node).caps |= DRM_HPU_CAP_USER_QUEUES;
        nodes.at(node).driver_major = 1;
        nodes.at(node).driver_minor = 2;
    }

    // The doorbell's last value (descriptors announced) of user queue id.
    [[nodiscard]] std::uint32_t uq_doorbell(std::uint32_t id) const
    {
        std::uint32_t v = 0;
        std::memcpy(&v, uqs.at(id).db.data(), sizeof(v));
        return v;
    }

    // Runs up to n descriptors the doorbell announced, as the device:
    // reads each from the ring, writes its completion record (status, or
    // BAD_DESC for a wrong asid) and counts it; fences of the points
    // reached signal. Returns how many ran.
    std::size_t uq_complete(std::uint32_t id, std::size_t n = SIZE_MAX, std::uint32_t status = 0)
    {
        Uq &u = uqs.at(id);
        std::size_t ran = 0;
        while (ran < n && u.done < uq_doorbell(id) && u.dead == 0) {
            const std::uint32_t size = u.req.ring_size;
            // The device ignores a doorbell more than a ring ahead of what
            // it completed: the library must never ring one.
            if (uq_doorbell(id) - u.done > size) {
                ++misuse;
                break;
            }
            drm_hpu_uq_desc d{};
            const std::uint8_t *dp = host_bytes(u.req.ring_va + sizeof(d) * (u.done % size), sizeof(d));
            std::uint8_t *cp = mutable_bytes(u.req.cq_va + sizeof(drm_hpu_uq_cqe) * (u.done % u.req.cq_size),
                                             sizeof(drm_hpu_uq_cqe));
            if (dp == nullptr || cp == nullptr) {
                u.dead = -EFAULT;
                break;
            }
            std::memcpy(&d, dp, sizeof(d));
            const std::uint32_t st = d.asid != u.req.asid ? 4U /* BAD_DESC */ : status;
            drm_hpu_uq_cqe c{};
            c.seq = d.seq;
            c.status = st;
            c.index = u.done;
            c.time = static_cast<std::uint64_t>(now_ns - uq_info.time_offset_ns);
            std::memcpy(cp, &c, sizeof(c));
            u.ran.push_back(d);
            ++u.done;
            if (st != 0)
                u.errors[u.done] = cq_errno(st);
            ++ran;
        }
        uq_signal(u);
        return ran;
    }

    // The next descriptor of user queue id completes without a record
    // (dropped by the driver after a timeout, logged with err).
    void uq_skip(std::uint32_t id, int err)
    {
        Uq &u = uqs.at(id);
        ++u.done;
        u.errors[u.done] = err;
        uq_signal(u);
    }

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

    // A copy of [va, va + size) of a HOST mapping as the device would read
    // it now (descriptors, kernel binaries); empty when not mapped so.
    [[nodiscard]] std::vector<std::uint8_t> read_va(std::uint64_t va, std::uint64_t size) const
    {
        const std::uint8_t *p = host_bytes(va, size);
        return p == nullptr ? std::vector<std::uint8_t>{} : std::vector<std::uint8_t>(p, p + size); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
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
        const int fd = new_fd();
        open_fds[fd] = path;
        add_dev_fd(fd);
        return fd;
    }

    int close(int fd) override
    {
        ++close_calls;
        closed_fds.push_back(fd);
        if (aux_fds.erase(fd) == 1)
            return 0;
        if (close_event_fd(fd))
            return 0;
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
        case DRM_IOCTL_HPU_SUBMIT_ARRAY:
            return do_submit_array(node->second, *static_cast<drm_hpu_submit_array *>(arg));
        case DRM_IOCTL_HPU_EVENTS:
            return do_events(fd, *static_cast<drm_hpu_events *>(arg));
        case DRM_IOCTL_HPU_UQ_CREATE:
            return do_uq_create(node->second, *static_cast<drm_hpu_uq_create *>(arg));
        case DRM_IOCTL_HPU_UQ_WAIT:
            return do_uq_wait(*static_cast<drm_hpu_uq_wait *>(arg));
        case DRM_IOCTL_HPU_UQ_FENCE:
            return do_uq_fence(*static_cast<drm_hpu_uq_fence *>(arg));
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
        for (auto &q : uqs) {
            if (q.second.req.db_mmap_offset == static_cast<std::uint64_t>(offset) && q.second.dead == 0) {
                if (db_mmap_fail != 0)
                    return db_mmap_fail;
                if (len != DRM_HPU_UQ_DB_SIZE || (prot & PROT_EXEC) != 0 || flags != MAP_SHARED)
                    return -EINVAL;
                *out = q.second.db.data();
                ++mmaps[*out];
                return 0;
            }
        }
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

private:
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
        } else if (req.op == DRM_HPU_INFO_USER_QUEUES) {
            if ((nodes.at(node).caps & DRM_HPU_CAP_USER_QUEUES) == 0)
                return -EOPNOTSUPP;
            src = &uq_info;
            full = sizeof(drm_hpu_info_uq);
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
        if (it->second->userptr)
            return -EINVAL;
        if ((it->second->flags & DRM_HPU_BO_HBM) != 0) {
            if (!hbm_mmap)
                return -EOPNOTSUPP;
            // The BAR's bytes, backed here by host memory.
            it->second->mem.resize(it->second->size);
        }
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
        const drm_hpu_info_device &d = nodes.at(node);
        if (req.flags != 0 || req.engine_class >= DRM_HPU_MAX_ENGINE_CLASSES ||
            req.engine >= d.class_engines[req.engine_class]) // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
            return -EINVAL;
        last_queue_class = req.engine_class;
        req.queue_id = next_queue_++;
        queue_engines[req.queue_id] = {req.engine_class, req.engine};
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
        if (const auto u = uqs.find(req.queue_id); u != uqs.end()) {
            // Dropped with the descriptors not run; the page goes.
            u->second.dead = -ECANCELED;
            uq_signal(u->second);
        }
        return 0;
    }

    static int cq_errno(std::uint32_t status)
    {
        switch (status) {
        case 1:
            return -EFAULT;
        case 2:
            return -EINVAL;
        case 3:
            return -EPERM;
        case 6:
            return -ECANCELED;
        default:
            return -EIO;
        }
    }

    // Signals the UQ_FENCE fences of the points reached (or all, dead).
    void uq_signal(Uq &u)
    {
        for (auto &[point, f] : u.fences) {
            if (f->signalled)
                continue;
            if (point <= u.driver_done()) {
                f->signalled = true;
                const auto e = u.errors.find(point);
                f->error = e != u.errors.end() ? e->second : 0;
                f->timestamp_ns = static_cast<std::uint64_t>(now_ns);
            } else if (u.dead != 0) {
                f->signalled = true;
                f->error = u.dead;
            }
        }
    }

    static bool pow2(std::uint32_t v) { return v >= 2 && (v & (v - 1)) == 0; }

    int do_uq_create(const std::string &node, drm_hpu_uq_create &req)
    {
        const drm_hpu_info_device &d = nodes.at(node);
        if ((d.caps & DRM_HPU_CAP_USER_QUEUES) == 0)
            return -EOPNOTSUPP;
        if (req.flags != 0 || req.signal_sob != 0 || req.pad != 0 || req.reserved[0] != 0 || req.reserved[1] != 0 ||
            req.engine_class >= DRM_HPU_MAX_ENGINE_CLASSES ||
            req.engine >= d.class_engines[req.engine_class] || // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
            !pow2(req.ring_size) || !pow2(req.cq_size) || req.ring_size > uq_info.ring_max ||
            req.cq_size > uq_info.ring_max || req.cq_size < req.ring_size || (req.ring_va & 63U) != 0 ||
            (req.cq_va & 31U) != 0 || req.timeout_ms > 3600000U || req.queue_id != 0 || req.db_mmap_offset != 0 ||
            req.asid != 0)
            return -EINVAL;
        if (host_bytes(req.ring_va, std::uint64_t{32} * req.ring_size) == nullptr ||
            mutable_bytes(req.cq_va, std::uint64_t{32} * req.cq_size) == nullptr)
            return -EFAULT;
        std::size_t live = 0;
        for (const auto &u : uqs)
            live += u.second.dead == 0 ? 1 : 0;
        if (live >= uq_info.ctx_max)
            return -ENOSPC;
        req.queue_id = next_queue_++;
        req.db_mmap_offset = (1ULL << 30) + 4096ULL * req.queue_id;
        req.asid = 7;
        queues.insert(req.queue_id);
        queue_engines[req.queue_id] = {req.engine_class, req.engine};
        uqs[req.queue_id].req = req;
        return 0;
    }

    // The user queue id of this file, or nullptr.
    Uq *find_uq(std::uint32_t id)
    {
        const auto it = uqs.find(id);
        return it == uqs.end() || queues.count(id) == 0 ? nullptr : &it->second;
    }

    int do_uq_wait(drm_hpu_uq_wait &req)
    {
        if (req.flags != 0 || req.pad != 0)
            return -EINVAL;
        Uq *u = find_uq(req.queue_id);
        if (u == nullptr)
            return -ENOENT;
        if (req.point == 0 || req.point > uq_doorbell(req.queue_id))
            return -EINVAL;
        if (u->lag && !u->stuck && req.timeout_nsec != 0 && u->seen < u->done) {
            u->seen = u->done;
            uq_signal(*u);
        }
        const int r = wait_common(req.timeout_nsec,
                                  [&]() { return u->driver_done() >= req.point || u->dead != 0 ? 0 : 1; });
        if (r < 0)
            return r;
        const auto e = u->errors.find(req.point);
        req.status = req.point <= u->driver_done() ? (e != u->errors.end() ? e->second : 0) : u->dead;
        req.done = u->driver_done();
        return 0;
    }

    int do_uq_fence(const drm_hpu_uq_fence &req)
    {
        if (req.flags != 0 || req.pad != 0)
            return -EINVAL;
        Uq *u = find_uq(req.queue_id);
        if (u == nullptr)
            return -ENOENT;
        if (req.point == 0 || req.point > uq_doorbell(req.queue_id))
            return -EINVAL;
        const auto so = syncobjs.find(req.handle);
        if (so == syncobjs.end())
            return -ENOENT;
        uq_fence_calls.push_back({req.queue_id, req.point, req.handle});
        auto f = std::make_shared<Fence>();
        u->fences.emplace_back(req.point, f);
        uq_signal(*u);
        if (req.syncobj_point == 0) {
            so->second.fence = f;
        } else {
            so->second.points[req.syncobj_point] = f;
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

    std::uint8_t *mutable_bytes(std::uint64_t va, std::uint64_t size)
    {
        return const_cast<std::uint8_t *>(host_bytes(va, size)); // NOLINT(cppcoreguidelines-pro-type-const-cast)
    }

    // As the driver from version 1.1 (an older one: -EINVAL, as the DRM core
    // answers an unknown ioctl): every entry checked before any is queued.
    int do_submit_array(const std::string &node, drm_hpu_submit_array &req)
    {
        const drm_hpu_info_device &id = nodes.at(node);
        if (id.driver_major < 1 || (id.driver_major == 1 && id.driver_minor < 1))
            return -EINVAL;
        ++submit_array_calls;
        if (req.flags != 0 || req.count == 0 || req.count > DRM_HPU_MAX_SUBMITS || req.pad != 0)
            return -EINVAL;
        // libhpu passes its own struct's size; the mock reads that layout only.
        if (req.entry_size != sizeof(drm_hpu_submit))
            return -EINVAL;
        auto *subs = static_cast<drm_hpu_submit *>(ptr(req.submits));
        if (subs == nullptr)
            return -EFAULT;
        const std::span<drm_hpu_submit> all(subs, req.count);
        std::set<std::uint32_t> signalled; // out-syncs of the entries so far
        for (const drm_hpu_submit &e : all) {
            if (e.flags != 0 || queues.count(e.queue_id) == 0)
                return e.flags != 0 ? -EINVAL : -ENOENT;
            // In-syncs are looked up before anything is queued: one that
            // an earlier entry signals is refused.
            const auto *in = static_cast<const drm_hpu_sync *>(ptr(e.in_syncs));
            const auto *out = static_cast<const drm_hpu_sync *>(ptr(e.out_syncs));
            for (std::uint32_t i = 0; in != nullptr && i < e.num_in_syncs; ++i) {
                if (signalled.count(in[i].handle) != 0) // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
                    return -EINVAL;
            }
            for (std::uint32_t i = 0; out != nullptr && i < e.num_out_syncs; ++i)
                signalled.insert(out[i].handle); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        }
        for (drm_hpu_submit &e : all) {
            if (const int err = do_submit(e); err < 0)
                return err; // (the mock is not all-or-nothing past the checks above)
        }
        submit_array_sizes.push_back(req.count);
        return 0;
    }

    int do_submit(drm_hpu_submit &req)
    {
        if (++submit_calls == submit_fail_at)
            return fail_errno;
        if (req.flags != 0 || req.timeout_ms > 3600000U || queues.count(req.queue_id) == 0 || (req.cb_va & 7U) != 0 ||
            req.cb_size < 8 || (req.cb_size & 7U) != 0 || req.cb_size > (1U << 20) ||
            req.num_in_syncs > DRM_HPU_MAX_SYNCS || req.num_out_syncs > DRM_HPU_MAX_SYNCS)
            return -EINVAL;
        Job job;
        job.req = req;
        job.wc_flushes = wc_flushes;
        const auto *in = static_cast<const drm_hpu_sync *>(ptr(req.in_syncs));
        const auto *out = static_cast<const drm_hpu_sync *>(ptr(req.out_syncs));
        if ((req.num_in_syncs > 0 && in == nullptr) || (req.num_out_syncs > 0 && out == nullptr))
            return -EFAULT;
        job.in.assign(in, in + req.num_in_syncs);    // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        job.out.assign(out, out + req.num_out_syncs); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        for (const auto &s : job.in) {
            if (s.flags != 0)
                return -EINVAL;
            const auto it = syncobjs.find(s.handle);
            if (it == syncobjs.end())
                return -ENOENT;
            // As drm_syncobj_find_fence() without WAIT_FOR_SUBMIT
            // (hpu_job.c): no fence (at the point) yet is -EINVAL.
            const auto &pts = it->second.points;
            if (s.point == 0 ? !it->second.fence : (pts.empty() || pts.rbegin()->first < s.point))
                return -EINVAL;
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
        if ((req.flags & ~static_cast<__u32>(DRM_CLOEXEC | DRM_RDWR)) != 0)
            return -EINVAL;
        req.fd = new_fd();
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

    std::uint32_t next_handle_ = 1;
    std::uint32_t next_queue_ = 1;
    std::uint64_t next_va_ = 0x100000000ULL;
};

} // namespace hpu::test

#endif // HPU_TESTS_MOCK_DRIVER_H
