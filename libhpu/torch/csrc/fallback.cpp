// SPDX-License-Identifier: MIT
// fallback.cpp - the CPU fallback: every op without an HPU kernel runs on
// the CPU. PyTorch's boxed cpu_fallback does the moves: the HPU tensors
// among the arguments are copied to the host (through _copy_from, so by
// DMA), the op's CPU kernel runs, and its results and the arguments it
// mutates are copied back to their HPUs. Each use is counted by op name
// (hpu_torch.core.fallback_counts()); with PT_HPU_LOG_FALLBACK=1 the first
// use of each op prints one warning.
//
// Copyright (c) 2026 The hpu authors
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <cstdlib>
#include <cstring>

#include "hpu_torch.h"

namespace hpu_torch {

namespace {

std::mutex g_counts_mutex;
std::map<std::string, std::int64_t> g_counts; // NOLINT: the process's counts

bool log_fallback()
{
    static const bool on = [] {
        const char *v = std::getenv("PT_HPU_LOG_FALLBACK"); // NOLINT(concurrency-mt-unsafe): read once
        return v != nullptr && std::strcmp(v, "0") != 0 && *v != '\0';
    }();
    return on;
}

} // namespace

void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
    const auto &schema = op.schema();
    std::string name = schema.name();
    if (!schema.overload_name().empty())
        name += "." + schema.overload_name();
    bool first = false;
    {
        const std::lock_guard<std::mutex> g(g_counts_mutex);
        first = g_counts[name]++ == 0;
    }
    if (first && log_fallback())
        TORCH_WARN("HPU: ", name, " has no HPU kernel; it runs on the CPU (its tensors are copied to the host and back)");
    at::native::cpu_fallback(op, stack);
}

std::map<std::string, std::int64_t> fallback_counts()
{
    const std::lock_guard<std::mutex> g(g_counts_mutex);
    return g_counts;
}

void reset_fallback_counts()
{
    const std::lock_guard<std::mutex> g(g_counts_mutex);
    g_counts.clear();
}

TORCH_LIBRARY_IMPL(_, HPU, m)
{
    m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

} // namespace hpu_torch
