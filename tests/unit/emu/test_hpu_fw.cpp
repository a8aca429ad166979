// SPDX-License-Identifier: MIT
//
// Unit tests of spec version 4 (Documentation/hw/firmware-and-telemetry.md):
// the boot ROM and its verification (one test case per refusal code), the
// flash, the mailbox, the sensors and their thermal and power model
// (throttling, alarms, THERMAL and POWER events), the busy counters, and
// what a hard reset does to all of it.  Images are built and signed with
// the firmware packer's library (tools/hpu-fwpack/fwimage.h); its verify()
// is the reference the model's verdicts are compared with.
//
// Copyright (c) 2026 The hpu authors

#include <catch2/catch_test_macros.hpp>

#include <cstddef>
#include <cstring>
#include <functional>

#include "hpu_rig.hpp"

using namespace hpu_test;
using Bytes = std::vector<uint8_t>;

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

namespace {

constexpr uint64_t MS = 1000000;

uint32_t get32(const Bytes &b, size_t off)
{
    return b[off] | b[off + 1] << 8 | b[off + 2] << 16 |
           static_cast<uint32_t>(b[off + 3]) << 24;
}

void put32(Bytes &b, size_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        b[off + i] = static_cast<uint8_t>(v >> (8 * i));
    }
}

// Strip the trailer, edit the signed region, fix its checksum, sign again.
Bytes resigned(Bytes img, const std::function<void(Bytes &)> &edit,
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
size_t sect(const Bytes &img, uint32_t type)
{
    for (uint32_t i = 0; i < get32(img, 16); i++) {
        if (get32(img, 128 + 16 * i) == type) {
            return 128 + 16 * i;
        }
    }
    FAIL("no section of type " << type);
    return 0;
}

bool logged(Dev &d, const std::string &what)
{
    for (const auto &e : d.env.errors) {
        if (e.find(what) != std::string::npos) {
            return true;
        }
    }
    return false;
}

DevOpts no_boot()
{
    DevOpts o;
    o.boot = false;
    return o;
}

const char *const err_names[] = {
    "NONE", "BAD_MAGIC", "BAD_FORMAT", "TOO_LARGE", "TRUNCATED", "CORRUPT",
    "UNSIGNED", "NO_KEY", "BAD_SIGNATURE", "TOO_OLD", "BAD_LAYOUT",
    "DMA_ERROR", "NO_IMAGE",
};

// Boot @img (FW_IMG_SIZE @size) and expect refusal @code, logged by name.
void refused(Dev &d, const Bytes &img, uint32_t code, int64_t size = -1)
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
void reference(const Bytes &img, uint32_t code, bool key = true,
               uint32_t min = 0)
{
    hpu::fw::PublicKey k = test_pubkey();
    CHECK(hpu::fw::verify(img, key ? &k : nullptr, min) == code);
}

uint32_t mbox(Dev &d, uint32_t op, uint32_t a0 = 0, uint32_t a1 = 0,
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

void hard_reset(Dev &d)
{
    d.wr(HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
    d.advance(HPU_HARD_RESET_NS);
    REQUIRE(d.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}

std::vector<Eqe> events(Rig &r, uint16_t id)
{
    std::vector<Eqe> v;
    for (uint32_t i = 0; i < r.rd(HPU_REG_EQ_PI); i++) {
        if (r.eqe(i).id == id) {
            v.push_back(r.eqe(i));
        }
    }
    return v;
}

uint64_t busy_ns(Dev &d, unsigned int e)
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

DevOpts sensor_opts(uint32_t power_cap = 350000, uint32_t temp_max = 85000)
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

} // namespace

// Boot ROM

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
    CHECK(d.rd(HPU_REG_SPEC_VERSION) == 5);
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
    for (uint32_t reg : { 0x4060u, 0x4118u, 0x420cu, 0x423cu, 0x4340u }) {
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

// Flash

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

// The boot ROM's worker (emu/hpu_core.h, hpum_core_fw_step())

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

// Mailbox

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

// Sensors, thermal model, busy counters

TEST_CASE("sensors read 0 unless RUNNING and start at ambient",
          "[emu][fw][sensor]")
{
    Dev d(sensor_opts());

    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_DIE)) == 25000);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_HBM)) == 25000);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_BOARD)) == 25000);
    CHECK(d.rd(HPU_REG_POWER_MW) == 60000);
    CHECK(d.rd(HPU_REG_CLK_CUR_MHZ) == 1600);
    CHECK(d.rd(HPU_REG_CLK_MAX_MHZ) == 1600);
    CHECK(d.rd(HPU_REG_CLK_HBM_MHZ) == 1600);
    CHECK(d.rd(HPU_REG_VOLT_CORE_MV) == 950);
    CHECK(d.rd(HPU_REG_VOLT_HBM_MV) == 1200);
    CHECK(d.rd(HPU_REG_SENSOR_SEQ) == 0);
    CHECK(d.rd(HPU_REG_THROTTLE) == 0);
    CHECK(d.rd(HPU_REG_ALARM) == 0);
    d.advance(10 * MS - 1);
    CHECK(d.rd(HPU_REG_SENSOR_SEQ) == 0);
    d.advance(1);
    CHECK(d.rd(HPU_REG_SENSOR_SEQ) == 1);
    // idle: 60 W, 0.6 J per 10 ms period; die toward 25 + 60 * 0.15 C
    d.advance(990 * MS);
    CHECK(d.rd(HPU_REG_SENSOR_SEQ) == 100);
    CHECK(d.rd(HPU_REG_ENERGY_LO) == 100 * 600000u);
    CHECK(d.rd(HPU_REG_ENERGY_HI) == 0);
    uint32_t die = d.rd(HPU_REG_TEMP(HPU_TEMP_DIE));
    // after 1 s with tau 2 s: 1 - (1 - 1/200)^100 of the 9 C gap
    CHECK(die > 25000 + 3400);
    CHECK(die < 25000 + 3700);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_HBM)) ==
          static_cast<uint32_t>(25000 + 0.6 * (die - 25000) + 0.5) / 1);
    d.advance(60000 * MS);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_DIE)) == 34000);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_HBM)) == 30400);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_BOARD)) == 27700);
    // HALTED: everything reads 0, no more periods
    d.wr(HPU_REG_INJ_FW, HPU_INJ_FW_FATAL);
    for (uint32_t reg = HPU_REG_TEMP(0); reg <= HPU_REG_SENSOR_SEQ; reg += 4) {
        if (reg != 0x420c) {
            CHECK(d.rd(reg) == 0);
        }
    }
}

