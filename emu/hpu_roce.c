/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: the RoCE v2 engine (spec version 7 part 2,
 * Documentation/hw/roce.md): control block, command interface, object
 * tables, doorbells, event ring, and the RC/UD transport on the ports.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "hpu_roce.h"

#define PSN_MASK        0xffffffu

/* BTH opcodes (IBA) */
enum {
    OP_SEND_FIRST = 0x00, OP_SEND_MIDDLE, OP_SEND_LAST, OP_SEND_LAST_IMM,
    OP_SEND_ONLY, OP_SEND_ONLY_IMM, OP_WRITE_FIRST, OP_WRITE_MIDDLE,
    OP_WRITE_LAST, OP_WRITE_LAST_IMM, OP_WRITE_ONLY, OP_WRITE_ONLY_IMM,
    OP_READ_REQ, OP_READ_RESP_FIRST, OP_READ_RESP_MIDDLE,
    OP_READ_RESP_LAST, OP_READ_RESP_ONLY, OP_ACK,
    OP_UD_SEND_ONLY = 0x64, OP_UD_SEND_ONLY_IMM = 0x65,
};

#define AETH_ACK        0x1f    /* ACK, credits unlimited */
#define AETH_RNR        0x20
#define AETH_NAK_SEQ    0x60
#define AETH_NAK_INV    0x61
#define AETH_NAK_ACC    0x62
#define AETH_NAK_OP     0x63

static HpuRoce *R(HpuCore *c)
{
    return c->roce;
}

static uint32_t psn_add(uint32_t a, uint32_t b)
{
    return (a + b) & PSN_MASK;
}

/* a - b in the 24-bit PSN space, as a signed distance */
static int32_t psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)(((a - b) & PSN_MASK) << 8) >> 8;
}

static uint32_t be24(const uint8_t *p)
{
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static void put_be24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 16);
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)v;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | be24(p + 1);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    put_be24(p + 1, v);
}

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void put_be64(uint8_t *p, uint64_t v)
{
    put_be32(p, (uint32_t)(v >> 32));
    put_be32(p + 4, (uint32_t)v);
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static bool all_zero(const uint8_t *p, size_t n)
{
    while (n--) {
        if (*p++) {
            return false;
        }
    }
    return true;
}

static uint32_t mtu_bytes(uint8_t mtu)
{
    return 128u << mtu;
}

/*
 * ICRC: CRC-32 (reflected 0xedb88320) from the register 0xdebb20e3.  zlib's
 * crc32() runs the same CRC with the register inverted on the way in and out
 * (and several bytes per step, where a byte-wise table took most of a
 * transfer's time).
 */
static uint32_t crc_run(uint32_t crc, const uint8_t *p, size_t n)
{
    return ~(uint32_t)crc32_z(~crc, p, n);
}

/*
 * The ICRC of the frame @f whose IP header starts at @ip (version 4 or 6)
 * and whose ICRC is at @end: over IP, UDP and BTH onward with the variant
 * fields set to ones, inverted.
 */
static uint32_t roce_icrc(const uint8_t *ip, const uint8_t *end)
{
    uint8_t h[40 + 8 + 12];
    size_t iph = (ip[0] >> 4) == 4 ? 20 : 40;
    uint32_t crc;

    memcpy(h, ip, iph + 8 + 12);
    if (iph == 20) {
        h[1] = 0xff;            /* TOS */
        h[8] = 0xff;            /* TTL */
        h[10] = h[11] = 0xff;   /* checksum */
    } else {
        h[0] |= 0x0f;           /* traffic class, flow label */
        h[1] = h[2] = h[3] = 0xff;
        h[7] = 0xff;            /* hop limit */
    }
    h[iph + 6] = h[iph + 7] = 0xff;     /* UDP checksum */
    h[iph + 8 + 4] = 0xff;              /* BTH reserved byte */
    crc = crc_run(0xdebb20e3u, h, iph + 8 + 12);
    crc = crc_run(crc, ip + iph + 8 + 12, end - (ip + iph + 8 + 12));
    return ~crc;
}

/* Counters */

static void port_count(HpuCore *c, unsigned int p, unsigned int i, uint64_t n)
{
    if (p < HPU_NIC_MAX_PORTS) {
        R(c)->port[p].cnt[i] += n;
    }
}

/* Event ring (ASID 0 addresses) */

static int roce_xfer(HpuCore *c, uint16_t asid, uint64_t va, void *buf,
                     uint64_t len, bool write, HpuFault *f);

/* The ring restarts empty (enable, reset): a writer in flight stops. */
static void roce_eq_restart(HpuRoce *r)
{
    r->eq_pi = r->eq_ci = 0;
    r->eq_dropped += r->evq_count;      /* made, never to be written */
    r->evq_done += r->evq_count;
    r->evq_head = r->evq_count = 0;
    r->eq_writing = false;
    r->eq_epoch++;
}

/*
 * Write the events made so far, in order, each entry before EQ_PI covers
 * it.  Called with the lock held, dropped around each write; a caller
 * finding another writer at work leaves its event to that one.
 */
static void roce_eq_write(HpuCore *c)
{
    HpuRoce *r = R(c);
    uint32_t epoch = r->eq_epoch;
    uint8_t e[HPU_ROCE_EQE_SIZE];
    uint32_t dma_epoch;

    if (r->eq_writing) {
        return;
    }
    r->eq_writing = true;
    while (r->evq_count) {
        HpuFault f = { 0 };
        uint64_t at;
        int rc;

        if (!(r->eq_ctrl & HPU_ROCE_EQ_ENABLE) || c->dead) {
            r->eq_dropped += r->evq_count;      /* disabled meanwhile */
            r->evq_done += r->evq_count;
            r->evq_count = 0;
            break;
        }
        /* Enabled: EQ_SIZE was checked then and cannot change meanwhile. */
        at = r->eq_base + (uint64_t)HPU_ROCE_EQE_SIZE * (r->eq_pi % r->eq_size);
        memcpy(e, r->evq[r->evq_head], sizeof(e));
        /* The epoch under the lock: a reset from now on waits for the write. */
        dma_epoch = c->epoch;
        r->eq_xfers++;
        hpum_unlock(c);
        rc = hpum_mem_xfer(c, HPU_ROCE_EVENT_ENGINE, dma_epoch, 0, at, e,
                           sizeof(e), true, &f);
        hpum_lock(c);
        r->eq_xfers--;
        if (r->eq_epoch != epoch) {
            return;             /* restarted meanwhile: its writer owns it */
        }
        r->evq_head = (r->evq_head + 1) % HPU_ROCE_EVQ_LEN;
        r->evq_count--;
        r->evq_done++;
        /* A write that failed loses the entry; EQ_PI moves on (posted). */
        r->eq_pi++;
        if (rc != HPU_CQ_OK) {
            r->eq_dropped++;
            if (rc == HPU_CQ_MMU_FAULT) {
                hpum_event_defer(c, &(HpuEvent){
                    .id = HPU_EVENT_MMU_FAULT,
                    .severity = HPU_EVENT_SEV_ERROR,
                    .engine = HPU_ROCE_EVENT_ENGINE,
                    .addr = f.va ? f.va : at, .info = f.info,
                });
            }
        }
        if (r->eq_ctrl & HPU_ROCE_EQ_IRQ) {
            hpum_raise(c, HPU_VEC_ROCE);
        }
    }
    r->eq_writing = false;
}

/*
 * CMD_STATUS.BUSY: the command runs, or events made before it completed
 * are not all written yet.
 */
static bool roce_cmd_busy(HpuRoce *r)
{
    return (r->cmd_status & HPU_ROCE_CMD_BUSY) ||
           (int32_t)(r->evq_done - r->cmd_ev_mark) < 0;
}

static void roce_event(HpuCore *c, uint16_t type, uint16_t port,
                       uint32_t obj, uint32_t cause, uint64_t addr)
{
    HpuRoce *r = R(c);
    uint8_t *e;

    if (!(r->eq_ctrl & HPU_ROCE_EQ_ENABLE) ||
        r->eq_pi + r->evq_count - r->eq_ci >= r->eq_size ||
        r->evq_count == HPU_ROCE_EVQ_LEN) {
        r->eq_dropped++;
        return;
    }
    e = r->evq[(r->evq_head + r->evq_count) % HPU_ROCE_EVQ_LEN];
    memset(e, 0, HPU_ROCE_EQE_SIZE);
    hpum_put_le16(e + HPU_ROCE_EQE_TYPE, type);
    hpum_put_le16(e + HPU_ROCE_EQE_PORT, port);
    hpum_put_le32(e + HPU_ROCE_EQE_OBJECT, obj);
    hpum_put_le64(e + HPU_ROCE_EQE_TIMESTAMP, hpum_now(c));
    hpum_put_le32(e + HPU_ROCE_EQE_CAUSE, cause);
    hpum_put_le64(e + HPU_ROCE_EQE_ADDR, addr);
    r->evq_count++;
    roce_eq_write(c);
}

/*
 * Memory of @asid for the engine, called with the lock held: dropped
 * around the access.  Returns 0, 1 (a fault: @f filled, the device's
 * MMU_FAULT event queued) or HPU_XFER_STALE (a reset overtook the work:
 * every object may be gone).
 */
static int roce_xfer(HpuCore *c, uint16_t asid, uint64_t va, void *buf,
                     uint64_t len, bool write, HpuFault *f)
{
    HpuRoce *r = R(c);
    uint32_t gen = r->gen, epoch = c->epoch;
    int rc;

    if (!len) {
        return 0;
    }
    if (r->wipe || c->dead) {
        return HPU_XFER_STALE;
    }
    hpum_unlock(c);
    rc = hpum_mem_xfer(c, HPU_ROCE_EVENT_ENGINE, epoch, asid, va, buf, len,
                       write, f);
    hpum_lock(c);
    if (rc == HPU_XFER_STALE || r->gen != gen || r->wipe) {
        return HPU_XFER_STALE;
    }
    if (rc == HPU_CQ_OK) {
        return 0;
    }
    if (rc == HPU_CQ_MMU_FAULT) {
        HpuEvent ev = {
            .id = HPU_EVENT_MMU_FAULT, .severity = HPU_EVENT_SEV_ERROR,
            .engine = HPU_ROCE_EVENT_ENGINE, .asid = asid,
            .addr = f->va, .info = f->info,
        };

        hpum_event_defer(c, &ev);
    }
    if (!f->va) {
        f->va = va;
    }
    return 1;
}

/* Completions */

typedef struct RoceCqe {
    uint64_t wr_id;
    uint32_t len;
    uint8_t imm[4];
    uint8_t op;
    uint8_t status;
    uint8_t flags;
    uint32_t src_qpn;
    uint16_t wqe_idx;   /* with HPU_ROCE_CQE_WQE_IDX in flags */
    bool solicited;
} RoceCqe;

static void cq_fail(HpuCore *c, uint32_t cqn, uint32_t cause, uint64_t addr)
{
    HpuRoceCq *cq = &R(c)->cq[cqn];

    if (!cq->error) {
        cq->error = true;
        HPU_LOG(c, "ROCE: CQ %u in error (cause %u)", cqn, cause);
        roce_event(c, HPU_ROCE_EV_CQ_ERROR, 0, cqn, cause, addr);
    }
}

/* Write a CQE to @cqn: 0, 1 (the CQ is in error) or HPU_XFER_STALE. */
static int cq_post(HpuCore *c, uint32_t cqn, uint32_t qpn, const RoceCqe *e)
{
    HpuRoceCq *cq = &R(c)->cq[cqn];
    uint32_t n = 1u << cq->log, ci, pi;
    uint8_t b[HPU_ROCE_CQE_SIZE] = { 0 }, ci_b[4];
    HpuFault f = { 0 };
    uint64_t at;
    int rc;

    if (!cq->used || cq->error) {
        return 1;
    }
    rc = roce_xfer(c, cq->asid, cq->dbr, ci_b, 4, false, &f);
    if (rc) {
        if (rc == 1) {
            cq_fail(c, cqn, HPU_ROCE_CAUSE_MMU_FAULT, f.va);
        }
        return rc;
    }
    ci = hpum_le32(ci_b);
    pi = cq->pi;
    if (pi - ci >= n) {
        cq_fail(c, cqn, HPU_ROCE_CAUSE_OVERFLOW, 0);
        return 1;
    }
    hpum_put_le64(b + HPU_ROCE_CQE_WR_ID, e->wr_id);
    hpum_put_le32(b + HPU_ROCE_CQE_BYTE_LEN, e->len);
    memcpy(b + HPU_ROCE_CQE_IMM, e->imm, 4);
    hpum_put_le32(b + HPU_ROCE_CQE_QPN_OP,
                  qpn | (uint32_t)e->op << HPU_ROCE_CQE_OP_SHIFT);
    b[HPU_ROCE_CQE_STATUS] = e->status;
    b[HPU_ROCE_CQE_FLAGS] = e->flags;
    hpum_put_le16(b + HPU_ROCE_CQE_WQE_IDX_OFF, e->wqe_idx);
    hpum_put_le32(b + HPU_ROCE_CQE_SRC_QPN, e->src_qpn);
    at = cq->ring + (uint64_t)HPU_ROCE_CQE_SIZE * (pi % n);
    rc = roce_xfer(c, cq->asid, at, b, HPU_ROCE_CQE_OWNER, true, &f);
    if (!rc) {
        b[HPU_ROCE_CQE_OWNER] = ((pi / n) & 1) ? 0 : HPU_ROCE_CQE_OWNER_BIT;
        rc = roce_xfer(c, cq->asid, at + HPU_ROCE_CQE_OWNER,
                       b + HPU_ROCE_CQE_OWNER, 1, true, &f);
    }
    if (rc) {
        if (rc == 1) {
            cq_fail(c, cqn, HPU_ROCE_CAUSE_MMU_FAULT, f.va);
        }
        return rc;
    }
    HPU_TRACE(c, HPU_TRACE_ROCE_CQE, cqn, qpn, e->status, pi);
    cq->pi++;
    if (cq->arm == HPU_ROCE_CQ_ARM_NEXT ||
        (cq->arm == HPU_ROCE_CQ_ARM_SOLICITED &&
         (e->solicited || e->status))) {
        cq->arm = HPU_ROCE_CQ_ARM_NONE;
        roce_event(c, HPU_ROCE_EV_CQ_COMPLETION, 0, cqn, 0, 0);
    }
    return 0;
}

static void qp_error(HpuCore *c, uint32_t qpn, uint8_t cause, uint64_t addr)
{
    HpuRoceQp *qp = R(c)->qp[qpn];

    if (qp->state == HPU_ROCE_QPS_ERR) {
        return;
    }
    HPU_TRACE(c, HPU_TRACE_ROCE_QP_ERR, qpn, cause);
    qp->state = HPU_ROCE_QPS_ERR;
    qp->cause = cause;
    qp->flush = true;
    qp->deadline = 0;
    qp->rnr_wait = false;
    qp->rd_n = 0;
    qp->ack_defer = false;
    if (cause != HPU_ROCE_CAUSE_MODIFY) {
        HPU_LOG(c, "ROCE: QP %u to ERR (cause %u)", qpn, cause);
        roce_event(c, HPU_ROCE_EV_QP_FATAL, qp->port, qpn, cause, addr);
    }
    if (qp->srq) {
        roce_event(c, HPU_ROCE_EV_QP_LAST_WQE_REACHED, qp->port, qpn, 0, 0);
    }
}

/* A send CQE names the index of its WQE, the one at sq_ci (roce.md). */
static void sq_cqe_mark(const HpuRoceQp *qp, RoceCqe *e)
{
    e->wqe_idx = (uint16_t)qp->sq_ci;
    e->flags |= HPU_ROCE_CQE_WQE_IDX;
}

/*
 * A completion of QP @qpn; its failure moves the QP to ERR.  A send
 * completion is always for the WQE at sq_ci (completions come in queue
 * order) and names its index, so software frees the unsignaled WQEs
 * before it too.
 */
static int qp_complete(HpuCore *c, uint32_t qpn, bool send, const RoceCqe *e)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    RoceCqe se;
    int rc;

    if (send) {
        se = *e;
        sq_cqe_mark(qp, &se);
        e = &se;
    }
    rc = cq_post(c, send ? qp->scq : qp->rcq, qpn, e);

    if (rc == 1) {
        qp_error(c, qpn, HPU_ROCE_CAUSE_CQ_ERROR, 0);
    }
    return rc;
}

static uint8_t wc_op_of(uint8_t wr_op)
{
    switch (wr_op) {
    case HPU_ROCE_WR_RDMA_WRITE:
    case HPU_ROCE_WR_RDMA_WRITE_WITH_IMM:
        return HPU_ROCE_WC_RDMA_WRITE;
    case HPU_ROCE_WR_RDMA_READ:
        return HPU_ROCE_WC_RDMA_READ;
    default:
        return HPU_ROCE_WC_SEND;
    }
}

/* Object tables: commands */

static void qp_free(HpuRoceQp *qp)
{
    if (qp) {
        free(qp->win);
        free(qp);
    }
}

/* Under the lock: QP @qpn's entry (and its bit in qp_live) set or cleared. */
static void qp_set(HpuRoce *r, uint32_t qpn, HpuRoceQp *qp)
{
    r->qp[qpn] = qp;
    if (qp) {
        r->qp_live[qpn / 64] |= 1ull << (qpn % 64);
    } else {
        r->qp_live[qpn / 64] &= ~(1ull << (qpn % 64));
    }
}

/* The first QP at or after @i that exists, or HPU_ROCE_NUM_QP. */
static unsigned int qp_live_from(const HpuRoce *r, unsigned int i)
{
    while (i < HPU_ROCE_NUM_QP) {
        uint64_t w = r->qp_live[i / 64] >> (i % 64);

        if (w) {
            return i + (unsigned int)__builtin_ctzll(w);
        }
        i = (i | 63) + 1;
    }
    return HPU_ROCE_NUM_QP;
}

static bool cq_in_use(HpuRoce *r, uint32_t cqn)
{
    unsigned int i;

    for (i = 0; i < HPU_ROCE_NUM_QP; i++) {
        if (r->qp[i] && (r->qp[i]->scq == cqn || r->qp[i]->rcq == cqn)) {
            return true;
        }
    }
    return false;
}

static bool srq_in_use(HpuRoce *r, uint32_t srqn)
{
    unsigned int i;

    for (i = 0; i < HPU_ROCE_NUM_QP; i++) {
        if (r->qp[i] && r->qp[i]->srq == srqn + 1) {
            return true;
        }
    }
    return false;
}

static bool aligned(uint64_t v, uint64_t a)
{
    return !(v & (a - 1));
}

/*
 * The QP fields CREATE and MODIFY check the ranges of: NULL when they are
 * all in range, else the name of the first that is not (for the log).
 */
