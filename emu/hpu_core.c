/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: core logic (register file, BAR0 decode, soft and hard
 * reset, device timers, self-test, locking).
 *
 * Plain C99, no QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <string.h>
#include <stdio.h>

#include "hpu_internal.h"
#include "hpu_roce.h"

#define HPU_MISC_CAUSES         (HPU_IRQ_SELF_TEST | HPU_IRQ_RESET_DONE | \
                                 HPU_IRQ_FW_BOOT | HPU_IRQ_FLASH_DONE | \
                                 HPU_IRQ_MBOX_DONE)

/* Locking */

void hpum_lock(HpuCore *c)
{
    c->ops->lock(c->opaque);
}

/*
 * Vectors latched under the lock are raised once it drops.  The raise
 * counts as in flight (an MSI-X message is a DMA write), so a reset that
 * cleared irq_pending also waits for a raise already collected here.  A
 * function in reset (power-on reset or FLR not yet done) raises nothing.
 */
void hpum_unlock(HpuCore *c)
{
    uint64_t pending = c->irq_pending;
    uint32_t epoch = c->epoch;
    unsigned int v;

    c->irq_pending = 0;
    if (pending && (c->in_reset || !hpum_dma_begin(c, epoch))) {
        pending = 0;
    }
    c->ops->unlock(c->opaque);
    if (!pending) {
        return;
    }
    for (v = 0; pending; v++, pending >>= 1) {
        if (pending & 1) {
            c->ops->raise_msix(c->opaque, v);
        }
    }
    c->ops->lock(c->opaque);
    hpum_dma_end(c, epoch);
    c->ops->unlock(c->opaque);
}

/*
 * Accesses in flight, counted per epoch: those of the current epoch in
 * @inflight, those begun before the last reset in @inflight_old.  Only the
 * latter hold a reset up, so work the guest starts after a reset (none can
 * while the function is in reset) never extends it.
 */
bool hpum_dma_begin(HpuCore *c, uint32_t epoch)
{
    if (c->dead || epoch != c->epoch) {
        return false;
    }
    c->inflight++;
    return true;
}

void hpum_dma_end(HpuCore *c, uint32_t epoch)
{
    if (epoch == c->epoch) {
        c->inflight--;
        return;
    }
    c->inflight_old--;
    if (!c->inflight_old && c->in_reset && !c->dead) {
        c->ops->reset_drained(c->opaque);
    }
}

/* Under the lock: whether no access begun before the last reset is left. */
static bool hpum_dma_quiet(HpuCore *c)
{
    return !c->inflight_old;
}

/*
 * Under the lock: start a new epoch.  Work of older epochs begins no
 * access any more, and what it computed is dropped when it looks; the
 * accesses it had already begun move to @inflight_old.  Nothing waits
 * here: the caller finishes its reset once they are done.
 */
static void hpum_epoch_bump(HpuCore *c)
{
    c->epoch++;
    c->inflight_old += c->inflight;
    c->inflight = 0;
    hpum_job_alert(c);
}

/*
 * Device timers.  Each HpuTimerId has a deadline in device time;
 * the environment's one timer is kept armed for the earliest.
 */

static void hpum_timer_program(HpuCore *c)
{
    HpuTimers *t = &c->tmr;
    uint64_t first = UINT64_MAX, now;
    unsigned int i;

    if (c->dead) {
        t->armed = 0;           /* the environment's timer may be gone */
    }
    for (i = 0; i < HPU_TMR_COUNT; i++) {
        if ((t->armed & (1u << i)) && t->deadline[i] < first) {
            first = t->deadline[i];
        }
    }
    if (!t->armed) {
        if (t->programmed) {
            c->ops->cancel_timer(c->opaque);
            t->programmed = false;
        }
        return;
    }
    if (t->programmed && t->programmed_at == first) {
        return;
    }
    now = hpum_now(c);
    c->ops->arm_timer(c->opaque, first > now ? first - now : 0);
    t->programmed = true;
    t->programmed_at = first;
}

