// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu_ib: verbs of user contexts: PDs, the doorbell page, memory regions,
 * CQs, QPs, SRQs and address handles (Documentation/driver/rdma.md). Only
 * user-space objects: the data path is the provider's, and no kernel ULP
 * uses the device (no post_send, poll_cq...: kverbs_provider is false).
 *
 * Every ring and doorbell record is user memory (include/uapi/rdma/
 * hpu-abi.h): pinned and DMA-mapped by hpu_ib_pin_user() and mapped into
 * the ucontext's RDMA address space, whose ASID the engine objects carry.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/capability.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/unaligned.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "hpu_ib.h"
#include "hpu_rdma.h"
#include "hpu-abi.h"

/*
 * Limits on the objects of one context (ctx_max_*) and of one user through
 * all of its contexts (user_max_*), per &enum hpu_ib_quota_kind. Written by
 * root through the module parameters, read with READ_ONCE(): a change
 * applies to new objects only. Callers with CAP_SYS_ADMIN are not counted
 * against the per-user limits.
 */
static unsigned int ctx_max[HPU_IB_QUOTA_KINDS] = {
	1024, 1024, 256, 16384, 1024, 16384
};

static unsigned int user_max[HPU_IB_QUOTA_KINDS] = {
	2048, 2048, 512, 32768, 4096, 65536
};

static const char * const quota_name[HPU_IB_QUOTA_KINDS] = {
	"QPs", "CQs", "SRQs", "memory regions", "protection domains",
	"address handles"
};

static const char * const quota_param[HPU_IB_QUOTA_KINDS] = {
	"qp", "cq", "srq", "mr", "pd", "ah"
};

module_param_named(ctx_max_qp, ctx_max[HPU_IB_QUOTA_QP], uint, 0644);
MODULE_PARM_DESC(ctx_max_qp, "QPs one user context may hold (default 1024)");
module_param_named(ctx_max_cq, ctx_max[HPU_IB_QUOTA_CQ], uint, 0644);
MODULE_PARM_DESC(ctx_max_cq, "CQs one user context may hold (default 1024)");
module_param_named(ctx_max_srq, ctx_max[HPU_IB_QUOTA_SRQ], uint, 0644);
MODULE_PARM_DESC(ctx_max_srq, "SRQs one user context may hold (default 256)");
module_param_named(ctx_max_mr, ctx_max[HPU_IB_QUOTA_MR], uint, 0644);
MODULE_PARM_DESC(ctx_max_mr, "memory regions one user context may hold (default 16384)");
module_param_named(ctx_max_pd, ctx_max[HPU_IB_QUOTA_PD], uint, 0644);
MODULE_PARM_DESC(ctx_max_pd, "protection domains one user context may hold (default 1024)");
module_param_named(ctx_max_ah, ctx_max[HPU_IB_QUOTA_AH], uint, 0644);
MODULE_PARM_DESC(ctx_max_ah, "address handles one user context may hold (default 16384)");
module_param_named(user_max_qp, user_max[HPU_IB_QUOTA_QP], uint, 0644);
MODULE_PARM_DESC(user_max_qp, "QPs one user may hold in all of its contexts of a device, CAP_SYS_ADMIN not counted (default 2048)");
module_param_named(user_max_cq, user_max[HPU_IB_QUOTA_CQ], uint, 0644);
MODULE_PARM_DESC(user_max_cq, "CQs one user may hold in all of its contexts of a device (default 2048)");
module_param_named(user_max_srq, user_max[HPU_IB_QUOTA_SRQ], uint, 0644);
MODULE_PARM_DESC(user_max_srq, "SRQs one user may hold in all of its contexts of a device (default 512)");
module_param_named(user_max_mr, user_max[HPU_IB_QUOTA_MR], uint, 0644);
MODULE_PARM_DESC(user_max_mr, "memory regions one user may hold in all of its contexts of a device (default 32768)");
module_param_named(user_max_pd, user_max[HPU_IB_QUOTA_PD], uint, 0644);
MODULE_PARM_DESC(user_max_pd, "protection domains one user may hold in all of its contexts of a device (default 4096)");
module_param_named(user_max_ah, user_max[HPU_IB_QUOTA_AH], uint, 0644);
MODULE_PARM_DESC(user_max_ah, "address handles one user may hold in all of its contexts of a device (default 65536)");

#define HPU_IB_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ)
/* Accepted (UCX asks for it) but never granted: the engine has no atomics. */
#define HPU_IB_MR_ACCESS_OK	(HPU_IB_MR_ACCESS | IB_ACCESS_REMOTE_ATOMIC)

static struct hpu_ib_ucontext *to_huc(struct ib_ucontext *uc)
{
	return container_of(uc, struct hpu_ib_ucontext, ibuc);
}

struct hpu_ib_ucontext *udata_huc(struct ib_udata *udata)
{
	return rdma_udata_to_drv_context(udata, struct hpu_ib_ucontext, ibuc);
}

/*
 * Driver data of a command: the first min(@len, inlen) bytes into @req;
 * a shorter input than @min_len is refused, bytes past @len must be zero.
 */
int hpu_ib_udata_in(struct ib_udata *udata, void *req, size_t len,
		    size_t min_len)
{
	if (udata->inlen < min_len)
		return -EINVAL;
	if (udata->inlen > len &&
	    !ib_is_udata_cleared(udata, len, udata->inlen - len))
		return -EINVAL;
	return ib_copy_from_udata(req, udata, min(len, udata->inlen));
}

int hpu_ib_udata_out(struct ib_udata *udata, const void *resp,
		     size_t len)
{
	return ib_copy_to_udata(udata, (void *)resp, min(len, udata->outlen));
}

static bool hpu_ib_count_get(atomic_t *count, unsigned int max)
{
	if (atomic_inc_return(count) > max) {
		atomic_dec(count);
		return false;
	}
	return true;
}

/*
 * Count a new object of @kind against its context's limit and then its
 * user's: -ENOSPC naming the limit reached, nothing taken.
 */
int hpu_ib_quota_get(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
		     enum hpu_ib_quota_kind kind)
{
	unsigned int max = READ_ONCE(ctx_max[kind]);

