// SPDX-License-Identifier: MIT
//
// Unit tests of spec version 4 (Documentation/hw/firmware-and-telemetry.md):
// the firmware mailbox.
//
// Copyright (c) 2026 The hpu authors

#include "hpu_fw_fixture.hpp"

using namespace hpu_test;
using namespace hpu_fw_test;

TEST_CASE("mailbox: every opcode and result, answered 100 us after the write",
          "[emu][fw][mbox]")
{
    Dev d;

    d.wr(HPU_REG_IRQ_MASK, HPU_IRQ_MBOX_DONE);
    d.wr(HPU_REG_MBOX_ARG0, HPU_LIMIT_POWER_CAP);
    d.wr(HPU_REG_MBOX_CMD, 0xabcd0000 | HPU_MBOX_GET_LIMIT);
    CHECK(d.rd(HPU_REG_MBOX_STATUS) == (0xabcd0000 | HPU_MBOX_BUSY));
    CHECK(d.rd(HPU_REG_MBOX_CMD) == (0xabcd0000 | HPU_MBOX_GET_LIMIT));
    d.wr(HPU_REG_MBOX_ARG0, 0);         // latched at the command
    d.advance(HPU_MBOX_ANSWER_NS - 1);
    CHECK(d.rd(HPU_REG_MBOX_STATUS) == (0xabcd0000 | HPU_MBOX_BUSY));
    CHECK(d.env.vectors.empty());
    d.advance(1);
    CHECK(d.rd(HPU_REG_MBOX_STATUS) == (0xabcd0000 | HPU_MBOX_DONE));
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 350000);
    CHECK(d.rd(HPU_REG_MBOX_RESP1) == 350000);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_MBOX_DONE);
    CHECK(d.env.vectors == std::vector<unsigned int>{ HPU_VEC_MISC });

    CHECK(mbox(d, HPU_MBOX_GET_LIMIT_RANGE, HPU_LIMIT_TEMP_MAX) == HPU_MBOX_OK);
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 30000);
    CHECK(d.rd(HPU_REG_MBOX_RESP1) == 100000);
    CHECK(mbox(d, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_MAX, 70000) == HPU_MBOX_OK);
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 70000);
    CHECK(mbox(d, HPU_MBOX_GET_LIMIT, HPU_LIMIT_TEMP_MAX) == HPU_MBOX_OK);
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 70000);
    CHECK(d.rd(HPU_REG_MBOX_RESP1) == 85000);
    // bounds are inclusive
    CHECK(mbox(d, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_MAX, 30000) == HPU_MBOX_OK);
    CHECK(mbox(d, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_MAX, 100000) == HPU_MBOX_OK);
    CHECK(mbox(d, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_MAX, 29999) ==
          HPU_MBOX_BAD_ARG);
    CHECK(mbox(d, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_MAX, 100001) ==
          HPU_MBOX_BAD_ARG);
    CHECK(mbox(d, HPU_MBOX_GET_LIMIT, HPU_LIMIT_TEMP_MAX) == HPU_MBOX_OK);
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 100000);
    CHECK(mbox(d, HPU_MBOX_SET_LIMIT, HPU_NUM_LIMITS, 1) == HPU_MBOX_BAD_ARG);
    CHECK(mbox(d, HPU_MBOX_GET_LIMIT, HPU_NUM_LIMITS) == HPU_MBOX_BAD_ARG);
    CHECK(mbox(d, HPU_MBOX_GET_LIMIT_RANGE, 99) == HPU_MBOX_BAD_ARG);
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 0);
    CHECK(mbox(d, HPU_MBOX_GET_CLOCK, 0) == HPU_MBOX_OK);
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 800);
    CHECK(d.rd(HPU_REG_MBOX_RESP1) == 750);
    CHECK(mbox(d, HPU_MBOX_GET_CLOCK, 4) == HPU_MBOX_OK);
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 1600);
    CHECK(mbox(d, HPU_MBOX_GET_CLOCK, 5) == HPU_MBOX_BAD_ARG);
    CHECK(mbox(d, HPU_MBOX_GET_INFO) == HPU_MBOX_OK);
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 5);
    CHECK(d.rd(HPU_REG_MBOX_RESP1) == HPU_FW_VERSION(1, 2, 3));
    CHECK(mbox(d, 0) == HPU_MBOX_BAD_OPCODE);
    CHECK(mbox(d, 6, 0, 0, 0xffff) == HPU_MBOX_BAD_OPCODE);
    CHECK(mbox(d, 0x7f) == HPU_MBOX_BAD_OPCODE);
    CHECK(d.env.errors.empty());
    CHECK(d.error() == 0);
}

TEST_CASE("MBOX_CMD while BUSY is a guest error and is ignored",
          "[emu][fw][mbox]")
{
    Dev d;

    d.wr(HPU_REG_MBOX_CMD, 0x00010000 | HPU_MBOX_GET_INFO);
    d.wr(HPU_REG_MBOX_CMD, 0x00020000 | HPU_MBOX_GET_CLOCK);
    CHECK(logged(d, "still BUSY"));
    CHECK(d.rd(HPU_REG_MBOX_CMD) == (0x00010000 | HPU_MBOX_GET_INFO));
    d.advance(HPU_MBOX_ANSWER_NS);
    CHECK(d.rd(HPU_REG_MBOX_STATUS) == (0x00010000 | HPU_MBOX_DONE));
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 5);
    CHECK(d.error() == 0);
}

TEST_CASE("the mailbox answers only while RUNNING; hard reset clears it",
          "[emu][fw][mbox]")
{
    Dev d(no_boot());

    d.wr(HPU_REG_MBOX_CMD, 0x00070000 | HPU_MBOX_GET_INFO);
    d.advance(100 * MS);
    CHECK(d.rd(HPU_REG_MBOX_STATUS) == (0x00070000 | HPU_MBOX_BUSY));
    d.load_image(fw_image());
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    d.advance(HPU_FW_VERIFY_NS + HPU_CPU_BOOT_NS);
    REQUIRE(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_MBOX_STATUS) == (0x00070000 | HPU_MBOX_BUSY));
    d.advance(HPU_MBOX_ANSWER_NS);
    CHECK(d.rd(HPU_REG_MBOX_STATUS) == (0x00070000 | HPU_MBOX_DONE));
    CHECK(d.rd(HPU_REG_MBOX_RESP1) == HPU_FW_VERSION(1, 2, 3));

    // a limit set through the mailbox; then HALTED: requests stay BUSY
    CHECK(mbox(d, HPU_MBOX_SET_LIMIT, HPU_LIMIT_POWER_CAP, 100000) ==
          HPU_MBOX_OK);
    d.wr(HPU_REG_INJ_FW, HPU_INJ_FW_FATAL);
    d.wr(HPU_REG_MBOX_CMD, HPU_MBOX_GET_INFO);
    d.advance(10 * MS);
    CHECK(d.rd(HPU_REG_MBOX_STATUS) == HPU_MBOX_BUSY);
    hard_reset(d);
    CHECK(d.rd(HPU_REG_MBOX_STATUS) == 0);
    CHECK(d.rd(HPU_REG_MBOX_CMD) == 0);
    CHECK(d.rd(HPU_REG_MBOX_RESP1) == 0);
    d.advance(HPU_ROM_INIT_NS);
    REQUIRE(d.boot(fw_image()) == HPU_CPU_RUNNING);
    CHECK(mbox(d, HPU_MBOX_GET_LIMIT, HPU_LIMIT_POWER_CAP) == HPU_MBOX_OK);
    CHECK(d.rd(HPU_REG_MBOX_RESP0) == 350000);    // back to the default
}
