// SPDX-License-Identifier: MIT
/*
 * verbs-objects: the hpu ib_device's verbs objects through uverbs' write()
 * commands (<rdma/ib_user_verbs.h>) and the provider ABI
 * (include/uapi/rdma/hpu-abi.h), without libibverbs: every byte of the
 * driver data is the test's, so reserved fields and bad sizes can be sent.
 * Run by tests/vm/rdma/rdma-tests.sh in the guest.
 *
 *   verbs-objects /dev/infiniband/uverbsN all [MAX_CQ [MAX_PD]]
 *	every check below; MAX_CQ, MAX_PD: the ctx_max_cq and ctx_max_pd
 *	parameters hpu_ib has
 *   verbs-objects /dev/infiniband/uverbsN contexts N
 *	open N contexts, print how many opened and the errno of the first
 *	refusal ("opened K errno E")
 *   verbs-objects /dev/infiniband/uverbsN data GID1 IP1 GID2 IP2 MAC2 [MAX_AH]
 *	SEND, RDMA WRITE and READ between two RC QPs on ports 1 and 2 (GID
 *	indexes GID1 and GID2 of the IPv4 addresses IP1 and IP2), posting
 *	WQEs and polling CQEs in the device's formats; the completion
 *	channel; another process's doorbell; an HBM MR; UD through an AH
 *	(MAC2: the MAC of port 2's netdev); a bad rkey; MAX_AH: the
 *	ctx_max_ah parameter hpu_ib has, checked when given
 *   verbs-objects /dev/infiniband/uverbsN memlock
 *	print "memlock: <errno>" of registering 4 MiB (run it under a small
 *	RLIMIT_MEMLOCK)
 *   verbs-objects /dev/infiniband/uverbsN userlimit MAX_CQ USER_MAX_CQ
 *	as root, with hpu_ib's ctx_max_cq at MAX_CQ and user_max_cq at
 *	USER_MAX_CQ (less than 3 x MAX_CQ): what one user holds through
 *	several contexts is bounded, other users and CAP_SYS_ADMIN are not
 *	held back by it, and what is freed counts no longer
 *   verbs-objects /dev/infiniband/uverbsN wedge INJECT HARD_RESETS H0
 *	a CQ, then hpu.ko's debugfs file INJECT (inject_roce_cmd) stops the
 *	engine's commands: the CQ's destroy still succeeds, later commands
 *	fail EIO, and the context's doorbell page is not handed to the next
 *	context (an object of it may still be live). hpu_ib asks for a hard
 *	reset at the timeout (which disassociates the context: EIO too), and
 *	the context's end quarantines its memory: the next context
 *	may find the device already going (any error) or back with a fresh
 *	set of pages (HARD_RESETS, the sysfs counter, no longer H0, its value
 *	before the injection), which is
 *	reported as a NOTE; the kernel's log line about the kept page is the
 *	check that always runs (rdma-tests.sh)
 *   verbs-objects /dev/infiniband/uverbsN cq
 *	print "cq: <errno>" of a new context's first CQ
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
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <drm/drm.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/hpu-abi.h>
#include <drm/hpu_accel.h>

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
	int async_fd;
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
		c->async_fd = resp.core.async_fd;
		c->drv = resp.drv;
	}
	return err;
}

/* A number read from a file (sysfs), -1 if unreadable. */
static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
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

/* max_inline_data of the next create_qp() (the refusal tests change it). */
static uint32_t qp_inline = 64;

