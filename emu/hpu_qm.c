/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: queue managers and DMA engines, packets, sync objects
 * and the event queue (Documentation/hw/memory-and-queues.md).
 *
 * An engine's thread calls hpum_core_engine_step() in a loop.  Each step
 * runs one unit of work of one stream (streams taken round robin): fetch
 * a descriptor, execute one packet, release a satisfied WAIT, or write the
 * ABORTED record of a stopped stream.  The step holds the core lock only
 * to read and update state; descriptor and packet fetches, data movement,
 * completion records and events go through memory with the lock dropped.
 * A stream's gen changes when it is re-enabled or reset: a step that
 * finds it changed after dropping the lock discards its work.
 *
 * Spec version 3 (Documentation/hw/errors-and-reset.md): an engine whose
 * INJ_HANG bit is set becomes stuck at its next packet (or between two
 * pieces of a LIN_DMA) and is not ready again until a reset releases it;
 * its thread sleeps meanwhile.  Streams note their progress for the
 * watchdog (hpu_ras.c).  Events raised under the lock are deferred and
 * written by hpum_events_drain() once it drops.
 *
 * Spec version 9: a stream announces its completion records by
 * notifications (IRQ_MOD may hold records back for a while): each writes
 * the stream's write-back record (WB), then raises the engine's vector.
 * The engine thread makes those of its records at once; those that come
 * due under the lock elsewhere (the moderation timer, a disable, an
 * IRQ_MOD write) are made by hpum_events_drain().  One stream's
 * notifications are made one at a time, in order (wb_busy).  A drain makes
 * at most one per stream: those that came due meanwhile (the engine's,
 * while the drain held wb_busy) are left to the engine's thread
 * (notify_engine), so a vCPU or the timer writes at most one record per
 * stream.
 *
 * Plain C99, no QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpu_internal.h"

#define HPU_QM_BASE             HPU_REG_QM_STREAM(0, 0)
#define HPU_QM_SIZE             (HPU_REG_QM_STREAM(HPU_H1_ENGINES, 0) - \
                                 HPU_QM_BASE)
#define HPU_EQ_BLOCK_SIZE       (HPU_REG_EQ_DROPPED + 4 - HPU_REG_EQ_LO)
#define HPU_LIN_DMA_MAX         (1ULL << 32)

/* Sync objects */

/* Device index of sync object @sob as named by a packet of @asid. */
static bool hpum_sob_index(uint16_t asid, uint32_t sob, uint32_t *idx)
{
    if (asid == 0) {
        *idx = sob;
        return sob < HPU_NUM_SOBS;
    }
    *idx = HPU_SOBS_PER_ASID * (uint32_t)asid + sob;
    return sob < HPU_SOBS_PER_ASID && *idx < HPU_NUM_SOBS;
}

static bool hpum_wait_holds(HpuCore *c, uint32_t idx, uint32_t value,
                            uint32_t cond)
{
    uint32_t v = c->sob[idx];

    switch (cond) {
    case HPU_WAIT_EQ:
        return v == value;
    case HPU_WAIT_GE_WRAP:
        /* at or past @value on a counter that wraps (spec version 9) */
        return (int32_t)(v - value) >= 0;
    default:
        return v >= value;
    }
}

/* Under the lock: a sync object changed, wake engines with a WAIT. */
void hpum_sob_changed(HpuCore *c)
{
    unsigned int e, s;

    for (e = 0; e < HPU_H1_ENGINES; e++) {
        for (s = 0; s < HPU_H1_STREAMS; s++) {
            if (c->eng[e].st[s].waiting) {
                c->ops->kick_engine(c->opaque, e);
                break;
            }
        }
    }
}

static HpuAccess hpum_sob_read(HpuCore *c, uint32_t offset,
                               uint32_t *val)
{
    *val = c->sob[(offset - HPU_REG_SOB(0)) / 4];
    return HPU_ACCESS_OK;
}

static HpuAccess hpum_sob_write(HpuCore *c, uint32_t offset,
                                uint32_t val)
{
    c->sob[(offset - HPU_REG_SOB(0)) / 4] = val;
    hpum_sob_changed(c);
    return HPU_ACCESS_OK;
}

const HpuBlock hpum_sob_block = {
    .name = "sob",
    .base = HPU_REG_SOB(0),
    .size = 4 * HPU_NUM_SOBS,
    .read = hpum_sob_read,
    .write = hpum_sob_write,
};

/* Event queue */

static void hpum_eqe_encode(uint8_t *b, const HpuEvent *ev,
                            uint64_t ts)
{
    memset(b, 0, HPU_EQE_SIZE);
    hpum_put_le16(b, ev->id);
    b[2] = ev->severity;
    b[3] = ev->engine;
    hpum_put_le16(b + 4, ev->asid);
    hpum_put_le64(b + 8, ts);
    hpum_put_le64(b + 16, ev->addr);
    hpum_put_le32(b + 24, ev->info);
}

/* An entry write reserved under @gen is done (lock held). */
static void hpum_eq_commit(HpuCore *c, uint32_t gen, int r,
                           uint64_t addr)
{
    HpuEq *q = &c->eq;

    if (q->gen != gen) {
        return;
    }
    if (r) {
        HPU_LOG(c, "event queue: writing the entry at 0x%llx failed",
                (unsigned long long)addr);
        q->dropped++;
    }
    /* Entries become visible in order, once every writer is done. */
    if (--q->writers == 0) {
        q->pi = q->reserved;
        hpum_raise(c, HPU_VEC_EQ);
    }
}

void hpum_eq_post(HpuCore *c, const HpuEvent *ev,
                  uint32_t epoch)
{
    HpuEq *q = &c->eq;
    uint8_t b[HPU_EQE_SIZE];
    uint64_t addr;
    uint32_t gen;
    int r;

    hpum_eqe_encode(b, ev, ev->ts ? ev->ts : hpum_now(c));
    HPU_TRACE(c, HPU_TRACE_EVENT, ev->id, ev->engine, ev->addr, ev->info);

    hpum_lock(c);
    if (c->dead || epoch != c->epoch) {
        /* A reset since the event was raised: it goes with the work. */
        hpum_unlock(c);
        return;
    }
    if (!(q->ctrl & HPU_EQ_ENABLE) || q->reserved - q->ci >= q->size) {
        q->dropped++;
        hpum_unlock(c);
        return;
    }
    addr = q->base + (uint64_t)(q->reserved & (q->size - 1)) * HPU_EQE_SIZE;
    q->reserved++;
    q->writers++;
    gen = q->gen;
    hpum_dma_begin(c, epoch);    /* checked above */
    hpum_unlock(c);

    r = c->ops->dma_write(c->opaque, addr, b, sizeof(b));

    hpum_lock(c);
    hpum_dma_end(c, epoch);
    hpum_eq_commit(c, gen, r, addr);
    hpum_unlock(c);
}

void hpum_event_defer(HpuCore *c, const HpuEvent *ev)
{
    HpuDeferred *d = &c->dq;

    if (d->count == HPU_DEFERRED_EVENTS) {
        c->eq.dropped++;
        return;
    }
    d->ev[(d->head + d->count) % HPU_DEFERRED_EVENTS] = *ev;
    if (!d->ev[(d->head + d->count) % HPU_DEFERRED_EVENTS].ts) {
        d->ev[(d->head + d->count) % HPU_DEFERRED_EVENTS].ts = hpum_now(c);
    }
    d->count++;
}

static void hpum_notify_drain(HpuCore *c);

