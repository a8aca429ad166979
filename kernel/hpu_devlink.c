// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: devlink instance of the PCI device.
 *
 * - info: serial number, chip, running and stored firmware versions;
 * - flash update: writes an image to the device's flash (hpu_fw_flash());
 *   it runs after the next boot (hard reset or rebind);
 * - health reporters "fw" (heartbeat loss, fatal firmware error) and
 *   "memory" (uncorrectable ECC error, page retired).
 *
 * Reports come from the reset work and the ECC retirement work; they are
 * handed to a work item of this file, so that no devlink lock is taken
 * where resets run and so that removal can stop them (hpu_devlink_fini()).
 * The reset code does the recovery (one hard reset per firmware failure):
 * the "fw" reporter's recover only waits for the firmware to run again.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/iopoll.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include <net/devlink.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "hpu_accel.h"
#include "hpu_asic.h"
#include "hpu_devlink.h"
#include "hpu_drv.h"
#include "hpu_error_stats.h"
#include "hpu_fw.h"
#include "hpu_reg.h"
#include "hpu_reset.h"

/* How long the "fw" reporter's recovery waits for the firmware to run. */
#define HPU_DEVLINK_RECOVER_TIMEOUT_US	(3000 * USEC_PER_MSEC)
/* Uncorrectable ECC errors reported per run of the work. */
#define HPU_DEVLINK_ECC_MAX		16

/**
 * struct hpu_devlink - devlink state of one device
 * @hdev: the device.
 * @devlink: the devlink instance; its private data points to @hdev.
 * @fw_reporter: the "fw" health reporter.
 * @mem_reporter: the "memory" health reporter.
 * @work: hands the reports below to devlink.
 * @lock: protects the fields below; irq-safe.
 * @ready: the reporters exist and reports are taken.
 * @fw_pending: @fw_snap waits for @work.
 * @fw_snap: the last firmware failure not reported yet.
 * @fw_last: the last firmware failure reported, for diagnose.
 * @fw_have_last: @fw_last is set.
 * @ecc_pending: uncorrectable ECC errors not reported yet.
 * @ecc_last: HBM offset of the last page retired.
 */
struct hpu_devlink {
	struct hpu_device *hdev;
	struct devlink *devlink;
	struct devlink_health_reporter *fw_reporter;
	struct devlink_health_reporter *mem_reporter;
	struct work_struct work;
	/* reports and their state */
	spinlock_t lock;
	bool ready;
	bool fw_pending;
	struct hpu_devlink_fw_snapshot fw_snap;
	struct hpu_devlink_fw_snapshot fw_last;
	bool fw_have_last;
	unsigned int ecc_pending;
	u64 ecc_last;
};

/* devlink's private data */
struct hpu_devlink_priv {
	struct hpu_device *hdev;
};

static struct hpu_device *hpu_devlink_hdev(struct devlink *devlink)
{
	return ((struct hpu_devlink_priv *)devlink_priv(devlink))->hdev;
}

static int hpu_devlink_info_get(struct devlink *devlink,
				struct devlink_info_req *req,
				struct netlink_ext_ack *extack)
{
	struct hpu_device *hdev = hpu_devlink_hdev(devlink);
	struct drm_hpu_info_firmware fw = {};
	char buf[HPU_FW_VERSION_STR_LEN];
	int ret;

	ret = devlink_info_serial_number_put(req, hdev->id.serial);
	if (ret)
		return ret;
	ret = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_BOARD_ID,
					     hdev->asic->name);
	if (ret)
		return ret;
	snprintf(buf, sizeof(buf), "0x%x", hdev->id.chip_id);
	ret = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_ID,
					     buf);
	if (ret)
		return ret;
	snprintf(buf, sizeof(buf), "%u.%u",
		 FIELD_GET(HPU_REVISION_MAJOR_MASK, hdev->id.revision),
		 FIELD_GET(HPU_REVISION_MINOR_MASK, hdev->id.revision));
	ret = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_REV,
					     buf);
	if (ret)
		return ret;

	hpu_fw_info(hdev, &fw);
	if (fw.running_version) {
		ret = devlink_info_version_running_put(req,
						       DEVLINK_INFO_VERSION_GENERIC_FW_MGMT,
						       hpu_fw_version_str(fw.running_version,
									  buf, sizeof(buf)));
		if (ret)
			return ret;
		if (fw.running_build[0]) {
			ret = devlink_info_version_running_put(req, "fw.mgmt.build",
							       fw.running_build);
			if (ret)
				return ret;
		}
	}
	if (fw.stored_version)
		ret = devlink_info_version_stored_put(req,
						      DEVLINK_INFO_VERSION_GENERIC_FW_MGMT,
						      hpu_fw_version_str(fw.stored_version,
									 buf, sizeof(buf)));
	return ret;
}

