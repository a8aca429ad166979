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
#define HPU_API_VERSION_MINOR 11
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
/** A buffer mapped into the device's address space (since 1.1). */
typedef struct hpu_buffer hpu_buffer_t;
/** A queue (stream) on one engine (since 1.1). */
typedef struct hpu_queue hpu_queue_t;
/** A recorded list of commands, submitted any number of times (since 1.1). */
typedef struct hpu_cmdlist hpu_cmdlist_t;
/** The completion of a submitted job, a DRM syncobj (since 1.1). */
typedef struct hpu_fence hpu_fence_t;
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

/** Entries of hpu_device_info.class_engines: room for every HPU_ENGINE_* class (since 1.4). */
#define HPU_MAX_ENGINE_CLASSES 8

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
	/* Since 1.4: */
	uint8_t class_engines[HPU_MAX_ENGINE_CLASSES]; /* queue engines per HPU_ENGINE_* class (hpu_device_engines()) */
	/* Since 1.9: */
	uint64_t caps;              /* HPU_DEVICE_CAP_* (0 from a driver without them) */
};

/** hpu_device_info.caps: device memory maps into processes (hpu_buffer_map()). */
#define HPU_DEVICE_CAP_HBM_MMAP (1ULL << 0)

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
 * Returns 0 or the error close(2) reported; the handle is freed either way,
 * except when called from the device's own event callback (since 1.2):
 * then it returns -EDEADLK and does nothing. Stops the callback thread.
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

/*
 * ---- Since 1.1: device memory, queues, command lists and fences ----
 *
 * Every object below belongs to the device it was created on and must be
 * destroyed before that device is closed. Objects are not thread-safe,
 * except fences: any thread may wait for or query a fence while another
 * does the same (destroying it must not race with either). The queries
 * are hpu_fence_status(), hpu_fence_export_fd() and
 * hpu_fence_signal_time(); none of them may race with
 * hpu_device_reopen() of the fence's device (a fence of a reopened file
 * then gives -ENODEV).
 */

/* Flags of hpu_buffer_create() and hpu_buffer_from_user(). */
/** HPU_MEM_DEVICE: device memory (HBM), in 2 MiB pages. */
#define HPU_MEM_DEVICE (1u << 0)
/** HPU_MEM_HOST: host memory the device reaches, mapped into the caller. */
#define HPU_MEM_HOST (1u << 1)
/** HPU_MEM_CONTIGUOUS: with HPU_MEM_DEVICE: one physically contiguous block. */
#define HPU_MEM_CONTIGUOUS (1u << 2)
/** HPU_MEM_READONLY: the device may only read the buffer. */
#define HPU_MEM_READONLY (1u << 3)

/** Engine classes of hpu_queue_create(). */
#define HPU_ENGINE_DMA 0
/** HPU_ENGINE_CLASS_DMA: HPU_ENGINE_DMA under the name of the other classes (since 1.4). */
#define HPU_ENGINE_CLASS_DMA HPU_ENGINE_DMA
/** HPU_ENGINE_CLASS_TPC: the TPC engine, the cluster of tensor processor cores (since 1.4). */
#define HPU_ENGINE_CLASS_TPC 1
/** HPU_ENGINE_CLASS_MME: a matrix math engine (since 1.4). */
#define HPU_ENGINE_CLASS_MME 2
/*
 * Engine indexes (hpu_event.engine, hpu_error_info.engine, the entries of
 * hpu_telemetry.engine_util and engine_busy_ns, hpu_process.engine_ns):
 * DMA engine n is index n, then the compute engines (since 1.4).
 */
#define HPU_ENGINE_INDEX_TPC 8
#define HPU_ENGINE_INDEX_MME(n) (9u + (n))

/* Operations of hpu_cmd_sob_update() (wrapping at 2^32). */
#define HPU_SOB_SET 0
#define HPU_SOB_ADD 1
/* Conditions of hpu_cmd_wait_sob(). */
#define HPU_WAIT_GE 0
#define HPU_WAIT_EQ 1
/* Sync objects a context's commands may use: 0 .. HPU_NUM_SOBS_PER_CONTEXT - 1. */
#define HPU_NUM_SOBS_PER_CONTEXT 32

/** Largest recorded command list in bytes (the device's command-buffer limit). */
#define HPU_CMDLIST_MAX_BYTES (1u << 20)
/** Most fences one submission may wait for. */
#define HPU_MAX_WAIT_FENCES 64
/** A timeout of hpu_fence_wait() that never expires. */
#define HPU_TIMEOUT_INFINITE UINT64_MAX

/**
 * struct hpu_memory_info - memory of a device and of the calling context.
 *
 * The caller sets @size as for struct hpu_device_info.
 */
struct hpu_memory_info {
	uint32_t size;              /* In/Out, see struct hpu_device_info */
	uint32_t asid;              /* address-space id of this context */
	uint64_t hbm_total;         /* HBM bytes the driver hands out */
	uint64_t hbm_used;          /* HBM bytes allocated by all contexts */
	uint64_t hbm_ctx_used;      /* HBM bytes allocated by this context */
	uint64_t host_ctx_used;     /* host buffer bytes of this context */
	uint64_t va_start;          /* first device virtual address of the context */
	uint64_t va_end;            /* end (exclusive) of its device address range */
	uint32_t num_sobs;          /* sync objects the context may use */
	uint32_t reserved0;         /* zero */
};

/** hpu_device_memory_info() - memory use (INFO ioctl, op MEMORY). */
HPU_EXPORT int hpu_device_memory_info(hpu_device_t *dev, struct hpu_memory_info *out);

/** hpu_device_dma_engines() - number of DMA engines (>= 0) or -errno. */
HPU_EXPORT int hpu_device_dma_engines(hpu_device_t *dev);

/**
 * hpu_device_engines() - engines of a class that hpu_queue_create() takes
 * (since 1.4).
 * @engine_class: HPU_ENGINE_*.
 *
 * Returns the count (0 for a class the device or its driver lacks: a device
 * before spec version 6 has no TPC or MME queues; 1 for HPU_ENGINE_CLASS_TPC, the
 * cluster of all hpu_device_info.num_tpc cores), -EINVAL for a class at or
 * beyond HPU_MAX_ENGINE_CLASSES, or another negative errno value.
 */
HPU_EXPORT int hpu_device_engines(hpu_device_t *dev, uint32_t engine_class);

/**
 * hpu_buffer_create() - allocate a buffer and map it into the device.
 * @size: bytes, non-zero; rounded up to the page size (2 MiB for device
 *	memory, 4 KiB for host memory).
 * @flags: exactly one of HPU_MEM_DEVICE and HPU_MEM_HOST, plus
 *	HPU_MEM_CONTIGUOUS (device memory only) and HPU_MEM_READONLY.
 *
 * Host buffers are also mapped into the caller (hpu_buffer_host_ptr()).
 * Returns -EINVAL for a bad size or flags (before any system call), -ENOMEM
 * when the device or host memory is exhausted, or the driver's error.
 */
HPU_EXPORT int hpu_buffer_create(hpu_device_t *dev, uint64_t size, uint32_t flags,
				 hpu_buffer_t **out);

/**
 * hpu_buffer_from_user() - let the device reach the caller's memory.
 * @ptr, @size: any range (non-zero size); the library pins and maps the
 *	4 KiB pages that contain it, and hpu_buffer_va() is the device address
 *	of @ptr itself.
 * @flags: 0, HPU_MEM_HOST (the same) and/or HPU_MEM_READONLY.
 *
 * The memory must stay allocated until the buffer is destroyed. Unmapped
 * memory fails with -EFAULT.
 */
HPU_EXPORT int hpu_buffer_from_user(hpu_device_t *dev, void *ptr, uint64_t size, uint32_t flags,
				    hpu_buffer_t **out);

/**
 * hpu_buffer_import_fd() - map a dma-buf (of this or another HPU) into @dev.
 * @fd: the dma-buf; the caller keeps it (close it whenever it likes).
 * @size: bytes to map from its start: non-zero, a multiple of its page size
 *	(hpu_buffer_size() of the exporter maps it whole).
 */
