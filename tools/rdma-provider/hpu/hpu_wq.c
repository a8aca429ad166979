// SPDX-License-Identifier: MIT
/*
 * hpu verbs provider: the ring layer (hpu_wq.h). Formats: roce.md "Work
 * queue entries" and "Completion queue entries"; ordering rules:
 * Documentation/rdma.md "Memory ordering".
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifdef HPU_WQ_HOST_TEST
/* The unit tests see every barrier (tests/unit/rdma/test_wq.cpp). */
void hpu_wq_test_barrier(int to_device);
#define udma_to_device_barrier() hpu_wq_test_barrier(1)
#define udma_from_device_barrier() hpu_wq_test_barrier(0)
#define mmio_flush_writes() hpu_wq_test_barrier(2)
#else
#include <config.h>
#include <util/udma_barrier.h>
#endif

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "hpu_wq.h"

/*
 * Words shared with another thread (tail, head: the poller and the poster)
 * or with the device (doorbell records, CQE owner bytes) go through these:
 * never cached in a register, never torn.
 */
_Static_assert(sizeof(struct hpu_ib_send_wqe) == HPU_WQ_SEND_HDR, "send WQE header");
_Static_assert(sizeof(struct hpu_ib_ud_av) == HPU_WQ_UD_AV, "UD address vector");
_Static_assert(sizeof(struct hpu_ib_recv_wqe) == HPU_WQ_RECV_HDR, "receive WQE header");
_Static_assert(sizeof(struct hpu_ib_sge) == HPU_WQ_SGE, "SGE");
_Static_assert(sizeof(struct hpu_ib_cqe) == HPU_IB_CQE_SIZE, "CQE");

/*
 * Before a producer index store, after which the device reads the WQEs up
 * to it and the memory they name: the WQE bytes (udma_to_device_barrier()),
 * and the caller's stores through a write-combining mapping, such as HBM
 * mapped with hpu_buffer_map() and named by an SGE (mmio_flush_writes():
 * an sfence on x86-64, where udma_to_device_barrier() is only a compiler
 * barrier and write-combined stores may still sit in the CPU's buffers).
 */
#define PUBLISH_BARRIER()			\
	do {					\
		udma_to_device_barrier();	\
		mmio_flush_writes();		\
	} while (0)

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

static uint32_t ilog2_ceil(uint32_t v)
{
	uint32_t l = 0;

	while ((1ULL << l) < v)
		l++;
	return l;
}

uint32_t hpu_wq_log2_entries(uint32_t wr)
{
	return wr < 2 ? 1 : ilog2_ceil(wr);
}

static uint32_t sq_hdr(bool ud)
{
	return HPU_WQ_SEND_HDR + (ud ? HPU_WQ_UD_AV : 0);
}

uint32_t hpu_sq_stride_max_sge(uint32_t log_stride, bool ud)
{
	uint32_t n = ((1U << log_stride) - sq_hdr(ud)) / HPU_WQ_SGE;

	return n < HPU_WQ_MAX_SGE ? n : HPU_WQ_MAX_SGE;
}

uint32_t hpu_sq_stride_max_inline(uint32_t log_stride, bool ud)
{
	return (1U << log_stride) - sq_hdr(ud);
}

uint32_t hpu_rq_stride_max_sge(uint32_t log_stride)
{
	uint32_t n = ((1U << log_stride) - HPU_WQ_RECV_HDR) / HPU_WQ_SGE;

	return n < HPU_WQ_MAX_SGE ? n : HPU_WQ_MAX_SGE;
}

