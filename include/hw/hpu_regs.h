/* SPDX-License-Identifier: MIT */
/*
 * HPU register map, shared by the device model (emu/) and the driver
 * (kernel/).  Documentation/hw/registers.md is the specification; this
 * header is checked against it by tools/dev/check-regs.py at build time, so a
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
#define HPU_BAR_REGS_SIZE		0x1000000	/* 16 MiB, spec version 7 */
#define HPU_BAR_MSIX			2	/* 64-bit, MSI-X table + PBA */
#define HPU_BAR_HBM			4	/* 64-bit prefetchable, HBM window */
/* BAR4 up to spec version 7; from 8 the least power of two >= HBM_SIZE */
#define HPU_BAR_HBM_SIZE		0x4000000
#define HPU_MSIX_VECTORS		64

/* Interrupt vectors */
#define HPU_VEC_MISC			0	/* self-test, reset done */
#define HPU_VEC_EQ			1	/* event queue */
#define HPU_VEC_DMA(e)			(2 + (e))	/* completions of DMA engine e */
/* Spec version 6: completions of engine index e (0..10), compute.md */
#define HPU_VEC_ENGINE(e)		(2 + (e))
/* Spec version 7: port p's Ethernet vector; the RoCE engine's event queue */
#define HPU_VEC_NIC(p)			(16 + (p))
#define HPU_VEC_ROCE			32

/* Identity and control block, BAR0 + 0x0000 */
#define HPU_REG_MAGIC			0x0000	/* RO */
#define   HPU_MAGIC_VALUE		0x31555048	/* "HPU1" little-endian */
#define HPU_REG_CHIP_ID			0x0004	/* RO */
#define   HPU_CHIP_ID_H1		0x00000001
#define HPU_REG_REVISION		0x0008	/* RO: [15:8] major, [7:0] minor */
#define   HPU_REVISION_MAJOR_MASK	0x0000ff00
#define   HPU_REVISION_MINOR_MASK	0x000000ff
#define HPU_REG_SPEC_VERSION		0x000c	/* RO: register map version */
#define   HPU_SPEC_VERSION_VALUE	0x0000000a
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
#define   HPU_STATUS_HARD_RESET_BUSY	0x00000004
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
#define   HPU_IRQ_FW_BOOT		0x00000004
#define   HPU_IRQ_FLASH_DONE		0x00000008
#define   HPU_IRQ_MBOX_DONE		0x00000010
#define HPU_REG_IRQ_MASK		0x0064	/* RW: 1 = cause enabled */

/* Spec version 3: Documentation/hw/errors-and-reset.md */
#define HPU_REG_HARD_RESET		0x0068	/* WO */
#define   HPU_HARD_RESET_KEY		0x48525354	/* "HRST" */
#define HPU_REG_HARD_RESET_COUNT	0x006c	/* RO */
#define HPU_REG_WDT_MS			0x0070	/* RW */
#define HPU_REG_ECC_CE_COUNT		0x0074	/* RO */
#define HPU_REG_ECC_UE_COUNT		0x0078	/* RO */
/* Spec version 10: user-stream doorbell accesses refused */
#define HPU_REG_UQ_DB_REFUSED		0x007c	/* RO */
/* Spec version 9: the device clock (ns); reading LO latches HI */
#define HPU_REG_DEVICE_TIME_LO		0x0080	/* RO */
#define HPU_REG_DEVICE_TIME_HI		0x0084	/* RO */

#define HPU_REG_ID_BLOCK_END		0x0088

/* Hard reset completes this long after it is started (device time). */
#define HPU_HARD_RESET_NS		10000000
/* Spec version 4 boot timing (device time), firmware-and-telemetry.md */
#define HPU_ROM_INIT_NS			10000000
#define HPU_FW_VERIFY_NS		10000000
#define HPU_CPU_BOOT_NS			20000000
#define HPU_FLASH_WRITE_NS		50000000
#define HPU_MBOX_ANSWER_NS		100000

/* Fault injection block (test only), BAR0 + 0x3000 */
#define HPU_REG_INJ_HANG		0x3000	/* RW: engine mask */
#define HPU_REG_INJ_DMA_FAIL		0x3004	/* RW: engine mask */
#define HPU_REG_INJ_ECC_ADDR_LO		0x3008	/* RW */
#define HPU_REG_INJ_ECC_ADDR_HI		0x300c	/* RW */
#define HPU_REG_INJ_ECC_CTRL		0x3010	/* WO */
#define   HPU_INJ_ECC_CE		1
#define   HPU_INJ_ECC_UE		2
#define HPU_REG_INJ_FW			0x3014	/* WO */
#define   HPU_INJ_FW_HB_STOP		1
#define   HPU_INJ_FW_FATAL		2
#define HPU_REG_INJ_FLASH		0x3018	/* WO */
#define   HPU_INJ_FLASH_CORRUPT		1
#define   HPU_FW_FATAL_INJECTED		0xdead
#define HPU_REG_INJ_MMU_INV		0x301c	/* RW */
#define   HPU_INJ_MMU_INV_STUCK		1
#define HPU_REG_INJ_QUIESCE		0x3020	/* RW */
#define   HPU_INJ_QUIESCE_STREAMS	1
#define   HPU_INJ_QUIESCE_HARD_RESET	2
#define HPU_REG_INJ_ROCE_CMD		0x3024	/* RW */
#define   HPU_INJ_ROCE_CMD_STUCK	1

/* Management CPU block, BAR0 + 0x4000 */
#define HPU_REG_CPU_STATUS		0x4000	/* RO */
#define   HPU_CPU_OFF			0
#define   HPU_CPU_BOOTING		1
#define   HPU_CPU_RUNNING		2
#define   HPU_CPU_HALTED		3
#define   HPU_CPU_ROM_INIT		4
#define   HPU_CPU_WAIT_IMAGE		5
#define   HPU_CPU_VERIFYING		6
#define   HPU_CPU_BOOT_FAILED		7
#define HPU_REG_HB_REQ			0x4004	/* RW */
#define HPU_REG_HB_ACK			0x4008	/* RO */
#define HPU_REG_HB_EVENT_MS		0x400c	/* RW */
#define HPU_REG_FW_ERROR		0x4010	/* RO */
/* The firmware answers a heartbeat request within this time. */
#define HPU_HB_ACK_NS			1000000

/* Spec version 4: Documentation/hw/firmware-and-telemetry.md */
#define HPU_REG_BOOT_CMD		0x4014	/* WO */
#define   HPU_BOOT_HOST			1
#define   HPU_BOOT_FLASH		2
#define HPU_REG_BOOT_ERROR		0x4018	/* RO: enum hpu_fw_refusal */
#define HPU_REG_FW_IMG_ADDR_LO		0x401c	/* RW */
#define HPU_REG_FW_IMG_ADDR_HI		0x4020	/* RW */
#define HPU_REG_FW_IMG_SIZE		0x4024	/* RW */
#define HPU_REG_FW_VERSION		0x4028	/* RO */
#define HPU_REG_FW_MIN_VERSION		0x402c	/* RO */
#define HPU_REG_FLASH_VERSION		0x4030	/* RO */
#define HPU_REG_FLASH_CMD		0x4034	/* WO */
#define   HPU_FLASH_WRITE		1
#define HPU_REG_FLASH_STATUS		0x4038	/* RO */
#define   HPU_FLASH_IDLE		0
#define   HPU_FLASH_BUSY		1
#define   HPU_FLASH_DONE		2
#define   HPU_FLASH_FAILED		3
#define HPU_REG_FLASH_ERROR		0x403c	/* RO */
#define HPU_REG_FW_BUILD(n)		(0x4040 + 4 * (n))	/* RO, n = 0..7 */
#define   HPU_FW_BUILD_LEN		32