HPU_EXPORT int hpu_buffer_import_fd(hpu_device_t *dev, int fd, uint64_t size, hpu_buffer_t **out);

/**
 * hpu_buffer_export_fd() - a new dma-buf fd (O_CLOEXEC, read-write) for
 * @buf, owned by the caller. User-pointer buffers cannot be exported.
 */
HPU_EXPORT int hpu_buffer_export_fd(hpu_buffer_t *buf, int *fd);

/**
 * hpu_buffer_destroy() - unmap from the device and the caller, release the
 * buffer; NULL is a no-op. The caller makes sure no job still uses it.
 * Returns 0 or the first error; the handle is freed either way.
 */
HPU_EXPORT int hpu_buffer_destroy(hpu_buffer_t *buf);

/** hpu_buffer_va() - device virtual address of the buffer (0 for NULL). */
HPU_EXPORT uint64_t hpu_buffer_va(const hpu_buffer_t *buf);
/** hpu_buffer_size() - bytes usable from hpu_buffer_va() (0 for NULL). */
HPU_EXPORT uint64_t hpu_buffer_size(const hpu_buffer_t *buf);
/**
 * hpu_buffer_host_ptr() - caller's address of a host or user-pointer buffer,
 * or of a device-memory buffer once hpu_buffer_map() mapped it; else NULL.
 */
HPU_EXPORT void *hpu_buffer_host_ptr(const hpu_buffer_t *buf);

/**
 * hpu_buffer_map() - map a buffer into the caller and return its address.
 * @ptr: Out: the address of the buffer's first byte (hpu_buffer_va()'s).
 *
 * Device memory (HPU_MEM_DEVICE) is mapped through the device's HBM BAR,
 * write-combining, once: later calls, and hpu_buffer_host_ptr(), return
 * the same address until hpu_buffer_destroy(). CPU accesses to it cross
 * PCIe, so they are slow next to the DMA engines (use them for bulk data);
 * the mapping is for code that must take a CPU pointer, such as an RDMA
 * stack registering memory (ibv_reg_mr() of the range registers the HBM
 * itself) or MPI. Ordering: what a job wrote is visible through the
 * mapping once its fence signalled; CPU stores through it are
 * write-combined, and every submission (hpu_queue_submit() and the calls
 * built on it) first makes them globally visible (an sfence on x86-64),
 * so a job submitted after them reads them; the hpu verbs provider does
 * the same before a posted work request reaches the NIC. Other agents
 * need the caller's own fence (on x86 __builtin_ia32_sfence()). Host and
 * user-pointer buffers return the mapping they have. Safe to call from
 * several threads at once. The mapping of a buffer whose device file was
 * reopened since (hpu_device_reopen()) stays until hpu_buffer_destroy(),
 * and no new one is made. Kernel paths that pin user pages (O_DIRECT,
 * process_vm_readv, a debugger reading the process's memory) cannot use
 * the range; RDMA registration through the HPU's own ib_device can.
 *
 * Returns 0, -EOPNOTSUPP when the device cannot map its memory into a
 * process (hardware before spec version 8, or no write-combining for its
 * BAR; hpu_device_info.caps lacks HPU_DEVICE_CAP_HBM_MMAP), -ENODEV for a
 * buffer of a file reopened since, -EINVAL for a NULL argument, -ENOMEM
 * when the process is out of address space, or the errno of the kernel's
 * DRM_IOCTL_HPU_BO_MMAP_OFFSET or of mmap(2). Since 1.9.
 */
HPU_EXPORT int hpu_buffer_map(hpu_buffer_t *buf, void **ptr);

/**
 * hpu_queue_create() - create a queue on an engine.
 * @engine_class: HPU_ENGINE_DMA, or since 1.4 HPU_ENGINE_CLASS_TPC or HPU_ENGINE_CLASS_MME.
 * @engine: index within the class (< hpu_device_engines(dev, @engine_class)).
 *
 * Jobs of one queue run in submission order; queues run concurrently. A
 * TPC or MME queue runs NOP, WRITE_VALUE, SOB_UPDATE and WAIT commands like
 * a DMA queue, but no copy or memset (their jobs fail -EINVAL). Where the
 * device offers user queues, the queue also gets one (libhpu.md "User
 * queues"). Returns -EINVAL for an unknown class or an engine the device
 * does not have, or the errno of the driver refusing the queue (-ENOSPC at
 * the file's limit of queues, -ENODEV, ...) or of the device query made
 * the first time.
 */
HPU_EXPORT int hpu_queue_create(hpu_device_t *dev, uint32_t engine_class, uint32_t engine,
				hpu_queue_t **out);

/**
 * hpu_queue_destroy() - destroy a queue; NULL is a no-op. Jobs already
 * submitted run to completion first (this waits for the eager ones).
 */
HPU_EXPORT int hpu_queue_destroy(hpu_queue_t *q);

/**
 * hpu_queue_submit() - run a recorded command list on a queue.
 * @waits: @num_waits fences (of the same device) the job waits for first;
 *	NULL when @num_waits is 0; at most HPU_MAX_WAIT_FENCES.
 * @out: receives the job's fence (destroy it with hpu_fence_destroy()), or
 *	NULL when the caller does not need one.
 *
 * The list may be submitted again, changed, reset or destroyed at once: the
 * library keeps each command buffer alive until the jobs reading it end.
 * Returns -EINVAL for an empty list, -EXDEV for a list or fence of another
 * device.
 */
HPU_EXPORT int hpu_queue_submit(hpu_queue_t *q, hpu_cmdlist_t *cl, const hpu_fence_t *const *waits,
				size_t num_waits, hpu_fence_t **out);

/**
 * Eager commands: each records a one-shot command list (from a pool the
 * queue recycles) and submits it. @out may be NULL. Copy and memset need a
 * DMA queue: on another one they are -EINVAL, with hpu_last_error().
 */
HPU_EXPORT int hpu_queue_copy(hpu_queue_t *q, uint64_t dst_va, uint64_t src_va, uint64_t size,
			      hpu_fence_t **out);
HPU_EXPORT int hpu_queue_memset(hpu_queue_t *q, uint64_t dst_va, uint64_t pattern, uint64_t size,
				hpu_fence_t **out);
HPU_EXPORT int hpu_queue_write_value(hpu_queue_t *q, uint64_t va, uint32_t value, hpu_fence_t **out);

/** Smallest copy hpu_queue_copy_split() shares out; smaller ones take one engine. */
#define HPU_COPY_SPLIT_MIN (8ULL << 20)

/**
 * hpu_queue_copy_split() - hpu_queue_copy(), with the bytes shared among up
 * to @max_engines DMA engines (0: all of them). Since 1.11.
 * @q: a DMA queue
 * @dst_va: destination
 * @src_va: source
 * @size: bytes, non-zero
 * @max_engines: how many engines may take part, @q's own among them
 * @out: receives the fence of the whole copy (may be NULL)
 *
 * Ordered as a copy on @q: it starts after the work submitted to @q before
 * it, work submitted to @q after it starts after all of it, and @out
 * signals once every byte is copied (its error: that of the failed part
 * that ended first, whose job hpu_fence_error_info() names, maybe on a
 * queue of the library's). The parts other than @q's own go to kernel
 * queues @q gets on the next DMA engines on first use and keeps until it
 * is destroyed. Parts are @size / n rounded up to 64 KiB (the last takes
 * the rest), each at least 4 MiB but for the last. One engine does it all
 * when @size is below %HPU_COPY_SPLIT_MIN, the ranges overlap,
 * @max_engines is 1 or the device has one DMA engine; a part whose queue
 * cannot be made or submitted to is copied by @q.
 * Returns 0, or -EINVAL (not a DMA queue, a bad range), -ENODEV, -ENOMEM
 * or the driver's error of @q's own submission; after such an error parts
 * already handed to helper queues may still be copied.
 */
HPU_EXPORT int hpu_queue_copy_split(hpu_queue_t *q, uint64_t dst_va, uint64_t src_va, uint64_t size,
				    uint32_t max_engines, hpu_fence_t **out);

