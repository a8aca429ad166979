// SPDX-License-Identifier: MIT
// User queues: the ring and completion ring in one HOST buffer mapped into
// the device and the process, the doorbell page, and the reading of the
// completion records in order.
//
// Copyright (c) 2026 The hpu authors
#include "uqueue.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include <pthread.h>
#include <sys/mman.h>

#include "common.h"
#include "device.h"
#include "hw/hpu_regs.h"
#include "kmd.h"

namespace hpu::detail {

namespace {

std::atomic<std::uint64_t> g_fork_gen{0};

void on_fork_child() noexcept
{
    g_fork_gen.fetch_add(1, std::memory_order_relaxed);
}

constexpr std::int64_t kDefaultSpinUs = 20;
constexpr std::int64_t kMaxSpinUs = 1000000;

// HPU_SPIN_US: microseconds a wait polls the records before it sleeps.
std::int64_t spin_ns_from_env()
{
    const char *env = std::getenv("HPU_SPIN_US"); // NOLINT(concurrency-mt-unsafe): read, never set, by the library
    std::int64_t us = kDefaultSpinUs;
    if (env != nullptr) {
        if (const auto v = parse_num<std::int64_t>(trim(env)); v && *v >= 0)
            us = std::min(*v, kMaxSpinUs);
    }
    return us * 1000;
}

void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// The largest power of two at most n (0 for 0).
std::uint32_t floor_pow2(std::uint32_t n)
{
    std::uint32_t p = 1;
    while (p <= n / 2)
        p *= 2;
    return n == 0 ? 0 : p;
}

} // namespace

std::uint64_t fork_generation() noexcept
{
    return g_fork_gen.load(std::memory_order_relaxed);
}

void watch_forks()
{
    static const int registered = pthread_atfork(nullptr, nullptr, &on_fork_child);
    (void)registered;
}

namespace {

constexpr std::size_t kMaxSpareRings = 4;

// A spare ring of at least bytes, or none. Caller holds dev->uq_mu.
BufferPtr take_spare_locked(hpu_device *dev, std::uint64_t bytes)
{
    for (auto it = dev->uq_spares.begin(); it != dev->uq_spares.end(); ++it) {
        if ((*it)->size >= bytes && (*it)->epoch == dev->epoch) {
            BufferPtr b = std::move(*it);
            dev->uq_spares.erase(it);
            return b;
        }
    }
    return {};
}

// Keeps a ring no queue uses for the next queue, or frees it when the
// device keeps enough (or it is of a file reopened since). Caller holds
// dev->uq_mu and is in the process the rings belong to.
void keep_spare_locked(hpu_device *dev, BufferPtr &ring) noexcept
{
    if (!ring || ring->epoch != dev->epoch || dev->uq_spares.size() >= kMaxSpareRings)
        return; // the caller frees it
    try {
        dev->uq_spares.push_back(std::move(ring));
    } catch (const std::bad_alloc &) { // NOLINT(bugprone-empty-catch): freed by the caller
    }
}

} // namespace

void drop_spare_rings(hpu_device *dev) noexcept
{
    std::vector<BufferPtr> spares;
    bool ours = false;
    {
        const std::lock_guard<std::mutex> lock(dev->uq_mu);
        spares.swap(dev->uq_spares);
        ours = dev->uq_fork_gen == fork_generation();
    }
    if (!ours) {
        for (BufferPtr &b : spares)
            (void)b.release(); // the parent's, on the parent's file
    }
    spares.clear(); // outside the lock: a free may wait in VM_BIND UNMAP
}

int cq_status_errno(std::uint32_t status) noexcept
{
    switch (status) {
    case HPU_CQ_OK:
        return 0;
    case HPU_CQ_MMU_FAULT:
        return -EFAULT;
    case HPU_CQ_BAD_PACKET:
        return -EINVAL;
    case HPU_CQ_PRIV:
        return -EPERM;
    case HPU_CQ_ABORTED:
        return -ECANCELED;
    case HPU_CQ_ECC:
        return -EBADMSG;
    case HPU_CQ_BAD_LAUNCH:
        return -ENOEXEC;
    case HPU_CQ_TPC_ILLEGAL:
        return -EILSEQ;
    case HPU_CQ_TPC_ASSERT:
        return -EDOM;
    default: // BAD_DESC, BUS_ERROR, unknown
        return -EIO;
    }
}

int UserQueue::create(hpu_device *dev, std::uint32_t engine_class, std::uint32_t engine,
                      std::shared_ptr<UserQueue> &out)
{
    watch_forks();
    drm_hpu_info_uq info{};
    if (const int err = dev->kmd.info_user_queues(info); err < 0)
        return err;
    const std::uint32_t size = floor_pow2(std::min(info.ring_max, kMaxRing));
    if (info.ctx_max == 0 || size < 2 || (info.cqe_size != 0 && info.cqe_size != sizeof(drm_hpu_uq_cqe)))
        return -EOPNOTSUPP;
    std::shared_ptr<UserQueue> uq(new UserQueue); // NOLINT(cppcoreguidelines-owning-memory): private constructor
    uq->dev_ = dev;
    uq->epoch_ = dev->epoch;
    uq->fork_gen_ = fork_generation();
    uq->size_ = size;
    uq->spin_ns_ = spin_ns_from_env();
    uq->time_offset_ns_ = info.time_offset_ns;
    uq->last_poll_ns_ = dev->os().monotonic_ns();
    uq->closed_ = true; // nothing to destroy until UQ_CREATE succeeds
    const std::uint64_t ring_bytes = std::uint64_t{size} * sizeof(drm_hpu_uq_desc);
    // A place within the file's budget, and a ring no queue uses, if any
    // (rings are kept rather than freed: see hpu_device). A forked child
    // makes none: the file and its rings are the parent's.
    {
        const std::lock_guard<std::mutex> lock(dev->uq_mu);
        if (dev->uq_fork_gen != uq->fork_gen_)
            return -EOPNOTSUPP;
        if (dev->uq_live >= info.ctx_max)
            return -ENOSPC;
        uq->rings_ = take_spare_locked(dev, 2 * ring_bytes);
        ++dev->uq_live;
        uq->counted_ = true;
    }
    if (!uq->rings_) {
        if (const int err = buffer_create(dev, 2 * ring_bytes, HPU_MEM_HOST, uq->rings_); err < 0)
            return err;
    }
    auto *base = static_cast<std::uint8_t *>(uq->rings_->mmap_addr);
    uq->ring_ = std::span<drm_hpu_uq_desc>(reinterpret_cast<drm_hpu_uq_desc *>(base), size); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    uq->cq_ = std::span<drm_hpu_uq_cqe>(reinterpret_cast<drm_hpu_uq_cqe *>(base + ring_bytes), size); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast,cppcoreguidelines-pro-bounds-pointer-arithmetic)
    // No slot may look like the record of the descriptor it will hold.
    for (drm_hpu_uq_cqe &c : uq->cq_)
        c.index = UINT64_MAX;