/* Refusal codes of BOOT_ERROR and FLASH_ERROR: HPU_FW_ERR_* in hpu_fw_image.h */

/* Mailbox, BAR0 + 0x4100 */
#define HPU_REG_MBOX_CMD		0x4100	/* RW */
#define   HPU_MBOX_OPCODE_MASK		0x000000ff
#define   HPU_MBOX_TAG_SHIFT		16
#define HPU_REG_MBOX_ARG0		0x4104	/* RW */
#define HPU_REG_MBOX_ARG1		0x4108	/* RW */
#define HPU_REG_MBOX_STATUS		0x410c	/* RO */
#define   HPU_MBOX_BUSY			0x00000001
#define   HPU_MBOX_DONE			0x00000002
#define   HPU_MBOX_RESULT_MASK		0x0000ff00
#define   HPU_MBOX_RESULT_SHIFT		8
#define HPU_REG_MBOX_RESP0		0x4110	/* RO */
#define HPU_REG_MBOX_RESP1		0x4114	/* RO */
#define HPU_MBOX_GET_LIMIT		1
#define HPU_MBOX_SET_LIMIT		2
#define HPU_MBOX_GET_LIMIT_RANGE	3
#define HPU_MBOX_GET_CLOCK		4
#define HPU_MBOX_GET_INFO		5
#define HPU_MBOX_OK			0
#define HPU_MBOX_BAD_OPCODE		1
#define HPU_MBOX_BAD_ARG		2
#define HPU_LIMIT_TEMP_MAX		0
#define HPU_LIMIT_TEMP_CRIT		1
#define HPU_LIMIT_POWER_CAP		2
#define HPU_LIMIT_HBM_TEMP_MAX		3
#define HPU_NUM_LIMITS			4

/* Sensors, BAR0 + 0x4200 */
#define HPU_REG_TEMP(n)			(0x4200 + 4 * (n))	/* RO, n = 0..2 */
#define   HPU_TEMP_DIE			0
#define   HPU_TEMP_HBM			1
#define   HPU_TEMP_BOARD		2
#define   HPU_NUM_TEMPS			3
#define HPU_REG_POWER_MW		0x4210	/* RO */
#define HPU_REG_ENERGY_LO		0x4214	/* RO */
#define HPU_REG_ENERGY_HI		0x4218	/* RO */
#define HPU_REG_VOLT_CORE_MV		0x421c	/* RO */
#define HPU_REG_VOLT_HBM_MV		0x4220	/* RO */
#define HPU_REG_CLK_CUR_MHZ		0x4224	/* RO */
#define HPU_REG_CLK_MAX_MHZ		0x4228	/* RO */
#define HPU_REG_CLK_HBM_MHZ		0x422c	/* RO */
#define HPU_REG_THROTTLE		0x4230	/* RO */
#define   HPU_THROTTLE_THERMAL		0x00000001
#define   HPU_THROTTLE_POWER		0x00000002
#define HPU_REG_ALARM			0x4234	/* RO */
#define   HPU_ALARM_TEMP_MAX		0x00000001
#define   HPU_ALARM_TEMP_CRIT		0x00000002
#define   HPU_ALARM_POWER_CAP		0x00000004
#define   HPU_ALARM_HBM_TEMP_MAX	0x00000008
#define HPU_REG_SENSOR_SEQ		0x4238	/* RO */
#define HPU_REG_BUSY_NS_LO(n)		(0x4300 + 8 * (n))	/* RO, n = 0..10 */
#define HPU_REG_BUSY_NS_HI(n)		(0x4304 + 8 * (n))	/* RO, n = 0..10 */

/*
 * Spec version 2: Documentation/hw/memory-and-queues.md
 */

/* MMU and HBM window block, BAR0 + 0x1000 */
#define HPU_REG_MMU_ASIDS		0x1000	/* RO */
#define   HPU_MMU_NUM_ASIDS		64
#define HPU_REG_MMU_INV			0x1004	/* WO */
#define   HPU_MMU_INV_ASID_MASK		0x0000003f
#define   HPU_MMU_INV_ALL		0x80000000
#define HPU_REG_MMU_INV_STATUS		0x1008	/* RO */
#define   HPU_MMU_INV_BUSY		0x00000001
#define HPU_REG_MMU_INV_COUNT		0x100c	/* RO */
#define HPU_REG_FAULT_ASID		0x1010	/* RO */
#define HPU_REG_FAULT_VA_LO		0x1014	/* RO */
#define HPU_REG_FAULT_VA_HI		0x1018	/* RO */
#define HPU_REG_FAULT_INFO		0x101c	/* RW1C (VALID) */
#define   HPU_FAULT_VALID		0x00000001
#define   HPU_FAULT_WRITE		0x00000002
#define   HPU_FAULT_CAUSE_MASK		0x000000f0
#define   HPU_FAULT_ENGINE_MASK		0x0000ff00
#define   HPU_FAULT_NOT_PRESENT		1
#define   HPU_FAULT_PROT		2
#define   HPU_FAULT_BAD_PTE		3
#define   HPU_FAULT_RANGE		4
#define HPU_REG_FAULT_COUNT		0x1020	/* RO */
#define HPU_REG_HBM_WIN_BASE_LO		0x1024	/* RW */
#define HPU_REG_HBM_WIN_BASE_HI		0x1028	/* RW */
#define HPU_REG_SCRUB_ADDR_LO		0x1030	/* RW */
#define HPU_REG_SCRUB_ADDR_HI		0x1034	/* RW */
#define HPU_REG_SCRUB_SIZE_LO		0x1038	/* RW */
#define HPU_REG_SCRUB_SIZE_HI		0x103c	/* RW */
#define HPU_REG_SCRUB_CTRL		0x1040	/* WO */
#define   HPU_SCRUB_START		0x00000001
#define HPU_REG_SCRUB_STATUS		0x1044	/* RO */
#define   HPU_SCRUB_BUSY		0x00000001
#define   HPU_SCRUB_ERROR		0x00000002
#define HPU_REG_SCRUB_COUNT		0x1048	/* RO */
#define HPU_REG_MMU_ROOT_LO(n)		(0x1200 + 8 * (n))	/* RW */
#define HPU_REG_MMU_ROOT_HI(n)		(0x1204 + 8 * (n))	/* RW */
#define   HPU_MMU_ROOT_VALID		0x00000001

/* Page-table entries (64-bit, in HBM) */
#define HPU_PTE_PRESENT			0x0000000000000001ULL
#define HPU_PTE_WRITE			0x0000000000000002ULL
#define HPU_PTE_HUGE			0x0000000000000004ULL
#define HPU_PTE_HOST			0x0000000000000008ULL
#define HPU_PTE_ADDR_MASK		0x000ffffffffff000ULL
#define HPU_PTE_RSVD_MASK		0xfff0000000000ff0ULL
#define HPU_PT_ENTRIES			512
#define HPU_PT_LEVELS			4
#define HPU_VA_BITS			48
#define HPU_PAGE_SHIFT			12
#define HPU_HUGE_PAGE_SHIFT		21
/* ASID 0 (kernel, untranslated): bit 63 selects a host bus address. */
#define HPU_ADDR_HOST			0x8000000000000000ULL
/* Host bus addresses the device can drive: 52 bits. */
#define HPU_HOST_ADDR_LIMIT		0x0010000000000000ULL