/**
 * hpu_cmdlist_create() - an empty command list of @dev. Its command buffer
 * starts at 4 KiB and grows (doubling) up to HPU_CMDLIST_MAX_BYTES; a
 * command that would go past that fails with -ENOSPC and records nothing.
 */
HPU_EXPORT int hpu_cmdlist_create(hpu_device_t *dev, hpu_cmdlist_t **out);
/**
 * hpu_cmdlist_destroy() - NULL is a no-op. Waits until the jobs that read
 * its command buffers have ended, then frees them.
 */
HPU_EXPORT int hpu_cmdlist_destroy(hpu_cmdlist_t *cl);
/** hpu_cmdlist_reset() - forget the recorded commands (never waits). */
HPU_EXPORT int hpu_cmdlist_reset(hpu_cmdlist_t *cl);
/** hpu_cmdlist_size() - bytes recorded (0 for NULL). */
HPU_EXPORT size_t hpu_cmdlist_size(const hpu_cmdlist_t *cl);

/* Recording. Each returns 0, -EINVAL (bad argument, nothing recorded),
 * -ENOSPC or an allocation error. Addresses are device virtual addresses. */
/** hpu_cmd_nop() - a NOP packet. */
HPU_EXPORT int hpu_cmd_nop(hpu_cmdlist_t *cl);
/** hpu_cmd_copy() - copy @size (non-zero) bytes; split into 4 GiB packets. */
HPU_EXPORT int hpu_cmd_copy(hpu_cmdlist_t *cl, uint64_t dst_va, uint64_t src_va, uint64_t size);
/** hpu_cmd_memset() - destination byte i gets byte (i % 8) of @pattern (little-endian). */
HPU_EXPORT int hpu_cmd_memset(hpu_cmdlist_t *cl, uint64_t dst_va, uint64_t pattern, uint64_t size);
/** hpu_cmd_write_value() - write the 32-bit @value at @va (4-byte aligned). */
HPU_EXPORT int hpu_cmd_write_value(hpu_cmdlist_t *cl, uint64_t va, uint32_t value);
/** hpu_cmd_sob_update() - HPU_SOB_SET or HPU_SOB_ADD @value to sync object @sob. */
HPU_EXPORT int hpu_cmd_sob_update(hpu_cmdlist_t *cl, uint32_t sob, uint32_t op, uint32_t value);
/** hpu_cmd_wait_sob() - block the queue until sync object @sob is GE/EQ @value. */
HPU_EXPORT int hpu_cmd_wait_sob(hpu_cmdlist_t *cl, uint32_t sob, uint32_t value, uint32_t cond);

/**
 * hpu_fence_wait() - wait until the job of @f ended.
 * @timeout_ns: relative; 0 polls; HPU_TIMEOUT_INFINITE never expires.
 *
 * Returns 0 when the job completed successfully, -ETIME when the timeout
 * elapsed first, or the job's error when the device failed it: -EFAULT
 * (MMU fault), -EINVAL (bad packet), -EPERM (privileged packet), -EIO (bus
 * error), -ETIMEDOUT (the job's own timeout), -ECANCELED (aborted, reset).
 * The deadline is absolute: a wait interrupted by a signal resumes with the
 * same end, and -ETIME never comes before it (CLOCK_MONOTONIC).
 */
HPU_EXPORT int hpu_fence_wait(hpu_fence_t *f, uint64_t timeout_ns);
/** hpu_fence_status() - 0 done and successful, 1 still pending, or the job's -errno. */
HPU_EXPORT int hpu_fence_status(hpu_fence_t *f);
/**
 * hpu_fence_export_fd() - a new sync_file fd of the fence, owned by the caller.
 *
 * A fence that hpu_fence_wait() or hpu_fence_status() has found ended gives
 * a signalled sync_file with the same outcome (its error as the file's
 * status), but: a job of a user queue waits up to a second for the driver
 * to learn of its end, and is exported pending if it has not by then; the
 * driver keeps the outcomes of a user queue's last 256 failures, so an
 * older job of a live queue may export with -ENODATA; a failed job of a
 * destroyed user queue cannot be exported (-ENOENT).
 */
HPU_EXPORT int hpu_fence_export_fd(hpu_fence_t *f, int *fd);
/** hpu_fence_import_fd() - a fence of @dev from a sync_file fd (the caller keeps @fd). */
HPU_EXPORT int hpu_fence_import_fd(hpu_device_t *dev, int fd, hpu_fence_t **out);
/** hpu_fence_destroy() - NULL is a no-op; the job itself is not affected. */
HPU_EXPORT int hpu_fence_destroy(hpu_fence_t *f);

/*
 * ---- Since 1.2: errors, timeouts, reset and recovery ----
 *
 * Error events. The driver reports each failed job and each device error
 * that concerns this file as an event on the device file, once events are
 * enabled (hpu_device_event_fd(), hpu_device_set_error_callback()). The
 * library reads them (only through the functions below: never read(2) the
 * device fd yourself), keeps the last HPU_ERROR_HISTORY error events to
 * explain failed fences (hpu_fence_error_info()) and hands each event to a
 * callback.
 *
 * Reset. After a hard reset every call on a file opened before it fails
 * with -ENODEV: the device is "lost" (hpu_device_is_lost()) and must be
 * reopened (hpu_device_reopen()). A soft reset keeps the file: jobs that
 * were running fail (-ECANCELED or -ETIMEDOUT), the rest continue.
 */

/* Kinds of error (hpu_event.kind, hpu_error_info.kind): DRM_HPU_ERROR_*. */
/** HPU_ERROR_NONE: no error event is known (only the errno). */
#define HPU_ERROR_NONE 0
#define HPU_ERROR_MMU_FAULT 1       /* address: the faulting device address */
#define HPU_ERROR_BAD_PACKET 2      /* address: the command buffer */
#define HPU_ERROR_PRIV 3            /* privileged packet in a user command buffer */
#define HPU_ERROR_ENGINE_HANG 4     /* the engine watchdog found the engine hung */
#define HPU_ERROR_DMA_BUS 5         /* address: the host bus address that failed */
#define HPU_ERROR_ECC 6             /* address: the HBM offset */
#define HPU_ERROR_TIMEOUT 7         /* the job ran longer than its timeout */
#define HPU_ERROR_DEVICE_LOST 8     /* the device was hard-reset or removed */
/* Since 1.4, compute engines; "info" is hpu_event.info / hpu_error_info.info: */
#define HPU_ERROR_BAD_LAUNCH 9      /* -ENOEXEC; address: the descriptor; info: the rule broken */
#define HPU_ERROR_TPC_ILLEGAL 10    /* -EILSEQ; address: the program counter; info: [7:0] core, [15:8] reason */
#define HPU_ERROR_TPC_ASSERT 11     /* -EDOM; address: the program counter; info: the assert's value */
/** Engine of an error that concerns no engine. */
#define HPU_ENGINE_NONE 0xffffffffu
/** Error events the library remembers per device for hpu_fence_error_info(). */
#define HPU_ERROR_HISTORY 1024

/* hpu_event.type */
#define HPU_EVENT_ERROR 1
#define HPU_EVENT_RESET 2

/**
 * struct hpu_event - one event of the driver, as handed to a callback.
 *
 * Owned by the library and valid during the callback only. @size is the
 * number of bytes the library filled; members are only added at the end.
 */
