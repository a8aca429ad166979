// SPDX-License-Identifier: MIT
//
// What the unit tests of spec version 4 (test_hpu_fw_*.cpp, test_hpu_sensors.cpp)
// share: image editing and re-signing with the firmware packer's library
// (tools/hpu-fwpack/fwimage.h, whose verify() is the reference the model's
// verdicts are compared with), refusal checks, the mailbox, hard resets,
// events, busy counters and the sensor configuration.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include <catch2/catch_test_macros.hpp>

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "hpu_rig.hpp"

using namespace hpu_test;
using Bytes = std::vector<uint8_t>;

namespace hpu_fw_test {

constexpr uint64_t MS = 1000000;

inline uint32_t get32(const Bytes &b, size_t off)
{
    return b[off] | b[off + 1] << 8 | b[off + 2] << 16 |
           static_cast<uint32_t>(b[off + 3]) << 24;
}

inline void put32(Bytes &b, size_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        b[off + i] = static_cast<uint8_t>(v >> (8 * i));
    }
}

// Strip the trailer, edit the signed region, fix its checksum, sign again.
inline Bytes resigned(Bytes img, const std::function<void(Bytes &)> &edit,
               const hpu::fw::Seed &seed = test_seed())
{
    img.resize(get32(img, 12));
    edit(img);
    put32(img, 12, static_cast<uint32_t>(img.size()));
    hpu::fw::fix_checksum(img);
    hpu::fw::sign(img, seed);
    return img;
}

// Offset of the section-table entry of @type.
inline size_t sect(const Bytes &img, uint32_t type)
{
    for (uint32_t i = 0; i < get32(img, 16); i++) {
        if (get32(img, 128 + 16 * i) == type) {
            return 128 + 16 * i;
        }
    }
    FAIL("no section of type " << type);
    return 0;
}

inline bool logged(Dev &d, const std::string &what)
{
    for (const auto &e : d.env.errors) {
        if (e.find(what) != std::string::npos) {
            return true;
        }
    }
    return false;
}

inline DevOpts no_boot()
{
    DevOpts o;
    o.boot = false;
    return o;
}

inline const char *const err_names[] = {
    "NONE", "BAD_MAGIC", "BAD_FORMAT", "TOO_LARGE", "TRUNCATED", "CORRUPT",
    "UNSIGNED", "NO_KEY", "BAD_SIGNATURE", "TOO_OLD", "BAD_LAYOUT",
    "DMA_ERROR", "NO_IMAGE",
};

// Boot @img (FW_IMG_SIZE @size) and expect refusal @code, logged by name.
inline void refused(Dev &d, const Bytes &img, uint32_t code, int64_t size = -1)
{
    d.env.errors.clear();
    d.wr(HPU_REG_IRQ_STATUS, 0xffffffff);
    REQUIRE(d.boot(img, size) == HPU_CPU_BOOT_FAILED);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == code);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_FW_BOOT);
    CHECK(d.rd(HPU_REG_FW_VERSION) == 0);
    CHECK(d.rd(HPU_REG_FW_BUILD(0)) == 0);
    CHECK(logged(d, std::string("refused ") + err_names[code]));
}

// The packer's reference verdict for the checks it implements (1-9).
inline void reference(const Bytes &img, uint32_t code, bool key = true,
               uint32_t min = 0)
{
    hpu::fw::PublicKey k = test_pubkey();
    CHECK(hpu::fw::verify(img, key ? &k : nullptr, min) == code);
}

inline uint32_t mbox(Dev &d, uint32_t op, uint32_t a0 = 0, uint32_t a1 = 0,
              uint32_t tag = 0x1234)
{
    d.wr(HPU_REG_MBOX_ARG0, a0);
    d.wr(HPU_REG_MBOX_ARG1, a1);
    d.wr(HPU_REG_MBOX_CMD, tag << HPU_MBOX_TAG_SHIFT | op);
    REQUIRE(d.rd(HPU_REG_MBOX_STATUS) ==
            (HPU_MBOX_BUSY | tag << HPU_MBOX_TAG_SHIFT));
    d.advance(HPU_MBOX_ANSWER_NS);
    uint32_t st = d.rd(HPU_REG_MBOX_STATUS);
    REQUIRE((st & (HPU_MBOX_BUSY | HPU_MBOX_DONE)) == HPU_MBOX_DONE);
    REQUIRE(st >> HPU_MBOX_TAG_SHIFT == tag);
    return (st & HPU_MBOX_RESULT_MASK) >> HPU_MBOX_RESULT_SHIFT;
}

inline void hard_reset(Dev &d)
{
    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    d.advance(HPU_HARD_RESET_NS);
    REQUIRE(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}

inline std::vector<Eqe> events(Rig &r, uint16_t id)
{
    std::vector<Eqe> v;
    for (uint32_t i = 0; i < r.rd(HPU_REG_EQ_PI); i++) {
        if (r.eqe(i).id == id) {
            v.push_back(r.eqe(i));
        }
    }
    return v;
}

inline uint64_t busy_ns(Dev &d, unsigned int e)
{
    uint64_t lo = d.rd(HPU_REG_BUSY_NS_LO(e));
    return lo | static_cast<uint64_t>(d.rd(HPU_REG_BUSY_NS_HI(e))) << 32;
}

// Keep DMA engine @e busy for @ns of device time: LIN_DMA host -> HBM in
// 1 MiB pieces, device time moving @per_piece while each piece is read.
struct Load {
    Rig &r;
    uint64_t src;
    explicit Load(Rig &rig) : r(rig), src(rig.halloc(8 * MiB, PG)) {}
    void run(unsigned int e, uint64_t ns, uint64_t per_piece = 10 * MS)
    {
        uint64_t pieces = ns / per_piece;

        r.env.on_dma_read = [&](uint64_t a) {
            if (a >= src && a < src + 8 * MiB) {
                r.advance(per_piece);
            }
        };
        while (pieces) {
            uint64_t n = std::min<uint64_t>(pieces, 8);
            CHECK(r.run_cb(Cb().lin_dma(host_addr(src), 64 * MiB, n * MiB), 0,
                           e).status == HPU_CQ_OK);
            pieces -= n;
        }
        r.env.on_dma_read = nullptr;
    }
};

inline DevOpts sensor_opts(uint32_t power_cap = 350000, uint32_t temp_max = 85000)
{
    DevOpts o;
    o.hbm = 256 * MiB;
    o.source = fw_source(10);
    o.source.limits[HPU_LIMIT_POWER_CAP] = { HPU_LIMIT_POWER_CAP, power_cap,
                                             1000, 450000 };
    o.source.limits[HPU_LIMIT_TEMP_MAX] = { HPU_LIMIT_TEMP_MAX, temp_max,
                                            26000, 100000 };
    return o;
}

} // namespace hpu_fw_test
