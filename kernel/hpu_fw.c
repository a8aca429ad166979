// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the device's firmware. The driver loads the signed image file
 * (&hpu_asic.fw_file) once, keeps it in a DMA-coherent buffer, and boots the
 * firmware through the boot ROM's handshake at probe and after every hard
 * reset: the flash image when the flash holds one, else (or when the
 * device refuses the flash image) the image file. It also writes images
 * to the flash (for devlink); the mailbox to the running firmware is in
 * hpu_mbox.c.
 *
 * Lock order: &hpu_fw.lock, then &hpu_mbox.lock, both held across a hard
 * reset and the boot after it (hpu_fw_lock()), so that no mailbox request
 * spans a reset; &struct hpu_fw has what each protects.
 * Documentation/driver/firmware.md has the whole picture.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/firmware.h>
#include <linux/iopoll.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/unaligned.h>

#include <drm/drm_drv.h>
#include <drm/drm_managed.h>

#include "hpu_accel.h"
#include "hpu_asic.h"
#include "hpu_drv.h"
#include "hpu_fw.h"
#include "hpu_fw_image.h"
#include "hpu_mbox.h"
#include "hpu_reg.h"
#include "hpu_reset.h"

/*
 * From include/hw/hpu_fw_image.h (a user-space header): the largest image,
 * trailer included, and where the header keeps fw_version.
 */
#define HPU_FW_IMG_MAX_SIZE		0x100000
#define HPU_FW_IMG_VERSION_OFFSET	8

/* Boot handshake timeouts (Documentation/hw/firmware-and-telemetry.md). */
#define HPU_FW_WAIT_IMAGE_MS		100
#define HPU_FW_VERIFY_MS		200
#define HPU_FW_RUNNING_MS		200
/* A hard reset takes 10 ms of device time; leave room for the emulator. */
#define HPU_FW_HARD_RESET_MS		1000
/* A flash write takes 50 ms (device time). */
#define HPU_FW_FLASH_TIMEOUT_MS		1000
#define HPU_FW_WAIT_IMAGE_US		(HPU_FW_WAIT_IMAGE_MS * USEC_PER_MSEC)
#define HPU_FW_VERIFY_US		(HPU_FW_VERIFY_MS * USEC_PER_MSEC)
#define HPU_FW_RUNNING_US		(HPU_FW_RUNNING_MS * USEC_PER_MSEC)
#define HPU_FW_HARD_RESET_US		(HPU_FW_HARD_RESET_MS * USEC_PER_MSEC)
#define HPU_FW_FLASH_TIMEOUT_US		(HPU_FW_FLASH_TIMEOUT_MS * USEC_PER_MSEC)
#define HPU_FW_POLL_US			50

/**
 * struct hpu_fw - firmware state of one device
 * @lock: serialises the boot and flash sequences (FW_IMG_*, BOOT_CMD,
 *	FLASH_CMD) and the hard reset that precedes a boot. Taken before
 *	&hpu_mbox.lock (hpu_fw_lock()).
 * @flash_buf: DMA buffer of a flash write that timed out while the device
 *	still read it (FLASH_STATUS BUSY), or NULL; freed once the device is
 *	done with it (next flash write, hpu_fw_fini()). Under @lock.
 * @flash_dma: bus address of @flash_buf.
 * @flash_size: bytes allocated for @flash_buf.
 * @img: the image file's content, DMA-coherent, kept for reboots after
 *	hard resets; NULL when the file could not be loaded. Constant after
 *	hpu_fw_init().
 * @img_dma: bus address of @img.
 * @img_size: bytes in @img.
 * @img_err: why the file could not be loaded (negative errno), or 0.
 * @min_version: the anti-rollback fuse FW_MIN_VERSION; constant.
 * @info_lock: protects the fields below.
 * @state: DRM_HPU_FW_STATE_RUNNING, _BOOTING or _FAILED as the driver saw
 *	the last boot end (hpu_fw_state() adds HALTED from CPU_STATUS).
 * @source: DRM_HPU_FW_SOURCE_* of the running image.
 * @boot_error: refusal code of the last failed boot, or 0.
 * @version: fw_version of the running image, 0 when none.
 * @build: build string of the running image, printable, NUL terminated.
 * @boots: successful boots since probe.
 */
struct hpu_fw {
	/* boot and flash sequences; taken before hpu_mbox.lock */
	struct mutex lock;
	void *flash_buf;
	dma_addr_t flash_dma;
	size_t flash_size;
	void *img;
	dma_addr_t img_dma;
	size_t img_size;
	int img_err;
	u32 min_version;
	/* what the readers see */
	spinlock_t info_lock;
	u32 state;
	u32 source;
	u32 boot_error;
	u32 version;
	char build[HPU_FW_BUILD_LEN + 1];
	u32 boots;
};

/* Refusal names, from the shared table (include/hw/hpu_fw_image.h). */
static const char *const hpu_fw_refusal_names[] = { HPU_FW_REFUSAL_NAMES };

