// SPDX-License-Identifier: MIT
//
// Unit tests of spec version 4 (Documentation/hw/firmware-and-telemetry.md):
// the boot ROM (power-on, BOOT_HOST, its registers and properties), its
// worker thread (emu/hpu_core.h, hpum_core_fw_step()), what a hard reset or a
// power-on reset does to it, and INJ_FW.
//
// Copyright (c) 2026 The hpu authors

#include "hpu_fw_fixture.hpp"

using namespace hpu_test;
using namespace hpu_fw_test;

TEST_CASE("power-on: ROM_INIT 10 ms, then WAIT_IMAGE; no self-boot",
          "[emu][fw][boot]")
{
    Dev d(no_boot());       // checks ROM_INIT -> WAIT_IMAGE at 10 ms itself

    d.advance(1000 * MS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_WAIT_IMAGE);
    CHECK_FALSE(d.env.timer_armed);
    d.wr(HPU_REG_HB_REQ, 7);
    d.advance(2 * MS);
    CHECK(d.rd(HPU_REG_HB_ACK) == 0);
    CHECK(d.rd(HPU_REG_TEMP(0)) == 0);
    CHECK(d.rd(HPU_REG_FW_VERSION) == 0);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == 0);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == 0);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_IDLE);
    CHECK(d.rd(HPU_REG_SPEC_VERSION) == 10);
}

TEST_CASE("BOOT_HOST: VERIFYING 10 ms, BOOTING 20 ms, RUNNING, FW_BOOT",
          "[emu][fw][boot]")
{
    Dev d(no_boot());
    Bytes img = fw_image();

    d.wr(HPU_REG_IRQ_MASK, HPU_IRQ_FW_BOOT);
    d.load_image(img);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    CHECK(d.env.dma_reads == 1);                // one read, at the command
    d.unload_image();                           // the copy is private
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_VERIFYING);
    d.advance(HPU_FW_VERIFY_NS - 1);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_VERIFYING);
    CHECK(d.rd(HPU_REG_FW_VERSION) == 0);
    d.advance(1);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOTING);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == 0);
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(1, 2, 3));
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == 0);       // not before the boot ends
    CHECK(d.rd(HPU_REG_TEMP(0)) == 0);          // sensors: RUNNING only
    d.advance(HPU_CPU_BOOT_NS - 1);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOTING);
    CHECK(d.env.vectors.empty());
    d.advance(1);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_FW_BOOT);
    CHECK(d.env.vectors == std::vector<unsigned int>{ HPU_VEC_MISC });
    std::string build;
    for (unsigned int i = 0; i < 8; i++) {
        uint32_t w = d.rd(HPU_REG_FW_BUILD(i));
        for (int b = 0; b < 4; b++) {
            build += static_cast<char>(w >> (8 * b));
        }
    }
    CHECK(build == std::string("unit-test 1.2.3") + std::string(17, '\0'));
    CHECK(d.env.errors.empty());
    // firmware answers heartbeats now
    d.wr(HPU_REG_HB_REQ, 9);
    d.advance(HPU_HB_ACK_NS);
    CHECK(d.rd(HPU_REG_HB_ACK) == 9);
}

TEST_CASE("BOOT_FAILED accepts another BOOT_CMD", "[emu][fw][boot]")
{
    Dev d(no_boot());

    refused(d, hpu::fw::pack(fw_source(), nullptr), HPU_FW_ERR_UNSIGNED);
    REQUIRE(d.boot(fw_image()) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == 0);
}

TEST_CASE("BOOT_CMD outside WAIT_IMAGE and BOOT_FAILED is ignored, logged",
          "[emu][fw][boot]")
{
    DevOpts o;
    o.boot = false;
    Dev d(o);
    Bytes img = fw_image();

    // a bad value
    d.wr(HPU_REG_BOOT_CMD, 3);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_WAIT_IMAGE);
    CHECK(logged(d, "BOOT_CMD written with 3"));
    // VERIFYING and BOOTING
    d.load_image(img);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    d.env.errors.clear();
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    CHECK(logged(d, "while CPU_STATUS is VERIFYING"));
    CHECK(d.env.dma_reads == 1);
    d.advance(HPU_FW_VERIFY_NS);
    REQUIRE(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOTING);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
    CHECK(logged(d, "while CPU_STATUS is BOOTING"));
    d.advance(HPU_CPU_BOOT_NS);
    REQUIRE(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    CHECK(logged(d, "while CPU_STATUS is RUNNING"));
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    d.wr(HPU_REG_INJ_FW, HPU_INJ_FW_FATAL);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    CHECK(logged(d, "while CPU_STATUS is HALTED"));
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_HALTED);
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(1, 2, 3));
    CHECK(d.env.dma_reads == 1);
    CHECK(d.error() == 0);      // guest errors without ERROR bits
    // ROM_INIT and OFF (hard reset)
    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_OFF);
    d.advance(HPU_HARD_RESET_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
    d.env.errors.clear();
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    CHECK(logged(d, "while CPU_STATUS is ROM_INIT"));
    d.advance(HPU_ROM_INIT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_WAIT_IMAGE);
}

