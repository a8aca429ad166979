// SPDX-License-Identifier: MIT
// hpu.hpp - header-only C++20 RAII wrappers over the C ABI of libhpu.
//
// Errors surface as hpu::Error (a std::runtime_error): errnum() gives the
// positive errno, code() the same as a std::error_code, what() names the
// operation followed by hpu_strerror()'s text; for a failed job, kind()
// and info() say why (since 1.2).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_HPU_HPP
#define HPU_HPU_HPP

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "hpu/hpu.h"

namespace hpu {

/** An error from libhpu: the errno value, a message and, for a job, why. */
class Error : public std::runtime_error {
public:
    // err: a negative (or positive) errno value as the C ABI returns it;
    // what() is "<what>: <hpu_strerror(err)>".
    Error(int err, const std::string &what)
        : std::runtime_error(what + ": " + hpu_strerror(err)), errnum_(err < 0 ? -err : err)
    {
        info_.size = sizeof(info_);
        info_.error = -errnum_;
        info_.engine = HPU_ENGINE_NONE;
    }
    // A failed job: what() is "<what>: <hpu_strerror(err)> (<kind>, engine
    // E, address 0x...)", the parenthesis only when an error event said why.
    Error(int err, const std::string &what, const hpu_error_info &info)
        : std::runtime_error(what + ": " + hpu_strerror(err) + describe(info)), errnum_(err < 0 ? -err : err),
          info_(info)
    {
    }
    /** The positive errno value. */
    [[nodiscard]] int errnum() const noexcept { return errnum_; }
    /** The errno value as a std::error_code (generic category). */
    [[nodiscard]] std::error_code code() const noexcept { return {errnum_, std::generic_category()}; }
    /** HPU_ERROR_* of a failed job when an error event said why, else HPU_ERROR_NONE. */
    [[nodiscard]] std::uint32_t kind() const noexcept { return info_.kind; }
    /** The job's error information (hpu_fence_error_info()); only error is set otherwise. */
    [[nodiscard]] const hpu_error_info &info() const noexcept { return info_; }
    /** Whether the device was lost (hard reset): reopen it. */
    [[nodiscard]] bool device_lost() const noexcept
    {
        return errnum_ == ENODEV || info_.kind == HPU_ERROR_DEVICE_LOST;
    }

private:
    static std::string describe(const hpu_error_info &i)
    {
        if (i.kind == HPU_ERROR_NONE)
            return {};
        std::string s = std::string(" (") + hpu_error_kind_name(i.kind);
        if (i.engine != HPU_ENGINE_NONE)
            s += ", engine " + std::to_string(i.engine);
        if (i.address != 0) {
            static constexpr const char *digits = "0123456789abcdef";
            std::string hex;
            for (std::uint64_t a = i.address; a != 0; a >>= 4U)
                hex.insert(hex.begin(), digits[a & 0xfU]); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            s += ", address 0x" + hex;
        }
        return s + ")";
    }