void hpum_timer_arm(HpuCore *c, HpuTimerId id, uint64_t ns)
{
    c->tmr.deadline[id] = hpum_now(c) + ns;
    c->tmr.armed |= 1u << id;
    hpum_timer_program(c);
}

void hpum_timer_cancel(HpuCore *c, HpuTimerId id)
{
    if (c->tmr.armed & (1u << id)) {
        c->tmr.armed &= ~(1u << id);
        hpum_timer_program(c);
    }
}

bool hpum_timer_pending(HpuCore *c, HpuTimerId id)
{
    return c->tmr.armed & (1u << id);
}

static void hpum_timer_cancel_all(HpuCore *c)
{
    c->tmr.armed = 0;
    hpum_timer_program(c);
}

/* Configuration */

bool hpum_core_check_config(uint64_t hbm_size, unsigned int nic_ports,
                            const char *serial, char *err, size_t errlen)
{
    size_t i, len;

    if (hbm_size < HPU_HBM_SIZE_MIN || hbm_size > HPU_HBM_SIZE_MAX ||
        hbm_size % HPU_HBM_SIZE_GRANULE) {
        if (err) {
            snprintf(err, errlen,
                     "hbm-size %llu is invalid: it must be a multiple of "
                     "256 MiB from 256 MiB to 32 GiB",
                     (unsigned long long)hbm_size);
        }
        return false;
    }
    if (nic_ports > HPU_NIC_PORTS_MAX) {
        if (err) {
            snprintf(err, errlen, "nic-ports %u is invalid: at most %u",
                     nic_ports, HPU_NIC_PORTS_MAX);
        }
        return false;
    }
    if (!serial) {
        serial = "";
    }
    len = strlen(serial);
    if (len > HPU_SERIAL_LEN) {
        if (err) {
            snprintf(err, errlen,
                     "serial has %zu characters: at most %u are allowed",
                     len, HPU_SERIAL_LEN);
        }
        return false;
    }
    for (i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)serial[i];

        if (ch < 0x20 || ch > 0x7e) {
            if (err) {
                snprintf(err, errlen,
                         "serial has a character 0x%02x at position %zu: "
                         "only printable ASCII is allowed", ch, i);
            }
            return false;
        }
    }
    return true;
}

void hpum_core_make_config(HpuCoreConfig *cfg, uint64_t hbm_size,
                           unsigned int nic_ports, const char *serial,
                           const uint8_t *uuid)
{
    size_t len = serial ? strlen(serial) : 0;

    memset(cfg, 0, sizeof(*cfg));
    cfg->hbm_size = hbm_size;
    cfg->nic_ports = nic_ports;
    if (len > HPU_SERIAL_LEN) {
        len = HPU_SERIAL_LEN;
    }
    if (len) {
        memcpy(cfg->serial, serial, len);
    }
    memcpy(cfg->uuid, uuid, HPU_UUID_LEN);
}

/* Identity and control block (BAR0 + 0x0000) */

/* Latch MISC causes; raise vector 0 for those enabled in IRQ_MASK. */
static void hpum_ctrl_misc_cause(HpuCore *c, uint32_t cause,
                                 bool force_vector)
{
    c->ctrl.irq_status |= cause;
    if (force_vector || (cause & c->ctrl.irq_mask)) {
        hpum_raise(c, HPU_VEC_MISC);
    }
}

void hpum_misc_cause(HpuCore *c, uint32_t cause)
{
    hpum_ctrl_misc_cause(c, cause, false);
}