/* Event queue block, BAR0 + 0x2000 */
#define HPU_REG_EQ_LO			0x2000	/* RW */
#define HPU_REG_EQ_HI			0x2004	/* RW */
#define HPU_REG_EQ_SIZE			0x2008	/* RW */
#define HPU_REG_EQ_PI			0x200c	/* RO */
#define HPU_REG_EQ_CI			0x2010	/* RW */
#define HPU_REG_EQ_CTRL			0x2014	/* RW */
#define   HPU_EQ_ENABLE			0x00000001
#define HPU_REG_EQ_DROPPED		0x2018	/* RO */

/*
 * Engine indexes (spec version 6, Documentation/hw/compute.md): 0-7 the DMA
 * engines, 8 the TPC cluster, 9 and 10 the MMEs.  Each has a queue manager
 * at HPU_REG_QM_STREAM(e, 0) and MSI-X vector HPU_VEC_ENGINE(e).
 */
#define HPU_ENGINE_DMA0			0
#define HPU_ENGINE_TPC			8
#define HPU_ENGINE_MME0			9
#define HPU_ENGINE_MME(n)		(9 + (n))
#define HPU_NUM_ENGINES			11

/*
 * Queue managers: 4 streams per engine up to spec version 9.  Spec version
 * 10 has 16: streams 0-3 are the kernel streams (HPU_QM_STREAMS, all a
 * version 9 driver uses), 4-15 user streams (HPU_QS_USER_FIRST on).
 */
#define HPU_QM_STREAMS			4
#define HPU_QM_KSTREAMS			4
#define HPU_QM_ALL_STREAMS		16
#define HPU_QS_USER_FIRST		4
#define HPU_REG_QM_STREAM(e, s)		(0x10000 + 0x1000 * (e) + 0x100 * (s))
#define HPU_QS_RING_LO			0x00	/* RW */
#define HPU_QS_RING_HI			0x04	/* RW */
#define HPU_QS_RING_SIZE		0x08	/* RW */
#define HPU_QS_PI			0x0c	/* RW: doorbell */
#define HPU_QS_CI			0x10	/* RO */
#define HPU_QS_CQ_LO			0x14	/* RW */
#define HPU_QS_CQ_HI			0x18	/* RW */
#define HPU_QS_CQ_SIZE			0x1c	/* RW */
#define HPU_QS_CQ_PI			0x20	/* RO */
#define HPU_QS_CTRL			0x24	/* RW */
#define   HPU_QS_CTRL_ENABLE		0x00000001
#define   HPU_QS_CTRL_IRQ_EN		0x00000002
#define   HPU_QS_CTRL_RESUME		0x00000004	/* v10, user: leave ERROR */
#define   HPU_QS_CTRL_ABORT		0x00000008	/* v10, user: ABORTED */
#define HPU_QS_STATUS			0x28	/* RO */
#define   HPU_QS_STATUS_IDLE		0x00000001
#define   HPU_QS_STATUS_WAITING		0x00000002
#define   HPU_QS_STATUS_HALTED		0x00000004
#define   HPU_QS_STATUS_HUNG		0x00000008
#define   HPU_QS_STATUS_ERROR		0x00000010	/* v10: error stop */
#define   HPU_QS_STATUS_FAULT		0x00000020	/* v10: queue fault */
#define   HPU_QS_STATUS_TIMEOUT		0x00000040	/* v10: TMO_MS */
/* Spec version 10: user streams only (unmapped on kernel streams) */
#define HPU_QS_ASID			0x2c	/* RW: 1-63 */
#define   HPU_QS_ASID_MASK		0x0000003f
/* Spec version 9: write-back record, interrupt moderation, counters */
#define HPU_QS_WB_LO			0x30	/* RW: 32-byte aligned, 0 off */
#define HPU_QS_WB_HI			0x34	/* RW */
#define HPU_QS_ARM_LO			0x38	/* RW: v10, user; the write arms */
#define HPU_QS_ARM_HI			0x3c	/* RW: v10, user */
#define HPU_QS_IRQ_MOD			0x40	/* RW */
#define   HPU_QS_IRQ_MOD_DELAY_MASK	0x0000ffff	/* us, 0: no bound */
#define   HPU_QS_IRQ_MOD_COUNT_MASK	0x00ff0000	/* 0, 1: every record */
#define HPU_QS_SIGNAL			0x44	/* RW: v10, user */
#define   HPU_QS_SIGNAL_SOB_MASK	0x0000001f	/* of the ASID's block */
#define   HPU_QS_SIGNAL_EN		0x00000100
#define HPU_QS_TMO_MS			0x48	/* RW: v10, user; 0 off */
#define HPU_QS_START_LO			0x4c	/* RW: v10, user */
#define HPU_QS_START_HI			0x50	/* RW: v10, user */
#define HPU_QS_DONE_LO			0x54	/* RO: latches DONE_HI */
#define HPU_QS_DONE_HI			0x58	/* RO */
#define HPU_QS_BUSY_NS_LO		0x5c	/* RO: latches BUSY_NS_HI */
#define HPU_QS_BUSY_NS_HI		0x60	/* RO */
#define HPU_QS_RING_MIN			2
#define HPU_QS_RING_MAX			4096

/*
 * Spec version 10: the doorbell page of stream s of engine e; an aligned
 * 32-bit write of HPU_UQDB_DB on a user stream's page is its PI write.
 */
#define HPU_UQDB_BASE			0x400000
#define HPU_UQDB_PAGE(e, s)		(0x400000 + 0x1000 * (16 * (e) + (s)))
#define HPU_UQDB_PAGE_SIZE		0x1000
#define HPU_UQDB_PAGES			(HPU_NUM_ENGINES * HPU_QM_ALL_STREAMS)
#define HPU_UQDB_DB			0x000	/* WO */

/* Spec version 10: a user stream's completion record (32 bytes) */
#define HPU_UCQE_SIZE			32
#define HPU_UCQE_SEQ			0	/* u64 */
#define HPU_UCQE_STATUS			8	/* u32 */
#define HPU_UCQE_WHERE			12	/* u32: as HPU_CQE_* bytes 12-15 */
#define HPU_UCQE_INDEX			16	/* u64: descriptor number */
#define HPU_UCQE_TIME			24	/* u64: device ns */

/*
 * Spec version 9: the write-back record (32 bytes, little-endian) a stream
 * with WB set writes before it raises its vector and when it stops.
 */
#define HPU_WB_SIZE			32
#define HPU_WB_DONE			0	/* u64: DONE */
#define HPU_WB_BUSY_NS			8	/* u64: BUSY_NS */
#define HPU_WB_CQ_PI			16	/* u32: CQ_PI */
#define HPU_WB_STATUS			20	/* u32: STATUS */
#define HPU_WB_ERR_STATUS		24	/* u32: last failed record's status */
#define HPU_WB_ERR_WHERE		28	/* u32: its bytes 12-15 */

/* Descriptor (32 bytes) and completion record (16 bytes) sizes */
#define HPU_DESC_SIZE			32
#define HPU_CQE_SIZE			16
#define HPU_CB_MAX_SIZE			0x100000

/*
 * Completion record bytes 12-15 (spec version 5): the offset of the failed
 * packet (24 bits, so any offset in a 1 MiB command buffer fits), engine
 * and stream.
 */
#define HPU_CQE_OFFSET_MASK		0x00ffffff
#define HPU_CQE_ENGINE_SHIFT		24
#define HPU_CQE_ENGINE_MASK		0x0f000000
#define HPU_CQE_STREAM_SHIFT		28
#define HPU_CQE_STREAM_MASK		0xf0000000

/* Completion status */
#define HPU_CQ_OK			0
#define HPU_CQ_MMU_FAULT		1
#define HPU_CQ_BAD_PACKET		2
#define HPU_CQ_PRIV			3
#define HPU_CQ_BAD_DESC			4
#define HPU_CQ_BUS_ERROR		5
#define HPU_CQ_ABORTED			6
#define HPU_CQ_ECC			7
/* Spec version 6: Documentation/hw/compute.md */
#define HPU_CQ_BAD_LAUNCH		8
#define HPU_CQ_TPC_ILLEGAL		9
#define HPU_CQ_TPC_ASSERT		10

