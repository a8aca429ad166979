// SPDX-License-Identifier: MIT
// Encoding of the command-buffer packets of Documentation/hw/
// memory-and-queues.md ("Packets"): little-endian, 8-byte aligned, a 32-bit
// header whose bits [7:0] are the opcode and [31:8] zero, every reserved
// field zero. Internal to libhpu.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_PACKETS_H
#define HPU_SRC_PACKETS_H

#include <cstddef>
#include <cstdint>

#include "hw/hpu_regs.h"

namespace hpu::detail::pkt {

inline constexpr std::size_t kNopSize = 8;
inline constexpr std::size_t kLinDmaSize = 32;
inline constexpr std::size_t kWriteValueSize = 16;
inline constexpr std::size_t kSobUpdateSize = 16;
inline constexpr std::size_t kWaitSize = 16;
// TPC_LAUNCH and MME_GEMM: opcode, a zero word, the descriptor's address.
inline constexpr std::size_t kAddrPacketSize = 16;
// Largest LIN_DMA transfer: 2^32 bytes (a multiple of 8, so a memset split
// at this size keeps the pattern's phase).
inline constexpr std::uint64_t kMaxDmaChunk = 1ULL << 32;

inline void put32(std::uint8_t *p, std::uint32_t v)
{
    for (unsigned int i = 0; i < 4; ++i)
        p[i] = static_cast<std::uint8_t>(v >> (8U * i)); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

inline void put64(std::uint8_t *p, std::uint64_t v)
{
    for (unsigned int i = 0; i < 8; ++i)
        p[i] = static_cast<std::uint8_t>(v >> (8U * i)); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

// Each writes one packet at p (which has room for its size).
inline void nop(std::uint8_t *p)
{
    put32(p, HPU_PKT_NOP);
    put32(p + 4, 0); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

inline void lin_dma(std::uint8_t *p, std::uint32_t flags, std::uint64_t src, std::uint64_t dst, std::uint64_t size)
{
    // NOLINTBEGIN(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    put32(p, HPU_PKT_LIN_DMA);
    put32(p + 4, flags);
    put64(p + 8, src);
    put64(p + 16, dst);
    put64(p + 24, size);
    // NOLINTEND(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

inline void write_value(std::uint8_t *p, std::uint64_t addr, std::uint32_t value)
{
    // NOLINTBEGIN(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    put32(p, HPU_PKT_WRITE_VALUE);
    put32(p + 4, value);
    put64(p + 8, addr);
    // NOLINTEND(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

inline void sob_update(std::uint8_t *p, std::uint32_t sob, std::uint32_t value, std::uint32_t op)
{
    // NOLINTBEGIN(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    put32(p, HPU_PKT_SOB_UPDATE);
    put32(p + 4, sob);
    put32(p + 8, value);
    put32(p + 12, op);
    // NOLINTEND(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

inline void wait(std::uint8_t *p, std::uint32_t sob, std::uint32_t value, std::uint32_t cond)
{
    // NOLINTBEGIN(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    put32(p, HPU_PKT_WAIT);
    put32(p + 4, sob);
    put32(p + 8, value);
    put32(p + 12, cond);
    // NOLINTEND(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

inline void addr_packet(std::uint8_t *p, std::uint32_t opcode, std::uint64_t addr)
{
    // NOLINTBEGIN(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    put32(p, opcode);
    put32(p + 4, 0);
    put64(p + 8, addr);
    // NOLINTEND(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

} // namespace hpu::detail::pkt

#endif // HPU_SRC_PACKETS_H
