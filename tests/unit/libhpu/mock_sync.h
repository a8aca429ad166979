// SPDX-License-Identifier: MIT
// libhpu's mock OS, synchronisation part (mock_os.h): syncobjs, fences,
// waits, dma-buf and sync_file fds.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_MOCK_SYNC_H
#define HPU_TESTS_MOCK_SYNC_H

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <linux/sync_file.h>

#include "drm/hpu_accel.h"
#include "mock_events.h"

namespace hpu::test {

// Synchronisation objects: fences, syncobjs (binary and timeline), their
// waits on the mock clock, and the fds a file hands out (dma-bufs of
// buffer objects, sync_files of fences) with SYNC_IOC_FILE_INFO.
class MockSync : public MockEvents {
public:
    struct Fence {
        bool signalled = false;
        int error = 0; // negative errno of a failed job
        std::uint64_t timestamp_ns = 0; // when it signalled (SYNC_IOC_FILE_INFO's per fence)
        // A merged fence (SYNC_IOC_MERGE): the fences that were pending
        // when it was made, as the kernel's dma_fence_unwrap_merge() keeps
        // them (signalled and error come from these then).
        std::vector<std::shared_ptr<Fence>> parts;
    };
    // f's state: signalled, and its error (a merged fence: when all its
    // parts are, with the first part's error, as a dma_fence_array).
    static std::pair<bool, int> state(const Fence &f)
    {
        if (f.parts.empty())
            return {f.signalled, f.error};
        int err = 0;
        for (const auto &p : f.parts) {
            const auto [sig, e] = state(*p);
            if (!sig)
                return {false, 0};
            err = err != 0 ? err : e;
        }
        return {true, err};
    }
    struct Bo {
        std::uint64_t size = 0;
        std::uint32_t flags = 0;      // DRM_HPU_BO_*, 0 for userptr
        bool userptr = false;
        std::uint64_t user_addr = 0;
        std::uint64_t mmap_offset = 0;
        std::vector<std::uint8_t> mem; // backing store of HOST objects
    };
    struct Syncobj {
        std::shared_ptr<Fence> fence;                         // binary
        std::map<std::uint64_t, std::shared_ptr<Fence>> points; // timeline
    };
    struct Aux { // a dma-buf or sync_file fd
        std::shared_ptr<Bo> bo;
        std::shared_ptr<Fence> fence;
    };

    std::map<std::uint32_t, Syncobj> syncobjs;
    std::map<int, Aux> aux_fds;

    // The syncobj waits seen.
    std::vector<std::int64_t> wait_deadlines;
    std::deque<int> wait_script;           // results of the next waits (e.g. -EINTR)
    std::int64_t wait_advance_ns = 0;      // the clock moves this much per wait
    std::function<void()> on_wait;         // runs inside each wait
    int merges = 0;                        // the SYNC_IOC_MERGE calls seen

protected:
    int do_syncobj_create(drm_syncobj_create &req)
    {
        if ((req.flags & ~DRM_SYNCOBJ_CREATE_SIGNALED) != 0)
            return -EINVAL;
        req.handle = next_syncobj_++;
        syncobjs[req.handle] = Syncobj{};
        if ((req.flags & DRM_SYNCOBJ_CREATE_SIGNALED) != 0) {
            syncobjs[req.handle].fence = std::make_shared<Fence>();
            syncobjs[req.handle].fence->signalled = true;
        }
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
        req.fd = new_fd();
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

    int aux_ioctl(const Aux &aux, unsigned long request, void *arg)
    {
        if (!aux.fence)
            return -ENOTTY;
        if (request == SYNC_IOC_MERGE)
            return merge(aux, *static_cast<sync_merge_data *>(arg));
        if (request != SYNC_IOC_FILE_INFO)
            return -ENOTTY;
        auto &info = *static_cast<sync_file_info *>(arg);
        if (info.flags != 0 || info.pad != 0)
            return -EINVAL;
        const auto [sig, err] = state(*aux.fence);
        info.status = !sig ? 0 : (err != 0 ? err : 1);
        // The fences, as the kernel unwraps a merged one: with num_fences,
        // each one's status and timestamp (0 while pending).
        std::vector<const Fence *> fences;
        if (aux.fence->parts.empty())
            fences.push_back(aux.fence.get());
        for (const auto &p : aux.fence->parts)
            fences.push_back(p.get());
        if (info.num_fences != 0) {
            if (info.num_fences < fences.size() || info.sync_fence_info == 0)
                return -EINVAL;
            const std::span<sync_fence_info> out(static_cast<sync_fence_info *>(ptr(info.sync_fence_info)),
                                                 fences.size());
            for (std::size_t i = 0; i < fences.size(); ++i) {
                const auto [s1, e1] = state(*fences[i]);
                out[i] = sync_fence_info{};
                out[i].status = !s1 ? 0 : (e1 != 0 ? e1 : 1);
                out[i].timestamp_ns = s1 ? fences[i]->timestamp_ns : 0;
            }
        }
        info.num_fences = static_cast<std::uint32_t>(fences.size());
        return 0;
    }

    // SYNC_IOC_MERGE as the kernel does it: the fences of both that are
    // still pending (a signalled one is left out, its error too).
    int merge(const Aux &a, sync_merge_data &req)
    {
        ++merges;
        const auto b = aux_fds.find(req.fd2);
        if (req.flags != 0 || req.pad != 0 || b == aux_fds.end() || !b->second.fence)
            return -EINVAL;
        auto m = std::make_shared<Fence>();
        const auto take = [&m](const std::shared_ptr<Fence> &f) {
            const auto add = [&m](const std::shared_ptr<Fence> &one) {
                if (!state(*one).first)
                    m->parts.push_back(one);
            };
            if (f->parts.empty())
                add(f);
            for (const auto &p : f->parts)
                add(p);
        };
        take(a.fence);
        take(b->second.fence);
        if (m->parts.empty())
            m->signalled = true; // a signalled stub, without error
        req.fence = new_fd();
        aux_fds[req.fence] = Aux{nullptr, m};
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
                if (!it->second.fence || !state(*it->second.fence).first)
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

private:
    std::uint32_t next_syncobj_ = 1000;
};

} // namespace hpu::test

#endif // HPU_TESTS_MOCK_SYNC_H