/* Refusal codes: what was wrong, what to do. */
static const struct {
	const char *what;
	const char *todo;
} hpu_fw_refusals[] = {
	[HPU_FW_ERR_NONE] = { "accepted", "nothing" },
	[HPU_FW_ERR_BAD_MAGIC] = {
		"not an HPU firmware image (bad magic or shorter than its header)",
		"install an HPU H1 firmware image" },
	[HPU_FW_ERR_BAD_FORMAT] = {
		"unsupported image format (format version, header size, flags or reserved fields)",
		"install an image made for this device" },
	[HPU_FW_ERR_TOO_LARGE] = {
		"image larger than 1 MiB",
		"install a valid image" },
	[HPU_FW_ERR_TRUNCATED] = {
		"image is shorter than its header says",
		"reinstall the complete image" },
	[HPU_FW_ERR_CORRUPT] = {
		"checksum does not match: the image is corrupted",
		"reinstall the image" },
	[HPU_FW_ERR_UNSIGNED] = {
		"image is not signed",
		"install a signed image" },
	[HPU_FW_ERR_NO_KEY] = {
		"no firmware key is fused into the device",
		"this device cannot boot signed firmware; have it provisioned" },
	[HPU_FW_ERR_BAD_SIGNATURE] = {
		"signature does not verify with the device key",
		"install an image signed for this device" },
	[HPU_FW_ERR_TOO_OLD] = {
		"version is below the device's minimum (anti-rollback)",
		"install a newer image" },
	[HPU_FW_ERR_BAD_LAYOUT] = {
		"section table or a required section is invalid",
		"install a valid image" },
	[HPU_FW_ERR_DMA_ERROR] = {
		"the device could not read the image from host memory",
		"check the IOMMU setup and reload the driver" },
	[HPU_FW_ERR_NO_IMAGE] = {
		"no image to boot",
		"install the image file or write an image to the flash with 'devlink dev flash'" },
};

/**
 * hpu_fw_refusal_name() - name of a refusal code
 * @code: BOOT_ERROR or FLASH_ERROR value
 *
 * Return: the code's name as the spec spells it, "UNKNOWN" if it has none.
 */
const char *hpu_fw_refusal_name(u32 code)
{
	return code < ARRAY_SIZE(hpu_fw_refusal_names) &&
	       hpu_fw_refusal_names[code] ? hpu_fw_refusal_names[code] : "UNKNOWN";
}

/**
 * hpu_fw_refusal_what() - what a refusal code says was wrong
 * @code: BOOT_ERROR or FLASH_ERROR value
 *
 * Return: a short explanation for log and error messages.
 */
const char *hpu_fw_refusal_what(u32 code)
{
	return code < ARRAY_SIZE(hpu_fw_refusals) ?
	       hpu_fw_refusals[code].what : "unknown refusal code";
}

/**
 * hpu_fw_refusal_todo() - what to do about a refusal
 * @code: BOOT_ERROR or FLASH_ERROR value
 *
 * Return: the advice for log and error messages.
 */
const char *hpu_fw_refusal_todo(u32 code)
{
	return code < ARRAY_SIZE(hpu_fw_refusals) ?
	       hpu_fw_refusals[code].todo : "install a valid image";
}

/**
 * hpu_fw_version_str() - format a firmware version
 * @version: fw_version ([23:16] major, [15:8] minor, [7:0] patch)
 * @buf: where to write
 * @len: size of @buf, HPU_FW_VERSION_STR_LEN is enough
 *
 * Return: @buf, holding "major.minor.patch", or "none" for 0.
 */
char *hpu_fw_version_str(u32 version, char *buf, size_t len)
{
	if (!version)
		strscpy(buf, "none", len);
	else
		snprintf(buf, len, "%u.%u.%u", (version >> 16) & 0xff,
			 (version >> 8) & 0xff, version & 0xff);
	return buf;
}

/* The chip's image file, the one request_firmware() looks for. */
static const char *hpu_fw_file(struct hpu_device *hdev)
{
	return hdev->asic->fw_file;
}

static void hpu_fw_set_state(struct hpu_fw *fw, u32 state)
{
	spin_lock(&fw->info_lock);
	fw->state = state;
	if (state != DRM_HPU_FW_STATE_RUNNING) {
		fw->source = DRM_HPU_FW_SOURCE_NONE;
		fw->version = 0;
		fw->build[0] = '\0';
	}
	spin_unlock(&fw->info_lock);
}

/* The boot ended with the firmware running: remember what runs. */
static void hpu_fw_set_running(struct hpu_device *hdev, u32 source)
{
	struct hpu_fw *fw = hdev->fw;
	char build[HPU_FW_BUILD_LEN + 1];
	unsigned int i;
	u32 version;

	version = hpu_rd32(hdev, HPU_REG_FW_VERSION);
	for (i = 0; i < HPU_FW_BUILD_LEN / 4; i++)
		put_unaligned_le32(hpu_rd32(hdev, HPU_REG_FW_BUILD(i)),
				   build + 4 * i);
	build[HPU_FW_BUILD_LEN] = '\0';
	/* NUL padded ASCII: keep only printable characters. */
	for (i = 0; i < HPU_FW_BUILD_LEN && build[i]; i++)
		if (build[i] < 0x20 || build[i] > 0x7e)
			build[i] = '?';
	build[i] = '\0';

	spin_lock(&fw->info_lock);
	fw->state = DRM_HPU_FW_STATE_RUNNING;
	fw->source = source;
	fw->boot_error = 0;
	fw->version = version;
	memcpy(fw->build, build, sizeof(fw->build));
	fw->boots++;
	spin_unlock(&fw->info_lock);
}