static const char *qp_bad_value(HpuCore *c, const uint8_t *d)
{
    static const struct {
        unsigned int off;
        uint8_t max;
        const char *name;
    } bytes[] = {
        { HPU_ROCE_QP_MTU, HPU_ROCE_MTU_MAX, "path MTU" },
        { HPU_ROCE_QP_TIMEOUT, 31, "timeout" },
        { HPU_ROCE_QP_RETRY_CNT, 7, "retry count" },
        { HPU_ROCE_QP_RNR_RETRY, 7, "RNR retry" },
        { HPU_ROCE_QP_MIN_RNR_TIMER, 31, "minimum RNR timer" },
        { HPU_ROCE_QP_MAX_RD_ATOMIC, HPU_ROCE_MAX_RD, "initiator depth" },
        { HPU_ROCE_QP_MAX_DEST_RD_ATOMIC, HPU_ROCE_MAX_RD, "responder depth" },
        { HPU_ROCE_QP_SGID_INDEX, HPU_ROCE_PORT_GIDS - 1, "source GID index" },
    };
    size_t i;

    if (d[HPU_ROCE_QP_PORT] >= c->cfg.nic_ports) {
        return "port";
    }
    for (i = 0; i < HPU_ARRAY_LEN(bytes); i++) {
        if (d[bytes[i].off] > bytes[i].max) {
            return bytes[i].name;
        }
    }
    if (hpum_le32(d + HPU_ROCE_QP_ACCESS) &
        ~(uint32_t)(HPU_ROCE_ACCESS_REMOTE_WRITE |
                    HPU_ROCE_ACCESS_REMOTE_READ)) {
        return "access flags";
    }
    if (hpum_le32(d + HPU_ROCE_QP_DEST_QPN) > PSN_MASK) {
        return "destination QPN";
    }
    if (hpum_le32(d + HPU_ROCE_QP_SQ_PSN) > PSN_MASK ||
        hpum_le32(d + HPU_ROCE_QP_RQ_PSN) > PSN_MASK) {
        return "PSN";
    }
    if (hpum_le32(d + HPU_ROCE_QP_FLOW_LABEL) > 0xfffff) {
        return "flow label";
    }
    if (d[85] || d[86] || d[87] || d[98] || d[99] ||
        !all_zero(d + HPU_ROCE_QP_CFG_END,
                  HPU_ROCE_IMAGE_SIZE - HPU_ROCE_QP_CFG_END)) {
        return "reserved bytes";
    }
    return NULL;
}

static bool cq_ok_for(HpuRoce *r, uint32_t cqn, uint16_t asid)
{
    return cqn < HPU_ROCE_NUM_CQ && r->cq[cqn].used &&
           r->cq[cqn].asid == asid;
}

static int qp_create_check(HpuCore *c, const uint8_t *d)
{
    HpuRoce *r = R(c);
    uint16_t asid = le16(d + HPU_ROCE_QP_ASID);
    uint32_t srq = hpum_le32(d + HPU_ROCE_QP_SRQ);
    uint8_t type = d[HPU_ROCE_QP_TYPE], sql = d[HPU_ROCE_QP_SQ_LOG_ENTRIES];
    uint8_t sqs = d[HPU_ROCE_QP_SQ_LOG_STRIDE];
    uint8_t rql = d[HPU_ROCE_QP_RQ_LOG_ENTRIES];
    uint8_t rqs = d[HPU_ROCE_QP_RQ_LOG_STRIDE];

    if (d[HPU_ROCE_QP_STATE] != HPU_ROCE_QPS_RESET ||
        hpum_le32(d + HPU_ROCE_QP_MASK) ||
        (type != HPU_ROCE_QPT_RC && type != HPU_ROCE_QPT_UD) ||
        asid >= HPU_MMU_NUM_ASIDS ||
        le16(d + HPU_ROCE_QP_DB_PAGE) >= HPU_ROCE_DB_PAGES ||
        qp_bad_value(c, d) ||
        (type == HPU_ROCE_QPT_UD && !d[HPU_ROCE_QP_MTU]) ||
        !cq_ok_for(r, hpum_le32(d + HPU_ROCE_QP_SEND_CQ), asid) ||
        !cq_ok_for(r, hpum_le32(d + HPU_ROCE_QP_RECV_CQ), asid) ||
        sql < 1 || sql > 15 || sqs < 6 || sqs > 10 ||
        (type == HPU_ROCE_QPT_UD && sqs < 7) ||
        !aligned(hpum_le64(d + HPU_ROCE_QP_SQ_ADDR), 1ull << sqs) ||
        !aligned(hpum_le64(d + HPU_ROCE_QP_DBR_ADDR), 8)) {
        return HPU_ROCE_RES_BAD_IMAGE;
    }
    if (srq) {
        if (srq > HPU_ROCE_NUM_SRQ || !r->srq[srq - 1].used ||
            r->srq[srq - 1].asid != asid ||
            r->srq[srq - 1].pd != hpum_le32(d + HPU_ROCE_QP_PD) ||
            rql || rqs || hpum_le64(d + HPU_ROCE_QP_RQ_ADDR)) {
            return HPU_ROCE_RES_BAD_IMAGE;
        }
    } else if (rql > 15 || rqs < 5 || rqs > 10 ||
               !aligned(hpum_le64(d + HPU_ROCE_QP_RQ_ADDR), 1ull << rqs)) {
        return HPU_ROCE_RES_BAD_IMAGE;
    }
    return HPU_ROCE_RES_OK;
}

static void qp_reset_state(HpuRoceQp *qp)
{
    const uint8_t *d = qp->img;

    qp->state = HPU_ROCE_QPS_RESET;
    qp->port = d[HPU_ROCE_QP_PORT];
    qp->cause = 0;
    memset(qp->cnt, 0, sizeof(qp->cnt));
    qp->sq_ci = qp->sq_next = qp->cur = qp->cur_pkt = 0;
    qp->psn_next = qp->psn_una = hpum_le32(d + HPU_ROCE_QP_SQ_PSN);
    qp->sq_kick = qp->flush = qp->rnr_wait = false;
    qp->deadline = 0;
    qp->rq_ci = 0;
    qp->epsn = hpum_le32(d + HPU_ROCE_QP_RQ_PSN);
    qp->msn = 0;
    qp->nak_sent = qp->in_send = qp->in_write = qp->have_rwqe = false;
    qp->rd_retry = qp->fail_set = qp->ack_defer = false;
    qp->rd_head = qp->rd_n = 0;
}

static int qp_create(HpuCore *c, uint32_t qpn, const uint8_t *d)
{
    HpuRoceQp *qp;
    int res = qp_create_check(c, d);

    if (res) {
        return res;
    }
    qp = calloc(1, sizeof(*qp));
    if (qp) {
        qp->win = calloc(HPU_ROCE_WINDOW, sizeof(*qp->win));
    }
    if (!qp || !qp->win) {
        qp_free(qp);
        HPU_LOG(c, "ROCE: no host memory for QP %u", qpn);
        return HPU_ROCE_RES_BAD_IMAGE;
    }
    memcpy(qp->img, d, HPU_ROCE_IMAGE_SIZE);
    qp->used = true;
    qp->type = d[HPU_ROCE_QP_TYPE];
    qp->asid = le16(d + HPU_ROCE_QP_ASID);
    qp->dbp = le16(d + HPU_ROCE_QP_DB_PAGE);
    qp->pd = hpum_le32(d + HPU_ROCE_QP_PD);
    qp->scq = hpum_le32(d + HPU_ROCE_QP_SEND_CQ);
    qp->rcq = hpum_le32(d + HPU_ROCE_QP_RECV_CQ);
    qp->srq = hpum_le32(d + HPU_ROCE_QP_SRQ);
    qp_reset_state(qp);
    qp_set(R(c), qpn, qp);
    return HPU_ROCE_RES_OK;
}

/* Mask bits that may be given (@opt) and must be (@req) per transition. */
static bool qp_transition(uint8_t type, uint8_t from, uint8_t to,
                          uint32_t *req, uint32_t *opt)
{
    bool rc = type == HPU_ROCE_QPT_RC;

    *req = *opt = 0;
    if (to == HPU_ROCE_QPS_ERR || to == HPU_ROCE_QPS_RESET) {
        *req = *opt = HPU_ROCE_QPM_STATE;
        return true;
    }
    if (from == HPU_ROCE_QPS_RESET && to == HPU_ROCE_QPS_INIT) {
        *req = HPU_ROCE_QPM_PORT | (rc ? 0 : HPU_ROCE_QPM_QKEY);
        *opt = HPU_ROCE_QPM_PKEY_INDEX |
               (rc ? HPU_ROCE_QPM_ACCESS_FLAGS : 0);
    } else if (from == HPU_ROCE_QPS_INIT && to == HPU_ROCE_QPS_INIT) {
        *opt = HPU_ROCE_QPM_PORT | HPU_ROCE_QPM_PKEY_INDEX |
               (rc ? HPU_ROCE_QPM_ACCESS_FLAGS : HPU_ROCE_QPM_QKEY);
    } else if (from == HPU_ROCE_QPS_INIT && to == HPU_ROCE_QPS_RTR) {
        *req = rc ? HPU_ROCE_QPM_AV | HPU_ROCE_QPM_PATH_MTU |
               HPU_ROCE_QPM_DEST_QPN | HPU_ROCE_QPM_RQ_PSN |
               HPU_ROCE_QPM_MAX_DEST_RD_ATOMIC |
               HPU_ROCE_QPM_MIN_RNR_TIMER : 0;
        *opt = HPU_ROCE_QPM_PKEY_INDEX |
               (rc ? HPU_ROCE_QPM_ACCESS_FLAGS : HPU_ROCE_QPM_QKEY);
    } else if (from == HPU_ROCE_QPS_RTR && to == HPU_ROCE_QPS_RTS) {
        *req = HPU_ROCE_QPM_SQ_PSN |
               (rc ? HPU_ROCE_QPM_TIMEOUT | HPU_ROCE_QPM_RETRY_CNT |
                HPU_ROCE_QPM_RNR_RETRY | HPU_ROCE_QPM_MAX_QP_RD_ATOMIC : 0);
        *opt = rc ? HPU_ROCE_QPM_ACCESS_FLAGS | HPU_ROCE_QPM_MIN_RNR_TIMER
               : HPU_ROCE_QPM_QKEY;
    } else if (from == HPU_ROCE_QPS_RTS && to == HPU_ROCE_QPS_RTS) {
        *opt = rc ? HPU_ROCE_QPM_ACCESS_FLAGS | HPU_ROCE_QPM_MIN_RNR_TIMER
               : HPU_ROCE_QPM_QKEY;
    } else {
        return false;
    }
    *req |= HPU_ROCE_QPM_STATE;
    *opt |= *req;
    return true;
}

/* Image byte ranges of each mask bit. */
static const struct {
    uint32_t bit;
    uint8_t off;
    uint8_t len;
} qp_mask_fields[] = {
    { HPU_ROCE_QPM_ACCESS_FLAGS, HPU_ROCE_QP_ACCESS, 4 },
    { HPU_ROCE_QPM_PORT, HPU_ROCE_QP_PORT, 1 },
    { HPU_ROCE_QPM_QKEY, HPU_ROCE_QP_QKEY, 4 },
    { HPU_ROCE_QPM_AV, HPU_ROCE_QP_SGID_INDEX, 116 - 82 },
    { HPU_ROCE_QPM_PATH_MTU, HPU_ROCE_QP_MTU, 1 },
    { HPU_ROCE_QPM_TIMEOUT, HPU_ROCE_QP_TIMEOUT, 1 },
    { HPU_ROCE_QPM_RETRY_CNT, HPU_ROCE_QP_RETRY_CNT, 1 },
    { HPU_ROCE_QPM_RNR_RETRY, HPU_ROCE_QP_RNR_RETRY, 1 },
    { HPU_ROCE_QPM_RQ_PSN, HPU_ROCE_QP_RQ_PSN, 4 },
    { HPU_ROCE_QPM_MAX_QP_RD_ATOMIC, HPU_ROCE_QP_MAX_RD_ATOMIC, 1 },
    { HPU_ROCE_QPM_MIN_RNR_TIMER, HPU_ROCE_QP_MIN_RNR_TIMER, 1 },
    { HPU_ROCE_QPM_SQ_PSN, HPU_ROCE_QP_SQ_PSN, 4 },
    { HPU_ROCE_QPM_MAX_DEST_RD_ATOMIC, HPU_ROCE_QP_MAX_DEST_RD_ATOMIC, 1 },
    { HPU_ROCE_QPM_DEST_QPN, HPU_ROCE_QP_DEST_QPN, 4 },
};

static int qp_modify(HpuCore *c, uint32_t qpn, const uint8_t *d)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    uint8_t to = d[HPU_ROCE_QP_STATE], img[HPU_ROCE_IMAGE_SIZE];
    uint32_t mask = hpum_le32(d + HPU_ROCE_QP_MASK), req, opt;
    const char *bad;
    size_t i;

    if (to > HPU_ROCE_QPS_ERR ||
        !qp_transition(qp->type, qp->state, to, &req, &opt)) {
        return HPU_ROCE_RES_BAD_STATE;
    }
    if ((mask & req) != req || (mask & ~opt)) {
        HPU_LOG(c, "ROCE: MODIFY of QP %u from state %u to %u: mask 0x%x, "
                "required 0x%x, allowed 0x%x", qpn, qp->state, to, mask, req,
                opt);
        return HPU_ROCE_RES_BAD_IMAGE;
    }
    memcpy(img, qp->img, sizeof(img));
    for (i = 0; i < HPU_ARRAY_LEN(qp_mask_fields); i++) {
        if (mask & qp_mask_fields[i].bit) {
            memcpy(img + qp_mask_fields[i].off, d + qp_mask_fields[i].off,
                   qp_mask_fields[i].len);
        }
    }
    bad = qp_bad_value(c, img);
    if (!bad && !all_zero(d + HPU_ROCE_QP_CFG_END,
                          HPU_ROCE_IMAGE_SIZE - HPU_ROCE_QP_CFG_END)) {
        bad = "reserved bytes";
    }
    if (!bad && to == HPU_ROCE_QPS_RTR && !img[HPU_ROCE_QP_MTU]) {
        bad = "path MTU (none set for RTR)";
    }
    if (bad) {
        HPU_LOG(c, "ROCE: MODIFY of QP %u refused: bad %s", qpn, bad);
        return HPU_ROCE_RES_BAD_IMAGE;
    }
    memcpy(qp->img, img, sizeof(img));
    if (to == HPU_ROCE_QPS_RESET) {
        qp_reset_state(qp);
        return HPU_ROCE_RES_OK;
    }
    if (to == HPU_ROCE_QPS_ERR) {
        qp_error(c, qpn, HPU_ROCE_CAUSE_MODIFY, 0);
        return HPU_ROCE_RES_OK;
    }
    qp->port = img[HPU_ROCE_QP_PORT];
    if (mask & HPU_ROCE_QPM_RQ_PSN) {
        qp->epsn = hpum_le32(img + HPU_ROCE_QP_RQ_PSN);
    }
    if (mask & HPU_ROCE_QPM_SQ_PSN) {
        qp->psn_next = qp->psn_una = hpum_le32(img + HPU_ROCE_QP_SQ_PSN);
    }
    qp->retry_left = img[HPU_ROCE_QP_RETRY_CNT];
    qp->rnr_left = img[HPU_ROCE_QP_RNR_RETRY];
    if (to == HPU_ROCE_QPS_RTS && qp->state != HPU_ROCE_QPS_RTS) {
        qp->sq_kick = true;
    }
    qp->state = to;
    return HPU_ROCE_RES_OK;
}

static void qp_query(HpuCore *c, uint32_t qpn, uint8_t *d)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    unsigned int i;

    memcpy(d, qp->img, HPU_ROCE_IMAGE_SIZE);
    d[HPU_ROCE_QP_STATE] = qp->state;
    d[HPU_ROCE_QP_PORT] = qp->port;
    hpum_put_le32(d + HPU_ROCE_QP_MASK, 0);
    hpum_put_le32(d + HPU_ROCE_QP_Q_SQ_CI, qp->sq_ci);
    hpum_put_le32(d + HPU_ROCE_QP_Q_RQ_CI, qp->rq_ci);
    hpum_put_le32(d + HPU_ROCE_QP_Q_SQ_PSN, qp->psn_next);
    hpum_put_le32(d + HPU_ROCE_QP_Q_RQ_PSN, qp->epsn);
    d[HPU_ROCE_QP_Q_CAUSE] = qp->cause;
    for (i = 0; i < HPU_ROCE_QPC_NUM; i++) {
        hpum_put_le64(d + HPU_ROCE_QP_Q_CNT(i), qp->cnt[i]);
    }
}

static int cq_create(HpuCore *c, uint32_t n, const uint8_t *d)
{
    HpuRoceCq *cq = &R(c)->cq[n];
    uint8_t log = d[HPU_ROCE_CQ_LOG_ENTRIES];
    uint64_t ring = hpum_le64(d + HPU_ROCE_CQ_RING_ADDR);
    uint64_t dbr = hpum_le64(d + HPU_ROCE_CQ_DBR_ADDR);

    if (le16(d + HPU_ROCE_CQ_ASID) >= HPU_MMU_NUM_ASIDS ||
        le16(d + HPU_ROCE_CQ_DB_PAGE) >= HPU_ROCE_DB_PAGES ||
        log < 1 || log > 16 || d[5] || d[6] || d[7] ||
        !aligned(ring, HPU_ROCE_CQE_SIZE) || !aligned(dbr, 8) ||
        !all_zero(d + 24, HPU_ROCE_IMAGE_SIZE - 24)) {
        return HPU_ROCE_RES_BAD_IMAGE;
    }
    memset(cq, 0, sizeof(*cq));
    cq->used = true;
    cq->asid = le16(d + HPU_ROCE_CQ_ASID);
    cq->dbp = le16(d + HPU_ROCE_CQ_DB_PAGE);
    cq->log = log;
    cq->ring = ring;
    cq->dbr = dbr;
    return HPU_ROCE_RES_OK;
}

static void cq_query(HpuCore *c, uint32_t n, uint8_t *d)
{
    HpuRoceCq *cq = &R(c)->cq[n];

    hpum_put_le16(d + HPU_ROCE_CQ_ASID, cq->asid);
    hpum_put_le16(d + HPU_ROCE_CQ_DB_PAGE, cq->dbp);
    d[HPU_ROCE_CQ_LOG_ENTRIES] = cq->log;
    hpum_put_le64(d + HPU_ROCE_CQ_RING_ADDR, cq->ring);
    hpum_put_le64(d + HPU_ROCE_CQ_DBR_ADDR, cq->dbr);
    hpum_put_le32(d + HPU_ROCE_CQ_Q_PI, cq->pi);
    d[HPU_ROCE_CQ_Q_ERROR] = cq->error;
    d[HPU_ROCE_CQ_Q_ARM] = cq->arm;
}

