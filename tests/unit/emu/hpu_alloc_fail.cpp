// SPDX-License-Identifier: MIT
//
// The allocation wrappers of hpu_alloc_fail.hpp.
//
// Copyright (c) 2026 The hpu authors
#include "hpu_alloc_fail.hpp"

#include <atomic>
#include <cstddef>

extern "C" {
void *__real_malloc(size_t size);              // NOLINT(bugprone-reserved-identifier)
void *__real_calloc(size_t n, size_t size);    // NOLINT(bugprone-reserved-identifier)
void *__wrap_malloc(size_t size);              // NOLINT(bugprone-reserved-identifier)
void *__wrap_calloc(size_t n, size_t size);    // NOLINT(bugprone-reserved-identifier)
}

namespace {

std::atomic<unsigned long> g_fail_at{0};
std::atomic<unsigned long> g_count{0};

// Whether this allocation is the one to fail.
bool fails()
{
    const unsigned long at = g_fail_at.load(std::memory_order_relaxed);
    const unsigned long n = g_count.fetch_add(1, std::memory_order_relaxed) + 1;
    return at != 0 && n == at;
}

} // namespace

extern "C" void *__wrap_malloc(size_t size) // NOLINT(bugprone-reserved-identifier)
{
    return fails() ? nullptr : __real_malloc(size);
}

extern "C" void *__wrap_calloc(size_t n, size_t size) // NOLINT(bugprone-reserved-identifier)
{
    return fails() ? nullptr : __real_calloc(n, size);
}

namespace hpu_test {

void alloc_fail_at(unsigned long n)
{
    g_fail_at.store(0, std::memory_order_relaxed);
    g_count.store(0, std::memory_order_relaxed);
    g_fail_at.store(n, std::memory_order_relaxed);
}

unsigned long alloc_count() { return g_count.load(std::memory_order_relaxed); }

} // namespace hpu_test
