// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu_ib: the RoCE engine's command interface and event queue
 * (Documentation/hw/roce.md, "Command interface" and "Events").
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>

#include "hpu_ib.h"
#include "hpu_rdma.h"

static u32 hpu_ib_rd(struct hpu_ib_dev *dev, u32 off)
{
	return readl(dev->regs + off);
}

static void hpu_ib_wr(struct hpu_ib_dev *dev, u32 off, u32 val)
{
	writel(val, dev->regs + off);
}

static int hpu_ib_cmd_errno(u32 op, u32 result)
{
	switch (result) {
	case HPU_ROCE_RES_OK:
		return 0;
	case HPU_ROCE_RES_BAD_STATE:
		/* A CQ or SRQ still used by a QP; a QP transition refused. */
		return op == HPU_ROCE_OP_DESTROY ? -EBUSY : -EINVAL;
	case HPU_ROCE_RES_BAD_OP:
		return -EOPNOTSUPP;
	case HPU_ROCE_RES_BAD_INDEX:
	case HPU_ROCE_RES_BAD_IMAGE:
	default:
		return -EINVAL;
	}
}

/**
 * hpu_ib_cmd() - run one command of the engine
 * @dev: the device
 * @op: CREATE, MODIFY, QUERY or DESTROY
 * @type: the object type
 * @index: the object's table index
 * @image: %HPU_ROCE_IMAGE_SIZE bytes: written to CMD_DATA before, and for
 *	QUERY replaced by CMD_DATA after
 *
 * Commands are serialised; each is polled for up to
 * %HPU_IB_CMD_TIMEOUT_US. A command that does not complete wedges the
 * engine: no later command is issued (-EIO). May sleep.
 *
 * Return: 0; -EINVAL (BAD_INDEX, BAD_IMAGE, BAD_STATE of a transition),
 * -EBUSY (BAD_STATE of a DESTROY), -EOPNOTSUPP (BAD_OP), -ETIMEDOUT, -EIO.
 */
int hpu_ib_cmd(struct hpu_ib_dev *dev, u32 op,
	       u32 type, u32 index, void *image)
{
	__le32 *words = image;
	u32 status;
	int i, ret;

	mutex_lock(&dev->cmd_lock);
	if (dev->wedged) {
		ret = -EIO;
		goto out;
	}
	for (i = 0; i < HPU_ROCE_IMAGE_SIZE / 4; i++)
		hpu_ib_wr(dev, HPU_ROCE_CMD_DATA(i), le32_to_cpu(words[i]));
	hpu_ib_wr(dev, HPU_ROCE_CMD_INDEX, index);
	hpu_ib_wr(dev, HPU_ROCE_CMD, op | type << HPU_ROCE_CMD_TYPE_SHIFT);
	ret = readl_poll_timeout(dev->regs + HPU_ROCE_CMD_STATUS, status,
				 !(status & HPU_ROCE_CMD_BUSY), 5,
				 HPU_IB_CMD_TIMEOUT_US);
	if (ret) {
		dev->wedged = true;
		ibdev_err(&dev->ibdev, "command %u type %u index %u did not complete; the engine is wedged until the device is reset (asked for)\n",
			  op, type, index);
		hpu_rdma_reset_request(dev->adev, "RoCE engine command did not complete");
		goto out;
	}
	ret = hpu_ib_cmd_errno(op, FIELD_GET(HPU_ROCE_CMD_RESULT_MASK, status));
	if (ret)
		ibdev_dbg(&dev->ibdev, "command %u type %u index %u: result %u\n",
			  op, type, index,
			  (u32)FIELD_GET(HPU_ROCE_CMD_RESULT_MASK, status));
	else if (op == HPU_ROCE_OP_QUERY)
		for (i = 0; i < HPU_ROCE_IMAGE_SIZE / 4; i++)
			words[i] = cpu_to_le32(hpu_ib_rd(dev, HPU_ROCE_CMD_DATA(i)));
out:
	mutex_unlock(&dev->cmd_lock);
	return ret;
}

/* Layout of an event (HPU_ROCE_EQE_*, 32 bytes). */
struct hpu_ib_eqe {
	__le16 type;
	__le16 port;
	__le32 obj;
	__le64 timestamp;
	__le32 cause;
	__le32 reserved;
	__le64 addr;
};

static void hpu_ib_qp_event(struct hpu_ib_dev *dev, u32 qpn,
			    enum ib_event_type type)
{
	struct ib_event ev = { .device = &dev->ibdev, .event = type };
	struct hpu_ib_qp *qp = xa_load(&dev->qps, qpn);