/* Packets */
#define HPU_PKT_OPCODE_MASK		0x000000ff
#define HPU_PKT_NOP			0x00	/* 8 bytes */
#define HPU_PKT_LIN_DMA			0x01	/* 32 bytes */
#define   HPU_LIN_DMA_MEMSET		0x00000001
#define HPU_PKT_WRITE_VALUE		0x02	/* 16 bytes */
#define HPU_PKT_SOB_UPDATE		0x03	/* 16 bytes */
#define   HPU_SOB_OP_SET		0
#define   HPU_SOB_OP_ADD		1
#define HPU_PKT_WAIT			0x04	/* 16 bytes */
#define   HPU_WAIT_GE			0
#define   HPU_WAIT_EQ			1
#define   HPU_WAIT_GE_WRAP		2	/* spec version 9 */
#define HPU_PKT_WREG			0x05	/* 16 bytes, privileged */
/* Spec version 6: Documentation/hw/compute.md */
#define HPU_PKT_TPC_LAUNCH		0x06	/* 16 bytes, TPC engine only */
#define HPU_PKT_MME_GEMM		0x07	/* 16 bytes, MME engines only */
#define   HPU_LAUNCH_DESC_ALIGN		64

/* Sync manager */
#define HPU_NUM_SOBS			2048
#define HPU_SOBS_PER_ASID		32
#define HPU_REG_SOB(n)			(0x20000 + 4 * (n))	/* RW */

/* Event queue entries (32 bytes) */
#define HPU_EQE_SIZE			32
#define HPU_EVENT_MMU_FAULT		1
#define HPU_EVENT_BAD_PACKET		2
#define HPU_EVENT_PRIV			3
#define HPU_EVENT_ENGINE_HANG		4
#define HPU_EVENT_DMA_BUS_ERROR		5
#define HPU_EVENT_ECC_CE		6
#define HPU_EVENT_ECC_UE		7
#define HPU_EVENT_THERMAL		8
#define HPU_EVENT_POWER			9
#define HPU_EVENT_FW_FATAL		10
#define HPU_EVENT_HEARTBEAT		11
#define HPU_EVENT_RESET_DONE		12
#define HPU_EVENT_BAD_LAUNCH		13
#define HPU_EVENT_TPC_ILLEGAL		14
#define HPU_EVENT_TPC_ASSERT		15
#define HPU_EVENT_STREAM_TIMEOUT	16	/* v10: a user stream's TMO_MS */
#define HPU_EVENT_ENGINE_NONE		0xff
#define HPU_EVENT_SEV_INFO		0
#define HPU_EVENT_SEV_ERROR		1
#define HPU_EVENT_SEV_FATAL		2

/*
 * Spec version 7: Documentation/hw/nic.md.  Port p (p < ENGINES.NIC) has a
 * 16 KiB block at HPU_NIC_PORT_BASE(p); the HPU_NIC_* register offsets are
 * relative to it.  Offsets 0x1000-0x3fff of a block are reserved for the
 * port's RoCE engine.
 */
#define HPU_NIC_MAX_PORTS		10
#define HPU_NIC_PORT_BASE(p)		(0x100000 + 0x4000 * (p))
#define HPU_NIC_PORT_SIZE		0x4000
#define HPU_NIC_ROCE_OFFSET		0x1000
#define HPU_NIC_BLOCK_END		0x128000	/* end of the ten blocks */
/* Doorbell pages, reserved for the RoCE engine: one 4 KiB page each */
#define HPU_DB_PAGE_BASE		0x800000
#define HPU_DB_PAGE(d)			(0x800000 + 0x1000 * (d))
#define HPU_DB_PAGES			2048

#define HPU_NIC_PORT_ID			0x000	/* RO */
#define HPU_NIC_PERM_MAC_LO		0x004	/* RO: MAC bytes 0-3, byte 0 in 7:0 */
#define HPU_NIC_PERM_MAC_HI		0x008	/* RO: MAC bytes 4-5 in 15:0 */
#define HPU_NIC_MAC_LO			0x00c	/* RW */
#define HPU_NIC_MAC_HI			0x010	/* RW: bits 31:16 not stored */
#define HPU_NIC_LINK_STATUS		0x014	/* RO */
#define   HPU_NIC_LINK_STATUS_UP	0x00000001
#define   HPU_NIC_LINK_STATUS_ATTACHED	0x00000002
#define HPU_NIC_SPEED			0x018	/* RO: Mb/s */
#define   HPU_NIC_SPEED_MBPS		100000
#define HPU_NIC_MTU			0x01c	/* RW */
#define   HPU_NIC_MTU_MIN		68
#define   HPU_NIC_MTU_MAX		9216
#define   HPU_NIC_MTU_DEFAULT		1500
#define HPU_NIC_CTRL			0x020	/* RW */
#define   HPU_NIC_CTRL_TX_EN		0x00000001
#define   HPU_NIC_CTRL_RX_EN		0x00000002
#define HPU_NIC_IRQ_STATUS		0x024	/* RW1C: pending causes */
#define HPU_NIC_IRQ_MASK		0x028	/* RW: causes that raise the vector */
#define   HPU_NIC_IRQ_TX		0x00000001
#define   HPU_NIC_IRQ_RX		0x00000002
#define   HPU_NIC_IRQ_LINK		0x00000004
#define   HPU_NIC_IRQ_ERROR		0x00000008
#define   HPU_NIC_IRQ_RX_NOBUF		0x00000010
#define   HPU_NIC_IRQ_ALL		0x0000001f
#define HPU_NIC_ERR_STATUS		0x02c	/* RW1C */
#define   HPU_NIC_ERR_BAD_CONFIG	0x00000001
#define   HPU_NIC_ERR_BAD_PI		0x00000002
#define   HPU_NIC_ERR_TX_DESC		0x00000004
#define   HPU_NIC_ERR_TX_FETCH		0x00000008
#define   HPU_NIC_ERR_RX_DESC		0x00000010
#define   HPU_NIC_ERR_RX_FETCH		0x00000020
#define   HPU_NIC_ERR_ALL		0x0000003f
#define HPU_NIC_LINK_CHANGES		0x030	/* RO */
#define HPU_NIC_RX_FILTER		0x034	/* RW: apart from CTRL's enable bits */
#define   HPU_NIC_RX_FILTER_PROMISC	0x00000001
#define HPU_NIC_TX_BASE_LO		0x040	/* RW: 64-byte aligned */
#define HPU_NIC_TX_BASE_HI		0x044	/* RW */
#define HPU_NIC_TX_SIZE			0x048	/* RW: entries */
#define HPU_NIC_TX_PI			0x04c	/* RW: doorbell */
#define HPU_NIC_TX_CI			0x050	/* RO */
#define HPU_NIC_RX_BASE_LO		0x060	/* RW: 64-byte aligned */
#define HPU_NIC_RX_BASE_HI		0x064	/* RW */
#define HPU_NIC_RX_SIZE			0x068	/* RW: entries */
#define HPU_NIC_RX_PI			0x06c	/* RW */
#define HPU_NIC_RX_CI			0x070	/* RO */
#define HPU_NIC_INJ_CTRL		0x080	/* RW: fault injection (test only) */
#define   HPU_NIC_INJ_LINK_DOWN		0x00000001
#define   HPU_NIC_INJ_DROP_TX_MASK	0x0000ff00
#define   HPU_NIC_INJ_DROP_TX_SHIFT	8
#define   HPU_NIC_INJ_DROP_RX_MASK	0x00ff0000
#define   HPU_NIC_INJ_DROP_RX_SHIFT	16
#define   HPU_NIC_INJ_SWAP_TX		0x01000000
#define   HPU_NIC_INJ_DEFINED		0x01ffff01