void hpum_events_drain(HpuCore *c)
{
    HpuDeferred *d = &c->dq;
    HpuEvent ev;
    uint32_t epoch;

    hpum_notify_drain(c);
    for (;;) {
        hpum_lock(c);
        if (d->rd_reserved) {
            /* RESET_DONE into slot 0, reserved when the queue was enabled */
            uint8_t b[HPU_EQE_SIZE];
            uint64_t addr = c->eq.base;
            uint32_t gen = d->rd_gen;
            int r;

            ev = (HpuEvent){
                .id = HPU_EVENT_RESET_DONE,
                .severity = HPU_EVENT_SEV_INFO,
                .engine = HPU_EVENT_ENGINE_NONE,
                .info = d->rd_info,
            };
            d->rd_reserved = false;
            epoch = c->epoch;
            if (!hpum_dma_begin(c, epoch)) {
                hpum_unlock(c);
                return;
            }
            hpum_eqe_encode(b, &ev, d->rd_ts);
            hpum_unlock(c);
            r = c->ops->dma_write(c->opaque, addr, b, sizeof(b));
            hpum_lock(c);
            hpum_dma_end(c, epoch);
            hpum_eq_commit(c, gen, r, addr);
            hpum_unlock(c);
            continue;
        }
        if (!d->count) {
            hpum_unlock(c);
            return;
        }
        ev = d->ev[d->head];
        d->head = (d->head + 1) % HPU_DEFERRED_EVENTS;
        d->count--;
        epoch = c->epoch;       /* resets empty the deferred queue */
        hpum_unlock(c);
        hpum_eq_post(c, &ev, epoch);
    }
}