    int errnum_;
    hpu_error_info info_{};
};

/** A driver event (hpu_event) as the error callback receives it. */
using Event = hpu_event;
/** The error callback of Device::set_error_callback() and process_events(). */
using EventCallback = std::function<void(const Event &)>;

namespace detail {
inline int check(int ret, const char *what)
{
    if (ret < 0)
        throw Error(ret, what);
    return ret;
}

struct ListFree {
    void operator()(hpu_device_list_t *l) const noexcept { hpu_device_list_free(l); }
};

// Owns one C handle: move-only, frees it exactly once with Free.
template <typename T, int (*Free)(T *)>
class Owner {
public:
    Owner() noexcept = default;
    /** Takes ownership of a handle from the C ABI (may be null). */
    explicit Owner(T *handle) noexcept : h_(handle) {}
    Owner(const Owner &) = delete;
    Owner &operator=(const Owner &) = delete;
    Owner(Owner &&other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
    Owner &operator=(Owner &&other) noexcept
    {
        if (this != &other)
            reset(std::exchange(other.h_, nullptr));
        return *this;
    }
    ~Owner() { reset(); }

    /** Frees the current handle (if any) and takes h instead. */
    void reset(T *h = nullptr) noexcept
    {
        T *old = std::exchange(h_, h);
        if (old != nullptr)
            (void)Free(old);
    }
    /** Gives up ownership without freeing. */
    [[nodiscard]] T *release() noexcept { return std::exchange(h_, nullptr); }
    [[nodiscard]] T *get() const noexcept { return h_; }
    explicit operator bool() const noexcept { return h_ != nullptr; }

private:
    T *h_ = nullptr;
};
} // namespace detail

/** Version of the library at run time (HPU_MAKE_VERSION packing). */
inline std::uint32_t version() noexcept { return hpu_get_version(); }

/** One discovered device. */
struct DeviceEntry {
    unsigned int index = 0;
    std::string pci_addr;
    std::string node;
};

/** The HPUs present, ordered by index. Throws hpu::Error. */
inline std::vector<DeviceEntry> list_devices()
{
    hpu_device_list_t *raw = nullptr;
    detail::check(hpu_device_list_get(&raw), "listing HPU devices");
    const std::unique_ptr<hpu_device_list_t, detail::ListFree> guard(raw);
    std::vector<DeviceEntry> out;
    const std::size_t n = hpu_device_list_size(raw);
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const hpu_device_desc *d = hpu_device_list_at(raw, i);
        out.push_back(DeviceEntry{d->index, d->pci_addr, d->node});
    }
    return out;
}

/** Number of HPUs present. Throws hpu::Error. */
inline unsigned int device_count()
{
    return static_cast<unsigned int>(detail::check(hpu_device_count(), "counting HPU devices"));
}

/** An open HPU. Move-only; closes its handle exactly once. */
class Device {
public:
    /** Opens /dev/accel/accel<index>. Throws hpu::Error. */
    static Device open(unsigned int index)
    {
        hpu_device_t *h = nullptr;
        detail::check(hpu_open_by_index(index, &h),
                      ("opening HPU " + std::to_string(index)).c_str());
        return Device(h);
    }

    /** Opens the HPU at a PCI address. Throws hpu::Error. */
    static Device open_pci(const std::string &bdf)
    {
        hpu_device_t *h = nullptr;
        detail::check(hpu_open_by_pci(bdf.c_str(), &h), ("opening HPU at PCI " + bdf).c_str());
        return Device(h);
    }

    /** Takes ownership of a handle from the C ABI (may be null). */
    explicit Device(hpu_device_t *handle) noexcept : h_(handle) {}
    Device() noexcept = default;
    Device(const Device &) = delete;
    Device &operator=(const Device &) = delete;
    Device(Device &&other) noexcept : h_(std::exchange(other.h_, nullptr)), cb_(std::move(other.cb_)) {}
    Device &operator=(Device &&other) noexcept
    {
        if (this != &other) {
            reset(std::exchange(other.h_, nullptr));
            cb_ = std::move(other.cb_);
        }
        return *this;
    }
    ~Device() { reset(); }

    /** Closes the current handle (if any; this stops its callback) and takes h instead. */
    void reset(hpu_device_t *h = nullptr) noexcept
    {
        hpu_device_t *old = std::exchange(h_, h);
        if (old != nullptr)
            hpu_close(old);
        cb_.reset();
    }

    /** Gives up ownership without closing (an error callback is removed first). */
    [[nodiscard]] hpu_device_t *release() noexcept
    {
        if (cb_ && h_ != nullptr)
            (void)hpu_device_set_error_callback(h_, nullptr, nullptr);
        cb_.reset();
        return std::exchange(h_, nullptr);
    }
    [[nodiscard]] hpu_device_t *get() const noexcept { return h_; }
    explicit operator bool() const noexcept { return h_ != nullptr; }

    /** The identity of the device (INFO ioctl). Throws hpu::Error. */
    [[nodiscard]] hpu_device_info info() const
    {
        hpu_device_info i{};
        i.size = sizeof(i);
        detail::check(hpu_device_get_info(h_, &i), "querying HPU device info");
        return i;
    }

    /** The DRM file descriptor, owned by this object. Throws hpu::Error. */
    [[nodiscard]] int fd() const { return detail::check(hpu_device_get_fd(h_), "HPU device fd"); }

    /** Memory of the device and of this context (INFO MEMORY). Throws hpu::Error. */
    [[nodiscard]] hpu_memory_info memory_info() const
    {
        hpu_memory_info i{};
        i.size = sizeof(i);
        detail::check(hpu_device_memory_info(h_, &i), "querying HPU memory info");
        return i;
    }

