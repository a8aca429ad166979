// SPDX-License-Identifier: MIT
//
// hpu-bench-tpc-model: the TPC figures of hpu-bench-compute (add_f32 over
// 64 MiB tensors, one adamw_f32 step over 10M parameters) run on the device
// model's core directly, without QEMU or a guest: for profiling the
// interpreter (valgrind --tool=callgrind) and for quick before/after
// comparisons. The core's files are compiled with QEMU's code-generation
// flags (CMakeLists.txt beside this file), the cores run on threads with a
// real core lock (hpu_thread_env.hpp), the tensors sit in HBM mapped with
// 2 MiB pages in a context, as the driver maps them. Results are checked
// bit for bit.
//
//   HPU_BENCH_RUNS (5)   timed runs after a warm-up; the median is printed
//   HPU_BENCH_WHAT       "add", "adamw" or both (default)
//   HPU_BENCH_ELEMS      elements of add_f32 per tensor (default 16M)
//   HPU_BENCH_PARAMS     parameters of adamw_f32 (default 10M)
//   HPU_BENCH_CORES      the core's tpc_cores (default ENGINES.TPC, 8)
//
// Copyright (c) 2026 The hpu authors

#include "bench_common.h"
#include "bench_compute.h"
#include "hpu_thread_env.hpp"
#include "hpu_tpc_rig.hpp"
#include "tpc_kernels.h"

#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>

using namespace hpu_test;
namespace bc = bench::compute;
namespace ref = hpu::kernels::ref;

namespace {

constexpr unsigned kAsid = 1;

// A rig with @hbm bytes of HBM and every tensor of @bytes mapped in kAsid.
struct Model {
    Rig r;
    uint64_t next = 32 * MiB;

