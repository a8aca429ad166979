// SPDX-License-Identifier: MIT
/*
 * hbm-rdma: RDMA into and out of HBM through libibverbs, the hpu provider
 * and libhpu's <hpu/hpu_rdma.h> (run by tests/vm/rdma/rdma-tests.sh).
 *
 *   hpu-hbm-rdma HPU_INDEX PORT_A GID_A PORT_B GID_B
 *
 * Finds the ib_device of HPU HPU_INDEX with hpu_rdma_find_device(), connects
 * an RC QP on port PORT_A to one on PORT_B (ib port numbers; the two ports
 * wired to each other, GID_x the RoCE v2 GID index of each port's address),
 * registers an HBM buffer with hpu_rdma_reg_buffer() and moves data between
 * it and host memory over the wire:
 *   - HBM filled by the DMA engine, RDMA READ into host memory: the bytes match;
 *   - RDMA WRITE from host memory into HBM, copied back by the DMA engine:
 *     the bytes match (the data really is in HBM);
 * then maps the HBM buffer into the process (hpu_buffer_map(), through the
 * device's BAR) and registers that mapping with plain ibv_reg_mr(), as
 * UCX and MPI do with any pointer: the MR is the HBM itself (RDMA WRITE
 * into it is read back by the DMA engine and through the mapping);
 * and checks the helpers' refusals and the rules of registering a mapping:
 * read-only and inaccessible pages, a registration that starts in a part of
 * a split mapping, an MR that outlives the mapping and the buffer, another
 * HPU's mapping, and the dma-buf and mapping MRs of one buffer agreeing.
 * Each check prints PASS or FAIL; the exit status is the number of
 * failures (100 and up: could not run).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/mman.h>

#include <hpu/hpu.h>
#include <hpu/hpu_rdma.h>

#include "rc-connect.h"

#define LEN 262144u
#define HBM_SIZE (2u << 20)

static int failures;

static void check(int ok, const char *what, const char *why)
{
	if (ok) {
		printf("PASS vm/rdma/hbm/%s\n", what);
	} else {
		printf("FAIL vm/rdma/hbm/%s: %s\n", what, why ? why : "");
		failures++;
	}
}

static void die(const char *what, int err)
{
	fprintf(stderr, "hbm-rdma: %s: %s\n", what, strerror(err));
	exit(100);
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp *qp = rc_create_qp(pd, cq, 16, 1);

	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

static void connect_qp(struct ibv_qp *qp, uint8_t port, int sgid, const union ibv_gid *dgid,
		       uint32_t dqpn)
{
	const char *step;
	int ret;

	ret = rc_connect(qp, port, sgid, dgid, dqpn,
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE,
			 &step);
	if (ret) {
		fprintf(stderr, "modify to %s: ", step);
		die("ibv_modify_qp", ret);
	}
}

/* One signalled RDMA READ or WRITE of LEN bytes; 0 or why not. */
static const char *rdma_op(struct ibv_qp *qp, struct ibv_cq *cq, enum ibv_wr_opcode op,
			   struct ibv_mr *local, uint64_t raddr, uint32_t rkey)
{
	static char why[128];
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	time_t end = time(NULL) + 120;
	int n;

	sge.addr = (uintptr_t)local->addr;
	sge.length = LEN;
	sge.lkey = local->lkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = op;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	n = ibv_post_send(qp, &wr, &bad);
	if (n) {
		snprintf(why, sizeof(why), "ibv_post_send: %s", strerror(n));
		return why;
	}
	do {
		n = ibv_poll_cq(cq, 1, &wc);
	} while (n == 0 && time(NULL) < end);
	if (n < 0)
		return "ibv_poll_cq failed";
	if (n == 0)
		return "no completion in 120 s";
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)op) {
		snprintf(why, sizeof(why), "completion status %s, wr_id %" PRIu64,
			 ibv_wc_status_str(wc.status), wc.wr_id);
		return why;
	}
	return NULL;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131u + seed) ^ (i >> 9));
}