    /** Number of DMA engines. Throws hpu::Error. */
    [[nodiscard]] unsigned int dma_engines() const
    {
        return static_cast<unsigned int>(detail::check(hpu_device_dma_engines(h_), "counting DMA engines"));
    }

    /** Number of engines of an HPU_ENGINE_* class that Queue::create() takes (1.4). Throws hpu::Error. */
    [[nodiscard]] unsigned int engines(std::uint32_t engine_class) const
    {
        return static_cast<unsigned int>(detail::check(hpu_device_engines(h_, engine_class), "counting engines"));
    }

    /**
     * Calls fn from a library thread for every driver event (an empty fn
     * stops it). When this returns the previous callback has returned for
     * good. fn must not call reopen(), set_error_callback() or close the
     * device; exceptions it throws are ignored. Throws hpu::Error.
     */
    void set_error_callback(EventCallback fn)
    {
        if (!fn) {
            detail::check(hpu_device_set_error_callback(h_, nullptr, nullptr), "removing the HPU error callback");
            cb_.reset();
            return;
        }
        auto p = std::make_unique<EventCallback>(std::move(fn));
        detail::check(hpu_device_set_error_callback(h_, &Device::trampoline, p.get()),
                      "setting the HPU error callback");
        cb_ = std::move(p);
    }
    /** Enables events; the fd to poll for POLLIN in the caller's own loop. Throws hpu::Error. */
    [[nodiscard]] int event_fd() const { return detail::check(hpu_device_event_fd(h_), "enabling HPU events"); }
    /** Reads pending events without blocking, calls fn for each; returns how many. Throws hpu::Error. */
    int process_events(const EventCallback &fn = {}) // NOLINT(modernize-use-nodiscard): the count is optional
    {
        return detail::check(hpu_device_process_events(h_, fn ? &Device::trampoline : nullptr,
                                                       const_cast<EventCallback *>(&fn)), // NOLINT(cppcoreguidelines-pro-type-const-cast)
                             "reading HPU events");
    }
    /** Whether the device was hard-reset under this handle (reopen() it). */
    [[nodiscard]] bool is_lost() const noexcept { return hpu_device_is_lost(h_) == 1; }
    /** The device's reset generation (INFO ERRORS). Throws hpu::Error. */
    [[nodiscard]] std::uint64_t reset_generation() const
    {
        std::uint64_t g = 0;
        detail::check(hpu_device_reset_generation(h_, &g), "querying the HPU reset generation");
        return g;
    }
    /** Opens the same PCI device again; every object made before is stale. Throws hpu::Error. */
    void reopen() { detail::check(hpu_device_reopen(h_), "reopening the HPU"); }
    /** Error and reset counters (INFO ERRORS). Throws hpu::Error. */
    [[nodiscard]] hpu_error_counters error_counters() const
    {
        hpu_error_counters c{};
        c.size = sizeof(c);
        detail::check(hpu_device_error_counters(h_, &c), "querying HPU error counters");
        return c;
    }
    /** Sensors, clocks, utilisation, HBM use (INFO TELEMETRY; since 1.3). Throws hpu::Error. */
    [[nodiscard]] hpu_telemetry telemetry() const
    {
        hpu_telemetry t{};
        t.size = sizeof(t);
        detail::check(hpu_device_get_telemetry(h_, &t), "querying HPU telemetry");
        return t;
    }
    /** Firmware versions and state (INFO FIRMWARE; since 1.3). Throws hpu::Error. */
    [[nodiscard]] hpu_firmware_info firmware_info() const
    {
        hpu_firmware_info f{};
        f.size = sizeof(f);
        detail::check(hpu_device_get_firmware_info(h_, &f), "querying HPU firmware info");
        return f;
    }
    /** The PCIe link (sysfs; since 1.3). Throws hpu::Error. */
    [[nodiscard]] hpu_pcie_link pcie_link() const
    {
        hpu_pcie_link l{};
        l.size = sizeof(l);
        detail::check(hpu_device_get_pcie_link(h_, &l), "reading the HPU's PCIe link");
        return l;
    }
    /** The device's hwmon directory (since 1.3). Throws hpu::Error (ENOENT: none). */
    [[nodiscard]] std::string hwmon_path() const
    {
        std::string buf(256, '\0');
        detail::check(hpu_device_hwmon_path(h_, buf.data(), buf.size()), "finding the HPU's hwmon directory");
        buf.resize(buf.find('\0'));
        return buf;
    }
    /** Resets the device through the driver (root only): soft, or hard. Throws hpu::Error. */
    void hw_reset(bool hard = false)
    {
        detail::check(hpu_device_reset(h_, hard ? HPU_RESET_HARD : HPU_RESET_SOFT),
                      hard ? "hard-resetting the HPU" : "soft-resetting the HPU");
    }

private:
    static void trampoline(hpu_device_t * /*dev*/, const hpu_event *ev, void *user) noexcept
    {
        try {
            (*static_cast<EventCallback *>(user))(*ev);
        } catch (...) { // NOLINT(bugprone-empty-catch)
            // Exceptions do not cross the library's thread.
        }
    }