    drm_hpu_uq_create req{};
    req.engine_class = engine_class;
    req.engine = engine;
    req.ring_size = size;
    req.ring_va = uq->rings_->map_va;
    req.cq_va = uq->rings_->map_va + ring_bytes;
    req.cq_size = size;
    if (const int err = dev->kmd.uq_create(req); err < 0) {
        // No job ever read the ring: it is kept for the next queue.
        const std::lock_guard<std::mutex> lock(dev->uq_mu);
        keep_spare_locked(dev, uq->rings_);
        return err;
    }
    uq->id_ = req.queue_id;
    uq->asid_ = req.asid;
    uq->closed_ = false;
    void *db = nullptr;
    if (const int err = dev->os().mmap(DRM_HPU_UQ_DB_SIZE, PROT_WRITE, MAP_SHARED, dev->fd(),
                                       static_cast<std::int64_t>(req.db_mmap_offset), &db);
        err < 0)
        return err; // the destructor destroys the queue
    uq->db_ = db;
    out = std::move(uq);
    return 0;
}

bool UserQueue::usable() const
{
    return db_ != nullptr && fork_gen_ == fork_generation() && dev_->epoch == epoch_ &&
           !dev_->lost.load(std::memory_order_acquire) && dead_flag_.load(std::memory_order_acquire) == 0;
}

