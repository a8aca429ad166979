// SPDX-License-Identifier: MIT
//
// Building, signing and checking HPU firmware images
// (Documentation/hw/firmware-and-telemetry.md, include/hw/hpu_fw_image.h).
// Used by the hpu-fwpack tool, the packer's unit tests and the device
// model's unit tests.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_FWIMAGE_H
#define HPU_FWIMAGE_H

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hpu_fw_image.h"
#include "hpu_regs.h"

namespace hpu::fw
{

using Seed = std::array<uint8_t, 32>; // Ed25519 private key (RFC 8032 seed)
using PublicKey = std::array<uint8_t, HPU_FW_PUBKEY_SIZE>;
using Bytes = std::vector<uint8_t>;

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What an image carries: the firmware's version, build string and tables.
struct Source {
    uint32_t version = HPU_FW_VERSION(1, 0, 0);
    std::string build;
    std::string info;
    std::vector<hpu_fw_limit> limits;
    std::vector<hpu_fw_clock> clocks;
    hpu_fw_thermal thermal{};
};

// Parse the text format of firmware/*.fwsrc (documented in
// firmware/README.md). Throws Error with the line number on bad input.
Source parse_source(std::string_view text);

// "1.2.3" -> HPU_FW_VERSION(1, 2, 3); throws Error on bad input.
uint32_t parse_version(std::string_view s);
std::string version_string(uint32_t v);

// Lay out the signed region (header, section table, sections) with its
// checksum; flags has SIGNED set when @signed_image (the trailer is added
// by sign()).
Bytes layout(const Source &src, bool signed_image);

// Append the Ed25519 signature trailer over image[0, image_size).
void sign(Bytes &image, const Seed &seed);

// A complete image: layout() and, unless @seed is null, sign().
Bytes pack(const Source &src, const Seed *seed);

// Recompute the checksum of the signed region in place (for tests that
// change a header field and want the change to pass the checksum).
void fix_checksum(Bytes &image);

PublicKey public_key(const Seed &seed);
Seed random_seed();

// Hex helpers for key files: 64 hex digits, '#' comment lines allowed.
std::string to_hex(const uint8_t *p, size_t n);
Seed seed_from_text(std::string_view text);
PublicKey pubkey_from_text(std::string_view text);

// The refusal code (HPU_FW_ERR_*) the boot ROM gives @image, checked with
// @key (null: no key fused) and @min_version: the reference for the model
// and the tests.
unsigned verify(const Bytes &img, const PublicKey *key, uint32_t min_version);

} // namespace hpu::fw

#endif