static int create_qp(int fd, uint32_t pd, uint32_t cq, int srq, uint32_t srq_handle,
		     uint8_t type, struct hpu_ib_create_qp *drv, struct qp *out)
{
	struct {
		struct ib_uverbs_create_qp core;
		struct hpu_ib_create_qp drv;
	} req = { .core = {
		.user_handle = 0x9900 + type,
		.pd_handle = pd, .send_cq_handle = cq, .recv_cq_handle = cq,
		.srq_handle = srq_handle, .max_send_wr = 16,
		.max_recv_wr = srq ? 0 : 16, .max_send_sge = 2,
		.max_recv_sge = srq ? 0 : 2, .max_inline_data = qp_inline,
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

/* ctx_max_pd: a context holds that many PDs and no more; a freed one counts no longer. */
static void t_pd_limit(const char *dev, int max_pd)
{
	struct ctx ctx = {}, *c = &ctx;
	uint32_t pds[64];
	int n, i, err = 0;

	if (max_pd <= 0 || max_pd >= 64)
		return;
	err = open_ctx(dev, c);
	result(!err, "pd limit: a new context opens", "errno %d", err);
	if (err)
		return;
	for (n = 0; n < max_pd + 1; n++) {
		err = alloc_pd(c->fd, &pds[n]);
		if (err)
			break;
	}
	result(n == max_pd && err == ENOSPC, "one context cannot hold more PDs than ctx_max_pd",
	       "%d allocated, errno %d", n, err);
	if (n > 0) {
		dealloc_pd(c->fd, pds[--n]);
		err = alloc_pd(c->fd, &pds[n]);
		result(!err, "a PD freed counts no longer", "errno %d", err);
		if (!err)
			n++;
	}
	for (i = 0; i < n; i++)
		dealloc_pd(c->fd, pds[i]);
	close(c->fd);
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

/* The process's pinned memory (VmPin of /proc/self/status) in KiB, -1 if unreadable. */
static long vm_pin_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	long kb = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

/*
 * The same memory registered several times (hpu_ib pins and maps each
 * registration itself): MRs over one range, read-only and writable, and
 * an MR over a CQ's ring. Each registration counts its pages in the
 * process's pinned memory and deregistration uncounts them. Under the
 * debug kernel, the log check is what fails if a registration's DMA
 * mapping is reported as an overlap.
 */
static void t_mr_overlap(struct ctx *c)
{
	struct ib_uverbs_reg_mr_resp mr[4], cqmr;
	uint32_t lw = IB_UVERBS_ACCESS_LOCAL_WRITE;
	char *buf = ring(4 * 4096);
	struct hpu_ib_create_cq drv = { .log_entries = 4 };
	long before, after;
	int i, err, n = 0;
	struct cq cq;
	uint32_t pd;

	err = alloc_pd(c->fd, &pd);
	result(!err && buf, "overlap: a PD and a buffer", "errno %d", err);
	if (err || !buf)
		return;
	err = reg_mr(c->fd, pd, buf, 0, lw, NULL);
	result(err == EINVAL, "an MR of zero bytes is refused (EINVAL)", "errno %d", err);
	err = reg_mr(c->fd, pd, (void *)(uintptr_t)-4096, 8192, lw, NULL);
	result(err == EINVAL, "an MR whose range wraps around is refused (EINVAL)", "errno %d", err);

	before = vm_pin_kb();
	/* Bytes 100 to 100 + 3 pages: 4 pages pinned by each MR. */
	err = 0;
	for (i = 0; i < 4 && !err; i++, n++)
		err = reg_mr(c->fd, pd, buf + 100, 3 * 4096, i == 3 ? 0 : lw, &mr[i]);
	result(!err, "four MRs over the same pages register (three writable, one read-only)",
	       "errno %d at MR %d", err, n);
	after = vm_pin_kb();
	result(!err && before >= 0 && after - before == 4 * 16,
	       "each MR counts its pages, partial pages included, in the process's pinned memory",
	       "VmPin %ld kB, then %ld kB", before, after);

	drv.buf_addr = (uintptr_t)ring(HPU_IB_CQE_SIZE << 4);
	drv.db_addr = drv.buf_addr + (HPU_IB_CQE_SIZE << 4);
	err = drv.buf_addr ? create_cq_drv(c->fd, 16, &drv, sizeof(drv), &cq) : ENOMEM;
	result(!err, "overlap: a CQ", "errno %d", err);
	if (!err) {
		err = reg_mr(c->fd, pd, (void *)(uintptr_t)drv.buf_addr, 4096, lw, &cqmr);
		result(!err, "an MR over a CQ's ring and doorbell record registers", "errno %d", err);
		if (!err)
			dereg_mr(c->fd, cqmr.mr_handle);
		destroy_cq(c->fd, cq.handle);
	}

	for (i = 0; i < n; i++)
		err |= dereg_mr(c->fd, mr[i].mr_handle);
	after = vm_pin_kb();
	result(!err && after == before, "deregistration uncounts the pinned pages",
	       "errno %d, VmPin %ld kB before, %ld kB after", err, before, after);
	dealloc_pd(c->fd, pd);
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
	qp_inline = 0xffffffa0; /* header + this wraps in 32 bits */
	result(create_qp(c->fd, pd, cq.handle, 0, 0, IB_UVERBS_QPT_RC, &d, NULL) == EINVAL,
	       "an inline size near 2^32 is refused (no wrap past the stride check)", "accepted");
	qp_inline = 64;
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



/* An HBM buffer of the first HPU as a dma-buf: its fd, or -errno. */
static int hbm_dmabuf(size_t size)
{
	struct drm_hpu_bo_create bo = { .size = size, .flags = DRM_HPU_BO_HBM };
	struct drm_prime_handle ph = {};
	int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, DRM_IOCTL_HPU_BO_CREATE, &bo))
		return -errno;
	ph.handle = bo.handle;
	ph.flags = DRM_CLOEXEC | DRM_RDWR;
	if (ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph))
		return -errno;
	/* The dma-buf keeps the buffer; the device file may stay open. */
	return ph.fd;
}

/* REG_DMABUF_MR through the ioctl interface (no write() command has it). */
static int reg_dmabuf_mr(int fd, uint32_t pd, int dmabuf, uint64_t off, uint64_t len,
			 uint64_t iova, uint32_t access, uint32_t *lkey, uint32_t *rkey)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr a[9];
	} c = {};
	struct ib_uverbs_attr *a = c.a;

	c.hdr.length = sizeof(c);
	c.hdr.object_id = UVERBS_OBJECT_MR;
	c.hdr.method_id = UVERBS_METHOD_REG_DMABUF_MR;
	c.hdr.num_attrs = 9;
	a[0] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_REG_DMABUF_MR_HANDLE };
	a[1] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_REG_DMABUF_MR_PD_HANDLE,
					.data = pd };
	a[2] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_REG_DMABUF_MR_OFFSET,
					.len = 8, .data = off };
	a[3] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_REG_DMABUF_MR_LENGTH,
					.len = 8, .data = len };
	a[4] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_REG_DMABUF_MR_IOVA,
					.len = 8, .data = iova };
	/* A raw fd is an s32 inline: len 4. */
	a[5] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_REG_DMABUF_MR_FD,
					.len = 4, .data = (uint32_t)dmabuf };
	a[6] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_REG_DMABUF_MR_ACCESS_FLAGS,
					.len = 4, .data = access };
	a[7] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_REG_DMABUF_MR_RESP_LKEY,
					.len = 4, .data = (uintptr_t)lkey };
	a[8] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_REG_DMABUF_MR_RESP_RKEY,
					.len = 4, .data = (uintptr_t)rkey };
	return ioctl(fd, RDMA_VERBS_IOCTL, &c) ? errno : 0;
}

/* ---- data: two RC QPs on ports 1 and 2 of one device, joined by a wire ---- */

struct ep {
	struct qp qp;
	struct cq cq;
	struct hpu_ib_create_qp rings;
	uint8_t *cqring;
	volatile uint32_t *cqdb, *qpdb;
	uint32_t cq_ci, sq_pi, rq_pi;
};

static int create_cq_ch(int fd, unsigned int log, int channel, struct ep *e)
{
	struct {
		struct ib_uverbs_create_cq core;
		struct hpu_ib_create_cq drv;
	} req = { .core = { .user_handle = 0xc0ffee00u + channel, .cqe = 1 << log,
			    .comp_channel = channel } };
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct hpu_ib_create_cq_resp drv;
	} resp = {};
	int err;

	e->cqring = ring(HPU_IB_CQE_SIZE << log);
	e->cqdb = ring(64);
	req.drv.buf_addr = (uintptr_t)e->cqring;
	req.drv.db_addr = (uintptr_t)e->cqdb;
	req.drv.log_entries = log;
	err = cmd(fd, IB_USER_VERBS_CMD_CREATE_CQ, &req, sizeof(req), &resp, sizeof(resp));
	e->cq.handle = resp.core.cq_handle;
	e->cq.cqn = resp.drv.cqn;
	return err;
}

