/* SPDX-License-Identifier: MIT */
/*
 * hpu verbs provider: the objects libibverbs hands back and forth.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_PROVIDER_H
#define HPU_PROVIDER_H

#include <infiniband/driver.h>

/* One per kernel ib_device that matched (hpu_0, hpu_1...). */
struct hpu_device {
	struct verbs_device vdev;
	unsigned int abi_version;	/* the kernel's uverbs ABI version */
};

/* One per ibv_open_device(). */
struct hpu_context {
	struct verbs_context vctx;
};

static inline struct hpu_device *hpu_dev(struct ibv_device *ibdev)
{
	return container_of(verbs_get_device(ibdev), struct hpu_device, vdev);
}

static inline struct hpu_context *hpu_ctx(struct ibv_context *ibctx)
{
	return container_of(verbs_get_ctx(ibctx), struct hpu_context, vctx);
}

#endif /* HPU_PROVIDER_H */
