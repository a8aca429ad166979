// SPDX-License-Identifier: MIT
/*
 * hpu verbs provider for rdma-core: user space of the hpu NIC's RoCE v2
 * engine (Documentation/rdma.md).
 *
 * The verbs glue: objects are created through the generic uverbs commands
 * with the driver data of include/uapi/rdma/hpu-abi.h (rings and doorbell
 * records in this process's memory, named by address; the doorbell page
 * mapped once per context), and the data path runs on the ring layer
 * (hpu_wq.c) under one spinlock per SQ, RQ, SRQ and CQ. The kernel's hpu
 * ib_devices are claimed by the modalias of their auxiliary device
 * (RDMA_DRIVER_UNKNOWN: there is no driver id for an out-of-tree driver).
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/driver.h>
#include <infiniband/verbs.h>
#include <util/mmio.h>
#include <util/udma_barrier.h>
#include <util/util.h>

#include "hpu-abi.h"
#include "hpu.h"

/* Commands: the generic request or response, then hpu-abi.h's driver data. */
struct hpu_get_context_cmd {
	struct ibv_get_context ibv_cmd;
	struct hpu_ib_alloc_ucontext_req drv;
};
struct hpu_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct hpu_ib_alloc_ucontext_resp drv;
};
struct hpu_create_cq_cmd {
	struct ibv_create_cq ibv_cmd;
	struct hpu_ib_create_cq drv;
};
struct hpu_create_cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct hpu_ib_create_cq_resp drv;
};
struct hpu_create_qp_cmd {
	struct ibv_create_qp ibv_cmd;
	struct hpu_ib_create_qp drv;
};
struct hpu_create_qp_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct hpu_ib_create_qp_resp drv;
};
struct hpu_create_srq_cmd {
	struct ibv_create_srq ibv_cmd;
	struct hpu_ib_create_srq drv;
};
struct hpu_create_srq_resp {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct hpu_ib_create_srq_resp drv;
};
struct hpu_create_ah_resp {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct hpu_ib_create_ah_resp drv;
};

