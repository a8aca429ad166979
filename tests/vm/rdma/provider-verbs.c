// SPDX-License-Identifier: MIT
/*
 * provider-verbs: the hpu provider's own behaviour through libibverbs, on a
 * real device (run by tests/vm/rdma/rdma-tests.sh with RDMAV_DRIVERS set).
 *
 *   hpu-provider-verbs IBDEV PORT_A GID_A PORT_B GID_B
 *
 * PORT_x are ib port numbers wired to each other, GID_x the RoCE v2 GID
 * index of each port's address. Checks:
 *   - a CQ with IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN is refused (EOPNOTSUPP);
 *   - start_poll with an unknown comp_mask bit is refused (EINVAL) and
 *     leaves the CQ usable;
 *   - the flush completions of a QP moved to RESET are gone from its CQ,
 *     and its queues are whole again;
 *   - the completions of a destroyed QP are gone from its CQ, and the next
 *     QP gets another QPN;
 *   - receives posted after the device moved an RC QP to ERR on its own,
 *     before the error completion was polled, are flushed once it is.
 * Each check prints PASS or FAIL; the exit status is the number of
 * failures (100 and up: could not run).
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rc-connect.h"

static int failures;
static unsigned int time_scale = 1;

__attribute__((format(printf, 3, 4)))
static void check(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS vm/rdma/provider/%s\n", what);
		return;
	}
	printf("FAIL vm/rdma/provider/%s: ", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failures++;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "provider-verbs: %s: %s\n", what, strerror(err));
	exit(100);
}

static void settle(void)
{
	/* Time for the device model to act on a doorbell or a command. */
	usleep(500000 * time_scale);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp *qp = rc_create_qp(pd, cq, 4, 0);

	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state st, uint8_t port)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE;

	memset(&a, 0, sizeof(a));
	a.qp_state = st;
	if (st == IBV_QPS_INIT) {
		a.port_num = port;
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask);
}

static void connect_qp(struct ibv_qp *qp, uint8_t port, int sgid, const union ibv_gid *dgid,
		       uint32_t dqpn)
{
	const char *step;
	int ret;

	ret = rc_connect(qp, port, sgid, dgid, dqpn, IBV_ACCESS_LOCAL_WRITE, &step);
	if (ret) {
		fprintf(stderr, "modify to %s: ", step);
		die("ibv_modify_qp", ret);
	}
}

static int post_recv(struct ibv_qp *qp, uint64_t wr_id, struct ibv_mr *mr)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;

	sge.addr = (uintptr_t)mr->addr;
	sge.length = 64;
	sge.lkey = mr->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad);
}

/* Completions polled within about @sec seconds (scaled), at most @max. */
static int poll_for(struct ibv_cq *cq, struct ibv_wc *wc, int max, int want, unsigned int sec)
{
	time_t end = time(NULL) + (time_t)(sec * time_scale);
	int n = 0, r;

	do {
		r = ibv_poll_cq(cq, max - n, wc + n);
		if (r < 0)
			return r;
		n += r;
		if (n >= want)
			break;
		usleep(10000);
	} while (time(NULL) < end);
	return n;
}

static void t_cq_flags(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex a;
	struct ibv_poll_cq_attr pa;
	struct ibv_cq_ex *cqx;
	int ret;

	memset(&a, 0, sizeof(a));
	a.cqe = 4;
	a.wc_flags = IBV_WC_STANDARD_FLAGS;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	errno = 0;
	cqx = ibv_create_cq_ex(ctx, &a);
	check(!cqx && errno == EOPNOTSUPP,
	      "a CQ asking IGNORE_OVERRUN is refused with EOPNOTSUPP",
	      "created: %s, errno %d", cqx ? "yes" : "no", errno);
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));

	a.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	cqx = ibv_create_cq_ex(ctx, &a);
	if (!cqx)
		die("ibv_create_cq_ex", errno);
	memset(&pa, 0, sizeof(pa));
	pa.comp_mask = 1;
	ret = ibv_start_poll(cqx, &pa);
	check(ret == EINVAL, "start_poll with an unknown comp_mask bit is refused with EINVAL",
	      "returned %d", ret);
	pa.comp_mask = 0;
	ret = ret == 0 ? 0 : ibv_start_poll(cqx, &pa);	/* 0: end_poll below */
	if (ret == 0)
		ibv_end_poll(cqx);
	check(ret == ENOENT || ret == 0, "the CQ polls after the refused start_poll",
	      "returned %d", ret);
	ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
}

