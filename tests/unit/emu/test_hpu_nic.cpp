// SPDX-License-Identifier: MIT
//
// Unit tests of spec version 7, part 1 (Documentation/hw/nic.md): the NIC
// ports' registers, the transmit ring (every status code, multi-buffer
// frames, padding), the receive path (filter, MTU, the FIFO as the back
// end's queue, descriptor errors), interrupts and their mask, counters,
// fault injection, the link, and resets with a frame in flight.  The port's
// bottom halves run only when a test says so (NicRig::run()).
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <random>

#include "hpu_nic_rig.hpp"

using namespace hpu_test;

namespace {

constexpr uint32_t ALL_EN = HPU_NIC_CTRL_TX_EN | HPU_NIC_CTRL_RX_EN;

// A frame to port @p's own address.
Bytes to_port(NicRig &r, unsigned int p, size_t len, uint8_t seed = 1)
{
    return eth_frame(r.mac(p).data(), len, seed);
}

Bytes padded(Bytes f)
{
    if (f.size() < HPU_NIC_FRAME_PAD) {
        f.resize(HPU_NIC_FRAME_PAD, 0);
    }
    return f;
}

// Port @p transmits one frame of @len bytes; returns its descriptor status.
uint8_t tx_one(NicRig &r, unsigned int p, size_t len)
{
    uint32_t i = r.send(p, eth_frame(OTHER, len));
    r.run();
    return r.txd_status(p, i);
}

} // namespace

TEST_CASE("NIC registers: identity, permanent MAC from the UUID, reset values", "[emu][nic]")
{
    NicRig r;

    // test_uuid bytes 13, 14, 15: 0x65, 0x43, 0x21
    for (unsigned int p = 0; p < HPU_NIC_MAX_PORTS; p++) {
        CAPTURE(p);
        CHECK(r.prd(p, HPU_NIC_PORT_ID) == p);
        CHECK(r.prd(p, HPU_NIC_PERM_MAC_LO) == 0x65504802u);
        CHECK(r.prd(p, HPU_NIC_PERM_MAC_HI) == (0x43u | (0x20u | p) << 8));
        CHECK(r.prd(p, HPU_NIC_MAC_LO) == r.prd(p, HPU_NIC_PERM_MAC_LO));
        CHECK(r.prd(p, HPU_NIC_MAC_HI) == r.prd(p, HPU_NIC_PERM_MAC_HI));
        CHECK(r.prd(p, HPU_NIC_LINK_STATUS) == NIC_UP);
        CHECK(r.prd(p, HPU_NIC_SPEED) == 100000u);
        CHECK(r.prd(p, HPU_NIC_MTU) == 1500u);
        CHECK(r.prd(p, HPU_NIC_CTRL) == 0u);
        CHECK(r.prd(p, HPU_NIC_RX_FILTER) == 0u);
        CHECK(r.prd(p, HPU_NIC_IRQ_MASK) == 0u);
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == 0u);
        CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 0u);
        CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == 0u);
        for (unsigned int i = 0; i < HPU_NIC_NUM_COUNTERS; i++) {
            CHECK(r.counter(p, i) == 0u);
        }
    }
    const Bytes m = r.mac(3);
    CHECK(m == Bytes{ 0x02, 0x48, 0x50, 0x65, 0x43, 0x23 });
    CHECK(r.rd(HPU_REG_ENGINES) >> 24 == 10u);
    CHECK(r.error() == 0u);
    CHECK(r.env.errors.empty());
}

TEST_CASE("NIC registers: read-only registers, unstored bits and unmapped offsets", "[emu][nic]")
{
    NicRig r;
    const unsigned int p = 2;

    SECTION("writes to read-only registers are dropped with BAD_ACCESS") {
        const uint32_t reg = GENERATE(uint32_t{HPU_NIC_PORT_ID},
                                      uint32_t{HPU_NIC_PERM_MAC_LO},
                                      uint32_t{HPU_NIC_PERM_MAC_HI},
                                      uint32_t{HPU_NIC_LINK_STATUS},
                                      uint32_t{HPU_NIC_SPEED},
                                      uint32_t{HPU_NIC_LINK_CHANGES},
                                      uint32_t{HPU_NIC_TX_CI},
                                      uint32_t{HPU_NIC_RX_CI},
                                      uint32_t{HPU_NIC_TX_FRAMES_LO},
                                      uint32_t{HPU_NIC_INJ_DROPPED_HI});
        CAPTURE(reg);
        const uint32_t before = r.prd(p, reg);
        r.pwr(p, reg, 0x5a5a5a5a);
        CHECK(r.prd(p, reg) == before);
        CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
        CHECK(r.env.errors.size() == 1);
    }
    SECTION("unmapped offsets in a port block") {
        const uint32_t reg = GENERATE(0x038u, 0x03cu, 0x054u, 0x05cu, 0x074u,
                                      0x084u, 0x0fcu, 0x160u, 0xffcu, 0x2000u,
                                      0x3ffcu);
        CAPTURE(reg);
        CHECK(r.prd(p, reg) == 0u);
        CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
        r.wr(HPU_REG_ERROR, 0xffffffff);
        r.pwr(p, reg, 1);
        CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
    }
    SECTION("reserved BAR0 ranges are unmapped") {
        const uint64_t off = GENERATE(uint64_t{0x141000}, uint64_t{0x4b0000},
                                      uint64_t{0x7ffffc});
        CAPTURE(off);
        CHECK(r.rd(off) == 0u);
        CHECK(r.error() == HPU_ERROR_BAD_ACCESS);
    }
    SECTION("the RoCE doorbell pages read 0 (spec version 7 part 2)") {
        const uint64_t off = GENERATE(uint64_t{HPU_DB_PAGE(0)},
                                      uint64_t{HPU_DB_PAGE(2047) + 0xffc});
        CAPTURE(off);
        CHECK(r.rd(off) == 0u);
        CHECK(r.error() == 0u);
    }
    SECTION("MAC_HI keeps bits 15:0, CTRL 1:0, RX_FILTER 0, IRQ_MASK 4:0, INJ_CTRL its fields") {
        r.pwr(p, HPU_NIC_MAC_LO, 0xdeadbeef);
        r.pwr(p, HPU_NIC_MAC_HI, 0xffff1234);
        CHECK(r.prd(p, HPU_NIC_MAC_LO) == 0xdeadbeefu);
        CHECK(r.prd(p, HPU_NIC_MAC_HI) == 0x1234u);
        r.pwr(p, HPU_NIC_CTRL, 0xfffffffc);
        CHECK(r.prd(p, HPU_NIC_CTRL) == 0u);
        r.pwr(p, HPU_NIC_RX_FILTER, 0xffffffff);
        CHECK(r.prd(p, HPU_NIC_RX_FILTER) == HPU_NIC_RX_FILTER_PROMISC);
        r.pwr(p, HPU_NIC_IRQ_MASK, 0xffffffff);
        CHECK(r.prd(p, HPU_NIC_IRQ_MASK) == 0x1fu);
        r.pwr(p, HPU_NIC_INJ_CTRL, 0xfefe00fe);
        CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == 0x00fe0000u);
        CHECK(r.error() == 0u);
    }
}

TEST_CASE("NIC port blocks beyond ENGINES.NIC are unmapped", "[emu][nic]")
{
    Dev d(256 * MiB, 4);

    CHECK(d.rd(HPU_REG_ENGINES) >> 24 == 4u);
    CHECK(d.rd(HPU_NIC_PORT_BASE(3) + HPU_NIC_PORT_ID) == 3u);
    CHECK(d.error() == 0u);
    for (unsigned int p = 4; p < HPU_NIC_MAX_PORTS; p++) {
        CAPTURE(p);
        CHECK(d.rd(HPU_NIC_PORT_BASE(p) + HPU_NIC_PORT_ID) == 0u);
        CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
        d.wr(HPU_REG_ERROR, 0xffffffff);
        d.wr(HPU_NIC_PORT_BASE(p) + HPU_NIC_CTRL, ALL_EN);
        CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
        d.wr(HPU_REG_ERROR, 0xffffffff);
        // and nothing arrives at a port that does not exist
        Bytes f(64, 0xff);
        CHECK(hpum_core_nic_receive(&d.core, p, f.data(), f.size()));
        CHECK_FALSE(hpum_core_nic_tx(&d.core, p));
    }
    Dev none(256 * MiB, 0);
    CHECK(none.rd(HPU_NIC_PORT_BASE(0)) == 0u);
    CHECK(none.error() == HPU_ERROR_BAD_ACCESS);
}

