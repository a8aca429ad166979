// SPDX-License-Identifier: MIT
//
// Unit tests of spec version 4 (Documentation/hw/firmware-and-telemetry.md):
// image verification: one test case per refusal code, and the order of
// the checks.
//
// Copyright (c) 2026 The hpu authors

#include "hpu_fw_fixture.hpp"

using namespace hpu_test;
using namespace hpu_fw_test;

// The model parses images at the offsets of hpu_fw_image.h.
static_assert(offsetof(hpu_fw_header, fw_version) == 8);
static_assert(offsetof(hpu_fw_header, image_size) == 12);
static_assert(offsetof(hpu_fw_header, num_sections) == 16);
static_assert(offsetof(hpu_fw_header, flags) == 20);
static_assert(offsetof(hpu_fw_header, checksum) == HPU_FW_CHECKSUM_OFFSET);
static_assert(offsetof(hpu_fw_header, build) == 56);
static_assert(offsetof(hpu_fw_header, reserved) == 88);
static_assert(offsetof(hpu_fw_signature, signature) == 32);
static_assert(HPU_FW_BUILD_SIZE == HPU_FW_BUILD_LEN);

TEST_CASE("refused BAD_MAGIC (1)", "[emu][fw][verify]")
{
    Dev d(no_boot());
    Bytes img = fw_image();

    refused(d, img, HPU_FW_ERR_BAD_MAGIC, 127);         // short of a header
    refused(d, img, HPU_FW_ERR_BAD_MAGIC, 0);           // nothing provided
    Bytes bad = img;
    bad[0] ^= 0x20;
    refused(d, bad, HPU_FW_ERR_BAD_MAGIC);
    reference(bad, HPU_FW_ERR_BAD_MAGIC);
    reference(Bytes(img.begin(), img.begin() + 127), HPU_FW_ERR_BAD_MAGIC);
}

TEST_CASE("refused BAD_FORMAT (2)", "[emu][fw][verify]")
{
    Dev d(no_boot());
    const Bytes img = fw_image();
    const std::vector<std::function<void(Bytes &)>> edits = {
        [](Bytes &b) { b[4] = 2; },                     // format_version
        [](Bytes &b) { b[6] = 64; },                    // header_size
        [](Bytes &b) { put32(b, 20, 3); },              // flags bit 1
        [](Bytes &b) { b[127] = 1; },                   // reserved
        [](Bytes &b) { put32(b, 8, 0x01010203); },      // fw_version 31:24
    };

    for (const auto &edit : edits) {
        Bytes bad = img;
        edit(bad);
        refused(d, bad, HPU_FW_ERR_BAD_FORMAT);
        reference(bad, HPU_FW_ERR_BAD_FORMAT);
    }
}

TEST_CASE("refused TOO_LARGE (3)", "[emu][fw][verify]")
{
    Dev d(no_boot());
    const Bytes img = fw_image();

    Bytes bad = img;
    put32(bad, 12, HPU_FW_MAX_SIZE - HPU_FW_SIG_SIZE + 1);  // + trailer
    refused(d, bad, HPU_FW_ERR_TOO_LARGE);
    reference(bad, HPU_FW_ERR_TOO_LARGE);
    // FW_IMG_SIZE above 1 MiB (the ROM reads at most 1 MiB)
    refused(d, img, HPU_FW_ERR_TOO_LARGE, HPU_FW_MAX_SIZE + 1);
    CHECK(logged(d, "FW_IMG_SIZE 1048577"));
    // exactly 1 MiB provided is fine (bytes beyond the trailer ignored)
    REQUIRE(d.boot(img, HPU_FW_MAX_SIZE) == HPU_CPU_RUNNING);
}

TEST_CASE("refused TRUNCATED (4)", "[emu][fw][verify]")
{
    Dev d(no_boot());
    const Bytes img = fw_image();

    // the trailer of a signed image is missing its last byte
    refused(d, img, HPU_FW_ERR_TRUNCATED,
            static_cast<int64_t>(img.size()) - 1);
    reference(Bytes(img.begin(), img.end() - 1), HPU_FW_ERR_TRUNCATED);
    // image_size smaller than the header and its section table
    Bytes bad = img;
    put32(bad, 12, 128 + 16 * get32(img, 16) - 8);
    refused(d, bad, HPU_FW_ERR_TRUNCATED);
    reference(bad, HPU_FW_ERR_TRUNCATED);
    // an unsigned image needs no trailer: the next check (CORRUPT) decides
    Bytes uns = hpu::fw::pack(fw_source(), nullptr);
    uns[200] ^= 1;
    refused(d, uns, HPU_FW_ERR_CORRUPT);
}

