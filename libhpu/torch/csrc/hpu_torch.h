// SPDX-License-Identifier: MIT
// hpu_torch.h - the PyTorch backend's internal interfaces: per-device
// contexts and their streams and events (stream.cpp, device.cpp), the
// caching allocator (allocator.cpp), the CPU fallback (fallback.cpp) and
// the helpers the op files share.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TORCH_H
#define HPU_TORCH_H

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/Allocator.h>

#include <cstdint>
#include <array>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hpu/hpu.hpp"

namespace hpu_torch {

// ---- devices ---------------------------------------------------------------

/** Number of HPUs (libhpu's count; 0 when there is none or no driver). */
int device_count() noexcept;
/** The calling thread's current HPU index (the device guard's). */
int current_device() noexcept;
/** Sets the calling thread's current HPU index. */
void set_current_device(int index);

// ---- streams ---------------------------------------------------------------

/** Streams of a device: 0 is the default stream, 1 .. kPoolStreams the pool. */
constexpr int kPoolStreams = 4;
constexpr int kStreams = 1 + kPoolStreams;
/** The calling thread's current stream (its id) on HPU device. */
int current_stream(int device) noexcept;
/** Makes stream the calling thread's current stream on device; returns the previous one. */
int exchange_stream(int device, int stream) noexcept;
/** A stream of device's pool, round robin (as CUDA's getStreamFromPool). */
int pool_stream(int device) noexcept;
/** Raises unless stream is a stream id of HPU device (0 .. kStreams - 1). */
void check_stream(int device, std::int64_t stream);

/**
 * What a c10 event of the HPU points to: the fence of the last job of the
 * stream it was recorded on (a marker job's with timing), shared with the
 * stream's pending list. No fence: never recorded, or recorded on a
 * stream with nothing issued (complete, as CUDA's). Recorded by one
 * thread while others may query or wait for it: its state is read and
 * written as a whole under its own mutex (state(), set()).
 */
struct StreamEvent {
    struct State {
        int device = -1; // -1 until first recorded
        int stream = 0;
        bool recorded = false;
        std::shared_ptr<hpu::Fence> fence; // what query() and synchronize() wait for
        // The job the event follows, whose failure synchronize() reports:
        // fence's own job, or with timing the job before the marker.
        std::shared_ptr<hpu::Fence> job;
        std::string what; // that job, for errors
    };
    bool timing = false; // set once, before the first record