static void hpum_ctrl_soft_reset(HpuCore *c, uint32_t key)
{
    if (key != HPU_SOFT_RESET_KEY) {
        HPU_LOG(c, "SOFT_RESET written with 0x%08x, not the key 0x%08x",
                key, HPU_SOFT_RESET_KEY);
        hpum_set_error(c, HPU_ERROR_BAD_RESET_KEY);
        return;
    }
    if (c->ctrl.status & HPU_STATUS_RESET_BUSY) {
        HPU_LOG(c, "SOFT_RESET written while a soft reset is in progress");
        hpum_set_error(c, HPU_ERROR_RESET_BUSY);
        return;
    }
    HPU_TRACE(c, HPU_TRACE_SOFT_RESET, 0);
    c->ctrl.status = HPU_STATUS_RESET_BUSY;
    c->resetting = true;
    c->inj.hang = 0;            /* hung engines let go */
    hpum_job_alert(c);
    hpum_qm_stop(c);
    hpum_nic_stop(c);
    hpum_timer_arm(c, HPU_TMR_SOFT_RESET, HPU_SOFT_RESET_NS);
}

/*
 * Hard reset starts: every register but the identity block, IRQ_MASK and
 * the counters to its reset value, streams stopped without completion
 * records, the management CPU held off.  HBM is cleared (by the worker)
 * once no engine is inside a step; the reset completes after that.
 */
static void hpum_ctrl_hard_reset(HpuCore *c, uint32_t key)
{
    HpuCtrl keep = c->ctrl;

    if (key != HPU_HARD_RESET_KEY) {
        HPU_LOG(c, "HARD_RESET written with 0x%08x, not the key 0x%08x",
                key, HPU_HARD_RESET_KEY);
        hpum_set_error(c, HPU_ERROR_BAD_RESET_KEY);
        return;
    }
    HPU_TRACE(c, HPU_TRACE_HARD_RESET, 0);
    hpum_timer_cancel_all(c);    /* a soft reset in progress is abandoned */
    memset(&c->ctrl, 0, sizeof(c->ctrl));
    c->ctrl.irq_mask = keep.irq_mask;
    c->ctrl.reset_count = keep.reset_count;
    c->ctrl.irq_test_count = keep.irq_test_count;
    c->ctrl.hard_reset_count = keep.hard_reset_count;
    c->ctrl.ecc_ce_count = keep.ecc_ce_count;
    c->ctrl.ecc_ue_count = keep.ecc_ue_count;
    c->ctrl.uq_db_refused = keep.uq_db_refused;
    c->ctrl.status = HPU_STATUS_HARD_RESET_BUSY;
    c->resetting = false;
    c->hard_resetting = true;
    c->hbm.clear_job = false;
    c->hbm.clear_done = false;
    hpum_epoch_bump(c);          /* work begun before writes nothing more */
    memset(c->sob, 0, sizeof(c->sob));
    hpum_mmu_reset(c, HPU_RESET_HARD);
    hpum_qm_reset(c, HPU_RESET_HARD);
    hpum_nic_reset(c, HPU_RESET_HARD);
    hpum_ras_reset(c, HPU_RESET_HARD);
    hpum_fw_reset(c, HPU_RESET_HARD);
    /* INJ_QUIESCE.HARD_RESET: it never completes; only power-on ends it. */
    if (!(c->inj.quiesce & HPU_INJ_QUIESCE_HARD_RESET)) {
        hpum_timer_arm(c, HPU_TMR_HARD_RESET, HPU_HARD_RESET_NS);
    }
}

static void hpum_hard_reset_done(HpuCore *c)
{
    if (!c->hard_resetting) {
        return;
    }
    if (!hpum_qm_idle(c) || !hpum_dma_quiet(c)) {
        /*
         * A step or a DMA begun before the reset still runs outside the
         * lock: let it finish first.
         */
        hpum_timer_arm(c, HPU_TMR_HARD_RESET, HPU_SOFT_RESET_NS);
        return;
    }
    if (!c->hbm.clear_done) {
        /*
         * HBM is cleared on the worker, a chunk at a time, not here under
         * the BQL; it arms this timer again when the last chunk is done.
         */
        if (!c->hbm.clear_job) {
            hpum_hbm_clear_start(c);
        }
        return;
    }
    c->hbm.clear_done = false;
    c->hard_resetting = false;
    /* Reset values apply now: bits latched during the reset go too. */
    c->ctrl.error = 0;
    c->ctrl.time_hi = 0;
    c->ctrl.hard_reset_count++;
    c->ctrl.status = HPU_STATUS_READY;
    c->dq.reset_done = 2;
    HPU_TRACE(c, HPU_TRACE_HARD_RESET, 1);
    hpum_ctrl_misc_cause(c, HPU_IRQ_RESET_DONE, false);
    hpum_nic_hard_done(c);
    hpum_cpu_boot(c);
}

