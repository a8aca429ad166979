/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: the one header through which the driver touches device registers.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_REG_H__
#define __HPU_REG_H__

#include <linux/bitfield.h>
#include <linux/io.h>
#include <linux/iopoll.h>

#include "hpu_drv.h"
#include "hpu_regs.h"

/* Poll interval for hpu_poll32(). */
#define HPU_REG_POLL_SLEEP_US	10

static inline u32 hpu_rd32(struct hpu_device *hdev, u32 reg)
{
	return readl(hdev->regs + reg);
}

static inline void hpu_wr32(struct hpu_device *hdev, u32 reg, u32 val)
{
	writel(val, hdev->regs + reg);
}

/*
 * Poll register @reg into @val until @cond holds or @timeout_us elapses;
 * 0 or -ETIMEDOUT. May sleep.
 */
#define hpu_poll32(hdev, reg, val, cond, timeout_us) \
	readl_poll_timeout((hdev)->regs + (reg), val, cond, \
			   HPU_REG_POLL_SLEEP_US, timeout_us)

#endif /* __HPU_REG_H__ */
