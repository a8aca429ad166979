/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: user streams and their doorbell pages (spec version
 * 10, Documentation/hw/memory-and-queues.md, "User streams" and "Doorbell
 * pages").
 *
 * Streams 4-15 of every queue manager are user streams.  hpu_qm.c runs
 * them as it runs kernel streams (round robin, packets, WAIT, stops) and
 * hands over where they differ: the registers only they have, the enable
 * rules, the descriptor fetch and the 32-byte completion record, both
 * through the MMU in the stream's ASID (hpum_queue_xfer()), SIGNAL, ARM,
 * the error stop, queue faults, pause versus abort, and TMO_MS (scanned
 * with the watchdog, hpu_ras.c).  A user stream notifies (write-back
 * record, then the engine's vector whatever IRQ_EN) only for ARM, a stop
 * or a failure, through the version 9 machinery (hpum_stream_notify()).
 *
 * The doorbell pages are decoded before the access rules: a refused
 * access counts in UQ_DB_REFUSED and sets no ERROR bit.
 *
 * Plain C99, no QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <string.h>

#include "hpu_internal.h"

#define HPU_UQDB_END    (HPU_UQDB_BASE + HPU_UQDB_PAGE_SIZE * HPU_UQDB_PAGES)

/* The where field of a record: packet offset, engine, stream. */
static uint32_t hpum_uq_where(unsigned int e, unsigned int s,
                              uint32_t offset)
{
    return (offset & HPU_CQE_OFFSET_MASK) | e << HPU_CQE_ENGINE_SHIFT |
           s << HPU_CQE_STREAM_SHIFT;
}

/* Doorbell pages */

static void hpum_uq_db_refuse(HpuCore *c, uint64_t addr, unsigned int size,
                              bool write, uint64_t val, const char *why)
{
    uint32_t page = (uint32_t)((addr - HPU_UQDB_BASE) / HPU_UQDB_PAGE_SIZE);

    c->ctrl.uq_db_refused++;
    HPU_TRACE(c, HPU_TRACE_UQ_DOORBELL, page / HPU_H1_STREAMS,
              page % HPU_H1_STREAMS, addr % HPU_UQDB_PAGE_SIZE, size, val, 1);
    if (why) {
        HPU_LOG(c, "%u-byte %s at BAR0+0x%llx (doorbell page of %s.%u): %s; "
                "refused", size, write ? "write" : "read",
                (unsigned long long)addr, hpum_engine_name(page / HPU_H1_STREAMS),
                page % HPU_H1_STREAMS, why);
    }
}

bool hpum_uq_db_read(HpuCore *c, uint64_t addr, unsigned int size,
                     uint32_t *val)
{
    if (addr < HPU_UQDB_BASE || addr >= HPU_UQDB_END) {
        return false;
    }
    *val = 0;
    hpum_uq_db_refuse(c, addr, size, false, 0, "doorbells are write-only");
    return true;
}

bool hpum_uq_db_write(HpuCore *c, uint64_t addr, uint64_t val,
                      unsigned int size)
{
    uint32_t page, off;
    unsigned int e, s;

    if (addr < HPU_UQDB_BASE || addr >= HPU_UQDB_END) {
        return false;
    }
    page = (uint32_t)((addr - HPU_UQDB_BASE) / HPU_UQDB_PAGE_SIZE);
    off = (uint32_t)(addr % HPU_UQDB_PAGE_SIZE);
    e = page / HPU_H1_STREAMS;
    s = page % HPU_H1_STREAMS;
    if (!hpum_is_user_stream(s)) {
        hpum_uq_db_refuse(c, addr, size, true, val,
                          "a kernel stream has no doorbell page");
    } else if (size != 4 || off != HPU_UQDB_DB) {
        hpum_uq_db_refuse(c, addr, size, true, val,
                          "the doorbell takes an aligned 32-bit write at "
                          "offset 0");
    } else if (!hpum_stream_pi(c, e, s, (uint32_t)val)) {
        hpum_uq_db_refuse(c, addr, size, true, val, NULL);  /* logged */
    } else {
        HPU_TRACE(c, HPU_TRACE_UQ_DOORBELL, e, s, off, size, val, 0);
    }
    return true;
}

/* Registers only user streams have */

bool hpum_uq_writable(const HpuStream *st)
{
    return !(st->ctrl & HPU_QS_CTRL_ENABLE) && !st->active &&
           !st->notify_due && !st->wb_busy;
}

HpuAccess hpum_uq_reg_read(HpuCore *c, HpuStream *st, uint32_t reg,
                           uint32_t *val)
{
    (void)c;
    switch (reg) {
    case HPU_QS_ASID:
        *val = st->uq_asid;
        break;
    case HPU_QS_ARM_LO:
        *val = (uint32_t)st->arm;
        break;
    case HPU_QS_ARM_HI:
        *val = (uint32_t)(st->arm >> 32);
        break;
    case HPU_QS_SIGNAL:
        *val = st->signal;
        break;
    case HPU_QS_TMO_MS:
        *val = st->tmo_ms;
        break;
    case HPU_QS_START_LO:
        *val = (uint32_t)st->start;
        break;
    case HPU_QS_START_HI:
        *val = (uint32_t)(st->start >> 32);
        break;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

/* Under the lock: ARM reached (DONE at or past it): disarm, say so. */
static bool hpum_uq_arm_reached(HpuStream *st)
{
    if (st->arm && st->done >= st->arm) {
        st->arm = 0;
        return true;
    }
    return false;
}

HpuAccess hpum_uq_reg_write(HpuCore *c, unsigned int e, unsigned int s,
                            uint32_t reg, uint32_t val)
{
    HpuStream *st = &c->eng[e].st[s];

    switch (reg) {
    case HPU_QS_ARM_LO:
        st->arm = (st->arm & 0xffffffff00000000ULL) | val;
        if (hpum_uq_arm_reached(st)) {
            hpum_uq_due(c, e, s, true);         /* made by the drain */
        }
        return HPU_ACCESS_OK;
    case HPU_QS_ARM_HI:
        st->arm = (st->arm & 0xffffffffULL) | (uint64_t)val << 32;
        return HPU_ACCESS_OK;
    case HPU_QS_ASID:
    case HPU_QS_SIGNAL:
    case HPU_QS_TMO_MS:
    case HPU_QS_START_LO:
    case HPU_QS_START_HI:
        break;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    if (!hpum_uq_writable(st)) {
        HPU_LOG(c, "%s.%u: register 0x%02x written while the stream is %s: "
                "ignored", hpum_engine_name(e), s, reg,
                (st->ctrl & HPU_QS_CTRL_ENABLE) ? "enabled" : "not idle");
        return HPU_ACCESS_OK;
    }
    switch (reg) {
    case HPU_QS_ASID:
        st->uq_asid = (uint16_t)(val & HPU_QS_ASID_MASK);
        break;
    case HPU_QS_SIGNAL:
        st->signal = val & (HPU_QS_SIGNAL_SOB_MASK | HPU_QS_SIGNAL_EN);
        break;
    case HPU_QS_TMO_MS:
        st->tmo_ms = val;
        break;
    case HPU_QS_START_LO:
        st->start = (st->start & 0xffffffff00000000ULL) | val;
        break;
    default:
        st->start = (st->start & 0xffffffffULL) | (uint64_t)val << 32;
        break;
    }
    return HPU_ACCESS_OK;
}

/* Enable */

bool hpum_uq_enable_ok(HpuCore *c, unsigned int e, unsigned int s)
{
    HpuStream *st = &c->eng[e].st[s];
    const char *why = NULL;

    if (!st->uq_asid) {
        why = "ASID 0";
    } else if (!st->wb) {
        why = "no write-back record (WB 0)";
    } else if (st->cq & (HPU_UCQE_SIZE - 1)) {
        why = "completion ring not 32-byte aligned";
    } else if (st->cq_size < st->ring_size) {
        why = "CQ_SIZE below RING_SIZE";
    }
    if (why) {
        HPU_LOG(c, "%s.%u (user stream) enabled with %s: halted",
                hpum_engine_name(e), s, why);
        return false;
    }
    return true;
}

void hpum_uq_enable(HpuStream *st)
{
    st->done = st->start;
    st->ci = st->cq_pi = (uint32_t)st->start;
    if (st->pi - st->ci > st->ring_size) {
        st->pi = st->ci;        /* out of reach: a stale doorbell */
    }
    st->arm = 0;
    st->uq_error = st->uq_fault = st->uq_timeout = false;
    st->abort_req = false;
    st->notify_vec = false;
}

/* Notifications, stops */

void hpum_uq_due(HpuCore *c, unsigned int e, unsigned int s, bool vec)
{
    HpuStream *st = &c->eng[e].st[s];

    if (vec) {
        st->notify_vec = true;
    }
    HPU_TRACE(c, HPU_TRACE_UQ_STOP, e, s,
              (st->uq_error ? HPU_QS_STATUS_ERROR : 0) |
              (st->uq_fault ? HPU_QS_STATUS_FAULT : 0) |
              (st->uq_timeout ? HPU_QS_STATUS_TIMEOUT : 0),
              st->done, st->err_status, st->err_where);
    hpum_stream_due(c, st);
}

/*
 * Under the lock: a descriptor read or record write of the stream failed
 * with @f: a queue fault.  The MMU_FAULT event was posted by the caller.
 */
static void hpum_uq_queue_fault(HpuCore *c, unsigned int e, unsigned int s,
                                const HpuFault *f, bool record)
{
    HpuStream *st = &c->eng[e].st[s];

    HPU_LOG(c, "%s.%u: %s at 0x%llx of ASID %u failed (status %d): queue "
            "fault", hpum_engine_name(e), s,
            record ? "writing the completion record" :
            "reading the descriptor", (unsigned long long)f->va,
            st->uq_asid, f->status);
    st->uq_fault = true;
    st->err_status = (uint32_t)f->status;
    st->err_where = hpum_uq_where(e, s, 0);
    hpum_stream_retire(c, e, s);
    hpum_uq_due(c, e, s, !c->resetting);
    hpum_stream_notify(c, e, s, true);
}

/* Without the lock: post the MMU_FAULT event of a queue access. */
static void hpum_uq_fault_event(HpuCore *c, unsigned int e, uint16_t asid,
                                const HpuFault *f, uint32_t epoch)
{
    HpuEvent ev = {
        .id = HPU_EVENT_MMU_FAULT,
        .severity = HPU_EVENT_SEV_ERROR,
        .engine = (uint8_t)e,
        .asid = asid,
        .addr = f->va,
        .info = f->info,
    };

    if (f->status == HPU_CQ_MMU_FAULT) {
        hpum_eq_post(c, &ev, epoch);
    }
}

void hpum_uq_fetch_desc(HpuCore *c, unsigned int e, unsigned int s)
{
    HpuStream *st = &c->eng[e].st[s];
    uint64_t addr = st->ring +
                    (uint64_t)(st->ci & (st->ring_size - 1)) * HPU_DESC_SIZE;
    uint32_t gen = st->gen, epoch = c->epoch;
    uint16_t asid = st->uq_asid, dasid, flags;
    uint8_t d[HPU_DESC_SIZE];
    HpuFault f = { 0 };
    uint64_t rsvd;
    int r;

    hpum_unlock(c);
    r = hpum_queue_xfer(c, e, epoch, asid, addr, d, sizeof(d), false, &f);
    if (r && r != HPU_XFER_STALE) {
        hpum_uq_fault_event(c, e, asid, &f, epoch);
    }
    hpum_lock(c);
    if (st->gen != gen || r == HPU_XFER_STALE) {
        return;                 /* re-enabled or reset meanwhile */
    }
    if (!hpum_stream_enabled(st) || c->resetting) {
        return;                 /* stopped meanwhile: nothing in flight */
    }
    if (r) {
        hpum_uq_queue_fault(c, e, s, &f, false);
        return;
    }
    st->active = true;
    st->waiting = false;
    st->hung = false;
    st->pos = 0;
    st->progress_ns = st->fetch_ns = hpum_now(c);
    st->cb_addr = hpum_le64(d);
    st->cb_size = hpum_le32(d + 8);
    dasid = (uint16_t)(d[12] | d[13] << 8);
    flags = (uint16_t)(d[14] | d[15] << 8);
    st->seq = hpum_le64(d + 16);
    rsvd = hpum_le64(d + 24);
    st->asid = asid;
    HPU_TRACE(c, HPU_TRACE_DESC_FETCH, e, s, st->ci, st->seq, st->cb_addr,
              st->cb_size);
    if (st->tmo_ms) {
        /* the watchdog's timer looks again once TMO_MS has passed */
        uint64_t due = st->fetch_ns + (uint64_t)st->tmo_ms * HPU_NS_PER_MS + 1;

        if (!hpum_timer_pending(c, HPU_TMR_WDT) ||
            c->tmr.deadline[HPU_TMR_WDT] > due) {
            hpum_timer_arm(c, HPU_TMR_WDT, due - st->fetch_ns);
        }
    }
    if (dasid != asid || (st->cb_addr & 7) || (st->cb_size & 7) ||
        st->cb_size < 8 || st->cb_size > HPU_CB_MAX_SIZE || flags || rsvd ||
        st->cb_addr + st->cb_size < st->cb_addr) {
        HPU_LOG(c, "%s.%u: bad descriptor %u (asid %u, the stream's %u; cb "
                "0x%llx size %u flags 0x%x reserved 0x%llx)",
                hpum_engine_name(e), s, st->ci, dasid, asid,
                (unsigned long long)st->cb_addr, st->cb_size, flags,
                (unsigned long long)rsvd);
        hpum_uq_complete(c, e, s, gen, HPU_CQ_BAD_DESC, 0);
    }
}

void hpum_uq_complete(HpuCore *c, unsigned int e, unsigned int s,
                      uint32_t gen, int status, uint32_t offset)
{
    HpuStream *st = &c->eng[e].st[s];
    uint32_t where = hpum_uq_where(e, s, offset), epoch = c->epoch;
    uint16_t asid = st->uq_asid;
    uint64_t index = st->done;
    uint8_t rec[HPU_UCQE_SIZE];
    HpuFault f = { 0 };
    bool stop, vec = false;
    uint64_t addr;
    int r;

    if (st->gen != gen) {
        return;
    }
    if (status == HPU_CQ_ABORTED && !st->abort_req) {
        /*
         * A pause: the descriptor is left undone, CI stays at it, and the
         * stop record tells where it stopped.
         */
        st->err_status = HPU_CQ_ABORTED;
        st->err_where = where;
        hpum_stream_retire(c, e, s);
        hpum_uq_due(c, e, s, !c->resetting);
        hpum_stream_notify(c, e, s, true);
        return;
    }
    addr = st->cq + (uint64_t)(st->cq_pi & (st->cq_size - 1)) * HPU_UCQE_SIZE;
    memset(rec, 0, sizeof(rec));
    hpum_put_le64(rec + HPU_UCQE_SEQ, st->seq);
    hpum_put_le32(rec + HPU_UCQE_STATUS, (uint32_t)status);
    hpum_put_le32(rec + HPU_UCQE_WHERE, where);
    hpum_put_le64(rec + HPU_UCQE_INDEX, UINT64_MAX);
    hpum_put_le64(rec + HPU_UCQE_TIME, hpum_now(c));
    /* CQ_* and ASID cannot change meanwhile (read-only until IDLE). */
    hpum_unlock(c);
    /* the record with index all ones, then the index: it lands last */
    r = hpum_queue_xfer(c, e, epoch, asid, addr, rec, sizeof(rec), true, &f);
    if (!r) {
        hpum_put_le64(rec + HPU_UCQE_INDEX, index);
        r = hpum_queue_xfer(c, e, epoch, asid, addr + HPU_UCQE_INDEX,
                            rec + HPU_UCQE_INDEX, 8, true, &f);
    }
    if (r && r != HPU_XFER_STALE) {
        hpum_uq_fault_event(c, e, asid, &f, epoch);
    }
    hpum_lock(c);
    if (st->gen != gen || r == HPU_XFER_STALE) {
        return;
    }
    if (r) {
        hpum_uq_queue_fault(c, e, s, &f, true);
        return;
    }
    /* a disable or soft reset may have come during the write */
    stop = !hpum_stream_enabled(st) || c->resetting;
    HPU_TRACE(c, HPU_TRACE_COMPLETION, e, s, st->seq, (uint32_t)status,
              offset);
    st->cq_pi++;
    st->ci++;
    st->done++;
    if (st->signal & HPU_QS_SIGNAL_EN) {
        uint32_t idx = HPU_SOBS_PER_ASID * (uint32_t)asid +
                       (st->signal & HPU_QS_SIGNAL_SOB_MASK);

        if (idx < HPU_NUM_SOBS) {
            c->sob[idx]++;
            hpum_sob_changed(c);
        }
    }
    if (status != HPU_CQ_OK) {
        st->err_status = (uint32_t)status;
        st->err_where = where;
    }
    hpum_stream_retire(c, e, s);
    if (status != HPU_CQ_OK && status != HPU_CQ_ABORTED && !stop) {
        HPU_LOG(c, "%s.%u: descriptor %llu completed with status %d: "
                "error stop until CTRL.RESUME", hpum_engine_name(e), s,
                (unsigned long long)(st->done - 1), status);
        st->uq_error = true;
        vec = true;
    }
    if (hpum_uq_arm_reached(st)) {
        vec = true;
    }
    if (stop) {
        /* the ABORTED record of a disable or soft reset: the stop record */
        hpum_uq_due(c, e, s, !c->resetting);
    } else if (vec) {
        hpum_uq_due(c, e, s, true);
    }
    hpum_stream_notify(c, e, s, true);
}

/* TMO_MS */

void hpum_uq_tmo_scan(HpuCore *c, uint64_t now, uint64_t *next)
{
    unsigned int e, s;

    if (c->resetting) {
        return;
    }
    for (e = 0; e < HPU_H1_ENGINES; e++) {
        for (s = HPU_H1_KSTREAMS; s < HPU_H1_STREAMS; s++) {
            HpuStream *st = &c->eng[e].st[s];
            uint64_t limit = (uint64_t)st->tmo_ms * HPU_NS_PER_MS;

            if (!st->tmo_ms || !st->active || st->uq_timeout ||
                !hpum_stream_enabled(st)) {
                continue;
            }
            if (now - st->fetch_ns <= limit) {
                if (st->fetch_ns + limit + 1 < *next) {
                    *next = st->fetch_ns + limit + 1;
                }
                continue;
            }
            HPU_LOG(c, "%s.%u: descriptor %llu in flight for more than %u "
                    "ms (command buffer at 0x%llx, offset 0x%x): timed out",
                    hpum_engine_name(e), s, (unsigned long long)st->done,
                    st->tmo_ms, (unsigned long long)st->cb_addr, st->pos);
            st->uq_timeout = true;
            hpum_event_defer(c, &(HpuEvent){
                .id = HPU_EVENT_STREAM_TIMEOUT,
                .severity = HPU_EVENT_SEV_ERROR,
                .engine = (uint8_t)e,
                .asid = st->uq_asid,
                .addr = st->cb_addr,
                .info = s,
            });
            hpum_uq_due(c, e, s, true);
        }
    }
}
