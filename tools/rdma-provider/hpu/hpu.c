// SPDX-License-Identifier: MIT
/*
 * hpu verbs provider for rdma-core: user space of the hpu NIC's RoCE v2
 * engine (Documentation/rdma.md).
 *
 * This is the skeleton the data path grows into. It registers with
 * libibverbs, claims the kernel's hpu ib_devices by name (the kernel driver
 * registers with RDMA_DRIVER_UNKNOWN: there is no driver id for an
 * out-of-tree driver, include/uapi/rdma/hpu-abi.h), opens a context through
 * the generic GET_CONTEXT command and answers the generic queries (device,
 * port, protection domains) through the kernel. Every object of the data
 * path (memory regions, completion queues, queue pairs, shared receive
 * queues, address handles) is refused with EOPNOTSUPP until the RoCE engine
 * and its ABI exist; the operations not listed in hpu_ctx_ops are
 * libibverbs' own stand-ins, which fail with EOPNOTSUPP too.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>
#include <infiniband/verbs.h>

#include "hpu-abi.h"
#include "hpu.h"

/* The generic queries: nothing device-specific travels with them yet. */

static int hpu_query_device_ex(struct ibv_context *ibctx,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size,
				       &resp, &resp_size);
	if (ret)
		return ret;

	/* The kernel reports the firmware version as 16-bit fields
	 * major.minor.patch in the low 48 bits of fw_ver.
	 */
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int hpu_query_port(struct ibv_context *ibctx, uint8_t port,
			  struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *hpu_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct ibv_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	ret = ibv_cmd_alloc_pd(ibctx, pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return pd;
}

static int hpu_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

/*
 * The data path's entry points: refused until the RoCE engine lands. Each
 * says so in the verbs log (VERBS_LOG_LEVEL=4 VERBS_LOG_FILE=/dev/stderr).
 */
#define HPU_REFUSE(ibctx, what)						\
	do {								\
		verbs_debug(verbs_get_ctx(ibctx),			\
			    "hpu: %s: not supported yet\n", what);	\
		errno = EOPNOTSUPP;					\
	} while (0)

static struct ibv_mr *hpu_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access)
{
	HPU_REFUSE(pd->context, "reg_mr");
	return NULL;
}

static struct ibv_mr *hpu_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access)
{
	HPU_REFUSE(pd->context, "reg_dmabuf_mr");
	return NULL;
}

static struct ibv_cq *hpu_create_cq(struct ibv_context *ibctx, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector)
{
	HPU_REFUSE(ibctx, "create_cq");
	return NULL;
}

static struct ibv_cq_ex *hpu_create_cq_ex(struct ibv_context *ibctx,
					  struct ibv_cq_init_attr_ex *attr)
{
	HPU_REFUSE(ibctx, "create_cq_ex");
	return NULL;
}

static struct ibv_qp *hpu_create_qp(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr)
{
	HPU_REFUSE(pd->context, "create_qp");
	return NULL;
}

static struct ibv_qp *hpu_create_qp_ex(struct ibv_context *ibctx,
				       struct ibv_qp_init_attr_ex *attr)
{
	HPU_REFUSE(ibctx, "create_qp_ex");
	return NULL;
}

static struct ibv_srq *hpu_create_srq(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr)
{
	HPU_REFUSE(pd->context, "create_srq");
	return NULL;
}

static struct ibv_ah *hpu_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	HPU_REFUSE(pd->context, "create_ah");
	return NULL;
}

static void hpu_free_context(struct ibv_context *ibctx)
{
	struct hpu_context *ctx = hpu_ctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops hpu_ctx_ops = {
	.alloc_pd = hpu_alloc_pd,
	.create_ah = hpu_create_ah,
	.create_cq = hpu_create_cq,
	.create_cq_ex = hpu_create_cq_ex,
	.create_qp = hpu_create_qp,
	.create_qp_ex = hpu_create_qp_ex,
	.create_srq = hpu_create_srq,
	.dealloc_pd = hpu_dealloc_pd,
	.free_context = hpu_free_context,
	.query_device_ex = hpu_query_device_ex,
	.query_port = hpu_query_port,
	.reg_dmabuf_mr = hpu_reg_dmabuf_mr,
	.reg_mr = hpu_reg_mr,
};

static struct verbs_context *hpu_alloc_context(struct ibv_device *ibdev,
					       int cmd_fd, void *private_data)
{
	struct ib_uverbs_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct hpu_context *ctx;
	int err;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	if (ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
				&resp, sizeof(resp))) {
		err = errno;
		verbs_err(&ctx->vctx, "hpu: %s: GET_CONTEXT failed: %s\n",
			  ibdev->name, strerror(err));
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		errno = err;
		return NULL;
	}

	verbs_set_ops(&ctx->vctx, &hpu_ctx_ops);
	return &ctx->vctx;
}

static struct verbs_device *hpu_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct hpu_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	dev->abi_version = sysfs_dev->abi_ver;
	return &dev->vdev;
}

static void hpu_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct hpu_device, vdev));
}

/* Matched by name only (see the header comment): "hpu" then anything. */
static const struct verbs_match_ent hpu_match_table[] = {
	VERBS_NAME_MATCH(HPU_IB_DEVICE_NAME_PREFIX, NULL),
	{}
};

static const struct verbs_device_ops hpu_dev_ops = {
	.name = "hpu",
	.match_min_abi_version = HPU_IB_UVERBS_ABI_VERSION,
	.match_max_abi_version = HPU_IB_UVERBS_ABI_VERSION,
	.match_table = hpu_match_table,
	.alloc_device = hpu_alloc_device,
	.uninit_device = hpu_uninit_device,
	.alloc_context = hpu_alloc_context,
};

PROVIDER_DRIVER(hpu, hpu_dev_ops);