// Reads the records that follow completed_, in order: the record of
// descriptor n is at slot n % size_ and carries index n once written (the
// device writes the record with an all-ones index, then the index: read
// with acquire, index n means the rest of record n is there).
void UserQueue::reap_locked()
{
    if (closed_)
        return;
    const std::uint64_t submitted = submitted_.load(std::memory_order_acquire);
    while (completed_ < submitted) {
        drm_hpu_uq_cqe &c = cq_[completed_ % size_];
        if (std::atomic_ref<__u64>(c.index).load(std::memory_order_acquire) != completed_) {
            if (!skipped_locked())
                break;
            continue;
        }
        const std::uint32_t status = std::atomic_ref<__u32>(c.status).load(std::memory_order_relaxed);
        int err = status != HPU_CQ_OK ? cq_status_errno(status) : 0;
        if (status == HPU_CQ_ABORTED) {
            // An aborted job: the driver knows why (its timeout, a reset),
            // once it has taken the stop in; until then the record waits.
            std::int32_t why = 0;
            std::uint64_t done = 0;
            if (dev_->kmd.uq_wait(id_, completed_ + 1, 0, why, done) != 0)
                break;
            if (why < 0 && why != -ENODATA)
                err = why;
        }
        ++completed_;
        if (err != 0)
            note_failure_locked(completed_, err);
    }
    completed_seen_.store(completed_, std::memory_order_release);
}

// Whether descriptor completed_ has no record and never will (the driver
// dropped it: a later record is there, records come in order): then it
// counts, with the driver's outcome.
bool UserQueue::skipped_locked()
{
    const std::uint64_t next = completed_ + 1;
    if (next >= submitted_.load(std::memory_order_acquire) ||
        std::atomic_ref<__u64>(cq_[next % size_].index).load(std::memory_order_acquire) != next)
        return false;
    std::int32_t status = 0;
    std::uint64_t done = 0;
    if (dev_->kmd.uq_wait(id_, next, 0, status, done) < 0 || done < next)
        return false;
    ++completed_;
    if (status != 0 && status != -ENODATA)
        note_failure_locked(completed_, status);
    return true;
}

void UserQueue::note_failure_locked(std::uint64_t point, int err)
{
    if (failures_.size() >= kMaxFailures) {
        forgotten_ = std::max(forgotten_, failures_.begin()->first);
        failures_.erase(failures_.begin());
    }
    try {
        failures_[point] = err;
    } catch (const std::bad_alloc &) {
        forgotten_ = std::max(forgotten_, point); // the driver's log may still tell
    }
}

// The outcome of a reached point: 0 or the job's negative errno.
int UserQueue::outcome_locked(std::uint64_t point)
{
    if (const auto it = failures_.find(point); it != failures_.end())
        return it->second;
    if (point > forgotten_)
        return 0;
    // Maybe a failure forgotten here: the driver may still know.
    std::int32_t status = 0;
    std::uint64_t done = 0;
    if (!closed_ && dev_->epoch == epoch_ && dev_->kmd.uq_wait(id_, point, 0, status, done) == 0)
        return status;
    return -ENODATA;
}

// What DRM_IOCTL_HPU_UQ_WAIT for point answered: done descriptors
// completed, status of point (or of the dead queue when done < point).
// Points the records skip (a job the driver dropped: no record) get the
// driver's outcome.
int UserQueue::settle_locked(std::uint64_t done, std::uint64_t point, std::int32_t status)
{
    done = std::min(done, submitted_.load(std::memory_order_acquire));
    reap_locked();
    while (completed_ < done) {
        const std::uint64_t p = completed_ + 1;
        std::int32_t st = status;
        if (p != point) {
            std::uint64_t d = 0;
            if (const int err = dev_->kmd.uq_wait(id_, p, 0, st, d); err < 0)
                return err;
        }
        ++completed_;
        if (st != 0 && st != -ENODATA)
            note_failure_locked(p, st);
        reap_locked();
    }
    if (done < point) {
        dead_ = status < 0 ? status : -ECANCELED;
        dead_flag_.store(dead_, std::memory_order_release);
    }
    return 0;
}

