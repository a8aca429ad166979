// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu_ib: queue pairs (RC and UD): creation from the provider's rings,
 * state transitions through the engine's MODIFY, query and destruction
 * (Documentation/hw/roce.md, "QP image"; Documentation/driver/rdma.md).
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/etherdevice.h>
#include <linux/unaligned.h>

#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "hpu_ib.h"
#include "hpu_rdma.h"
#include "hpu-abi.h"

#define HPU_IB_QP_MASK	(IB_QP_STATE | IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS | \
			 IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY | \
			 IB_QP_AV | IB_QP_PATH_MTU | IB_QP_TIMEOUT | \
			 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_RQ_PSN | \
			 IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MIN_RNR_TIMER | \
			 IB_QP_SQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | \
			 IB_QP_DEST_QPN)
/* What the driver resolves itself; the rest goes to the engine. */
#define HPU_IB_QP_MASK_DRV	(IB_QP_CUR_STATE | IB_QP_PKEY_INDEX)
#define HPU_IB_MAX_RD_ATOMIC	16

static struct hpu_ib_qp *to_hqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct hpu_ib_qp, ibqp);
}

static u32 to_cqn(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct hpu_ib_cq, ibcq)->cqn;
}

/* Bytes of a send WQE before its SGEs or inline data. */
static u32 hpu_ib_sq_header(enum ib_qp_type type)
{
	return sizeof(struct hpu_ib_send_wqe) +
	       (type == IB_QPT_UD ? sizeof(struct hpu_ib_ud_av) : 0);
}

/* Do the rings of @req hold what @init asks? */
static int hpu_ib_qp_check(struct hpu_ib_dev *dev,
			   const struct hpu_ib_create_qp *req,
			   const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;
	u32 sq_stride = BIT(req->sq_log_stride), hdr = hpu_ib_sq_header(init->qp_type);

	if (req->flags)
		return -EINVAL;
	if (req->sq_log_entries < HPU_IB_WQ_LOG_ENTRIES_MIN ||
	    req->sq_log_entries > HPU_IB_WQ_LOG_ENTRIES_MAX ||
	    req->sq_log_stride < HPU_IB_SQ_LOG_STRIDE_MIN ||
	    req->sq_log_stride > HPU_IB_SQ_LOG_STRIDE_MAX ||
	    BIT(req->sq_log_entries) > dev->max_wr ||
	    cap->max_send_wr > BIT(req->sq_log_entries) ||
	    cap->max_send_sge > dev->max_sge || hdr > sq_stride ||
	    cap->max_send_sge * sizeof(struct hpu_ib_sge) > sq_stride - hdr ||
	    cap->max_inline_data > sq_stride - hdr)
		return -EINVAL;
	if (!req->sq_buf_addr || !IS_ALIGNED(req->sq_buf_addr, sq_stride) ||
	    !req->db_addr || !IS_ALIGNED(req->db_addr, 8))
		return -EINVAL;
	if (init->srq)
		return req->rq_buf_addr || req->rq_log_entries ||
		       req->rq_log_stride ? -EINVAL : 0;
	if (req->rq_log_entries < HPU_IB_WQ_LOG_ENTRIES_MIN ||
	    req->rq_log_entries > HPU_IB_WQ_LOG_ENTRIES_MAX ||
	    req->rq_log_stride < HPU_IB_RQ_LOG_STRIDE_MIN ||
	    req->rq_log_stride > HPU_IB_RQ_LOG_STRIDE_MAX ||
	    BIT(req->rq_log_entries) > dev->max_wr ||
	    cap->max_recv_wr > BIT(req->rq_log_entries) ||
	    cap->max_recv_sge > dev->max_sge ||
	    sizeof(struct hpu_ib_recv_wqe) +
	    cap->max_recv_sge * sizeof(struct hpu_ib_sge) > BIT(req->rq_log_stride))
		return -EINVAL;
	if (!req->rq_buf_addr || !IS_ALIGNED(req->rq_buf_addr, BIT(req->rq_log_stride)))
		return -EINVAL;
	return 0;
}