/* The driver data starts right after the generic part, as the kernel reads it. */
#define HPU_CMD_PACKED(type, core, drv)					\
	static_assert(offsetof(type, drv) == sizeof(core), #type " layout")
HPU_CMD_PACKED(struct hpu_get_context_cmd, struct ibv_get_context, drv);
HPU_CMD_PACKED(struct hpu_get_context_resp, struct ib_uverbs_get_context_resp, drv);
HPU_CMD_PACKED(struct hpu_create_cq_cmd, struct ibv_create_cq, drv);
HPU_CMD_PACKED(struct hpu_create_cq_resp, struct ib_uverbs_create_cq_resp, drv);
HPU_CMD_PACKED(struct hpu_create_qp_cmd, struct ibv_create_qp, drv);
HPU_CMD_PACKED(struct hpu_create_qp_resp, struct ib_uverbs_create_qp_resp, drv);
HPU_CMD_PACKED(struct hpu_create_srq_cmd, struct ibv_create_srq, drv);
HPU_CMD_PACKED(struct hpu_create_srq_resp, struct ib_uverbs_create_srq_resp, drv);
HPU_CMD_PACKED(struct hpu_create_ah_resp, struct ib_uverbs_create_ah_resp, drv);

/* ---- Queries, protection domains, memory regions ---- */

static int hpu_query_device_ex(struct ibv_context *ibctx,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;

	/* The kernel reports the firmware version as 16-bit fields
	 * major.minor.patch in the low 48 bits of fw_ver.
	 */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int hpu_query_port(struct ibv_context *ibctx, uint8_t port,
			  struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *hpu_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct ibv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	ret = ibv_cmd_alloc_pd(ibctx, pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return pd;
}

static int hpu_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

static struct ibv_mr *hpu_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static struct ibv_mr *hpu_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr,
				    NULL);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int hpu_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

/*
 * ---- Ring memory: whole anonymous pages of their own, kept out of fork ----
 *
 * Rings and doorbell records are mapped for each object, never taken
 * from the heap: when the kernel could not confirm an object's DESTROY
 * (the engine may still write its ring), it keeps the pages pinned and
 * reports success; munmap() then takes them out of this process for good,
 * where free() would hand them to the next malloc() for the device to
 * overwrite.
 */

static int hpu_buf_alloc(struct hpu_buf *b, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int ret;

	b->len = align(len, page);
	/* Zero-filled by the kernel. */
	b->addr = mmap(NULL, b->len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->addr == MAP_FAILED) {
		b->addr = NULL;
		return errno;
	}
	/* -1 and errno on failure (libibverbs' madvise wrapper) */
	if (ibv_dontfork_range(b->addr, b->len)) {
		ret = errno ? errno : ENOMEM;
		munmap(b->addr, b->len);
		b->addr = NULL;
		return ret;
	}
	return 0;
}

static void hpu_buf_free(struct hpu_buf *b)
{
	if (!b->addr)
		return;
	ibv_dofork_range(b->addr, b->len);
	munmap(b->addr, b->len);
	b->addr = NULL;
}

#define HPU_DBREC_ALIGN 64

/* ---- Completion queues ---- */

static struct hpu_cq *hpu_cq_new(struct ibv_context *ibctx, int cqe,
				  struct ibv_comp_channel *channel,
				  int comp_vector)
{
	struct hpu_create_cq_resp resp = {};
	struct hpu_create_cq_cmd cmd = {};
	uint32_t log, ring_len;
	struct hpu_cq *cq;
	int ret;

	if (cqe < 1 || cqe > (1 << HPU_IB_CQ_LOG_ENTRIES_MAX)) {
		errno = EINVAL;
		return NULL;
	}
	log = hpu_wq_log2_entries((uint32_t)cqe);
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	ring_len = HPU_IB_CQE_SIZE << log;
	ret = hpu_buf_alloc(&cq->buf, ring_len + HPU_DBREC_ALIGN);
	if (ret)
		goto err_free;
	hpu_cq_init(&cq->ring, cq->buf.addr, log,
		    (uint32_t *)((uint8_t *)cq->buf.addr + ring_len));
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);

	cmd.drv.buf_addr = (uintptr_t)cq->buf.addr;
	cmd.drv.db_addr = (uintptr_t)cq->ring.db_ci;
	cmd.drv.log_entries = log;
	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_buf;
	cq->cqn = resp.drv.cqn;
	return cq;

err_buf:
	pthread_spin_destroy(&cq->lock);
	hpu_buf_free(&cq->buf);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

static struct ibv_cq *hpu_create_cq(struct ibv_context *ibctx, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector)
{
	struct hpu_cq *cq = hpu_cq_new(ibctx, cqe, channel, comp_vector);

	return cq ? &cq->vcq.cq : NULL;
}

static int hpu_destroy_cq(struct ibv_cq *ibcq)
{
	struct hpu_cq *cq = hpu_cq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (ret)
		return ret;
	pthread_spin_destroy(&cq->lock);
	hpu_buf_free(&cq->buf);
	free(cq);
	return 0;
}

/* Caller holds the QP table lock for writing, or polls a CQ of a live QP. */
static struct hpu_qp *hpu_qp_lookup(struct hpu_context *ctx, uint32_t qpn)
{
	struct hpu_qp **leaf = ctx->qp_table[qpn >> HPU_QP_TABLE_BITS];

	return leaf ? leaf[qpn & (HPU_QP_TABLE_SIZE - 1)] : NULL;
}

static int hpu_qp_table_set(struct hpu_context *ctx, uint32_t qpn,
			    struct hpu_qp *qp)
{
	struct hpu_qp ***slot = &ctx->qp_table[(qpn >> HPU_QP_TABLE_BITS) &
					       (HPU_QP_TABLE_SIZE - 1)];

	pthread_mutex_lock(&ctx->qp_table_lock);
	if (!*slot) {
		*slot = calloc(HPU_QP_TABLE_SIZE, sizeof(**slot));
		if (!*slot) {
			pthread_mutex_unlock(&ctx->qp_table_lock);
			return ENOMEM;
		}
	}
	(*slot)[qpn & (HPU_QP_TABLE_SIZE - 1)] = qp;
	pthread_mutex_unlock(&ctx->qp_table_lock);
	return 0;
}

static void hpu_ring_sq(struct hpu_qp *qp);

/*
 * Does this completion show the QP in ERR? Every error does but one
 * (roce.md): a UD receive whose datagram does not fit completes
 * LOC_LEN_ERR and the QP stays in RTS. A failed UD send, or a receive
 * that breaks a rule, moves a UD QP to ERR as it does an RC one.
 */
static bool hpu_wc_means_err(const struct hpu_qp *qp, const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_SUCCESS)
		return false;
	return !(qp->ud && wc->status == IBV_WC_LOC_LEN_ERR &&
		 (wc->opcode & IBV_WC_RECV));
}

/*
 * The completion's queue learns which of its slots are free again
 * (@wqe_idx: the CQE's send WQE index, or -1). The first completion that
 * shows the device moved the QP to ERR on its own rings SQ_DB: receives
 * posted since the device entered ERR, before the provider knew, are then
 * flushed too (the device flushes an ERR QP's queues at each SQ_DB;
 * hpu_post_recv rings it for the ones posted after).
 */
static void hpu_cq_account(struct hpu_qp *qp, const struct ibv_wc *wc,
			   int32_t wqe_idx)
{
	if (hpu_wc_means_err(qp, wc) &&
	    !__atomic_load_n(&qp->in_error, __ATOMIC_RELAXED) &&
	    !__atomic_exchange_n(&qp->in_error, true, __ATOMIC_SEQ_CST))
		hpu_ring_sq(qp);
	if (wc->opcode & IBV_WC_RECV) {
		if (!qp->has_srq)
			hpu_rq_completed(&qp->rq);
	} else {
		hpu_sq_completed(&qp->sq, wc->status, wqe_idx);
	}
}

static int hpu_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct hpu_context *ctx = hpu_ctx(ibcq->context);
	struct hpu_cq *cq = hpu_cq(ibcq);
	uint32_t ci0;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	ci0 = cq->ring.ci;
	while (n < ne && hpu_cq_next(&cq->ring, &wc[n])) {
		struct hpu_qp *qp = hpu_qp_lookup(ctx, wc[n].qp_num);

		/* A completion of a QP destroyed since: nobody to tell. */
		if (!qp)
			continue;
		hpu_cq_account(qp, &wc[n], cq->ring.wqe_idx);
		n++;
	}
	if (cq->ring.ci != ci0)
		hpu_cq_publish(&cq->ring);
	pthread_spin_unlock(&cq->lock);
	return n;
}