static int srq_create(HpuCore *c, uint32_t n, const uint8_t *d)
{
    HpuRoceSrq *s = &R(c)->srq[n];
    uint8_t log = d[HPU_ROCE_SRQ_LOG_ENTRIES];
    uint8_t ls = d[HPU_ROCE_SRQ_LOG_STRIDE];
    uint64_t ring = hpum_le64(d + HPU_ROCE_SRQ_RING_ADDR);

    if (le16(d + HPU_ROCE_SRQ_ASID) >= HPU_MMU_NUM_ASIDS ||
        le16(d + HPU_ROCE_SRQ_DB_PAGE) >= HPU_ROCE_DB_PAGES ||
        log < 1 || log > 15 || ls < 5 || ls > 10 || d[10] || d[11] ||
        hpum_le32(d + HPU_ROCE_SRQ_LIMIT) > (1u << log) ||
        !aligned(ring, 1ull << ls) ||
        !aligned(hpum_le64(d + HPU_ROCE_SRQ_DBR_ADDR), 8) ||
        !all_zero(d + 32, HPU_ROCE_IMAGE_SIZE - 32)) {
        return HPU_ROCE_RES_BAD_IMAGE;
    }
    memset(s, 0, sizeof(*s));
    s->used = true;
    s->asid = le16(d + HPU_ROCE_SRQ_ASID);
    s->dbp = le16(d + HPU_ROCE_SRQ_DB_PAGE);
    s->pd = hpum_le32(d + HPU_ROCE_SRQ_PD);
    s->log = log;
    s->lstride = ls;
    s->limit = hpum_le32(d + HPU_ROCE_SRQ_LIMIT);
    s->ring = ring;
    s->dbr = hpum_le64(d + HPU_ROCE_SRQ_DBR_ADDR);
    return HPU_ROCE_RES_OK;
}

static void srq_query(HpuCore *c, uint32_t n, uint8_t *d)
{
    HpuRoceSrq *s = &R(c)->srq[n];

    hpum_put_le16(d + HPU_ROCE_SRQ_ASID, s->asid);
    hpum_put_le16(d + HPU_ROCE_SRQ_DB_PAGE, s->dbp);
    hpum_put_le32(d + HPU_ROCE_SRQ_PD, s->pd);
    d[HPU_ROCE_SRQ_LOG_ENTRIES] = s->log;
    d[HPU_ROCE_SRQ_LOG_STRIDE] = s->lstride;
    hpum_put_le32(d + HPU_ROCE_SRQ_LIMIT, s->limit);
    hpum_put_le64(d + HPU_ROCE_SRQ_RING_ADDR, s->ring);
    hpum_put_le64(d + HPU_ROCE_SRQ_DBR_ADDR, s->dbr);
}

static int srq_modify(HpuCore *c, uint32_t n, const uint8_t *d)
{
    HpuRoceSrq *s = &R(c)->srq[n];
    uint32_t limit = hpum_le32(d + HPU_ROCE_SRQ_LIMIT);
    uint8_t z[HPU_ROCE_IMAGE_SIZE];

    memcpy(z, d, sizeof(z));
    memset(z + HPU_ROCE_SRQ_LIMIT, 0, 4);
    if (!all_zero(z, sizeof(z)) || limit > (1u << s->log)) {
        return HPU_ROCE_RES_BAD_IMAGE;
    }
    s->limit = limit;
    return HPU_ROCE_RES_OK;
}

static int mr_create(HpuCore *c, uint32_t n, const uint8_t *d)
{
    HpuRoceMr *m = &R(c)->mr[n];
    uint32_t key = hpum_le32(d + HPU_ROCE_MR_KEY);
    uint32_t acc = hpum_le32(d + HPU_ROCE_MR_ACCESS);
    uint64_t va = hpum_le64(d + HPU_ROCE_MR_VA);
    uint64_t len = hpum_le64(d + HPU_ROCE_MR_LENGTH);

    if (key >> HPU_ROCE_KEY_INDEX_SHIFT != n ||
        le16(d + HPU_ROCE_MR_ASID) >= HPU_MMU_NUM_ASIDS || d[10] || d[11] ||
        (acc & ~7u) || ((acc & HPU_ROCE_ACCESS_REMOTE_WRITE) &&
                        !(acc & HPU_ROCE_ACCESS_LOCAL_WRITE)) ||
        !len || len > HPU_ROCE_MR_LENGTH_MAX || va + len < va ||
        !all_zero(d + 40, HPU_ROCE_IMAGE_SIZE - 40)) {
        return HPU_ROCE_RES_BAD_IMAGE;
    }
    m->used = true;
    m->key = key;
    m->pd = hpum_le32(d + HPU_ROCE_MR_PD);
    m->asid = le16(d + HPU_ROCE_MR_ASID);
    m->access = acc;
    m->va = va;
    m->len = len;
    m->dva = hpum_le64(d + HPU_ROCE_MR_DVA);
    return HPU_ROCE_RES_OK;
}

static void mr_query(HpuCore *c, uint32_t n, uint8_t *d)
{
    HpuRoceMr *m = &R(c)->mr[n];

    hpum_put_le32(d + HPU_ROCE_MR_KEY, m->key);
    hpum_put_le32(d + HPU_ROCE_MR_PD, m->pd);
    hpum_put_le16(d + HPU_ROCE_MR_ASID, m->asid);
    hpum_put_le32(d + HPU_ROCE_MR_ACCESS, m->access);
    hpum_put_le64(d + HPU_ROCE_MR_VA, m->va);
    hpum_put_le64(d + HPU_ROCE_MR_LENGTH, m->len);
    hpum_put_le64(d + HPU_ROCE_MR_DVA, m->dva);
}

static const uint32_t roce_table_size[] = {
    [HPU_ROCE_TYPE_QP] = HPU_ROCE_NUM_QP,
    [HPU_ROCE_TYPE_CQ] = HPU_ROCE_NUM_CQ,
    [HPU_ROCE_TYPE_SRQ] = HPU_ROCE_NUM_SRQ,
    [HPU_ROCE_TYPE_MR] = HPU_ROCE_NUM_MR,
};

static bool obj_used(HpuRoce *r, unsigned int type, uint32_t i)
{
    switch (type) {
    case HPU_ROCE_TYPE_QP:
        return r->qp[i] != NULL;
    case HPU_ROCE_TYPE_CQ:
        return r->cq[i].used;
    case HPU_ROCE_TYPE_SRQ:
        return r->srq[i].used;
    default:
        return r->mr[i].used;
    }
}

static int roce_destroy(HpuRoce *r, unsigned int type, uint32_t i)
{
    switch (type) {
    case HPU_ROCE_TYPE_QP:
        qp_free(r->qp[i]);
        qp_set(r, i, NULL);
        break;
    case HPU_ROCE_TYPE_CQ:
        if (cq_in_use(r, i)) {
            return HPU_ROCE_RES_BAD_STATE;
        }
        memset(&r->cq[i], 0, sizeof(r->cq[i]));
        break;
    case HPU_ROCE_TYPE_SRQ:
        if (srq_in_use(r, i)) {
            return HPU_ROCE_RES_BAD_STATE;
        }
        memset(&r->srq[i], 0, sizeof(r->srq[i]));
        break;
    default:
        memset(&r->mr[i], 0, sizeof(r->mr[i]));
        break;
    }
    return HPU_ROCE_RES_OK;
}

static int roce_command(HpuCore *c, uint32_t cmd, uint32_t i, uint8_t *d)
{
    HpuRoce *r = R(c);
    unsigned int op = cmd & HPU_ROCE_CMD_OP_MASK;
    unsigned int type = (cmd & HPU_ROCE_CMD_TYPE_MASK) >>
                        HPU_ROCE_CMD_TYPE_SHIFT;
    bool used;

    if ((cmd >> 16) || op < HPU_ROCE_OP_CREATE || op > HPU_ROCE_OP_DESTROY ||
        type < HPU_ROCE_TYPE_QP || type > HPU_ROCE_TYPE_MR ||
        !(r->ctrl & HPU_ROCE_CTRL_ENABLE) ||
        (op == HPU_ROCE_OP_MODIFY && (type == HPU_ROCE_TYPE_CQ ||
                                      type == HPU_ROCE_TYPE_MR))) {
        return HPU_ROCE_RES_BAD_OP;
    }
    if (i >= roce_table_size[type] ||
        (type == HPU_ROCE_TYPE_QP && i < HPU_ROCE_QPN_FIRST)) {
        return HPU_ROCE_RES_BAD_INDEX;
    }
    used = obj_used(r, type, i);
    if (used != (op != HPU_ROCE_OP_CREATE)) {
        return HPU_ROCE_RES_BAD_INDEX;
    }
    switch (op) {
    case HPU_ROCE_OP_CREATE:
        return type == HPU_ROCE_TYPE_QP ? qp_create(c, i, d) :
               type == HPU_ROCE_TYPE_CQ ? cq_create(c, i, d) :
               type == HPU_ROCE_TYPE_SRQ ? srq_create(c, i, d) :
               mr_create(c, i, d);
    case HPU_ROCE_OP_MODIFY:
        return type == HPU_ROCE_TYPE_QP ? qp_modify(c, i, d) :
               srq_modify(c, i, d);
    case HPU_ROCE_OP_QUERY:
        memset(d, 0, HPU_ROCE_IMAGE_SIZE);
        if (type == HPU_ROCE_TYPE_QP) {
            qp_query(c, i, d);
        } else if (type == HPU_ROCE_TYPE_CQ) {
            cq_query(c, i, d);
        } else if (type == HPU_ROCE_TYPE_SRQ) {
            srq_query(c, i, d);
        } else {
            mr_query(c, i, d);
        }
        return HPU_ROCE_RES_OK;
    default:
        return roce_destroy(r, type, i);
    }
}

static void roce_run_command(HpuCore *c)
{
    HpuRoce *r = R(c);
    uint8_t d[HPU_ROCE_IMAGE_SIZE];
    int res;

    memcpy(d, r->data, sizeof(d));
    res = roce_command(c, r->cmd, r->cmd_index, d);
    if (res == HPU_ROCE_RES_OK) {
        memcpy(r->data, d, sizeof(d));
    } else {
        HPU_LOG(c, "ROCE: command 0x%x index %u failed: result %d",
                r->cmd, r->cmd_index, res);
    }
    HPU_TRACE(c, HPU_TRACE_ROCE_CMD, r->cmd, r->cmd_index, (uint32_t)res);
    r->cmd_pending = false;
    r->cmd_status = (uint32_t)res << HPU_ROCE_CMD_RESULT_SHIFT;
    /* Not done until the events made so far are in the ring (roce.md). */
    r->cmd_ev_mark = r->evq_done + r->evq_count;
    r->cmd_done++;
}

/*
 * Between units of work: a command latched meanwhile runs now (unless a
 * reset overtook the run), so that it waits for no more than one unit.
 */
static void roce_cmd_poll(HpuCore *c, uint32_t gen)
{
    HpuRoce *r = R(c);

    if (r->cmd_pending && r->gen == gen && !r->wipe) {
        roce_run_command(c);
    }
}

/* The run's budget of packets and bytes is not used up. */
static bool roce_budget_left(HpuRoce *r)
{
    return r->run_pkts && r->run_bytes;
}

static void roce_budget_use(HpuRoce *r, uint32_t pkts, uint32_t bytes)
{
    r->run_pkts -= HPU_MIN(pkts, r->run_pkts);
    r->run_bytes -= HPU_MIN(bytes, r->run_bytes);
}

/* Frames */

typedef struct RoceAddr {
    unsigned int port;
    uint8_t dmac[6];
    uint8_t sgid;
    uint8_t hop;
    uint8_t tclass;
    uint32_t flow;
    const uint8_t *dgid;
} RoceAddr;

