// SPDX-License-Identifier: MIT
//
// A command buffer under construction, for the tests of every layer (the
// model's unit tests in tests/unit/emu, the VM tests in tests/vm): the
// packets of the hardware spec (include/hw/hpu_regs.h), little-endian, in
// 8-byte units, with nothing checked, so that malformed packets can be
// built as easily as good ones.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hw/hpu_regs.h"

namespace hpu_test {

class CmdBuf {
public:
    CmdBuf &nop(std::uint32_t reserved = 0) { return w(HPU_PKT_NOP, reserved); }
    CmdBuf &lin_dma(std::uint64_t src, std::uint64_t dst, std::uint64_t size, std::uint32_t flags = 0)
    {
        w(HPU_PKT_LIN_DMA, flags);
        q(src);
        q(dst);
        return q(size);
    }
    CmdBuf &memset(std::uint64_t pattern, std::uint64_t dst, std::uint64_t size)
    {
        return lin_dma(pattern, dst, size, HPU_LIN_DMA_MEMSET);
    }
    CmdBuf &write_value(std::uint64_t addr, std::uint32_t value)
    {
        w(HPU_PKT_WRITE_VALUE, value);
        return q(addr);
    }
    CmdBuf &sob_update(std::uint32_t sob, std::uint32_t value, std::uint32_t op = HPU_SOB_OP_SET)
    {
        w(HPU_PKT_SOB_UPDATE, sob);
        return w(value, op);
    }
    CmdBuf &wait(std::uint32_t sob, std::uint32_t value, std::uint32_t cond = HPU_WAIT_GE)
    {
        w(HPU_PKT_WAIT, sob);
        return w(value, cond);
    }
    CmdBuf &wreg(std::uint32_t offset, std::uint32_t value, std::uint32_t reserved = 0)
    {
        w(HPU_PKT_WREG, offset);
        return w(value, reserved);
    }
    // Any two 32-bit halves: a header of one's choice, or a packet's tail.
    CmdBuf &raw(std::uint32_t lo, std::uint32_t hi) { return w(lo, hi); }
    CmdBuf &clear()
    {
        bytes_.clear();
        return *this;
    }

    [[nodiscard]] const std::uint8_t *data() const { return bytes_.data(); }
    // Length in bytes.
    [[nodiscard]] std::uint32_t size() const { return static_cast<std::uint32_t>(bytes_.size()); }
    [[nodiscard]] std::uint32_t bytes() const { return size(); }
    // The buffer as 64-bit words.
    [[nodiscard]] std::vector<std::uint64_t> words() const
    {
        std::vector<std::uint64_t> out(bytes_.size() / 8);
        for (std::size_t i = 0; i < out.size(); ++i) {
            for (std::size_t k = 0; k < 8; ++k)
                out[i] |= static_cast<std::uint64_t>(bytes_[8 * i + k]) << (8U * k);
        }
        return out;
    }

private:
    CmdBuf &w(std::uint32_t lo, std::uint32_t hi)
    {
        return q(static_cast<std::uint64_t>(lo) | (static_cast<std::uint64_t>(hi) << 32U));
    }
    CmdBuf &q(std::uint64_t v)
    {
        for (unsigned int k = 0; k < 8; ++k)
            bytes_.push_back(static_cast<std::uint8_t>(v >> (8U * k)));
        return *this;
    }
    std::vector<std::uint8_t> bytes_;
};

} // namespace hpu_test