static void hpu_fw_set_failed(struct hpu_fw *fw, u32 code)
{
	hpu_fw_set_state(fw, DRM_HPU_FW_STATE_FAILED);
	spin_lock(&fw->info_lock);
	fw->boot_error = code;
	spin_unlock(&fw->info_lock);
}

/* Whether the boot ROM takes a BOOT_CMD in this CPU state. */
static bool hpu_fw_rom_waits(u32 cpu)
{
	return cpu == HPU_CPU_WAIT_IMAGE || cpu == HPU_CPU_BOOT_FAILED;
}

/* Wait for the boot ROM to wait for an image (after power-on or a reset). */
static int hpu_fw_wait_rom(struct hpu_device *hdev)
{
	u32 cpu;
	int ret;

	ret = read_poll_timeout(hpu_rd32, cpu, hpu_fw_rom_waits(cpu),
				HPU_FW_POLL_US, HPU_FW_WAIT_IMAGE_US, false,
				hdev, HPU_REG_CPU_STATUS);
	if (ret)
		drm_err(&hdev->drm, "firmware boot failed: the boot ROM did not wait for an image within %u ms (CPU_STATUS %u)\n",
			HPU_FW_WAIT_IMAGE_MS, cpu);
	return ret;
}

/*
 * Progress of a BOOT_CMD: the CPU state, or HPU_CPU_VERIFYING while the
 * state still shows the previous refusal (the command has not been taken
 * yet). IRQ_STATUS.FW_BOOT, cleared before the command, tells a new
 * refusal from the old one; so does having seen VERIFYING (the MISC
 * interrupt handler may ack FW_BOOT along with its own causes).
 */
static u32 hpu_fw_verify_state(struct hpu_device *hdev, bool *seen)
{
	u32 cpu = hpu_rd32(hdev, HPU_REG_CPU_STATUS);

	if (cpu == HPU_CPU_VERIFYING)
		*seen = true;
	if (cpu == HPU_CPU_BOOT_FAILED && !*seen &&
	    !(hpu_rd32(hdev, HPU_REG_IRQ_STATUS) & HPU_IRQ_FW_BOOT))
		return HPU_CPU_VERIFYING;
	return cpu;
}

static bool hpu_fw_verified(u32 cpu)
{
	return cpu == HPU_CPU_BOOT_FAILED || cpu == HPU_CPU_BOOTING ||
	       cpu == HPU_CPU_RUNNING || cpu == HPU_CPU_HALTED;
}

/*
 * One BOOT_CMD and the rest of the handshake. Return 0 with the firmware
 * running; -EACCES when the image was refused (*@code = BOOT_ERROR);
 * -ETIMEDOUT or -EIO (logged here) when the boot did not complete.
 */
static int hpu_fw_boot_cmd(struct hpu_device *hdev, u32 cmd, u32 *code)
{
	struct hpu_fw *fw = hdev->fw;
	bool seen = false;
	u32 cpu;
	int ret;

	*code = 0;
	hpu_wr32(hdev, HPU_REG_IRQ_STATUS, HPU_IRQ_FW_BOOT);
	if (cmd == HPU_BOOT_HOST) {
		hpu_wr32(hdev, HPU_REG_FW_IMG_ADDR_LO, lower_32_bits(fw->img_dma));
		hpu_wr32(hdev, HPU_REG_FW_IMG_ADDR_HI, upper_32_bits(fw->img_dma));
		hpu_wr32(hdev, HPU_REG_FW_IMG_SIZE, fw->img_size);
	}
	hpu_wr32(hdev, HPU_REG_BOOT_CMD, cmd);

	ret = read_poll_timeout(hpu_fw_verify_state, cpu, hpu_fw_verified(cpu),
				HPU_FW_POLL_US, HPU_FW_VERIFY_US, false,
				hdev, &seen);
	/* A refusal is a refusal, even if it showed too late to tell. */
	if (ret && hpu_rd32(hdev, HPU_REG_CPU_STATUS) == HPU_CPU_BOOT_FAILED) {
		cpu = HPU_CPU_BOOT_FAILED;
	} else if (ret) {
		drm_err(&hdev->drm, "firmware boot failed: the image was not verified within %u ms (CPU_STATUS %u)\n",
			HPU_FW_VERIFY_MS, cpu);
		return -ETIMEDOUT;
	}
	if (cpu == HPU_CPU_BOOT_FAILED) {
		*code = hpu_rd32(hdev, HPU_REG_BOOT_ERROR);
		return -EACCES;
	}

	ret = read_poll_timeout(hpu_rd32, cpu,
				cpu == HPU_CPU_RUNNING || cpu == HPU_CPU_HALTED,
				HPU_FW_POLL_US, HPU_FW_RUNNING_US, false,
				hdev, HPU_REG_CPU_STATUS);
	if (ret) {
		drm_err(&hdev->drm, "firmware boot failed: the image was accepted but did not run within %u ms (CPU_STATUS %u)\n",
			HPU_FW_RUNNING_MS, cpu);
		return -ETIMEDOUT;
	}
	if (cpu == HPU_CPU_HALTED) {
		drm_err(&hdev->drm, "firmware boot failed: the firmware halted while starting (FW_ERROR 0x%08x)\n",
			hpu_rd32(hdev, HPU_REG_FW_ERROR));
		return -EIO;
	}
	return 0;
}

