/* SPDX-License-Identifier: MIT */
/*
 * hpu.h - the stable C ABI of libhpu, the user-space library of the hpu
 * deep-learning accelerator stack.
 *
 * Conventions:
 *  - Every function that can fail returns 0 (or a non-negative count) on
 *    success and a negative errno value on failure; hpu_strerror() turns it
 *    into text. No function sets or relies on errno.
 *  - Handles are opaque. A handle is not thread-safe unless a function says
 *    so; distinct handles may be used from distinct threads.
 *  - Structures the caller passes in start with a `size` member that the
 *    caller sets to sizeof() of the structure it was compiled with, so the
 *    library can grow them at the end without breaking old callers.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_HPU_H
#define HPU_HPU_H

/* A C header: the C++-only advice of clang-tidy does not apply. */
/* NOLINTBEGIN(modernize-deprecated-headers,modernize-use-using) */
#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

#if defined(HPU_BUILDING_LIBRARY)
#define HPU_EXPORT __attribute__((visibility("default")))
#else
#define HPU_EXPORT
#endif

/* Version of the API described by this header. */
#define HPU_API_VERSION_MAJOR 1
#define HPU_API_VERSION_MINOR 0
#define HPU_API_VERSION_PATCH 0
/* Packs a version as 0x00MMmmpp, comparable with < and >. */
#define HPU_MAKE_VERSION(major, minor, patch) \
	((((uint32_t)(major)) << 16) | (((uint32_t)(minor)) << 8) | ((uint32_t)(patch)))
#define HPU_API_VERSION \
	HPU_MAKE_VERSION(HPU_API_VERSION_MAJOR, HPU_API_VERSION_MINOR, HPU_API_VERSION_PATCH)
#define HPU_VERSION_MAJOR(v) (((uint32_t)(v) >> 16) & 0xffu)
#define HPU_VERSION_MINOR(v) (((uint32_t)(v) >> 8) & 0xffu)
#define HPU_VERSION_PATCH(v) ((uint32_t)(v) & 0xffu)

/* Room for a PCI address "dddd:bb:dd.f" (domains may be wider) and NUL. */
#define HPU_PCI_ADDR_MAX 32
/* Room for a device node path such as "/dev/accel/accel0" and NUL. */
#define HPU_NODE_MAX 64
/* Board serial number, NUL terminated. */
#define HPU_SERIAL_MAX 32
/* Chip name such as "H1", NUL terminated. */
#define HPU_NAME_MAX 16
/* Raw UUID bytes (RFC 4122 order). */
#define HPU_UUID_SIZE 16

/* Chip identifiers reported in hpu_device_info.chip_id. */
#define HPU_CHIP_H1 1

/** An open HPU (owns a file descriptor on /dev/accel/accelN). */
typedef struct hpu_device hpu_device_t;
/** A snapshot of the HPUs present when hpu_device_list_get() ran. */
typedef struct hpu_device_list hpu_device_list_t;

/**
 * struct hpu_device_desc - one discovered HPU, owned by its list.
 * @index: N of /dev/accel/accelN; stable while the driver stays loaded.
 * @pci_addr: PCI address, "dddd:bb:dd.f" (lower case).
 * @node: device node, "/dev/accel/accelN".
 *
 * Read-only for callers; new members are only ever added at the end.
 */
struct hpu_device_desc {
	unsigned int index;
	char pci_addr[HPU_PCI_ADDR_MAX];
	char node[HPU_NODE_MAX];
};

/**
 * struct hpu_device_info - identity of an open HPU.
 *
 * The caller sets @size to sizeof(struct hpu_device_info); the library
 * writes no byte at or beyond @size, and on return sets @size to the number
 * of bytes it filled (the smaller of the caller's and its own size).
 */
