// SPDX-License-Identifier: MIT
// Helpers of the VM tests that unbind, rebind and reset devices: whether a
// device is bound, a guard that binds it again, its accel node, and the
// kernel log since a point in time.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"

namespace vmt {

inline constexpr const char *kHpuDriverDir = "/sys/bus/pci/drivers/hpu";

inline std::string pci_dir(const std::string &bdf) { return "/sys/bus/pci/devices/" + bdf; }

inline bool is_bound(const std::string &bdf)
{
    return ::access((std::string(kHpuDriverDir) + "/" + bdf).c_str(), F_OK) == 0;
}

// The accel node of a bound device ("" if none).
inline std::string accel_node_of(const std::string &bdf)
{
    std::string n;
    if (DIR *d = ::opendir((pci_dir(bdf) + "/accel").c_str())) {
        while (const dirent *e = ::readdir(d)) {
            if (std::strncmp(e->d_name, "accel", 5) == 0)
                n = std::string("/dev/accel/") + e->d_name;
        }
        ::closedir(d);
    }
    return n;
}

// Binds the device again when the test leaves it unbound, whatever happens.
struct BindGuard {
    std::string bdf;
    explicit BindGuard(std::string b) : bdf(std::move(b)) {}
    BindGuard(const BindGuard &) = delete;
    BindGuard &operator=(const BindGuard &) = delete;
    BindGuard(BindGuard &&) = delete;
    BindGuard &operator=(BindGuard &&) = delete;
    ~BindGuard()
    {
        if (!is_bound(bdf))
            write_text(std::string(kHpuDriverDir) + "/bind", bdf);
    }
};

// The kernel log from the moment of construction, read through /dev/kmsg.
class KmsgTail {
public:
    KmsgTail() : fd_(::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC)) // NOLINT(cppcoreguidelines-pro-type-vararg)
    {
        REQUIRE(fd_ >= 0);
        REQUIRE(::lseek(fd_, 0, SEEK_END) >= 0);
    }
    KmsgTail(const KmsgTail &) = delete;
    KmsgTail &operator=(const KmsgTail &) = delete;
    KmsgTail(KmsgTail &&) = delete;
    KmsgTail &operator=(KmsgTail &&) = delete;
    ~KmsgTail() { ::close(fd_); }
    // Every message text logged since construction (or the last call), one a line.
    std::string read_new()
    {
        std::string out;
        std::array<char, 8192> rec{};
        for (;;) {
            const ssize_t n = ::read(fd_, rec.data(), rec.size() - 1);
            if (n < 0 && errno == EPIPE)
                continue; // overwritten records: skip ahead
            if (n <= 0)
                break;
            const std::string r(rec.data(), static_cast<std::size_t>(n));
            const auto semi = r.find(';');
            const auto nl = r.find('\n');
            if (semi != std::string::npos && nl != std::string::npos && nl > semi)
                out += r.substr(semi + 1, nl - semi - 1) + "\n";
        }
        all_ += out;
        return out;
    }
    [[nodiscard]] const std::string &all() const { return all_; }

private:
    int fd_;
    std::string all_;
};

} // namespace vmt
