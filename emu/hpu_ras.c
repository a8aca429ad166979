/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: reliability features of spec version 3
 * (Documentation/hw/errors-and-reset.md): the minimal management CPU
 * (states, heartbeat, fatal firmware error; its boot ROM of spec version 4
 * is in hpu_fw.c), the engine watchdog and the
 * fault-injection block (hangs, host access failures, HBM ECC errors,
 * firmware faults; the flash corruption of INJ_FLASH is in hpu_fw.c).
 *
 * Everything here runs under the core lock, from MMIO handlers and the
 * device timers (hpu_core.c); events are deferred (hpum_event_defer) and
 * written once the lock drops.
 *
 * Plain C99, no QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <string.h>

#include "hpu_internal.h"

#define HPU_INJ_BLOCK_SIZE      (HPU_REG_INJ_ROCE_CMD + 4 - HPU_REG_INJ_HANG)
#define HPU_CPU_BLOCK_SIZE      (HPU_REG_FW_BUILD(HPU_FW_BUILD_LEN / 4 - 1) + \
                                 4 - HPU_REG_CPU_STATUS)
#define HPU_ENGINE_MASK         ((1u << HPU_H1_ENGINES) - 1)

/* Management CPU */

static bool hpum_fw_alive(HpuCore *c)
{
    return c->cpu.status == HPU_CPU_RUNNING && !c->cpu.hb_stopped;
}

static void hpum_hb_event_arm(HpuCore *c)
{
    hpum_timer_cancel(c, HPU_TMR_HB_EVENT);
    if (c->cpu.hb_event_ms && hpum_fw_alive(c)) {
        hpum_timer_arm(c, HPU_TMR_HB_EVENT,
                       c->cpu.hb_event_ms * HPU_NS_PER_MS);
    }
}

static void hpum_hb_ack_arm(HpuCore *c)
{
    if (hpum_fw_alive(c) && !hpum_timer_pending(c, HPU_TMR_HB_ACK)) {
        hpum_timer_arm(c, HPU_TMR_HB_ACK, HPU_HB_ACK_DELAY_NS);
    }
}

/*
 * Spec version 4: the boot ROM starts (power-on, FLR, hard reset done) and
 * waits for an image (hpu_fw.c); hpum_cpu_start() runs the accepted one.
 */
void hpum_cpu_boot(HpuCore *c)
{
    memset(&c->cpu, 0, sizeof(c->cpu));
    c->cpu.status = HPU_CPU_ROM_INIT;
    hpum_timer_cancel(c, HPU_TMR_CPU_BOOT);
    hpum_timer_cancel(c, HPU_TMR_HB_ACK);
    hpum_timer_cancel(c, HPU_TMR_HB_EVENT);
    hpum_timer_arm(c, HPU_TMR_ROM, HPU_ROM_INIT_NS);
}

void hpum_cpu_start(HpuCore *c)
{
    c->cpu.status = HPU_CPU_BOOTING;
    hpum_timer_arm(c, HPU_TMR_CPU_BOOT, HPU_CPU_BOOT_NS);
}

void hpum_cpu_timer(HpuCore *c, HpuTimerId id)
{
    HpuCpu *cpu = &c->cpu;
    HpuEvent ev = {
        .id = HPU_EVENT_HEARTBEAT,
        .severity = HPU_EVENT_SEV_INFO,
        .engine = HPU_EVENT_ENGINE_NONE,
    };

    switch (id) {
    case HPU_TMR_CPU_BOOT:
        if (cpu->status != HPU_CPU_BOOTING) {
            return;
        }
        cpu->status = HPU_CPU_RUNNING;
        hpum_misc_cause(c, HPU_IRQ_FW_BOOT);
        hpum_fw_running(c);
        /* Requests written while booting are answered now. */
        if (cpu->hb_req != cpu->hb_ack) {
            hpum_hb_ack_arm(c);
        }
        hpum_hb_event_arm(c);
        break;
    case HPU_TMR_HB_ACK:
        if (hpum_fw_alive(c)) {
            cpu->hb_ack = cpu->hb_req;
        }
        break;
    case HPU_TMR_HB_EVENT:
        if (!hpum_fw_alive(c) || !cpu->hb_event_ms) {
            return;
        }
        ev.info = ++cpu->hb_seq;
        hpum_event_defer(c, &ev);
        hpum_hb_event_arm(c);
        break;
    default:
        break;
    }
}