int hpu_sq_geometry(uint32_t max_sge, uint32_t max_inline, bool ud,
		    uint32_t *log_stride)
{
	uint32_t body = max_sge * HPU_WQ_SGE;
	uint32_t l;

	if (max_sge > HPU_WQ_MAX_SGE || max_inline > (1U << HPU_IB_SQ_LOG_STRIDE_MAX))
		return EINVAL;
	if (max_inline > body)
		body = max_inline;
	l = ilog2_ceil(sq_hdr(ud) + body);
	if (l < HPU_IB_SQ_LOG_STRIDE_MIN)
		l = HPU_IB_SQ_LOG_STRIDE_MIN;
	if (l > HPU_IB_SQ_LOG_STRIDE_MAX)
		return EINVAL;
	*log_stride = l;
	return 0;
}

int hpu_rq_geometry(uint32_t max_sge, bool srq, uint32_t *log_stride)
{
	uint32_t max = srq ? HPU_IB_SRQ_LOG_STRIDE_MAX : HPU_IB_RQ_LOG_STRIDE_MAX;
	uint32_t l;

	if (max_sge > HPU_WQ_MAX_SGE)
		return EINVAL;
	l = ilog2_ceil(HPU_WQ_RECV_HDR + max_sge * HPU_WQ_SGE);
	if (l < HPU_IB_RQ_LOG_STRIDE_MIN)
		l = HPU_IB_RQ_LOG_STRIDE_MIN;
	if (l > max)
		return EINVAL;
	*log_stride = l;
	return 0;
}

void hpu_sq_init(struct hpu_wq *sq, void *buf, uint32_t log_entries,
		 uint32_t log_stride, bool ud, uint32_t *db_pi,
		 uint8_t *signaled)
{
	memset(sq, 0, sizeof(*sq));
	sq->buf = buf;
	sq->entries = 1U << log_entries;
	sq->log_stride = log_stride;
	sq->hdr = sq_hdr(ud);
	sq->max_sge = hpu_sq_stride_max_sge(log_stride, ud);
	sq->max_inline = hpu_sq_stride_max_inline(log_stride, ud);
	sq->db_pi = db_pi;
	sq->signaled = signaled;
}

void hpu_rq_init(struct hpu_wq *rq, void *buf, uint32_t log_entries,
		 uint32_t log_stride, uint32_t *db_pi, const uint32_t *db_ci)
{
	memset(rq, 0, sizeof(*rq));
	rq->buf = buf;
	rq->entries = 1U << log_entries;
	rq->log_stride = log_stride;
	rq->hdr = HPU_WQ_RECV_HDR;
	rq->max_sge = hpu_rq_stride_max_sge(log_stride);
	rq->db_pi = db_pi;
	rq->db_ci = db_ci;
}

/* Only while the device reads nothing of the queue (its QP in RESET). */
void hpu_wq_reset(struct hpu_wq *wq)
{
	STORE(&wq->head, 0);
	STORE(&wq->tail, 0);
	STORE(wq->db_pi, 0);
}

/* ---- Send queue ---- */

void hpu_sq_batch_start(const struct hpu_wq *sq, struct hpu_sq_batch *b)
{
	b->next = sq->head;
	b->wqe = NULL;
	b->err = 0;
}

static void batch_fail(struct hpu_sq_batch *b, int err)
{
	if (!b->err)
		b->err = err;
	b->wqe = NULL;
}

#define HPU_SQ_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			   IBV_SEND_SOLICITED | IBV_SEND_INLINE)

void hpu_sq_wqe_start(struct hpu_wq *sq, struct hpu_sq_batch *b,
		      uint8_t opcode, uint32_t send_flags, uint64_t wr_id,
		      __be32 imm)
{
	struct hpu_ib_send_wqe *wqe;
	uint8_t flags = 0;

	if (b->err)
		return;
	if (send_flags & ~HPU_SQ_SEND_FLAGS) {
		batch_fail(b, EINVAL);
		return;
	}
	if (b->next - LOAD(&sq->tail) >= sq->entries) {
		batch_fail(b, ENOMEM);
		return;
	}
	if (send_flags & IBV_SEND_SIGNALED)
		flags |= HPU_IB_WQE_F_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		flags |= HPU_IB_WQE_F_SOLICITED;
	if (send_flags & IBV_SEND_FENCE)
		flags |= HPU_IB_WQE_F_FENCE;

	wqe = hpu_wq_slot(sq, b->next);
	memset(wqe, 0, sq->hdr);
	wqe->opcode = opcode;
	wqe->flags = flags;
	wqe->imm = imm;
	wqe->wr_id = htole64(wr_id);
	STORE(&sq->signaled[b->next & (sq->entries - 1)],
	      (uint8_t)!!(flags & HPU_IB_WQE_F_SIGNALED));
	b->wqe = wqe;
	b->next++;
}