TEST_CASE("NIC transmit: a frame is read, sent, its status written, TX_CI advanced", "[emu][nic][tx]")
{
    NicRig r;
    const unsigned int p = 1;
    r.tx_setup(p);
    const Bytes f = eth_frame(OTHER, 200);

    SECTION("the TX_PI write only records and kicks: no DMA, nothing sent") {
        const unsigned int reads = r.env.dma_reads, writes = r.env.dma_writes;
        r.send(p, f);
        CHECK(r.env.dma_reads == reads);
        CHECK(r.env.dma_writes == writes);
        CHECK(r.env.sent.empty());
        CHECK(r.env.tx_kicks[p] == 1);
        CHECK(r.prd(p, HPU_NIC_TX_PI) == 1u);
        CHECK(r.prd(p, HPU_NIC_TX_CI) == 0u);
        r.run();
        CHECK(r.env.sent.size() == 1);
    }
    SECTION("sent whole, DONE OK, reserved bytes written as zero") {
        r.txd_put(p, 0, 0, 0, 0, 0, 0xfe);     // stale status: overwritten
        uint32_t i = r.tx_post(p, { TxBuf{ f } });
        std::memset(r.hp(r.txd_bus(p, i) + 11), 0xfe, 1);
        r.tx_doorbell(p);
        r.run();
        REQUIRE(r.sent(p).size() == 1);
        CHECK(r.sent(p)[0] == f);
        CHECK(r.txd_status(p, i) == done(HPU_NIC_DESC_OK));
        CHECK(r.txd_rsvd(p, i) == 0u);
        CHECK(r.prd(p, HPU_NIC_TX_CI) == 1u);
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_TX);
        CHECK(r.counter(p, HPU_NIC_CNT_TX_FRAMES) == 1u);
        CHECK(r.counter(p, HPU_NIC_CNT_TX_BYTES) == 200u);
        CHECK(r.counter(p, HPU_NIC_CNT_TX_ERRORS) == 0u);
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == 0u);
        CHECK(r.env.errors.empty());
    }
    SECTION("frames shorter than 60 bytes are padded with zeros, TX_BYTES before padding") {
        const size_t len = GENERATE(14u, 20u, 59u, 60u, 61u);
        CAPTURE(len);
        const Bytes s = eth_frame(OTHER, len, 0x80);
        r.send(p, s);
        r.run();
        REQUIRE(r.sent(p).size() == 1);
        CHECK(r.sent(p)[0] == padded(s));
        CHECK(r.counter(p, HPU_NIC_CNT_TX_BYTES) == len);
    }
    SECTION("several frames, ring wrap, in order") {
        for (unsigned int k = 0; k < 40; k++) {
            r.send(p, eth_frame(OTHER, 64 + k, static_cast<uint8_t>(k)));
            if (k % 7 == 6) {
                r.run();
            }
        }
        r.run();
        REQUIRE(r.sent(p).size() == 40);
        for (unsigned int k = 0; k < 40; k++) {
            CHECK(r.sent(p)[k] == eth_frame(OTHER, 64 + k, static_cast<uint8_t>(k)));
        }
        CHECK(r.prd(p, HPU_NIC_TX_CI) == 40u);
        CHECK(r.counter(p, HPU_NIC_CNT_TX_FRAMES) == 40u);
    }
    SECTION("a burst longer than the budget: the step asks to be called again") {
        NicRig big;
        big.tx_setup(0, 64);
        for (unsigned int k = 0; k < HPU_NIC_TX_BUDGET + 5; k++) {
            big.tx_post(0, { TxBuf{ eth_frame(OTHER, 64) } });
        }
        big.tx_doorbell(0);
        CHECK(hpum_core_nic_tx(&big.core, 0));
        CHECK(big.env.sent.size() == HPU_NIC_TX_BUDGET);
        CHECK_FALSE(hpum_core_nic_tx(&big.core, 0));
        CHECK(big.env.sent.size() == HPU_NIC_TX_BUDGET + 5);
    }
}

TEST_CASE("NIC transmit: multi-buffer frames from host memory and HBM", "[emu][nic][tx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.tx_setup(p);
    const Bytes f = eth_frame(OTHER, 1514, 7);

    SECTION("three buffers, host, HBM, host") {
        const Bytes a(f.begin(), f.begin() + 100), b(f.begin() + 100, f.begin() + 1000),
            c(f.begin() + 1000, f.end());
        uint32_t i = r.tx_post(p, { TxBuf{ a }, TxBuf{ b, true }, TxBuf{ c } });
        r.tx_doorbell(p);
        r.run();
        REQUIRE(r.sent(p).size() == 1);
        CHECK(r.sent(p)[0] == f);
        for (uint32_t k = 0; k < 3; k++) {
            CHECK(r.txd_status(p, i + k) == done(HPU_NIC_DESC_OK));
        }
        CHECK(r.prd(p, HPU_NIC_TX_CI) == 3u);
        CHECK(r.counter(p, HPU_NIC_CNT_TX_FRAMES) == 1u);
        CHECK(r.counter(p, HPU_NIC_CNT_TX_BYTES) == 1514u);
    }
    SECTION("sixteen buffers is the most") {
        r.send(p, f, 16);
        r.run();
        REQUIRE(r.sent(p).size() == 1);
        CHECK(r.sent(p)[0] == f);
        CHECK(r.prd(p, HPU_NIC_TX_CI) == 16u);
    }
    SECTION("a frame is sent only once its EOP descriptor is before TX_PI") {
        uint32_t i = r.tx_post(p, { TxBuf{ Bytes(f.begin(), f.begin() + 600) },
                                    TxBuf{ Bytes(f.begin() + 600, f.begin() + 1200) },
                                    TxBuf{ Bytes(f.begin() + 1200, f.end()) } });
        r.pwr(p, HPU_NIC_TX_PI, i + 2);
        r.run();
        CHECK(r.env.sent.empty());
        CHECK(r.prd(p, HPU_NIC_TX_CI) == 0u);
        CHECK(r.txd_status(p, i) == 0u);
        r.pwr(p, HPU_NIC_TX_PI, i + 3);
        r.run();
        REQUIRE(r.sent(p).size() == 1);
        CHECK(r.sent(p)[0] == f);
        CHECK(r.prd(p, HPU_NIC_TX_CI) == 3u);
    }
}

TEST_CASE("NIC transmit: BAD_DESC ends the frame at the descriptor that broke the rule", "[emu][nic][tx]")
{
    NicRig r;
    const unsigned int p = 4;
    r.tx_setup(p, 32);
    const Bytes good = eth_frame(OTHER, 100);
    uint64_t a = r.place(TxBuf{ good });
    uint32_t nbad = 0;

    SECTION("a flag bit other than EOP") {
        r.txd_put(p, 0, a, 50, 0);
        r.txd_put(p, 1, a, 50, 0x80 | HPU_NIC_TXD_EOP);
        nbad = 2;
    }
    SECTION("reserved bytes not zero") {
        r.txd_put(p, 0, a, 100, HPU_NIC_TXD_EOP, 0x100);
        nbad = 1;
    }
    SECTION("a length of 0") {
        r.txd_put(p, 0, a, 50, 0);
        r.txd_put(p, 1, a, 0, 0);
        nbad = 2;
    }
    SECTION("a length above 16383") {
        r.txd_put(p, 0, a, 16384, HPU_NIC_TXD_EOP);
        nbad = 1;
    }
    SECTION("more than 16 buffers") {
        for (uint32_t k = 0; k < 17; k++) {
            r.txd_put(p, k, a, 6, k == 16 ? HPU_NIC_TXD_EOP : 0);
        }
        nbad = 17;
    }
    // a good frame after the broken one
    r.txd_put(p, nbad, a, 100, HPU_NIC_TXD_EOP);
    r.tx[p].pi = nbad + 1;
    r.tx_doorbell(p);
    r.run();
    for (uint32_t k = 0; k < nbad; k++) {
        CHECK(r.txd_status(p, k) == done(HPU_NIC_DESC_BAD_DESC));
        CHECK(r.txd_rsvd(p, k) == 0u);         // written as zero
    }
    CHECK(r.txd_status(p, nbad) == done(HPU_NIC_DESC_OK));
    REQUIRE(r.sent(p).size() == 1);
    CHECK(r.sent(p)[0] == good);
    CHECK(r.prd(p, HPU_NIC_TX_CI) == nbad + 1);
    CHECK(r.counter(p, HPU_NIC_CNT_TX_ERRORS) == 1u);
    CHECK(r.counter(p, HPU_NIC_CNT_TX_FRAMES) == 1u);
    CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_TX_DESC);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == (HPU_NIC_IRQ_TX | HPU_NIC_IRQ_ERROR));
    CHECK(r.error() == 0u);
    CHECK(r.env.errors.size() == 1);
}

TEST_CASE("NIC transmit: BAD_LEN below 14 or above MTU + 18 bytes", "[emu][nic][tx]")
{
    NicRig r;
    const unsigned int p = 0;

    SECTION("MTU 1500") {
        r.tx_setup(p);
        CHECK(tx_one(r, p, 13) == done(HPU_NIC_DESC_BAD_LEN));
        CHECK(tx_one(r, p, 1519) == done(HPU_NIC_DESC_BAD_LEN));
        CHECK(tx_one(r, p, 1518) == done(HPU_NIC_DESC_OK));
        CHECK(tx_one(r, p, 14) == done(HPU_NIC_DESC_OK));
        CHECK(r.sent(p).size() == 2);
        CHECK(r.counter(p, HPU_NIC_CNT_TX_ERRORS) == 2u);
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_TX_DESC);
    }
    SECTION("MTU 68 and 9216") {
        r.pwr(p, HPU_NIC_MTU, 68);
        r.tx_setup(p);
        CHECK(tx_one(r, p, 87) == done(HPU_NIC_DESC_BAD_LEN));
        CHECK(tx_one(r, p, 86) == done(HPU_NIC_DESC_OK));
        r.disable(p, HPU_NIC_CTRL_TX_EN);
        r.pwr(p, HPU_NIC_MTU, 9216);
        CHECK(r.prd(p, HPU_NIC_MTU) == 9216u);
        r.tx_setup(p);
        const Bytes jumbo = eth_frame(OTHER, 9234, 3);
        r.send(p, jumbo, 2);
        r.run();
        CHECK(r.txd_status(p, 1) == done(HPU_NIC_DESC_OK));
        REQUIRE(r.sent(p).size() == 2);
        CHECK(r.sent(p)[1] == jumbo);
        CHECK(tx_one(r, p, 9235) == done(HPU_NIC_DESC_BAD_LEN));
    }
    SECTION("the length of a frame of several buffers is their sum") {
        r.tx_setup(p);
        r.send(p, eth_frame(OTHER, 1600), 4);
        r.run();
        for (uint32_t k = 0; k < 4; k++) {
            CHECK(r.txd_status(p, k) == done(HPU_NIC_DESC_BAD_LEN));
        }
        CHECK(r.env.sent.empty());
    }
}

