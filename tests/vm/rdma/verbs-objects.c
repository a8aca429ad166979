// SPDX-License-Identifier: MIT
/*
 * verbs-objects: the hpu ib_device's verbs objects through uverbs' write()
 * commands (<rdma/ib_user_verbs.h>) and the provider ABI
 * (include/uapi/rdma/hpu-abi.h), without libibverbs: every byte of the
 * driver data is the test's, so reserved fields and bad sizes can be sent.
 * Run by tests/vm/rdma/rdma-tests.sh in the guest.
 *
 *   verbs-objects /dev/infiniband/uverbsN all [MAX_CQ]
 *	every check below; MAX_CQ: the ctx_max_cq parameter hpu_ib has
 *   verbs-objects /dev/infiniband/uverbsN contexts N
 *	open N contexts, print how many opened and the errno of the first
 *	refusal ("opened K errno E")
 *   verbs-objects /dev/infiniband/uverbsN hold
 *	open a context with a CQ, print "held", wait for a line on stdin,
 *	then print "after: <errno of ALLOC_PD>" (a reset took the device)
 *
 * Prints "PASS vm/rdma/<name>" or "FAIL vm/rdma/<name>: why" per check;
 * the exit status is the number of failures (at most 100).
 *
 * Copyright (c) 2026 The hpu authors
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/hpu-abi.h>

static int failures;

static void result(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		printf("PASS vm/rdma/%s\n", name);
	} else {
		printf("FAIL vm/rdma/%s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		failures++;
	}
	fflush(stdout);
}

/*
 * One write() command: @req starts with the core request (its first u64
 * the response pointer when @resp), driver data after it.
 * Return 0 or the errno.
 */
static int cmd(int fd, uint32_t op, void *req, size_t reqlen, void *resp,
	       size_t resplen)
{
	size_t len = sizeof(struct ib_uverbs_cmd_hdr) + reqlen;
	struct ib_uverbs_cmd_hdr *hdr;
	char *buf;
	ssize_t n;
	int err;

	buf = calloc(1, len);
	if (!buf)
		return ENOMEM;
	hdr = (struct ib_uverbs_cmd_hdr *)buf;
	hdr->command = op;
	hdr->in_words = len / 4;
	hdr->out_words = resplen / 4;
	if (resp)
		*(uint64_t *)req = (uintptr_t)resp;
	memcpy(buf + sizeof(*hdr), req, reqlen);
	n = write(fd, buf, len);
	err = n < 0 ? errno : 0;
	free(buf);
	return err;
}

struct ctx {
	int fd;
	struct hpu_ib_alloc_ucontext_resp drv;
};

static int get_context(int fd, const void *drv, size_t drvlen, struct ctx *c)
{
	struct {
		struct ib_uverbs_get_context core;
		char drv[64];
	} req = {};
	struct {
		struct ib_uverbs_get_context_resp core;
		struct hpu_ib_alloc_ucontext_resp drv;
	} resp = {};
	int err;

	memcpy(req.drv, drv, drvlen);
	err = cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &req,
		  sizeof(req.core) + drvlen, &resp, sizeof(resp));
	if (!err && c) {
		c->fd = fd;
		c->drv = resp.drv;
	}
	return err;
}

static int alloc_pd(int fd, uint32_t *pd)
{
	struct ib_uverbs_alloc_pd req = {};
	struct ib_uverbs_alloc_pd_resp resp = {};
	int err = cmd(fd, IB_USER_VERBS_CMD_ALLOC_PD, &req, sizeof(req), &resp,
		      sizeof(resp));

	*pd = resp.pd_handle;
	return err;
}

static int dealloc_pd(int fd, uint32_t pd)
{
	struct ib_uverbs_dealloc_pd req = { .pd_handle = pd };

	return cmd(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &req, sizeof(req), NULL, 0);
}

static int reg_mr(int fd, uint32_t pd, void *addr, size_t len, uint32_t access,
		  struct ib_uverbs_reg_mr_resp *out)
{
	struct ib_uverbs_reg_mr req = {
		.start = (uintptr_t)addr, .length = len, .hca_va = (uintptr_t)addr,
		.pd_handle = pd, .access_flags = access,
	};
	struct ib_uverbs_reg_mr_resp resp = {};
	int err = cmd(fd, IB_USER_VERBS_CMD_REG_MR, &req, sizeof(req), &resp,
		      sizeof(resp));