static int hpu_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct hpu_context *ctx = hpu_ctx(ibcq->context);
	struct hpu_cq *cq = hpu_cq(ibcq);
	uint32_t v = cq->cqn & 0xffffff;

	if (solicited_only)
		v |= HPU_IB_DB_CQ_ARM_SOLICITED;
	/* The device compares its producer index with the record's consumer
	 * index when armed: the last CI store must reach memory first.
	 */
	udma_to_device_barrier();
	mmio_write32((uint8_t *)ctx->db_page + HPU_IB_DB_CQ_ARM, v);
	return 0;
}

/*
 * The extended CQ (ibv_create_cq_ex): the same ring, read one completion at
 * a time between start_poll and end_poll under the CQ's lock.
 */
static bool hpu_cq_ex_next(struct hpu_cq *cq)
{
	struct hpu_context *ctx = hpu_ctx(cq->vcq.cq.context);

	while (hpu_cq_next(&cq->ring, &cq->cur)) {
		struct hpu_qp *qp = hpu_qp_lookup(ctx, cq->cur.qp_num);

		if (!qp)
			continue;
		hpu_cq_account(qp, &cq->cur, cq->ring.wqe_idx);
		cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
		cq->vcq.cq_ex.status = cq->cur.status;
		return true;
	}
	return false;
}

static struct hpu_cq *hpu_cq_of_ex(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct hpu_cq, vcq.cq_ex);
}

static int hpu_cq_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct hpu_cq *cq = hpu_cq_of_ex(cqx);

	/* No ibv_poll_cq_attr comp_mask bit is defined: any is unknown. */
	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	cq->poll_ci = cq->ring.ci;
	if (hpu_cq_ex_next(cq))
		return 0;
	if (cq->ring.ci != cq->poll_ci)
		hpu_cq_publish(&cq->ring);
	pthread_spin_unlock(&cq->lock);
	return ENOENT;
}

static int hpu_cq_next_poll(struct ibv_cq_ex *cqx)
{
	return hpu_cq_ex_next(hpu_cq_of_ex(cqx)) ? 0 : ENOENT;
}

static void hpu_cq_end_poll(struct ibv_cq_ex *cqx)
{
	struct hpu_cq *cq = hpu_cq_of_ex(cqx);

	if (cq->ring.ci != cq->poll_ci)
		hpu_cq_publish(&cq->ring);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode hpu_cq_read_opcode(struct ibv_cq_ex *cqx)
{
	return hpu_cq_of_ex(cqx)->cur.opcode;
}

static uint32_t hpu_cq_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint32_t hpu_cq_read_byte_len(struct ibv_cq_ex *cqx)
{
	return hpu_cq_of_ex(cqx)->cur.byte_len;
}

static __be32 hpu_cq_read_imm_data(struct ibv_cq_ex *cqx)
{
	return hpu_cq_of_ex(cqx)->cur.imm_data;
}

static uint32_t hpu_cq_read_qp_num(struct ibv_cq_ex *cqx)
{
	return hpu_cq_of_ex(cqx)->cur.qp_num;
}

static uint32_t hpu_cq_read_src_qp(struct ibv_cq_ex *cqx)
{
	return hpu_cq_of_ex(cqx)->cur.src_qp;
}

static unsigned int hpu_cq_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return hpu_cq_of_ex(cqx)->cur.wc_flags;
}