TEST_CASE("NIC transmit: BUS_ERROR for a buffer that cannot be read", "[emu][nic][tx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.tx_setup(p);
    const uint64_t good = r.place(TxBuf{ eth_frame(OTHER, 64) });
    const uint64_t bad = GENERATE(uint64_t{256 * MiB - 10},          // beyond HBM
                                  host_addr(HOST_BASE + HOST_SIZE),  // no host memory
                                  HPU_ADDR_HOST | HPU_HOST_ADDR_LIMIT);
    CAPTURE(bad);

    r.txd_put(p, 0, good, 20, 0);
    r.txd_put(p, 1, bad, 44, HPU_NIC_TXD_EOP);
    r.tx[p].pi = 2;
    r.tx_doorbell(p);
    r.run();
    CHECK(r.txd_status(p, 0) == done(HPU_NIC_DESC_BUS_ERROR));
    CHECK(r.txd_status(p, 1) == done(HPU_NIC_DESC_BUS_ERROR));
    CHECK(r.env.sent.empty());
    CHECK(r.prd(p, HPU_NIC_TX_CI) == 2u);
    CHECK(r.counter(p, HPU_NIC_CNT_TX_ERRORS) == 1u);
    CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_TX_DESC);
    CHECK(r.prd(p, HPU_NIC_CTRL) == HPU_NIC_CTRL_TX_EN);

    SECTION("a buffer in a poisoned HBM page") {
        uint64_t off = r.place(TxBuf{ eth_frame(OTHER, 64), true });
        r.wr(HPU_REG_INJ_ECC_ADDR_LO, static_cast<uint32_t>(off));
        r.wr(HPU_REG_INJ_ECC_ADDR_HI, 0);
        r.wr(HPU_REG_INJ_ECC_CTRL, HPU_INJ_ECC_UE);
        r.txd_put(p, 2, off, 64, HPU_NIC_TXD_EOP);
        r.tx[p].pi = 3;
        r.tx_doorbell(p);
        r.run();
        CHECK(r.txd_status(p, 2) == done(HPU_NIC_DESC_BUS_ERROR));
        CHECK(r.env.sent.empty());
    }
}

TEST_CASE("NIC transmit: LINK_DOWN while the link is down, counted in TX_DROPS", "[emu][nic][tx][link]")
{
    NicRig r;
    const unsigned int p = 0;
    r.tx_setup(p);

    SECTION("the back end's link is down") { r.set_link(p, HPU_NIC_LINK_STATUS_ATTACHED); }
    SECTION("no back end") { r.set_link(p, 0); }
    SECTION("forced down by INJ_CTRL") { r.pwr(p, HPU_NIC_INJ_CTRL, HPU_NIC_INJ_LINK_DOWN); }
    const uint32_t i = r.send(p, eth_frame(OTHER, 100));
    const uint64_t buf = r.txd_buf(p, i);
    unsigned int buf_reads = 0;
    r.env.on_dma_read = [&](uint64_t addr) {
        if (addr == buf) {
            buf_reads++;
        }
    };
    r.run();
    r.env.on_dma_read = nullptr;
    CHECK(r.txd_status(p, i) == done(HPU_NIC_DESC_LINK_DOWN));
    CHECK(buf_reads == 0u);                    // decided before the buffer
    CHECK(r.env.sent.empty());
    CHECK(r.counter(p, HPU_NIC_CNT_TX_DROPS) == 1u);
    CHECK(r.counter(p, HPU_NIC_CNT_TX_ERRORS) == 0u);
    CHECK(r.counter(p, HPU_NIC_CNT_TX_FRAMES) == 0u);
    CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == 0u);
    CHECK(r.prd(p, HPU_NIC_TX_CI) == 1u);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == (HPU_NIC_IRQ_TX | HPU_NIC_IRQ_LINK));
    CHECK(r.env.errors.empty());
}

TEST_CASE("NIC transmit: a descriptor that cannot be read stops the ring (TX_FETCH)", "[emu][nic][tx]")
{
    NicRig r;
    const unsigned int p = 0;
    // The ring's fifth slot is past the end of host memory.
    const uint64_t base = HOST_BASE + HOST_SIZE - 64;

    r.ring_regs(p, false, host_addr(base), 16);
    r.enable(p, HPU_NIC_CTRL_TX_EN);
    r.tx[p].bus = base;
    r.tx[p].size = 16;
    const uint64_t a = r.place(TxBuf{ eth_frame(OTHER, 64) });
    for (uint32_t k = 0; k < 4; k++) {
        r.txd_put(p, k, a, 16, 0);     // the frame goes on in slot 4
    }
    r.pwr(p, HPU_NIC_TX_PI, 5);
    const unsigned int writes = r.env.dma_writes;
    r.run();
    CHECK(r.env.sent.empty());
    CHECK(r.env.dma_writes == writes);         // no status written
    CHECK(r.txd_status(p, 0) == 0u);
    CHECK(r.prd(p, HPU_NIC_TX_CI) == 0u);
    CHECK(r.prd(p, HPU_NIC_CTRL) == 0u);
    CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_TX_FETCH);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_ERROR);
    CHECK(r.env.errors.size() == 1);
    CHECK(r.error() == 0u);
}

TEST_CASE("NIC rings: BAD_PI and BAD_CONFIG", "[emu][nic]")
{
    NicRig r;
    const unsigned int p = 5;

    SECTION("a PI more than SIZE entries ahead of CI is dropped") {
        const bool rx = GENERATE(false, true);
        CAPTURE(rx);
        const uint32_t pi = rx ? HPU_NIC_RX_PI : HPU_NIC_TX_PI;
        rx ? r.rx_setup(p) : r.tx_setup(p);
        r.pwr(p, pi, 16);
        CHECK(r.prd(p, pi) == 16u);
        r.pwr(p, pi, 17);
        CHECK(r.prd(p, pi) == 16u);
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_BAD_PI);
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_ERROR);
        CHECK(r.error() == 0u);
        CHECK(r.env.errors.size() == 1);
        r.pwr(p, HPU_NIC_ERR_STATUS, HPU_NIC_ERR_BAD_PI);
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == 0u);
        r.pwr(p, pi, 0xffffffff);      // behind CI: as far ahead as it gets
        CHECK(r.prd(p, pi) == 16u);
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_BAD_PI);
    }
    SECTION("ring registers written while the ring is enabled are dropped") {
        r.tx_setup(p);
        r.rx_setup(p);
        const uint32_t reg = GENERATE(uint32_t{HPU_NIC_TX_BASE_LO}, uint32_t{HPU_NIC_TX_BASE_HI},
                                      uint32_t{HPU_NIC_TX_SIZE}, uint32_t{HPU_NIC_RX_BASE_LO},
                                      uint32_t{HPU_NIC_RX_BASE_HI}, uint32_t{HPU_NIC_RX_SIZE});
        CAPTURE(reg);
        const uint32_t before = r.prd(p, reg);
        r.pwr(p, reg, 0x40000);
        CHECK(r.prd(p, reg) == before);
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_BAD_CONFIG);
        CHECK(r.error() == 0u);
        // with the ring's enable clear, the other ring's being set is no matter
        r.disable(p, reg >= HPU_NIC_RX_BASE_LO ? HPU_NIC_CTRL_RX_EN : HPU_NIC_CTRL_TX_EN);
        r.pwr(p, reg, 0x40000);
        CHECK(r.prd(p, reg) == 0x40000u);
    }
    SECTION("enabling with a bad base or size leaves the bit clear") {
        const bool rx = GENERATE(false, true);
        const uint64_t base = GENERATE(uint64_t{0}, host_addr(HOST_BASE + 0x20),
                                       host_addr(HOST_BASE + 0x1000));
        const uint32_t size = GENERATE(0u, 8u, 17u, 16u, 4096u, 8192u);
        CAPTURE(rx, base, size);
        const uint32_t bit = rx ? HPU_NIC_CTRL_RX_EN : HPU_NIC_CTRL_TX_EN;
        const bool ok = base == host_addr(HOST_BASE + 0x1000) && (size == 16 || size == 4096);
        r.ring_regs(p, rx, base, size);
        r.pwr(p, HPU_NIC_CTRL, bit);
        CHECK(r.prd(p, HPU_NIC_CTRL) == (ok ? bit : 0u));
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == (ok ? 0u : HPU_NIC_ERR_BAD_CONFIG));
        CHECK(r.error() == 0u);
    }
    SECTION("setting an enable bit resets that ring's PI and CI") {
        r.tx_setup(p);
        r.send(p, eth_frame(OTHER, 64));
        r.send(p, eth_frame(OTHER, 64));
        r.run();
        CHECK(r.prd(p, HPU_NIC_TX_CI) == 2u);
        r.pwr(p, HPU_NIC_TX_PI, 5);
        r.disable(p, HPU_NIC_CTRL_TX_EN);
        CHECK(r.prd(p, HPU_NIC_TX_PI) == 5u);
        r.enable(p, HPU_NIC_CTRL_TX_EN);
        CHECK(r.prd(p, HPU_NIC_TX_PI) == 0u);
        CHECK(r.prd(p, HPU_NIC_TX_CI) == 0u);
        r.run();
        CHECK(r.env.sent.size() == 2);         // nothing more sent
    }
}

TEST_CASE("NIC MTU: 68 to 9216, written only while both rings are disabled", "[emu][nic]")
{
    NicRig r;
    const unsigned int p = 0;

    r.pwr(p, HPU_NIC_MTU, 68);
    CHECK(r.prd(p, HPU_NIC_MTU) == 68u);
    r.pwr(p, HPU_NIC_MTU, 9216);
    CHECK(r.prd(p, HPU_NIC_MTU) == 9216u);
    CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == 0u);
    const uint32_t bad = GENERATE(0u, 67u, 9217u, 0xffffffffu);
    CAPTURE(bad);
    r.pwr(p, HPU_NIC_MTU, bad);
    CHECK(r.prd(p, HPU_NIC_MTU) == 9216u);
    CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_BAD_CONFIG);
    CHECK(r.error() == 0u);                     // not BAD_ACCESS
    CHECK(r.env.errors.size() == 1);
    r.pwr(p, HPU_NIC_ERR_STATUS, 0xffffffff);
    const uint32_t en = GENERATE(uint32_t{HPU_NIC_CTRL_TX_EN}, uint32_t{HPU_NIC_CTRL_RX_EN});
    en == HPU_NIC_CTRL_TX_EN ? r.tx_setup(p) : r.rx_setup(p);
    r.pwr(p, HPU_NIC_MTU, 1500);
    CHECK(r.prd(p, HPU_NIC_MTU) == 9216u);
    CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_BAD_CONFIG);
    r.disable(p, en);
    r.pwr(p, HPU_NIC_MTU, 1500);
    CHECK(r.prd(p, HPU_NIC_MTU) == 1500u);
}