    hpu_device_t *h_ = nullptr;
    std::unique_ptr<EventCallback> cb_; // the callback the library thread calls
};

/**
 * A discovery snapshot that opens its entries without discovering again
 * (hpu_device_list_get, hpu_device_list_open; since 1.3). Move-only.
 */
class DeviceList {
public:
    /** Discovers the HPUs. Throws hpu::Error. */
    static DeviceList discover()
    {
        hpu_device_list_t *raw = nullptr;
        detail::check(hpu_device_list_get(&raw), "listing HPU devices");
        return DeviceList(raw);
    }
    [[nodiscard]] std::size_t size() const noexcept { return hpu_device_list_size(l_.get()); }
    [[nodiscard]] DeviceEntry at(std::size_t i) const
    {
        const hpu_device_desc *d = hpu_device_list_at(l_.get(), i);
        if (d == nullptr)
            throw Error(-ENODEV, "HPU list entry " + std::to_string(i));
        return DeviceEntry{d->index, d->pci_addr, d->node};
    }
    /** Opens entry i. Throws hpu::Error. */
    [[nodiscard]] Device open(std::size_t i) const
    {
        hpu_device_t *h = nullptr;
        detail::check(hpu_device_list_open(l_.get(), i, &h), ("opening " + at(i).node).c_str());
        return Device(h);
    }
    [[nodiscard]] const hpu_device_list_t *handle() const noexcept { return l_.get(); }

private:
    explicit DeviceList(hpu_device_list_t *l) noexcept : l_(l) {}
    std::unique_ptr<hpu_device_list_t, detail::ListFree> l_;
};

/** One process using one HPU (hpu_process; since 1.3). */
using Process = hpu_process;

/**
 * The processes using dev (nullptr: any HPU), sampled twice sample apart
 * for their utilisation (0: once, raw engine ns only). Throws hpu::Error.
 */
inline std::vector<Process> list_processes(const Device *dev = nullptr,
                                           std::chrono::milliseconds sample = std::chrono::milliseconds(0))
{
    hpu_process_list_t *raw = nullptr;
    const auto ms = sample.count() < 0 ? 0 : sample.count();
    detail::check(hpu_device_list_processes(dev != nullptr ? dev->get() : nullptr,
                                            ms > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(ms), &raw),
                  "listing the processes using HPUs");
    // Owned from here on, so that a throwing push_back cannot leak it.
    const std::unique_ptr<hpu_process_list_t, void (*)(hpu_process_list_t *)> list(raw, hpu_process_list_free);
    std::vector<Process> out;
    const std::size_t n = hpu_process_list_size(list.get());
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const hpu_process *e = hpu_process_list_at(list.get(), i);
        // A library older than this header fills only e->size bytes; the
        // members it does not know stay zero.
        Process p{};
        std::memcpy(&p, e, std::min<std::size_t>(e->size, sizeof(p)));
        p.size = static_cast<std::uint32_t>(std::min<std::size_t>(e->size, sizeof(p)));
        out.push_back(p);
    }
    return out;
}

/**
 * A buffer mapped into the device (hpu_buffer_*). Move-only; destroyed
 * exactly once. Make sure no job uses it any more before it goes.
 */
class Buffer : public detail::Owner<hpu_buffer_t, hpu_buffer_destroy> {
public:
    using Owner::Owner;

