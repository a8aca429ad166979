// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: how a stream learns what the device completed (hpu_stream.c):
 * the write-back record of spec version 9 and where the interrupt takes
 * cq_pi from, the records there are to consume, the interrupt moderation
 * the module parameters give, and what enabling a stream programs.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <kunit/test.h>

#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/unaligned.h>

#include "../hpu_drv.h"
#include "../hpu_job.h"
#include "../hpu_stream.h"
#include "hpu_test.h"

/* Page tables of the test device: the suite needs none. */
#define T_PT_COUNT	1
/* Jobs the reap cases put on the stream. */
#define T_JOBS		3

/**
 * struct hpu_stream_test - a stream of a device without hardware
 * @hdev: the test device; its CQ_PI register is plain memory.
 * @stream: stream 1 of DMA engine 0, its completion ring and (if asked)
 *	its write-back record in kernel memory.
 * @jobs: T_JOBS jobs on the inflight list, seq 1 to T_JOBS, in order.
 * @done: where the reap moves completed jobs.
 */
struct hpu_stream_test {
	struct hpu_device *hdev;
	struct hpu_stream *stream;
	struct hpu_job *jobs[T_JOBS];
	struct list_head done;
};

/*
 * A stream whose driver has consumed @cq_ci records, with T_JOBS jobs in
 * flight whose completion records (status @status[i]) are already in the
 * ring at @cq_ci onwards; with a zeroed write-back record if @wb.
 */
static struct hpu_stream_test *hpu_stream_test_rig(struct kunit *test,
						   bool wb, u32 cq_ci,
						   const u32 *status)
{
	struct hpu_stream_test *t;
	struct hpu_stream *stream;
	unsigned int i;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->hdev = hpu_test_dev_create(test, T_PT_COUNT, 0);
	stream = kunit_kzalloc(test, sizeof(*stream), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, stream);
	stream->cq = kunit_kcalloc(test, HPU_STREAM_ENTRIES,
				   sizeof(*stream->cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, stream->cq);
	if (wb) {
		stream->wb = kunit_kzalloc(test, sizeof(*stream->wb),
					   GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, stream->wb);
	}
	stream->hdev = t->hdev;
	stream->base = HPU_REG_QM_STREAM(0, 1);
	strscpy(stream->name, "dma0.1", sizeof(stream->name));
	spin_lock_init(&stream->lock);
	INIT_LIST_HEAD(&stream->inflight);
	INIT_LIST_HEAD(&t->done);
	stream->cq_ci = cq_ci;
	t->stream = stream;

	for (i = 0; i < T_JOBS; i++) {
		struct hpu_cqe *cqe;
		struct hpu_job *job;

		job = kunit_kzalloc(test, sizeof(*job), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, job);
		job->seq = i + 1;
		job->on_hw = true;
		list_add_tail(&job->link, &stream->inflight);
		t->jobs[i] = job;

		cqe = &stream->cq[(cq_ci + i) % HPU_STREAM_ENTRIES];
		cqe->seq = cpu_to_le64(job->seq);
		cqe->status = cpu_to_le32(status[i]);
		cqe->where = 0;
	}
	return t;
}

/* What the device's CQ_PI register reads in the test device. */
static void hpu_stream_test_set_cq_pi(struct hpu_stream_test *t, u32 cq_pi)
{
	writel(cq_pi, t->hdev->regs + t->stream->base + HPU_QS_CQ_PI);
}

/* The write-back record's cq_pi, as the device writes it. */
static void hpu_stream_test_set_wb(struct hpu_stream_test *t, u32 cq_pi)
{
	t->stream->wb->cq_pi = cpu_to_le32(cq_pi);
}

/* The interrupt handler's consumption of the stream, under its lock. */
static void hpu_stream_test_irq_reap(struct hpu_stream_test *t)
{
	unsigned long flags;

	spin_lock_irqsave(&t->stream->lock, flags);
	hpu_stream_reap_notified(t->stream, &t->done);
	spin_unlock_irqrestore(&t->stream->lock, flags);
}

/* A recovery's consumption of the stream, by CQ_PI, under its lock. */
static void hpu_stream_test_mmio_reap(struct hpu_stream_test *t)
{
	unsigned long flags;

	spin_lock_irqsave(&t->stream->lock, flags);
	hpu_stream_reap(t->stream, &t->done);
	spin_unlock_irqrestore(&t->stream->lock, flags);
}

/*
 * The record's fields are at the spec's byte offsets, little-endian, and
 * done and busy_ns are whole 64-bit counts.
 */
static void hpu_stream_test_wb_layout(struct kunit *test)
{
	u8 raw[HPU_WB_SIZE] __aligned(8);
	const struct hpu_wb *wb = (const struct hpu_wb *)raw;

	KUNIT_ASSERT_EQ(test, sizeof(*wb), 32);
	memset(raw, 0xee, sizeof(raw));
	put_unaligned_le64(0x0000000512345678ULL, raw + HPU_WB_DONE);
	put_unaligned_le64(0xfedcba9876543210ULL, raw + HPU_WB_BUSY_NS);
	put_unaligned_le32(0x89abcdef, raw + HPU_WB_CQ_PI);
	put_unaligned_le32(HPU_QS_STATUS_IDLE | HPU_QS_STATUS_WAITING,
			   raw + HPU_WB_STATUS);
	put_unaligned_le32(HPU_CQ_MMU_FAULT, raw + HPU_WB_ERR_STATUS);
	put_unaligned_le32(0x10000040, raw + HPU_WB_ERR_WHERE);

	KUNIT_EXPECT_EQ(test, le64_to_cpu(wb->done), 0x0000000512345678ULL);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(wb->busy_ns), 0xfedcba9876543210ULL);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wb->cq_pi), 0x89abcdef);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wb->status),
			HPU_QS_STATUS_IDLE | HPU_QS_STATUS_WAITING);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wb->err_status), HPU_CQ_MMU_FAULT);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(wb->err_where), 0x10000040);
}

