/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hpu_ib: the ib_device of the HPU's RoCE v2 engine, an auxiliary driver
 * of "hpu.rdma.<id>" (Documentation/driver/rdma.md).
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef __HPU_IB_H__
#define __HPU_IB_H__

#include <linux/dma-direction.h>
#include <linux/idr.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/xarray.h>

#include <rdma/ib_verbs.h>

#include "hpu_regs.h"

struct auxiliary_device;
struct mm_struct;
struct hpu_rdma_as;

/* The event ring: entries the driver gives it. */
#define HPU_IB_EQ_ENTRIES		256
/* Host addresses the device reaches in ASID 0 carry bit 63 (nic.md). */
#define HPU_IB_HOST_ADDR		BIT_ULL(63)
/* CMD_STATUS polling: the spec promises < 10 ms; TCG guests are slower. */
#define HPU_IB_CMD_TIMEOUT_US		200000

/**
 * enum hpu_ib_quota_kind - the objects counted against the per-context and
 *	per-user limits (module parameters ctx_max_* and user_max_*)
 * @HPU_IB_QUOTA_QP: queue pairs.
 * @HPU_IB_QUOTA_CQ: completion queues.
 * @HPU_IB_QUOTA_SRQ: shared receive queues.
 * @HPU_IB_QUOTA_MR: memory regions.
 * @HPU_IB_QUOTA_PD: protection domains (numbers only, but device-wide).
 * @HPU_IB_QUOTA_AH: address handles (kernel memory only).
 * @HPU_IB_QUOTA_KINDS: how many kinds.
 */
enum hpu_ib_quota_kind {
	HPU_IB_QUOTA_QP,
	HPU_IB_QUOTA_CQ,
	HPU_IB_QUOTA_SRQ,
	HPU_IB_QUOTA_MR,
	HPU_IB_QUOTA_PD,
	HPU_IB_QUOTA_AH,
	HPU_IB_QUOTA_KINDS
};

/**
 * struct hpu_ib_user - what one user id holds of the device through all of
 *	its contexts
 * @uid: the effective user id that opened the contexts.
 * @ref: contexts counted against it; taken and dropped under
 *	&hpu_ib_dev.users_lock, which also keeps it in &hpu_ib_dev.users.
 * @n: objects per &enum hpu_ib_quota_kind (atomics: no lock).
 */
struct hpu_ib_user {
	kuid_t uid;
	refcount_t ref;
	atomic_t n[HPU_IB_QUOTA_KINDS];
};

/**
 * struct hpu_ib_port - one port
 * @regs: the port's RoCE registers.
 * @cnt_lock: serialises counter reads (the low word latches the high one).
 */
struct hpu_ib_port {
	void __iomem *regs;
	spinlock_t cnt_lock;	/* counter latch */
};

/**
 * struct hpu_ib_dev - the ib_device of one HPU
 * @ibdev: the ib_device; must stay first (ib_alloc_device()).
 * @adev: the auxiliary device bound.
 * @dma_dev: the PCI function (DMA mapping, netdev matching).
 * @regs: the engine's control block.
 * @num_ports: ports.
 * @ports: per port.
 * @max_qp: QP table entries (QPNs 2..max_qp-1); @max_cq, @max_srq,
 *	@max_mr, @max_wr, @max_cqe, @max_sge likewise from the capability
 *	registers, constant after probe.
 * @max_cq: see @max_qp.
 * @max_srq: see @max_qp.
 * @max_mr: see @max_qp.
 * @max_wr: see @max_qp.
 * @max_cqe: see @max_qp.
 * @max_sge: see @max_qp.
 * @num_db_pages: doorbell pages.
 * @cmd_lock: serialises the command interface (CMD_DATA, CMD_INDEX, CMD,
 *	CMD_STATUS) and protects @wedged.
 * @wedged: a command did not complete in time: the engine may still be
 *	running it, no further command is issued and objects whose DESTROY
 *	did not complete keep their memory.
 * @eq_lock: serialises reading the event ring (the event thread, and
 *	hpu_ib_eq_drain() when an object is retired); protects @eq_ci.
 * @eq: the event ring (coherent DMA memory), @eq_dma its bus address,
 *	@eq_ci the next entry to read.
 * @eq_dma: see @eq.
 * @eq_ci: see @eq.
 * @irq: the event queue's interrupt.
 * @nb: the netdevice notifier finding the ports' netdevs (hpu_en.ko's,
 *	tied to the ports with ib_device_set_netdev(): ib_core keeps them).
 * @registered: the ib_device is registered: port events may be
 *	dispatched. Written under rtnl (the notifier reads it under rtnl),
 *	read with READ_ONCE() by the event thread and @rescan_work.
 * @rescan_work: re-reads every port's GIDs after a port's netdev
 *	registered (rdma_roce_rescan_device() takes rtnl, which the notifier
 *	holds); scheduled only while @registered, cancelled after it is
 *	cleared.
 * @pd_ida: PD numbers; @db_ida doorbell pages; @qp_ida, @cq_ida,
 *	@srq_ida, @mr_ida the table indexes (each IDA has its own lock).
 * @db_ida: see @pd_ida.
 * @qp_ida: see @pd_ida.
 * @cq_ida: see @pd_ida.
 * @srq_ida: see @pd_ida.
 * @mr_ida: see @pd_ida.
 * @next_qpn: where the next QPN search starts: QPNs are handed out
 *	cyclically, so a QPN just freed is not reused at once (completions
 *	of the old QP a process has not polled yet must not pass for the new
 *	one's); read and written with READ_ONCE()/WRITE_ONCE(), a race only
 *	moves the start.
 * @qps: QPN -> &struct hpu_ib_qp, for events; @cqs, @srqs likewise. An
 *	object is stored once CREATE succeeded and erased before its
 *	memory and number go (after DESTROY, then the event ring is drained:
 *	an event of the old object never reaches a new one of its number).
 * @cqs: see @qps.
 * @srqs: see @qps.
 * @mr_variant: per MR index, the variant of its next key, under the
 *	index's ownership (only the holder of an index from @mr_ida
 *	touches its byte).
 * @users_lock: protects @users and the references of its entries.
 * @users: user id (in the initial namespace) -> &struct hpu_ib_user, for
 *	every user with a counted context open.
 * @kept_lock: protects @kept.
 * @kept: &struct hpu_ib_upin of objects whose DESTROY (or CREATE) the engine
 *	did not confirm, or whose ASID invalidation failed: the engine may still
 *	reach their pages, which stay pinned and mapped until hpu_ib_remove()
 *	has disabled the engine (clearing its ENABLE destroys every object, as a
 *	reset does).
 */