/* Copy @size bytes between device addresses on @q; 0 or a negative errno. */
static int dev_copy(hpu_queue_t *q, uint64_t dst, uint64_t src, uint64_t size)
{
	hpu_fence_t *f = NULL;
	int ret = hpu_queue_copy(q, dst, src, size, &f);

	if (!ret)
		ret = hpu_fence_wait(f, 60ull * 1000 * 1000 * 1000);
	hpu_fence_destroy(f);
	return ret;
}

/* ibv_reg_mr() of @len bytes at @addr with @access fails with errno @want. */
static void refused(struct ibv_pd *pd, void *addr, size_t len, int access, int want,
		    const char *what)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	check(!mr && errno == want, what, mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

/*
 * LEN bytes of pattern @seed RDMA-written at @waddr of MR @wkey, then read
 * back from @raddr of MR @rkey: the same bytes (check @what).
 */
static void round_trip(struct ibv_qp *qa, struct ibv_cq *cq, struct ibv_mr *host_mr,
		       uint8_t *host, uint8_t *want, unsigned int seed, uint64_t waddr,
		       uint32_t wkey, uint64_t raddr, uint32_t rkey, const char *what)
{
	const char *why;

	fill(host, LEN, seed);
	memcpy(want, host, LEN);
	why = rdma_op(qa, cq, IBV_WR_RDMA_WRITE, host_mr, waddr, wkey);
	memset(host, 0, LEN);
	if (!why)
		why = rdma_op(qa, cq, IBV_WR_RDMA_READ, host_mr, raddr, rkey);
	check(!why && memcmp(host, want, LEN) == 0, what, why ? why : "data differs");
}

/* HBM bytes of @dev's context (hpu_memory_info.hbm_ctx_used), or ~0. */
static uint64_t ctx_hbm_used(hpu_device_t *dev)
{
	struct hpu_memory_info mi = { .size = sizeof(mi) };

	return hpu_device_memory_info(dev, &mi) ? ~0ull : mi.hbm_ctx_used;
}

/*
 * The mapping rules of ibv_reg_mr() on HBM mapped into the process, each
 * with its errno, and the lifetime of such an MR: on a buffer of its own.
 */
static void mapping_rules(hpu_device_t *dev, hpu_queue_t *q, hpu_buffer_t *stage,
			  struct ibv_pd *pd, struct ibv_qp *qa, struct ibv_cq *cq,
			  struct ibv_mr *host_mr, uint8_t *host, uint8_t *want)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	hpu_buffer_t *b;
	struct ibv_mr *mr, *dmr;
	uint64_t used;
	const char *why;
	uint8_t *cpu;
	void *p;
	int ret;

	ret = hpu_buffer_create(dev, HBM_SIZE, HPU_MEM_DEVICE, &b);
	if (ret)
		die("hpu_buffer_create (HBM, mapping rules)", -ret);
	ret = hpu_buffer_map(b, &p);
	if (ret)
		die("hpu_buffer_map (mapping rules)", -ret);
	cpu = p;

	/* Pages the process may only read, or not access at all. */
	if (mprotect(cpu + 65536, 65536, PROT_READ))
		die("mprotect PROT_READ", errno);
	refused(pd, cpu + 65536, 65536, rw, EACCES,
		"a writable MR of a read-only mapping is refused (EACCES)");
	if (mprotect(cpu + 65536, 65536, PROT_NONE))
		die("mprotect PROT_NONE", errno);
	refused(pd, cpu + 65536, 65536, IBV_ACCESS_REMOTE_READ, EACCES,
		"an MR of an inaccessible (PROT_NONE) mapping is refused, even read-only (EACCES)");
	if (mprotect(cpu + 65536, 65536, PROT_READ | PROT_WRITE))
		die("mprotect back", errno);

	/*
	 * A registration that starts in the second part of a split mapping
	 * (its VMA's vm_pgoff is not the buffer's start): RDMA WRITE lands at
	 * that offset of the buffer, not at its start.
	 */
	ret = madvise(cpu + 262144, 65536, MADV_DONTFORK);
	mr = ret ? NULL : ibv_reg_mr(pd, cpu + 262144 + 8192, LEN, rw);
	check(mr != NULL, "an MR starting inside a part of a split mapping registers",
	      ret ? "madvise failed" : strerror(errno));
	if (mr) {
		fill(host, LEN, 21);
		memcpy(want, host, LEN);
		why = rdma_op(qa, cq, IBV_WR_RDMA_WRITE, host_mr, (uintptr_t)cpu + 262144 + 8192,
			      mr->rkey);
		memset(hpu_buffer_host_ptr(stage), 0, LEN);
		ret = why ? 0 : dev_copy(q, hpu_buffer_va(stage), hpu_buffer_va(b) + 262144 + 8192,
					 LEN);
		check(!why && !ret && memcmp(hpu_buffer_host_ptr(stage), want, LEN) == 0,
		      "RDMA WRITE into it lands at that offset of the buffer",
		      why ? why : ret ? strerror(-ret) : "data differs");
		ibv_dereg_mr(mr);
	}
	/* (the 64 KiB stays DONTCOPY: MADV_DOFORK refuses VM_IO; nothing forks later) */

	/*
	 * The buffer's dma-buf MR and its mapping's MR are the same memory:
	 * what goes in through one comes out through the other.
	 */
	dmr = hpu_rdma_reg_buffer(pd, b, 0, LEN, hpu_buffer_va(b), rw);
	mr = ibv_reg_mr(pd, cpu, LEN, rw);
	check(dmr && mr, "one buffer registers through its dma-buf and through its mapping",
	      strerror(errno));
	if (dmr && mr) {
		round_trip(qa, cq, host_mr, host, want, 33, (uintptr_t)cpu, mr->rkey,
			   hpu_buffer_va(b), dmr->rkey,
			   "RDMA WRITE through the mapping's MR, READ through the dma-buf MR: the same bytes");
		round_trip(qa, cq, host_mr, host, want, 34, hpu_buffer_va(b), dmr->rkey,
			   (uintptr_t)cpu, mr->rkey,
			   "RDMA WRITE through the dma-buf MR, READ through the mapping's MR: the same bytes");
	}
	if (dmr)
		ibv_dereg_mr(dmr);

	/*
	 * The mapping's MR holds the buffer, not the process's mapping:
	 * after hpu_buffer_destroy() (munmap, handle closed) RDMA still
	 * reaches the HBM, which stays charged to the context until the MR
	 * is deregistered.
	 */
	if (!mr) {
		hpu_buffer_destroy(b);
		return;
	}
	used = ctx_hbm_used(dev);
	hpu_buffer_destroy(b);
	check(used != ~0ULL && ctx_hbm_used(dev) == used,
	      "the mapping's MR keeps the buffer's HBM once the buffer is destroyed", "freed");
	round_trip(qa, cq, host_mr, host, want, 47, (uintptr_t)cpu, mr->rkey, (uintptr_t)cpu,
		   mr->rkey, "RDMA WRITE and READ through the MR after the buffer and its mapping are gone");
	check(ibv_dereg_mr(mr) == 0, "that MR deregisters", strerror(errno));
	check(ctx_hbm_used(dev) == used - HBM_SIZE,
	      "its HBM is freed once the MR is deregistered", "still charged");
}

