/* SPDX-License-Identifier: MIT */
/*
 * hpu-abi.h - the ABI between the hpu RDMA driver (the ib_device of the NIC's
 * auxiliary device) and its rdma-core provider (tools/rdma-provider/hpu).
 *
 * The provider carries a copy of this file (the provider build copies it in);
 * both sides must agree on everything below or uverbs refuses the commands.
 * Structures added here follow the uapi rules of hpu_accel.h: explicit
 * padding to 64 bits, __u64 for pointers, reserved fields checked to be
 * zero, growth only at the end.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef _UAPI_RDMA_HPU_ABI_H_
#define _UAPI_RDMA_HPU_ABI_H_

#include <linux/types.h>

/*
 * The uverbs ABI version the ib_device reports (ib_device_ops.uverbs_abi_ver,
 * read by libibverbs from /sys/class/infiniband_verbs/uverbsN/abi_version).
 * The provider accepts exactly this version. Raise it on any incompatible
 * change of the structures below.
 */
#define HPU_IB_UVERBS_ABI_VERSION	1

/*
 * The ib_device name prefix the provider matches ("hpu_0", "hpu_1"...).
 * There is no RDMA_DRIVER_* id for an out-of-tree driver: the kernel
 * registers with RDMA_DRIVER_UNKNOWN (ib_device_ops.driver_id = 0), the
 * provider sends the same id in every ioctl and finds its devices by name.
 */
#define HPU_IB_DEVICE_NAME_PREFIX	"hpu"

#endif /* _UAPI_RDMA_HPU_ABI_H_ */
