// SPDX-License-Identifier: MIT
// TPC kernel binaries for libhpu's unit tests, laid out field by field
// from Documentation/hw/tpc.md ("Kernel binary"), with the code a pattern
// of bytes (libhpu checks the header and metadata, never decodes bundles).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_TPC_BINARY_H
#define HPU_TESTS_TPC_BINARY_H

#include <array>
#include <cstdint>
#include <string>

#include "spec_bytes.h"

namespace hpu::test {

struct BinSpec {
    std::uint8_t num_tensors = 3;
    std::uint8_t num_scalars = 3;
    std::uint8_t index_dims = 3;
    std::array<std::uint8_t, 16> dtypes{}; // pins: 0 any, else HPU_DTYPE_*
    std::string name = "unit_kernel";
    std::uint32_t bundles = 2;
    std::uint32_t slm = 16;
    std::uint32_t vlm = 256;
    std::string meta = std::string("doc=a test kernel") + '\0'; // after the code; "" for none
};

// Header offsets of tpc.md's table that the malformed-binary tests patch.
namespace bin_off {
inline constexpr std::size_t kMagic = 0;
inline constexpr std::size_t kVersion = 4;
inline constexpr std::size_t kTotal = 8;
inline constexpr std::size_t kFlags = 12;
inline constexpr std::size_t kCodeOffset = 16;
inline constexpr std::size_t kEntry = 28;
inline constexpr std::size_t kIndexDims = 34;
inline constexpr std::size_t kSlm = 36;
inline constexpr std::size_t kMetaOffset = 44;
inline constexpr std::size_t kDtypes = 64;
inline constexpr std::size_t kName = 80;
} // namespace bin_off

inline Bytes tpc_binary(const BinSpec &s)
{
    const std::uint32_t code = s.bundles * 64;
    const auto meta = static_cast<std::uint32_t>(s.meta.size());
    Bytes b;
    le32(b, 0x43505448U); // "HTPC"
    le16(b, 1);           // format_version
    le16(b, 128);         // header_size
    le32(b, 128 + code + meta);
    le32(b, 0);   // flags
    le32(b, 128); // code_offset
    le32(b, code);
    le32(b, s.bundles);
    le32(b, 0); // entry
    le8(b, s.num_tensors);
    le8(b, s.num_scalars);
    le8(b, s.index_dims);
    le8(b, 0);
    le32(b, s.slm);
    le32(b, s.vlm);
    le32(b, meta == 0 ? 0 : 128 + code);
    le32(b, meta);
    for (int i = 0; i < 3; ++i)
        le32(b, 0);
    b.insert(b.end(), s.dtypes.begin(), s.dtypes.end());
    for (std::size_t i = 0; i < 32; ++i)
        le8(b, i < s.name.size() ? static_cast<std::uint8_t>(s.name[i]) : 0);
    for (int i = 0; i < 4; ++i)
        le32(b, 0);
    for (std::uint32_t i = 0; i < code; ++i)
        le8(b, static_cast<std::uint8_t>(i * 7 + 1));
    b.insert(b.end(), s.meta.begin(), s.meta.end());
    return b;
}

// Overwrites n bytes at off with v, little-endian.
inline void put_le(Bytes &b, std::size_t off, std::uint64_t v, unsigned int n)
{
    for (unsigned int i = 0; i < n; ++i)
        b.at(off + i) = static_cast<std::uint8_t>(v >> (8U * i));
}

} // namespace hpu::test

#endif // HPU_TESTS_TPC_BINARY_H