    explicit Model(uint64_t hbm) : r(opts(hbm))
    {
        r.core.tpc_cores = static_cast<unsigned>(bench::env_u64("HPU_BENCH_CORES", r.core.tpc_cores));
    }
    static DevOpts opts(uint64_t hbm)
    {
        return thread_dev(hbm);
    }
    // A tensor of @n floats from @f: its VA in kAsid (HBM offset in @off).
    template <typename F>
    uint64_t tensor(uint64_t n, F &&f, uint64_t *off = nullptr)
    {
        const uint64_t bytes = (4 * n + HUGE_PG - 1) & ~(HUGE_PG - 1);
        std::vector<float> v(n);
        for (uint64_t i = 0; i < n; i++) {
            v[i] = f(i);
        }
        r.bwrite(next, v.data(), 4 * n);
        uint64_t va = r.map_hbm(kAsid, next, bytes);
        if (off) {
            *off = next;
        }
        next += bytes;
        return va;
    }
    std::vector<float> get(uint64_t off, uint64_t n)
    {
        auto raw = r.bread(off, 4 * n);
        std::vector<float> v(n);
        std::memcpy(v.data(), raw.data(), raw.size());
        return v;
    }
    uint64_t place(const char *kernel, const LaunchDesc &ld)
    {
        const hpu::kernels::TpcKernel *k = hpu::kernels::find_tpc_kernel(kernel);
        REQUIRE(k != nullptr);
        std::vector<uint8_t> bin(k->data, k->data + k->size);
        Space s(r, kAsid, true);
        return place_launch(s, bin, ld);
    }
    // The median wall time of a launch; *cpu gets the median process CPU
    // time (user + system) of one, which a loaded host disturbs less.
    double time(uint64_t desc, int runs, const std::function<void()> &check, double *cpu)
    {
        std::vector<double> c;
        const double t = bench::median_s(
            runs,
            [&] {
                const double c0 = cpu_s();
                REQUIRE(r.run_cb(tpc_cb(desc), kAsid, TPC_E, 0).status == HPU_CQ_OK);
                c.push_back(cpu_s() - c0);
            },
            check);
        c.erase(c.begin());                 // the warm-up
        *cpu = bench::quantile(c, 0.5);
        return t;
    }
    static double cpu_s()
    {
        rusage u{};
        getrusage(RUSAGE_SELF, &u);
        return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
    }
};

TDesc vec(uint64_t va, uint64_t n)
{
    return TDesc::dense(HPU_TPC_DT_F32, va, {static_cast<uint32_t>(n)});
}

void bench_add(int runs)
{
    const uint64_t n = bench::env_u64("HPU_BENCH_ELEMS", bc::kAddElems);
    Model m(1ULL << 30);
    auto fa = [](uint64_t i) { return bc::unit(bc::kAddA, i); };
    auto fb = [](uint64_t i) { return 4.0F * bc::unit(bc::kAddB, i); };
    uint64_t coff = 0;
    const uint64_t a = m.tensor(n, fa), b = m.tensor(n, fb);
    const uint64_t c = m.tensor(n, [](uint64_t) { return 0.0F; }, &coff);
    LaunchDesc ld;
    ld.index[0] = static_cast<uint32_t>((n + 255) / 256);
    ld.tensors = {vec(a, n), vec(b, n), vec(c, n)};
    const uint64_t desc = m.place("add_f32", ld);
    double cpu = 0;
    const double t = m.time(desc, runs, [&] {
        auto got = m.get(coff, n);
        for (uint64_t i = 0; i < n; i++) {
            if (ref::f32_bits(got[i]) != ref::f32_bits(fa(i) + fb(i))) {
                FAIL("add_f32: element " << i << " is " << got[i]);
            }
        }
    }, &cpu);
    bench::report("model_tpc_add_gbps", 3.0 * 4.0 * static_cast<double>(n) / t / 1e9);
    bench::report("model_tpc_add_cpu_ms", cpu * 1e3);
}

void bench_adamw(int runs)
{
    const uint64_t n = bench::env_u64("HPU_BENCH_PARAMS", bc::kAdamParams);
    Model m(1ULL << 30);
    uint64_t ow = 0, om = 0, ov = 0;
    const uint64_t w = m.tensor(n, bc::adam_w, &ow), g = m.tensor(n, bc::adam_g);
    const uint64_t mm = m.tensor(n, bc::adam_m, &om), v = m.tensor(n, bc::adam_v, &ov);
    const ref::AdamW p = bc::adamw_params();
    LaunchDesc ld;
    ld.index[0] = static_cast<uint32_t>((n + 255) / 256);
    ld.tensors = {vec(w, n), vec(g, n), vec(mm, n), vec(v, n)};
    ld.scalars = {ref::f32_bits(p.lr), ref::f32_bits(p.b1), ref::f32_bits(p.b2),
                  ref::f32_bits(p.eps), ref::f32_bits(p.wd), ref::f32_bits(p.c1),
                  ref::f32_bits(p.c2)};
    const uint64_t desc = m.place("adamw_f32", ld);
    double cpu = 0;
    const double t = m.time(desc, runs, [&] {
        auto gw = m.get(ow, n), gm = m.get(om, n), gv = m.get(ov, n);
        for (uint64_t i = 0; i < n; i++) {
            float ew = bc::adam_w(i), em = bc::adam_m(i), ev = bc::adam_v(i);
            ref::adamw(ew, bc::adam_g(i), em, ev, p);
            if (ref::f32_bits(gw[i]) != ref::f32_bits(ew) ||
                ref::f32_bits(gm[i]) != ref::f32_bits(em) ||
                ref::f32_bits(gv[i]) != ref::f32_bits(ev)) {
                FAIL("adamw_f32: parameter " << i);
            }
        }
    }, &cpu);
    bench::report("model_tpc_adamw_step_ms", t * 1e3);
    bench::report("model_tpc_adamw_cpu_ms", cpu * 1e3);
}

} // namespace

TEST_CASE("TPC model bench", "[bench]")
{
    const int runs = static_cast<int>(bench::env_u64("HPU_BENCH_RUNS", 5));
    if (bench::want("add")) {
        bench_add(runs);
    }
    if (bench::want("adamw")) {
        bench_adamw(runs);
    }
}