TEST_CASE("boot ROM registers follow their access types", "[emu][fw][regs]")
{
    Dev d;

    for (uint32_t reg : { HPU_REG_BOOT_ERROR, HPU_REG_FW_VERSION,
                          HPU_REG_FW_MIN_VERSION, HPU_REG_FLASH_VERSION,
                          HPU_REG_FLASH_STATUS, HPU_REG_FLASH_ERROR,
                          HPU_REG_FW_BUILD(0), HPU_REG_FW_BUILD(7),
                          HPU_REG_MBOX_STATUS, HPU_REG_MBOX_RESP0,
                          HPU_REG_MBOX_RESP1, HPU_REG_TEMP(0), HPU_REG_TEMP(2),
                          HPU_REG_POWER_MW, HPU_REG_ENERGY_LO,
                          HPU_REG_ENERGY_HI, HPU_REG_VOLT_CORE_MV,
                          HPU_REG_VOLT_HBM_MV, HPU_REG_CLK_CUR_MHZ,
                          HPU_REG_CLK_MAX_MHZ, HPU_REG_CLK_HBM_MHZ,
                          HPU_REG_THROTTLE, HPU_REG_ALARM, HPU_REG_SENSOR_SEQ,
                          HPU_REG_BUSY_NS_LO(0), HPU_REG_BUSY_NS_HI(7) }) {
        INFO("register 0x" << std::hex << reg);
        uint32_t before = d.rd(reg);
        d.wr(reg, 0x5a5a5a5a);
        CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
        CHECK(logged(d, "read-only"));
        d.wr(HPU_REG_ERROR, 0xffffffff);
        if (reg != HPU_REG_ENERGY_LO && reg != HPU_REG_BUSY_NS_LO(0)) {
            CHECK(d.rd(reg) == before);
        }
    }
    // RW registers read back; WO read 0 without an error
    for (uint32_t reg : { HPU_REG_FW_IMG_ADDR_LO, HPU_REG_FW_IMG_ADDR_HI,
                          HPU_REG_FW_IMG_SIZE, HPU_REG_MBOX_ARG0,
                          HPU_REG_MBOX_ARG1 }) {
        d.wr(reg, 0x12345678);
        CHECK(d.rd(reg) == 0x12345678u);
    }
    CHECK(d.rd(HPU_REG_BOOT_CMD) == 0);
    CHECK(d.rd(HPU_REG_FLASH_CMD) == 0);
    CHECK(d.error() == 0);
    // holes are unmapped
    for (uint32_t reg : { 0x4060u, 0x4118u, 0x420cu, 0x423cu, 0x4358u }) {
        INFO("register 0x" << std::hex << reg);
        CHECK(d.rd(reg) == 0);
        CHECK(d.error() == HPU_ERROR_BAD_ACCESS);
        d.wr(HPU_REG_ERROR, 0xffffffff);
    }
}

TEST_CASE("fw-pubkey property parsing", "[emu][fw][config]")
{
    HpuCoreConfig cfg{};
    char err[160];

    CHECK(hpum_core_parse_fw_key("", &cfg, err, sizeof(err)));
    CHECK_FALSE(cfg.fw_key_set);
    CHECK(hpum_core_parse_fw_key(nullptr, &cfg, err, sizeof(err)));
    CHECK_FALSE(hpum_core_parse_fw_key("abcd", &cfg, err, sizeof(err)));
    CHECK(std::string(err).find("fw-pubkey") != std::string::npos);
    std::string hex(64, 'A');
    hex[10] = 'x';
    CHECK_FALSE(hpum_core_parse_fw_key(hex.c_str(), &cfg, err, sizeof(err)));
    CHECK(std::string(err).find("position 10") != std::string::npos);
    auto key = test_pubkey();
    std::string good = hpu::fw::to_hex(key.data(), key.size());
    CHECK(hpum_core_parse_fw_key(good.c_str(), &cfg, err, sizeof(err)));
    CHECK(cfg.fw_key_set);
    CHECK(std::equal(key.begin(), key.end(), cfg.fw_key));
}

constexpr uint64_t FW_RETRY_NS = 100000;        // hpu_fw.c HPU_FW_RETRY_NS