static bool gid_v4(const uint8_t *g)
{
    static const uint8_t pre[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

    return !memcmp(g, pre, sizeof(pre));
}

static void qp_addr(HpuRoceQp *qp, RoceAddr *a)
{
    const uint8_t *d = qp->img;

    a->port = qp->port;
    memcpy(a->dmac, d + HPU_ROCE_QP_DMAC, 6);
    a->sgid = d[HPU_ROCE_QP_SGID_INDEX];
    a->hop = d[HPU_ROCE_QP_HOP_LIMIT];
    a->tclass = d[HPU_ROCE_QP_TCLASS];
    a->flow = hpum_le32(d + HPU_ROCE_QP_FLOW_LABEL);
    a->dgid = d + HPU_ROCE_QP_DGID;
}

/*
 * Frame buffers of HPU_ROCE_FRAME_MAX bytes are kept for reuse, up to
 * HPU_ROCE_POOL of them (under the lock): frames come and go at the packet
 * rate, and handing each back to the allocator made it shrink and regrow
 * the heap all the time.  A longer frame (from the wire) gets its own.
 */
static uint8_t *frame_get(HpuRoce *r, size_t len)
{
    if (len > HPU_ROCE_FRAME_MAX) {
        return malloc(len);
    }
    if (r->pool_n) {
        return r->pool[--r->pool_n];
    }
    return malloc(HPU_ROCE_FRAME_MAX);
}

static void frame_put(HpuRoce *r, uint8_t *buf, size_t len)
{
    if (buf && len <= HPU_ROCE_FRAME_MAX && r->pool_n < HPU_ROCE_POOL) {
        r->pool[r->pool_n++] = buf;
    } else {
        free(buf);
    }
}

/* Under the lock: the frames handed to the wire back to the pool, and
 * their array back to the queue when it has none. */
static void outq_done(HpuRoce *r, HpuRoceFrame *out, unsigned int n,
                      unsigned int cap)
{
    unsigned int i;

    for (i = 0; i < n; i++) {
        frame_put(r, out[i].buf, out[i].len);
    }
    if (!r->outq && out) {
        r->outq = out;
        r->outq_cap = cap;
    } else {
        free(out);
    }
}

/*
 * Hand the queued frames to the wire now (the lock dropped around it), so
 * that a long READ response never queues more than HPU_ROCE_OUTQ frames.
 * The objects stay allocated while the worker is busy (a reset only marks
 * them), but a reset that came meanwhile stops the frames.
 */
static void outq_flush(HpuCore *c)
{
    HpuRoce *r = R(c);
    HpuRoceFrame *out = r->outq;
    unsigned int n = r->outq_n, cap = r->outq_cap, i;
    bool send = !r->wipe && !c->dead;

    r->outq = NULL;
    r->outq_n = r->outq_cap = 0;
    hpum_unlock(c);
    for (i = 0; send && i < n; i++) {
        c->ops->nic_send(c->opaque, out[i].port, out[i].buf, out[i].len);
    }
    hpum_lock(c);
    outq_done(r, out, n, cap);
}

static void roce_kick(HpuCore *c);

/*
 * A frame addressed to the port's own MAC (a QP or AH aimed at one of the
 * port's own GIDs) goes back into the port's receive queue, as a NIC's
 * internal loopback does, never onto the wire (the peer would drop it).
 * With the receive queue full it is dropped and counted, as on the wire.
 */
static bool roce_loopback(HpuCore *c, unsigned int port, const uint8_t *f,
                          uint32_t len)
{
    HpuRoce *r = R(c);
    uint8_t mac[6];
    uint8_t *copy;

    hpum_nic_cur_mac(c, port, mac);
    if (memcmp(f, mac, 6)) {
        return false;
    }
    copy = r->rxq_n < HPU_ROCE_RXQ ? frame_get(r, len) : NULL;
    if (!copy) {
        port_count(c, port, HPU_ROCE_CNT_RX_DROPPED, 1);
        return true;
    }
    memcpy(copy, f, len);
    r->rxq[(r->rxq_head + r->rxq_n) % HPU_ROCE_RXQ] =
        (HpuRoceFrame){ .port = port, .len = len, .buf = copy };
    r->rxq_n++;
    roce_kick(c);
    return true;
}

static void outq_add(HpuCore *c, unsigned int port, const uint8_t *f,
                     uint32_t len)
{
    HpuRoce *r = R(c);
    uint8_t *copy;

    if (roce_loopback(c, port, f, len)) {
        return;
    }
    if (r->outq_n == r->outq_cap) {
        unsigned int cap = r->outq_cap ? 2 * r->outq_cap : 64;
        HpuRoceFrame *q = realloc(r->outq, cap * sizeof(*q));

        if (!q) {
            return;
        }
        r->outq = q;
        r->outq_cap = cap;
    }
    copy = frame_get(r, len);
    if (!copy) {
        return;
    }
    memcpy(copy, f, len);
    r->outq[r->outq_n].port = port;
    r->outq[r->outq_n].len = len;
    r->outq[r->outq_n].buf = copy;
    r->outq_n++;
    if (r->outq_n >= HPU_ROCE_OUTQ) {
        outq_flush(c);
    }
}

static uint16_t ip_csum(const uint8_t *h)
{
    uint32_t s = 0;
    int i;

    for (i = 0; i < 20; i += 2) {
        s += be16(h + i);
    }
    while (s >> 16) {
        s = (s & 0xffff) + (s >> 16);
    }
    return (uint16_t)~s;
}

/*
 * Build and queue a RoCE v2 packet: BTH (@op, @se, @ackreq, @dqpn, @psn),
 * @hdr (the extension headers), @pay.  Returns the frame length or 0.
 */
static uint32_t roce_emit(HpuCore *c, const RoceAddr *a, uint32_t sqpn,
                          uint8_t op, bool se, bool ackreq, uint32_t dqpn,
                          uint32_t psn, const uint8_t *hdr, uint32_t hlen,
                          const uint8_t *pay, uint32_t plen)
{
    HpuRoce *r = R(c);
    HpuRocePort *rp = &r->port[a->port];
    uint8_t *f = r->pkt, sg[16];
    uint32_t pad = (4 - plen % 4) % 4, iph, l4, n;
    bool v4;
    unsigned int i;

    roce_budget_use(r, 1, plen);
    for (i = 0; i < 4; i++) {
        hpum_put_le32(sg + 4 * i, rp->gid[a->sgid][i]);
    }
    v4 = gid_v4(sg);
    iph = v4 ? 20 : 40;
    l4 = 8 + 12 + hlen + plen + pad + 4;
    n = 14 + iph + l4;
    if (!(rp->ctrl & HPU_ROCE_PORT_ENABLE) ||
        !(rp->gid_valid[a->sgid] & HPU_ROCE_PORT_GID_VALID) ||
        v4 != gid_v4(a->dgid) || n > HPU_ROCE_FRAME_MAX) {
        port_count(c, a->port, HPU_ROCE_CNT_TX_DISCARDS, 1);
        return 0;
    }
    memcpy(f, a->dmac, 6);
    hpum_nic_cur_mac(c, a->port, f + 6);
    put_be16(f + 12, v4 ? 0x0800 : 0x86dd);
    if (v4) {
        uint8_t *h = f + 14;

        h[0] = 0x45;
        h[1] = a->tclass;
        put_be16(h + 2, (uint16_t)(iph + l4));
        put_be16(h + 4, 0);
        put_be16(h + 6, 0x4000);
        h[8] = a->hop;
        h[9] = 17;
        put_be16(h + 10, 0);
        memcpy(h + 12, sg + 12, 4);
        memcpy(h + 16, a->dgid + 12, 4);
        put_be16(h + 10, ip_csum(h));
    } else {
        uint8_t *h = f + 14;

        put_be32(h, 6u << 28 | (uint32_t)a->tclass << 20 |
                 (a->flow & 0xfffff));
        put_be16(h + 4, (uint16_t)l4);
        h[6] = 17;
        h[7] = a->hop;
        memcpy(h + 8, sg, 16);
        memcpy(h + 24, a->dgid, 16);
    }
    {
        uint8_t *u = f + 14 + iph, *b = u + 8;

        put_be16(u, (uint16_t)(HPU_ROCE_UDP_SPORT_BASE | (sqpn & 0x3fff)));
        put_be16(u + 2, HPU_ROCE_UDP_PORT);
        put_be16(u + 4, (uint16_t)l4);
        put_be16(u + 6, 0);
        b[0] = op;
        b[1] = (uint8_t)((se ? 0x80 : 0) | pad << 4);
        put_be16(b + 2, HPU_ROCE_PKEY);
        b[4] = 0;
        put_be24(b + 5, dqpn);
        b[8] = ackreq ? 0x80 : 0;
        put_be24(b + 9, psn & PSN_MASK);
        memcpy(b + 12, hdr, hlen);
        if (plen) {
            memcpy(b + 12 + hlen, pay, plen);
        }
        memset(b + 12 + hlen + plen, 0, pad);
        hpum_put_le32(f + n - 4, roce_icrc(f + 14, f + n - 4));
    }
    HPU_TRACE(c, HPU_TRACE_ROCE_TX, a->port, op, dqpn, psn & PSN_MASK, n);
    switch (hpum_nic_roce_tx(c, a->port, n)) {
    case HPU_NIC_ROCE_SEND:
        outq_add(c, a->port, f, n);
        /* fall through */
    case HPU_NIC_ROCE_INJ_DROP:
        port_count(c, a->port, HPU_ROCE_CNT_TX_PKTS, 1);
        port_count(c, a->port, HPU_ROCE_CNT_TX_BYTES, n);
        return n;
    default:
        port_count(c, a->port, HPU_ROCE_CNT_TX_DISCARDS, 1);
        return 0;
    }
}

static void qp_emit(HpuCore *c, HpuRoceQp *qp, uint32_t qpn, uint8_t op,
                    bool se, bool ackreq, uint32_t psn, const uint8_t *hdr,
                    uint32_t hlen, const uint8_t *pay, uint32_t plen)
{
    RoceAddr a;
    uint32_t n;

    qp_addr(qp, &a);
    n = roce_emit(c, &a, qpn, op, se, ackreq,
                  hpum_le32(qp->img + HPU_ROCE_QP_DEST_QPN), psn, hdr, hlen,
                  pay, plen);
    if (n) {
        qp->cnt[HPU_ROCE_QPC_TX_PKTS]++;
        qp->cnt[HPU_ROCE_QPC_TX_BYTES] += n;
    }
}

static void send_aeth(HpuCore *c, HpuRoceQp *qp, uint32_t qpn, uint8_t syn,
                      uint32_t psn)
{
    uint8_t aeth[4];

    if (qp->rd_n) {
        /* after the READ responses before it: responses go in PSN order */
        qp->ack_defer = true;
        qp->ack_syn = syn;
        qp->ack_psn = psn;
        return;
    }
    aeth[0] = syn;
    put_be24(aeth + 1, qp->msn);
    qp_emit(c, qp, qpn, OP_ACK, false, false, psn, aeth, 4, NULL, 0);
}

/* Memory regions */

static bool mr_check(HpuCore *c, HpuRoceQp *qp, uint32_t key, uint64_t va,
                     uint64_t len, uint32_t need, uint64_t *dva)
{
    HpuRoce *r = R(c);
    uint32_t i = key >> HPU_ROCE_KEY_INDEX_SHIFT;
    HpuRoceMr *m;

    if (i >= HPU_ROCE_NUM_MR) {
        return false;
    }
    m = &r->mr[i];
    if (!m->used || m->key != key || m->pd != qp->pd || m->asid != qp->asid ||
        va < m->va || va + len < va || va + len > m->va + m->len ||
        (m->access & need) != need) {
        return false;
    }
    *dva = m->dva + (va - m->va);
    return true;
}

/*
 * Copy [@off, @off + @len) of the message held by SGE list @sge between
 * memory and @buf.  Returns 0, 1 (key check: protection), 2 (fault) or
 * HPU_XFER_STALE.
 */
static int sge_copy(HpuCore *c, HpuRoceQp *qp, const HpuRoceSge *sge,
                    unsigned int nsge, uint32_t off, uint8_t *buf,
                    uint32_t len, bool write)
{
    unsigned int i;
    uint64_t dva;
    HpuFault f;
    int rc;

    for (i = 0; i < nsge && len; i++) {
        uint32_t l = sge[i].len, n;

        if (off >= l) {
            off -= l;
            continue;
        }
        n = HPU_MIN(l - off, len);
        if (!mr_check(c, qp, sge[i].lkey, sge[i].addr + off, n,
                      write ? HPU_ROCE_ACCESS_LOCAL_WRITE : 0, &dva)) {
            return 1;
        }
        memset(&f, 0, sizeof(f));
        rc = roce_xfer(c, qp->asid, dva, buf, n, write, &f);
        if (rc) {
            return rc == 1 ? 2 : rc;
        }
        buf += n;
        len -= n;
        off = 0;
    }
    return len ? 1 : 0;
}

static uint32_t sge_total(const HpuRoceSge *sge, unsigned int n, bool *over)
{
    uint64_t t = 0;
    unsigned int i;

    for (i = 0; i < n; i++) {
        t += sge[i].len;
    }
    *over = t > HPU_ROCE_MSG_MAX;
    return (uint32_t)HPU_MIN(t, HPU_ROCE_MSG_MAX);
}

/* Requester */

static HpuRoceSwqe *qp_win(HpuRoceQp *qp, uint32_t idx)
{
    return &qp->win[idx % HPU_ROCE_WINDOW];
}

static uint64_t qp_ring_at(HpuRoceQp *qp, bool sq, uint32_t i)
{
    const uint8_t *d = qp->img;
    uint8_t log = d[sq ? HPU_ROCE_QP_SQ_LOG_ENTRIES :
                    HPU_ROCE_QP_RQ_LOG_ENTRIES];
    uint8_t ls = d[sq ? HPU_ROCE_QP_SQ_LOG_STRIDE :
                   HPU_ROCE_QP_RQ_LOG_STRIDE];

    return hpum_le64(d + (sq ? HPU_ROCE_QP_SQ_ADDR : HPU_ROCE_QP_RQ_ADDR)) +
           ((uint64_t)(i & ((1u << log) - 1)) << ls);
}

/* Read a producer index from the QP's doorbell record: 0, 1, STALE. */
static int qp_read_pi(HpuCore *c, uint32_t qpn, bool sq, uint32_t *pi)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    uint8_t b[4];
    HpuFault f = { 0 };
    int rc = roce_xfer(c, qp->asid, hpum_le64(qp->img + HPU_ROCE_QP_DBR_ADDR) +
                       (sq ? 0 : 4), b, 4, false, &f);

    if (rc == 1) {
        qp_error(c, qpn, HPU_ROCE_CAUSE_MMU_FAULT, f.va);
    }
    *pi = hpum_le32(b);
    return rc;
}

/*
 * Send WQE @idx failed with @status: the QP goes to ERR.  The oldest
 * completes now; a later one completes with @status when the flush
 * reaches it, after the WQEs before it (in order, once each).
 */
static void swqe_fail(HpuCore *c, uint32_t qpn, uint32_t idx, uint8_t status,
                      uint8_t cause)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    HpuRoceSwqe *w = qp_win(qp, idx);
    RoceCqe e = { .wr_id = w->wr_id, .op = wc_op_of(w->op),
                  .status = status };

    if (idx != qp->sq_ci) {
        if (!qp->fail_set && qp->state != HPU_ROCE_QPS_ERR) {
            qp->fail_set = true;
            qp->fail_idx = idx;
            qp->fail_st = status;
        }
        qp_error(c, qpn, cause, 0);
        return;
    }
    if (qp_complete(c, qpn, true, &e) != HPU_XFER_STALE) {
        qp->sq_ci++;
        if (qp->sq_next < qp->sq_ci) {
            qp->sq_next = qp->sq_ci;
        }
        qp_error(c, qpn, cause, 0);
    }
}

/* Parse the send WQE @b into @w: a completion status (0 good). */
static uint8_t swqe_parse(HpuCore *c, HpuRoceQp *qp, const uint8_t *b,
                          uint32_t stride, HpuRoceSwqe *w)
{
    bool ud = qp->type == HPU_ROCE_QPT_UD, over = false;
    uint32_t hdr = HPU_ROCE_WQE_HDR_SIZE + (ud ? HPU_ROCE_AV_SIZE : 0), i;
    uint64_t dva;

    memset(w, 0, offsetof(HpuRoceSwqe, sge));
    if (stride < hdr) {
        return HPU_ROCE_WC_LOC_QP_OP_ERR;
    }
    w->op = b[HPU_ROCE_WQE_OPCODE];
    w->flags = b[HPU_ROCE_WQE_FLAGS];
    w->nsge = b[HPU_ROCE_WQE_NUM_SGE];
    w->wr_id = hpum_le64(b + HPU_ROCE_WQE_WR_ID);
    memcpy(w->imm, b + HPU_ROCE_WQE_IMM, 4);
    if (w->op > HPU_ROCE_WR_RDMA_READ || (w->flags & ~0x0fu) || b[3] ||
        !all_zero(b + 36, 28) || w->nsge > HPU_ROCE_NUM_SGE ||
        (ud && w->op > HPU_ROCE_WR_SEND_WITH_IMM) ||
        (ud && (hpum_le64(b + 16) || !all_zero(b + 64 + 9, 3))) ||
        (!ud && hpum_le32(b + 28)) ||
        (!ud && w->op < HPU_ROCE_WR_RDMA_WRITE && !all_zero(b + 16, 12)) ||
        (w->op == HPU_ROCE_WR_RDMA_READ &&
         ((w->flags & HPU_ROCE_WQE_INLINE) ||
          !qp->img[HPU_ROCE_QP_MAX_RD_ATOMIC]))) {
        return HPU_ROCE_WC_LOC_QP_OP_ERR;
    }
    w->raddr = hpum_le64(b + HPU_ROCE_WQE_REMOTE_ADDR);
    w->rkey = hpum_le32(b + HPU_ROCE_WQE_RKEY);
    w->qkey = hpum_le32(b + HPU_ROCE_WQE_QKEY);
    w->dqpn = hpum_le32(b + HPU_ROCE_WQE_DEST_QPN);
    if (ud) {
        memcpy(w->av, b + HPU_ROCE_WQE_AV, HPU_ROCE_AV_SIZE);
        if (w->dqpn > PSN_MASK || w->av[HPU_ROCE_AV_SGID_INDEX] >=
            HPU_ROCE_PORT_GIDS) {
            return HPU_ROCE_WC_LOC_QP_OP_ERR;
        }
        if (w->qkey & 0x80000000u) {
            w->qkey = hpum_le32(qp->img + HPU_ROCE_QP_QKEY);
        }
    }
    if (w->flags & HPU_ROCE_WQE_INLINE) {
        w->len = hpum_le32(b + HPU_ROCE_WQE_INLINE_LEN);
        if (w->nsge || w->len > stride - hdr || w->len > HPU_ROCE_INLINE_MAX) {
            return HPU_ROCE_WC_LOC_QP_OP_ERR;
        }
        memcpy(w->inl, b + hdr, w->len);
    } else {
        if (hpum_le32(b + HPU_ROCE_WQE_INLINE_LEN) ||
            hdr + HPU_ROCE_SGE_SIZE * w->nsge > stride) {
            return HPU_ROCE_WC_LOC_QP_OP_ERR;
        }
        for (i = 0; i < w->nsge; i++) {
            const uint8_t *s = b + hdr + HPU_ROCE_SGE_SIZE * i;

            w->sge[i].addr = hpum_le64(s + HPU_ROCE_SGE_ADDR);
            w->sge[i].len = hpum_le32(s + HPU_ROCE_SGE_LENGTH);
            w->sge[i].lkey = hpum_le32(s + HPU_ROCE_SGE_LKEY);
        }
        w->len = sge_total(w->sge, w->nsge, &over);
        for (i = 0; i < w->nsge; i++) {
            if (w->sge[i].len &&
                !mr_check(c, qp, w->sge[i].lkey, w->sge[i].addr,
                          w->sge[i].len, w->op == HPU_ROCE_WR_RDMA_READ ?
                          HPU_ROCE_ACCESS_LOCAL_WRITE : 0, &dva)) {
                return HPU_ROCE_WC_LOC_PROT_ERR;
            }
        }
    }
    if (over || (ud && w->len > mtu_bytes(qp->img[HPU_ROCE_QP_MTU]))) {
        return HPU_ROCE_WC_LOC_LEN_ERR;
    }
    return 0;
}

/* Gather [@off, @off + @n) of @w's message into the bounce buffer. */
static int swqe_gather(HpuCore *c, HpuRoceQp *qp, HpuRoceSwqe *w,
                       uint32_t off, uint32_t n)
{
    if (w->flags & HPU_ROCE_WQE_INLINE) {
        memcpy(R(c)->bounce, w->inl + off, n);
        return 0;
    }
    return sge_copy(c, qp, w->sge, w->nsge, off, R(c)->bounce, n, false);
}

static void ud_send(HpuCore *c, uint32_t qpn, HpuRoceSwqe *w)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    bool imm = w->op == HPU_ROCE_WR_SEND_WITH_IMM;
    uint8_t h[12];
    RoceAddr a = {
        .port = qp->port, .sgid = w->av[HPU_ROCE_AV_SGID_INDEX],
        .hop = w->av[HPU_ROCE_AV_HOP_LIMIT],
        .tclass = w->av[HPU_ROCE_AV_TCLASS],
        .flow = hpum_le32(w->av + HPU_ROCE_AV_FLOW_LABEL) & 0xfffff,
        .dgid = w->av + HPU_ROCE_AV_DGID,
    };
    RoceCqe e = { .wr_id = w->wr_id, .op = HPU_ROCE_WC_SEND };
    int rc;

    memcpy(a.dmac, w->av + HPU_ROCE_AV_DMAC, 6);
    rc = swqe_gather(c, qp, w, 0, w->len);
    if (rc == HPU_XFER_STALE) {
        return;
    }
    if (rc) {
        swqe_fail(c, qpn, qp->sq_ci, HPU_ROCE_WC_LOC_PROT_ERR, rc == 2 ?
                  HPU_ROCE_CAUSE_MMU_FAULT : HPU_ROCE_CAUSE_LOC_PROT);
        return;
    }
    put_be32(h, w->qkey);
    h[4] = 0;
    put_be24(h + 5, qpn);
    memcpy(h + 8, w->imm, 4);
    if (roce_emit(c, &a, qpn, imm ? OP_UD_SEND_ONLY_IMM : OP_UD_SEND_ONLY,
                  w->flags & HPU_ROCE_WQE_SOLICITED, false, w->dqpn,
                  qp->psn_next, h, imm ? 12 : 8, R(c)->bounce, w->len)) {
        qp->cnt[HPU_ROCE_QPC_TX_PKTS]++;
    }
    qp->psn_next = psn_add(qp->psn_next, 1);
    qp->sq_next++;
    qp->cur = qp->sq_next;
    if ((w->flags & HPU_ROCE_WQE_SIGNALED) &&
        qp_complete(c, qpn, true, &e) == HPU_XFER_STALE) {
        return;
    }
    qp->sq_ci++;
}

static uint64_t qp_timeout_ns(HpuRoceQp *qp)
{
    uint8_t t = qp->img[HPU_ROCE_QP_TIMEOUT];

    return t ? 4096ull << t : 0;
}

static void qp_arm_retry(HpuCore *c, HpuRoceQp *qp)
{
    uint64_t t = qp_timeout_ns(qp);

    if (qp->psn_una == qp->psn_next || !t) {
        qp->deadline = 0;
    } else {
        qp->deadline = hpum_now(c) + t;
    }
}

/* Send packet @k of the WQE at index @idx. */
static int rc_send_packet(HpuCore *c, uint32_t qpn, uint32_t idx, uint32_t k)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    HpuRoceSwqe *w = qp_win(qp, idx);
    uint32_t mtu = mtu_bytes(qp->img[HPU_ROCE_QP_MTU]);
    uint32_t off = k * mtu, n = w->len > off ? HPU_MIN(mtu, w->len - off) : 0;
    uint32_t psn = psn_add(w->first_psn, k);
    bool first = k == 0, last = k + 1 >= w->npkts;
    bool imm = w->op == HPU_ROCE_WR_SEND_WITH_IMM ||
               w->op == HPU_ROCE_WR_RDMA_WRITE_WITH_IMM;
    uint8_t h[20], op;
    uint32_t hl = 0;
    int rc;

    if (psn_diff(psn, qp->psn_next) < 0) {
        qp->cnt[HPU_ROCE_QPC_RETRANSMITS]++;
        port_count(c, qp->port, HPU_ROCE_CNT_RETRANSMITS, 1);
    }
    if (w->op == HPU_ROCE_WR_RDMA_READ) {
        /* from the first response not received (all of it at first) */
        off = w->got * mtu;
        put_be64(h, w->raddr + off);
        put_be32(h + 8, w->rkey);
        put_be32(h + 12, w->len - off);
        qp_emit(c, qp, qpn, OP_READ_REQ, false, true,
                psn_add(w->first_psn, w->got), h, 16, NULL, 0);
        return 0;
    }
    rc = swqe_gather(c, qp, w, off, n);
    if (rc) {
        return rc;
    }
    if (w->op >= HPU_ROCE_WR_RDMA_WRITE) {
        op = first && last ? OP_WRITE_ONLY : first ? OP_WRITE_FIRST :
             last ? OP_WRITE_LAST : OP_WRITE_MIDDLE;
        if (first) {
            put_be64(h, w->raddr);
            put_be32(h + 8, w->rkey);
            put_be32(h + 12, w->len);
            hl = 16;
        }
    } else {
        op = first && last ? OP_SEND_ONLY : first ? OP_SEND_FIRST :
             last ? OP_SEND_LAST : OP_SEND_MIDDLE;
    }
    if (last && imm) {
        op++;                   /* the _IMM variant follows each LAST/ONLY */
        memcpy(h + hl, w->imm, 4);
        hl += 4;
    }
    qp_emit(c, qp, qpn, op, last && (w->flags & HPU_ROCE_WQE_SOLICITED),
            last || (k + 1) % HPU_ROCE_ACKREQ_EVERY == 0, psn, h, hl,
            R(c)->bounce, n);
    return 0;
}

