// SPDX-License-Identifier: MIT
// hpu-train: the HPU trainer (train_hpu.h), on libhpu's compute API.
//
// Copyright (c) 2026 The hpu authors
#include "train_hpu.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "hpu/hpu.hpp"

namespace hpu_train {

namespace {

using Clock = std::chrono::steady_clock;

void check(int r, const std::string &what)
{
    if (r < 0) {
        const std::string why = hpu_last_error();
        throw hpu::Error(r, why.empty() ? what : what + " (" + why + ")");
    }
}

std::uint32_t fbits(float f) { return std::bit_cast<std::uint32_t>(f); }

constexpr std::uint32_t kNegInf = 0xff800000U; // padding before a max
constexpr std::uint32_t kEwLanes = 256;        // elements per member of the elementwise kernels
constexpr std::uint32_t kColLanes = 64;        // columns per member of bias_grad

template <auto Free>
struct Deleter {
    template <typename T>
    void operator()(T *p) const noexcept
    {
        (void)Free(p);
    }
};
using KernelPtr = std::unique_ptr<hpu_kernel_t, Deleter<hpu_kernel_destroy>>;
using GraphPtr = std::unique_ptr<hpu_graph_t, Deleter<hpu_graph_destroy>>;
using FencePtr = std::shared_ptr<hpu::Fence>;

KernelPtr kernel(const hpu::Device &dev, const char *name)
{
    hpu_kernel_t *k = nullptr;
    check(hpu_kernel_get(dev.get(), name, &k), std::string("loading kernel ") + name);
    return KernelPtr(k);
}

// A region of device memory, named for the dependency tracking.
struct Region {
    int id = -1;
    std::uint64_t bytes = 0;
};

// One HBM buffer carved into regions, 256-byte aligned.
class Arena {
public:
    Region add(std::uint64_t bytes)
    {
        Region r{static_cast<int>(offsets_.size()), bytes};
        offsets_.push_back(size_);
        size_ += (bytes + 255) / 256 * 256;
        regions_.push_back(r);
        return r;
    }
    // Allocates the buffer; regions added before get their addresses through va().
    void allocate(const hpu::Device &dev)
    {
        buf_ = hpu::Buffer::create(dev, size_, HPU_MEM_DEVICE);
    }
    [[nodiscard]] std::uint64_t va(const Region &r) const { return buf_.va() + offsets_.at(static_cast<std::size_t>(r.id)); }
    [[nodiscard]] int count() const { return static_cast<int>(regions_.size()); }

private:
    std::vector<std::uint64_t> offsets_;
    std::vector<Region> regions_;
    std::uint64_t size_ = 0;
    hpu::Buffer buf_;
};

// One device operation of a program.
struct Op {
    enum class Kind { Copy, Memset, Gemm, Launch };
    Kind kind = Kind::Copy;
    std::string what;
    std::uint64_t dst = 0;
    std::uint64_t src = 0;
    std::uint64_t size = 0;
    std::uint64_t pattern = 0;
    hpu_gemm gemm{};
    const hpu_kernel_t *kernel = nullptr;
    std::vector<hpu_tensor> tensors;
    std::vector<std::uint32_t> scalars;
    std::array<std::uint32_t, HPU_TENSOR_MAX_DIMS> index{1, 1, 1, 1, 1};
    std::vector<int> reads;
    std::vector<int> writes;

