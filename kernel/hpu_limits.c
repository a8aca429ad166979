// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: per-context and per-user limits.
 *
 * Any tenant may open the accel node, so nothing one context can take
 * may be unbounded: page tables (a device-global area), mappings (kernel
 * memory), queues, jobs in flight, job timeouts (stream time) and, per
 * user and for every user without CAP_SYS_ADMIN together, contexts
 * (ASIDs). Each limit is a module parameter that sets the
 * default of every device at probe and a sysfs attribute of the PCI
 * device (the "limits" group) that root may change at any time. A limit
 * refuses only the request that would exceed it; it never takes back
 * what a context already holds. Documentation/driver/limits.md has the
 * design, the defaults and the errno of each.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/device.h>
#include <linux/kstrtox.h>
#include <linux/moduleparam.h>
#include <linux/pci.h>
#include <linux/sysfs.h>

#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "hpu_drv.h"
#include "hpu_kunit.h"
#include "hpu_eq.h"
#include "hpu_limits.h"
#include "hpu_notify.h"
#include "hpu_mmu.h"
#include "hpu_queue.h"
#include "hpu_stream.h"

/* Contexts (ASIDs) a device hands out. */
#define HPU_LIMIT_ASIDS		(HPU_ASID_LAST - HPU_ASID_FIRST + 1)

static unsigned int hpu_limit_ctx_page_tables;
module_param_named(limit_ctx_page_tables, hpu_limit_ctx_page_tables, uint, 0444);
MODULE_PARM_DESC(limit_ctx_page_tables,
		 "Page tables one context may hold, read at probe (default 0: half of the device's page-table area)");

static int hpu_limit_pt_reserve = -1;
module_param_named(limit_pt_reserve, hpu_limit_pt_reserve, int, 0444);
MODULE_PARM_DESC(limit_pt_reserve,
		 "Page tables kept for each of the 63 ASIDs, read at probe (default -1: a quarter of the area shared among them)");

static unsigned int hpu_limit_ctx_mappings = 65536;
module_param_named(limit_ctx_mappings, hpu_limit_ctx_mappings, uint, 0444);
MODULE_PARM_DESC(limit_ctx_mappings,
		 "VM_BIND mappings one context may hold, read at probe (default 65536)");

static unsigned int hpu_limit_ctx_queues = HPU_MAX_QUEUES;
module_param_named(limit_ctx_queues, hpu_limit_ctx_queues, uint, 0444);
MODULE_PARM_DESC(limit_ctx_queues,
		 "Queues one context may hold (at most 64), read at probe (default 64)");

static unsigned int hpu_limit_ctx_jobs = 1024;
module_param_named(limit_ctx_jobs, hpu_limit_ctx_jobs, uint, 0444);
MODULE_PARM_DESC(limit_ctx_jobs,
		 "Jobs of one context submitted and not yet finished, read at probe (default 1024)");

static unsigned int hpu_limit_user_contexts = 32;
module_param_named(limit_user_contexts, hpu_limit_user_contexts, uint, 0444);
MODULE_PARM_DESC(limit_user_contexts,
		 "Open files (contexts) per device one user may hold without CAP_SYS_ADMIN (1 to 63), read at probe (default 32)");

/* Default: a few ASIDs stay for CAP_SYS_ADMIN whatever users do. */
static unsigned int hpu_limit_unprivileged_contexts = HPU_LIMIT_ASIDS - 4;
module_param_named(limit_unprivileged_contexts, hpu_limit_unprivileged_contexts, uint, 0444);
MODULE_PARM_DESC(limit_unprivileged_contexts,
		 "Open files (contexts) per device all users without CAP_SYS_ADMIN together may hold (1 to 63), read at probe (default 59)");

static unsigned int hpu_limit_ctx_user_queues = 4;
module_param_named(limit_ctx_user_queues, hpu_limit_ctx_user_queues, uint, 0444);
MODULE_PARM_DESC(limit_ctx_user_queues,
		 "User queues one context may hold (0 to 64, 0: none), read at probe (default 4)");

static unsigned int hpu_limit_user_timeout_ms = 60000;
module_param_named(limit_user_timeout_ms, hpu_limit_user_timeout_ms, uint, 0444);
MODULE_PARM_DESC(limit_user_timeout_ms,
		 "Longest per-job timeout a caller without CAP_SYS_ADMIN may ask for, in ms (0 to 3600000), read at probe (default 60000)");