static int hpu_devlink_flash_update(struct devlink *devlink,
				    struct devlink_flash_update_params *params,
				    struct netlink_ext_ack *extack)
{
	struct hpu_device *hdev = hpu_devlink_hdev(devlink);
	const struct firmware *image = params->fw;
	char ver[HPU_FW_VERSION_STR_LEN];
	u32 refusal;
	int ret;

	devlink_flash_update_status_notify(devlink, "Verifying and writing the image",
					   NULL, 0, image->size);
	ret = hpu_fw_flash(hdev, image->data, image->size, &refusal);
	switch (ret) {
	case 0:
		devlink_flash_update_status_notify(devlink,
						   "Flash written; the new firmware runs after the next hard reset",
						   NULL, image->size, image->size);
		return 0;
	case -EACCES:
	case -EFBIG:
		hpu_fw_version_str(hpu_rd32(hdev, HPU_REG_FLASH_VERSION), ver,
				   sizeof(ver));
		drm_warn(&hdev->drm, "flash update refused: %s (%s); %s; the flash keeps firmware %s\n",
			 hpu_fw_refusal_what(refusal),
			 hpu_fw_refusal_name(refusal),
			 hpu_fw_refusal_todo(refusal), ver);
		NL_SET_ERR_MSG_FMT_MOD(extack, "image refused by the device (%s)",
				       hpu_fw_refusal_name(refusal));
		return ret == -EFBIG ? -EFBIG : -EINVAL;
	case -ETIMEDOUT:
		drm_err(&hdev->drm, "flash update: the write did not complete within 1 s (FLASH_STATUS %u)\n",
			hpu_rd32(hdev, HPU_REG_FLASH_STATUS));
		NL_SET_ERR_MSG_MOD(extack, "the flash write did not complete in time");
		return ret;
	case -EBUSY:
		NL_SET_ERR_MSG_MOD(extack, "an earlier flash write is still in progress");
		return ret;
	default:
		NL_SET_ERR_MSG_FMT_MOD(extack, "flash write failed (%d)", ret);
		return ret;
	}
}

static const struct devlink_ops hpu_devlink_ops = {
	.info_get = hpu_devlink_info_get,
	.flash_update = hpu_devlink_flash_update,
};

/* Health reporter "fw" */

static void hpu_devlink_fmsg_hex(struct devlink_fmsg *fmsg, const char *name,
				 u32 value)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "0x%08x", value);
	devlink_fmsg_string_pair_put(fmsg, name, buf);
}

static void hpu_devlink_fmsg_snapshot(struct devlink_fmsg *fmsg,
				      const struct hpu_devlink_fw_snapshot *s)
{
	char ver[HPU_FW_VERSION_STR_LEN];

	devlink_fmsg_string_pair_put(fmsg, "reason", s->reason);
	devlink_fmsg_u32_pair_put(fmsg, "cpu_status", s->cpu_status);
	hpu_devlink_fmsg_hex(fmsg, "fw_error", s->fw_error);
	devlink_fmsg_u32_pair_put(fmsg, "heartbeat_request", s->hb_req);
	devlink_fmsg_u32_pair_put(fmsg, "heartbeat_ack", s->hb_ack);
	devlink_fmsg_u64_pair_put(fmsg, "heartbeat_losses", s->heartbeat_losses);
	devlink_fmsg_string_pair_put(fmsg, "fw_version",
				     hpu_fw_version_str(s->fw_version, ver,
							sizeof(ver)));
}