/* RESET -> INIT -> RTR -> RTS towards @peer_qpn at @dgid. */
static int connect_qp(int fd, struct ep *e, int port, int sgid, const uint8_t *dgid,
		      uint32_t peer_qpn)
{
	struct ib_uverbs_modify_qp m = {};
	int err;

	m.qp_state = 1;
	m.port_num = port;
	m.qp_access_flags = IB_UVERBS_ACCESS_REMOTE_WRITE | IB_UVERBS_ACCESS_REMOTE_READ;
	m.attr_mask = (1 << 0) | (1 << 3) | (1 << 4) | (1 << 5);
	err = modify_qp(fd, e->qp.handle, &m);
	if (err)
		return err;
	memset(&m, 0, sizeof(m));
	m.qp_state = 2;
	memcpy(m.dest.dgid, dgid, 16);
	m.dest.sgid_index = sgid;
	m.dest.hop_limit = 64;
	m.dest.is_global = 1;
	m.dest.port_num = port;
	m.path_mtu = 3;
	m.dest_qp_num = peer_qpn;
	m.rq_psn = 100;
	m.max_dest_rd_atomic = 4;
	m.min_rnr_timer = 12;
	m.attr_mask = (1 << 0) | (1 << 7) | (1 << 8) | (1 << 20) | (1 << 12) | (1 << 17) | (1 << 15);
	err = modify_qp(fd, e->qp.handle, &m);
	if (err)
		return 1000 + err;
	memset(&m, 0, sizeof(m));
	m.qp_state = 3;
	m.sq_psn = 100;
	m.timeout = 14;
	m.retry_cnt = 7;
	m.rnr_retry = 7;
	/* As perftest does against rxe: the peer's depth, 128, beyond the
	 * device's 16 (taken as 16, the READs of the data test need it). */
	m.max_rd_atomic = 128;
	m.attr_mask = (1 << 0) | (1 << 16) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 13);
	err = modify_qp(fd, e->qp.handle, &m);
	return err ? 2000 + err : 0;
}

static void post_recv(struct ep *e, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
	uint32_t n = 1u << e->rings.rq_log_entries;
	uint8_t *slot = (uint8_t *)(uintptr_t)e->rings.rq_buf_addr +
			((e->rq_pi % n) << e->rings.rq_log_stride);
	struct hpu_ib_recv_wqe *w = (void *)slot;
	struct hpu_ib_sge *sge = (void *)(slot + sizeof(*w));

	memset(slot, 0, 1u << e->rings.rq_log_stride);
	w->wr_id = wr_id;
	w->num_sge = 1;
	sge->addr = (uintptr_t)addr;
	sge->length = len;
	sge->lkey = lkey;
	__sync_synchronize();
	e->qpdb[1] = ++e->rq_pi;
}

/* Write a send WQE; @ring: also write the producer index and the doorbell. */
static void post_send(struct ep *e, volatile uint32_t *dbpage, uint8_t op, uint64_t wr_id,
		      void *addr, uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey,
		      int ring_db)
{
	uint32_t n = 1u << e->rings.sq_log_entries;
	uint8_t *slot = (uint8_t *)(uintptr_t)e->rings.sq_buf_addr +
			((e->sq_pi % n) << e->rings.sq_log_stride);
	struct hpu_ib_send_wqe *w = (void *)slot;
	struct hpu_ib_sge *sge = (void *)(slot + sizeof(*w));

	memset(slot, 0, 1u << e->rings.sq_log_stride);
	w->opcode = op;
	w->flags = HPU_IB_WQE_F_SIGNALED;
	w->num_sge = 1;
	w->wr_id = wr_id;
	w->remote_addr = raddr;
	w->rkey_or_qkey = rkey;
	sge->addr = (uintptr_t)addr;
	sge->length = len;
	sge->lkey = lkey;
	__sync_synchronize();
	e->sq_pi++;
	if (!ring_db)
		return;
	e->qpdb[0] = e->sq_pi;
	__sync_synchronize();
	dbpage[HPU_IB_DB_SQ / 4] = e->qp.qpn;
}

/* Wait up to @ms for the next CQE; copy it, consume it. 0 or ETIMEDOUT. */
static int poll_cq(struct ep *e, unsigned int log, struct hpu_ib_cqe *out, int ms)
{
	uint32_t n = 1u << log, i = e->cq_ci;
	volatile struct hpu_ib_cqe *c = (void *)(e->cqring + (i % n) * HPU_IB_CQE_SIZE);
	uint8_t want = ((i / n) & 1) ? 0 : 1;

	while ((c->owner & HPU_IB_CQE_OWNER) != want) {
		if (ms-- <= 0)
			return ETIMEDOUT;
		usleep(1000);
	}
	__sync_synchronize();
	memcpy(out, (void *)c, sizeof(*out));
	e->cqdb[0] = ++e->cq_ci;
	return 0;
}

static void gid_of(const char *ip4, uint8_t *gid)
{
	unsigned int a, b, c, d;

	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	sscanf(ip4, "%u.%u.%u.%u", &a, &b, &c, &d);
	gid[12] = a; gid[13] = b; gid[14] = c; gid[15] = d;
}


/*
 * CREATE_AH towards @dgid from port @port, GID index @sgid: the resolved MAC
 * in @dmac, the AH's handle in @ah (either may be NULL).
 */