    [[nodiscard]] State state() const
    {
        const std::lock_guard<std::mutex> g(mutex_);
        return state_;
    }
    void set(State s)
    {
        const std::lock_guard<std::mutex> g(mutex_);
        state_ = std::move(s);
    }

private:
    mutable std::mutex mutex_;
    State state_;
};
/** Records ev on stream of device (raises for a stream of another device than ev's). */
void record_event(StreamEvent &ev, int device, int stream);
/**
 * Makes stream of device wait for ev (nothing if never recorded or its job
 * ended well); another device's event through its job's fence exported as
 * a sync_file and imported here.
 */
void block_event(const StreamEvent &ev, int device, int stream);
/** Whether ev's job has ended (true if never recorded). */
bool query_event(const StreamEvent &ev);
/** Waits for ev's job; raises if it failed. */
void synchronize_event(const StreamEvent &ev);
/**
 * Milliseconds from start's job to end's (timing events, both ended):
 * the driver's completion times of their marker jobs (CLOCK_MONOTONIC,
 * hpu_fence_signal_time()). Raises otherwise.
 */
double event_elapsed_ms(const StreamEvent &start, const StreamEvent &end);

/**
 * One device operation as the stream executes it. Eager mode issues each
 * one as a job at once; a recorder (lazy mode) can capture the same values
 * into an hpu::Graph instead.
 */
struct Job {
    enum class Kind { Copy, Memset, Launch, Gemm, Marker }; // Marker: a NOP (events; never recorded)
    Kind kind = Kind::Copy;
    std::string what;              // for error messages: the op and the step
    std::uint64_t dst = 0;         // Copy, Memset
    std::uint64_t src = 0;         // Copy
    std::uint64_t size = 0;        // Copy, Memset (bytes)
    std::uint64_t pattern = 0;     // Memset: the 64-bit pattern
    const hpu::Kernel *kernel = nullptr; // Launch
    hpu::Launch launch;            // Launch
    hpu_gemm gemm{};               // Gemm
};

/** Lazy mode's counters of one device (hpu_torch.core.lazy_stats()). */
struct LazyStats {
    std::uint64_t recorded = 0;     // jobs recorded
    std::uint64_t flushes = 0;      // recorded steps run (one graph launch each)
    std::uint64_t graphs_built = 0; // cache misses: graphs made
    std::uint64_t cache_hits = 0;   // steps run by a cached graph
    std::uint64_t launches = 0;     // graph launches
    std::uint64_t evictions = 0;    // graphs dropped (LRU, no sync object left, a failure)
    std::uint64_t cached = 0;       // graphs in the cache now
    std::uint64_t failures = 0;     // lazy steps that failed on the device
    std::uint64_t fused = 0;        // elementwise chains run as one generated kernel
    std::uint64_t fused_ops = 0;    // library launches those chains replaced
    std::uint64_t tpc_launches = 0; // TPC launches in the steps run (after fusion)
};

class LazyRecorder; // lazy.cpp

/** Whether ops are recorded (lazy mode; PT_HPU_LAZY_MODE=1 at load time). */
bool lazy_mode() noexcept;
/** Switches lazy mode for the process; the recorded work of every device runs first. */
void set_lazy_mode(bool on);

/**
 * An opened HPU: its libhpu device, kernels by name and its streams (each
 * with a DMA, a TPC and an MME queue of its own, made on first use). Every
 * op locks it (lock()) for its whole body, so the autograd engine's thread
 * and the Python thread never interleave jobs. Opened lazily by get();
 * after a hard reset (device lost) the next get() reopens it with a fresh
 * context.
 */
class DeviceContext {
public:
    /** The context of HPU index (opened on first use, reopened after a loss). Throws c10::Error. */
    static DeviceContext &get(int index);
    /** Whether the context of index was opened (nothing is opened by asking). */
    static bool opened(int index) noexcept;
    /**
     * The context of index if it was opened, else nullptr: neither opened
     * nor recovered (the allocator's deleter, which must not reopen a
     * lost device).
     */
    static DeviceContext *find(int index) noexcept;
    /** Whether the device was lost (a reset): every job of the context has ended. Under lock(). */
    [[nodiscard]] bool lost() const noexcept;

    DeviceContext(const DeviceContext &) = delete;
    DeviceContext &operator=(const DeviceContext &) = delete;
    DeviceContext(DeviceContext &&) = delete;
    DeviceContext &operator=(DeviceContext &&) = delete;
    ~DeviceContext();

    [[nodiscard]] std::unique_lock<std::recursive_mutex> lock() { return std::unique_lock(mutex_); }
    [[nodiscard]] int index() const noexcept { return index_; }
    [[nodiscard]] hpu::Device &device() noexcept { return dev_; }
    /** Counts device resets seen (a buffer of an older generation is stale). */
    [[nodiscard]] std::uint64_t generation() const noexcept { return generation_; }

    /** A kernel of libhpu's built-in library, loaded once. Throws c10::Error. */
    const hpu::Kernel &kernel(const std::string &name);
    /** Whether the library has a kernel of that name. */
    static bool has_kernel(const std::string &name);

    /**
     * Issues job on the calling thread's current stream of the device,
     * after every job issued on that stream before it (stream order); in
     * lazy mode records it for the step's graph instead. Throws c10::Error.
     */
    void submit(Job job);
    /** Issues job at once even in lazy mode (after flush()). Throws c10::Error. */
    void submit_now(Job job);
    /**
     * Lazy mode: runs the jobs recorded so far as one graph (nothing
     * recorded: nothing), after the work of every stream an op of the
     * step was recorded on and of the current stream; the graph is then
     * the last job of each of those streams.
     */
    void flush();
    /**
     * Runs the recorded jobs, then waits for every job of every stream;
     * throws c10::Error naming the failed job of the lowest stream id that
     * has one (the streams are synchronised in id order).
     */
    void synchronize();