	if (out)
		*out = resp;
	return err;
}

static int dereg_mr(int fd, uint32_t mr)
{
	struct ib_uverbs_dereg_mr req = { .mr_handle = mr };

	return cmd(fd, IB_USER_VERBS_CMD_DEREG_MR, &req, sizeof(req), NULL, 0);
}

/* Memory for rings: page-aligned, zeroed, never freed (the test is short). */
static void *ring(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len < 4096 ? 4096 : len))
		return NULL;
	memset(p, 0, len);
	return p;
}

struct cq {
	uint32_t handle, cqn;
};

static int create_cq_drv(int fd, int cqe, const struct hpu_ib_create_cq *drv,
			 size_t drvlen, struct cq *out)
{
	struct {
		struct ib_uverbs_create_cq core;
		char drv[64];
	} req = { .core = { .cqe = cqe, .comp_channel = -1 } };
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct hpu_ib_create_cq_resp drv;
	} resp = {};
	int err;

	memcpy(req.drv, drv, drvlen);
	err = cmd(fd, IB_USER_VERBS_CMD_CREATE_CQ, &req,
		  sizeof(req.core) + drvlen, &resp, sizeof(resp));
	if (!err && out) {
		out->handle = resp.core.cq_handle;
		out->cqn = resp.drv.cqn;
	}
	return err;
}

static int create_cq(int fd, unsigned int log, struct cq *out)
{
	struct hpu_ib_create_cq drv = {
		.buf_addr = (uintptr_t)ring(HPU_IB_CQE_SIZE << log),
		.db_addr = (uintptr_t)ring(64),
		.log_entries = log,
	};

	return create_cq_drv(fd, 1 << log, &drv, sizeof(drv), out);
}

static int destroy_cq(int fd, uint32_t handle)
{
	struct ib_uverbs_destroy_cq req = { .cq_handle = handle };
	struct ib_uverbs_destroy_cq_resp resp;

	return cmd(fd, IB_USER_VERBS_CMD_DESTROY_CQ, &req, sizeof(req), &resp,
		   sizeof(resp));
}

struct qp {
	uint32_t handle, qpn, max_inline;
};

static int create_qp(int fd, uint32_t pd, uint32_t cq, int srq, uint32_t srq_handle,
		     uint8_t type, struct hpu_ib_create_qp *drv, struct qp *out)
{
	struct {
		struct ib_uverbs_create_qp core;
		struct hpu_ib_create_qp drv;
	} req = { .core = {
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
		.srq_handle = srq_handle, .max_send_wr = 16,
		.max_recv_wr = srq ? 0 : 16, .max_send_sge = 2,
		.max_recv_sge = srq ? 0 : 2, .max_inline_data = 64,
		.qp_type = type, .is_srq = srq,
	}, .drv = *drv };
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct hpu_ib_create_qp_resp drv;
	} resp = {};
	int err = cmd(fd, IB_USER_VERBS_CMD_CREATE_QP, &req, sizeof(req), &resp,
		      sizeof(resp));

	if (!err && out) {
		out->handle = resp.core.qp_handle;
		out->qpn = resp.drv.qpn;
		out->max_inline = resp.core.max_inline_data;
	}
	return err;
}

static struct hpu_ib_create_qp qp_rings(int srq)
{
	struct hpu_ib_create_qp d = {
		.sq_buf_addr = (uintptr_t)ring(16 * 256),
		.db_addr = (uintptr_t)ring(64),
		.sq_log_entries = 4, .sq_log_stride = 8,
	};

	if (!srq) {
		d.rq_buf_addr = (uintptr_t)ring(16 * 64);
		d.rq_log_entries = 4;
		d.rq_log_stride = 6;
	}
	return d;
}

static int destroy_qp(int fd, uint32_t handle)
{
	struct ib_uverbs_destroy_qp req = { .qp_handle = handle };
	struct ib_uverbs_destroy_qp_resp resp;

	return cmd(fd, IB_USER_VERBS_CMD_DESTROY_QP, &req, sizeof(req), &resp,
		   sizeof(resp));
}

