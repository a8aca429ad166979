// SPDX-License-Identifier: MIT
// hpu-bench-compute: runs in a guest with hpu.ko loaded, through libhpu's
// compute API (1.5) only, every operand in HBM:
//   - FP32 GEMM 1024 x 1024 x 1024, eager (hpu_queue_gemm) on MME 0, and
//     one such GEMM on each MME at once (GFLOP/s, both together);
//   - the same GEMM with BF16 inputs and FP32 output, on MME 0;
//   - add_f32 over 64 MiB tensors (two in, one out: 3 x 64 MiB moved per
//     launch, GB/s);
//   - one AdamW step (adamw_f32) over 10 million parameters (ms).
// Each figure: one warm-up run, its result checked once against a host
// computation (an "ERROR what" line when it does not match), then the
// median of `runs` runs (default 5; three times as many of the GEMMs, which
// are short and whose first runs after a check are often slower), submit
// to fence signalled. tests/bench/hpu-bench-host-compute measures the
// baselines on the host.
//   hpu-bench-compute [device index] [runs]
// Prints "BENCH name=value" lines; exits non-zero when something fails to
// run or a result is wrong.
//
// Copyright (c) 2026 The hpu authors
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "bench_common.h"
#include "bench_compute.h"
#include "hpu/hpu.hpp"

namespace {

namespace bc = bench::compute;
namespace ref = hpu::kernels::ref;

constexpr std::uint64_t kSlot = 64ULL << 20U; // one staging slot, the largest operand
constexpr std::chrono::minutes kWait{5};
constexpr std::chrono::milliseconds kJobTimeout{std::chrono::minutes{5}};

int g_failures = 0;

// A value in full (std::to_string drops digits).
std::string str(double v)
{
    std::array<char, 32> b{};
    std::snprintf(b.data(), b.size(), "%.9g", v);
    return b.data();
}

void fail(const std::string &what)
{
    std::printf("ERROR %s\n", what.c_str());
    std::fflush(stdout);
    ++g_failures;
}

int check(int ret, const char *what)
{
    if (ret < 0)
        throw hpu::Error(ret, std::string(what) + " (" + hpu_last_error() + ")");
    return ret;
}

void finish(const hpu::Fence &f)
{
    if (!f.wait(kWait))
        throw hpu::Error(-ETIME, "waiting for a benchmark job");
}

// A built-in TPC kernel, by name.
class Kernel {
public:
    Kernel(const hpu::Device &d, const char *name) { check(hpu_kernel_get(d.get(), name, &k_), name); }
    Kernel(const Kernel &) = delete;
    Kernel &operator=(const Kernel &) = delete;
    Kernel(Kernel &&) = delete;
    Kernel &operator=(Kernel &&) = delete;
    ~Kernel() { (void)hpu_kernel_destroy(k_); }
    [[nodiscard]] const hpu_kernel_t *get() const { return k_; }

private:
    hpu_kernel_t *k_ = nullptr;
};

// The device, a DMA queue and three host staging slots for operands and results.
struct Rig {
    hpu::Device dev;
    hpu::Queue dma;
    hpu::Buffer stage;

