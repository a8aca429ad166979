// SPDX-License-Identifier: MIT
// libhpu's mock OS, events part (mock_os.h): DRM events and eventfds.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_MOCK_EVENTS_H
#define HPU_TESTS_MOCK_EVENTS_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include <poll.h>

#include "drm/hpu_accel.h"
#include "mock_host.h"

namespace hpu::test {

// Events and eventfds: DRM events queued on device files, poll(), read()
// and write() of device files and eventfds, DRM_HPU_EVENTS.
class MockEvents : public MockHost {
public:
    // Everything below marked "locked" is guarded by ev_mu_ because the
    // library's event thread calls poll() and read() concurrently with the
    // test's thread; the rest of the mock is used by one thread only.
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
    // The flags of the last accepted DRM_HPU_EVENTS on fd (locked).
    std::uint32_t events_flags(int fd)
    {
        const std::lock_guard<std::mutex> lock(ev_mu_);
        const auto it = events_flags_.find(fd);
        return it == events_flags_.end() ? 0 : it->second;
    }
    // Refuse DRM_HPU_EVENTS_ERROR_INFO, as a driver before it does.
    bool events_old_driver = false;
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
        const int fd = new_fd();
        efd_[fd] = 0;
        return fd;
    }

protected:
    int do_events(int fd, const drm_hpu_events &req)
    {
        // An older driver (events_old_driver) knows only ENABLE.
        const std::uint32_t known =
            DRM_HPU_EVENTS_ENABLE | (events_old_driver ? 0U : static_cast<std::uint32_t>(DRM_HPU_EVENTS_ERROR_INFO));
        if (req.pad != 0 || (req.flags & ~known) != 0 ||
            (req.flags & (DRM_HPU_EVENTS_ENABLE | DRM_HPU_EVENTS_ERROR_INFO)) == DRM_HPU_EVENTS_ERROR_INFO)
            return -EINVAL;
        const std::lock_guard<std::mutex> lock(ev_mu_);
        events_flags_[fd] = req.flags;
        if ((req.flags & DRM_HPU_EVENTS_ENABLE) != 0) {
            events_enabled_.insert(fd);
        } else {
            events_enabled_.erase(fd);
            ev_queue_.erase(fd);
        }
        return 0;
    }

    // Registers fd as an open device file (locked).
    void add_dev_fd(int fd)
    {
        const std::lock_guard<std::mutex> lock(ev_mu_);
        dev_fds_.insert(fd);
    }
    // Closes fd if it is an eventfd (true), else forgets the device file fd
    // and its events (false). Locked.
    bool close_event_fd(int fd)
    {
        const std::lock_guard<std::mutex> lock(ev_mu_);
        if (efd_.erase(fd) == 1)
            return true;
        dev_fds_.erase(fd);
        ev_queue_.erase(fd);
        events_enabled_.erase(fd);
        ev_cv_.notify_all();
        return false;
    }

private:
    mutable std::mutex ev_mu_;
    std::condition_variable ev_cv_;
    std::set<int> dev_fds_;                                        // locked
    std::map<int, std::deque<std::vector<std::uint8_t>>> ev_queue_; // locked
    std::map<int, std::uint64_t> efd_;                             // locked: eventfd counters
    std::set<int> events_enabled_;                                 // locked
    std::map<int, std::uint32_t> events_flags_;                    // locked
    std::map<int, int> read_fail_fd_;                              // locked
};

} // namespace hpu::test

#endif // HPU_TESTS_MOCK_EVENTS_H
