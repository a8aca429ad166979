// SPDX-License-Identifier: MIT
//
// Unit tests of spec version 4 (Documentation/hw/firmware-and-telemetry.md):
// the flash (FLASH_CMD, stored images, fw-flash) and INJ_FLASH.
//
// Copyright (c) 2026 The hpu authors

#include "hpu_fw_fixture.hpp"

using namespace hpu_test;
using namespace hpu_fw_test;

TEST_CASE("FLASH_CMD WRITE: BUSY 50 ms, DONE, stored image boots",
          "[emu][fw][flash]")
{
    Dev d;
    hpu::fw::Source src = fw_source();
    src.version = HPU_FW_VERSION(2, 0, 1);
    Bytes img = fw_image(src);

    d.wr(HPU_REG_IRQ_MASK, HPU_IRQ_FLASH_DONE);
    d.load_image(img, static_cast<int64_t>(img.size()) + 1000);  // + junk
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    CHECK(d.env.dma_reads == 1);
    d.unload_image();
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_BUSY);
    d.advance(HPU_FLASH_WRITE_NS - 1);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_BUSY);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == 0);
    d.advance(1);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    CHECK(d.rd(HPU_REG_FLASH_ERROR) == 0);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(2, 0, 1));
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_FLASH_DONE);
    CHECK(d.env.vectors == std::vector<unsigned int>{ HPU_VEC_MISC });
    CHECK(d.core.flash.img->len == img.size());      // trailer in, junk out
    // the running firmware does not change until the next boot
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(1, 2, 3));
    hard_reset(d);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(2, 0, 1));
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    d.advance(HPU_ROM_INIT_NS);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
    d.advance(HPU_FW_VERIFY_NS + HPU_CPU_BOOT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(2, 0, 1));
}

TEST_CASE("a refused flash write keeps the old image", "[emu][fw][flash]")
{
    Dev d;
    Bytes img = fw_image();

    d.load_image(img);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    d.advance(HPU_FLASH_WRITE_NS);
    REQUIRE(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    d.wr(HPU_REG_IRQ_STATUS, 0xffffffff);
    Bytes bad = img;
    bad[300] ^= 4;
    d.load_image(bad);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    d.advance(HPU_FLASH_WRITE_NS);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_FAILED);
    CHECK(d.rd(HPU_REG_FLASH_ERROR) == HPU_FW_ERR_CORRUPT);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_FLASH_DONE);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(1, 2, 3));
    CHECK(logged(d, "FLASH_CMD 1 (WRITE): image refused CORRUPT"));
    // a later good write clears FLASH_ERROR
    d.load_image(img);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    CHECK(d.rd(HPU_REG_FLASH_ERROR) == 0);
    d.advance(HPU_FLASH_WRITE_NS);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
}

TEST_CASE("FLASH_CMD while BUSY or with a bad value is a guest error",
          "[emu][fw][flash]")
{
    Dev d(no_boot());           // accepted whatever the CPU state but OFF

    d.load_image(fw_image());
    d.wr(HPU_REG_FLASH_CMD, 2);
    CHECK(logged(d, "FLASH_CMD written with 2"));
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_IDLE);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    CHECK(logged(d, "flash write is in progress"));
    CHECK(d.env.dma_reads == 1);
    d.advance(HPU_FLASH_WRITE_NS);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    CHECK(d.error() == 0);
}

TEST_CASE("a hard reset during a flash write abandons it (FAILED, 11)",
          "[emu][fw][flash]")
{
    DevOpts o;
    o.flash = fw_image();               // power-on content: version 1.2.3
    Dev d(o);
    hpu::fw::Source src = fw_source();
    src.version = HPU_FW_VERSION(3, 0, 0);

    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(1, 2, 3));
    d.load_image(fw_image(src));
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    d.advance(HPU_FLASH_WRITE_NS / 2);
    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_FAILED);
    CHECK(d.rd(HPU_REG_FLASH_ERROR) == HPU_FW_ERR_DMA_ERROR);
    d.advance(HPU_FLASH_WRITE_NS);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_FAILED);
    CHECK(d.rd(HPU_REG_FLASH_ERROR) == HPU_FW_ERR_DMA_ERROR);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(1, 2, 3));
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_RESET_DONE);
    // FLASH_CMD is refused while the CPU is OFF (the write is dropped)
    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_FAILED);
    d.advance(HPU_HARD_RESET_NS);
    // the old image still boots
    d.advance(HPU_ROM_INIT_NS);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
    d.advance(HPU_FW_VERIFY_NS + HPU_CPU_BOOT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(1, 2, 3));
}

TEST_CASE("fw-flash content that does not verify is refused at BOOT_FLASH",
          "[emu][fw][flash]")
{
    DevOpts o = no_boot();
    o.flash = fw_image();
    o.flash[200] ^= 1;
    Dev d(o);

    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(1, 2, 3));
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
    d.advance(HPU_FW_VERIFY_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOT_FAILED);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == HPU_FW_ERR_CORRUPT);
    CHECK(logged(d, "BOOT_CMD 2 (BOOT_FLASH): image refused CORRUPT"));
}