void hpu_sq_wqe_rdma(struct hpu_sq_batch *b, uint64_t remote_addr,
		     uint32_t rkey)
{
	if (!b->wqe)
		return;
	b->wqe->remote_addr = htole64(remote_addr);
	b->wqe->rkey_or_qkey = htole32(rkey);
}

void hpu_sq_wqe_ud(struct hpu_sq_batch *b, const struct hpu_ib_ud_av *av,
		   uint32_t remote_qpn, uint32_t remote_qkey)
{
	if (!b->wqe)
		return;
	b->wqe->rkey_or_qkey = htole32(remote_qkey);
	b->wqe->dest_qpn = htole32(remote_qpn & 0xffffff);
	memcpy((uint8_t *)b->wqe + HPU_WQ_SEND_HDR, av, sizeof(*av));
}

static void put_sge(uint8_t *at, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct hpu_ib_sge sge = {
		.addr = htole64(addr),
		.length = htole32(length),
		.lkey = htole32(lkey),
	};

	memcpy(at, &sge, sizeof(sge));
}

void hpu_sq_wqe_sge(const struct hpu_wq *sq, struct hpu_sq_batch *b,
		    uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	hpu_sq_wqe_sge_list(sq, b, 1, &sge);
}

void hpu_sq_wqe_sge_list(const struct hpu_wq *sq, struct hpu_sq_batch *b,
			 size_t num_sge, const struct ibv_sge *sg_list)
{
	uint8_t *at;
	size_t i;

	if (!b->wqe)
		return;
	if (num_sge > sq->max_sge) {
		batch_fail(b, EINVAL);
		return;
	}
	at = (uint8_t *)b->wqe + sq->hdr;
	for (i = 0; i < num_sge; i++)
		put_sge(at + i * HPU_WQ_SGE, sg_list[i].lkey, sg_list[i].addr,
			sg_list[i].length);
	b->wqe->num_sge = (uint8_t)num_sge;
	b->wqe->flags &= ~HPU_IB_WQE_F_INLINE;
	b->wqe->inline_len = 0;
}

void hpu_sq_wqe_inline(const struct hpu_wq *sq, struct hpu_sq_batch *b,
		       size_t num_buf, const struct ibv_data_buf *bufs)
{
	uint8_t *at;
	size_t i, len = 0;

	if (!b->wqe)
		return;
	if (b->wqe->opcode == HPU_IB_WQE_RDMA_READ) {
		batch_fail(b, EINVAL);
		return;
	}
	/* len <= max_inline throughout: the sum cannot wrap. */
	for (i = 0; i < num_buf; i++) {
		if (bufs[i].length > sq->max_inline - len) {
			batch_fail(b, EINVAL);
			return;
		}
		len += bufs[i].length;
	}
	at = (uint8_t *)b->wqe + sq->hdr;
	for (i = 0; i < num_buf; i++) {
		memcpy(at, bufs[i].addr, bufs[i].length);
		at += bufs[i].length;
	}
	b->wqe->num_sge = 0;
	b->wqe->flags |= HPU_IB_WQE_F_INLINE;
	b->wqe->inline_len = htole32((uint32_t)len);
}