	if (!hpu_ib_count_get(&uc->n[kind], max)) {
		ibdev_dbg(&dev->ibdev, "context holds %u %s, its limit (ctx_max_%s)\n",
			  max, quota_name[kind], quota_param[kind]);
		return -ENOSPC;
	}
	if (!uc->user)
		return 0;
	max = READ_ONCE(user_max[kind]);
	if (!hpu_ib_count_get(&uc->user->n[kind], max)) {
		atomic_dec(&uc->n[kind]);
		ibdev_dbg(&dev->ibdev, "uid %u holds %u %s, its limit (user_max_%s)\n",
			  from_kuid(&init_user_ns, uc->user->uid), max,
			  quota_name[kind], quota_param[kind]);
		return -ENOSPC;
	}
	return 0;
}

/* Uncount an object of @kind (destroyed, or its creation failed). */
void hpu_ib_quota_put(struct hpu_ib_ucontext *uc, enum hpu_ib_quota_kind kind)
{
	atomic_dec(&uc->n[kind]);
	if (uc->user)
		atomic_dec(&uc->user->n[kind]);
}

/*
 * The user a new context counts against: the caller's effective uid, or
 * none for a caller with CAP_SYS_ADMIN (as hpu.ko's context limits).
 */
static int hpu_ib_user_get(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc)
{
	kuid_t uid = current_euid();
	unsigned long index = from_kuid(&init_user_ns, uid);
	struct hpu_ib_user *user;
	int ret = 0;

	uc->user = NULL;
	if (ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return 0;
	mutex_lock(&dev->users_lock);
	user = xa_load(&dev->users, index);
	if (user) {
		refcount_inc(&user->ref);
	} else {
		user = kzalloc(sizeof(*user), GFP_KERNEL);
		if (!user) {
			ret = -ENOMEM;
			goto out;
		}
		user->uid = uid;
		refcount_set(&user->ref, 1);
		ret = xa_insert(&dev->users, index, user, GFP_KERNEL);
		if (ret) {
			kfree(user);
			goto out;
		}
	}
	uc->user = user;
out:
	mutex_unlock(&dev->users_lock);
	return ret;
}

static void hpu_ib_user_put(struct hpu_ib_dev *dev, struct hpu_ib_user *user)
{
	if (!user)
		return;
	mutex_lock(&dev->users_lock);
	if (refcount_dec_and_test(&user->ref)) {
		xa_erase(&dev->users, from_kuid(&init_user_ns, user->uid));
		kfree(user);
	}
	mutex_unlock(&dev->users_lock);
}

/*
 * User memory is pinned and DMA-mapped here rather than by ib_umem_get().
 * Verbs let a process register the same pages many times (several MRs
 * over one buffer, an MR over a QP's ring, doorbell records sharing a
 * page), and ib_umem_get() maps every registration with the CPU sync:
 * the DMA API's debug checks then report the second writable mapping of
 * a cacheline as an unsupported overlap. Mapping with
 * DMA_ATTR_SKIP_CPU_SYNC and syncing explicitly tells it the overlap is
 * meant, as hpu_gem.c does for user-pointer buffers. Pages the engine
 * only reads are mapped to the device only, which it does not track.
 */

/* Pages pinned per pin_user_pages_fast() call, as ib_umem_get() does. */
#define HPU_IB_PIN_CHUNK	(PAGE_SIZE / sizeof(struct page *))

/**
 * hpu_ib_pin_account() - count pages against RLIMIT_MEMLOCK
 * @pin: the pin, with @pin->mm and @pin->npages set
 *
 * As ib_umem_get() counts them: in &mm_struct.pinned_vm, over the limit
 * only with CAP_IPC_LOCK.
 *
 * Return: 0, or -ENOMEM over the limit (nothing counted then).
 */
static int hpu_ib_pin_account(struct hpu_ib_upin *pin)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned;

	pinned = atomic64_add_return(pin->npages, &pin->mm->pinned_vm);
	if (pinned > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(pin->npages, &pin->mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/**
 * hpu_ib_pin_pages() - pin the pages of a user range
 * @pin: the pin, with @pin->pages allocated for @pin->npages
 * @start: user address of the first page, page aligned
 *
 * Pins long term, in chunks, until every page is pinned: a call may pin
 * fewer pages than asked. On failure, unpins what it pinned.
 *
 * Return: 0; -EFAULT if part of the range is not mapped (or not writable
 * when @pin->writable); -EINTR on a fatal signal; the error of
 * pin_user_pages_fast().
 */
static int hpu_ib_pin_pages(struct hpu_ib_upin *pin, unsigned long start)
{
	unsigned int gup_flags = FOLL_LONGTERM;
	unsigned long done = 0;
	long ret;

	if (pin->writable)
		gup_flags |= FOLL_WRITE;
	while (done < pin->npages) {
		ret = pin_user_pages_fast(start + done * PAGE_SIZE,
					  min(pin->npages - done,
					      HPU_IB_PIN_CHUNK),
					  gup_flags, pin->pages + done);
		if (ret <= 0)
			goto err_unpin;
		done += ret;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_unpin;
		}
		cond_resched();
	}
	return 0;

err_unpin:
	unpin_user_pages(pin->pages, done);
	return ret ? ret : -EFAULT;
}

/**
 * hpu_ib_pin_dma_map() - DMA-map pinned pages for the engine
 * @dev: the device
 * @pin: the pin, its pages pinned
 *
 * Builds @pin->sgt, maps it against the PCI function skipping the CPU
 * sync (see above) and syncs it for the device.
 *
 * Return: 0, or a negative error code (nothing left mapped or allocated).
 */
static int hpu_ib_pin_dma_map(struct hpu_ib_dev *dev, struct hpu_ib_upin *pin)
{
	int ret;

	ret = sg_alloc_table_from_pages_segment(&pin->sgt, pin->pages,
						pin->npages, 0,
						pin->npages << PAGE_SHIFT,
						dma_get_max_seg_size(dev->dma_dev),
						GFP_KERNEL_ACCOUNT);
	if (ret)
		return ret;
	ret = dma_map_sgtable(dev->dma_dev, &pin->sgt, pin->dir,
			      DMA_ATTR_SKIP_CPU_SYNC);
	if (ret) {
		sg_free_table(&pin->sgt);
		return ret;
	}
	dma_sync_sgtable_for_device(dev->dma_dev, &pin->sgt, pin->dir);
	return 0;
}

/**
 * hpu_ib_unpin_user() - undo hpu_ib_pin_user()
 * @dev: the device
 * @pin: the pin, freed
 *
 * Syncs the pages for the CPU, unmaps them, unpins them (dirty when they
 * were writable), uncounts them from the mm that pinned them and drops it.
 */
static void hpu_ib_unpin_user(struct hpu_ib_dev *dev, struct hpu_ib_upin *pin)
{
	dma_sync_sgtable_for_cpu(dev->dma_dev, &pin->sgt, pin->dir);
	dma_unmap_sgtable(dev->dma_dev, &pin->sgt, pin->dir,
			  DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(&pin->sgt);
	unpin_user_pages_dirty_lock(pin->pages, pin->npages, pin->writable);
	atomic64_sub(pin->npages, &pin->mm->pinned_vm);
	mmdrop(pin->mm);
	kvfree(pin->pages);
	kfree(pin);
}

/**
 * hpu_ib_pin_user() - pin user memory and DMA-map it for the engine
 * @dev: the device
 * @addr: user address
 * @len: bytes
 * @writable: the engine may write the memory
 * @out: Out: the pin, of the pages holding [@addr, @addr + @len)
 *
 * What ib_umem_get() does for the same range (the checks, the
 * RLIMIT_MEMLOCK accounting, a long-term pin, a bidirectional DMA
 * mapping of writable memory), but mapped as the comment above says.
 * Call from the process that owns the memory. May sleep.
 *
 * Return: 0; -EINVAL for an empty or overflowing range; -EPERM when the
 * caller may not lock memory; -ENOMEM over RLIMIT_MEMLOCK or out of
 * memory; the errors of hpu_ib_pin_pages() and of the DMA mapping.
 */
static int hpu_ib_pin_user(struct hpu_ib_dev *dev, u64 addr, size_t len,
			   bool writable, struct hpu_ib_upin **out)
{
	struct hpu_ib_upin *pin;
	unsigned long npages;
	int ret;

	if (!len || addr + len < addr || PAGE_ALIGN(addr + len) < addr + len)
		return -EINVAL;
	npages = (PAGE_ALIGN(addr + len) - (addr & PAGE_MASK)) >> PAGE_SHIFT;
	if (npages > UINT_MAX)
		return -EINVAL;
	if (!can_do_mlock())
		return -EPERM;

	pin = kzalloc(sizeof(*pin), GFP_KERNEL_ACCOUNT);
	if (!pin)
		return -ENOMEM;
	pin->npages = npages;
	pin->writable = writable;
	pin->dir = writable ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
	pin->pages = kvmalloc_array(npages, sizeof(*pin->pages),
				    GFP_KERNEL_ACCOUNT);
	if (!pin->pages) {
		ret = -ENOMEM;
		goto err_free;
	}
	pin->mm = current->mm;
	mmgrab(pin->mm);
	ret = hpu_ib_pin_account(pin);
	if (ret)
		goto err_mmdrop;
	ret = hpu_ib_pin_pages(pin, addr & PAGE_MASK);
	if (ret)
		goto err_unaccount;
	ret = hpu_ib_pin_dma_map(dev, pin);
	if (ret)
		goto err_unpin;
	*out = pin;
	return 0;

err_unpin:
	unpin_user_pages(pin->pages, npages);
err_unaccount:
	atomic64_sub(npages, &pin->mm->pinned_vm);
err_mmdrop:
	mmdrop(pin->mm);
	kvfree(pin->pages);
err_free:
	kfree(pin);
	return ret;
}

/* Keep @pin until the engine is disabled (hpu_ib_kept_release()). */
static void hpu_ib_pin_keep(struct hpu_ib_dev *dev, struct hpu_ib_upin *pin)
{
	mutex_lock(&dev->kept_lock);
	list_add_tail(&pin->kept, &dev->kept);
	mutex_unlock(&dev->kept_lock);
}

/**
 * hpu_ib_umap_keep() - keep the pages of an object the engine may still use
 * @dev: the device
 * @map: the object's mapping; its pin (if any) moves to &hpu_ib_dev.kept
 *
 * For an object whose DESTROY or CREATE the engine did not confirm: its
 * memory is neither unmapped nor unpinned, and outlives the object.
 */
void hpu_ib_umap_keep(struct hpu_ib_dev *dev, struct hpu_ib_umap *map)
{
	if (map->pin)
		hpu_ib_pin_keep(dev, map->pin);
	map->pin = NULL;
}

/**
 * hpu_ib_kept_release() - unpin the pages kept for objects of a disabled engine
 * @dev: the device, its engine disabled (no object left in it)
 */
void hpu_ib_kept_release(struct hpu_ib_dev *dev)
{
	struct hpu_ib_upin *pin, *tmp;
	unsigned int n = 0;

	mutex_lock(&dev->kept_lock);
	list_for_each_entry_safe(pin, tmp, &dev->kept, kept) {
		list_del(&pin->kept);
		hpu_ib_unpin_user(dev, pin);
		n++;
	}
	mutex_unlock(&dev->kept_lock);
	if (n)
		ibdev_info(&dev->ibdev, "%u pinned ranges kept for objects the engine did not destroy released\n",
			   n);
}

/**
 * hpu_ib_umap_get() - pin user memory and map it into a context's ASID
 * @dev: the device
 * @uc: the context
 * @addr: user address
 * @len: bytes
 * @writable: the engine may write the memory
 * @map: Out: the mapping; @map->dva is the device address of @addr
 *
 * May sleep.
 *
 * Return: 0; the errors of hpu_ib_pin_user() and hpu_rdma_as_map_sgt().
 * After -EIO the pages stay pinned and mapped until the engine is
 * disabled (hpu_ib_kept_release()): the device may reach them.
 */
int hpu_ib_umap_get(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
		    u64 addr, size_t len, bool writable,
		    struct hpu_ib_umap *map)
{
	struct hpu_ib_upin *pin;
	int ret;

	ret = hpu_ib_pin_user(dev, addr, len, writable, &pin);
	if (ret)
		return ret;
	ret = hpu_rdma_as_map_sgt(uc->as, &pin->sgt,
				  (u64)pin->npages << PAGE_SHIFT, writable,
				  &map->map_va);
	if (ret) {
		if (ret == -EIO) {
			ibdev_err(&dev->ibdev, "pinned pages kept until the engine is disabled: the device may reach them\n");
			hpu_ib_pin_keep(dev, pin);
		} else {
			hpu_ib_unpin_user(dev, pin);
		}
		return ret;
	}
	map->pin = pin;
	map->dva = map->map_va + offset_in_page(addr);
	return 0;
}

/**
 * hpu_ib_umap_put() - undo hpu_ib_umap_get() or a dma-buf mapping
 * @dev: the device
 * @uc: the context
 * @map: the mapping (no pin for a dma-buf or hpu buffer); nothing to do
 *	when it is not mapped
 *
 * If the ASID's invalidation does not complete (-EIO), the pages stay
 * pinned and mapped until the engine is disabled (hpu_ib_kept_release()).
 * May sleep.
 */
void hpu_ib_umap_put(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
		     struct hpu_ib_umap *map)
{
	int ret;

	if (!map->map_va)
		return;
	ret = hpu_rdma_as_unmap(uc->as, map->map_va);
	map->map_va = 0;
	if (ret == -EIO) {
		ibdev_err(&dev->ibdev, "pinned pages kept until the engine is disabled: the device may reach them\n");
		hpu_ib_umap_keep(dev, map);
		return;
	}
	if (map->pin)
		hpu_ib_unpin_user(dev, map->pin);
	map->pin = NULL;
}

/*
 * DESTROY an object. A command that did not complete leaves the engine
 * maybe still using the object's memory: it is then kept (the caller
 * does not unmap) and the context's address space quarantined.
 */
static bool hpu_ib_destroy_obj(struct hpu_ib_dev *dev,
			       struct hpu_ib_ucontext *uc, u32 type, u32 index)
{
	u8 image[HPU_ROCE_IMAGE_SIZE] = {};
	int ret;

	ret = hpu_ib_cmd(dev, HPU_ROCE_OP_DESTROY, type, index, image);
	if (ret == -ETIMEDOUT || ret == -EIO) {
		uc->leaked = true;
		return false;
	}
	if (ret)
		ibdev_warn(&dev->ibdev, "DESTROY of object %u (type %u): %d\n",
			   index, type, ret);
	return true;
}

/**
 * hpu_ib_obj_retire() - take a CQ, SRQ or QP out of the engine and the lookup
 * @dev: the device
 * @uc: its context
 * @type: HPU_ROCE_TYPE_*
 * @xa: the device's lookup of that type
 * @index: the object's number
 * @created: its CREATE succeeded: DESTROY it first
 *
 * After it no event handler looks at the object any more.
 *
 * Return: true if the object's memory may go; false if its DESTROY did
 * not complete (the memory is kept, see hpu_ib_destroy_obj()).
 */
bool hpu_ib_obj_retire(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
		       u32 type, struct xarray *xa, u32 index, bool created)
{
	bool gone = !created || hpu_ib_destroy_obj(dev, uc, type, index);

	xa_erase(xa, index);
	hpu_ib_eq_drain(dev);
	return gone;
}

/**
 * hpu_ib_create_failed() - after a CREATE that failed: may the memory go
 * @dev: the device
 * @uc: its context
 * @type: HPU_ROCE_TYPE_*
 * @xa: the device's lookup of that type
 * @index: the object's number
 * @ret: what the CREATE returned
 *
 * A CREATE that timed out may still run in the engine later (the driver
 * stopped waiting, the engine did not say it stopped): its object is then
 * treated as one whose DESTROY was not confirmed (memory, number and the
 * doorbell page kept, see hpu_ib_destroy_obj()).
 *
 * Return: true if the object's memory and number may go.
 */
bool hpu_ib_create_failed(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
			  u32 type, struct xarray *xa, u32 index, int ret)
{
	if (xa)
		hpu_ib_obj_retire(dev, uc, type, xa, index, false);
	if (ret != -ETIMEDOUT)
		return true;
	uc->leaked = true;
	ibdev_warn(&dev->ibdev, "object %u (type %u) kept: its CREATE timed out and may still run\n",
		   index, type);
	return false;
}

/* ucontext and the doorbell page */

static int hpu_ib_alloc_ucontext(struct ib_ucontext *ibuc,
				 struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibuc->device);
	struct hpu_ib_ucontext *uc = to_huc(ibuc);
	struct hpu_ib_alloc_ucontext_resp resp = {};
	struct hpu_ib_alloc_ucontext_req req = {};
	struct hpu_ib_mmap_entry *entry;
	int ret;

	ret = hpu_ib_udata_in(udata, &req, sizeof(req), 0);
	if (ret)
		return ret;
	if (req.flags || req.reserved)
		return -EINVAL;

	ret = hpu_ib_user_get(dev, uc);
	if (ret)
		return ret;
	ret = ida_alloc_max(&dev->db_ida, dev->num_db_pages - 1, GFP_KERNEL);
	if (ret < 0) {
		if (ret == -ENOSPC)
			ret = -EBUSY;
		goto err_user;
	}
	uc->db_page = ret;

	/* An ASID counted against the caller's limit of contexts. */
	ret = hpu_rdma_as_create(dev->adev, &uc->as);
	if (ret)
		goto err_db;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry) {
		ret = -ENOMEM;
		goto err_as;
	}
	entry->addr = hpu_rdma_db_page_addr(dev->adev, uc->db_page);
	ret = rdma_user_mmap_entry_insert(ibuc, &entry->rdma, PAGE_SIZE);
	if (ret) {
		kfree(entry);
		goto err_as;
	}
	uc->db_entry = &entry->rdma;

	resp.db_mmap_offset = rdma_user_mmap_get_offset(uc->db_entry);
	resp.db_page = uc->db_page;
	resp.cqe_size = HPU_IB_CQE_SIZE;
	resp.max_inline = (1U << HPU_IB_SQ_LOG_STRIDE_MAX) - 64;
	ret = hpu_ib_udata_out(udata, &resp, sizeof(resp));
	if (ret)
		goto err_entry;

	uc->owner = current->mm;
	mmgrab(uc->owner);
	return 0;

err_entry:
	rdma_user_mmap_entry_remove(uc->db_entry);
err_as:
	hpu_rdma_as_destroy(uc->as, false);
err_db:
	ida_free(&dev->db_ida, uc->db_page);
err_user:
	hpu_ib_user_put(dev, uc->user);
	return ret;
}

static void hpu_ib_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct hpu_ib_dev *dev = to_hdev(ibuc->device);
	struct hpu_ib_ucontext *uc = to_huc(ibuc);

	rdma_user_mmap_entry_remove(uc->db_entry);
	/* Every object is destroyed: the engine no longer uses the ASID. */
	hpu_rdma_as_destroy(uc->as, uc->leaked);
	/*
	 * An object the engine may still run answers to this doorbell page:
	 * the next context given it could ring that object over memory of
	 * this one. The page stays out of use until the device is reset
	 * (which deletes this device, and the IDA with it).
	 */
	if (uc->leaked)
		ibdev_warn(&dev->ibdev, "doorbell page %u kept out of use until the device is reset: an object of it may still be live\n",
			   uc->db_page);
	else
		ida_free(&dev->db_ida, uc->db_page);
	hpu_ib_user_put(dev, uc->user);
	mmdrop(uc->owner);
}