/* What the rings really hold, reported back through @init. */
static void hpu_ib_qp_caps(struct hpu_ib_dev *dev, struct hpu_ib_qp *qp,
			   const struct hpu_ib_create_qp *req,
			   struct ib_qp_init_attr *init)
{
	u32 room = BIT(req->sq_log_stride) - hpu_ib_sq_header(init->qp_type);
	struct ib_qp_cap *cap = &init->cap;

	cap->max_send_wr = BIT(req->sq_log_entries);
	cap->max_send_sge = min_t(u32, room / sizeof(struct hpu_ib_sge),
				  dev->max_sge);
	cap->max_inline_data = room;
	if (!init->srq) {
		cap->max_recv_wr = BIT(req->rq_log_entries);
		cap->max_recv_sge = min_t(u32, (BIT(req->rq_log_stride) -
					  sizeof(struct hpu_ib_recv_wqe)) /
					  sizeof(struct hpu_ib_sge), dev->max_sge);
	}
	qp->cap = *cap;
}

/*
 * A UD QP's path MTU is fixed at CREATE (no transition takes it): the
 * smallest active MTU of the ports, whose netdevs it may send through.
 */
static enum ib_mtu hpu_ib_ud_mtu(struct hpu_ib_dev *dev)
{
	enum ib_mtu mtu = IB_MTU_4096;
	struct net_device *ndev;
	unsigned int p;

	for (p = 1; p <= dev->num_ports; p++) {
		ndev = ib_device_get_netdev(&dev->ibdev, p);
		if (!ndev)
			continue;
		mtu = min_t(enum ib_mtu, mtu, iboe_get_mtu(READ_ONCE(ndev->mtu)) ?: IB_MTU_256);
		dev_put(ndev);
	}
	return mtu;
}

/* The fixed part of a QP image: what CREATE sets. */
static void hpu_ib_qp_image(struct hpu_ib_qp *qp, const struct hpu_ib_create_qp *req,
			    u8 *image)
{
	struct ib_qp *ibqp = &qp->ibqp;
	struct hpu_ib_ucontext *uc = qp->uc;

	image[1] = ibqp->qp_type;
	image[3] = qp->attr.path_mtu;
	put_unaligned_le16(hpu_rdma_as_asid(uc->as), &image[8]);
	put_unaligned_le16(uc->db_page, &image[10]);
	put_unaligned_le32(to_pdn(ibqp->pd), &image[12]);
	put_unaligned_le32(to_cqn(ibqp->send_cq), &image[16]);
	put_unaligned_le32(to_cqn(ibqp->recv_cq), &image[20]);
	if (ibqp->srq)
		put_unaligned_le32(container_of(ibqp->srq, struct hpu_ib_srq,
						ibsrq)->srqn + 1, &image[24]);
	image[28] = req->sq_log_entries;
	image[29] = req->sq_log_stride;
	image[30] = req->rq_log_entries;
	image[31] = req->rq_log_stride;
	put_unaligned_le64(qp->sq.dva, &image[32]);
	put_unaligned_le64(qp->rq.dva, &image[40]);
	put_unaligned_le64(qp->db.dva, &image[48]);
}

static int hpu_ib_qp_map(struct hpu_ib_dev *dev, struct hpu_ib_qp *qp,
			 const struct hpu_ib_create_qp *req)
{
	struct hpu_ib_ucontext *uc = qp->uc;
	int ret;

	/* The engine only reads the rings and the doorbell record. */
	ret = hpu_ib_umap_get(dev, uc, req->sq_buf_addr,
			      (size_t)BIT(req->sq_log_entries) << req->sq_log_stride,
			      false, &qp->sq);
	if (ret)
		return ret;
	if (req->rq_buf_addr) {
		ret = hpu_ib_umap_get(dev, uc, req->rq_buf_addr,
				      (size_t)BIT(req->rq_log_entries) << req->rq_log_stride,
				      false, &qp->rq);
		if (ret)
			goto err_sq;
	}
	ret = hpu_ib_umap_get(dev, uc, req->db_addr, 8, false, &qp->db);
	if (ret)
		goto err_rq;
	return 0;

err_rq:
	hpu_ib_umap_put(dev, uc, &qp->rq);
err_sq:
	hpu_ib_umap_put(dev, uc, &qp->sq);
	return ret;
}

