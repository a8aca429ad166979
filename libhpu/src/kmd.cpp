// SPDX-License-Identifier: MIT
// The kernel-interface layer (kmd.h): the ioctl structures, the restart on
// EINTR/EAGAIN, and the HPU_TRACE=ioctl trace.
//
// Copyright (c) 2026 The hpu authors
#include "kmd.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <linux/sync_file.h>

namespace hpu::detail {

namespace {

std::uint64_t to_u64(const void *p)
{
    return reinterpret_cast<std::uintptr_t>(p); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

const char *info_op_name(std::uint32_t op)
{
    switch (op) {
    case DRM_HPU_INFO_DEVICE:
        return "DEVICE";
    case DRM_HPU_INFO_MEMORY:
        return "MEMORY";
    case DRM_HPU_INFO_ERRORS:
        return "ERRORS";
    case DRM_HPU_INFO_TELEMETRY:
        return "TELEMETRY";
    case DRM_HPU_INFO_FIRMWARE:
        return "FIRMWARE";
    case DRM_HPU_INFO_USER_QUEUES:
        return "USER_QUEUES";
    default:
        return "?";
    }
}

// Copies up to DRM_HPU_MAX_SYNCS sync points into the uapi array.
std::uint32_t fill_syncs(std::span<const SyncPoint> from, std::array<drm_hpu_sync, DRM_HPU_MAX_SYNCS> &to)
{
    std::uint32_t n = 0;
    for (const SyncPoint &s : from) {
        to.at(n).handle = s.handle;
        to.at(n).point = s.point;
        ++n;
    }
    return n;
}

} // namespace

bool ioctl_trace_requested()
{
    const char *env = std::getenv("HPU_TRACE"); // NOLINT(concurrency-mt-unsafe): read, never set, by the library
    if (env == nullptr)
        return false;
    std::string_view rest(env);
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const std::string_view word = rest.substr(0, comma);
        if (word == "ioctl" || word == "all")
            return true;
        if (comma == std::string_view::npos)
            break;
        rest.remove_prefix(comma + 1);
    }
    return false;
}

// One line of the ioctl trace: "hpu: ioctl fd=3 NAME key=value ... = result
// key=value ... [duration us]".
class Kmd::Trace {
public:
    explicit Trace(std::string start) : text_(std::move(start)) {}

    Trace &u(const char *key, std::uint64_t v) { return add(key, v, 10, ""); }
    Trace &x(const char *key, std::uint64_t v) { return add(key, v, 16, "0x"); }
    Trace &i(const char *key, std::int64_t v)
    {
        if (v < 0) {
            text_ += ' ';
            text_ += key;
            text_ += "=-";
            append_number(static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(v), 10);
            return *this;
        }
        return u(key, static_cast<std::uint64_t>(v));
    }
    Trace &s(const char *key, const char *v)
    {
        text_ += ' ';
        text_ += key;
        text_ += '=';
        text_ += v;
        return *this;
    }
    Trace &word(const char *w)
    {
        text_ += ' ';
        text_ += w;
        return *this;
    }

    void result(int ret)
    {
        text_ += " = ";
        if (ret < 0) {
            text_ += '-';
            append_number(static_cast<std::uint64_t>(-static_cast<std::int64_t>(ret)), 10);
            const char *name = strerrorname_np(-ret);
            text_ += " (";
            text_ += name != nullptr ? name : "?";
            text_ += ')';
        } else {
            append_number(static_cast<std::uint64_t>(ret), 10);
        }
    }

    void finish(std::int64_t ns, std::FILE *out)
    {
        const auto n = static_cast<std::uint64_t>(ns < 0 ? 0 : ns);
        text_ += " [";
        append_number(n / 1000, 10);
        text_ += '.';
        const std::uint64_t frac = n % 1000;
        if (frac < 100)
            text_ += '0';
        if (frac < 10)
            text_ += '0';
        append_number(frac, 10);
        text_ += " us]\n";
        // One write per line, so lines of several threads do not mix.
        (void)std::fputs(text_.c_str(), out);
    }

private:
    Trace &add(const char *key, std::uint64_t v, int base, const char *prefix)
    {
        text_ += ' ';
        text_ += key;
        text_ += '=';
        text_ += prefix;
        append_number(v, base);
        return *this;
    }
    void append_number(std::uint64_t v, int base)
    {
        std::array<char, 24> buf{};
        const auto res = std::to_chars(buf.begin(), buf.end(), v, base);
        text_.append(buf.data(), res.ptr);
    }

