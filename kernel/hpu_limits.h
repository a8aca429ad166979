/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu: per-context and per-user limits on what one tenant may take of a
 * device (Documentation/driver/limits.md).
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_LIMITS_H__
#define __HPU_LIMITS_H__

#include <linux/bitmap.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/uidgid.h>

#include "hpu_regs.h"

struct attribute_group;
struct hpu_device;

/**
 * struct hpu_ctx_limits - what one context or user may take of a device
 * @ctx_page_tables: page tables one context may hold (its root included).
 * @pt_reserve: page tables kept for each ASID (its root included) out of
 *	what other contexts may take beyond their own reserve, so that a
 *	context can always be opened and map a little even when others
 *	have taken every other table.
 * @ctx_mappings: VM_BIND mappings one context may hold.
 * @ctx_queues: queues one context may hold, at most HPU_MAX_QUEUES.
 * @ctx_jobs: jobs of one context submitted and not yet freed.
 * @user_contexts: open contexts (files) one user id may hold, callers
 *	with CAP_SYS_ADMIN not counted; 1 to 63.
 * @unprivileged_contexts: open contexts all callers without CAP_SYS_ADMIN
 *	together may hold, whatever their user ids (user namespaces, many
 *	uids); 1 to 63. The rest of the 63 ASIDs is for CAP_SYS_ADMIN.
 * @user_timeout_ms: the longest &drm_hpu_submit.timeout_ms a caller
 *	without CAP_SYS_ADMIN may ask for.
 * @ctx_user_queues: user queues one context may hold (not counted in
 *	@ctx_queues); 0 turns user queues off.
 * @users_lock: protects @counted and @uid, and orders them with the
 *	allocation and release of ASIDs.
 * @counted: per ASID, its context counts against @user_contexts (it was
 *	opened without CAP_SYS_ADMIN).
 * @uid: per ASID in @counted, the effective user id that opened it.
 *
 * The limit fields are read without a lock (READ_ONCE) and written by
 * root through sysfs (WRITE_ONCE); a change applies to later requests,
 * never to what is already held. Allocated with the DRM device.
 */
struct hpu_ctx_limits {
	u32 ctx_page_tables;
	u32 pt_reserve;
	u32 ctx_mappings;
	u32 ctx_queues;
	u32 ctx_jobs;
	u32 user_contexts;
	u32 unprivileged_contexts;
	u32 user_timeout_ms;
	u32 ctx_user_queues;
	struct mutex users_lock;	/* protects counted, uid */
	DECLARE_BITMAP(counted, HPU_MMU_NUM_ASIDS);
	kuid_t uid[HPU_MMU_NUM_ASIDS];
};

int hpu_limits_init(struct hpu_device *hdev);

int hpu_limits_asid_get(struct hpu_device *hdev);
void hpu_limits_asid_put(struct hpu_device *hdev, u32 asid);

extern const struct attribute_group hpu_limits_group;

#endif /* __HPU_LIMITS_H__ */
