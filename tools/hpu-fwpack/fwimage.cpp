// SPDX-License-Identifier: MIT
//
// HPU firmware images: layout, checksum, Ed25519 signature (nettle).
//
// Copyright (c) 2026 The hpu authors
#include "fwimage.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <map>
#include <sys/random.h>

#include <nettle/eddsa.h>
#include <nettle/sha2.h>

namespace hpu::fw
{

namespace
{

const std::map<std::string, uint32_t, std::less<>> limit_ids = {
    {"TEMP_MAX", 0},
    {"TEMP_CRIT", 1},
    {"POWER_CAP", 2},
    {"HBM_TEMP_MAX", 3},
};
constexpr unsigned num_limits = 4;

// Field order of struct hpu_fw_thermal.
const char *const thermal_fields[] = {
    "ambient_mc", "rth_mc_per_w", "tau_ms",        "idle_mw",   "engine_mw",
    "hbm_mhz",    "hbm_mv",       "hysteresis_mc", "period_ms",
};
constexpr size_t num_thermal = sizeof(hpu_fw_thermal) / sizeof(uint32_t);
static_assert(std::size(thermal_fields) == num_thermal);

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> words(std::string_view s)
{
    std::vector<std::string_view> out;
    while (true) {
        s = trim(s);
        if (s.empty())
            return out;
        size_t n = s.find_first_of(" \t");
        out.push_back(s.substr(0, n));
        if (n == std::string_view::npos)
            return out;
        s.remove_prefix(n);
    }
}

uint32_t number(std::string_view w, unsigned line)
{
    uint32_t v = 0;
    int base = 10;
    if (w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) {
        w.remove_prefix(2);
        base = 16;
    }
    auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v, base);
    if (ec != std::errc() || p != w.data() + w.size()) {
        throw Error("line " + std::to_string(line) + ": '" + std::string(w) +
                    "' is not a 32-bit unsigned number");
    }
    return v;
}

void put16(Bytes &b, size_t off, uint16_t v)
{
    b[off] = uint8_t(v);
    b[off + 1] = uint8_t(v >> 8);
}

uint16_t get16(const Bytes &b, size_t off)
{
    return uint16_t(b[off] | b[off + 1] << 8);
}

void put32(Bytes &b, size_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[off + i] = uint8_t(v >> (8 * i));
}

uint32_t get32(const Bytes &b, size_t off)
{
    return uint32_t(b[off]) | uint32_t(b[off + 1]) << 8 | uint32_t(b[off + 2]) << 16 |
           uint32_t(b[off + 3]) << 24;
}

void checksum(const uint8_t *p, size_t n, uint8_t out[HPU_FW_CHECKSUM_SIZE])
{
    static const uint8_t zero[HPU_FW_CHECKSUM_SIZE] = {};
    sha256_ctx ctx{};

    sha256_init(&ctx);
    sha256_update(&ctx, HPU_FW_CHECKSUM_OFFSET, p);
    sha256_update(&ctx, HPU_FW_CHECKSUM_SIZE, zero);
    sha256_update(&ctx, n - HPU_FW_CHECKSUM_OFFSET - HPU_FW_CHECKSUM_SIZE,
                  p + HPU_FW_CHECKSUM_OFFSET + HPU_FW_CHECKSUM_SIZE);
    sha256_digest(&ctx, HPU_FW_CHECKSUM_SIZE, out);
}

template <size_t N> std::array<uint8_t, N> from_hex(std::string_view text, const char *what)
{
    std::string hex;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        std::string_view line = trim(
            text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos));
        pos = eol == std::string_view::npos ? text.size() : eol + 1;
        if (line.empty() || line.front() == '#')
            continue;
        hex += line;
    }
    if (hex.size() != 2 * N) {
        throw Error(std::string(what) + ": expected " + std::to_string(2 * N) +
                    " hex digits, found " + std::to_string(hex.size()) + " characters");
    }
    std::array<uint8_t, N> out{};
    for (size_t i = 0; i < N; i++) {
        auto [p, ec] = std::from_chars(hex.data() + 2 * i, hex.data() + 2 * i + 2, out[i], 16);
        if (ec != std::errc() || p != hex.data() + 2 * i + 2) {
            throw Error(std::string(what) + ": bad hex digit near position " +
                        std::to_string(2 * i));
        }
    }
    return out;
}

} // namespace