/* Counters: 64 bits as LO/HI pairs; reading LO latches HI */
#define HPU_NIC_TX_FRAMES_LO		0x100	/* RO */
#define HPU_NIC_TX_FRAMES_HI		0x104	/* RO */
#define HPU_NIC_TX_BYTES_LO		0x108	/* RO */
#define HPU_NIC_TX_BYTES_HI		0x10c	/* RO */
#define HPU_NIC_RX_FRAMES_LO		0x110	/* RO */
#define HPU_NIC_RX_FRAMES_HI		0x114	/* RO */
#define HPU_NIC_RX_BYTES_LO		0x118	/* RO */
#define HPU_NIC_RX_BYTES_HI		0x11c	/* RO */
#define HPU_NIC_RX_MCAST_LO		0x120	/* RO */
#define HPU_NIC_RX_MCAST_HI		0x124	/* RO */
#define HPU_NIC_TX_ERRORS_LO		0x128	/* RO */
#define HPU_NIC_TX_ERRORS_HI		0x12c	/* RO */
#define HPU_NIC_TX_DROPS_LO		0x130	/* RO */
#define HPU_NIC_TX_DROPS_HI		0x134	/* RO */
#define HPU_NIC_RX_ERRORS_LO		0x138	/* RO */
#define HPU_NIC_RX_ERRORS_HI		0x13c	/* RO */
#define HPU_NIC_RX_NOBUF_LO		0x140	/* RO */
#define HPU_NIC_RX_NOBUF_HI		0x144	/* RO */
#define HPU_NIC_RX_DROPS_LO		0x148	/* RO */
#define HPU_NIC_RX_DROPS_HI		0x14c	/* RO */
#define HPU_NIC_RX_FILTERED_LO		0x150	/* RO */
#define HPU_NIC_RX_FILTERED_HI		0x154	/* RO */
#define HPU_NIC_INJ_DROPPED_LO		0x158	/* RO */
#define HPU_NIC_INJ_DROPPED_HI		0x15c	/* RO */
/* Counter i (HPU_NIC_CNT_*) at these offsets, in the table's order */
#define HPU_NIC_CNT_LO(i)		(0x100 + 8 * (i))
#define HPU_NIC_CNT_HI(i)		(0x104 + 8 * (i))
#define   HPU_NIC_CNT_TX_FRAMES		0
#define   HPU_NIC_CNT_TX_BYTES		1
#define   HPU_NIC_CNT_RX_FRAMES		2
#define   HPU_NIC_CNT_RX_BYTES		3
#define   HPU_NIC_CNT_RX_MCAST		4
#define   HPU_NIC_CNT_TX_ERRORS		5
#define   HPU_NIC_CNT_TX_DROPS		6
#define   HPU_NIC_CNT_RX_ERRORS		7
#define   HPU_NIC_CNT_RX_NOBUF		8
#define   HPU_NIC_CNT_RX_DROPS		9
#define   HPU_NIC_CNT_RX_FILTERED	10
#define   HPU_NIC_CNT_INJ_DROPPED	11
#define   HPU_NIC_NUM_COUNTERS		12

/* Rings: 16-byte descriptors, ASID 0 addresses, base 64-byte aligned */
#define HPU_NIC_DESC_SIZE		16
#define HPU_NIC_RING_ALIGN		64
#define HPU_NIC_RING_MIN		16
#define HPU_NIC_RING_MAX		4096
/* The status byte of both descriptors: bit 0 DONE, bits 3:1 the code */
#define HPU_NIC_DESC_DONE		0x01
#define HPU_NIC_DESC_CODE_SHIFT		1
#define HPU_NIC_DESC_CODE_MASK		0x0e
#define HPU_NIC_DESC_OK			0
#define HPU_NIC_DESC_BAD_DESC		1
#define HPU_NIC_DESC_BAD_LEN		2	/* transmit only */
#define HPU_NIC_DESC_BUS_ERROR		3
#define HPU_NIC_DESC_LINK_DOWN		4	/* transmit only */

/* Transmit descriptor: byte offsets (little-endian) */
#define HPU_NIC_TXD_ADDR		0	/* u64, driver */
#define HPU_NIC_TXD_LEN			8	/* u16, driver: 1 to 16383 */
#define HPU_NIC_TXD_FLAGS		10	/* u8, driver */
#define   HPU_NIC_TXD_EOP		0x01
#define HPU_NIC_TXD_STATUS		11	/* u8, device */
#define HPU_NIC_TXD_RSVD		12	/* u32, zero */
#define HPU_NIC_TX_BUF_MAX		16383
#define HPU_NIC_TX_MAX_BUFS		16	/* buffers per frame */

/* Receive descriptor: byte offsets (little-endian) */
#define HPU_NIC_RXD_ADDR		0	/* u64, driver */
#define HPU_NIC_RXD_SIZE		8	/* u16, driver: 64 to 16383 */
#define HPU_NIC_RXD_LEN			10	/* u16, device */
#define HPU_NIC_RXD_STATUS		12	/* u8, device */
#define HPU_NIC_RXD_FLAGS		13	/* u8, device */
#define   HPU_NIC_RXD_BROADCAST		0x01
#define   HPU_NIC_RXD_MULTICAST		0x02
#define   HPU_NIC_RXD_VLAN		0x04
#define HPU_NIC_RXD_RSVD		14	/* u16, zero */
#define HPU_NIC_RX_BUF_MIN		64
#define HPU_NIC_RX_BUF_MAX		16383

/* Frames: without FCS; MTU + 18 bytes at most, padded to 60 when sent */
#define HPU_NIC_FRAME_MIN		14
#define HPU_NIC_FRAME_PAD		60
#define HPU_NIC_FRAME_OVERHEAD		18	/* addresses, one VLAN tag, type */
#define HPU_NIC_RX_FIFO_BYTES		(256 * 1024)
/*
 * Permanent MAC of port p: 02:48:50:u[13]:u[14]:(u[15] & 0xf0 | p), u the
 * device UUID.
 */
#define HPU_NIC_MAC_PREFIX0		0x02
#define HPU_NIC_MAC_PREFIX1		0x48
#define HPU_NIC_MAC_PREFIX2		0x50

/*
 * Spec version 7 part 2: the RoCE v2 engine, Documentation/hw/roce.md.
 * HPU_ROCE_* offsets are relative to HPU_ROCE_BASE; HPU_ROCE_PORT_* to
 * HPU_ROCE_PORT_BASE(p); HPU_ROCE_DB_* to HPU_ROCE_DB_PAGE(d).
 */
#define HPU_ROCE_BASE			0x140000
#define HPU_ROCE_SIZE			0x1000
#define HPU_ROCE_PORT_BASE(p)		(HPU_NIC_PORT_BASE(p) + HPU_NIC_ROCE_OFFSET)
#define HPU_ROCE_PORT_SIZE		0x1000
#define HPU_ROCE_DB_BASE		0x800000
#define HPU_ROCE_DB_PAGE(d)		(HPU_ROCE_DB_BASE + 0x1000 * (d))
#define HPU_ROCE_DB_PAGE_SIZE		0x1000
#define HPU_ROCE_DB_PAGES		2048

