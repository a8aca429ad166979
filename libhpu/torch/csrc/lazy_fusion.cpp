// SPDX-License-Identifier: MIT
// lazy_fusion.cpp - lazy mode's elementwise fusion: a peephole over a
// recorded step's jobs, before its graph is built or found in the cache,
// that runs a chain of the library's FP32 elementwise kernels as one
// launch of a generated kernel (fusion_gen.h).
//
// A chain. Launches of fusable kernels (fusion::op_info: the ew1/ew2 FP32
// kernels) over one index space, with outputs of the same sizes, where
// each launch after the first reads the previous one's output through the
// very same tensor descriptor (same address, sizes and strides: element
// for element the value it computed).
//
// Where a chain runs. As one node, at one place between its first and last
// launch: a job recorded between them that conflicts with a member before
// it must stay after the chain (the member's effect moves later past it),
// one that conflicts with a member after it must stay before (that member
// moves earlier); a chain grows only while such a place exists. Last, the
// whole plan is checked: any two conflicting jobs whose order it swapped
// (two chains moved past each other) make the step run unfused. Within
// the fused kernel every iteration loads all inputs, then computes, then
// stores, each at the output's coordinate: so a written tensor may only
// overlap another tensor of the chain through an identical descriptor
// (in place), never at another element.
//
// Intermediate results. A launch's result that a later stage reads is
// passed in a register. It is still stored unless all of: no job of the
// step outside the chain touches its memory, no later stage of the chain
// loads it, and its memory is in no block in use (its tensor is gone, so
// nothing can read it after the step). Whether each is stored is part of
// the step's cache key, as the kernels are of the structure: a steady
// training step finds its graph and its kernels built.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "fusion_gen.h"
#include "lazy.h"