TEST_CASE("ENERGY_LO latches ENERGY_HI", "[emu][fw][sensor]")
{
    Dev d(sensor_opts());

    d.core.sens.energy_uj = 0x00000002fffffff0ULL;
    CHECK(d.rd(HPU_REG_ENERGY_HI) == 0);        // nothing latched yet
    CHECK(d.rd(HPU_REG_ENERGY_LO) == 0xfffffff0u);
    d.advance(10 * MS);                         // + 600000 uJ: carries
    CHECK(d.rd(HPU_REG_ENERGY_HI) == 2);        // the latched half
    CHECK(d.rd(HPU_REG_ENERGY_LO) == 0xfffffff0u + 600000u);
    CHECK(d.rd(HPU_REG_ENERGY_HI) == 3);
}

TEST_CASE("BUSY_NS counts packet execution in device time, WAIT excluded",
          "[emu][fw][busy]")
{
    Rig r;
    const uint64_t src = r.halloc(2 * MiB, PG);

    CHECK(busy_ns(r, 2) == 0);
    r.env.on_dma_read = [&](uint64_t a) {
        if (a >= src && a < src + 2 * MiB) {
            r.env.now += 3000;
            // mid-packet reads include the packet in execution
            CHECK(r.core.busy[2].running);
        }
    };
    CHECK(r.run_cb(Cb().lin_dma(host_addr(src), 0, 2 * MiB), 0, 2).status ==
          HPU_CQ_OK);
    r.env.on_dma_read = nullptr;
    CHECK(busy_ns(r, 2) == 6000);
    CHECK(busy_ns(r, 1) == 0);
    // a WAIT that blocks for 1 s does not count
    r.setup_stream(2, 1);
    r.submit(2, 1, Cb().wait(3, 1, HPU_WAIT_GE).nop());
    r.run();
    CHECK(r.status(2, 1) == HPU_QS_STATUS_WAITING);
    r.advance(1000 * MS);
    r.wr(HPU_REG_SOB(3), 1);
    r.run();
    CHECK(r.cq_pi(2, 1) == 1);
    CHECK(busy_ns(r, 2) == 6000);
    // LO latches HI; counts survive soft and hard reset, whatever the CPU
    r.core.busy[5].ns = 0x0000000100000005ULL;
    CHECK(r.rd(HPU_REG_BUSY_NS_HI(5)) == 0);
    CHECK(r.rd(HPU_REG_BUSY_NS_LO(5)) == 5);
    r.core.busy[5].ns = 0x0000000200000005ULL;
    CHECK(r.rd(HPU_REG_BUSY_NS_HI(5)) == 1);
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    r.advance(HPU_SOFT_RESET_NS);
    hard_reset(r);
    CHECK(r.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
    CHECK(busy_ns(r, 2) == 6000);
    CHECK(busy_ns(r, 5) == 0x0000000200000005ULL);
    // counting goes on while the CPU waits for an image
    r.q[2][0] = {};
    r.env.on_dma_read = [&](uint64_t a) {
        if (a >= src && a < src + 2 * MiB) {
            r.env.now += 500;
        }
    };
    CHECK(r.run_cb(Cb().lin_dma(host_addr(src), 0, MiB), 0, 2).status ==
          HPU_CQ_OK);
    r.env.on_dma_read = nullptr;
    CHECK(busy_ns(r, 2) == 6500);
}

TEST_CASE("power and die temperature rise under load and fall back",
          "[emu][fw][sensor]")
{
    Rig r(sensor_opts());
    Load load(r);

    r.advance(30000 * MS);                      // settle at idle
    uint32_t idle_die = r.rd(HPU_REG_TEMP(HPU_TEMP_DIE));
    CHECK(idle_die == 34000);
    CHECK(r.rd(HPU_REG_POWER_MW) == 60000);
    uint32_t e0 = r.rd(HPU_REG_ENERGY_LO);

    load.run(0, 3000 * MS);                     // 3 s of DMA on engine 0
    // one engine fully busy at the top clock: 60 + 30 W
    CHECK(r.rd(HPU_REG_POWER_MW) == 90000);
    uint32_t hot = r.rd(HPU_REG_TEMP(HPU_TEMP_DIE));
    // toward 25 + 90 * 0.15 = 38.5 C with tau 2 s: about 78 % of the way
    CHECK(hot > idle_die + 3000);
    CHECK(hot < 38500);
    CHECK(r.rd(HPU_REG_TEMP(HPU_TEMP_HBM)) > 30400);
    CHECK(r.rd(HPU_REG_TEMP(HPU_TEMP_BOARD)) > 27700);
    uint32_t e1 = r.rd(HPU_REG_ENERGY_LO);
    CHECK(e1 - e0 > 3 * 89000u * 1000u);        // > 3 s at 89 W
    CHECK(busy_ns(r, 0) >= 3000 * MS);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1600);
    CHECK(r.rd(HPU_REG_THROTTLE) == 0);

    // two engines, each busy half of every period: the sum is one engine
    for (int i = 0; i < 10; i++) {
        load.run(1, 5 * MS, 5 * MS);
        load.run(2, 5 * MS, 5 * MS);
    }
    CHECK(r.rd(HPU_REG_POWER_MW) == 90000);

    r.advance(20 * MS);
    CHECK(r.rd(HPU_REG_POWER_MW) == 60000);
    r.advance(10000 * MS);
    uint32_t cool = r.rd(HPU_REG_TEMP(HPU_TEMP_DIE));
    CHECK(cool < hot);
    CHECK(cool <= idle_die + 100);
    CHECK(r.rd(HPU_REG_ALARM) == 0);
}

