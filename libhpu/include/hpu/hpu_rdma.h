/* SPDX-License-Identifier: MIT */
/*
 * hpu_rdma.h - RDMA with HPU memory: find the ib_device of an HPU's own NIC
 * ports and register HPU buffers (HBM included) as verbs memory regions.
 *
 * Header only, so that libhpu itself does not depend on libibverbs: a
 * program that includes this header links libibverbs (pkg-config
 * libibverbs) besides libhpu. Needs libibverbs 34 or later
 * (ibv_reg_dmabuf_mr()). Documentation/libhpu.md, "RDMA with HPU memory".
 *
 * Errors follow the verbs convention: NULL is returned and errno says why.
 */
#ifndef HPU_RDMA_H
#define HPU_RDMA_H

/*
 * A C header (C callers are the first users, runtimes and MPI transports):
 * C's headers, NULL and memset() initialisation stay when C++ includes it.
 */
/* NOLINTBEGIN(modernize-deprecated-headers,modernize-use-nullptr,cppcoreguidelines-pro-type-member-init) */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <hpu/hpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hpu_rdma_find_device() - the ib_device of @dev's own NIC ports.
 * @list: from ibv_get_device_list(); the caller frees it after it is done
 *	with the returned entry.
 * @dev: an open HPU.
 *
 * hpu_ib names its devices hpu_N in registration order, which need not
 * follow the HPUs' /dev/accel numbers; the match is by PCI address: the
 * ib_device's parent is the auxiliary device "hpu.rdma.<id>" whose parent
 * is the HPU's PCI function.
 *
 * Return: the entry of @list, or NULL with errno ENODEV (no RDMA device
 * of this HPU: hpu_ib not loaded, or a device without NIC ports) or the
 * error of hpu_device_get_info().
 */
static inline struct ibv_device *hpu_rdma_find_device(struct ibv_device **list,
						      hpu_device_t *dev)
{
	struct hpu_device_info info;
	char link[PATH_MAX + 16];
	char real[PATH_MAX];
	int ret = 0;

	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	ret = hpu_device_get_info(dev, &info);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	for (; list && *list; list++) {
		char *slash = NULL;

		if (snprintf(link, sizeof(link), "%s/device", (*list)->ibdev_path) >=
		    (int)sizeof(link))
			continue;
		if (!realpath(link, real))
			continue;
		/* real is .../<pci addr>/hpu.rdma.<id>: check both levels. */
		slash = strrchr(real, '/');
		if (!slash || strncmp(slash + 1, "hpu.rdma.", 9) != 0)
			continue;
		*slash = '\0';
		slash = strrchr(real, '/');
		if (slash && strcmp(slash + 1, info.pci_addr) == 0)
			return *list;
	}
	errno = ENODEV;
	return NULL;
}

/**
 * hpu_rdma_reg_buffer() - register part of an HPU buffer as a memory region.
 * @pd: a protection domain of the HPU's own ib_device (hpu_rdma_find_device()).
 * @buf: any buffer hpu_buffer_export_fd() exports: device memory, host
 *	buffers, user pointers (those can also be registered with
 *	ibv_reg_mr() on their address).
 * @offset, @length: the registered bytes, within hpu_buffer_size().
 * @iova: the address remote peers use for the first registered byte
 *	(hpu_buffer_va(@buf) + @offset is a natural choice).
 * @access: IBV_ACCESS_* flags.
 *
 * The buffer is exported as a dma-buf for the registration only (the fd is
 * closed before returning). HBM is mapped for the NIC as HBM: the engine
 * reaches it without crossing PCIe. Deregister with ibv_dereg_mr() before
 * the buffer is destroyed.
 *
 * Return: the MR, or NULL with errno: EINVAL for a range outside the
 * buffer, the export's error, or that of ibv_reg_dmabuf_mr() (e.g. for
 * another HPU's HBM, which this RDMA device cannot reach, or EACCES for a
 * write right on a read-only user-pointer buffer; HPU_MEM_READONLY on
 * hpu_buffer_create() limits only the creator's own device mapping).
 */
static inline struct ibv_mr *hpu_rdma_reg_buffer(struct ibv_pd *pd, hpu_buffer_t *buf,
						 uint64_t offset, size_t length,
						 uint64_t iova, int access)
{
	uint64_t size = hpu_buffer_size(buf);
	struct ibv_mr *mr = NULL;
	int fd = -1;
	int ret = 0;
	int err = 0;

	if (!pd || !buf || !length || offset > size || length > size - offset) {
		errno = EINVAL;
		return NULL;
	}
	ret = hpu_buffer_export_fd(buf, &fd);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	mr = ibv_reg_dmabuf_mr(pd, offset, length, iova, fd, access);
	err = errno;
	close(fd);
	errno = err;
	return mr;
}

#ifdef __cplusplus
}
#endif

/* NOLINTEND(modernize-deprecated-headers,modernize-use-nullptr,cppcoreguidelines-pro-type-member-init) */

#endif /* HPU_RDMA_H */
