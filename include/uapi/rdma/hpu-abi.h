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
 * Where the rings live. Every ring (send queue, receive queue, shared
 * receive queue, completion queue) and every doorbell record is memory the
 * provider allocates in its own address space and names here by its user
 * virtual address. The kernel pins it (ib_umem, charged to the process's
 * RLIMIT_MEMLOCK like any registered memory) and maps it into the device
 * address space (ASID) of the ucontext at device addresses of the kernel's
 * choosing; the provider never sees those. Kernel-allocated rings handed
 * out with mmap were the alternative: they would need DMA memory of the PCI
 * function mapped into the ASID anyway, one mmap entry per ring, and would
 * not be charged to the process. User memory keeps one mapping path for
 * rings and memory regions, lets the provider choose its allocator (huge
 * pages, NUMA node), and the engine reaches the rings through the owning
 * ASID only, so a process names nothing but its own memory.
 *
 * The only mmap is the doorbell page: one 4 KiB page of device registers
 * per ucontext (&struct hpu_ib_alloc_ucontext_resp.db_mmap_offset), mapped
 * uncached into the process that opened the ucontext. Objects created in a
 * ucontext are bound to its doorbell page: the device drops a doorbell
 * that names another page's object.
 *
 * Device formats (Documentation/hw/roce.md): WQEs, CQEs and doorbell
 * registers are the hardware's and are given at the end of this file for
 * the provider's data path; all multi-byte fields are little endian.
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
 * The ib_device name prefix ("hpu_0", "hpu_1"...). There is no
 * RDMA_DRIVER_* id for an out-of-tree driver: the kernel registers with
 * RDMA_DRIVER_UNKNOWN (ib_device_ops.driver_id = 0) and the provider sends
 * the same id in every ioctl. The provider finds its devices by the
 * modalias of their parent, the auxiliary device hpu.rdma
 * (/sys/class/infiniband/hpu_N/device/modalias, which hpu.ko provides),
 * not by name: another driver's device may be named "hpu0".
 */
#define HPU_IB_DEVICE_NAME_PREFIX	"hpu"
#define HPU_IB_MODALIAS			"auxiliary:hpu.rdma"

/* Queue geometry limits (log2), as the device checks them (roce.md). */
#define HPU_IB_CQ_LOG_ENTRIES_MIN	1
#define HPU_IB_CQ_LOG_ENTRIES_MAX	16
#define HPU_IB_WQ_LOG_ENTRIES_MIN	1
#define HPU_IB_WQ_LOG_ENTRIES_MAX	15
#define HPU_IB_SQ_LOG_STRIDE_MIN	6	/* 64 bytes */
#define HPU_IB_SQ_LOG_STRIDE_MAX	10	/* 1024 bytes */
#define HPU_IB_RQ_LOG_STRIDE_MIN	5	/* 32 bytes */
#define HPU_IB_RQ_LOG_STRIDE_MAX	10	/* 1024 bytes */
#define HPU_IB_SRQ_LOG_STRIDE_MAX	10	/* 1024 bytes, as the RQ */
#define HPU_IB_CQE_SIZE			32
#define HPU_IB_DB_PAGE_SIZE		4096

/**
 * struct hpu_ib_alloc_ucontext_req - driver data of GET_CONTEXT
 *
 * Optional: a provider may send no driver data at all. Any bytes beyond
 * this structure must be zero.
 */
struct hpu_ib_alloc_ucontext_req {
	/** @flags: In: must be 0. */
	__u32 flags;
	/** @reserved: In: must be 0. */
	__u32 reserved;
};

/**
 * struct hpu_ib_alloc_ucontext_resp - answer to GET_CONTEXT
 *
 * The kernel copies at most the provider's response length (a shorter
 * buffer gets a prefix: this structure only grows at the end).
 */
struct hpu_ib_alloc_ucontext_resp {
	/**
	 * @db_mmap_offset: Out: the offset to mmap() on the uverbs command
	 * file for the context's doorbell page (%HPU_IB_DB_PAGE_SIZE bytes,
	 * PROT_WRITE, MAP_SHARED). Only the process that allocated the
	 * context can map it.
	 */
	__u64 db_mmap_offset;
	/** @db_page: Out: the device's number of the doorbell page. */
	__u32 db_page;
	/** @cqe_size: Out: bytes of one CQE, %HPU_IB_CQE_SIZE. */
	__u32 cqe_size;
	/**
	 * @max_inline: Out: most inline bytes of an RC send WQE (stride 1024
	 * less the 64-byte header); a UD WQE carries 32 bytes fewer (its
	 * address vector). The create_qp response gives each QP's own.
	 */
	__u32 max_inline;
	/** @reserved: Out: 0. */
	__u32 reserved;
};

/**
 * struct hpu_ib_create_cq - driver data of CREATE_CQ
 *
 * The ring holds 1 << @log_entries CQEs of %HPU_IB_CQE_SIZE bytes, at
 * least the cqe the command asks for; all entries are usable (the device
 * writes entry i only while i - consumer index < entries).
 */
