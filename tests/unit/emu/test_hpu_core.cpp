// SPDX-License-Identifier: MIT
//
// Unit tests of the HPU device model core (emu/hpu_core.c) against
// Documentation/hw/registers.md, with a fake environment standing in for
// QEMU: it records raised MSI-X vectors and logged guest errors and holds
// the one-shot timer until a test fires it.
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "hpu_fake_env.hpp"

using namespace hpu_test;

namespace {

const uint32_t ro_regs[] = {
    HPU_REG_MAGIC, HPU_REG_CHIP_ID, HPU_REG_REVISION, HPU_REG_SPEC_VERSION,
    HPU_REG_HBM_SIZE_LO, HPU_REG_HBM_SIZE_HI, HPU_REG_ENGINES,
    HPU_REG_HBM_STACKS, HPU_REG_SERIAL(0), HPU_REG_SERIAL(1),
    HPU_REG_SERIAL(2), HPU_REG_SERIAL(3), HPU_REG_UUID(0), HPU_REG_UUID(1),
    HPU_REG_UUID(2), HPU_REG_UUID(3), HPU_REG_STATUS, HPU_REG_RESET_COUNT,
    HPU_REG_IRQ_TEST_COUNT, HPU_REG_MSIX_VECTORS,
};

} // namespace

TEST_CASE("identity registers reflect the configuration", "[emu][id]")
{
    Dev d(6ULL << 30, 3, "ABCDE");

    CHECK(d.rd(HPU_REG_MAGIC) == 0x31555048u);
    CHECK(d.rd(HPU_REG_CHIP_ID) == 1u);
    CHECK(d.rd(HPU_REG_REVISION) == 0x00000100u);
    CHECK(d.rd(HPU_REG_SPEC_VERSION) == 10u);
    CHECK(d.rd(HPU_REG_HBM_SIZE_LO) == 0x80000000u);
    CHECK(d.rd(HPU_REG_HBM_SIZE_HI) == 1u);
    CHECK(d.rd(HPU_REG_ENGINES) == 0x03020808u);
    CHECK(d.rd(HPU_REG_HBM_STACKS) == 4u);
    CHECK(d.rd(HPU_REG_SERIAL(0)) == 0x44434241u);      // "ABCD"
    CHECK(d.rd(HPU_REG_SERIAL(1)) == 0x00000045u);      // "E", NUL padded
    CHECK(d.rd(HPU_REG_SERIAL(2)) == 0u);
    CHECK(d.rd(HPU_REG_SERIAL(3)) == 0u);
    CHECK(d.rd(HPU_REG_UUID(0)) == 0x78563412u);
    CHECK(d.rd(HPU_REG_UUID(1)) == 0xf0debc9au);
    CHECK(d.rd(HPU_REG_UUID(2)) == 0xa9cbed0fu);
    CHECK(d.rd(HPU_REG_UUID(3)) == 0x21436587u);
    CHECK(d.rd(HPU_REG_MSIX_VECTORS) == 64u);
    CHECK(d.error() == 0u);
    CHECK(d.env.errors.empty());
}

TEST_CASE("defaults: 4 GiB, 10 NIC ports, a 16-character serial", "[emu][id]")
{
    Dev d(4ULL << 30, 10, "0123456789abcdef");

    CHECK(d.rd(HPU_REG_HBM_SIZE_LO) == 0u);
    CHECK(d.rd(HPU_REG_HBM_SIZE_HI) == 1u);
    CHECK(d.rd(HPU_REG_ENGINES) == 0x0a020808u);
    CHECK(d.rd(HPU_REG_SERIAL(0)) == 0x33323130u);
    CHECK(d.rd(HPU_REG_SERIAL(3)) == 0x66656463u);      // "cdef", no NUL
}

TEST_CASE("power-on reset values", "[emu][reset]")
{
    Dev d;

    CHECK(d.rd(HPU_REG_SCRATCH) == 0u);
    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(d.rd(HPU_REG_RESET_COUNT) == 0u);
    CHECK(d.rd(HPU_REG_IRQ_TEST_COUNT) == 0u);
    CHECK(d.rd(HPU_REG_ERROR) == 0u);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == 0u);
    CHECK(d.rd(HPU_REG_IRQ_MASK) == 0u);
    CHECK(d.env.vectors.empty());
}