TEST_CASE("NIC receive: a frame to the port's address is written and completed", "[emu][nic][rx]")
{
    NicRig r;
    const unsigned int p = 3;
    r.rx_setup(p);
    r.rx_post(p, 4);
    const Bytes f = to_port(r, p, 300, 9);

    CHECK(r.inject(p, f));
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 1u);
    const RxDesc d = r.rxd(p, 0);
    CHECK(d.status == done(HPU_NIC_DESC_OK));
    CHECK(d.len == 300u);
    CHECK(d.flags == 0u);
    CHECK(d.size == 2048u);
    CHECK(r.rx_bytes(p, 0, 300) == f);
    CHECK(r.rx_bytes(p, 0, 301).back() == 0xee);   // nothing past the frame
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FRAMES) == 1u);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_BYTES) == 300u);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_MCAST) == 0u);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_RX);
    CHECK(r.env.errors.empty());

    SECTION("a frame exactly the buffer's size, and one of MTU + 18 bytes") {
        NicRig q;
        q.rx_setup(0);
        q.rx_post(0, 1, 64);
        q.rx_post(0, 1, 1518);
        CHECK(q.inject(0, to_port(q, 0, 64)));
        CHECK(q.rxd(0, 0).status == done(HPU_NIC_DESC_OK));
        CHECK(q.inject(0, to_port(q, 0, 1518)));
        CHECK(q.rxd(0, 1).status == done(HPU_NIC_DESC_OK));
        CHECK(q.rxd(0, 1).len == 1518u);
    }
    SECTION("a buffer in HBM") {
        uint64_t off = r.balloc(2048);
        r.rxd_put(p, 4, off, 2048);
        r.rx[p].pi = 5;
        r.pwr(p, HPU_NIC_RX_PI, 5);
        for (int k = 0; k < 3; k++) {
            CHECK(r.inject(p, to_port(r, p, 100 + k)));
        }
        const Bytes g = to_port(r, p, 777, 4);
        CHECK(r.inject(p, g));
        CHECK(r.rxd(p, 4).status == done(HPU_NIC_DESC_OK));
        CHECK(r.bread(off, 777) == g);
    }
}

TEST_CASE("NIC receive: the filter, promiscuous mode, broadcast, multicast and VLAN flags", "[emu][nic][rx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.rx_setup(p);
    r.rx_post(p, 16);

    CHECK(r.inject(p, eth_frame(OTHER, 100)));           // filtered
    CHECK(r.inject(p, eth_frame(r.mac(1).data(), 100)));  // another port's
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 0u);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FILTERED) == 2u);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == 0u);

    CHECK(r.inject(p, eth_frame(BCAST, 100)));
    CHECK(r.rxd(p, 0).flags == HPU_NIC_RXD_BROADCAST);
    CHECK(r.inject(p, eth_frame(MCAST, 100)));
    CHECK(r.rxd(p, 1).flags == HPU_NIC_RXD_MULTICAST);
    Bytes v = to_port(r, p, 100);
    v[12] = 0x81;
    v[13] = 0x00;
    CHECK(r.inject(p, v));
    CHECK(r.rxd(p, 2).flags == HPU_NIC_RXD_VLAN);
    CHECK(r.rx_bytes(p, 2, 100) == v);                   // tag left in
    CHECK(r.counter(p, HPU_NIC_CNT_RX_MCAST) == 2u);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FRAMES) == 3u);

    // the filter follows MAC_LO/MAC_HI
    r.pwr(p, HPU_NIC_MAC_LO, 0x33221102);
    r.pwr(p, HPU_NIC_MAC_HI, 0x5544);
    CHECK(r.inject(p, eth_frame(OTHER, 100)));
    CHECK(r.rxd(p, 3).status == done(HPU_NIC_DESC_OK));
    CHECK(r.inject(p, to_port(r, p, 100)));              // the old address
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FILTERED) == 3u);

    // promiscuous: everything
    r.pwr(p, HPU_NIC_RX_FILTER, HPU_NIC_RX_FILTER_PROMISC);
    CHECK(r.inject(p, eth_frame(r.mac(7).data(), 100)));
    CHECK(r.rxd(p, 4).status == done(HPU_NIC_DESC_OK));
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FILTERED) == 3u);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FRAMES) == 5u);
    r.pwr(p, HPU_NIC_RX_FILTER, 0);
    CHECK(r.inject(p, eth_frame(r.mac(7).data(), 100)));
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FILTERED) == 4u);
}

TEST_CASE("NIC receive: RX_FILTER changes while the rings run and leaves them alone", "[emu][nic][rx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.tx_setup(p);
    r.rx_setup(p);
    r.rx_post(p, 4);
    r.send(p, eth_frame(OTHER, 100));
    r.send(p, eth_frame(OTHER, 100));
    r.run();
    REQUIRE(r.prd(p, HPU_NIC_TX_CI) == 2u);

    // A ring the device stopped stays stopped: CTRL is not written.
    r.disable(p, HPU_NIC_CTRL_TX_EN);
    r.pwr(p, HPU_NIC_RX_FILTER, HPU_NIC_RX_FILTER_PROMISC);
    CHECK(r.prd(p, HPU_NIC_CTRL) == HPU_NIC_CTRL_RX_EN);
    r.pwr(p, HPU_NIC_RX_FILTER, 0);
    CHECK(r.prd(p, HPU_NIC_CTRL) == HPU_NIC_CTRL_RX_EN);
    // Nor are the running ring's indices.
    CHECK(r.inject(p, to_port(r, p, 100)));
    r.pwr(p, HPU_NIC_RX_FILTER, HPU_NIC_RX_FILTER_PROMISC);
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 1u);
    CHECK(r.prd(p, HPU_NIC_RX_PI) == 4u);
    CHECK(r.inject(p, eth_frame(OTHER, 100)));
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 2u);
    CHECK(r.error() == 0u);
    CHECK(r.env.errors.empty());
}

TEST_CASE("NIC receive: runts, oversized frames and frames of any length", "[emu][nic][rx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.pwr(p, HPU_NIC_MTU, 1000);
    r.rx_setup(p);
    r.rx_post(p, 4, 16383);

    for (size_t len : { size_t{0}, size_t{1}, size_t{13}, size_t{1019}, size_t{9235},
                        size_t{16384}, size_t{100000} }) {
        CAPTURE(len);
        Bytes f = to_port(r, p, std::max<size_t>(len, 14));
        f.resize(len);
        CHECK(r.inject(p, f));
    }
    CHECK(r.counter(p, HPU_NIC_CNT_RX_ERRORS) == 7u);
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 0u);
    CHECK(r.inject(p, to_port(r, p, 1018)));
    CHECK(r.inject(p, to_port(r, p, 14)));
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 2u);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_ERRORS) == 7u);
    CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == 0u);
}

TEST_CASE("NIC receive: a port with RX_EN clear drops every frame uncounted", "[emu][nic][rx]")
{
    NicRig r;
    const unsigned int p = 0;

    CHECK(r.inject(p, to_port(r, p, 100)));
    r.rx_setup(p);
    r.rx_post(p, 2);
    r.disable(p, HPU_NIC_CTRL_RX_EN);
    CHECK(r.inject(p, to_port(r, p, 100)));
    CHECK(r.inject(p, eth_frame(OTHER, 100)));
    CHECK(r.inject(p, Bytes(3)));
    for (unsigned int i = 0; i < HPU_NIC_NUM_COUNTERS; i++) {
        CHECK(r.counter(p, i) == 0u);
    }
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == 0u);
    CHECK(r.rxd(p, 0).status == 0u);
}

TEST_CASE("NIC receive: without a posted descriptor the frame waits in the FIFO", "[emu][nic][rx][fifo]")
{
    NicRig r;
    const unsigned int p = 2;
    r.rx_setup(p);
    const Bytes a = to_port(r, p, 100, 1), b = to_port(r, p, 200, 2),
                c = eth_frame(OTHER, 300, 3);

    CHECK_FALSE(r.inject(p, a));               // refused: the back end keeps it
    CHECK(r.counter(p, HPU_NIC_CNT_RX_NOBUF) == 1u);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_RX_NOBUF);
    CHECK_FALSE(r.inject(p, b));               // queued behind it
    CHECK_FALSE(r.inject(p, c));
    CHECK(r.env.rxq[p].size() == 3);

    SECTION("offered again with no descriptor: not counted again") {
        r.env.rx_pending[p] = true;            // e.g. a spurious kick
        r.run();
        CHECK(r.env.rxq[p].size() == 3);
        CHECK(r.counter(p, HPU_NIC_CNT_RX_NOBUF) == 1u);
    }
    SECTION("RX_PI drains it in order: the write only kicks") {
        const unsigned int kicks = r.env.rx_kicks[p], writes = r.env.dma_writes;
        r.rx_post(p, 1);
        CHECK(r.env.rx_kicks[p] == kicks + 1);
        CHECK(r.env.dma_writes == writes);
        CHECK(r.prd(p, HPU_NIC_RX_CI) == 0u);
        r.run();
        CHECK(r.prd(p, HPU_NIC_RX_CI) == 1u);
        CHECK(r.rx_bytes(p, 0, 100) == a);
        CHECK(r.env.rxq[p].size() == 2);       // b waits in its turn
        CHECK(r.counter(p, HPU_NIC_CNT_RX_NOBUF) == 2u);
        r.rx_post(p, 2);
        r.run();
        CHECK(r.prd(p, HPU_NIC_RX_CI) == 2u);  // b; c is filtered
        CHECK(r.rx_bytes(p, 1, 200) == b);
        CHECK(r.env.rxq[p].empty());
        CHECK(r.counter(p, HPU_NIC_CNT_RX_FILTERED) == 1u);
        CHECK(r.counter(p, HPU_NIC_CNT_RX_FRAMES) == 2u);
        CHECK(r.counter(p, HPU_NIC_CNT_RX_DROPS) == 0u);
        // the next frame goes straight in
        CHECK(r.inject(p, to_port(r, p, 64)));
        CHECK(r.prd(p, HPU_NIC_RX_CI) == 3u);
    }
    SECTION("a held frame was accepted: the filter does not look at it again") {
        r.pwr(p, HPU_NIC_MAC_LO, 0);
        r.rx_post(p, 4);
        r.run();
        CHECK(r.prd(p, HPU_NIC_RX_CI) == 1u);  // a; b and c filtered now
        CHECK(r.rx_bytes(p, 0, 100) == a);
        CHECK(r.env.rxq[p].empty());
        CHECK(r.counter(p, HPU_NIC_CNT_RX_FILTERED) == 2u);
        CHECK(r.counter(p, HPU_NIC_CNT_RX_NOBUF) == 1u);
    }
    SECTION("the link going down drops the held frames") {
        const bool inj = GENERATE(false, true);
        CAPTURE(inj);
        if (inj) {
            r.pwr(p, HPU_NIC_INJ_CTRL, HPU_NIC_INJ_LINK_DOWN);
            r.pwr(p, HPU_NIC_INJ_CTRL, 0);
        } else {
            r.set_link(p, HPU_NIC_LINK_STATUS_ATTACHED);
            r.set_link(p, NIC_UP);
        }
        r.run();
        CHECK(r.env.rxq[p].empty());
        r.rx_post(p, 2);
        r.run();
        CHECK(r.prd(p, HPU_NIC_RX_CI) == 0u);
        // the next frame is a new one: filtered, not taken as the held one
        CHECK(r.inject(p, eth_frame(OTHER, 100)));
        CHECK(r.counter(p, HPU_NIC_CNT_RX_FILTERED) == 1u);
        CHECK(r.prd(p, HPU_NIC_RX_CI) == 0u);
    }
    SECTION("clearing RX_EN drops the held frames") {
        r.disable(p, HPU_NIC_CTRL_RX_EN);
        r.run();
        CHECK(r.env.rxq[p].empty());
        CHECK(r.env.rx_purges[p] >= 1u);
        r.enable(p, HPU_NIC_CTRL_RX_EN);
        r.rx_post(p, 2);
        r.run();
        CHECK(r.prd(p, HPU_NIC_RX_CI) == 0u);
    }
}