static int create_ah(int fd, uint32_t pd, int port, int sgid, const uint8_t *dgid,
		     uint8_t *dmac, uint32_t *ah)
{
	struct ib_uverbs_create_ah req = { .pd_handle = pd };
	struct {
		struct ib_uverbs_create_ah_resp core;
		struct hpu_ib_create_ah_resp drv;
	} resp = {};
	int err;

	memcpy(req.attr.grh.dgid, dgid, 16);
	req.attr.grh.sgid_index = sgid;
	req.attr.grh.hop_limit = 64;
	req.attr.is_global = 1;
	req.attr.port_num = port;
	err = cmd(fd, IB_USER_VERBS_CMD_CREATE_AH, &req, sizeof(req), &resp, sizeof(resp));
	if (dmac)
		memcpy(dmac, resp.drv.dmac, 6);
	if (ah)
		*ah = resp.core.ah_handle;
	return err;
}

static int destroy_ah(int fd, uint32_t ah)
{
	struct ib_uverbs_destroy_ah req = { .ah_handle = ah };

	return cmd(fd, IB_USER_VERBS_CMD_DESTROY_AH, &req, sizeof(req), NULL, 0);
}

/* ctx_max_ah: a context holds that many AHs and no more; a destroyed one counts no longer. */
static void t_ah_limit(const char *dev, int sgid1, const uint8_t *g2, int max_ah)
{
	struct ctx c = {};
	uint32_t ahs[64], pd;
	int n, err;

	if (max_ah <= 0 || max_ah >= 64)
		return;
	err = open_ctx(dev, &c);
	err = err ? err : alloc_pd(c.fd, &pd);
	result(!err, "ah limit: a new context and PD", "errno %d", err);
	if (err)
		return;
	for (n = 0; n < max_ah + 1; n++) {
		err = create_ah(c.fd, pd, 1, sgid1, g2, NULL, &ahs[n]);
		if (err)
			break;
	}
	result(n == max_ah && err == ENOSPC, "one context cannot hold more AHs than ctx_max_ah",
	       "%d created, errno %d", n, err);
	if (n > 0) {
		err = destroy_ah(c.fd, ahs[n - 1]);
		err = err ? err : create_ah(c.fd, pd, 1, sgid1, g2, NULL, &ahs[n - 1]);
		result(!err, "an AH destroyed counts no longer", "errno %d", err);
	}
	close(c.fd);
}

/* UD: a datagram from port 1 to a UD QP on port 2 through an AH. */
static void t_ud(int fd, volatile uint32_t *db, uint32_t pd, uint8_t *buf, uint32_t lkey,
		 int sgid1, const uint8_t *g2, const char *mac2)
{
	struct ib_uverbs_modify_qp m = {};
	struct ep a = {}, b = {};
	struct hpu_ib_cqe cqe;
	uint8_t dmac[6], want[6];
	struct hpu_ib_ud_av *av;
	uint8_t *slot;
	int err, i;

	sscanf(mac2, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &want[0], &want[1], &want[2], &want[3],
	       &want[4], &want[5]);
	err = create_ah(fd, pd, 1, sgid1, g2, dmac, NULL);
	result(!err && !memcmp(dmac, want, 6),
	       "ud: an AH gives the provider the destination MAC of the peer port",
	       "errno %d mac %02x:%02x:%02x:%02x:%02x:%02x", err, dmac[0], dmac[1], dmac[2],
	       dmac[3], dmac[4], dmac[5]);
	err = err ? err : create_cq_ch(fd, 4, -1, &a);
	err = err ? err : create_cq_ch(fd, 4, -1, &b);
	a.rings = qp_rings(0);
	b.rings = qp_rings(0);
	a.qpdb = (void *)(uintptr_t)a.rings.db_addr;
	b.qpdb = (void *)(uintptr_t)b.rings.db_addr;
	err = err ? err : create_qp(fd, pd, a.cq.handle, 0, 0, IB_UVERBS_QPT_UD, &a.rings, &a.qp);
	err = err ? err : create_qp(fd, pd, b.cq.handle, 0, 0, IB_UVERBS_QPT_UD, &b.rings, &b.qp);
	for (i = 0; !err && i < 2; i++) {
		struct ep *e = i ? &b : &a;

		memset(&m, 0, sizeof(m));
		m.qp_state = 1;
		m.port_num = i + 1;
		m.qkey = 0x1234;
		m.attr_mask = (1 << 0) | (1 << 4) | (1 << 5) | (1 << 6);
		err = modify_qp(fd, e->qp.handle, &m);
		m.qp_state = 2;
		m.attr_mask = 1;
		err = err ? err : modify_qp(fd, e->qp.handle, &m);
		m.qp_state = 3;
		m.attr_mask = 1 | (1 << 16);
		err = err ? err : modify_qp(fd, e->qp.handle, &m);
	}
	result(!err, "ud: two UD QPs on ports 1 and 2 reach RTS", "errno %d", err);
	if (err)
		return;
	post_recv(&b, 0xd0, buf + 40960, 1024, lkey);
	for (i = 0; i < 200; i++)
		buf[36864 + i] = i ^ 0x5a;
	post_send(&a, db, HPU_IB_WQE_SEND, 0xd1, buf + 36864, 200, lkey, 0, 0, 0);
	slot = (uint8_t *)(uintptr_t)a.rings.sq_buf_addr;
	((struct hpu_ib_send_wqe *)slot)->rkey_or_qkey = 0x1234;
	((struct hpu_ib_send_wqe *)slot)->dest_qpn = b.qp.qpn;
	/* The AV sits between the header and the SGEs: move the SGE. */
	memmove(slot + sizeof(struct hpu_ib_send_wqe) + sizeof(*av),
		slot + sizeof(struct hpu_ib_send_wqe), sizeof(struct hpu_ib_sge));
	av = (void *)(slot + sizeof(struct hpu_ib_send_wqe));
	memset(av, 0, sizeof(*av));
	memcpy(av->dmac, dmac, 6);
	av->sgid_index = sgid1;
	av->hop_limit = 64;
	memcpy(av->dgid, g2, 16);
	__sync_synchronize();
	a.qpdb[0] = a.sq_pi;
	__sync_synchronize();
	db[HPU_IB_DB_SQ / 4] = a.qp.qpn;
	err = poll_cq(&a, 4, &cqe, 20000);
	result(!err && !cqe.status, "ud: the datagram's send completes", "errno %d status %u",
	       err, cqe.status);
	err = poll_cq(&b, 4, &cqe, 20000);
	result(!err && !cqe.status && (cqe.flags & HPU_IB_CQE_F_GRH) &&
	       cqe.src_qp == a.qp.qpn && !memcmp(buf + 40960 + 40, buf + 36864, 200),
	       "ud: the datagram arrives after a GRH, with the source QPN",
	       "errno %d status %u flags %x src %u len %u", err, cqe.status, cqe.flags,
	       cqe.src_qp, cqe.byte_len);
}