    [[nodiscard]] hpu_launch launch() const
    {
        hpu_launch l{};
        l.size = sizeof(l);
        l.num_tensors = static_cast<std::uint32_t>(tensors.size());
        l.tensors = tensors.data();
        l.scalars = scalars.data();
        l.num_scalars = static_cast<std::uint32_t>(scalars.size());
        std::copy(index.begin(), index.end(), std::begin(l.index_size));
        return l;
    }
};
using Program = std::vector<Op>;

// For each op of p, the earlier ops it must follow: the last writer of
// every region it touches and, for a region it writes, the readers since.
std::vector<std::vector<std::uint32_t>> program_deps(const Program &p, int regions)
{
    std::vector<int> writer(static_cast<std::size_t>(regions), -1);
    std::vector<std::vector<std::uint32_t>> readers(static_cast<std::size_t>(regions));
    std::vector<std::vector<std::uint32_t>> deps(p.size());
    for (std::uint32_t i = 0; i < p.size(); ++i) {
        auto &d = deps[i];
        auto add = [&d](std::uint32_t j) {
            if (std::find(d.begin(), d.end(), j) == d.end())
                d.push_back(j);
        };
        for (const int r : p[i].reads) {
            if (writer.at(static_cast<std::size_t>(r)) >= 0)
                add(static_cast<std::uint32_t>(writer[static_cast<std::size_t>(r)]));
        }
        for (const int w : p[i].writes) {
            if (writer.at(static_cast<std::size_t>(w)) >= 0)
                add(static_cast<std::uint32_t>(writer[static_cast<std::size_t>(w)]));
            for (const std::uint32_t j : readers[static_cast<std::size_t>(w)]) {
                if (j != i)
                    add(j);
            }
        }
        for (const int r : p[i].reads)
            readers[static_cast<std::size_t>(r)].push_back(i);
        for (const int w : p[i].writes) {
            writer[static_cast<std::size_t>(w)] = static_cast<int>(i);
            readers[static_cast<std::size_t>(w)].clear();
        }
    }
    return deps;
}

struct Queues {
    hpu::Queue dma;
    hpu::Queue tpc;
    std::array<hpu::Queue, 2> mme;
};

// Waits for a job and ignores how it ended (check() of Jobs reports it).
void wait_quiet(const FencePtr &f) noexcept
{
    if (f)
        (void)hpu_fence_wait(f->get(), HPU_TIMEOUT_INFINITE);
}

// The device's error events waiting to be read, as text: the engine,
// address and info of what failed (inside a graph launch too, whose fence
// fails, once all its jobs have ended, with the error of the job that
// failed first).
std::string device_errors(const hpu::Device &dev)
{
    std::vector<std::string> seen;
    auto cb = [](hpu_device_t * /*dev*/, const hpu_event *ev, void *user) {
        auto &v = *static_cast<std::vector<std::string> *>(user);
        if (ev->type != HPU_EVENT_ERROR)
            return;
        std::string s = hpu_error_kind_name(ev->kind);
        if (ev->engine != HPU_ENGINE_NONE)
            s += " on engine " + std::to_string(ev->engine);
        if (ev->info != 0)
            s += " (info " + std::to_string(ev->info) + ")";
        // A job's event and the device's own (with the info), in either
        // order, say one thing: keep the longer.
        for (std::string &o : v) {
            if (o.rfind(s, 0) == 0)
                return;
            if (s.rfind(o, 0) == 0) {
                o = s;
                return;
            }
        }
        if (v.size() < 4)
            v.push_back(s);
    };
    (void)hpu_device_process_events(dev.get(), cb, &seen);
    std::string out;
    for (const std::string &s : seen)
        out += (out.empty() ? "" : "; ") + s;
    return out;
}

// f's error information, waiting up to 2 s for the device event with the
// address and info of a compute error or MMU fault, which may reach the
// file after the job's own (Documentation/driver/errors.md, "Pairing").
hpu_error_info error_info_complete(const hpu::Fence &f)
{
    return f.error_info(std::chrono::seconds(2));
}

// The jobs (or graph launches) not yet known to have succeeded, oldest
// first, each with what it does. The device runs a job whose dependency
// failed (a failed fence is signalled all the same), so no error would
// ever reach the host through the data: every job's own fence is checked.
class Jobs {
public:
    explicit Jobs(const hpu::Device &dev) : dev_(dev) {}

    void add(FencePtr f, const std::string &what) { pending_.push_back({std::move(f), what}); }

    // Forgets the jobs that ended well, oldest first, up to the first still
    // running; throws hpu::Error naming the first that failed.
    void check()
    {
        while (!pending_.empty()) {
            const int st = pending_.front().fence->status();
            if (st == 1)
                return;
            if (st < 0) {
                const Pending p = pending_.front();
                const hpu_error_info info = error_info_complete(*p.fence);
                const std::string dev = device_errors(dev_);
                pending_.clear();
                throw hpu::Error(st, "HPU job '" + p.what + "'" + (dev.empty() ? "" : " [device: " + dev + "]"), info);
            }
            pending_.pop_front();
        }
    }
    // Waits for every job, then check().
    void wait_all()
    {
        for (const Pending &p : pending_)
            wait_quiet(p.fence);
        check();
    }
    // Waits for every job and forgets them, whatever happened (cleanup).
    void drain() noexcept
    {
        for (const Pending &p : pending_)
            wait_quiet(p.fence);
        pending_.clear();
    }
    // Jobs submitted so far.
    [[nodiscard]] std::uint64_t submitted() const { return submitted_; }
    void count() { ++submitted_; }

private:
    struct Pending {
        FencePtr fence;
        std::string what;
    };
    const hpu::Device &dev_;
    std::deque<Pending> pending_;
    std::uint64_t submitted_ = 0;
};

// Eager mode: every op is one job, issued at once, after the fences of the
// jobs it depends on (tracked per region across programs).
class Eager {
public:
    Eager(const hpu::Device &dev, Queues &q, int regions)
        : q_(q), cl_(hpu::CommandList::create(dev)), writer_(static_cast<std::size_t>(regions)),
          readers_(static_cast<std::size_t>(regions)), jobs_(dev)
    {
    }

    void run(const Program &p)
    {
        for (const Op &op : p)
            issue(op);
    }