static void t_reset_destroy(struct ibv_pd *pd, struct ibv_mr *mr, uint8_t port)
{
	struct ibv_cq *cq = ibv_create_cq(pd->context, 16, NULL, NULL, 0);
	struct ibv_qp *qp, *qp2;
	struct ibv_wc wc[8];
	uint32_t qpn;
	int i, n, ok;

	if (!cq)
		die("ibv_create_cq", errno);

	/* RESET: two receives flushed in ERR, not polled, then RESET. */
	qp = make_qp(pd, cq);
	if (to_state(qp, IBV_QPS_INIT, port) || to_state(qp, IBV_QPS_ERR, port))
		die("modify to INIT, ERR", EINVAL);
	if (post_recv(qp, 1, mr) || post_recv(qp, 2, mr))
		die("ibv_post_recv", EINVAL);
	settle();
	if (to_state(qp, IBV_QPS_RESET, port))
		die("modify to RESET", EINVAL);
	n = poll_for(cq, wc, 8, 1, 1);
	check(n == 0, "the completions of a QP moved to RESET are gone from its CQ",
	      "%d polled (first wr_id %" PRIu64 ", %s)", n, n > 0 ? wc[0].wr_id : 0,
	      n > 0 ? ibv_wc_status_str(wc[0].status) : "-");
	ok = !to_state(qp, IBV_QPS_INIT, port);
	for (i = 0; ok && i < 4; i++)
		ok = !post_recv(qp, 10 + (uint64_t)i, mr);
	check(ok && post_recv(qp, 20, mr) == ENOMEM,
	      "after RESET the receive queue holds its whole depth again", "posted %d of 4", i);

	/* Destroy: the same with a destroyed QP and a new one after it. */
	if (to_state(qp, IBV_QPS_ERR, port))
		die("modify to ERR", EINVAL);
	settle();
	qpn = qp->qp_num;
	if (ibv_destroy_qp(qp))
		die("ibv_destroy_qp", errno);
	qp2 = make_qp(pd, cq);
	check(qp2->qp_num != qpn, "a new QP does not get the QPN just freed",
	      "QPN %u again", qpn);
	n = poll_for(cq, wc, 8, 1, 1);
	check(n == 0, "the completions of a destroyed QP are gone from its CQ",
	      "%d polled (QPN %u, first wr_id %" PRIu64 ")", n, n > 0 ? wc[0].qp_num : 0,
	      n > 0 ? wc[0].wr_id : 0);
	ibv_destroy_qp(qp2);
	ibv_destroy_cq(cq);
}

/*
 * Post @swr (a SEND bound to fail: the device completes it in error and
 * moves @qp to ERR on its own), then a receive the provider does not yet
 * know to ring for, and check both: the send's error and the receive's
 * flush once the error is polled.
 */
static void send_fails_recv_flushed(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *swr,
				    struct ibv_mr *mr, uint64_t recv_id, const char *what_err,
				    const char *what_flush)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc[8];
	int n, i, flushed = 0, err = 0;

	if (ibv_post_send(qp, swr, &bad))
		die("ibv_post_send", EINVAL);
	settle();
	/* Posted now, the provider does not know yet: no doorbell. */
	if (post_recv(qp, recv_id, mr))
		die("ibv_post_recv", EINVAL);
	settle();
	n = poll_for(cq, wc, 8, 2, 5);
	for (i = 0; i < n; i++) {
		if (wc[i].wr_id == swr->wr_id && wc[i].status != IBV_WC_SUCCESS)
			err = 1;
		if (wc[i].wr_id == recv_id && wc[i].status == IBV_WC_WR_FLUSH_ERR)
			flushed = 1;
	}
	check(err, what_err, "%d completions", n);
	check(flushed, what_flush, "%d completions, no flush of the receive", n);
}

