// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: what the driver builds and decodes around a job: the stream
 * descriptor (hpu_stream.c), the fence error of a completion status, the
 * error kind reported to the file, and which jobs of a SUBMIT go to their
 * stream directly (hpu_job.c).
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <kunit/test.h>

#include <linux/spinlock.h>
#include <linux/string.h>

#include "hpu_accel.h"
#include "../hpu_drv.h"
#include "../hpu_job.h"
#include "../hpu_queue.h"
#include "../hpu_stream.h"
#include "hpu_test.h"

/*
 * A descriptor: every field little-endian at its place, flags and the
 * reserved word zeroed whatever the ring held, the slot the producer
 * index modulo the ring size, the index advanced by one.
 */
static void hpu_job_test_put_desc(struct kunit *test)
{
	struct hpu_stream *stream;
	struct hpu_job *job;
	struct hpu_desc *d;
	const u8 *raw;

	stream = kunit_kzalloc(test, sizeof(*stream), GFP_KERNEL);
	job = kunit_kzalloc(test, sizeof(*job), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, stream);
	KUNIT_ASSERT_NOT_NULL(test, job);
	stream->ring = kunit_kmalloc_array(test, HPU_STREAM_ENTRIES,
					   sizeof(*stream->ring), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, stream->ring);
	memset(stream->ring, 0xff, HPU_STREAM_ENTRIES * sizeof(*stream->ring));
	KUNIT_ASSERT_EQ(test, sizeof(*d), 32);

	job->cb_addr = 0x0123456789abcdefULL;
	job->cb_size = 0x100000;
	job->asid = 0x3f;
	job->seq = 0x1122334455667788ULL;
	stream->pi = 3 * HPU_STREAM_ENTRIES - 1;
	spin_lock_init(&stream->lock);
	spin_lock(&stream->lock);
	hpu_stream_put_desc(stream, job);
	spin_unlock(&stream->lock);

	KUNIT_EXPECT_EQ(test, job->slot, HPU_STREAM_ENTRIES - 1);
	KUNIT_EXPECT_EQ(test, stream->pi, 3 * HPU_STREAM_ENTRIES);
	d = &stream->ring[HPU_STREAM_ENTRIES - 1];
	raw = (const u8 *)d;
	/* The layout of the spec: cb_addr, cb_size, asid, flags, seq, reserved. */
	KUNIT_EXPECT_EQ(test, raw[0], 0xef);
	KUNIT_EXPECT_EQ(test, raw[7], 0x01);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(d->cb_addr), 0x0123456789abcdefULL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(d->cb_size), 0x100000);
	KUNIT_EXPECT_EQ(test, raw[12], 0x3f);
	KUNIT_EXPECT_EQ(test, raw[13], 0);
	KUNIT_EXPECT_EQ(test, le16_to_cpu(d->flags), 0);
	KUNIT_EXPECT_EQ(test, raw[16], 0x88);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(d->seq), 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(d->reserved), 0);
	/* Its neighbours are untouched. */
	KUNIT_EXPECT_EQ(test, le64_to_cpu(stream->ring[HPU_STREAM_ENTRIES - 2].seq),
			~0ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(stream->ring[0].seq), ~0ULL);

	/* The next wraps to slot 0. */
	job->seq++;
	spin_lock(&stream->lock);
	hpu_stream_put_desc(stream, job);
	spin_unlock(&stream->lock);
	KUNIT_EXPECT_EQ(test, job->slot, 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(stream->ring[0].seq),
			0x1122334455667789ULL);
	KUNIT_EXPECT_EQ(test, stream->pi, 3 * HPU_STREAM_ENTRIES + 1);
}

/* Every completion status has the errno &struct drm_hpu_submit documents. */
static void hpu_job_test_cq_status_to_errno(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_OK), 0);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_MMU_FAULT), -EFAULT);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_BAD_PACKET), -EINVAL);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_PRIV), -EPERM);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_BAD_DESC), -EIO);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_BUS_ERROR), -EIO);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_ABORTED), -ECANCELED);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_ECC), -EBADMSG);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_BAD_LAUNCH), -ENOEXEC);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_TPC_ILLEGAL), -EILSEQ);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(HPU_CQ_TPC_ASSERT), -EDOM);
	/* A status the driver does not know is an I/O error, never success. */
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(11), -EIO);
	KUNIT_EXPECT_EQ(test, hpu_job_cq_status_to_errno(0xffffffff), -EIO);
}

