// SPDX-License-Identifier: MIT
//
// A rig for the NIC ports of spec version 7 (Documentation/hw/nic.md) on top
// of the fake environment: port registers, transmit and receive rings in
// host memory (ASID 0 addresses with bit 63 set) or HBM, frames posted and
// read back, descriptors decoded.  The transmit bottom half and the receive
// kick run when the test says so (Env::nic_manual is set; NicRig::run()).
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include "hpu_rig.hpp"

namespace hpu_test {

using Bytes = std::vector<uint8_t>;

constexpr uint32_t NIC_UP = HPU_NIC_LINK_STATUS_ATTACHED | HPU_NIC_LINK_STATUS_UP;

// An Ethernet frame of @len bytes to @dst: source 02:00:00:00:00:01,
// EtherType 0x0800, then bytes seed, seed + 1, ...
inline Bytes eth_frame(const uint8_t *dst, size_t len, uint8_t seed = 1)
{
    Bytes f(len);
    static const uint8_t src[6] = { 0x02, 0, 0, 0, 0, 0x01 };

    for (size_t i = 0; i < len; i++) {
        f[i] = static_cast<uint8_t>(seed + i);
    }
    for (size_t i = 0; i < 6 && i < len; i++) {
        f[i] = dst[i];
    }
    for (size_t i = 0; i < 6 && 6 + i < len; i++) {
        f[6 + i] = src[i];
    }
    if (len >= 14) {
        f[12] = 0x08;
        f[13] = 0x00;
    }
    return f;
}

inline const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
inline const uint8_t MCAST[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
inline const uint8_t OTHER[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

// A transmit buffer: its bytes, where they live (host or HBM), flags.
struct TxBuf {
    Bytes bytes;
    bool hbm = false;
    uint8_t flags = 0;          // EOP added to the last buffer by send()
};

struct RxDesc {
    uint16_t size;
    uint16_t len;
    uint8_t status;
    uint8_t flags;
    uint16_t rsvd;
};

inline uint8_t code_of(uint8_t status)
{
    return (status & HPU_NIC_DESC_CODE_MASK) >> HPU_NIC_DESC_CODE_SHIFT;
}

inline uint8_t done(int code)
{
    return static_cast<uint8_t>(HPU_NIC_DESC_DONE |
                                code << HPU_NIC_DESC_CODE_SHIFT);
}

struct NicRig : Rig {
    struct Ring {
        uint64_t bus = 0;       // host bus address (0: in HBM at @hbm)
        uint64_t hbm = 0;
        uint32_t size = 0;
        uint32_t pi = 0;
        std::vector<uint64_t> buf;      // receive buffers (bus), per slot
        // every receive buffer posted (bus, size), for the guard check
        std::vector<std::pair<uint64_t, uint16_t>> posted;
    };
    // Bytes of 0xee after each receive buffer that no write may reach.
    static constexpr size_t RX_GUARD = 64;
    Ring tx[HPU_NIC_MAX_PORTS], rx[HPU_NIC_MAX_PORTS];
    uint64_t hbm_next = 32 * MiB;       // HBM for buffers

    NicRig() : Rig(256 * MiB)
    {
        env.nic_manual = true;
        for (unsigned int p = 0; p < HPU_NIC_MAX_PORTS; p++) {
            pwr(p, HPU_NIC_IRQ_STATUS, 0xffffffff);
        }
        env.vectors.clear();
    }

    static uint64_t port_reg(unsigned int p, uint32_t reg)
    {
        return HPU_NIC_PORT_BASE(p) + reg;
    }
    uint32_t prd(unsigned int p, uint32_t reg) { return rd(port_reg(p, reg)); }
    void pwr(unsigned int p, uint32_t reg, uint32_t v) { wr(port_reg(p, reg), v); }
    uint64_t counter(unsigned int p, unsigned int i)
    {
        uint32_t lo = prd(p, HPU_NIC_CNT_LO(i));
        return lo | static_cast<uint64_t>(prd(p, HPU_NIC_CNT_HI(i))) << 32;
    }
    Bytes mac(unsigned int p)
    {
        Bytes m(6);
        hpum_core_nic_mac(&core.cfg, p, m.data());
        return m;
    }
    // The bottom halves, as QEMU's main loop runs them after an access.
    void run() { nic_bh(); }

    // HBM for buffers (ASID 0 offsets)
    uint64_t balloc(uint64_t n)
    {
        uint64_t a = hbm_next;
        hbm_next = (hbm_next + n + 63) & ~63ULL;
        return a;
    }

    void ring_regs(unsigned int p, bool is_rx, uint64_t addr, uint32_t size)
    {
        uint32_t lo = is_rx ? HPU_NIC_RX_BASE_LO : HPU_NIC_TX_BASE_LO;

        pwr(p, lo, static_cast<uint32_t>(addr));
        pwr(p, lo + 4, static_cast<uint32_t>(addr >> 32));
        pwr(p, lo + 8, size);
    }
    void enable(unsigned int p, uint32_t bits)
    {
        pwr(p, HPU_NIC_CTRL, prd(p, HPU_NIC_CTRL) | bits);
    }
    void disable(unsigned int p, uint32_t bits)
    {
        pwr(p, HPU_NIC_CTRL, prd(p, HPU_NIC_CTRL) & ~bits);
    }
    // A ring of @size descriptors in host memory (zeroed), enabled.
    void tx_setup(unsigned int p, uint32_t size = 16)
    {
        tx[p] = Ring{};
        tx[p].bus = halloc(16 * size, 64);
        tx[p].size = size;
        std::memset(hp(tx[p].bus), 0, 16 * size);
        ring_regs(p, false, host_addr(tx[p].bus), size);
        enable(p, HPU_NIC_CTRL_TX_EN);
        REQUIRE(prd(p, HPU_NIC_CTRL) & HPU_NIC_CTRL_TX_EN);
    }
    uint64_t txd_bus(unsigned int p, uint32_t i)
    {
        return tx[p].bus + 16 * (i % tx[p].size);
    }
    // Write transmit descriptor @i raw.
    void txd_put(unsigned int p, uint32_t i, uint64_t addr, uint16_t len,
                 uint8_t flags, uint32_t rsvd = 0, uint8_t status = 0)
    {
        uint8_t *d = hp(txd_bus(p, i));

        std::memcpy(d, &addr, 8);
        std::memcpy(d + 8, &len, 2);
        d[10] = flags;
        d[11] = status;
        std::memcpy(d + 12, &rsvd, 4);
    }
    // The host bus address of transmit descriptor @i's buffer.
    uint64_t txd_buf(unsigned int p, uint32_t i)
    {
        uint64_t a;
        std::memcpy(&a, hp(txd_bus(p, i)), 8);
        return a & ~HPU_ADDR_HOST;
    }
    uint8_t txd_status(unsigned int p, uint32_t i) { return hp(txd_bus(p, i))[11]; }
    uint32_t txd_rsvd(unsigned int p, uint32_t i) { return hrd32(txd_bus(p, i) + 12); }
    // Place @b's bytes; returns the ASID 0 address.
    uint64_t place(const TxBuf &b)
    {
        if (b.hbm) {
            uint64_t off = balloc(b.bytes.size());
            bwrite(off, b.bytes.data(), b.bytes.size());
            return off;
        }
        uint64_t bus = halloc(b.bytes.size() ? b.bytes.size() : 1, 8);
        hwrite(bus, b.bytes.data(), b.bytes.size());
        return host_addr(bus);
    }
    // Post a frame's buffers (EOP on the last) without the doorbell;
    // returns the first descriptor's index.
    uint32_t tx_post(unsigned int p, const std::vector<TxBuf> &bufs)
    {
        uint32_t first = tx[p].pi;

        for (size_t i = 0; i < bufs.size(); i++) {
            uint8_t flags = bufs[i].flags;
            if (i + 1 == bufs.size()) {
                flags |= HPU_NIC_TXD_EOP;
            }
            txd_put(p, tx[p].pi++, place(bufs[i]),
                    static_cast<uint16_t>(bufs[i].bytes.size()), flags);
        }
        return first;
    }
    void tx_doorbell(unsigned int p) { pwr(p, HPU_NIC_TX_PI, tx[p].pi); }
    // Post @f in @nbufs host buffers and ring the doorbell.
    uint32_t send(unsigned int p, const Bytes &f, size_t nbufs = 1)
    {
        std::vector<TxBuf> bufs;
        size_t per = (f.size() + nbufs - 1) / nbufs, off = 0;

        for (size_t i = 0; i < nbufs; i++) {
            size_t n = std::min(per, f.size() - off);
            bufs.push_back(TxBuf{ Bytes(f.begin() + off, f.begin() + off + n) });
            off += n;
        }
        uint32_t first = tx_post(p, bufs);
        tx_doorbell(p);
        return first;
    }

    // A receive ring of @size descriptors in host memory, enabled.
    void rx_setup(unsigned int p, uint32_t size = 16)
    {
        auto posted = std::move(rx[p].posted);    // still guarded
        rx[p] = Ring{};
        rx[p].posted = std::move(posted);
        rx[p].bus = halloc(16 * size, 64);
        rx[p].size = size;
        rx[p].buf.assign(size, 0);
        std::memset(hp(rx[p].bus), 0, 16 * size);
        ring_regs(p, true, host_addr(rx[p].bus), size);
        enable(p, HPU_NIC_CTRL_RX_EN);
        REQUIRE(prd(p, HPU_NIC_CTRL) & HPU_NIC_CTRL_RX_EN);
    }
    uint64_t rxd_bus(unsigned int p, uint32_t i)
    {
        return rx[p].bus + 16 * (i % rx[p].size);
    }
    void rxd_put(unsigned int p, uint32_t i, uint64_t addr, uint16_t size,
                 uint16_t rsvd = 0)
    {
        uint8_t *d = hp(rxd_bus(p, i));

        std::memset(d, 0, 16);
        std::memcpy(d, &addr, 8);
        std::memcpy(d + 8, &size, 2);
        std::memcpy(d + 14, &rsvd, 2);
    }
    // Post @n host buffers of @size bytes (filled with 0xee, and followed
    // by RX_GUARD bytes of 0xee) and RX_PI.
    void rx_post(unsigned int p, uint32_t n, uint16_t size = 2048,
                 bool doorbell = true)
    {
        for (uint32_t k = 0; k < n; k++) {
            uint64_t b = halloc(size + RX_GUARD, 64);
            std::memset(hp(b), 0xee, size + RX_GUARD);
            rx[p].buf[rx[p].pi % rx[p].size] = b;
            rx[p].posted.emplace_back(b, size);
            rxd_put(p, rx[p].pi++, host_addr(b), size);
        }
        if (doorbell) {
            pwr(p, HPU_NIC_RX_PI, rx[p].pi);
        }
    }
    RxDesc rxd(unsigned int p, uint32_t i)
    {
        const uint8_t *d = hp(rxd_bus(p, i));
        RxDesc r;

        std::memcpy(&r.size, d + 8, 2);
        std::memcpy(&r.len, d + 10, 2);
        r.status = d[12];
        r.flags = d[13];
        std::memcpy(&r.rsvd, d + 14, 2);
        return r;
    }
    // Whether no receive buffer of port @p was written beyond its size.
    bool rx_guards_intact(unsigned int p)
    {
        for (const auto &[b, size] : rx[p].posted) {
            const uint8_t *g = hp(b) + size;
            if (std::any_of(g, g + RX_GUARD, [](uint8_t x) { return x != 0xee; })) {
                return false;
            }
        }
        return true;
    }
    Bytes rx_bytes(unsigned int p, uint32_t i, size_t n)
    {
        const uint8_t *b = hp(rx[p].buf[i % rx[p].size]);
        return Bytes(b, b + n);
    }
    // The frames port @p handed to its back end, in order.
    std::vector<Bytes> sent(unsigned int p)
    {
        std::vector<Bytes> v;
        for (const auto &f : env.sent) {
            if (f.port == p) {
                v.push_back(f.bytes);
            }
        }
        return v;
    }
    unsigned int vectors_of(unsigned int v)
    {
        return static_cast<unsigned int>(
            std::count(env.vectors.begin(), env.vectors.end(), v));
    }
};

} // namespace hpu_test