    /** flags: HPU_MEM_DEVICE or HPU_MEM_HOST, plus CONTIGUOUS, READONLY. */
    static Buffer create(const Device &dev, std::uint64_t size, std::uint32_t flags)
    {
        hpu_buffer_t *b = nullptr;
        detail::check(hpu_buffer_create(dev.get(), size, flags, &b), "creating an HPU buffer");
        return Buffer{b};
    }
    /** The caller's memory [ptr, ptr + size), which must outlive the buffer. */
    static Buffer from_user(const Device &dev, void *ptr, std::uint64_t size, std::uint32_t flags = 0)
    {
        hpu_buffer_t *b = nullptr;
        detail::check(hpu_buffer_from_user(dev.get(), ptr, size, flags, &b), "registering user memory");
        return Buffer{b};
    }
    /** Maps size bytes of a dma-buf; the caller keeps fd. */
    static Buffer import_fd(const Device &dev, int fd, std::uint64_t size)
    {
        hpu_buffer_t *b = nullptr;
        detail::check(hpu_buffer_import_fd(dev.get(), fd, size, &b), "importing a dma-buf");
        return Buffer{b};
    }

    [[nodiscard]] std::uint64_t va() const noexcept { return hpu_buffer_va(get()); }
    [[nodiscard]] std::uint64_t size() const noexcept { return hpu_buffer_size(get()); }
    [[nodiscard]] void *host_ptr() const noexcept { return hpu_buffer_host_ptr(get()); }
    /** A new dma-buf fd, owned by the caller. Throws hpu::Error. */
    [[nodiscard]] int export_fd() const
    {
        int fd = -1;
        detail::check(hpu_buffer_export_fd(get(), &fd), "exporting an HPU buffer");
        return fd;
    }
};

/** The completion of a job (hpu_fence_*). Move-only; destroyed exactly once. */
class Fence : public detail::Owner<hpu_fence_t, hpu_fence_destroy> {
public:
    using Owner::Owner;

    /** A fence of dev from a sync_file fd (the caller keeps fd). */
    static Fence import_fd(const Device &dev, int fd)
    {
        hpu_fence_t *f = nullptr;
        detail::check(hpu_fence_import_fd(dev.get(), fd, &f), "importing a sync_file");
        return Fence{f};
    }

    /**
     * Waits at most timeout for the job. Returns true when it completed,
     * false when the time ran out; throws hpu::Error with the job's error
     * when the device failed it.
     */
    [[nodiscard]] bool wait(std::chrono::nanoseconds timeout = std::chrono::nanoseconds::max()) const
    {
        std::uint64_t ns = HPU_TIMEOUT_INFINITE;
        if (timeout != std::chrono::nanoseconds::max())
            ns = timeout.count() <= 0 ? 0 : static_cast<std::uint64_t>(timeout.count());
        const int r = hpu_fence_wait(get(), ns);
        if (r == -ETIME)
            return false;
        if (r < 0) {
            hpu_error_info i{};
            i.size = sizeof(i);
            if (hpu_fence_error_info(get(), &i) == 0 && i.error == r)
                throw Error(r, "HPU job", i);
            throw Error(r, "HPU job");
        }
        return true;
    }
    /** Why the job failed (hpu_fence_error_info); throws hpu::Error (-EBUSY while pending). */
    [[nodiscard]] hpu_error_info error_info() const
    {
        hpu_error_info i{};
        i.size = sizeof(i);
        detail::check(hpu_fence_error_info(get(), &i), "HPU fence error info");
        return i;
    }
    /** 0 done, 1 pending, or the job's negative errno (never throws for those). */
    [[nodiscard]] int status() const
    {
        if (get() == nullptr)
            throw Error(-EINVAL, "HPU fence status");
        return hpu_fence_status(get());
    }
    /** A new sync_file fd, owned by the caller. Throws hpu::Error. */
    [[nodiscard]] int export_fd() const
    {
        int fd = -1;
        detail::check(hpu_fence_export_fd(get(), &fd), "exporting an HPU fence");
        return fd;
    }
};

/** Recorded commands (hpu_cmdlist_*, hpu_cmd_*). Move-only. Throws hpu::Error. */
class CommandList : public detail::Owner<hpu_cmdlist_t, hpu_cmdlist_destroy> {
public:
    using Owner::Owner;

    static CommandList create(const Device &dev)
    {
        hpu_cmdlist_t *c = nullptr;
        detail::check(hpu_cmdlist_create(dev.get(), &c), "creating a command list");
        return CommandList{c};
    }

