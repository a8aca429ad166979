/* SPDX-License-Identifier: MIT */
/*
 * hpu verbs provider: the ring layer. Send, receive and completion rings in
 * the formats of Documentation/hw/roce.md (struct hpu_ib_* in hpu-abi.h),
 * with no kernel, no libibverbs context and no locks: hpu.c holds the
 * locks and rings the doorbells; tests/unit/rdma drives this layer alone
 * against a fake device.
 *
 * Indexes are free running 32-bit counters; a slot is index & (entries - 1).
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_WQ_H
#define HPU_WQ_H

/* A C header (the provider is C); the host unit tests include it from C++. */
/* NOLINTBEGIN(modernize-deprecated-headers) */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* NOLINTEND(modernize-deprecated-headers) */

#include <infiniband/verbs.h>

#include "hpu-abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HPU_WQ_SEND_HDR		64	/* struct hpu_ib_send_wqe */
#define HPU_WQ_UD_AV		32	/* struct hpu_ib_ud_av */
#define HPU_WQ_RECV_HDR		16	/* struct hpu_ib_recv_wqe */
#define HPU_WQ_SGE		16	/* struct hpu_ib_sge */
#define HPU_WQ_MAX_SGE		32	/* roce.md: MAX_SGE */

/* A send, receive or shared receive queue. */
struct hpu_wq {
	uint8_t *buf;
	uint32_t entries;	/* a power of two */
	uint32_t log_stride;
	uint32_t head;		/* published producer index */
	uint32_t tail;		/* first slot the device may still own */
	uint32_t max_sge;
	uint32_t max_inline;	/* SQ only */
	uint32_t hdr;		/* bytes before the SGEs or inline data */
	uint32_t *db_pi;	/* producer index in the doorbell record (LE) */
	const uint32_t *db_ci;	/* SRQ: consumer index the device writes (LE) */
	uint8_t *signaled;	/* SQ: per slot, 1 if the WQE asks a completion */
};

/* A batch of send WQEs being built: one post_send or wr_start..wr_complete. */
struct hpu_sq_batch {
	uint32_t next;		/* index of the next WQE to start */
	struct hpu_ib_send_wqe *wqe;	/* the WQE being built, or NULL */
	int err;		/* first error; the batch is then dropped */
};

/* A completion queue. */
struct hpu_cq_ring {
	struct hpu_ib_cqe *buf;
	uint32_t entries;
	uint32_t log_entries;
	uint32_t ci;		/* consumer index, free running */
	uint32_t *db_ci;	/* consumer index in the doorbell record (LE) */
	int32_t wqe_idx;	/* the last CQE polled: its send WQE index, or -1 */
};

/* Geometry: what a queue of the given capabilities needs. */
uint32_t hpu_wq_log2_entries(uint32_t wr);
int hpu_sq_geometry(uint32_t max_sge, uint32_t max_inline, bool ud,
		    uint32_t *log_stride);
int hpu_rq_geometry(uint32_t max_sge, bool srq, uint32_t *log_stride);
uint32_t hpu_sq_stride_max_sge(uint32_t log_stride, bool ud);
uint32_t hpu_sq_stride_max_inline(uint32_t log_stride, bool ud);
uint32_t hpu_rq_stride_max_sge(uint32_t log_stride);

void hpu_sq_init(struct hpu_wq *sq, void *buf, uint32_t log_entries,
		 uint32_t log_stride, bool ud, uint32_t *db_pi,
		 uint8_t *signaled);
void hpu_rq_init(struct hpu_wq *rq, void *buf, uint32_t log_entries,
		 uint32_t log_stride, uint32_t *db_pi, const uint32_t *db_ci);
void hpu_wq_reset(struct hpu_wq *wq);

static inline void *hpu_wq_slot(const struct hpu_wq *wq, uint32_t idx)
{
	return wq->buf + ((size_t)(idx & (wq->entries - 1)) << wq->log_stride);
}

/* Send WQEs. */
void hpu_sq_batch_start(const struct hpu_wq *sq, struct hpu_sq_batch *b);
void hpu_sq_wqe_start(struct hpu_wq *sq, struct hpu_sq_batch *b,
		      uint8_t opcode, uint32_t send_flags, uint64_t wr_id,
		      __be32 imm);
void hpu_sq_wqe_rdma(struct hpu_sq_batch *b, uint64_t remote_addr,
		     uint32_t rkey);
void hpu_sq_wqe_ud(struct hpu_sq_batch *b, const struct hpu_ib_ud_av *av,
		   uint32_t remote_qpn, uint32_t remote_qkey);
void hpu_sq_wqe_sge(const struct hpu_wq *sq, struct hpu_sq_batch *b,
		    uint32_t lkey, uint64_t addr, uint32_t length);
void hpu_sq_wqe_sge_list(const struct hpu_wq *sq, struct hpu_sq_batch *b,
			 size_t num_sge, const struct ibv_sge *sg_list);
void hpu_sq_wqe_inline(const struct hpu_wq *sq, struct hpu_sq_batch *b,
		       size_t num_buf, const struct ibv_data_buf *bufs);
int hpu_sq_post_wr(struct hpu_wq *sq, struct hpu_sq_batch *b, bool ud,
		   const struct ibv_send_wr *wr, const struct hpu_ib_ud_av *av);
int hpu_sq_batch_commit(struct hpu_wq *sq, struct hpu_sq_batch *b);

/* Receive WQEs (RQ or SRQ). */
int hpu_rq_post(struct hpu_wq *rq, uint32_t *next,
		const struct ibv_recv_wr *wr);
void hpu_rq_publish(struct hpu_wq *rq, uint32_t next);

/* Completions. */
void hpu_cq_init(struct hpu_cq_ring *cq, void *buf, uint32_t log_entries,
		 uint32_t *db_ci);
bool hpu_cq_next(struct hpu_cq_ring *cq, struct ibv_wc *wc);
void hpu_cq_publish(struct hpu_cq_ring *cq);
bool hpu_cq_pending(const struct hpu_cq_ring *cq);
uint32_t hpu_cq_clean(struct hpu_cq_ring *cq, uint32_t qpn);
void hpu_sq_completed(struct hpu_wq *sq, enum ibv_wc_status status,
		      int32_t wqe_idx);
void hpu_rq_completed(struct hpu_wq *rq);

#ifdef __cplusplus
}
#endif

#endif /* HPU_WQ_H */