static void hpu_ib_disassociate_ucontext(struct ib_ucontext *ibuc)
{
	/* The core zaps the doorbell mapping and destroys every object. */
}

static int hpu_ib_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct hpu_ib_ucontext *uc = to_huc(ibuc);
	struct rdma_user_mmap_entry *rentry;
	struct hpu_ib_mmap_entry *entry;
	int ret;

	rentry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rentry)
		return -EINVAL;
	entry = container_of(rentry, struct hpu_ib_mmap_entry, rdma);
	/*
	 * The doorbell page is the owner's alone: not another process that
	 * got hold of the file, not executable, not inherited by a fork.
	 */
	if (vma->vm_mm != uc->owner || (vma->vm_flags & VM_EXEC)) {
		ret = -EPERM;
		goto out;
	}
	vm_flags_set(vma, VM_DONTCOPY);
	vm_flags_clear(vma, VM_MAYEXEC);
	ret = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(entry->addr), PAGE_SIZE,
				pgprot_noncached(vma->vm_page_prot), rentry);
out:
	rdma_user_mmap_entry_put(rentry);
	return ret;
}

static void hpu_ib_mmap_free(struct rdma_user_mmap_entry *rentry)
{
	kfree(container_of(rentry, struct hpu_ib_mmap_entry, rdma));
}

