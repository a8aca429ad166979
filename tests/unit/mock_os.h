// SPDX-License-Identifier: MIT
// A fake kernel for libhpu's unit tests: a mock Os with an in-memory sysfs
// (files, symbolic links, directories), device nodes answering the INFO
// ioctl, call counters and per-path / per-call failure injection.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_MOCK_OS_H
#define HPU_TESTS_MOCK_OS_H

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

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
        const int fd = next_fd_++;
        open_fds[fd] = path;
        return fd;
    }

    int close(int fd) override
    {
        ++close_calls;
        closed_fds.push_back(fd);
        if (open_fds.erase(fd) == 0)
            return -EBADF;
        return close_fail;
    }

    int ioctl(int fd, unsigned long request, void *arg) override
    {
        ++ioctl_calls;
        last_request = request;
        const auto node = open_fds.find(fd);
        if (node == open_fds.end())
            return -EBADF;
        if (request != DRM_IOCTL_HPU_INFO)
            return -ENOTTY;
        auto *req = static_cast<drm_hpu_info *>(arg);
        last_info = *req;
        if (ioctl_fail != 0)
            return ioctl_fail;
        // What the driver checks.
        if (req->op != DRM_HPU_INFO_DEVICE || req->flags != 0 || req->pad != 0)
            return -EINVAL;
        const drm_hpu_info_device &answer = nodes.at(node->second);
        const std::size_t full = answer_size >= 0 ? static_cast<std::size_t>(answer_size) : sizeof(answer);
        const auto n = std::min<std::size_t>({req->size, full, sizeof(answer)});
        if (n > 0 && req->ptr == 0)
            return -EFAULT;
        if (n > 0)
            std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(req->ptr)), &answer, n); // NOLINT(performance-no-int-to-ptr,cppcoreguidelines-pro-type-reinterpret-cast)
        req->size = static_cast<__u32>(full);
        return 0;
    }

    int read_file(const std::string &path, std::string &out) override
    {
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
    static std::string hex(unsigned int v)
    {
        static constexpr const char *digits = "0123456789abcdef";
        std::string s;
        for (int shift = 12; shift >= 0; shift -= 4)
            s += digits[(v >> static_cast<unsigned>(shift)) & 0xfU]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        return "0x" + s + "\n";
    }

    int next_fd_ = 100;
};

// Installs a MockOs for the lifetime of the object.
class ScopedMock {
public:
    explicit ScopedMock(MockOs &mock) : prev_(hpu::detail::set_os(&mock)) {}
    ScopedMock(const ScopedMock &) = delete;
    ScopedMock &operator=(const ScopedMock &) = delete;
    ScopedMock(ScopedMock &&) = delete;
    ScopedMock &operator=(ScopedMock &&) = delete;
    ~ScopedMock() { hpu::detail::set_os(prev_); }

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