static HpuAccess hpum_cpu_read(HpuCore *c, uint32_t offset,
                               uint32_t *val)
{
    switch (offset) {
    case HPU_REG_CPU_STATUS:
        *val = c->cpu.status;
        break;
    case HPU_REG_HB_REQ:
        *val = c->cpu.hb_req;
        break;
    case HPU_REG_HB_ACK:
        *val = c->cpu.hb_ack;
        break;
    case HPU_REG_HB_EVENT_MS:
        *val = c->cpu.hb_event_ms;
        break;
    case HPU_REG_FW_ERROR:
        *val = c->cpu.fw_error;
        break;
    default:
        return hpum_rom_read(c, offset, val);
    }
    return HPU_ACCESS_OK;
}

static HpuAccess hpum_cpu_write(HpuCore *c, uint32_t offset,
                                uint32_t val)
{
    switch (offset) {
    case HPU_REG_HB_REQ:
        c->cpu.hb_req = val;
        hpum_hb_ack_arm(c);
        break;
    case HPU_REG_HB_EVENT_MS:
        c->cpu.hb_event_ms = val;
        hpum_hb_event_arm(c);
        break;
    case HPU_REG_CPU_STATUS:
    case HPU_REG_HB_ACK:
    case HPU_REG_FW_ERROR:
        return HPU_ACCESS_READ_ONLY;
    default:
        return hpum_rom_write(c, offset, val);
    }
    return HPU_ACCESS_OK;
}

const HpuBlock hpum_cpu_block = {
    .name = "cpu",
    .base = HPU_REG_CPU_STATUS,
    .size = HPU_CPU_BLOCK_SIZE,
    .read = hpum_cpu_read,
    .write = hpum_cpu_write,
};

/* Engine watchdog */

/*
 * Under the lock, when WDT_MS is written (@expired false) or the watchdog
 * timer fires (@expired true): mark the streams that made no progress for
 * WDT_MS as hung, then arm the timer for the next possible expiry.  A
 * stream's period runs from the latest of its own progress (descriptor
 * fetched, packet completed, WAIT released), its engine's progress (any
 * packet completed or LIN_DMA piece moved) and the WDT_MS write.
 */
void hpum_wdt_update(HpuCore *c, bool expired)
{
    uint64_t wdt = (uint64_t)c->ctrl.wdt_ms * HPU_NS_PER_MS;
    uint64_t now = hpum_now(c), next = wdt ? now + wdt : UINT64_MAX;
    unsigned int e, s;

    hpum_timer_cancel(c, HPU_TMR_WDT);
    if (!expired) {
        c->wdt_epoch = now;     /* a WDT_MS write restarts every period */
    }
    /* Spec version 10: user streams' TMO_MS share the timer. */
    hpum_uq_tmo_scan(c, now, &next);
    for (e = 0; wdt && e < HPU_H1_ENGINES; e++) {
        HpuEngine *eng = &c->eng[e];

        for (s = 0; s < HPU_H1_STREAMS; s++) {
            HpuStream *st = &eng->st[s];
            uint64_t last = st->progress_ns;

            if (!st->active || st->waiting || st->hung || st->halted ||
                st->uq_timeout ||
                !(st->ctrl & HPU_QS_CTRL_ENABLE) || c->resetting) {
                continue;
            }
            if (hpum_engine_progress(eng) > last) {
                last = hpum_engine_progress(eng);
            }
            if (c->wdt_epoch > last) {
                last = c->wdt_epoch;
            }
            if (last > now) {
                last = now;     /* a TPC core's, noted after @now was read */
            }
            if (now - last < wdt) {
                if (last + wdt < next) {
                    next = last + wdt;
                }
                continue;
            }
            st->hung = true;
            if (hpum_engine_class(e) != HPU_ENG_DMA && eng->busy &&
                eng->run_s == s && !eng->stuck) {
                eng->hung_in = true;    /* the packet it runs: lets go */
                eng->hung_s = s;        /* when this descriptor ends */
            }
            HPU_LOG(c, "%s.%u: no progress for %u ms: hung (command "
                    "buffer at 0x%llx, offset 0x%x)", hpum_engine_name(e), s,
                    c->ctrl.wdt_ms,
                    (unsigned long long)st->cb_addr, st->pos);
            hpum_event_defer(c, &(HpuEvent){
                .id = HPU_EVENT_ENGINE_HANG,
                .severity = HPU_EVENT_SEV_FATAL,
                .engine = (uint8_t)e,
                .asid = st->asid,
                .addr = st->cb_addr,
                .info = s,
            });
        }
    }
    if (next != UINT64_MAX) {
        hpum_timer_arm(c, HPU_TMR_WDT, next > now ? next - now : 1);
    }
}