/*
 * The kind of a failed job's error event: a hang before a timeout before
 * a lost device before the completion status; a job cancelled by its own
 * file (ABORTED, -ECANCELED) is not reported.
 */
static void hpu_job_test_error_kind(struct kunit *test)
{
	struct hpu_job job = {};

	job.status = HPU_CQ_MMU_FAULT;
	job.error = -EFAULT;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_MMU_FAULT);
	job.status = HPU_CQ_BAD_PACKET;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_BAD_PACKET);
	job.status = HPU_CQ_BAD_DESC;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_BAD_PACKET);
	job.status = HPU_CQ_PRIV;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_PRIV);
	job.status = HPU_CQ_BUS_ERROR;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_DMA_BUS);
	job.status = HPU_CQ_ECC;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_ECC);
	job.status = HPU_CQ_BAD_LAUNCH;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_BAD_LAUNCH);
	job.status = HPU_CQ_TPC_ILLEGAL;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_TPC_ILLEGAL);
	job.status = HPU_CQ_TPC_ASSERT;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_TPC_ASSERT);
	job.status = HPU_CQ_ABORTED;
	job.error = -ECANCELED;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), 0);

	job.error = -ETIMEDOUT;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_TIMEOUT);
	job.hung = true;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_ENGINE_HANG);
	job.hung = false;
	job.error = -ENODEV;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_DEVICE_LOST);
	job.error = -ECANCELED;
	job.status = HPU_CQ_OK;
	job.lost = true;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_DEVICE_LOST);
	/* Lost with an MMU fault status: the loss is what the file hears. */
	job.status = HPU_CQ_MMU_FAULT;
	KUNIT_EXPECT_EQ(test, hpu_job_error_kind(&job), DRM_HPU_ERROR_DEVICE_LOST);
}

/* The ring holds the scheduler's credits and the direct jobs' share. */
static_assert(HPU_STREAM_SCHED_CREDITS + HPU_STREAM_DIRECT_MAX ==
	      HPU_STREAM_ENTRIES);

/*
 * Direct jobs get at most HPU_STREAM_DIRECT_MAX slots of a stream; a slot
 * given back can be taken again; a refusal takes nothing.
 */
static void hpu_job_test_direct_slots(struct kunit *test)
{
	struct hpu_stream *stream;
	unsigned int i, got = 0;

	stream = kunit_kzalloc(test, sizeof(*stream), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, stream);

	for (i = 0; i < HPU_STREAM_DIRECT_MAX + 8; i++)
		got += hpu_stream_direct_get(stream);
	KUNIT_EXPECT_EQ(test, got, HPU_STREAM_DIRECT_MAX);
	KUNIT_EXPECT_EQ(test, atomic_read(&stream->direct_jobs),
			HPU_STREAM_DIRECT_MAX);
	KUNIT_EXPECT_FALSE(test, hpu_stream_direct_get(stream));

	hpu_stream_direct_put(stream);
	KUNIT_EXPECT_TRUE(test, hpu_stream_direct_get(stream));
	KUNIT_EXPECT_FALSE(test, hpu_stream_direct_get(stream));
}

/* Two queues, each on its own stream, for hpu_submit_decide(). */
struct hpu_decide_ctx {
	struct hpu_stream stream[2];
	struct hpu_queue queue[2];
	struct hpu_submit_entry e[8];
};

static struct hpu_decide_ctx *hpu_decide_ctx(struct kunit *test)
{
	struct hpu_decide_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->queue[0].stream = &c->stream[0];
	c->queue[1].stream = &c->stream[1];
	return c;
}

static void hpu_decide_set(struct hpu_decide_ctx *c, unsigned int i,
			   unsigned int q, bool ready)
{
	c->e[i].queue = &c->queue[q];
	c->e[i].ready = ready;
	c->e[i].direct = false;
}