/* RoCE has no LIDs and no SL: zero, as ibv_wc reports them. */
static uint32_t hpu_cq_read_slid(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint8_t hpu_cq_read_sl(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint8_t hpu_cq_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return 0;
}

/*
 * IGNORE_OVERRUN is refused: the device puts an overrun CQ in error
 * (roce.md), it cannot ignore the overrun.
 */
#define HPU_CQ_EX_FLAGS IBV_CREATE_CQ_ATTR_SINGLE_THREADED

static struct ibv_cq_ex *hpu_create_cq_ex(struct ibv_context *ibctx,
					  struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *cqx;
	struct hpu_cq *cq;

	if ((attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS) ||
	    (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)HPU_CQ_EX_FLAGS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* The plain CREATE_CQ command: nothing of the extended one is needed. */
	cq = hpu_cq_new(ibctx, (int)attr->cqe, attr->channel,
			(int)attr->comp_vector);
	if (!cq)
		return NULL;
	cqx = &cq->vcq.cq_ex;
	cqx->start_poll = hpu_cq_start_poll;
	cqx->next_poll = hpu_cq_next_poll;
	cqx->end_poll = hpu_cq_end_poll;
	cqx->read_opcode = hpu_cq_read_opcode;
	cqx->read_vendor_err = hpu_cq_read_vendor_err;
	cqx->read_wc_flags = hpu_cq_read_wc_flags;
	cqx->read_byte_len = hpu_cq_read_byte_len;
	cqx->read_imm_data = hpu_cq_read_imm_data;
	cqx->read_qp_num = hpu_cq_read_qp_num;
	cqx->read_src_qp = hpu_cq_read_src_qp;
	cqx->read_slid = hpu_cq_read_slid;
	cqx->read_sl = hpu_cq_read_sl;
	cqx->read_dlid_path_bits = hpu_cq_read_dlid_path_bits;
	return cqx;
}

/* ---- Shared receive queues ---- */

static struct ibv_srq *hpu_create_srq(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr)
{
	struct hpu_create_srq_resp resp = {};
	struct hpu_create_srq_cmd cmd = {};
	uint32_t log, log_stride;
	struct ibv_srq_attr asked;
	struct hpu_srq *srq;
	uint32_t *db;
	size_t ring_len;
	int ret;

	ret = hpu_rq_geometry(attr->attr.max_sge, true, &log_stride);
	if (ret || attr->attr.max_wr > (1U << HPU_IB_WQ_LOG_ENTRIES_MAX)) {
		errno = EINVAL;
		return NULL;
	}
	log = hpu_wq_log2_entries(attr->attr.max_wr);
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	ring_len = (size_t)1 << (log + log_stride);
	ret = hpu_buf_alloc(&srq->buf, ring_len + HPU_DBREC_ALIGN);
	if (ret)
		goto err_free;
	db = (uint32_t *)((uint8_t *)srq->buf.addr + ring_len);
	hpu_rq_init(&srq->wq, srq->buf.addr, log, log_stride, &db[0], &db[1]);
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);

	asked = attr->attr;
	attr->attr.max_wr = srq->wq.entries;
	attr->attr.max_sge = srq->wq.max_sge;
	cmd.drv.buf_addr = (uintptr_t)srq->buf.addr;
	cmd.drv.db_addr = (uintptr_t)db;
	cmd.drv.log_entries = (uint8_t)log;
	cmd.drv.log_stride = (uint8_t)log_stride;
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		attr->attr = asked;	/* the caller's request as it was */
		goto err_buf;
	}
	srq->srqn = resp.drv.srqn;
	attr->attr.max_wr = srq->wq.entries;
	attr->attr.max_sge = srq->wq.max_sge;
	return &srq->vsrq.srq;

err_buf:
	pthread_spin_destroy(&srq->lock);
	hpu_buf_free(&srq->buf);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

static int hpu_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int mask)
{
	struct ibv_modify_srq cmd;

	/* The device never resizes an SRQ (roce.md: MODIFY changes the limit). */
	if (mask & IBV_SRQ_MAX_WR)
		return EINVAL;
	return ibv_cmd_modify_srq(srq, attr, mask, &cmd, sizeof(cmd));
}

static int hpu_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;
	int ret;

	ret = ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
	if (!ret) {
		attr->max_wr = hpu_srq(srq)->wq.entries;
		attr->max_sge = hpu_srq(srq)->wq.max_sge;
	}
	return ret;
}

static int hpu_destroy_srq(struct ibv_srq *ibsrq)
{
	struct hpu_srq *srq = hpu_srq(ibsrq);
	int ret = ibv_cmd_destroy_srq(ibsrq);

	if (ret)
		return ret;
	pthread_spin_destroy(&srq->lock);
	hpu_buf_free(&srq->buf);
	free(srq);
	return 0;
}

static int hpu_post_wq_recv(struct hpu_wq *wq, pthread_spinlock_t *lock,
			    struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	uint32_t next;
	int err = 0;

	pthread_spin_lock(lock);
	next = wq->head;
	for (; wr; wr = wr->next) {
		err = hpu_rq_post(wq, &next, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	hpu_rq_publish(wq, next);
	pthread_spin_unlock(lock);
	return err;
}

static int hpu_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr)
{
	struct hpu_srq *srq = hpu_srq(ibsrq);

	return hpu_post_wq_recv(&srq->wq, &srq->lock, wr, bad_wr);
}

/* ---- Queue pairs ---- */

static void hpu_ring_sq(struct hpu_qp *qp)
{
	struct hpu_context *ctx = hpu_ctx(qp->vqp.qp.context);

	/* The producer index in the record before the doorbell names it. */
	udma_to_device_barrier();
	mmio_write32((uint8_t *)ctx->db_page + HPU_IB_DB_SQ, qp->qpn);
}

static int hpu_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr)
{
	struct hpu_qp *qp = hpu_qp(ibqp);
	uint32_t head;
	int err = 0;

	pthread_spin_lock(&qp->sq_lock);
	head = qp->sq.head;
	hpu_sq_batch_start(&qp->sq, &qp->batch);
	for (; wr; wr = wr->next) {
		struct ibv_send_wr w = *wr;
		const struct hpu_ib_ud_av *av = NULL;

		if (qp->sq_sig_all)
			w.send_flags |= IBV_SEND_SIGNALED;
		if (qp->ud) {
			av = w.wr.ud.ah ? &hpu_ah(w.wr.ud.ah)->av : NULL;
			/* IB: a Q_Key with the top bit set means the QP's own. */
			if (w.wr.ud.remote_qkey & 0x80000000)
				w.wr.ud.remote_qkey = qp->qkey;
		}
		err = hpu_sq_post_wr(&qp->sq, &qp->batch, qp->ud, &w, av);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	hpu_sq_batch_commit(&qp->sq, &qp->batch);
	if (qp->sq.head != head)
		hpu_ring_sq(qp);
	pthread_spin_unlock(&qp->sq_lock);
	return err;
}

static int hpu_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	struct hpu_qp *qp = hpu_qp(ibqp);
	int err;

	if (qp->has_srq) {
		*bad_wr = wr;
		return EINVAL;
	}
	err = hpu_post_wq_recv(&qp->rq, &qp->rq_lock, wr, bad_wr);
	/* An ERR QP flushes what is posted once its doorbell rings (the RQ
	 * has none of its own). The producer index store comes before the
	 * load of in_error: either this thread sees the flag, or the poller
	 * that sets it rings after the index is visible (hpu_cq_account).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&qp->in_error, __ATOMIC_RELAXED))
		hpu_ring_sq(qp);
	return err;
}

/* The wr_* API (ibv_qp_ex): one batch from wr_start to wr_complete. */
static void hpu_wr_start(struct ibv_qp_ex *qpx)
{
	struct hpu_qp *qp = hpu_qp_ex(qpx);

	pthread_spin_lock(&qp->sq_lock);
	hpu_sq_batch_start(&qp->sq, &qp->batch);
}

static int hpu_wr_complete(struct ibv_qp_ex *qpx)
{
	struct hpu_qp *qp = hpu_qp_ex(qpx);
	uint32_t head = qp->sq.head;
	int err;

	err = hpu_sq_batch_commit(&qp->sq, &qp->batch);
	if (qp->sq.head != head)
		hpu_ring_sq(qp);
	pthread_spin_unlock(&qp->sq_lock);
	return err;
}

static void hpu_wr_abort(struct ibv_qp_ex *qpx)
{
	struct hpu_qp *qp = hpu_qp_ex(qpx);

	pthread_spin_unlock(&qp->sq_lock);
}

static void hpu_wr_op(struct ibv_qp_ex *qpx, uint8_t opcode, __be32 imm)
{
	struct hpu_qp *qp = hpu_qp_ex(qpx);
	uint32_t flags = qpx->wr_flags;

	if (qp->sq_sig_all)
		flags |= IBV_SEND_SIGNALED;
	hpu_sq_wqe_start(&qp->sq, &qp->batch, opcode, flags, qpx->wr_id, imm);
}

static void hpu_wr_send(struct ibv_qp_ex *qpx)
{
	hpu_wr_op(qpx, HPU_IB_WQE_SEND, 0);
}

static void hpu_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	hpu_wr_op(qpx, HPU_IB_WQE_SEND_IMM, imm);
}