struct hpu_event {
	uint32_t size;              /* sizeof(struct hpu_event) of the library */
	uint32_t type;              /* HPU_EVENT_ERROR or HPU_EVENT_RESET */
	uint64_t timestamp_ns;      /* CLOCK_MONOTONIC time the driver saw it */
	/* HPU_EVENT_ERROR (zero otherwise): */
	int32_t error;              /* negative errno the failed job's fence carries, or 0 */
	uint32_t kind;              /* HPU_ERROR_* */
	uint32_t engine;            /* engine index, HPU_ENGINE_NONE when none */
	uint32_t queue_id;          /* the file's queue whose job failed, 0 when none */
	uint64_t seq;               /* sequence number of the failed job, 0 when none */
	uint64_t address;           /* see HPU_ERROR_*; 0 when none */
	/* HPU_EVENT_RESET (zero otherwise): */
	uint32_t hard;              /* 1 hard reset (the device is lost: reopen), 0 soft */
	uint32_t reserved0;         /* zero */
	uint64_t generation;        /* reset generation after the reset */
	/* Since 1.4, HPU_EVENT_ERROR: */
	uint32_t info;              /* see HPU_ERROR_*; 0 when none */
	uint32_t reserved1;         /* zero */
	/*
	 * Since 1.5, HPU_EVENT_ERROR: in the device's event of an error
	 * (queue_id 0), the job the error failed when the driver names it,
	 * else 0.
	 */
	uint32_t job_queue_id;
	uint32_t reserved2;         /* zero */
	uint64_t job_seq;
};

/**
 * hpu_event_fn - a callback of hpu_device_set_error_callback() or
 * hpu_device_process_events(). It must not call hpu_close(),
 * hpu_device_reopen() or hpu_device_set_error_callback() on @dev (those
 * fail with -EDEADLK from the library's thread); it may call
 * hpu_device_is_lost(), hpu_fence_error_info(), the fence functions and
 * hpu_strerror().
 */
typedef void (*hpu_event_fn)(hpu_device_t *dev, const struct hpu_event *ev, void *user);

/**
 * hpu_error_kind_name() - a short name of an HPU_ERROR_* kind ("mmu-fault",
 * "bad-packet", "priv", "engine-hang", "dma-bus", "ecc", "timeout",
 * "device-lost", "bad-launch", "tpc-illegal", "tpc-assert", "none"), or
 * "unknown". Static, never NULL. Thread-safe.
 */
HPU_EXPORT const char *hpu_error_kind_name(uint32_t kind);

/**
 * struct hpu_error_info - why a job failed (hpu_fence_error_info()).
 *
 * The caller sets @size as for struct hpu_device_info.
 */
struct hpu_error_info {
	uint32_t size;              /* In/Out, see struct hpu_device_info */
	int32_t error;              /* 0 (the job succeeded) or the job's negative errno */
	uint32_t kind;              /* HPU_ERROR_*; HPU_ERROR_NONE when no event matched */
	uint32_t engine;            /* from the event; HPU_ENGINE_NONE without one */
	uint32_t queue_id;          /* the job's queue (0 for an imported fence) */
	uint32_t reserved0;         /* zero */
	uint64_t seq;               /* the job's sequence number on its queue (0: unknown) */
	uint64_t address;           /* from the event, else 0 */
	uint64_t timestamp_ns;      /* from the event (CLOCK_MONOTONIC), else 0 */
	/* Since 1.4: */
	uint32_t info;              /* from the device event of a compute error (HPU_ERROR_*), else 0 */
	uint32_t reserved1;         /* zero */
};

/**
 * hpu_fence_error_info() - the result of a finished job, and why it failed.
 *
 * Never waits. Returns -EBUSY while the job is pending, -ENODEV for a
 * fence of a file that was reopened since (unless its result was already
 * known). When the job failed, reads the device's pending events first
 * (if events are enabled) and fills @kind, @engine, @address and
 * @timestamp_ns from the error event of the same queue and sequence
 * number; without such an event (events not enabled, not arrived yet, or
 * an imported fence) only @error is set and @kind is HPU_ERROR_NONE.
 * For MMU faults and compute errors the driver sends the address (and
 * @info) in a second event of the device (queue 0); the library takes
 * them from the device event that names this job (job_queue_id, job_seq)
 * when it has arrived, else from the latest device event of the same
 * kind and engine that names no job, else @address and @info stay 0.
 */
HPU_EXPORT int hpu_fence_error_info(hpu_fence_t *f, struct hpu_error_info *out);

/**
 * hpu_fence_error_info_wait() - hpu_fence_error_info(), waiting a bounded
 * time for the second half of a compute error or MMU fault.
 * @timeout_ns: how long to wait at most for the device event
 *
 * The driver sends the address and info of an MMU fault or compute error
 * (HPU_ERROR_MMU_FAULT, _BAD_LAUNCH, _TPC_ILLEGAL, _TPC_ASSERT) in a
 * device event that may reach the file after the failed job's own event.
 * When the job failed with such a kind and neither @address nor @info is
 * known yet, this reads events (or waits for the callback thread to read
 * them) until that event arrives or @timeout_ns has passed, then fills
 * @out as hpu_fence_error_info() does. Returns at once in every other
 * case, and without events enabled (nothing would arrive). Returns what
 * hpu_fence_error_info() returns; the time running out is not an error
 * (@address and @info stay 0). Since 1.8.
 */
HPU_EXPORT int hpu_fence_error_info_wait(hpu_fence_t *f, struct hpu_error_info *out, uint64_t timeout_ns);

/**
 * hpu_fence_signal_time() - when the job of @f ended.
 * @ns: Out: the CLOCK_MONOTONIC time in nanoseconds at which the driver
 *      signalled the job's fence (0 unless the call returns 0).
 *
 * Never waits. The time is the kernel's signal timestamp of the fence
 * (struct sync_fence_info's timestamp_ns of its sync_file), so the
 * difference between two fences' times is the CLOCK_MONOTONIC time
 * between the two completions (the device's work and any idle time
 * between them, as CUDA's elapsed time), whatever the time at which it
 * is read. A failed job's fence
 * signals too: its time is given as well, and hpu_fence_status() tells
 * the outcome. A graph launch's fence gives the time its last job ended;
 * an imported fence (hpu_fence_import_fd()) the latest of its fences'.
 * (An imported merge of fences already signalled when merged may give
 * the merge's time on kernels before 6.7, later than the real end.)
 *
 * Returns 0, -EBUSY while a job of @f is pending (poll again or wait with
 * hpu_fence_wait() first), -ENODEV for a fence of a file that was
 * reopened since, -ENODATA when the kernel reports a signalled fence
 * without a time (0), -EINVAL for a NULL argument, or another negative
 * errno of a system call. Since 1.10.
 */
HPU_EXPORT int hpu_fence_signal_time(hpu_fence_t *f, uint64_t *ns);

/**
 * hpu_device_event_fd() - enable error events on @dev and return the fd to
 * poll(2) for POLLIN (the device fd) in a runtime's own event loop; then
 * call hpu_device_process_events(). Idempotent. Returns the fd or -errno
 * (e.g. -ENOTTY from a driver without events).
 */
HPU_EXPORT int hpu_device_event_fd(hpu_device_t *dev);

/**
 * hpu_device_process_events() - read every pending event without blocking,
 * remember the errors (hpu_fence_error_info()) and note resets, then call
 * @cb (may be NULL) for each, in order, on the calling thread.
 *
 * Enables events if they were not. Returns the number of events read
 * (unknown event types are skipped and not counted) or -errno; -ENODEV
 * also marks the device lost.
 */
HPU_EXPORT int hpu_device_process_events(hpu_device_t *dev, hpu_event_fn cb, void *user);

/**
 * hpu_device_set_error_callback() - deliver events to @cb from a library
 * thread.
 * @cb: the callback, or NULL to stop the thread (events stay enabled).
 *
 * Enables events, starts the thread if it does not run, and replaces the
 * callback: when this returns, the previous callback is not running and
 * is never called again. hpu_close() and hpu_device_reopen() stop the
 * thread (reopen restarts it on the new file). Returns 0, -EDEADLK from
 * the callback itself, or -errno.
 */
HPU_EXPORT int hpu_device_set_error_callback(hpu_device_t *dev, hpu_event_fn cb, void *user);

/**
 * hpu_device_is_lost() - 1 once the device was hard-reset under this file
 * (a reset event with hard set, an error event of kind
 * HPU_ERROR_DEVICE_LOST, or any call on the file that failed with
 * -ENODEV), 0 otherwise, -EINVAL for NULL. Thread-safe. Only
 * hpu_device_reopen() clears it.
 */
HPU_EXPORT int hpu_device_is_lost(const hpu_device_t *dev);