TEST_CASE("refused CORRUPT (5)", "[emu][fw][verify]")
{
    Dev d(no_boot());
    Bytes img = fw_image();

    for (size_t off : { size_t(8), size_t(30), size_t(200),
                        size_t(get32(img, 12) - 1) }) {
        Bytes bad = img;
        bad[off] ^= 0x10;
        if (off == 8) {
            bad[off] ^= 0x11;   // a version that is still well formed
        }
        refused(d, bad, HPU_FW_ERR_CORRUPT);
        reference(bad, HPU_FW_ERR_CORRUPT);
    }
}

TEST_CASE("refused UNSIGNED (6)", "[emu][fw][verify]")
{
    Dev d(no_boot());
    Bytes uns = hpu::fw::pack(fw_source(), nullptr);

    refused(d, uns, HPU_FW_ERR_UNSIGNED);
    reference(uns, HPU_FW_ERR_UNSIGNED);
    CHECK(logged(d, "not signed"));
}

TEST_CASE("refused NO_KEY (7)", "[emu][fw][verify]")
{
    DevOpts o = no_boot();
    o.key = false;
    Dev d(o);

    refused(d, fw_image(), HPU_FW_ERR_NO_KEY);
    reference(fw_image(), HPU_FW_ERR_NO_KEY, false);
    CHECK(logged(d, "fw-pubkey"));
    // an unsigned image is still UNSIGNED: that check comes first
    refused(d, hpu::fw::pack(fw_source(), nullptr), HPU_FW_ERR_UNSIGNED);
}

TEST_CASE("refused BAD_SIGNATURE (8)", "[emu][fw][verify]")
{
    Dev d(no_boot());
    const Bytes img = fw_image();
    const size_t tr = get32(img, 12);
    hpu::fw::Seed other = test_seed();
    other[0] ^= 1;

    Bytes bad = img;
    put32(bad, tr, 0x31475349);                         // trailer magic
    refused(d, bad, HPU_FW_ERR_BAD_SIGNATURE);
    reference(bad, HPU_FW_ERR_BAD_SIGNATURE);
    CHECK(logged(d, "trailer magic"));
    bad = img;
    put32(bad, tr + 4, 2);                              // algorithm
    refused(d, bad, HPU_FW_ERR_BAD_SIGNATURE);
    reference(bad, HPU_FW_ERR_BAD_SIGNATURE);
    bad = img;
    bad[tr + 40] ^= 1;                                  // signature bits
    refused(d, bad, HPU_FW_ERR_BAD_SIGNATURE);
    reference(bad, HPU_FW_ERR_BAD_SIGNATURE);
    bad = hpu::fw::pack(fw_source(), &other);           // another key
    refused(d, bad, HPU_FW_ERR_BAD_SIGNATURE);
    reference(bad, HPU_FW_ERR_BAD_SIGNATURE);
    CHECK(logged(d, "does not verify"));
}

TEST_CASE("refused TOO_OLD (9), anti-rollback fuse FW_MIN_VERSION",
          "[emu][fw][verify]")
{
    DevOpts o = no_boot();
    o.min_version = HPU_FW_VERSION(1, 2, 4);
    Dev d(o);
    hpu::fw::Source src = fw_source();

    CHECK(d.rd(HPU_REG_FW_MIN_VERSION) == HPU_FW_VERSION(1, 2, 4));
    refused(d, fw_image(src), HPU_FW_ERR_TOO_OLD);
    reference(fw_image(src), HPU_FW_ERR_TOO_OLD, true, o.min_version);
    src.version = HPU_FW_VERSION(1, 2, 4);              // equal: accepted
    REQUIRE(d.boot(fw_image(src)) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_FW_VERSION) == HPU_FW_VERSION(1, 2, 4));
}