/*
 * The records to consume: the distance to cq_pi up to a whole ring, across
 * the 2^32 wrap; a record behind the driver is nothing new, CQ_PI behind
 * is an error; all ones is a gone device only when read from CQ_PI.
 */
static void hpu_stream_test_cq_new(struct kunit *test)
{
	const u32 ring = HPU_STREAM_ENTRIES;
	unsigned int wb;

	for (wb = 0; wb < 2; wb++) {
		KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(5, 5, wb), 0);
		KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(7, 5, wb), 2);
		KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(3, U32_MAX - 1, wb), 5);
		KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(5 + ring, 5, wb), ring);
		KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(6 + ring, 5, wb), -ERANGE);
	}

	/* Behind: records a recovery consumed by CQ_PI before the record. */
	KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(3, 5, true), 0);
	KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(5, 5 + ring, true), 0);
	KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(5, 6 + ring, true), -ERANGE);
	KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(3, 5, false), -ERANGE);

	/* All ones: a device gone (or in reset) by MMIO, a count in memory. */
	KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(U32_MAX, U32_MAX - 1, false),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(U32_MAX, 7, false), -ENODEV);
	KUNIT_EXPECT_EQ(test, hpu_stream_cq_new(U32_MAX, U32_MAX - 1, true), 1);
}

/*
 * From spec version 9 the interrupt goes by the record's cq_pi, never
 * CQ_PI: here CQ_PI reads a value that would be an error, the record
 * counts across 2^32, and each job completes with its status's error.
 */
static void hpu_stream_test_reap_from_wb(struct kunit *test)
{
	static const u32 status[T_JOBS] = {
		HPU_CQ_OK, HPU_CQ_MMU_FAULT, HPU_CQ_OK,
	};
	struct hpu_stream_test *t;

	t = hpu_stream_test_rig(test, true, U32_MAX - 1, status);
	hpu_stream_test_set_cq_pi(t, 0x55);

	/* The record of before this notification: nothing new. */
	hpu_stream_test_set_wb(t, U32_MAX - 1);
	hpu_stream_test_irq_reap(t);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&t->done), 0);
	KUNIT_EXPECT_EQ(test, t->stream->cq_ci, U32_MAX - 1);

	hpu_stream_test_set_wb(t, U32_MAX);
	hpu_stream_test_irq_reap(t);
	KUNIT_EXPECT_EQ(test, t->stream->cq_ci, U32_MAX);
	KUNIT_ASSERT_EQ(test, list_count_nodes(&t->done), 1);
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry(&t->done, struct hpu_job, link),
			    t->jobs[0]);
	KUNIT_EXPECT_EQ(test, t->jobs[0]->error, 0);
	KUNIT_EXPECT_FALSE(test, t->jobs[0]->on_hw);

	hpu_stream_test_set_wb(t, 1);
	hpu_stream_test_irq_reap(t);
	KUNIT_EXPECT_EQ(test, t->stream->cq_ci, 1);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&t->done), T_JOBS);
	KUNIT_EXPECT_TRUE(test, list_empty(&t->stream->inflight));
	KUNIT_EXPECT_EQ(test, t->jobs[1]->error, -EFAULT);
	KUNIT_EXPECT_EQ(test, t->jobs[1]->status, HPU_CQ_MMU_FAULT);
	KUNIT_EXPECT_EQ(test, t->jobs[2]->error, 0);
}