/* PDs: numbers only; the engine compares them. */

static int hpu_ib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibpd->device);
	struct hpu_ib_pd *pd = container_of(ibpd, struct hpu_ib_pd, ibpd);
	int ret;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (udata) {
		pd->uc = udata_huc(udata);
		ret = hpu_ib_quota_get(dev, pd->uc, HPU_IB_QUOTA_PD);
		if (ret)
			return ret;
	}
	ret = ida_alloc_range(&dev->pd_ida, 1, (1U << 24) - 1, GFP_KERNEL);
	if (ret < 0) {
		if (pd->uc)
			hpu_ib_quota_put(pd->uc, HPU_IB_QUOTA_PD);
		return ret;
	}
	pd->pdn = ret;
	return 0;
}

static int hpu_ib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct hpu_ib_pd *pd = container_of(ibpd, struct hpu_ib_pd, ibpd);

	ida_free(&to_hdev(ibpd->device)->pd_ida, pd->pdn);
	if (pd->uc)
		hpu_ib_quota_put(pd->uc, HPU_IB_QUOTA_PD);
	return 0;
}

u32 to_pdn(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct hpu_ib_pd, ibpd)->pdn;
}

/* Memory regions */

static int hpu_ib_mr_check(struct ib_udata *udata, int *access)
{
	if (!udata)
		return -EOPNOTSUPP;
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	*access &= ~IB_ACCESS_OPTIONAL;
	if (*access & ~HPU_IB_MR_ACCESS_OK)
		return -EOPNOTSUPP;
	return 0;
}

