// SPDX-License-Identifier: MIT
//
// The firmware packer: source parsing, layout, checksum, signature and the
// reference verdicts of the boot ROM's checks.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "fwimage.h"

using namespace hpu::fw;

namespace
{

std::string slurp(const char *path)
{
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

Source dev_source()
{
    return parse_source(slurp(HPU_FW_SOURCE_FILE));
}

Seed dev_seed()
{
    return seed_from_text(slurp(HPU_FW_DEV_KEY));
}

PublicKey dev_pub()
{
    return pubkey_from_text(slurp(HPU_FW_DEV_PUB));
}

uint32_t rd32(const Bytes &b, size_t off)
{
    uint32_t v = 0;
    std::memcpy(&v, b.data() + off, 4);
    return v;
}

const char minimal[] = "version = 2.3.4\n"
                       "build = test\n"
                       "limit TEMP_MAX = 85000 30000 100000\n"
                       "limit TEMP_CRIT = 95000 40000 110000\n"
                       "limit POWER_CAP = 350000 50000 450000\n"
                       "limit HBM_TEMP_MAX = 90000 30000 100000\n"
                       "clock = 800 750\n"
                       "thermal ambient_mc = 25000\n"
                       "thermal rth_mc_per_w = 150\n"
                       "thermal tau_ms = 2000\n"
                       "thermal idle_mw = 60000\n"
                       "thermal engine_mw = 30000\n"
                       "thermal hbm_mhz = 1600\n"
                       "thermal hbm_mv = 1200\n"
                       "thermal hysteresis_mc = 3000\n"
                       "thermal period_ms = 10\n";

} // namespace

TEST_CASE("the tree's firmware source parses and its key pair matches")
{
    Source s = dev_source();
    CHECK(s.version == HPU_FW_VERSION(1, 0, 0));
    CHECK(s.limits.size() == 4);
    CHECK(s.clocks.size() == 5);
    CHECK(s.thermal.period_ms == 10);
    CHECK(public_key(dev_seed()) == dev_pub());
}

TEST_CASE("a packed, signed image has the specified layout")
{
    Seed seed = dev_seed();
    Bytes img = pack(dev_source(), &seed);
    uint32_t size = rd32(img, 12);
    CHECK(rd32(img, 0) == HPU_FW_MAGIC);
    CHECK(img[4] == 1);
    CHECK(img[6] == HPU_FW_HEADER_SIZE);
    CHECK(size + HPU_FW_SIG_SIZE == img.size());
    CHECK(rd32(img, 16) == 4); // INFO, LIMITS, CLOCKS, THERMAL
    CHECK(rd32(img, 20) == HPU_FW_FLAG_SIGNED);
    CHECK(std::string(reinterpret_cast<const char *>(img.data() + 56)) == "hpu-h1-fw 1.0.0");
    for (uint32_t i = 0; i < 4; i++) {
        size_t t = HPU_FW_HEADER_SIZE + 16 * i;
        CHECK(rd32(img, t) == i + 1);
        CHECK(rd32(img, t + 4) % 8 == 0);
        CHECK(rd32(img, t + 4) + rd32(img, t + 8) <= size);
        CHECK(rd32(img, t + 12) == 0);
    }
    CHECK(rd32(img, size) == HPU_FW_SIG_MAGIC);
    CHECK(rd32(img, size + 4) == HPU_FW_SIG_ED25519);
    CHECK(verify(img, nullptr, 0) == HPU_FW_ERR_NO_KEY);
    PublicKey pub = dev_pub();
    CHECK(verify(img, &pub, 0) == HPU_FW_ERR_NONE);
}

TEST_CASE("each refusal of the reference verifier")
{
    Seed seed = dev_seed();
    PublicKey pub = dev_pub();
    Bytes good = pack(parse_source(minimal), &seed);
    REQUIRE(verify(good, &pub, 0) == HPU_FW_ERR_NONE);

    SECTION("short or wrong magic")
    {
        CHECK(verify(Bytes(good.begin(), good.begin() + 100), &pub, 0) == HPU_FW_ERR_BAD_MAGIC);
        Bytes b = good;
        b[0] ^= 1;
        CHECK(verify(b, &pub, 0) == HPU_FW_ERR_BAD_MAGIC);
    }
    SECTION("format version, reserved bits")
    {
        Bytes b = good;
        b[4] = 2;
        CHECK(verify(b, &pub, 0) == HPU_FW_ERR_BAD_FORMAT);
        b = good;
        b[100] = 1;
        CHECK(verify(b, &pub, 0) == HPU_FW_ERR_BAD_FORMAT);
    }
    SECTION("too large")
    {
        Bytes b = good;
        b.resize(HPU_FW_MAX_SIZE + 1);
        CHECK(verify(b, &pub, 0) == HPU_FW_ERR_TOO_LARGE);
    }
    SECTION("truncated")
    {
        CHECK(verify(Bytes(good.begin(), good.end() - 1), &pub, 0) == HPU_FW_ERR_TRUNCATED);
        CHECK(verify(Bytes(good.begin(), good.begin() + 200), &pub, 0) == HPU_FW_ERR_TRUNCATED);
    }
    SECTION("corrupt")
    {
        Bytes b = good;
        b[rd32(b, 12) - 1] ^= 0x40;
        CHECK(verify(b, &pub, 0) == HPU_FW_ERR_CORRUPT);
    }
    SECTION("unsigned")
    {
        CHECK(verify(pack(parse_source(minimal), nullptr), &pub, 0) == HPU_FW_ERR_UNSIGNED);
    }
    SECTION("wrong key, damaged signature, header changed with a fixed checksum")
    {
        Seed other = random_seed();
        CHECK(verify(pack(parse_source(minimal), &other), &pub, 0) == HPU_FW_ERR_BAD_SIGNATURE);
        Bytes b = good;
        b[b.size() - 1] ^= 1;
        CHECK(verify(b, &pub, 0) == HPU_FW_ERR_BAD_SIGNATURE);
        b = good;
        b[8] = 9; // patch level changed after signing
        fix_checksum(b);
        CHECK(verify(b, &pub, 0) == HPU_FW_ERR_BAD_SIGNATURE);
    }
    SECTION("too old")
    {
        CHECK(verify(good, &pub, HPU_FW_VERSION(2, 3, 4)) == HPU_FW_ERR_NONE);
        CHECK(verify(good, &pub, HPU_FW_VERSION(2, 3, 5)) == HPU_FW_ERR_TOO_OLD);
    }
}

TEST_CASE("bad firmware sources are refused with the line that is wrong")
{
    auto bad = [](const std::string &text, const char *what) {
        try {
            parse_source(text);
            FAIL("accepted: " << text);
        } catch (const Error &e) {
            CHECK(std::string(e.what()).find(what) != std::string::npos);
        }
    };
    std::string m = minimal;
    bad(m + "limit TEMP_MAX = 2 1 3\n", "given twice");
    bad(m + "clock = 700 700\n", "ascend");
    bad(m + "frobnicate = 1\n", "unknown key");
    bad(m + "limit FOO = 1 1 1\n", "unknown limit");
    bad(m + "thermal foo = 1\n", "unknown thermal");
    bad(m + "version = 1.2\n", "MAJOR.MINOR.PATCH");
    bad(m + "version = 1.2.256\n", "0..255");
    bad(m + "build = " + std::string(40, 'x') + "\n", "longer than");
    bad("version = 1.0.0\n", "every limit");
    bad(m + "clock = 900 x\n", "not a 32-bit");
    bad(m + "just words\n", "key = value");
    std::string nothermal = m.substr(0, m.find("thermal period_ms"));
    bad(nothermal, "period_ms is missing");
    std::string lim = m;
    lim.replace(lim.find("85000 30000"), 11, "20000 30000");
    bad(lim, "min <= default <= max");
}

TEST_CASE("key text: comments allowed, length and digits checked")
{
    Seed s = dev_seed();
    std::string hex = to_hex(s.data(), s.size());
    CHECK(seed_from_text("# c\n" + hex + "\n") == s);
    CHECK_THROWS_AS(seed_from_text(hex.substr(2)), Error);
    hex[5] = 'g';
    CHECK_THROWS_AS(seed_from_text(hex), Error);
    CHECK(parse_version("1.2.3") == 0x010203);
    CHECK(version_string(0x010203) == "1.2.3");
}