static int wr_opcode(enum ibv_wr_opcode op, bool ud, uint8_t *opcode)
{
	switch (op) {
	case IBV_WR_SEND:
		*opcode = HPU_IB_WQE_SEND;
		return 0;
	case IBV_WR_SEND_WITH_IMM:
		*opcode = HPU_IB_WQE_SEND_IMM;
		return 0;
	case IBV_WR_RDMA_WRITE:
		*opcode = HPU_IB_WQE_RDMA_WRITE;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		*opcode = HPU_IB_WQE_RDMA_WRITE_IMM;
		break;
	case IBV_WR_RDMA_READ:
		*opcode = HPU_IB_WQE_RDMA_READ;
		break;
	default:
		return EINVAL;
	}
	return ud ? EINVAL : 0;
}

/* The inline payload of an ibv_send_wr: its SGEs' bytes, copied. */
static void wr_inline(const struct hpu_wq *sq, struct hpu_sq_batch *b,
		      const struct ibv_send_wr *wr)
{
	struct ibv_data_buf bufs[HPU_WQ_MAX_SGE];
	int i;

	if (wr->num_sge < 0 || wr->num_sge > HPU_WQ_MAX_SGE) {
		batch_fail(b, EINVAL);
		return;
	}
	for (i = 0; i < wr->num_sge; i++) {
		bufs[i].addr = (void *)(uintptr_t)wr->sg_list[i].addr;
		bufs[i].length = wr->sg_list[i].length;
	}
	hpu_sq_wqe_inline(sq, b, (size_t)wr->num_sge, bufs);
}

/*
 * One ibv_send_wr into the batch. On failure the batch keeps the WQEs
 * before it (post_send posts those and reports this one as bad_wr).
 */