/* Log a refusal of the image file: what was wrong, what to do. */
static void hpu_fw_log_file_refusal(struct hpu_device *hdev, u32 code)
{
	struct hpu_fw *fw = hdev->fw;
	char ver[HPU_FW_VERSION_STR_LEN], min[HPU_FW_VERSION_STR_LEN];
	u32 img_version = 0;

	if (fw->img_size >= HPU_FW_IMG_VERSION_OFFSET + 4)
		img_version = get_unaligned_le32(fw->img +
						 HPU_FW_IMG_VERSION_OFFSET);

	if (code == HPU_FW_ERR_TOO_OLD)
		drm_err(&hdev->drm, "firmware image %s refused: version %s is below the device's minimum %s (TOO_OLD); install version %s or newer\n",
			hpu_fw_file(hdev),
			hpu_fw_version_str(img_version, ver, sizeof(ver)),
			hpu_fw_version_str(fw->min_version, min, sizeof(min)),
			min);
	else
		drm_err(&hdev->drm, "firmware image %s refused: %s (%s); %s\n",
			hpu_fw_file(hdev), hpu_fw_refusal_what(code),
			hpu_fw_refusal_name(code), hpu_fw_refusal_todo(code));
}

static void hpu_fw_log_running(struct hpu_device *hdev, ktime_t start)
{
	struct hpu_fw *fw = hdev->fw;
	char ver[HPU_FW_VERSION_STR_LEN];
	char build[HPU_FW_BUILD_LEN + 1];
	u32 version, source;

	spin_lock(&fw->info_lock);
	version = fw->version;
	source = fw->source;
	memcpy(build, fw->build, sizeof(build));
	spin_unlock(&fw->info_lock);

	drm_info(&hdev->drm, "firmware %s (%s) running, booted from %s in %lld ms\n",
		 hpu_fw_version_str(version, ver, sizeof(ver)),
		 build[0] ? build : "no build id",
		 source == DRM_HPU_FW_SOURCE_FLASH ? "the flash" : hpu_fw_file(hdev),
		 ktime_ms_delta(ktime_get(), start));
}

/*
 * The boot policy: the flash image when the flash holds one; the image
 * file when the flash is empty or its image is refused. Caller holds
 * hpu_fw_lock(); the boot ROM waits (or is about to wait) for an image.
 */
static int __hpu_fw_boot(struct hpu_device *hdev)
{
	struct hpu_fw *fw = hdev->fw;
	char ver[HPU_FW_VERSION_STR_LEN];
	ktime_t start = ktime_get();
	u32 flash, code = 0;
	int ret;

	lockdep_assert_held(&fw->lock);
	lockdep_assert_held(&hdev->mbox->lock);

	hpu_fw_set_state(fw, DRM_HPU_FW_STATE_BOOTING);

	ret = hpu_fw_wait_rom(hdev);
	if (ret)
		goto failed;

	flash = hpu_rd32(hdev, HPU_REG_FLASH_VERSION);
	if (flash) {
		ret = hpu_fw_boot_cmd(hdev, HPU_BOOT_FLASH, &code);
		if (!ret) {
			hpu_fw_set_running(hdev, DRM_HPU_FW_SOURCE_FLASH);
			hpu_fw_log_running(hdev, start);
			return 0;
		}
		if (ret != -EACCES)
			goto failed;
		hpu_fw_version_str(flash, ver, sizeof(ver));
		if (fw->img)
			drm_warn(&hdev->drm, "flash firmware image %s refused: %s (%s); %s; booting %s instead\n",
				 ver, hpu_fw_refusal_what(code),
				 hpu_fw_refusal_name(code),
				 hpu_fw_refusal_todo(code), hpu_fw_file(hdev));
		else
			drm_err(&hdev->drm, "flash firmware image %s refused: %s (%s); %s\n",
				ver, hpu_fw_refusal_what(code),
				hpu_fw_refusal_name(code),
				hpu_fw_refusal_todo(code));
	}

	if (!fw->img) {
		if (fw->img_err == -EFBIG) {
			code = HPU_FW_ERR_TOO_LARGE;
			drm_err(&hdev->drm, "firmware image %s refused by the driver: %s (%s); %s\n",
				hpu_fw_file(hdev), hpu_fw_refusal_what(code),
				hpu_fw_refusal_name(code),
				hpu_fw_refusal_todo(code));
		} else if (!flash) {
			code = HPU_FW_ERR_NO_IMAGE;
			drm_err(&hdev->drm, "no firmware: %s cannot be loaded (%d) and the flash is empty (NO_IMAGE); install %s in the firmware search path or write an image to the flash with 'devlink dev flash', then rebind the device\n",
				hpu_fw_file(hdev), fw->img_err, hpu_fw_file(hdev));
		} else {
			drm_err(&hdev->drm, "no firmware to fall back to: %s cannot be loaded (%d); install it and rebind the device\n",
				hpu_fw_file(hdev), fw->img_err);
		}
		ret = -ENOENT;
		goto failed;
	}

	ret = hpu_fw_boot_cmd(hdev, HPU_BOOT_HOST, &code);
	if (!ret) {
		hpu_fw_set_running(hdev, DRM_HPU_FW_SOURCE_HOST);
		hpu_fw_log_running(hdev, start);
		return 0;
	}
	if (ret == -EACCES)
		hpu_fw_log_file_refusal(hdev, code);

failed:
	hpu_fw_set_failed(fw, code);
	return ret;
}