struct hpu_ib_create_cq {
	/** @buf_addr: In: user address of the ring, 32-byte aligned. */
	__u64 buf_addr;
	/**
	 * @db_addr: In: user address of the CQ's doorbell record, 8-byte
	 * aligned: a __u32 consumer index the provider writes, then a
	 * reserved __u32.
	 */
	__u64 db_addr;
	/** @log_entries: In: log2 of the ring's entries, 1 to 16. */
	__u32 log_entries;
	/** @flags: In: must be 0. */
	__u32 flags;
};

/**
 * struct hpu_ib_create_cq_resp - answer to CREATE_CQ
 */
struct hpu_ib_create_cq_resp {
	/** @cqn: Out: the CQ number (CQE and CQ_ARM doorbell use it). */
	__u32 cqn;
	/** @reserved: Out: 0. */
	__u32 reserved;
};

/**
 * struct hpu_ib_create_qp - driver data of CREATE_QP (RC and UD)
 *
 * The send queue has 1 << @sq_log_entries WQEs of 1 << @sq_log_stride
 * bytes, the receive queue 1 << @rq_log_entries of 1 << @rq_log_stride
 * (none when the QP has an SRQ: @rq_buf_addr, @rq_log_entries and
 * @rq_log_stride are then 0). The kernel checks that the queues hold what
 * the command's capabilities ask for (entries >= max_send_wr/max_recv_wr,
 * a stride large enough for max_send_sge/max_recv_sge and
 * max_inline_data) and answers with the capabilities they really have.
 */
struct hpu_ib_create_qp {
	/** @sq_buf_addr: In: user address of the send queue, stride-aligned. */
	__u64 sq_buf_addr;
	/** @rq_buf_addr: In: user address of the receive queue, or 0. */
	__u64 rq_buf_addr;
	/**
	 * @db_addr: In: user address of the QP's doorbell record, 8-byte
	 * aligned: __u32 SQ producer index, __u32 RQ producer index, both
	 * written by the provider.
	 */
	__u64 db_addr;
	/** @sq_log_entries: In: 1 to 15. */
	__u8 sq_log_entries;
	/** @sq_log_stride: In: 6 to 10. */
	__u8 sq_log_stride;
	/** @rq_log_entries: In: 1 to 15, 0 with an SRQ. */
	__u8 rq_log_entries;
	/** @rq_log_stride: In: 5 to 10, 0 with an SRQ. */
	__u8 rq_log_stride;
	/** @flags: In: must be 0. */
	__u32 flags;
};

/**
 * struct hpu_ib_create_qp_resp - answer to CREATE_QP
 */
struct hpu_ib_create_qp_resp {
	/** @qpn: Out: the QP number (2 to 4095), for the SQ_DB doorbell. */
	__u32 qpn;
	/** @max_inline: Out: most inline bytes one send WQE can carry. */
	__u32 max_inline;
};

/**
 * struct hpu_ib_create_srq - driver data of CREATE_SRQ
 */
struct hpu_ib_create_srq {
	/** @buf_addr: In: user address of the ring, stride-aligned. */
	__u64 buf_addr;
	/**
	 * @db_addr: In: user address of the SRQ's doorbell record, 8-byte
	 * aligned: __u32 producer index written by the provider, __u32
	 * consumer index written by the device.
	 */
	__u64 db_addr;
	/** @log_entries: In: 1 to 15. */
	__u8 log_entries;
	/** @log_stride: In: 5 to 10. */
	__u8 log_stride;
	/** @reserved: In: must be 0. */
	__u16 reserved;
	/** @flags: In: must be 0. */
	__u32 flags;
};

/**
 * struct hpu_ib_create_srq_resp - answer to CREATE_SRQ
 */
struct hpu_ib_create_srq_resp {
	/** @srqn: Out: the SRQ number. */
	__u32 srqn;
	/** @reserved: Out: 0. */
	__u32 reserved;
};

/**
 * struct hpu_ib_create_ah_resp - answer to CREATE_AH (UD address handles)
 *
 * The kernel resolves the destination MAC from the AH's GID (neighbour
 * table); the provider puts it in the UD address vector of each WQE.
 */
struct hpu_ib_create_ah_resp {
	/** @dmac: Out: destination MAC, wire order. */
	__u8 dmac[6];
	/** @reserved: Out: 0. */
	__u8 reserved[2];
};

/* ---- Device formats (Documentation/hw/roce.md), for the data path ---- */

/* Doorbell page registers (32-bit writes). */
#define HPU_IB_DB_SQ			0x000	/* write the QPN */
#define HPU_IB_DB_CQ_ARM		0x008	/* CQN | solicited-only bit */
#define HPU_IB_DB_CQ_ARM_SOLICITED	0x80000000U