TEST_CASE("fw-flash shorter than a header: FLASH_VERSION from fw_version",
          "[emu][fw][flash]")
{
    const Bytes img = fw_image();
    const struct {
        size_t len;
        uint32_t version;
    } cases[] = {
        { 127, HPU_FW_VERSION(1, 2, 3) },
        { 12, HPU_FW_VERSION(1, 2, 3) },        // magic .. fw_version
        { 11, 0 },                              // fw_version cut short
        { 3, 0 },                               // not even the magic
    };

    for (const auto &t : cases) {
        INFO(t.len << " bytes");
        DevOpts o = no_boot();
        o.flash.assign(img.begin(), img.begin() + static_cast<long>(t.len));
        Dev d(o);

        CHECK(d.rd(HPU_REG_FLASH_VERSION) == t.version);
        // booting it is refused: fewer than 128 bytes
        d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
        d.advance(HPU_FW_VERIFY_NS);
        CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOT_FAILED);
        CHECK(d.rd(HPU_REG_BOOT_ERROR) == HPU_FW_ERR_BAD_MAGIC);
    }
    DevOpts o = no_boot();
    o.flash.assign(img.begin(), img.begin() + 12);
    o.flash[0] ^= 1;                            // no magic
    Dev d(o);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == 0);
}

TEST_CASE("INJ_FLASH 1 corrupts the stored image: BOOT_FLASH fails CORRUPT",
          "[emu][fw][flash][inj]")
{
    Dev d;
    hpu::fw::Source src = fw_source();
    src.version = HPU_FW_VERSION(2, 0, 1);
    Bytes img = fw_image(src);

    d.load_image(img);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    d.advance(HPU_FLASH_WRITE_NS);
    REQUIRE(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    const HpuFlashImg *before = d.core.flash.img;
    d.env.errors.clear();
    d.wr(HPU_REG_INJ_FLASH, HPU_INJ_FLASH_CORRUPT);
    CHECK(d.env.errors.empty());
    CHECK(d.error() == 0);
    CHECK(d.rd(HPU_REG_INJ_FLASH) == 0);        // write-only
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(2, 0, 1));
    CHECK(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    // a new image replaced the shared one; one bit after the table differs
    REQUIRE(d.core.flash.img != nullptr);
    CHECK(d.core.flash.img != before);
    REQUIRE(d.core.flash.img->len == img.size());
    size_t off = 128 + 16 * get32(img, 16), diffs = 0;
    for (size_t i = 0; i < img.size(); i++) {
        diffs += d.core.flash.img->data[i] != img[i];
    }
    CHECK(diffs == 1);
    CHECK((d.core.flash.img->data[off] ^ img[off]) == 1);
    // resets do not undo it (the flash is non-volatile)
    hard_reset(d);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(2, 0, 1));
    d.advance(HPU_ROM_INIT_NS);
    d.wr(HPU_REG_IRQ_STATUS, 0xffffffff);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
    d.advance(HPU_FW_VERIFY_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOT_FAILED);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == HPU_FW_ERR_CORRUPT);
    CHECK(d.rd(HPU_REG_IRQ_STATUS) == HPU_IRQ_FW_BOOT);
    CHECK(logged(d, "BOOT_CMD 2 (BOOT_FLASH): image refused CORRUPT"));
    // the host image still boots
    d.load_image(fw_image());
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    d.advance(HPU_FW_VERIFY_NS + HPU_CPU_BOOT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(1, 2, 3));
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == HPU_FW_VERSION(2, 0, 1));
    // a new flash write undoes it
    d.load_image(img);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    d.advance(HPU_FLASH_WRITE_NS);
    REQUIRE(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    hard_reset(d);
    d.advance(HPU_ROM_INIT_NS);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
    d.advance(HPU_FW_VERIFY_NS + HPU_CPU_BOOT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(2, 0, 1));
}

TEST_CASE("INJ_FLASH with an empty flash or another value does nothing",
          "[emu][fw][flash][inj]")
{
    Dev d;

    REQUIRE(d.core.flash.img == nullptr);
    d.env.errors.clear();
    d.wr(HPU_REG_INJ_FLASH, HPU_INJ_FLASH_CORRUPT);
    CHECK(logged(d, "INJ_FLASH: the flash is empty"));
    CHECK(d.error() == 0);
    CHECK(d.core.flash.img == nullptr);
    CHECK(d.rd(HPU_REG_FLASH_VERSION) == 0);

    Bytes img = fw_image();
    d.load_image(img);
    d.wr(HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);
    d.advance(HPU_FLASH_WRITE_NS);
    REQUIRE(d.rd(HPU_REG_FLASH_STATUS) == HPU_FLASH_DONE);
    const HpuFlashImg *before = d.core.flash.img;
    d.env.errors.clear();
    d.wr(HPU_REG_INJ_FLASH, 2);
    CHECK(logged(d, "INJ_FLASH written with 2"));
    CHECK(d.error() == 0);
    CHECK(d.core.flash.img == before);
    CHECK(memcmp(d.core.flash.img->data, img.data(), img.size()) == 0);
    hard_reset(d);
    d.advance(HPU_ROM_INIT_NS);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
    d.advance(HPU_FW_VERIFY_NS + HPU_CPU_BOOT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
}

TEST_CASE("INJ_FLASH during a BOOT_CMD 2 leaves the image being verified",
          "[emu][fw][flash][inj]")
{
    DevOpts o = no_boot();
    o.flash = fw_image();
    Dev d(o);

    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
    d.wr(HPU_REG_INJ_FLASH, HPU_INJ_FLASH_CORRUPT);
    d.advance(HPU_FW_VERIFY_NS + HPU_CPU_BOOT_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_RUNNING);
    hard_reset(d);
    d.advance(HPU_ROM_INIT_NS);
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
    d.advance(HPU_FW_VERIFY_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOT_FAILED);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == HPU_FW_ERR_CORRUPT);
}