    // Before the host touches region r's memory (a staging or readback
    // buffer): wait for the jobs that read or write it; throws for a job
    // that failed.
    void host_access(int r)
    {
        const auto i = static_cast<std::size_t>(r);
        wait_quiet(writer_.at(i));
        for (const FencePtr &f : readers_[i])
            wait_quiet(f);
        writer_[i].reset();
        readers_[i].clear();
        jobs_.check();
    }

    // Waits for every job; throws for one that failed.
    void sync()
    {
        jobs_.wait_all();
        for (std::size_t i = 0; i < writer_.size(); ++i) {
            writer_[i].reset();
            readers_[i].clear();
        }
    }
    void check_jobs() { jobs_.check(); }
    void drain() noexcept { jobs_.drain(); }
    [[nodiscard]] std::uint64_t jobs() const { return jobs_.submitted(); }

private:
    void issue(const Op &op)
    {
        std::vector<const hpu_fence_t *> waits;
        auto add = [&waits](const FencePtr &f) {
            if (f && std::find(waits.begin(), waits.end(), f->get()) == waits.end())
                waits.push_back(f->get());
        };
        for (const int r : op.reads)
            add(writer_.at(static_cast<std::size_t>(r)));
        for (const int w : op.writes) {
            add(writer_.at(static_cast<std::size_t>(w)));
            for (const FencePtr &f : readers_[static_cast<std::size_t>(w)])
                add(f);
        }
        if (waits.size() > HPU_MAX_WAIT_FENCES)
            throw std::runtime_error(op.what + ": more dependencies than one submission takes");
        hpu_fence_t *out = nullptr;
        switch (op.kind) {
        case Op::Kind::Copy:
        case Op::Kind::Memset:
            cl_.clear();
            if (op.kind == Op::Kind::Copy) {
                cl_.copy(op.dst, op.src, op.size);
            } else {
                cl_.memset(op.dst, op.pattern, op.size);
            }
            check(hpu_queue_submit(q_.dma.get(), cl_.get(), waits.data(), waits.size(), &out), op.what);
            break;
        case Op::Kind::Gemm:
            check(hpu_queue_gemm(q_.mme.at(next_mme_).get(), &op.gemm, waits.data(), waits.size(), &out), op.what);
            next_mme_ ^= 1U;
            break;
        case Op::Kind::Launch: {
            const hpu_launch l = op.launch();
            check(hpu_queue_launch(q_.tpc.get(), op.kernel, &l, waits.data(), waits.size(), &out), op.what);
            break;
        }
        }
        auto f = std::make_shared<hpu::Fence>(out);
        jobs_.add(f, op.what);
        jobs_.count();
        for (const int r : op.reads)
            readers_[static_cast<std::size_t>(r)].push_back(f);
        for (const int w : op.writes) {
            writer_[static_cast<std::size_t>(w)] = f;
            readers_[static_cast<std::size_t>(w)].clear();
        }
    }

    Queues &q_;
    hpu::CommandList cl_;
    std::size_t next_mme_ = 0;
    std::vector<FencePtr> writer_;
    std::vector<std::vector<FencePtr>> readers_;
    Jobs jobs_;
};

// Lazy mode: a program is recorded once as a graph (cached under a key
// that names its structure) and launched as a whole; a later program of
// the same key differs only in launch scalars, which are set on the graph.
// Launches run one after the other.
class Lazy {
public:
    Lazy(const hpu::Device &dev, int regions) : dev_(dev), regions_(regions), jobs_(dev) {}

    // Launches the graph of key (recording it first) after the previous
    // launch; returns the launch's fence.
    FencePtr run(const std::string &key, const Program &p)
    {
        Cached &c = cache_[key];
        if (!c.graph) {
            record(c, p);
        } else {
            update(c, p, key);
        }
        const hpu_fence_t *w = last_ ? last_->get() : nullptr;
        hpu_fence_t *out = nullptr;
        check(hpu_graph_launch(c.graph.get(), last_ ? &w : nullptr, last_ ? 1 : 0, &out), "launching graph " + key);
        last_ = std::make_shared<hpu::Fence>(out);
        jobs_.add(last_, "training step (graph " + key + ")");
        jobs_.count();
        jobs_.check();
        return last_;
    }

    // Waits for every launch; throws for one that failed.
    void sync()
    {
        jobs_.wait_all();
        last_.reset();
    }
    void drain() noexcept { jobs_.drain(); }
    void check_jobs() { jobs_.check(); }

    [[nodiscard]] std::size_t graphs() const { return graphs_; }
    [[nodiscard]] std::uint64_t launches() const { return jobs_.submitted(); }

private:
    struct Cached {
        GraphPtr graph;
        Program recorded;
        std::vector<std::uint32_t> node;
    };

