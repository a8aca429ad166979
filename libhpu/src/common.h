// SPDX-License-Identifier: MIT
// Helpers every translation unit of libhpu uses (internal).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_COMMON_H
#define HPU_SRC_COMMON_H

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <string_view>
#include <system_error>

namespace hpu::detail {

// Runs f, mapping exceptions to -ENOMEM (allocation) or -EIO.
template <typename F>
int guarded(F &&f) noexcept
{
    try {
        return f();
    } catch (const std::bad_alloc &) {
        return -ENOMEM;
    } catch (...) {
        return -EIO;
    }
}

// s without leading and trailing blanks and line ends (sysfs and /proc text).
inline std::string_view trim(std::string_view s)
{
    const auto *ws = " \t\r\n";
    const auto b = s.find_first_not_of(ws);
    if (b == std::string_view::npos)
        return {};
    const auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

// All of s as a number of type T in base (digits only: no sign on an
// unsigned T, no "0x", no blanks); std::nullopt for anything else or a
// value T cannot hold.
template <typename T>
std::optional<T> parse_num(std::string_view s, int base = 10)
{
    T v{};
    const auto *end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, v, base);
    if (s.empty() || ec != std::errc() || ptr != end)
        return std::nullopt;
    return v;
}

// Copies src into a fixed char array, truncating, always NUL terminated.
template <std::size_t N>
void copy_str(char (&dst)[N], std::string_view src) // NOLINT(modernize-avoid-c-arrays)
{
    const std::size_t n = std::min(src.size(), N - 1);
    std::memcpy(static_cast<char *>(dst), src.data(), n);
    dst[n] = '\0'; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
}

// Copies src into a forward-compatible answer *out (a structure starting
// with uint32_t size, set by the caller): no byte at or beyond out->size
// is written; size is set to the bytes filled.
template <typename T>
void fill_sized(T &src, T *out)
{
    const auto filled = static_cast<std::uint32_t>(std::min<std::size_t>(out->size, sizeof(src)));
    src.size = filled;
    std::memcpy(out, &src, filled);
}

} // namespace hpu::detail

#endif // HPU_SRC_COMMON_H