// What a UQ_WAIT for point returned (err, done, status) taken in: the
// queue ended (-ECANCELED or -EFAULT, from a driver that returns it), the
// points it reached, or err itself (-ETIME: nothing to take in).
int UserQueue::settle_answer_locked(int err, std::uint64_t done, std::uint64_t point, std::int32_t status)
{
    if (err == -ECANCELED || err == -EFAULT)
        return settle_locked(0, point, err);
    if (err < 0)
        return err;
    return settle_locked(done, point, status);
}

int UserQueue::submit(std::uint64_t cb_va, std::uint32_t cb_size, std::uint64_t &point)
{
    const std::uint64_t n = submitted_.load(std::memory_order_relaxed);
    // One slot of slack: the device writes a record before it moves its
    // consumer index, and ignores a doorbell more than a ring ahead of it,
    // so descriptor n may go only once descriptor n + 1 - size_ has a
    // record (not just n - size_).
    if (n + 1 - completed_seen_.load(std::memory_order_acquire) >= size_) {
        {
            const std::lock_guard<std::mutex> lock(mu_);
            reap_locked();
        }
        if (n + 1 - completed_seen_.load(std::memory_order_acquire) >= size_) {
            if (const int err = wait(n + 2 - size_, INT64_MAX); err < 0)
                return err;
            if (n + 1 - completed_seen_.load(std::memory_order_acquire) >= size_)
                return dead_flag_.load(std::memory_order_acquire) != 0 ? dead_flag_.load() : -EIO;
        }
    }
    drm_hpu_uq_desc &d = ring_[n % size_];
    d.cb_va = cb_va;
    d.cb_size = cb_size;
    d.asid = static_cast<__u16>(asid_);
    d.flags = 0;
    d.seq = n + 1;
    d.reserved = 0;
    // The job may read what the caller stored through write-combining
    // mappings of device memory; then the descriptor before the doorbell
    // (on x86 ordinary stores stay before the uncached one).
    dev_->os().flush_wc_stores();
    std::atomic_ref<std::uint32_t>(*static_cast<std::uint32_t *>(db_))
        .store(static_cast<std::uint32_t>(n + 1), std::memory_order_release);
    submitted_.store(n + 1, std::memory_order_release);
    point = n + 1;
    return 0;
}

// A point still pending by the records: at most every kDriverPollNs,
// ask the driver without waiting (UQ_WAIT, deadline 0), which alone tells
// that the queue died (a ring fault: no more records) to a caller that
// only polls.
void UserQueue::poll_driver_locked(std::uint64_t point)
{
    const std::int64_t now = dev_->os().monotonic_ns();
    if (closed_ || now - last_poll_ns_ < kDriverPollNs)
        return;
    last_poll_ns_ = now;
    std::int32_t status = 0;
    std::uint64_t done = 0;
    const int err = dev_->kmd.uq_wait(id_, point, 0, status, done);
    (void)settle_answer_locked(err, done, point, status);
}

int UserQueue::state(std::uint64_t point, int &job_status, bool ask_driver)
{
    if (point == 0 || point > submitted())
        return -EINVAL;
    const std::lock_guard<std::mutex> lock(mu_);
    reap_locked();
    if (ask_driver && point > completed_ && dead_ == 0)
        poll_driver_locked(point);
    job_status = point <= completed_ ? outcome_locked(point) : (dead_ != 0 ? dead_ : 1);
    return 0;
}

int UserQueue::wait(std::uint64_t point, std::int64_t deadline)
{
    Os &os = dev_->os();
    int st = 0;
    const std::int64_t start = os.monotonic_ns();
    const std::int64_t spin_end = deadline - start < spin_ns_ ? deadline : start + spin_ns_;
    for (;;) {
        if (const int err = state(point, st); err < 0)
            return err;
        if (st != 1)
            return 0;
        if (os.monotonic_ns() >= spin_end)
            break;
        cpu_relax();
    }
    // Not under mu_: other threads read the records meanwhile.
    std::int32_t status = 0;
    std::uint64_t done = 0;
    const int err = dev_->kmd.uq_wait(id_, point, deadline, status, done);
    const std::lock_guard<std::mutex> lock(mu_);
    if (closed_)
        return 0; // close() settled every point
    return settle_answer_locked(err, done, point, status);
}

