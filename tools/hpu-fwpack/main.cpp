// SPDX-License-Identifier: MIT
//
// hpu-fwpack: build, sign and check HPU firmware images.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "fwimage.h"

namespace
{

const char usage[] =
    "usage: hpu-fwpack --source FILE.fwsrc --out IMAGE [--key SEED | --no-sign]\n"
    "                  [--version X.Y.Z] [--build TEXT]\n"
    "       hpu-fwpack --gen-key SEED_FILE      write a new random private key\n"
    "       hpu-fwpack --pubkey SEED_FILE       print the public key (hex)\n"
    "       hpu-fwpack --check IMAGE [--pubkey-file PUB] [--min-version X.Y.Z]\n"
    "                  print the header and the boot ROM's verdict\n"
    "Exit status: 0 success (--check: image accepted), 1 refused or failed, 2 usage.\n";

std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        throw hpu::fw::Error("cannot read " + path + ": " + std::strerror(errno));
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void spit(const std::string &path, const void *p, size_t n)
{
    std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f || !f.write(static_cast<const char *>(p), std::streamsize(n)))
            throw hpu::fw::Error("cannot write " + tmp + ": " + std::strerror(errno));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        throw hpu::fw::Error("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
    }
}

// The spec's name of a refusal code, from the table in hpu_fw_image.h.
const char *refusal_name(unsigned code)
{
    switch (code) {
#define HPU_FWPACK_REFUSAL_CASE(name, value)                                                       \
    case value:                                                                                    \
        return #name;
        HPU_FW_REFUSALS(HPU_FWPACK_REFUSAL_CASE)
#undef HPU_FWPACK_REFUSAL_CASE
    default:
        return "UNKNOWN";
    }
}

int check(const std::string &path, const std::optional<std::string> &pubfile, uint32_t min)
{
    std::string raw = slurp(path);
    hpu::fw::Bytes img(raw.begin(), raw.end());
    std::optional<hpu::fw::PublicKey> key;
    if (pubfile)
        key = hpu::fw::pubkey_from_text(slurp(*pubfile));
    if (img.size() >= HPU_FW_HEADER_SIZE) {
        hpu_fw_header h{};
        std::memcpy(&h, img.data(), sizeof(h));
        std::string build(h.build, strnlen(h.build, sizeof(h.build)));
        std::cout << "version " << hpu::fw::version_string(h.fw_version) << "\n"
                  << "build " << build << "\n"
                  << "image_size " << h.image_size << "\n"
                  << "sections " << h.num_sections << "\n"
                  << "signed " << ((h.flags & HPU_FW_FLAG_SIGNED) ? "yes" : "no") << "\n";
    }
    unsigned code = hpu::fw::verify(img, key ? &*key : nullptr, min);
    std::cout << "verdict " << refusal_name(code) << "\n";
    return code == HPU_FW_ERR_NONE ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
    std::optional<std::string> source, out, key, version, build, gen, pub, chk, pubfile, minv;
    bool no_sign = false;

    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto arg = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "hpu-fwpack: " << a << " needs a value\n" << usage;
                std::exit(2);
            }
            return argv[++i];
        };
        const std::pair<const char *, std::optional<std::string> *> valued[] = {
            {"--source", &source}, {"--out", &out},         {"--key", &key},
            {"--version", &version}, {"--build", &build},   {"--gen-key", &gen},
            {"--pubkey", &pub},      {"--check", &chk},     {"--pubkey-file", &pubfile},
            {"--min-version", &minv},
        };
        const auto *opt = std::find_if(std::begin(valued), std::end(valued),
                                       [&](const auto &v) { return a == v.first; });
        if (opt != std::end(valued)) {
            *opt->second = arg();
        } else if (a == "--no-sign") {
            no_sign = true;
        } else if (a == "-h" || a == "--help") {
            std::cout << usage;
            return 0;
        } else {
            std::cerr << "hpu-fwpack: unknown argument " << a << "\n" << usage;
            return 2;
        }
    }

    try {
        if (gen) {
            hpu::fw::Seed s = hpu::fw::random_seed();
            std::string text = hpu::fw::to_hex(s.data(), s.size()) + "\n";
            spit(*gen, text.data(), text.size());
            return 0;
        }
        if (pub) {
            auto p = hpu::fw::public_key(hpu::fw::seed_from_text(slurp(*pub)));
            std::cout << hpu::fw::to_hex(p.data(), p.size()) << "\n";
            return 0;
        }
        if (chk)
            return check(*chk, pubfile, minv ? hpu::fw::parse_version(*minv) : 0);
        if (!source || !out || (!key && !no_sign) || (key && no_sign)) {
            std::cerr << "hpu-fwpack: give --source, --out and one of --key or --no-sign\n"
                      << usage;
            return 2;
        }
        hpu::fw::Source src = hpu::fw::parse_source(slurp(*source));
        if (version)
            src.version = hpu::fw::parse_version(*version);
        if (build)
            src.build = *build;
        std::optional<hpu::fw::Seed> seed;
        if (key)
            seed = hpu::fw::seed_from_text(slurp(*key));
        hpu::fw::Bytes img = hpu::fw::pack(src, seed ? &*seed : nullptr);
        spit(*out, img.data(), img.size());
        return 0;
    } catch (const hpu::fw::Error &e) {
        std::cerr << "hpu-fwpack: " << e.what() << "\n";
        return 1;
    }
}