    std::string text_;
};

Kmd::Kmd(Os &os, int fd, std::atomic<bool> *lost)
    : os_(&os), fd_(fd), lost_(lost), trace_(ioctl_trace_requested() ? stderr : nullptr)
{
}

int Kmd::ioctl(int fd, unsigned long request, void *arg)
{
    int ret = 0;
    do {
        ret = os_->ioctl(fd, request, arg);
    } while (ret == -EINTR || ret == -EAGAIN);
    if (ret == -ENODEV && lost_ != nullptr && fd == fd_)
        lost_->store(true, std::memory_order_release);
    return ret;
}

// Issues request on fd_ (in: the arguments for the trace, out: what the
// kernel answered, printed on success).
template <typename In, typename Out>
int Kmd::call(const char *name, unsigned long request, void *arg, In &&in, Out &&out)
{
    if (trace_ == nullptr)
        return ioctl(fd_, request, arg);
    std::optional<Trace> t;
    try {
        t.emplace("hpu: ioctl fd=" + std::to_string(fd_) + " " + name);
        in(*t);
    } catch (...) {
        t.reset(); // no memory for the trace line: the call itself still goes
    }
    const auto t0 = std::chrono::steady_clock::now();
    const int ret = ioctl(fd_, request, arg);
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
    if (t) {
        try {
            t->result(ret);
            if (ret >= 0)
                out(*t);
            t->finish(static_cast<std::int64_t>(ns.count()), trace_);
        } catch (...) { // NOLINT(bugprone-empty-catch)
            // As above: the line is lost, the result is not.
        }
    }
    return ret;
}

namespace {
const auto kNothing = [](auto & /*t*/) {};
} // namespace

int Kmd::info(std::uint32_t op, void *answer, std::uint32_t size, std::uint32_t min_size)
{
    drm_hpu_info req{};
    req.op = op;
    req.ptr = to_u64(answer);
    req.size = size;
    const int err = call(
        "INFO", DRM_IOCTL_HPU_INFO, &req, [&](Trace &t) { t.s("op", info_op_name(op)).u("size", size); },
        [&](Trace &t) { t.u("size", req.size); });
    if (err < 0)
        return err;
    // Answers only grow: a kernel of this ABI or newer answers at least this.
    return req.size < (min_size != 0 ? min_size : size) ? -EPROTO : 0;
}

int Kmd::info_device(drm_hpu_info_device &out)
{
    constexpr std::uint32_t kBefore = offsetof(drm_hpu_info_device, class_engines);
    constexpr std::uint8_t kMaxDma = 8;
    out = drm_hpu_info_device{};
    const int err = info(DRM_HPU_INFO_DEVICE, &out, sizeof(out), kBefore);
    if (err < 0)
        return err;
    // A driver before the compute engines answers without class_engines
    // (left zero above): it queues to its DMA engines only.
    const bool any = std::any_of(std::begin(out.class_engines), std::end(out.class_engines),
                                 [](std::uint8_t n) { return n != 0; });
    if (!any)
        out.class_engines[DRM_HPU_ENGINE_DMA] = std::min(out.num_dma, kMaxDma);
    return 0;
}

int Kmd::bo_create(std::uint64_t &size, std::uint32_t flags, std::uint32_t &handle)
{
    drm_hpu_bo_create req{};
    req.size = size;
    req.page_size = 0;
    req.flags = flags;
    const int err = call(
        "BO_CREATE", DRM_IOCTL_HPU_BO_CREATE, &req, [&](Trace &t) { t.u("size", size).x("flags", flags); },
        [&](Trace &t) { t.u("handle", req.handle).u("size", req.size); });
    if (err < 0)
        return err;
    handle = req.handle;
    size = req.size;
    return err;
}

int Kmd::bo_userptr(std::uint64_t addr, std::uint64_t size, bool readonly, std::uint32_t &handle)
{
    drm_hpu_bo_userptr req{};
    req.addr = addr;
    req.size = size;
    req.flags = readonly ? DRM_HPU_USERPTR_READONLY : 0;
    const int err = call(
        "BO_USERPTR", DRM_IOCTL_HPU_BO_USERPTR, &req,
        [&](Trace &t) { t.x("addr", addr).u("size", size).x("flags", req.flags); },
        [&](Trace &t) { t.u("handle", req.handle); });
    if (err < 0)
        return err;
    handle = req.handle;
    return err;
}

int Kmd::bo_mmap_offset(std::uint32_t handle, std::uint64_t &offset)
{
    drm_hpu_bo_mmap_offset req{};
    req.handle = handle;
    const int err = call(
        "BO_MMAP_OFFSET", DRM_IOCTL_HPU_BO_MMAP_OFFSET, &req, [&](Trace &t) { t.u("handle", handle); },
        [&](Trace &t) { t.x("offset", req.offset); });
    if (err < 0)
        return err;
    offset = req.offset;
    return err;
}

int Kmd::vm_map(std::uint32_t handle, std::uint64_t size, bool readonly, std::uint64_t &va)
{
    drm_hpu_vm_bind req{};
    req.op = DRM_HPU_VM_MAP;
    req.flags = readonly ? DRM_HPU_VM_READONLY : 0;
    req.handle = handle;
    req.bo_offset = 0;
    req.size = size;
    const int err = call(
        "VM_BIND", DRM_IOCTL_HPU_VM_BIND, &req,
        [&](Trace &t) { t.word("MAP").u("handle", handle).u("size", size).x("flags", req.flags); },
        [&](Trace &t) { t.x("va", req.va); });
    if (err < 0)
        return err;
    if (req.va == 0)
        return -EPROTO;
    va = req.va;
    return err;
}

int Kmd::vm_unmap(std::uint64_t va)
{
    drm_hpu_vm_bind req{};
    req.op = DRM_HPU_VM_UNMAP;
    req.va = va;
    return call(
        "VM_BIND", DRM_IOCTL_HPU_VM_BIND, &req, [&](Trace &t) { t.word("UNMAP").x("va", va); }, kNothing);
}

int Kmd::gem_close(std::uint32_t handle)
{
    drm_gem_close req{};
    req.handle = handle;
    return call(
        "GEM_CLOSE", DRM_IOCTL_GEM_CLOSE, &req, [&](Trace &t) { t.u("handle", handle); }, kNothing);
}

int Kmd::prime_import(int fd, std::uint32_t &handle)
{
    drm_prime_handle req{};
    req.fd = fd;
    const int err = call(
        "PRIME_FD_TO_HANDLE", DRM_IOCTL_PRIME_FD_TO_HANDLE, &req, [&](Trace &t) { t.i("fd", fd); },
        [&](Trace &t) { t.u("handle", req.handle); });
    if (err < 0)
        return err;
    handle = req.handle;
    return err;
}

int Kmd::prime_export(std::uint32_t handle, int &fd)
{
    drm_prime_handle req{};
    req.handle = handle;
    req.flags = DRM_CLOEXEC | DRM_RDWR;
    req.fd = -1;
    const int err = call(
        "PRIME_HANDLE_TO_FD", DRM_IOCTL_PRIME_HANDLE_TO_FD, &req,
        [&](Trace &t) { t.u("handle", handle).x("flags", req.flags); }, [&](Trace &t) { t.i("fd", req.fd); });
    if (err < 0)
        return err;
    if (req.fd < 0)
        return -EPROTO;
    fd = req.fd;
    return err;
}

int Kmd::syncobj_create(std::uint32_t &handle, bool signalled)
{
    drm_syncobj_create req{};
    req.flags = signalled ? DRM_SYNCOBJ_CREATE_SIGNALED : 0U;
    const int err = call("SYNCOBJ_CREATE", DRM_IOCTL_SYNCOBJ_CREATE, &req, kNothing,
                         [&](Trace &t) { t.u("handle", req.handle); });
    if (err < 0)
        return err;
    handle = req.handle;
    return err;
}

int Kmd::syncobj_destroy(std::uint32_t handle)
{
    drm_syncobj_destroy req{};
    req.handle = handle;
    return call(
        "SYNCOBJ_DESTROY", DRM_IOCTL_SYNCOBJ_DESTROY, &req, [&](Trace &t) { t.u("handle", handle); }, kNothing);
}

// A wait with an absolute deadline (CLOCK_MONOTONIC) that the kernel ended
// with -ETIME while the library's clock is still before the deadline is
// asked again. Linux turns the deadline into a jiffies count from the
// current jiffies value, which can lag the monotonic clock by a few ticks
// (a timer tick delivered late, as a guest whose vCPU was descheduled
// sees it): such a wait times out that much early. Every caller promises
// -ETIME only once the deadline has passed. A deadline at or before now
// (a poll) is one call. The retries are counted: where the kernel's clock
// runs ahead of the process's (a time namespace with an offset: DRM
// compares the deadline with the host's clock), every wait would end at
// once, and the loop would spin until the deadline.
template <typename Wait> int Kmd::until_deadline(std::int64_t deadline_ns, Wait &&wait)
{
    constexpr int kEarlyRetries = 8; // a late tick costs one or two
    for (int early = 0;; ++early) {
        const int ret = wait();
        if (ret != -ETIME || early == kEarlyRetries || os_->monotonic_ns() >= deadline_ns)
            return ret;
    }
}

int Kmd::syncobj_wait(std::uint32_t handle, std::int64_t deadline_ns)
{
    drm_syncobj_wait req{};
    req.handles = to_u64(&handle);
    req.timeout_nsec = deadline_ns;
    req.count_handles = 1;
    req.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
    return until_deadline(deadline_ns, [&] {
        return call(
            "SYNCOBJ_WAIT", DRM_IOCTL_SYNCOBJ_WAIT, &req,
            [&](Trace &t) { t.u("handle", handle).i("deadline_ns", deadline_ns).x("flags", req.flags); }, kNothing);
    });
}

int Kmd::syncobj_timeline_wait(std::uint32_t handle, std::uint64_t point, std::int64_t deadline_ns)
{
    drm_syncobj_timeline_wait req{};
    req.handles = to_u64(&handle);
    req.points = to_u64(&point);
    req.timeout_nsec = deadline_ns;
    req.count_handles = 1;
    req.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
    return until_deadline(deadline_ns, [&] {
        return call(
            "SYNCOBJ_TIMELINE_WAIT", DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &req,
            [&](Trace &t) { t.u("handle", handle).u("point", point).i("deadline_ns", deadline_ns); }, kNothing);
    });
}

int Kmd::syncobj_export_sync_file(std::uint32_t handle, int &fd)
{
    drm_syncobj_handle req{};
    req.handle = handle;
    req.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
    req.fd = -1;
    const int err = call(
        "SYNCOBJ_HANDLE_TO_FD", DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &req,
        [&](Trace &t) { t.u("handle", handle).word("SYNC_FILE"); }, [&](Trace &t) { t.i("fd", req.fd); });
    if (err < 0)
        return err;
    if (req.fd < 0)
        return -EPROTO;
    fd = req.fd;
    return err;
}

int Kmd::syncobj_import_sync_file(std::uint32_t handle, int fd)
{
    drm_syncobj_handle req{};
    req.handle = handle;
    req.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
    req.fd = fd;
    return call(
        "SYNCOBJ_FD_TO_HANDLE", DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &req,
        [&](Trace &t) { t.u("handle", handle).i("fd", fd).word("SYNC_FILE"); }, kNothing);
}

int Kmd::queue_create(std::uint32_t engine_class, std::uint32_t engine, std::uint32_t &queue_id)
{
    drm_hpu_queue_create req{};
    req.engine_class = engine_class;
    req.engine = engine;
    const int err = call(
        "QUEUE_CREATE", DRM_IOCTL_HPU_QUEUE_CREATE, &req,
        [&](Trace &t) { t.u("class", engine_class).u("engine", engine); },
        [&](Trace &t) { t.u("queue", req.queue_id); });
    if (err < 0)
        return err;
    queue_id = req.queue_id;
    return err;
}

int Kmd::queue_destroy(std::uint32_t queue_id)
{
    drm_hpu_queue_destroy req{};
    req.queue_id = queue_id;
    return call(
        "QUEUE_DESTROY", DRM_IOCTL_HPU_QUEUE_DESTROY, &req, [&](Trace &t) { t.u("queue", queue_id); }, kNothing);
}

int Kmd::submit(const SubmitArgs &args, std::uint64_t &seq)
{
    if (args.waits.size() > DRM_HPU_MAX_SYNCS || args.signals.size() > DRM_HPU_MAX_SYNCS)
        return -EINVAL;
    std::array<drm_hpu_sync, DRM_HPU_MAX_SYNCS> in{};
    std::array<drm_hpu_sync, DRM_HPU_MAX_SYNCS> out{};
    drm_hpu_submit req{};
    req.queue_id = args.queue_id;
    req.cb_va = args.cb_va;
    req.cb_size = args.cb_size;
    req.num_in_syncs = fill_syncs(args.waits, in);
    req.in_syncs = req.num_in_syncs != 0 ? to_u64(in.data()) : 0;
    req.num_out_syncs = fill_syncs(args.signals, out);
    req.out_syncs = req.num_out_syncs != 0 ? to_u64(out.data()) : 0;
    req.timeout_ms = args.timeout_ms;
    // The job may read what the caller stored through a write-combining
    // mapping of device memory (hpu_buffer_map()): drain those stores
    // first, as a doorbell write must follow them (registers.md, version 8).
    os_->flush_wc_stores();
    const int err = call(
        "SUBMIT", DRM_IOCTL_HPU_SUBMIT, &req,
        [&](Trace &t) {
            t.u("queue", req.queue_id).x("cb_va", req.cb_va).u("cb_size", req.cb_size);
            t.u("waits", req.num_in_syncs).u("signals", req.num_out_syncs).u("timeout_ms", req.timeout_ms);
        },
        [&](Trace &t) { t.u("seq", req.seq); });
    if (err < 0)
        return err;
    seq = req.seq;
    return err;
}

int Kmd::submit_array(std::span<const SubmitArgs> args, std::span<std::uint64_t> seqs)
{
    if (args.empty() || args.size() > DRM_HPU_MAX_SUBMITS || seqs.size() != args.size())
        return -EINVAL;
    std::array<drm_hpu_submit, DRM_HPU_MAX_SUBMITS> reqs{};
    std::vector<std::array<drm_hpu_sync, DRM_HPU_MAX_SYNCS>> syncs;
    try {
        syncs.resize(2 * args.size());
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
        const SubmitArgs &a = args[i];
        if (a.waits.size() > DRM_HPU_MAX_SYNCS || a.signals.size() > DRM_HPU_MAX_SYNCS)
            return -EINVAL;
        drm_hpu_submit &req = reqs.at(i);
        auto &in = syncs.at(2 * i);
        auto &out = syncs.at(2 * i + 1);
        req.queue_id = a.queue_id;
        req.cb_va = a.cb_va;
        req.cb_size = a.cb_size;
        req.num_in_syncs = fill_syncs(a.waits, in);
        req.in_syncs = req.num_in_syncs != 0 ? to_u64(in.data()) : 0;
        req.num_out_syncs = fill_syncs(a.signals, out);
        req.out_syncs = req.num_out_syncs != 0 ? to_u64(out.data()) : 0;
        req.timeout_ms = a.timeout_ms;
    }
    drm_hpu_submit_array req{};
    req.count = static_cast<std::uint32_t>(args.size());
    req.submits = to_u64(reqs.data());
    req.entry_size = sizeof(drm_hpu_submit);
    // As submit(): the jobs may read stores made through write-combining
    // mappings of device memory.
    os_->flush_wc_stores();
    const int err = call(
        "SUBMIT_ARRAY", DRM_IOCTL_HPU_SUBMIT_ARRAY, &req,
        [&](Trace &t) {
            t.u("count", req.count);
            for (std::uint32_t i = 0; i < req.count; ++i)
                t.u("queue", reqs.at(i).queue_id).u("cb_size", reqs.at(i).cb_size);
        },
        [&](Trace &t) {
            for (std::uint32_t i = 0; i < req.count; ++i)
                t.u("seq", reqs.at(i).seq);
        });
    if (err < 0)
        return err;
    for (std::size_t i = 0; i < args.size(); ++i)
        seqs[i] = reqs.at(i).seq;
    return err;
}

int Kmd::uq_create(drm_hpu_uq_create &req)
{
    return call(
        "UQ_CREATE", DRM_IOCTL_HPU_UQ_CREATE, &req,
        [&](Trace &t) {
            t.u("class", req.engine_class).u("engine", req.engine).x("flags", req.flags).u("ring_size", req.ring_size);
            t.x("ring_va", req.ring_va).x("cq_va", req.cq_va).u("cq_size", req.cq_size).u("timeout_ms", req.timeout_ms);
        },
        [&](Trace &t) { t.u("queue", req.queue_id).x("db_offset", req.db_mmap_offset).u("asid", req.asid); });
}

int Kmd::uq_wait(std::uint32_t queue_id, std::uint64_t point, std::int64_t deadline_ns, std::int32_t &status,
                 std::uint64_t &done)
{
    drm_hpu_uq_wait req{};
    req.queue_id = queue_id;
    req.point = point;
    req.timeout_nsec = deadline_ns;
    const int err = until_deadline(deadline_ns, [&] {
        return call(
            "UQ_WAIT", DRM_IOCTL_HPU_UQ_WAIT, &req,
            [&](Trace &t) { t.u("queue", queue_id).u("point", point).i("deadline_ns", deadline_ns); },
            [&](Trace &t) { t.i("status", req.status).u("done", req.done); });
    });
    if (err < 0)
        return err;
    status = req.status;
    done = req.done;
    return err;
}

int Kmd::uq_fence(std::uint32_t queue_id, std::uint64_t point, std::uint32_t handle)
{
    drm_hpu_uq_fence req{};
    req.queue_id = queue_id;
    req.point = point;
    req.handle = handle;
    return call(
        "UQ_FENCE", DRM_IOCTL_HPU_UQ_FENCE, &req,
        [&](Trace &t) { t.u("queue", queue_id).u("point", point).u("handle", handle); }, kNothing);
}

int Kmd::events(std::uint32_t flags)
{
    drm_hpu_events req{};
    req.flags = flags;
    return call(
        "EVENTS", DRM_IOCTL_HPU_EVENTS, &req, [&](Trace &t) { t.x("flags", flags); }, kNothing);
}

// An ioctl on a sync_file fd, traced as such (not on fd_: -ENODEV there
// says nothing about the device); out adds the results to the trace line.
template <typename Out>
int Kmd::sync_file_call(int fd, const char *name, unsigned long request, void *arg, Out &&out)
{
    const auto t0 = std::chrono::steady_clock::now();
    const int err = ioctl(fd, request, arg);
    const std::int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    if (trace_ != nullptr) {
        try {
            Trace t("hpu: ioctl fd=" + std::to_string(fd) + " " + name);
            t.result(err);
            if (err >= 0)
                out(t);
            t.finish(ns, trace_);
        } catch (...) { // NOLINT(bugprone-empty-catch)
            // No memory for the trace line: the call was made all the same.
        }
    }
    return err;
}

int Kmd::sync_file_status(int fd, std::int32_t &status, std::uint64_t *timestamp_ns)
{
    sync_file_info info{};
    sync_fence_info fence{};
    if (timestamp_ns != nullptr) {
        info.num_fences = 1;
        info.sync_fence_info = reinterpret_cast<std::uintptr_t>(&fence); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    }
    const int err = sync_file_call(fd, "SYNC_IOC_FILE_INFO", SYNC_IOC_FILE_INFO, &info, [&](Trace &t) {
        t.i("status", info.status);
        if (timestamp_ns != nullptr)
            t.i("timestamp_ns", static_cast<std::int64_t>(fence.timestamp_ns));
    });
    if (err < 0)
        return err;
    status = info.status;
    if (timestamp_ns != nullptr)
        *timestamp_ns = fence.timestamp_ns;
    return err;
}

int Kmd::sync_file_signal_time(int fd, std::uint64_t &timestamp_ns)
{
    timestamp_ns = 0;
    sync_file_info info{}; // num_fences 0: the count only
    if (const int err = sync_file_call(fd, "SYNC_IOC_FILE_INFO", SYNC_IOC_FILE_INFO, &info,
                                       [&](Trace &t) { t.u("num_fences", info.num_fences); });
        err < 0)
        return err;
    if (info.num_fences == 0)
        return 0;
    // A sync_file's fences never change: the count stays right.
    std::vector<sync_fence_info> fences(info.num_fences);
    const std::uint32_t n = info.num_fences;
    info = sync_file_info{};
    info.num_fences = n;
    info.sync_fence_info = reinterpret_cast<std::uintptr_t>(fences.data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    if (const int err = sync_file_call(fd, "SYNC_IOC_FILE_INFO", SYNC_IOC_FILE_INFO, &info,
                                       [&](Trace &t) { t.i("status", info.status); });
        err < 0)
        return err;
    std::uint64_t latest = 0;
    for (const sync_fence_info &f : fences) {
        if (f.status == 0)
            return 0; // still active
        latest = std::max<std::uint64_t>(latest, f.timestamp_ns);
    }
    timestamp_ns = latest;
    return 0;
}

int Kmd::sync_file_merge(int fd, int fd2, int &merged)
{
    sync_merge_data req{};
    std::memcpy(req.name, "hpu-merge", sizeof("hpu-merge"));
    req.fd2 = fd2;
    req.fence = -1;
    const int err = sync_file_call(fd, "SYNC_IOC_MERGE", SYNC_IOC_MERGE, &req,
                                   [&](Trace &t) { t.i("fd2", fd2).i("fence", req.fence); });
    if (err < 0)
        return err;
    if (req.fence < 0)
        return -EPROTO;
    merged = req.fence;
    return 0;
}

} // namespace hpu::detail