/**
 * enum hpu_limit_id - the limits, in the order of &hpu_limit_attrs
 * @HPU_LIMIT_CTX_PAGE_TABLES: &hpu_ctx_limits.ctx_page_tables
 * @HPU_LIMIT_PT_RESERVE: &hpu_ctx_limits.pt_reserve
 * @HPU_LIMIT_CTX_MAPPINGS: &hpu_ctx_limits.ctx_mappings
 * @HPU_LIMIT_CTX_QUEUES: &hpu_ctx_limits.ctx_queues
 * @HPU_LIMIT_CTX_JOBS: &hpu_ctx_limits.ctx_jobs
 * @HPU_LIMIT_USER_CONTEXTS: &hpu_ctx_limits.user_contexts
 * @HPU_LIMIT_UNPRIVILEGED_CONTEXTS: &hpu_ctx_limits.unprivileged_contexts
 * @HPU_LIMIT_USER_TIMEOUT_MS: &hpu_ctx_limits.user_timeout_ms
 * @HPU_LIMIT_CTX_USER_QUEUES: &hpu_ctx_limits.ctx_user_queues
 * @HPU_LIMIT_COUNT: number of limits
 */
enum hpu_limit_id {
	HPU_LIMIT_CTX_PAGE_TABLES,
	HPU_LIMIT_PT_RESERVE,
	HPU_LIMIT_CTX_MAPPINGS,
	HPU_LIMIT_CTX_QUEUES,
	HPU_LIMIT_CTX_JOBS,
	HPU_LIMIT_USER_CONTEXTS,
	HPU_LIMIT_UNPRIVILEGED_CONTEXTS,
	HPU_LIMIT_USER_TIMEOUT_MS,
	HPU_LIMIT_CTX_USER_QUEUES,
	HPU_LIMIT_COUNT
};

static u32 *hpu_limit_field(struct hpu_ctx_limits *lim, enum hpu_limit_id id)
{
	switch (id) {
	case HPU_LIMIT_CTX_PAGE_TABLES:
		return &lim->ctx_page_tables;
	case HPU_LIMIT_PT_RESERVE:
		return &lim->pt_reserve;
	case HPU_LIMIT_CTX_MAPPINGS:
		return &lim->ctx_mappings;
	case HPU_LIMIT_CTX_QUEUES:
		return &lim->ctx_queues;
	case HPU_LIMIT_CTX_JOBS:
		return &lim->ctx_jobs;
	case HPU_LIMIT_USER_CONTEXTS:
		return &lim->user_contexts;
	case HPU_LIMIT_UNPRIVILEGED_CONTEXTS:
		return &lim->unprivileged_contexts;
	case HPU_LIMIT_CTX_USER_QUEUES:
		return &lim->ctx_user_queues;
	case HPU_LIMIT_USER_TIMEOUT_MS:
	default:
		return &lim->user_timeout_ms;
	}
}

/* The values a limit may take on @hdev: [*min, *max]. */
static void hpu_limit_range(struct hpu_device *hdev, enum hpu_limit_id id,
			    u32 *min, u32 *max)
{
	*min = 0;
	*max = U32_MAX;
	switch (id) {
	case HPU_LIMIT_CTX_PAGE_TABLES:
		*min = 1;
		*max = hdev->mmu->pt_count;
		break;
	case HPU_LIMIT_PT_RESERVE:
		*max = hdev->mmu->pt_count / HPU_LIMIT_ASIDS;
		break;
	case HPU_LIMIT_CTX_QUEUES:
	case HPU_LIMIT_CTX_USER_QUEUES:
		*max = HPU_MAX_QUEUES;
		break;
	case HPU_LIMIT_USER_CONTEXTS:
	case HPU_LIMIT_UNPRIVILEGED_CONTEXTS:
		*min = 1;
		*max = HPU_LIMIT_ASIDS;
		break;
	case HPU_LIMIT_USER_TIMEOUT_MS:
		*max = HPU_JOB_TIMEOUT_MAX_MS;
		break;
	default:
		break;
	}
}

static void hpu_limit_set_default(struct hpu_device *hdev,
				  enum hpu_limit_id id, const char *name,
				  u32 val)
{
	u32 min, max;

	hpu_limit_range(hdev, id, &min, &max);
	if (val < min || val > max) {
		drm_warn(&hdev->drm, "limit_%s=%u is outside [%u, %u]; using %u\n",
			 name, val, min, max, clamp(val, min, max));
		val = clamp(val, min, max);
	}
	*hpu_limit_field(hdev->limits, id) = val;
}