    // Streams and events (the device guard's; stream ids 0 .. kStreams - 1).
    /** Runs the recorded jobs, waits for the jobs of stream; throws as synchronize(). */
    void synchronize_stream(int stream);
    /** Whether every job issued on stream has ended (runs the recorded jobs first). */
    bool query_stream(int stream);
    /** Points ev at stream's last job (a new marker job with timing); runs the recorded jobs first. */
    void record_event(StreamEvent &ev, int stream);
    /**
     * Makes stream's later jobs wait (in the driver's scheduler) for ev's
     * job: a marker job, whose pending entry keeps ev's job so that the
     * stream's synchronisation reports that job's failure too.
     */
    void block_event(const StreamEvent &ev, int stream);
    /**
     * block_event() for an event of HPU from_device: its job's fence as a
     * sync_file fd (the caller keeps fd), imported into this device as
     * the marker's wait; what names that job.
     */
    void block_foreign(int sync_file_fd, int from_device, const std::string &what, int stream);
    /** Waits for ev (recorded on this device); raises naming its job if that failed. */
    void synchronize_event(const StreamEvent::State &ev);
    /**
     * The fences of the last jobs of the streams in mask (bit s: stream s)
     * that have not ended, for the allocator's record_stream; runs the
     * recorded jobs first.
     */
    std::vector<std::shared_ptr<hpu::Fence>> stream_fences(std::uint32_t mask);
    /** As stream_fences() without running the recorded jobs (when that failed). */
    [[nodiscard]] std::vector<std::shared_ptr<hpu::Fence>> stream_tails(std::uint32_t mask) const;
    /** Waits on the host for the last jobs of the streams in mask (a failure is theirs to report). */
    void wait_tails(std::uint32_t mask) const noexcept;
    /**
     * Tests only: stream's later jobs wait until release_stream(handle):
     * a job blocked in a WAIT on a sync object of the context. Returns the handle.
     */
    int hold_stream(int stream);
    void release_stream(int handle);
    /** Lazy mode's counters. */
    [[nodiscard]] LazyStats lazy_stats() const;
    /** What the last lazy step's graph ran, one entry per node (fused chains as "fused(a+b)"). */
    [[nodiscard]] std::vector<std::string> lazy_last_step() const;
    /** Jobs issued since the context was opened. */
    [[nodiscard]] std::uint64_t jobs() const noexcept { return jobs_; }

    /** Waits for the last job issued (and its stream's jobs before it); throws as synchronize(). */
    void wait_last();

    /** A staging buffer: host memory mapped into the device. */
    struct Staging {
        void *host = nullptr;
        std::uint64_t va = 0;
        std::size_t slot = 0;
    };
    /**
     * A staging buffer of at least bytes that no job reads or writes any
     * more (one of a few, so that the host fills one while the device
     * reads another). Say staging_used() once the job that uses it is
     * issued. Throws c10::Error.
     */
    Staging staging(std::uint64_t bytes);
    /** The last job issued uses the staging buffer of slot. */
    void staging_used(std::size_t slot) noexcept;
    /**
     * Host memory for the source of one host->device copy submitted next:
     * staging() in eager mode; in lazy mode a part of the recorded step's
     * own staging area, untouched until that step's graph has run (its
     * slot is then none of staging()'s, so staging_used() ignores it).
     */
    Staging upload_staging(std::uint64_t bytes);

    /** Runs fn, turning hpu::Error into c10::Error and noting a lost device. */
    template <typename Fn>
    auto guarded(const char *what, Fn &&fn) -> decltype(fn())
    {
        try {
            return fn();
        } catch (const hpu::Error &e) {
            fail(what, e);
        }
    }

private:
    explicit DeviceContext(int index);
    [[noreturn]] void fail(const char *what, const hpu::Error &e);
    /** Raises another HPU's job failure (an imported fence): this device stays usable unless it is lost itself. */
    [[noreturn]] void fail_foreign(const char *what, const hpu::Error &e);
    void open();
    void recover();

