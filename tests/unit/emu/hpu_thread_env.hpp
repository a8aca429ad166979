// SPDX-License-Identifier: MIT
//
// The fake environment with threads, for tests and benchmarks that run the
// TPC's cores on worker threads (HpuCoreOps.run_parallel) while other
// threads step engines or reset the device: a real core lock (the fake
// environment's lock checks run under it), host memory without those
// checks (Env.on_dma_read / on_dma_write are called, from any thread),
// guest errors logged under the core lock (Env.on_log too), and
// run_parallel on std::threads made for each call.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include "hpu_fake_env.hpp"

#include <mutex>
#include <thread>

namespace hpu_test {

inline std::mutex &thread_env_mutex()
{
    static std::mutex m;
    return m;
}

inline void thread_env_lock(void *opaque)
{
    thread_env_mutex().lock();
    env_lock(opaque);
}

inline void thread_env_unlock(void *opaque)
{
    env_unlock(opaque);
    thread_env_mutex().unlock();
}

inline int thread_env_dma(void *opaque, uint64_t addr, void *buf, uint64_t len, bool write)
{
    auto *env = static_cast<Env *>(opaque);
    const auto &hook = write ? env->on_dma_write : env->on_dma_read;
    if (hook) {
        hook(addr);
    }
    if (!env->host_range(addr, len)) {
        return -1;
    }
    uint8_t *p = env->host.data() + (addr - HOST_BASE);
    if (write) {
        std::memcpy(p, buf, len);
    } else {
        std::memcpy(buf, p, len);
    }
    return 0;
}

inline int thread_env_read(void *o, uint64_t a, void *b, uint64_t n)
{
    return thread_env_dma(o, a, b, n, false);
}

inline int thread_env_write(void *o, uint64_t a, const void *b, uint64_t n)
{
    return thread_env_dma(o, a, const_cast<void *>(b), n, true);
}

inline void thread_env_parallel(void *, void (*fn)(void *, unsigned), void *arg, unsigned n)
{
    std::vector<std::thread> t;
    for (unsigned i = 1; i < n; i++) {
        t.emplace_back(fn, arg, i);
    }
    fn(arg, 0);
    for (auto &x : t) {
        x.join();
    }
}

inline const HpuCoreOps thread_env_ops = [] {
    HpuCoreOps o = env_ops;
    o.lock = thread_env_lock;
    o.unlock = thread_env_unlock;
    o.dma_read = thread_env_read;
    o.dma_write = thread_env_write;
    o.run_parallel = thread_env_parallel;
    return o;
}();

// A device with @hbm bytes of HBM in the threaded environment.
inline DevOpts thread_dev(uint64_t hbm)
{
    DevOpts o;
    o.hbm = hbm;
    o.ops = &thread_env_ops;
    return o;
}

} // namespace hpu_test