/**
 * hpu_limits_init() - set a device's limits from the module parameters
 * @hdev: the device, its MMU initialised (the page-table defaults depend
 *	on the size of the page-table area)
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_limits_init(struct hpu_device *hdev)
{
	struct drm_device *drm = &hdev->drm;
	struct hpu_ctx_limits *lim;
	u32 pt_count = hdev->mmu->pt_count;
	u32 val;
	int ret;

	lim = drmm_kzalloc(drm, sizeof(*lim), GFP_KERNEL);
	if (!lim)
		return -ENOMEM;
	ret = drmm_mutex_init(drm, &lim->users_lock);
	if (ret)
		return ret;
	hdev->limits = lim;

	val = hpu_limit_ctx_page_tables ?: pt_count / 2;
	hpu_limit_set_default(hdev, HPU_LIMIT_CTX_PAGE_TABLES, "ctx_page_tables", val);
	val = hpu_limit_pt_reserve >= 0 ? hpu_limit_pt_reserve :
					  pt_count / 4 / HPU_LIMIT_ASIDS;
	hpu_limit_set_default(hdev, HPU_LIMIT_PT_RESERVE, "pt_reserve", val);
	hpu_limit_set_default(hdev, HPU_LIMIT_CTX_MAPPINGS, "ctx_mappings",
			      hpu_limit_ctx_mappings);
	hpu_limit_set_default(hdev, HPU_LIMIT_CTX_QUEUES, "ctx_queues",
			      hpu_limit_ctx_queues);
	hpu_limit_set_default(hdev, HPU_LIMIT_CTX_JOBS, "ctx_jobs",
			      hpu_limit_ctx_jobs);
	hpu_limit_set_default(hdev, HPU_LIMIT_USER_CONTEXTS, "user_contexts",
			      hpu_limit_user_contexts);
	hpu_limit_set_default(hdev, HPU_LIMIT_UNPRIVILEGED_CONTEXTS,
			      "unprivileged_contexts",
			      hpu_limit_unprivileged_contexts);
	hpu_limit_set_default(hdev, HPU_LIMIT_USER_TIMEOUT_MS, "user_timeout_ms",
			      hpu_limit_user_timeout_ms);
	hpu_limit_set_default(hdev, HPU_LIMIT_CTX_USER_QUEUES, "ctx_user_queues",
			      hpu_limit_ctx_user_queues);
	return 0;
}

/**
 * hpu_limits_asid_get() - allocate an ASID for a new context of the caller
 * @hdev: the device
 *
 * A caller with CAP_SYS_ADMIN is not counted. Otherwise the context is
 * counted under the caller's effective uid, and refused if that uid
 * already has &hpu_ctx_limits.user_contexts contexts on the device, or if
 * the callers without CAP_SYS_ADMIN together already hold
 * &hpu_ctx_limits.unprivileged_contexts (uids are cheap: user namespaces,
 * or users working together, must not take every ASID). The count and the
 * allocation happen under one lock, so concurrent opens cannot pass a
 * limit, and a refused open takes no ASID.
 *
 * Return: the ASID; -EBUSY when the user or the unprivileged callers have
 * their limit of contexts or all ASIDs are taken; -ENOMEM.
 */
int hpu_limits_asid_get(struct hpu_device *hdev)
{
	struct hpu_ctx_limits *lim = hdev->limits;
	bool counted = !ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	kuid_t uid = current_euid();
	unsigned int a, n = 0, all = 0;
	int asid;
	u32 max, max_all;

	mutex_lock(&lim->users_lock);
	max = READ_ONCE(lim->user_contexts);
	max_all = READ_ONCE(lim->unprivileged_contexts);
	if (counted) {
		for_each_set_bit(a, lim->counted, HPU_MMU_NUM_ASIDS) {
			all++;
			if (uid_eq(lim->uid[a], uid))
				n++;
		}
		if (n >= max) {
			mutex_unlock(&lim->users_lock);
			drm_dbg_driver(&hdev->drm, "uid %u has %u contexts open, its limit\n",
				       from_kuid(&init_user_ns, uid), n);
			return -EBUSY;
		}
		if (all >= max_all) {
			mutex_unlock(&lim->users_lock);
			drm_dbg(&hdev->drm, "callers without CAP_SYS_ADMIN have %u contexts open, their limit\n",
				all);
			return -EBUSY;
		}
	}
	asid = hpu_mmu_asid_alloc(hdev);
	if (asid >= 0 && counted) {
		lim->uid[asid] = uid;
		__set_bit(asid, lim->counted);
	}
	mutex_unlock(&lim->users_lock);
	return asid;
}
EXPORT_SYMBOL_IF_KUNIT(hpu_limits_asid_get);

/**
 * hpu_limits_asid_put() - give back the ASID of a context that ends
 * @hdev: the device
 * @asid: an ASID from hpu_limits_asid_get(), whose root has been cleared
 *	and invalidated (or whose device is gone)
 *
 * The events the device wrote for the context are handled, and what waits
 * to be told to it dropped, before the ASID can pass to another context.
 * May sleep.
 */