static void t_err_recv(struct ibv_pd *pd, struct ibv_mr *mr, int pa, int ia, int pb, int ib)
{
	struct ibv_cq *cq = ibv_create_cq(pd->context, 16, NULL, NULL, 0);
	struct ibv_send_wr swr;
	union ibv_gid ga, gb;
	struct ibv_qp *qa, *qb;
	struct ibv_sge sge;

	if (!cq)
		die("ibv_create_cq", errno);
	if (ibv_query_gid(pd->context, (uint8_t)pa, ia, &ga) ||
	    ibv_query_gid(pd->context, (uint8_t)pb, ib, &gb))
		die("ibv_query_gid", errno);
	qa = make_qp(pd, cq);
	qb = make_qp(pd, cq);
	connect_qp(qa, (uint8_t)pa, ia, &gb, qb->qp_num);
	connect_qp(qb, (uint8_t)pb, ib, &ga, qa->qp_num);

	/* A SEND with a bad lkey: the device completes it LOC_PROT_ERR and
	 * moves the QP to ERR on its own.
	 */
	sge.addr = (uintptr_t)mr->addr;
	sge.length = 8;
	sge.lkey = mr->lkey ^ 0x1;
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 50;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	send_fails_recv_flushed(qa, cq, &swr, mr, 77, "a SEND with a bad lkey completes in error",
				"a receive posted after the device put the QP in ERR is flushed once the error is polled");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_cq(cq);
}

/*
 * The same on a UD QP: a failed UD send moves it to ERR too (only a
 * received datagram that does not fit leaves a UD QP in RTS, roce.md),
 * so a receive posted afterwards is flushed once the error is polled.
 */
static void t_ud_err_recv(struct ibv_pd *pd, struct ibv_mr *mr, int pa, int ia, int pb, int ib)
{
	struct ibv_cq *cq = ibv_create_cq(pd->context, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr ia_attr;
	struct ibv_send_wr swr;
	struct ibv_qp_attr a;
	struct ibv_ah_attr ah_attr;
	union ibv_gid gb;
	struct ibv_ah *ah;
	struct ibv_qp *qp;
	struct ibv_sge sge;

	if (!cq)
		die("ibv_create_cq", errno);
	if (ibv_query_gid(pd->context, (uint8_t)pb, ib, &gb))
		die("ibv_query_gid", errno);
	memset(&ia_attr, 0, sizeof(ia_attr));
	ia_attr.send_cq = cq;
	ia_attr.recv_cq = cq;
	ia_attr.qp_type = IBV_QPT_UD;
	ia_attr.cap.max_send_wr = 4;
	ia_attr.cap.max_recv_wr = 4;
	ia_attr.cap.max_send_sge = 1;
	ia_attr.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &ia_attr);
	if (!qp)
		die("ibv_create_qp(UD)", errno);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = (uint8_t)pa;
	a.qkey = 0x11111111;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("ibv_modify_qp(UD INIT)", errno);
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("ibv_modify_qp(UD RTR)", errno);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("ibv_modify_qp(UD RTS)", errno);
	memset(&ah_attr, 0, sizeof(ah_attr));
	ah_attr.is_global = 1;
	ah_attr.port_num = (uint8_t)pa;
	ah_attr.grh.dgid = gb;
	ah_attr.grh.sgid_index = (uint8_t)ia;
	ah_attr.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &ah_attr);
	if (!ah)
		die("ibv_create_ah", errno);

	sge.addr = (uintptr_t)mr->addr;
	sge.length = 8;
	sge.lkey = mr->lkey ^ 0x1;
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 60;
	swr.sg_list = &sge;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = 1;
	swr.wr.ud.remote_qkey = 0x11111111;
	send_fails_recv_flushed(qp, cq, &swr, mr, 78, "a UD SEND with a bad lkey completes in error",
				"a receive posted after the device put the UD QP in ERR is flushed once the error is polled");
	ibv_destroy_qp(qp);
	ibv_destroy_ah(ah);
	ibv_destroy_cq(cq);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	const char *ts = getenv("HPU_TIME_SCALE");
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	void *buf;
	int i, n;

	if (argc != 6) {
		fprintf(stderr, "usage: %s IBDEV PORT_A GID_A PORT_B GID_B\n", argv[0]);
		return 100;
	}
	if (ts && atoi(ts) > 0)
		time_scale = (unsigned int)atoi(ts);
	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list", errno);
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("ibv_open_device", ENODEV);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	if (posix_memalign(&buf, 4096, 4096))
		die("posix_memalign", ENOMEM);
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		die("ibv_reg_mr", errno);

	t_cq_flags(ctx);
	t_reset_destroy(pd, mr, (uint8_t)atoi(argv[2]));
	t_err_recv(pd, mr, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	t_ud_err_recv(pd, mr, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));

	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return failures;
}
