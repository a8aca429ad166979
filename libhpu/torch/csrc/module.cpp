// SPDX-License-Identifier: MIT
// module.cpp - the extension's entry points for Python, as custom ops
// (torch.ops.hpu_torch.*; the package wraps them in hpu_torch.hpu and
// hpu_torch.core).
//
// Copyright (c) 2026 The hpu authors
#include <torch/library.h>

#include "hpu_torch.h"
#include "lazy.h"

namespace hpu_torch {

namespace {

int resolve(std::int64_t device) { return device < 0 ? current_device() : static_cast<int>(device); }

std::int64_t op_device_count() { return device_count(); }
std::int64_t op_current_device() { return current_device(); }
void op_set_device(std::int64_t device) { set_current_device(static_cast<int>(device)); }

void op_synchronize(std::int64_t device)
{
    const int d = resolve(device);
    if (!DeviceContext::opened(d))
        return;
    DeviceContext &ctx = DeviceContext::get(d);
    auto lock = ctx.lock();
    ctx.synchronize();
}

// Lazy mode: runs the step recorded on the device (-1: on every opened
// device) as one graph; it does not wait for it. Eager mode has nothing
// held back.
void op_mark_step(std::int64_t device)
{
    for (int d = 0; d < device_count(); ++d) {
        if ((device >= 0 && d != device) || !DeviceContext::opened(d))
            continue;
        DeviceContext &ctx = DeviceContext::get(d);
        auto lock = ctx.lock();
        ctx.flush();
    }
}

bool op_is_lazy() { return lazy_mode(); }
bool op_is_lazy_fusion() { return lazy_fusion(); }
void op_set_lazy_fusion(bool on) { set_lazy_fusion(on); }

// What the last lazy step's graph ran, one entry per node.
std::vector<std::string> op_lazy_last_step(std::int64_t device)
{
    const int d = resolve(device);
    if (!DeviceContext::opened(d))
        return {};
    DeviceContext &ctx = DeviceContext::get(d);
    auto lock = ctx.lock();
    return ctx.lazy_last_step();
}
void op_set_lazy(bool on) { set_lazy_mode(on); }

// The counters in the order hpu_torch.core.lazy_stats() names them.
std::vector<std::int64_t> op_lazy_stats(std::int64_t device)
{
    const int d = resolve(device);
    LazyStats s;
    if (DeviceContext::opened(d)) {
        DeviceContext &ctx = DeviceContext::get(d);
        auto lock = ctx.lock();
        s = ctx.lazy_stats();
    }
    const std::vector<std::uint64_t> v{s.recorded,  s.flushes,   s.graphs_built, s.cache_hits,
                                       s.launches, s.evictions, s.cached,       s.failures,
                                       s.fused,    s.fused_ops, s.tpc_launches};
    return {v.begin(), v.end()};
}

// The statistics in the order hpu_torch.hpu.memory_stats() names them.
std::vector<std::int64_t> op_memory_stats(std::int64_t device)
{
    const MemoryStats s = memory_stats(resolve(device));
    const std::vector<std::uint64_t> v{s.allocated, s.peak_allocated, s.reserved,    s.peak_reserved,
                                       s.active_blocks, s.slabs,       s.allocs,      s.frees,
                                       s.slab_allocs, s.slab_frees,   s.cache_hits};
    return {v.begin(), v.end()};
}

void op_reset_peak_memory_stats(std::int64_t device) { reset_peak_memory_stats(resolve(device)); }
void op_empty_cache(std::int64_t device) { empty_cache(resolve(device)); }

std::int64_t op_jobs(std::int64_t device)
{
    const int d = resolve(device);
    if (!DeviceContext::opened(d))
        return 0;
    DeviceContext &ctx = DeviceContext::get(d);
    auto lock = ctx.lock();
    return static_cast<std::int64_t>(ctx.jobs());
}

std::tuple<std::vector<std::string>, std::vector<std::int64_t>> op_fallback_counts()
{
    std::vector<std::string> names;
    std::vector<std::int64_t> counts;
    for (const auto &[name, n] : fallback_counts()) {
        names.push_back(name);
        counts.push_back(n);
    }
    return {names, counts};
}

void op_reset_fallback_counts() { reset_fallback_counts(); }

// At exit (hpu_torch registers it with atexit): waits for every opened
// device and returns the slabs no tensor uses; failures are not reported
// any more. The driver releases the rest when the process closes the
// devices.
void op_shutdown()
{
    for (int d = 0; d < device_count(); ++d) {
        try {
            empty_cache(d);
        } catch (const std::exception &) { // NOLINT(bugprone-empty-catch): nothing to report to at exit
        }
    }
}

} // namespace

TORCH_LIBRARY(hpu_torch, m)
{
    m.def("device_count() -> int", &op_device_count);
    m.def("current_device() -> int", &op_current_device);
    m.def("set_device(int device) -> ()", &op_set_device);
    m.def("synchronize(int device=-1) -> ()", &op_synchronize);
    m.def("mark_step(int device=-1) -> ()", &op_mark_step);
    m.def("is_lazy() -> bool", &op_is_lazy);
    m.def("set_lazy(bool on) -> ()", &op_set_lazy);
    m.def("lazy_stats(int device=-1) -> int[]", &op_lazy_stats);
    m.def("is_lazy_fusion() -> bool", &op_is_lazy_fusion);
    m.def("set_lazy_fusion(bool on) -> ()", &op_set_lazy_fusion);
    m.def("lazy_last_step(int device=-1) -> str[]", &op_lazy_last_step);
    m.def("memory_stats(int device=-1) -> int[]", &op_memory_stats);
    m.def("reset_peak_memory_stats(int device=-1) -> ()", &op_reset_peak_memory_stats);
    m.def("empty_cache(int device=-1) -> ()", &op_empty_cache);
    m.def("jobs(int device=-1) -> int", &op_jobs);
    m.def("fallback_counts() -> (str[], int[])", &op_fallback_counts);
    m.def("reset_fallback_counts() -> ()", &op_reset_fallback_counts);
    m.def("shutdown() -> ()", &op_shutdown);
}

} // namespace hpu_torch