struct hpu_device_info {
	uint32_t size;              /* In/Out, see above */
	uint32_t chip_id;           /* HPU_CHIP_* */
	uint32_t revision;          /* [15:8] major, [7:0] minor */
	uint32_t spec_version;      /* hardware register map version */
	uint64_t hbm_size;          /* device memory in bytes */
	uint32_t index;             /* N of /dev/accel/accelN */
	uint32_t pci_domain;
	uint8_t pci_bus;
	uint8_t pci_dev;
	uint8_t pci_func;
	uint8_t hbm_stacks;
	uint8_t num_dma;            /* DMA (copy) engines */
	uint8_t num_tpc;            /* tensor processor cores */
	uint8_t num_mme;            /* matrix math engines */
	uint8_t num_nic;            /* NIC ports */
	uint16_t driver_major;      /* kernel driver version */
	uint16_t driver_minor;
	uint16_t driver_patch;
	uint16_t reserved0;         /* zero */
	uint32_t msix_vectors;
	uint32_t reset_count;       /* soft resets completed */
	char serial[HPU_SERIAL_MAX];
	uint8_t uuid[HPU_UUID_SIZE];
	char name[HPU_NAME_MAX];    /* chip name, "H1", or "unknown" */
	char pci_addr[HPU_PCI_ADDR_MAX];
};

/** Version of the library at run time, packed as HPU_MAKE_VERSION(). */
HPU_EXPORT uint32_t hpu_get_version(void);

/**
 * hpu_strerror() - describe an error code returned by this library.
 * @err: a negative errno value (a positive one is accepted too).
 *
 * Returns a static string; never NULL. Thread-safe.
 */
HPU_EXPORT const char *hpu_strerror(int err);

/**
 * hpu_device_count() - number of HPUs present.
 *
 * Returns the count (0 when none, including when no accel device exists at
 * all) or a negative errno value.
 */
HPU_EXPORT int hpu_device_count(void);

/**
 * hpu_device_list_get() - discover the HPUs, ordered by index.
 * @out: receives the list; free it with hpu_device_list_free().
 *
 * Only devices bound to the hpu driver (or with PCI id 1234:4850) count:
 * other accel devices are skipped.
 */
HPU_EXPORT int hpu_device_list_get(hpu_device_list_t **out);
/** hpu_device_list_free() - free a list; NULL is a no-op. */
HPU_EXPORT void hpu_device_list_free(hpu_device_list_t *list);
/** hpu_device_list_size() - number of entries (0 for NULL). */
HPU_EXPORT size_t hpu_device_list_size(const hpu_device_list_t *list);
/**
 * hpu_device_list_at() - entry @i of @list, valid until the list is freed.
 * Returns NULL when @list is NULL or @i is out of range.
 */
HPU_EXPORT const struct hpu_device_desc *hpu_device_list_at(const hpu_device_list_t *list,
							     size_t i);

/**
 * hpu_open_by_index() - open /dev/accel/accel@index.
 * @out: receives the handle; close it with hpu_close().
 *
 * Returns -ENODEV when no HPU has that index (including a non-hpu accel
 * device), or the error of open(2) (e.g. -EACCES).
 */
HPU_EXPORT int hpu_open_by_index(unsigned int index, hpu_device_t **out);

/**
 * hpu_open_by_pci() - open the HPU at a PCI address.
 * @bdf: "dddd:bb:dd.f" or "bb:dd.f" (domain 0), hex digits in any case.
 *
 * Returns -EINVAL for a malformed address, -ENODEV when no HPU is there.
 */
HPU_EXPORT int hpu_open_by_pci(const char *bdf, hpu_device_t **out);

/**
 * hpu_close() - close a device handle and free it; NULL is a no-op.
 * Returns 0 or the error close(2) reported; the handle is freed either way.
 */
HPU_EXPORT int hpu_close(hpu_device_t *dev);

/** hpu_device_get_info() - query the identity of @dev (INFO ioctl). */
HPU_EXPORT int hpu_device_get_info(hpu_device_t *dev, struct hpu_device_info *out);

/**
 * hpu_device_get_fd() - the DRM file descriptor of @dev, owned by the
 * handle (for use with libdrm, e.g. syncobjs). Returns -EINVAL for NULL.
 */
HPU_EXPORT int hpu_device_get_fd(const hpu_device_t *dev);

/**
 * hpu_driver_loaded() - whether the hpu kernel module is loaded.
 * Returns 1 when loaded, 0 when not, or a negative errno value.
 */
HPU_EXPORT int hpu_driver_loaded(void);

#if defined(__cplusplus)
}
#endif

/* NOLINTEND(modernize-deprecated-headers,modernize-use-using) */

#endif /* HPU_HPU_H */