TEST_CASE("POWER_CAP throttles one level per period; POWER event edges",
          "[emu][fw][sensor][event]")
{
    Rig r(sensor_opts(80000));
    Load load(r);

    r.setup_eq(64);
    r.advance(100 * MS);
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    load.run(0, 15 * MS, 5 * MS);               // P 90 W > 80 W: drop once
    // level 3 (1400 MHz) at u = 1: 60 * 0.9375 + 30 * 0.875 = 82.5 W
    // level 2 (1200 MHz): 52.5 + 22.5 = 75 W: below the cap, holds/rises
    CHECK(r.rd(HPU_REG_ALARM) == HPU_ALARM_POWER_CAP);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1400);
    CHECK(r.rd(HPU_REG_VOLT_CORE_MV) == 900);
    CHECK(r.rd(HPU_REG_THROTTLE) == HPU_THROTTLE_POWER);
    auto ev = events(r, HPU_EVENT_POWER);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].info == 90000);
    CHECK(ev[0].severity == HPU_EVENT_SEV_ERROR);
    CHECK(ev[0].engine == HPU_EVENT_ENGINE_NONE);
    load.run(0, 10 * MS);
    CHECK(r.rd(HPU_REG_POWER_MW) == 82500);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1200);
    load.run(0, 400 * MS);
    // the clock dithers between 1200 and 1400 MHz around the cap; the
    // alarm bit follows it, but POWER is not posted again while throttled
    uint32_t mhz = r.rd(HPU_REG_CLK_CUR_MHZ);
    CHECK((mhz == 1200 || mhz == 1400));
    CHECK(r.rd(HPU_REG_THROTTLE) == HPU_THROTTLE_POWER);
    CHECK(events(r, HPU_EVENT_POWER).size() == 1);
    // idle: back to the top, one level per period, THROTTLE clears
    r.advance(10 * MS);
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    r.advance(30 * MS);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1600);
    CHECK(r.rd(HPU_REG_THROTTLE) == 0);
    // re-armed: the next excursion posts again
    r.advance(10 * MS);
    load.run(0, 20 * MS);
    CHECK(events(r, HPU_EVENT_POWER).size() == 2);
    // a cap set through the mailbox takes effect at once, even idle
    r.advance(100 * MS);
    CHECK(mbox(r, HPU_MBOX_SET_LIMIT, HPU_LIMIT_POWER_CAP, 50000) ==
          HPU_MBOX_OK);
    r.advance(100 * MS);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) < 1600);
    CHECK(r.rd(HPU_REG_THROTTLE) == HPU_THROTTLE_POWER);
}