namespace hpu_torch {

namespace {

constexpr std::size_t kWindow = 32;   // jobs scanned past a chain's end for its next stage
constexpr std::size_t kMaxStages = 8; // with their inputs, within v16-v31

std::atomic<int> &fusion_flag()
{
    static std::atomic<int> on = [] {
        const char *v = std::getenv("PT_HPU_LAZY_FUSION"); // NOLINT(concurrency-mt-unsafe): read once
        return v == nullptr || std::strcmp(v, "0") != 0 ? 1 : 0;
    }();
    return on;
}

bool same(const hpu_tensor &a, const hpu_tensor &b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

std::uint32_t dim(const hpu_tensor &t, std::uint32_t d)
{
    return d < t.ndims && d < HPU_TENSOR_MAX_DIMS ? t.sizes[d] : 1; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
}

bool same_sizes(const hpu_tensor &a, const hpu_tensor &b)
{
    for (std::uint32_t d = 0; d < HPU_TENSOR_MAX_DIMS; ++d) {
        if (dim(a, d) != dim(b, d))
            return false;
    }
    return true;
}

// An input that broadcasts to out: each dimension of out's size or 1.
bool broadcasts_to(const hpu_tensor &in, const hpu_tensor &out)
{
    for (std::uint32_t d = 0; d < HPU_TENSOR_MAX_DIMS; ++d) {
        if (dim(in, d) != dim(out, d) && dim(in, d) != 1)
            return false;
    }
    return true;
}

std::uint64_t end_of(const hpu_tensor &t)
{
    std::uint64_t last = 0;
    for (std::uint32_t d = 0; d < t.ndims && d < HPU_TENSOR_MAX_DIMS; ++d)
        last += static_cast<std::uint64_t>(dim(t, d) - 1) * t.strides[d]; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    return t.va + (last + 1) * hpu_dtype_size(t.dtype);
}

bool overlap(const hpu_tensor &a, const hpu_tensor &b) { return a.va < end_of(b) && b.va < end_of(a); }

// A launch of a fusable kernel, all of its tensors FP32.
const fusion::OpInfo *fusable(const Job &j)
{
    if (j.kind != Job::Kind::Launch)
        return nullptr;
    const fusion::OpInfo *op = fusion::op_info(j.what);
    if (op == nullptr)
        return nullptr;
    const hpu_launch raw = j.launch.raw();
    if (raw.num_tensors != op->inputs + 1 || raw.num_scalars != op->scalars)
        return nullptr;
    for (std::uint32_t t = 0; t < raw.num_tensors; ++t) {
        if (raw.tensors[t].dtype != HPU_DTYPE_FP32) // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            return nullptr;
    }
    return op;
}

std::vector<hpu_tensor> tensors_of(const Job &j)
{
    const hpu_launch raw = j.launch.raw();
    return {raw.tensors, raw.tensors + raw.num_tensors}; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
}

// A chain being grown: its jobs, the fused kernel's description, the input
// tensors and each stage's output.
struct Group {
    std::vector<std::size_t> jobs;
    fusion::Chain chain;
    std::vector<hpu_tensor> inputs;
    std::vector<hpu_tensor> outputs; // per stage
    std::size_t emit = 0; // the job it runs before (its first member, or a job between)
    hpu_tensor out{};
    std::array<std::uint32_t, HPU_TENSOR_MAX_DIMS> index{};

    // Adds job j as the next stage if its operands fit (see the file's
    // comment); false leaves the group as it was.
    bool add(const Job &j, const fusion::OpInfo &op)
    {
        const hpu_launch raw = j.launch.raw();
        const std::vector<hpu_tensor> ts = tensors_of(j);
        const hpu_tensor &o = ts.back();
        std::array<std::uint32_t, HPU_TENSOR_MAX_DIMS> idx{};
        std::copy(std::begin(raw.index_size), std::end(raw.index_size), idx.begin());
        if (!jobs.empty() && (idx != index || !same_sizes(o, out)))
            return false;
        Group g = *this;
        g.index = idx;
        g.out = o;
        fusion::Stage st{j.what, {}};
        bool reads_last = jobs.empty();
        for (std::size_t i = 0; i + 1 < ts.size(); ++i) {
            const hpu_tensor &t = ts[i];
            // The latest stage that wrote this very descriptor: its value.
            std::size_t from = g.outputs.size();
            for (std::size_t s = g.outputs.size(); s-- > 0 && from == g.outputs.size();) {
                if (same(g.outputs[s], t))
                    from = s;
            }
            if (from < g.outputs.size()) {
                st.in.push_back({true, static_cast<unsigned>(from)});
                reads_last = reads_last || from + 1 == g.outputs.size();
                continue;
            }
            const bool dense = same_sizes(t, o);
            if (!dense && (op.inputs == 1 || !broadcasts_to(t, o)))
                return false;
            auto it = std::find_if(g.inputs.begin(), g.inputs.end(), [&](const hpu_tensor &x) { return same(x, t); });
            if (it == g.inputs.end()) {
                g.inputs.push_back(t);
                g.chain.broadcast.push_back(!dense);
                it = g.inputs.end() - 1;
            }
            st.in.push_back({false, static_cast<unsigned>(it - g.inputs.begin())});
        }
        if (!reads_last)
            return false;
        g.chain.stages.push_back(std::move(st));
        g.outputs.push_back(o);
        // A written tensor overlaps another only through the same descriptor.
        std::vector<hpu_tensor> all = g.inputs;
        all.insert(all.end(), g.outputs.begin(), g.outputs.end());
        for (const hpu_tensor &w : g.outputs) {
            for (const hpu_tensor &t : all) {
                if (overlap(w, t) && !same(w, t))
                    return false;
            }
        }
        g.chain.stored.assign(1, static_cast<unsigned>(g.outputs.size() - 1));
        if (!fusion::check(g.chain).empty())
            return false;
        g.jobs.push_back(0); // set by the caller
        *this = std::move(g);
        return true;
    }
};

} // namespace

bool lazy_fusion() noexcept { return fusion_flag().load() != 0; }
void set_lazy_fusion(bool on) noexcept { fusion_flag().store(on ? 1 : 0); }

const hpu::Kernel *LazyRecorder::fused_kernel(DeviceContext &ctx, const std::string &key, const void *chain)
{
    if (auto it = fused_kernels_.find(key); it != fused_kernels_.end())
        return &it->second;
    if (unfusable_.count(key) != 0)
        return nullptr;
    try {
        const std::vector<std::uint8_t> bin = fusion::assemble(*static_cast<const fusion::Chain *>(chain));
        return &fused_kernels_.emplace(key, hpu::Kernel::load(ctx.device(), bin)).first->second;
    } catch (const std::exception &e) {
        // A chain the generator or the device refuses runs unfused.
        TORCH_WARN_ONCE("HPU lazy fusion: a chain runs unfused: ", e.what());
        unfusable_.insert(key);
        return nullptr;
    }
}

namespace {

// Where a chain can run (see the file's comment): the index of the job
// it runs before, or none. others are the non-member jobs between its
// members; a job k of them that conflicts with a member before it must stay
// after the chain, one that conflicts with a member after it before.
std::optional<std::size_t> placement(const std::vector<std::size_t> &members, const std::vector<std::size_t> &others,
                                     const std::vector<std::vector<lazy_detail::Range>> &acc)
{
    std::size_t after = members.front(); // the chain runs before this job...
    std::size_t before = members.back(); // ...and not after this one
    for (const std::size_t k : others) {
        if (k > members.back())
            continue;
        for (const std::size_t m : members) {
            if (!lazy_detail::conflict(acc[k], acc[m]))
                continue;
            // A later member moves earlier past k; an earlier one later.
            after = m > k ? std::max(after, k + 1) : after;
            before = m < k ? std::min(before, k) : before;
        }
    }
    if (after > before)
        return std::nullopt;
    return after;
}

// Whether running each job at pos[job] keeps every pair of conflicting
// jobs in their recorded order (the final check of a plan).
bool order_kept(const std::vector<std::size_t> &pos, const std::vector<std::vector<lazy_detail::Range>> &acc)
{
    for (std::size_t i = 0; i < pos.size(); ++i) {
        for (std::size_t j = i + 1; j < pos.size(); ++j) {
            if (pos[i] > pos[j] && lazy_detail::conflict(acc[i], acc[j]))
                return false;
        }
    }
    return true;
}

} // namespace

std::vector<Job> LazyRecorder::fuse(DeviceContext &ctx, const std::vector<Job> &jobs, std::string &plan)
{
    const std::size_t n = jobs.size();
    std::vector<std::vector<lazy_detail::Range>> acc(n);
    for (std::size_t i = 0; i < n; ++i)
        acc[i] = lazy_detail::accesses(jobs[i]);
    std::vector<int> owner(n, -1); // the group a job went into
    std::vector<Group> groups;
    for (std::size_t i = 0; i < n; ++i) {
        const fusion::OpInfo *op0 = owner[i] < 0 ? fusable(jobs[i]) : nullptr;
        if (op0 == nullptr)
            continue;
        Group g;
        if (!g.add(jobs[i], *op0))
            continue;
        g.jobs.back() = i;
        g.emit = i;
        // Grow: the next launches that read the last stage's output, where
        // the chain still has a place among the jobs between.
        std::vector<std::size_t> others;
        for (std::size_t j = i + 1; j < n && j <= g.jobs.back() + kWindow && g.jobs.size() < kMaxStages; ++j) {
            const fusion::OpInfo *op = owner[j] < 0 ? fusable(jobs[j]) : nullptr;
            Group next = g;
            if (op != nullptr && next.add(jobs[j], *op)) {
                next.jobs.back() = j;
                if (auto at = placement(next.jobs, others, acc)) {
                    next.emit = *at;
                    g = std::move(next);
                    continue;
                }
            }
            others.push_back(j);
        }
        if (g.jobs.size() < 2)
            continue;
        for (const std::size_t j : g.jobs)
            owner[j] = static_cast<int>(groups.size());
        groups.push_back(std::move(g));
    }
    if (groups.empty())
        return jobs;

    // Which intermediates are stored (see the file's comment).
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
        Group &g = groups[gi];
        std::vector<unsigned> stored;
        for (std::size_t s = 0; s + 1 < g.outputs.size(); ++s) {
            const hpu_tensor &t = g.outputs[s];
            const std::vector<lazy_detail::Range> mine{{t.va, end_of(t), true}};
            bool needed = std::any_of(g.outputs.begin() + static_cast<std::ptrdiff_t>(s) + 1, g.outputs.end(),
                                      [&](const hpu_tensor &o) { return same(o, t); })
                              ? false // overwritten in place by a later stage
                              : memory_in_use(ctx.index(), t.va, end_of(t));
            for (std::size_t k = 0; k < n && !needed; ++k)
                needed = owner[k] != static_cast<int>(gi) && lazy_detail::conflict(acc[k], mine);
            for (const hpu_tensor &in : g.inputs)
                needed = needed || overlap(in, t);
            if (needed)
                stored.push_back(static_cast<unsigned>(s));
        }
        stored.push_back(static_cast<unsigned>(g.outputs.size() - 1));
        g.chain.stored = std::move(stored);
    }