/* Before spec version 9 (no record) the interrupt reads CQ_PI, as ever. */
static void hpu_stream_test_reap_mmio_before_v9(struct kunit *test)
{
	static const u32 status[T_JOBS] = {
		HPU_CQ_OK, HPU_CQ_BAD_PACKET, HPU_CQ_OK,
	};
	struct hpu_stream_test *t;

	t = hpu_stream_test_rig(test, false, 10, status);
	hpu_stream_test_set_cq_pi(t, 12);
	hpu_stream_test_irq_reap(t);
	KUNIT_EXPECT_EQ(test, t->stream->cq_ci, 12);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&t->done), 2);
	KUNIT_EXPECT_EQ(test, t->jobs[1]->error, -EINVAL);
	KUNIT_EXPECT_TRUE(test, t->jobs[2]->on_hw);

	/* A device gone reads all ones: nothing is consumed. */
	hpu_stream_test_set_cq_pi(t, U32_MAX);
	hpu_stream_test_irq_reap(t);
	KUNIT_EXPECT_EQ(test, t->stream->cq_ci, 12);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&t->done), 2);
}

/*
 * A recovery consumes by CQ_PI, records the write-back record does not
 * announce yet included; the record that follows is behind and consumes
 * nothing, the next one that is ahead consumes the rest. A record more
 * than a ring ahead (not the device's) consumes nothing.
 */
static void hpu_stream_test_reap_record_behind(struct kunit *test)
{
	static const u32 status[T_JOBS] = { HPU_CQ_OK, HPU_CQ_OK, HPU_CQ_OK };
	struct hpu_stream_test *t;

	t = hpu_stream_test_rig(test, true, 0, status);
	hpu_stream_test_set_wb(t, 1);
	hpu_stream_test_set_cq_pi(t, 2);
	hpu_stream_test_mmio_reap(t);
	KUNIT_EXPECT_EQ(test, t->stream->cq_ci, 2);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&t->done), 2);

	hpu_stream_test_irq_reap(t);
	KUNIT_EXPECT_EQ(test, t->stream->cq_ci, 2);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&t->done), 2);
	KUNIT_EXPECT_TRUE(test, t->jobs[2]->on_hw);

	hpu_stream_test_set_wb(t, 2 + HPU_STREAM_ENTRIES + 1);
	hpu_stream_test_irq_reap(t);
	KUNIT_EXPECT_EQ(test, t->stream->cq_ci, 2);
	KUNIT_EXPECT_TRUE(test, t->jobs[2]->on_hw);

	hpu_stream_test_set_wb(t, 3);
	hpu_stream_test_irq_reap(t);
	KUNIT_EXPECT_EQ(test, t->stream->cq_ci, 3);
	KUNIT_EXPECT_EQ(test, list_count_nodes(&t->done), T_JOBS);
	KUNIT_EXPECT_FALSE(test, t->jobs[2]->on_hw);
}

/*
 * IRQ_MOD of the parameters: count in [23:16], microseconds in [15:0],
 * clamped to the fields; 0 (one interrupt per record) for a count of 0
 * or 1 or no time bound.
 */