    struct Pending {
        std::shared_ptr<hpu::Fence> fence;
        std::string what;
        std::uint64_t seq = 0; // jobs() once it was issued (a lazy graph: its last recorded job)
        // An event wait's marker: the event's job (a failed fence signals
        // all the same, so the marker succeeds): its failure is the
        // waiting stream's too, reported naming that job.
        std::shared_ptr<hpu::Fence> waited;
        std::string waited_what; // "job 'name'", or "HPU n's job 'name'" (another HPU's event)
        int waited_device = -1;  // waited was imported from that HPU (its failure is not this device's)
    };
    /** One job issued: its stream, number and fence (staging buffers remember their last). */
    struct JobRef {
        int stream = 0;
        std::uint64_t seq = 0;
        std::shared_ptr<hpu::Fence> fence;
    };
    struct StreamState {
        hpu::Queue dma, tpc, mme; // made on first use
        std::deque<Pending> pending; // issued, not known to have ended; seq ascending
        // The last job issued on the stream (a lazy graph's may sit in
        // another stream's pending list); reset once known to have ended.
        std::shared_ptr<hpu::Fence> tail;
        std::string tail_what;       // tail's job, for errors
        bool in_step = false;        // lazy mode: an op of the recorded step was recorded on it
    };

    friend class LazyRecorder;
    /** Issues job on stream after its last job (and after waited, an event's job: a marker's). */
    void issue(Job job, int stream, const std::shared_ptr<hpu::Fence> &waited = {}, const std::string &waited_what = {},
               int waited_device = -1);
    /** The pending entry of fence in any stream's list (nullptr when retired); its stream in *stream. */
    const Pending *find_pending(const std::shared_ptr<hpu::Fence> &fence, int *stream) const;
    /** Waits for stream's oldest pending job and forgets it; throws if it failed. */
    void retire_front(int stream);
    /** Waits for the jobs of stream up to number seq. */
    void retire_through(int stream, std::uint64_t seq);
    /** Retires stream's oldest job when it has too many pending. */
    void make_room(int stream);
    hpu::Queue &queue(int stream, std::uint32_t engine_class);
    // Lazy mode's graph launch (lazy.cpp): what it waits for, and its fence made the streams' last job.
    std::vector<const hpu::Fence *> step_waits(int stream);
    void step_launched(int stream, const std::shared_ptr<hpu::Fence> &fence, std::string what);

    int index_;
    std::recursive_mutex mutex_;
    hpu::Device dev_;
    std::uint64_t generation_ = 0;
    bool lost_ = false;
    std::map<std::string, hpu::Kernel> kernels_;
    struct StagingBuffer {
        hpu::Buffer buf;
        JobRef last_use; // the last job that used it
    };
    std::vector<StagingBuffer> staging_;
    // Streams (their queues) after the buffers: a queue's destruction waits for its jobs.
    std::array<StreamState, kStreams> streams_;
    hpu::CommandList cl_;
    JobRef last_;                 // the last job issued
    std::uint64_t jobs_ = 0;
    // Tests' held streams: the sync object each waits on, and the queue that releases them.
    struct Hold {
        hpu::SyncObject sob;
        std::shared_ptr<hpu::Fence> fence; // the held job
    };
    std::map<int, Hold> holds_;
    int next_hold_ = 1;
    hpu::Queue control_;
    // Lazy mode's recording, graph cache and staging areas (lazy.cpp);
    // after the queues: its graphs wait for their launches when destroyed.
    std::unique_ptr<LazyRecorder> lazy_;
};

// ---- memory ----------------------------------------------------------------

/** Statistics of the caching allocator of one device (bytes and counts). */
struct MemoryStats {
    std::uint64_t allocated = 0;      // bytes of blocks in use
    std::uint64_t peak_allocated = 0; // highest allocated since the last reset
    std::uint64_t reserved = 0;       // bytes of HBM slabs held
    std::uint64_t peak_reserved = 0;
    std::uint64_t active_blocks = 0;  // blocks in use
    std::uint64_t slabs = 0;          // slabs (hpu::Buffer objects) held
    std::uint64_t allocs = 0;         // allocations served
    std::uint64_t frees = 0;
    std::uint64_t slab_allocs = 0;    // slabs created (buffer objects made)
    std::uint64_t slab_frees = 0;
    std::uint64_t cache_hits = 0;     // allocations served from cached blocks
};

/** The allocator registered for the HPU device type. */
c10::Allocator *hpu_allocator();
MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);
/** Waits for the device and returns the slabs with no block in use. */
void empty_cache(int device);
/**
 * Whether any byte of [lo, hi) of device's memory is in a block in use
 * (true too when no slab holds it): lazy fusion drops the store of an
 * intermediate only when its tensor is gone.
 */