/**
 * hpu_fw_lock() - take the firmware locks for a hard reset and boot
 * @hdev: the device
 *
 * Keeps flash writes and other boots out between the HARD_RESET write and
 * hpu_fw_boot_locked(), and mailbox requests too: a request waits for the
 * reset and boot to end, then finds the firmware running or not, so that
 * none is sent to one firmware and answered (or not) by the next. Takes
 * &hpu_fw.lock, then &hpu_mbox.lock. May sleep.
 */
void hpu_fw_lock(struct hpu_device *hdev)
{
	struct hpu_fw *fw = hdev->fw;

	mutex_lock(&fw->lock);
	hpu_mbox_lock(hdev);
	hpu_fw_set_state(fw, DRM_HPU_FW_STATE_BOOTING);
}

/**
 * hpu_fw_unlock() - release the firmware locks taken by hpu_fw_lock()
 * @hdev: the device
 *
 * A boot that did not happen (the hard reset itself failed) counts as a
 * failed one.
 */
void hpu_fw_unlock(struct hpu_device *hdev)
{
	struct hpu_fw *fw = hdev->fw;

	spin_lock(&fw->info_lock);
	if (fw->state == DRM_HPU_FW_STATE_BOOTING)
		fw->state = DRM_HPU_FW_STATE_FAILED;
	spin_unlock(&fw->info_lock);
	hpu_mbox_unlock(hdev);
	mutex_unlock(&fw->lock);
}

/**
 * hpu_fw_boot_locked() - boot the firmware after a hard reset
 * @hdev: the device; the caller holds hpu_fw_lock() and the hard reset is
 *	complete (STATUS READY)
 *
 * Boots the flash image, or the image file kept since probe. Every
 * failure is logged with what to do. May sleep.
 *
 * Return: 0 with the firmware running; -EACCES (refused), -ENOENT (no
 * image), -ETIMEDOUT or -EIO otherwise.
 */
int hpu_fw_boot_locked(struct hpu_device *hdev)
{
	lockdep_assert_held(&hdev->fw->lock);
	lockdep_assert_held(&hdev->mbox->lock);
	return __hpu_fw_boot(hdev);
}

/*
 * At probe the firmware may still run from an earlier binding (driver
 * reload, rebind): hard reset the device so that the boot ROM boots the
 * image of this binding.
 */
static int hpu_fw_to_rom(struct hpu_device *hdev)
{
	u32 cpu = hpu_rd32(hdev, HPU_REG_CPU_STATUS);
	u32 status;
	int ret;

	if (cpu == HPU_CPU_ROM_INIT || hpu_fw_rom_waits(cpu))
		return 0;

	drm_dbg_driver(&hdev->drm, "CPU_STATUS %u at probe: hard reset, then boot\n",
		       cpu);
	if (cpu != HPU_CPU_OFF)
		hpu_wr32(hdev, HPU_REG_HARD_RESET, HPU_HARD_RESET_KEY);
	/* CPU_STATUS leaves RUNNING when the reset starts (OFF), then ROM_INIT. */
	ret = read_poll_timeout(hpu_rd32, cpu,
				cpu == HPU_CPU_ROM_INIT || hpu_fw_rom_waits(cpu),
				HPU_FW_POLL_US, HPU_FW_HARD_RESET_US, false,
				hdev, HPU_REG_CPU_STATUS);
	if (!ret)
		ret = hpu_poll32(hdev, HPU_REG_STATUS, status,
				 (status & (HPU_STATUS_READY |
					    HPU_STATUS_HARD_RESET_BUSY)) ==
				 HPU_STATUS_READY, HPU_FW_HARD_RESET_US);
	if (ret)
		drm_err(&hdev->drm, "firmware boot failed: the hard reset before it did not complete (CPU_STATUS %u, STATUS 0x%08x)\n",
			hpu_rd32(hdev, HPU_REG_CPU_STATUS),
			hpu_rd32(hdev, HPU_REG_STATUS));
	return ret;
}

/**
 * hpu_fw_boot() - boot the firmware at probe
 * @hdev: the device, after hpu_fw_init() and hpu_reset_init(), before its
 *	interrupts are enabled
 *
 * Hard resets the device first if the firmware already runs, then boots
 * the flash image or the image file (hpu_fw_boot_locked()). On failure
 * the device is marked unusable (hpu_reset_set_unusable()): the caller
 * keeps it bound (sysfs and devlink work) but user space cannot use it.
 * May sleep.
 *
 * Return: 0 with the firmware running, or the failure.
 */
int hpu_fw_boot(struct hpu_device *hdev)
{
	struct hpu_fw *fw = hdev->fw;
	int ret;

	hpu_fw_lock(hdev);
	ret = hpu_fw_to_rom(hdev);
	if (ret)
		hpu_fw_set_failed(fw, 0);
	else
		ret = __hpu_fw_boot(hdev);
	/* The boot leaves its mark in IRQ_STATUS; nothing waits for it. */
	hpu_wr32(hdev, HPU_REG_IRQ_STATUS, HPU_IRQ_FW_BOOT);
	hpu_fw_unlock(hdev);

	if (ret) {
		hpu_reset_set_unusable(hdev);
		drm_err(&hdev->drm, "no firmware running: the device is unusable until it is rebound with a valid image (sysfs and devlink stay available)\n");
	}
	return ret;
}