int hpu_sq_post_wr(struct hpu_wq *sq, struct hpu_sq_batch *b, bool ud,
		   const struct ibv_send_wr *wr, const struct hpu_ib_ud_av *av)
{
	uint32_t next = b->next;
	uint8_t opcode;
	int err;

	if (b->err)
		return b->err;
	err = wr_opcode(wr->opcode, ud, &opcode);
	if (!err && ud && !av)
		err = EINVAL;
	if (!err && wr->num_sge < 0)
		err = EINVAL;
	if (err)
		return err;

	hpu_sq_wqe_start(sq, b, opcode, wr->send_flags, wr->wr_id,
			 wr->imm_data);
	if (ud)
		hpu_sq_wqe_ud(b, av, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey);
	else if (opcode >= HPU_IB_WQE_RDMA_WRITE)
		hpu_sq_wqe_rdma(b, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
	if ((wr->send_flags & IBV_SEND_INLINE) && opcode != HPU_IB_WQE_RDMA_READ)
		wr_inline(sq, b, wr);
	else
		hpu_sq_wqe_sge_list(sq, b, (size_t)wr->num_sge, wr->sg_list);

	err = b->err;
	if (err) {
		b->next = next;
		b->wqe = NULL;
		b->err = 0;
	}
	return err;
}

/*
 * Publish the batch's WQEs: every WQE byte, and every write-combined
 * store of the caller (PUBLISH_BARRIER), reaches memory before the
 * producer index in the doorbell record (the device reads the WQEs only
 * up to the index it reads there). The caller then rings SQ_DB, after
 * another udma_to_device_barrier(). A failed batch publishes nothing.
 */
int hpu_sq_batch_commit(struct hpu_wq *sq, struct hpu_sq_batch *b)
{
	b->wqe = NULL;
	if (b->err)
		return b->err;
	if (b->next == sq->head)
		return 0;
	/*
	 * The poller's bound first: the device may complete the WQEs as
	 * soon as it sees the index, and a completion polled before head
	 * moved would free no slot (a poller seeing head early is harmless:
	 * nothing past the index completes).
	 */
	STORE(&sq->head, b->next);
	PUBLISH_BARRIER();
	STORE(sq->db_pi, htole32(b->next));
	return 0;
}

/*
 * A send completion of this queue was polled. Completions come in queue
 * order but unsignaled WQEs that succeed write none. A CQE that names its
 * WQE's index (@wqe_idx >= 0, roce.md: every send CQE does) frees every
 * slot up to and including that WQE, whatever its status: the device may
 * have finished unsignaled WQEs before a failing one. Without an index
 * (@wqe_idx < 0, a device that predates it): a success frees up to the
 * next signaled WQE, an error or flush one slot.
 */
void hpu_sq_completed(struct hpu_wq *sq, enum ibv_wc_status status,
		      int32_t wqe_idx)
{
	uint32_t t = LOAD(&sq->tail), head = LOAD(&sq->head);

	if (wqe_idx >= 0) {
		/* Queues hold at most 2^15 WQEs: 16 bits name one. */
		uint32_t d = ((uint32_t)wqe_idx - t) & 0xffff;

		if (d < head - t)
			STORE(&sq->tail, t + d + 1);
		return;
	}
	if (status != IBV_WC_SUCCESS) {
		if (t != head)
			STORE(&sq->tail, t + 1);
		return;
	}
	while (t != head) {
		uint8_t sig = LOAD(&sq->signaled[t & (sq->entries - 1)]);

		t++;
		if (sig)
			break;
	}
	STORE(&sq->tail, t);
}

/* ---- Receive queues ---- */

static uint32_t rq_tail(const struct hpu_wq *rq)
{
	/* An SRQ slot is free once the device took it (its consumer index). */
	if (rq->db_ci)
		return le32toh(LOAD(rq->db_ci));
	return LOAD(&rq->tail);
}

int hpu_rq_post(struct hpu_wq *rq, uint32_t *next, const struct ibv_recv_wr *wr)
{
	struct hpu_ib_recv_wqe hdr = { .wr_id = htole64(wr->wr_id) };
	uint8_t *wqe;
	int i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge)
		return EINVAL;
	if (*next - rq_tail(rq) >= rq->entries)
		return ENOMEM;
	wqe = hpu_wq_slot(rq, *next);
	hdr.num_sge = (uint8_t)wr->num_sge;
	memcpy(wqe, &hdr, sizeof(hdr));
	for (i = 0; i < wr->num_sge; i++)
		put_sge(wqe + HPU_WQ_RECV_HDR + i * HPU_WQ_SGE,
			wr->sg_list[i].lkey, wr->sg_list[i].addr,
			wr->sg_list[i].length);
	(*next)++;
	return 0;
}

/*
 * The receive queue has no doorbell register: the device reads the
 * producer index from the doorbell record whenever it needs a WQE, so the
 * record is the doorbell and the WQEs (and the caller's write-combined
 * stores, PUBLISH_BARRIER) must be in memory before it moves.
 */
void hpu_rq_publish(struct hpu_wq *rq, uint32_t next)
{
	if (next == rq->head)
		return;
	STORE(&rq->head, next);	/* before the index: see hpu_sq_batch_commit() */
	PUBLISH_BARRIER();
	STORE(rq->db_pi, htole32(next));
}

/* A receive completion of this RQ (not an SRQ) was polled. */
void hpu_rq_completed(struct hpu_wq *rq)
{
	uint32_t t = LOAD(&rq->tail);

	if (t != LOAD(&rq->head))
		STORE(&rq->tail, t + 1);
}

/* ---- Completion queue ---- */

void hpu_cq_init(struct hpu_cq_ring *cq, void *buf, uint32_t log_entries,
		 uint32_t *db_ci)
{
	memset(cq, 0, sizeof(*cq));
	cq->buf = buf;
	cq->log_entries = log_entries;
	cq->entries = 1U << log_entries;
	cq->db_ci = db_ci;
	cq->wqe_idx = -1;
}