/**
 * hpu_device_reset_generation() - the device's reset generation (INFO
 * ERRORS), which increments at each hard reset. Compare values to tell
 * whether the device was hard-reset in between. -ENODEV when this file
 * is stale (the device is then lost).
 */
HPU_EXPORT int hpu_device_reset_generation(hpu_device_t *dev, uint64_t *out);

/**
 * hpu_device_reopen() - replace the file of @dev by a new open of the same
 * PCI device (found again by its PCI address; the accel index may change).
 *
 * On success the old file is closed and every buffer, queue, command list
 * and fence created on @dev before becomes stale: each call on it fails
 * with -ENODEV without a system call (a fence whose result was already
 * known still reports it), and its destroy function frees it (and unmaps
 * a host buffer from the caller) without touching the new file. Destroy
 * them all; create new ones. Device memory contents are lost after a hard
 * reset. hpu_device_get_fd() returns the new fd. Events are enabled on
 * the new file if they were on the old one, and the callback thread
 * continues. The lost state and the remembered error events are cleared.
 * On failure (-ENODEV: no HPU at that PCI address any more, or the open's
 * error) @dev is unchanged. Not thread-safe with other calls on @dev
 * (except from the callback thread, which gets -EDEADLK).
 */
HPU_EXPORT int hpu_device_reopen(hpu_device_t *dev);

/**
 * struct hpu_error_counters - error and reset counters of a device since the
 * driver bound it (INFO ERRORS). The caller sets @size as for struct
 * hpu_device_info.
 */
struct hpu_error_counters {
	uint32_t size;              /* In/Out, see struct hpu_device_info */
	uint32_t reserved0;         /* zero */
	uint64_t mmu_faults;
	uint64_t bad_packets;
	uint64_t priv_violations;   /* privileged packets refused */
	uint64_t engine_hangs;
	uint64_t dma_bus_errors;
	uint64_t ecc_correctable;
	uint64_t ecc_uncorrectable;
	uint64_t retired_pages;     /* 2 MiB HBM pages retired after uncorrectable errors */
	uint64_t job_timeouts;
	uint64_t heartbeat_losses;  /* firmware heartbeats missed */
	uint64_t fw_fatal;          /* fatal firmware errors */
	uint64_t thermal_events;
	uint64_t power_events;
	uint64_t soft_resets;
	uint64_t hard_resets;
	uint64_t reset_generation;
};

/** hpu_device_error_counters() - the counters (INFO ioctl, op ERRORS). */
HPU_EXPORT int hpu_device_error_counters(hpu_device_t *dev, struct hpu_error_counters *out);

/** Largest per-job timeout of hpu_queue_submit_timeout(), in ms (1 hour). */
#define HPU_JOB_TIMEOUT_MAX_MS 3600000u
/** Timeout of hpu_queue_submit_timeout(): the driver's default. */
#define HPU_JOB_TIMEOUT_DEFAULT 0u

/**
 * hpu_queue_submit_timeout() - hpu_queue_submit() with a timeout for this
 * job: @timeout_ms (at most HPU_JOB_TIMEOUT_MAX_MS, else -EINVAL before
 * any system call), or HPU_JOB_TIMEOUT_DEFAULT for the driver's default
 * (what hpu_queue_submit() uses). A job that runs longer is stopped and
 * its fence fails with -ETIMEDOUT.
 */
HPU_EXPORT int hpu_queue_submit_timeout(hpu_queue_t *q, hpu_cmdlist_t *cl, const hpu_fence_t *const *waits,
					size_t num_waits, uint32_t timeout_ms, hpu_fence_t **out);

/* Flags of hpu_device_reset(). */
/** HPU_RESET_SOFT: compute and DMA engines only; HBM and firmware stay. */
#define HPU_RESET_SOFT 0u
/** HPU_RESET_HARD: the whole device; HBM contents lost, every file stale. */
#define HPU_RESET_HARD (1u << 0)

/**
 * hpu_device_reset() - ask the driver to reset the device (an operator's
 * action; needs root: it writes "soft" or "hard" to the driver's sysfs
 * attribute of the PCI device).
 *
 * Returns 0 once the driver reports the reset done, -EINVAL for unknown
 * flags, -EACCES or -EPERM without the privilege, -EOPNOTSUPP when the
 * driver has no such attribute, or the driver's refusal: -EBUSY (a reset
 * is already running, or the device cannot be reset now), -EIO (the reset
 * failed), -ENODEV (the device is gone). After a hard reset @dev itself
 * is lost: reopen it.
 */
HPU_EXPORT int hpu_device_reset(hpu_device_t *dev, uint32_t flags);

/*
 * ---- Since 1.3: telemetry, firmware, PCIe link, processes ----
 *
 * Sensors, clocks, utilisation and HBM use come from the driver's INFO
 * ioctl (op TELEMETRY), firmware versions from INFO op FIRMWARE, the PCIe
 * link from the PCI device's sysfs attributes, per-process use from the
 * DRM fdinfo of every process (/proc/<pid>/fdinfo). The library talks no
 * generic netlink: devlink would only repeat what INFO FIRMWARE reports.
 */

/** Entries of hpu_telemetry.engine_util and engine_busy_ns, and of hpu_process. */
#define HPU_MAX_ENGINES 16

/* Bits of hpu_telemetry.throttle: why the core clock is below its top. */
#define HPU_CLK_THROTTLE_THERMAL (1u << 0)
#define HPU_CLK_THROTTLE_POWER (1u << 1)
/* Bits of hpu_telemetry.alarms: limits currently exceeded. */
#define HPU_OVER_TEMP_MAX (1u << 0)
#define HPU_OVER_TEMP_CRIT (1u << 1)
#define HPU_OVER_POWER_CAP (1u << 2)
#define HPU_OVER_HBM_TEMP_MAX (1u << 3)

/**
 * struct hpu_telemetry - sensors, clocks, limits, engine utilisation and
 * HBM use of a device (hpu_device_get_telemetry()).
 *
 * The caller sets @size as for struct hpu_device_info. Sensor members
 * (temperatures, power, energy, voltages, clocks) are those the firmware
 * last reported; they read 0 while the firmware does not run (see
 * hpu_firmware_info.state).
 */
struct hpu_telemetry {
	uint32_t size;              /* In/Out, see struct hpu_device_info */
	uint32_t num_engines;       /* valid entries of engine_util / engine_busy_ns, by engine index (HPU_ENGINE_INDEX_*) */
	uint64_t timestamp_ns;      /* CLOCK_MONOTONIC time of the snapshot */
	uint64_t energy_uj;         /* board energy since power-on, microjoules */
	uint64_t hbm_total;         /* HBM bytes contexts can allocate */
	uint64_t hbm_used;          /* HBM bytes allocated by all contexts */
	int32_t temp_die_mc;        /* millidegrees Celsius */
	int32_t temp_hbm_mc;
	int32_t temp_board_mc;
	int32_t temp_max_mc;        /* die temperature at which the clock throttles */
	int32_t temp_crit_mc;       /* critical die temperature */
	int32_t hbm_temp_max_mc;    /* maximum HBM temperature */
	uint32_t power_mw;          /* board power, milliwatts */
	uint32_t power_cap_mw;      /* power cap */
	uint32_t power_cap_max_mw;  /* highest cap the firmware accepts */
	uint32_t volt_core_mv;      /* millivolts */
	uint32_t volt_hbm_mv;
	uint32_t clk_core_mhz;      /* current core clock */
	uint32_t clk_core_max_mhz;  /* top core clock */
	uint32_t clk_hbm_mhz;
	uint32_t throttle;          /* HPU_CLK_THROTTLE_* */
	uint32_t alarms;            /* HPU_OVER_* */
	uint32_t util_window_ms;    /* window engine_util is measured over */
	uint32_t reserved0;         /* zero */
	uint32_t engine_util[HPU_MAX_ENGINES];    /* busy share, hundredths of a percent (0..10000) */
	uint64_t engine_busy_ns[HPU_MAX_ENGINES]; /* busy time since power-on, ns */
};

/** hpu_device_get_telemetry() - the device's telemetry (INFO ioctl, op TELEMETRY). */
HPU_EXPORT int hpu_device_get_telemetry(hpu_device_t *dev, struct hpu_telemetry *out);