/* Fault injection block (BAR0 + 0x3000) */

static void hpum_inj_ecc(HpuCore *c, uint32_t kind)
{
    uint64_t addr = c->inj.ecc_addr;
    HpuEvent ev = {
        .engine = HPU_EVENT_ENGINE_NONE,
        .info = kind,
    };

    if (kind != HPU_INJ_ECC_CE && kind != HPU_INJ_ECC_UE) {
        HPU_LOG(c, "INJ_ECC_CTRL written with %u: 1 (correctable) or 2 "
                "(uncorrectable) expected", kind);
        return;
    }
    if (!hpum_hbm_in_range(c, addr, 1)) {
        HPU_LOG(c, "INJ_ECC_CTRL: HBM offset 0x%llx is beyond HBM (0x%llx "
                "bytes): nothing injected", (unsigned long long)addr,
                (unsigned long long)c->hbm.size);
        return;
    }
    if (kind == HPU_INJ_ECC_CE) {
        c->ctrl.ecc_ce_count++;
        ev.id = HPU_EVENT_ECC_CE;
        ev.severity = HPU_EVENT_SEV_INFO;
        ev.addr = addr & ~7ULL;
    } else {
        if (!hpum_hbm_poison(c, addr)) {
            return;             /* already poisoned: reported before */
        }
        c->ctrl.ecc_ue_count++;
        ev.id = HPU_EVENT_ECC_UE;
        ev.severity = HPU_EVENT_SEV_FATAL;
        ev.addr = addr & ~(HPU_HBM_CHUNK_SIZE - 1);
    }
    hpum_event_defer(c, &ev);
}

static void hpum_inj_fw(HpuCore *c, uint32_t kind)
{
    switch (kind) {
    case HPU_INJ_FW_HB_STOP:
        c->cpu.hb_stopped = true;
        hpum_timer_cancel(c, HPU_TMR_HB_ACK);
        hpum_timer_cancel(c, HPU_TMR_HB_EVENT);
        break;
    case HPU_INJ_FW_FATAL:
        if (c->cpu.status != HPU_CPU_BOOTING &&
            c->cpu.status != HPU_CPU_RUNNING) {
            HPU_LOG(c, "INJ_FW 2 while the management CPU is not running: "
                    "ignored");
            return;
        }
        c->cpu.status = HPU_CPU_HALTED;
        c->cpu.fw_error = HPU_FW_FATAL_INJECTED;
        hpum_timer_cancel(c, HPU_TMR_CPU_BOOT);
        hpum_timer_cancel(c, HPU_TMR_HB_ACK);
        hpum_timer_cancel(c, HPU_TMR_HB_EVENT);
        hpum_fw_stopped(c);
        hpum_event_defer(c, &(HpuEvent){
            .id = HPU_EVENT_FW_FATAL,
            .severity = HPU_EVENT_SEV_FATAL,
            .engine = HPU_EVENT_ENGINE_NONE,
            .info = HPU_FW_FATAL_INJECTED,
        });
        break;
    default:
        HPU_LOG(c, "INJ_FW written with %u: 1 (stop heartbeats) or 2 "
                "(fatal error) expected", kind);
        break;
    }
}