/* The device writes the inverse of the pass bit (idx / entries) & 1. */
static bool cqe_ready_at(const struct hpu_cq_ring *cq, uint32_t idx)
{
	const struct hpu_ib_cqe *cqe = &cq->buf[idx & (cq->entries - 1)];
	uint8_t owner = LOAD(&cqe->owner) & HPU_IB_CQE_OWNER;

	return owner != ((idx >> cq->log_entries) & 1);
}

bool hpu_cq_pending(const struct hpu_cq_ring *cq)
{
	return cqe_ready_at(cq, cq->ci);
}

static void cqe_to_wc(const struct hpu_ib_cqe *cqe, struct ibv_wc *wc)
{
	uint32_t qo = le32toh(cqe->qpn_opcode);

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = le64toh(cqe->wr_id);
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)(qo >> 24);
	wc->qp_num = qo & 0xffffff;
	wc->byte_len = le32toh(cqe->byte_len);
	wc->src_qp = le32toh(cqe->src_qp) & 0xffffff;
	if (cqe->flags & HPU_IB_CQE_F_IMM) {
		wc->wc_flags |= IBV_WC_WITH_IMM;
		wc->imm_data = cqe->imm;
	}
	if (cqe->flags & HPU_IB_CQE_F_GRH)
		wc->wc_flags |= IBV_WC_GRH;
}

static uint32_t cqe_qpn(const struct hpu_ib_cqe *cqe)
{
	return le32toh(cqe->qpn_opcode) & 0xffffff;
}

/*
 * The next completion into *wc, if the device wrote one. The consumer
 * index moves in memory only (hpu_cq_publish tells the device).
 */
bool hpu_cq_next(struct hpu_cq_ring *cq, struct ibv_wc *wc)
{
	const struct hpu_ib_cqe *cqe = &cq->buf[cq->ci & (cq->entries - 1)];

	if (!cqe_ready_at(cq, cq->ci))
		return false;
	/* The rest of the entry is read after its owner bit. */
	udma_from_device_barrier();
	cqe_to_wc(cqe, wc);
	cq->wqe_idx = (cqe->flags & HPU_IB_CQE_F_WQE_IDX) ?
		      (int32_t)le16toh(cqe->wqe_idx) : -1;
	cq->ci++;
	return true;
}

/*
 * Hand the polled entries back: the device may overwrite an entry once the
 * consumer index passes it, so every read of them comes before the store
 * (udma_from_device_barrier() orders earlier loads before later stores).
 */
void hpu_cq_publish(struct hpu_cq_ring *cq)
{
	udma_from_device_barrier();
	STORE(cq->db_ci, htole32(cq->ci));
}

/*
 * Drop every completion of QP @qpn that the device wrote and software has
 * not polled yet (its QP is destroyed or reset: a new QP with the same QPN
 * must not see them). Only while the device writes no more CQEs for @qpn.
 * The others move towards the producer, in order, each keeping the owner
 * byte of the slot it lands in; the consumer index then skips the freed
 * slots and is published. The caller holds the CQ's lock. Returns how
 * many were dropped.
 */
uint32_t hpu_cq_clean(struct hpu_cq_ring *cq, uint32_t qpn)
{
	uint32_t mask = cq->entries - 1, pi, i, n = 0;

	for (pi = cq->ci; pi - cq->ci < cq->entries; pi++)
		if (!cqe_ready_at(cq, pi))
			break;
	/* The entries' bytes are read after their owner bits. */
	udma_from_device_barrier();
	for (i = pi; i != cq->ci; ) {
		struct hpu_ib_cqe *cqe = &cq->buf[--i & mask];

		if (cqe_qpn(cqe) == (qpn & 0xffffff)) {
			n++;
		} else if (n) {
			struct hpu_ib_cqe *to = &cq->buf[(i + n) & mask];

			memcpy(to, cqe, offsetof(struct hpu_ib_cqe, owner));
		}
	}
	if (n) {
		cq->ci += n;
		hpu_cq_publish(cq);
	}
	return n;
}