/* Take an index, CREATE the MR in the engine; the mapping is in @mr. */
static int hpu_ib_mr_create(struct hpu_ib_dev *dev, struct hpu_ib_ucontext *uc,
			    struct hpu_ib_mr *mr, struct ib_pd *pd, u64 iova,
			    u64 length, int access)
{
	u8 image[HPU_ROCE_IMAGE_SIZE] = {};
	u32 key;
	int ret;

	if (!length || length > BIT_ULL(48))
		return -EINVAL;
	ret = ida_alloc_range(&dev->mr_ida, 1, dev->max_mr - 1, GFP_KERNEL);
	if (ret < 0)
		return ret;
	mr->index = ret;
	key = mr->index << 8 | ++dev->mr_variant[mr->index];

	put_unaligned_le32(key, &image[0]);
	put_unaligned_le32(to_pdn(pd), &image[4]);
	put_unaligned_le16(hpu_rdma_as_asid(uc->as), &image[8]);
	put_unaligned_le32(access & HPU_IB_MR_ACCESS, &image[12]);
	put_unaligned_le64(iova, &image[16]);
	put_unaligned_le64(length, &image[24]);
	put_unaligned_le64(mr->map.dva, &image[32]);
	ret = hpu_ib_cmd(dev, HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_MR, mr->index, image);
	if (ret) {
		/* -ETIMEDOUT: the index and the memory stay (the caller). */
		if (hpu_ib_create_failed(dev, uc, HPU_ROCE_TYPE_MR, NULL,
					 mr->index, ret))
			ida_free(&dev->mr_ida, mr->index);
		return ret;
	}
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	return 0;
}