/* hpu_firmware_info.state */
#define HPU_FIRMWARE_RUNNING 0      /* runs and answers heartbeats */
#define HPU_FIRMWARE_BOOTING 1      /* the driver is booting it */
#define HPU_FIRMWARE_FAILED 2       /* the device refused the image or did not boot */
#define HPU_FIRMWARE_HALTED 3       /* stopped after a fatal error */
/* hpu_firmware_info.boot_source */
#define HPU_FIRMWARE_FROM_NONE 0
#define HPU_FIRMWARE_FROM_HOST 1        /* the image file, loaded by the driver */
#define HPU_FIRMWARE_FROM_FLASH 2       /* the image stored in the device's flash */
/** Build string of a firmware image, NUL terminated. */
#define HPU_FIRMWARE_BUILD_MAX 32
/** Packs a firmware version as the image format does: [23:16].[15:8].[7:0]. */
#define HPU_MAKE_FW_VERSION(major, minor, patch) \
	((((uint32_t)(major)) << 16) | (((uint32_t)(minor)) << 8) | ((uint32_t)(patch)))

/**
 * struct hpu_firmware_info - firmware versions and boot state
 * (hpu_device_get_firmware_info()). Versions are packed as
 * HPU_MAKE_FW_VERSION(); 0 means none. The caller sets @size as for struct
 * hpu_device_info.
 */
struct hpu_firmware_info {
	uint32_t size;              /* In/Out, see struct hpu_device_info */
	uint32_t running_version;   /* the running firmware */
	uint32_t stored_version;    /* the image in the device's flash */
	uint32_t min_version;       /* lowest version the device accepts (anti-rollback) */
	uint32_t state;             /* HPU_FIRMWARE_* */
	uint32_t boot_source;       /* HPU_FIRMWARE_FROM_* */
	uint32_t boot_error;        /* refusal code of the last failed boot, or 0 */
	uint32_t boots;             /* firmware boots since the driver bound the device */
	char running_build[HPU_FIRMWARE_BUILD_MAX];
};

/** hpu_device_get_firmware_info() - firmware versions and state (INFO op FIRMWARE). */
HPU_EXPORT int hpu_device_get_firmware_info(hpu_device_t *dev, struct hpu_firmware_info *out);

/**
 * struct hpu_pcie_link - the PCIe link of a device, from the PCI core's
 * sysfs attributes (current_link_speed, current_link_width,
 * max_link_speed, max_link_width). A value the kernel reports as unknown
 * is 0. The caller sets @size as for struct hpu_device_info.
 */
struct hpu_pcie_link {
	uint32_t size;              /* In/Out, see struct hpu_device_info */
	uint32_t cur_speed_mts;     /* transfer rate, MT/s (16000 for 16 GT/s) */
	uint32_t cur_gen;           /* PCIe generation of that rate (1..6) */
	uint32_t cur_width;         /* lanes */
	uint32_t max_speed_mts;
	uint32_t max_gen;
	uint32_t max_width;
	uint32_t reserved0;         /* zero */
};

/**
 * hpu_device_get_pcie_link() - read the link attributes of the device's
 * PCI function. Returns -ENOENT when the kernel offers none (not a PCIe
 * device), -EPROTO for text it cannot parse, or the read's error.
 */
HPU_EXPORT int hpu_device_get_pcie_link(hpu_device_t *dev, struct hpu_pcie_link *out);

/**
 * hpu_device_hwmon_path() - the device's hwmon directory,
 * "/sys/bus/pci/devices/<bdf>/hwmon/hwmonN", for callers that read hwmon
 * themselves. Writes it NUL terminated into @buf (@len bytes). Returns 0,
 * -ENOENT when the device has no hwmon directory, -ERANGE when @len is too
 * small, or the listing's error.
 */
HPU_EXPORT int hpu_device_hwmon_path(hpu_device_t *dev, char *buf, size_t len);

/** Room for a network interface name and NUL (IFNAMSIZ). */
#define HPU_NIC_IFNAME_MAX 16

/** Values of hpu_nic_port.link. */
enum hpu_nic_link {
	HPU_NIC_LINK_DOWN = 0,      /* the interface is up, its carrier is not */
	HPU_NIC_LINK_UP = 1,        /* carrier up */
	HPU_NIC_LINK_UNKNOWN = 2,   /* the interface is administratively down */
};

/**
 * struct hpu_nic_port - one NIC port of a device as the kernel's network
 * stack shows it: the Ethernet interface the hpu_en driver registered for
 * the port, its link and its interface counters (sysfs under the device's
 * PCI directory). The caller sets @size as for struct hpu_device_info.
 * Since 1.7.
 */
struct hpu_nic_port {
	uint32_t size;              /* In/Out, see struct hpu_device_info */
	uint32_t port;              /* port index on the device */
	char ifname[HPU_NIC_IFNAME_MAX]; /* interface name, NUL terminated */
	uint8_t mac[6];             /* current MAC address */
	uint8_t link;               /* enum hpu_nic_link */
	uint8_t admin_up;           /* 1: the interface is up (IFF_UP) */
	uint32_t mtu;               /* bytes */
	uint32_t speed_mbps;        /* line rate; 0 when the kernel reports none */
	uint64_t rx_packets;
	uint64_t tx_packets;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t rx_errors;
	uint64_t tx_errors;
	uint64_t rx_dropped;
	uint64_t tx_dropped;
};

/**
 * hpu_device_get_nic_port() - read NIC port @port of @dev (0 to
 * hpu_device_info.num_nic - 1). Returns 0; -EINVAL for a bad argument or a
 * port the device does not have; -ENOENT when the port has no network
 * interface (the hpu_en driver is not loaded or has not bound the port);
 * -EPROTO for sysfs text it cannot parse; or a read's error. Since 1.7.
 */
HPU_EXPORT int hpu_device_get_nic_port(hpu_device_t *dev, uint32_t port, struct hpu_nic_port *out);

/** Room for a process name (/proc/<pid>/comm) and NUL. */
#define HPU_COMM_MAX 32
/** hpu_process.util and engine_util before a second sample exists. */
#define HPU_UTIL_UNKNOWN 0xffffffffu

/** A snapshot of the processes using HPUs (hpu_device_list_processes()). */
typedef struct hpu_process_list hpu_process_list_t;

/**
 * struct hpu_process - one process using one HPU, owned by its list.
 *
 * Read-only for callers; @size is the number of bytes the library filled;
 * members are only ever added at the end. Counters are summed over the
 * process's distinct DRM clients (open files, told apart by drm-client-id)
 * of that device.
 */
struct hpu_process {
	uint32_t size;
	int32_t pid;
	char comm[HPU_COMM_MAX];     /* process name (/proc/<pid>/comm) */
	char pci_addr[HPU_PCI_ADDR_MAX]; /* the device, "dddd:bb:dd.f" */
	uint32_t clients;            /* distinct DRM clients of the process on the device */
	uint32_t num_engines;        /* valid entries of engine_ns / engine_util */
	uint64_t hbm_total;          /* bytes of HBM objects the process holds (drm-total-hbm) */
	uint64_t hbm_resident;       /* bytes resident (drm-resident-hbm) */
	uint64_t sample_ns;          /* interval between the two samples, 0 with one sample */
	uint32_t util;               /* mean busy share of its engines over the interval, hundredths of a percent */
	uint32_t reserved0;
	uint64_t engine_ns[HPU_MAX_ENGINES];   /* busy ns per engine index (HPU_ENGINE_INDEX_*) since the client opened (last sample) */
	uint32_t engine_util[HPU_MAX_ENGINES]; /* busy share per engine over the interval, hundredths of a percent */
};

/**
 * hpu_device_list_processes() - the processes that have @dev (or, with
 * @dev NULL, any HPU) open, from the DRM fdinfo of every process (one scan
 * of /proc for all devices).
 * @sample_ms: 0: one sample: engine_ns only, util and engine_util are
 *	HPU_UTIL_UNKNOWN. Otherwise the library samples twice, @sample_ms
 *	apart (it sleeps only when the first scan found a process), and
 *	computes the utilisation from the difference.
 * @out: receives the list, ordered by device then pid; free it with
 *	hpu_process_list_free().
 *
 * Processes whose fdinfo the caller may not read (other users' unless
 * root) are not listed. Returns 0 or -errno.
 */