uint32_t parse_version(std::string_view s)
{
    uint32_t part[3];
    for (int i = 0; i < 3; i++) {
        size_t dot = i < 2 ? s.find('.') : s.size();
        if (dot == std::string_view::npos)
            throw Error("version '" + std::string(s) + "' is not MAJOR.MINOR.PATCH");
        std::string_view w = s.substr(0, dot);
        auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), part[i]);
        if (w.empty() || ec != std::errc() || p != w.data() + w.size() || part[i] > 255)
            throw Error("version part '" + std::string(w) + "' is not 0..255");
        s.remove_prefix(std::min(s.size(), dot + 1));
    }
    return HPU_FW_VERSION(part[0], part[1], part[2]);
}

std::string version_string(uint32_t v)
{
    return std::to_string((v >> 16) & 0xff) + "." + std::to_string((v >> 8) & 0xff) + "." +
           std::to_string(v & 0xff);
}

Source parse_source(std::string_view text)
{
    Source src;
    bool have_thermal[num_thermal] = {};
    unsigned lineno = 0;
    size_t pos = 0;

    while (pos < text.size()) {
        size_t eol = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
        pos = eol == std::string_view::npos ? text.size() : eol + 1;
        lineno++;
        line = trim(line);
        if (line.empty() || line.front() == '#')
            continue;
        size_t eq = line.find('=');
        if (eq == std::string_view::npos)
            throw Error("line " + std::to_string(lineno) + ": expected 'key = value'");
        auto key = words(line.substr(0, eq));
        std::string_view value = trim(line.substr(eq + 1));
        auto vals = words(value);
        auto need = [&](size_t n) {
            if (vals.size() != n) {
                throw Error("line " + std::to_string(lineno) + ": expected " + std::to_string(n) +
                            " value(s)");
            }
        };
        if (key.size() == 1 && key[0] == "version") {
            src.version = parse_version(value);
        } else if (key.size() == 1 && key[0] == "build") {
            if (value.size() >= HPU_FW_BUILD_SIZE) {
                throw Error("line " + std::to_string(lineno) + ": build is longer than " +
                            std::to_string(HPU_FW_BUILD_SIZE - 1) + " characters");
            }
            src.build = value;
        } else if (key.size() == 1 && key[0] == "info") {
            src.info += std::string(value) + "\n";
        } else if (key.size() == 2 && key[0] == "limit") {
            auto it = limit_ids.find(key[1]);
            if (it == limit_ids.end()) {
                throw Error("line " + std::to_string(lineno) + ": unknown limit '" +
                            std::string(key[1]) + "'");
            }
            need(3);
            hpu_fw_limit l{it->second, number(vals[0], lineno), number(vals[1], lineno),
                           number(vals[2], lineno)};
            if (l.min > l.def || l.def > l.max) {
                throw Error("line " + std::to_string(lineno) +
                            ": limit needs min <= default <= max");
            }
            for (const auto &o : src.limits) {
                if (o.id == l.id) {
                    throw Error("line " + std::to_string(lineno) + ": limit '" +
                                std::string(key[1]) + "' given twice");
                }
            }
            src.limits.push_back(l);
        } else if (key.size() == 1 && key[0] == "clock") {
            need(2);
            hpu_fw_clock c{number(vals[0], lineno), number(vals[1], lineno)};
            if (!src.clocks.empty() && c.mhz <= src.clocks.back().mhz) {
                throw Error("line " + std::to_string(lineno) + ": clock levels must ascend in MHz");
            }
            if (src.clocks.size() == HPU_FW_MAX_CLOCKS) {
                throw Error("line " + std::to_string(lineno) + ": more than " +
                            std::to_string(HPU_FW_MAX_CLOCKS) + " clock levels");
            }
            src.clocks.push_back(c);
        } else if (key.size() == 2 && key[0] == "thermal") {
            auto *f = std::find_if(std::begin(thermal_fields), std::end(thermal_fields),
                                   [&](const char *n) { return key[1] == n; });
            if (f == std::end(thermal_fields)) {
                throw Error("line " + std::to_string(lineno) + ": unknown thermal field '" +
                            std::string(key[1]) + "'");
            }
            need(1);
            auto i = size_t(f - std::begin(thermal_fields));
            reinterpret_cast<uint32_t *>(&src.thermal)[i] = number(vals[0], lineno);
            have_thermal[i] = true;
        } else {
            throw Error("line " + std::to_string(lineno) + ": unknown key '" +
                        std::string(trim(line.substr(0, eq))) + "'");
        }
    }
    if (src.limits.size() != num_limits)
        throw Error("every limit (TEMP_MAX, TEMP_CRIT, POWER_CAP, HBM_TEMP_MAX) must be given");
    if (src.clocks.empty())
        throw Error("at least one clock level must be given");
    for (size_t i = 0; i < num_thermal; i++) {
        if (!have_thermal[i])
            throw Error(std::string("thermal ") + thermal_fields[i] + " is missing");
    }
    return src;
}