static void hpu_wr_rdma(struct ibv_qp_ex *qpx, uint8_t opcode, uint32_t rkey,
			uint64_t remote_addr, __be32 imm)
{
	hpu_wr_op(qpx, opcode, imm);
	hpu_sq_wqe_rdma(&hpu_qp_ex(qpx)->batch, remote_addr, rkey);
}

static void hpu_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	hpu_wr_rdma(qpx, HPU_IB_WQE_RDMA_WRITE, rkey, remote_addr, 0);
}

static void hpu_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t remote_addr, __be32 imm)
{
	hpu_wr_rdma(qpx, HPU_IB_WQE_RDMA_WRITE_IMM, rkey, remote_addr, imm);
}

static void hpu_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			     uint64_t remote_addr)
{
	hpu_wr_rdma(qpx, HPU_IB_WQE_RDMA_READ, rkey, remote_addr, 0);
}

static void hpu_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
			       uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct hpu_qp *qp = hpu_qp_ex(qpx);

	if (remote_qkey & 0x80000000)
		remote_qkey = qp->qkey;
	hpu_sq_wqe_ud(&qp->batch, &hpu_ah(ah)->av, remote_qpn, remote_qkey);
}

static void hpu_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			   uint64_t addr, uint32_t length)
{
	struct hpu_qp *qp = hpu_qp_ex(qpx);

	hpu_sq_wqe_sge(&qp->sq, &qp->batch, lkey, addr, length);
}

static void hpu_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				const struct ibv_sge *sg_list)
{
	struct hpu_qp *qp = hpu_qp_ex(qpx);

	hpu_sq_wqe_sge_list(&qp->sq, &qp->batch, num_sge, sg_list);
}

static void hpu_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				   size_t length)
{
	struct hpu_qp *qp = hpu_qp_ex(qpx);
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	hpu_sq_wqe_inline(&qp->sq, &qp->batch, 1, &buf);
}

static void hpu_wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
					const struct ibv_data_buf *buf_list)
{
	struct hpu_qp *qp = hpu_qp_ex(qpx);

	hpu_sq_wqe_inline(&qp->sq, &qp->batch, num_buf, buf_list);
}

#define HPU_QP_RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		       IBV_QP_EX_WITH_RDMA_WRITE |				\
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |			\
		       IBV_QP_EX_WITH_RDMA_READ)
#define HPU_QP_UD_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define HPU_QP_COMP_MASK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

static void hpu_qp_set_wr_ops(struct hpu_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_start = hpu_wr_start;
	qpx->wr_complete = hpu_wr_complete;
	qpx->wr_abort = hpu_wr_abort;
	if (ops & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = hpu_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = hpu_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = hpu_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = hpu_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = hpu_wr_rdma_read;
	qpx->wr_set_sge = hpu_wr_set_sge;
	qpx->wr_set_sge_list = hpu_wr_set_sge_list;
	qpx->wr_set_inline_data = hpu_wr_set_inline_data;
	qpx->wr_set_inline_data_list = hpu_wr_set_inline_data_list;
	if (qp->ud)
		qpx->wr_set_ud_addr = hpu_wr_set_ud_addr;
	qp->vqp.comp_mask |= VERBS_QP_EX;
}

static int hpu_qp_check_attr(const struct ibv_qp_init_attr_ex *attr)
{
	uint64_t ops = attr->qp_type == IBV_QPT_UD ? HPU_QP_UD_OPS : HPU_QP_RC_OPS;

	if (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UD)
		return EOPNOTSUPP;
	if (attr->comp_mask & ~HPU_QP_COMP_MASK)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~ops))
		return EOPNOTSUPP;
	if (!attr->send_cq || (!attr->recv_cq && !attr->srq))
		return EINVAL;
	if (attr->cap.max_send_wr > (1U << HPU_IB_WQ_LOG_ENTRIES_MAX) ||
	    attr->cap.max_recv_wr > (1U << HPU_IB_WQ_LOG_ENTRIES_MAX))
		return EINVAL;
	return 0;
}