/* A mapping of another HPU's buffer is not this device's to register. */
static void other_hpu(unsigned int index, struct ibv_pd *pd)
{
	const struct hpu_device_desc *d;
	hpu_device_list_t *list = NULL;
	hpu_device_t *other = NULL;
	hpu_buffer_t *b;
	size_t i;
	int ret;

	/* Accel indices need not be 0..n-1 (a device rebound gets a new one). */
	ret = hpu_device_list_get(&list);
	if (ret)
		die("hpu_device_list_get", -ret);
	for (i = 0; i < hpu_device_list_size(list) && !other; i++) {
		d = hpu_device_list_at(list, i);
		if (d->index != index && hpu_open_by_index(d->index, &other))
			other = NULL;
	}
	hpu_device_list_free(list);
	if (!other) {
		printf("hbm-rdma: one HPU only: no check of another HPU's mapping\n");
		return;
	}
	/* A host buffer: the second HPU of the VM suite cannot map its HBM. */
	ret = hpu_buffer_create(other, 65536, HPU_MEM_HOST, &b);
	if (ret)
		die("hpu_buffer_create (other HPU)", -ret);
	refused(pd, hpu_buffer_host_ptr(b), 65536, IBV_ACCESS_LOCAL_WRITE, EOPNOTSUPP,
		"ibv_reg_mr of another HPU's buffer mapping is refused (EOPNOTSUPP)");
	hpu_buffer_destroy(b);
	hpu_close(other);
}