static struct ib_mr *hpu_ib_reg_mr_common(struct ib_pd *pd, u64 start,
					  u64 length, u64 iova, int fd,
					  int access, struct ib_udata *udata,
					  bool dmabuf)
{
	struct hpu_ib_dev *dev = to_hdev(pd->device);
	bool writable = access & (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE);
	struct hpu_ib_ucontext *uc;
	struct hpu_ib_mr *mr;
	int ret;

	ret = hpu_ib_mr_check(udata, &access);
	if (ret)
		return ERR_PTR(ret);
	uc = udata_huc(udata);
	ret = hpu_ib_quota_get(dev, uc, HPU_IB_QUOTA_MR);
	if (ret)
		return ERR_PTR(ret);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		ret = -ENOMEM;
		goto err_quota;
	}
	mr->uc = uc;
	if (dmabuf) {
		ret = hpu_rdma_as_map_dmabuf(uc->as, fd, start, length, writable,
					     &mr->map.map_va, &mr->map.dva);
	} else {
		/*
		 * The process's mapping of an hpu buffer (HBM through BAR4,
		 * or a host buffer) is VM_PFNMAP: pin_user_pages() cannot pin
		 * it, so the buffer itself is registered, as a dma-buf of
		 * it would be. Any other memory is pinned.
		 */
		ret = hpu_rdma_as_map_user(uc->as, start, length, writable,
					   &mr->map.map_va, &mr->map.dva);
		if (ret == -ENOENT)
			ret = hpu_ib_umap_get(dev, uc, start, length, writable,
					      &mr->map);
	}
	if (ret)
		goto err_free;
	ret = hpu_ib_mr_create(dev, uc, mr, pd, iova, length, access);
	if (ret == -ETIMEDOUT)
		goto err_free;	/* the engine may use the memory: kept */
	if (ret)
		goto err_unmap;
	return &mr->ibmr;

err_unmap:
	hpu_ib_umap_put(dev, uc, &mr->map);
err_free:
	kfree(mr);
err_quota:
	hpu_ib_quota_put(uc, HPU_IB_QUOTA_MR);
	return ERR_PTR(ret);
}

static struct ib_mr *hpu_ib_reg_user_mr(struct ib_pd *pd, u64 start,
					u64 length, u64 iova, int access,
					struct ib_udata *udata)
{
	return hpu_ib_reg_mr_common(pd, start, length, iova, -1, access, udata,
				    false);
}

static struct ib_mr *hpu_ib_reg_user_mr_dmabuf(struct ib_pd *pd, u64 offset,
					       u64 length, u64 iova, int fd,
					       int access,
					       struct uverbs_attr_bundle *attrs)
{
	return hpu_ib_reg_mr_common(pd, offset, length, iova, fd, access,
				    attrs ? &attrs->driver_udata : NULL, true);
}

static int hpu_ib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibmr->device);
	struct hpu_ib_mr *mr = container_of(ibmr, struct hpu_ib_mr, ibmr);
	struct hpu_ib_ucontext *uc = mr->uc;

	if (hpu_ib_destroy_obj(dev, uc, HPU_ROCE_TYPE_MR, mr->index)) {
		hpu_ib_umap_put(dev, uc, &mr->map);
		ida_free(&dev->mr_ida, mr->index);
	} else {
		hpu_ib_umap_keep(dev, &mr->map);
	}
	hpu_ib_quota_put(uc, HPU_IB_QUOTA_MR);
	kfree(mr);
	return 0;
}

/* CQs */

static int hpu_ib_cq_check(struct hpu_ib_dev *dev,
			   const struct hpu_ib_create_cq *req, int cqe)
{
	if (req->flags)
		return -EINVAL;
	if (req->log_entries < HPU_IB_CQ_LOG_ENTRIES_MIN ||
	    req->log_entries > HPU_IB_CQ_LOG_ENTRIES_MAX ||
	    BIT(req->log_entries) > dev->max_cqe || BIT(req->log_entries) < cqe)
		return -EINVAL;
	if (!req->buf_addr || !IS_ALIGNED(req->buf_addr, HPU_IB_CQE_SIZE) ||
	    !req->db_addr || !IS_ALIGNED(req->db_addr, 8))
		return -EINVAL;
	return 0;
}

