// SPDX-License-Identifier: MIT
/*
 * hpu-mpi-allreduce: MPI_Allreduce (sum of int32) over buffers in HBM or in
 * host memory, checked and timed (tests/vm/mpi/run-mpi.sh runs it across
 * two guests with Open MPI over UCX).
 *
 *   hpu-mpi-allreduce --mem hbm|host [--sizes MIN:MAX] [--iters N]
 *
 * --mem hbm: the send and receive buffers are HBM buffers of the rank's
 * first HPU (libhpu), mapped into the process with hpu_buffer_map(): MPI
 * and UCX see plain pointers, UCX registers them with ibv_reg_mr(), which
 * hpu_ib turns into registrations of the HBM itself (Documentation/
 * driver/rdma.md), so the NIC reads and writes HBM. The send buffer is
 * filled, and the result read back, with the DMA engine through a host
 * staging buffer, not through the mapping. --mem host: malloc'd buffers
 * (the rxe baseline; needs no HPU).
 *
 * For each size from MIN to MAX bytes (doubling; default 4:1M): one
 * checked warm-up, then N timed iterations (default 3). Rank 0 prints
 *   PASS mpi/allreduce <mem> <size>: sum of <ranks> ranks correct
 *   FIGURE allreduce mem=<mem> bytes=<size> avg_us=.. min_us=.. max_us=.. algbw_MBps=.. busbw_MBps=..
 * (a time is the slowest rank's; algbw = size / time, busbw = algbw *
 * 2 (n - 1) / n), or FAIL lines. Exit status: the number of failures
 * (100 and up: could not run).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include <hpu/hpu.h>

struct bufs {
	int hbm;
	int32_t *send, *recv;       /* what MPI gets */
	hpu_device_t *dev;
	hpu_buffer_t *hs, *hr, *stage;
	hpu_queue_t *q;
};

static int rank, nranks, failures;

static void die(const char *what, int err)
{
	fprintf(stderr, "hpu-mpi-allreduce[%d]: %s: %s\n", rank, what, strerror(err));
	MPI_Abort(MPI_COMM_WORLD, 100);
	exit(100);
}

/* Non-negative, so every sum of up to 128 ranks is (no -1 - k poison). */
static int32_t value(int r, size_t i)
{
	return (int32_t)((i * 7 + (size_t)r * 1000003u) & 0xffffff);
}

/* Copy @size bytes between device addresses, waiting; dies on an error. */
static void dev_copy(struct bufs *b, uint64_t dst, uint64_t src, uint64_t size)
{
	hpu_fence_t *f = NULL;
	int ret = hpu_queue_copy(b->q, dst, src, size, &f);

	if (!ret)
		ret = hpu_fence_wait(f, 120ull * 1000 * 1000 * 1000);
	hpu_fence_destroy(f);
	if (ret)
		die("DMA copy", -ret);
}

static void setup(struct bufs *b, size_t max)
{
	void *p;
	int ret;

	if (!b->hbm) {
		b->send = aligned_alloc(4096, max);
		b->recv = aligned_alloc(4096, max);
		if (!b->send || !b->recv)
			die("malloc", ENOMEM);
		return;
	}
	ret = hpu_open_by_index(0, &b->dev);
	if (ret)
		die("hpu_open_by_index", -ret);
	ret = hpu_buffer_create(b->dev, max, HPU_MEM_DEVICE, &b->hs);
	if (!ret)
		ret = hpu_buffer_create(b->dev, max, HPU_MEM_DEVICE, &b->hr);
	if (!ret)
		ret = hpu_buffer_create(b->dev, max, HPU_MEM_HOST, &b->stage);
	if (ret)
		die("hpu_buffer_create", -ret);
	ret = hpu_queue_create(b->dev, HPU_ENGINE_DMA, 0, &b->q);
	if (ret)
		die("hpu_queue_create", -ret);
	ret = hpu_buffer_map(b->hs, &p);
	if (ret)
		die("hpu_buffer_map (send)", -ret);
	b->send = p;
	ret = hpu_buffer_map(b->hr, &p);
	if (ret)
		die("hpu_buffer_map (receive)", -ret);
	b->recv = p;
	fprintf(stderr, "hpu-mpi-allreduce[%d]: HBM send buffer mapped at %p, receive buffer at %p, %zu bytes each\n",
		rank, (void *)b->send, (void *)b->recv, max);
}

/* The send buffer's first @n values: rank's pattern. */
static void fill(struct bufs *b, size_t n)
{
	int32_t *dst = b->hbm ? hpu_buffer_host_ptr(b->stage) : b->send;

	for (size_t i = 0; i < n; i++)
		dst[i] = value(rank, i);
	if (b->hbm)
		dev_copy(b, hpu_buffer_va(b->hs), hpu_buffer_va(b->stage), n * 4);
}