TEST_CASE("SCRATCH is read-write", "[emu][access]")
{
    Dev d;

    for (uint32_t v : {0xdeadbeefu, 0u, 0xffffffffu, 0x12345678u}) {
        d.wr(HPU_REG_SCRATCH, v);
        CHECK(d.rd(HPU_REG_SCRATCH) == v);
    }
    CHECK(d.error() == 0u);
    CHECK(d.env.errors.empty());
}

TEST_CASE("write-only registers read as zero without an error", "[emu][access]")
{
    Dev d;

    CHECK(d.rd(HPU_REG_SOFT_RESET) == 0u);
    CHECK(d.rd(HPU_REG_IRQ_TEST) == 0u);
    CHECK(d.error() == 0u);
}

TEST_CASE("writes to read-only registers are dropped and flagged", "[emu][access]")
{
    const uint32_t reg = GENERATE(from_range(std::begin(ro_regs),
                                             std::end(ro_regs)));
    Dev d(8ULL << 30, 4, "X");
    const uint32_t before = d.rd(reg);

    d.wr(reg, ~before);
    CHECK(d.rd(reg) == before);
    CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
    CHECK(d.env.errors.size() == 1);
    CHECK(d.env.vectors.empty());
    CHECK(d.env.arms == 0u);                        // no timer started
}

TEST_CASE("wrongly sized accesses are flagged", "[emu][access]")
{
    const unsigned int size = GENERATE(1u, 2u, 8u);
    Dev d;

    SECTION("read returns 0") {
        CHECK(d.rd64(HPU_REG_MAGIC, size) == 0u);
        CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
        CHECK(d.env.errors.size() == 1);
    }
    SECTION("write is dropped") {
        d.wr(HPU_REG_SCRATCH, 0x1122334455667788ULL, size);
        CHECK(d.rd(HPU_REG_SCRATCH) == 0u);
        CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
    }
    SECTION("a wide write does not reach the next register") {
        // 8 bytes at SOFT_RESET would also cover RESET_COUNT.
        d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY, size);
        CHECK(d.env.arms == 0u);
        CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
        CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
    }
}

TEST_CASE("unaligned accesses are flagged", "[emu][access]")
{
    const unsigned int off = GENERATE(1u, 2u, 3u);
    Dev d;

    CHECK(d.rd(HPU_REG_MAGIC + off) == 0u);
    CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
    REQUIRE(d.env.errors.size() == 1);
    CHECK(d.env.errors[0].find("aligned") != std::string::npos);
    d.wr(HPU_REG_ERROR, HPU_ERROR_BAD_ACCESS);
    REQUIRE(d.error() == 0u);

    d.wr(HPU_REG_SCRATCH + off, 0xffffffffu);
    CHECK(d.rd(HPU_REG_SCRATCH) == 0u);
    CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
    CHECK(d.env.errors.size() == 2);
}

TEST_CASE("unmapped offsets are flagged", "[emu][access]")
{
    const uint64_t addr = GENERATE(uint64_t{HPU_REG_ID_BLOCK_END}, 0x100u,
                                   0x102cu, 0x1400u, 0x201cu, 0x3028u,
                                   0x4060u, 0x4118u, 0x420cu, 0x423cu,
                                   0x4358u, 0x5000u,
                                   0x1002cu, 0x10464u, 0x1b000u, 0x22000u,
                                   uint64_t{HPU_ROCE_DB_BASE - 4});
    Dev d;

    SECTION("read") {
        CHECK(d.rd(addr) == 0u);
        CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
        CHECK(d.env.errors.size() == 1);
    }
    SECTION("write") {
        d.wr(addr, 0xffffffffu);
        CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
        CHECK(d.env.errors.size() == 1);
        // Nothing else moved.
        CHECK(d.rd(HPU_REG_SCRATCH) == 0u);
        CHECK(d.rd(HPU_REG_IRQ_MASK) == 0u);
    }
}

