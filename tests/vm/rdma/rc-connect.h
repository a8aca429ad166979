/* SPDX-License-Identifier: MIT */
/*
 * The RC connection of the guest's libibverbs tests (hbm-rdma.c,
 * provider-verbs.c): one QP taken INIT -> RTR -> RTS towards a peer QP on
 * another port of the same wire, with the parameters both use.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_TEST_RC_CONNECT_H
#define HPU_TEST_RC_CONNECT_H

#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

/*
 * An RC QP on one CQ, @depth WRs and one SGE each way, every send signalled
 * or only those that ask (@sig_all). NULL with errno on failure.
 */
static inline struct ibv_qp *rc_create_qp(struct ibv_pd *pd, struct ibv_cq *cq,
					  uint32_t depth, int sig_all)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.send_cq = cq;
	a.recv_cq = cq;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = sig_all;
	a.cap.max_send_wr = depth;
	a.cap.max_recv_wr = depth;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	return ibv_create_qp(pd, &a);
}

/* 0, or the error of the step named in *step ("INIT", "RTR", "RTS"). */
static inline int rc_connect(struct ibv_qp *qp, uint8_t port, int sgid, const union ibv_gid *dgid,
			     uint32_t dqpn, unsigned int access, const char **step)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port;
	a.qp_access_flags = access;
	*step = "INIT";
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = (uint8_t)sgid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = port;
	*step = "RTR";
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 18;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 100;
	a.max_rd_atomic = 4;
	*step = "RTS";
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

#endif /* HPU_TEST_RC_CONNECT_H */
