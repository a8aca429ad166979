/* SPDX-License-Identifier: MIT */
/*
 * HPU firmware image layout and the boot ROM's refusal codes, shared by the
 * packer (tools/hpu-fwpack), the device model's boot ROM (emu/), the driver
 * (kernel/) and the tests.  The specification is
 * Documentation/hw/firmware-and-telemetry.md ("Firmware image"); all fields
 * are little-endian.  Only fixed-size integer types are used, so the layout
 * is the same for every compiler; the static asserts keep it so.  No C++
 * and no QEMU: the kernel includes this header too.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_FW_IMAGE_H
#define HPU_FW_IMAGE_H

#ifdef __KERNEL__
#include <linux/stddef.h>
#include <linux/types.h>
#else
#include <stddef.h>
#include <stdint.h>
#endif

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
#define HPU_FW_SECTION_SIZE		16
#define HPU_FW_LIMIT_SIZE		16
#define HPU_FW_CLOCK_SIZE		8
#define HPU_FW_THERMAL_SIZE		36

/*
 * Byte offset of a field of the header or of the signature trailer: images
 * are read and written byte by byte (little-endian) at these offsets,
 * never through the structures, so host endianness and alignment do not
 * matter.
 */
#define HPU_FW_HDR_OFF(field)	((uint32_t)offsetof(struct hpu_fw_header, field))
#define HPU_FW_SIG_OFF(field)	((uint32_t)offsetof(struct hpu_fw_signature, field))

/* fw_version: [23:16] major, [15:8] minor, [7:0] patch */
#define HPU_FW_VERSION(maj, min, pat) \
	(((uint32_t)(maj) << 16) | ((uint32_t)(min) << 8) | (uint32_t)(pat))

/* Section types */
#define HPU_FW_SECT_INFO		1
#define HPU_FW_SECT_LIMITS		2
#define HPU_FW_SECT_CLOCKS		3
#define HPU_FW_SECT_THERMAL		4
#define HPU_FW_MAX_CLOCKS		16

/*
 * Refusal codes of BOOT_ERROR and FLASH_ERROR, X(name, value) for each:
 * the one table that HPU_FW_ERR_<name> and every name table (model,
 * driver, hpu-fwpack) are made from.  The names are the spec's.
 */
#define HPU_FW_REFUSALS(X)		\
	X(NONE, 0)			\
	X(BAD_MAGIC, 1)			\
	X(BAD_FORMAT, 2)		\
	X(TOO_LARGE, 3)			\
	X(TRUNCATED, 4)			\
	X(CORRUPT, 5)			\
	X(UNSIGNED, 6)			\
	X(NO_KEY, 7)			\
	X(BAD_SIGNATURE, 8)		\
	X(TOO_OLD, 9)			\
	X(BAD_LAYOUT, 10)		\
	X(DMA_ERROR, 11)		\
	X(NO_IMAGE, 12)

#define HPU_FW_ERR_ENUM_(name, value)	HPU_FW_ERR_##name = (value),
enum hpu_fw_refusal {
	HPU_FW_REFUSALS(HPU_FW_ERR_ENUM_)
};
#undef HPU_FW_ERR_ENUM_

/*
 * An initializer of a name table indexed by refusal code:
 *   static const char *const names[] = { HPU_FW_REFUSAL_NAMES };
 */
#define HPU_FW_REFUSAL_NAME_(name, value)	[value] = #name,
#define HPU_FW_REFUSAL_NAMES		HPU_FW_REFUSALS(HPU_FW_REFUSAL_NAME_)

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
#define HPU_FW_ASSERT_(cond, msg)	static_assert(cond, msg)
#else
#define HPU_FW_ASSERT_(cond, msg)	_Static_assert(cond, msg)
#endif
HPU_FW_ASSERT_(sizeof(struct hpu_fw_header) == HPU_FW_HEADER_SIZE, "header");
HPU_FW_ASSERT_(sizeof(struct hpu_fw_section) == HPU_FW_SECTION_SIZE, "section");
HPU_FW_ASSERT_(sizeof(struct hpu_fw_limit) == HPU_FW_LIMIT_SIZE, "limit");
HPU_FW_ASSERT_(sizeof(struct hpu_fw_clock) == HPU_FW_CLOCK_SIZE, "clock");
HPU_FW_ASSERT_(sizeof(struct hpu_fw_thermal) == HPU_FW_THERMAL_SIZE, "thermal");
HPU_FW_ASSERT_(sizeof(struct hpu_fw_signature) == HPU_FW_SIG_SIZE, "trailer");
HPU_FW_ASSERT_(HPU_FW_HDR_OFF(checksum) == HPU_FW_CHECKSUM_OFFSET, "checksum");
#undef HPU_FW_ASSERT_

#endif /* HPU_FW_IMAGE_H */