TEST_CASE("ERROR is sticky and write-1-to-clear", "[emu][rw1c]")
{
    Dev d;

    d.rd(0x5000);                                   // BAD_ACCESS
    d.wr(HPU_REG_IRQ_TEST, HPU_MSIX_VECTORS);       // BAD_IRQ_VECTOR
    d.wr(HPU_REG_SOFT_RESET, 0);                    // BAD_RESET_KEY
    const uint32_t all = HPU_ERROR_BAD_ACCESS | HPU_ERROR_BAD_IRQ_VECTOR |
                         HPU_ERROR_BAD_RESET_KEY;
    REQUIRE(d.error() == all);

    d.wr(HPU_REG_ERROR, 0);
    CHECK(d.error() == all);
    CHECK(d.rd(HPU_REG_ERROR) == all);              // reading does not clear
    d.wr(HPU_REG_ERROR, HPU_ERROR_BAD_IRQ_VECTOR);
    CHECK(d.error() == (HPU_ERROR_BAD_ACCESS | HPU_ERROR_BAD_RESET_KEY));
    d.wr(HPU_REG_ERROR, 0xffffffffu);
    CHECK(d.error() == 0u);
}

TEST_CASE("IRQ_STATUS is write-1-to-clear, IRQ_MASK read-write", "[emu][rw1c]")
{
    Dev d;

    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    d.fire_timer();                                 // RESET_DONE
    d.wr(HPU_REG_IRQ_TEST, 0);                      // SELF_TEST
    d.wr(HPU_REG_IRQ_TEST, 0);                      // and again
    REQUIRE(d.rd(HPU_REG_IRQ_STATUS) ==
            (HPU_IRQ_SELF_TEST | HPU_IRQ_RESET_DONE));

    d.wr(HPU_REG_IRQ_STATUS, 0);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) ==
          (HPU_IRQ_SELF_TEST | HPU_IRQ_RESET_DONE));
    d.wr(HPU_REG_IRQ_STATUS, HPU_IRQ_RESET_DONE);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_SELF_TEST);
    d.wr(HPU_REG_IRQ_STATUS, HPU_IRQ_SELF_TEST);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == 0u);

    d.wr(HPU_REG_IRQ_MASK, HPU_IRQ_RESET_DONE);
    CHECK(d.rd(HPU_REG_IRQ_MASK) == HPU_IRQ_RESET_DONE);
    d.wr(HPU_REG_IRQ_MASK, 0xffffffffu);            // reserved bits read 0
    CHECK(d.rd(HPU_REG_IRQ_MASK) ==
          (HPU_IRQ_SELF_TEST | HPU_IRQ_RESET_DONE | HPU_IRQ_FW_BOOT |
           HPU_IRQ_FLASH_DONE | HPU_IRQ_MBOX_DONE));
    d.wr(HPU_REG_IRQ_MASK, 0);
    CHECK(d.rd(HPU_REG_IRQ_MASK) == 0u);
    CHECK(d.error() == 0u);
}

TEST_CASE("soft reset sequence", "[emu][reset]")
{
    Dev d;

    d.wr(HPU_REG_SCRATCH, 0xcafef00du);
    d.rd(0x5000);                                   // leave an error behind
    REQUIRE(d.error() == HPU_ERROR_BAD_ACCESS);
    d.wr(HPU_REG_IRQ_TEST, 0);                      // and a pending cause
    REQUIRE(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_SELF_TEST);
    d.env.vectors.clear();

    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);

    // In progress: busy until device time passes, nothing cleared yet.
    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_RESET_BUSY);
    REQUIRE(d.env.timer_armed);
    CHECK(d.env.timer_ns == 100000u);
    CHECK(d.rd(HPU_REG_RESET_COUNT) == 0u);
    CHECK(d.rd(HPU_REG_SCRATCH) == 0xcafef00du);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_SELF_TEST);
    CHECK(d.env.vectors.empty());

    d.fire_timer();

    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(d.rd(HPU_REG_RESET_COUNT) == 1u);
    CHECK(d.rd(HPU_REG_SCRATCH) == 0u);
    CHECK(d.rd(HPU_REG_ERROR) == 0u);
    // IRQ_STATUS is not among the registers that survive: the stale
    // SELF_TEST cause is gone, RESET_DONE is the only cause left.
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_RESET_DONE);
    CHECK(d.env.vectors.empty());                   // RESET_DONE masked

    // A second reset counts again.
    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    d.fire_timer();
    CHECK(d.rd(HPU_REG_RESET_COUNT) == 2u);
}