static int hpu_ib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			    struct uverbs_attr_bundle *attrs)
{
	struct hpu_ib_dev *dev = to_hdev(ibcq->device);
	struct hpu_ib_cq *cq = container_of(ibcq, struct hpu_ib_cq, ibcq);
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
	struct hpu_ib_create_cq_resp resp = {};
	struct hpu_ib_create_cq req = {};
	u8 image[HPU_ROCE_IMAGE_SIZE] = {};
	struct hpu_ib_ucontext *uc;
	int ret;

	uc = udata ? udata_huc(udata) : NULL;
	if (!uc)
		return -EOPNOTSUPP;
	if (attr->flags)
		return -EOPNOTSUPP;
	ret = hpu_ib_udata_in(udata, &req, sizeof(req), sizeof(req));
	if (ret)
		return ret;
	ret = hpu_ib_cq_check(dev, &req, attr->cqe);
	if (ret)
		return ret;
	ret = hpu_ib_quota_get(dev, uc, HPU_IB_QUOTA_CQ);
	if (ret)
		return ret;
	cq->uc = uc;
	ret = ida_alloc_max(&dev->cq_ida, dev->max_cq - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_quota;
	cq->cqn = ret;
	ret = hpu_ib_umap_get(dev, uc, req.buf_addr,
			      HPU_IB_CQE_SIZE << req.log_entries, true, &cq->ring);
	if (ret)
		goto err_ida;
	ret = hpu_ib_umap_get(dev, uc, req.db_addr, 8, false, &cq->db);
	if (ret)
		goto err_ring;
	ret = xa_insert(&dev->cqs, cq->cqn, cq, GFP_KERNEL);
	if (ret)
		goto err_db;

	put_unaligned_le16(hpu_rdma_as_asid(uc->as), &image[0]);
	put_unaligned_le16(uc->db_page, &image[2]);
	image[4] = req.log_entries;
	put_unaligned_le64(cq->ring.dva, &image[8]);
	put_unaligned_le64(cq->db.dva, &image[16]);
	ret = hpu_ib_cmd(dev, HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_CQ, cq->cqn, image);
	if (ret)
		goto err_xa;

	ibcq->cqe = BIT(req.log_entries);
	resp.cqn = cq->cqn;
	ret = hpu_ib_udata_out(udata, &resp, sizeof(resp));
	if (ret)
		goto err_destroy;
	return 0;

err_destroy:
	if (!hpu_ib_obj_retire(dev, uc, HPU_ROCE_TYPE_CQ, &dev->cqs, cq->cqn, true)) {
		/* Memory kept (the engine may use it), but uncounted as a destroy would. */
		hpu_ib_umap_keep(dev, &cq->db);
		hpu_ib_umap_keep(dev, &cq->ring);
		hpu_ib_quota_put(uc, HPU_IB_QUOTA_CQ);
		return ret;
	}
	goto err_db;
err_xa:
	if (!hpu_ib_create_failed(dev, uc, HPU_ROCE_TYPE_CQ, &dev->cqs, cq->cqn, ret)) {
		hpu_ib_umap_keep(dev, &cq->db);
		hpu_ib_umap_keep(dev, &cq->ring);
		hpu_ib_quota_put(uc, HPU_IB_QUOTA_CQ);
		return ret;
	}
err_db:
	hpu_ib_umap_put(dev, uc, &cq->db);
err_ring:
	hpu_ib_umap_put(dev, uc, &cq->ring);
err_ida:
	ida_free(&dev->cq_ida, cq->cqn);
err_quota:
	hpu_ib_quota_put(uc, HPU_IB_QUOTA_CQ);
	return ret;
}

static int hpu_ib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibcq->device);
	struct hpu_ib_cq *cq = container_of(ibcq, struct hpu_ib_cq, ibcq);
	struct hpu_ib_ucontext *uc = cq->uc;

	if (hpu_ib_obj_retire(dev, uc, HPU_ROCE_TYPE_CQ, &dev->cqs, cq->cqn, true)) {
		hpu_ib_umap_put(dev, uc, &cq->db);
		hpu_ib_umap_put(dev, uc, &cq->ring);
		ida_free(&dev->cq_ida, cq->cqn);
	} else {
		hpu_ib_umap_keep(dev, &cq->db);
		hpu_ib_umap_keep(dev, &cq->ring);
	}
	hpu_ib_quota_put(uc, HPU_IB_QUOTA_CQ);
	return 0;
}

/* SRQs */

static int hpu_ib_srq_check(struct hpu_ib_dev *dev,
			    const struct hpu_ib_create_srq *req,
			    const struct ib_srq_attr *attr)
{
	u32 stride = BIT(req->log_stride);

	if (req->flags || req->reserved)
		return -EINVAL;
	if (req->log_entries < HPU_IB_WQ_LOG_ENTRIES_MIN ||
	    req->log_entries > HPU_IB_WQ_LOG_ENTRIES_MAX ||
	    req->log_stride < HPU_IB_RQ_LOG_STRIDE_MIN ||
	    req->log_stride > HPU_IB_SRQ_LOG_STRIDE_MAX)
		return -EINVAL;
	if (BIT(req->log_entries) > dev->max_wr ||
	    attr->max_wr > BIT(req->log_entries) ||
	    attr->max_sge > dev->max_sge ||
	    sizeof(struct hpu_ib_recv_wqe) +
	    attr->max_sge * sizeof(struct hpu_ib_sge) > stride ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	if (!req->buf_addr || !IS_ALIGNED(req->buf_addr, stride) ||
	    !req->db_addr || !IS_ALIGNED(req->db_addr, 8))
		return -EINVAL;
	return 0;
}

static int hpu_ib_create_srq(struct ib_srq *ibsrq,
			     struct ib_srq_init_attr *init,
			     struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibsrq->device);
	struct hpu_ib_srq *srq = container_of(ibsrq, struct hpu_ib_srq, ibsrq);
	struct hpu_ib_create_srq_resp resp = {};
	struct hpu_ib_create_srq req = {};
	u8 image[HPU_ROCE_IMAGE_SIZE] = {};
	struct hpu_ib_ucontext *uc;
	int ret;

	uc = udata ? udata_huc(udata) : NULL;
	if (!uc || !dev->max_srq)
		return -EOPNOTSUPP;
	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	ret = hpu_ib_udata_in(udata, &req, sizeof(req), sizeof(req));
	if (ret)
		return ret;
	ret = hpu_ib_srq_check(dev, &req, &init->attr);
	if (ret)
		return ret;
	ret = hpu_ib_quota_get(dev, uc, HPU_IB_QUOTA_SRQ);
	if (ret)
		return ret;
	srq->uc = uc;
	ret = ida_alloc_max(&dev->srq_ida, dev->max_srq - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_quota;
	srq->srqn = ret;
	ret = hpu_ib_umap_get(dev, uc, req.buf_addr,
			      (size_t)BIT(req.log_entries) << req.log_stride,
			      false, &srq->ring);
	if (ret)
		goto err_ida;
	ret = hpu_ib_umap_get(dev, uc, req.db_addr, 8, true, &srq->db);
	if (ret)
		goto err_ring;
	ret = xa_insert(&dev->srqs, srq->srqn, srq, GFP_KERNEL);
	if (ret)
		goto err_db;

	srq->limit = init->attr.srq_limit;
	srq->max_wr = BIT(req.log_entries);
	srq->max_sge = (BIT(req.log_stride) - sizeof(struct hpu_ib_recv_wqe)) /
		       sizeof(struct hpu_ib_sge);
	srq->max_sge = min(srq->max_sge, dev->max_sge);
	put_unaligned_le16(hpu_rdma_as_asid(uc->as), &image[0]);
	put_unaligned_le16(uc->db_page, &image[2]);
	put_unaligned_le32(to_pdn(ibsrq->pd), &image[4]);
	image[8] = req.log_entries;
	image[9] = req.log_stride;
	put_unaligned_le32(srq->limit, &image[12]);
	put_unaligned_le64(srq->ring.dva, &image[16]);
	put_unaligned_le64(srq->db.dva, &image[24]);
	ret = hpu_ib_cmd(dev, HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_SRQ, srq->srqn, image);
	if (ret)
		goto err_xa;

	init->attr.max_wr = srq->max_wr;
	init->attr.max_sge = srq->max_sge;
	resp.srqn = srq->srqn;
	ret = hpu_ib_udata_out(udata, &resp, sizeof(resp));
	if (ret)
		goto err_destroy;
	return 0;

err_destroy:
	if (!hpu_ib_obj_retire(dev, uc, HPU_ROCE_TYPE_SRQ, &dev->srqs, srq->srqn, true)) {
		/* Memory kept (the engine may use it), but uncounted as a destroy would. */
		hpu_ib_umap_keep(dev, &srq->db);
		hpu_ib_umap_keep(dev, &srq->ring);
		hpu_ib_quota_put(uc, HPU_IB_QUOTA_SRQ);
		return ret;
	}
	goto err_db;
err_xa:
	if (!hpu_ib_create_failed(dev, uc, HPU_ROCE_TYPE_SRQ, &dev->srqs, srq->srqn,
				  ret)) {
		hpu_ib_umap_keep(dev, &srq->db);
		hpu_ib_umap_keep(dev, &srq->ring);
		hpu_ib_quota_put(uc, HPU_IB_QUOTA_SRQ);
		return ret;
	}
err_db:
	hpu_ib_umap_put(dev, uc, &srq->db);
err_ring:
	hpu_ib_umap_put(dev, uc, &srq->ring);
err_ida:
	ida_free(&dev->srq_ida, srq->srqn);
err_quota:
	hpu_ib_quota_put(uc, HPU_IB_QUOTA_SRQ);
	return ret;
}

static int hpu_ib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibsrq->device);
	struct hpu_ib_srq *srq = container_of(ibsrq, struct hpu_ib_srq, ibsrq);
	u8 image[HPU_ROCE_IMAGE_SIZE] = {};
	int ret;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (mask & ~IB_SRQ_LIMIT)
		return -EOPNOTSUPP;	/* no resize */
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->max_wr)
		return -EINVAL;
	put_unaligned_le32(attr->srq_limit, &image[12]);
	ret = hpu_ib_cmd(dev, HPU_ROCE_OP_MODIFY, HPU_ROCE_TYPE_SRQ, srq->srqn, image);
	if (!ret)
		WRITE_ONCE(srq->limit, attr->srq_limit);
	return ret;
}