/* The RDMA READs before WQE @end that are not complete. */
static uint32_t read_pending_before(HpuRoceQp *qp, uint32_t end)
{
    uint32_t i, n = 0;

    for (i = qp->sq_ci; i != end; i++) {
        if (qp_win(qp, i)->op == HPU_ROCE_WR_RDMA_READ &&
            !qp_win(qp, i)->acked) {
            n++;
        }
    }
    return n;
}

/* Take the next send WQE; false if there is none (or the QP failed). */
static bool rc_take_wqe(HpuCore *c, uint32_t qpn, uint32_t pi)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    uint32_t stride = 1u << qp->img[HPU_ROCE_QP_SQ_LOG_STRIDE];
    uint32_t mtu = mtu_bytes(qp->img[HPU_ROCE_QP_MTU]);
    HpuRoceSwqe *w = qp_win(qp, qp->sq_next);
    uint8_t *b = R(c)->pkt, st;
    HpuFault f = { 0 };
    uint32_t idx;
    int rc;

    rc = roce_xfer(c, qp->asid, qp_ring_at(qp, true, qp->sq_next), b, stride,
                   false, &f);
    if (rc) {
        if (rc == 1) {
            qp_error(c, qpn, HPU_ROCE_CAUSE_MMU_FAULT, f.va);
        }
        return false;
    }
    st = swqe_parse(c, qp, b, stride, w);
    if ((w->flags & HPU_ROCE_WQE_FENCE) && !st &&
        read_pending_before(qp, qp->sq_next)) {
        return false;           /* taken again once the READs complete */
    }
    if (!st && w->op == HPU_ROCE_WR_RDMA_READ &&
        read_pending_before(qp, qp->sq_next) >=
        qp->img[HPU_ROCE_QP_MAX_RD_ATOMIC]) {
        return false;           /* at most MAX_RD_ATOMIC READs in flight */
    }
    if (st) {
        HPU_LOG(c, "ROCE: QP %u send WQE %u refused (status %u)", qpn,
                qp->sq_next, st);
        idx = qp->sq_next;
        if (qp->sq_ci == qp->sq_next) {
            qp->sq_next++;
            qp->cur = qp->sq_next;
        }
        swqe_fail(c, qpn, idx, st, st == HPU_ROCE_WC_LOC_PROT_ERR ?
                  HPU_ROCE_CAUSE_LOC_PROT : HPU_ROCE_CAUSE_BAD_WQE);
        return false;
    }
    (void)pi;
    if (qp->type == HPU_ROCE_QPT_UD) {
        ud_send(c, qpn, w);
        return true;
    }
    w->first_psn = qp->psn_next;
    w->npkts = w->len ? (w->len + mtu - 1) / mtu : 1;
    w->acked = false;
    w->got = 0;
    qp->sq_next++;
    return true;
}

static void rc_requester(HpuCore *c, uint32_t qpn)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    uint32_t pi = 0;
    uint32_t n = 1u << qp->img[HPU_ROCE_QP_SQ_LOG_ENTRIES];
    bool have_pi = false;
    int rc;

    while (roce_budget_left(R(c)) && qp->state == HPU_ROCE_QPS_RTS &&
           !qp->rnr_wait) {
        if (qp->cur != qp->sq_next) {
            HpuRoceSwqe *w = qp_win(qp, qp->cur);
            uint32_t psn = psn_add(w->first_psn, qp->cur_pkt);

            if (psn_diff(psn, qp->psn_una) >= HPU_ROCE_MAX_INFLIGHT) {
                break;
            }
            rc = rc_send_packet(c, qpn, qp->cur, qp->cur_pkt);
            if (rc == HPU_XFER_STALE) {
                return;
            }
            if (rc) {
                swqe_fail(c, qpn, qp->cur, HPU_ROCE_WC_LOC_PROT_ERR, rc == 2 ?
                          HPU_ROCE_CAUSE_MMU_FAULT : HPU_ROCE_CAUSE_LOC_PROT);
                return;
            }
            if (w->op == HPU_ROCE_WR_RDMA_READ) {
                qp->cur_pkt = w->npkts;
            } else {
                qp->cur_pkt++;
            }
            if (psn_diff(psn_add(w->first_psn, qp->cur_pkt),
                         qp->psn_next) > 0) {
                qp->psn_next = psn_add(w->first_psn, qp->cur_pkt);
            }
            if (qp->cur_pkt >= w->npkts) {
                qp->cur++;
                qp->cur_pkt = 0;
            }
            if (!qp->deadline) {
                qp_arm_retry(c, qp);
            }
            continue;
        }
        if (qp->sq_next - qp->sq_ci >= HPU_ROCE_WINDOW) {
            break;
        }
        if (!have_pi) {
            rc = qp_read_pi(c, qpn, true, &pi);
            if (rc) {
                return;
            }
            have_pi = true;
            if (pi - qp->sq_ci > n) {
                qp_error(c, qpn, HPU_ROCE_CAUSE_BAD_WQE, 0);
                return;
            }
        }
        if (qp->sq_next == pi || !rc_take_wqe(c, qpn, pi)) {
            break;
        }
        if (R(c)->qp[qpn] != qp) {
            return;
        }
    }
}

/* Complete, in order, the WQEs that are done. */
static void rc_complete_ready(HpuCore *c, uint32_t qpn)
{
    HpuRoceQp *qp = R(c)->qp[qpn];

    while (qp->sq_ci != qp->sq_next && qp_win(qp, qp->sq_ci)->acked &&
           qp->state != HPU_ROCE_QPS_ERR) {
        HpuRoceSwqe *w = qp_win(qp, qp->sq_ci);
        RoceCqe e = { .wr_id = w->wr_id, .op = wc_op_of(w->op),
                      .len = w->op == HPU_ROCE_WR_RDMA_READ ? w->len : 0 };

        if ((w->flags & HPU_ROCE_WQE_SIGNALED) &&
            qp_complete(c, qpn, true, &e)) {
            return;
        }
        qp->sq_ci++;
    }
}

/* Go back to PSN @psn (unacknowledged) and send again from there. */
static void rc_rewind(HpuRoceQp *qp, uint32_t psn)
{
    uint32_t i;

    for (i = qp->sq_ci; i != qp->sq_next; i++) {
        HpuRoceSwqe *w = qp_win(qp, i);

        if (w->acked) {
            continue;
        }
        qp->cur = i;
        if (w->op == HPU_ROCE_WR_RDMA_READ) {
            qp->cur_pkt = 0;
        } else {
            int32_t k = psn_diff(psn, w->first_psn);

            qp->cur_pkt = k > 0 && (uint32_t)k < w->npkts ? (uint32_t)k : 0;
        }
        return;
    }
    qp->cur = qp->sq_next;
    qp->cur_pkt = 0;
}

static void rc_fail_head(HpuCore *c, uint32_t qpn, uint8_t status,
                         uint8_t cause);

/*
 * Acknowledge every PSN before @psn (exclusive), never beyond the oldest
 * READ not complete.  Past it (@implied: an ACK or a response to a later
 * request) its responses were lost: an implied NAK, sent again from there.
 */
static void rc_ack_upto(HpuCore *c, uint32_t qpn, uint32_t psn, bool implied)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    HpuRoceSwqe *rd = NULL;
    uint32_t i;
    bool progress = false;

    for (i = qp->sq_ci; i != qp->sq_next; i++) {
        HpuRoceSwqe *w = qp_win(qp, i);
        uint32_t end = psn_add(w->first_psn, w->npkts);

        if (w->acked) {
            continue;
        }
        if (w->op == HPU_ROCE_WR_RDMA_READ) {
            rd = w;
            break;
        }
        if (psn_diff(end, psn) > 0) {
            break;
        }
        w->acked = true;
        progress = true;
    }
    if (rd && psn_diff(psn, psn_add(rd->first_psn, rd->got)) > 0) {
        psn = psn_add(rd->first_psn, rd->got);
    } else {
        implied = false;
    }
    if (psn_diff(psn, qp->psn_una) > 0 && psn_diff(psn, qp->psn_next) <= 0) {
        qp->psn_una = psn;
        progress = true;
    }
    if (progress) {
        qp->retry_left = qp->img[HPU_ROCE_QP_RETRY_CNT];
        qp->rnr_left = qp->img[HPU_ROCE_QP_RNR_RETRY];
        qp->deadline = 0;
        qp_arm_retry(c, qp);
        /* the window of unacknowledged packets and WQEs opened */
        qp->sq_kick = true;
    }
    rc_complete_ready(c, qpn);
    if (!implied || qp->rd_retry || qp->rnr_wait ||
        qp->state != HPU_ROCE_QPS_RTS) {
        return;                 /* one rewind until a response or timeout */
    }
    if (!qp->retry_left) {
        rc_fail_head(c, qpn, HPU_ROCE_WC_RETRY_EXC_ERR,
                     HPU_ROCE_CAUSE_RETRY_EXC);
        return;
    }
    qp->retry_left--;
    qp->rd_retry = true;
    rc_rewind(qp, psn);
    qp->sq_kick = true;
    qp_arm_retry(c, qp);
}

static const uint32_t rnr_us[32] = {
    655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280,
    1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440,
    81920, 122880, 163840, 245760, 327680, 491520,
};

/* Fail the oldest outstanding WQE with @status and move the QP to ERR. */
static void rc_fail_head(HpuCore *c, uint32_t qpn, uint8_t status,
                         uint8_t cause)
{
    HpuRoceQp *qp = R(c)->qp[qpn];

    if (qp->sq_ci == qp->sq_next) {
        qp_error(c, qpn, cause, 0);
        return;
    }
    swqe_fail(c, qpn, qp->sq_ci, status, cause);
}

static void rc_rx_ack(HpuCore *c, uint32_t qpn, uint32_t psn, uint8_t syn)
{
    HpuRoceQp *qp = R(c)->qp[qpn];

    if (psn_diff(psn, qp->psn_una) < 0 || psn_diff(psn, qp->psn_next) >= 0) {
        return;                 /* a stale or ghost ACK or NAK */
    }
    switch (syn >> 5) {
    case 0:                     /* ACK */
        rc_ack_upto(c, qpn, psn_add(psn, 1), true);
        return;
    case 1:                     /* RNR NAK */
        port_count(c, qp->port, HPU_ROCE_CNT_RNR_NAK_RCVD, 1);
        qp->cnt[HPU_ROCE_QPC_RNR_NAK_RCVD]++;
        rc_ack_upto(c, qpn, psn, false);
        if (qp->state == HPU_ROCE_QPS_ERR) {
            return;
        }
        if (qp->img[HPU_ROCE_QP_RNR_RETRY] != 7) {
            if (!qp->rnr_left) {
                rc_fail_head(c, qpn, HPU_ROCE_WC_RNR_RETRY_EXC_ERR,
                             HPU_ROCE_CAUSE_RNR_RETRY_EXC);
                return;
            }
            qp->rnr_left--;
        }
        rc_rewind(qp, psn);
        qp->rnr_wait = true;
        qp->deadline = hpum_now(c) + 1000ull * rnr_us[syn & 0x1f];
        return;
    case 3:
        break;
    default:
        return;
    }
    rc_ack_upto(c, qpn, psn, false);
    if (qp->state == HPU_ROCE_QPS_ERR) {
        return;
    }
    switch (syn & 0x1f) {
    case 0:                     /* PSN sequence error */
        port_count(c, qp->port, HPU_ROCE_CNT_SEQ_NAK_RCVD, 1);
        qp->cnt[HPU_ROCE_QPC_SEQ_NAK_RCVD]++;
        if (qp->rnr_wait) {
            return;             /* the RNR timer goes back anyway */
        }
        if (!qp->retry_left) {
            rc_fail_head(c, qpn, HPU_ROCE_WC_RETRY_EXC_ERR,
                         HPU_ROCE_CAUSE_RETRY_EXC);
            return;
        }
        qp->retry_left--;
        rc_rewind(qp, psn);
        qp->sq_kick = true;
        qp_arm_retry(c, qp);
        return;
    case 1:
        rc_fail_head(c, qpn, HPU_ROCE_WC_REM_INV_REQ_ERR,
                     HPU_ROCE_CAUSE_REM_INV_REQ);
        return;
    case 2:
        rc_fail_head(c, qpn, HPU_ROCE_WC_REM_ACCESS_ERR,
                     HPU_ROCE_CAUSE_REM_ACCESS);
        return;
    default:
        rc_fail_head(c, qpn, HPU_ROCE_WC_REM_OP_ERR,
                     HPU_ROCE_CAUSE_REM_INV_REQ);
        return;
    }
}

static void rc_rx_read_resp(HpuCore *c, uint32_t qpn, uint8_t op,
                            uint32_t psn, const uint8_t *pay, uint32_t plen)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    HpuRoceSwqe *w = NULL;
    uint32_t mtu = mtu_bytes(qp->img[HPU_ROCE_QP_MTU]), off, i;
    bool last = op == OP_READ_RESP_LAST || op == OP_READ_RESP_ONLY;
    int rc;

    /* only the oldest READ not complete takes responses, in order */
    for (i = qp->sq_ci; i != qp->sq_next; i++) {
        if (qp_win(qp, i)->op == HPU_ROCE_WR_RDMA_READ &&
            !qp_win(qp, i)->acked) {
            w = qp_win(qp, i);
            break;
        }
    }
    if (!w || psn_diff(psn, qp->psn_next) >= 0 ||
        psn_diff(psn, psn_add(w->first_psn, w->got)) < 0) {
        return;                 /* a duplicate or a ghost */
    }
    if (psn_diff(psn, psn_add(w->first_psn, w->got)) > 0) {
        rc_ack_upto(c, qpn, psn, true);         /* responses were lost */
        return;
    }
    rc_ack_upto(c, qpn, w->first_psn, false);
    if (qp->state == HPU_ROCE_QPS_ERR) {
        return;
    }
    off = w->got * mtu;
    if ((!last && plen != mtu) || (last && off + plen != w->len) ||
        (last != (w->got + 1 == w->npkts))) {
        return;
    }
    memcpy(R(c)->bounce, pay, plen);
    rc = sge_copy(c, qp, w->sge, w->nsge, off, R(c)->bounce, plen, true);
    if (rc == HPU_XFER_STALE) {
        return;
    }
    if (rc) {
        swqe_fail(c, qpn, i, HPU_ROCE_WC_LOC_PROT_ERR, rc == 2 ?
                  HPU_ROCE_CAUSE_MMU_FAULT : HPU_ROCE_CAUSE_LOC_PROT);
        return;
    }
    w->got++;
    qp->rd_retry = false;
    qp->psn_una = psn_add(psn, 1);
    qp->retry_left = qp->img[HPU_ROCE_QP_RETRY_CNT];
    qp_arm_retry(c, qp);
    if (last) {
        w->acked = true;
        rc_complete_ready(c, qpn);
        qp->sq_kick = true;     /* a fenced WQE may go now */
    }
}

/* Responder */

/*
 * Take a receive WQE for @qpn into qp->rwqe: 0, 1 (none posted), 2 (the
 * QP failed) or HPU_XFER_STALE.
 */
static int take_rwqe(HpuCore *c, uint32_t qpn)
{
    HpuRoce *r = R(c);
    HpuRoceQp *qp = r->qp[qpn];
    HpuRoceSrq *s = qp->srq ? &r->srq[qp->srq - 1] : NULL;
    uint8_t *b = r->pkt, pib[4];
    uint32_t stride, n, pi, ci, i;
    uint64_t at;
    HpuFault f = { 0 };
    int rc;

    if (s) {
        rc = roce_xfer(c, s->asid, s->dbr, pib, 4, false, &f);
        pi = hpum_le32(pib);
        ci = s->ci;
        n = 1u << s->log;
        stride = 1u << s->lstride;
        at = s->ring + ((uint64_t)(ci & (n - 1)) << s->lstride);
    } else {
        rc = qp_read_pi(c, qpn, false, &pi);
        ci = qp->rq_ci;
        n = 1u << qp->img[HPU_ROCE_QP_RQ_LOG_ENTRIES];
        stride = 1u << qp->img[HPU_ROCE_QP_RQ_LOG_STRIDE];
        at = qp_ring_at(qp, false, ci);
        f.va = 0;
    }
    if (rc) {
        if (rc == 1 && s) {
            qp_error(c, qpn, HPU_ROCE_CAUSE_MMU_FAULT, f.va);
        }
        return rc == 1 ? 2 : rc;
    }
    if (pi == ci) {
        return 1;
    }
    if (pi - ci > n) {
        qp_error(c, qpn, HPU_ROCE_CAUSE_BAD_WQE, 0);
        return 2;
    }
    rc = roce_xfer(c, s ? s->asid : qp->asid, at, b, stride, false, &f);
    if (rc) {
        if (rc == 1) {
            qp_error(c, qpn, HPU_ROCE_CAUSE_MMU_FAULT, f.va);
        }
        return rc == 1 ? 2 : rc;
    }
    qp->rwqe.wr_id = hpum_le64(b + HPU_ROCE_RWQE_WR_ID);
    qp->rwqe.nsge = b[HPU_ROCE_RWQE_NUM_SGE];
    for (i = 0; i < qp->rwqe.nsge && i < HPU_ROCE_NUM_SGE &&
         HPU_ROCE_RWQE_HDR_SIZE + HPU_ROCE_SGE_SIZE * (i + 1) <= stride; i++) {
        const uint8_t *e = b + HPU_ROCE_RWQE_HDR_SIZE + HPU_ROCE_SGE_SIZE * i;

        qp->rwqe.sge[i].addr = hpum_le64(e + HPU_ROCE_SGE_ADDR);
        qp->rwqe.sge[i].len = hpum_le32(e + HPU_ROCE_SGE_LENGTH);
        qp->rwqe.sge[i].lkey = hpum_le32(e + HPU_ROCE_SGE_LKEY);
    }
    if (s) {
        s->ci++;
        hpum_put_le32(pib, s->ci);
        rc = roce_xfer(c, s->asid, s->dbr + 4, pib, 4, true, &f);
        if (rc == HPU_XFER_STALE) {
            return rc;
        }
        if (s->limit && pi - s->ci < s->limit) {
            s->limit = 0;
            roce_event(c, HPU_ROCE_EV_SRQ_LIMIT, 0, (uint32_t)(s - r->srq),
                       0, 0);
        }
    } else {
        qp->rq_ci++;
    }
    qp->have_rwqe = true;
    if (qp->rwqe.nsge > HPU_ROCE_NUM_SGE || i != qp->rwqe.nsge ||
        !all_zero(b + 9, 7)) {
        RoceCqe e = { .wr_id = qp->rwqe.wr_id, .op = HPU_ROCE_WC_RECV,
                      .status = HPU_ROCE_WC_LOC_QP_OP_ERR };

        qp->have_rwqe = false;
        if (qp_complete(c, qpn, false, &e) == HPU_XFER_STALE) {
            return HPU_XFER_STALE;
        }
        qp_error(c, qpn, HPU_ROCE_CAUSE_BAD_WQE, 0);
        return 2;
    }
    return 0;
}

