/* SPDX-License-Identifier: MIT */
/*
 * hpu verbs provider: the objects libibverbs hands back and forth.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_PROVIDER_H
#define HPU_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>

#include <infiniband/driver.h>

#include "hpu_wq.h"

/* One per kernel ib_device that matched (hpu_0, hpu_1...). */
struct hpu_device {
	struct verbs_device vdev;
	unsigned int abi_version;	/* the kernel's uverbs ABI version */
};

/* QPN -> QP for the poller: two levels of 4096 (QPNs are 24 bits). */
#define HPU_QP_TABLE_BITS	12
#define HPU_QP_TABLE_SIZE	(1U << HPU_QP_TABLE_BITS)

struct hpu_qp;

/* One per ibv_open_device(). */
struct hpu_context {
	struct verbs_context vctx;
	void *db_page;			/* the doorbell page, mapped uncached */
	uint32_t max_inline;
	pthread_mutex_t qp_table_lock;	/* writers only; the poller reads */
	struct hpu_qp **qp_table[HPU_QP_TABLE_SIZE];
};

/* Memory the device reaches: a ring and its doorbell record. */
struct hpu_buf {
	void *addr;
	size_t len;
};

struct hpu_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	struct hpu_cq_ring ring;
	struct hpu_buf buf;
	uint32_t cqn;
	struct ibv_wc cur;		/* extended CQ: the completion read now */
	uint32_t poll_ci;		/* extended CQ: consumer index at start_poll */
};

struct hpu_srq {
	struct verbs_srq vsrq;
	pthread_spinlock_t lock;
	struct hpu_wq wq;
	struct hpu_buf buf;
	uint32_t srqn;
};

struct hpu_qp {
	struct verbs_qp vqp;
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	struct hpu_wq sq;
	struct hpu_wq rq;		/* unused with an SRQ */
	struct hpu_sq_batch batch;	/* wr_start .. wr_complete, under sq_lock */
	struct hpu_buf buf;		/* SQ ring, RQ ring, doorbell record */
	uint8_t *signaled;		/* per SQ slot, the provider's own */
	uint32_t qpn;
	uint32_t qkey;
	bool ud;
	bool has_srq;
	bool sq_sig_all;		/* every send WQE signaled */
	bool in_error;			/* seen in ERR: __atomic_* only */
};

struct hpu_ah {
	struct ibv_ah ibah;
	struct hpu_ib_ud_av av;
};

static inline struct hpu_device *hpu_dev(struct ibv_device *ibdev)
{
	return container_of(verbs_get_device(ibdev), struct hpu_device, vdev);
}

static inline struct hpu_context *hpu_ctx(struct ibv_context *ibctx)
{
	return container_of(verbs_get_ctx(ibctx), struct hpu_context, vctx);
}

static inline struct hpu_cq *hpu_cq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct hpu_cq, vcq.cq);
}

static inline struct hpu_qp *hpu_qp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct hpu_qp, vqp.qp);
}

static inline struct hpu_qp *hpu_qp_ex(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct hpu_qp, vqp.qp_ex);
}

static inline struct hpu_srq *hpu_srq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct hpu_srq, vsrq.srq);
}

static inline struct hpu_ah *hpu_ah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct hpu_ah, ibah);
}

#endif /* HPU_PROVIDER_H */