/* Control block */
#define HPU_ROCE_MAX_QP			0x000	/* RO */
#define HPU_ROCE_MAX_CQ			0x004	/* RO */
#define HPU_ROCE_MAX_SRQ		0x008	/* RO */
#define HPU_ROCE_MAX_MR			0x00c	/* RO */
#define HPU_ROCE_MAX_WR			0x010	/* RO */
#define HPU_ROCE_MAX_CQE		0x014	/* RO */
#define HPU_ROCE_MAX_SGE		0x018	/* RO */
#define   HPU_ROCE_NUM_QP		4096
#define   HPU_ROCE_NUM_CQ		4096
#define   HPU_ROCE_NUM_SRQ		1024
#define   HPU_ROCE_NUM_MR		65536
#define   HPU_ROCE_NUM_WR		32768
#define   HPU_ROCE_NUM_CQE		65536
#define   HPU_ROCE_NUM_SGE		32
#define   HPU_ROCE_QPN_FIRST		2	/* QPNs 0 and 1 are reserved */
#define HPU_ROCE_CTRL			0x020	/* RW */
#define   HPU_ROCE_CTRL_ENABLE		0x00000001
#define HPU_ROCE_CMD			0x040	/* RW: a write starts the command */
#define   HPU_ROCE_CMD_OP_MASK		0x000000ff
#define   HPU_ROCE_CMD_TYPE_SHIFT	8
#define   HPU_ROCE_CMD_TYPE_MASK	0x0000ff00
#define HPU_ROCE_CMD_INDEX		0x044	/* RW */
#define HPU_ROCE_CMD_STATUS		0x048	/* RO */
#define   HPU_ROCE_CMD_BUSY		0x00000001
#define   HPU_ROCE_CMD_RESULT_SHIFT	8
#define   HPU_ROCE_CMD_RESULT_MASK	0x0000ff00
#define HPU_ROCE_CMD_DONE		0x04c	/* RO */
#define HPU_ROCE_EQ_LO			0x080	/* RW */
#define HPU_ROCE_EQ_HI			0x084	/* RW */
#define HPU_ROCE_EQ_SIZE		0x088	/* RW */
#define   HPU_ROCE_EQ_SIZE_MIN		16
#define   HPU_ROCE_EQ_SIZE_MAX		4096
#define HPU_ROCE_EQ_PI			0x08c	/* RO */
#define HPU_ROCE_EQ_CI			0x090	/* RW */
#define HPU_ROCE_EQ_CTRL		0x094	/* RW */
#define   HPU_ROCE_EQ_ENABLE		0x00000001
#define   HPU_ROCE_EQ_IRQ		0x00000002
#define   HPU_ROCE_EQ_BUSY		0x00000004	/* an entry is being written */
#define HPU_ROCE_EQ_DROPPED		0x098	/* RO */
#define HPU_ROCE_DB_REFUSED_LO		0x0c0	/* RO */
#define HPU_ROCE_DB_REFUSED_HI		0x0c4	/* RO */
#define HPU_ROCE_CMD_DATA(n)		(0x100 + 4 * (n))	/* RW: image word n < 64 */
#define   HPU_ROCE_IMAGE_SIZE		256

/* Commands: CMD bits 7:0 */
#define HPU_ROCE_OP_CREATE		1
#define HPU_ROCE_OP_MODIFY		2
#define HPU_ROCE_OP_QUERY		3
#define HPU_ROCE_OP_DESTROY		4
/* CMD bits 15:8 */
#define HPU_ROCE_TYPE_QP		1
#define HPU_ROCE_TYPE_CQ		2
#define HPU_ROCE_TYPE_SRQ		3
#define HPU_ROCE_TYPE_MR		4
/* CMD_STATUS.RESULT */
#define HPU_ROCE_RES_OK			0
#define HPU_ROCE_RES_BAD_INDEX		1
#define HPU_ROCE_RES_BAD_IMAGE		2
#define HPU_ROCE_RES_BAD_STATE		3
#define HPU_ROCE_RES_BAD_OP		4

/* QP image: byte offsets (little endian; GIDs and MACs in wire order) */
#define HPU_ROCE_QP_STATE		0	/* u8 */
#define   HPU_ROCE_QPS_RESET		0
#define   HPU_ROCE_QPS_INIT		1
#define   HPU_ROCE_QPS_RTR		2
#define   HPU_ROCE_QPS_RTS		3
#define   HPU_ROCE_QPS_SQD		4	/* never entered */
#define   HPU_ROCE_QPS_SQE		5	/* never entered */
#define   HPU_ROCE_QPS_ERR		6
#define HPU_ROCE_QP_TYPE		1	/* u8 */
#define   HPU_ROCE_QPT_RC		2
#define   HPU_ROCE_QPT_UD		4
#define HPU_ROCE_QP_PORT		2	/* u8 */
#define HPU_ROCE_QP_MTU			3	/* u8: 1 (256) to 5 (4096) */
#define   HPU_ROCE_MTU_MIN		1
#define   HPU_ROCE_MTU_MAX		5
#define HPU_ROCE_QP_MASK		4	/* u32, MODIFY */
#define   HPU_ROCE_QPM_STATE		(1u << 0)
#define   HPU_ROCE_QPM_ACCESS_FLAGS	(1u << 3)
#define   HPU_ROCE_QPM_PKEY_INDEX	(1u << 4)
#define   HPU_ROCE_QPM_PORT		(1u << 5)
#define   HPU_ROCE_QPM_QKEY		(1u << 6)
#define   HPU_ROCE_QPM_AV		(1u << 7)
#define   HPU_ROCE_QPM_PATH_MTU		(1u << 8)
#define   HPU_ROCE_QPM_TIMEOUT		(1u << 9)
#define   HPU_ROCE_QPM_RETRY_CNT	(1u << 10)
#define   HPU_ROCE_QPM_RNR_RETRY	(1u << 11)
#define   HPU_ROCE_QPM_RQ_PSN		(1u << 12)
#define   HPU_ROCE_QPM_MAX_QP_RD_ATOMIC	(1u << 13)
#define   HPU_ROCE_QPM_MIN_RNR_TIMER	(1u << 15)
#define   HPU_ROCE_QPM_SQ_PSN		(1u << 16)
#define   HPU_ROCE_QPM_MAX_DEST_RD_ATOMIC (1u << 17)
#define   HPU_ROCE_QPM_DEST_QPN		(1u << 20)
#define HPU_ROCE_QP_ASID		8	/* u16 */
#define HPU_ROCE_QP_DB_PAGE		10	/* u16 */
#define HPU_ROCE_QP_PD			12	/* u32 */
#define HPU_ROCE_QP_SEND_CQ		16	/* u32 */
#define HPU_ROCE_QP_RECV_CQ		20	/* u32 */
#define HPU_ROCE_QP_SRQ			24	/* u32: SRQ + 1, 0 none */
#define HPU_ROCE_QP_SQ_LOG_ENTRIES	28	/* u8: 1-15 */
#define HPU_ROCE_QP_SQ_LOG_STRIDE	29	/* u8: 6-10 */
#define HPU_ROCE_QP_RQ_LOG_ENTRIES	30	/* u8: 0-15 */
#define HPU_ROCE_QP_RQ_LOG_STRIDE	31	/* u8: 5-10 */
#define HPU_ROCE_QP_SQ_ADDR		32	/* u64 */
#define HPU_ROCE_QP_RQ_ADDR		40	/* u64 */
#define HPU_ROCE_QP_DBR_ADDR		48	/* u64: u32 SQ PI, u32 RQ PI */
#define HPU_ROCE_QP_ACCESS		56	/* u32 */
#define HPU_ROCE_QP_QKEY		60	/* u32 */
#define HPU_ROCE_QP_DEST_QPN		64	/* u32 */
#define HPU_ROCE_QP_SQ_PSN		68	/* u32 */
#define HPU_ROCE_QP_RQ_PSN		72	/* u32 */
#define HPU_ROCE_QP_TIMEOUT		76	/* u8 */
#define HPU_ROCE_QP_RETRY_CNT		77	/* u8: 0-7 */
#define HPU_ROCE_QP_RNR_RETRY		78	/* u8: 0-7, 7 unlimited */
#define HPU_ROCE_QP_MIN_RNR_TIMER	79	/* u8: 0-31 */
#define HPU_ROCE_QP_MAX_RD_ATOMIC	80	/* u8: 0-16 */
#define HPU_ROCE_QP_MAX_DEST_RD_ATOMIC	81	/* u8: 0-16 */
#define   HPU_ROCE_MAX_RD		16
#define HPU_ROCE_QP_SGID_INDEX		82	/* u8 */
#define HPU_ROCE_QP_HOP_LIMIT		83	/* u8 */
#define HPU_ROCE_QP_TCLASS		84	/* u8 */
#define HPU_ROCE_QP_FLOW_LABEL		88	/* u32: bits 19:0 */
#define HPU_ROCE_QP_DMAC		92	/* 6 bytes */
#define HPU_ROCE_QP_DGID		100	/* 16 bytes */
#define HPU_ROCE_QP_CFG_END		116	/* 116-255 zero in CREATE/MODIFY */
#define HPU_ROCE_QP_Q_SQ_CI		128	/* u32, QUERY only */
#define HPU_ROCE_QP_Q_RQ_CI		132	/* u32, QUERY only */
#define HPU_ROCE_QP_Q_SQ_PSN		136	/* u32, QUERY only: next PSN to send */
#define HPU_ROCE_QP_Q_RQ_PSN		140	/* u32, QUERY only: expected PSN */
#define HPU_ROCE_QP_Q_CAUSE		144	/* u8, QUERY only */
#define HPU_ROCE_QP_Q_CNT(i)		(160 + 8 * (i))	/* u64, QUERY only */
#define   HPU_ROCE_QPC_RETRANSMITS	0
#define   HPU_ROCE_QPC_TIMEOUTS		1
#define   HPU_ROCE_QPC_RNR_NAK_SENT	2
#define   HPU_ROCE_QPC_RNR_NAK_RCVD	3
#define   HPU_ROCE_QPC_SEQ_NAK_SENT	4
#define   HPU_ROCE_QPC_SEQ_NAK_RCVD	5
#define   HPU_ROCE_QPC_TX_PKTS		6
#define   HPU_ROCE_QPC_TX_BYTES		7
#define   HPU_ROCE_QPC_RX_PKTS		8
#define   HPU_ROCE_QPC_RX_BYTES		9
#define   HPU_ROCE_QPC_NUM		10
/* Access flags (QP and MR) */
#define HPU_ROCE_ACCESS_LOCAL_WRITE	0x1	/* MR only */
#define HPU_ROCE_ACCESS_REMOTE_WRITE	0x2
#define HPU_ROCE_ACCESS_REMOTE_READ	0x4