static void hpu_ib_qp_unmap(struct hpu_ib_dev *dev, struct hpu_ib_qp *qp)
{
	hpu_ib_umap_put(dev, qp->uc, &qp->db);
	hpu_ib_umap_put(dev, qp->uc, &qp->rq);
	hpu_ib_umap_put(dev, qp->uc, &qp->sq);
}

/* The QP's memory outlives it: the engine may still use it. */
static void hpu_ib_qp_keep(struct hpu_ib_dev *dev, struct hpu_ib_qp *qp)
{
	hpu_ib_umap_keep(dev, &qp->db);
	hpu_ib_umap_keep(dev, &qp->rq);
	hpu_ib_umap_keep(dev, &qp->sq);
}

/*
 * A QPN from dev->next_qpn on, wrapping to 2 (QPNs 0 and 1 are the
 * special QPs): cyclic, so a destroyed QP's number comes back only after
 * every other one was handed out.
 */
static int hpu_ib_qpn_alloc(struct hpu_ib_dev *dev)
{
	u32 start = READ_ONCE(dev->next_qpn);
	int ret;

	if (start < 2 || start >= dev->max_qp)
		start = 2;
	ret = ida_alloc_range(&dev->qp_ida, start, dev->max_qp - 1, GFP_KERNEL);
	if (ret == -ENOSPC && start > 2)
		ret = ida_alloc_range(&dev->qp_ida, 2, start - 1, GFP_KERNEL);
	if (ret >= 0)
		WRITE_ONCE(dev->next_qpn, ret + 1 < dev->max_qp ? ret + 1 : 2);
	return ret;
}

int hpu_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		     struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibqp->device);
	struct hpu_ib_qp *qp = to_hqp(ibqp);
	struct hpu_ib_create_qp_resp resp = {};
	struct hpu_ib_create_qp req = {};
	u8 image[HPU_ROCE_IMAGE_SIZE] = {};
	struct hpu_ib_ucontext *uc;
	int ret;

	uc = udata ? udata_huc(udata) : NULL;
	if (!uc)
		return -EOPNOTSUPP;
	if (init->qp_type != IB_QPT_RC && init->qp_type != IB_QPT_UD)
		return -EOPNOTSUPP;
	if (init->create_flags || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	ret = hpu_ib_udata_in(udata, &req, sizeof(req), sizeof(req));
	if (ret)
		return ret;
	ret = hpu_ib_qp_check(dev, &req, init);
	if (ret)
		return ret;
	ret = hpu_ib_quota_get(dev, uc, HPU_IB_QUOTA_QP);
	if (ret)
		return ret;
	qp->uc = uc;
	mutex_init(&qp->lock);
	qp->state = IB_QPS_RESET;
	ret = hpu_ib_qpn_alloc(dev);
	if (ret < 0)
		goto err_quota;
	qp->qpn = ret;
	ret = hpu_ib_qp_map(dev, qp, &req);
	if (ret)
		goto err_ida;
	ret = xa_insert(&dev->qps, qp->qpn, qp, GFP_KERNEL);
	if (ret)
		goto err_unmap;

	if (init->qp_type == IB_QPT_UD)
		qp->attr.path_mtu = hpu_ib_ud_mtu(dev);
	hpu_ib_qp_image(qp, &req, image);
	ret = hpu_ib_cmd(dev, HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, qp->qpn, image);
	if (ret)
		goto err_xa;

	ibqp->qp_num = qp->qpn;
	hpu_ib_qp_caps(dev, qp, &req, init);
	resp.qpn = qp->qpn;
	resp.max_inline = qp->cap.max_inline_data;
	ret = hpu_ib_udata_out(udata, &resp, sizeof(resp));
	if (ret)
		goto err_destroy;
	return 0;

err_destroy:
	if (!hpu_ib_obj_retire(dev, uc, HPU_ROCE_TYPE_QP, &dev->qps, qp->qpn, true)) {
		/* Memory kept (the engine may use it), but uncounted as a destroy would. */
		hpu_ib_qp_keep(dev, qp);
		hpu_ib_quota_put(uc, HPU_IB_QUOTA_QP);
		return ret;
	}
	goto err_unmap;
err_xa:
	if (!hpu_ib_create_failed(dev, uc, HPU_ROCE_TYPE_QP, &dev->qps, qp->qpn, ret)) {
		hpu_ib_qp_keep(dev, qp);
		mutex_destroy(&qp->lock);
		hpu_ib_quota_put(uc, HPU_IB_QUOTA_QP);
		return ret;
	}
err_unmap:
	hpu_ib_qp_unmap(dev, qp);
err_ida:
	ida_free(&dev->qp_ida, qp->qpn);
err_quota:
	mutex_destroy(&qp->lock);
	hpu_ib_quota_put(uc, HPU_IB_QUOTA_QP);
	return ret;
}