TEST_CASE("NIC receive: BAD_DESC and BUS_ERROR descriptors", "[emu][nic][rx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.rx_setup(p);
    const uint64_t buf = host_addr(r.halloc(16384, 64));

    SECTION("BAD_DESC: size out of range or below the frame, reserved bytes set") {
        const int which = GENERATE(0, 1, 2, 3);
        CAPTURE(which);
        const uint16_t size = which == 0 ? 63 : which == 1 ? 16384 : which == 2 ? 99 : 2048;
        r.rxd_put(p, 0, buf, size, which == 3 ? 1 : 0);
        r.rx[p].pi = 1;
        r.rx_post(p, 1);                        // a good one after it
        CHECK(r.inject(p, to_port(r, p, 100)));
        const RxDesc d = r.rxd(p, 0);
        CHECK(d.status == done(HPU_NIC_DESC_BAD_DESC));
        CHECK(d.len == 0u);
        CHECK(d.rsvd == 0u);
        CHECK(r.prd(p, HPU_NIC_RX_CI) == 1u);
        CHECK(r.counter(p, HPU_NIC_CNT_RX_ERRORS) == 1u);
        CHECK(r.counter(p, HPU_NIC_CNT_RX_FRAMES) == 0u);
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_RX_DESC);
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == (HPU_NIC_IRQ_RX | HPU_NIC_IRQ_ERROR));
        CHECK(r.env.errors.size() == 1);
        // the frame was dropped; the next one takes the next descriptor
        const Bytes g = to_port(r, p, 120);
        CHECK(r.inject(p, g));
        CHECK(r.rxd(p, 1).status == done(HPU_NIC_DESC_OK));
        CHECK(r.rx_bytes(p, 1, 120) == g);
    }
    SECTION("BUS_ERROR: a buffer that cannot be written") {
        const uint64_t bad = GENERATE(uint64_t{256 * MiB - 50},
                                      host_addr(HOST_BASE + HOST_SIZE - 50));
        CAPTURE(bad);
        r.rxd_put(p, 0, bad, 2048);
        r.pwr(p, HPU_NIC_RX_PI, 1);
        CHECK(r.inject(p, to_port(r, p, 100)));
        CHECK(r.rxd(p, 0).status == done(HPU_NIC_DESC_BUS_ERROR));
        CHECK(r.rxd(p, 0).len == 0u);
        CHECK(r.counter(p, HPU_NIC_CNT_RX_ERRORS) == 1u);
        CHECK(r.prd(p, HPU_NIC_RX_CI) == 1u);
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == 0u);
    }
    SECTION("RX_FETCH: a descriptor that cannot be read stops the ring") {
        NicRig q;
        q.ring_regs(p, true, host_addr(HOST_BASE + HOST_SIZE), 16);
        q.enable(p, HPU_NIC_CTRL_RX_EN);
        q.pwr(p, HPU_NIC_RX_PI, 1);
        CHECK(q.inject(p, to_port(q, p, 100)));
        CHECK(q.prd(p, HPU_NIC_CTRL) == 0u);
        CHECK(q.prd(p, HPU_NIC_RX_CI) == 0u);
        CHECK(q.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_RX_FETCH);
        CHECK(q.counter(p, HPU_NIC_CNT_RX_ERRORS) == 1u);
        CHECK(q.env.errors.size() == 1);
    }
}

TEST_CASE("NIC interrupts: vector 16 + p on a cause set while enabled, and on unmask of a pending cause", "[emu][nic][irq]")
{
    NicRig r;
    const unsigned int p = 3;
    const unsigned int vec = HPU_VEC_NIC(p);
    REQUIRE(vec == 19u);
    r.tx_setup(p);

    SECTION("a masked cause stays pending without a message") {
        tx_one(r, p, 64);
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_TX);
        CHECK(r.env.vectors.empty());
    }
    SECTION("an enabled cause raises the vector once per event") {
        r.pwr(p, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_TX);
        tx_one(r, p, 64);
        CHECK(r.env.vectors == std::vector<unsigned int>{ vec });
        tx_one(r, p, 64);                      // set again: again
        CHECK(r.vectors_of(vec) == 2u);
        // another cause, not enabled
        r.pwr(p, HPU_NIC_TX_PI, 100);          // BAD_PI: ERROR
        CHECK(r.vectors_of(vec) == 2u);
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == (HPU_NIC_IRQ_TX | HPU_NIC_IRQ_ERROR));
    }
    SECTION("writing IRQ_MASK with a pending cause raises the vector") {
        tx_one(r, p, 64);
        r.pwr(p, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_RX);    // TX not enabled
        CHECK(r.env.vectors.empty());
        r.pwr(p, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_RX | HPU_NIC_IRQ_TX);
        CHECK(r.env.vectors == std::vector<unsigned int>{ vec });
        r.pwr(p, HPU_NIC_IRQ_STATUS, HPU_NIC_IRQ_TX);  // handled
        r.pwr(p, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_ALL);
        CHECK(r.vectors_of(vec) == 1u);
    }
    SECTION("the NAPI sequence: a completion while masked raises at the unmask") {
        r.pwr(p, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_TX | HPU_NIC_IRQ_RX);
        tx_one(r, p, 64);
        REQUIRE(r.vectors_of(vec) == 1u);
        // handler: mask, clear, poll
        r.pwr(p, HPU_NIC_IRQ_MASK, 0);
        r.pwr(p, HPU_NIC_IRQ_STATUS, HPU_NIC_IRQ_TX);
        tx_one(r, p, 64);                      // completes during the poll
        CHECK(r.vectors_of(vec) == 1u);
        r.pwr(p, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_TX | HPU_NIC_IRQ_RX);
        CHECK(r.vectors_of(vec) == 2u);
        // nothing pending: unmasking raises nothing
        r.pwr(p, HPU_NIC_IRQ_MASK, 0);
        r.pwr(p, HPU_NIC_IRQ_STATUS, 0xffffffff);
        r.pwr(p, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_ALL);
        CHECK(r.vectors_of(vec) == 2u);
    }
    SECTION("RX, LINK, ERROR and RX_NOBUF causes") {
        r.pwr(p, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_ALL);
        r.rx_setup(p);
        CHECK_FALSE(r.inject(p, to_port(r, p, 64)));
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_RX_NOBUF);
        CHECK(r.vectors_of(vec) == 1u);
        r.rx_post(p, 1);
        r.run();
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == (HPU_NIC_IRQ_RX_NOBUF | HPU_NIC_IRQ_RX));
        CHECK(r.vectors_of(vec) == 2u);
        r.set_link(p, HPU_NIC_LINK_STATUS_ATTACHED);
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) & HPU_NIC_IRQ_LINK);
        CHECK(r.vectors_of(vec) == 3u);
        r.pwr(p, HPU_NIC_MTU, 10);
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) & HPU_NIC_IRQ_ERROR);
        CHECK(r.vectors_of(vec) == 4u);
        r.pwr(p, HPU_NIC_IRQ_STATUS, 0xffffffff);
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == 0u);
        CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_BAD_CONFIG);  // its own RW1C
    }
    // other ports' vectors untouched
    for (unsigned int q = 0; q < HPU_NIC_MAX_PORTS; q++) {
        if (q != p) {
            CHECK(r.vectors_of(HPU_VEC_NIC(q)) == 0u);
        }
    }
}

TEST_CASE("NIC counters: reading LO latches HI until the next LO read of that counter", "[emu][nic]")
{
    NicRig r;
    const unsigned int p = 6;
    HpuNicPort &np = r.core.nic[p];

    for (unsigned int i = 0; i < HPU_NIC_NUM_COUNTERS; i++) {
        CAPTURE(i);
        np.cnt[i] = 0x100000005ULL + i;
        CHECK(r.prd(p, HPU_NIC_CNT_HI(i)) == 0u);      // not latched yet
        CHECK(r.prd(p, HPU_NIC_CNT_LO(i)) == 5u + i);
        np.cnt[i] = 0x2fffffffaULL;
        CHECK(r.prd(p, HPU_NIC_CNT_HI(i)) == 1u);      // as latched
        (void)r.prd(p, HPU_NIC_CNT_LO(i == 0 ? 1 : 0));        // another counter
        CHECK(r.prd(p, HPU_NIC_CNT_HI(i)) == 1u);
        CHECK(r.prd(p, HPU_NIC_CNT_LO(i)) == 0xfffffffau);
        CHECK(r.prd(p, HPU_NIC_CNT_HI(i)) == 2u);
        np.cnt[i] = 0;
    }
    // the named registers are the same counters
    np.cnt[HPU_NIC_CNT_RX_FILTERED] = 0x700000003ULL;
    CHECK(r.prd(p, HPU_NIC_RX_FILTERED_LO) == 3u);
    CHECK(r.prd(p, HPU_NIC_RX_FILTERED_HI) == 7u);
    // and a counter carries into its high word
    r.tx_setup(p);
    np.cnt[HPU_NIC_CNT_TX_BYTES] = 0xffffffffULL - 10;
    tx_one(r, p, 64);
    CHECK(r.counter(p, HPU_NIC_CNT_TX_BYTES) == 0xffffffffULL + 54);
}