TEST_CASE("soft reset raises vector 0 only when RESET_DONE is unmasked",
          "[emu][reset][irq]")
{
    Dev d;

    SECTION("masked") {
        d.wr(HPU_REG_IRQ_MASK, HPU_IRQ_SELF_TEST);
        d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
        d.fire_timer();
        CHECK(d.env.vectors.empty());
        CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_RESET_DONE);
    }
    SECTION("unmasked") {
        d.wr(HPU_REG_IRQ_MASK, HPU_IRQ_RESET_DONE);
        d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
        CHECK(d.env.vectors.empty());               // not before completion
        d.fire_timer();
        CHECK(d.env.vectors == std::vector<unsigned int>{HPU_VEC_MISC});
        CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_RESET_DONE);
    }
}

TEST_CASE("soft reset keeps identity, IRQ_MASK and the counters",
          "[emu][reset]")
{
    Dev d(2ULL << 30, 5, "KEEP");

    d.wr(HPU_REG_IRQ_MASK, HPU_IRQ_SELF_TEST);
    d.wr(HPU_REG_IRQ_TEST, 3);
    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    d.fire_timer();

    CHECK(d.rd(HPU_REG_IRQ_MASK) == HPU_IRQ_SELF_TEST);
    CHECK(d.rd(HPU_REG_IRQ_TEST_COUNT) == 1u);
    CHECK(d.rd(HPU_REG_RESET_COUNT) == 1u);
    CHECK(d.rd(HPU_REG_HBM_SIZE_LO) == 0x80000000u);
    CHECK(d.rd(HPU_REG_ENGINES) == 0x05020808u);
    CHECK(d.rd(HPU_REG_SERIAL(0)) == 0x5045454bu);      // "KEEP"
    CHECK(d.rd(HPU_REG_UUID(0)) == 0x78563412u);
}

TEST_CASE("soft reset with a bad key", "[emu][reset]")
{
    const uint32_t key = GENERATE(0u, HPU_SOFT_RESET_KEY ^ 1u, 0xffffffffu);
    Dev d;

    d.wr(HPU_REG_SCRATCH, 7);
    d.wr(HPU_REG_SOFT_RESET, key);
    CHECK(d.error() == HPU_ERROR_BAD_RESET_KEY);
    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(d.env.arms == 0u);
    CHECK(d.rd(HPU_REG_SCRATCH) == 7u);
    CHECK(d.rd(HPU_REG_RESET_COUNT) == 0u);
    CHECK(d.env.errors.size() == 1);
}

TEST_CASE("soft reset while one is in progress", "[emu][reset]")
{
    Dev d;

    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    REQUIRE(d.env.arms == 1u);
    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);

    CHECK(d.error() == HPU_ERROR_RESET_BUSY);
    CHECK(d.env.arms == 1u);                        // first deadline kept
    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_RESET_BUSY);
    CHECK(d.env.errors.size() == 1);

    d.fire_timer();
    CHECK(d.rd(HPU_REG_RESET_COUNT) == 1u);         // one reset, not two
    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(d.error() == 0u);                         // ERROR reset by it
}