/* Check the attributes @mask names; what the core does not check. */
static int hpu_ib_modify_check(struct hpu_ib_dev *dev, struct hpu_ib_qp *qp,
			       const struct ib_qp_attr *attr, int mask)
{
	if (mask & ~HPU_IB_QP_MASK)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PORT) &&
	    (attr->port_num < 1 || attr->port_num > dev->num_ports))
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	/*
	 * max_rd_atomic above HPU_IB_MAX_RD_ATOMIC is taken as the maximum
	 * (hpu_ib_modify_merge()): perftest and others pass the peer's
	 * responder depth (128 for rxe), and fewer READs in flight than the
	 * peer allows is always safe. The responder's depth is a promise to
	 * the peer and is refused beyond what the engine holds.
	 */
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > HPU_IB_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_READ |
				       IB_ACCESS_REMOTE_ATOMIC |
				       IB_ACCESS_LOCAL_WRITE)))
		return -EINVAL;
	if ((mask & IB_QP_AV) &&
	    (attr->ah_attr.type != RDMA_AH_ATTR_TYPE_ROCE ||
	     !(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH) ||
	     rdma_ah_read_grh(&attr->ah_attr)->sgid_index >= HPU_ROCE_PORT_GIDS))
		return -EINVAL;
	return 0;
}

/* Merge the attributes @mask names into the QP's copy. */
static void hpu_ib_modify_merge(struct hpu_ib_qp *qp,
				const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		rdma_replace_ah_attr(&a->ah_attr, &attr->ah_attr);
		/*
		 * A flow label is 20 bits; callers pass more (UCX sets the
		 * complement of its path index, all ones for the first path,
		 * and relies on rdma-core's and rxe's use of the low 20 bits).
		 * Kept as used, and as QUERY reports it.
		 */
		if (rdma_ah_get_ah_flags(&a->ah_attr) & IB_AH_GRH)
			rdma_ah_retrieve_grh(&a->ah_attr)->flow_label &=
				IB_GRH_FLOWLABEL_MASK;
	}
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = min_t(u8, attr->max_rd_atomic, HPU_IB_MAX_RD_ATOMIC);
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
}

/* The MODIFY image: state, mask and every attribute of @a. */
static void hpu_ib_modify_image(struct hpu_ib_qp *qp, const struct ib_qp_attr *a,
				enum ib_qp_state state, int mask, u8 *image)
{
	const struct ib_global_route *grh;

	image[0] = state;
	image[1] = qp->ibqp.qp_type;
	image[2] = a->port_num ? a->port_num - 1 : 0;
	image[3] = a->path_mtu;
	/* STATE always set, as the engine wants. */
	put_unaligned_le32((mask & ~HPU_IB_QP_MASK_DRV) | IB_QP_STATE, &image[4]);
	put_unaligned_le32(a->qp_access_flags &
			   (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ),
			   &image[56]);
	put_unaligned_le32(a->qkey, &image[60]);
	put_unaligned_le32(a->dest_qp_num, &image[64]);
	put_unaligned_le32(a->sq_psn, &image[68]);
	put_unaligned_le32(a->rq_psn, &image[72]);
	image[76] = a->timeout;
	image[77] = a->retry_cnt;
	image[78] = a->rnr_retry;
	image[79] = a->min_rnr_timer;
	image[80] = a->max_rd_atomic;
	image[81] = a->max_dest_rd_atomic;
	if (!(rdma_ah_get_ah_flags(&a->ah_attr) & IB_AH_GRH))
		return;
	grh = rdma_ah_read_grh(&a->ah_attr);
	image[82] = grh->sgid_index;
	image[83] = grh->hop_limit;
	image[84] = grh->traffic_class;
	put_unaligned_le32(grh->flow_label, &image[88]);
	ether_addr_copy(&image[92], a->ah_attr.roce.dmac);
	memcpy(&image[100], grh->dgid.raw, sizeof(grh->dgid.raw));
}

