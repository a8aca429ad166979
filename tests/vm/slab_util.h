// SPDX-License-Identifier: MIT
// slab_util.h: kernel slab-cache object counts, for the leak checks of the
// VM tests (err_util.h) and of hpu-fuzz. Depends on nothing but the C++
// library, so programs without Catch2 include it too.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_VM_SLAB_UTIL_H
#define HPU_TESTS_VM_SLAB_UTIL_H

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace slabutil {

// The first number in a file (decimal, or 0x-hex), if it has one.
inline std::optional<std::uint64_t> read_first_u64(const std::string &path)
{
    std::ifstream f(path);
    std::string t;
    if (!(f >> t))
        return std::nullopt;
    try {
        return std::stoull(t, nullptr, 0);
    } catch (...) {
        return std::nullopt;
    }
}

// Active objects of the slab caches whose name contains one of `names`
// (from /proc/slabinfo). With `shrink` (root), each named cache is shrunk
// first, which flushes its per-CPU partial slabs: otherwise they count as
// in use and the number moves with the peak of objects alive, not with
// the objects alive now.
inline std::map<std::string, long> objects(const std::vector<std::string> &names, bool shrink = false)
{
    if (shrink) {
        for (const auto &n : names) {
            const std::string path = "/sys/kernel/slab/" + n + "/shrink";
            const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
            if (fd >= 0) {
                (void)!::write(fd, "1", 1);
                ::close(fd);
            }
        }
    }
    std::map<std::string, long> out;
    std::ifstream f("/proc/slabinfo");
    std::string line;
    while (std::getline(f, line)) {
        std::istringstream ls(line);
        std::string name;
        long active = 0;
        if (!(ls >> name >> active))
            continue;
        for (const auto &n : names) {
            if (name.find(n) != std::string::npos)
                out[name] = active;
        }
    }
    // A cache SLUB merged into another is missing from /proc/slabinfo; its
    // alias in /sys/kernel/slab counts the objects of the merged cache.
    for (const auto &n : names) {
        if (out.count(n) != 0U)
            continue;
        if (const auto v = read_first_u64("/sys/kernel/slab/" + n + "/objects"))
            out[n + "(merged)"] = static_cast<long>(*v);
    }
    return out;
}

} // namespace slabutil

#endif