    void record(Cached &c, const Program &p)
    {
        hpu_graph_t *g = nullptr;
        check(hpu_graph_create(dev_.get(), &g), "creating a graph");
        c.graph.reset(g);
        ++graphs_;
        const auto deps = program_deps(p, regions_);
        for (std::size_t i = 0; i < p.size(); ++i) {
            const Op &op = p[i];
            std::vector<std::uint32_t> d;
            for (const std::uint32_t j : deps[i])
                d.push_back(c.node.at(j));
            int id = 0;
            switch (op.kind) {
            case Op::Kind::Copy:
                id = hpu_graph_add_copy(g, op.dst, op.src, op.size, d.data(), d.size());
                break;
            case Op::Kind::Memset:
                id = hpu_graph_add_memset(g, op.dst, op.pattern, op.size, d.data(), d.size());
                break;
            case Op::Kind::Gemm:
                id = hpu_graph_add_gemm(g, &op.gemm, d.data(), d.size());
                break;
            case Op::Kind::Launch: {
                const hpu_launch l = op.launch();
                id = hpu_graph_add_launch(g, op.kernel, &l, d.data(), d.size());
                break;
            }
            }
            check(id, "recording " + op.what);
            c.node.push_back(static_cast<std::uint32_t>(id));
        }
        c.recorded = p;
    }

    static void update(Cached &c, const Program &p, const std::string &key)
    {
        if (p.size() != c.recorded.size())
            throw std::logic_error("graph " + key + ": program changed shape");
        for (std::size_t i = 0; i < p.size(); ++i) {
            Op &was = c.recorded[i];
            if (p[i].kind != was.kind || p[i].scalars.size() != was.scalars.size())
                throw std::logic_error("graph " + key + ": op " + p[i].what + " changed");
            for (std::size_t s = 0; s < p[i].scalars.size(); ++s) {
                if (p[i].scalars[s] == was.scalars[s])
                    continue;
                check(hpu_graph_set_scalar(c.graph.get(), c.node[i], static_cast<std::uint32_t>(s), p[i].scalars[s]),
                      "setting a scalar of " + p[i].what);
                was.scalars[s] = p[i].scalars[s];
            }
        }
    }