void hpu_limits_asid_put(struct hpu_device *hdev, u32 asid)
{
	struct hpu_ctx_limits *lim = hdev->limits;

	hpu_eq_sync(hdev);
	hpu_notify_asid_gone(hdev, asid);
	mutex_lock(&lim->users_lock);
	__clear_bit(asid, lim->counted);
	hpu_mmu_asid_free(hdev, asid);
	mutex_unlock(&lim->users_lock);
}
EXPORT_SYMBOL_IF_KUNIT(hpu_limits_asid_put);

/*
 * sysfs: /sys/bus/pci/devices/<dev>/limits/. The driver core removes the
 * group, waiting for readers and writers, before the remove callback
 * runs, so the device and its state are there.
 */

static struct hpu_device *hpu_limits_dev(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t hpu_limit_show(struct device *dev,
			      struct device_attribute *attr, char *buf);
static ssize_t hpu_limit_store(struct device *dev,
			       struct device_attribute *attr, const char *buf,
			       size_t count);

static struct device_attribute hpu_limit_attrs[] = {
	__ATTR(ctx_page_tables, 0644, hpu_limit_show, hpu_limit_store),
	__ATTR(pt_reserve, 0644, hpu_limit_show, hpu_limit_store),
	__ATTR(ctx_mappings, 0644, hpu_limit_show, hpu_limit_store),
	__ATTR(ctx_queues, 0644, hpu_limit_show, hpu_limit_store),
	__ATTR(ctx_jobs, 0644, hpu_limit_show, hpu_limit_store),
	__ATTR(user_contexts, 0644, hpu_limit_show, hpu_limit_store),
	__ATTR(unprivileged_contexts, 0644, hpu_limit_show, hpu_limit_store),
	__ATTR(user_timeout_ms, 0644, hpu_limit_show, hpu_limit_store),
	__ATTR(ctx_user_queues, 0644, hpu_limit_show, hpu_limit_store),
};

static_assert(ARRAY_SIZE(hpu_limit_attrs) == HPU_LIMIT_COUNT);

static ssize_t hpu_limit_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct hpu_device *hdev = hpu_limits_dev(dev);
	enum hpu_limit_id id = attr - hpu_limit_attrs;

	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(*hpu_limit_field(hdev->limits, id)));
}

static ssize_t hpu_limit_store(struct device *dev,
			       struct device_attribute *attr, const char *buf,
			       size_t count)
{
	struct hpu_device *hdev = hpu_limits_dev(dev);
	enum hpu_limit_id id = attr - hpu_limit_attrs;
	u32 val, min, max;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtou32(buf, 0, &val);
	if (ret)
		return ret;
	hpu_limit_range(hdev, id, &min, &max);
	if (val < min || val > max)
		return -EINVAL;

	WRITE_ONCE(*hpu_limit_field(hdev->limits, id), val);
	drm_dbg_driver(&hdev->drm, "limit %s set to %u by pid %d\n",
		       attr->attr.name, val, task_pid_nr(current));
	return count;
}

static ssize_t page_tables_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", hpu_limits_dev(dev)->mmu->pt_count);
}
static DEVICE_ATTR_RO(page_tables);

static ssize_t page_tables_used_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", hpu_mmu_pt_used(hpu_limits_dev(dev)));
}

/* Usage tells about other tenants' work: for root only. */
static DEVICE_ATTR_ADMIN_RO(page_tables_used);

static ssize_t jobs_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  atomic_read(&hpu_limits_dev(dev)->qm->jobs));
}
static DEVICE_ATTR_ADMIN_RO(jobs);

static struct attribute *hpu_limits_attrs[] = {
	&hpu_limit_attrs[HPU_LIMIT_CTX_PAGE_TABLES].attr,
	&hpu_limit_attrs[HPU_LIMIT_PT_RESERVE].attr,
	&hpu_limit_attrs[HPU_LIMIT_CTX_MAPPINGS].attr,
	&hpu_limit_attrs[HPU_LIMIT_CTX_QUEUES].attr,
	&hpu_limit_attrs[HPU_LIMIT_CTX_JOBS].attr,
	&hpu_limit_attrs[HPU_LIMIT_USER_CONTEXTS].attr,
	&hpu_limit_attrs[HPU_LIMIT_UNPRIVILEGED_CONTEXTS].attr,
	&hpu_limit_attrs[HPU_LIMIT_USER_TIMEOUT_MS].attr,
	&hpu_limit_attrs[HPU_LIMIT_CTX_USER_QUEUES].attr,
	&dev_attr_page_tables.attr,
	&dev_attr_page_tables_used.attr,
	&dev_attr_jobs.attr,
	NULL
};

/* The "limits" directory of the PCI device (hpu_sysfs.c). */
const struct attribute_group hpu_limits_group = {
	.name = "limits",
	.attrs = hpu_limits_attrs,
};
