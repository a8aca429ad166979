/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: declarations shared by the core's files (hpu_core.c,
 * hpu_mem.c, hpu_qm.c).  Not for the QEMU glue or the tests.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_INTERNAL_H
#define HPU_INTERNAL_H

#include "hpu_core.h"

#define HPU_LOG(c, ...) ((c)->ops->log_guest_error((c)->opaque, __VA_ARGS__))

#define HPU_MIN(a, b)   ((a) < (b) ? (a) : (b))

/* The core lock; hpu_unlock() then raises the vectors latched under it. */
void hpu_lock(struct hpu_core *c);
void hpu_unlock(struct hpu_core *c);

/* Under the lock: raise MSI-X @vector once the lock is dropped. */
static inline void hpu_raise(struct hpu_core *c, unsigned int vector)
{
    c->irq_pending |= 1u << vector;
}

static inline void hpu_set_error(struct hpu_core *c, uint32_t bit)
{
    c->ctrl.error |= bit;
}

static inline bool hpu_is_pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
    return v >= lo && v <= hi && !(v & (v - 1));
}

static inline uint32_t hpu_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t hpu_le64(const uint8_t *p)
{
    return (uint64_t)hpu_le32(p) | (uint64_t)hpu_le32(p + 4) << 32;
}

static inline void hpu_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void hpu_put_le32(uint8_t *p, uint32_t v)
{
    hpu_put_le16(p, (uint16_t)v);
    hpu_put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline void hpu_put_le64(uint8_t *p, uint64_t v)
{
    hpu_put_le32(p, (uint32_t)v);
    hpu_put_le32(p + 4, (uint32_t)(v >> 32));
}

/* hpu_mem.c: HBM, MMU, window, scrubber */
extern const struct hpu_block hpu_mmu_block;
bool hpu_hbm_init(struct hpu_core *c);
void hpu_hbm_fini(struct hpu_core *c);
/* Power-on (@power_on) or soft reset of the MMU block. */
void hpu_mmu_reset(struct hpu_core *c, bool power_on);

/* An MMU fault (or bus error) met by an engine access. */
struct hpu_fault {
    int status;                 /* HPU_CQ_MMU_FAULT or HPU_CQ_BUS_ERROR */
    uint64_t va;
    uint32_t info;              /* FAULT_INFO layout, VALID set */
    uint16_t asid;
};

/*
 * Copy @len bytes between @buf and [@va, @va + @len) of address space
 * @asid on behalf of engine @e (@write: buf to memory).  Called without
 * the lock.  Returns HPU_CQ_OK, or the failure with @f filled (an MMU
 * fault is already latched and counted; the caller posts its event).
 */
int hpu_mem_xfer(struct hpu_core *c, unsigned int e, uint16_t asid,
                 uint64_t va, void *buf, uint64_t len, bool write,
                 struct hpu_fault *f);

/* hpu_qm.c: queue managers, engines, sync objects, event queue */
extern const struct hpu_block hpu_eq_block;
extern const struct hpu_block hpu_qm_block;
extern const struct hpu_block hpu_sob_block;
void hpu_qm_reset(struct hpu_core *c, bool power_on);
/* Soft reset starts: abort every stream's work. */
void hpu_qm_stop(struct hpu_core *c);
/* No engine runs and no descriptor is in flight. */
bool hpu_qm_quiet(struct hpu_core *c);
void hpu_qm_fini(struct hpu_core *c);

#endif /* HPU_INTERNAL_H */