TEST_CASE("refused BAD_LAYOUT (10)", "[emu][fw][verify]")
{
    Dev d(no_boot());
    const Bytes img = fw_image();
    const size_t lim = sect(img, HPU_FW_SECT_LIMITS);
    const size_t clk = sect(img, HPU_FW_SECT_CLOCKS);
    const size_t th = sect(img, HPU_FW_SECT_THERMAL);
    const uint32_t nsec = get32(img, 16);
    const std::vector<std::pair<const char *, std::function<void(Bytes &)>>>
    edits = {
        { "num_sections 0", [](Bytes &b) { put32(b, 16, 0); } },
        { "num_sections 17", [](Bytes &b) {
            b.resize(b.size() + 17 * 16);
            put32(b, 16, 17);
        } },
        { "reserved field", [&](Bytes &b) { put32(b, lim + 12, 1); } },
        { "not 8-byte aligned", [&](Bytes &b) {
            put32(b, clk + 4, get32(b, clk + 4) + 4);
            put32(b, clk + 8, get32(b, clk + 8) - 8);
        } },
        { "not inside", [&](Bytes &b) { put32(b, th + 8, 0x10000); } },
        { "not inside", [&](Bytes &b) { put32(b, th + 4, 128); } },
        { "overlap", [&](Bytes &b) { put32(b, th + 4, get32(b, clk + 4)); } },
        { "appears twice", [&](Bytes &b) { put32(b, th, HPU_FW_SECT_CLOCKS); } },
        { "unknown type", [&](Bytes &b) { put32(b, th, 9); } },
        { "required section is missing", [&](Bytes &b) {
            // drop the last table entry (THERMAL, as the packer lays out)
            REQUIRE(th == 128 + 16 * (nsec - 1));
            put32(b, 16, nsec - 1);
        } },
        { "LIMITS size", [&](Bytes &b) { put32(b, lim + 8, 60); } },
        { "limit id 3 missing", [&](Bytes &b) { put32(b, lim + 8, 48); } },
        { "unknown limit id", [&](Bytes &b) { put32(b, get32(b, lim + 4), 4); } },
        { "appears twice", [&](Bytes &b) {
            put32(b, get32(b, lim + 4) + 16, HPU_LIMIT_TEMP_MAX);
        } },
        { "min <= default <= max", [&](Bytes &b) {
            put32(b, get32(b, lim + 4) + 4, 20000);    // default < min
        } },
        { "CLOCKS size", [&](Bytes &b) { put32(b, clk + 8, 0); } },
        { "not above the previous level", [&](Bytes &b) {
            put32(b, get32(b, clk + 4) + 8, 800);      // level 1 = level 0
        } },
        { "THERMAL size", [&](Bytes &b) { put32(b, th + 8, 32); } },
        { "THERMAL tau_ms is zero", [&](Bytes &b) {
            put32(b, get32(b, th + 4) + 8, 0);
        } },
        { "period_ms 1001", [&](Bytes &b) {
            put32(b, get32(b, th + 4) + 32, 1001);
        } },
    };

    for (const auto &[what, edit] : edits) {
        INFO(what);
        Bytes bad = resigned(img, edit);
        refused(d, bad, HPU_FW_ERR_BAD_LAYOUT);
        CHECK(logged(d, what));
        reference(bad, HPU_FW_ERR_NONE);    // the packer does not check this
    }
    // the limits of the firmware's 1 to 16 clock levels
    hpu::fw::Source src = fw_source();
    src.clocks.clear();
    for (uint32_t i = 0; i < 17; i++) {
        src.clocks.push_back({ 100 + 100 * i, 700 });
    }
    Bytes many = resigned(fw_image(fw_source()), [&](Bytes &b) {
        size_t c = get32(b, clk + 4), n = get32(b, clk + 8);
        Bytes tail(b.begin() + static_cast<long>(c + n), b.end());
        b.resize(c);
        for (const auto &l : src.clocks) {
            b.resize(b.size() + 8);
            put32(b, b.size() - 8, l.mhz);
            put32(b, b.size() - 4, l.mv);
        }
        // the packer puts CLOCKS before THERMAL: move what follows
        REQUIRE(get32(b, th + 4) >= c + n);
        put32(b, th + 4, get32(b, th + 4) + 17 * 8 - static_cast<uint32_t>(n));
        put32(b, clk + 8, 17 * 8);
        b.insert(b.end(), tail.begin(), tail.end());
    });
    refused(d, many, HPU_FW_ERR_BAD_LAYOUT);
    // INFO is optional
    Bytes no_info = resigned(img, [&](Bytes &b) {
        size_t info = sect(b, HPU_FW_SECT_INFO);
        put32(b, info + 8, 0);
    });
    REQUIRE(d.boot(no_info) == HPU_CPU_RUNNING);
}