    const hpu::Device &dev_;
    int regions_;
    std::map<std::string, Cached> cache_;
    std::size_t graphs_ = 0;
    FencePtr last_;
    Jobs jobs_;
};

hpu_tensor tensor(std::uint64_t va, std::uint32_t dtype, std::initializer_list<std::uint32_t> sizes, std::uint32_t pad = 0)
{
    hpu_tensor t{};
    const std::vector<std::uint32_t> s(sizes);
    check(hpu_tensor_init(&t, va, dtype, static_cast<std::uint32_t>(s.size()), s.data()), "describing a tensor");
    t.pad = pad;
    return t;
}

std::uint32_t ceil_div(std::uint64_t a, std::uint32_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

// The trainer: its device, memory, kernels and the programs of a step.
class Trainer {
public:
    Trainer(const Config &cfg, const Dataset &train, const Dataset &test, const HpuOptions &opt)
        : cfg_(cfg), train_(train), test_(test), opt_(opt), layers_(model_layers(cfg, train.pixels)),
          pl_(param_layout(layers_)), dev_(hpu::Device::open(opt.device_index)),
          k_ce_(kernel(dev_, "cross_entropy_f32")), k_add_(kernel(dev_, "add_f32")),
          k_bias_grad_(kernel(dev_, "bias_grad_f32")), k_relu_grad_(kernel(dev_, "relu_grad_f32")),
          k_argmax_(kernel(dev_, "argmax_f32")),
          k_opt_(kernel(dev_, cfg.optimizer() == Optimizer::Sgd ? "sgd_f32" : "adamw_f32")),
          q_{hpu::Queue::create(dev_, 0, HPU_ENGINE_DMA), hpu::Queue::create(dev_, 0, HPU_ENGINE_CLASS_TPC),
             {hpu::Queue::create(dev_, 0, HPU_ENGINE_CLASS_MME), hpu::Queue::create(dev_, 1, HPU_ENGINE_CLASS_MME)}}
    {
        (void)dev_.event_fd(); // error events queue from now on (device_errors())
        layout_memory();
        eager_ = std::make_unique<Eager>(dev_, q_, arena_.count());
        lazy_ = std::make_unique<Lazy>(dev_, arena_.count());
        upload();
    }
    Trainer(const Trainer &) = delete;
    Trainer &operator=(const Trainer &) = delete;
    Trainer(Trainer &&) = delete;
    Trainer &operator=(Trainer &&) = delete;
    // Every job ends before the buffers go (an error may leave some running).
    ~Trainer()
    {
        lazy_->drain();
        eager_->drain();
    }

    Result run();

private:
    [[nodiscard]] std::uint64_t va(const Region &r) const { return arena_.va(r); }
    void layout_memory();
    void upload();
    [[nodiscard]] Program step_program(std::uint32_t rows, std::uint64_t step, std::size_t set) const;
    [[nodiscard]] Program forward(std::uint32_t rows, const Region &x, const std::vector<Region> &acts) const;
    void fill_staging(const std::vector<std::uint32_t> &order, std::uint32_t start, std::uint32_t rows,
                      std::size_t set);
    double epoch_loss();
    double evaluate();
    void run_other(const Program &p)
    {
        lazy_->sync();
        eager_->run(p);
    }

    [[nodiscard]] Op copy(const Region &dst, const Region &src, std::uint64_t bytes, std::string what) const
    {
        Op op;
        op.kind = Op::Kind::Copy;
        op.what = std::move(what);
        op.dst = va(dst);
        op.src = va(src);
        op.size = bytes;
        op.reads = {src.id};
        op.writes = {dst.id};
        return op;
    }
    [[nodiscard]] Op copy_from_host(const Region &dst, const hpu::Buffer &src, std::uint64_t bytes, int src_id, std::string what) const
    {
        Op op = copy(dst, dst, bytes, std::move(what));
        op.src = src.va();
        op.reads = {src_id};
        return op;
    }
    [[nodiscard]] Op copy_to_host(const hpu::Buffer &dst, const Region &src, std::uint64_t bytes, int dst_id, std::string what) const
    {
        Op op = copy(src, src, bytes, std::move(what));
        op.dst = dst.va();
        op.writes = {dst_id};
        return op;
    }
    [[nodiscard]] Op memset(const Region &dst, std::string what) const
    {
        Op op;
        op.kind = Op::Kind::Memset;
        op.what = std::move(what);
        op.dst = va(dst);
        op.size = dst.bytes;
        op.writes = {dst.id};
        return op;
    }
    static Op launch(const KernelPtr &k, std::string what, std::vector<hpu_tensor> t, std::vector<std::uint32_t> s,
                     std::array<std::uint32_t, HPU_TENSOR_MAX_DIMS> index, std::vector<int> reads, std::vector<int> writes)
    {
        Op op;
        op.kind = Op::Kind::Launch;
        op.what = std::move(what);
        op.kernel = k.get();
        op.tensors = std::move(t);
        op.scalars = std::move(s);
        op.index = index;
        op.reads = std::move(reads);
        op.writes = std::move(writes);
        return op;
    }
    static Op gemm(std::string what, std::uint32_t flags, std::uint32_t m, std::uint32_t n, std::uint32_t k)
    {
        Op op;
        op.kind = Op::Kind::Gemm;
        op.what = std::move(what);
        hpu_gemm &g = op.gemm;
        g.size = sizeof(g);
        g.flags = flags;
        g.in_dtype = HPU_DTYPE_FP32;
        g.out_dtype = HPU_DTYPE_FP32;
        g.m = m;
        g.n = n;
        g.k = k;
        g.batch = 1;
        g.alpha = 1.0F;
        return op;
    }

    const Config &cfg_;
    const Dataset &train_;
    const Dataset &test_;
    HpuOptions opt_;
    std::vector<Layer> layers_;
    ParamLayout pl_;
    hpu::Device dev_;
    KernelPtr k_ce_;
    KernelPtr k_add_;
    KernelPtr k_bias_grad_;
    KernelPtr k_relu_grad_;
    KernelPtr k_argmax_;
    KernelPtr k_opt_;
    Arena arena_;
    // Device memory: parameters, gradients (one region per tensor, laid
    // out as pl_), optimizer state, a batch's activations and gradients,
    // the test set and its outputs.
    Region params_, grads_all_, m_, v_;
    std::vector<Region> grad_w_, grad_b_;
    Region x_, y_, loss_, lossacc_;
    std::vector<Region> acts_, dacts_;
    Region test_x_, test_pred_;
    std::vector<Region> test_acts_;
    // Host buffers: the batch staged by the host, and what is read back.
    // Two sets, used by alternate steps, so that the host fills one while
    // the device runs the step that reads the other.
    std::array<hpu::Buffer, 2> stage_x_, stage_y_;
    hpu::Buffer readback_;
    std::array<Region, 2> stage_x_r_, stage_y_r_; // ids only (host memory)
    Region readback_r_, upload_r_;
    std::array<FencePtr, 2> stage_launch_; // lazy: the last launch that read each set
    // After the buffers: destroying a queue waits for its jobs, so that no
    // buffer goes while a job may still use it (also when a constructor
    // step throws).
    Queues q_;
    std::unique_ptr<Eager> eager_;
    std::unique_ptr<Lazy> lazy_;
};

void Trainer::layout_memory()
{
    const std::uint64_t b = cfg_.batch;
    const std::uint64_t f = 4;
    params_ = arena_.add(pl_.total * f);
    for (const Layer &l : layers_) {
        grad_w_.push_back(arena_.add(std::uint64_t{l.in} * l.out * f));
        grad_b_.push_back(arena_.add(std::uint64_t{l.out} * f));
    }
    if (cfg_.optimizer() == Optimizer::AdamW) {
        m_ = arena_.add(pl_.total * f);
        v_ = arena_.add(pl_.total * f);
    }
    x_ = arena_.add(b * train_.pixels * f);
    y_ = arena_.add(b * 4);
    loss_ = arena_.add(b * f);
    lossacc_ = arena_.add(b * f);
    for (const Layer &l : layers_) {
        acts_.push_back(arena_.add(b * l.out * f));
        dacts_.push_back(arena_.add(b * l.out * f));
    }
    test_x_ = arena_.add(std::uint64_t{test_.count} * test_.pixels * f);
    for (const Layer &l : layers_)
        test_acts_.push_back(arena_.add(std::uint64_t{test_.count} * l.out * f));
    test_pred_ = arena_.add(std::uint64_t{test_.count} * 4);
    // Host-memory regions are tracked too (ids past the device ones).
    for (int s = 0; s < 2; ++s) {
        stage_x_r_.at(s) = arena_.add(0);
        stage_y_r_.at(s) = arena_.add(0);
    }
    readback_r_ = arena_.add(0);
    upload_r_ = arena_.add(0);
    arena_.allocate(dev_);
    // The gradients as one tensor for the optimizer: the regions above are
    // allocated in pl_'s order with pl_'s alignment, so they are contiguous.
    grads_all_ = grad_w_.front();
    grads_all_.bytes = pl_.total * f;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        if (va(grad_w_[i]) != va(grads_all_) + pl_.weight[i] * f || va(grad_b_[i]) != va(grads_all_) + pl_.bias[i] * f)
            throw std::logic_error("gradient regions are not laid out as the parameters");
    }
    for (int s = 0; s < 2; ++s) {
        stage_x_.at(s) = hpu::Buffer::create(dev_, b * train_.pixels * f, HPU_MEM_HOST);
        stage_y_.at(s) = hpu::Buffer::create(dev_, b * 4, HPU_MEM_HOST);
    }
    const std::uint64_t rb = std::max({pl_.total * f, b * f, std::uint64_t{test_.count} * 4});
    readback_ = hpu::Buffer::create(dev_, rb, HPU_MEM_HOST);
}

void Trainer::upload()
{
    const std::vector<float> p = init_params(layers_, pl_, cfg_.seed);
    auto host = hpu::Buffer::create(dev_, std::max<std::uint64_t>(p.size(), test_x_.bytes / 4) * 4, HPU_MEM_HOST);
    const int host_id = upload_r_.id;
    std::memcpy(host.host_ptr(), p.data(), p.size() * 4);
    Program prog;
    prog.push_back(copy_from_host(params_, host, params_.bytes, host_id, "uploading the parameters"));
    Region all_grads = grads_all_;
    prog.push_back(memset(all_grads, "zeroing the gradients"));
    prog.back().writes.clear();
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        prog.back().writes.push_back(grad_w_[i].id);
        prog.back().writes.push_back(grad_b_[i].id);
    }
    if (cfg_.optimizer() == Optimizer::AdamW) {
        prog.push_back(memset(m_, "zeroing AdamW's first moments"));
        prog.push_back(memset(v_, "zeroing AdamW's second moments"));
    }
    eager_->run(prog);
    eager_->host_access(host_id);
    auto *t = static_cast<float *>(host.host_ptr());
    for (std::uint32_t i = 0; i < test_.count; ++i)
        test_.image_f32(i, t + std::size_t{i} * test_.pixels); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    eager_->run({copy_from_host(test_x_, host, test_x_.bytes, host_id, "uploading the test set")});
    eager_->host_access(host_id);
}

Program Trainer::forward(std::uint32_t rows, const Region &x, const std::vector<Region> &acts) const
{
    Program p;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        const Layer &l = layers_[i];
        const Region &in = i == 0 ? x : acts[i - 1];
        Op op = gemm("dense " + std::to_string(i) + " forward", HPU_GEMM_BIAS, rows, l.out, l.in);
        op.gemm.act = l.relu ? HPU_GEMM_ACT_RELU : HPU_GEMM_ACT_NONE;
        op.gemm.a = va(in);
        op.gemm.b = va(params_) + pl_.weight[i] * 4;
        op.gemm.bias = va(params_) + pl_.bias[i] * 4;
        op.gemm.d = va(acts[i]);
        op.reads = {in.id, params_.id};
        op.writes = {acts[i].id};
        p.push_back(op);
    }
    return p;
}