static HpuAccess hpum_eq_read(HpuCore *c, uint32_t offset,
                              uint32_t *val)
{
    HpuEq *q = &c->eq;

    switch (offset) {
    case HPU_REG_EQ_LO:
        *val = (uint32_t)q->base;
        break;
    case HPU_REG_EQ_HI:
        *val = (uint32_t)(q->base >> 32);
        break;
    case HPU_REG_EQ_SIZE:
        *val = q->size;
        break;
    case HPU_REG_EQ_PI:
        *val = q->pi;
        break;
    case HPU_REG_EQ_CI:
        *val = q->ci;
        break;
    case HPU_REG_EQ_CTRL:
        *val = q->ctrl;
        break;
    case HPU_REG_EQ_DROPPED:
        *val = q->dropped;
        break;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

static HpuAccess hpum_eq_write(HpuCore *c, uint32_t offset,
                               uint32_t val)
{
    HpuEq *q = &c->eq;

    switch (offset) {
    case HPU_REG_EQ_LO:
    case HPU_REG_EQ_HI:
    case HPU_REG_EQ_SIZE:
        if (q->ctrl & HPU_EQ_ENABLE) {
            HPU_LOG(c, "event queue: BAR0+0x%x written while enabled: "
                    "ignored", offset);
            break;
        }
        if (offset == HPU_REG_EQ_LO) {
            q->base = (q->base & 0xffffffff00000000ULL) | val;
        } else if (offset == HPU_REG_EQ_HI) {
            q->base = (q->base & 0xffffffffULL) | (uint64_t)val << 32;
        } else {
            q->size = val;
        }
        break;
    case HPU_REG_EQ_CI:
        q->ci = val;
        break;
    case HPU_REG_EQ_CTRL:
        val &= HPU_EQ_ENABLE;
        if (val && !(q->ctrl & HPU_EQ_ENABLE)) {
            if (!q->base || (q->base & (HPU_EQE_SIZE - 1)) ||
                !hpum_is_pow2_in(q->size, 2, 4096)) {
                HPU_LOG(c, "event queue enabled with a bad ring (address "
                        "0x%llx, %u entries): stays disabled",
                        (unsigned long long)q->base, q->size);
                break;
            }
            q->pi = q->ci = q->reserved = q->writers = 0;
            q->gen++;
            if (c->dq.reset_done) {
                /* RESET_DONE takes the first slot; written on unlock. */
                c->dq.rd_reserved = true;
                c->dq.rd_info = c->dq.reset_done;
                c->dq.rd_ts = hpum_now(c);
                c->dq.rd_gen = q->gen;
                c->dq.reset_done = 0;
                q->reserved = 1;
                q->writers = 1;
            }
        } else if (!val && (q->ctrl & HPU_EQ_ENABLE)) {
            q->gen++;
            q->writers = 0;
            q->reserved = q->pi;
            c->dq.rd_reserved = false;
        }
        q->ctrl = val;
        break;
    case HPU_REG_EQ_PI:
    case HPU_REG_EQ_DROPPED:
        return HPU_ACCESS_READ_ONLY;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

const HpuBlock hpum_eq_block = {
    .name = "eq",
    .base = HPU_REG_EQ_LO,
    .size = HPU_EQ_BLOCK_SIZE,
    .read = hpum_eq_read,
    .write = hpum_eq_write,
};

/* Streams */

static bool hpum_stream_runnable(HpuCore *c, HpuEngine *eng,
                                 HpuStream *st)
{
    if (c->dead) {
        return false;
    }
    if (st->notify_engine && st->notify_due && !st->wb_busy) {
        return true;                    /* notifications left by a drain */
    }
    if (eng->stuck) {
        /*
         * INJ_HANG: a DMA engine until a reset; a compute engine until the
         * stream it hangs in is disabled (it then writes ABORTED).
         */
        return hpum_engine_class(eng - c->eng) != HPU_ENG_DMA &&
               st == &eng->st[eng->stuck_s] && st->active &&
               (!hpum_stream_enabled(st) || c->resetting);
    }
    if (!st->active) {
        /* spec version 10: an error stop, queue fault or timeout holds */
        return hpum_stream_enabled(st) && !c->resetting && st->pi != st->ci &&
               !hpum_uq_stopped(st);
    }
    if (!hpum_stream_enabled(st) || c->resetting) {
        return true;                    /* write its ABORTED record */
    }
    if (st->hung || st->uq_timeout) {
        return false;                   /* until disabled or reset */
    }
    if (st->waiting) {
        return hpum_wait_holds(c, st->wait_sob, st->wait_value,
                               st->wait_cond);
    }
    return true;
}

bool hpum_core_engine_ready(HpuCore *c, unsigned int e)
{
    unsigned int s;

    for (s = 0; s < HPU_H1_STREAMS; s++) {
        if (hpum_stream_runnable(c, &c->eng[e], &c->eng[e].st[s])) {
            return true;
        }
    }
    return false;
}

/* Whether the job a step works on must stop (under the lock). */
static bool hpum_job_stopped(HpuCore *c, const HpuStream *st,
                             const HpuJob *j)
{
    return st->gen != j->gen || !hpum_stream_enabled(st) || c->resetting ||
           c->epoch != j->epoch || c->dead;
}

/*
 * A compute engine hung in a packet (INJ_HANG, or a launch the watchdog
 * found making no progress) completed it: it lets go (compute.md).  Its
 * other streams were hung only with it; their watchdog periods start
 * again.
 */
static void hpum_engine_let_go(HpuCore *c, unsigned int e)
{
    HpuEngine *eng = &c->eng[e];
    unsigned int s;

    eng->stuck = false;
    eng->hung_in = false;
    hpum_engine_set_progress(eng, hpum_now(c));
    for (s = 0; s < HPU_H1_STREAMS; s++) {
        eng->st[s].hung = false;
    }
}

/*
 * Whether compute engine @e hangs in stream @s: stuck there by INJ_HANG,
 * or the watchdog marked @s hung while the engine executed its packet.
 * Only the end of that stream's descriptor lets the engine go; a sibling
 * stream disabled meanwhile completes ABORTED and leaves the engine (and
 * the other streams' HUNG) as they are.
 */
static bool hpum_engine_hangs_in(const HpuCore *c, unsigned int e,
                                 unsigned int s)
{
    const HpuEngine *eng = &c->eng[e];

    return hpum_engine_class(e) != HPU_ENG_DMA &&
           ((eng->stuck && eng->stuck_s == s) ||
            (eng->hung_in && eng->hung_s == s));
}

/* Spec version 9: notifications, write-back records, moderation */

static uint32_t hpum_stream_status(const HpuCore *c, const HpuStream *st);

/* BUSY_NS as it reads now (lock held). */
static uint64_t hpum_stream_busy(HpuCore *c, const HpuStream *st)
{
    uint64_t now = hpum_now(c);

    return st->busy_ns +
           (st->executing && now > st->exec_start ? now - st->exec_start : 0);
}

/* A packet of @st begins or ends executing (lock held). */
static void hpum_stream_exec(HpuCore *c, HpuStream *st, bool begin)
{
    if (begin) {
        st->exec_start = hpum_now(c);
        st->executing = true;
    } else if (st->executing) {
        st->busy_ns = hpum_stream_busy(c, st);
        st->executing = false;
    }
}

/* Under the lock: the records @st holds back are to be notified now. */
void hpum_stream_due(HpuCore *c, HpuStream *st)
{
    st->notify_due = true;
    st->notify_records += st->held;
    st->held = 0;
    st->mod_deadline = 0;
    /* read without the lock by hpum_notify_drain() on this thread */
    __atomic_store_n(&c->notify_pending, true, __ATOMIC_RELAXED);
}

/*
 * Under the lock: a completion record of @st was written.  Notify at once
 * (IRQ_MOD's count reached or not in use, or nothing left to fetch), else
 * hold it back, at most IRQ_MOD's delay.
 */
static void hpum_stream_moderate(HpuCore *c, HpuStream *st)
{
    uint32_t count = (st->irq_mod & HPU_QS_IRQ_MOD_COUNT_MASK) >> 16;
    uint32_t delay = st->irq_mod & HPU_QS_IRQ_MOD_DELAY_MASK;
    uint64_t now;

    st->held++;
    if (count <= 1 || st->held >= count || st->pi == st->ci ||
        !hpum_stream_enabled(st) || c->resetting) {
        hpum_stream_due(c, st);
        return;
    }
    if (!delay || st->mod_deadline) {
        return;
    }
    now = hpum_now(c);
    st->mod_deadline = now + delay * 1000ULL;
    /* The one timer is kept at the earliest deadline (or earlier). */
    if (!hpum_timer_pending(c, HPU_TMR_IRQ_MOD) ||
        c->tmr.deadline[HPU_TMR_IRQ_MOD] > st->mod_deadline) {
        hpum_timer_arm(c, HPU_TMR_IRQ_MOD, st->mod_deadline - now);
    }
}

void hpum_qm_mod_timer(HpuCore *c)
{
    uint64_t now = hpum_now(c), next = 0;
    unsigned int e, s;

    for (e = 0; e < HPU_H1_ENGINES; e++) {
        for (s = 0; s < HPU_H1_STREAMS; s++) {
            HpuStream *st = &c->eng[e].st[s];

            if (!st->mod_deadline) {
                continue;
            }
            if (st->mod_deadline <= now) {
                hpum_stream_due(c, st);
            } else if (!next || st->mod_deadline < next) {
                next = st->mod_deadline;
            }
        }
    }
    if (next) {
        hpum_timer_arm(c, HPU_TMR_IRQ_MOD, next - now);
    }
}

/*
 * Make the notifications due on stream @s of engine @e: write the
 * write-back record (if WB is set), then raise the vector (if IRQ_EN and
 * the notification covers records).  Called and returns with the lock
 * held; drops it for the write.  A stream whose record is being written
 * by another thread is left to that thread, which loops if it is the
 * engine's (@engine) and otherwise, once it wrote one record, hands what
 * came due meanwhile to the engine's thread (hpum_stream_runnable()).
 */
void hpum_stream_notify(HpuCore *c, unsigned int e, unsigned int s,
                        bool engine)
{
    HpuStream *st = &c->eng[e].st[s];
    bool wrote = false;

    while (st->notify_due && !st->wb_busy) {
        uint8_t b[HPU_WB_SIZE];
        uint32_t epoch = c->epoch, gen = st->gen;
        uint32_t records = st->notify_records;
        /* spec version 10: a user stream raises it for its own reasons */
        bool irq = hpum_is_user_stream(s) ? st->notify_vec :
                   records && (st->ctrl & HPU_QS_CTRL_IRQ_EN);
        uint64_t addr = st->wb;
        int r;

        if (wrote && !engine) {
            st->notify_engine = true;
            c->ops->kick_engine(c->opaque, e);
            return;
        }
        st->notify_engine = false;
        st->notify_due = false;
        st->notify_records = 0;
        st->notify_vec = false;
        if (!addr && !irq) {
            continue;
        }
        HPU_TRACE(c, HPU_TRACE_NOTIFY, e, s, st->done, st->cq_pi, records,
                  irq);
        if (addr) {
            /* As a completion record: none begun after a reset. */
            if (!hpum_dma_begin(c, epoch)) {
                return;
            }
            hpum_put_le64(b + HPU_WB_DONE, st->done);
            hpum_put_le64(b + HPU_WB_BUSY_NS, hpum_stream_busy(c, st));
            hpum_put_le32(b + HPU_WB_CQ_PI, st->cq_pi);
            hpum_put_le32(b + HPU_WB_STATUS, hpum_stream_status(c, st));
            hpum_put_le32(b + HPU_WB_ERR_STATUS, st->err_status);
            hpum_put_le32(b + HPU_WB_ERR_WHERE, st->err_where);
            st->wb_busy = true;
            hpum_unlock(c);
            r = c->ops->dma_write(c->opaque, addr, b, sizeof(b));
            hpum_lock(c);
            hpum_dma_end(c, epoch);
            if (epoch != c->epoch) {
                return;                 /* the reset cleared the stream */
            }
            st->wb_busy = false;
            wrote = true;
            if (r) {
                HPU_LOG(c, "%s.%u: writing the write-back record at 0x%llx "
                        "failed: the record is lost", hpum_engine_name(e), s,
                        (unsigned long long)addr);
            }
            if (st->gen != gen) {
                continue;               /* re-enabled meanwhile */
            }
        }
        if (irq) {
            hpum_raise(c, HPU_VEC_ENGINE(e));
        }
    }
}

/*
 * The notifications that came due under the lock (called without it, by
 * the thread that made them due: the flag needs no lock to be seen).
 */
static void hpum_notify_drain(HpuCore *c)
{
    unsigned int e, s;

    if (!__atomic_load_n(&c->notify_pending, __ATOMIC_RELAXED)) {
        return;
    }
    hpum_lock(c);
    if (c->notify_pending) {
        __atomic_store_n(&c->notify_pending, false, __ATOMIC_RELAXED);
        for (e = 0; e < HPU_H1_ENGINES; e++) {
            for (s = 0; s < HPU_H1_STREAMS; s++) {
                hpum_stream_notify(c, e, s, false);
            }
        }
    }
    hpum_unlock(c);
}

/*
 * Write the completion record of the descriptor in flight and retire it.
 * Called and returns with the lock held; drops it for the write.
 */
static void hpum_complete(HpuCore *c, unsigned int e, unsigned int s,
                          uint32_t gen, int status, uint32_t offset)
{
    HpuStream *st = &c->eng[e].st[s];
    uint8_t rec[HPU_CQE_SIZE];
    uint32_t epoch;
    uint64_t addr;
    int r;

    if (hpum_is_user_stream(s)) {
        hpum_uq_complete(c, e, s, gen, status, offset);
        return;
    }
    /*
     * The record is computed and its write begun in one critical section
     * with the generation check: a reset bumps the generation and is not
     * done before the writes in flight are, so a record of work it
     * overtook is dropped here and one already begun lands before the
     * reset is done.
     * CQ_* cannot change meanwhile (read-only until STATUS.IDLE).
     */
    epoch = c->epoch;
    if (st->gen != gen || !hpum_dma_begin(c, epoch)) {
        return;
    }
    addr = st->cq + (uint64_t)(st->cq_pi & (st->cq_size - 1)) * HPU_CQE_SIZE;
    hpum_put_le64(rec, st->seq);
    hpum_put_le32(rec + 8, (uint32_t)status);
    hpum_put_le32(rec + 12, (offset & HPU_CQE_OFFSET_MASK) |
                  e << HPU_CQE_ENGINE_SHIFT | s << HPU_CQE_STREAM_SHIFT);
    hpum_unlock(c);
    r = c->ops->dma_write(c->opaque, addr, rec, sizeof(rec));
    hpum_lock(c);
    hpum_dma_end(c, epoch);
    if (st->gen != gen) {
        return;
    }
    if (r) {
        HPU_LOG(c, "%s.%u: writing the completion record at 0x%llx "
                "failed: the record is lost", hpum_engine_name(e), s,
                (unsigned long long)addr);
    }
    HPU_TRACE(c, HPU_TRACE_COMPLETION, e, s, st->seq, (uint32_t)status,
              offset);
    st->cq_pi++;
    st->ci++;
    st->done++;
    if (status != HPU_CQ_OK) {
        st->err_status = (uint32_t)status;
        st->err_where = hpum_le32(rec + 12);
    }
    hpum_stream_retire(c, e, s);
    hpum_stream_moderate(c, st);
    hpum_stream_notify(c, e, s, true);
}

void hpum_stream_retire(HpuCore *c, unsigned int e, unsigned int s)
{
    HpuStream *st = &c->eng[e].st[s];

    if (hpum_engine_hangs_in(c, e, s)) {
        hpum_engine_let_go(c, e);
    }
    st->active = false;
    st->waiting = false;
    st->hung = false;
}

/* Fetch and check the next descriptor (lock held; dropped meanwhile). */
static void hpum_fetch_desc(HpuCore *c, unsigned int e, unsigned int s)
{
    HpuStream *st = &c->eng[e].st[s];
    uint64_t addr = st->ring +
                    (uint64_t)(st->ci & (st->ring_size - 1)) * HPU_DESC_SIZE;
    uint32_t gen = st->gen;
    uint8_t d[HPU_DESC_SIZE];
    uint32_t epoch = c->epoch;
    uint16_t flags;
    uint64_t rsvd;
    int r;

    if (hpum_is_user_stream(s)) {
        hpum_uq_fetch_desc(c, e, s);
        return;
    }
    if (!hpum_dma_begin(c, epoch)) {
        return;
    }
    hpum_unlock(c);
    r = c->ops->dma_read(c->opaque, addr, d, sizeof(d));
    hpum_lock(c);
    hpum_dma_end(c, epoch);
    if (st->gen != gen) {
        return;
    }
    st->active = true;
    st->waiting = false;
    st->hung = false;
    st->pos = 0;
    st->progress_ns = hpum_now(c);
    if (r) {
        HPU_LOG(c, "%s.%u: reading the descriptor at 0x%llx failed",
                hpum_engine_name(e), s, (unsigned long long)addr);
        st->seq = 0;
        hpum_complete(c, e, s, gen, HPU_CQ_BUS_ERROR, 0);
        return;
    }
    st->cb_addr = hpum_le64(d);
    st->cb_size = hpum_le32(d + 8);
    st->asid = (uint16_t)(d[12] | d[13] << 8);
    flags = (uint16_t)(d[14] | d[15] << 8);
    st->seq = hpum_le64(d + 16);
    rsvd = hpum_le64(d + 24);
    HPU_TRACE(c, HPU_TRACE_DESC_FETCH, e, s, st->ci, st->seq, st->cb_addr,
              st->cb_size);
    if ((st->cb_addr & 7) || (st->cb_size & 7) || st->cb_size < 8 ||
        st->cb_size > HPU_CB_MAX_SIZE || flags || rsvd ||
        st->cb_addr + st->cb_size < st->cb_addr) {
        HPU_LOG(c, "%s.%u: bad descriptor %u (cb 0x%llx size %u flags "
                "0x%x reserved 0x%llx)", hpum_engine_name(e), s, st->ci,
                (unsigned long long)st->cb_addr, st->cb_size, flags,
                (unsigned long long)rsvd);
        hpum_complete(c, e, s, gen, HPU_CQ_BAD_DESC, 0);
    }
}

/*
 * LIN_DMA by pieces: a copy moves each once where it can
 * (hpum_dma_copy()), a fill writes from the pattern in the bounce buffer.
 */
static int hpum_lin_dma(HpuCore *c, unsigned int e, unsigned int s,
                        const HpuJob *j, uint32_t flags, uint64_t src,
                        uint64_t dst, uint64_t size, HpuFault *f)
{
    HpuEngine *eng = &c->eng[e];
    HpuStream *st = &eng->st[s];
    bool fill = flags & HPU_LIN_DMA_MEMSET;
    bool backward = !fill && dst > src && dst - src < size;
    uint64_t done = 0;
    uint8_t *buf;
    bool stop, hang;
    int r;

    if (!eng->bounce) {
        eng->bounce = malloc(HPU_DMA_PIECE);
        if (!eng->bounce) {
            return HPU_CQ_BUS_ERROR;
        }
    }
    buf = eng->bounce;
    if (fill) {
        uint32_t i;

        for (i = 0; i < 8; i++) {
            buf[i] = (uint8_t)(src >> (8 * i));
        }
        for (i = 8; i < HPU_DMA_PIECE; i *= 2) {
            memcpy(buf + i, buf, i);
        }
    }
    while (done < size) {
        uint64_t n = HPU_MIN((uint64_t)HPU_DMA_PIECE, size - done);
        uint64_t off = backward ? size - done - n : done;

        hpum_lock(c);
        stop = hpum_job_stopped(c, st, j);
        hang = !stop && (c->inj.hang & (1u << e));
        if (done && !stop) {
            hpum_engine_set_progress(eng, hpum_now(c));  /* a piece moved */
        }
        hpum_unlock(c);
        if (stop) {
            return HPU_STEP_ABORT;
        }
        if (hang) {
            return HPU_STEP_HANG;
        }
        if (fill) {
            r = hpum_mem_xfer(c, e, j->epoch, j->asid, dst + off, buf, n,
                              true, f);
        } else {
            r = hpum_dma_copy(c, e, j->epoch, j->asid, src + off, dst + off,
                              n, f);
        }
        if (r) {
            return r;
        }
        done += n;
    }
    return HPU_CQ_OK;
}

static int hpum_bad_packet(HpuCore *c, unsigned int e, unsigned int s,
                           const HpuJob *j, const char *why,
                           HpuEvent *ev)
{
    HPU_LOG(c, "%s.%u: bad packet at offset 0x%x of the command buffer "
            "at 0x%llx (ASID %u): %s", hpum_engine_name(e), s, j->pos,
            (unsigned long long)j->cb_addr, j->asid, why);
    ev->id = HPU_EVENT_BAD_PACKET;
    return HPU_CQ_BAD_PACKET;
}

int hpum_pkt_bad(const HpuPacket *k, const char *why)
{
    return hpum_bad_packet(k->c, k->e, k->s, k->j, why, k->ev);
}

static int hpum_pkt_nop(const HpuPacket *k)
{
    if (hpum_le32(k->p + 4)) {
        return hpum_pkt_bad(k, "NOP reserved field not zero");
    }
    return HPU_CQ_OK;
}

static int hpum_pkt_lin_dma(const HpuPacket *k)
{
    uint32_t flags = hpum_le32(k->p + 4);
    uint64_t src = hpum_le64(k->p + 8);
    uint64_t dst = hpum_le64(k->p + 16);
    uint64_t n = hpum_le64(k->p + 24);

    if (flags & ~HPU_LIN_DMA_MEMSET) {
        return hpum_pkt_bad(k, "LIN_DMA reserved flags");
    }
    if (!n || n > HPU_LIN_DMA_MAX) {
        return hpum_pkt_bad(k, "LIN_DMA size not 1 to 2^32");
    }
    if (dst + (n - 1) < dst ||
        (!(flags & HPU_LIN_DMA_MEMSET) && src + (n - 1) < src)) {
        return hpum_pkt_bad(k, "LIN_DMA range wraps");
    }
    return hpum_lin_dma(k->c, k->e, k->s, k->j, flags, src, dst, n, k->f);
}

static int hpum_pkt_write_value(const HpuPacket *k)
{
    uint64_t dst = hpum_le64(k->p + 8);

    if (dst & 3) {
        return hpum_pkt_bad(k, "WRITE_VALUE address not 4-byte aligned");
    }
    return hpum_mem_xfer(k->c, k->e, k->j->epoch, k->j->asid, dst,
                         k->p + 4, 4, true, k->f);
}

/* SOB_UPDATE and WAIT */
static int hpum_pkt_sync(const HpuPacket *k)
{
    HpuCore *c = k->c;
    HpuJob *j = k->j;
    bool wait = (hpum_le32(k->p) & HPU_PKT_OPCODE_MASK) == HPU_PKT_WAIT;
    uint32_t a = hpum_le32(k->p + 4);
    uint32_t b = hpum_le32(k->p + 8);
    uint32_t d = hpum_le32(k->p + 12);
    uint32_t idx;
    int r;

    if (!hpum_sob_index(j->asid, a, &idx)) {
        return hpum_pkt_bad(k, "sync object out of range");
    }
    if (d > (wait ? HPU_WAIT_GE_WRAP : HPU_SOB_OP_ADD)) {
        return hpum_pkt_bad(k, wait ? "unknown WAIT condition" :
                            "unknown SOB_UPDATE operation");
    }
    hpum_lock(c);
    if (c->epoch != j->epoch) {
        r = HPU_STEP_ABORT;         /* a reset overtook the packet */
    } else if (!wait) {
        c->sob[idx] = d == HPU_SOB_OP_ADD ? c->sob[idx] + b : b;
        hpum_sob_changed(c);
        r = HPU_CQ_OK;
    } else if (hpum_wait_holds(c, idx, b, d)) {
        r = HPU_CQ_OK;
    } else {
        j->wait_sob = idx;
        j->wait_value = b;
        j->wait_cond = d;
        r = HPU_STEP_WAITING;
    }
    hpum_unlock(c);
    return r;
}

static int hpum_pkt_wreg(const HpuPacket *k)
{
    uint32_t a = hpum_le32(k->p + 4);
    uint32_t b = hpum_le32(k->p + 8);
    uint32_t d = hpum_le32(k->p + 12);

    if (d || (a & 3) || a >= HPU_BAR_REGS_SIZE) {
        return hpum_pkt_bad(k, "WREG offset or reserved field");
    }
    hpum_core_write_epoch(k->c, a, b, k->j->epoch);
    return HPU_CQ_OK;
}

/*
 * The packets of Documentation/hw/memory-and-queues.md and compute.md, by
 * opcode, with the engine classes that run them (BAD_PACKET elsewhere).
 */
#define HPU_ON_DMA      (1u << HPU_ENG_DMA)
#define HPU_ON_TPC      (1u << HPU_ENG_TPC)
#define HPU_ON_MME      (1u << HPU_ENG_MME)
#define HPU_ON_ALL      (HPU_ON_DMA | HPU_ON_TPC | HPU_ON_MME)

typedef struct HpuPacketOp {
    uint32_t size;              /* bytes, header included */
    bool privileged;            /* only in ASID 0 */
    uint32_t engines;           /* HPU_ON_*: engine classes */
    const char *name;
    int (*run)(const HpuPacket *k);
} HpuPacketOp;

static const HpuPacketOp hpum_packet_ops[] = {
    [HPU_PKT_NOP] = { 8, false, HPU_ON_ALL, "NOP", hpum_pkt_nop },
    [HPU_PKT_LIN_DMA] = { 32, false, HPU_ON_DMA, "LIN_DMA",
                          hpum_pkt_lin_dma },
    [HPU_PKT_WRITE_VALUE] = { 16, false, HPU_ON_ALL, "WRITE_VALUE",
                              hpum_pkt_write_value },
    [HPU_PKT_SOB_UPDATE] = { 16, false, HPU_ON_ALL, "SOB_UPDATE",
                             hpum_pkt_sync },
    [HPU_PKT_WAIT] = { 16, false, HPU_ON_ALL, "WAIT", hpum_pkt_sync },
    [HPU_PKT_WREG] = { 16, true, HPU_ON_ALL, "WREG", hpum_pkt_wreg },
    [HPU_PKT_TPC_LAUNCH] = { 16, false, HPU_ON_TPC, "TPC_LAUNCH",
                             hpum_tpc_launch },
    [HPU_PKT_MME_GEMM] = { 16, false, HPU_ON_MME, "MME_GEMM",
                           hpum_mme_gemm },
};

static const char *const hpum_engine_names[HPU_H1_ENGINES] = {
    "DMA0", "DMA1", "DMA2", "DMA3", "DMA4", "DMA5", "DMA6", "DMA7",
    "TPC", "MME0", "MME1",
};

const char *hpum_engine_name(unsigned int e)
{
    return e < HPU_H1_ENGINES ? hpum_engine_names[e] :
           e == HPU_ROCE_EVENT_ENGINE ? "ROCE" : "?";
}

/*
 * Execute the packet at j->pos (called without the lock).  Returns a
 * completion status, HPU_STEP_WAITING or HPU_STEP_ABORT; @size gets the
 * packet size; @ev->id is set if an event is to be posted.
 */
static int hpum_packet(HpuCore *c, unsigned int e, unsigned int s,
                       HpuJob *j, uint32_t *size, HpuFault *f,
                       HpuEvent *ev)
{
    uint8_t p[32];
    HpuPacket k = { c, e, s, j, p, f, ev };
    const HpuPacketOp *op;
    uint32_t hdr, opcode;
    int r;

    r = hpum_mem_xfer(c, e, j->epoch, j->asid, j->cb_addr + j->pos, p, 8,
                      false, f);
    if (r) {
        return r;
    }
    hdr = hpum_le32(p);
    opcode = hdr & HPU_PKT_OPCODE_MASK;
    op = opcode < HPU_ARRAY_LEN(hpum_packet_ops) ?
         &hpum_packet_ops[opcode] : NULL;
    if (!op || !op->run) {
        return hpum_bad_packet(c, e, s, j, "unknown opcode", ev);
    }
    HPU_TRACE(c, HPU_TRACE_PACKET, e, s, j->pos, opcode, op->size, j->asid);
    if (hdr & ~HPU_PKT_OPCODE_MASK) {
        return hpum_bad_packet(c, e, s, j, "header bits 31:8 not zero", ev);
    }
    if (!(op->engines & (1u << hpum_engine_class(e)))) {
        char why[64];

        snprintf(why, sizeof(why), "%s does not run on %s", op->name,
                 hpum_engine_name(e));
        return hpum_bad_packet(c, e, s, j, why, ev);
    }
    if (op->size > j->cb_size - j->pos) {
        return hpum_bad_packet(c, e, s, j, "runs past the command buffer",
                               ev);
    }
    if (op->privileged && j->asid != 0) {
        /* Privilege is checked before the fields are even fetched. */
        HPU_LOG(c, "%s.%u: WREG at offset 0x%x of the command buffer "
                "at 0x%llx in ASID %u: privileged", hpum_engine_name(e), s,
                j->pos, (unsigned long long)j->cb_addr, j->asid);
        ev->id = HPU_EVENT_PRIV;
        return HPU_CQ_PRIV;
    }
    if (op->size > 8) {
        r = hpum_mem_xfer(c, e, j->epoch, j->asid, j->cb_addr + j->pos + 8,
                          p + 8, op->size - 8, false, f);
        if (r) {
            return r;
        }
    }
    *size = op->size;
    return op->run(&k);
}

int hpum_job_check_locked(const HpuPacket *k, bool progress)
{
    HpuCore *c = k->c;

    if (hpum_job_stopped(c, &c->eng[k->e].st[k->s], k->j)) {
        return HPU_STEP_ABORT;
    }
    if (progress) {
        hpum_engine_set_progress(&c->eng[k->e], hpum_now(c));
    }
    return c->inj.hang & (1u << k->e) ? HPU_STEP_HANG : HPU_CQ_OK;
}

int hpum_job_check(const HpuPacket *k)
{
    int r;

    hpum_lock(k->c);
    r = hpum_job_check_locked(k, false);
    hpum_unlock(k->c);
    return r;
}

void hpum_job_note_progress(const HpuPacket *k)
{
    HpuCore *c = k->c;

    hpum_lock(c);
    if (!hpum_job_stopped(c, &c->eng[k->e].st[k->s], k->j)) {
        hpum_engine_set_progress(&c->eng[k->e], hpum_now(c));
    }
    hpum_unlock(c);
}

void hpum_job_note_progress_unlocked(const HpuPacket *k)
{
    HpuEngine *eng = &k->c->eng[k->e];
    uint64_t now = hpum_now(k->c);
    uint64_t last = hpum_engine_progress(eng);

    /* another core may note a later time meanwhile: keep the later one */
    while (now > last) {
        if (__atomic_compare_exchange_n(&eng->progress_ns, &last, now, true,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            break;
        }
    }
}

int hpum_job_progress(const HpuPacket *k)
{
    hpum_job_note_progress(k);
    return hpum_job_check(k);
}

bool hpum_job_stopped_locked(const HpuPacket *k)
{
    return hpum_job_stopped(k->c, &k->c->eng[k->e].st[k->s], k->j);
}

int hpum_bad_launch(const HpuPacket *k, uint64_t desc, uint32_t code,
                    const char *why)
{
    HPU_LOG(k->c, "%s.%u: bad launch at offset 0x%x of the command buffer "
            "at 0x%llx (ASID %u): descriptor at 0x%llx: %s (rule %u)",
            hpum_engine_name(k->e), k->s, k->j->pos,
            (unsigned long long)k->j->cb_addr, k->j->asid,
            (unsigned long long)desc, why, code);
    k->ev->id = HPU_EVENT_BAD_LAUNCH;
    k->ev->addr = desc;
    k->ev->info = code;
    return HPU_CQ_BAD_LAUNCH;
}

/* Run one packet of the stream's descriptor (lock held; dropped). */
static void hpum_run_packet(HpuCore *c, unsigned int e, unsigned int s)
{
    HpuStream *st = &c->eng[e].st[s];
    HpuJob j = {
        .gen = st->gen, .epoch = c->epoch, .seq = st->seq,
        .cb_addr = st->cb_addr,
        .cb_size = st->cb_size, .pos = st->pos, .asid = st->asid,
    };
    HpuEvent ev = { 0 };
    HpuFault f = { 0 };
    uint32_t size = 0;
    int r;

    hpum_busy_begin(c, e);
    hpum_stream_exec(c, st, true);
    hpum_unlock(c);
    r = hpum_packet(c, e, s, &j, &size, &f, &ev);
    if (r == HPU_CQ_MMU_FAULT) {
        ev.id = HPU_EVENT_MMU_FAULT;
        ev.addr = f.va;
        ev.info = f.info;
    } else if (r == HPU_CQ_BUS_ERROR && f.host) {
        ev.id = HPU_EVENT_DMA_BUS_ERROR;
        ev.addr = f.bus;
        ev.info = s;
    } else if (ev.id == HPU_EVENT_BAD_PACKET || ev.id == HPU_EVENT_PRIV) {
        ev.addr = j.cb_addr;
        ev.info = j.pos;
    }
    if (ev.id) {
        ev.severity = HPU_EVENT_SEV_ERROR;
        ev.engine = (uint8_t)e;
        ev.asid = j.asid;
        hpum_eq_post(c, &ev, j.epoch);
    }
    hpum_lock(c);
    hpum_busy_end(c, e);
    hpum_stream_exec(c, st, false);
    if (st->gen != j.gen) {
        return;
    }
    switch (r) {
    case HPU_CQ_OK:
        st->pos += size;
        st->progress_ns = hpum_now(c);
        hpum_engine_set_progress(&c->eng[e], st->progress_ns);
        if (st->pos >= st->cb_size) {
            hpum_complete(c, e, s, j.gen, HPU_CQ_OK, 0);
        }
        break;
    case HPU_STEP_HANG:
        /* The packet in flight never completes (until a reset). */
        if (hpum_stream_enabled(st) && !c->resetting) {
            c->eng[e].stuck = true;
            c->eng[e].stuck_s = s;
        }
        break;
    case HPU_STEP_WAITING:
        st->waiting = true;
        st->wait_sob = j.wait_sob;
        st->wait_value = j.wait_value;
        st->wait_cond = j.wait_cond;
        break;
    case HPU_STEP_ABORT:
        hpum_complete(c, e, s, j.gen, HPU_CQ_ABORTED, j.pos);
        break;
    default:
        hpum_complete(c, e, s, j.gen, r, j.pos);
        break;
    }
}

bool hpum_core_engine_step(HpuCore *c, unsigned int e)
{
    HpuEngine *eng = &c->eng[e];
    HpuStream *st;
    unsigned int s = 0, i;
    bool more;

    hpum_lock(c);
    /* Notifications a drain left to this thread first: they are due now. */
    for (s = 0; s < HPU_H1_STREAMS; s++) {
        st = &eng->st[s];
        if (st->notify_engine && st->notify_due && !st->wb_busy && !c->dead) {
            eng->busy = true;
            eng->run_s = s;
            hpum_stream_notify(c, e, s, true);
            eng->busy = false;
            more = hpum_core_engine_ready(c, e);
            hpum_unlock(c);
            return more;
        }
    }
    for (i = 0; i < HPU_H1_STREAMS; i++) {
        s = (eng->rr + i) % HPU_H1_STREAMS;
        if (hpum_stream_runnable(c, eng, &eng->st[s])) {
            break;
        }
    }
    if (i == HPU_H1_STREAMS) {
        hpum_unlock(c);
        return false;
    }
    eng->rr = (s + 1) % HPU_H1_STREAMS;
    st = &eng->st[s];
    eng->busy = true;
    eng->run_s = s;
    if (!st->active) {
        hpum_fetch_desc(c, e, s);
    } else if (!hpum_stream_enabled(st) || c->resetting) {
        hpum_complete(c, e, s, st->gen, HPU_CQ_ABORTED, st->pos);
    } else if (st->waiting) {
        /* The WAIT holds now (runnable): step past it. */
        st->waiting = false;
        st->pos += 16;
        st->progress_ns = hpum_now(c);
        hpum_engine_set_progress(eng, st->progress_ns);
        if (st->pos >= st->cb_size) {
            hpum_complete(c, e, s, st->gen, HPU_CQ_OK, 0);
        }
    } else if (c->inj.hang & (1u << e)) {
        eng->stuck = true;      /* the next packet never completes */
        eng->stuck_s = s;
    } else {
        hpum_run_packet(c, e, s);
    }
    eng->busy = false;
    more = hpum_core_engine_ready(c, e);
    hpum_unlock(c);
    return more;
}

/* Queue manager registers (BAR0 + 0x10000) */

static uint32_t hpum_stream_status(const HpuCore *c,
                                   const HpuStream *st)
{
    uint32_t v = 0;

    /*
     * INJ_QUIESCE.STREAMS: stream 0 of engine 0 never reports stopping.
     * Spec version 9: not idle before its write-back record is written.
     */
    if (!st->active &&
        !(hpum_stream_enabled(st) && st->pi != st->ci && !hpum_uq_stopped(st)) &&
        !st->notify_due && !st->wb_busy &&
        !(st == &c->eng[0].st[0] &&
          (c->inj.quiesce & HPU_INJ_QUIESCE_STREAMS))) {
        v |= HPU_QS_STATUS_IDLE;
    }
    if (st->waiting) {
        v |= HPU_QS_STATUS_WAITING;
    }
    if (st->halted) {
        v |= HPU_QS_STATUS_HALTED;
    }
    if (st->hung) {
        v |= HPU_QS_STATUS_HUNG;
    }
    if (st->uq_error) {
        v |= HPU_QS_STATUS_ERROR;
    }
    if (st->uq_fault) {
        v |= HPU_QS_STATUS_FAULT;
    }
    if (st->uq_timeout) {
        v |= HPU_QS_STATUS_TIMEOUT;
    }
    return v;
}

static HpuStream *hpum_stream_at(HpuCore *c, uint32_t offset,
                                 unsigned int *e, unsigned int *s,
                                 uint32_t *reg)
{
    uint32_t rel = offset - HPU_QM_BASE;

    *e = rel / 0x1000;
    *s = (rel / 0x100) % 0x10;
    *reg = rel % 0x100;
    if (*s >= HPU_H1_STREAMS) {
        return NULL;
    }
    return &c->eng[*e].st[*s];
}

static HpuAccess hpum_qm_read(HpuCore *c, uint32_t offset,
                              uint32_t *val)
{
    unsigned int e, s;
    uint32_t reg;
    HpuStream *st = hpum_stream_at(c, offset, &e, &s, &reg);

    if (!st) {
        return HPU_ACCESS_UNMAPPED;
    }
    switch (reg) {
    case HPU_QS_RING_LO:
        *val = (uint32_t)st->ring;
        break;
    case HPU_QS_RING_HI:
        *val = (uint32_t)(st->ring >> 32);
        break;
    case HPU_QS_RING_SIZE:
        *val = st->ring_size;
        break;
    case HPU_QS_PI:
        *val = st->pi;
        break;
    case HPU_QS_CI:
        *val = st->ci;
        break;
    case HPU_QS_CQ_LO:
        *val = (uint32_t)st->cq;
        break;
    case HPU_QS_CQ_HI:
        *val = (uint32_t)(st->cq >> 32);
        break;
    case HPU_QS_CQ_SIZE:
        *val = st->cq_size;
        break;
    case HPU_QS_CQ_PI:
        *val = st->cq_pi;
        break;
    case HPU_QS_CTRL:
        *val = st->ctrl;
        break;
    case HPU_QS_STATUS:
        *val = hpum_stream_status(c, st);
        break;
    case HPU_QS_WB_LO:
        *val = (uint32_t)st->wb;
        break;
    case HPU_QS_WB_HI:
        *val = (uint32_t)(st->wb >> 32);
        break;
    case HPU_QS_IRQ_MOD:
        *val = st->irq_mod;
        break;
    case HPU_QS_DONE_LO:
        st->done_hi = (uint32_t)(st->done >> 32);
        *val = (uint32_t)st->done;
        break;
    case HPU_QS_DONE_HI:
        *val = st->done_hi;
        break;
    case HPU_QS_BUSY_NS_LO: {
        uint64_t v = hpum_stream_busy(c, st);

        st->busy_hi = (uint32_t)(v >> 32);
        *val = (uint32_t)v;
        break;
    }
    case HPU_QS_BUSY_NS_HI:
        *val = st->busy_hi;
        break;
    default:
        /* spec version 10: ASID, ARM, SIGNAL, TMO_MS, START */
        if (hpum_is_user_stream(s)) {
            return hpum_uq_reg_read(c, st, reg, val);
        }
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

static void hpum_stream_ctrl(HpuCore *c, unsigned int e, unsigned int s,
                             uint32_t val)
{
    HpuStream *st = &c->eng[e].st[s];
    bool user = hpum_is_user_stream(s);
    bool was = st->ctrl & HPU_QS_CTRL_ENABLE;
    bool running = hpum_stream_enabled(st);

    hpum_job_alert(c);
    if (user) {
        /*
         * Spec version 10: CTRL stores ENABLE only; RESUME leaves an error
         * stop of the enabled stream, ABORT turns its stop into ABORTED.
         */
        if ((val & HPU_QS_CTRL_ENABLE) && was) {
            if ((val & HPU_QS_CTRL_RESUME) && st->uq_error) {
                st->uq_error = false;
                if (hpum_stream_enabled(st) && st->pi != st->ci) {
                    c->ops->kick_engine(c->opaque, e);
                }
            }
            return;
        }
        if (!(val & HPU_QS_CTRL_ENABLE)) {
            if (was) {
                st->abort_req = val & HPU_QS_CTRL_ABORT;
                st->uq_error = st->uq_fault = st->uq_timeout = false;
            } else if ((val & HPU_QS_CTRL_ABORT) && st->active) {
                st->abort_req = true;   /* the stop is not done yet */
            }
        }
        val &= HPU_QS_CTRL_ENABLE;
    } else {
        val &= HPU_QS_CTRL_ENABLE | HPU_QS_CTRL_IRQ_EN;
    }
    st->ctrl = val;
    if ((val & HPU_QS_CTRL_ENABLE) && !was) {
        if (!st->ring || (st->ring & 63) ||
            !hpum_is_pow2_in(st->ring_size, HPU_QS_RING_MIN, HPU_QS_RING_MAX) ||
            !st->cq || (st->cq & (HPU_CQE_SIZE - 1)) ||
            !hpum_is_pow2_in(st->cq_size, HPU_QS_RING_MIN, HPU_QS_RING_MAX) ||
            (st->wb & (HPU_WB_SIZE - 1))) {
            HPU_LOG(c, "%s.%u enabled with a bad configuration (ring "
                    "0x%llx, %u entries; completion ring 0x%llx, %u "
                    "entries; write-back 0x%llx): halted",
                    hpum_engine_name(e), s,
                    (unsigned long long)st->ring, st->ring_size,
                    (unsigned long long)st->cq, st->cq_size,
                    (unsigned long long)st->wb);
            st->halted = true;
            return;
        }
        if (user && !hpum_uq_enable_ok(c, e, s)) {
            st->halted = true;
            return;
        }
        if (st->active) {
            HPU_LOG(c, "%s.%u enabled before its aborted descriptor "
                    "completed (STATUS.IDLE): that record is lost",
                    hpum_engine_name(e), s);
            /*
             * The descriptor the engine hangs in is gone with its record:
             * the engine lets go as if its ABORTED had been written.
             */
            if (hpum_engine_hangs_in(c, e, s)) {
                hpum_engine_let_go(c, e);
                c->ops->kick_engine(c->opaque, e);
            }
        }
        st->halted = false;
        st->gen++;
        st->active = false;
        st->waiting = false;
        st->hung = false;
        if (user) {
            hpum_uq_enable(st);
        } else {
            st->pi = st->ci = st->cq_pi = 0;
            st->done = 0;
        }
        st->busy_ns = 0;
        st->executing = false;
        st->err_status = st->err_where = 0;
        st->held = st->notify_records = 0;
        st->notify_due = false;
        st->notify_engine = false;
        st->mod_deadline = 0;
        if (user && st->pi != st->ci) {
            c->ops->kick_engine(c->opaque, e);
        }
    } else if (!(val & HPU_QS_CTRL_ENABLE)) {
        st->halted = false;
        if (st->active) {
            c->ops->kick_engine(c->opaque, e);  /* write ABORTED */
        } else if (running) {
            /* it stops: its write-back (spec version 10: and vector) */
            if (user) {
                hpum_uq_due(c, e, s, true);
            } else {
                hpum_stream_due(c, st);
            }
        }
    }
}

/* A PI write of stream @s of engine @e (the register or a doorbell). */
bool hpum_stream_pi(HpuCore *c, unsigned int e, unsigned int s, uint32_t val)
{
    HpuStream *st = &c->eng[e].st[s];

    if (hpum_stream_enabled(st) && val - st->ci > st->ring_size) {
        HPU_LOG(c, "%s.%u: PI %u is more than %u entries ahead of "
                "CI %u: ignored", hpum_engine_name(e), s, val,
                st->ring_size, st->ci);
        return false;
    }
    st->pi = val;
    HPU_TRACE(c, HPU_TRACE_DOORBELL, e, s, val);
    if (hpum_stream_enabled(st)) {
        c->ops->kick_engine(c->opaque, e);
    }
    return true;
}

static HpuAccess hpum_qm_write(HpuCore *c, uint32_t offset,
                               uint32_t val)
{
    unsigned int e, s;
    uint32_t reg;
    HpuStream *st = hpum_stream_at(c, offset, &e, &s, &reg);

    if (!st) {
        return HPU_ACCESS_UNMAPPED;
    }
    switch (reg) {
    case HPU_QS_RING_LO:
    case HPU_QS_RING_HI:
    case HPU_QS_RING_SIZE:
    case HPU_QS_CQ_LO:
    case HPU_QS_CQ_HI:
    case HPU_QS_CQ_SIZE:
    case HPU_QS_WB_LO:
    case HPU_QS_WB_HI:
        if ((st->ctrl & HPU_QS_CTRL_ENABLE) || st->active ||
            ((reg == HPU_QS_WB_LO || reg == HPU_QS_WB_HI ||
              hpum_is_user_stream(s)) &&
             (st->notify_due || st->wb_busy))) {
            /*
             * The ABORTED record of a disabled stream still goes to CQ_*
             * as they were (spec version 5), its write-back record to WB_*
             * (version 9): not IDLE, not writable.  hpum_stream_notify()
             * reads WB when it writes the record, so WB must not change
             * while one is due or being written.
             */
            HPU_LOG(c, "%s.%u: ring register BAR0+0x%x written while "
                    "the stream is %s: ignored", hpum_engine_name(e), s, offset,
                    (st->ctrl & HPU_QS_CTRL_ENABLE) ? "enabled" :
                    st->active ? "not idle (its ABORTED record is pending)" :
                    "not idle (its write-back record is pending)");
            break;
        }
        if (reg == HPU_QS_RING_LO) {
            st->ring = (st->ring & 0xffffffff00000000ULL) | val;
        } else if (reg == HPU_QS_RING_HI) {
            st->ring = (st->ring & 0xffffffffULL) | (uint64_t)val << 32;
        } else if (reg == HPU_QS_RING_SIZE) {
            st->ring_size = val;
        } else if (reg == HPU_QS_CQ_LO) {
            st->cq = (st->cq & 0xffffffff00000000ULL) | val;
        } else if (reg == HPU_QS_CQ_HI) {
            st->cq = (st->cq & 0xffffffffULL) | (uint64_t)val << 32;
        } else if (reg == HPU_QS_WB_LO) {
            st->wb = (st->wb & 0xffffffff00000000ULL) | val;
        } else if (reg == HPU_QS_WB_HI) {
            st->wb = (st->wb & 0xffffffffULL) | (uint64_t)val << 32;
        } else {
            st->cq_size = val;
        }
        break;
    case HPU_QS_IRQ_MOD:
        st->irq_mod = val & (HPU_QS_IRQ_MOD_COUNT_MASK |
                             HPU_QS_IRQ_MOD_DELAY_MASK);
        if (st->held) {
            hpum_stream_due(c, st);     /* none waits across a change */
        }
        break;
    case HPU_QS_PI:
        hpum_stream_pi(c, e, s, val);
        break;
    case HPU_QS_CTRL:
        hpum_stream_ctrl(c, e, s, val);
        break;
    case HPU_QS_CI:
    case HPU_QS_CQ_PI:
    case HPU_QS_STATUS:
    case HPU_QS_DONE_LO:
    case HPU_QS_DONE_HI:
    case HPU_QS_BUSY_NS_LO:
    case HPU_QS_BUSY_NS_HI:
        return HPU_ACCESS_READ_ONLY;
    default:
        /* spec version 10: ASID, ARM, SIGNAL, TMO_MS, START */
        if (hpum_is_user_stream(s)) {
            return hpum_uq_reg_write(c, e, s, reg, val);
        }
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

const HpuBlock hpum_qm_block = {
    .name = "qm",
    .base = HPU_QM_BASE,
    .size = HPU_QM_SIZE,
    .read = hpum_qm_read,
    .write = hpum_qm_write,
};

/* Reset and teardown */

void hpum_qm_reset(HpuCore *c, HpuResetKind kind)
{
    uint32_t eq_gen = c->eq.gen;
    unsigned int e, s;

    for (e = 0; e < HPU_H1_ENGINES; e++) {
        HpuEngine *eng = &c->eng[e];

        for (s = 0; s < HPU_H1_STREAMS; s++) {
            uint32_t gen = eng->st[s].gen;
            uint32_t pi = eng->st[s].pi;

            memset(&eng->st[s], 0, sizeof(eng->st[s]));
            eng->st[s].gen = gen + 1;
            /* spec version 10: a soft reset keeps the doorbells rung */
            if (kind == HPU_RESET_SOFT && hpum_is_user_stream(s)) {
                eng->st[s].pi = pi;
            }
        }
        eng->rr = 0;
        eng->stuck = false;
        eng->hung_in = false;
        hpum_engine_set_progress(eng, 0);
    }
    __atomic_store_n(&c->notify_pending, false, __ATOMIC_RELAXED);
    hpum_timer_cancel(c, HPU_TMR_IRQ_MOD);
    hpum_job_alert(c);
    memset(&c->eq, 0, sizeof(c->eq));
    c->eq.gen = eq_gen + 1;
}

void hpum_qm_stop(HpuCore *c)
{
    unsigned int e, s;

    for (e = 0; e < HPU_H1_ENGINES; e++) {
        c->eng[e].stuck = false;        /* a hung engine lets go */
        c->eng[e].hung_in = false;
        for (s = 0; s < HPU_H1_STREAMS; s++) {
            HpuStream *st = &c->eng[e].st[s];
            bool running = hpum_stream_enabled(st);

            st->ctrl &= ~HPU_QS_CTRL_ENABLE;
            /* spec version 10: user streams pause, without a vector */
            st->abort_req = false;
            if (st->active) {
                c->ops->kick_engine(c->opaque, e);
            } else if (running && hpum_is_user_stream(s)) {
                hpum_uq_due(c, e, s, false);
            } else if (running) {
                hpum_stream_due(c, st);  /* its write-back, as a disable */
            }
        }
    }
}

bool hpum_qm_idle(HpuCore *c)
{
    unsigned int e;

    for (e = 0; e < HPU_H1_ENGINES; e++) {
        if (c->eng[e].busy) {
            return false;
        }
    }
    return true;
}

bool hpum_qm_quiet(HpuCore *c)
{
    unsigned int e, s;

    for (e = 0; e < HPU_H1_ENGINES; e++) {
        if (c->eng[e].busy) {
            return false;
        }
        for (s = 0; s < HPU_H1_STREAMS; s++) {
            const HpuStream *st = &c->eng[e].st[s];

            if (st->active || st->notify_due || st->wb_busy) {
                return false;
            }
        }
    }
    return true;
}

void hpum_qm_fini(HpuCore *c)
{
    unsigned int e;

    for (e = 0; e < HPU_H1_ENGINES; e++) {
        free(c->eng[e].bounce);
        c->eng[e].bounce = NULL;
        free(c->eng[e].dma_runs);
        c->eng[e].dma_runs = NULL;
        hpum_mme_free(c->eng[e].mme);
        c->eng[e].mme = NULL;
    }
}