static int modify_qp(int fd, uint32_t handle, struct ib_uverbs_modify_qp *m)
{
	m->qp_handle = handle;
	return cmd(fd, IB_USER_VERBS_CMD_MODIFY_QP, m, sizeof(*m), NULL, 0);
}

static int query_qp_state(int fd, uint32_t handle, int *state, uint32_t *inl)
{
	struct ib_uverbs_query_qp req = { .qp_handle = handle, .attr_mask = 0xffffff };
	struct ib_uverbs_query_qp_resp resp = {};
	int err = cmd(fd, IB_USER_VERBS_CMD_QUERY_QP, &req, sizeof(req), &resp,
		      sizeof(resp));

	*state = resp.qp_state;
	*inl = resp.max_inline_data;
	return err;
}

static int create_srq(int fd, uint32_t pd, struct hpu_ib_create_srq *drv,
		      uint32_t *handle)
{
	struct {
		struct ib_uverbs_create_srq core;
		struct hpu_ib_create_srq drv;
	} req = { .core = { .pd_handle = pd, .max_wr = 16, .max_sge = 2 },
		  .drv = *drv };
	struct {
		struct ib_uverbs_create_srq_resp core;
		struct hpu_ib_create_srq_resp drv;
	} resp = {};
	int err = cmd(fd, IB_USER_VERBS_CMD_CREATE_SRQ, &req, sizeof(req), &resp,
		      sizeof(resp));

	*handle = resp.core.srq_handle;
	return err;
}

static int destroy_srq(int fd, uint32_t handle)
{
	struct ib_uverbs_destroy_srq req = { .srq_handle = handle };
	struct ib_uverbs_destroy_srq_resp resp;

	return cmd(fd, IB_USER_VERBS_CMD_DESTROY_SRQ, &req, sizeof(req), &resp,
		   sizeof(resp));
}

static int open_ctx(const char *dev, struct ctx *c)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno;
	return get_context(fd, NULL, 0, c);
}

static void t_context(const char *dev, struct ctx *c)
{
	struct hpu_ib_alloc_ucontext_req bad = { .flags = 1 };
	char trail[16] = {};
	int fd, err;

	fd = open(dev, O_RDWR | O_CLOEXEC);
	err = get_context(fd, &bad, sizeof(bad), NULL);
	result(err == EINVAL, "a context request with flags set is refused", "errno %d", err);
	trail[12] = 1;
	err = get_context(fd, trail, sizeof(trail), NULL);
	result(err == EINVAL, "a context request with non-zero bytes past the structure is refused",
	       "errno %d", err);
	err = get_context(fd, NULL, 0, c);
	result(!err && c->drv.cqe_size == HPU_IB_CQE_SIZE && c->drv.max_inline == 1024 - 64,
	       "a context opens with its doorbell page and the CQE and inline sizes",
	       "errno %d cqe %u inline %u", err, c->drv.cqe_size, c->drv.max_inline);
}

static void t_doorbell(const char *dev, struct ctx *c)
{
	long off = c->drv.db_mmap_offset;
	struct ctx other = {};
	void *p, *x;
	pid_t pid;
	int st, err;

	p = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, c->fd, off);
	result(p != MAP_FAILED, "the doorbell page maps into its owner", "errno %d", errno);
	x = mmap(NULL, 4096, PROT_WRITE | PROT_EXEC, MAP_SHARED, c->fd, off);
	result(x == MAP_FAILED, "the doorbell page cannot be mapped executable", "mapped");
	x = mmap(NULL, 8192, PROT_WRITE, MAP_SHARED, c->fd, off);
	result(x == MAP_FAILED, "a mapping larger than the doorbell page is refused", "mapped");
	x = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, c->fd, off + 4096 * 64);
	result(x == MAP_FAILED, "an mmap offset no entry has is refused", "mapped");

	pid = fork();
	if (!pid) {
		/* Another process with the same file: no doorbell for it. */
		x = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, c->fd, off);
		_exit(x == MAP_FAILED ? (errno == EPERM ? 0 : 2) : 1);
	}
	waitpid(pid, &st, 0);
	result(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "another process holding the file cannot map the doorbell page",
	       "child status %d", st);

	err = open_ctx(dev, &other);
	result(!err && other.drv.db_page != c->drv.db_page,
	       "a second context gets a doorbell page of its own", "errno %d pages %u %u",
	       err, c->drv.db_page, other.drv.db_page);
	if (!err)
		close(other.fd);
	if (p != MAP_FAILED)
		munmap(p, 4096);
}