static void hpum_ctrl_irq_test(HpuCore *c, uint32_t vector)
{
    if (vector >= HPU_MSIX_VECTORS) {
        HPU_LOG(c, "IRQ_TEST written with vector %u, the device has %u",
                vector, HPU_MSIX_VECTORS);
        hpum_set_error(c, HPU_ERROR_BAD_IRQ_VECTOR);
        return;
    }
    c->ctrl.irq_test_count++;
    if (vector == HPU_VEC_MISC) {
        /* SELF_TEST is latched regardless of IRQ_MASK; vector 0 fires. */
        hpum_ctrl_misc_cause(c, HPU_IRQ_SELF_TEST, true);
    } else {
        hpum_raise(c, vector);
    }
}

static HpuAccess hpum_ctrl_read(HpuCore *c, uint32_t offset,
                                uint32_t *val)
{
    const HpuCoreConfig *cfg = &c->cfg;

    switch (offset) {
    case HPU_REG_MAGIC:
        *val = HPU_MAGIC_VALUE;
        break;
    case HPU_REG_CHIP_ID:
        *val = HPU_CHIP_ID_H1;
        break;
    case HPU_REG_REVISION:
        *val = HPU_H1_REVISION;
        break;
    case HPU_REG_SPEC_VERSION:
        *val = hpum_config_spec_version(cfg);
        break;
    case HPU_REG_HBM_SIZE_LO:
        *val = (uint32_t)cfg->hbm_size;
        break;
    case HPU_REG_HBM_SIZE_HI:
        *val = (uint32_t)(cfg->hbm_size >> 32);
        break;
    case HPU_REG_ENGINES:
        *val = hpum_field_prep(HPU_ENGINES_DMA_MASK, HPU_H1_DMA_ENGINES) |
               hpum_field_prep(HPU_ENGINES_TPC_MASK, HPU_H1_TPC_ENGINES) |
               hpum_field_prep(HPU_ENGINES_MME_MASK, HPU_H1_MME_ENGINES) |
               hpum_field_prep(HPU_ENGINES_NIC_MASK, cfg->nic_ports);
        break;
    case HPU_REG_HBM_STACKS:
        *val = HPU_H1_HBM_STACKS;
        break;
    case HPU_REG_SERIAL(0):
    case HPU_REG_SERIAL(1):
    case HPU_REG_SERIAL(2):
    case HPU_REG_SERIAL(3):
        *val = hpum_le32((const uint8_t *)cfg->serial +
                       (offset - HPU_REG_SERIAL(0)));
        break;
    case HPU_REG_UUID(0):
    case HPU_REG_UUID(1):
    case HPU_REG_UUID(2):
    case HPU_REG_UUID(3):
        *val = hpum_le32(cfg->uuid + (offset - HPU_REG_UUID(0)));
        break;
    case HPU_REG_SCRATCH:
        *val = c->ctrl.scratch;
        break;
    case HPU_REG_STATUS:
        *val = c->ctrl.status;
        break;
    case HPU_REG_SOFT_RESET:
    case HPU_REG_IRQ_TEST:
    case HPU_REG_HARD_RESET:
        /* Write-only: reads as zero (not an access-rule violation). */
        *val = 0;
        break;
    case HPU_REG_HARD_RESET_COUNT:
        *val = c->ctrl.hard_reset_count;
        break;
    case HPU_REG_WDT_MS:
        *val = c->ctrl.wdt_ms;
        break;
    case HPU_REG_ECC_CE_COUNT:
        *val = c->ctrl.ecc_ce_count;
        break;
    case HPU_REG_ECC_UE_COUNT:
        *val = c->ctrl.ecc_ue_count;
        break;
    case HPU_REG_RESET_COUNT:
        *val = c->ctrl.reset_count;
        break;
    case HPU_REG_IRQ_TEST_COUNT:
        *val = c->ctrl.irq_test_count;
        break;
    case HPU_REG_MSIX_VECTORS:
        *val = HPU_MSIX_VECTORS;
        break;
    case HPU_REG_ERROR:
        *val = c->ctrl.error;
        break;
    case HPU_REG_IRQ_STATUS:
        *val = c->ctrl.irq_status;
        break;
    case HPU_REG_IRQ_MASK:
        *val = c->ctrl.irq_mask;
        break;
    case HPU_REG_DEVICE_TIME_LO: {
        uint64_t t = hpum_now(c);

        c->ctrl.time_hi = (uint32_t)(t >> 32);
        *val = (uint32_t)t;
        break;
    }
    case HPU_REG_DEVICE_TIME_HI:
        *val = c->ctrl.time_hi;
        break;
    case HPU_REG_UQ_DB_REFUSED:
        *val = c->ctrl.uq_db_refused;
        break;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

static HpuAccess hpum_ctrl_write(HpuCore *c, uint32_t offset,
                                 uint32_t val)
{
    switch (offset) {
    case HPU_REG_SCRATCH:
        c->ctrl.scratch = val;
        break;
    case HPU_REG_SOFT_RESET:
        hpum_ctrl_soft_reset(c, val);
        break;
    case HPU_REG_IRQ_TEST:
        hpum_ctrl_irq_test(c, val);
        break;
    case HPU_REG_ERROR:
        c->ctrl.error &= ~val;
        break;
    case HPU_REG_IRQ_STATUS:
        c->ctrl.irq_status &= ~val;
        break;
    case HPU_REG_IRQ_MASK:
        c->ctrl.irq_mask = val & HPU_MISC_CAUSES;
        break;
    case HPU_REG_HARD_RESET:
        hpum_ctrl_hard_reset(c, val);
        break;
    case HPU_REG_WDT_MS:
        c->ctrl.wdt_ms = val;
        hpum_wdt_update(c, false);
        break;
    default:
        if (offset < HPU_REG_ID_BLOCK_END) {
            return HPU_ACCESS_READ_ONLY;
        }
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

/* BAR0 decode */

static const HpuBlock hpum_ctrl_block = {
    .name = "ctrl",
    .base = 0x0000,
    .size = HPU_REG_ID_BLOCK_END,
    .read = hpum_ctrl_read,
    .write = hpum_ctrl_write,
};

static const HpuBlock *const hpum_blocks[] = {
    &hpum_ctrl_block,
    &hpum_mmu_block,
    &hpum_eq_block,
    &hpum_inj_block,
    &hpum_cpu_block,
    &hpum_mbox_block,
    &hpum_sensor_block,
    &hpum_busy_block,
    &hpum_qm_block,
    &hpum_sob_block,
    &hpum_nic_block,
    &hpum_roce_block,
    &hpum_roce_db_block,
};

static const HpuBlock *hpum_find_block(uint64_t addr)
{
    size_t i;

    for (i = 0; i < HPU_ARRAY_LEN(hpum_blocks); i++) {
        const HpuBlock *b = hpum_blocks[i];

        if (addr >= b->base && addr - b->base < b->size) {
            return b;
        }
    }
    return NULL;
}

/* Apply the access rules; returns the block to use, or NULL if flagged. */
static const HpuBlock *hpum_check_access(HpuCore *c,
                                         uint64_t addr,
                                         unsigned int size,
                                         const char *what)
{
    const HpuBlock *b;

    if (size != 4 || (addr & 3)) {
        HPU_LOG(c, "%u-byte %s at BAR0+0x%llx: registers take aligned "
                "32-bit accesses", size, what, (unsigned long long)addr);
        hpum_set_error(c, HPU_ERROR_BAD_ACCESS);
        return NULL;
    }
    b = hpum_find_block(addr);
    if (!b) {
        HPU_LOG(c, "%s at unmapped BAR0+0x%llx", what,
                (unsigned long long)addr);
        hpum_set_error(c, HPU_ERROR_BAD_ACCESS);
    }
    return b;
}

static uint32_t hpum_core_read_locked(HpuCore *c, uint64_t addr,
                                      unsigned int size)
{
    const HpuBlock *b;
    uint32_t val = 0;

    /* Spec version 10: refused doorbell accesses only count. */
    if (hpum_uq_db_read(c, addr, size, &val)) {
        return val;
    }
    b = hpum_check_access(c, addr, size, "read");
    if (!b) {
        return 0;
    }
    if (b->read(c, (uint32_t)addr, &val) != HPU_ACCESS_OK) {
        HPU_LOG(c, "read at unmapped BAR0+0x%llx (%s block)",
                (unsigned long long)addr, b->name);
        hpum_set_error(c, HPU_ERROR_BAD_ACCESS);
        return 0;
    }
    return val;
}

uint64_t hpum_core_read(HpuCore *c, uint64_t addr, unsigned int size)
{
    uint32_t val;

    hpum_lock(c);
    if (c->in_reset) {
        HPU_LOG(c, "%u-byte read at BAR0+0x%llx while the function is in "
                "reset: all ones", size, (unsigned long long)addr);
        hpum_unlock(c);
        return hpum_all_ones(size);
    }
    val = hpum_core_read_locked(c, addr, size);
    hpum_unlock(c);
    return val;
}

static void hpum_core_write_locked(HpuCore *c, uint64_t addr,
                                   uint64_t val, unsigned int size)
{
    const HpuBlock *b;

    if (c->hard_resetting && addr != HPU_REG_IRQ_MASK) {
        /* Dropped whatever it is: a guest error, no ERROR bit. */
        HPU_LOG(c, "%u-byte write of 0x%llx to BAR0+0x%llx during a hard "
                "reset: dropped", size, (unsigned long long)val,
                (unsigned long long)addr);
        return;
    }
    /* Spec version 10: refused doorbell accesses only count. */
    if (hpum_uq_db_write(c, addr, val, size)) {
        return;
    }
    b = hpum_check_access(c, addr, size, "write");
    if (!b) {
        return;
    }
    switch (b->write(c, (uint32_t)addr, (uint32_t)val)) {
    case HPU_ACCESS_OK:
        return;
    case HPU_ACCESS_READ_ONLY:
        HPU_LOG(c, "write of 0x%08x to read-only BAR0+0x%llx (%s block)",
                (uint32_t)val, (unsigned long long)addr, b->name);
        break;
    case HPU_ACCESS_UNMAPPED:
    default:
        HPU_LOG(c, "write at unmapped BAR0+0x%llx (%s block)",
                (unsigned long long)addr, b->name);
        break;
    }
    hpum_set_error(c, HPU_ERROR_BAD_ACCESS);
}

void hpum_core_write(HpuCore *c, uint64_t addr, uint64_t val,
                     unsigned int size)
{
    hpum_lock(c);
    /*
     * BOOT_CMD, FLASH_CMD, SCRUB_CTRL: only latch a job for the worker.
     * No write of a dead core takes effect (the caller may be a DMA
     * returning into a device that was unplugged meanwhile).
     */
    if (c->in_reset) {
        HPU_LOG(c, "%u-byte write of 0x%llx to BAR0+0x%llx while the "
                "function is in reset: dropped", size,
                (unsigned long long)val, (unsigned long long)addr);
    } else if (!c->dead) {
        hpum_core_write_locked(c, addr, val, size);
    }
    hpum_unlock(c);
    hpum_events_drain(c);
}

void hpum_core_write_epoch(HpuCore *c, uint64_t addr, uint32_t val,
                           uint32_t epoch)
{
    hpum_lock(c);
    if (!c->dead && !c->in_reset && epoch == c->epoch) {
        hpum_core_write_locked(c, addr, val, 4);
    }
    hpum_unlock(c);
    hpum_events_drain(c);
}

/* Reset */

void hpum_core_reset(HpuCore *c)
{
    hpum_lock(c);
    if (c->dead) {
        hpum_unlock(c);
        return;
    }
    hpum_timer_cancel_all(c);
    memset(&c->ctrl, 0, sizeof(c->ctrl));
    c->ctrl.status = HPU_STATUS_READY;
    c->resetting = false;
    c->hard_resetting = false;
    c->irq_pending = 0;
    memset(c->sob, 0, sizeof(c->sob));
    hpum_mmu_reset(c, HPU_RESET_POWER_ON);
    hpum_nic_reset(c, HPU_RESET_POWER_ON);
    hpum_qm_reset(c, HPU_RESET_POWER_ON);
    hpum_ras_reset(c, HPU_RESET_POWER_ON);
    hpum_fw_reset(c, HPU_RESET_POWER_ON);
    hpum_hbm_unpoison(c);
    c->hbm.clear_job = false;   /* a hard reset's HBM clear is abandoned */
    c->hbm.clear_done = false;
    c->dq.reset_done = 0;
    hpum_cpu_boot(c);
    /*
     * No reset completes while DMA is in flight (spec version 5): the
     * generations and the epoch are bumped, so work in progress begins no
     * access and drops what it computed.  The accesses it had already
     * begun may still be running: the function stays in reset (BAR reads
     * all ones, writes dropped, no MSI-X) until the last of them ends and
     * the environment calls hpum_core_reset_finish().  Nothing waits here.
     */
    hpum_epoch_bump(c);
    c->in_reset = c->inflight_old != 0;
    c->irq_pending = 0;         /* nothing latched by the reset itself */
    HPU_TRACE(c, HPU_TRACE_RESET, c->inflight_old);
    hpum_unlock(c);
}

bool hpum_core_reset_finish(HpuCore *c)
{
    bool done = false;

    hpum_lock(c);
    if (c->in_reset && hpum_dma_quiet(c) && !c->dead) {
        c->in_reset = false;
        c->irq_pending = 0;     /* nothing latched by stale work */
        done = true;
        HPU_TRACE(c, HPU_TRACE_RESET_FINISH, 0);
    }
    hpum_unlock(c);
    return done;
}

bool hpum_core_in_reset(HpuCore *c)
{
    bool r;

    hpum_lock(c);
    r = c->in_reset;
    hpum_unlock(c);
    return r;
}

void hpum_core_kill(HpuCore *c)
{
    hpum_lock(c);
    c->dead = true;
    hpum_job_alert(c);
    hpum_timer_cancel_all(c);
    /*
     * Accesses in flight on other threads end on their own and then find
     * the core dead: nothing waits for them (the device is freed only
     * once every thread has let go of it).
     */
    hpum_epoch_bump(c);
    c->irq_pending = 0;
    hpum_unlock(c);
}

static void hpum_soft_reset_done(HpuCore *c)
{
    if (!(c->ctrl.status & HPU_STATUS_RESET_BUSY)) {
        return;                 /* stale: the reset was abandoned */
    }
    if (!hpum_qm_quiet(c) || !hpum_nic_quiet(c) || !hpum_roce_quiet(c) ||
        (c->mmu.scrub_status & HPU_SCRUB_BUSY)) {
        /*
         * Engines are still writing ABORTED records, or a scrub runs
         * (its BUSY bit must not clear before it is done): look again
         * later.
         */
        hpum_timer_arm(c, HPU_TMR_SOFT_RESET, HPU_SOFT_RESET_NS);
        return;
    }
    /*
     * Soft reset completes.  Identity, IRQ_MASK, RESET_COUNT,
     * IRQ_TEST_COUNT, the MSI-X configuration, HBM, the page-table roots
     * and the HBM window survive, and so do the spec version 3 state the
     * soft reset does not name (WDT_MS, the counters, the management CPU,
     * ECC poison and the injected faults other than hangs); everything
     * else returns to its reset value.  Then RESET_DONE is latched.
     */
    HPU_TRACE(c, HPU_TRACE_SOFT_RESET, 1);
    c->resetting = false;
    memset(c->sob, 0, sizeof(c->sob));
    hpum_mmu_reset(c, HPU_RESET_SOFT);
    hpum_qm_reset(c, HPU_RESET_SOFT);
    hpum_nic_reset(c, HPU_RESET_SOFT);
    hpum_ras_reset(c, HPU_RESET_SOFT);
    c->ctrl.scratch = 0;
    c->ctrl.error = 0;
    c->ctrl.irq_status = 0;
    c->ctrl.reset_count++;
    c->ctrl.status = HPU_STATUS_READY;
    c->dq.reset_done = 1;
    hpum_ctrl_misc_cause(c, HPU_IRQ_RESET_DONE, false);
}

void hpum_core_timer_expired(HpuCore *c)
{
    HpuTimers *t = &c->tmr;
    uint64_t now;
    unsigned int i;

    hpum_lock(c);
    t->programmed = false;
    now = hpum_now(c);
    for (i = 0; i < HPU_TMR_COUNT; i++) {
        if (!(t->armed & (1u << i)) || t->deadline[i] > now) {
            continue;
        }
        t->armed &= ~(1u << i);
        switch ((HpuTimerId)i) {
        case HPU_TMR_SOFT_RESET:
            hpum_soft_reset_done(c);
            break;
        case HPU_TMR_HARD_RESET:
            hpum_hard_reset_done(c);
            break;
        case HPU_TMR_CPU_BOOT:
        case HPU_TMR_HB_ACK:
        case HPU_TMR_HB_EVENT:
            hpum_cpu_timer(c, (HpuTimerId)i);
            break;
        case HPU_TMR_WDT:
            hpum_wdt_update(c, true);
            break;
        case HPU_TMR_ROM:
        case HPU_TMR_FLASH:
        case HPU_TMR_MBOX:
        case HPU_TMR_SENSOR:
            hpum_fw_timer(c, (HpuTimerId)i);
            break;
        case HPU_TMR_ROCE:
            hpum_roce_timer(c);
            break;
        case HPU_TMR_IRQ_MOD:
            hpum_qm_mod_timer(c);
            break;
        case HPU_TMR_COUNT:
            break;
        }
    }
    hpum_timer_program(c);
    hpum_unlock(c);
    hpum_events_drain(c);
}

bool hpum_core_init(HpuCore *c, const HpuCoreOps *ops,
                    void *opaque, const HpuCoreConfig *cfg)
{
    memset(c, 0, sizeof(*c));
    c->ops = ops;
    c->opaque = opaque;
    c->cfg = *cfg;
    c->tpc_cores = HPU_H1_TPC_ENGINES;
    c->tpc_host_simd = true;
    hpum_mme_setup(cfg->mme_threads);
    if (!hpum_fw_init(c)) {
        hpum_fw_fini(c);
        return false;
    }
    if (!hpum_hbm_init(c) || !hpum_nic_init(c)) {
        hpum_nic_fini(c);
        hpum_hbm_fini(c);
        hpum_fw_fini(c);
        return false;
    }
    hpum_core_reset(c);
    return true;
}

void hpum_core_fini(HpuCore *c)
{
    hpum_qm_fini(c);
    hpum_hbm_fini(c);
    hpum_fw_fini(c);
    hpum_nic_fini(c);
}