Bytes layout(const Source &src, bool signed_image)
{
    struct Sect {
        uint32_t type;
        Bytes data;
    };
    std::vector<Sect> sects;
    if (!src.info.empty())
        sects.push_back({HPU_FW_SECT_INFO, Bytes(src.info.begin(), src.info.end())});
    auto raw = [](const void *p, size_t n) {
        const auto *b = static_cast<const uint8_t *>(p);
        return Bytes(b, b + n);
    };
    sects.push_back(
        {HPU_FW_SECT_LIMITS, raw(src.limits.data(), src.limits.size() * sizeof(hpu_fw_limit))});
    sects.push_back(
        {HPU_FW_SECT_CLOCKS, raw(src.clocks.data(), src.clocks.size() * sizeof(hpu_fw_clock))});
    sects.push_back({HPU_FW_SECT_THERMAL, raw(&src.thermal, sizeof(src.thermal))});

    size_t off = HPU_FW_HEADER_SIZE + sects.size() * sizeof(hpu_fw_section);
    Bytes img(off);
    for (size_t i = 0; i < sects.size(); i++) {
        off = (off + 7) & ~size_t(7);
        size_t t = HPU_FW_HEADER_SIZE + i * sizeof(hpu_fw_section);
        put32(img, t + offsetof(hpu_fw_section, type), sects[i].type);
        put32(img, t + offsetof(hpu_fw_section, offset), uint32_t(off));
        put32(img, t + offsetof(hpu_fw_section, size), uint32_t(sects[i].data.size()));
        img.resize(off);
        img.insert(img.end(), sects[i].data.begin(), sects[i].data.end());
        off = img.size();
    }
    if (img.size() + (signed_image ? HPU_FW_SIG_SIZE : 0) > HPU_FW_MAX_SIZE)
        throw Error("image would exceed " + std::to_string(HPU_FW_MAX_SIZE) + " bytes");

    put32(img, HPU_FW_HDR_OFF(magic), HPU_FW_MAGIC);
    put16(img, HPU_FW_HDR_OFF(format_version), HPU_FW_FORMAT_VERSION);
    put16(img, HPU_FW_HDR_OFF(header_size), HPU_FW_HEADER_SIZE);
    put32(img, HPU_FW_HDR_OFF(fw_version), src.version);
    put32(img, HPU_FW_HDR_OFF(image_size), uint32_t(img.size()));
    put32(img, HPU_FW_HDR_OFF(num_sections), uint32_t(sects.size()));
    put32(img, HPU_FW_HDR_OFF(flags), signed_image ? HPU_FW_FLAG_SIGNED : 0);
    std::copy_n(src.build.begin(), std::min<size_t>(src.build.size(), HPU_FW_BUILD_SIZE - 1),
                img.begin() + HPU_FW_HDR_OFF(build));
    fix_checksum(img);
    return img;
}

void fix_checksum(Bytes &image)
{
    if (image.size() < HPU_FW_HEADER_SIZE)
        throw Error("image shorter than its header");
    size_t n = std::min<size_t>(get32(image, HPU_FW_HDR_OFF(image_size)), image.size());
    if (n < HPU_FW_HEADER_SIZE)
        throw Error("image_size shorter than the header");
    checksum(image.data(), n, image.data() + HPU_FW_HDR_OFF(checksum));
}

void sign(Bytes &image, const Seed &seed)
{
    if (image.size() < HPU_FW_HEADER_SIZE ||
        get32(image, HPU_FW_HDR_OFF(image_size)) != image.size())
        throw Error("sign() needs exactly the signed region");
    PublicKey pub = public_key(seed);
    hpu_fw_signature trailer{};
    trailer.magic = HPU_FW_SIG_MAGIC;
    trailer.algorithm = HPU_FW_SIG_ED25519;
    ed25519_sha512_sign(pub.data(), seed.data(), image.size(), image.data(), trailer.signature);
    size_t off = image.size();
    image.resize(off + HPU_FW_SIG_SIZE);
    put32(image, off + HPU_FW_SIG_OFF(magic), trailer.magic);
    put32(image, off + HPU_FW_SIG_OFF(algorithm), trailer.algorithm);
    std::copy(std::begin(trailer.signature), std::end(trailer.signature),
              image.begin() + long(off + HPU_FW_SIG_OFF(signature)));
}

