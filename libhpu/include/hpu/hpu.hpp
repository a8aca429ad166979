// SPDX-License-Identifier: MIT
// hpu.hpp - header-only C++20 RAII wrappers over the C ABI of libhpu.
//
// Errors surface as hpu::Error (a std::runtime_error): errnum() gives the
// positive errno, code() the same as a std::error_code, what() names the
// operation followed by hpu_strerror()'s text.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_HPU_HPP
#define HPU_HPU_HPP

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "hpu/hpu.h"

namespace hpu {

/** An error from libhpu: the errno value and a message. */
class Error : public std::runtime_error {
public:
    // err: a negative (or positive) errno value as the C ABI returns it;
    // what() is "<what>: <hpu_strerror(err)>".
    Error(int err, const std::string &what)
        : std::runtime_error(what + ": " + hpu_strerror(err)), errnum_(err < 0 ? -err : err)
    {
    }
    /** The positive errno value. */
    [[nodiscard]] int errnum() const noexcept { return errnum_; }
    /** The errno value as a std::error_code (generic category). */
    [[nodiscard]] std::error_code code() const noexcept { return {errnum_, std::generic_category()}; }

private:
    int errnum_;
};

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
    Device(Device &&other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
    Device &operator=(Device &&other) noexcept
    {
        if (this != &other)
            reset(std::exchange(other.h_, nullptr));
        return *this;
    }
    ~Device() { reset(); }

    /** Closes the current handle (if any) and takes h instead. */
    void reset(hpu_device_t *h = nullptr) noexcept
    {
        hpu_device_t *old = std::exchange(h_, h);
        if (old != nullptr)
            hpu_close(old);
    }

    /** Gives up ownership without closing. */
    [[nodiscard]] hpu_device_t *release() noexcept { return std::exchange(h_, nullptr); }
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

private:
    hpu_device_t *h_ = nullptr;
};

} // namespace hpu

#endif // HPU_HPU_HPP