static int hpu_devlink_fw_diagnose(struct devlink_health_reporter *reporter,
				   struct devlink_fmsg *fmsg,
				   struct netlink_ext_ack *extack)
{
	struct hpu_devlink *dl = devlink_health_reporter_priv(reporter);
	static const char * const states[] = {
		[DRM_HPU_FW_STATE_RUNNING] = "running",
		[DRM_HPU_FW_STATE_BOOTING] = "booting",
		[DRM_HPU_FW_STATE_FAILED] = "failed",
		[DRM_HPU_FW_STATE_HALTED] = "halted",
	};
	struct hpu_device *hdev = dl->hdev;
	struct hpu_devlink_fw_snapshot now, last;
	struct drm_hpu_info_firmware fw = {};
	struct drm_hpu_info_errors errors;
	char ver[HPU_FW_VERSION_STR_LEN];
	bool have_last;

	hpu_devlink_fw_snapshot(hdev, "now", &now);
	hpu_fw_info(hdev, &fw);
	hpu_error_stats_read(hdev, &errors);
	spin_lock_irq(&dl->lock);
	last = dl->fw_last;
	have_last = dl->fw_have_last;
	spin_unlock_irq(&dl->lock);

	devlink_fmsg_string_pair_put(fmsg, "state", fw.state < ARRAY_SIZE(states) ?
				     states[fw.state] : "unknown");
	devlink_fmsg_u32_pair_put(fmsg, "cpu_status", now.cpu_status);
	hpu_devlink_fmsg_hex(fmsg, "fw_error", now.fw_error);
	devlink_fmsg_u32_pair_put(fmsg, "heartbeat_request", now.hb_req);
	devlink_fmsg_u32_pair_put(fmsg, "heartbeat_ack", now.hb_ack);
	devlink_fmsg_u64_pair_put(fmsg, "heartbeat_losses", errors.heartbeat_losses);
	devlink_fmsg_u64_pair_put(fmsg, "fw_fatal", errors.fw_fatal);
	devlink_fmsg_u64_pair_put(fmsg, "hard_resets", errors.hard_resets);
	devlink_fmsg_string_pair_put(fmsg, "running_version",
				     hpu_fw_version_str(fw.running_version, ver,
							sizeof(ver)));
	devlink_fmsg_u32_pair_put(fmsg, "boots", fw.boots);
	devlink_fmsg_string_pair_put(fmsg, "boot_error", fw.boot_error ?
				     hpu_fw_refusal_name(fw.boot_error) : "none");
	if (have_last) {
		devlink_fmsg_pair_nest_start(fmsg, "last_failure");
		devlink_fmsg_obj_nest_start(fmsg);
		hpu_devlink_fmsg_snapshot(fmsg, &last);
		devlink_fmsg_obj_nest_end(fmsg);
		devlink_fmsg_pair_nest_end(fmsg);
	}
	return 0;
}

static int hpu_devlink_fw_dump(struct devlink_health_reporter *reporter,
			       struct devlink_fmsg *fmsg, void *priv_ctx,
			       struct netlink_ext_ack *extack)
{
	struct hpu_devlink *dl = devlink_health_reporter_priv(reporter);
	struct hpu_devlink_fw_snapshot now;

	/* At a report: the state at the failure; on request: now. */
	if (!priv_ctx) {
		hpu_devlink_fw_snapshot(dl->hdev, "dump requested", &now);
		priv_ctx = &now;
	}
	hpu_devlink_fmsg_snapshot(fmsg, priv_ctx);
	return 0;
}

static bool hpu_devlink_fw_settled(struct hpu_device *hdev)
{
	return hpu_fw_running(hdev) || hpu_reset_unusable(hdev);
}

/*
 * The reset code already recovers (one hard reset per firmware failure,
 * hpu_reset.c); recovery here starts nothing, it only waits for the
 * firmware to run again.
 */
static int hpu_devlink_fw_recover(struct devlink_health_reporter *reporter,
				  void *priv_ctx, struct netlink_ext_ack *extack)
{
	struct hpu_devlink *dl = devlink_health_reporter_priv(reporter);
	struct hpu_device *hdev = dl->hdev;
	bool settled;

	read_poll_timeout(hpu_devlink_fw_settled, settled, settled,
			  10 * USEC_PER_MSEC, HPU_DEVLINK_RECOVER_TIMEOUT_US,
			  false, hdev);
	if (hpu_reset_unusable(hdev)) {
		NL_SET_ERR_MSG_MOD(extack, "no firmware: the device is unusable, rebind it");
		return -EIO;
	}
	if (!settled) {
		NL_SET_ERR_MSG_MOD(extack, "the firmware is not running (yet)");
		return -EAGAIN;
	}
	return 0;
}