/* Receive-side failure: complete the receive WQE, NAK, QP to ERR. */
static void resp_fail(HpuCore *c, uint32_t qpn, uint32_t psn, uint8_t st,
                      uint8_t nak, uint8_t cause)
{
    HpuRoceQp *qp = R(c)->qp[qpn];

    qp->rd_n = 0;               /* the QP goes to ERR: no more responses */
    if (qp->have_rwqe) {
        RoceCqe e = { .wr_id = qp->rwqe.wr_id, .op = HPU_ROCE_WC_RECV,
                      .status = st };

        qp->have_rwqe = false;
        if (qp_complete(c, qpn, false, &e) == HPU_XFER_STALE) {
            return;
        }
    }
    if (qp->type == HPU_ROCE_QPT_RC) {
        send_aeth(c, qp, qpn, nak, psn);
    }
    if (nak == AETH_NAK_ACC) {
        port_count(c, qp->port, HPU_ROCE_CNT_REM_ACCESS_ERR, 1);
    }
    qp_error(c, qpn, cause, 0);
}

/* Scatter @n payload bytes into the receive WQE at rx_off. */
static bool resp_scatter(HpuCore *c, uint32_t qpn, uint32_t psn,
                         const uint8_t *pay, uint32_t n)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    bool over;
    uint32_t cap = sge_total(qp->rwqe.sge, qp->rwqe.nsge, &over);
    int rc;

    if (qp->rx_off + n > cap) {
        resp_fail(c, qpn, psn, HPU_ROCE_WC_LOC_LEN_ERR, AETH_NAK_INV,
                  HPU_ROCE_CAUSE_REM_INV_REQ);
        return false;
    }
    memcpy(R(c)->bounce, pay, n);
    rc = sge_copy(c, qp, qp->rwqe.sge, qp->rwqe.nsge, qp->rx_off,
                  R(c)->bounce, n, true);
    if (rc == HPU_XFER_STALE) {
        return false;
    }
    if (rc) {
        resp_fail(c, qpn, psn, HPU_ROCE_WC_LOC_PROT_ERR, AETH_NAK_OP,
                  rc == 2 ? HPU_ROCE_CAUSE_MMU_FAULT : HPU_ROCE_CAUSE_LOC_PROT);
        return false;
    }
    qp->rx_off += n;
    return true;
}

/*
 * An RDMA READ request: checked now, answered by resp_read_run() as the
 * runs' budget allows (responder resources: max_dest_rd_atomic READs).
 */
static void resp_read(HpuCore *c, uint32_t qpn, uint32_t psn,
                      const uint8_t *reth, bool dup)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    uint64_t va = be64(reth), dva = 0;
    uint32_t rkey = be32(reth + 8), len = be32(reth + 12);
    uint32_t mtu = mtu_bytes(qp->img[HPU_ROCE_QP_MTU]);
    uint32_t np = len ? (len + mtu - 1) / mtu : 1;
    HpuRoceRdResp *e;

    if (len > HPU_ROCE_MSG_MAX) {
        resp_fail(c, qpn, psn, HPU_ROCE_WC_REM_INV_REQ_ERR, AETH_NAK_INV,
                  HPU_ROCE_CAUSE_REM_INV_REQ);
        return;
    }
    if (len && (!(hpum_le32(qp->img + HPU_ROCE_QP_ACCESS) &
                  HPU_ROCE_ACCESS_REMOTE_READ) ||
                !mr_check(c, qp, rkey, va, len, HPU_ROCE_ACCESS_REMOTE_READ,
                          &dva))) {
        resp_fail(c, qpn, psn, HPU_ROCE_WC_REM_ACCESS_ERR, AETH_NAK_ACC,
                  HPU_ROCE_CAUSE_REM_ACCESS);
        return;
    }
    if (dup) {
        /* the requester went back to @psn: drop what it asks again */
        while (qp->rd_n) {
            e = &qp->rd[(qp->rd_head + qp->rd_n - 1) % HPU_ROCE_MAX_RD];
            if (psn_diff(psn_add(e->psn, e->npkts), psn) <= 0) {
                break;
            }
            qp->rd_n--;
        }
    }
    if (qp->rd_n >= qp->img[HPU_ROCE_QP_MAX_DEST_RD_ATOMIC]) {
        HPU_LOG(c, "ROCE: QP %u: READ beyond its responder resources", qpn);
        resp_fail(c, qpn, psn, HPU_ROCE_WC_REM_INV_REQ_ERR, AETH_NAK_INV,
                  HPU_ROCE_CAUSE_REM_INV_REQ);
        return;
    }
    if (!dup) {
        qp->epsn = psn_add(psn, np);
        qp->msn = (qp->msn + 1) & PSN_MASK;
    }
    e = &qp->rd[(qp->rd_head + qp->rd_n) % HPU_ROCE_MAX_RD];
    e->va = va;
    e->rkey = rkey;
    e->len = len;
    e->psn = psn;
    e->npkts = np;
    e->k = 0;
    qp->rd_n++;
}

/* Send READ response packets while the run's budget lasts. */
static void resp_read_run(HpuCore *c, uint32_t qpn)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    uint32_t mtu = mtu_bytes(qp->img[HPU_ROCE_QP_MTU]);
    uint8_t aeth[4];
    HpuFault f;
    uint64_t dva = 0;
    int rc;

    while (qp->rd_n && roce_budget_left(R(c))) {
        HpuRoceRdResp *e = &qp->rd[qp->rd_head];
        uint32_t off = e->k * mtu, n = e->len ? HPU_MIN(mtu, e->len - off) : 0;
        uint32_t psn = psn_add(e->psn, e->k);
        bool first = e->k == 0, last = e->k + 1 == e->npkts;
        uint8_t op = first && last ? OP_READ_RESP_ONLY :
                     first ? OP_READ_RESP_FIRST :
                     last ? OP_READ_RESP_LAST : OP_READ_RESP_MIDDLE;

        /* the MR is checked again for each packet: it may be gone */
        if (n && !mr_check(c, qp, e->rkey, e->va + off, n,
                           HPU_ROCE_ACCESS_REMOTE_READ, &dva)) {
            resp_fail(c, qpn, psn, HPU_ROCE_WC_REM_ACCESS_ERR, AETH_NAK_ACC,
                      HPU_ROCE_CAUSE_REM_ACCESS);
            return;
        }
        memset(&f, 0, sizeof(f));
        rc = roce_xfer(c, qp->asid, dva, R(c)->bounce, n, false, &f);
        if (rc == HPU_XFER_STALE) {
            return;
        }
        if (rc) {
            resp_fail(c, qpn, psn, HPU_ROCE_WC_REM_ACCESS_ERR, AETH_NAK_ACC,
                      HPU_ROCE_CAUSE_MMU_FAULT);
            return;
        }
        aeth[0] = AETH_ACK;
        put_be24(aeth + 1, qp->msn);
        qp_emit(c, qp, qpn, op, false, false, psn, aeth,
                first || last ? 4 : 0, R(c)->bounce, n);
        if (++e->k == e->npkts) {
            qp->rd_head = (qp->rd_head + 1) % HPU_ROCE_MAX_RD;
            qp->rd_n--;
        }
    }
    if (!qp->rd_n && qp->ack_defer) {
        qp->ack_defer = false;
        send_aeth(c, qp, qpn, qp->ack_syn, qp->ack_psn);
    }
}

typedef struct RocePkt {
    unsigned int port;
    uint8_t op;
    bool se;
    bool ackreq;
    uint32_t dqpn;
    uint32_t psn;
    const uint8_t *ip;          /* the IP header */
    const uint8_t *ext;         /* after the BTH */
    const uint8_t *pay;
    uint32_t plen;
    uint32_t len;               /* frame */
} RocePkt;

/* Length of the extension headers of an opcode, -1 unsupported. */
static int ext_len(uint8_t op)
{
    switch (op) {
    case OP_SEND_FIRST: case OP_SEND_MIDDLE: case OP_SEND_LAST:
    case OP_SEND_ONLY: case OP_WRITE_MIDDLE: case OP_WRITE_LAST:
    case OP_READ_RESP_MIDDLE:
        return 0;
    case OP_SEND_LAST_IMM: case OP_SEND_ONLY_IMM: case OP_WRITE_LAST_IMM:
    case OP_READ_RESP_FIRST: case OP_READ_RESP_LAST: case OP_READ_RESP_ONLY:
    case OP_ACK:
        return 4;
    case OP_WRITE_FIRST: case OP_WRITE_ONLY: case OP_READ_REQ:
        return 16;
    case OP_WRITE_ONLY_IMM:
        return 20;
    case OP_UD_SEND_ONLY:
        return 8;
    case OP_UD_SEND_ONLY_IMM:
        return 12;
    default:
        return -1;
    }
}

static bool op_has_payload(uint8_t op)
{
    return op != OP_READ_REQ && op != OP_ACK;
}

static void rc_request(HpuCore *c, uint32_t qpn, const RocePkt *p)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    int32_t d = psn_diff(p->psn, qp->epsn);
    uint8_t op = p->op;
    bool send = op <= OP_SEND_ONLY_IMM;
    bool write = !send && op <= OP_WRITE_ONLY_IMM;
    bool first = op == OP_SEND_FIRST || op == OP_SEND_ONLY ||
                 op == OP_SEND_ONLY_IMM || op == OP_WRITE_FIRST ||
                 op == OP_WRITE_ONLY || op == OP_WRITE_ONLY_IMM;
    bool last = op == OP_SEND_LAST || op == OP_SEND_LAST_IMM ||
                op == OP_SEND_ONLY || op == OP_SEND_ONLY_IMM ||
                op == OP_WRITE_LAST || op == OP_WRITE_LAST_IMM ||
                op == OP_WRITE_ONLY || op == OP_WRITE_ONLY_IMM;
    bool imm = op == OP_SEND_LAST_IMM || op == OP_SEND_ONLY_IMM ||
               op == OP_WRITE_LAST_IMM || op == OP_WRITE_ONLY_IMM;
    uint32_t mtu = mtu_bytes(qp->img[HPU_ROCE_QP_MTU]);
    const uint8_t *immp = p->ext + (op == OP_WRITE_ONLY_IMM ? 16 : 0);

    if (d < 0) {
        port_count(c, p->port, HPU_ROCE_CNT_DUP_REQUESTS, 1);
        if (op == OP_READ_REQ) {
            resp_read(c, qpn, p->psn, p->ext, true);
        } else {
            send_aeth(c, qp, qpn, AETH_ACK, psn_add(qp->epsn, PSN_MASK));
        }
        return;
    }
    if (d > 0) {
        if (!qp->nak_sent) {
            qp->nak_sent = true;
            port_count(c, p->port, HPU_ROCE_CNT_SEQ_NAK_SENT, 1);
            qp->cnt[HPU_ROCE_QPC_SEQ_NAK_SENT]++;
            send_aeth(c, qp, qpn, AETH_NAK_SEQ, qp->epsn);
        }
        return;
    }
    qp->nak_sent = false;
    if (op == OP_READ_REQ && !qp->in_send && !qp->in_write) {
        resp_read(c, qpn, p->psn, p->ext, false);
        return;
    }
    /* opcode sequence and length rules */
    if ((send && first == qp->in_send) || (write && first == qp->in_write) ||
        (send && qp->in_write) || (write && qp->in_send) ||
        op == OP_READ_REQ ||
        (!last && p->plen != mtu) || p->plen > mtu) {
        resp_fail(c, qpn, p->psn, HPU_ROCE_WC_REM_INV_REQ_ERR, AETH_NAK_INV,
                  HPU_ROCE_CAUSE_REM_INV_REQ);
        return;
    }
    if (send) {
        if (first && !qp->have_rwqe) {
            int rc = take_rwqe(c, qpn);

            if (rc == 1) {
                port_count(c, p->port, HPU_ROCE_CNT_RNR_NAK_SENT, 1);
                qp->cnt[HPU_ROCE_QPC_RNR_NAK_SENT]++;
                send_aeth(c, qp, qpn, AETH_RNR |
                          qp->img[HPU_ROCE_QP_MIN_RNR_TIMER], p->psn);
                return;
            }
            if (rc) {
                return;
            }
            qp->rx_off = 0;
        }
        if (!resp_scatter(c, qpn, p->psn, p->pay, p->plen)) {
            return;
        }
        qp->in_send = !last;
    } else {
        uint64_t dva = 0;

        if (first) {
            uint64_t va = be64(p->ext);
            uint32_t rkey = be32(p->ext + 8), len = be32(p->ext + 12);

            if (len > HPU_ROCE_MSG_MAX) {
                resp_fail(c, qpn, p->psn, HPU_ROCE_WC_REM_INV_REQ_ERR,
                          AETH_NAK_INV, HPU_ROCE_CAUSE_REM_INV_REQ);
                return;
            }
            if (len && (!(hpum_le32(qp->img + HPU_ROCE_QP_ACCESS) &
                          HPU_ROCE_ACCESS_REMOTE_WRITE) ||
                        !mr_check(c, qp, rkey, va, len,
                                  HPU_ROCE_ACCESS_REMOTE_WRITE, &dva))) {
                resp_fail(c, qpn, p->psn, HPU_ROCE_WC_REM_ACCESS_ERR,
                          AETH_NAK_ACC, HPU_ROCE_CAUSE_REM_ACCESS);
                return;
            }
            qp->wr_va = va;
            qp->wr_rkey = rkey;
            qp->wr_left = qp->wr_len = len;
        }
        if (p->plen > qp->wr_left || (last && p->plen != qp->wr_left)) {
            resp_fail(c, qpn, p->psn, HPU_ROCE_WC_REM_INV_REQ_ERR,
                      AETH_NAK_INV, HPU_ROCE_CAUSE_REM_INV_REQ);
            return;
        }
        /* each packet: the MR may have gone since the first */
        if (p->plen && (!(hpum_le32(qp->img + HPU_ROCE_QP_ACCESS) &
                          HPU_ROCE_ACCESS_REMOTE_WRITE) ||
                        !mr_check(c, qp, qp->wr_rkey, qp->wr_va, p->plen,
                                  HPU_ROCE_ACCESS_REMOTE_WRITE, &dva))) {
            resp_fail(c, qpn, p->psn, HPU_ROCE_WC_REM_ACCESS_ERR,
                      AETH_NAK_ACC, HPU_ROCE_CAUSE_REM_ACCESS);
            return;
        }
        if (imm && !qp->have_rwqe) {
            int rc = take_rwqe(c, qpn);

            if (rc == 1) {
                port_count(c, p->port, HPU_ROCE_CNT_RNR_NAK_SENT, 1);
                qp->cnt[HPU_ROCE_QPC_RNR_NAK_SENT]++;
                qp->in_write = !first;
                send_aeth(c, qp, qpn, AETH_RNR |
                          qp->img[HPU_ROCE_QP_MIN_RNR_TIMER], p->psn);
                return;
            }
            if (rc) {
                return;
            }
        }
        if (p->plen) {
            HpuFault f = { 0 };
            int rc;

            memcpy(R(c)->bounce, p->pay, p->plen);
            rc = roce_xfer(c, qp->asid, dva, R(c)->bounce, p->plen,
                           true, &f);
            if (rc == HPU_XFER_STALE) {
                return;
            }
            if (rc) {
                resp_fail(c, qpn, p->psn, HPU_ROCE_WC_REM_ACCESS_ERR,
                          AETH_NAK_ACC, HPU_ROCE_CAUSE_MMU_FAULT);
                return;
            }
        }
        qp->wr_va += p->plen;
        qp->wr_left -= p->plen;
        qp->in_write = !last;
    }
    qp->epsn = psn_add(p->psn, 1);
    if (last) {
        qp->msn = (qp->msn + 1) & PSN_MASK;
        if (send || imm) {
            RoceCqe e = {
                .wr_id = qp->rwqe.wr_id,
                .op = send ? HPU_ROCE_WC_RECV : HPU_ROCE_WC_RECV_RDMA_WITH_IMM,
                .len = send ? qp->rx_off : qp->wr_len,
                .flags = imm ? HPU_ROCE_CQE_WITH_IMM : 0,
                .solicited = p->se,
            };

            if (imm) {
                memcpy(e.imm, immp, 4);
            }
            qp->have_rwqe = false;
            if (qp_complete(c, qpn, false, &e) == HPU_XFER_STALE) {
                return;
            }
        }
    }
    if (p->ackreq && qp->state != HPU_ROCE_QPS_ERR) {
        send_aeth(c, qp, qpn, AETH_ACK, p->psn);
    }
}

static void ud_receive(HpuCore *c, uint32_t qpn, const RocePkt *p)
{
    HpuRoceQp *qp = R(c)->qp[qpn];
    uint8_t grh[HPU_ROCE_GRH_SIZE] = { 0 };
    bool imm = p->op == OP_UD_SEND_ONLY_IMM;
    RoceCqe e = { .op = HPU_ROCE_WC_RECV, .flags = HPU_ROCE_CQE_GRH,
                  .src_qpn = be24(p->ext + 5), .solicited = p->se };
    int rc = take_rwqe(c, qpn);

    if (rc == 1) {
        port_count(c, p->port, HPU_ROCE_CNT_RX_DROPPED, 1);
        return;
    }
    if (rc) {
        return;
    }
    if ((p->ip[0] >> 4) == 4) {
        memcpy(grh + 20, p->ip, 20);
    } else {
        memcpy(grh, p->ip, 40);
    }
    {
        bool over;

        if (sge_total(qp->rwqe.sge, qp->rwqe.nsge, &over) <
            sizeof(grh) + p->plen) {
            /* the datagram's fault, not the QP's: it stays in RTS */
            e.wr_id = qp->rwqe.wr_id;
            e.status = HPU_ROCE_WC_LOC_LEN_ERR;
            e.flags = 0;
            qp->have_rwqe = false;
            qp_complete(c, qpn, false, &e);
            return;
        }
    }
    qp->rx_off = 0;
    if (!resp_scatter(c, qpn, p->psn, grh, sizeof(grh)) ||
        !resp_scatter(c, qpn, p->psn, p->pay, p->plen)) {
        return;
    }
    e.wr_id = qp->rwqe.wr_id;
    e.len = qp->rx_off;
    if (imm) {
        memcpy(e.imm, p->ext + 8, 4);
        e.flags |= HPU_ROCE_CQE_WITH_IMM;
    }
    qp->have_rwqe = false;
    qp_complete(c, qpn, false, &e);
}

