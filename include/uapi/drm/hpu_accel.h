/* SPDX-License-Identifier: MIT */
/*
 * hpu_accel.h - ioctl ABI of the hpu DRM accel driver (/dev/accel/accelN).
 *
 * Rules (Documentation/process/botching-up-ioctls.rst): every structure is
 * padded explicitly to a multiple of 64 bits, pointers travel as __u64,
 * every flags, pad and reserved field must be zero (the kernel rejects
 * anything else with -EINVAL), and structures only ever grow at the end.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef _UAPI_DRM_HPU_ACCEL_H_
#define _UAPI_DRM_HPU_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_HPU_INFO			0x00

#define DRM_IOCTL_HPU_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_HPU_INFO, struct drm_hpu_info)

/**
 * enum drm_hpu_info_op - what &struct drm_hpu_info asks for
 * @DRM_HPU_INFO_DEVICE: identity of the device, &struct drm_hpu_info_device.
 */
enum drm_hpu_info_op {
	DRM_HPU_INFO_DEVICE = 0,
};

/**
 * struct drm_hpu_info - query information about the device
 *
 * The kernel writes the answer for @op to the buffer at @ptr. It copies at
 * most @size bytes of its answer (a shorter buffer gets a prefix: answers
 * only grow at the end) and sets @size to the full size of its answer. A
 * call with @size 0 copies nothing and only reports the size.
 */
struct drm_hpu_info {
	/** @op: In: an &enum drm_hpu_info_op value. */
	__u32 op;
	/** @flags: In: must be zero. */
	__u32 flags;
	/** @ptr: In: user pointer to the answer buffer. */
	__u64 ptr;
	/** @size: In: size of the buffer at @ptr. Out: size of the answer. */
	__u32 size;
	/** @pad: In: must be zero. */
	__u32 pad;
};

/** DRM_HPU_CHIP_H1: &drm_hpu_info_device.chip_id of the first chip. */
#define DRM_HPU_CHIP_H1			1

/**
 * struct drm_hpu_info_device - answer to %DRM_HPU_INFO_DEVICE
 *
 * All fields are Out.
 */
struct drm_hpu_info_device {
	/** @chip_id: chip identifier, DRM_HPU_CHIP_*. */
	__u32 chip_id;
	/** @revision: silicon revision, [15:8] major and [7:0] minor. */
	__u32 revision;
	/** @hbm_size: device memory (HBM) in bytes. */
	__u64 hbm_size;
	/** @pci_domain: PCI domain (segment) of the device. */
	__u32 pci_domain;
	/** @pci_bus: PCI bus number. */
	__u8 pci_bus;
	/** @pci_dev: PCI device (slot) number. */
	__u8 pci_dev;
	/** @pci_func: PCI function number. */
	__u8 pci_func;
	/** @hbm_stacks: number of HBM stacks. */
	__u8 hbm_stacks;
	/** @num_dma: number of DMA (copy) engines. */
	__u8 num_dma;
	/** @num_tpc: number of tensor processor cores. */
	__u8 num_tpc;
	/** @num_mme: number of matrix math engines. */
	__u8 num_mme;
	/** @num_nic: number of NIC ports. */
	__u8 num_nic;
	/** @spec_version: version of the hardware register map. */
	__u32 spec_version;
	/** @serial: board serial number, NUL terminated. */
	char serial[24];
	/** @uuid: device UUID (RFC 4122 byte order). */
	__u8 uuid[16];
	/** @driver_major: driver version, major part. */
	__u16 driver_major;
	/** @driver_minor: driver version, minor part. */
	__u16 driver_minor;
	/** @driver_patch: driver version, patch level. */
	__u16 driver_patch;
	/** @pad: zero. */
	__u16 pad;
	/** @msix_vectors: MSI-X vectors the device offers. */
	__u32 msix_vectors;
	/** @reset_count: soft resets the device has completed. */
	__u32 reset_count;
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_DRM_HPU_ACCEL_H_ */
