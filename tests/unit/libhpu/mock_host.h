// SPDX-License-Identifier: MIT
// libhpu's mock OS, host part (mock_os.h): sysfs, /proc, clock, fds.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_MOCK_HOST_H
#define HPU_TESTS_MOCK_HOST_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <linux/types.h>

#include "os.h"

namespace hpu::test {

// The host side of the mock: an in-memory sysfs and /proc (files, symbolic
// links, directories), sysfs writes, the monotonic clock and sleeps, the
// fd numbers, and the misuse counter every layer above adds to.
class MockHost : public hpu::detail::Os {
public:
    // Fake file system.
    std::map<std::string, std::string> files;
    std::map<std::string, std::string> links;
    std::map<std::string, std::vector<std::string>> dirs;

    // Injected failures: path -> negative errno.
    std::map<std::string, int> read_fail;
    std::map<std::string, int> list_fail;
    std::map<std::string, int> link_fail;
    std::map<std::string, int> write_fail;           // path -> errno of write_file
    std::vector<std::pair<std::string, std::string>> written; // write_file calls

    // Observations.
    int misuse = 0;          // releases of unknown objects, double closes
    std::map<std::string, int> read_calls_by_path;

    // Monotonic clock (ns) and the sleeps seen.
    std::int64_t now_ns = 1000000000LL;
    std::vector<std::int64_t> sleeps;      // sleep_ns() calls
    std::function<void()> on_sleep;        // runs inside each sleep (after the clock moved)

    std::int64_t clock_step_ns = 0;        // the clock moves this much at each reading
    std::function<void()> on_clock;        // runs at each reading (before it)

    std::int64_t monotonic_ns() override
    {
        if (on_clock)
            on_clock();
        now_ns += clock_step_ns;
        return now_ns;
    }

    // flush_wc_stores() calls (each SUBMIT records the count it saw).
    int wc_flushes = 0;
    void flush_wc_stores() override { ++wc_flushes; }

    void sleep_ns(std::int64_t ns) override
    {
        sleeps.push_back(ns);
        now_ns += ns;
        if (on_sleep)
            on_sleep();
    }

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

    // read_file_max(): files as read_file(); a path in read_short yields only
    // that many bytes (a file cut short while read).
    std::map<std::string, std::size_t> read_short;
    int read_file_max(const std::string &path, std::string &out, std::size_t max) override
    {
        if (const int err = read_file(path, out); err < 0)
            return err;
        if (auto it = read_short.find(path); it != read_short.end() && it->second < out.size())
            out.resize(it->second);
        return out.size() > max ? -EFBIG : 0;
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

protected:
    static void *ptr(__u64 p) { return reinterpret_cast<void *>(static_cast<uintptr_t>(p)); } // NOLINT(performance-no-int-to-ptr,cppcoreguidelines-pro-type-reinterpret-cast)

    // A new fd number (device files, eventfds, dma-bufs, sync_files).
    int new_fd() { return next_fd_++; }

    static std::string hex(unsigned int v)
    {
        static constexpr const char *digits = "0123456789abcdef";
        std::string s;
        for (int shift = 12; shift >= 0; shift -= 4)
            s += digits[(v >> static_cast<unsigned>(shift)) & 0xfU]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        return "0x" + s + "\n";
    }

private:
    int next_fd_ = 100;
};

} // namespace hpu::test

#endif // HPU_TESTS_MOCK_HOST_H