TEST_CASE("TEMP_MAX throttles with hysteresis; THERMAL event edges, re-arm",
          "[emu][fw][sensor][event]")
{
    // TEMP_MAX 36 C: reached under load (toward 38.5 C), not idle (34 C)
    Rig r(sensor_opts(450000, 36000));
    Load load(r);

    r.setup_eq(64);
    r.advance(30000 * MS);
    CHECK(r.rd(HPU_REG_TEMP(HPU_TEMP_DIE)) == 34000);
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    // load until the die reaches 36 C
    uint64_t t = 0;
    while (!(r.rd(HPU_REG_ALARM) & HPU_ALARM_TEMP_MAX) && t < 10000 * MS) {
        load.run(0, 10 * MS);
        t += 10 * MS;
    }
    REQUIRE(r.rd(HPU_REG_ALARM) == HPU_ALARM_TEMP_MAX);
    CHECK(r.rd(HPU_REG_TEMP(HPU_TEMP_DIE)) >= 36000);
    auto ev = events(r, HPU_EVENT_THERMAL);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].info == r.rd(HPU_REG_TEMP(HPU_TEMP_DIE)));
    CHECK(ev[0].severity == HPU_EVENT_SEV_ERROR);
    CHECK(r.rd(HPU_REG_THROTTLE) == HPU_THROTTLE_THERMAL);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1400);
    // keep the load on: the clock keeps dropping while the die is hot
    load.run(0, 30 * MS);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) <= 1200);
    load.run(0, 2000 * MS);
    CHECK(events(r, HPU_EVENT_THERMAL).size() == 1);
    // idle: the die cools; the clock holds until below 36 - 3 C; no
    // re-arm before that, so dipping just under TEMP_MAX posts nothing
    r.advance(2000 * MS);
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    uint32_t die = r.rd(HPU_REG_TEMP(HPU_TEMP_DIE));
    CHECK(die < 36000);
    // with the level lowered the idle equilibrium is below 33 C
    r.advance(20000 * MS);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1600);
    CHECK(r.rd(HPU_REG_THROTTLE) == 0);
    // TEMP_CRIT and HBM_TEMP_MAX only report
    CHECK(mbox(r, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_CRIT, 40000) ==
          HPU_MBOX_OK);
    CHECK(mbox(r, HPU_MBOX_SET_LIMIT, HPU_LIMIT_HBM_TEMP_MAX, 30000) ==
          HPU_MBOX_OK);
    r.advance(20 * MS);
    CHECK(r.rd(HPU_REG_ALARM) == HPU_ALARM_HBM_TEMP_MAX);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1600);
    // lower TEMP_MAX below the idle die: THERMAL again (re-armed)
    CHECK(mbox(r, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_MAX, 30000) ==
          HPU_MBOX_OK);
    r.advance(20 * MS);
    CHECK((r.rd(HPU_REG_ALARM) & HPU_ALARM_TEMP_MAX));
    CHECK(r.rd(HPU_REG_THROTTLE) == HPU_THROTTLE_THERMAL);
    CHECK(events(r, HPU_EVENT_THERMAL).size() == 2);
}