HPU_EXPORT int hpu_device_list_processes(hpu_device_t *dev, uint32_t sample_ms, hpu_process_list_t **out);
/** hpu_process_list_size() - number of entries (0 for NULL). */
HPU_EXPORT size_t hpu_process_list_size(const hpu_process_list_t *list);
/** hpu_process_list_at() - entry @i, valid until the list is freed; NULL when out of range. */
HPU_EXPORT const struct hpu_process *hpu_process_list_at(const hpu_process_list_t *list, size_t i);
/** hpu_process_list_free() - free a list; NULL is a no-op. */
HPU_EXPORT void hpu_process_list_free(hpu_process_list_t *list);

/**
 * hpu_device_list_open() - open entry @i of a discovery snapshot without
 * discovering again (what hpu_open_by_index() does for each call): a tool
 * that opens every device scans /sys/class/accel once. Errors as
 * hpu_open_by_index(); -ENODEV when @i is out of range.
 */
HPU_EXPORT int hpu_device_list_open(const hpu_device_list_t *list, size_t i, hpu_device_t **out);

/* ---- Compute: TPC kernels, GEMMs and graphs (since 1.5) -------------------
 * Documentation/libhpu-compute.md is the guide; Documentation/hw/tpc.md and
 * mme.md define what the device runs.
 */

/** A TPC kernel binary loaded into the device's address space (since 1.5). */
typedef struct hpu_kernel hpu_kernel_t;
/** A recorded graph of DMA, TPC and GEMM work across engines (since 1.5). */
typedef struct hpu_graph hpu_graph_t;

/* Element types of tensors and GEMM operands: the hardware's codes (tpc.md). */
#define HPU_DTYPE_FP32 1
#define HPU_DTYPE_BF16 2
#define HPU_DTYPE_INT32 3
#define HPU_DTYPE_UINT32 4
#define HPU_DTYPE_INT16 5
#define HPU_DTYPE_UINT16 6
#define HPU_DTYPE_INT8 7
#define HPU_DTYPE_UINT8 8

/** Dimensions of a tensor and of a launch's index space. */
#define HPU_TENSOR_MAX_DIMS 5
/** Tensor and scalar arguments a kernel may take. */
#define HPU_KERNEL_MAX_TENSORS 16
#define HPU_KERNEL_MAX_SCALARS 32
/** Room for a kernel's name (at most 31 characters) and NUL. */
#define HPU_KERNEL_NAME_MAX 32

/**
 * hpu_last_error() - a message naming what the last failed call of this
 * thread found wrong in its input ("tensor 2: size[1] is 0"), or "" when
 * the call gave none. Every call that returns an int clears it first, so
 * it never shows an older call's message. Valid until this thread's next
 * libhpu call. Since 1.5.
 */
HPU_EXPORT const char *hpu_last_error(void);

/** hpu_dtype_size() - bytes of one element of an HPU_DTYPE_*, 0 when unknown. */
HPU_EXPORT size_t hpu_dtype_size(uint32_t dtype);

/**
 * struct hpu_kernel_info - what a kernel binary declares.
 *
 * The caller sets @size to sizeof(struct hpu_kernel_info); the library
 * writes no byte at or beyond it.
 */
struct hpu_kernel_info {
	uint32_t size;          /* In/Out */
	uint32_t num_tensors;   /* tensor arguments */
	uint32_t num_scalars;   /* 32-bit scalar arguments */
	uint32_t index_dims;    /* dimensions of the index space it uses, 1..5 */
	uint32_t num_bundles;   /* code size in 64-byte bundles */
	uint32_t slm_size;      /* scalar local memory bytes */
	uint32_t vlm_size;      /* vector local memory bytes */
	uint32_t binary_size;   /* bytes of the binary */
	uint8_t tensor_dtype[HPU_KERNEL_MAX_TENSORS]; /* 0: any, else the HPU_DTYPE_* it requires */
	char name[HPU_KERNEL_NAME_MAX];
};

/**
 * hpu_kernel_load() - validate a TPC kernel binary (tpc.md, "Kernel
 * binary") and load a copy of it into @dev's address space.
 *
 * Returns 0, -ENOEXEC for a malformed binary (hpu_last_error() names the
 * rule), or another -errno.
 */
HPU_EXPORT int hpu_kernel_load(hpu_device_t *dev, const void *data, size_t size, hpu_kernel_t **out);
/** hpu_kernel_load_file() - hpu_kernel_load() of a file's contents. */
HPU_EXPORT int hpu_kernel_load_file(hpu_device_t *dev, const char *path, hpu_kernel_t **out);
/**
 * hpu_kernel_get() - a kernel of the library that ships inside libhpu, by
 * name ("add_f32"; libhpu/kernels/README.md lists them). The device keeps
 * one copy of each; every handle must still be destroyed. -ENOENT when no
 * kernel has that name.
 */
HPU_EXPORT int hpu_kernel_get(hpu_device_t *dev, const char *name, hpu_kernel_t **out);
/** hpu_kernel_library_size() - number of kernels in the built-in library. */
HPU_EXPORT size_t hpu_kernel_library_size(void);
/** hpu_kernel_library_name() - name of built-in kernel @i (sorted), NULL beyond the end. */
HPU_EXPORT const char *hpu_kernel_library_name(size_t i);
/** hpu_kernel_get_info() - what the binary declares. */
HPU_EXPORT int hpu_kernel_get_info(const hpu_kernel_t *k, struct hpu_kernel_info *out);
/**
 * hpu_kernel_destroy() - drop a handle. Command lists and graphs that
 * recorded a launch of the kernel keep its binary until they no longer
 * need it. As buffers, destroy every handle (and those lists and graphs)
 * before hpu_close(). NULL is a no-op.
 */
HPU_EXPORT int hpu_kernel_destroy(hpu_kernel_t *k);

/**
 * struct hpu_tensor - a tensor argument of a launch: up to five
 * dimensions, dimension 0 the innermost (the last axis of a row-major
 * array), strides in elements (0 broadcasts).
 * @va: device address of element (0, 0, 0, 0, 0).
 * @dtype: HPU_DTYPE_*.
 * @ndims: 1 to HPU_TENSOR_MAX_DIMS; sizes and strides beyond it are 0.
 * @pad: the padding value's bits, read for lanes beyond the tensor (the
 *	row kernels need -inf before a max: libhpu/kernels/README.md).
 * @reserved: zero.
 */
struct hpu_tensor {
	uint64_t va;
	uint32_t dtype;
	uint32_t ndims;
	uint32_t sizes[HPU_TENSOR_MAX_DIMS];
	uint32_t strides[HPU_TENSOR_MAX_DIMS];
	uint32_t pad;
	uint32_t reserved;
};

/**
 * hpu_tensor_init() - fill @t for a dense tensor at @va: @sizes[0] is the
 * innermost dimension, strides follow from the sizes, pad 0. Returns 0 or
 * -EINVAL (a NULL pointer, a bad dtype, ndims out of range, a size 0).
 */
HPU_EXPORT int hpu_tensor_init(struct hpu_tensor *t, uint64_t va, uint32_t dtype, uint32_t ndims,
			       const uint32_t *sizes);

/**
 * struct hpu_launch - the arguments of one kernel launch.
 * @size: sizeof(struct hpu_launch).
 * @num_tensors: entries of @tensors; must equal the kernel's.
 * @tensors: the tensor arguments, in the kernel's order.
 * @scalars: @num_scalars 32-bit words (FP32 values as their bits).
 * @num_scalars: must equal the kernel's.
 * @index_size: the index space; 0 is read as 1; entries at and beyond
 *	the kernel's index_dims must be 1.
 * @seed: the launch's random-number key (dropout).
 */