TEST_CASE("power-on reset abandons a soft reset", "[emu][reset]")
{
    Dev d;

    d.wr(HPU_REG_IRQ_TEST, 2);
    d.wr(HPU_REG_IRQ_MASK, HPU_IRQ_RESET_DONE);
    d.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    REQUIRE(d.env.timer_armed);

    hpum_core_reset(&d.core);
    CHECK(d.env.cancels == 1u);
    // Only the boot ROM's initialisation timer is left.
    REQUIRE(d.env.timer_armed);
    CHECK(d.env.timer_ns == HPU_ROM_INIT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
    CHECK(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
    CHECK(d.rd(HPU_REG_IRQ_TEST_COUNT) == 0u);
    CHECK(d.rd(HPU_REG_IRQ_MASK) == 0u);

    // A late expiry (the timer raced with the reset) changes nothing.
    hpum_core_timer_expired(&d.core);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
    CHECK(d.rd(HPU_REG_RESET_COUNT) == 0u);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == 0u);
    CHECK(d.env.vectors == std::vector<unsigned int>{2});
}

TEST_CASE("IRQ_TEST raises the vector and counts", "[emu][irq]")
{
    Dev d;

    SECTION("vectors 1-63 raise just that vector") {
        const unsigned int v = GENERATE(range(1u, 64u));

        d.wr(HPU_REG_IRQ_MASK, HPU_IRQ_SELF_TEST);
        d.wr(HPU_REG_IRQ_TEST, v);
        CHECK(d.env.vectors == std::vector<unsigned int>{v});
        CHECK(d.rd(HPU_REG_IRQ_TEST_COUNT) == 1u);
        CHECK(d.rd(HPU_REG_IRQ_STATUS) == 0u);
        CHECK(d.error() == 0u);
    }
    SECTION("vector 0 sets SELF_TEST regardless of IRQ_MASK") {
        const uint32_t mask = GENERATE(0u, uint32_t{HPU_IRQ_SELF_TEST},
                                       uint32_t{HPU_IRQ_RESET_DONE});

        d.wr(HPU_REG_IRQ_MASK, mask);
        d.wr(HPU_REG_IRQ_TEST, 0);
        CHECK(d.env.vectors == std::vector<unsigned int>{0});
        CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_SELF_TEST);
        CHECK(d.rd(HPU_REG_IRQ_TEST_COUNT) == 1u);
    }
    SECTION("repeated tests count each interrupt") {
        for (unsigned int i = 0; i < 5; i++) {
            d.wr(HPU_REG_IRQ_TEST, i);
        }
        CHECK(d.env.vectors == std::vector<unsigned int>{0, 1, 2, 3, 4});
        CHECK(d.rd(HPU_REG_IRQ_TEST_COUNT) == 5u);
    }
}

TEST_CASE("IRQ_TEST with a bad vector", "[emu][irq]")
{
    const uint32_t v = GENERATE(64u, 65u, 0x80000000u, 0xffffffffu);
    Dev d;

    d.wr(HPU_REG_IRQ_TEST, v);
    CHECK(d.env.vectors.empty());
    CHECK(d.rd(HPU_REG_IRQ_TEST_COUNT) == 0u);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == 0u);
    CHECK(d.error() == HPU_ERROR_BAD_IRQ_VECTOR);
    CHECK(d.env.errors.size() == 1);
}

TEST_CASE("property limits", "[emu][config]")
{
    char err[160];
    const uint64_t M = 1ULL << 20, G = 1ULL << 30;

    CHECK(hpum_core_check_config(256 * M, 0, "", err, sizeof(err)));
    CHECK(hpum_core_check_config(32 * G, 10, "0123456789abcdef", err,
                                 sizeof(err)));
    CHECK(hpum_core_check_config(4 * G, 10, "HPU-0000000000", nullptr, 0));
    CHECK(hpum_core_check_config(4 * G, 10, " ~", err, sizeof(err)));

    SECTION("hbm-size") {
        const uint64_t bad = GENERATE(0ULL, 128ULL << 20, (256ULL << 20) + 1,
                                      (768ULL << 20) + 4096, 32ULL << 30 |
                                      256ULL << 20, 64ULL << 30);

        CHECK_FALSE(hpum_core_check_config(bad, 10, "x", err, sizeof(err)));
        CHECK(std::string(err).find("hbm-size") != std::string::npos);
    }
    SECTION("nic-ports") {
        CHECK_FALSE(hpum_core_check_config(4 * G, 11, "x", err, sizeof(err)));
        CHECK(std::string(err).find("nic-ports") != std::string::npos);
    }
    SECTION("serial length") {
        CHECK_FALSE(hpum_core_check_config(4 * G, 10, "0123456789abcdefg",
                                           err, sizeof(err)));
        CHECK(std::string(err).find("serial") != std::string::npos);
    }
    SECTION("serial characters") {
        const char *bad = GENERATE("a\tb", "caf\xc3\xa9", "\x7f", "new\nline");

        CHECK_FALSE(hpum_core_check_config(4 * G, 10, bad, err, sizeof(err)));
        CHECK(std::string(err).find("serial") != std::string::npos);
    }
}