	if (!qp || !qp->ibqp.event_handler)
		return;
	ev.element.qp = &qp->ibqp;
	qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

static void hpu_ib_cq_event(struct hpu_ib_dev *dev, u32 cqn, bool error)
{
	struct ib_event ev = { .device = &dev->ibdev, .event = IB_EVENT_CQ_ERR };
	struct hpu_ib_cq *cq = xa_load(&dev->cqs, cqn);

	if (!cq)
		return;
	if (!error) {
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
		return;
	}
	ev.element.cq = &cq->ibcq;
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

static void hpu_ib_srq_event(struct hpu_ib_dev *dev, u32 srqn)
{
	struct ib_event ev = { .device = &dev->ibdev,
			       .event = IB_EVENT_SRQ_LIMIT_REACHED };
	struct hpu_ib_srq *srq = xa_load(&dev->srqs, srqn);

	if (!srq || !srq->ibsrq.event_handler)
		return;
	ev.element.srq = &srq->ibsrq;
	srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

static void hpu_ib_handle_event(struct hpu_ib_dev *dev,
				const struct hpu_ib_eqe *e)
{
	u32 obj = le32_to_cpu(e->obj), port = le16_to_cpu(e->port);

	switch (le16_to_cpu(e->type)) {
	case 0:
		/* A slot the engine failed to write: no event (cleared below). */
		break;
	case HPU_ROCE_EV_CQ_COMPLETION:
		hpu_ib_cq_event(dev, obj, false);
		break;
	case HPU_ROCE_EV_CQ_ERROR:
		hpu_ib_cq_event(dev, obj, true);
		break;
	case HPU_ROCE_EV_QP_FATAL:
		ibdev_dbg(&dev->ibdev, "QP %u fatal, cause %u\n", obj,
			  le32_to_cpu(e->cause));
		hpu_ib_qp_event(dev, obj, IB_EVENT_QP_FATAL);
		break;
	case HPU_ROCE_EV_QP_LAST_WQE_REACHED:
		hpu_ib_qp_event(dev, obj, IB_EVENT_QP_LAST_WQE_REACHED);
		break;
	case HPU_ROCE_EV_SRQ_LIMIT:
		hpu_ib_srq_event(dev, obj);
		break;
	case HPU_ROCE_EV_PORT_ACTIVE:
	case HPU_ROCE_EV_PORT_DOWN:
		if (port < dev->num_ports)
			hpu_ib_port_event(dev, port,
					  le16_to_cpu(e->type) == HPU_ROCE_EV_PORT_ACTIVE);
		break;
	default:
		ibdev_dbg(&dev->ibdev, "unknown event type %u\n",
			  le16_to_cpu(e->type));
	}
}

/* Handle the events written so far. Object lookups are safe (see xarrays). */
static void hpu_ib_eq_process(struct hpu_ib_dev *dev)
{
	struct hpu_ib_eqe *ring = dev->eq;
	u32 pi;

	lockdep_assert_held(&dev->eq_lock);
	pi = hpu_ib_rd(dev, HPU_ROCE_EQ_PI);
	if (pi == U32_MAX && hpu_ib_rd(dev, HPU_ROCE_EQ_CTRL) == U32_MAX)
		return;	/* the function is gone or in reset: nothing to read */
	if (pi - dev->eq_ci > HPU_IB_EQ_ENTRIES) {
		/* Never from a device of the spec: do not loop on it. */
		ibdev_err_ratelimited(&dev->ibdev, "event queue producer %u, consumer %u: resynchronised\n",
				      pi, dev->eq_ci);
		dev->eq_ci = pi;
	}
	/* Read the entries only after the producer index. */
	dma_rmb();
	while (dev->eq_ci != pi) {
		struct hpu_ib_eqe *e = &ring[dev->eq_ci % HPU_IB_EQ_ENTRIES];

		hpu_ib_handle_event(dev, e);
		/*
		 * Handled: the slot reads as no event until the engine writes
		 * it again. An entry write that fails still moves EQ_PI past
		 * its slot (roce.md, "Ordering"), which must not replay what
		 * the slot held a lap before (an event of an object whose
		 * number may be a new object's by now).
		 */
		e->type = 0;
		dev->eq_ci++;
	}
	/* writel() orders the clearing stores before the engine sees EQ_CI. */
	hpu_ib_wr(dev, HPU_ROCE_EQ_CI, dev->eq_ci);
}

static irqreturn_t hpu_ib_eq_thread(int irq, void *arg)
{
	struct hpu_ib_dev *dev = arg;

	mutex_lock(&dev->eq_lock);
	hpu_ib_eq_process(dev);
	mutex_unlock(&dev->eq_lock);
	return IRQ_HANDLED;
}

/**
 * hpu_ib_eq_drain() - handle every event the engine has written
 * @dev: the device, its event ring running
 *
 * The engine writes every event of an object before that object's DESTROY
 * completes (roce.md, "Events"). Called after a DESTROY and after the
 * object left the lookups, it returns when each of its events has been
 * handled (dropped: the lookup no longer finds it) and no event handler
 * still uses the object, so its number may go to a new object. May sleep.
 */
void hpu_ib_eq_drain(struct hpu_ib_dev *dev)
{
	mutex_lock(&dev->eq_lock);
	hpu_ib_eq_process(dev);
	mutex_unlock(&dev->eq_lock);
}

/*
 * Stop the event ring: after it the engine writes no entry into it.
 * Return: false if an entry write did not finish (the ring must be kept).
 */
static bool hpu_ib_eq_stop(struct hpu_ib_dev *dev)
{
	u32 ctrl;

	hpu_ib_wr(dev, HPU_ROCE_EQ_CTRL, 0);
	/* A write under way when the disable landed still finishes. */
	if (!readl_poll_timeout(dev->regs + HPU_ROCE_EQ_CTRL, ctrl,
				ctrl == U32_MAX || !(ctrl & HPU_ROCE_EQ_BUSY),
				5, 100000))
		return true;	/* idle, or all ones: the function is gone or reset */
	ibdev_err(&dev->ibdev, "event ring still written 100 ms after it was disabled: its memory is kept\n");
	return false;
}

/**
 * hpu_ib_eq_init() - allocate the event ring, start it, request its irq
 * @dev: the device, engine registers mapped
 *
 * The ring is enabled before the interrupt is requested: enabling resets
 * the indexes, so an interrupt of an earlier user of the vector that is
 * still pending finds the new indexes. An event between the two is seen
 * at the next interrupt (at probe no object exists: only port events).
 *
 * Return: 0 or a negative error code; nothing is left set up on failure.
 */
int hpu_ib_eq_init(struct hpu_ib_dev *dev)
{
	size_t size = HPU_IB_EQ_ENTRIES * HPU_ROCE_EQE_SIZE;
	u64 addr;
	int ret;

	dev->eq = dma_alloc_coherent(dev->dma_dev, size, &dev->eq_dma,
				     GFP_KERNEL);
	if (!dev->eq)
		return -ENOMEM;
	addr = dev->eq_dma | HPU_IB_HOST_ADDR;
	dev->eq_ci = 0;
	hpu_ib_wr(dev, HPU_ROCE_EQ_CTRL, 0);
	hpu_ib_wr(dev, HPU_ROCE_EQ_LO, lower_32_bits(addr));
	hpu_ib_wr(dev, HPU_ROCE_EQ_HI, upper_32_bits(addr));
	hpu_ib_wr(dev, HPU_ROCE_EQ_SIZE, HPU_IB_EQ_ENTRIES);
	/* Enabling resets EQ_PI and EQ_CI to 0. */
	hpu_ib_wr(dev, HPU_ROCE_EQ_CTRL, HPU_ROCE_EQ_ENABLE | HPU_ROCE_EQ_IRQ);

	ret = request_threaded_irq(dev->irq, NULL, hpu_ib_eq_thread,
				   IRQF_ONESHOT, "hpu_ib-eq", dev);
	if (ret) {
		if (hpu_ib_eq_stop(dev))
			dma_free_coherent(dev->dma_dev, size, dev->eq, dev->eq_dma);
		dev->eq = NULL;
		return ret;
	}
	return 0;
}

/**
 * hpu_ib_eq_fini() - stop the event ring, free its irq and memory
 * @dev: the device; every object is destroyed
 */
void hpu_ib_eq_fini(struct hpu_ib_dev *dev)
{
	bool stopped = hpu_ib_eq_stop(dev);

	free_irq(dev->irq, dev);
	if (stopped)
		dma_free_coherent(dev->dma_dev,
				  HPU_IB_EQ_ENTRIES * HPU_ROCE_EQE_SIZE,
				  dev->eq, dev->eq_dma);
	dev->eq = NULL;
}