TEST_CASE("NIC fault injection: LINK_DOWN", "[emu][nic][inj][link]")
{
    NicRig r;
    const unsigned int p = 0;
    r.rx_setup(p);
    r.rx_post(p, 4);

    r.pwr(p, HPU_NIC_INJ_CTRL, HPU_NIC_INJ_LINK_DOWN);
    CHECK(r.prd(p, HPU_NIC_LINK_STATUS) == HPU_NIC_LINK_STATUS_ATTACHED);
    CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 1u);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_LINK);
    CHECK(r.inject(p, to_port(r, p, 100)));    // nothing arrives
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 0u);
    for (unsigned int i = 0; i < HPU_NIC_NUM_COUNTERS; i++) {
        CHECK(r.counter(p, i) == 0u);
    }
    r.pwr(p, HPU_NIC_INJ_CTRL, HPU_NIC_INJ_LINK_DOWN);  // no change
    CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 1u);
    r.pwr(p, HPU_NIC_IRQ_STATUS, 0xffffffff);
    r.pwr(p, HPU_NIC_INJ_CTRL, 0);
    CHECK(r.prd(p, HPU_NIC_LINK_STATUS) == NIC_UP);
    CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 2u);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_LINK);
    CHECK(r.inject(p, to_port(r, p, 100)));
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 1u);
    // forced down while the back end is down: no change when either lifts
    r.set_link(p, HPU_NIC_LINK_STATUS_ATTACHED);
    r.pwr(p, HPU_NIC_INJ_CTRL, HPU_NIC_INJ_LINK_DOWN);
    CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 3u);
    r.set_link(p, NIC_UP);
    CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 3u);
    CHECK(r.prd(p, HPU_NIC_LINK_STATUS) == HPU_NIC_LINK_STATUS_ATTACHED);
}

TEST_CASE("NIC fault injection: DROP_TX completes frames OK without sending them", "[emu][nic][inj][tx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.tx_setup(p);

    r.pwr(p, HPU_NIC_INJ_CTRL, 2u << HPU_NIC_INJ_DROP_TX_SHIFT);
    CHECK(tx_one(r, p, 13) == done(HPU_NIC_DESC_BAD_LEN));   // not handed to the wire
    CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == 2u << HPU_NIC_INJ_DROP_TX_SHIFT);
    CHECK(tx_one(r, p, 100) == done(HPU_NIC_DESC_OK));
    CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == 1u << HPU_NIC_INJ_DROP_TX_SHIFT);
    CHECK(tx_one(r, p, 101) == done(HPU_NIC_DESC_OK));
    CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == 0u);
    CHECK(r.env.sent.empty());
    CHECK(tx_one(r, p, 102) == done(HPU_NIC_DESC_OK));
    REQUIRE(r.sent(p).size() == 1);
    CHECK(r.sent(p)[0].size() == 102u);
    CHECK(r.counter(p, HPU_NIC_CNT_TX_FRAMES) == 3u);
    CHECK(r.counter(p, HPU_NIC_CNT_INJ_DROPPED) == 2u);
    CHECK(r.counter(p, HPU_NIC_CNT_TX_BYTES) == 303u);
}

TEST_CASE("NIC fault injection: DROP_RX drops arriving frames, counted in INJ_DROPPED only", "[emu][nic][inj][rx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.rx_setup(p);
    r.rx_post(p, 4);

    r.pwr(p, HPU_NIC_INJ_CTRL, 3u << HPU_NIC_INJ_DROP_RX_SHIFT);
    CHECK(r.inject(p, to_port(r, p, 100)));
    CHECK(r.inject(p, eth_frame(OTHER, 100)));  // would be filtered
    CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == 1u << HPU_NIC_INJ_DROP_RX_SHIFT);
    CHECK(r.inject(p, Bytes(5)));               // would be a runt
    CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == 0u);
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 0u);
    CHECK(r.counter(p, HPU_NIC_CNT_INJ_DROPPED) == 3u);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FILTERED) == 0u);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_ERRORS) == 0u);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FRAMES) == 0u);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == 0u);
    const Bytes f = to_port(r, p, 100, 5);
    CHECK(r.inject(p, f));
    CHECK(r.rx_bytes(p, 0, 100) == f);
}

TEST_CASE("NIC fault injection: SWAP_TX sends the next frame after the one that follows it", "[emu][nic][inj][tx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.tx_setup(p);
    const Bytes a = eth_frame(OTHER, 100, 1), b = eth_frame(OTHER, 20, 2),
                c = eth_frame(OTHER, 300, 3);

    r.pwr(p, HPU_NIC_INJ_CTRL, HPU_NIC_INJ_SWAP_TX);
    uint32_t ia = r.send(p, a);
    r.run();
    CHECK(r.env.sent.empty());                 // held
    CHECK(r.txd_status(p, ia) == done(HPU_NIC_DESC_OK));
    CHECK(r.prd(p, HPU_NIC_TX_CI) == 1u);
    CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == HPU_NIC_INJ_SWAP_TX);

    SECTION("the next frame goes first, then the held one") {
        r.send(p, b);
        r.send(p, c);
        r.run();
        REQUIRE(r.sent(p).size() == 3);
        CHECK(r.sent(p)[0] == padded(b));
        CHECK(r.sent(p)[1] == a);
        CHECK(r.sent(p)[2] == c);
        CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == 0u);
        CHECK(r.counter(p, HPU_NIC_CNT_TX_FRAMES) == 3u);
        CHECK(r.counter(p, HPU_NIC_CNT_INJ_DROPPED) == 0u);
    }
    SECTION("a frame that fails does not release it") {
        r.send(p, eth_frame(OTHER, 5000));
        r.run();
        CHECK(r.env.sent.empty());
        r.send(p, b);
        r.run();
        REQUIRE(r.sent(p).size() == 2);
        CHECK(r.sent(p)[1] == a);
    }
    SECTION("clearing TX_EN drops the held frame") {
        r.disable(p, HPU_NIC_CTRL_TX_EN);
        CHECK(r.counter(p, HPU_NIC_CNT_INJ_DROPPED) == 1u);
        CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == 0u);
        r.tx_setup(p);
        r.send(p, b);
        r.run();
        REQUIRE(r.sent(p).size() == 1);
        CHECK(r.sent(p)[0] == padded(b));
    }
    SECTION("the link going down drops the held frame") {
        r.set_link(p, HPU_NIC_LINK_STATUS_ATTACHED);
        CHECK(r.counter(p, HPU_NIC_CNT_INJ_DROPPED) == 1u);
        r.set_link(p, NIC_UP);
        r.send(p, b);
        r.run();
        REQUIRE(r.sent(p).size() == 1);
        CHECK(r.sent(p)[0] == padded(b));
    }
}

TEST_CASE("NIC link: follows the back end, counted in LINK_CHANGES with the LINK cause", "[emu][nic][link]")
{
    NicRig r;
    const unsigned int p = 9;

    r.set_link(p, NIC_UP);                     // no change
    CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 0u);
    r.set_link(p, HPU_NIC_LINK_STATUS_ATTACHED);
    CHECK(r.prd(p, HPU_NIC_LINK_STATUS) == HPU_NIC_LINK_STATUS_ATTACHED);
    CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 1u);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_LINK);
    r.set_link(p, 0);                          // detached: still down
    CHECK(r.prd(p, HPU_NIC_LINK_STATUS) == 0u);
    CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 1u);
    r.set_link(p, HPU_NIC_LINK_STATUS_UP);            // up but no back end: down
    CHECK(r.prd(p, HPU_NIC_LINK_STATUS) == 0u);
    r.set_link(p, NIC_UP);
    CHECK(r.prd(p, HPU_NIC_LINK_STATUS) == NIC_UP);
    CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 2u);
    for (unsigned int q = 0; q < p; q++) {
        CHECK(r.prd(q, HPU_NIC_LINK_CHANGES) == 0u);
    }
}

TEST_CASE("NIC transmit: clearing TX_EN stops the ring at a frame boundary", "[emu][nic][tx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.tx_setup(p);
    const Bytes a = eth_frame(OTHER, 100), b = eth_frame(OTHER, 200);
    r.tx_post(p, { TxBuf{ a } });
    r.tx_post(p, { TxBuf{ b } });
    r.tx_doorbell(p);
    const uint64_t abuf = r.txd_buf(p, 0);
    uint32_t ctrl_during = 0;
    bool once = false;

    r.env.on_dma_read = [&](uint64_t addr) {
        if (!once && addr == abuf) {
            once = true;
            r.disable(p, HPU_NIC_CTRL_TX_EN);
            ctrl_during = r.prd(p, HPU_NIC_CTRL);
        }
    };
    r.run();
    CHECK(once);
    CHECK(ctrl_during == HPU_NIC_CTRL_TX_EN);  // still reads set
    REQUIRE(r.sent(p).size() == 1);           // the frame completed
    CHECK(r.sent(p)[0] == a);
    CHECK(r.txd_status(p, 0) == done(HPU_NIC_DESC_OK));
    CHECK(r.prd(p, HPU_NIC_TX_CI) == 1u);
    CHECK(r.prd(p, HPU_NIC_CTRL) == 0u);      // then it stopped
    CHECK(r.txd_status(p, 1) == 0u);          // the next one untouched
    r.run();
    CHECK(r.sent(p).size() == 1);
}