    explicit Rig(unsigned int index)
        : dev(hpu::Device::open(index)), dma(hpu::Queue::create(dev, 0)),
          stage(hpu::Buffer::create(dev, 3 * kSlot, HPU_MEM_HOST))
    {
    }
    template <typename T>
    [[nodiscard]] T *slot(unsigned int i) const
    {
        void *p = static_cast<unsigned char *>(stage.host_ptr()) + i * kSlot;
        return static_cast<T *>(p);
    }
    [[nodiscard]] hpu::Buffer hbm(std::uint64_t bytes) const
    {
        return hpu::Buffer::create(dev, bytes, HPU_MEM_DEVICE);
    }
    // n elements f(i) into a new HBM buffer, through slot 0.
    template <typename T, typename F>
    [[nodiscard]] hpu::Buffer upload(std::uint64_t n, F &&f)
    {
        T *p = slot<T>(0);
        for (std::uint64_t i = 0; i < n; ++i)
            p[i] = f(i);
        auto b = hbm(n * sizeof(T));
        finish(dma.copy(b.va(), stage.va(), n * sizeof(T)));
        return b;
    }
    // bytes of HBM at va into slot i.
    template <typename T>
    const T *download(std::uint64_t va, std::uint64_t bytes, unsigned int i)
    {
        finish(dma.copy(stage.va() + i * kSlot, va, bytes));
        return slot<T>(i);
    }
};

// ---- GEMMs -----------------------------------------------------------------

hpu_gemm square_gemm(std::uint32_t in_dtype, std::uint64_t a, std::uint64_t b, std::uint64_t d)
{
    hpu_gemm g{};
    g.size = sizeof(g);
    g.in_dtype = in_dtype;
    g.out_dtype = HPU_DTYPE_FP32;
    g.m = g.n = g.k = bc::kGemmDim;
    g.a = a;
    g.b = b;
    g.d = d;
    g.alpha = 1.0F;
    return g;
}

hpu::Fence gemm(hpu::Queue &q, const hpu_gemm &g)
{
    hpu_fence_t *f = nullptr;
    check(hpu_queue_gemm(q.get(), &g, nullptr, 0, &f), "hpu_queue_gemm");
    return hpu::Fence{f};
}

// D (n x n, FP32) against A B by Freivalds' test: D x == A (B x) for two
// vectors x of odd integers. The operands make every sum exact (see
// bench_compute.h), so the comparison is exact too.
template <typename FA, typename FB>
void check_gemm(const char *what, const float *d, FA &&a, FB &&b)
{
    constexpr std::uint32_t n = bc::kGemmDim;
    for (std::uint32_t trial = 0; trial < 2; ++trial) {
        std::vector<double> x(n);
        std::vector<double> bx(n);
        for (std::uint32_t k = 0; k < n; ++k)
            x[k] = 2.0 * bc::small_int(bc::kCheck, std::uint64_t{trial} * n + k, 7) + 1.0;
        for (std::uint32_t j = 0; j < n; ++j) {
            double s = 0;
            for (std::uint32_t k = 0; k < n; ++k)
                s += static_cast<double>(b(std::uint64_t{j} * n + k)) * x[k];
            bx[j] = s;
        }
        for (std::uint32_t i = 0; i < n; ++i) {
            double want = 0;
            double got = 0;
            for (std::uint32_t k = 0; k < n; ++k) {
                want += static_cast<double>(a(std::uint64_t{i} * n + k)) * bx[k];
                got += static_cast<double>(d[std::uint64_t{i} * n + k]) * x[k];
            }
            if (got != want) {
                fail(std::string(what) + ": row " + std::to_string(i) + " of D is wrong (D x = " +
                     str(got) + ", A B x = " + str(want) + ")");
                return;
            }
        }
    }
}

void bench_gemms(Rig &r, int runs)
{
    constexpr std::uint64_t bytes = bc::kGemmElems * 4;
    auto q0 = hpu::Queue::create(r.dev, 0, HPU_ENGINE_CLASS_MME);
    auto q1 = hpu::Queue::create(r.dev, 1, HPU_ENGINE_CLASS_MME);
    const auto a = r.upload<float>(bc::kGemmElems, bc::gemm_a_f32);
    const auto b = r.upload<float>(bc::kGemmElems, bc::gemm_b);
    const auto d0 = r.hbm(bytes);
    const auto d1 = r.hbm(bytes);
    const hpu_gemm g0 = square_gemm(HPU_DTYPE_FP32, a.va(), b.va(), d0.va());
    hpu_gemm g1 = g0;
    g1.d = d1.va();

    const auto check_f32 = [&](const char *what, const hpu::Buffer &d, unsigned int slot) {
        check_gemm(what, r.download<float>(d.va(), bytes, slot), bc::gemm_a_f32, bc::gemm_b);
    };
    double t = bench::median_s(runs, [&] { finish(gemm(q0, g0)); }, [&] { check_f32("sgemm on MME 0", d0, 0); });
    bench::report("mme_sgemm_gflops", bc::kGemmFlop / t / 1e9);

    t = bench::median_s(runs, [&] {
        const hpu::Fence f0 = gemm(q0, g0);
        const hpu::Fence f1 = gemm(q1, g1);
        finish(f0);
        finish(f1);
    }, [&] {
        check_f32("sgemm on both MMEs, MME 0", d0, 0);
        check_f32("sgemm on both MMEs, MME 1", d1, 1);
    });
    bench::report("mme2_sgemm_gflops", 2 * bc::kGemmFlop / t / 1e9);

    const auto a16 = r.upload<std::uint16_t>(bc::kGemmElems, bc::gemm_a_bf16);
    const auto b16 = r.upload<std::uint16_t>(bc::kGemmElems, bc::gemm_b_bf16);
    const hpu_gemm g16 = square_gemm(HPU_DTYPE_BF16, a16.va(), b16.va(), d0.va());
    t = bench::median_s(runs, [&] { finish(gemm(q0, g16)); }, [&] {
        check_gemm("BF16 GEMM on MME 0", r.download<float>(d0.va(), bytes, 0),
                   [](std::uint64_t i) { return ref::bf16_to_f32(bc::gemm_a_bf16(i)); },
                   [](std::uint64_t i) { return ref::bf16_to_f32(bc::gemm_b_bf16(i)); });
    });
    bench::report("mme_bf16gemm_gflops", bc::kGemmFlop / t / 1e9);
}

// ---- TPC kernels -----------------------------------------------------------

hpu_tensor vec(const hpu::Buffer &b, std::uint32_t n)
{
    hpu_tensor t{};
    const std::array<std::uint32_t, HPU_TENSOR_MAX_DIMS> sizes = {n};
    check(hpu_tensor_init(&t, b.va(), HPU_DTYPE_FP32, 1, sizes.data()), "hpu_tensor_init");
    return t;
}

// A command list of one elementwise launch over n elements.
hpu::CommandList ew_launch(const Rig &r, const Kernel &k, const std::vector<hpu_tensor> &ts,
                           const std::vector<std::uint32_t> &scalars, std::uint32_t n)
{
    hpu_launch l{};
    l.size = sizeof(l);
    l.num_tensors = static_cast<std::uint32_t>(ts.size());
    l.tensors = ts.data();
    l.num_scalars = static_cast<std::uint32_t>(scalars.size());
    l.scalars = scalars.data();
    l.index_size[0] = (n + 255) / 256;
    auto cl = hpu::CommandList::create(r.dev);
    check(hpu_cmd_launch(cl.get(), k.get(), &l), "hpu_cmd_launch");
    return cl;
}

float add_a(std::uint64_t i) { return bc::unit(bc::kAddA, i); }
float add_b(std::uint64_t i) { return 4.0F * bc::unit(bc::kAddB, i); }

void bench_add(Rig &r, int runs)
{
    const Kernel add(r.dev, "add_f32");
    auto tpc = hpu::Queue::create(r.dev, 0, HPU_ENGINE_CLASS_TPC);
    const auto a = r.upload<float>(bc::kAddElems, add_a);
    const auto b = r.upload<float>(bc::kAddElems, add_b);
    const auto c = r.hbm(bc::kAddBytes);
    auto cl = ew_launch(r, add, {vec(a, bc::kAddElems), vec(b, bc::kAddElems), vec(c, bc::kAddElems)}, {},
                        bc::kAddElems);
    const double t = bench::median_s(runs, [&] { finish(tpc.submit(cl, kJobTimeout)); }, [&] {
        const auto *got = r.download<float>(c.va(), bc::kAddBytes, 0);
        for (std::uint32_t i = 0; i < bc::kAddElems; ++i) {
            if (ref::f32_bits(got[i]) != ref::f32_bits(add_a(i) + add_b(i))) {
                fail("add_f32: element " + std::to_string(i) + " is " + str(got[i]) + ", not " +
                     str(add_a(i) + add_b(i)));
                return;
            }
        }
    });
    bench::report("tpc_add_gbps", 3.0 * static_cast<double>(bc::kAddBytes) / t / 1e9);
}

// w, m and v after one step from the generated state, bit for bit as ref::adamw.
void check_adamw(const float *w, const float *m, const float *v)
{
    const ref::AdamW p = bc::adamw_params();
    for (std::uint32_t i = 0; i < bc::kAdamParams; ++i) {
        float ew = bc::adam_w(i);
        float em = bc::adam_m(i);
        float ev = bc::adam_v(i);
        ref::adamw(ew, bc::adam_g(i), em, ev, p);
        if (ref::f32_bits(w[i]) != ref::f32_bits(ew) || ref::f32_bits(m[i]) != ref::f32_bits(em) ||
            ref::f32_bits(v[i]) != ref::f32_bits(ev)) {
            fail("adamw_f32: parameter " + std::to_string(i) + " is (w, m, v) = (" + str(w[i]) + ", " +
                 str(m[i]) + ", " + str(v[i]) + "), not (" + str(ew) + ", " +
                 str(em) + ", " + str(ev) + ")");
            return;
        }
    }
}

void bench_adamw(Rig &r, int runs)
{
    constexpr std::uint32_t n = bc::kAdamParams;
    constexpr std::uint64_t bytes = std::uint64_t{n} * 4;
    const Kernel adamw(r.dev, "adamw_f32");
    auto tpc = hpu::Queue::create(r.dev, 0, HPU_ENGINE_CLASS_TPC);
    const auto w = r.upload<float>(n, bc::adam_w);
    const auto g = r.upload<float>(n, bc::adam_g);
    const auto m = r.upload<float>(n, bc::adam_m);
    const auto v = r.upload<float>(n, bc::adam_v);
    const ref::AdamW p = bc::adamw_params();
    const std::vector<std::uint32_t> scalars = {ref::f32_bits(p.lr),  ref::f32_bits(p.b1), ref::f32_bits(p.b2),
                                                ref::f32_bits(p.eps), ref::f32_bits(p.wd), ref::f32_bits(p.c1),
                                                ref::f32_bits(p.c2)};
    auto cl = ew_launch(r, adamw, {vec(w, n), vec(g, n), vec(m, n), vec(v, n)}, scalars, n);
    const double t = bench::median_s(runs, [&] { finish(tpc.submit(cl, kJobTimeout)); }, [&] {
        check_adamw(r.download<float>(w.va(), bytes, 0), r.download<float>(m.va(), bytes, 1),
                    r.download<float>(v.va(), bytes, 2));
    });
    bench::report("tpc_adamw_step_ms", t * 1e3);
}

} // namespace

int main(int argc, char **argv)
{
    const unsigned int index = argc > 1 ? static_cast<unsigned int>(std::strtoul(argv[1], nullptr, 10)) : 0; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    const int runs = argc > 2 ? std::atoi(argv[2]) : 5; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic,cert-err34-c)
    try {
        Rig r(index);
        bench_gemms(r, 3 * runs);
        bench_add(r, runs);
        bench_adamw(r, runs);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hpu-bench-compute: %s\n", e.what());
        return 1;
    }
    return g_failures == 0 ? 0 : 1;
}
