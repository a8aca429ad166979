/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: declarations shared by the core's files (the list in
 * emu/core-sources).  Not for the QEMU glue or the tests.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_INTERNAL_H
#define HPU_INTERNAL_H

#include "hpu_core.h"

#define HPU_LOG(c, ...) ((c)->ops->log_guest_error((c)->opaque, __VA_ARGS__))

/* Trace point @id (HpuTraceId) with up to HPU_TRACE_ARGS arguments. */
#define HPU_TRACE(c, id, ...)                                           \
    do {                                                                \
        const uint64_t hpum_targ_[HPU_TRACE_ARGS] = { __VA_ARGS__ };    \
        (c)->ops->trace((c)->opaque, (id), hpum_targ_);                 \
    } while (0)

#define HPU_MIN(a, b)   ((a) < (b) ? (a) : (b))
#define HPU_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define HPU_NS_PER_MS   1000000ULL

typedef enum HpuResetKind {
    HPU_RESET_POWER_ON,         /* power-on, FLR: everything */
    HPU_RESET_SOFT,             /* SOFT_RESET completing */
    HPU_RESET_HARD,             /* HARD_RESET starting */
} HpuResetKind;

/* The core lock; hpum_unlock() then raises the vectors latched under it. */
void hpum_lock(HpuCore *c);
void hpum_unlock(HpuCore *c);

/*
 * Under the lock, right before a DMA (or an HBM write of an engine) that
 * is about to run without the lock: whether work of @epoch may still reach
 * memory (no reset since, the core not killed).  If so the access counts
 * as in flight until hpum_dma_end() (with the same @epoch), and a reset
 * that comes meanwhile is not done before it ends.
 */
bool hpum_dma_begin(HpuCore *c, uint32_t epoch);
void hpum_dma_end(HpuCore *c, uint32_t epoch);

/* All ones of @size bytes: what a function in reset answers to a read. */
static inline uint64_t hpum_all_ones(unsigned int size)
{
    return size >= 8 ? UINT64_MAX : (1ULL << (size * 8)) - 1;
}

/* A memory access found its work overtaken by a reset (hpum_mem_xfer). */
#define HPU_XFER_STALE          (-2)

/* Under the lock: raise MSI-X @vector once the lock is dropped. */
static inline void hpum_raise(HpuCore *c, unsigned int vector)
{
    c->irq_pending |= 1ULL << vector;
}

static inline void hpum_set_error(HpuCore *c, uint32_t bit)
{
    c->ctrl.error |= bit;
}

static inline uint64_t hpum_now(HpuCore *c)
{
    return c->ops->now_ns(c->opaque);
}

/* The management CPU runs the firmware (sensors, mailbox served). */
static inline bool hpum_cpu_running(HpuCore *c)
{
    return c->cpu.status == HPU_CPU_RUNNING;
}

/* hpu_core.c: device timers (under the lock) */
void hpum_timer_arm(HpuCore *c, HpuTimerId id, uint64_t ns);
void hpum_timer_cancel(HpuCore *c, HpuTimerId id);
bool hpum_timer_pending(HpuCore *c, HpuTimerId id);

/* @v in the register field @mask (contiguous bits), as FIELD_PREP does. */
static inline uint32_t hpum_field_prep(uint32_t mask, uint32_t v)
{
    return (v * (mask & -mask)) & mask;
}

static inline bool hpum_is_pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
    return v >= lo && v <= hi && !(v & (v - 1));
}

static inline uint32_t hpum_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t hpum_le64(const uint8_t *p)
{
    return (uint64_t)hpum_le32(p) | (uint64_t)hpum_le32(p + 4) << 32;
}