static const struct devlink_health_reporter_ops hpu_devlink_fw_ops = {
	.name = "fw",
	.recover = hpu_devlink_fw_recover,
	.diagnose = hpu_devlink_fw_diagnose,
	.dump = hpu_devlink_fw_dump,
};

/* Health reporter "memory" */

static int hpu_devlink_mem_diagnose(struct devlink_health_reporter *reporter,
				    struct devlink_fmsg *fmsg,
				    struct netlink_ext_ack *extack)
{
	struct hpu_devlink *dl = devlink_health_reporter_priv(reporter);
	struct drm_hpu_info_errors errors;
	char buf[24];
	u64 last;

	hpu_error_stats_read(dl->hdev, &errors);
	spin_lock_irq(&dl->lock);
	last = dl->ecc_last;
	spin_unlock_irq(&dl->lock);

	devlink_fmsg_u64_pair_put(fmsg, "ecc_correctable", errors.ecc_correctable);
	devlink_fmsg_u64_pair_put(fmsg, "ecc_uncorrectable", errors.ecc_uncorrectable);
	devlink_fmsg_u64_pair_put(fmsg, "retired_pages", errors.retired_pages);
	if (errors.retired_pages) {
		snprintf(buf, sizeof(buf), "0x%llx", last);
		devlink_fmsg_string_pair_put(fmsg, "last_retired_page", buf);
	}
	return 0;
}

/* The page is retired already (hpu_hbm.c): nothing left to do. */
static int hpu_devlink_mem_recover(struct devlink_health_reporter *reporter,
				   void *priv_ctx, struct netlink_ext_ack *extack)
{
	return 0;
}

static const struct devlink_health_reporter_ops hpu_devlink_mem_ops = {
	.name = "memory",
	.recover = hpu_devlink_mem_recover,
	.diagnose = hpu_devlink_mem_diagnose,
};

/* Reports */

static void hpu_devlink_work(struct work_struct *work)
{
	struct hpu_devlink *dl = container_of(work, struct hpu_devlink, work);
	struct hpu_devlink_fw_snapshot snap;
	unsigned int ecc;
	bool fw;

	spin_lock_irq(&dl->lock);
	fw = dl->fw_pending;
	dl->fw_pending = false;
	snap = dl->fw_snap;
	if (fw) {
		dl->fw_last = snap;
		dl->fw_have_last = true;
	}
	ecc = min(dl->ecc_pending, HPU_DEVLINK_ECC_MAX);
	dl->ecc_pending = 0;
	spin_unlock_irq(&dl->lock);

	if (fw)
		devlink_health_report(dl->fw_reporter, snap.reason, &snap);
	while (ecc--)
		devlink_health_report(dl->mem_reporter,
				      "uncorrectable ECC error, HBM page retired",
				      NULL);
}

/**
 * hpu_devlink_fw_snapshot() - record the firmware's state
 * @hdev: the device
 * @reason: what found the failure, a string constant
 * @snap: filled in
 *
 * Called by the reset work before the hard reset that recovers a firmware
 * failure, whose state the reset clears.
 */
void hpu_devlink_fw_snapshot(struct hpu_device *hdev, const char *reason,
			     struct hpu_devlink_fw_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	snap->reason = reason;
	/* Written by the heartbeat work, which may run meanwhile. */
	snap->hb_req = READ_ONCE(hdev->reset->hb_seq);
	snap->heartbeat_losses = atomic64_read(&hdev->reset->stats.heartbeat_losses);
	snap->cpu_status = hpu_rd32(hdev, HPU_REG_CPU_STATUS);
	snap->fw_error = hpu_rd32(hdev, HPU_REG_FW_ERROR);
	snap->hb_ack = hpu_rd32(hdev, HPU_REG_HB_ACK);
	snap->fw_version = hpu_rd32(hdev, HPU_REG_FW_VERSION);
}

/**
 * hpu_devlink_fw_report() - report a firmware failure to the "fw" reporter
 * @hdev: the device
 * @snap: its state at the failure (hpu_devlink_fw_snapshot())
 *
 * Any context; the report itself is made by a work item.
 */