static HpuAccess hpum_inj_read(HpuCore *c, uint32_t offset,
                               uint32_t *val)
{
    switch (offset) {
    case HPU_REG_INJ_HANG:
        *val = c->inj.hang;
        break;
    case HPU_REG_INJ_DMA_FAIL:
        *val = c->inj.dma_fail;
        break;
    case HPU_REG_INJ_ECC_ADDR_LO:
        *val = (uint32_t)c->inj.ecc_addr;
        break;
    case HPU_REG_INJ_ECC_ADDR_HI:
        *val = (uint32_t)(c->inj.ecc_addr >> 32);
        break;
    case HPU_REG_INJ_ECC_CTRL:
    case HPU_REG_INJ_FW:
    case HPU_REG_INJ_FLASH:
        *val = 0;               /* write-only */
        break;
    case HPU_REG_INJ_MMU_INV:
        *val = c->inj.mmu_inv;
        break;
    case HPU_REG_INJ_ROCE_CMD:
        *val = c->inj.roce_cmd;
        break;
    case HPU_REG_INJ_QUIESCE:
        *val = c->inj.quiesce;
        break;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

static HpuAccess hpum_inj_write(HpuCore *c, uint32_t offset,
                                uint32_t val)
{
    unsigned int e;

    switch (offset) {
    case HPU_REG_INJ_HANG:
        c->inj.hang = val & HPU_ENGINE_MASK;
        hpum_job_alert(c);
        for (e = 0; e < HPU_H1_ENGINES; e++) {
            if (c->inj.hang & (1u << e)) {
                c->ops->kick_engine(c->opaque, e);
            }
        }
        break;
    case HPU_REG_INJ_DMA_FAIL:
        c->inj.dma_fail = val & HPU_ENGINE_MASK;
        break;
    case HPU_REG_INJ_ECC_ADDR_LO:
        c->inj.ecc_addr = (c->inj.ecc_addr & 0xffffffff00000000ULL) | val;
        break;
    case HPU_REG_INJ_ECC_ADDR_HI:
        c->inj.ecc_addr = (c->inj.ecc_addr & 0xffffffffULL) |
                          (uint64_t)val << 32;
        break;
    case HPU_REG_INJ_ECC_CTRL:
        hpum_inj_ecc(c, val);
        break;
    case HPU_REG_INJ_FW:
        hpum_inj_fw(c, val);
        break;
    case HPU_REG_INJ_FLASH:
        hpum_fw_inj_flash(c, val);
        break;
    case HPU_REG_INJ_MMU_INV:
        c->inj.mmu_inv = val & HPU_INJ_MMU_INV_STUCK;
        break;
    case HPU_REG_INJ_ROCE_CMD:
        c->inj.roce_cmd = val & HPU_INJ_ROCE_CMD_STUCK;
        break;
    case HPU_REG_INJ_QUIESCE:
        /* Bits once set stay until a power-on reset (FLR). */
        c->inj.quiesce |= val & (HPU_INJ_QUIESCE_STREAMS |
                                 HPU_INJ_QUIESCE_HARD_RESET);
        break;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

const HpuBlock hpum_inj_block = {
    .name = "inj",
    .base = HPU_REG_INJ_HANG,
    .size = HPU_INJ_BLOCK_SIZE,
    .read = hpum_inj_read,
    .write = hpum_inj_write,
};

/* Reset */

void hpum_ras_reset(HpuCore *c, HpuResetKind kind)
{
    /* The slot reserved for RESET_DONE went with the event queue. */
    c->dq.rd_reserved = false;
    switch (kind) {
    case HPU_RESET_SOFT:
        /* Hangs were released when the reset started; the rest stays. */
        c->inj.hang = 0;
        hpum_job_alert(c);
        break;
    case HPU_RESET_HARD:
    case HPU_RESET_POWER_ON: {
        /* INJ_QUIESCE models a device only a power-on reset recovers. */
        uint32_t quiesce = kind == HPU_RESET_HARD ? c->inj.quiesce : 0;

        memset(&c->inj, 0, sizeof(c->inj));
        c->inj.quiesce = quiesce;
        memset(&c->cpu, 0, sizeof(c->cpu));
        c->cpu.status = HPU_CPU_OFF;    /* held until the reset is done */
        c->dq.head = c->dq.count = 0;
        c->dq.reset_done = 0;
        break;
    }
    }
}