TEST_CASE("BOOT_CMD only latches: the worker reads and verifies; a late "
          "result shows at the next retry", "[emu][fw][worker]")
{
    Dev d(no_boot());
    const Bytes img = fw_image();

    d.env.fw_manual = true;
    d.load_image(img);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    CHECK(d.env.fw_kicks == 1);
    CHECK(d.env.dma_reads == 0);                // nothing in the MMIO write
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_VERIFYING);
    CHECK(d.core.rom.job.kind == HPU_FW_JOB_BOOT_HOST);
    // the 10 ms are over but the worker has not run: VERIFYING, retry
    d.advance(HPU_FW_VERIFY_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_VERIFYING);
    REQUIRE(d.env.timer_armed);
    CHECK(d.env.timer_ns == FW_RETRY_NS);
    d.advance(5 * FW_RETRY_NS);                 // re-arms each time
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_VERIFYING);
    CHECK(d.env.timer_ns == FW_RETRY_NS);
    CHECK(d.fw_pump() == 1);
    CHECK(d.env.dma_reads == 1);
    CHECK(d.fw_pump() == 0);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_VERIFYING);  // not yet shown
    d.unload_image();                           // read once, kept private
    d.advance(FW_RETRY_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOTING);
    d.advance(HPU_CPU_BOOT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(1, 2, 3));
    CHECK(d.env.dma_reads == 1);
}

TEST_CASE("a result in time shows exactly when VERIFYING and BUSY end",
          "[emu][fw][worker]")
{
    Dev d;
    const Bytes img = fw_image();

    d.env.fw_manual = true;
    d.load_image(img);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    CHECK(d.env.fw_kicks == 1);
    CHECK(d.env.dma_reads == 0);
    d.advance(HPU_FLASH_WRITE_NS / 2);
    CHECK(d.fw_pump() == 1);
    d.advance(HPU_FLASH_WRITE_NS / 2 - 1);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_BUSY);
    d.advance(1);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    // a late flash result: BUSY past 50 ms, DONE at the next retry
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    d.advance(HPU_FLASH_WRITE_NS + 3 * FW_RETRY_NS);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_BUSY);
    CHECK(d.fw_pump() == 1);
    d.advance(FW_RETRY_NS);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(1, 2, 3));
}

TEST_CASE("a reset that overtakes the worker discards its result",
          "[emu][fw][worker][reset]")
{
    DevOpts o = no_boot();
    o.flash = fw_image();
    Dev d(o);
    const Bytes img = fw_image();

    d.env.fw_manual = true;
    SECTION("hard reset while the worker reads the image") {
        d.load_image(img);
        d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
        d.env.on_dma_read = [&](uint64_t) {
            d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
        };
        CHECK(d.fw_pump() == 1);
        d.env.on_dma_read = nullptr;
        CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_OFF);
        CHECK_FALSE(d.core.rom.verified);
    }
    SECTION("hard reset before the worker takes a BOOT_FLASH job") {
        d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
        CHECK(d.core.flash.img->refs == 2);     // the job's reference
        d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
        CHECK(d.core.flash.img->refs == 1);     // dropped with the job
        CHECK(d.fw_pump() == 0);
    }
    SECTION("power-on reset after the worker ran, before the result shows") {
        d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
        CHECK(d.fw_pump() == 1);
        CHECK(d.core.rom.verified);
        hpum_core_reset(&d.core);
        CHECK_FALSE(d.core.rom.verified);
        CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
        d.advance(HPU_ROM_INIT_NS);
    }
    // the stale result never shows: the ROM starts again and waits
    d.advance(HPU_HARD_RESET_NS + HPU_ROM_INIT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_WAIT_IMAGE);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == 0);
    CHECK(d.rd(HPU_REG_FW_VERSION) == 0);
    CHECK(d.core.flash.img->refs == 1);
    // and the next boot works
    d.env.fw_manual = false;
    REQUIRE(d.boot(img) == HPU_CPU_RUNNING);
}

TEST_CASE("a hard reset overtaking a flash write's worker keeps the flash",
          "[emu][fw][worker][flash]")
{
    Dev d;
    hpu::fw::Source src = fw_source();
    src.version = HPU_FW_VERSION(4, 0, 0);

    d.env.fw_manual = true;
    d.load_image(fw_image(src));
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    d.env.on_dma_read = [&](uint64_t) {
        d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    };
    CHECK(d.fw_pump() == 1);
    d.env.on_dma_read = nullptr;
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_FAILED);
    CHECK(d.rd(HPU_REG_FLASH_ERROR) == HPU_FW_ERR_DMA_ERROR);
    CHECK(d.core.flash.pending == nullptr);     // the result was dropped
    d.advance(HPU_FLASH_WRITE_NS + HPU_HARD_RESET_NS);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_FAILED);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == 0);
}