static void t_pd_mr(struct ctx *c)
{
	struct ib_uverbs_reg_mr_resp mr, mr2;
	size_t len = 1 << 20;
	char *buf = ring(len);
	uint32_t pd;
	int err;

	err = alloc_pd(c->fd, &pd);
	result(!err, "a PD is allocated", "errno %d", err);
	err = reg_mr(c->fd, pd, buf, len, IB_UVERBS_ACCESS_MW_BIND | IB_UVERBS_ACCESS_LOCAL_WRITE, NULL);
	result(err == EOPNOTSUPP || err == EINVAL, "an MR with an access flag the device lacks is refused",
	       "errno %d", err);
	err = reg_mr(c->fd, pd, buf, len, IB_UVERBS_ACCESS_REMOTE_WRITE, NULL);
	result(err == EINVAL, "an MR with remote write but not local write is refused", "errno %d", err);
	err = reg_mr(c->fd, pd, buf + 100, len - 200,
		     IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_REMOTE_WRITE |
		     IB_UVERBS_ACCESS_REMOTE_READ | IB_UVERBS_ACCESS_REMOTE_ATOMIC, &mr);
	result(!err && mr.lkey == mr.rkey && (mr.lkey >> 8),
	       "an MR of user memory registers, REMOTE_ATOMIC accepted", "errno %d key %x", err, mr.lkey);
	err = reg_mr(c->fd, pd, buf, 4096, 0, &mr2);
	result(!err && (mr2.lkey >> 8) != (mr.lkey >> 8), "a second MR gets another key index",
	       "errno %d keys %x %x", err, mr.lkey, mr2.lkey);
	result(!dereg_mr(c->fd, mr2.mr_handle), "an MR deregisters", "errno");
	err = reg_mr(c->fd, pd, buf, 4096, 0, &mr2);
	result(!err && (mr2.lkey & 0xff) != 0, "a key index reused gets a new variant",
	       "errno %d key %x", err, mr2.lkey);
	dereg_mr(c->fd, mr2.mr_handle);
	err = reg_mr(c->fd, pd, (void *)0x1000, 4096, IB_UVERBS_ACCESS_LOCAL_WRITE, NULL);
	result(err == EFAULT || err == ENOMEM || err == EINVAL,
	       "an MR of unmapped memory is refused", "errno %d", err);
	err = dealloc_pd(c->fd, pd);
	result(err == EBUSY, "a PD with an MR cannot be freed", "errno %d", err);
	dereg_mr(c->fd, mr.mr_handle);
	result(!dealloc_pd(c->fd, pd), "a PD frees once its MRs are gone", "errno");
}

static void t_cq(struct ctx *c, int max_cq)
{
	struct hpu_ib_create_cq d = {
		.buf_addr = (uintptr_t)ring(HPU_IB_CQE_SIZE * 16),
		.db_addr = (uintptr_t)ring(64), .log_entries = 4,
	};
	struct hpu_ib_create_cq b;
	struct cq cqs[64];
	struct cq cq;
	int err, i, n;

	err = create_cq_drv(c->fd, 16, &d, sizeof(d), &cq);
	result(!err, "a CQ is created on user rings", "errno %d", err);
	if (!err)
		result(!destroy_cq(c->fd, cq.handle), "a CQ is destroyed", "errno");
	b = d;
	b.flags = 1;
	result(create_cq_drv(c->fd, 16, &b, sizeof(b), NULL) == EINVAL,
	       "a CQ request with flags set is refused", "accepted");
	b = d;
	b.log_entries = 17;
	result(create_cq_drv(c->fd, 16, &b, sizeof(b), NULL) == EINVAL,
	       "a CQ of 2^17 entries is refused", "accepted");
	result(create_cq_drv(c->fd, 17, &d, sizeof(d), NULL) == EINVAL,
	       "a CQ ring smaller than the entries asked for is refused", "accepted");
	b = d;
	b.buf_addr += 8;
	result(create_cq_drv(c->fd, 16, &b, sizeof(b), NULL) == EINVAL,
	       "a CQ ring not 32-byte aligned is refused", "accepted");
	b = d;
	b.db_addr = 0;
	result(create_cq_drv(c->fd, 16, &b, sizeof(b), NULL) == EINVAL,
	       "a CQ without a doorbell record is refused", "accepted");
	result(create_cq_drv(c->fd, 16, &d, 8, NULL) == EINVAL,
	       "a CQ request shorter than the structure is refused", "accepted");
	b = d;
	b.buf_addr = 0x1000;
	err = create_cq_drv(c->fd, 16, &b, sizeof(b), NULL);
	result(err == EFAULT || err == ENOMEM, "a CQ ring in unmapped memory is refused",
	       "errno %d", err);

	if (max_cq <= 0 || max_cq > 60)
		return;
	for (n = 0; n < max_cq + 1; n++) {
		err = create_cq(c->fd, 1, &cqs[n]);
		if (err)
			break;
	}
	result(n == max_cq && err == ENOSPC, "one context cannot hold more CQs than ctx_max_cq",
	       "%d created, errno %d", n, err);
	for (i = 0; i < n; i++)
		destroy_cq(c->fd, cqs[i].handle);
	err = create_cq(c->fd, 1, &cq);
	result(!err, "CQs freed count no longer", "errno %d", err);
	if (!err)
		destroy_cq(c->fd, cq.handle);
}

