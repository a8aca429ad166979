/* SPDX-License-Identifier: MIT */
/*
 * HPU firmware image layout, shared by the packer (tools/hpu-fwpack), the
 * device model's boot ROM (emu/) and the tests.  The specification is
 * Documentation/hw/firmware-and-telemetry.md ("Firmware image"); all fields
 * are little-endian.  Only fixed-size integer types are used, so the layout
 * is the same for every compiler; the static asserts keep it so.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_FW_IMAGE_H
#define HPU_FW_IMAGE_H

#include <stdint.h>

#define HPU_FW_MAGIC			0x31574648u	/* "HFW1" */
#define HPU_FW_FORMAT_VERSION		1
#define HPU_FW_HEADER_SIZE		128
#define HPU_FW_MAX_SECTIONS		16
#define HPU_FW_MAX_SIZE			0x100000u	/* trailer included */
#define HPU_FW_FLAG_SIGNED		0x00000001u
#define HPU_FW_SIG_MAGIC		0x31475348u	/* "HSG1" */
#define HPU_FW_SIG_ED25519		1
#define HPU_FW_SIG_SIZE			96
#define HPU_FW_PUBKEY_SIZE		32
#define HPU_FW_CHECKSUM_OFFSET		24
#define HPU_FW_CHECKSUM_SIZE		32
#define HPU_FW_BUILD_SIZE		32

/* fw_version: [23:16] major, [15:8] minor, [7:0] patch */
#define HPU_FW_VERSION(maj, min, pat) \
	(((uint32_t)(maj) << 16) | ((uint32_t)(min) << 8) | (uint32_t)(pat))

/* Section types */
#define HPU_FW_SECT_INFO		1
#define HPU_FW_SECT_LIMITS		2
#define HPU_FW_SECT_CLOCKS		3
#define HPU_FW_SECT_THERMAL		4
#define HPU_FW_MAX_CLOCKS		16

struct hpu_fw_header {
	uint32_t magic;
	uint16_t format_version;
	uint16_t header_size;
	uint32_t fw_version;
	uint32_t image_size;
	uint32_t num_sections;
	uint32_t flags;
	uint8_t checksum[HPU_FW_CHECKSUM_SIZE];
	char build[HPU_FW_BUILD_SIZE];
	uint8_t reserved[40];
};

struct hpu_fw_section {
	uint32_t type;
	uint32_t offset;
	uint32_t size;
	uint32_t reserved;
};

struct hpu_fw_limit {
	uint32_t id;
	uint32_t def;
	uint32_t min;
	uint32_t max;
};

struct hpu_fw_clock {
	uint32_t mhz;
	uint32_t mv;
};

struct hpu_fw_thermal {
	uint32_t ambient_mc;
	uint32_t rth_mc_per_w;
	uint32_t tau_ms;
	uint32_t idle_mw;
	uint32_t engine_mw;
	uint32_t hbm_mhz;
	uint32_t hbm_mv;
	uint32_t hysteresis_mc;
	uint32_t period_ms;
};

struct hpu_fw_signature {
	uint32_t magic;
	uint32_t algorithm;
	uint8_t reserved[24];
	uint8_t signature[64];
};

#ifdef __cplusplus
static_assert(sizeof(struct hpu_fw_header) == HPU_FW_HEADER_SIZE, "header");
static_assert(sizeof(struct hpu_fw_section) == 16, "section");
static_assert(sizeof(struct hpu_fw_signature) == HPU_FW_SIG_SIZE, "trailer");
static_assert(sizeof(struct hpu_fw_thermal) == 36, "thermal");
#else
_Static_assert(sizeof(struct hpu_fw_header) == HPU_FW_HEADER_SIZE, "header");
_Static_assert(sizeof(struct hpu_fw_section) == 16, "section");
_Static_assert(sizeof(struct hpu_fw_signature) == HPU_FW_SIG_SIZE, "trailer");
_Static_assert(sizeof(struct hpu_fw_thermal) == 36, "thermal");
#endif

#endif /* HPU_FW_IMAGE_H */