static int hpu_ib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct hpu_ib_srq *srq = container_of(ibsrq, struct hpu_ib_srq, ibsrq);

	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

static int hpu_ib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibsrq->device);
	struct hpu_ib_srq *srq = container_of(ibsrq, struct hpu_ib_srq, ibsrq);
	struct hpu_ib_ucontext *uc = srq->uc;

	if (hpu_ib_obj_retire(dev, uc, HPU_ROCE_TYPE_SRQ, &dev->srqs, srq->srqn, true)) {
		hpu_ib_umap_put(dev, uc, &srq->db);
		hpu_ib_umap_put(dev, uc, &srq->ring);
		ida_free(&dev->srq_ida, srq->srqn);
	} else {
		hpu_ib_umap_keep(dev, &srq->db);
		hpu_ib_umap_keep(dev, &srq->ring);
	}
	hpu_ib_quota_put(uc, HPU_IB_QUOTA_SRQ);
	return 0;
}

/* Address handles (UD): the provider needs the destination MAC. */

static int hpu_ib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			    struct ib_udata *udata)
{
	struct hpu_ib_ah *ah = container_of(ibah, struct hpu_ib_ah, ibah);
	struct hpu_ib_create_ah_resp resp = {};
	struct rdma_ah_attr *attr = init->ah_attr;
	int ret;

	if (!udata)
		return -EOPNOTSUPP;
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	ah->uc = udata_huc(udata);
	ret = hpu_ib_quota_get(to_hdev(ibah->device), ah->uc, HPU_IB_QUOTA_AH);
	if (ret)
		return ret;
	memcpy(resp.dmac, attr->roce.dmac, ETH_ALEN);
	ret = hpu_ib_udata_out(udata, &resp, sizeof(resp));
	if (ret)
		hpu_ib_quota_put(ah->uc, HPU_IB_QUOTA_AH);
	return ret;
}

static int hpu_ib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct hpu_ib_ah *ah = container_of(ibah, struct hpu_ib_ah, ibah);

	hpu_ib_quota_put(ah->uc, HPU_IB_QUOTA_AH);
	return 0;
}

const struct ib_device_ops hpu_ib_verbs_ops = {
	.alloc_ucontext = hpu_ib_alloc_ucontext,
	.dealloc_ucontext = hpu_ib_dealloc_ucontext,
	.disassociate_ucontext = hpu_ib_disassociate_ucontext,
	.mmap = hpu_ib_mmap,
	.mmap_free = hpu_ib_mmap_free,
	.alloc_pd = hpu_ib_alloc_pd,
	.dealloc_pd = hpu_ib_dealloc_pd,
	.reg_user_mr = hpu_ib_reg_user_mr,
	.reg_user_mr_dmabuf = hpu_ib_reg_user_mr_dmabuf,
	.dereg_mr = hpu_ib_dereg_mr,
	.create_cq = hpu_ib_create_cq,
	.destroy_cq = hpu_ib_destroy_cq,
	.create_srq = hpu_ib_create_srq,
	.modify_srq = hpu_ib_modify_srq,
	.query_srq = hpu_ib_query_srq,
	.destroy_srq = hpu_ib_destroy_srq,
	.create_ah = hpu_ib_create_ah,
	.create_user_ah = hpu_ib_create_ah,
	.destroy_ah = hpu_ib_destroy_ah,
	.create_qp = hpu_ib_create_qp,
	.modify_qp = hpu_ib_modify_qp,
	.query_qp = hpu_ib_query_qp,
	.destroy_qp = hpu_ib_destroy_qp,
	INIT_RDMA_OBJ_SIZE(ib_ucontext, hpu_ib_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, hpu_ib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ah, hpu_ib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, hpu_ib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_srq, hpu_ib_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_qp, hpu_ib_qp, ibqp),
};