/* Parse and check a frame; dispatch it.  Counters as roce.md says. */
/* Count a received frame in @counter (and trace the verdict). */
static void rx_verdict(HpuCore *c, const RocePkt *p, unsigned int counter)
{
    HPU_TRACE(c, HPU_TRACE_ROCE_RX, p->port, p->op, p->dqpn, p->psn, counter);
    port_count(c, p->port, counter, 1);
}

static void roce_rx_frame(HpuCore *c, unsigned int port, const uint8_t *f,
                          uint32_t len)
{
    HpuRoce *r = R(c);
    RocePkt p = { .port = port, .len = len };
    const uint8_t *ip = f + 14, *udp, *bth;
    uint32_t iplen, ulen, iph;
    int el;
    uint8_t pad;
    HpuRoceQp *qp;
    bool v4 = be16(f + 12) == 0x0800, resp;

    if (v4) {
        iph = 20;
        iplen = be16(ip + 2);
    } else {
        iph = 40;
        iplen = 40 + be16(ip + 4);
    }
    udp = ip + iph;
    ulen = be16(udp + 4);
    if (14 + iplen > len || iplen < iph + 8 + 12 + 4 || ulen != iplen - iph) {
        rx_verdict(c, &p, HPU_ROCE_CNT_RX_MALFORMED);
        return;
    }
    if (hpum_le32(ip + iplen - 4) != roce_icrc(ip, ip + iplen - 4)) {
        rx_verdict(c, &p, HPU_ROCE_CNT_RX_ICRC_ERR);
        return;
    }
    bth = udp + 8;
    p.op = bth[0];
    p.se = bth[1] & 0x80;
    pad = (bth[1] >> 4) & 3;
    p.ackreq = bth[8] & 0x80;
    p.dqpn = be24(bth + 5);
    p.psn = be24(bth + 9);
    p.ip = ip;
    el = ext_len(p.op);
    if ((bth[1] & 0x0f) || be16(bth + 2) != HPU_ROCE_PKEY || el < 0 ||
        ulen < 8 + 12 + (uint32_t)el + pad + 4 ||
        (!op_has_payload(p.op) && ulen != 8 + 12 + (uint32_t)el + 4)) {
        rx_verdict(c, &p, HPU_ROCE_CNT_RX_MALFORMED);
        return;
    }
    p.ext = bth + 12;
    p.pay = p.ext + el;
    p.plen = ulen - 8 - 12 - el - pad - 4;
    if (p.dqpn >= HPU_ROCE_NUM_QP || !r->qp[p.dqpn] ||
        r->qp[p.dqpn]->port != port ||
        (r->qp[p.dqpn]->type == HPU_ROCE_QPT_UD) != (p.op >= OP_UD_SEND_ONLY)) {
        rx_verdict(c, &p, HPU_ROCE_CNT_RX_UNKNOWN_QP);
        return;
    }
    qp = r->qp[p.dqpn];
    resp = p.op >= OP_READ_RESP_FIRST && p.op <= OP_ACK;
    if ((resp ? qp->state != HPU_ROCE_QPS_RTS :
         qp->state != HPU_ROCE_QPS_RTR && qp->state != HPU_ROCE_QPS_RTS) ||
        (qp->type == HPU_ROCE_QPT_RC &&
         (v4 ? memcmp(ip + 12, qp->img + HPU_ROCE_QP_DGID + 12, 4) :
          memcmp(ip + 8, qp->img + HPU_ROCE_QP_DGID, 16))) ||
        (qp->type == HPU_ROCE_QPT_UD &&
         be32(p.ext) != hpum_le32(qp->img + HPU_ROCE_QP_QKEY))) {
        rx_verdict(c, &p, HPU_ROCE_CNT_RX_DROPPED);
        return;
    }
    rx_verdict(c, &p, HPU_ROCE_CNT_RX_PKTS);
    port_count(c, port, HPU_ROCE_CNT_RX_BYTES, len);
    qp->cnt[HPU_ROCE_QPC_RX_PKTS]++;
    qp->cnt[HPU_ROCE_QPC_RX_BYTES] += len;
    if (qp->type == HPU_ROCE_QPT_UD) {
        ud_receive(c, p.dqpn, &p);
    } else if (p.op == OP_ACK || p.op == OP_READ_RESP_FIRST ||
               p.op == OP_READ_RESP_LAST || p.op == OP_READ_RESP_ONLY) {
        if (p.op != OP_ACK) {
            rc_rx_read_resp(c, p.dqpn, p.op, p.psn, p.pay, p.plen);
        } else {
            rc_rx_ack(c, p.dqpn, p.psn, p.ext[0]);
        }
    } else if (p.op == OP_READ_RESP_MIDDLE) {
        rc_rx_read_resp(c, p.dqpn, p.op, p.psn, p.pay, p.plen);
    } else {
        rc_request(c, p.dqpn, &p);
    }
}

/* ERR: flush every outstanding WQE with WR_FLUSH_ERR, in order. */
static void qp_flush(HpuCore *c, uint32_t qpn)
{
    HpuRoce *r = R(c);
    HpuRoceQp *qp = r->qp[qpn];
    uint32_t pi, n = 1u << qp->img[HPU_ROCE_QP_SQ_LOG_ENTRIES];
    uint8_t *b = r->pkt;
    HpuFault f = { 0 };

    /* a budget of CQEs per run: what is left goes on at the next run */
    qp->flush = true;
    while (qp->sq_ci != qp->sq_next) {
        HpuRoceSwqe *w = qp_win(qp, qp->sq_ci);
        RoceCqe e = { .wr_id = w->wr_id, .op = wc_op_of(w->op),
                      .status = qp->fail_set && qp->fail_idx == qp->sq_ci ?
                      qp->fail_st : HPU_ROCE_WC_WR_FLUSH_ERR };

        if (!roce_budget_left(r)) {
            return;
        }
        roce_budget_use(r, 1, 0);
        sq_cqe_mark(qp, &e);
        if (cq_post(c, qp->scq, qpn, &e)) {
            qp->flush = false;
            return;
        }
        qp->sq_ci++;
    }
    qp->flush = false;
    if (qp_read_pi(c, qpn, true, &pi) || pi - qp->sq_ci > n) {
        return;
    }
    qp->flush = true;
    while (qp->sq_ci != pi) {
        RoceCqe e = { .status = qp->fail_set && qp->fail_idx == qp->sq_ci ?
                      qp->fail_st : HPU_ROCE_WC_WR_FLUSH_ERR };

        if (!roce_budget_left(r)) {
            qp->sq_next = qp->cur = qp->sq_ci;
            return;
        }
        roce_budget_use(r, 1, 0);
        if (roce_xfer(c, qp->asid, qp_ring_at(qp, true, qp->sq_ci), b, 16,
                      false, &f)) {
            qp->flush = false;
            return;
        }
        e.wr_id = hpum_le64(b + HPU_ROCE_WQE_WR_ID);
        e.op = wc_op_of(b[HPU_ROCE_WQE_OPCODE]);
        sq_cqe_mark(qp, &e);
        if (cq_post(c, qp->scq, qpn, &e)) {
            qp->flush = false;
            return;
        }
        qp->sq_ci++;
    }
    qp->sq_next = qp->cur = qp->sq_ci;
    qp->fail_set = false;
    if (qp->have_rwqe) {
        /* the receive WQE a message was filling: taken, so flushed */
        RoceCqe e = { .wr_id = qp->rwqe.wr_id, .op = HPU_ROCE_WC_RECV,
                      .status = HPU_ROCE_WC_WR_FLUSH_ERR };

        roce_budget_use(r, 1, 0);
        if (cq_post(c, qp->rcq, qpn, &e)) {
            qp->flush = false;
            return;
        }
        qp->have_rwqe = false;
    }
    qp->flush = false;
    if (qp->srq) {
        return;
    }
    n = 1u << qp->img[HPU_ROCE_QP_RQ_LOG_ENTRIES];
    if (qp_read_pi(c, qpn, false, &pi) || pi - qp->rq_ci > n) {
        return;
    }
    qp->flush = true;
    while (qp->rq_ci != pi) {
        RoceCqe e = { .op = HPU_ROCE_WC_RECV,
                      .status = HPU_ROCE_WC_WR_FLUSH_ERR };

        if (!roce_budget_left(r)) {
            return;
        }
        roce_budget_use(r, 1, 0);
        if (roce_xfer(c, qp->asid, qp_ring_at(qp, false, qp->rq_ci), b, 8,
                      false, &f)) {
            qp->flush = false;
            return;
        }
        e.wr_id = hpum_le64(b);
        if (cq_post(c, qp->rcq, qpn, &e)) {
            qp->flush = false;
            return;
        }
        qp->rq_ci++;
    }
    qp->flush = false;
}

/* A QP's timer is due: retransmission or the end of an RNR wait. */
static void qp_timer(HpuCore *c, uint32_t qpn)
{
    HpuRoceQp *qp = R(c)->qp[qpn];

    qp->deadline = 0;
    if (qp->state != HPU_ROCE_QPS_RTS) {
        return;
    }
    if (qp->rnr_wait) {
        qp->rnr_wait = false;
        qp->sq_kick = true;
        qp_arm_retry(c, qp);
        return;
    }
    if (qp->psn_una == qp->psn_next) {
        return;
    }
    port_count(c, qp->port, HPU_ROCE_CNT_ACK_TIMEOUTS, 1);
    qp->cnt[HPU_ROCE_QPC_TIMEOUTS]++;
    if (!qp->retry_left) {
        rc_fail_head(c, qpn, HPU_ROCE_WC_RETRY_EXC_ERR,
                     HPU_ROCE_CAUSE_RETRY_EXC);
        return;
    }
    qp->retry_left--;
    qp->rd_retry = false;
    rc_rewind(qp, qp->psn_una);
    qp->sq_kick = true;
    qp_arm_retry(c, qp);
}

/* CQ_ARM: a completion written and not consumed raises the event now. */
static void cq_arm_check(HpuCore *c, uint32_t cqn)
{
    HpuRoceCq *cq = &R(c)->cq[cqn];
    uint8_t b[4];
    HpuFault f = { 0 };
    int rc;

    cq->arm_check = false;
    if (cq->error || cq->arm == HPU_ROCE_CQ_ARM_NONE) {
        return;
    }
    rc = roce_xfer(c, cq->asid, cq->dbr, b, 4, false, &f);
    if (rc == 1) {
        cq_fail(c, cqn, HPU_ROCE_CAUSE_MMU_FAULT, f.va);
    }
    if (!rc && cq->pi != hpum_le32(b)) {
        cq->arm = HPU_ROCE_CQ_ARM_NONE;
        roce_event(c, HPU_ROCE_EV_CQ_COMPLETION, 0, cqn, 0, 0);
    }
}

/* The queue has room again: ports holding frames for it offer them again. */
static void roce_rx_unhold(HpuCore *c)
{
    HpuRoce *r = R(c);
    unsigned int p;

    if (!r->rx_held || r->rxq_n >= HPU_ROCE_RXQ) {
        return;
    }
    for (p = 0; p < HPU_NIC_MAX_PORTS; p++) {
        if (r->rx_held & (1u << p)) {
            c->ops->nic_rx_kick(c->opaque, p, false);
        }
    }
    r->rx_held = 0;
}

static void roce_wipe(HpuCore *c)
{
    HpuRoce *r = R(c);
    unsigned int i;

    for (i = qp_live_from(r, 0); i < HPU_ROCE_NUM_QP;
         i = qp_live_from(r, i + 1)) {
        qp_free(r->qp[i]);
        qp_set(r, i, NULL);
    }
    r->arm_any = false;
    memset(r->cq, 0, sizeof(r->cq));
    memset(r->srq, 0, sizeof(r->srq));
    memset(r->mr, 0, sizeof(*r->mr) * HPU_ROCE_NUM_MR);
    for (i = 0; i < r->rxq_n; i++) {
        HpuRoceFrame *fr = &r->rxq[(r->rxq_head + i) % HPU_ROCE_RXQ];

        frame_put(r, fr->buf, fr->len);
    }
    r->rxq_n = r->rxq_head = 0;
    roce_rx_unhold(c);
    for (i = 0; i < r->outq_n; i++) {
        frame_put(r, r->outq[i].buf, r->outq[i].len);
    }
    r->outq_n = 0;
    r->cmd_pending = false;
    r->wipe = false;
}

static void roce_arm_timer(HpuCore *c)
{
    HpuRoce *r = R(c);
    uint64_t min = 0, now = hpum_now(c);
    unsigned int i;

    for (i = qp_live_from(r, 0); i < HPU_ROCE_NUM_QP;
         i = qp_live_from(r, i + 1)) {
        if (r->qp[i]->deadline && (!min || r->qp[i]->deadline < min)) {
            min = r->qp[i]->deadline;
        }
    }
    if (!min) {
        hpum_timer_cancel(c, HPU_TMR_ROCE);
    } else {
        hpum_timer_arm(c, HPU_TMR_ROCE, min > now ? min - now : 0);
    }
}

static bool roce_step_locked(HpuCore *c)
{
    HpuRoce *r = R(c);
    uint64_t now = hpum_now(c);
    unsigned int i, k, n;
    uint32_t gen = r->gen;
    bool starved = false;

    /*
     * Bounded work per run (the run is a bottom half under the BQL): the
     * frames queued when it starts, then the QPs, round robin, while the
     * budget lasts; a command latched meanwhile runs between two units.
     */
    r->run_pkts = HPU_ROCE_RUN_PKTS;
    r->run_bytes = HPU_ROCE_RUN_BYTES;
    roce_cmd_poll(c, gen);
    for (n = 0; n < HPU_ROCE_RXQ && r->rxq_n && r->gen == gen; n++) {
        HpuRoceFrame fr = r->rxq[r->rxq_head];

        r->rxq_head = (r->rxq_head + 1) % HPU_ROCE_RXQ;
        r->rxq_n--;
        if (r->ctrl & HPU_ROCE_CTRL_ENABLE) {
            roce_rx_frame(c, fr.port, fr.buf, fr.len);
        }
        frame_put(r, fr.buf, fr.len);
        roce_cmd_poll(c, gen);
    }
    roce_rx_unhold(c);
    if (r->arm_any) {
        r->arm_any = false;
        for (i = 0; i < HPU_ROCE_NUM_CQ && r->gen == gen; i++) {
            if (r->cq[i].arm_check) {
                cq_arm_check(c, i);
            }
        }
    }
    /* The QPs that exist, round robin from qp_next (qp_live skips the rest) */
    for (k = 0; k < HPU_ROCE_NUM_QP && r->gen == gen; k++) {
        HpuRoceQp *qp;
        unsigned int live;

        i = (r->qp_next + k) % HPU_ROCE_NUM_QP;
        live = qp_live_from(r, i);
        if (live != i) {
            k += HPU_MIN(live, HPU_ROCE_NUM_QP) - i - 1;
            continue;
        }
        roce_cmd_poll(c, gen);
        qp = r->qp[i];
        if (!qp) {
            continue;
        }
        if (qp->deadline && qp->deadline <= now) {
            qp_timer(c, i);
        }
        if (r->qp[i] != qp) {
            continue;
        }
        if (qp->state != HPU_ROCE_QPS_RTS) {
            qp->sq_kick = false;        /* RTS sets it again */
        }
        if (!roce_budget_left(r)) {
            if (!starved) {
                starved = true;
                r->qp_next = i;         /* the next run starts here */
            }
            continue;
        }
        if (qp->rd_n && (qp->state == HPU_ROCE_QPS_RTR ||
                         qp->state == HPU_ROCE_QPS_RTS)) {
            resp_read_run(c, i);
            if (r->gen != gen) {
                break;
            }
        }
        if (qp->state == HPU_ROCE_QPS_ERR && qp->flush) {
            qp_flush(c, i);
        } else if (qp->sq_kick && qp->state == HPU_ROCE_QPS_RTS) {
            qp->sq_kick = false;
            rc_requester(c, i);
            if (r->gen == gen && r->qp[i] == qp &&
                qp->state == HPU_ROCE_QPS_RTS && !qp->rnr_wait &&
                (!roce_budget_left(r) || (qp->cur != qp->sq_next &&
                psn_diff(psn_add(qp_win(qp, qp->cur)->first_psn,
                                 qp->cur_pkt), qp->psn_una) <
                HPU_ROCE_MAX_INFLIGHT))) {
                qp->sq_kick = true;     /* budget used up: go on later */
            }
        }
    }
    if (r->gen != gen || r->wipe) {
        roce_wipe(c);
        return false;
    }
    roce_arm_timer(c);
    if (r->rxq_n || r->cmd_pending || starved) {
        return true;
    }
    for (i = qp_live_from(r, 0); i < HPU_ROCE_NUM_QP;
         i = qp_live_from(r, i + 1)) {
        HpuRoceQp *qp = r->qp[i];

        if ((qp->sq_kick && qp->state == HPU_ROCE_QPS_RTS &&
             !qp->rnr_wait) ||
            (qp->flush && qp->state == HPU_ROCE_QPS_ERR) ||
            (qp->rd_n && (qp->state == HPU_ROCE_QPS_RTR ||
                          qp->state == HPU_ROCE_QPS_RTS))) {
            return true;
        }
    }
    return r->arm_any;
}

bool hpum_core_roce_step(HpuCore *c)
{
    HpuRoce *r = R(c);
    HpuRoceFrame *out;
    unsigned int n, cap, i;
    bool more;

    if (!r) {
        return false;
    }
    hpum_lock(c);
    if (r->busy || c->dead) {
        hpum_unlock(c);
        return false;
    }
    r->busy = true;
    if (r->wipe) {
        roce_wipe(c);
    }
    more = roce_step_locked(c);
    if (r->wipe) {
        roce_wipe(c);
    }
    r->busy = false;
    out = r->outq;
    n = r->outq_n;
    cap = r->outq_cap;
    r->outq = NULL;
    r->outq_n = r->outq_cap = 0;
    if (r->cmd_pending) {
        more = true;
    }
    hpum_unlock(c);
    hpum_events_drain(c);
    for (i = 0; i < n; i++) {
        c->ops->nic_send(c->opaque, out[i].port, out[i].buf, out[i].len);
    }
    if (out) {
        hpum_lock(c);
        outq_done(r, out, n, cap);
        hpum_unlock(c);
    }
    return more;
}

/* Registers */

static void roce_kick(HpuCore *c)
{
    c->ops->roce_kick(c->opaque);
}

static void roce_destroy_all(HpuCore *c)
{
    HpuRoce *r = R(c);

    r->gen++;
    r->wipe = true;
    if (!r->busy) {
        roce_wipe(c);
    }
    r->cmd_status &= ~HPU_ROCE_CMD_BUSY;
    hpum_timer_cancel(c, HPU_TMR_ROCE);
}