Program Trainer::step_program(std::uint32_t rows, std::uint64_t step, std::size_t set) const
{
    const std::uint32_t px = train_.pixels;
    Program p;
    p.push_back(copy_from_host(x_, stage_x_.at(set), std::uint64_t{rows} * px * 4, stage_x_r_.at(set).id,
                               "batch images to HBM"));
    p.push_back(copy_from_host(y_, stage_y_.at(set), std::uint64_t{rows} * 4, stage_y_r_.at(set).id,
                               "batch labels to HBM"));
    for (Op &op : forward(rows, x_, acts_))
        p.push_back(std::move(op));
    const std::size_t last = layers_.size() - 1;
    // Loss per sample and the logits' gradient (scaled by 1 / rows).
    p.push_back(launch(k_ce_, "cross-entropy",
                       {tensor(va(acts_[last]), HPU_DTYPE_FP32, {kClasses, rows}, kNegInf),
                        tensor(va(y_), HPU_DTYPE_INT32, {1, rows}), tensor(va(loss_), HPU_DTYPE_FP32, {1, rows}),
                        tensor(va(dacts_[last]), HPU_DTYPE_FP32, {kClasses, rows})},
                       {fbits(1.0F / static_cast<float>(rows))}, {1, rows, 1, 1, 1}, {acts_[last].id, y_.id},
                       {loss_.id, dacts_[last].id}));
    p.push_back(launch(k_add_, "loss sum",
                       {tensor(va(lossacc_), HPU_DTYPE_FP32, {rows}), tensor(va(loss_), HPU_DTYPE_FP32, {rows}),
                        tensor(va(lossacc_), HPU_DTYPE_FP32, {rows})},
                       {}, {ceil_div(rows, kEwLanes), 1, 1, 1, 1}, {lossacc_.id, loss_.id}, {lossacc_.id}));
    for (std::size_t li = layers_.size(); li-- > 0;) {
        const Layer &l = layers_[li];
        const Region &in = li == 0 ? x_ : acts_[li - 1];
        const Region &d = dacts_[li];
        const std::string n = std::to_string(li);
        // dW = in^T d: in is stored rows x l.in (k x m).
        Op dw = gemm("dense " + n + " weight gradient", HPU_GEMM_TRANS_A, l.in, l.out, rows);
        dw.gemm.a = va(in);
        dw.gemm.b = va(d);
        dw.gemm.d = va(grad_w_[li]);
        dw.reads = {in.id, d.id};
        dw.writes = {grad_w_[li].id};
        p.push_back(dw);
        p.push_back(launch(k_bias_grad_, "dense " + n + " bias gradient",
                           {tensor(va(d), HPU_DTYPE_FP32, {l.out, rows}), tensor(va(grad_b_[li]), HPU_DTYPE_FP32, {l.out})},
                           {}, {ceil_div(l.out, kColLanes), 1, 1, 1, 1}, {d.id}, {grad_b_[li].id}));
        if (li == 0)
            break;
        // d_in = d W^T: W is stored l.in x l.out (n x k); then through the ReLU.
        const Region &dprev = dacts_[li - 1];
        Op dx = gemm("dense " + n + " input gradient", HPU_GEMM_TRANS_B, rows, l.in, l.out);
        dx.gemm.a = va(d);
        dx.gemm.b = va(params_) + pl_.weight[li] * 4;
        dx.gemm.d = va(dprev);
        dx.reads = {d.id, params_.id};
        dx.writes = {dprev.id};
        p.push_back(dx);
        if (layers_[li - 1].relu) {
            const std::uint32_t e = rows * l.in;
            p.push_back(launch(k_relu_grad_, "dense " + std::to_string(li - 1) + " ReLU gradient",
                               {tensor(va(in), HPU_DTYPE_FP32, {e}), tensor(va(dprev), HPU_DTYPE_FP32, {e}),
                                tensor(va(dprev), HPU_DTYPE_FP32, {e})},
                               {}, {ceil_div(e, kEwLanes), 1, 1, 1, 1}, {in.id, dprev.id}, {dprev.id}));
        }
    }
    // One optimizer launch over every parameter.
    std::vector<int> reads{params_.id};
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        reads.push_back(grad_w_[i].id);
        reads.push_back(grad_b_[i].id);
    }
    const auto total = static_cast<std::uint32_t>(pl_.total);
    const std::array<std::uint32_t, HPU_TENSOR_MAX_DIMS> ew{ceil_div(total, kEwLanes), 1, 1, 1, 1};
    const hpu_tensor w = tensor(va(params_), HPU_DTYPE_FP32, {total});
    const hpu_tensor g = tensor(va(grads_all_), HPU_DTYPE_FP32, {total});
    if (cfg_.optimizer() == Optimizer::Sgd) {
        p.push_back(launch(k_opt_, "SGD step", {w, g}, {fbits(cfg_.lr()), fbits(0.0F)}, ew, reads, {params_.id}));
    } else {
        reads.push_back(m_.id);
        reads.push_back(v_.id);
        p.push_back(launch(k_opt_, "AdamW step",
                           {w, g, tensor(va(m_), HPU_DTYPE_FP32, {total}), tensor(va(v_), HPU_DTYPE_FP32, {total})},
                           {fbits(cfg_.lr()), fbits(Config::kAdamB1), fbits(Config::kAdamB2), fbits(Config::kAdamEps),
                            fbits(Config::kAdamWd), fbits(adam_correction(Config::kAdamB1, step)),
                            fbits(adam_correction(Config::kAdamB2, step))},
                           ew, reads, {params_.id, m_.id, v_.id}));
    }
    return p;
}