static inline void hpum_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void hpum_put_le32(uint8_t *p, uint32_t v)
{
    hpum_put_le16(p, (uint16_t)v);
    hpum_put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline void hpum_put_le64(uint8_t *p, uint64_t v)
{
    hpum_put_le32(p, (uint32_t)v);
    hpum_put_le32(p + 4, (uint32_t)(v >> 32));
}

/* hpu_mem.c: HBM, MMU, window, scrubber, ECC poison */
extern const HpuBlock hpum_mmu_block;
bool hpum_hbm_init(HpuCore *c);
void hpum_hbm_fini(HpuCore *c);
void hpum_mmu_reset(HpuCore *c, HpuResetKind kind);
/*
 * Hard reset: HBM content lost, all poison cleared.  Under the lock, hand
 * the clear to the worker (hpum_hbm_clear_step, a few chunks per call); it
 * sets hbm.clear_done and arms the hard-reset timer when it is done.
 */
void hpum_hbm_clear_start(HpuCore *c);
bool hpum_hbm_clear_step(HpuCore *c);
/* Poison the 2 MiB page holding @off; false if it already was. */
bool hpum_hbm_poison(HpuCore *c, uint64_t off);
bool hpum_hbm_in_range(HpuCore *c, uint64_t off, uint64_t len);

/* An MMU fault, bus error or ECC error met by an engine access. */
typedef struct HpuFault {
    int status;                 /* HPU_CQ_MMU_FAULT, _BUS_ERROR or _ECC */
    uint64_t va;
    uint32_t info;              /* FAULT_INFO layout, VALID set */
    uint16_t asid;
    bool host;                  /* a host bus access failed at @bus */
    uint64_t bus;
} HpuFault;

/*
 * Copy @len bytes between @buf and [@va, @va + @len) of address space
 * @asid on behalf of engine @e (@write: buf to memory).  Called without
 * the lock.  Returns HPU_CQ_OK, HPU_XFER_STALE if a reset since @epoch
 * (or hpum_core_kill()) stops it, or the failure with @f filled (an MMU
 * fault is already latched and counted; the caller posts its event).
 */
int hpum_mem_xfer(HpuCore *c, unsigned int e, uint32_t epoch,
                  uint16_t asid, uint64_t va, void *buf, uint64_t len,
                  bool write, HpuFault *f);
/*
 * hpum_mem_xfer() for the queue's own accesses (spec version 10: a user
 * stream's descriptor fetch and completion record): the same, but
 * INJ_DMA_FAIL does not act on it.
 */
int hpum_queue_xfer(HpuCore *c, unsigned int e, uint32_t epoch,
                    uint16_t asid, uint64_t va, void *buf, uint64_t len,
                    bool write, HpuFault *f);
/*
 * One piece of a LIN_DMA copy (at most HPU_DMA_PIECE bytes, ranges as
 * hpum_mem_xfer() takes them): [@src, @src + @n) to [@dst, @dst + @n) of
 * @asid for engine @e, the data moved once between host and HBM chunk
 * memory where it can be (source and destination translated as runs
 * under one lock hold, hpum_dma_copy() in hpu_mem.c), else read into
 * the engine's bounce buffer and written from it with hpum_mem_xfer().
 * The caller allocates @e's bounce buffer first.  Results as
 * hpum_mem_xfer().
 */
int hpum_dma_copy(HpuCore *c, unsigned int e, uint32_t epoch,
                  uint16_t asid, uint64_t src, uint64_t dst, uint64_t n,
                  HpuFault *f);
/* Power-on: all ECC poison cleared (HBM content kept; under the lock). */
void hpum_hbm_unpoison(HpuCore *c);
/* The worker's share of the scrubber: one chunk; false if no job. */
bool hpum_scrub_step(HpuCore *c);
bool hpum_scrub_ready(HpuCore *c);

/*
 * Copy @rows rows of @row_len bytes between @buf (dense: row r at
 * @buf + r * @row_len) and memory at @va + r * @stride of @asid for engine
 * @e (@write: buf to memory): the bulk form of hpum_mem_xfer() for 2-D
 * operands.  It translates a batch of page runs (up to 1 MiB, 64 runs)
 * under one lock hold, then copies them without the lock (memcpy from
 * HBM chunks, one dma_read/dma_write per host run); dense rows
 * (@stride == @row_len) are one run.  Results as hpum_mem_xfer(); on a
 * failure the rows before the failing run have been copied.
 */
int hpum_mem_xfer_rows(HpuCore *c, unsigned int e, uint32_t epoch,
                       uint16_t asid, uint64_t va, uint64_t stride,
                       uint64_t rows, uint64_t row_len, void *buf,
                       bool write, HpuFault *f);

/* A translated run of an engine's address space (hpum_mem_run()). */
typedef struct HpuMemRun {
    uint64_t va;
    uint64_t addr;              /* host bus address or HBM offset of @va */
    uint64_t len;               /* bytes contiguous from @va */
    bool host;
    bool inject;                /* INJ_DMA_FAIL took it: fail the access */
    bool write;                 /* translated for writing (else reading) */
} HpuMemRun;

/*
 * Under the lock: translate [@va, @va + @want) of @asid for engine @e as
 * far as it is physically contiguous (at least to the end of @va's page).
 * Returns 0, or the failure status with @f filled and an MMU fault
 * latched and counted, as hpum_mem_xfer() would (reads of a poisoned HBM
 * page fail ECC here, when the run is translated).  The caller copies
 * without the lock, between hpum_dma_begin() and hpum_dma_end() and with
 * hbm.users raised, through hpum_hbm_read_raw() / hpum_hbm_write_raw()
 * or the host's dma_read / dma_write.
 */
int hpum_mem_run(HpuCore *c, unsigned int e, uint16_t asid, uint64_t va,
                 uint64_t want, bool write, HpuMemRun *out, HpuFault *f);

/*
 * Under the lock: translations of @asid that an engine keeps using from
 * now on (a direct access, a TPC core's slice): an MMU_INV of the ASID
 * stays BUSY (MMU_INV_STATUS) until they are let go
 * (hpum_xlat_release_locked()).  Returns the generation to let them go
 * with.  An ASID out of range holds nothing (its accesses fault).
 */
uint32_t hpum_xlat_hold_locked(HpuCore *c, uint16_t asid);
/*
 * Under the lock: let go of translations of @asid held since generation
 * @gen; true if an MMU_INV of the ASID came since (they may be stale,
 * and that invalidation no longer waits for them).
 */
bool hpum_xlat_release_locked(HpuCore *c, uint16_t asid, uint32_t gen);
/*
 * Under the lock: whether an MMU_INV of @asid came since generation @gen
 * (translations held since then wait to be let go; nothing is changed).
 */
bool hpum_xlat_stale_locked(HpuCore *c, uint16_t asid, uint32_t gen);

/* Whether HBM offset @off lies in an ECC-poisoned 2 MiB page (no lock). */
static inline bool hpum_hbm_poisoned(HpuCore *c, uint64_t off)
{
    return __atomic_load_n(&c->hbm.poison[off >> HPU_HBM_CHUNK_SHIFT],
                           __ATOMIC_ACQUIRE);
}

/* HBM bytes (range checked by the caller); unbacked chunks read zero. */
void hpum_hbm_read_raw(HpuCore *c, uint64_t off, void *buf, uint64_t len);
/* An engine's HBM write (poisoned pages dropped); false: out of memory. */
bool hpum_hbm_write_raw(HpuCore *c, uint64_t off, const void *buf,
                        uint64_t len);
/*
 * The bytes of HBM [@off, @off + @len) (range checked by the caller, who
 * copies as for the two above), or NULL when they cross a 2 MiB chunk,
 * their chunk is not backed yet, or (@write) their page is poisoned: then
 * hpum_hbm_read_raw() / hpum_hbm_write_raw() give the zeros, allocate, or
 * drop the write.
 */
uint8_t *hpum_hbm_direct(HpuCore *c, uint64_t off, uint64_t len, bool write);

/* Engines (spec version 6, compute.md) */

static inline HpuEngineClass hpum_engine_class(unsigned int e)
{
    return e < HPU_ENGINE_TPC ? HPU_ENG_DMA :
           e == HPU_ENGINE_TPC ? HPU_ENG_TPC : HPU_ENG_MME;
}

/* "DMA3", "TPC", "MME1": the name of engine @e in the guest-error log. */
const char *hpum_engine_name(unsigned int e);

/* Internal step results besides the completion statuses (HPU_CQ_*). */
#define HPU_STEP_WAITING        (-1)
#define HPU_STEP_ABORT          HPU_XFER_STALE  /* also: a reset overtook it */
#define HPU_STEP_HANG           (-3)

/* What a step knows about the descriptor it works on. */
typedef struct HpuJob {
    uint32_t gen;               /* the stream's generation when it began */
    uint32_t epoch;             /* c->epoch when the step began */
    uint64_t seq;
    uint64_t cb_addr;
    uint32_t cb_size;
    uint32_t pos;               /* offset of the packet */
    uint16_t asid;              /* of the command buffer: every access */
    /* out: a WAIT that does not hold yet */
    uint32_t wait_sob;
    uint32_t wait_value;
    uint32_t wait_cond;
} HpuJob;

/*
 * One packet being executed, as its handler sees it: the engine @e and
 * stream @s, the job, the packet's bytes (@p, as long as its opcode's
 * size), and where a fault (@f) or an event (@ev) goes.
 *
 * A handler runs without the lock and returns a completion status
 * (HPU_CQ_*) or HPU_STEP_ABORT / HPU_STEP_HANG.  For a failure with an
 * event it sets @ev->id and, but for BAD_PACKET and PRIV (whose address
 * and info are the command buffer's and the offset), @ev->addr and
 * @ev->info; severity, engine and ASID are filled in by the caller, and an
 * MMU_FAULT, ECC or BUS_ERROR result from hpum_mem_xfer*() needs nothing
 * but its return value (the caller posts the event from @f).
 *
 * Compute handlers (TPC_LAUNCH, MME_GEMM) take every access through
 * hpum_mem_xfer() / hpum_mem_xfer_rows() with @j->epoch and @j->asid, and
 * call hpum_job_progress() after each unit of work (an index-space member,
 * an output tile) and hpum_job_check() before each store they begin: a
 * result other than HPU_CQ_OK is returned at once, with nothing more
 * stored.  Those four take the core lock themselves (call them without
 * it) and may be called from several worker threads of the one engine at
 * once (the TPC's cores), each with its own HpuFault; hpum_pkt_bad() and
 * hpum_bad_launch() fill @ev, so only the thread that returns the
 * handler's result calls them.
 */
typedef struct HpuPacket {
    HpuCore *c;
    unsigned int e;
    unsigned int s;
    HpuJob *j;
    uint8_t *p;
    HpuFault *f;
    HpuEvent *ev;
} HpuPacket;

/*
 * Whether the packet's job may go on (takes the lock): HPU_CQ_OK; or
 * HPU_STEP_ABORT if its stream was disabled or re-enabled, or a soft,
 * hard or power-on reset came (abandon it: the caller completes it
 * ABORTED, or drops it after a reset); or HPU_STEP_HANG if INJ_HANG holds
 * the engine (stop there: the engine stays in this packet until the
 * stream is disabled or a reset comes).
 */
int hpum_job_check(const HpuPacket *k);
/* A unit of work is done: note the engine's progress, then check. */
int hpum_job_progress(const HpuPacket *k);
/*
 * The last unit of work is done: note the progress only (the packet has
 * made all its stores and completes whatever INJ_HANG or a disable says).
 */
void hpum_job_note_progress(const HpuPacket *k);
/*
 * Under the lock: hpum_job_check(), after noting the engine's progress as
 * hpum_job_note_progress() does if @progress (then the same as
 * hpum_job_progress() in one critical section).
 */
int hpum_job_check_locked(const HpuPacket *k, bool progress);
/*
 * Under the lock: something hpum_job_check() looks at changed (a stream's
 * control or generation, a reset, the epoch, INJ_HANG), or an MMU_INV
 * waits for translations held (hpum_xlat_hold_locked()).  Compute cores
 * that found their job going on, with their translations current, may
 * read job_alert without the lock instead of checking again, as long as
 * it stays the same (hpum_job_unchanged()).
 */
static inline void hpum_job_alert(HpuCore *c)
{
    __atomic_store_n(&c->job_alert, c->job_alert + 1, __ATOMIC_RELEASE);
}

/* Without the lock: whether job_alert is still @seen (read under it). */
static inline bool hpum_job_unchanged(HpuCore *c, uint32_t seen)
{
    return __atomic_load_n(&c->job_alert, __ATOMIC_ACQUIRE) == seen;
}

/*
 * An engine's last progress (device time), read and set atomically: a
 * compute core notes it without the lock (hpum_job_note_progress_unlocked()).
 */
static inline uint64_t hpum_engine_progress(const HpuEngine *eng)
{
    return __atomic_load_n(&eng->progress_ns, __ATOMIC_RELAXED);
}

static inline void hpum_engine_set_progress(HpuEngine *eng, uint64_t ns)
{
    __atomic_store_n(&eng->progress_ns, ns, __ATOMIC_RELAXED);
}

/*
 * Without the lock, while hpum_job_unchanged() holds since a check found
 * the job going on: hpum_job_note_progress(); the engine's progress only
 * moves forward.
 */
void hpum_job_note_progress_unlocked(const HpuPacket *k);
/* Under the lock: whether the packet's job must stop (hpum_job_check()). */
bool hpum_job_stopped_locked(const HpuPacket *k);
/*
 * hpum_mem_xfer_rows() for packet @k's job, in its epoch and ASID: each
 * batch also begins only if the job may go on (its stream's generation,
 * enable, no soft reset), checked in the critical section that begins it;
 * HPU_STEP_ABORT otherwise.
 */
int hpum_job_xfer_rows(const HpuPacket *k, uint64_t va, uint64_t stride,
                       uint64_t rows, uint64_t row_len, void *buf,
                       bool write);
/* A direct access (hpum_job_direct()) while it is in flight. */
typedef struct HpuDirect {
    uint8_t *p;                 /* host address of @va, or NULL: copy */
    uint64_t va, off, stride, rows, row_len;
    uint32_t gen;               /* its ASID's hbm.inv_gen when it began */
    uint16_t asid;
    bool write;
} HpuDirect;

/*
 * Bounds of a direct access: the HBM span it covers (first to last byte
 * of its rows) and the page translations it may take under the lock.
 * Above either, the engine copies.
 */
#define HPU_DIRECT_SPAN_MAX     (256ULL << 20)
#define HPU_DIRECT_XLAT_MAX     2048

/*
 * Direct access for packet @k's job to the @rows rows of @row_len bytes at
 * @va + r * @stride (an engine that computes in place instead of copying,
 * the MMEs): every byte of the rows is translated under the lock for a
 * read or, with @write, a write (page by page, as hpum_job_xfer_rows()
 * would translate them; the gaps between rows are not), after the checks
 * that begin a batch of hpum_job_xfer_rows().  If the rows are all in HBM
 * at offsets that follow their addresses, inside one backed chunk (for
 * @write allocated if needed; or backed chunks that follow each other in
 * hbm.base) that no ECC poison touches, within HPU_DIRECT_SPAN_MAX and
 * HPU_DIRECT_XLAT_MAX (translations, and rows: at most that many, and
 * none overlapping the next, so the lock is held for a bounded walk),
 * the access is then in flight (hpum_dma_begin(),
 * hbm.users raised, counted for MMU_INV_STATUS) and @d->p is the host
 * address of @va: the rows are at @d->p + r * @stride until
 * hpum_job_direct_end().  Otherwise @d->p is NULL and nothing is latched
 * or begun: the caller takes hpum_job_xfer_rows(), which reports what it
 * finds.  Returns HPU_CQ_OK, or HPU_XFER_STALE / HPU_STEP_ABORT as that
 * would (@d->p NULL).
 */
int hpum_job_direct(const HpuPacket *k, uint64_t va, uint64_t stride,
                    uint64_t rows, uint64_t row_len, bool write,
                    HpuDirect *d);
/*
 * The end of a direct access that hpum_job_direct() began (@d->p set; it
 * is cleared).  A read whose HBM was poisoned meanwhile is an ECC error,
 * as the copy would have been (HPU_CQ_ECC, latched at its first poisoned
 * byte); else HPU_CQ_OK.  A write's bytes stay where they landed.
 */
int hpum_job_direct_end(const HpuPacket *k, HpuDirect *d);
/* Fail the packet BAD_PACKET with @why in the guest-error log. */
int hpum_pkt_bad(const HpuPacket *k, const char *why);
/*
 * Fail the packet BAD_LAUNCH: log @why, event BAD_LAUNCH with the
 * descriptor's address @desc and the rule's code @code.
 */
int hpum_bad_launch(const HpuPacket *k, uint64_t desc, uint32_t code,
                    const char *why);

/* hpu_tpc.c: the TPC_LAUNCH packet (engine 8) */
int hpum_tpc_launch(const HpuPacket *k);

/* hpu_mme.c: the MME_GEMM packet (engines 9, 10) */
int hpum_mme_gemm(const HpuPacket *k);
/*
 * Set OpenBLAS's (process-wide) thread count for the MMEs' products:
 * @threads (0: 1), applied before the next product.  Products of all MMEs
 * are serialised (hpu_mme.c).  Takes no lock: it runs under the BQL.
 */
void hpum_mme_setup(unsigned int threads);
/*
 * Unit tests only (NULL otherwise): called for packet @k just before each
 * product, with the process's BLAS lock held and the operands used in
 * place in flight.
 */
extern void (*hpum_mme_test_hook)(const HpuPacket *k);
/* Free an engine's MME work buffers (teardown). */
void hpum_mme_free(HpuMmeBufs *b);

/* hpu_qm.c: queue managers, engines, sync objects, event queue */
extern const HpuBlock hpum_eq_block;
extern const HpuBlock hpum_qm_block;
extern const HpuBlock hpum_sob_block;
void hpum_qm_reset(HpuCore *c, HpuResetKind kind);
/* Soft reset starts: abort every stream's work, release hung engines. */
void hpum_qm_stop(HpuCore *c);
/* No engine runs, no descriptor is in flight, no write-back is due. */
bool hpum_qm_quiet(HpuCore *c);
/* No engine is inside a step. */
bool hpum_qm_idle(HpuCore *c);
void hpum_qm_fini(HpuCore *c);
/* Post an event of work of @epoch now (called without the lock). */
void hpum_eq_post(HpuCore *c, const HpuEvent *ev,
                  uint32_t epoch);
/* Queue an event to post when the lock drops (under the lock). */
void hpum_event_defer(HpuCore *c, const HpuEvent *ev);
/*
 * Write the deferred events, and make the stream notifications (spec
 * version 9) that came due under the lock (called without the lock).
 */
void hpum_events_drain(HpuCore *c);
/* HPU_TMR_IRQ_MOD fired: streams whose moderation delay ended notify. */
void hpum_qm_mod_timer(HpuCore *c);
/* Under the lock: a sync object changed, wake engines with a WAIT. */
void hpum_sob_changed(HpuCore *c);
/* Under the lock: the records @st holds back are to be notified now. */
void hpum_stream_due(HpuCore *c, HpuStream *st);
/*
 * Make the notifications due on stream @s of engine @e (lock held; dropped
 * for the write-back record).  @engine: called by the engine's thread.
 */
void hpum_stream_notify(HpuCore *c, unsigned int e, unsigned int s,
                        bool engine);
/*
 * Under the lock: the descriptor in flight of stream @s of engine @e is
 * done with (completed or left undone): the engine lets go if it hangs in
 * it, the stream has nothing in flight.
 */
void hpum_stream_retire(HpuCore *c, unsigned int e, unsigned int s);
/*
 * Under the lock: a PI write (register or doorbell) of stream @s of engine
 * @e; false if ignored (more than RING_SIZE ahead of CI, logged).
 */
bool hpum_stream_pi(HpuCore *c, unsigned int e, unsigned int s,
                    uint32_t val);
/* Whether @st is enabled and not HALTED. */
static inline bool hpum_stream_enabled(const HpuStream *st)
{
    return (st->ctrl & HPU_QS_CTRL_ENABLE) && !st->halted;
}

/* hpu_uq.c: user streams and their doorbell pages (spec version 10) */

/* Whether stream @s is a user stream (4-15). */
static inline bool hpum_is_user_stream(unsigned int s)
{
    return s >= HPU_H1_KSTREAMS;
}

/* A user stream stopped by an error, a queue fault or a timeout. */
static inline bool hpum_uq_stopped(const HpuStream *st)
{
    return st->uq_error || st->uq_fault || st->uq_timeout;
}

/*
 * The doorbell pages, checked before the access rules (a refused access
 * only counts in UQ_DB_REFUSED): whether @addr lies in them; if so the
 * access was handled (a read's value in @val).  Under the lock.
 */
bool hpum_uq_db_read(HpuCore *c, uint64_t addr, unsigned int size,
                     uint32_t *val);
bool hpum_uq_db_write(HpuCore *c, uint64_t addr, uint64_t val,
                      unsigned int size);
/* The user-stream registers (ASID, ARM, SIGNAL, TMO_MS, START), locked. */
HpuAccess hpum_uq_reg_read(HpuCore *c, HpuStream *st, uint32_t reg,
                           uint32_t *val);
HpuAccess hpum_uq_reg_write(HpuCore *c, unsigned int e, unsigned int s,
                            uint32_t reg, uint32_t val);
/* Whether a user stream's registers take writes now (disabled and IDLE). */
bool hpum_uq_writable(const HpuStream *st);
/* Enable: the user-stream rules hold (else a guest error is logged). */
bool hpum_uq_enable_ok(HpuCore *c, unsigned int e, unsigned int s);
/* Enable: DONE, CI, CQ_PI from START; PI kept if in reach; state cleared. */
void hpum_uq_enable(HpuStream *st);
/*
 * Under the lock: a notification of user stream @s of engine @e is due:
 * its write-back record, then (@vec) the engine's vector.
 */
void hpum_uq_due(HpuCore *c, unsigned int e, unsigned int s, bool vec);
/*
 * The engine's step for a user stream (lock held; dropped for memory):
 * fetch the next descriptor through the MMU; complete the one in flight
 * with @status at packet @offset (the record through the MMU, SIGNAL,
 * error stop, ARM), or pause it (ABORTED without CTRL.ABORT).
 */
void hpum_uq_fetch_desc(HpuCore *c, unsigned int e, unsigned int s);
void hpum_uq_complete(HpuCore *c, unsigned int e, unsigned int s,
                      uint32_t gen, int status, uint32_t offset);
/*
 * Under the lock, from the watchdog scan: time out user streams whose
 * descriptor outlived TMO_MS; lowers *@next (device time) to the next
 * moment one may.
 */
void hpum_uq_tmo_scan(HpuCore *c, uint64_t now, uint64_t *next);

/*
 * hpu_core.c: a 32-bit BAR0 write by a WREG packet of work of @epoch
 * (dropped if a reset overtook it); called without the lock.
 */
void hpum_core_write_epoch(HpuCore *c, uint64_t addr, uint32_t val,
                           uint32_t epoch);

/* hpu_core.c: latch MISC causes, raise vector 0 if enabled (under the lock) */
void hpum_misc_cause(HpuCore *c, uint32_t cause);

/* hpu_ras.c: management CPU, watchdog, fault injection */
extern const HpuBlock hpum_cpu_block;
extern const HpuBlock hpum_inj_block;
void hpum_ras_reset(HpuCore *c, HpuResetKind kind);
/* The boot ROM starts (power-on, hard reset done): ROM_INIT. */
void hpum_cpu_boot(HpuCore *c);
/* The accepted image starts: BOOTING, RUNNING HPU_CPU_BOOT_NS later. */
void hpum_cpu_start(HpuCore *c);
void hpum_cpu_timer(HpuCore *c, HpuTimerId id);
/* WDT_MS changed or the watchdog timer fired. */
void hpum_wdt_update(HpuCore *c, bool expired);

/* hpu_fw.c: boot ROM, image verification, flash, mailbox (spec version 4) */
extern const HpuBlock hpum_mbox_block;
bool hpum_fw_init(HpuCore *c);
void hpum_fw_fini(HpuCore *c);
/* Power-on (everything but the flash content) or hard reset starting. */
void hpum_fw_reset(HpuCore *c, HpuResetKind kind);
/* INJ_FLASH written with @val (from the fault-injection block). */
void hpum_fw_inj_flash(HpuCore *c, uint32_t val);
/* BOOT_CMD .. FW_BUILD7 (BAR0 + 0x4014..0x405f), from the CPU block. */
HpuAccess hpum_rom_read(HpuCore *c, uint32_t offset,
                        uint32_t *val);
HpuAccess hpum_rom_write(HpuCore *c, uint32_t offset,
                         uint32_t val);
void hpum_fw_timer(HpuCore *c, HpuTimerId id);
/* The CPU became RUNNING: tables in force, sensors start, mailbox served. */
void hpum_fw_running(HpuCore *c);
/* The CPU stopped running (HALTED): sensors stop. */
void hpum_fw_stopped(HpuCore *c);

/*
 * Verify @len bytes of image at @img (@declared: FW_IMG_SIZE, or @len for
 * the flash) as the boot ROM does, in the order of the spec.  Returns the
 * refusal code (HPU_FW_ERR_*); on acceptance @out gets the tables (limits
 * at their defaults) and @stored the length to keep (signed region and
 * trailer).  @why gets what was wrong (for the guest error log).
 */
uint32_t hpum_fw_verify(const uint8_t *img, uint64_t len, uint64_t declared,
                        const uint8_t *key, uint32_t min_version,
                        HpuFwInfo *out, uint32_t *stored,
                        char *why, size_t whylen);

/* hpu_sensors.c: sensors, the thermal and power model, busy counters */
extern const HpuBlock hpum_sensor_block;
extern const HpuBlock hpum_busy_block;
/* Power-on or hard reset (a soft reset keeps both). */
void hpum_sensors_reset(HpuCore *c, HpuResetKind kind);
/* The CPU became RUNNING: sensors start from the accepted image's tables. */
void hpum_sensor_start(HpuCore *c);
/* One sensor period of the firmware (the CPU is RUNNING). */
void hpum_sensor_period(HpuCore *c);
/* Under the lock: engine @e starts / ends executing a packet. */
void hpum_busy_begin(HpuCore *c, unsigned int e);
void hpum_busy_end(HpuCore *c, unsigned int e);

/* hpu_nic.c: NIC ports (spec version 7, nic.md) */
extern const HpuBlock hpum_nic_block;
/* Frame buffers of the configured ports; false: out of memory. */
bool hpum_nic_init(HpuCore *c);
void hpum_nic_fini(HpuCore *c);
/*
 * Every port register to its reset value, frames held dropped, work in
 * progress overtaken (ring generations bumped): power-on and the end of a
 * soft reset (the LINK cause set if the link is up), the start of a hard
 * reset (hpum_nic_hard_done() sets it at its end).
 */
void hpum_nic_reset(HpuCore *c, HpuResetKind kind);
void hpum_nic_hard_done(HpuCore *c);
/* Soft reset starts: rings stopped at once, frames held dropped. */
void hpum_nic_stop(HpuCore *c);
/* No transmit step or receive is in progress without the lock. */
bool hpum_nic_quiet(HpuCore *c);

#endif /* HPU_INTERNAL_H */
