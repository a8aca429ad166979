// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the H1 chip.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/ctype.h>
#include <linux/module.h>
#include <linux/unaligned.h>

#include "hpu_asic.h"
#include "hpu_drv.h"
#include "hpu_reg.h"

/* The spec asks for at least 10 ms; leave room for a slow emulator. */
#define HPU_H1_RESET_TIMEOUT_US		(100 * USEC_PER_MSEC)

#define HPU_H1_FW_FILE			"hpu/hpu-h1-fw.bin"
MODULE_FIRMWARE(HPU_H1_FW_FILE);

static void hpu_h1_read_serial(struct hpu_device *hdev, char *serial)
{
	unsigned int i;

	for (i = 0; i < HPU_SERIAL_LEN / 4; i++)
		put_unaligned_le32(hpu_rd32(hdev, HPU_REG_SERIAL(i)),
				   serial + 4 * i);
	serial[HPU_SERIAL_LEN] = '\0';

	/*
	 * The serial is NUL padded ASCII; stop at the first NUL and replace
	 * anything unprintable so that sysfs and the ioctl only ever hand out
	 * a clean string.
	 */
	for (i = 0; i < HPU_SERIAL_LEN && serial[i]; i++)
		if (!isprint(serial[i]))
			serial[i] = '?';
	memset(serial + i, 0, HPU_SERIAL_LEN - i);
}

static void hpu_h1_read_identity(struct hpu_device *hdev,
				 struct hpu_identity *id)
{
	unsigned int i;
	u32 engines;

	id->hbm_size = (u64)hpu_rd32(hdev, HPU_REG_HBM_SIZE_HI) << 32 |
		       hpu_rd32(hdev, HPU_REG_HBM_SIZE_LO);
	id->hbm_stacks = hpu_rd32(hdev, HPU_REG_HBM_STACKS);

	engines = hpu_rd32(hdev, HPU_REG_ENGINES);
	id->num_dma = FIELD_GET(HPU_ENGINES_DMA_MASK, engines);
	id->num_tpc = FIELD_GET(HPU_ENGINES_TPC_MASK, engines);
	id->num_mme = FIELD_GET(HPU_ENGINES_MME_MASK, engines);
	id->num_nic = FIELD_GET(HPU_ENGINES_NIC_MASK, engines);

	id->msix_vectors = hpu_rd32(hdev, HPU_REG_MSIX_VECTORS);

	hpu_h1_read_serial(hdev, id->serial);

	for (i = 0; i < HPU_UUID_LEN / 4; i++)
		put_unaligned_le32(hpu_rd32(hdev, HPU_REG_UUID(i)),
				   &id->uuid.b[4 * i]);
}

const struct hpu_asic hpu_h1_asic = {
	.chip_id = HPU_CHIP_ID_H1,
	.name = "H1",
	.reset_timeout_us = HPU_H1_RESET_TIMEOUT_US,
	.misc_irq_causes = HPU_IRQ_SELF_TEST | HPU_IRQ_RESET_DONE,
	.fw_file = HPU_H1_FW_FILE,
	.read_identity = hpu_h1_read_identity,
};