static void hpu_stream_test_irq_mod(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, hpu_stream_irq_mod(16, 20), 0x00100014);
	KUNIT_EXPECT_EQ(test, hpu_stream_irq_mod(2, 1), 0x00020001);
	KUNIT_EXPECT_EQ(test, hpu_stream_irq_mod(255, 65535), 0x00ffffff);
	KUNIT_EXPECT_EQ(test, hpu_stream_irq_mod(256, 65536), 0x00ffffff);
	KUNIT_EXPECT_EQ(test, hpu_stream_irq_mod(UINT_MAX, UINT_MAX), 0x00ffffff);
	KUNIT_EXPECT_EQ(test, hpu_stream_irq_mod(0, 20), 0);
	KUNIT_EXPECT_EQ(test, hpu_stream_irq_mod(1, 20), 0);
	KUNIT_EXPECT_EQ(test, hpu_stream_irq_mod(16, 0), 0);
}

/* Registers of spec version 9 that version 8 lacks. */
static const u32 hpu_stream_test_v9_regs[] = {
	HPU_QS_WB_LO, HPU_QS_WB_HI, HPU_QS_IRQ_MOD,
};

/*
 * Enabling a stream of spec version 9 programs WB and IRQ_MOD and zeroes
 * the record the stream wrote before (its cq_pi would count records of
 * the old ring); before version 9 it writes neither register.
 */
static void hpu_stream_test_enable(struct kunit *test)
{
	static const u32 status[T_JOBS] = { HPU_CQ_OK, HPU_CQ_OK, HPU_CQ_OK };
	struct hpu_stream_test *t, *old;
	struct hpu_qm *qm;
	unsigned int i;
	u32 base;

	qm = kunit_kzalloc(test, sizeof(*qm), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qm);
	qm->irq_mod = hpu_stream_irq_mod(16, 20);

	t = hpu_stream_test_rig(test, true, 40, status);
	t->hdev->qm = qm;
	base = t->stream->base;
	t->stream->wb_dma = 0x0000001234567840ULL;
	t->stream->wb->done = cpu_to_le64(41);
	t->stream->wb->cq_pi = cpu_to_le32(41);
	t->stream->wb->err_status = cpu_to_le32(HPU_CQ_ABORTED);
	t->stream->pi = 43;
	KUNIT_ASSERT_EQ(test, hpu_stream_hw_enable(t->stream), 0);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(t->hdev, base + HPU_QS_WB_LO),
			0x34567840);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(t->hdev, base + HPU_QS_WB_HI), 0x12);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(t->hdev, base + HPU_QS_IRQ_MOD),
			0x00100014);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(t->hdev, base + HPU_QS_CTRL),
			HPU_QS_CTRL_ENABLE | HPU_QS_CTRL_IRQ_EN);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(t->stream->wb->done), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->stream->wb->cq_pi), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(t->stream->wb->err_status), 0);
	KUNIT_EXPECT_EQ(test, t->stream->cq_ci, 0);
	KUNIT_EXPECT_EQ(test, t->stream->pi, 0);

	old = hpu_stream_test_rig(test, false, 40, status);
	for (i = 0; i < ARRAY_SIZE(hpu_stream_test_v9_regs); i++)
		writel(0xdeadbeef, old->hdev->regs + base +
		       hpu_stream_test_v9_regs[i]);
	KUNIT_ASSERT_EQ(test, hpu_stream_hw_enable(old->stream), 0);
	for (i = 0; i < ARRAY_SIZE(hpu_stream_test_v9_regs); i++)
		KUNIT_EXPECT_EQ(test, hpu_test_reg(old->hdev, base +
						   hpu_stream_test_v9_regs[i]),
				0xdeadbeef);
	KUNIT_EXPECT_EQ(test, hpu_test_reg(old->hdev, base + HPU_QS_CTRL),
			HPU_QS_CTRL_ENABLE | HPU_QS_CTRL_IRQ_EN);
}

static struct kunit_case hpu_stream_test_cases[] = {
	KUNIT_CASE(hpu_stream_test_wb_layout),
	KUNIT_CASE(hpu_stream_test_cq_new),
	KUNIT_CASE(hpu_stream_test_reap_from_wb),
	KUNIT_CASE(hpu_stream_test_reap_mmio_before_v9),
	KUNIT_CASE(hpu_stream_test_reap_record_behind),
	KUNIT_CASE(hpu_stream_test_irq_mod),
	KUNIT_CASE(hpu_stream_test_enable),
	{}
};

static struct kunit_suite hpu_stream_test_suite = {
	.name = "hpu_stream",
	.test_cases = hpu_stream_test_cases,
};

kunit_test_suite(hpu_stream_test_suite);