/* Send WQE opcodes and flags. */
#define HPU_IB_WQE_SEND			0
#define HPU_IB_WQE_SEND_IMM		1
#define HPU_IB_WQE_RDMA_WRITE		2
#define HPU_IB_WQE_RDMA_WRITE_IMM	3
#define HPU_IB_WQE_RDMA_READ		4
#define HPU_IB_WQE_F_SIGNALED		0x01
#define HPU_IB_WQE_F_SOLICITED		0x02
#define HPU_IB_WQE_F_FENCE		0x04
#define HPU_IB_WQE_F_INLINE		0x08

/**
 * struct hpu_ib_send_wqe - header of a send WQE (64 bytes)
 *
 * For UD a &struct hpu_ib_ud_av follows, then the SGEs
 * (&struct hpu_ib_sge) or the inline data.
 */
struct hpu_ib_send_wqe {
	/** @opcode: HPU_IB_WQE_SEND... */
	__u8 opcode;
	/** @flags: HPU_IB_WQE_F_... */
	__u8 flags;
	/** @num_sge: SGEs that follow, 0 to 32. */
	__u8 num_sge;
	/** @reserved0: 0. */
	__u8 reserved0;
	/** @imm: immediate data, network order as given. */
	__be32 imm;
	/** @wr_id: returned in the completion. */
	__u64 wr_id;
	/** @remote_addr: RDMA: remote virtual address. */
	__u64 remote_addr;
	/** @rkey_or_qkey: RDMA: the rkey; UD: the Q_Key. */
	__u32 rkey_or_qkey;
	/** @dest_qpn: UD: destination QPN. */
	__u32 dest_qpn;
	/** @inline_len: INLINE: bytes of data after the header (and AV). */
	__u32 inline_len;
	/** @reserved1: 0. */
	__u8 reserved1[28];
};

/**
 * struct hpu_ib_ud_av - UD address vector (32 bytes, after the header)
 */
struct hpu_ib_ud_av {
	/** @dmac: destination MAC (&struct hpu_ib_create_ah_resp.dmac). */
	__u8 dmac[6];
	/** @sgid_index: source GID index. */
	__u8 sgid_index;
	/** @hop_limit: IP hop limit / TTL. */
	__u8 hop_limit;
	/** @traffic_class: IP traffic class / TOS. */
	__u8 traffic_class;
	/** @reserved: 0. */
	__u8 reserved[3];
	/** @flow_label: IPv6 flow label. */
	__u32 flow_label;
	/** @dgid: destination GID, wire order (IPv4-mapped for IPv4). */
	__u8 dgid[16];
};

/**
 * struct hpu_ib_sge - scatter/gather entry (16 bytes)
 */
struct hpu_ib_sge {
	/** @addr: virtual address within the MR. */
	__u64 addr;
	/** @length: bytes. */
	__u32 length;
	/** @lkey: the MR's lkey. */
	__u32 lkey;
};

/**
 * struct hpu_ib_recv_wqe - header of a receive WQE (RQ or SRQ, 16 bytes)
 *
 * The SGEs follow.
 */
struct hpu_ib_recv_wqe {
	/** @wr_id: returned in the completion. */
	__u64 wr_id;
	/** @num_sge: SGEs that follow. */
	__u8 num_sge;
	/** @reserved: 0. */
	__u8 reserved[7];
};

#define HPU_IB_CQE_F_IMM		0x01
#define HPU_IB_CQE_F_GRH		0x02
#define HPU_IB_CQE_F_WQE_IDX		0x04
#define HPU_IB_CQE_OWNER		0x01

/**
 * struct hpu_ib_cqe - completion queue entry (32 bytes)
 *
 * Entry i is valid when (@owner & HPU_IB_CQE_OWNER) differs from
 * (i / entries) & 1, i.e. the device writes the inverse of the pass bit.
 */
struct hpu_ib_cqe {
	/** @wr_id: of the completed WQE. */
	__u64 wr_id;
	/** @byte_len: receives and RDMA READ: bytes. */
	__u32 byte_len;
	/** @imm: immediate data (HPU_IB_CQE_F_IMM). */
	__be32 imm;
	/** @qpn_opcode: bits 23:0 QPN, 31:24 the ibv_wc_opcode. */
	__u32 qpn_opcode;
	/** @status: the ibv_wc_status. */
	__u8 status;
	/** @flags: HPU_IB_CQE_F_... */
	__u8 flags;
	/**
	 * @wqe_idx: with HPU_IB_CQE_F_WQE_IDX (every send completion), bits
	 * 15:0 of the completed send WQE's index (the producer count at which
	 * it was posted); 0 otherwise.
	 */
	__u16 wqe_idx;
	/** @src_qp: UD receives: source QPN. */
	__u32 src_qp;
	/** @reserved1: 0. */
	__u8 reserved1[3];
	/** @owner: bit 0 the owner bit. */
	__u8 owner;
};

#endif /* _UAPI_RDMA_HPU_ABI_H_ */