bool memory_in_use(int device, std::uint64_t lo, std::uint64_t hi);
/** Forgets every slab of a lost device (the buffers are stale). */
void drop_device_memory(int device, std::uint64_t generation);
/**
 * record_stream: the block of data_ptr (an HPU allocation) is used by
 * stream of its device too; when freed, it is reused only after the jobs
 * issued on that stream by then have ended. Other data pointers: nothing.
 */
void record_stream(const c10::DataPtr &data_ptr, int device, int stream);

// ---- tensors and ops -------------------------------------------------------

/** HPU_DTYPE_* of a torch type, 0 when the device has none (Long, Double, ...). */
std::uint32_t device_dtype(c10::ScalarType t) noexcept;
/** Raises when t's memory is from before a hard reset of its HPU (its
 * address may belong to another buffer of the new context). */
void check_fresh(const at::Tensor &t);
/** The device VA of a tensor's first element (checked fresh). */
inline std::uint64_t va_of(const at::Tensor &t)
{
    check_fresh(t);
    return reinterpret_cast<std::uint64_t>(t.data_ptr()); // NOLINT(performance-no-int-to-ptr)
}
/** Whether t lives on an HPU. */
inline bool is_hpu(const at::Tensor &t) { return t.device().type() == c10::DeviceType::HPU; }

/** Raises PyTorch's error for two HPU tensors on different HPUs. */
void check_same_device(const at::Tensor &a, const at::Tensor &b);
/** The context of t's device, locked by the caller. */
DeviceContext &context_of(const at::Tensor &t);

/** An empty HPU tensor (the allocator's memory). */
at::Tensor empty_hpu(at::IntArrayRef sizes, c10::ScalarType dtype, c10::Device device);
/** dst (HPU) = src (same shape, any device, dtype and strides). */
void copy_into(const at::Tensor &dst, const at::Tensor &src);
/** dst (HPU) = value everywhere. */
void fill_hpu(const at::Tensor &dst, const c10::Scalar &value);

// ---- random numbers (generator.cpp) ----------------------------------------

/** The default generator of HPU device (-1: the current HPU), made on first use. */
const at::Generator &default_generator(int device);
/** A new generator of HPU device (-1: the current HPU), seeded with PyTorch's default seed. */
at::Generator new_generator(int device);
/** The seed of one random draw on device: an HPU generator's next key (gen,
 * or device's default generator without one), a CPU generator's next 64
 * bits when gen is one. */
std::uint64_t next_seed(const c10::optional<at::Generator> &gen, c10::Device device);
/** The CPU generator the CPU fallback draws with for a draw on device: gen
 * when it is a CPU generator, else a new one seeded with next_seed(gen,
 * device), so the host's draws do not advance the CPU's default generator. */
at::Generator cpu_generator_for(const c10::optional<at::Generator> &gen, c10::Device device);

// ---- the CPU fallback ------------------------------------------------------

/** The boxed fallback: runs op on the CPU with copies of its HPU tensors. */
void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack);
/** Counts one use of the host by name (an op's part with no exact device path). */
void count_fallback(const std::string &name);
/** How many times each op ran through the fallback. */
std::map<std::string, std::int64_t> fallback_counts();
void reset_fallback_counts();

} // namespace hpu_torch

#endif // HPU_TORCH_H