/* SRQ: an RC pair whose receiver takes its WQEs from an SRQ with a limit. */
static void t_srq(int fd, int async_fd, volatile uint32_t *db, uint32_t pd, uint8_t *buf,
		  uint32_t lkey, int sgid1, const uint8_t *g1, int sgid2, const uint8_t *g2)
{
	struct hpu_ib_create_srq sd = {
		.buf_addr = (uintptr_t)ring(16 * 64), .db_addr = (uintptr_t)ring(64),
		.log_entries = 4, .log_stride = 6,
	};
	struct {
		struct ib_uverbs_modify_srq core;
	} ms = {};
	struct ib_uverbs_async_event_desc aev = {};
	volatile uint32_t *sdb = (void *)(uintptr_t)sd.db_addr;
	struct ep a = {}, b = {};
	struct hpu_ib_cqe cqe;
	uint32_t srq;
	int err, i, got = 0;

	err = create_srq(fd, pd, &sd, &srq);
	err = err ? err : create_cq_ch(fd, 4, -1, &a);
	err = err ? err : create_cq_ch(fd, 4, -1, &b);
	a.rings = qp_rings(0);
	b.rings = qp_rings(1);
	a.qpdb = (void *)(uintptr_t)a.rings.db_addr;
	b.qpdb = (void *)(uintptr_t)b.rings.db_addr;
	err = err ? err : create_qp(fd, pd, a.cq.handle, 0, 0, IB_UVERBS_QPT_RC, &a.rings, &a.qp);
	err = err ? err : create_qp(fd, pd, b.cq.handle, 1, srq, IB_UVERBS_QPT_RC, &b.rings, &b.qp);
	err = err ? err : connect_qp(fd, &a, 1, sgid1, g2, b.qp.qpn);
	err = err ? err : connect_qp(fd, &b, 2, sgid2, g1, a.qp.qpn);
	result(!err, "srq: an RC pair whose receiver uses an SRQ connects", "error %d", err);
	if (err)
		return;
	/* Four receive WQEs in the SRQ, limit 3: the second message crosses it. */
	for (i = 0; i < 4; i++) {
		uint8_t *slot = (uint8_t *)(uintptr_t)sd.buf_addr + (i << sd.log_stride);
		struct hpu_ib_recv_wqe *w = (void *)slot;
		struct hpu_ib_sge *sge = (void *)(slot + sizeof(*w));

		w->wr_id = 0xe0 + i;
		w->num_sge = 1;
		sge->addr = (uintptr_t)buf + 49152 + 1024 * i;
		sge->length = 1024;
		sge->lkey = lkey;
	}
	__sync_synchronize();
	sdb[0] = 4;
	ms.core.srq_handle = srq;
	ms.core.attr_mask = 1 << 1;	/* IB_SRQ_LIMIT */
	ms.core.srq_limit = 3;
	err = cmd(fd, IB_USER_VERBS_CMD_MODIFY_SRQ, &ms, sizeof(ms), NULL, 0);
	result(!err, "srq: the SRQ limit is armed (MODIFY_SRQ)", "errno %d", err);
	for (i = 0; i < 2; i++) {
		post_send(&a, db, HPU_IB_WQE_SEND, 0xe8 + i, buf, 100, lkey, 0, 0, 1);
		err = poll_cq(&a, 4, &cqe, 20000);
		err = err ? err : poll_cq(&b, 4, &cqe, 20000);
		got += !err && !cqe.status && cqe.wr_id == 0xe0u + i;
	}
	result(got == 2 && sdb[1] == 2, "srq: two messages take the SRQ's first two WQEs in order",
	       "%d taken, device consumer index %u", got, sdb[1]);
	fcntl(async_fd, F_SETFL, O_NONBLOCK);
	for (i = 0; i < 3000; i++) {
		if (read(async_fd, &aev, sizeof(aev)) == sizeof(aev) &&
		    aev.event_type == 15 /* IB_EVENT_SRQ_LIMIT_REACHED */)
			break;
		usleep(1000);
	}
	result(i < 3000, "srq: falling below the limit raises SRQ_LIMIT_REACHED", "no event");
	destroy_qp(fd, b.qp.handle);
	destroy_qp(fd, a.qp.handle);
	result(!destroy_srq(fd, srq), "srq: the SRQ is destroyed after its QP", "errno");
}