struct hpu_ib_dev {
	struct ib_device ibdev;
	struct auxiliary_device *adev;
	struct device *dma_dev;
	void __iomem *regs;
	unsigned int num_ports;
	struct hpu_ib_port ports[HPU_NIC_MAX_PORTS];
	u32 max_qp, max_cq, max_srq, max_mr, max_wr, max_cqe, max_sge;
	unsigned int num_db_pages;
	/* see above */
	struct mutex cmd_lock;
	bool wedged;
	struct mutex eq_lock;	/* see above */
	void *eq;
	dma_addr_t eq_dma;
	u32 eq_ci;
	int irq;
	struct notifier_block nb;
	bool registered;
	struct work_struct rescan_work;
	struct ida pd_ida, db_ida, qp_ida, cq_ida, srq_ida, mr_ida;
	u32 next_qpn;
	struct xarray qps, cqs, srqs;
	u8 *mr_variant;
	struct mutex users_lock;	/* protects users */
	struct xarray users;
	struct mutex kept_lock;		/* protects kept */
	struct list_head kept;
};

/**
 * struct hpu_ib_ucontext - a process's context
 * @ibuc: the ib_ucontext.
 * @as: its RDMA address space (ASID).
 * @db_page: its doorbell page.
 * @db_entry: the mmap entry of the doorbell page.
 * @owner: the process's mm: only it may map the doorbell page.
 * @leaked: an object's DESTROY did not complete, or its CREATE timed out: the engine may still
 *	reach the address space, which is then quarantined.
 * @user: the user the context counts against, or NULL (opened with
 *	CAP_SYS_ADMIN, as hpu.ko's own context limits).
 * @n: objects of the context per &enum hpu_ib_quota_kind, against the
 *	ctx_max_* parameters (atomics: no lock).
 *
 * Constant after creation except @leaked (set once, read at teardown
 * when no object is left) and the counts.
 */
struct hpu_ib_ucontext {
	struct ib_ucontext ibuc;
	struct hpu_rdma_as *as;
	u32 db_page;
	struct rdma_user_mmap_entry *db_entry;
	struct mm_struct *owner;
	bool leaked;
	struct hpu_ib_user *user;
	atomic_t n[HPU_IB_QUOTA_KINDS];
};

/**
 * struct hpu_ib_mmap_entry - the doorbell page's mmap entry
 * @rdma: the core's entry.
 * @addr: the page's physical address.
 */
struct hpu_ib_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	phys_addr_t addr;
};

/**
 * struct hpu_ib_pd - a protection domain
 * @ibpd: the core's PD.
 * @pdn: its number (device-wide, from &hpu_ib_dev.pd_ida).
 * @uc: the user context it is counted against, NULL for a kernel PD.
 */
struct hpu_ib_pd {
	struct ib_pd ibpd;
	u32 pdn;
	struct hpu_ib_ucontext *uc;
};

/**
 * struct hpu_ib_ah - an address handle (user only)
 * @ibah: the core's AH.
 * @uc: the user context it is counted against.
 */
struct hpu_ib_ah {
	struct ib_ah ibah;
	struct hpu_ib_ucontext *uc;
};