/* The queues' shape and memory: [SQ ring][RQ ring][doorbell record]. */
static int hpu_qp_alloc_rings(struct hpu_qp *qp, struct ibv_qp_init_attr_ex *attr,
			      struct hpu_create_qp_cmd *cmd)
{
	uint32_t sq_log, sq_stride, rq_log = 0, rq_stride = 0;
	size_t sq_len, rq_off, rq_len = 0, db_off;
	uint32_t *db;
	int ret;

	ret = hpu_sq_geometry(attr->cap.max_send_sge, attr->cap.max_inline_data,
			      qp->ud, &sq_stride);
	if (!ret && !qp->has_srq)
		ret = hpu_rq_geometry(attr->cap.max_recv_sge, false, &rq_stride);
	if (ret)
		return ret;
	sq_log = hpu_wq_log2_entries(attr->cap.max_send_wr);
	sq_len = (size_t)1 << (sq_log + sq_stride);
	rq_off = sq_len;
	if (!qp->has_srq) {
		rq_log = hpu_wq_log2_entries(attr->cap.max_recv_wr);
		rq_len = (size_t)1 << (rq_log + rq_stride);
		rq_off = align(sq_len, (size_t)1 << rq_stride);
	}
	db_off = align(rq_off + rq_len, HPU_DBREC_ALIGN);

	qp->signaled = calloc((size_t)1 << sq_log, 1);
	if (!qp->signaled)
		return ENOMEM;
	ret = hpu_buf_alloc(&qp->buf, db_off + HPU_DBREC_ALIGN);
	if (ret) {
		free(qp->signaled);
		return ret;
	}
	db = (uint32_t *)((uint8_t *)qp->buf.addr + db_off);
	hpu_sq_init(&qp->sq, qp->buf.addr, sq_log, sq_stride, qp->ud, &db[0],
		    qp->signaled);
	if (!qp->has_srq)
		hpu_rq_init(&qp->rq, (uint8_t *)qp->buf.addr + rq_off, rq_log,
			    rq_stride, &db[1], NULL);

	cmd->drv.sq_buf_addr = (uintptr_t)qp->buf.addr;
	cmd->drv.rq_buf_addr = qp->has_srq ? 0 : (uintptr_t)qp->rq.buf;
	cmd->drv.db_addr = (uintptr_t)db;
	cmd->drv.sq_log_entries = (uint8_t)sq_log;
	cmd->drv.sq_log_stride = (uint8_t)sq_stride;
	cmd->drv.rq_log_entries = (uint8_t)rq_log;
	cmd->drv.rq_log_stride = (uint8_t)rq_stride;
	return 0;
}

/* What the queues really hold, as create_qp and query_qp report it. */
static void hpu_qp_caps(const struct hpu_qp *qp, struct ibv_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.entries;
	cap->max_send_sge = qp->sq.max_sge;
	cap->max_inline_data = qp->sq.max_inline;
	cap->max_recv_wr = qp->has_srq ? 0 : qp->rq.entries;
	cap->max_recv_sge = qp->has_srq ? 0 : qp->rq.max_sge;
}

static void hpu_qp_free(struct hpu_qp *qp)
{
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	hpu_buf_free(&qp->buf);
	free(qp->signaled);
	free(qp);
}

static struct ibv_qp *hpu_create_qp_ex(struct ibv_context *ibctx,
				       struct ibv_qp_init_attr_ex *attr)
{
	struct hpu_context *ctx = hpu_ctx(ibctx);
	struct hpu_create_qp_resp resp = {};
	struct hpu_create_qp_cmd cmd = {};
	struct ibv_qp_cap asked;
	struct hpu_qp *qp;
	int ret;

	ret = hpu_qp_check_attr(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->ud = attr->qp_type == IBV_QPT_UD;
	qp->has_srq = attr->srq != NULL;
	qp->sq_sig_all = attr->sq_sig_all;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	ret = hpu_qp_alloc_rings(qp, attr, &cmd);
	if (ret) {
		pthread_spin_destroy(&qp->sq_lock);
		pthread_spin_destroy(&qp->rq_lock);
		free(qp);
		errno = ret;
		return NULL;
	}
	/*
	 * The kernel checks the rings hold these, and answers with its own;
	 * a failed create leaves the caller's request as it was.
	 */
	asked = attr->cap;
	hpu_qp_caps(qp, &attr->cap);
	ret = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		attr->cap = asked;
		goto err_free;
	}
	qp->qpn = resp.drv.qpn;
	if (resp.drv.max_inline < qp->sq.max_inline)
		qp->sq.max_inline = resp.drv.max_inline;
	hpu_qp_caps(qp, &attr->cap);
	ret = hpu_qp_table_set(ctx, qp->vqp.qp.qp_num, qp);
	if (ret)
		goto err_destroy;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		hpu_qp_set_wr_ops(qp, attr->send_ops_flags);
	return &qp->vqp.qp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	hpu_qp_free(qp);
	errno = ret;
	return NULL;
}