static void t_data(const char *dev, const char *mac2, int sgid1, const char *ip1, int sgid2, const char *ip2)
{
	struct ib_uverbs_create_comp_channel ch = {};
	struct ib_uverbs_create_comp_channel_resp chr = {};
	struct ib_uverbs_comp_event_desc ev;
	struct ib_uverbs_reg_mr_resp mr;
	struct ep a = {}, b = {};
	volatile uint32_t *db;
	uint8_t g1[16], g2[16];
	struct hpu_ib_cqe cqe;
	struct ctx c = {};
	uint8_t *buf;
	uint32_t pd;
	int err, i, st;
	pid_t pid;

	gid_of(ip1, g1);
	gid_of(ip2, g2);
	err = open_ctx(dev, &c);
	db = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, c.fd, c.drv.db_mmap_offset);
	err = err ? err : (db == MAP_FAILED ? errno : 0);
	err = err ? err : cmd(c.fd, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &ch, sizeof(ch), &chr,
			      sizeof(chr));
	err = err ? err : alloc_pd(c.fd, &pd);
	buf = ring(1 << 16);
	for (i = 0; i < 4096; i++)
		buf[i] = i * 7 + 1;
	err = err ? err : reg_mr(c.fd, pd, buf, 1 << 16, IB_UVERBS_ACCESS_LOCAL_WRITE |
				 IB_UVERBS_ACCESS_REMOTE_WRITE | IB_UVERBS_ACCESS_REMOTE_READ, &mr);
	err = err ? err : create_cq_ch(c.fd, 4, chr.fd, &a);
	err = err ? err : create_cq_ch(c.fd, 4, -1, &b);
	a.rings = qp_rings(0);
	b.rings = qp_rings(0);
	a.qpdb = (void *)(uintptr_t)a.rings.db_addr;
	b.qpdb = (void *)(uintptr_t)b.rings.db_addr;
	err = err ? err : create_qp(c.fd, pd, a.cq.handle, 0, 0, IB_UVERBS_QPT_RC, &a.rings, &a.qp);
	err = err ? err : create_qp(c.fd, pd, b.cq.handle, 0, 0, IB_UVERBS_QPT_RC, &b.rings, &b.qp);
	result(!err, "data: context, doorbell page, PD, MR, CQs and two RC QPs", "errno %d", err);
	if (err)
		return;
	err = connect_qp(c.fd, &a, 1, sgid1, g2, b.qp.qpn);
	err = err ? err : connect_qp(c.fd, &b, 2, sgid2, g1, a.qp.qpn);
	result(!err, "data: two RC QPs on ports 1 and 2 connect (INIT, RTR with the AV, RTS)",
	       "error %d", err);
	if (err)
		return;
	{
		uint32_t inl;

		err = query_qp_state(c.fd, a.qp.handle, &st, &inl);
		result(!err && st == 3, "data: query_qp of a connected QP reports RTS",
		       "errno %d state %d", err, st);
	}

	/* SEND port 1 -> port 2, with the CQ armed for an event. */
	post_recv(&b, 0xb0, buf + 4096, 1024, mr.lkey);
	db[HPU_IB_DB_CQ_ARM / 4] = a.cq.cqn;
	post_send(&a, db, HPU_IB_WQE_SEND, 0xa0, buf, 256, mr.lkey, 0, 0, 1);
	err = poll_cq(&a, 4, &cqe, 20000);
	result(!err && !cqe.status && cqe.wr_id == 0xa0,
	       "data: a SEND completes on the sender's CQ", "errno %d status %u wr_id %llx",
	       err, cqe.status, (unsigned long long)cqe.wr_id);
	err = poll_cq(&b, 4, &cqe, 20000);
	result(!err && !cqe.status && cqe.wr_id == 0xb0 && cqe.byte_len == 256 &&
	       !memcmp(buf, buf + 4096, 256),
	       "data: the SEND arrives whole in the receive buffer across the wire",
	       "errno %d status %u wr_id %llx len %u", err, cqe.status,
	       (unsigned long long)cqe.wr_id, cqe.byte_len);
	fcntl(chr.fd, F_SETFL, O_NONBLOCK);
	for (i = 0; i < 2000; i++) {
		if (read(chr.fd, &ev, sizeof(ev)) == sizeof(ev))
			break;
		if (errno != EAGAIN)
			break;
		usleep(1000);
	}
	/* The event names the CQ by the user handle it was created with. */
	result(i < 2000 && ev.cq_handle == 0xc0ffee00u + chr.fd,
	       "data: the armed CQ's completion reaches its completion channel",
	       i < 2000 ? "handle %llx" : "no event", (unsigned long long)ev.cq_handle);

	/* RDMA WRITE and READ. */
	post_send(&a, db, HPU_IB_WQE_RDMA_WRITE, 0xa1, buf, 512, mr.lkey,
		  (uintptr_t)buf + 8192, mr.rkey, 1);
	err = poll_cq(&a, 4, &cqe, 20000);
	result(!err && !cqe.status && !memcmp(buf, buf + 8192, 512),
	       "data: an RDMA WRITE lands in the peer's MR", "errno %d status %u", err, cqe.status);
	post_send(&b, db, HPU_IB_WQE_RDMA_READ, 0xb2, buf + 16384, 300, mr.lkey,
		  (uintptr_t)buf + 100, mr.rkey, 1);
	err = poll_cq(&b, 4, &cqe, 20000);
	result(!err && !cqe.status && !memcmp(buf + 100, buf + 16384, 300),
	       "data: an RDMA READ brings the peer's bytes", "errno %d status %u", err, cqe.status);

	/* Another process rings its own doorbell page with our QPN: refused. */
	post_send(&a, db, HPU_IB_WQE_SEND, 0xa3, buf, 16, mr.lkey, 0, 0, 0);
	a.qpdb[0] = a.sq_pi;
	__sync_synchronize();
	pid = fork();
	if (!pid) {
		struct ctx o = {};
		volatile uint32_t *odb;

		if (open_ctx(dev, &o))
			_exit(2);
		odb = mmap(NULL, 4096, PROT_WRITE, MAP_SHARED, o.fd, o.drv.db_mmap_offset);
		if (odb == MAP_FAILED)
			_exit(3);
		odb[HPU_IB_DB_SQ / 4] = a.qp.qpn;
		usleep(200000);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	post_recv(&b, 0xb3, buf + 4096, 1024, mr.lkey);
	err = poll_cq(&a, 4, &cqe, 2000);
	result(WIFEXITED(st) && !WEXITSTATUS(st) && err == ETIMEDOUT,
	       "data: another process's doorbell page cannot start our QP", "child %d, errno %d",
	       st, err);
	db[HPU_IB_DB_SQ / 4] = a.qp.qpn;
	err = poll_cq(&a, 4, &cqe, 20000);
	result(!err && cqe.wr_id == 0xa3, "data: our own doorbell then starts it",
	       "errno %d wr_id %llx", err, (unsigned long long)cqe.wr_id);
	poll_cq(&b, 4, &cqe, 20000);

	/* An MR of HBM (a dma-buf of this HPU): WRITE into it, READ it back. */
	{
		uint64_t iova = 0x7e5700000000ull;
		uint32_t hl = 0, hr = 0, x, y;
		int dmabuf = hbm_dmabuf(2 << 20);

		err = dmabuf < 0 ? -dmabuf : 0;
		err = err ? err : reg_dmabuf_mr(c.fd, pd, c.fd, 0, 4096, iova,
						IB_UVERBS_ACCESS_LOCAL_WRITE, &x, &y);
		result(err == EBADF || err == EINVAL, "data: an MR of a file that is no dma-buf is refused",
		       "errno %d", err);
		err = dmabuf < 0 ? -dmabuf : reg_dmabuf_mr(c.fd, pd, dmabuf, 2 << 20, 4096, iova,
							   IB_UVERBS_ACCESS_LOCAL_WRITE, &x, &y);
		result(err == EINVAL, "data: an MR beyond the end of the dma-buf is refused",
		       "errno %d", err);
		err = dmabuf < 0 ? -dmabuf : reg_dmabuf_mr(c.fd, pd, dmabuf, 8192, 65536, iova,
			IB_UVERBS_ACCESS_LOCAL_WRITE | IB_UVERBS_ACCESS_REMOTE_WRITE |
			IB_UVERBS_ACCESS_REMOTE_READ, &hl, &hr);
		result(!err && hl && hl == hr, "data: an MR of an HBM dma-buf of the same HPU registers",
		       "errno %d", err);
		if (!err) {
			for (i = 0; i < 4096; i++)
				buf[20480 + i] = i * 13 + 5;
			post_send(&a, db, HPU_IB_WQE_RDMA_WRITE, 0xa5, buf + 20480, 4096, mr.lkey,
				  iova + 1000, hr, 1);
			err = poll_cq(&a, 4, &cqe, 20000);
			memset(buf + 24576, 0, 4096);
			if (!err && !cqe.status) {
				post_send(&a, db, HPU_IB_WQE_RDMA_READ, 0xa6, buf + 24576, 4096,
					  mr.lkey, iova + 1000, hr, 1);
				err = poll_cq(&a, 4, &cqe, 20000);
			}
			result(!err && !cqe.status && !memcmp(buf + 20480, buf + 24576, 4096),
			       "data: an RDMA WRITE into HBM and a READ back carry the same bytes",
			       "errno %d status %u", err, cqe.status);
		}
	}

	t_ud(c.fd, db, pd, buf, mr.lkey, sgid1, g2, mac2);
	t_srq(c.fd, c.async_fd, db, pd, buf, mr.lkey, sgid1, g1, sgid2, g2);

	/* A bad rkey: remote access error, the QP fails. */
	post_send(&a, db, HPU_IB_WQE_RDMA_WRITE, 0xa4, buf, 64, mr.lkey,
		  (uintptr_t)buf, mr.rkey ^ 0x100, 1);
	err = poll_cq(&a, 4, &cqe, 30000);
	result(!err && cqe.status == 10, "data: an RDMA WRITE with a bad rkey completes REM_ACCESS_ERR",
	       "errno %d status %u", err, cqe.status);
	{
		struct ib_uverbs_async_event_desc aev = {};

		fcntl(c.async_fd, F_SETFL, O_NONBLOCK);
		for (i = 0; i < 3000; i++) {
			if (read(c.async_fd, &aev, sizeof(aev)) == sizeof(aev) &&
			    aev.event_type == 1 /* IB_EVENT_QP_FATAL */)
				break;
			usleep(1000);
		}
		result(i < 3000 && aev.element == 0x9900 + IB_UVERBS_QPT_RC,
		       "data: the failed QP's QP_FATAL reaches the context's async events",
		       "event %u element %llx", aev.event_type, (unsigned long long)aev.element);
	}
	close(c.fd);
}