int UserQueue::fence_into(std::uint64_t point, std::uint32_t handle, std::int64_t catch_up)
{
    // Once closed, the id may name another queue: the callers fall back
    // to the settled state.
    bool seen = false;
    {
        const std::lock_guard<std::mutex> lock(mu_);
        if (closed_)
            return -ENOENT;
        if (catch_up != 0) {
            reap_locked();
            seen = point <= completed_;
        }
    }
    if (seen) {
        // Settles at once unless the driver lags behind the record; at
        // the deadline the fence is put as the driver has it. Not under
        // mu_ (the driver may lag for long, e.g. through a soft reset);
        // should the queue be closed meanwhile and its id reused, this
        // only waits, and UQ_FENCE below is not made.
        std::int32_t status = 0;
        std::uint64_t done = 0;
        (void)dev_->kmd.uq_wait(id_, point, catch_up, status, done);
    }
    const std::lock_guard<std::mutex> lock(mu_);
    if (closed_)
        return -ENOENT;
    return dev_->kmd.uq_fence(id_, point, handle);
}

int UserQueue::completion_time(std::uint64_t point, std::uint64_t &ns)
{
    if (point == 0 || point > submitted())
        return -EINVAL;
    const std::lock_guard<std::mutex> lock(mu_);
    reap_locked();
    if (point > completed_)
        return dead_ != 0 ? -ENODATA : -EBUSY;
    if (closed_)
        return -ENODATA;
    drm_hpu_uq_cqe &c = cq_[(point - 1) % size_];
    if (std::atomic_ref<__u64>(c.index).load(std::memory_order_acquire) != point - 1)
        return -ENODATA;
    const std::int64_t t = static_cast<std::int64_t>(c.time) + time_offset_ns_;
    if (t <= 0)
        return -ENODATA;
    ns = static_cast<std::uint64_t>(t);
    return 0;
}

void UserQueue::uncount() noexcept
{
    if (!counted_)
        return;
    counted_ = false;
    const std::lock_guard<std::mutex> lock(dev_->uq_mu);
    if (dev_->epoch == epoch_ && dev_->uq_live > 0)
        --dev_->uq_live;
}

int UserQueue::close() noexcept
{
    std::unique_lock<std::mutex> lock(mu_);
    if (closed_) {
        uncount();
        return 0;
    }
    const bool stale = dev_->epoch != epoch_;
    const bool child = fork_gen_ != fork_generation();
    int err = 0;
    lock.unlock();
    // The jobs still read the ring and their command buffers: they end first.
    if (!stale && !child && db_ != nullptr && !dev_->lost.load(std::memory_order_acquire) && submitted() != 0)
        err = wait(submitted(), INT64_MAX);
    lock.lock();
    closed_ = true;
    if (child) {
        // The file, the queue and the ring buffer are the parent's.
        dead_flag_.store(-ECANCELED, std::memory_order_release);
        db_ = nullptr;
        ring_ = {};
        cq_ = {};
        (void)rings_.release();
        return 0;
    }
    bool ring_free = false; // no stream uses the ring any more
    if (!stale) {
        const int e = dev_->kmd.queue_destroy(id_);
        ring_free = e == 0;
        err = err < 0 ? err : e;
    }
    // Jobs not reached were dropped with the queue.
    if (completed_ < submitted_.load(std::memory_order_acquire) && dead_ == 0)
        dead_ = -ECANCELED;
    dead_flag_.store(dead_ != 0 ? dead_ : -ECANCELED, std::memory_order_release);
    if (db_ != nullptr && !child) {
        const int e = dev_->os().munmap(db_, DRM_HPU_UQ_DB_SIZE);
        err = err < 0 ? err : e;
    }
    db_ = nullptr;
    ring_ = {};
    cq_ = {};
    if (ring_free) { // (a child returned above; a stale queue destroyed nothing)
        const std::lock_guard<std::mutex> spare_lock(dev_->uq_mu);
        keep_spare_locked(dev_, rings_);
    }
    rings_.reset();
    uncount();
    return err;
}

} // namespace hpu::detail
