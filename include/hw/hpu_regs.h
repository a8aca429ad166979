/* SPDX-License-Identifier: MIT */
/*
 * HPU register map, shared by the device model (emu/) and the driver
 * (kernel/).  Documentation/hw/registers.md is the specification; this
 * header is checked against it by tools/check-regs.py at build time, so a
 * change to one without the other fails the build.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_REGS_H
#define HPU_REGS_H

/* PCI identity: an experimental ID under QEMU's vendor, never Habana's. */
#define HPU_PCI_VENDOR_ID		0x1234
#define HPU_PCI_DEVICE_ID		0x4850
#define HPU_PCI_CLASS			0x1200	/* processing accelerator */
#define HPU_PCI_REVISION		0x01

/* BARs */
#define HPU_BAR_REGS			0	/* 64-bit, registers */
#define HPU_BAR_REGS_SIZE		0x100000
#define HPU_BAR_MSIX			2	/* 64-bit, MSI-X table + PBA */
#define HPU_MSIX_VECTORS		16

/* Interrupt vectors */
#define HPU_VEC_MISC			0	/* self-test, reset done */

/* Identity and control block, BAR0 + 0x0000 */
#define HPU_REG_MAGIC			0x0000	/* RO */
#define   HPU_MAGIC_VALUE		0x31555048	/* "HPU1" little-endian */
#define HPU_REG_CHIP_ID			0x0004	/* RO */
#define   HPU_CHIP_ID_H1		0x00000001
#define HPU_REG_REVISION		0x0008	/* RO: [15:8] major, [7:0] minor */
#define   HPU_REVISION_MAJOR_MASK	0x0000ff00
#define   HPU_REVISION_MINOR_MASK	0x000000ff
#define HPU_REG_SPEC_VERSION		0x000c	/* RO: register map version */
#define   HPU_SPEC_VERSION_VALUE	0x00000001
#define HPU_REG_HBM_SIZE_LO		0x0010	/* RO: HBM bytes [31:0] */
#define HPU_REG_HBM_SIZE_HI		0x0014	/* RO: HBM bytes [63:32] */
#define HPU_REG_ENGINES			0x0018	/* RO: engine counts */
#define   HPU_ENGINES_DMA_MASK		0x000000ff
#define   HPU_ENGINES_TPC_MASK		0x0000ff00
#define   HPU_ENGINES_MME_MASK		0x00ff0000
#define   HPU_ENGINES_NIC_MASK		0xff000000
#define HPU_REG_HBM_STACKS		0x001c	/* RO */
#define HPU_REG_SERIAL(n)		(0x0020 + 4 * (n))	/* RO, n = 0..3 */
#define   HPU_SERIAL_LEN		16
#define HPU_REG_UUID(n)			(0x0030 + 4 * (n))	/* RO, n = 0..3 */
#define   HPU_UUID_LEN			16
#define HPU_REG_SCRATCH			0x0040	/* RW */
#define HPU_REG_STATUS			0x0044	/* RO */
#define   HPU_STATUS_READY		0x00000001
#define   HPU_STATUS_RESET_BUSY		0x00000002
#define HPU_REG_SOFT_RESET		0x0048	/* WO */
#define   HPU_SOFT_RESET_KEY		0x52534554	/* "RSET" */
#define HPU_REG_RESET_COUNT		0x004c	/* RO */
#define HPU_REG_IRQ_TEST		0x0050	/* WO: vector number */
#define HPU_REG_IRQ_TEST_COUNT		0x0054	/* RO */
#define HPU_REG_MSIX_VECTORS		0x0058	/* RO */
#define HPU_REG_ERROR			0x005c	/* RW1C */
#define   HPU_ERROR_BAD_ACCESS		0x00000001
#define   HPU_ERROR_BAD_IRQ_VECTOR	0x00000002
#define   HPU_ERROR_BAD_RESET_KEY	0x00000004
#define   HPU_ERROR_RESET_BUSY		0x00000008
#define HPU_REG_IRQ_STATUS		0x0060	/* RW1C: misc vector causes */
#define   HPU_IRQ_SELF_TEST		0x00000001
#define   HPU_IRQ_RESET_DONE		0x00000002
#define HPU_REG_IRQ_MASK		0x0064	/* RW: 1 = cause enabled */

#define HPU_REG_ID_BLOCK_END		0x0068

/* Soft reset completes this long after it is started (virtual time). */
#define HPU_SOFT_RESET_NS		100000

#endif /* HPU_REGS_H */