static struct ibv_qp *hpu_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = hpu_create_qp_ex(pd->context, &ex);

	if (qp)
		attr->cap = ex.cap;
	return qp;
}

static int hpu_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			int mask, struct ibv_qp_init_attr *init_attr)
{
	struct hpu_qp *qp = hpu_qp(ibqp);
	struct ibv_query_qp cmd;
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, mask, init_attr, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	hpu_qp_caps(qp, &attr->cap);
	hpu_qp_caps(qp, &init_attr->cap);
	return 0;
}

static void hpu_qp_lock_all(struct hpu_qp *qp)
{
	pthread_spin_lock(&qp->sq_lock);
	pthread_spin_lock(&qp->rq_lock);
}

static void hpu_qp_unlock_all(struct hpu_qp *qp)
{
	pthread_spin_unlock(&qp->rq_lock);
	pthread_spin_unlock(&qp->sq_lock);
}

static void hpu_cq_lock_pair(struct hpu_qp *qp, bool lock)
{
	struct hpu_cq *scq = hpu_cq(qp->vqp.qp.send_cq);
	struct hpu_cq *rcq = qp->vqp.qp.recv_cq ? hpu_cq(qp->vqp.qp.recv_cq) : NULL;

	/* Always in address order, so two destroyers never deadlock. */
	if (rcq && rcq != scq && rcq < scq) {
		struct hpu_cq *t = scq;

		scq = rcq;
		rcq = t;
	}
	if (lock) {
		pthread_spin_lock(&scq->lock);
		if (rcq && rcq != scq)
			pthread_spin_lock(&rcq->lock);
	} else {
		if (rcq && rcq != scq)
			pthread_spin_unlock(&rcq->lock);
		pthread_spin_unlock(&scq->lock);
	}
}

/* Caller holds both CQ locks (hpu_cq_lock_pair). */
static void hpu_qp_clean_cqs(struct hpu_qp *qp)
{
	struct hpu_cq *scq = hpu_cq(qp->vqp.qp.send_cq);
	struct hpu_cq *rcq = qp->vqp.qp.recv_cq ? hpu_cq(qp->vqp.qp.recv_cq) : NULL;

	hpu_cq_clean(&scq->ring, qp->qpn);
	if (rcq && rcq != scq)
		hpu_cq_clean(&rcq->ring, qp->qpn);
}

static int hpu_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			 int mask)
{
	struct hpu_qp *qp = hpu_qp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, mask, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (mask & IBV_QP_QKEY)
		qp->qkey = attr->qkey;
	if (!(mask & IBV_QP_STATE))
		return 0;
	if (attr->qp_state != IBV_QPS_RESET) {
		hpu_qp_lock_all(qp);
		__atomic_store_n(&qp->in_error, attr->qp_state == IBV_QPS_ERR,
				 __ATOMIC_SEQ_CST);
		hpu_qp_unlock_all(qp);
		/*
		 * The engine flushed the receives up to the index it read at
		 * the MODIFY; one posted since then by a thread that loaded
		 * in_error before the store above is flushed by this ring
		 * (hpu_post_recv() rings itself once it sees the flag).
		 */
		if (attr->qp_state == IBV_QPS_ERR)
			hpu_ring_sq(qp);
		return 0;
	}
	/*
	 * RESET empties the queues without completions: start over at 0, and
	 * drop the QP's completions still in its CQs, under the CQs' locks
	 * so no poller counts them against the new queues.
	 */
	hpu_cq_lock_pair(qp, true);
	hpu_qp_lock_all(qp);
	__atomic_store_n(&qp->in_error, false, __ATOMIC_SEQ_CST);
	hpu_qp_clean_cqs(qp);
	hpu_wq_reset(&qp->sq);
	if (!qp->has_srq)
		hpu_wq_reset(&qp->rq);
	hpu_qp_unlock_all(qp);
	hpu_cq_lock_pair(qp, false);
	return 0;
}

static int hpu_destroy_qp(struct ibv_qp *ibqp)
{
	struct hpu_context *ctx = hpu_ctx(ibqp->context);
	struct hpu_qp *qp = hpu_qp(ibqp);
	uint32_t qpn = ibqp->qp_num;
	int ret;

	/*
	 * A failure (the kernel's -EIO when the device did not confirm the
	 * destroy) keeps the QP and its rings: the device may still write
	 * them. The QP stays usable for nothing but another destroy.
	 */
	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	/* No poller is inside the QP while it leaves the table, and its
	 * completions still in the CQs go with it: a later QP given the
	 * same QPN must not count them.
	 */
	hpu_cq_lock_pair(qp, true);
	hpu_qp_clean_cqs(qp);
	hpu_qp_table_set(ctx, qpn, NULL);
	hpu_cq_lock_pair(qp, false);
	hpu_qp_free(qp);
	return 0;
}

/* ---- Address handles (UD) ---- */