TEST_CASE("empty sections share no byte but start inside the signed region",
          "[emu][fw][verify]")
{
    Dev d(no_boot());
    const Bytes img = fw_image();
    const size_t info = sect(img, HPU_FW_SECT_INFO);
    const size_t lim = sect(img, HPU_FW_SECT_LIMITS);

    // the packer puts INFO first: an empty INFO inside LIMITS is fine
    REQUIRE(info < lim);
    Bytes inside = resigned(img, [&](Bytes &b) {
        put32(b, info + 4, get32(b, lim + 4) + 16);
        put32(b, info + 8, 0);
    });
    REQUIRE(d.boot(inside) == HPU_CPU_RUNNING);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == 0);
    // at the last 8-byte boundary of the signed region: still inside
    hard_reset(d);
    d.advance(HPU_ROM_INIT_NS);
    Bytes last = resigned(img, [&](Bytes &b) {
        b.resize((b.size() + 7) & ~size_t(7));
        put32(b, info + 4, static_cast<uint32_t>(b.size() - 8));
        put32(b, info + 8, 0);
    });
    REQUIRE(d.boot(last) == HPU_CPU_RUNNING);
    // at image_size, it starts outside the region: refused
    hard_reset(d);
    d.advance(HPU_ROM_INIT_NS);
    Bytes end = resigned(img, [&](Bytes &b) {
        b.resize((b.size() + 7) & ~size_t(7));
        put32(b, info + 4, static_cast<uint32_t>(b.size()));
        put32(b, info + 8, 0);
    });
    refused(d, end, HPU_FW_ERR_BAD_LAYOUT);
    CHECK(logged(d, "section 0: [0x"));
    CHECK(logged(d, "not inside the signed region"));
}

TEST_CASE("refused DMA_ERROR (11)", "[emu][fw][verify]")
{
    Dev d(no_boot());

    d.load_image(fw_image());
    d.wr(HPU_REG_FW_IMG_ADDR_HI, 0x10);                 // not host memory
    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_HOST);
    d.advance(HPU_FW_VERIFY_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOT_FAILED);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == HPU_FW_ERR_DMA_ERROR);
    CHECK(logged(d, "refused DMA_ERROR"));
    CHECK(logged(d, "bus address 0x1010000000"));
}

TEST_CASE("refused NO_IMAGE (12): BOOT_FLASH with an empty flash",
          "[emu][fw][verify]")
{
    Dev d(no_boot());

    d.wr(HPU_REG_BOOT_CMD, HPU_BOOT_FLASH);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_VERIFYING);
    d.advance(HPU_FW_VERIFY_NS);
    CHECK(d.rd(HPU_REG_CPU_STATUS) == HPU_CPU_BOOT_FAILED);
    CHECK(d.rd(HPU_REG_BOOT_ERROR) == HPU_FW_ERR_NO_IMAGE);
    CHECK(logged(d, "NO_IMAGE"));
}

TEST_CASE("the checks run in the order of the spec", "[emu][fw][verify]")
{
    DevOpts o = no_boot();
    o.min_version = HPU_FW_VERSION(9, 0, 0);
    Dev d(o);
    Bytes img = fw_image();

    Bytes b = img;                      // wrong format and truncated
    b[4] = 2;
    refused(d, b, HPU_FW_ERR_BAD_FORMAT, 200);
    b = img;                            // corrupt and badly signed
    b[200] ^= 1;
    b[get32(img, 12) + 40] ^= 1;
    refused(d, b, HPU_FW_ERR_CORRUPT);
    b = img;                            // badly signed and too old
    b[get32(img, 12) + 40] ^= 1;
    refused(d, b, HPU_FW_ERR_BAD_SIGNATURE);
    b = resigned(img, [](Bytes &x) { put32(x, 16, 0); });  // old, bad layout
    refused(d, b, HPU_FW_ERR_TOO_OLD);
}