/* CQ image */
#define HPU_ROCE_CQ_ASID		0	/* u16 */
#define HPU_ROCE_CQ_DB_PAGE		2	/* u16 */
#define HPU_ROCE_CQ_LOG_ENTRIES		4	/* u8: 1-16 */
#define HPU_ROCE_CQ_RING_ADDR		8	/* u64: 32-byte aligned */
#define HPU_ROCE_CQ_DBR_ADDR		16	/* u64: u32 CI, u32 reserved */
#define HPU_ROCE_CQ_Q_PI		32	/* u32, QUERY only */
#define HPU_ROCE_CQ_Q_ERROR		36	/* u8, QUERY only */
#define HPU_ROCE_CQ_Q_ARM		37	/* u8, QUERY only */
#define   HPU_ROCE_CQ_ARM_NONE		0
#define   HPU_ROCE_CQ_ARM_NEXT		1
#define   HPU_ROCE_CQ_ARM_SOLICITED	2

/* SRQ image */
#define HPU_ROCE_SRQ_ASID		0	/* u16 */
#define HPU_ROCE_SRQ_DB_PAGE		2	/* u16 */
#define HPU_ROCE_SRQ_PD			4	/* u32 */
#define HPU_ROCE_SRQ_LOG_ENTRIES	8	/* u8: 1-15 */
#define HPU_ROCE_SRQ_LOG_STRIDE		9	/* u8: 5-10 */
#define HPU_ROCE_SRQ_LIMIT		12	/* u32, MODIFY */
#define HPU_ROCE_SRQ_RING_ADDR		16	/* u64 */
#define HPU_ROCE_SRQ_DBR_ADDR		24	/* u64: u32 PI (software), u32 CI (device) */

/* MR image */
#define HPU_ROCE_MR_KEY			0	/* u32: index << 8 | variant */
#define   HPU_ROCE_KEY_INDEX_SHIFT	8
#define HPU_ROCE_MR_PD			4	/* u32 */
#define HPU_ROCE_MR_ASID		8	/* u16 */
#define HPU_ROCE_MR_ACCESS		12	/* u32 */
#define HPU_ROCE_MR_VA			16	/* u64 */
#define HPU_ROCE_MR_LENGTH		24	/* u64: 1 to 2^48 */
#define HPU_ROCE_MR_DVA			32	/* u64 */
#define   HPU_ROCE_MR_LENGTH_MAX	(1ull << 48)

/* Doorbell page (32-bit writes, reads 0) */
#define HPU_ROCE_DB_SQ_DB		0x000	/* WO: QPN */
#define HPU_ROCE_DB_CQ_ARM		0x008	/* WO: CQN | SOLICITED */
#define   HPU_ROCE_DB_NUM_MASK		0x00ffffff
#define   HPU_ROCE_DB_ARM_SOLICITED	0x80000000

/* Send WQE: 64-byte header, UD address vector at 64, then SGEs or inline */
#define HPU_ROCE_WQE_OPCODE		0	/* u8 */
#define   HPU_ROCE_WR_SEND		0
#define   HPU_ROCE_WR_SEND_WITH_IMM	1
#define   HPU_ROCE_WR_RDMA_WRITE	2
#define   HPU_ROCE_WR_RDMA_WRITE_WITH_IMM 3
#define   HPU_ROCE_WR_RDMA_READ		4
#define HPU_ROCE_WQE_FLAGS		1	/* u8 */
#define   HPU_ROCE_WQE_SIGNALED		0x01
#define   HPU_ROCE_WQE_SOLICITED	0x02
#define   HPU_ROCE_WQE_FENCE		0x04
#define   HPU_ROCE_WQE_INLINE		0x08
#define HPU_ROCE_WQE_NUM_SGE		2	/* u8 */
#define HPU_ROCE_WQE_IMM		4	/* 4 bytes, wire order */
#define HPU_ROCE_WQE_WR_ID		8	/* u64 */
#define HPU_ROCE_WQE_REMOTE_ADDR	16	/* u64, RDMA */
#define HPU_ROCE_WQE_RKEY		24	/* u32, RDMA */
#define HPU_ROCE_WQE_QKEY		24	/* u32, UD */
#define HPU_ROCE_WQE_DEST_QPN		28	/* u32, UD */
#define HPU_ROCE_WQE_INLINE_LEN		32	/* u32 */
#define HPU_ROCE_WQE_HDR_SIZE		64
#define HPU_ROCE_WQE_AV			64	/* UD address vector, 32 bytes */
#define   HPU_ROCE_AV_DMAC		0	/* 6 bytes */
#define   HPU_ROCE_AV_SGID_INDEX	6
#define   HPU_ROCE_AV_HOP_LIMIT		7
#define   HPU_ROCE_AV_TCLASS		8
#define   HPU_ROCE_AV_FLOW_LABEL	12	/* u32 */
#define   HPU_ROCE_AV_DGID		16	/* 16 bytes */
#define   HPU_ROCE_AV_SIZE		32
#define HPU_ROCE_SGE_ADDR		0	/* u64 */
#define HPU_ROCE_SGE_LENGTH		8	/* u32 */
#define HPU_ROCE_SGE_LKEY		12	/* u32 */
#define HPU_ROCE_SGE_SIZE		16
/* Receive WQE */
#define HPU_ROCE_RWQE_WR_ID		0	/* u64 */
#define HPU_ROCE_RWQE_NUM_SGE		8	/* u8 */
#define HPU_ROCE_RWQE_HDR_SIZE		16
#define HPU_ROCE_MSG_MAX		0x40000000u
#define HPU_ROCE_GRH_SIZE		40