static struct ibv_ah *hpu_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct hpu_create_ah_resp resp = {};
	struct hpu_ah *ah;
	int ret;

	/* RoCE: every packet has an IP header, so every AH a GRH. */
	if (!attr->is_global) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ret = ibv_cmd_create_ah(pd, &ah->ibah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	memcpy(ah->av.dmac, resp.drv.dmac, sizeof(ah->av.dmac));
	ah->av.sgid_index = attr->grh.sgid_index;
	ah->av.hop_limit = attr->grh.hop_limit;
	ah->av.traffic_class = attr->grh.traffic_class;
	ah->av.flow_label = htole32(attr->grh.flow_label & 0xfffff);
	memcpy(ah->av.dgid, attr->grh.dgid.raw, sizeof(ah->av.dgid));
	return &ah->ibah;
}

static int hpu_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (!ret)
		free(hpu_ah(ibah));
	return ret;
}

/* ---- Context and device ---- */

static void hpu_free_context(struct ibv_context *ibctx)
{
	struct hpu_context *ctx = hpu_ctx(ibctx);
	unsigned int i;

	for (i = 0; i < HPU_QP_TABLE_SIZE; i++)
		free(ctx->qp_table[i]);
	pthread_mutex_destroy(&ctx->qp_table_lock);
	if (ctx->db_page)
		munmap(ctx->db_page, HPU_IB_DB_PAGE_SIZE);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops hpu_ctx_ops = {
	.alloc_pd = hpu_alloc_pd,
	.create_ah = hpu_create_ah,
	.create_cq = hpu_create_cq,
	.create_cq_ex = hpu_create_cq_ex,
	.create_qp = hpu_create_qp,
	.create_qp_ex = hpu_create_qp_ex,
	.create_srq = hpu_create_srq,
	.dealloc_pd = hpu_dealloc_pd,
	.dereg_mr = hpu_dereg_mr,
	.destroy_ah = hpu_destroy_ah,
	.destroy_cq = hpu_destroy_cq,
	.destroy_qp = hpu_destroy_qp,
	.destroy_srq = hpu_destroy_srq,
	.free_context = hpu_free_context,
	.modify_qp = hpu_modify_qp,
	.modify_srq = hpu_modify_srq,
	.poll_cq = hpu_poll_cq,
	.post_recv = hpu_post_recv,
	.post_send = hpu_post_send,
	.post_srq_recv = hpu_post_srq_recv,
	.query_device_ex = hpu_query_device_ex,
	.query_port = hpu_query_port,
	.query_qp = hpu_query_qp,
	.query_srq = hpu_query_srq,
	.reg_dmabuf_mr = hpu_reg_dmabuf_mr,
	.reg_mr = hpu_reg_mr,
	.req_notify_cq = hpu_req_notify_cq,
};

static struct verbs_context *hpu_alloc_context(struct ibv_device *ibdev,
					       int cmd_fd, void *private_data)
{
	struct hpu_get_context_resp resp = {};
	struct hpu_get_context_cmd cmd = {};
	struct hpu_context *ctx;
	int err;

	/* Fails with errno set; every path below sets errno too. */
	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	pthread_mutex_init(&ctx->qp_table_lock, NULL);

	/* The ibv_cmd_* calls return the error (errno is not theirs to set). */
	err = ibv_cmd_get_context(&ctx->vctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (err) {
		verbs_err(&ctx->vctx, "hpu: %s: GET_CONTEXT failed: %s\n",
			  ibdev->name, strerror(err));
		goto err_free;
	}
	ctx->max_inline = resp.drv.max_inline;
	if (resp.drv.cqe_size != HPU_IB_CQE_SIZE) {
		err = EPROTO;
		verbs_err(&ctx->vctx, "hpu: %s: CQE size %u, expected %u\n",
			  ibdev->name, resp.drv.cqe_size, HPU_IB_CQE_SIZE);
		goto err_free;
	}
	ctx->db_page = mmap(NULL, HPU_IB_DB_PAGE_SIZE, PROT_WRITE, MAP_SHARED,
			    cmd_fd, (off_t)resp.drv.db_mmap_offset);
	if (ctx->db_page == MAP_FAILED) {
		err = errno;
		ctx->db_page = NULL;
		verbs_err(&ctx->vctx, "hpu: %s: doorbell page mmap failed: %s\n",
			  ibdev->name, strerror(err));
		goto err_free;
	}

	verbs_set_ops(&ctx->vctx, &hpu_ctx_ops);
	return &ctx->vctx;

err_free:
	pthread_mutex_destroy(&ctx->qp_table_lock);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = err;
	return NULL;
}

static struct verbs_device *hpu_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct hpu_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->abi_version = sysfs_dev->abi_ver;
	return &dev->vdev;
}

static void hpu_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct hpu_device, vdev));
}

/*
 * Matched by the parent's modalias (hpu-abi.h), never by name: an rxe or
 * siw device a user named "hpu0" is not ours. No driver id exists for an
 * out-of-tree driver (RDMA_DRIVER_UNKNOWN).
 */
static const struct verbs_match_ent hpu_match_table[] = {
	VERBS_MODALIAS_MATCH(HPU_IB_MODALIAS, NULL),
	{}
};

static const struct verbs_device_ops hpu_dev_ops = {
	.name = "hpu",
	.match_min_abi_version = HPU_IB_UVERBS_ABI_VERSION,
	.match_max_abi_version = HPU_IB_UVERBS_ABI_VERSION,
	.match_table = hpu_match_table,
	.alloc_device = hpu_alloc_device,
	.uninit_device = hpu_uninit_device,
	.alloc_context = hpu_alloc_context,
};

PROVIDER_DRIVER(hpu, hpu_dev_ops);