int hpu_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibqp->device);
	struct hpu_ib_qp *qp = to_hqp(ibqp);
	u8 image[HPU_ROCE_IMAGE_SIZE] = {};
	enum ib_qp_state cur, new;
	struct ib_qp_attr *merged;
	int ret;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	ret = hpu_ib_modify_check(dev, qp, attr, mask);
	if (ret) {
		ibdev_dbg(&dev->ibdev, "QP %u: modify mask %#x refused: %d\n",
			  qp->qpn, mask, ret);
		return ret;
	}

	merged = kmalloc(sizeof(*merged), GFP_KERNEL);
	if (!merged)
		return -ENOMEM;
	mutex_lock(&qp->lock);
	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state;
	new = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		ibdev_dbg(&dev->ibdev, "QP %u: %u -> %u with mask %#x is not a transition\n",
			  qp->qpn, cur, new, mask);
		ret = -EINVAL;
		goto out;
	}
	if (new == IB_QPS_SQD) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	*merged = qp->attr;
	rdma_copy_ah_attr(&merged->ah_attr, &qp->attr.ah_attr);
	hpu_ib_modify_merge(qp, attr, mask);
	hpu_ib_modify_image(qp, &qp->attr, new, mask, image);
	ret = hpu_ib_cmd(dev, HPU_ROCE_OP_MODIFY, HPU_ROCE_TYPE_QP, qp->qpn, image);
	if (ret) {
		/* The engine refused: the QP keeps its old attributes. */
		rdma_destroy_ah_attr(&qp->attr.ah_attr);
		qp->attr = *merged;
	} else {
		rdma_destroy_ah_attr(&merged->ah_attr);
		qp->state = new;
	}
out:
	mutex_unlock(&qp->lock);
	kfree(merged);
	return ret;
}

int hpu_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_qp_init_attr *init)
{
	struct hpu_ib_dev *dev = to_hdev(ibqp->device);
	struct hpu_ib_qp *qp = to_hqp(ibqp);
	u8 image[HPU_ROCE_IMAGE_SIZE] = {};

	mutex_lock(&qp->lock);
	/* The engine moves a QP to ERR by itself: ask it. */
	if (!hpu_ib_cmd(dev, HPU_ROCE_OP_QUERY, HPU_ROCE_TYPE_QP, qp->qpn, image) &&
	    image[0] <= IB_QPS_ERR)
		qp->state = image[0];
	*attr = qp->attr;
	/* ib_query_qp()'s callers hold no reference to the GID attribute. */
	attr->ah_attr.grh.sgid_attr = NULL;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->cap = qp->cap;
	attr->pkey_index = 0;
	mutex_unlock(&qp->lock);

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = qp->cap;
	init->sq_sig_type = IB_SIGNAL_REQ_WR;
	return 0;
}

int hpu_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibqp->device);
	struct hpu_ib_qp *qp = to_hqp(ibqp);
	struct hpu_ib_ucontext *uc = qp->uc;

	if (hpu_ib_obj_retire(dev, uc, HPU_ROCE_TYPE_QP, &dev->qps, qp->qpn, true)) {
		hpu_ib_qp_unmap(dev, qp);
		ida_free(&dev->qp_ida, qp->qpn);
	} else {
		hpu_ib_qp_keep(dev, qp);
	}
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	mutex_destroy(&qp->lock);
	hpu_ib_quota_put(uc, HPU_IB_QUOTA_QP);
	return 0;
}