TEST_CASE("BOOT_CMD 2 verifies the flash image of the command, even if a "
          "flash write replaces it before the worker reads it",
          "[emu][fw][worker][flash]")
{
    DevOpts o = no_boot();
    o.flash = fw_image();                       // 1.2.3
    Dev d(o);
    hpu::fw::Source src = fw_source();
    src.version = HPU_FW_VERSION(3, 0, 0);

    d.env.fw_manual = true;
    d.load_image(fw_image(src));
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    CHECK(d.fw_pump() == 1);
    d.advance(HPU_FLASH_WRITE_NS - HPU_FW_VERIFY_NS / 2);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);     // latched: 1.2.3
    d.advance(HPU_FW_VERIFY_NS / 2);
    REQUIRE(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(3, 0, 0));
    CHECK(d.fw_pump() == 1);                    // reads the old image
    d.advance(HPU_FW_VERIFY_NS / 2);
    REQUIRE(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOTING);
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(1, 2, 3));
    CHECK(d.core.flash.img->refs == 1);         // the old one is freed
}

TEST_CASE("hard reset: the boot ROM starts again and waits for the driver",
          "[emu][fw][hard-reset]")
{
    Dev d(sensor_opts());

    d.advance(500 * MS);
    CHECK(d.rd(HPU_REG_SENSOR_SEQ) == 50);
    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_OFF);
    CHECK(d.rd(HPU_REG_FW_VERSION) == 0);
    CHECK(d.rd(HPU_REG_TEMP(0)) == 0);
    d.advance(HPU_HARD_RESET_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
    CHECK(d.rd(HPU_REG_FW_IMG_SIZE) == 0);
    CHECK(d.rd(HPU_REG_FW_BUILD(0)) == 0);
    d.advance(HPU_ROM_INIT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_WAIT_IMAGE);
    d.advance(1000 * MS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_WAIT_IMAGE);
    // a refused image, then a hard reset clears BOOT_ERROR
    refused(d, hpu::fw::pack(fw_source(), nullptr), HPU_FW_ERR_UNSIGNED);
    hard_reset(d);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == 0);
    d.advance(HPU_ROM_INIT_NS);
    REQUIRE(d.boot(fw_image(sensor_opts().source)) == HPU_CPU_RUNNING);
    // sensors restart from ambient, SENSOR_SEQ and energy from 0
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_DIE)) == 25000);
    CHECK(d.rd(HPU_REG_SENSOR_SEQ) == 0);
    CHECK(d.rd(HPU_REG_ENERGY_LO) == 0);
    // a hard reset during VERIFYING drops the verification
    hard_reset(d);
    d.advance(HPU_ROM_INIT_NS);
    d.load_image(fw_image());
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    hard_reset(d);
    d.advance(HPU_FW_VERIFY_NS + HPU_CPU_BOOT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_WAIT_IMAGE);
    CHECK(d.rd(HPU_REG_FW_VERSION) == 0);
}

TEST_CASE("power-on reset keeps the flash and restarts the boot ROM",
          "[emu][fw][reset]")
{
    Dev d;

    d.load_image(fw_image());
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    d.advance(HPU_FLASH_WRITE_NS);
    REQUIRE(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);   // abandoned by the reset
    hpum_core_reset(&d.core);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_IDLE);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(1, 2, 3));
    d.advance(HPU_FLASH_WRITE_NS);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_IDLE);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_WAIT_IMAGE);
}

TEST_CASE("INJ_FW 2 while BOOTING halts the CPU before it runs",
          "[emu][fw][boot][inj]")
{
    Dev d(no_boot());

    d.load_image(fw_image());
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    d.advance(HPU_FW_VERIFY_NS);
    REQUIRE(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOTING);
    d.wr(HPU_REG_INJ_FW, HPU_INJ_FW_FATAL);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_HALTED);
    d.advance(HPU_CPU_BOOT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_HALTED);
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(1, 2, 3));
    CHECK(d.rd(HPU_REG_FW_ERROR) == HPU_FW_FATAL_INJECTED);
    CHECK((d.rd(HPU_REG_IRQ_STATUS) & HPU_IRQ_FW_BOOT) == 0);
    CHECK(d.rd(HPU_REG_TEMP(0)) == 0);
    // INJ_FW 2 while the ROM waits for an image is ignored
    hard_reset(d);
    d.advance(HPU_ROM_INIT_NS);
    d.env.errors.clear();
    d.wr(HPU_REG_INJ_FW, HPU_INJ_FW_FATAL);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_WAIT_IMAGE);
    CHECK(logged(d, "not running"));
}