static void roce_eq_enable(HpuCore *c, uint32_t val)
{
    HpuRoce *r = R(c);

    if ((val & HPU_ROCE_EQ_ENABLE) && !(r->eq_ctrl & HPU_ROCE_EQ_ENABLE)) {
        if (!r->eq_base || !aligned(r->eq_base, HPU_ROCE_EQE_SIZE) ||
            !hpum_is_pow2_in(r->eq_size, HPU_ROCE_EQ_SIZE_MIN,
                             HPU_ROCE_EQ_SIZE_MAX)) {
            HPU_LOG(c, "ROCE: event ring enabled with a bad address or size");
            r->eq_ctrl = val & HPU_ROCE_EQ_IRQ;
            return;
        }
        roce_eq_restart(r);
    }
    r->eq_ctrl = val & (HPU_ROCE_EQ_ENABLE | HPU_ROCE_EQ_IRQ);
}

static HpuAccess roce_read(HpuCore *c, uint32_t offset, uint32_t *val)
{
    HpuRoce *r = R(c);
    uint32_t reg = offset - HPU_ROCE_BASE;

    if (!c->cfg.nic_ports) {
        return HPU_ACCESS_UNMAPPED;
    }
    switch (reg) {
    case HPU_ROCE_MAX_QP:
        *val = HPU_ROCE_NUM_QP;
        break;
    case HPU_ROCE_MAX_CQ:
        *val = HPU_ROCE_NUM_CQ;
        break;
    case HPU_ROCE_MAX_SRQ:
        *val = HPU_ROCE_NUM_SRQ;
        break;
    case HPU_ROCE_MAX_MR:
        *val = HPU_ROCE_NUM_MR;
        break;
    case HPU_ROCE_MAX_WR:
        *val = HPU_ROCE_NUM_WR;
        break;
    case HPU_ROCE_MAX_CQE:
        *val = HPU_ROCE_NUM_CQE;
        break;
    case HPU_ROCE_MAX_SGE:
        *val = HPU_ROCE_NUM_SGE;
        break;
    case HPU_ROCE_CTRL:
        *val = r->ctrl;
        break;
    case HPU_ROCE_CMD:
        *val = r->cmd;
        break;
    case HPU_ROCE_CMD_INDEX:
        *val = r->cmd_index;
        break;
    case HPU_ROCE_CMD_STATUS:
        *val = r->cmd_status | (roce_cmd_busy(r) ? HPU_ROCE_CMD_BUSY : 0);
        break;
    case HPU_ROCE_CMD_DONE:
        *val = r->cmd_done;
        break;
    case HPU_ROCE_EQ_LO:
        *val = (uint32_t)r->eq_base;
        break;
    case HPU_ROCE_EQ_HI:
        *val = (uint32_t)(r->eq_base >> 32);
        break;
    case HPU_ROCE_EQ_SIZE:
        *val = r->eq_size;
        break;
    case HPU_ROCE_EQ_PI:
        *val = r->eq_pi;
        break;
    case HPU_ROCE_EQ_CI:
        *val = r->eq_ci;
        break;
    case HPU_ROCE_EQ_CTRL:
        *val = r->eq_ctrl | (r->eq_xfers ? HPU_ROCE_EQ_BUSY : 0);
        break;
    case HPU_ROCE_EQ_DROPPED:
        *val = r->eq_dropped;
        break;
    case HPU_ROCE_DB_REFUSED_LO:
        *val = (uint32_t)r->db_refused;
        r->db_refused_hi = (uint32_t)(r->db_refused >> 32);
        break;
    case HPU_ROCE_DB_REFUSED_HI:
        *val = r->db_refused_hi;
        break;
    default:
        if (reg >= HPU_ROCE_CMD_DATA(0) && reg < HPU_ROCE_CMD_DATA(64)) {
            *val = hpum_le32(r->data + (reg - HPU_ROCE_CMD_DATA(0)));
        } else {
            HPU_LOG(c, "ROCE: read of reserved offset 0x%x", reg);
            *val = 0;
        }
    }
    return HPU_ACCESS_OK;
}

static HpuAccess roce_write(HpuCore *c, uint32_t offset, uint32_t val)
{
    HpuRoce *r = R(c);
    uint32_t reg = offset - HPU_ROCE_BASE;
    bool busy = roce_cmd_busy(r);
    bool eq_on = r->eq_ctrl & HPU_ROCE_EQ_ENABLE;

    if (!c->cfg.nic_ports) {
        return HPU_ACCESS_UNMAPPED;
    }
    if (busy && (reg == HPU_ROCE_CMD || reg == HPU_ROCE_CMD_INDEX ||
                 (reg >= HPU_ROCE_CMD_DATA(0) &&
                  reg < HPU_ROCE_CMD_DATA(64)))) {
        HPU_LOG(c, "ROCE: command register written while BUSY: dropped");
        return HPU_ACCESS_OK;
    }
    if (eq_on && (reg == HPU_ROCE_EQ_LO || reg == HPU_ROCE_EQ_HI ||
                  reg == HPU_ROCE_EQ_SIZE)) {
        HPU_LOG(c, "ROCE: event ring register written while enabled");
        return HPU_ACCESS_OK;
    }
    switch (reg) {
    case HPU_ROCE_CTRL:
        if (r->ctrl && !(val & HPU_ROCE_CTRL_ENABLE)) {
            roce_destroy_all(c);
        }
        r->ctrl = val & HPU_ROCE_CTRL_ENABLE;
        break;
    case HPU_ROCE_CMD:
        r->cmd = val;
        r->cmd_status = HPU_ROCE_CMD_BUSY;
        if (c->inj.roce_cmd) {
            /* INJ_ROCE_CMD: never run, BUSY until the engine is reset or disabled */
            break;
        }
        r->cmd_pending = true;
        roce_kick(c);
        break;
    case HPU_ROCE_CMD_INDEX:
        r->cmd_index = val;
        break;
    case HPU_ROCE_EQ_LO:
        r->eq_base = (r->eq_base & ~0xffffffffull) | val;
        break;
    case HPU_ROCE_EQ_HI:
        r->eq_base = (r->eq_base & 0xffffffffull) | (uint64_t)val << 32;
        break;
    case HPU_ROCE_EQ_SIZE:
        r->eq_size = val;
        break;
    case HPU_ROCE_EQ_CI:
        if (val - r->eq_ci > r->eq_pi - r->eq_ci) {
            HPU_LOG(c, "ROCE: EQ_CI 0x%x beyond EQ_PI 0x%x", val, r->eq_pi);
        } else {
            r->eq_ci = val;
        }
        break;
    case HPU_ROCE_EQ_CTRL:
        roce_eq_enable(c, val);
        break;
    default:
        if (reg >= HPU_ROCE_CMD_DATA(0) && reg < HPU_ROCE_CMD_DATA(64)) {
            hpum_put_le32(r->data + (reg - HPU_ROCE_CMD_DATA(0)), val);
        } else if (reg < HPU_ROCE_CMD_DATA(64) &&
                   (reg <= HPU_ROCE_MAX_SGE || reg == HPU_ROCE_CMD_STATUS ||
                    reg == HPU_ROCE_CMD_DONE || reg == HPU_ROCE_EQ_PI ||
                    reg == HPU_ROCE_EQ_DROPPED ||
                    reg == HPU_ROCE_DB_REFUSED_LO ||
                    reg == HPU_ROCE_DB_REFUSED_HI)) {
            return HPU_ACCESS_READ_ONLY;
        } else {
            HPU_LOG(c, "ROCE: write of reserved offset 0x%x", reg);
        }
    }
    return HPU_ACCESS_OK;
}

const HpuBlock hpum_roce_block = {
    "ROCE", HPU_ROCE_BASE, HPU_ROCE_SIZE, roce_read, roce_write,
};

/* Doorbell pages */

static void db_refuse(HpuCore *c, uint32_t page, uint32_t reg, uint32_t val)
{
    R(c)->db_refused++;
    HPU_TRACE(c, HPU_TRACE_ROCE_DOORBELL, page, reg, val, 1);
    HPU_LOG(c, "ROCE: doorbell 0x%x = 0x%x of page %u refused", reg, val,
            page);
}

static HpuAccess roce_db_read(HpuCore *c, uint32_t offset, uint32_t *val)
{
    (void)offset;
    *val = 0;
    return c->cfg.nic_ports ? HPU_ACCESS_OK : HPU_ACCESS_UNMAPPED;
}

static HpuAccess roce_db_write(HpuCore *c, uint32_t offset, uint32_t val)
{
    HpuRoce *r = R(c);
    uint32_t page = (offset - HPU_ROCE_DB_BASE) / HPU_ROCE_DB_PAGE_SIZE;
    uint32_t reg = (offset - HPU_ROCE_DB_BASE) % HPU_ROCE_DB_PAGE_SIZE;
    uint32_t n = val & HPU_ROCE_DB_NUM_MASK;

    if (!c->cfg.nic_ports) {
        return HPU_ACCESS_UNMAPPED;
    }
    if (reg == HPU_ROCE_DB_SQ_DB) {
        HpuRoceQp *qp = n < HPU_ROCE_NUM_QP ? r->qp[n] : NULL;

        if (!(r->ctrl & HPU_ROCE_CTRL_ENABLE) || (val >> 24) || !qp ||
            qp->dbp != page) {
            db_refuse(c, page, reg, val);
            return HPU_ACCESS_OK;
        }
        HPU_TRACE(c, HPU_TRACE_ROCE_DOORBELL, page, reg, val, 0);
        qp->sq_kick = true;
        if (qp->state == HPU_ROCE_QPS_ERR) {
            qp->flush = true;
        }
        roce_kick(c);
    } else if (reg == HPU_ROCE_DB_CQ_ARM) {
        HpuRoceCq *cq = n < HPU_ROCE_NUM_CQ ? &r->cq[n] : NULL;

        if (!(r->ctrl & HPU_ROCE_CTRL_ENABLE) || (val & 0x7f000000u) ||
            !cq || !cq->used || cq->dbp != page) {
            db_refuse(c, page, reg, val);
            return HPU_ACCESS_OK;
        }
        if (cq->arm != HPU_ROCE_CQ_ARM_NEXT) {
            cq->arm = (val & HPU_ROCE_DB_ARM_SOLICITED) ?
                      HPU_ROCE_CQ_ARM_SOLICITED : HPU_ROCE_CQ_ARM_NEXT;
        }
        HPU_TRACE(c, HPU_TRACE_ROCE_DOORBELL, page, reg, val, 0);
        cq->arm_check = true;
        r->arm_any = true;
        roce_kick(c);
    } else {
        HPU_LOG(c, "ROCE: write of reserved doorbell offset 0x%x", reg);
    }
    return HPU_ACCESS_OK;
}

const HpuBlock hpum_roce_db_block = {
    "ROCE_DB", HPU_ROCE_DB_BASE,
    HPU_ROCE_DB_PAGE_SIZE * HPU_ROCE_DB_PAGES, roce_db_read, roce_db_write,
};

/* Port RoCE registers */

HpuAccess hpum_roce_port_read(HpuCore *c, unsigned int p, uint32_t reg,
                              uint32_t *val)
{
    HpuRocePort *rp = &R(c)->port[p];

    *val = 0;
    if (reg == HPU_ROCE_PORT_CTRL) {
        *val = rp->ctrl;
    } else if (reg >= HPU_ROCE_PORT_GID(0) &&
               reg < HPU_ROCE_PORT_GID(HPU_ROCE_PORT_GIDS)) {
        uint32_t i = (reg - HPU_ROCE_PORT_GID(0)) / 0x20;
        uint32_t w = (reg - HPU_ROCE_PORT_GID(0)) % 0x20;

        if (w < 0x10) {
            *val = rp->gid[i][w / 4];
        } else if (w == HPU_ROCE_PORT_GID_VALID_OFF) {
            *val = rp->gid_valid[i];
        }
    } else if (reg >= HPU_ROCE_PORT_CNT(0) &&
               reg < HPU_ROCE_PORT_CNT(HPU_ROCE_NUM_COUNTERS)) {
        uint32_t i = (reg - HPU_ROCE_PORT_CNT(0)) / 8;

        if (reg & 4) {
            *val = rp->cnt_hi[i];
        } else {
            *val = (uint32_t)rp->cnt[i];
            rp->cnt_hi[i] = (uint32_t)(rp->cnt[i] >> 32);
        }
    } else {
        HPU_LOG(c, "NIC%u: read of reserved RoCE offset 0x%x", p, reg);
    }
    return HPU_ACCESS_OK;
}

HpuAccess hpum_roce_port_write(HpuCore *c, unsigned int p, uint32_t reg,
                               uint32_t val)
{
    HpuRocePort *rp = &R(c)->port[p];

    if (reg == HPU_ROCE_PORT_CTRL) {
        uint32_t old = rp->ctrl;
        bool up = c->nic[p].up;

        rp->ctrl = val & HPU_ROCE_PORT_ENABLE;
        if (old != rp->ctrl && up) {
            roce_event(c, rp->ctrl ? HPU_ROCE_EV_PORT_ACTIVE :
                       HPU_ROCE_EV_PORT_DOWN, (uint16_t)p, p, 0, 0);
        }
    } else if (reg >= HPU_ROCE_PORT_GID(0) &&
               reg < HPU_ROCE_PORT_GID(HPU_ROCE_PORT_GIDS)) {
        uint32_t i = (reg - HPU_ROCE_PORT_GID(0)) / 0x20;
        uint32_t w = (reg - HPU_ROCE_PORT_GID(0)) % 0x20;

        if (w < 0x10) {
            rp->gid[i][w / 4] = val;
        } else if (w == HPU_ROCE_PORT_GID_VALID_OFF) {
            rp->gid_valid[i] = val & HPU_ROCE_PORT_GID_VALID;
        }
    } else if (reg >= HPU_ROCE_PORT_CNT(0) &&
               reg < HPU_ROCE_PORT_CNT(HPU_ROCE_NUM_COUNTERS)) {
        return HPU_ACCESS_READ_ONLY;
    } else {
        HPU_LOG(c, "NIC%u: write of reserved RoCE offset 0x%x", p, reg);
    }
    return HPU_ACCESS_OK;
}

void hpum_roce_link(HpuCore *c, unsigned int p, bool up)
{
    if (R(c) && (R(c)->port[p].ctrl & HPU_ROCE_PORT_ENABLE)) {
        roce_event(c, up ? HPU_ROCE_EV_PORT_ACTIVE : HPU_ROCE_EV_PORT_DOWN,
                   (uint16_t)p, p, 0, 0);
    }
}

int hpum_roce_rx_steer(HpuCore *c, unsigned int p, const uint8_t *buf,
                       size_t len)
{
    HpuRoce *r = R(c);
    uint8_t mac[6];
    const uint8_t *ip = buf + 14, *udp;
    uint8_t *copy;

    /* The shortest: Ethernet, IPv4 without options, UDP (IPv6 below). */
    if (!r || !(r->port[p].ctrl & HPU_ROCE_PORT_ENABLE) || len < 14 + 20 + 8) {
        return HPU_ROCE_RX_NOT_ROCE;
    }
    hpum_nic_cur_mac(c, p, mac);
    if (memcmp(buf, mac, 6)) {
        return HPU_ROCE_RX_NOT_ROCE;
    }
    if (be16(buf + 12) == 0x0800) {
        if (ip[0] != 0x45 || ip[9] != 17 || (be16(ip + 6) & 0x3fff)) {
            return HPU_ROCE_RX_NOT_ROCE;
        }
        udp = ip + 20;
    } else if (be16(buf + 12) == 0x86dd) {
        if ((ip[0] >> 4) != 6 || ip[6] != 17 || len < 14 + 20 + 8) {
            return HPU_ROCE_RX_NOT_ROCE;
        }
        udp = ip + 40;
    } else {
        return HPU_ROCE_RX_NOT_ROCE;
    }
    if (be16(udp + 2) != HPU_ROCE_UDP_PORT) {
        return HPU_ROCE_RX_NOT_ROCE;
    }
    if ((r->ctrl & HPU_ROCE_CTRL_ENABLE) && r->rxq_n >= HPU_ROCE_RXQ) {
        r->rx_held |= 1u << p;          /* back-pressure, as a pause frame */
        return HPU_ROCE_RX_HOLD;
    }
    copy = (r->ctrl & HPU_ROCE_CTRL_ENABLE) ? frame_get(r, len) : NULL;
    if (!copy) {
        port_count(c, p, HPU_ROCE_CNT_RX_DROPPED, 1);
        return HPU_ROCE_RX_TAKEN;
    }
    memcpy(copy, buf, len);
    r->rxq[(r->rxq_head + r->rxq_n) % HPU_ROCE_RXQ] =
        (HpuRoceFrame){ .port = p, .len = (uint32_t)len, .buf = copy };
    r->rxq_n++;
    roce_kick(c);
    return HPU_ROCE_RX_TAKEN;
}

void hpum_roce_timer(HpuCore *c)
{
    if (R(c)) {
        roce_kick(c);
    }
}

bool hpum_roce_quiet(HpuCore *c)
{
    /* An event write under way (any thread) ends before a reset completes. */
    return !R(c) || (!R(c)->busy && !R(c)->eq_xfers);
}

void hpum_roce_reset(HpuCore *c)
{
    HpuRoce *r = R(c);

    if (!r) {
        return;
    }
    roce_destroy_all(c);
    r->ctrl = 0;
    r->cmd = r->cmd_index = r->cmd_status = r->cmd_done = 0;
    memset(r->data, 0, sizeof(r->data));
    r->eq_base = 0;
    r->eq_size = r->eq_ctrl = 0;
    roce_eq_restart(r);
    r->eq_dropped = 0;          /* the events restart dropped: reset value */
    r->db_refused = 0;
    r->db_refused_hi = 0;
    memset(r->port, 0, sizeof(r->port));
}

bool hpum_roce_init(HpuCore *c)
{
    HpuRoce *r = calloc(1, sizeof(*r));

    if (!r) {
        return false;
    }
    r->mr = calloc(HPU_ROCE_NUM_MR, sizeof(*r->mr));
    r->pkt = calloc(1, HPU_ROCE_FRAME_MAX + 64);
    r->bounce = calloc(1, HPU_ROCE_FRAME_MAX + 64);
    c->roce = r;
    if (!r->mr || !r->pkt || !r->bounce) {
        hpum_roce_fini(c);
        return false;
    }
    return true;
}

void hpum_roce_fini(HpuCore *c)
{
    HpuRoce *r = R(c);

    if (!r) {
        return;
    }
    if (r->mr) {
        roce_wipe(c);
    }
    free(r->outq);
    while (r->pool_n) {
        free(r->pool[--r->pool_n]);
    }
    free(r->mr);
    free(r->pkt);
    free(r->bounce);
    free(r);
    c->roce = NULL;
}