/*
 * An entry with nothing to wait for goes directly, with a slot reserved;
 * one that waits takes the scheduler, and so does every later entry of
 * its queue (it would overtake it), but not those of another queue.
 */
static void hpu_job_test_decide_order(struct kunit *test)
{
	struct hpu_decide_ctx *c = hpu_decide_ctx(test);

	hpu_decide_set(c, 0, 0, true);
	hpu_decide_set(c, 1, 1, true);
	hpu_decide_set(c, 2, 0, false);
	hpu_decide_set(c, 3, 0, true);
	hpu_decide_set(c, 4, 1, true);
	hpu_submit_decide(c->e, 5);

	KUNIT_EXPECT_TRUE(test, c->e[0].direct);
	KUNIT_EXPECT_TRUE(test, c->e[1].direct);
	KUNIT_EXPECT_FALSE(test, c->e[2].direct);
	KUNIT_EXPECT_FALSE(test, c->e[3].direct);
	KUNIT_EXPECT_TRUE(test, c->e[4].direct);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->stream[0].direct_jobs), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->stream[1].direct_jobs), 2);
}

/*
 * A queue with a job the scheduler has not run yet sends every entry to
 * the scheduler, however ready; once run_job took it, they go directly.
 */
static void hpu_job_test_decide_sched_pending(struct kunit *test)
{
	struct hpu_decide_ctx *c = hpu_decide_ctx(test);

	atomic_set(&c->queue[0].sched_pending, 1);
	hpu_decide_set(c, 0, 0, true);
	hpu_decide_set(c, 1, 0, true);
	hpu_decide_set(c, 2, 1, true);
	hpu_submit_decide(c->e, 3);
	KUNIT_EXPECT_FALSE(test, c->e[0].direct);
	KUNIT_EXPECT_FALSE(test, c->e[1].direct);
	KUNIT_EXPECT_TRUE(test, c->e[2].direct);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->stream[0].direct_jobs), 0);

	atomic_set(&c->queue[0].sched_pending, 0);
	hpu_decide_set(c, 0, 0, true);
	hpu_decide_set(c, 1, 0, true);
	hpu_submit_decide(c->e, 2);
	KUNIT_EXPECT_TRUE(test, c->e[0].direct);
	KUNIT_EXPECT_TRUE(test, c->e[1].direct);
}

/*
 * A stream whose direct share of the ring is in use sends the entry to
 * the scheduler, and the later entries of its queue with it.
 */
static void hpu_job_test_decide_ring_full(struct kunit *test)
{
	struct hpu_decide_ctx *c = hpu_decide_ctx(test);

	atomic_set(&c->stream[0].direct_jobs, HPU_STREAM_DIRECT_MAX - 1);
	hpu_decide_set(c, 0, 0, true);
	hpu_decide_set(c, 1, 0, true);
	hpu_decide_set(c, 2, 0, true);
	hpu_submit_decide(c->e, 3);
	KUNIT_EXPECT_TRUE(test, c->e[0].direct);
	KUNIT_EXPECT_FALSE(test, c->e[1].direct);
	/* A slot freed meanwhile must not let it overtake entry 1. */
	KUNIT_EXPECT_FALSE(test, c->e[2].direct);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->stream[0].direct_jobs),
			HPU_STREAM_DIRECT_MAX);
}

static struct kunit_case hpu_job_test_cases[] = {
	KUNIT_CASE(hpu_job_test_put_desc),
	KUNIT_CASE(hpu_job_test_cq_status_to_errno),
	KUNIT_CASE(hpu_job_test_error_kind),
	KUNIT_CASE(hpu_job_test_direct_slots),
	KUNIT_CASE(hpu_job_test_decide_order),
	KUNIT_CASE(hpu_job_test_decide_sched_pending),
	KUNIT_CASE(hpu_job_test_decide_ring_full),
	{}
};

static struct kunit_suite hpu_job_test_suite = {
	.name = "hpu_job",
	.test_cases = hpu_job_test_cases,
};

kunit_test_suite(hpu_job_test_suite);
