// SPDX-License-Identifier: MIT
// Small helpers shared by the benchmark programs: a monotonic clock and
// percentiles. Each program prints "BENCH name=value" lines that
// tests/bench/run-bench.py collects.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_BENCH_COMMON_H
#define HPU_TESTS_BENCH_COMMON_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

namespace bench {

inline double now_s()
{
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The q-th quantile (0..1) of v, by nearest rank; v is sorted in place.
inline double quantile(std::vector<double> &v, double q)
{
    if (v.empty())
        return 0.0;
    std::sort(v.begin(), v.end());
    auto i = static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1)));
    return v[std::min(i, v.size() - 1)];
}

inline double thread_cpu_s()
{
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Runs fn once to warm up, then after() (say, a check of what the warm-up
// computed), then fn `runs` times: the median of those runs, in seconds of
// clock() (now_s: wall time).
template <typename C, typename F, typename G>
double median_by(C &&clock, int runs, F &&fn, G &&after)
{
    fn();
    after();
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        const double t0 = clock();
        fn();
        t.push_back(clock() - t0);
    }
    return quantile(t, 0.5);
}

template <typename F, typename G>
double median_s(int runs, F &&fn, G &&after)
{
    return median_by(now_s, runs, std::forward<F>(fn), std::forward<G>(after));
}

// An unsigned setting from the environment, @def when unset or empty.
inline std::uint64_t env_u64(const char *name, std::uint64_t def)
{
    const char *v = std::getenv(name);
    return v && *v ? std::strtoull(v, nullptr, 10) : def;
}

// Whether HPU_BENCH_WHAT (unset or empty: everything) asks for @what.
inline bool want(const char *what)
{
    const char *v = std::getenv("HPU_BENCH_WHAT");
    return !v || !*v || std::strcmp(v, what) == 0;
}

template <typename F>
double median_s(int runs, F &&fn)
{
    return median_s(runs, std::forward<F>(fn), [] {});
}

inline void report(const char *name, double value)
{
    std::printf("BENCH %s=%.6g\n", name, value);
    std::fflush(stdout);
}

} // namespace bench

#endif // HPU_TESTS_BENCH_COMMON_H