TEST_CASE("NIC rings: setting an enable bit while its stop is pending cancels the stop", "[emu][nic][tx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.tx_setup(p);
    const Bytes a = eth_frame(OTHER, 100), b = eth_frame(OTHER, 200);
    r.tx_post(p, { TxBuf{ a } });
    r.tx_post(p, { TxBuf{ b } });
    r.tx_doorbell(p);
    const uint64_t abuf = r.txd_buf(p, 0);
    uint32_t pi_during = 0;
    bool once = false;

    r.env.on_dma_read = [&](uint64_t addr) {
        if (!once && addr == abuf) {
            once = true;
            r.pwr(p, HPU_NIC_CTRL, 0);                 // stop pending
            r.pwr(p, HPU_NIC_CTRL, HPU_NIC_CTRL_TX_EN); // reads set: no reset
            pi_during = r.prd(p, HPU_NIC_TX_PI);
        }
    };
    r.run();
    r.env.on_dma_read = nullptr;
    CHECK(once);
    CHECK(pi_during == 2u);                    // the indices were kept
    CHECK(r.prd(p, HPU_NIC_CTRL) == HPU_NIC_CTRL_TX_EN);
    r.run();
    REQUIRE(r.sent(p).size() == 2);            // the ring went on
    CHECK(r.sent(p)[1] == b);
    CHECK(r.prd(p, HPU_NIC_TX_CI) == 2u);
    CHECK(r.txd_status(p, 1) == done(HPU_NIC_DESC_OK));
    CHECK(r.env.errors.empty());
}

TEST_CASE("NIC rings: a PI written while the ring is disabled starts nothing and enabling resets it", "[emu][nic]")
{
    NicRig r;
    const unsigned int p = 1;
    const bool rx = GENERATE(false, true);
    CAPTURE(rx);
    const uint32_t pi_reg = rx ? HPU_NIC_RX_PI : HPU_NIC_TX_PI;
    const uint32_t en = rx ? HPU_NIC_CTRL_RX_EN : HPU_NIC_CTRL_TX_EN;
    const uint64_t ring = r.halloc(16 * 16, 64);

    std::memset(r.hp(ring), 0, 16 * 16);
    r.ring_regs(p, rx, host_addr(ring), 16);
    const unsigned int reads = r.env.dma_reads;
    r.pwr(p, pi_reg, 3);
    CHECK(r.prd(p, pi_reg) == 3u);             // stored, checked against CI
    r.run();
    if (rx) {
        CHECK(r.inject(p, to_port(r, p, 100)));  // RX_EN clear: dropped
    }
    CHECK(r.env.dma_reads == reads);           // no descriptor read
    r.pwr(p, pi_reg, 17);                      // more than SIZE ahead
    CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_BAD_PI);
    r.pwr(p, HPU_NIC_ERR_STATUS, HPU_NIC_ERR_ALL);
    r.pwr(p, HPU_NIC_CTRL, en);
    CHECK(r.prd(p, pi_reg) == 0u);             // enabling resets it
    r.run();
    CHECK(r.env.dma_reads == reads);
    CHECK(r.env.sent.empty());
    CHECK(r.env.errors.size() == 1);           // the BAD_PI write
}

TEST_CASE("NIC receive: a frame before the first RX_PI after enabling waits, counted RX_NOBUF", "[emu][nic][rx][fifo]")
{
    NicRig r;
    const unsigned int p = 0;
    r.pwr(p, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_ALL);
    const Bytes f = to_port(r, p, 100);

    CHECK(r.inject(p, f));                     // RX_EN clear: gone, uncounted
    r.rx_setup(p);                             // what open does first
    CHECK(r.env.rxq[p].empty());               // the FIFO starts empty
    CHECK_FALSE(r.inject(p, f));               // before the buffers
    CHECK(r.counter(p, HPU_NIC_CNT_RX_NOBUF) == 1u);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_RX_NOBUF);
    CHECK(r.vectors_of(HPU_VEC_NIC(p)) == 1u);
    r.rx_post(p, 4);                           // then open posts them
    r.run();
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 1u);
    CHECK(r.rx_bytes(p, 0, 100) == f);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_NOBUF) == 1u);
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FRAMES) == 1u);
}

TEST_CASE("NIC receive: clearing RX_EN lets the frame being written complete", "[emu][nic][rx]")
{
    NicRig r;
    const unsigned int p = 0;
    r.rx_setup(p);
    r.rx_post(p, 2);
    const uint64_t buf = r.rx[p].buf[0];
    uint32_t ctrl_during = 0;

    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr == buf) {
            r.disable(p, HPU_NIC_CTRL_RX_EN);
            ctrl_during = r.prd(p, HPU_NIC_CTRL);
        }
    };
    const Bytes f = to_port(r, p, 100);
    CHECK(r.inject(p, f));
    CHECK(ctrl_during == HPU_NIC_CTRL_RX_EN);
    CHECK(r.rxd(p, 0).status == done(HPU_NIC_DESC_OK));
    CHECK(r.rx_bytes(p, 0, 100) == f);
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 1u);
    CHECK(r.prd(p, HPU_NIC_CTRL) == 0u);
    CHECK(r.inject(p, to_port(r, p, 100)));
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 1u);
    CHECK(r.rxd(p, 1).status == 0u);
}

namespace {

enum class Reset { soft, hard, power_on };

void start_reset(NicRig &r, Reset k)
{
    switch (k) {
    case Reset::soft:
        r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
        break;
    case Reset::hard:
        r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
        break;
    case Reset::power_on:
        hpum_core_reset(&r.core);
        break;
    }
}

void finish_reset(NicRig &r, Reset k)
{
    r.bh();
    if (k == Reset::soft) {
        r.advance(HPU_SOFT_RESET_NS);
    } else if (k == Reset::hard) {
        r.advance(HPU_HARD_RESET_NS + HPU_SOFT_RESET_NS);
    }
    REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}

// Every port register at its reset value (the link up, reported afresh).
void check_port_reset(NicRig &r, unsigned int p)
{
    CHECK(r.prd(p, HPU_NIC_CTRL) == 0u);
    CHECK(r.prd(p, HPU_NIC_MTU) == 1500u);
    CHECK(r.prd(p, HPU_NIC_MAC_LO) == r.prd(p, HPU_NIC_PERM_MAC_LO));
    CHECK(r.prd(p, HPU_NIC_MAC_HI) == r.prd(p, HPU_NIC_PERM_MAC_HI));
    CHECK(r.prd(p, HPU_NIC_IRQ_MASK) == 0u);
    CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_LINK);
    CHECK(r.prd(p, HPU_NIC_ERR_STATUS) == 0u);
    CHECK(r.prd(p, HPU_NIC_INJ_CTRL) == 0u);
    CHECK(r.prd(p, HPU_NIC_LINK_CHANGES) == 0u);
    CHECK(r.prd(p, HPU_NIC_LINK_STATUS) == NIC_UP);
    for (uint32_t reg : { HPU_NIC_TX_BASE_LO, HPU_NIC_TX_BASE_HI, HPU_NIC_TX_SIZE,
                          HPU_NIC_TX_PI, HPU_NIC_TX_CI, HPU_NIC_RX_BASE_LO,
                          HPU_NIC_RX_BASE_HI, HPU_NIC_RX_SIZE, HPU_NIC_RX_PI,
                          HPU_NIC_RX_CI }) {
        CHECK(r.prd(p, reg) == 0u);
    }
    for (unsigned int i = 0; i < HPU_NIC_NUM_COUNTERS; i++) {
        CHECK(r.counter(p, i) == 0u);
        CHECK(r.prd(p, HPU_NIC_CNT_HI(i)) == 0u);
    }
}

} // namespace

TEST_CASE("NIC resets: every port register back to its reset value", "[emu][nic][reset]")
{
    NicRig r;
    const Reset k = GENERATE(Reset::soft, Reset::hard, Reset::power_on);
    const unsigned int p = 1;
    CAPTURE(static_cast<int>(k));

    r.tx_setup(p);
    r.rx_setup(p);
    r.rx_post(p, 2);
    tx_one(r, p, 100);
    r.inject(p, to_port(r, p, 100));
    r.pwr(p, HPU_NIC_MAC_LO, 1);
    r.pwr(p, HPU_NIC_MAC_HI, 2);
    r.pwr(p, HPU_NIC_IRQ_MASK, HPU_NIC_IRQ_ALL);
    r.pwr(p, HPU_NIC_INJ_CTRL, HPU_NIC_INJ_LINK_DOWN | HPU_NIC_INJ_SWAP_TX);
    r.pwr(p, HPU_NIC_TX_PI, 99);
    REQUIRE(r.prd(p, HPU_NIC_ERR_STATUS) == HPU_NIC_ERR_BAD_PI);
    r.core.nic[p].cnt[0] |= 1ULL << 40;
    (void)r.prd(p, HPU_NIC_CNT_LO(0));
    start_reset(r, k);
    finish_reset(r, k);
    check_port_reset(r, p);
    r.env.vectors.clear();
    // the port works again
    r.tx_setup(p);
    CHECK(tx_one(r, p, 100) == done(HPU_NIC_DESC_OK));
    CHECK(r.counter(p, HPU_NIC_CNT_TX_FRAMES) == 1u);
    CHECK(r.env.vectors.empty());              // IRQ_MASK 0 after the reset
}

TEST_CASE("NIC resets: a frame being sent is sent whole or not at all, nothing read or written after the reset starts", "[emu][nic][reset]")
{
    NicRig r;
    const Reset k = GENERATE(Reset::soft, Reset::hard, Reset::power_on);
    const int where = GENERATE(0, 1, 2, 3);    // descriptor, buffer 1, buffer 2, send
    const unsigned int p = 0;
    CAPTURE(static_cast<int>(k), where);
    r.tx_setup(p);
    const Bytes f = eth_frame(OTHER, 1000);
    r.tx_post(p, { TxBuf{ Bytes(f.begin(), f.begin() + 500) },
                   TxBuf{ Bytes(f.begin() + 500, f.end()) } });
    r.tx_post(p, { TxBuf{ eth_frame(OTHER, 64) } });
    r.tx_doorbell(p);
    const uint64_t b1 = r.txd_buf(p, 0);
    const uint64_t b2 = r.txd_buf(p, 1);
    const Bytes ring_before(r.hp(r.tx[p].bus), r.hp(r.tx[p].bus) + 48);
    bool reset = false;
    unsigned int reads_after = 0, writes_after = 0;

    auto hit = [&] {
        if (!reset) {
            reset = true;
            start_reset(r, k);
        }
    };
    r.env.on_dma_read = [&](uint64_t addr) {
        if (reset) {
            reads_after++;
        } else if ((where == 0 && addr == r.txd_bus(p, 1)) ||
                   (where == 1 && addr == b1) || (where == 2 && addr == b2)) {
            hit();
        }
    };
    r.env.on_dma_write = [&](uint64_t) {
        if (reset) {
            writes_after++;
        }
    };
    r.env.on_nic_send = [&](unsigned int) {
        if (where == 3) {
            hit();
        }
    };
    r.run();
    REQUIRE(reset);
    // the access during which the reset came is the last one
    CHECK(reads_after == 0u);
    CHECK(writes_after == 0u);
    CHECK(r.sent(p).size() == (where == 3 ? 1u : 0u));
    if (where == 3) {
        CHECK(r.sent(p)[0] == f);             // whole
    }
    CHECK(Bytes(r.hp(r.tx[p].bus), r.hp(r.tx[p].bus) + 48) == ring_before);
    finish_reset(r, k);
    r.run();
    CHECK(reads_after == 0u);
    CHECK(writes_after == 0u);
    CHECK(r.sent(p).size() == (where == 3 ? 1u : 0u));
    check_port_reset(r, p);
}