static void t_qp(struct ctx *c)
{
	struct hpu_ib_create_srq sd = {
		.buf_addr = (uintptr_t)ring(16 * 64), .db_addr = (uintptr_t)ring(64),
		.log_entries = 4, .log_stride = 6,
	};
	struct ib_uverbs_modify_qp m;
	struct hpu_ib_create_qp d, b;
	uint32_t pd, srq, inl;
	struct qp qp, ud;
	struct cq cq;
	int err, st;

	if (alloc_pd(c->fd, &pd) || create_cq(c->fd, 6, &cq)) {
		result(0, "QP prerequisites (PD, CQ)", "failed");
		return;
	}
	d = qp_rings(0);
	err = create_qp(c->fd, pd, cq.handle, 0, 0, IB_UVERBS_QPT_RC, &d, &qp);
	result(!err && qp.qpn >= 2 && qp.max_inline >= 64,
	       "an RC QP is created with its QPN and inline size", "errno %d qpn %u inline %u",
	       err, qp.qpn, qp.max_inline);
	b = d;
	b.flags = 1;
	result(create_qp(c->fd, pd, cq.handle, 0, 0, IB_UVERBS_QPT_RC, &b, NULL) == EINVAL,
	       "a QP request with flags set is refused", "accepted");
	b = d;
	b.sq_log_entries = 3;
	result(create_qp(c->fd, pd, cq.handle, 0, 0, IB_UVERBS_QPT_RC, &b, NULL) == EINVAL,
	       "a send queue smaller than max_send_wr is refused", "accepted");
	b = d;
	b.sq_log_stride = 6;
	result(create_qp(c->fd, pd, cq.handle, 0, 0, IB_UVERBS_QPT_RC, &b, NULL) == EINVAL,
	       "a send stride too small for the inline data is refused", "accepted");
	b = d;
	b.sq_buf_addr += 64;
	result(create_qp(c->fd, pd, cq.handle, 0, 0, IB_UVERBS_QPT_RC, &b, NULL) == EINVAL,
	       "a send queue not aligned to its stride is refused", "accepted");
	result(create_qp(c->fd, pd, cq.handle, 0, 0, IB_UVERBS_QPT_UC, &d, NULL) != 0,
	       "a UC QP is refused", "accepted");

	if (!err) {
		memset(&m, 0, sizeof(m));
		m.qp_state = 1; /* INIT */
		m.port_num = 1;
		m.qp_access_flags = IB_UVERBS_ACCESS_REMOTE_WRITE | IB_UVERBS_ACCESS_REMOTE_READ;
		m.attr_mask = (1 << 0) | (1 << 3) | (1 << 4) | (1 << 5);
		err = modify_qp(c->fd, qp.handle, &m);
		result(!err, "an RC QP moves RESET -> INIT", "errno %d", err);
		query_qp_state(c->fd, qp.handle, &st, &inl);
		result(st == 1 && inl >= 64, "query_qp reports INIT and max_inline_data",
		       "state %d inline %u", st, inl);
		m.qp_state = 3; /* RTS: skips RTR */
		m.attr_mask = 1;
		result(modify_qp(c->fd, qp.handle, &m) == EINVAL,
		       "a transition INIT -> RTS is refused", "accepted");
		m.qp_state = 6;
		m.attr_mask = 1;
		result(!modify_qp(c->fd, qp.handle, &m), "a QP moves to ERR", "refused");
		m.qp_state = 0;
		result(!modify_qp(c->fd, qp.handle, &m), "a QP moves back to RESET", "refused");
		result(!destroy_qp(c->fd, qp.handle), "an RC QP is destroyed", "errno");
	}

	b = qp_rings(0);
	err = create_qp(c->fd, pd, cq.handle, 0, 0, IB_UVERBS_QPT_UD, &b, &ud);
	result(!err, "a UD QP is created", "errno %d", err);
	if (!err) {
		memset(&m, 0, sizeof(m));
		m.qp_state = 1;
		m.port_num = 1;
		m.qkey = 0x11111111;
		m.attr_mask = (1 << 0) | (1 << 4) | (1 << 5) | (1 << 6);
		err = modify_qp(c->fd, ud.handle, &m);
		m.qp_state = 2;
		m.attr_mask = 1;
		err = err ? err : modify_qp(c->fd, ud.handle, &m);
		m.qp_state = 3;
		m.sq_psn = 0x123;
		m.attr_mask = 1 | (1 << 16);
		err = err ? err : modify_qp(c->fd, ud.handle, &m);
		query_qp_state(c->fd, ud.handle, &st, &inl);
		result(!err && st == 3, "a UD QP moves RESET -> INIT -> RTR -> RTS",
		       "errno %d state %d", err, st);
		result(!destroy_qp(c->fd, ud.handle), "a UD QP is destroyed", "errno");
	}

	err = create_srq(c->fd, pd, &sd, &srq);
	result(!err, "an SRQ is created", "errno %d", err);
	if (!err) {
		b = qp_rings(1);
		err = create_qp(c->fd, pd, cq.handle, 1, srq, IB_UVERBS_QPT_RC, &b, &qp);
		result(!err, "an RC QP on the SRQ is created", "errno %d", err);
		result(destroy_srq(c->fd, srq) == EBUSY, "an SRQ in use by a QP is not destroyed",
		       "destroyed");
		if (!err)
			destroy_qp(c->fd, qp.handle);
		result(!destroy_srq(c->fd, srq), "an SRQ is destroyed", "errno");
	}
	sd.reserved = 1;
	result(create_srq(c->fd, pd, &sd, &srq) == EINVAL, "an SRQ request with a reserved field set is refused",
	       "accepted");
	result(destroy_cq(c->fd, cq.handle) == 0, "the QPs' CQ is destroyed after them", "errno");
	dealloc_pd(c->fd, pd);
}