    CommandList &nop()
    {
        detail::check(hpu_cmd_nop(get()), "recording NOP");
        return *this;
    }
    CommandList &copy(std::uint64_t dst_va, std::uint64_t src_va, std::uint64_t size)
    {
        detail::check(hpu_cmd_copy(get(), dst_va, src_va, size), "recording a copy");
        return *this;
    }
    CommandList &memset(std::uint64_t dst_va, std::uint64_t pattern, std::uint64_t size)
    {
        detail::check(hpu_cmd_memset(get(), dst_va, pattern, size), "recording a memset");
        return *this;
    }
    CommandList &write_value(std::uint64_t va, std::uint32_t value)
    {
        detail::check(hpu_cmd_write_value(get(), va, value), "recording a write-value");
        return *this;
    }
    CommandList &sob_update(std::uint32_t sob, std::uint32_t op, std::uint32_t value)
    {
        detail::check(hpu_cmd_sob_update(get(), sob, op, value), "recording a sync-object update");
        return *this;
    }
    CommandList &wait_sob(std::uint32_t sob, std::uint32_t value, std::uint32_t cond = HPU_WAIT_GE)
    {
        detail::check(hpu_cmd_wait_sob(get(), sob, value, cond), "recording a sync-object wait");
        return *this;
    }
    /** Forgets the recorded commands (hpu_cmdlist_reset; reset() replaces the handle). */
    CommandList &clear()
    {
        detail::check(hpu_cmdlist_reset(get()), "resetting a command list");
        return *this;
    }
    /** Bytes recorded. */
    [[nodiscard]] std::size_t bytes() const noexcept { return hpu_cmdlist_size(get()); }
};

/** A queue on one engine (hpu_queue_*). Move-only. Throws hpu::Error. */
class Queue : public detail::Owner<hpu_queue_t, hpu_queue_destroy> {
public:
    using Owner::Owner;

    static Queue create(const Device &dev, std::uint32_t engine, std::uint32_t engine_class = HPU_ENGINE_DMA)
    {
        hpu_queue_t *q = nullptr;
        detail::check(hpu_queue_create(dev.get(), engine_class, engine, &q),
                      ("creating a queue on engine " + std::to_string(engine)).c_str());
        return Queue{q};
    }

    /** Submits cl after every fence of waits; returns the job's fence. */
    Fence submit(CommandList &cl, const std::vector<const Fence *> &waits = {})
    {
        std::vector<const hpu_fence_t *> raw;
        raw.reserve(waits.size());
        for (const Fence *f : waits)
            raw.push_back(f != nullptr ? f->get() : nullptr);
        hpu_fence_t *out = nullptr;
        detail::check(hpu_queue_submit(get(), cl.get(), raw.data(), raw.size(), &out), "submitting a job");
        return Fence{out};
    }
    /** Submits cl with its own timeout (at most 1 hour; 0 ms: the driver's default). */
    Fence submit(CommandList &cl, std::chrono::milliseconds timeout, const std::vector<const Fence *> &waits = {})
    {
        std::vector<const hpu_fence_t *> raw;
        raw.reserve(waits.size());
        for (const Fence *f : waits)
            raw.push_back(f != nullptr ? f->get() : nullptr);
        const auto ms = timeout.count() < 0 ? 0 : timeout.count();
        const std::uint32_t t = ms > HPU_JOB_TIMEOUT_MAX_MS ? HPU_JOB_TIMEOUT_MAX_MS + 1 : static_cast<std::uint32_t>(ms);
        hpu_fence_t *out = nullptr;
        detail::check(hpu_queue_submit_timeout(get(), cl.get(), raw.data(), raw.size(), t, &out), "submitting a job");
        return Fence{out};
    }
    Fence copy(std::uint64_t dst_va, std::uint64_t src_va, std::uint64_t size)
    {
        hpu_fence_t *out = nullptr;
        detail::check(hpu_queue_copy(get(), dst_va, src_va, size, &out), "submitting a copy");
        return Fence{out};
    }
    Fence memset(std::uint64_t dst_va, std::uint64_t pattern, std::uint64_t size)
    {
        hpu_fence_t *out = nullptr;
        detail::check(hpu_queue_memset(get(), dst_va, pattern, size, &out), "submitting a memset");
        return Fence{out};
    }
    Fence write_value(std::uint64_t va, std::uint32_t value)
    {
        hpu_fence_t *out = nullptr;
        detail::check(hpu_queue_write_value(get(), va, value, &out), "submitting a write-value");
        return Fence{out};
    }
};

} // namespace hpu

#endif // HPU_HPU_HPP