struct hpu_launch {
	uint32_t size;
	uint32_t num_tensors;
	const struct hpu_tensor *tensors;
	const uint32_t *scalars;
	uint32_t num_scalars;
	uint32_t index_size[HPU_TENSOR_MAX_DIMS];
	uint64_t seed;
};

/**
 * hpu_cmd_launch() - record a launch of @k (a TPC_LAUNCH packet and its
 * descriptor, which the list keeps) into a command list for a TPC queue.
 * The arguments are checked as the device would check them: -EINVAL with
 * hpu_last_error() naming the argument and the rule.
 */
HPU_EXPORT int hpu_cmd_launch(hpu_cmdlist_t *cl, const hpu_kernel_t *k, const struct hpu_launch *l);

/* hpu_gemm.flags */
#define HPU_GEMM_TRANS_A (1u << 0)  /* op(A) = A^T: A is stored k x m */
#define HPU_GEMM_TRANS_B (1u << 1)  /* op(B) = B^T: B is stored n x k */
#define HPU_GEMM_BIAS (1u << 2)     /* add bias[n] (FP32) to every row */
/* hpu_gemm.act */
#define HPU_GEMM_ACT_NONE 0
#define HPU_GEMM_ACT_RELU 1
#define HPU_GEMM_ACT_GELU_TANH 2

/**
 * struct hpu_gemm - D[b] = act(alpha op(A[b]) op(B[b]) + beta C[b] + bias)
 * for b below @batch, row-major matrices (mme.md).
 * @size: sizeof(struct hpu_gemm).
 * @in_dtype: HPU_DTYPE_FP32 or HPU_DTYPE_BF16, of A and B.
 * @out_dtype: HPU_DTYPE_FP32 or HPU_DTYPE_BF16, of C and D.
 * @m, @n, @k: op(A) is m x k, op(B) k x n, D m x n.
 * @batch: number of GEMMs; 0 is read as 1.
 * @lda, @ldb, @ldc, @ldd: elements from one stored row to the next; 0
 *	means packed (the stored row length).
 * @a, @b, @c, @d, @bias: device addresses; @c read only if @beta is not
 *	zero, @bias only with HPU_GEMM_BIAS.
 * @stride_a .. @stride_d: elements from one batch member to the next (0:
 *	every member uses the first, not allowed for D when @batch > 1).
 */
struct hpu_gemm {
	uint32_t size;
	uint32_t flags;
	uint32_t in_dtype;
	uint32_t out_dtype;
	uint32_t act;
	uint32_t m;
	uint32_t n;
	uint32_t k;
	uint32_t batch;
	uint32_t lda;
	uint32_t ldb;
	uint32_t ldc;
	uint32_t ldd;
	uint32_t reserved;  /* zero */
	uint64_t a;
	uint64_t b;
	uint64_t c;
	uint64_t d;
	uint64_t bias;
	uint64_t stride_a;
	uint64_t stride_b;
	uint64_t stride_c;
	uint64_t stride_d;
	float alpha;
	float beta;
};

/**
 * hpu_cmd_gemm() - record a GEMM (an MME_GEMM packet and its descriptor)
 * into a command list for an MME queue. -EINVAL, with hpu_last_error(),
 * for what the device would refuse.
 */
HPU_EXPORT int hpu_cmd_gemm(hpu_cmdlist_t *cl, const struct hpu_gemm *g);

/**
 * hpu_queue_launch() / hpu_queue_gemm() - eager: record and submit one
 * launch (TPC queue) or GEMM (MME queue) after @waits, like
 * hpu_queue_submit(). @out may be NULL. On a queue of another engine class
 * -EINVAL, with hpu_last_error() (the device would refuse the packet).
 */
HPU_EXPORT int hpu_queue_launch(hpu_queue_t *q, const hpu_kernel_t *k, const struct hpu_launch *l,
				const hpu_fence_t *const *waits, size_t num_waits, hpu_fence_t **out);
HPU_EXPORT int hpu_queue_gemm(hpu_queue_t *q, const struct hpu_gemm *g, const hpu_fence_t *const *waits,
			      size_t num_waits, hpu_fence_t **out);

/**
 * hpu_sob_alloc() - reserve one of the context's HPU_NUM_SOBS_PER_CONTEXT
 * sync objects for the caller's own SOB_UPDATE and WAIT packets; graphs
 * take theirs from the same pool. -EBUSY when none is free.
 * hpu_sob_free() returns it (-EINVAL if it was not reserved).
 */
HPU_EXPORT int hpu_sob_alloc(hpu_device_t *dev, uint32_t *sob);
HPU_EXPORT int hpu_sob_free(hpu_device_t *dev, uint32_t sob);

/**
 * hpu_graph_create() - an empty graph on @dev.
 *
 * A graph is built by adding nodes (each returns its id, >= 0); a node
 * runs after the nodes it names in @deps, which must have been added
 * before it. Nodes go to one queue per engine class (copies and memsets
 * to a DMA engine, launches to the TPC cluster, GEMMs to the MMEs), and
 * a dependency between queues becomes a sync-manager wait. At its first
 * hpu_graph_launch() the graph is compiled into one command list per
 * queue; every launch then submits those as they are (lazy mode: one
 * recorded submission per step). Launches of one graph run in order.
 * Not thread-safe.
 */
HPU_EXPORT int hpu_graph_create(hpu_device_t *dev, hpu_graph_t **out);
/** hpu_graph_destroy() - wait for the graph's launches, then free it. NULL is a no-op. */
HPU_EXPORT int hpu_graph_destroy(hpu_graph_t *g);
HPU_EXPORT int hpu_graph_add_copy(hpu_graph_t *g, uint64_t dst_va, uint64_t src_va, uint64_t size,
				  const uint32_t *deps, size_t num_deps);
HPU_EXPORT int hpu_graph_add_memset(hpu_graph_t *g, uint64_t dst_va, uint64_t pattern, uint64_t size,
				    const uint32_t *deps, size_t num_deps);
HPU_EXPORT int hpu_graph_add_launch(hpu_graph_t *g, const hpu_kernel_t *k, const struct hpu_launch *l,
				    const uint32_t *deps, size_t num_deps);
HPU_EXPORT int hpu_graph_add_gemm(hpu_graph_t *g, const struct hpu_gemm *gemm, const uint32_t *deps,
				  size_t num_deps);
/** hpu_graph_size() - number of nodes. */
HPU_EXPORT size_t hpu_graph_size(const hpu_graph_t *g);
/**
 * hpu_graph_set_scalar() - change scalar @index of launch node @node for
 * the launches that follow (a learning rate, an optimizer's step count)
 * without compiling again. -EINVAL for a node that is not a launch or an
 * index beyond its scalars.
 */
HPU_EXPORT int hpu_graph_set_scalar(hpu_graph_t *g, uint32_t node, uint32_t index, uint32_t value);
/**
 * hpu_graph_set_seed() - change the random-number key (struct hpu_launch
 * @seed) of launch node @node for the launches that follow, as
 * hpu_graph_set_scalar() does for a scalar: a step's dropout draws a new
 * mask from the same compiled graph. -EINVAL for a node that is not a
 * launch. Since 1.6.
 */
HPU_EXPORT int hpu_graph_set_seed(hpu_graph_t *g, uint32_t node, uint64_t seed);
/**
 * hpu_graph_launch() - submit the graph once, after @waits; @out (may be
 * NULL) signals when every job of the launch has ended: hpu_fence_wait()
 * and hpu_fence_status() then give the error of the job that failed first
 * (the earliest end; else 0), and hpu_fence_error_info() names that job.
 * Exported with
 * hpu_fence_export_fd() it is a sync_file of all the jobs' fences, in
 * error if one failed; as a wait of another submission, all the jobs
 * (libhpu-compute.md, "Graphs"). -EINVAL for an empty graph.
 */
HPU_EXPORT int hpu_graph_launch(hpu_graph_t *g, const hpu_fence_t *const *waits, size_t num_waits,
				hpu_fence_t **out);

#if defined(__cplusplus)
}
#endif

/* NOLINTEND(modernize-deprecated-headers,modernize-use-using) */

#endif /* HPU_HPU_H */