/* Users the userlimit checks run as (nobody, and the uid below it). */
#define UL_UID_A	65534
#define UL_UID_B	65533
#define UL_CTXS		3
#define UL_MAX		64

/* A child: become @uid, and die with the parent (set after the change of
 * credentials, which clears it). */
static void drop_to(uid_t uid)
{
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid) ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL)) {
		perror("setresuid");
		_exit(99);
	}
	if (getppid() == 1)
		_exit(97);
}

/*
 * Create CQs round robin over @nctx contexts until one is refused: how
 * many were made, the refusal's errno in *@err, the CQs in @cqs and the
 * context of each in @owner.
 */
static int fill_cqs(struct ctx *ctxs, int nctx, struct cq *cqs, int *owner, int *err)
{
	int n;

	*err = 0;
	for (n = 0; n < UL_MAX; n++) {
		*err = create_cq(ctxs[n % nctx].fd, 1, &cqs[n]);
		if (*err)
			break;
		owner[n] = n % nctx;
	}
	return n;
}

static int open_ctxs(const char *dev, struct ctx *ctxs, int n)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = open_ctx(dev, &ctxs[i]);
		if (err)
			return err;
	}
	return 0;
}

static void t_userlimit(const char *dev, int max_cq, int user_max)
{
	struct ctx ctxs[UL_CTXS] = {};
	int owner[UL_MAX], to_a[2], from_a[2], msg[3], st, n, i, err;
	struct cq cqs[UL_MAX];
	pid_t a, b;

	if (user_max <= 0 || user_max >= UL_CTXS * max_cq || UL_CTXS * max_cq > UL_MAX ||
	    pipe(to_a) || pipe(from_a)) {
		result(0, "userlimit arguments", "MAX_CQ %d USER_MAX_CQ %d", max_cq, user_max);
		return;
	}
	a = fork();
	if (a == 0) {
		/* User A: fill, report, wait, free one, make one again. */
		close(to_a[1]);
		close(from_a[0]);
		drop_to(UL_UID_A);
		msg[0] = open_ctxs(dev, ctxs, UL_CTXS);
		n = msg[0] ? 0 : fill_cqs(ctxs, UL_CTXS, cqs, owner, &msg[1]);
		msg[2] = n;
		if (write(from_a[1], msg, sizeof(msg)) != sizeof(msg) ||
		    read(to_a[0], &st, 1) != 1)
			_exit(98);
		msg[0] = n ? destroy_cq(ctxs[owner[n - 1]].fd, cqs[n - 1].handle) : -1;
		msg[1] = n ? create_cq(ctxs[owner[n - 1]].fd, 1, &cqs[n - 1]) : -1;
		msg[2] = n ? create_cq(ctxs[0].fd, 1, &cqs[0]) : -1;
		if (write(from_a[1], msg, sizeof(msg)) != sizeof(msg))
			_exit(98);
		_exit(0);
	}
	/* A's ends closed here: an A that dies early is an end of file. */
	close(to_a[0]);
	close(from_a[1]);
	if (a < 0 || read(from_a[0], msg, sizeof(msg)) != sizeof(msg)) {
		result(0, "one user cannot hold more CQs than user_max_cq in all its contexts",
		       "the first user's process failed");
		return;
	}
	result(!msg[0] && msg[2] == user_max && msg[1] == ENOSPC,
	       "one user cannot hold more CQs than user_max_cq in all its contexts",
	       "open errno %d, %d created over %d contexts, errno %d", msg[0], msg[2],
	       UL_CTXS, msg[1]);

	b = fork();
	if (b == 0) {
		/* User B, while A holds its limit. */
		drop_to(UL_UID_B);
		err = open_ctx(dev, &ctxs[0]);
		_exit(err ? err : create_cq(ctxs[0].fd, 1, &cqs[0]));
	}
	st = -1;
	if (b > 0)
		waitpid(b, &st, 0);
	result(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "another user creates CQs while one user holds its limit", "status %#x", st);

	/* Root (CAP_SYS_ADMIN) is not counted: its contexts' own limits only. */
	err = open_ctxs(dev, ctxs, UL_CTXS);
	n = err ? 0 : fill_cqs(ctxs, UL_CTXS, cqs, owner, &err);
	result(n == UL_CTXS * max_cq && err == ENOSPC,
	       "CAP_SYS_ADMIN's CQs count against ctx_max_cq, not user_max_cq",
	       "%d created over %d contexts, errno %d", n, UL_CTXS, err);
	for (i = 0; i < UL_CTXS; i++)
		if (ctxs[i].fd > 0)
			close(ctxs[i].fd);

	if (write(to_a[1], "x", 1) != 1 || read(from_a[0], msg, sizeof(msg)) != sizeof(msg))
		msg[0] = msg[1] = msg[2] = -1;
	result(!msg[0] && !msg[1] && msg[2] == ENOSPC,
	       "a CQ the user destroyed no longer counts against user_max_cq",
	       "destroy %d, create %d, one more %d", msg[0], msg[1], msg[2]);
	waitpid(a, &st, 0);

	/* All of A's contexts closed: nothing of A's is counted any more. */
	a = fork();
	if (a == 0) {
		drop_to(UL_UID_A);
		err = open_ctxs(dev, ctxs, UL_CTXS);
		n = err ? -1 : fill_cqs(ctxs, UL_CTXS, cqs, owner, &err);
		_exit(n == user_max && err == ENOSPC ? 0 : 1);
	}
	st = -1;
	if (a > 0)
		waitpid(a, &st, 0);
	result(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "a user's closed contexts leave nothing counted against user_max_cq",
	       "status %#x", st);
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
	if (!strcmp(mode, "data") && argc > 7) {
		t_data(dev, argv[7], atoi(argv[3]), argv[4], atoi(argv[5]), argv[6]);
		if (argc > 8) {
			uint8_t g2[16];

			gid_of(argv[6], g2);
			t_ah_limit(dev, atoi(argv[3]), g2, atoi(argv[8]));
		}
		return failures > 100 ? 100 : failures;
	}
	if (!strcmp(mode, "userlimit") && argc > 4) {
		t_userlimit(dev, atoi(argv[3]), atoi(argv[4]));
		return failures > 100 ? 100 : failures;
	}
	if (!strcmp(mode, "memlock")) {
		/* Under a small RLIMIT_MEMLOCK: 4 MiB cannot be pinned. */
		void *big = ring(4 << 20);

		err = open_ctx(dev, &c);
		err = err ? err : alloc_pd(c.fd, &pd);
		err = err ? err : reg_mr(c.fd, pd, big, 4 << 20, IB_UVERBS_ACCESS_LOCAL_WRITE, NULL);
		printf("memlock: %d\n", err);
		return 0;
	}
	if (!strcmp(mode, "wedge") && argc > 5) {
		struct ctx c2 = {};
		struct cq cq, cq2;
		long h0;
		FILE *inj;

		err = open_ctx(dev, &c);
		err = err ? err : create_cq(c.fd, 4, &cq);
		result(!err, "wedge: a context and a CQ", "errno %d", err);
		if (err)
			return failures;
		inj = fopen(argv[3], "w");
		result(inj && fputs("stuck", inj) >= 0 && !fclose(inj),
		       "wedge: the engine's commands stop (inject_roce_cmd)", "%s: %s", argv[3],
		       strerror(errno));
		err = destroy_cq(c.fd, cq.handle);
		result(!err, "wedge: a DESTROY the engine does not confirm still succeeds",
		       "errno %d", err);
		err = create_cq(c.fd, 4, &cq2);
		result(err == EIO, "wedge: commands after the timeout fail EIO", "errno %d", err);
		h0 = atol(argv[5]);
		close(c.fd);
		err = open_ctx(dev, &c2);
		if (err || read_long(argv[4]) != h0)
			printf("NOTE wedge: the device is already going or reset (errno %d): page reuse not seen\n",
			       err);
		else
			result(!err && c2.drv.db_page != c.drv.db_page,
			       "wedge: the doorbell page of an object the engine may still run is not reused",
			       "errno %d, pages %u and %u", err, c.drv.db_page, c2.drv.db_page);
		return failures > 100 ? 100 : failures;
	}
	if (!strcmp(mode, "cq")) {
		struct cq cq;

		err = open_ctx(dev, &c);
		err = err ? err : create_cq(c.fd, 4, &cq);
		printf("cq: %d\n", err);
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
	t_mr_overlap(&c);
	t_cq(&c, argc > 3 ? atoi(argv[3]) : 0);
	t_pd_limit(dev, argc > 4 ? atoi(argv[4]) : 0);
	t_qp(&c);
	close(c.fd);
	return failures > 100 ? 100 : failures;
}