/**
 * hpu_fw_state() - the firmware's state
 * @hdev: the device, bound
 *
 * Return: DRM_HPU_FW_STATE_FAILED if the last boot failed,
 * DRM_HPU_FW_STATE_BOOTING while a boot (or the hard reset before it) is
 * in progress, DRM_HPU_FW_STATE_HALTED after a fatal firmware error (until
 * the hard reset that follows), else DRM_HPU_FW_STATE_RUNNING.
 */
static u32 hpu_fw_state(struct hpu_device *hdev)
{
	struct hpu_fw *fw = hdev->fw;
	u32 state, cpu;

	spin_lock(&fw->info_lock);
	state = fw->state;
	spin_unlock(&fw->info_lock);
	if (state != DRM_HPU_FW_STATE_RUNNING)
		return state;

	cpu = hpu_rd32(hdev, HPU_REG_CPU_STATUS);
	if (cpu == HPU_CPU_RUNNING)
		return DRM_HPU_FW_STATE_RUNNING;
	if (cpu == HPU_CPU_HALTED)
		return DRM_HPU_FW_STATE_HALTED;
	if (cpu == U32_MAX)
		return DRM_HPU_FW_STATE_FAILED;
	return DRM_HPU_FW_STATE_BOOTING;
}

/**
 * hpu_fw_running() - whether the firmware runs
 * @hdev: the device, bound
 *
 * Return: true if the last boot succeeded and CPU_STATUS is RUNNING.
 */
bool hpu_fw_running(struct hpu_device *hdev)
{
	return hdev->fw && hpu_fw_state(hdev) == DRM_HPU_FW_STATE_RUNNING;
}

/*
 * Free the buffer of a flash write that timed out, once the device no
 * longer reads it: FLASH_STATUS has left BUSY (DONE, FAILED, or the write
 * was abandoned by a reset). Caller holds &hpu_fw.lock, so no hard reset
 * is in progress (during one FLASH_STATUS reads its reset value, IDLE).
 * Return: true when no buffer is parked any more.
 */
static bool hpu_fw_flash_reap(struct hpu_device *hdev)
{
	struct hpu_fw *fw = hdev->fw;

	lockdep_assert_held(&fw->lock);
	if (!fw->flash_buf)
		return true;
	if (hpu_rd32(hdev, HPU_REG_FLASH_STATUS) == HPU_FLASH_BUSY)
		return false;
	dma_free_coherent(&hdev->pdev->dev, fw->flash_size, fw->flash_buf,
			  fw->flash_dma);
	fw->flash_buf = NULL;
	return true;
}

/*
 * Progress of a FLASH_CMD: FLASH_STATUS, or HPU_FLASH_BUSY while it still
 * shows the outcome of the previous write (the command has not been taken
 * yet). Having seen BUSY, or IRQ_STATUS.FLASH_DONE (cleared before the
 * command; the MISC interrupt handler leaves it alone), tells the outcome
 * of this write from the previous one.
 */
static u32 hpu_fw_flash_state(struct hpu_device *hdev, bool *seen)
{
	u32 status = hpu_rd32(hdev, HPU_REG_FLASH_STATUS);

	if (status == HPU_FLASH_BUSY)
		*seen = true;
	else if (!*seen &&
		 !(hpu_rd32(hdev, HPU_REG_IRQ_STATUS) & HPU_IRQ_FLASH_DONE))
		return HPU_FLASH_BUSY;
	return status;
}

/**
 * hpu_fw_flash() - write an image to the device's flash
 * @hdev: the device, bound
 * @data: the image
 * @size: its length in bytes
 * @refusal: FLASH_ERROR when the device refused the image, else 0
 *
 * The device verifies the image as for a boot and stores it only if it
 * is accepted; the running firmware does not change until the next boot.
 * Works whatever the firmware's state, also on an unusable device (the
 * way out of a missing or bad image file). May sleep (about 50 ms of
 * device time).
 *
 * FLASH_STATUS leaving BUSY gives the outcome. A write that does not end
 * within 1 s fails with -ETIMEDOUT; its buffer is kept while the device may
 * still read it, and freed by the next call or by hpu_fw_fini().
 *
 * Return: 0; -EACCES when refused; -EFBIG when larger than 1 MiB (checked
 * by the driver, *@refusal = TOO_LARGE); -ETIMEDOUT; -EBUSY when an earlier
 * write that timed out is still in progress; -ENOMEM; -EIO when the device
 * is off (in a hard reset) or gone.
 */