void Trainer::fill_staging(const std::vector<std::uint32_t> &order, std::uint32_t start, std::uint32_t rows,
                           std::size_t set)
{
    // The copies of the last step that used this set must have read it
    // (eager: those two jobs; lazy: that step's launch).
    eager_->host_access(stage_x_r_.at(set).id);
    eager_->host_access(stage_y_r_.at(set).id);
    wait_quiet(stage_launch_.at(set));
    stage_launch_[set].reset();
    lazy_->check_jobs();
    auto *xs = static_cast<float *>(stage_x_.at(set).host_ptr());
    auto *ys = static_cast<std::int32_t *>(stage_y_.at(set).host_ptr());
    const std::size_t px = train_.pixels;
    for (std::uint32_t r = 0; r < rows; ++r) {
        const std::uint32_t idx = order[start + r];
        train_.image_f32(idx, xs + r * px); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        ys[r] = train_.labels[idx]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
}

double Trainer::epoch_loss()
{
    run_other({copy_to_host(readback_, lossacc_, lossacc_.bytes, readback_r_.id, "reading the loss back")});
    eager_->host_access(readback_r_.id);
    const auto *l = static_cast<const float *>(readback_.host_ptr());
    double sum = 0;
    for (std::uint32_t i = 0; i < cfg_.batch; ++i)
        sum += l[i]; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    return sum;
}

double Trainer::evaluate()
{
    const std::uint32_t n = test_.count;
    Program p = forward(n, test_x_, test_acts_);
    p.push_back(launch(k_argmax_, "test predictions",
                       {tensor(va(test_acts_.back()), HPU_DTYPE_FP32, {kClasses, n}, kNegInf),
                        tensor(va(test_pred_), HPU_DTYPE_INT32, {1, n})},
                       {}, {1, n, 1, 1, 1}, {test_acts_.back().id}, {test_pred_.id}));
    p.push_back(copy_to_host(readback_, test_pred_, test_pred_.bytes, readback_r_.id, "reading predictions back"));
    run_other(p);
    eager_->host_access(readback_r_.id);
    const auto *pred = static_cast<const std::int32_t *>(readback_.host_ptr());
    std::uint32_t right = 0;
    for (std::uint32_t i = 0; i < n; ++i)
        right += pred[i] == test_.labels[i] ? 1U : 0U; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    return 100.0 * right / n;
}

Result Trainer::run()
{
    Result res;
    res.name = std::string("hpu ") + mode_name(opt_.mode);
    res.config = config_line(cfg_, train_, test_);
    std::uint64_t step = 0;
    for (std::uint32_t e = 0; e < cfg_.epochs; ++e) {
        const auto t0 = Clock::now();
        run_other({memset(lossacc_, "zeroing the loss sum")});
        const std::vector<std::uint32_t> order = epoch_order(train_.count, cfg_.seed, e);
        std::uint32_t samples = 0;
        std::uint32_t steps = 0;
        for (std::uint32_t s = 0; s < train_.count; s += cfg_.batch) {
            if (opt_.max_steps != 0 && steps == opt_.max_steps)
                break;
            const std::uint32_t rows = std::min(cfg_.batch, train_.count - s);
            // Alternate staging sets by step of the epoch, so that the last
            // (shorter) batch always uses the same set: lazy mode records
            // three graphs (the full batch with either set, the last one).
            const std::size_t set = steps % 2;
            fill_staging(order, s, rows, set);
            const Program p = step_program(rows, ++step, set);
            ++res.steps;
            // What the step submitted, counted where libhpu was called.
            const std::uint64_t before = eager_->jobs() + lazy_->launches();
            if (opt_.mode == Mode::Eager) {
                eager_->run(p);
            } else {
                eager_->sync(); // what ran eagerly (zeroing the loss sum) comes first
                stage_launch_.at(set) = lazy_->run("step/" + std::to_string(rows) + "/" + std::to_string(set), p);
            }
            res.submissions += eager_->jobs() + lazy_->launches() - before;
            samples += rows;
            ++steps;
        }
        EpochResult er;
        er.loss = epoch_loss() / samples; // waits for the last step
        er.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        er.accuracy = evaluate();
        res.epochs.push_back(er);
    }
    run_other({copy_to_host(readback_, params_, params_.bytes, readback_r_.id, "reading the parameters back")});
    eager_->host_access(readback_r_.id);
    res.graphs = lazy_->graphs();
    res.params.resize(pl_.total);
    std::memcpy(res.params.data(), readback_.host_ptr(), pl_.total * 4);
    return res;
}

} // namespace

const char *mode_name(Mode m) { return m == Mode::Eager ? "eager" : "lazy"; }

Result train_hpu(const Config &cfg, const Dataset &train, const Dataset &test, const HpuOptions &opt)
{
    Trainer t(cfg, train, test, opt);
    return t.run();
}

} // namespace hpu_train