int main(int argc, char **argv)
{
	hpu_buffer_t *hbm, *stage, *ro, *user;
	struct ibv_mr *hbm_mr, *host_mr, *map_mr, *mr;
	struct ibv_qp *qa, *qb;
	struct ibv_device **list, *ibdev;
	struct ibv_context *ctx;
	union ibv_gid ga, gb;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	hpu_device_t *dev;
	hpu_queue_t *q;
	const char *why;
	uint8_t *host, *want;
	void *cpu = NULL;
	int pa, pb, ia, ib, ret, n;

	/* Line by line, so that a reason on stderr follows the checks before it. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 6) {
		fprintf(stderr, "usage: %s HPU_INDEX PORT_A GID_A PORT_B GID_B\n", argv[0]);
		return 100;
	}
	pa = atoi(argv[2]);
	ia = atoi(argv[3]);
	pb = atoi(argv[4]);
	ib = atoi(argv[5]);
	ret = hpu_open_by_index((unsigned int)atoi(argv[1]), &dev);
	if (ret)
		die("hpu_open_by_index", -ret);
	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list", errno);
	ibdev = hpu_rdma_find_device(list, dev);
	check(ibdev && strncmp(ibv_get_device_name(ibdev), "hpu_", 4) == 0,
	      "hpu_rdma_find_device finds the HPU's own ib_device", strerror(errno));
	if (!ibdev)
		return 100;
	printf("hbm-rdma: HPU %s is %s\n", argv[1], ibv_get_device_name(ibdev));
	ctx = ibv_open_device(ibdev);
	if (!ctx)
		die("ibv_open_device", errno);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!pd || !cq)
		die("PD or CQ", errno);
	if (ibv_query_gid(ctx, (uint8_t)pa, ia, &ga) || ibv_query_gid(ctx, (uint8_t)pb, ib, &gb))
		die("ibv_query_gid", errno);

	/* Device memory, a staging host buffer the DMA engine reaches, a queue. */
	ret = hpu_buffer_create(dev, HBM_SIZE, HPU_MEM_DEVICE, &hbm);
	if (ret)
		die("hpu_buffer_create (HBM)", -ret);
	ret = hpu_buffer_create(dev, LEN, HPU_MEM_HOST, &stage);
	if (ret)
		die("hpu_buffer_create (host)", -ret);
	ret = hpu_queue_create(dev, HPU_ENGINE_DMA, 0, &q);
	if (ret)
		die("hpu_queue_create", -ret);
	host = aligned_alloc(4096, LEN);
	want = malloc(LEN);
	if (!host || !want)
		die("malloc", ENOMEM);
	host_mr = ibv_reg_mr(pd, host, LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!host_mr)
		die("ibv_reg_mr", errno);

	/* Refusals of the helper. */
	errno = 0;
	mr = hpu_rdma_reg_buffer(pd, hbm, HBM_SIZE - 4096, 8192, 0, IBV_ACCESS_LOCAL_WRITE);
	check(!mr && errno == EINVAL, "a range beyond the buffer is refused (EINVAL)",
	      strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	ret = hpu_buffer_from_user(dev, want, LEN, 0, &user);
	if (ret)
		die("hpu_buffer_from_user", -ret);
	mr = hpu_rdma_reg_buffer(pd, user, 0, LEN, 0, IBV_ACCESS_LOCAL_WRITE);
	check(mr != NULL, "a user-pointer buffer registers through its dma-buf",
	      strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	hpu_buffer_destroy(user);
	/*
	 * Read-only holds through the export: pages the process may only read
	 * (HPU_MEM_READONLY on HBM limits the creator's own mapping only).
	 */
	ret = hpu_buffer_from_user(dev, want, LEN, HPU_MEM_READONLY, &ro);
	if (ret)
		die("hpu_buffer_from_user (read-only)", -ret);
	errno = 0;
	mr = hpu_rdma_reg_buffer(pd, ro, 0, LEN, 0x1000,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	check(!mr && errno == EACCES,
	      "a read-only user-pointer buffer with a write right is refused (EACCES)",
	      mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mr = hpu_rdma_reg_buffer(pd, ro, 0, LEN, 0x1000, IBV_ACCESS_REMOTE_READ);
	check(mr != NULL, "a read-only user-pointer buffer registers for remote reads",
	      strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	hpu_buffer_destroy(ro);

	hbm_mr = hpu_rdma_reg_buffer(pd, hbm, 4096, LEN, hpu_buffer_va(hbm) + 4096,
				     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				     IBV_ACCESS_REMOTE_WRITE);
	check(hbm_mr != NULL, "an HBM buffer registers as an MR", strerror(errno));
	if (!hbm_mr)
		return 100;

	qa = make_qp(pd, cq);
	qb = make_qp(pd, cq);
	connect_qp(qa, (uint8_t)pa, ia, &gb, qb->qp_num);
	connect_qp(qb, (uint8_t)pb, ib, &ga, qa->qp_num);

	/* HBM written by the DMA engine, read over the wire. */
	fill(hpu_buffer_host_ptr(stage), LEN, 7);
	memcpy(want, hpu_buffer_host_ptr(stage), LEN);
	ret = dev_copy(q, hpu_buffer_va(hbm) + 4096, hpu_buffer_va(stage), LEN);
	if (ret)
		die("DMA to HBM", -ret);
	memset(host, 0, LEN);
	why = rdma_op(qa, cq, IBV_WR_RDMA_READ, host_mr, hpu_buffer_va(hbm) + 4096,
		      hbm_mr->rkey);
	check(!why && memcmp(host, want, LEN) == 0,
	      "RDMA READ of HBM returns what the DMA engine wrote there",
	      why ? why : "data differs");

	/* Host memory written into HBM over the wire, read by the DMA engine. */
	fill(host, LEN, 99);
	memcpy(want, host, LEN);
	why = rdma_op(qa, cq, IBV_WR_RDMA_WRITE, host_mr, hpu_buffer_va(hbm) + 4096,
		      hbm_mr->rkey);
	memset(hpu_buffer_host_ptr(stage), 0, LEN);
	ret = why ? 0 : dev_copy(q, hpu_buffer_va(stage), hpu_buffer_va(hbm) + 4096, LEN);
	check(!why && !ret && memcmp(hpu_buffer_host_ptr(stage), want, LEN) == 0,
	      "RDMA WRITE into HBM lands in HBM (read back by the DMA engine)",
	      why ? why : ret ? strerror(-ret) : "data differs");

	/* The same HBM through the process's mapping of it and ibv_reg_mr(). */
	ret = hpu_buffer_map(hbm, &cpu);
	check(!ret && cpu == hpu_buffer_host_ptr(hbm),
	      "hpu_buffer_map maps the HBM buffer into the process", strerror(-ret));
	if (ret)
		return 100;
	map_mr = ibv_reg_mr(pd, (uint8_t *)cpu + 4096, LEN,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE);
	check(map_mr != NULL, "ibv_reg_mr of the HBM mapping registers (the buffer, not pinned pages)",
	      strerror(errno));
	if (!map_mr)
		return 100;
	fill(host, LEN, 55);
	memcpy(want, host, LEN);
	why = rdma_op(qa, cq, IBV_WR_RDMA_WRITE, host_mr, (uintptr_t)cpu + 4096, map_mr->rkey);
	memset(hpu_buffer_host_ptr(stage), 0, LEN);
	ret = why ? 0 : dev_copy(q, hpu_buffer_va(stage), hpu_buffer_va(hbm) + 4096, LEN);
	check(!why && !ret && memcmp(hpu_buffer_host_ptr(stage), want, LEN) == 0,
	      "RDMA WRITE into the mapping's MR lands in HBM (read back by the DMA engine)",
	      why ? why : ret ? strerror(-ret) : "data differs");
	check(!why && memcmp((uint8_t *)cpu + 4096, want, 4096) == 0 &&
	      memcmp((uint8_t *)cpu + 4096 + LEN - 4096, want + LEN - 4096, 4096) == 0,
	      "the CPU reads the RDMA WRITE's bytes through the mapping", "data differs");
	memset(host, 0, LEN);
	memcpy((uint8_t *)cpu + 8192, "written by the CPU", 19);
	memcpy(want + 4096, "written by the CPU", 19);
	why = rdma_op(qa, cq, IBV_WR_RDMA_READ, host_mr, (uintptr_t)cpu + 4096, map_mr->rkey);
	check(!why && memcmp(host + 4096, "written by the CPU", 19) == 0,
	      "RDMA READ of the mapping's MR returns what the CPU wrote there",
	      why ? why : "data differs");
	check(ibv_dereg_mr(map_mr) == 0, "the mapping's MR deregisters", strerror(errno));

	/* A host buffer's mapping (VM_PFNMAP too) registers as its buffer. */
	map_mr = ibv_reg_mr(pd, hpu_buffer_host_ptr(stage), LEN, IBV_ACCESS_LOCAL_WRITE);
	check(map_mr != NULL, "ibv_reg_mr of a host buffer's mapping registers", strerror(errno));
	if (map_mr) {
		memset(hpu_buffer_host_ptr(stage), 0, LEN);
		why = rdma_op(qa, cq, IBV_WR_RDMA_READ, map_mr, hpu_buffer_va(hbm) + 4096,
			      hbm_mr->rkey);
		check(!why && memcmp(hpu_buffer_host_ptr(stage), want, LEN) == 0,
		      "RDMA READ of HBM into a host buffer's mapping",
		      why ? why : "data differs");
		check(ibv_dereg_mr(map_mr) == 0, "the host buffer's MR deregisters", strerror(errno));
	}
	errno = 0;
	mr = ibv_reg_mr(pd, (uint8_t *)cpu + HBM_SIZE - 4096, 8192, IBV_ACCESS_LOCAL_WRITE);
	check(!mr && errno == EINVAL, "an MR running past the end of the mapping is refused (EINVAL)",
	      mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	/*
	 * madvise() splits the mapping into several VMAs (libibverbs'
	 * fork protection does exactly this to registered ranges): still one
	 * mapping of the buffer to register across. A part made read-only
	 * refuses a writable MR across it.
	 */
	ret = madvise((uint8_t *)cpu + 65536, 65536, MADV_DONTFORK);
	mr = ret ? NULL : ibv_reg_mr(pd, cpu, 262144, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	check(mr != NULL, "an MR across a mapping split by madvise registers",
	      ret ? "madvise failed" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	ret = mprotect((uint8_t *)cpu + 131072, 4096, PROT_READ);
	errno = 0;
	mr = ret ? NULL : ibv_reg_mr(pd, cpu, 262144, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	check(!ret && !mr && errno == EACCES,
	      "a writable MR across a read-only part of the mapping is refused (EACCES)",
	      ret ? "mprotect failed" : mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mr = ret ? NULL : ibv_reg_mr(pd, cpu, 262144, IBV_ACCESS_REMOTE_READ);
	check(mr != NULL, "a read-only MR across it registers", strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mprotect((uint8_t *)cpu + 131072, 4096, PROT_READ | PROT_WRITE);

	mapping_rules(dev, q, stage, pd, qa, cq, host_mr, host, want);
	other_hpu((unsigned int)atoi(argv[1]), pd);

	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	check(ibv_dereg_mr(hbm_mr) == 0, "the HBM MR deregisters", strerror(errno));
	ibv_dereg_mr(host_mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	hpu_queue_destroy(q);
	hpu_buffer_destroy(stage);
	hpu_buffer_destroy(hbm);
	hpu_close(dev);
	free(host);
	free(want);
	return failures;
}