int hpu_fw_flash(struct hpu_device *hdev, const u8 *data, size_t size,
		 u32 *refusal)
{
	struct device *dev = &hdev->pdev->dev;
	size_t alloc = max_t(size_t, size, 1);
	struct hpu_fw *fw = hdev->fw;
	char ver[HPU_FW_VERSION_STR_LEN];
	bool seen = false;
	dma_addr_t dma;
	u32 status;
	void *buf;
	int ret;

	*refusal = 0;
	if (size > HPU_FW_IMG_MAX_SIZE) {
		*refusal = HPU_FW_ERR_TOO_LARGE;
		return -EFBIG;
	}

	buf = dma_alloc_coherent(dev, alloc, &dma, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, data, size);

	mutex_lock(&fw->lock);
	status = hpu_rd32(hdev, HPU_REG_CPU_STATUS);
	if (status == HPU_CPU_OFF || status == U32_MAX) {
		ret = -EIO;
		goto out;
	}
	/* A write still in progress: one of ours that timed out. */
	ret = hpu_poll32(hdev, HPU_REG_FLASH_STATUS, status,
			 status != HPU_FLASH_BUSY, HPU_FW_FLASH_TIMEOUT_US);
	if (ret) {
		ret = -EBUSY;
		goto out;
	}
	hpu_fw_flash_reap(hdev);

	hpu_wr32(hdev, HPU_REG_IRQ_STATUS, HPU_IRQ_FLASH_DONE);
	hpu_wr32(hdev, HPU_REG_FW_IMG_ADDR_LO, lower_32_bits(dma));
	hpu_wr32(hdev, HPU_REG_FW_IMG_ADDR_HI, upper_32_bits(dma));
	hpu_wr32(hdev, HPU_REG_FW_IMG_SIZE, size);
	hpu_wr32(hdev, HPU_REG_FLASH_CMD, HPU_FLASH_WRITE);

	/* FLASH_STATUS leaving BUSY is the outcome (hpu_fw_flash_state()). */
	ret = read_poll_timeout(hpu_fw_flash_state, status,
				status != HPU_FLASH_BUSY, HPU_FW_POLL_US,
				HPU_FW_FLASH_TIMEOUT_US, false, hdev, &seen);
	/* An outcome that showed too late to tell is taken as this one's. */
	if (ret)
		status = hpu_rd32(hdev, HPU_REG_FLASH_STATUS);
	hpu_wr32(hdev, HPU_REG_IRQ_STATUS, HPU_IRQ_FLASH_DONE);

	if (status == HPU_FLASH_DONE) {
		ret = 0;
		drm_info(&hdev->drm, "flash now holds firmware %s; it runs after the next hard reset or rebind\n",
			 hpu_fw_version_str(hpu_rd32(hdev, HPU_REG_FLASH_VERSION),
					    ver, sizeof(ver)));
	} else if (status == HPU_FLASH_FAILED) {
		*refusal = hpu_rd32(hdev, HPU_REG_FLASH_ERROR);
		ret = -EACCES;
	} else {
		ret = -ETIMEDOUT;
		if (status == HPU_FLASH_BUSY) {
			/*
			 * The device may still read the image: keep the
			 * buffer until it is done (hpu_fw_flash_reap()).
			 */
			fw->flash_buf = buf;
			fw->flash_dma = dma;
			fw->flash_size = alloc;
			buf = NULL;
		}
	}
out:
	mutex_unlock(&fw->lock);
	if (buf)
		dma_free_coherent(dev, alloc, buf, dma);
	return ret;
}

/**
 * hpu_fw_info() - the firmware part of DRM_HPU_INFO
 * @hdev: the device, bound (an ioctl inside drm_dev_enter(), a devlink or
 *	sysfs callback)
 * @out: the answer, zeroed by the caller
 */
void hpu_fw_info(struct hpu_device *hdev, struct drm_hpu_info_firmware *out)
{
	struct hpu_fw *fw = hdev->fw;

	out->state = hpu_fw_state(hdev);
	out->stored_version = hpu_rd32(hdev, HPU_REG_FLASH_VERSION);
	out->min_version = fw->min_version;

	spin_lock(&fw->info_lock);
	out->running_version = fw->version;
	out->boot_source = fw->source;
	out->boot_error = fw->boot_error;
	/* 31 characters at most: the answer's string is NUL terminated. */
	strscpy(out->running_build, fw->build, sizeof(out->running_build));
	out->boots = fw->boots;
	spin_unlock(&fw->info_lock);
}

/*
 * Load the image file into a DMA-coherent buffer, kept until the device
 * is unbound (devres). A missing file is no error yet: the flash may hold
 * an image; __hpu_fw_boot() reports it when it matters.
 */
static void hpu_fw_load_file(struct hpu_device *hdev)
{
	struct device *dev = &hdev->pdev->dev;
	struct hpu_fw *fw = hdev->fw;
	const struct firmware *file;
	int ret;

	ret = firmware_request_nowarn(&file, hpu_fw_file(hdev), dev);
	if (ret) {
		fw->img_err = ret;
		drm_dbg_driver(&hdev->drm, "%s not loaded: %d\n",
			       hpu_fw_file(hdev), ret);
		return;
	}

	if (file->size > HPU_FW_IMG_MAX_SIZE) {
		fw->img_err = -EFBIG;
		goto out;
	}

	fw->img_size = file->size;
	/* The device reads FW_IMG_SIZE bytes: an empty file still gets a page. */
	fw->img = dmam_alloc_coherent(dev, max_t(size_t, file->size, 1),
				      &fw->img_dma, GFP_KERNEL);
	if (!fw->img) {
		fw->img_err = -ENOMEM;
		goto out;
	}
	memcpy(fw->img, file->data, file->size);
out:
	release_firmware(file);
}