/**
 * struct hpu_ib_upin - user pages pinned and DMA-mapped by hpu_ib itself
 * @kept: in &hpu_ib_dev.kept once the engine may reach the pages for good.
 * @mm: the mm @npages are counted against (pinned_vm), held by mmgrab().
 * @pages: the pinned pages, from the one holding the start address.
 * @npages: number of @pages.
 * @sgt: @pages, DMA-mapped against &hpu_ib_dev.dma_dev without the CPU
 *	sync (done explicitly).
 * @dir: %DMA_BIDIRECTIONAL, or %DMA_TO_DEVICE for read-only pages.
 * @writable: pinned with FOLL_WRITE; the pages are dirtied at unpin.
 */
struct hpu_ib_upin {
	struct list_head kept;
	struct mm_struct *mm;
	struct page **pages;
	unsigned long npages;
	struct sg_table sgt;
	enum dma_data_direction dir;
	bool writable;
};

/**
 * struct hpu_ib_umap - user memory pinned and mapped into the ASID
 * @pin: the pinned pages, or NULL (a dma-buf or hpu buffer mapping).
 * @map_va: start of the mapping in the ASID.
 * @dva: device address of the user address it was made for.
 */
struct hpu_ib_umap {
	struct hpu_ib_upin *pin;
	u64 map_va;
	u64 dva;
};

struct hpu_ib_mr {
	struct ib_mr ibmr;
	struct hpu_ib_ucontext *uc;
	u32 index;
	struct hpu_ib_umap map;
};

struct hpu_ib_cq {
	struct ib_cq ibcq;
	struct hpu_ib_ucontext *uc;
	u32 cqn;
	struct hpu_ib_umap ring, db;
};

struct hpu_ib_srq {
	struct ib_srq ibsrq;
	struct hpu_ib_ucontext *uc;
	u32 srqn;
	u32 limit;
	u32 max_wr, max_sge;
	struct hpu_ib_umap ring, db;
};

/**
 * struct hpu_ib_qp - a QP
 * @ibqp: the ib_qp.
 * @uc: its context.
 * @qpn: its number, the table index.
 * @sq: its send queue, mapped.
 * @rq: its receive queue, mapped (none with an SRQ).
 * @db: its doorbell record, mapped.
 * @cap: what it holds (for query_qp).
 * @lock: protects @attr and @state (modify and query).
 * @attr: the attributes last set.
 * @state: the state last set.
 */
struct hpu_ib_qp {
	struct ib_qp ibqp;
	struct hpu_ib_ucontext *uc;
	u32 qpn;
	struct hpu_ib_umap sq, rq, db;
	struct ib_qp_cap cap;
	/* see above */
	struct mutex lock;
	struct ib_qp_attr attr;
	enum ib_qp_state state;
};

static inline struct hpu_ib_dev *to_hdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct hpu_ib_dev, ibdev);
}

/* hpu_ib_cmd.c */
int hpu_ib_cmd(struct hpu_ib_dev *dev, u32 op, u32 type, u32 index, void *image);
int hpu_ib_eq_init(struct hpu_ib_dev *dev);
void hpu_ib_eq_fini(struct hpu_ib_dev *dev);
void hpu_ib_eq_drain(struct hpu_ib_dev *dev);

/* hpu_ib_verbs.c */
extern const struct ib_device_ops hpu_ib_verbs_ops;
struct hpu_ib_ucontext *udata_huc(struct ib_udata *udata);
int hpu_ib_udata_in(struct ib_udata *udata, void *req, size_t len,
		    size_t min_len);
int hpu_ib_udata_out(struct ib_udata *udata, const void *resp, size_t len);
int hpu_ib_quota_get(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
		     enum hpu_ib_quota_kind kind);
void hpu_ib_quota_put(struct hpu_ib_ucontext *uc, enum hpu_ib_quota_kind kind);
int hpu_ib_umap_get(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
		    u64 addr, size_t len, bool writable,
		    struct hpu_ib_umap *map);
void hpu_ib_umap_keep(struct hpu_ib_dev *dev, struct hpu_ib_umap *map);
void hpu_ib_kept_release(struct hpu_ib_dev *dev);
void hpu_ib_umap_put(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
		     struct hpu_ib_umap *map);
bool hpu_ib_obj_retire(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
		       u32 type, struct xarray *xa, u32 index, bool created);
bool hpu_ib_create_failed(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
			  u32 type, struct xarray *xa, u32 index, int ret);
u32 to_pdn(struct ib_pd *ibpd);

/* hpu_ib_qp.c */
int hpu_ib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		     struct ib_udata *udata);
int hpu_ib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_udata *udata);
int hpu_ib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_qp_init_attr *init);
int hpu_ib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/* hpu_ib_main.c */
void hpu_ib_port_event(struct hpu_ib_dev *dev, unsigned int port,
		       bool active);
u64 hpu_ib_port_counter(struct hpu_ib_dev *dev, unsigned int port,
			unsigned int i);

#endif /* __HPU_IB_H__ */