void hpu_devlink_fw_report(struct hpu_device *hdev,
			   const struct hpu_devlink_fw_snapshot *snap)
{
	/* Pairs with smp_store_release() in hpu_devlink_init(). */
	struct hpu_devlink *dl = smp_load_acquire(&hdev->devlink);
	unsigned long flags;

	if (!dl)
		return;
	spin_lock_irqsave(&dl->lock, flags);
	if (dl->ready) {
		dl->fw_snap = *snap;
		dl->fw_pending = true;
		schedule_work(&dl->work);
	}
	spin_unlock_irqrestore(&dl->lock, flags);
}

/**
 * hpu_devlink_ecc_report() - report an uncorrectable ECC error
 * @hdev: the device
 * @addr: HBM offset of the page retired
 *
 * Any context; the report to the "memory" reporter is made by a work item.
 */
void hpu_devlink_ecc_report(struct hpu_device *hdev, u64 addr)
{
	/* Pairs with smp_store_release() in hpu_devlink_init(). */
	struct hpu_devlink *dl = smp_load_acquire(&hdev->devlink);
	unsigned long flags;

	if (!dl)
		return;
	spin_lock_irqsave(&dl->lock, flags);
	if (dl->ready) {
		dl->ecc_last = addr;
		dl->ecc_pending++;
		schedule_work(&dl->work);
	}
	spin_unlock_irqrestore(&dl->lock, flags);
}

/**
 * hpu_devlink_init() - create and register the devlink instance
 * @hdev: the device, probed up to the point where it works (firmware
 *	booted, or found unusable: flash update is the way out of a bad
 *	image)
 *
 * May sleep.
 *
 * Return: 0 or a negative error code.
 */
int hpu_devlink_init(struct hpu_device *hdev)
{
	struct hpu_devlink_priv *priv;
	struct hpu_devlink *dl;
	struct devlink *devlink;
	int ret;

	dl = drmm_kzalloc(&hdev->drm, sizeof(*dl), GFP_KERNEL);
	if (!dl)
		return -ENOMEM;
	dl->hdev = hdev;
	spin_lock_init(&dl->lock);
	INIT_WORK(&dl->work, hpu_devlink_work);

	devlink = devlink_alloc(&hpu_devlink_ops, sizeof(*priv), &hdev->pdev->dev);
	if (!devlink)
		return -ENOMEM;
	priv = devlink_priv(devlink);
	priv->hdev = hdev;
	dl->devlink = devlink;

	dl->fw_reporter = devlink_health_reporter_create(devlink,
							 &hpu_devlink_fw_ops,
							 0, dl);
	if (IS_ERR(dl->fw_reporter)) {
		ret = PTR_ERR(dl->fw_reporter);
		goto err_free;
	}
	dl->mem_reporter = devlink_health_reporter_create(devlink,
							  &hpu_devlink_mem_ops,
							  0, dl);
	if (IS_ERR(dl->mem_reporter)) {
		ret = PTR_ERR(dl->mem_reporter);
		goto err_fw_reporter;
	}

	devlink_register(devlink);
	spin_lock_irq(&dl->lock);
	dl->ready = true;
	spin_unlock_irq(&dl->lock);
	/*
	 * The reset and ECC works may look at hdev->devlink meanwhile: publish
	 * it once initialised (pairs with smp_load_acquire() in the reports).
	 */
	smp_store_release(&hdev->devlink, dl);
	return 0;

err_fw_reporter:
	devlink_health_reporter_destroy(dl->fw_reporter);
err_free:
	devlink_free(devlink);
	drm_err(&hdev->drm, "cannot create the devlink health reporters: %d\n", ret);
	return ret;
}

/**
 * hpu_devlink_fini() - unregister and free the devlink instance
 * @hdev: the device, being removed, after hpu_reset_fini()
 *
 * Reports arriving later are dropped. May sleep.
 */
void hpu_devlink_fini(struct hpu_device *hdev)
{
	struct hpu_devlink *dl = hdev->devlink;

	if (!dl)
		return;
	spin_lock_irq(&dl->lock);
	dl->ready = false;
	spin_unlock_irq(&dl->lock);
	cancel_work_sync(&dl->work);

	devlink_unregister(dl->devlink);
	devlink_health_reporter_destroy(dl->mem_reporter);
	devlink_health_reporter_destroy(dl->fw_reporter);
	devlink_free(dl->devlink);
}