int main(int argc, char **argv)
{
	const char *dev, *mode;
	struct ctx c = {};
	char line[16];
	uint32_t pd;
	int i, n, err;

	if (argc < 3) {
		fprintf(stderr, "usage: %s /dev/infiniband/uverbsN all|contexts N|hold\n", argv[0]);
		return 100;
	}
	dev = argv[1];
	mode = argv[2];
	if (!strcmp(mode, "contexts")) {
		n = argc > 3 ? atoi(argv[3]) : 1;
		for (i = 0, err = 0; i < n; i++) {
			err = open_ctx(dev, &c);
			if (err)
				break;
		}
		printf("opened %d errno %d\n", i, err);
		return 0;
	}
	if (!strcmp(mode, "hold")) {
		struct cq cq;

		err = open_ctx(dev, &c);
		err = err ? err : create_cq(c.fd, 4, &cq);
		printf("held %d\n", err);
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		printf("after: %d\n", alloc_pd(c.fd, &pd));
		return 0;
	}
	t_context(dev, &c);
	if (!c.fd)
		return 1;
	t_doorbell(dev, &c);
	t_pd_mr(&c);
	t_cq(&c, argc > 3 ? atoi(argv[3]) : 0);
	t_qp(&c);
	close(c.fd);
	return failures > 100 ? 100 : failures;
}