/* CQE (32 bytes) */
#define HPU_ROCE_CQE_SIZE		32
#define HPU_ROCE_CQE_WR_ID		0	/* u64 */
#define HPU_ROCE_CQE_BYTE_LEN		8	/* u32 */
#define HPU_ROCE_CQE_IMM		12	/* 4 bytes, wire order */
#define HPU_ROCE_CQE_QPN_OP		16	/* u32: QPN 23:0, opcode 31:24 */
#define   HPU_ROCE_CQE_OP_SHIFT		24
#define   HPU_ROCE_WC_SEND		0
#define   HPU_ROCE_WC_RDMA_WRITE	1
#define   HPU_ROCE_WC_RDMA_READ		2
#define   HPU_ROCE_WC_RECV		128
#define   HPU_ROCE_WC_RECV_RDMA_WITH_IMM 129
#define HPU_ROCE_CQE_STATUS		20	/* u8 */
#define   HPU_ROCE_WC_SUCCESS		0
#define   HPU_ROCE_WC_LOC_LEN_ERR	1
#define   HPU_ROCE_WC_LOC_QP_OP_ERR	2
#define   HPU_ROCE_WC_LOC_PROT_ERR	4
#define   HPU_ROCE_WC_WR_FLUSH_ERR	5
#define   HPU_ROCE_WC_REM_INV_REQ_ERR	9
#define   HPU_ROCE_WC_REM_ACCESS_ERR	10
#define   HPU_ROCE_WC_REM_OP_ERR	11
#define   HPU_ROCE_WC_RETRY_EXC_ERR	12
#define   HPU_ROCE_WC_RNR_RETRY_EXC_ERR	13
#define HPU_ROCE_CQE_FLAGS		21	/* u8 */
#define   HPU_ROCE_CQE_WITH_IMM		0x01
#define   HPU_ROCE_CQE_GRH		0x02
#define   HPU_ROCE_CQE_WQE_IDX		0x04	/* WQE_IDX holds the index */
#define HPU_ROCE_CQE_WQE_IDX_OFF	22	/* u16: send WQE index, bits 15:0 */
#define HPU_ROCE_CQE_SRC_QPN		24	/* u32, UD receives */
#define HPU_ROCE_CQE_OWNER		31	/* u8: bit 0 */
#define   HPU_ROCE_CQE_OWNER_BIT	0x01

/* Event ring entry (32 bytes) */
#define HPU_ROCE_EQE_SIZE		32
#define HPU_ROCE_EQE_TYPE		0	/* u16 */
#define HPU_ROCE_EQE_PORT		2	/* u16 */
#define HPU_ROCE_EQE_OBJECT		4	/* u32 */
#define HPU_ROCE_EQE_TIMESTAMP		8	/* u64 */
#define HPU_ROCE_EQE_CAUSE		16	/* u32 */
#define HPU_ROCE_EQE_ADDR		24	/* u64 */
#define   HPU_ROCE_EV_CQ_COMPLETION	1
#define   HPU_ROCE_EV_QP_FATAL		2
#define   HPU_ROCE_EV_QP_LAST_WQE_REACHED 3
#define   HPU_ROCE_EV_SRQ_LIMIT		4
#define   HPU_ROCE_EV_CQ_ERROR		5
#define   HPU_ROCE_EV_PORT_ACTIVE	6
#define   HPU_ROCE_EV_PORT_DOWN		7
/* Causes: QP_FATAL, CQ_ERROR and the QP image's error cause */
#define HPU_ROCE_CAUSE_NONE		0
#define HPU_ROCE_CAUSE_MMU_FAULT	1
#define HPU_ROCE_CAUSE_CQ_ERROR		2
#define HPU_ROCE_CAUSE_BAD_WQE		3
#define HPU_ROCE_CAUSE_LOC_PROT		4
#define HPU_ROCE_CAUSE_RETRY_EXC	5
#define HPU_ROCE_CAUSE_RNR_RETRY_EXC	6
#define HPU_ROCE_CAUSE_REM_ACCESS	7
#define HPU_ROCE_CAUSE_REM_INV_REQ	8
#define HPU_ROCE_CAUSE_OVERFLOW		9
#define HPU_ROCE_CAUSE_MODIFY		10
/* MMU_FAULT events of the device event queue name this engine */
#define HPU_ROCE_EVENT_ENGINE		0xff

/* Port RoCE registers */
#define HPU_ROCE_PORT_CTRL		0x000	/* RW */
#define   HPU_ROCE_PORT_ENABLE		0x00000001
#define HPU_ROCE_PORT_GID(n)		(0x100 + 0x20 * (n))	/* RW: 4 words */
#define   HPU_ROCE_PORT_GID_VALID_OFF	0x10
#define   HPU_ROCE_PORT_GID_VALID	0x00000001
#define   HPU_ROCE_PORT_GIDS		16
#define HPU_ROCE_PORT_CNT(n)		(0x400 + 8 * (n))	/* RO: low word */
#define HPU_ROCE_PORT_CNT_HI(n)		(0x404 + 8 * (n))
#define   HPU_ROCE_CNT_TX_PKTS		0
#define   HPU_ROCE_CNT_TX_BYTES		1
#define   HPU_ROCE_CNT_RX_PKTS		2
#define   HPU_ROCE_CNT_RX_BYTES		3
#define   HPU_ROCE_CNT_RX_ICRC_ERR	4
#define   HPU_ROCE_CNT_RX_MALFORMED	5
#define   HPU_ROCE_CNT_RX_UNKNOWN_QP	6
#define   HPU_ROCE_CNT_RX_DROPPED	7
#define   HPU_ROCE_CNT_SEQ_NAK_SENT	8
#define   HPU_ROCE_CNT_SEQ_NAK_RCVD	9
#define   HPU_ROCE_CNT_RNR_NAK_SENT	10
#define   HPU_ROCE_CNT_RNR_NAK_RCVD	11
#define   HPU_ROCE_CNT_RETRANSMITS	12
#define   HPU_ROCE_CNT_ACK_TIMEOUTS	13
#define   HPU_ROCE_CNT_REM_ACCESS_ERR	14
#define   HPU_ROCE_CNT_TX_DISCARDS	15
#define   HPU_ROCE_CNT_DUP_REQUESTS	16
#define   HPU_ROCE_NUM_COUNTERS		17

/* RoCE v2 on the wire */
#define HPU_ROCE_UDP_PORT		4791
#define HPU_ROCE_UDP_SPORT_BASE		0xc000
#define HPU_ROCE_PKEY			0xffff
#define HPU_ROCE_ACKREQ_EVERY		16
#define HPU_ROCE_MAX_INFLIGHT		128

/* Soft reset completes this long after it is started (virtual time). */
#define HPU_SOFT_RESET_NS		100000

#endif /* HPU_REGS_H */