/**
 * hpu_fw_init() - set up the firmware state and load the image file
 * @hdev: the device, identity read, bus mastering on
 *
 * The image file (&hpu_asic.fw_file) is requested once and kept in host memory
 * for the boots after hard resets; a missing file is only an error if the
 * flash cannot boot either (hpu_fw_boot()). May sleep.
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_fw_init(struct hpu_device *hdev)
{
	struct hpu_fw *fw;
	int ret;

	fw = drmm_kzalloc(&hdev->drm, sizeof(*fw), GFP_KERNEL);
	if (!fw)
		return -ENOMEM;

	ret = drmm_mutex_init(&hdev->drm, &fw->lock);
	if (ret)
		return ret;
	ret = hpu_mbox_init(hdev);
	if (ret)
		return ret;
	spin_lock_init(&fw->info_lock);
	fw->state = DRM_HPU_FW_STATE_BOOTING;
	fw->min_version = hpu_rd32(hdev, HPU_REG_FW_MIN_VERSION);
	hdev->fw = fw;

	hpu_fw_load_file(hdev);
	if (fw->img_err == -ENOMEM)
		return -ENOMEM;
	return 0;
}

/**
 * hpu_fw_fini() - stop using the firmware before the device is unbound
 * @hdev: the device, after hpu_devlink_fini() (no flash write starts any
 *	more)
 *
 * Waits for a boot or flash write in progress, and frees the buffer of a
 * flash write that timed out once the device is done with it (it is left
 * allocated, with a warning, if the device still reads it after another
 * second: better a leak than a DMA into freed memory). The image buffer
 * and the state go with the device (devres, DRM managed). May sleep.
 */
void hpu_fw_fini(struct hpu_device *hdev)
{
	struct hpu_fw *fw = hdev->fw;
	u32 status;

	if (!fw)
		return;
	mutex_lock(&fw->lock);
	if (!hpu_fw_flash_reap(hdev)) {
		/* Give the write the time it may still take; then look again. */
		if (hpu_poll32(hdev, HPU_REG_FLASH_STATUS, status,
			       status != HPU_FLASH_BUSY, HPU_FW_FLASH_TIMEOUT_US) ||
		    !hpu_fw_flash_reap(hdev))
			drm_warn(&hdev->drm, "flash write still in progress at unbind: its %zu byte buffer is not freed\n",
				 fw->flash_size);
	}
	mutex_unlock(&fw->lock);
}

/* sysfs */

static struct hpu_device *hpu_fw_dev_to_hpu(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t fw_version_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct hpu_fw *fw = hpu_fw_dev_to_hpu(dev)->fw;
	char ver[HPU_FW_VERSION_STR_LEN];
	u32 version;

	spin_lock(&fw->info_lock);
	version = fw->version;
	spin_unlock(&fw->info_lock);
	return sysfs_emit(buf, "%s\n",
			  hpu_fw_version_str(version, ver, sizeof(ver)));
}
static DEVICE_ATTR_RO(fw_version);

static ssize_t fw_stored_version_show(struct device *dev,
				      struct device_attribute *attr, char *buf)
{
	struct hpu_device *hdev = hpu_fw_dev_to_hpu(dev);
	char ver[HPU_FW_VERSION_STR_LEN];

	return sysfs_emit(buf, "%s\n",
			  hpu_fw_version_str(hpu_rd32(hdev, HPU_REG_FLASH_VERSION),
					     ver, sizeof(ver)));
}
static DEVICE_ATTR_RO(fw_stored_version);

static ssize_t fw_min_version_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct hpu_fw *fw = hpu_fw_dev_to_hpu(dev)->fw;
	char ver[HPU_FW_VERSION_STR_LEN];

	return sysfs_emit(buf, "%s\n",
			  hpu_fw_version_str(fw->min_version, ver, sizeof(ver)));
}
static DEVICE_ATTR_RO(fw_min_version);

static const char * const hpu_fw_state_names[] = {
	[DRM_HPU_FW_STATE_RUNNING] = "running",
	[DRM_HPU_FW_STATE_BOOTING] = "booting",
	[DRM_HPU_FW_STATE_FAILED] = "failed",
	[DRM_HPU_FW_STATE_HALTED] = "halted",
};

static ssize_t fw_status_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	u32 state = hpu_fw_state(hpu_fw_dev_to_hpu(dev));

	return sysfs_emit(buf, "%s\n", state < ARRAY_SIZE(hpu_fw_state_names) ?
			  hpu_fw_state_names[state] : "unknown");
}
static DEVICE_ATTR_RO(fw_status);

static ssize_t fw_boot_error_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct hpu_fw *fw = hpu_fw_dev_to_hpu(dev)->fw;
	u32 code;

	spin_lock(&fw->info_lock);
	code = fw->boot_error;
	spin_unlock(&fw->info_lock);
	return sysfs_emit(buf, "%s\n",
			  code ? hpu_fw_refusal_name(code) : "none");
}
static DEVICE_ATTR_RO(fw_boot_error);

static ssize_t fw_build_show(struct device *dev,
			     struct device_attribute *attr, char *buf)
{
	struct hpu_fw *fw = hpu_fw_dev_to_hpu(dev)->fw;
	char build[HPU_FW_BUILD_LEN + 1];

	spin_lock(&fw->info_lock);
	memcpy(build, fw->build, sizeof(build));
	spin_unlock(&fw->info_lock);
	return sysfs_emit(buf, "%s\n", build);
}
static DEVICE_ATTR_RO(fw_build);

static struct attribute *hpu_fw_attrs[] = {
	&dev_attr_fw_version.attr,
	&dev_attr_fw_stored_version.attr,
	&dev_attr_fw_min_version.attr,
	&dev_attr_fw_status.attr,
	&dev_attr_fw_boot_error.attr,
	&dev_attr_fw_build.attr,
	NULL
};

/* Firmware attributes, in the PCI device's directory (hpu_sysfs.c). */
const struct attribute_group hpu_fw_group = {
	.attrs = hpu_fw_attrs,
};
