/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: per-chip functions and data.
 *
 * The core driver is chip independent; what differs between chip variants
 * lives in one const struct hpu_asic per chip, in its own file (hpu_h1.c
 * for H1), chosen at probe by the CHIP_ID register. A new variant is a new
 * file plus one line in the table in hpu_hw.c.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_ASIC_H__
#define __HPU_ASIC_H__

#include <linux/types.h>

struct hpu_device;
struct hpu_identity;

/**
 * struct hpu_asic - description of one chip variant
 * @chip_id: value of the CHIP_ID register, HPU_CHIP_ID_*.
 * @name: short chip name for log messages.
 * @reset_timeout_us: how long a soft reset may take before the driver
 *	gives up.
 * @misc_irq_causes: IRQ_STATUS causes the driver enables on the MISC
 *	vector while bound.
 * @fw_file: the signed firmware image file, in the firmware search path;
 *	the chip's file names it with MODULE_FIRMWARE() too.
 * @read_identity: fill the chip-specific part of @id (memory, engines,
 *	serial, UUID) from the identity registers. The core has already
 *	checked MAGIC and SPEC_VERSION and filled chip_id, revision and
 *	spec_version.
 */
struct hpu_asic {
	u32 chip_id;
	const char *name;
	u32 reset_timeout_us;
	u32 misc_irq_causes;
	const char *fw_file;
	void (*read_identity)(struct hpu_device *hdev, struct hpu_identity *id);
};

extern const struct hpu_asic hpu_h1_asic;

#endif /* __HPU_ASIC_H__ */