TEST_CASE("NIC resets: a frame being received writes nothing after the reset starts", "[emu][nic][reset]")
{
    NicRig r;
    const Reset k = GENERATE(Reset::soft, Reset::hard, Reset::power_on);
    const int where = GENERATE(0, 1, 2);       // descriptor read, buffer write, descriptor write
    const unsigned int p = 0;
    CAPTURE(static_cast<int>(k), where);
    r.rx_setup(p);
    r.rx_post(p, 2);
    const uint64_t buf = r.rx[p].buf[0];
    bool reset = false;
    unsigned int after = 0;

    r.env.on_dma_read = [&](uint64_t addr) {
        if (reset) {
            after++;
        } else if (where == 0 && addr == r.rxd_bus(p, 0)) {
            reset = true;
            start_reset(r, k);
        }
    };
    r.env.on_dma_write = [&](uint64_t addr) {
        if (reset) {
            after++;
        } else if ((where == 1 && addr == buf) ||
                   (where == 2 && addr == r.rxd_bus(p, 0) + HPU_NIC_RXD_LEN)) {
            reset = true;
            start_reset(r, k);
        }
    };
    CHECK(r.inject(p, to_port(r, p, 100)));
    REQUIRE(reset);
    CHECK(after == 0u);
    CHECK(r.rxd(p, 0).status == 0u);
    finish_reset(r, k);
    CHECK(after == 0u);
    check_port_reset(r, p);
}

TEST_CASE("NIC resets: frames held in the FIFO and by SWAP_TX are dropped uncounted", "[emu][nic][reset]")
{
    NicRig r;
    const Reset k = GENERATE(Reset::soft, Reset::hard, Reset::power_on);
    const unsigned int p = 4;
    CAPTURE(static_cast<int>(k));
    r.rx_setup(p);
    r.tx_setup(p);
    CHECK_FALSE(r.inject(p, to_port(r, p, 100)));
    CHECK_FALSE(r.inject(p, to_port(r, p, 200)));
    r.pwr(p, HPU_NIC_INJ_CTRL, HPU_NIC_INJ_SWAP_TX);
    tx_one(r, p, 100);
    REQUIRE(r.env.sent.empty());
    REQUIRE(r.core.nic[p].holding);

    start_reset(r, k);
    finish_reset(r, k);
    r.run();
    CHECK(r.env.rxq[p].empty());               // the back end's queue purged
    CHECK_FALSE(r.core.nic[p].holding);
    check_port_reset(r, p);
    // nothing of it arrives later
    r.rx_setup(p);
    r.rx_post(p, 4);
    r.run();
    CHECK(r.prd(p, HPU_NIC_RX_CI) == 0u);
    r.tx_setup(p);
    const Bytes b = eth_frame(OTHER, 70);
    r.send(p, b);
    r.run();
    REQUIRE(r.sent(p).size() == 1);
    CHECK(r.sent(p)[0] == b);
}

TEST_CASE("NIC resets: a soft reset is not done while a frame is in progress", "[emu][nic][reset]")
{
    NicRig r;
    const unsigned int p = 0;
    r.tx_setup(p);
    r.send(p, eth_frame(OTHER, 100));
    const uint64_t b = r.txd_buf(p, 0);
    uint32_t status_during = 0;

    r.env.on_dma_read = [&](uint64_t addr) {
        if (addr == b) {
            r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
            r.advance(3 * HPU_SOFT_RESET_NS);
            status_during = r.rd(HPU_REG_STATUS);
        }
    };
    r.run();
    CHECK(status_during == HPU_STATUS_RESET_BUSY);
    r.env.on_dma_read = nullptr;
    r.advance(HPU_SOFT_RESET_NS);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(r.env.sent.empty());
}

TEST_CASE("NIC resets: a hard reset reports the link when it is done", "[emu][nic][reset][link]")
{
    NicRig r;

    r.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    CHECK(r.prd(0, HPU_NIC_IRQ_STATUS) == 0u);
    r.pwr(0, HPU_NIC_CTRL, ALL_EN);            // dropped while busy
    CHECK(r.prd(0, HPU_NIC_CTRL) == 0u);
    r.advance(HPU_HARD_RESET_NS + HPU_SOFT_RESET_NS);
    REQUIRE(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    for (unsigned int p = 0; p < HPU_NIC_MAX_PORTS; p++) {
        CHECK(r.prd(p, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_LINK);
    }
    NicRig down;
    down.set_link(2, 0);
    down.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    down.advance(HPU_SOFT_RESET_NS);
    CHECK(down.prd(2, HPU_NIC_IRQ_STATUS) == 0u);
    CHECK(down.prd(2, HPU_NIC_LINK_STATUS) == 0u);
    CHECK(down.prd(3, HPU_NIC_IRQ_STATUS) == HPU_NIC_IRQ_LINK);
}

TEST_CASE("NIC ports: two ports wired back to back carry frames both ways", "[emu][nic]")
{
    NicRig r;
    r.tx_setup(0);
    r.rx_setup(0);
    r.tx_setup(1);
    r.rx_setup(1);
    r.rx_post(0, 8);
    r.rx_post(1, 8);
    for (unsigned int k = 0; k < 6; k++) {
        r.send(k % 2, to_port(r, 1 - k % 2, 60 + 100 * k, static_cast<uint8_t>(k)));
    }
    r.run();
    REQUIRE(r.env.sent.size() == 6);
    for (const auto &f : r.env.sent) {
        CHECK(r.inject(1 - f.port, f.bytes));
    }
    CHECK(r.prd(0, HPU_NIC_RX_CI) == 3u);
    CHECK(r.prd(1, HPU_NIC_RX_CI) == 3u);
    CHECK(r.rx_bytes(1, 2, 460) == to_port(r, 1, 460, 4));
    CHECK(r.counter(0, HPU_NIC_CNT_TX_FRAMES) == 3u);
    CHECK(r.counter(1, HPU_NIC_CNT_RX_FRAMES) == 3u);
}

TEST_CASE("NIC ports: random frames and register writes keep the rings consistent", "[emu][nic][fuzz]")
{
    NicRig r;
    std::mt19937 rng(7);
    const unsigned int p = 0;
    r.tx_setup(p, 64);
    r.rx_setup(p, 64);

    for (int step = 0; step < 3000; step++) {
        switch (rng() % 8) {
        case 0: {
            // Half of them short enough for the MTU, to reach the buffers,
            // many about the size of the small buffers below.
            const size_t len = rng() % 2   ? rng() % 20000
                               : rng() % 2 ? 14 + rng() % 1505
                                           : 60 + rng() % 48;
            Bytes f(len);
            for (auto &b : f) {
                b = static_cast<uint8_t>(rng());
            }
            if (!f.empty() && rng() % 2) {
                std::memcpy(f.data(), r.mac(p).data(), std::min<size_t>(6, f.size()));
            }
            r.inject(p, f);
            break;
        }
        case 1: {
            if (r.prd(p, HPU_NIC_RX_PI) - r.prd(p, HPU_NIC_RX_CI) < 60) {
                const uint32_t size = rng() % 2 ? 64 + rng() % 2000 : 64 + rng() % 32;
                r.rx_post(p, 1 + rng() % 3, static_cast<uint16_t>(size));
            }
            break;
        }
        case 2:
            if (r.tx[p].pi - r.prd(p, HPU_NIC_TX_CI) < 40) {
                r.send(p, eth_frame(OTHER, rng() % 1600), 1 + rng() % 4);
            }
            break;
        case 3:
            r.pwr(p, static_cast<uint32_t>(rng() % 0x90) & ~3u, static_cast<uint32_t>(rng()));
            break;
        case 4: {
            // Random, but with short drops and the link mostly up, so
            // that frames still reach the buffers.
            uint32_t inj = static_cast<uint32_t>(rng()) &
                           ~(HPU_NIC_INJ_DROP_RX_MASK | HPU_NIC_INJ_DROP_TX_MASK);
            inj |= (rng() % 4) << HPU_NIC_INJ_DROP_RX_SHIFT |
                   (rng() % 4) << HPU_NIC_INJ_DROP_TX_SHIFT;
            if (rng() % 4) {
                inj &= ~HPU_NIC_INJ_LINK_DOWN;
            }
            r.pwr(p, HPU_NIC_INJ_CTRL, inj);
            break;
        }
        default:
            r.run();
            break;
        }
        if (!(r.prd(p, HPU_NIC_CTRL) & HPU_NIC_CTRL_TX_EN)) {
            r.tx_setup(p, 64);
        }
        if (!(r.prd(p, HPU_NIC_CTRL) & HPU_NIC_CTRL_RX_EN)) {
            r.rx_setup(p, 64);
        }
        REQUIRE(r.prd(p, HPU_NIC_RX_PI) - r.prd(p, HPU_NIC_RX_CI) <= 64u);
        REQUIRE(r.prd(p, HPU_NIC_TX_PI) - r.prd(p, HPU_NIC_TX_CI) <= 64u);
        if (step % 100 == 99) {
            REQUIRE(r.rx_guards_intact(p));    // no write past a buffer
        }
    }
    CHECK(r.rx_guards_intact(p));
    CAPTURE(r.counter(p, HPU_NIC_CNT_RX_ERRORS), r.counter(p, HPU_NIC_CNT_RX_FILTERED),
            r.counter(p, HPU_NIC_CNT_INJ_DROPPED), r.counter(p, HPU_NIC_CNT_RX_NOBUF));
    CHECK(r.counter(p, HPU_NIC_CNT_RX_FRAMES) > 0u);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}