TEST_CASE("TEMP_CRIT alarm follows the die temperature", "[emu][fw][sensor]")
{
    Dev d(sensor_opts());

    d.advance(30000 * MS);                      // 34 C idle
    CHECK(mbox(d, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_CRIT, 40000) ==
          HPU_MBOX_OK);
    d.advance(10 * MS);
    CHECK(d.rd(HPU_REG_ALARM) == 0);
    d.core.rom.fw.limit[HPU_LIMIT_TEMP_CRIT].cur = 34000;   // == die
    d.advance(10 * MS);
    CHECK(d.rd(HPU_REG_ALARM) == HPU_ALARM_TEMP_CRIT);
    CHECK(d.rd(HPU_REG_CLK_CUR_MHZ) == 1600);   // reported only
}

// Hard reset

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

TEST_CASE("THERMAL re-arms only below TEMP_MAX - hysteresis",
          "[emu][fw][sensor][event]")
{
    Rig r(sensor_opts(450000, 36000));          // hysteresis 3 C: 33 C
    auto die = [&](double mc) {
        r.core.sens.die_mc = mc;                // backdoor: the die now
        r.advance(10 * MS);                     // one period
    };

    r.setup_eq(64);
    r.advance(30000 * MS);                      // idle: 34 C, no alarm
    die(36500);
    CHECK(r.rd(HPU_REG_ALARM) == HPU_ALARM_TEMP_MAX);
    CHECK(events(r, HPU_EVENT_THERMAL).size() == 1);
    die(36500);                                 // still set: no new edge
    CHECK(events(r, HPU_EVENT_THERMAL).size() == 1);
    die(35500);                                 // clear, not below 33 C
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    die(36500);                                 // an edge, not re-armed
    CHECK(r.rd(HPU_REG_ALARM) == HPU_ALARM_TEMP_MAX);
    CHECK(events(r, HPU_EVENT_THERMAL).size() == 1);
    die(32000);                                 // clear and below 33 C
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    die(36500);
    auto ev = events(r, HPU_EVENT_THERMAL);
    REQUIRE(ev.size() == 2);
    CHECK(ev[1].info == r.rd(HPU_REG_TEMP(HPU_TEMP_DIE)));
    CHECK(ev[1].info >= 36000);
    CHECK(events(r, HPU_EVENT_POWER).empty());
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