Bytes pack(const Source &src, const Seed *seed)
{
    Bytes img = layout(src, seed != nullptr);
    if (seed)
        sign(img, *seed);
    return img;
}

PublicKey public_key(const Seed &seed)
{
    PublicKey pub{};
    ed25519_sha512_public_key(pub.data(), seed.data());
    return pub;
}

Seed random_seed()
{
    Seed s{};
    size_t got = 0;
    while (got < s.size()) {
        ssize_t n = getrandom(s.data() + got, s.size() - got, 0);
        if (n < 0)
            throw Error("getrandom failed");
        got += size_t(n);
    }
    return s;
}

std::string to_hex(const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < n; i++) {
        s += digits[p[i] >> 4];
        s += digits[p[i] & 15];
    }
    return s;
}

Seed seed_from_text(std::string_view text)
{
    return from_hex<32>(text, "private key");
}

PublicKey pubkey_from_text(std::string_view text)
{
    return from_hex<HPU_FW_PUBKEY_SIZE>(text, "public key");
}

unsigned verify(const Bytes &img, const PublicKey *key, uint32_t min_version)
{
    const size_t have = img.size();
    if (have < HPU_FW_HEADER_SIZE || get32(img, HPU_FW_HDR_OFF(magic)) != HPU_FW_MAGIC)
        return HPU_FW_ERR_BAD_MAGIC;
    uint32_t flags = get32(img, HPU_FW_HDR_OFF(flags));
    uint32_t version = get32(img, HPU_FW_HDR_OFF(fw_version));
    bool reserved_zero =
        std::all_of(img.begin() + HPU_FW_HDR_OFF(reserved), img.begin() + HPU_FW_HEADER_SIZE,
                    [](uint8_t b) { return b == 0; });
    if (get16(img, HPU_FW_HDR_OFF(format_version)) != HPU_FW_FORMAT_VERSION ||
        get16(img, HPU_FW_HDR_OFF(header_size)) != HPU_FW_HEADER_SIZE ||
        (flags & ~HPU_FW_FLAG_SIGNED) || !reserved_zero || (version >> 24))
        return HPU_FW_ERR_BAD_FORMAT;
    uint64_t size = get32(img, HPU_FW_HDR_OFF(image_size));
    uint64_t nsect = get32(img, HPU_FW_HDR_OFF(num_sections));
    uint64_t total = size + ((flags & HPU_FW_FLAG_SIGNED) ? HPU_FW_SIG_SIZE : 0);
    if (total > HPU_FW_MAX_SIZE || have > HPU_FW_MAX_SIZE)
        return HPU_FW_ERR_TOO_LARGE;
    if (have < total || size < HPU_FW_HEADER_SIZE + std::min<uint64_t>(nsect, HPU_FW_MAX_SECTIONS) *
                                                        sizeof(hpu_fw_section))
        return HPU_FW_ERR_TRUNCATED;
    uint8_t sum[HPU_FW_CHECKSUM_SIZE];
    checksum(img.data(), size, sum);
    if (!std::equal(sum, sum + HPU_FW_CHECKSUM_SIZE, img.begin() + HPU_FW_HDR_OFF(checksum)))
        return HPU_FW_ERR_CORRUPT;
    if (!(flags & HPU_FW_FLAG_SIGNED))
        return HPU_FW_ERR_UNSIGNED;
    if (!key)
        return HPU_FW_ERR_NO_KEY;
    if (get32(img, size + HPU_FW_SIG_OFF(magic)) != HPU_FW_SIG_MAGIC ||
        get32(img, size + HPU_FW_SIG_OFF(algorithm)) != HPU_FW_SIG_ED25519 ||
        !ed25519_sha512_verify(key->data(), size, img.data(),
                               img.data() + size + HPU_FW_SIG_OFF(signature)))
        return HPU_FW_ERR_BAD_SIGNATURE;
    if (version < min_version)
        return HPU_FW_ERR_TOO_OLD;
    return HPU_FW_ERR_NONE;
}

} // namespace hpu::fw