    // The kernels first: a chain whose kernel cannot be made stays unfused.
    std::vector<const hpu::Kernel *> kernels(groups.size(), nullptr);
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
        kernels[gi] = fused_kernel(ctx, fusion::key(groups[gi].chain), &groups[gi].chain);
        if (kernels[gi] == nullptr) {
            for (const std::size_t j : groups[gi].jobs)
                owner[j] = -1;
        }
    }
    // The new order: each chain as one node before the job it runs before.
    std::vector<std::vector<std::size_t>> at(n);
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
        if (kernels[gi] != nullptr)
            at[groups[gi].emit].push_back(gi);
    }
    std::vector<std::size_t> pos(n, 0);
    std::vector<std::size_t> node_of(groups.size(), 0);
    std::size_t nodes = 0;
    for (std::size_t i = 0; i < n; ++i) {
        for (const std::size_t gi : at[i])
            node_of[gi] = nodes++;
        if (owner[i] < 0)
            pos[i] = nodes++;
    }
    for (std::size_t i = 0; i < n; ++i) {
        if (owner[i] >= 0)
            pos[i] = node_of[static_cast<std::size_t>(owner[i])];
    }
    if (!order_kept(pos, acc))
        return jobs; // two chains moved past each other's conflicts: run the step unfused

    std::vector<Job> out;
    out.reserve(nodes);
    for (std::size_t i = 0; i < n; ++i) {
        for (const std::size_t gi : at[i]) {
            const Group &g = groups[gi];
            const std::string key = fusion::key(g.chain);
            Job f;
            f.kind = Job::Kind::Launch;
            f.kernel = kernels[gi];
            f.what = "fused(";
            for (const std::size_t j : g.jobs) {
                f.what += (j == g.jobs.front() ? "" : "+") + jobs[j].what;
                const hpu_launch raw = jobs[j].launch.raw();
                for (std::uint32_t s = 0; s < raw.num_scalars; ++s)
                    f.launch.scalar(raw.scalars[s]); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
            }
            f.what += ")";
            for (const hpu_tensor &t : g.inputs)
                f.launch.tensor(hpu::Tensor(t));
            for (const unsigned s : g.chain.stored)
                f.launch.tensor(hpu::Tensor(g.outputs[s]));
            f.launch.index_space(g.index);
            plan += std::to_string(i) + ':';
            for (const std::size_t j : g.jobs)
                plan += std::to_string(j) + ',';
            plan += key + ';';
            ++stats_.fused;
            stats_.fused_ops += g.jobs.size();
            out.push_back(std::move(f));
        }
        if (owner[i] < 0)
            out.push_back(jobs[i]);
    }
    return out;
}

} // namespace hpu_torch
