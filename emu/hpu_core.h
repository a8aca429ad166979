/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: core logic, independent of QEMU.
 *
 * The core implements Documentation/hw/registers.md: the BAR0 register
 * file, the soft reset state machine, the interrupt self-test and the
 * guest error bits.  It knows nothing about QEMU; it reaches its
 * environment (MSI-X, logging, a one-shot timer) only through
 * struct hpu_core_ops, so the same file builds into QEMU (emu/hpu_pci.c)
 * and into host unit tests (tests/unit/emu/, which include this header
 * inside extern "C").
 *
 * BAR0 is decoded by a table of register blocks (struct hpu_block).  The
 * identity and control block lives in hpu_core.c; later hardware blocks
 * (queue managers, DMA engines, MMU) are further files, each providing a
 * struct hpu_block and its state in struct hpu_core.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_CORE_H
#define HPU_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hpu_regs.h"

/* Property limits (Documentation/hw/registers.md, "Device properties"). */
#define HPU_HBM_SIZE_GRANULE    (256ULL << 20)
#define HPU_HBM_SIZE_MIN        (256ULL << 20)
#define HPU_HBM_SIZE_MAX        (32ULL << 30)
#define HPU_HBM_SIZE_DEFAULT    (4ULL << 30)
#define HPU_NIC_PORTS_MAX       10
#define HPU_NIC_PORTS_DEFAULT   10
#define HPU_SERIAL_DEFAULT      "HPU-0000000000"

/* Fixed configuration of the H1 chip. */
#define HPU_H1_DMA_ENGINES      8
#define HPU_H1_TPC_ENGINES      8
#define HPU_H1_MME_ENGINES      2
#define HPU_H1_HBM_STACKS       4
#define HPU_H1_REVISION         0x00000100      /* 1.0 */

struct hpu_core;

/*
 * Services the environment provides to the core.  All callbacks receive
 * the opaque pointer given to hpu_core_init().  None may be NULL.
 */
struct hpu_core_ops {
    /* Signal MSI-X vector @vector (< HPU_MSIX_VECTORS) once. */
    void (*raise_msix)(void *opaque, unsigned int vector);
    /* Report a guest programming error (printf format, no newline). */
    void (*log_guest_error)(void *opaque, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
    /* Call hpu_core_timer_expired() @ns nanoseconds of device time from now. */
    void (*arm_timer)(void *opaque, uint64_t ns);
    /* Cancel a pending timer, if any. */
    void (*cancel_timer)(void *opaque);
};

/* Device configuration, from the QEMU properties. */
struct hpu_core_config {
    uint64_t hbm_size;                  /* bytes */
    unsigned int nic_ports;
    char serial[HPU_SERIAL_LEN];        /* ASCII, NUL padded, not terminated */
    uint8_t uuid[HPU_UUID_LEN];         /* RFC 4122 byte order */
};

/*
 * A decoded region of BAR0.  @read and @write get the offset relative to
 * BAR0; accesses reaching them are aligned 32-bit.  They return one of
 * enum hpu_access.
 */
enum hpu_access {
    HPU_ACCESS_OK,
    HPU_ACCESS_UNMAPPED,        /* no register at this offset */
    HPU_ACCESS_READ_ONLY,       /* write to a read-only register */
};

struct hpu_block {
    const char *name;
    uint32_t base;
    uint32_t size;
    enum hpu_access (*read)(struct hpu_core *c, uint32_t offset,
                            uint32_t *val);
    enum hpu_access (*write)(struct hpu_core *c, uint32_t offset,
                             uint32_t val);
};

/* Identity and control block state. */
struct hpu_ctrl {
    uint32_t scratch;
    uint32_t status;
    uint32_t reset_count;
    uint32_t irq_test_count;
    uint32_t error;
    uint32_t irq_status;
    uint32_t irq_mask;
};

struct hpu_core {
    const struct hpu_core_ops *ops;
    void *opaque;
    struct hpu_core_config cfg;
    struct hpu_ctrl ctrl;
};

/*
 * Check a configuration against the property limits.  Returns true if it
 * is valid; otherwise false with a message in @err (if @err is not NULL).
 * @serial is the NUL-terminated property string.
 */
bool hpu_core_check_config(uint64_t hbm_size, unsigned int nic_ports,
                           const char *serial, char *err, size_t errlen);

/*
 * Fill @cfg from validated property values (@serial NUL-terminated, at
 * most HPU_SERIAL_LEN characters; @uuid HPU_UUID_LEN bytes).
 */
void hpu_core_make_config(struct hpu_core_config *cfg, uint64_t hbm_size,
                          unsigned int nic_ports, const char *serial,
                          const uint8_t *uuid);

/* Bind the core to its environment and apply a power-on reset. */
void hpu_core_init(struct hpu_core *c, const struct hpu_core_ops *ops,
                   void *opaque, const struct hpu_core_config *cfg);

/*
 * Power-on / PCI function reset: every register to its reset value, any
 * soft reset in progress abandoned (its timer cancelled).
 */
void hpu_core_reset(struct hpu_core *c);

/*
 * BAR0 access of @size bytes (1..8) at @addr.  Accesses that break the
 * access rules are flagged in ERROR.BAD_ACCESS and logged; such a read
 * returns 0 and such a write is dropped.
 */
uint64_t hpu_core_read(struct hpu_core *c, uint64_t addr, unsigned int size);
void hpu_core_write(struct hpu_core *c, uint64_t addr, uint64_t val,
                    unsigned int size);

/* The timer armed through hpu_core_ops.arm_timer has expired. */
void hpu_core_timer_expired(struct hpu_core *c);

#endif /* HPU_CORE_H */