/* The receive buffer's first @n values: a pattern no correct sum has. */
static void poison(struct bufs *b, size_t n)
{
	int32_t *dst = b->hbm ? hpu_buffer_host_ptr(b->stage) : b->recv;

	for (size_t i = 0; i < n; i++)
		dst[i] = -1 - (int32_t)(i & 0xffff);
	if (b->hbm)
		dev_copy(b, hpu_buffer_va(b->hr), hpu_buffer_va(b->stage), n * 4);
}

/* Index of the first wrong value of the result, or @n. */
static size_t check(struct bufs *b, size_t n)
{
	const int32_t *got = b->recv;

	if (b->hbm) {
		dev_copy(b, hpu_buffer_va(b->stage), hpu_buffer_va(b->hr), n * 4);
		got = hpu_buffer_host_ptr(b->stage);
	}
	for (size_t i = 0; i < n; i++) {
		int32_t want = 0;

		for (int r = 0; r < nranks; r++)
			want += value(r, i);
		if (got[i] != want)
			return i;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct bufs b = { 0 };
	const char *mem = NULL;
	size_t min = 4, max = 1 << 20;
	int iters = 3;

	setvbuf(stdout, NULL, _IOLBF, 0);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mem") && i + 1 < argc) {
			mem = argv[++i];
		} else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
			char *end;

			min = strtoull(argv[++i], &end, 0);
			if (*end == 'K' || *end == 'M')
				min <<= *end++ == 'K' ? 10 : 20;
			if (*end++ != ':')
				die("--sizes MIN:MAX", EINVAL);
			max = strtoull(end, &end, 0);
			if (*end == 'K' || *end == 'M')
				max <<= *end == 'K' ? 10 : 20;
		} else if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters = atoi(argv[++i]);
		} else {
			die(argv[i], EINVAL);
		}
	}
	if (!mem || (strcmp(mem, "hbm") && strcmp(mem, "host")) || min < 4 ||
	    max < min || iters < 1)
		die("usage: --mem hbm|host [--sizes MIN:MAX] [--iters N]", EINVAL);
	b.hbm = !strcmp(mem, "hbm");
	/* HBM buffers are whole 2 MiB pages. */
	setup(&b, b.hbm ? (max + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1) : max);

	for (size_t size = min; size <= max; size *= 2) {
		size_t n = size / 4, bad;
		double t, tmax, sum = 0, lo = 1e30, hi = 0;
		int ok, all;

		fill(&b, n);
		poison(&b, n);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Allreduce(b.send, b.recv, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
		bad = check(&b, n);
		ok = bad == n;
		MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
		if (!ok)
			fprintf(stderr, "hpu-mpi-allreduce[%d]: %s %zu bytes: value %zu wrong\n",
				rank, mem, size, bad);
		if (rank == 0) {
			if (all) {
				printf("PASS mpi/allreduce %s %zu bytes: sum of %d ranks correct\n",
				       mem, size, nranks);
			} else {
				printf("FAIL mpi/allreduce %s %zu bytes: sum of %d ranks correct: a rank saw a wrong value\n",
				       mem, size, nranks);
				failures++;
			}
		}
		for (int k = 0; k < iters; k++) {
			MPI_Barrier(MPI_COMM_WORLD);
			t = MPI_Wtime();
			MPI_Allreduce(b.send, b.recv, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
			t = MPI_Wtime() - t;
			MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
			sum += tmax;
			lo = tmax < lo ? tmax : lo;
			hi = tmax > hi ? tmax : hi;
		}
		if (rank == 0) {
			double avg = sum / iters, alg = size / avg / 1e6;

			printf("FIGURE allreduce mem=%s bytes=%zu avg_us=%.1f min_us=%.1f max_us=%.1f algbw_MBps=%.3f busbw_MBps=%.3f\n",
			       mem, size, avg * 1e6, lo * 1e6, hi * 1e6, alg,
			       alg * 2 * (nranks - 1) / nranks);
		}
	}
	if (b.hbm) {
		hpu_queue_destroy(b.q);
		hpu_buffer_destroy(b.stage);
		hpu_buffer_destroy(b.hr);
		hpu_buffer_destroy(b.hs);
		hpu_close(b.dev);
	} else {
		free(b.send);
		free(b.recv);
	}
	fprintf(stderr, "hpu-mpi-allreduce[%d]: MPI_Finalize\n", rank);
	MPI_Finalize();
	fprintf(stderr, "hpu-mpi-allreduce[%d]: done\n", rank);
	return failures;
}
