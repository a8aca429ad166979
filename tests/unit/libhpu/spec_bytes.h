// SPDX-License-Identifier: MIT
// Byte images built field by field from the spec's tables (Documentation/
// hw/memory-and-queues.md "Packets", tpc.md, mme.md), independent of
// libhpu's encoders, for the tests to compare what the mocked kernel
// received against.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_SPEC_BYTES_H
#define HPU_TESTS_SPEC_BYTES_H

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace hpu::test {

using Bytes = std::vector<std::uint8_t>;

inline void le8(Bytes &b, std::uint8_t v)
{
    b.push_back(v);
}
inline void le16(Bytes &b, std::uint16_t v)
{
    for (unsigned int i = 0; i < 2; ++i)
        b.push_back(static_cast<std::uint8_t>(v >> (8U * i)));
}
inline void le32(Bytes &b, std::uint32_t v)
{
    for (unsigned int i = 0; i < 4; ++i)
        b.push_back(static_cast<std::uint8_t>(v >> (8U * i)));
}
inline void le64(Bytes &b, std::uint64_t v)
{
    for (unsigned int i = 0; i < 8; ++i)
        b.push_back(static_cast<std::uint8_t>(v >> (8U * i)));
}
// The little-endian value of the n (at most 8) bytes at b[off].
inline std::uint64_t get_le(const Bytes &b, std::size_t off, unsigned int n)
{
    std::uint64_t v = 0;
    for (unsigned int i = 0; i < n; ++i)
        v |= static_cast<std::uint64_t>(b.at(off + i)) << (8U * i);
    return v;
}

inline Bytes cat(std::initializer_list<Bytes> parts)
{
    Bytes out;
    for (const auto &p : parts)
        out.insert(out.end(), p.begin(), p.end());
    return out;
}

// A packet of 32-bit words, the first the opcode.
inline Bytes spec_words(std::initializer_list<std::uint32_t> words)
{
    Bytes b;
    for (const std::uint32_t w : words)
        le32(b, w);
    return b;
}

// The packets as the spec lays them out.
inline Bytes spec_nop()
{
    return spec_words({0x00, 0});
}
inline Bytes spec_lin_dma(std::uint32_t flags, std::uint64_t src, std::uint64_t dst, std::uint64_t size)
{
    Bytes b = spec_words({0x01, flags});
    le64(b, src);
    le64(b, dst);
    le64(b, size);
    return b;
}
inline Bytes spec_write_value(std::uint32_t value, std::uint64_t addr)
{
    Bytes b = spec_words({0x02, value});
    le64(b, addr);
    return b;
}
inline Bytes spec_sob_update(std::uint32_t sob, std::uint32_t value, std::uint32_t op)
{
    return spec_words({0x03, sob, value, op});
}
inline Bytes spec_wait(std::uint32_t sob, std::uint32_t value, std::uint32_t cond)
{
    return spec_words({0x04, sob, value, cond});
}
// TPC_LAUNCH (0x06) and MME_GEMM (0x07): a zero word, the descriptor's address.
inline Bytes spec_desc_packet(std::uint32_t opcode, std::uint64_t desc)
{
    Bytes b = spec_words({opcode, 0});
    le64(b, desc);
    return b;
}

} // namespace hpu::test

#endif // HPU_TESTS_SPEC_BYTES_H
