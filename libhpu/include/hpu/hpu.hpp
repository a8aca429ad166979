// SPDX-License-Identifier: MIT
// hpu.hpp - header-only C++20 RAII wrappers over the C ABI of libhpu.
//
// Errors surface as hpu::Error (a std::runtime_error): errnum() gives the
// positive errno, code() the same as a std::error_code, what() names the
// operation followed by hpu_strerror()'s text; for a failed job, kind()
// and info() say why (since 1.2); for an argument the compute calls refuse,
// hpu_last_error()'s message follows (since 1.5).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_HPU_HPP
#define HPU_HPU_HPP

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "hpu/hpu.h"

namespace hpu {

/** An error from libhpu: the errno value, a message and, for a job, why. */
class Error : public std::runtime_error {
public:
    // err: a negative (or positive) errno value as the C ABI returns it;
    // what() is "<what>: <hpu_strerror(err)>".
    Error(int err, const std::string &what) : Error(err, what, static_cast<const char *>(nullptr)) {}
    // A failed job: what() is "<what>: <hpu_strerror(err)> (<kind>, engine
    // E, address 0x...)", the parenthesis only when an error event said why.
    Error(int err, const std::string &what, const hpu_error_info &info)
        : std::runtime_error(what + ": " + hpu_strerror(err) + describe(info)), errnum_(err < 0 ? -err : err),
          info_(info)
    {
    }
    // A call that said why it refused its input (since 1.5; why is
    // hpu_last_error()): what() is "<what>: <hpu_strerror(err)>: <why>",
    // as the two-argument form when why is empty.
    Error(int err, const std::string &what, const char *why)
        : std::runtime_error(what + ": " + hpu_strerror(err) +
                             (why != nullptr && *why != '\0' ? std::string(": ") + why : std::string())),
          errnum_(err < 0 ? -err : err)
    {
        info_.size = sizeof(info_);
        info_.error = -errnum_;
        info_.engine = HPU_ENGINE_NONE;
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

// For the 1.5 calls that clear hpu_last_error() when they start, so that
// its message is theirs: a refusal's what() ends with it.
inline int check_why(int ret, const char *what)
{
    if (ret < 0)
        throw Error(ret, what, hpu_last_error());
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
    /**
     * NIC port @port as the network stack shows it (sysfs; since 1.7).
     * Throws hpu::Error (ENOENT: the port has no network interface).
     */
    [[nodiscard]] hpu_nic_port nic_port(std::uint32_t port) const
    {
        hpu_nic_port p{};
        p.size = sizeof(p);
        detail::check(hpu_device_get_nic_port(h_, port, &p), "reading a NIC port");
        return p;
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
    /** The buffer mapped into the caller (hpu_buffer_map()): device memory through the BAR. Throws hpu::Error. */
    [[nodiscard]] void *map() const
    {
        void *p = nullptr;
        detail::check(hpu_buffer_map(get(), &p), "mapping an HPU buffer into the process");
        return p;
    }
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

    /** How long wait() waits for a failed job's device event (error_info(std::chrono::nanoseconds)). */
    static constexpr std::uint64_t detail_wait_ns = 2000000000ULL;

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
     * when the device failed it (its information as error_info(detail_wait)
     * gives it: up to 2 s more for the device event of a compute error).
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
            if (hpu_fence_error_info_wait(get(), &i, detail_wait_ns) == 0 && i.error == r)
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
    /**
     * Why the job failed, waiting at most detail_wait for the device event
     * that brings a compute error's address and info
     * (hpu_fence_error_info_wait); throws hpu::Error (-EBUSY while pending).
     */
    [[nodiscard]] hpu_error_info error_info(std::chrono::nanoseconds detail_wait) const
    {
        hpu_error_info i{};
        i.size = sizeof(i);
        const std::uint64_t ns = detail_wait.count() <= 0 ? 0 : static_cast<std::uint64_t>(detail_wait.count());
        detail::check(hpu_fence_error_info_wait(get(), &i, ns), "HPU fence error info");
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
    /**
     * When the job ended, failed or not (hpu_fence_signal_time): CLOCK_MONOTONIC
     * nanoseconds, or std::nullopt while it is pending. Throws hpu::Error.
     */
    [[nodiscard]] std::optional<std::uint64_t> signal_time() const
    {
        std::uint64_t ns = 0;
        const int r = hpu_fence_signal_time(get(), &ns);
        if (r == -EBUSY)
            return std::nullopt;
        detail::check(r, "reading an HPU fence's signal time");
        return ns;
    }
};

namespace detail {
// The C handles of waits (a null entry stays null: the C call refuses it).
inline std::vector<const hpu_fence_t *> raw_fences(const std::vector<const Fence *> &waits)
{
    std::vector<const hpu_fence_t *> raw;
    raw.reserve(waits.size());
    for (const Fence *f : waits)
        raw.push_back(f != nullptr ? f->get() : nullptr);
    return raw;
}
} // namespace detail

/** The message of this thread's last refused 1.5 call (hpu_last_error()), or "". */
inline std::string last_error() { return hpu_last_error(); }

/** Bytes of one element of an HPU_DTYPE_* (0 when unknown; since 1.5). */
inline std::size_t dtype_size(std::uint32_t dtype) noexcept { return hpu_dtype_size(dtype); }

/**
 * A TPC kernel loaded into a device (hpu_kernel_*; since 1.5). Move-only;
 * destroyed exactly once. Lists and graphs that recorded a launch of it
 * keep its binary alive on their own.
 */
class Kernel : public detail::Owner<hpu_kernel_t, hpu_kernel_destroy> {
public:
    using Owner::Owner;

    /** A kernel of the library built into libhpu ("add_f32"). Throws hpu::Error (ENOENT: no such name). */
    static Kernel by_name(const Device &dev, const std::string &name)
    {
        hpu_kernel_t *k = nullptr;
        detail::check_why(hpu_kernel_get(dev.get(), name.c_str(), &k), ("getting TPC kernel " + name).c_str());
        return Kernel{k};
    }
    /** A binary made by hpu-as, copied. Throws hpu::Error (ENOEXEC: malformed). */
    static Kernel load(const Device &dev, const void *data, std::size_t size)
    {
        hpu_kernel_t *k = nullptr;
        detail::check_why(hpu_kernel_load(dev.get(), data, size, &k), "loading a TPC kernel");
        return Kernel{k};
    }
    static Kernel load(const Device &dev, std::span<const std::uint8_t> binary)
    {
        return load(dev, binary.data(), binary.size());
    }
    /** The binary in a file. Throws hpu::Error. */
    static Kernel load_file(const Device &dev, const std::string &path)
    {
        hpu_kernel_t *k = nullptr;
        detail::check_why(hpu_kernel_load_file(dev.get(), path.c_str(), &k), ("loading TPC kernel " + path).c_str());
        return Kernel{k};
    }
    /** The names of the built-in kernels, sorted. */
    static std::vector<std::string> library()
    {
        std::vector<std::string> names;
        names.reserve(hpu_kernel_library_size());
        for (std::size_t i = 0; const char *n = hpu_kernel_library_name(i); ++i)
            names.emplace_back(n);
        return names;
    }

    /** What the binary declares. Throws hpu::Error. */
    [[nodiscard]] hpu_kernel_info info() const
    {
        hpu_kernel_info i{};
        i.size = sizeof(i);
        detail::check(hpu_kernel_get_info(get(), &i), "querying a TPC kernel");
        return i;
    }
    /** The kernel's name. Throws hpu::Error. */
    [[nodiscard]] std::string name() const
    {
        const hpu_kernel_info i = info();
        return static_cast<const char *>(i.name);
    }
};

/**
 * A tensor argument of a launch (struct hpu_tensor; since 1.5): a value,
 * not a handle. Sizes come innermost first, as in the C structure: sizes[0]
 * is the last axis of a row-major array ({cols, rows} for a matrix).
 */
class Tensor {
public:
    /** A dense tensor at va: strides follow from sizes, pad 0. Throws hpu::Error. */
    Tensor(std::uint64_t va, std::uint32_t dtype, std::span<const std::uint32_t> sizes)
    {
        // More than 5 sizes: ndims 6, which hpu_tensor_init() refuses.
        const auto nd = static_cast<std::uint32_t>(std::min<std::size_t>(sizes.size(), HPU_TENSOR_MAX_DIMS + 1));
        detail::check_why(hpu_tensor_init(&t_, va, dtype, nd, sizes.data()), "describing a tensor");
    }
    Tensor(std::uint64_t va, std::uint32_t dtype, std::initializer_list<std::uint32_t> sizes)
        : Tensor(va, dtype, std::span<const std::uint32_t>(sizes.begin(), sizes.size()))
    {
    }
    /** A dense tensor offset bytes into buf. Throws hpu::Error. */
    Tensor(const Buffer &buf, std::uint32_t dtype, std::span<const std::uint32_t> sizes, std::uint64_t offset = 0)
        : Tensor(buf.va() + offset, dtype, sizes)
    {
    }
    Tensor(const Buffer &buf, std::uint32_t dtype, std::initializer_list<std::uint32_t> sizes,
           std::uint64_t offset = 0)
        : Tensor(buf.va() + offset, dtype, sizes)
    {
    }
    /** Any view the C structure describes (strided, broadcast). */
    explicit Tensor(const hpu_tensor &t) noexcept : t_(t) {}

    /** The padding value's bits, read for lanes beyond the tensor. */
    Tensor &pad_bits(std::uint32_t bits) noexcept
    {
        t_.pad = bits;
        return *this;
    }
    /** The padding value of an FP32 or BF16 tensor (BF16: rounded to nearest even). Throws hpu::Error. */
    Tensor &pad(float value)
    {
        const auto x = std::bit_cast<std::uint32_t>(value);
        if (t_.dtype == HPU_DTYPE_FP32) {
            t_.pad = x;
        } else if (t_.dtype == HPU_DTYPE_BF16) {
            const bool nan = (x & 0x7fffffffU) > 0x7f800000U;
            t_.pad = nan ? (x >> 16U) | 0x40U : (x + 0x7fffU + ((x >> 16U) & 1U)) >> 16U;
        } else {
            throw Error(-EINVAL, "setting a float pad", "the tensor is not FP32 or BF16 (use pad_bits())");
        }
        return *this;
    }
    /** The stride of dimension dim in elements (0 broadcasts). Throws hpu::Error. */
    Tensor &stride(std::uint32_t dim, std::uint32_t elements)
    {
        if (dim >= t_.ndims) {
            const std::string why = "dimension " + std::to_string(dim) + " is not below ndims";
            throw Error(-EINVAL, "setting a tensor stride", why.c_str());
        }
        t_.strides[dim] = elements; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
        return *this;
    }

    [[nodiscard]] std::uint64_t va() const noexcept { return t_.va; }
    [[nodiscard]] std::uint32_t dtype() const noexcept { return t_.dtype; }
    [[nodiscard]] std::uint32_t ndims() const noexcept { return t_.ndims; }
    /** The size of dimension dim (1 at and beyond ndims, as the device reads it). */
    [[nodiscard]] std::uint32_t size(std::uint32_t dim) const noexcept
    {
        return dim < t_.ndims ? t_.sizes[dim] : 1; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    }
    [[nodiscard]] std::uint32_t stride(std::uint32_t dim) const noexcept
    {
        return dim < t_.ndims ? t_.strides[dim] : 0; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    }
    [[nodiscard]] std::uint32_t pad() const noexcept { return t_.pad; }
    [[nodiscard]] const hpu_tensor &raw() const noexcept { return t_; }

private:
    hpu_tensor t_{};
};

/** A 32-bit scalar argument: an FP32 value goes as its bits, an integer as it is. */
template <typename T>
concept ScalarWord = std::is_arithmetic_v<T> && sizeof(T) == 4;

/**
 * The arguments of one TPC launch (struct hpu_launch; since 1.5), built
 * by chaining: Launch().tensor(a).tensor(b).scalar(0.5F).index_space({n}).
 * Copyable; libhpu checks it against the kernel when it is recorded.
 */
class Launch {
public:
    Launch &tensor(const Tensor &t)
    {
        tensors_.push_back(t.raw());
        return *this;
    }
    Launch &tensors(std::initializer_list<Tensor> ts)
    {
        for (const Tensor &t : ts)
            tensors_.push_back(t.raw());
        return *this;
    }
    template <ScalarWord T>
    Launch &scalar(T value)
    {
        scalars_.push_back(std::bit_cast<std::uint32_t>(value));
        return *this;
    }
    /** Replaces scalar index (added before). Throws hpu::Error. */
    template <ScalarWord T>
    Launch &set_scalar(std::size_t index, T value)
    {
        if (index >= scalars_.size()) {
            const std::string why = "the launch has " + std::to_string(scalars_.size()) + " scalars";
            throw Error(-EINVAL, "setting a launch scalar", why.c_str());
        }
        scalars_[index] = std::bit_cast<std::uint32_t>(value);
        return *this;
    }
    /** The index space, dimension 0 first; the dimensions not given are 1. Throws hpu::Error. */
    Launch &index_space(std::span<const std::uint32_t> sizes)
    {
        if (sizes.size() > HPU_TENSOR_MAX_DIMS)
            throw Error(-EINVAL, "setting a launch's index space", "more than 5 dimensions");
        index_.fill(1);
        std::copy(sizes.begin(), sizes.end(), index_.begin());
        return *this;
    }
    Launch &index_space(std::initializer_list<std::uint32_t> sizes)
    {
        return index_space(std::span<const std::uint32_t>(sizes.begin(), sizes.size()));
    }
    /** The launch's random-number key. */
    Launch &seed(std::uint64_t key) noexcept
    {
        seed_ = key;
        return *this;
    }

    [[nodiscard]] std::size_t num_tensors() const noexcept { return tensors_.size(); }
    [[nodiscard]] std::size_t num_scalars() const noexcept { return scalars_.size(); }
    /** The C structure; its pointers stay valid until this Launch changes or goes. */
    [[nodiscard]] hpu_launch raw() const noexcept
    {
        hpu_launch l{};
        l.size = sizeof(l);
        l.num_tensors = static_cast<std::uint32_t>(tensors_.size());
        l.tensors = tensors_.data();
        l.scalars = scalars_.data();
        l.num_scalars = static_cast<std::uint32_t>(scalars_.size());
        std::copy(index_.begin(), index_.end(), static_cast<std::uint32_t *>(l.index_size));
        l.seed = seed_;
        return l;
    }

private:
    std::vector<hpu_tensor> tensors_;
    std::vector<std::uint32_t> scalars_;
    std::array<std::uint32_t, HPU_TENSOR_MAX_DIMS> index_{1, 1, 1, 1, 1};
    std::uint64_t seed_ = 0;
};

/**
 * One GEMM on an MME (struct hpu_gemm; since 1.5): D = act(alpha op(A)
 * op(B) + beta C + bias), row-major, built by chaining:
 * Gemm(m, n, k).a(a_va).b(b_va).d(d_va).bias(bias_va).act(HPU_GEMM_ACT_RELU).
 * Leading dimensions 0 mean packed. Copyable.
 */
class Gemm {
public:
    /** D (m x n) = op(A) (m x k) op(B) (k x n), FP32 in and out, alpha 1, no C. */
    Gemm(std::uint32_t m, std::uint32_t n, std::uint32_t k) noexcept
    {
        g_.size = sizeof(g_);
        g_.in_dtype = HPU_DTYPE_FP32;
        g_.out_dtype = HPU_DTYPE_FP32;
        g_.m = m;
        g_.n = n;
        g_.k = k;
        g_.alpha = 1.0F;
    }
    /** HPU_DTYPE_FP32 or _BF16 of A and B (in) and of C and D (out). */
    Gemm &types(std::uint32_t in, std::uint32_t out) noexcept
    {
        g_.in_dtype = in;
        g_.out_dtype = out;
        return *this;
    }
    Gemm &a(std::uint64_t va, std::uint32_t ld = 0) noexcept
    {
        g_.a = va;
        g_.lda = ld;
        return *this;
    }
    Gemm &b(std::uint64_t va, std::uint32_t ld = 0) noexcept
    {
        g_.b = va;
        g_.ldb = ld;
        return *this;
    }
    /** C, added scaled by beta (read only when beta is not zero). */
    Gemm &c(std::uint64_t va, float beta, std::uint32_t ld = 0) noexcept
    {
        g_.c = va;
        g_.beta = beta;
        g_.ldc = ld;
        return *this;
    }
    Gemm &d(std::uint64_t va, std::uint32_t ld = 0) noexcept
    {
        g_.d = va;
        g_.ldd = ld;
        return *this;
    }
    /** Adds bias[n] (FP32) to every row. */
    Gemm &bias(std::uint64_t va) noexcept
    {
        g_.bias = va;
        g_.flags |= HPU_GEMM_BIAS;
        return *this;
    }
    /** op(A) = A^T: A is stored k x m. */
    Gemm &trans_a(bool on = true) noexcept { return flag(HPU_GEMM_TRANS_A, on); }
    /** op(B) = B^T: B is stored n x k. */
    Gemm &trans_b(bool on = true) noexcept { return flag(HPU_GEMM_TRANS_B, on); }
    /** HPU_GEMM_ACT_NONE, _RELU or _GELU_TANH on the output. */
    Gemm &act(std::uint32_t activation) noexcept
    {
        g_.act = activation;
        return *this;
    }
    Gemm &alpha(float value) noexcept
    {
        g_.alpha = value;
        return *this;
    }
    Gemm &beta(float value) noexcept
    {
        g_.beta = value;
        return *this;
    }
    /** count GEMMs; strides in elements from one member to the next (0: all use the first). */
    Gemm &batch(std::uint32_t count, std::uint64_t stride_a, std::uint64_t stride_b, std::uint64_t stride_c,
                std::uint64_t stride_d) noexcept
    {
        g_.batch = count;
        g_.stride_a = stride_a;
        g_.stride_b = stride_b;
        g_.stride_c = stride_c;
        g_.stride_d = stride_d;
        return *this;
    }
    [[nodiscard]] const hpu_gemm &raw() const noexcept { return g_; }

private:
    Gemm &flag(std::uint32_t bit, bool on) noexcept
    {
        g_.flags = on ? (g_.flags | bit) : (g_.flags & ~bit);
        return *this;
    }

    hpu_gemm g_{};
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
    /** Records a launch of k (a TPC queue runs it; since 1.5). */
    CommandList &launch(const Kernel &k, const Launch &l)
    {
        const hpu_launch raw = l.raw();
        detail::check_why(hpu_cmd_launch(get(), k.get(), &raw), "recording a TPC launch");
        return *this;
    }
    /** Records a GEMM (an MME queue runs it; since 1.5). */
    CommandList &gemm(const Gemm &g)
    {
        detail::check_why(hpu_cmd_gemm(get(), &g.raw()), "recording a GEMM");
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
        const auto raw = detail::raw_fences(waits);
        hpu_fence_t *out = nullptr;
        detail::check(hpu_queue_submit(get(), cl.get(), raw.data(), raw.size(), &out), "submitting a job");
        return Fence{out};
    }
    /** Submits cl with its own timeout (at most 1 hour; 0 ms: the driver's default). */
    Fence submit(CommandList &cl, std::chrono::milliseconds timeout, const std::vector<const Fence *> &waits = {})
    {
        const auto raw = detail::raw_fences(waits);
        const auto ms = timeout.count() < 0 ? 0 : timeout.count();
        const std::uint32_t t = ms > HPU_JOB_TIMEOUT_MAX_MS ? HPU_JOB_TIMEOUT_MAX_MS + 1 : static_cast<std::uint32_t>(ms);
        hpu_fence_t *out = nullptr;
        detail::check(hpu_queue_submit_timeout(get(), cl.get(), raw.data(), raw.size(), t, &out), "submitting a job");
        return Fence{out};
    }
    Fence copy(std::uint64_t dst_va, std::uint64_t src_va, std::uint64_t size)
    {
        hpu_fence_t *out = nullptr;
        detail::check_why(hpu_queue_copy(get(), dst_va, src_va, size, &out), "submitting a copy");
        return Fence{out};
    }
    // hpu_queue_copy_split(): the copy shared among up to max_engines DMA
    // engines (0: all). Since 1.11.
    Fence copy_split(std::uint64_t dst_va, std::uint64_t src_va, std::uint64_t size, std::uint32_t max_engines = 0)
    {
        hpu_fence_t *out = nullptr;
        detail::check_why(hpu_queue_copy_split(get(), dst_va, src_va, size, max_engines, &out),
                          "submitting a split copy");
        return Fence{out};
    }
    Fence memset(std::uint64_t dst_va, std::uint64_t pattern, std::uint64_t size)
    {
        hpu_fence_t *out = nullptr;
        detail::check_why(hpu_queue_memset(get(), dst_va, pattern, size, &out), "submitting a memset");
        return Fence{out};
    }
    Fence write_value(std::uint64_t va, std::uint32_t value)
    {
        hpu_fence_t *out = nullptr;
        detail::check(hpu_queue_write_value(get(), va, value, &out), "submitting a write-value");
        return Fence{out};
    }
    /** Eager: one launch of k as one job after waits (a TPC queue; since 1.5). */
    Fence launch(const Kernel &k, const Launch &l, const std::vector<const Fence *> &waits = {})
    {
        const auto raw = detail::raw_fences(waits);
        const hpu_launch args = l.raw();
        hpu_fence_t *out = nullptr;
        detail::check_why(hpu_queue_launch(get(), k.get(), &args, raw.data(), raw.size(), &out),
                          "submitting a TPC launch");
        return Fence{out};
    }
    /** Eager: one GEMM as one job after waits (an MME queue; since 1.5). */
    Fence gemm(const Gemm &g, const std::vector<const Fence *> &waits = {})
    {
        const auto raw = detail::raw_fences(waits);
        hpu_fence_t *out = nullptr;
        detail::check_why(hpu_queue_gemm(get(), &g.raw(), raw.data(), raw.size(), &out), "submitting a GEMM");
        return Fence{out};
    }
};

/**
 * A sync object of the device reserved for the caller's own SOB_UPDATE and
 * WAIT packets (hpu_sob_alloc/free; since 1.5). Move-only; returned
 * exactly once. The Device must outlive it.
 */
class SyncObject {
public:
    SyncObject() noexcept = default;
    /** Takes ownership of sync object sob reserved on dev. */
    SyncObject(hpu_device_t *dev, std::uint32_t sob) noexcept : dev_(dev), sob_(sob) {}
    /** Reserves one. Throws hpu::Error (EBUSY: all taken). */
    static SyncObject alloc(const Device &dev)
    {
        std::uint32_t sob = 0;
        detail::check(hpu_sob_alloc(dev.get(), &sob), "reserving a sync object");
        return SyncObject{dev.get(), sob};
    }
    SyncObject(const SyncObject &) = delete;
    SyncObject &operator=(const SyncObject &) = delete;
    SyncObject(SyncObject &&other) noexcept
        : dev_(std::exchange(other.dev_, nullptr)), sob_(std::exchange(other.sob_, 0))
    {
    }
    SyncObject &operator=(SyncObject &&other) noexcept
    {
        if (this != &other) {
            reset();
            dev_ = std::exchange(other.dev_, nullptr);
            sob_ = std::exchange(other.sob_, 0);
        }
        return *this;
    }
    ~SyncObject() { reset(); }

    /** Returns the sync object (if any) to the device. */
    void reset() noexcept
    {
        if (hpu_device_t *d = std::exchange(dev_, nullptr); d != nullptr)
            (void)hpu_sob_free(d, sob_);
    }
    /** Gives up ownership without returning it; its number. */
    [[nodiscard]] std::uint32_t release() noexcept
    {
        dev_ = nullptr;
        return sob_;
    }
    /** Its number, for CommandList::sob_update() and wait_sob(). */
    [[nodiscard]] std::uint32_t id() const noexcept { return sob_; }
    explicit operator bool() const noexcept { return dev_ != nullptr; }

private:
    hpu_device_t *dev_ = nullptr;
    std::uint32_t sob_ = 0;
};

/**
 * A recorded graph of copies, memsets, launches and GEMMs across engines
 * (hpu_graph_*; since 1.5). Nodes are added with the ids of the nodes
 * they depend on; launch() submits the whole graph (compiled at the first
 * launch) and may be called any number of times. Move-only; destroyed
 * exactly once (after its launches end). Not thread-safe.
 */
class Graph : public detail::Owner<hpu_graph_t, hpu_graph_destroy> {
public:
    using Owner::Owner;
    using NodeId = std::uint32_t;
    using Deps = std::vector<NodeId>;

    static Graph create(const Device &dev)
    {
        hpu_graph_t *g = nullptr;
        detail::check_why(hpu_graph_create(dev.get(), &g), "creating a graph");
        return Graph{g};
    }

    NodeId add_copy(std::uint64_t dst_va, std::uint64_t src_va, std::uint64_t size, const Deps &deps = {})
    {
        return node(hpu_graph_add_copy(get(), dst_va, src_va, size, deps.data(), deps.size()), "adding a copy");
    }
    NodeId add_memset(std::uint64_t dst_va, std::uint64_t pattern, std::uint64_t size, const Deps &deps = {})
    {
        return node(hpu_graph_add_memset(get(), dst_va, pattern, size, deps.data(), deps.size()),
                    "adding a memset");
    }
    /** The graph keeps its own reference to k's binary. */
    NodeId add_launch(const Kernel &k, const Launch &l, const Deps &deps = {})
    {
        const hpu_launch raw = l.raw();
        return node(hpu_graph_add_launch(get(), k.get(), &raw, deps.data(), deps.size()), "adding a TPC launch");
    }
    NodeId add_gemm(const Gemm &g, const Deps &deps = {})
    {
        return node(hpu_graph_add_gemm(get(), &g.raw(), deps.data(), deps.size()), "adding a GEMM");
    }
    /** Number of nodes. */
    [[nodiscard]] std::size_t size() const noexcept { return hpu_graph_size(get()); }
    /** Changes scalar index of launch node for the launches that follow. Throws hpu::Error. */
    template <ScalarWord T>
    Graph &set_scalar(NodeId launch_node, std::uint32_t index, T value)
    {
        detail::check_why(hpu_graph_set_scalar(get(), launch_node, index, std::bit_cast<std::uint32_t>(value)),
                          "setting a graph scalar");
        return *this;
    }
    /** Changes the random-number key of launch node for the launches that follow (1.6). Throws hpu::Error. */
    Graph &set_seed(NodeId launch_node, std::uint64_t seed)
    {
        detail::check_why(hpu_graph_set_seed(get(), launch_node, seed), "setting a graph seed");
        return *this;
    }
    /** Submits the graph once after waits; the fence signals when every node has run. */
    Fence launch(const std::vector<const Fence *> &waits = {})
    {
        const auto raw = detail::raw_fences(waits);
        hpu_fence_t *out = nullptr;
        detail::check_why(hpu_graph_launch(get(), raw.data(), raw.size(), &out), "launching a graph");
        return Fence{out};
    }

private:
    static NodeId node(int ret, const char *what) { return static_cast<NodeId>(detail::check_why(ret, what)); }
};

} // namespace hpu

#endif // HPU_HPU_HPP
