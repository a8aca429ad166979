// SPDX-License-Identifier: MIT
//
// The kernels of a small CNN on the device model: im2col_f32 and its
// adjoint col2im_f32 (exact), composed with MME GEMMs into conv2d's
// forward pass (a bias added by add_f32), weight gradient and input
// gradient and checked against direct convolution; max-pool forward and backward (exact); batch norm
// 2-D in training and inference, and its backward, within the README's
// bounds. Odd sizes, strides, padding and dilation; every output is placed
// with gaps that must keep their sentinel.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "cnn_rig.hpp"

using namespace hpu_test;

namespace {

// Every product of a convolution of @xs by @k filters: f(y, w, x) with the
// dense indexes of the output [N, K, OH, OW], the weight [K, C, kh, kw]
// and the input element.
void each_product(const Nchw &xs, const Window2d &g, uint32_t k,
                  const std::function<void(size_t, size_t, size_t)> &f)
{
    const Nchw ys = g.out(xs, k);
    const Nchw ws{k, xs.c, g.kh, g.kw};
    for (uint32_t n = 0; n < ys.n; n++) {
        for (uint32_t o = 0; o < k; o++) {
            for (uint32_t oh = 0; oh < ys.h; oh++) {
                for (uint32_t ow = 0; ow < ys.w; ow++) {
                    for (uint32_t c = 0; c < xs.c; c++) {
                        for (uint32_t r = 0; r < g.kh; r++) {
                            for (uint32_t s = 0; s < g.kw; s++) {
                                const int64_t ih = Window2d::tap(oh, r, g.sh, g.ph, g.dh);
                                const int64_t iw = Window2d::tap(ow, s, g.sw, g.pw, g.dw);
                                if (ih >= 0 && ih < xs.h && iw >= 0 && iw < xs.w) {
                                    f(ys.at(n, o, oh, ow), ws.at(o, c, r, s),
                                      xs.at(n, c, static_cast<uint32_t>(ih),
                                            static_cast<uint32_t>(iw)));
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

// One command buffer of GEMMs on MME0, in order.
void run_gemms(Lib &L, const std::vector<Gemm> &gs)
{
    Cb cb;
    for (const Gemm &g : gs) {
        auto b = g.bytes();
        const uint64_t at = L.s.alloc(b.size());
        L.s.write(at, b.data(), b.size());
        cb.raw(HPU_PKT_MME_GEMM, 0).raw(static_cast<uint32_t>(at), static_cast<uint32_t>(at >> 32));
    }
    REQUIRE(L.r.run_cb(cb, 0, HPU_ENGINE_MME0, 0).status == HPU_CQ_OK);
}

// |got - want| against a bound of @coef u @mag per element.
void sum_check(Worst &w, const std::vector<uint32_t> &got, const std::vector<double> &want,
               const std::vector<double> &mag, double coef)
{
    for (size_t i = 0; i < got.size(); i++) {
        const double e = std::fabs(kref::bits_f32(got[i]) - want[i]);
        w.add(e / (coef * kU * mag[i] + 1e-300), std::to_string(i));
    }
}

} // namespace

TEST_CASE("tpclib im2col and col2im, FP32 and BF16: exact against the references (BF16: "
          "col2im's FP32 sum rounded once), gaps untouched",
          "[tpclib][cnn]")
{
    Lib L;
    for (const auto &[dt, sfx] : {std::pair{F32, "_f32"}, std::pair{BF16, "_bf16"}}) {
        const bool h = dt == BF16;
        const std::string t = sfx;
        uint32_t seed = 1;
        for (const Geo &c : kConv) {
            CAPTURE(t, c.name);
            const Nchw cs = c.g.cols(c.x);
            const auto xv = rand_f32(c.x.size(), seed++, -2, 2, h);
            const Placed x = nchw(L, dt, c.x, xv, 2, 1);
            const Placed col = nchw(L, dt, cs, {}, 3, 2);
            REQUIRE(L.launch("im2col" + t, {x.t, col.t}, scalars(c.g), vec_index(cs)) == HPU_CQ_OK);
            size_t stray = 0;
            std::vector<float> want(cs.size());
            kref::im2col(c.x, c.g, from_elems(dt, xv), want);
            check_exact(read_back(L, col, stray), to_elems(dt, want));
            CHECK(stray == 0);

            const auto dv = rand_f32(cs.size(), seed++, -2, 2, h);
            const Placed dcol = nchw(L, dt, cs, dv, 1, 0);
            const Placed dx = nchw(L, dt, c.x, {}, 5, 3);
            REQUIRE(L.launch("col2im" + t, {dcol.t, dx.t}, scalars(c.g), vec_index(c.x)) ==
                    HPU_CQ_OK);
            std::vector<float> wdx(c.x.size());
            kref::col2im(c.x, c.g, from_elems(dt, dv), wdx);
            check_exact(read_back(L, dx, stray), to_elems(dt, wdx));
            CHECK(stray == 0);

            // the references are adjoint: <im2col x, dcol> = <x, col2im dcol>
            double p = 0, q = 0, mag = 0;
            const auto df = from_elems(dt, dv), xf = from_elems(dt, xv);
            for (size_t i = 0; i < want.size(); i++) {
                p += double{want[i]} * df[i];
                mag += std::fabs(double{want[i]} * df[i]);
            }
            for (size_t i = 0; i < wdx.size(); i++) {
                q += double{wdx[i]} * xf[i];
            }
            CHECK(std::fabs(p - q) <= static_cast<double>(c.g.kh * c.g.kw) * kU * mag);
        }
    }
}

TEST_CASE("tpclib conv2d of im2col_f32, col2im_f32 and MME GEMMs: forward, weight and input "
          "gradients against direct convolution",
          "[tpclib][cnn]")
{
    Lib L;
    Worst wy{1}, wdw{1}, wdx{1};
    uint32_t seed = 100;
    for (const Geo &c : kConv) {
        CAPTURE(c.name);
        const Nchw cs = c.g.cols(c.x), ys = c.g.out(c.x, c.k);
        const uint32_t crs = cs.c, ohw = ys.h * ys.w, gap = 5; // gap: col rows ldb apart
        const uint32_t ld = ohw + gap;
        const auto xv = rand_f32(c.x.size(), seed++, -2, 2);
        const auto wv = rand_f32(size_t{c.k} * crs, seed++, -1, 1);
        const auto dyv = rand_f32(ys.size(), seed++, -1, 1);
        const Placed x = nchw(L, F32, c.x, xv);
        const Placed col = nchw(L, F32, cs, {}, 0, gap);
        const Placed w = put_tensor(L, F32, {crs, c.k}, {}, wv);
        const Placed y = nchw(L, F32, ys, {});
        const Placed dy = nchw(L, F32, ys, dyv);
        const Placed dw = put_tensor(L, F32, {crs, c.k}, {}, {});
        const Placed dcol = nchw(L, F32, cs, {}, 0, gap);
        const Placed dx = nchw(L, F32, c.x, {});

        // forward: y[n] = w [K, CRS] x col[n] [CRS, OH OW], one batched GEMM
        REQUIRE(L.launch("im2col_f32", {x.t, col.t}, scalars(c.g), vec_index(cs)) == HPU_CQ_OK);
        Gemm f;
        f.m = c.k;
        f.n = ohw;
        f.k = crs;
        f.batch = c.x.n;
        f.a = w.t.d.base;
        f.lda = crs;
        f.b = col.t.d.base;
        f.ldb = ld;
        f.sb = uint64_t{crs} * ld;
        f.d = y.t.d.base;
        f.ldd = ohw;
        f.sd = uint64_t{c.k} * ohw;
        run_gemms(L, {f});
        // a bias per output channel: add_f32 with b [1, 1, K] broadcast
        const auto bv = rand_f32(c.k, seed++, -1, 1);
        const Placed b = put_tensor(L, F32, {1, 1, c.k}, {}, bv);
        const Placed yb = nchw(L, F32, ys, {});
        REQUIRE(L.launch("add_f32", {y.t, b.t, yb.t}, {}, ew_index(yb.t)) == HPU_CQ_OK);

        // weight gradient: dw = sum over n of dy[n] [K, OH OW] x col[n]^T,
        // GEMMs accumulating in place (beta 1) in order of n
        std::vector<Gemm> wg;
        for (uint32_t n = 0; n < c.x.n; n++) {
            Gemm g;
            g.flags = HPU_MME_F_TRANS_B;
            g.m = c.k;
            g.n = crs;
            g.k = ohw;
            g.a = dy.t.d.base + 4ULL * n * c.k * ohw;
            g.lda = ohw;
            g.b = col.t.d.base + 4ULL * n * crs * ld;
            g.ldb = ld;
            g.d = dw.t.d.base;
            g.ldd = crs;
            if (n > 0) {
                g.c = g.d;
                g.ldc = g.ldd;
                g.beta = 1.0f;
            }
            wg.push_back(g);
        }
        run_gemms(L, wg);

        // input gradient: dcol[n] = w^T [CRS, K] x dy[n], then col2im
        Gemm ig;
        ig.flags = HPU_MME_F_TRANS_A;
        ig.m = crs;
        ig.n = ohw;
        ig.k = c.k;
        ig.batch = c.x.n;
        ig.a = w.t.d.base;
        ig.lda = crs;
        ig.b = dy.t.d.base;
        ig.ldb = ohw;
        ig.sb = uint64_t{c.k} * ohw;
        ig.d = dcol.t.d.base;
        ig.ldd = ld;
        ig.sd = uint64_t{crs} * ld;
        run_gemms(L, {ig});
        REQUIRE(L.launch("col2im_f32", {dcol.t, dx.t}, scalars(c.g), vec_index(c.x)) ==
                HPU_CQ_OK);

        // direct convolution in double, and the magnitudes of its terms
        std::vector<double> ry(ys.size()), my(ys.size()), rdw(wv.size()), mdw(wv.size()),
            rdx(xv.size()), mdx(xv.size());
        const auto xf = floats(xv), wf = floats(wv), df = floats(dyv);
        each_product(c.x, c.g, c.k, [&](size_t yi, size_t wi, size_t xi) {
            ry[yi] += double{wf[wi]} * xf[xi];
            my[yi] += std::fabs(double{wf[wi]} * xf[xi]);
            rdw[wi] += double{df[yi]} * xf[xi];
            mdw[wi] += std::fabs(double{df[yi]} * xf[xi]);
            rdx[xi] += double{wf[wi]} * df[yi];
            mdx[xi] += std::fabs(double{wf[wi]} * df[yi]);
        });
        size_t stray = 0;
        // the GEMM's k-term bound (mme.md) plus its 3 roundings; the chain of
        // N accumulations; col2im's kh kw additions
        const auto gy = read_back(L, y, stray), gyb = read_back(L, yb, stray);
        sum_check(wy, gy, ry, my, crs + 3.0);
        std::vector<float> want_yb(ys.size());
        for (size_t i = 0; i < want_yb.size(); i++) {
            want_yb[i] = kref::bits_f32(gy[i]) + kref::bits_f32(bv[i / ohw % c.k]);
        }
        check_exact(gyb, want_yb);
        sum_check(wdw, read_back(L, dw, stray), rdw, mdw, ohw + c.x.n + 3.0);
        sum_check(wdx, read_back(L, dx, stray), rdx, mdx, c.k + 3.0 + c.g.kh * c.g.kw);
        CHECK(stray == 0);
    }
    report("conv2d forward (im2col + GEMM)", wy.worst, "of (CRS + 3) u sum|w x|");
    report("conv2d weight grad (N GEMMs)", wdw.worst, "of (OH OW + N + 3) u sum|dy x|");
    report("conv2d input grad (GEMM + col2im)", wdx.worst, "of (K + 3 + kh kw) u sum|w dy|");
    INFO("forward " << wy.first << " dw " << wdw.first << " dx " << wdx.first);
    CHECK(wy.bad == 0);
    CHECK(wdw.bad == 0);
    CHECK(wdx.bad == 0);
}

TEST_CASE("tpclib maxpool2d and maxpool2d_grad, FP32 and BF16: exact, first maximum wins, -inf "
          "padding, NaN (BF16: a signalling one comes out quiet; the gradient's FP32 sums rounded "
          "once)",
          "[tpclib][cnn]")
{
    Lib L;
    for (const auto &[dt, sfx] : {std::pair{F32, "_f32"}, std::pair{BF16, "_bf16"}}) {
        const bool h = dt == BF16;
        const std::string t = sfx;
        const uint32_t ninf = h ? 0xff80u : kNegInf;
        std::mt19937 gen(7);
        for (const Geo &c : kPool) {
            CAPTURE(t, c.name);
            const Nchw ys = c.g.out(c.x, c.x.c);
            // small multiples of 1.25: many ties; some -inf; NaNs in the larger inputs
            std::vector<float> xf(c.x.size());
            for (auto &v : xf) {
                const int k = static_cast<int>(gen() % 9);
                v = k == 8 ? -INFINITY : static_cast<float>(k - 4) * 1.25f;
            }
            auto xv = to_elems(dt, xf);
            if (xv.size() > 100) {
                xv[xv.size() / 2] = h ? 0x7fc0u : 0x7fc00000u;
                xv[xv.size() / 3] = h ? 0xff81u : 0xff800001u; // signalling
            }
            const Placed x = nchw(L, dt, c.x, xv, 1, 0, ninf);
            const Placed y = nchw(L, dt, ys, {}, 2, 1), idx = nchw(L, I32, ys, {}, 1, 2);
            REQUIRE(L.launch("maxpool2d" + t, {x.t, y.t, idx.t}, scalars(c.g), vec_index(ys)) ==
                    HPU_CQ_OK);
            std::vector<float> wy(ys.size());
            std::vector<int32_t> wi(ys.size());
            kref::maxpool2d(c.x, c.g, from_elems(dt, xv), wy, wi);
            size_t stray = 0;
            check_exact(read_back(L, y, stray), to_elems(dt, wy));
            const auto gi = read_back(L, idx, stray);
            check_exact(gi, wi);
            CHECK(stray == 0);

            const auto dyv = rand_f32(ys.size(), static_cast<uint32_t>(c.x.size()), -1, 1, h);
            const Placed dy = nchw(L, dt, ys, dyv, 0, 3);
            const Placed dix = nchw(L, I32, ys, gi, 0, 3);
            const Placed dx = nchw(L, dt, c.x, {}, 3, 1);
            REQUIRE(L.launch("maxpool2d_grad" + t, {dy.t, dix.t, dx.t}, scalars(c.g),
                             vec_index(c.x)) == HPU_CQ_OK);
            std::vector<float> wdx(c.x.size());
            kref::maxpool2d_grad(c.x, c.g, from_elems(dt, dyv), wi, wdx);
            check_exact(read_back(L, dx, stray), to_elems(dt, wdx));
            CHECK(stray == 0);
        }
    }
}

TEST_CASE("tpclib window kernels, FP32 and BF16: a window size, stride or dilation below 1, or "
          "a column stride above 512, raises TPC_ASSERT",
          "[tpclib][cnn]")
{
    Lib L;
    const Nchw xs{1, 1, 4, 4};
    const Window2d bad[] = {{0, 1}, {1, 1, 0, 1}, {1, 1, 1, 1, 0, 0, 1, 0}, {1, 1, 1, 513}};
    for (const auto &[dt, sfx] : {std::pair{F32, "_f32"}, std::pair{BF16, "_bf16"}}) {
        const Placed a = nchw(L, dt, xs, {}), b = nchw(L, dt, xs, {}), i = nchw(L, I32, xs, {});
        const std::string t = sfx;
        for (const Window2d &g : bad) {
            CAPTURE(t, g.kh, g.sh, g.sw, g.dw);
            for (const char *k : {"im2col", "col2im"}) {
                CHECK(L.launch(k + t, {a.t, b.t}, scalars(g), vec_index(xs)) == HPU_CQ_TPC_ASSERT);
            }
            CHECK(L.launch("maxpool2d" + t, {a.t, b.t, i.t}, scalars(g), vec_index(xs)) ==
                  HPU_CQ_TPC_ASSERT);
            CHECK(L.launch("maxpool2d_grad" + t, {a.t, i.t, b.t}, scalars(g), vec_index(xs)) ==
                  HPU_CQ_TPC_ASSERT);
        }
    }
}

TEST_CASE("tpclib batchnorm_f32: batch statistics, y and the running statistics within "
          "bounds; M = 1 asserts",
          "[tpclib][cnn]")
{
    Lib L;
    Worst wmean{1}, wrstd{1}, wy{1}, wrun{1};
    double rstd_ulp = 0, y_ulp = 0, run_ulp = 0;
    const float eps = 1e-5f, mom = 0.1f;
    uint32_t seed = 300;
    for (const Nchw &s : kBn) {
        CAPTURE(s.n, s.c, s.h, s.w);
        const double t = depth(s);
        const auto xv = rand_f32(s.size(), seed++, -3, 5);
        const auto gv = rand_f32(s.c, seed++, 0.5f, 1.5f), bv = rand_f32(s.c, seed++, -1, 1);
        const auto rmv = rand_f32(s.c, seed++, -1, 1), rvv = rand_f32(s.c, seed++, 0.5f, 2);
        const Placed x = nchw(L, F32, s, xv, 3, 1), y = nchw(L, F32, s, {}, 1, 2);
        const Placed gamma = chan(L, gv, s.c), beta = chan(L, bv, s.c);
        const Placed mean = chan(L, {}, s.c), rstd = chan(L, {}, s.c);
        const Placed rm = chan(L, rmv, s.c), rv = chan(L, rvv, s.c);
        REQUIRE(L.launch("batchnorm_f32",
                         {x.t, gamma.t, beta.t, y.t, mean.t, rstd.t, rm.t, rv.t},
                         {kref::f32_bits(eps), kref::f32_bits(mom)}, {s.c, 1, 1, 1, 1}) ==
                HPU_CQ_OK);
        const auto xf = floats(xv), gf = floats(gv), bf = floats(bv);
        std::vector<double> ry(s.size()), rrm(rmv.size()), rrv(rvv.size());
        for (uint32_t c = 0; c < s.c; c++) {
            rrm[c] = kref::bits_f32(rmv[c]);
            rrv[c] = kref::bits_f32(rvv[c]);
        }
        std::vector<kref::BatchNormStats> st(s.c);
        kref::batchnorm(s, xf, gf, bf, eps, mom, ry, st, rrm, rrv);
        size_t stray = 0;
        const auto gy = read_back(L, y, stray), gm = read_back(L, mean, stray);
        const auto gr = read_back(L, rstd, stray);
        const auto grm = read_back(L, rm, stray), grv = read_back(L, rv, stray);
        CHECK(stray == 0);
        const double m = static_cast<double>(s.size()) / s.c;
        for (uint32_t c = 0; c < s.c; c++) {
            const double amean = chan_mean(s, c, [&](size_t i) { return std::fabs(xf[i]); });
            wmean.add(std::fabs(kref::bits_f32(gm[c]) - st[c].mean) / ((t + 7) * kU * amean),
                      "mean " + std::to_string(c));
            const double er = err_ulps(kref::bits_f32(gr[c]), st[c].rstd, 0, false);
            rstd_ulp = std::max(rstd_ulp, er);
            wrstd.add(er / (t / 2 + 8), "rstd " + std::to_string(c));
            each_in_chan(s, c, [&](size_t i) {
                const double sc =
                    (std::fabs(xf[i]) + amean) * st[c].rstd * std::fabs(gf[c]) + std::fabs(bf[c]);
                const double e = err_ulps(kref::bits_f32(gy[i]), ry[i], sc, false);
                y_ulp = std::max(y_ulp, e);
                wy.add(e / (t + 20), "y " + std::to_string(i));
            });
            const double old_m = kref::bits_f32(rmv[c]), old_v = kref::bits_f32(rvv[c]);
            const double srm = mom * amean + std::fabs(old_m) + std::fabs(rrm[c]);
            const double srv = mom * st[c].var * m / (m - 1) + old_v + rrv[c];
            const double e1 = err_ulps(kref::bits_f32(grm[c]), rrm[c], srm, false);
            const double e2 = err_ulps(kref::bits_f32(grv[c]), rrv[c], srv, false);
            run_ulp = std::max({run_ulp, e1, e2});
            wrun.add(e1 / (t + 10), "running_mean " + std::to_string(c));
            wrun.add(e2 / (t + 12), "running_var " + std::to_string(c));
        }
    }
    report("batchnorm_f32 mean", wmean.worst, "of (T + 7) u mean|x|");
    report("batchnorm_f32 rstd", rstd_ulp, "ulp");
    report("batchnorm_f32 rstd", wrstd.worst, "of (T/2 + 8) ulp");
    report("batchnorm_f32 y", y_ulp, "ulp of (|x| + mean|x|) rstd |gamma| + |beta|");
    report("batchnorm_f32 y", wy.worst, "of (T + 20) ulp");
    report("batchnorm_f32 running", run_ulp, "ulp of the terms");
    report("batchnorm_f32 running", wrun.worst, "of (T + 10), (T + 12) ulp");
    INFO(wmean.first << " " << wrstd.first << " " << wy.first << " " << wrun.first);
    CHECK(wmean.bad == 0);
    CHECK(wrstd.bad == 0);
    CHECK(wy.bad == 0);
    CHECK(wrun.bad == 0);

    // one element per channel: no unbiased variance
    const Nchw one{1, 2, 1, 1};
    const Placed x = nchw(L, F32, one, {}), y = nchw(L, F32, one, {});
    const Placed p = chan(L, {0, 0}, 2);
    CHECK(L.launch("batchnorm_f32", {x.t, p.t, p.t, y.t, p.t, p.t, p.t, p.t},
                   {kref::f32_bits(eps), kref::f32_bits(mom)}, {2, 1, 1, 1, 1}) ==
          HPU_CQ_TPC_ASSERT);
}

TEST_CASE("tpclib batchnorm_grad_f32: dx, dgamma and dbeta within bounds", "[tpclib][cnn]")
{
    Lib L;
    Worst wdx{1}, wsum{1};
    double dx_ulp = 0;
    uint32_t seed = 400;
    for (const Nchw &s : kBn) {
        CAPTURE(s.n, s.c, s.h, s.w);
        const double t = depth(s);
        const auto xv = rand_f32(s.size(), seed++, -3, 5), dyv = rand_f32(s.size(), seed++, -1, 1);
        const auto gv = rand_f32(s.c, seed++, 0.5f, 1.5f);
        const auto xf = floats(xv), dyf = floats(dyv), gf = floats(gv);
        // the forward's statistics, as the reference gives them, in FP32
        std::vector<uint32_t> mv(s.c), rv(s.c);
        for (uint32_t c = 0; c < s.c; c++) {
            const auto st = kref::batchnorm_stats(s, xf, c, 1e-5);
            mv[c] = kref::f32_bits(static_cast<float>(st.mean));
            rv[c] = kref::f32_bits(static_cast<float>(st.rstd));
        }
        const Placed x = nchw(L, F32, s, xv, 2, 0), dy = nchw(L, F32, s, dyv, 0, 1);
        const Placed mean = chan(L, mv, s.c), rstd = chan(L, rv, s.c), gamma = chan(L, gv, s.c);
        const Placed dx = nchw(L, F32, s, {}, 1, 1);
        const Placed dg = chan(L, {}, s.c), db = chan(L, {}, s.c);
        REQUIRE(L.launch("batchnorm_grad_f32",
                         {x.t, dy.t, mean.t, rstd.t, gamma.t, dx.t, dg.t, db.t}, {},
                         {s.c, 1, 1, 1, 1}) == HPU_CQ_OK);
        const auto mf = floats(mv), rf = floats(rv);
        std::vector<double> rdx(s.size()), rdg(s.c), rdb(s.c);
        kref::batchnorm_grad(s, xf, dyf, mf, rf, gf, rdx, rdg, rdb);
        size_t stray = 0;
        const auto gdx = read_back(L, dx, stray);
        const auto gdg = read_back(L, dg, stray), gdb = read_back(L, db, stray);
        CHECK(stray == 0);
        for (uint32_t c = 0; c < s.c; c++) {
            auto xhat = [&](size_t i) { return (xf[i] - double{mf[c]}) * rf[c]; };
            const double ady = chan_mean(s, c, [&](size_t i) { return std::fabs(dyf[i]); });
            const double adx = chan_mean(s, c, [&](size_t i) { return std::fabs(dyf[i] * xhat(i)); });
            const double m = static_cast<double>(s.size()) / s.c;
            wsum.add(std::fabs(kref::bits_f32(gdb[c]) - rdb[c]) / ((t + 6) * kU * ady * m + 1e-300),
                     "dbeta " + std::to_string(c));
            wsum.add(std::fabs(kref::bits_f32(gdg[c]) - rdg[c]) / ((t + 8) * kU * adx * m + 1e-300),
                     "dgamma " + std::to_string(c));
            each_in_chan(s, c, [&](size_t i) {
                const double sc =
                    rf[c] * std::fabs(gf[c]) * (std::fabs(dyf[i]) + ady + std::fabs(xhat(i)) * adx);
                const double e = err_ulps(kref::bits_f32(gdx[i]), rdx[i], sc, false);
                dx_ulp = std::max(dx_ulp, e);
                wdx.add(e / (t + 14), "dx " + std::to_string(i));
            });
        }
    }
    report("batchnorm_grad_f32 dx", dx_ulp, "ulp of rstd |gamma| (|dy| + mean|dy| + |xhat| mean|dy xhat|)");
    report("batchnorm_grad_f32 dx", wdx.worst, "of (T + 14) ulp");
    report("batchnorm_grad_f32 dgamma, dbeta", wsum.worst, "of (T + 8), (T + 6) u sum");
    INFO(wdx.first << " " << wsum.first);
    CHECK(wdx.bad == 0);
    CHECK(wsum.bad == 0);
}

TEST_CASE("tpclib batchnorm_infer_f32: y from the running statistics within 8 ulp",
          "[tpclib][cnn]")
{
    Lib L;
    Worst w{8};
    const float eps = 1e-5f;
    uint32_t seed = 500;
    for (const Nchw &s : kBn) {
        CAPTURE(s.n, s.c, s.h, s.w);
        const auto xv = rand_f32(s.size(), seed++, -3, 5);
        const auto gv = rand_f32(s.c, seed++, 0.5f, 1.5f), bv = rand_f32(s.c, seed++, -1, 1);
        const auto rmv = rand_f32(s.c, seed++, -1, 2), rvv = rand_f32(s.c, seed++, 0.1f, 4);
        const Placed x = nchw(L, F32, s, xv, 1, 1), y = nchw(L, F32, s, {}, 2, 0);
        const Placed gamma = chan(L, gv, s.c), beta = chan(L, bv, s.c);
        const Placed rm = chan(L, rmv, s.c), rv = chan(L, rvv, s.c);
        REQUIRE(L.launch("batchnorm_infer_f32", {x.t, gamma.t, beta.t, rm.t, rv.t, y.t},
                         {kref::f32_bits(eps)}, {1, s.h, s.c, s.n, 1}) == HPU_CQ_OK);
        const auto xf = floats(xv), gf = floats(gv), bf = floats(bv), mf = floats(rmv),
                   vf = floats(rvv);
        std::vector<double> ry(s.size());
        kref::batchnorm_infer(s, xf, gf, bf, mf, vf, eps, ry);
        size_t stray = 0;
        const auto gy = read_back(L, y, stray);
        CHECK(stray == 0);
        for (uint32_t c = 0; c < s.c; c++) {
            const double rstd = 1.0 / std::sqrt(double{vf[c]} + eps);
            each_in_chan(s, c, [&](size_t i) {
                const double sc = (std::fabs(xf[i]) + std::fabs(mf[c])) * rstd * std::fabs(gf[c]) +
                                  std::fabs(bf[c]);
                w.add(err_ulps(kref::bits_f32(gy[i]), ry[i], sc, false), std::to_string(i));
            });
        }
    }
    report("batchnorm_infer_f32", w.worst, "ulp of (|x| + |rm|) rstd |gamma| + |beta|");
    INFO(w.first);
    CHECK(w.bad == 0);
}

namespace {

// The BF16 bits of FP32 element bits, rounded to nearest even.
std::vector<uint32_t> round_elems(const std::vector<uint32_t> &f32)
{
    return to_elems(BF16, floats(f32));
}

// Worst error of BF16 results @got against the double @ref in BF16 ulps
// of max(|ref|, @scale(i)).
double bf16_err(const std::vector<uint32_t> &got, const std::vector<double> &ref,
                const std::function<double(size_t)> &scale)
{
    double worst = 0;
    for (size_t i = 0; i < got.size(); i++) {
        worst = std::max(worst, err_ulps(elem_f32(got[i], true), ref[i], scale(i), true));
    }
    return worst;
}

} // namespace

TEST_CASE("tpclib batchnorm_bf16, batchnorm_grad_bf16, batchnorm_infer_bf16: the FP32 kernels "
          "on the widened values bit for bit, BF16 outputs rounded once, within 1 BF16 ulp",
          "[tpclib][cnn][bf16]")
{
    Lib L;
    const float eps = 1e-5f, mom = 0.1f;
    const std::vector<uint32_t> sc = {kref::f32_bits(eps), kref::f32_bits(mom)};
    double wy = 0, wdx = 0, winf = 0;
    uint32_t seed = 600;
    for (const Nchw &s : kBn) {
        CAPTURE(s.n, s.c, s.h, s.w);
        const auto xv = rand_f32(s.size(), seed++, -3, 5, true);
        const auto dyv = rand_f32(s.size(), seed++, -1, 1, true);
        const auto xw = to_elems(F32, from_elems(BF16, xv)), dyw = to_elems(F32, from_elems(BF16, dyv));
        const auto gv = rand_f32(s.c, seed++, 0.5f, 1.5f), bv = rand_f32(s.c, seed++, -1, 1);
        const auto rmv = rand_f32(s.c, seed++, -1, 1), rvv = rand_f32(s.c, seed++, 0.5f, 2);
        const std::array<uint8_t, 2> types = {F32, BF16};
        std::array<std::vector<uint32_t>, 2> y, st, dx, dp, yi;
        for (size_t k = 0; k < 2; k++) {
            const uint8_t dt = types[k];
            const std::string t = k ? "_bf16" : "_f32";
            const Placed x = nchw(L, dt, s, k ? xv : xw, 3, 1), yt = nchw(L, dt, s, {}, 1, 2);
            const Placed gamma = chan(L, gv, s.c), beta = chan(L, bv, s.c);
            const Placed mean = chan(L, {}, s.c), rstd = chan(L, {}, s.c);
            const Placed rm = chan(L, rmv, s.c), rv = chan(L, rvv, s.c);
            REQUIRE(L.launch("batchnorm" + t,
                             {x.t, gamma.t, beta.t, yt.t, mean.t, rstd.t, rm.t, rv.t}, sc,
                             {s.c, 1, 1, 1, 1}) == HPU_CQ_OK);
            size_t stray = 0;
            y[k] = read_back(L, yt, stray);
            for (const Placed *p : {&mean, &rstd, &rm, &rv}) {
                const auto v = read_back(L, *p, stray);
                st[k].insert(st[k].end(), v.begin(), v.end());
            }
            // the backward from these statistics
            const Placed dy = nchw(L, dt, s, k ? dyv : dyw, 0, 1), dxt = nchw(L, dt, s, {}, 1, 1);
            const Placed dg = chan(L, {}, s.c), db = chan(L, {}, s.c);
            REQUIRE(L.launch("batchnorm_grad" + t,
                             {x.t, dy.t, mean.t, rstd.t, gamma.t, dxt.t, dg.t, db.t}, {},
                             {s.c, 1, 1, 1, 1}) == HPU_CQ_OK);
            dx[k] = read_back(L, dxt, stray);
            dp[k] = read_back(L, dg, stray);
            const auto dbv = read_back(L, db, stray);
            dp[k].insert(dp[k].end(), dbv.begin(), dbv.end());
            // inference from the updated running statistics
            const Placed yin = nchw(L, dt, s, {}, 2, 0);
            REQUIRE(L.launch("batchnorm_infer" + t, {x.t, gamma.t, beta.t, rm.t, rv.t, yin.t},
                             {sc[0]}, {1, s.h, s.c, s.n, 1}) == HPU_CQ_OK);
            yi[k] = read_back(L, yin, stray);
            CHECK(stray == 0);
        }
        check_exact(y[1], round_elems(y[0]));
        check_exact(st[1], st[0]);
        check_exact(dx[1], round_elems(dx[0]));
        check_exact(dp[1], dp[0]);
        check_exact(yi[1], round_elems(yi[0]));

        // against the references in double: 1 BF16 ulp of the FP32 bounds' magnitudes
        const auto xf = from_elems(BF16, xv), dyf = from_elems(BF16, dyv), gf = floats(gv),
                   bf = floats(bv);
        std::vector<double> ry(s.size()), rrm(s.c), rrv(s.c), rdx(s.size()), rdg(s.c),
            rdb(s.c), ryi(s.size());
        std::vector<kref::BatchNormStats> bst(s.c);
        kref::batchnorm(s, xf, gf, bf, eps, mom, ry, bst, rrm, rrv);
        auto part = [&](ptrdiff_t k) {
            const ptrdiff_t c = s.c;
            return floats({st[0].begin() + k * c, st[0].begin() + (k + 1) * c});
        };
        const auto mf = part(0), rf = part(1), rmf = part(2), rvf = part(3);
        kref::batchnorm_grad(s, xf, dyf, mf, rf, gf, rdx, rdg, rdb);
        kref::batchnorm_infer(s, xf, gf, bf, rmf, rvf, eps, ryi);
        std::vector<double> amean(s.c), ady(s.c), adx(s.c);
        for (uint32_t c = 0; c < s.c; c++) {
            amean[c] = chan_mean(s, c, [&](size_t i) { return std::fabs(xf[i]); });
            ady[c] = chan_mean(s, c, [&](size_t i) { return std::fabs(dyf[i]); });
            adx[c] = chan_mean(s, c, [&](size_t i) {
                return std::fabs(dyf[i] * (xf[i] - double{mf[c]}) * rf[c]);
            });
        }
        const size_t plane = size_t{s.h} * s.w;
        auto ch = [&](size_t i) { return i / plane % s.c; };
        wy = std::max(wy, bf16_err(y[1], ry, [&](size_t i) {
                          const size_t c = ch(i);
                          return (std::fabs(xf[i]) + amean[c]) * bst[c].rstd * gf[c] + std::fabs(bf[c]);
                      }));
        wdx = std::max(wdx, bf16_err(dx[1], rdx, [&](size_t i) {
                           const size_t c = ch(i);
                           const double xh = std::fabs((xf[i] - double{mf[c]}) * rf[c]);
                           return rf[c] * gf[c] * (std::fabs(dyf[i]) + ady[c] + xh * adx[c]);
                       }));
        winf = std::max(winf, bf16_err(yi[1], ryi, [&](size_t i) {
                            const size_t c = ch(i);
                            const double r = 1.0 / std::sqrt(double{rvf[c]} + eps);
                            return (std::fabs(xf[i]) + std::fabs(rmf[c])) * r * gf[c] + std::fabs(bf[c]);
                        }));
    }
    report("batchnorm_bf16 y", wy, "BF16 ulp of (|x| + mean|x|) rstd |gamma| + |beta|");
    report("batchnorm_grad_bf16 dx", wdx, "BF16 ulp of rstd |gamma| (|dy| + mean|dy| + |xhat| mean|dy xhat|)");
    report("batchnorm_infer_bf16 y", winf, "BF16 ulp of (|x| + |rm|) rstd |gamma| + |beta|");
    CHECK(wy <= 1);
    CHECK(wdx <= 1);
    CHECK(winf <= 1);
}

namespace {

struct AvgGeo {
    const char *name = "";
    Nchw x;
    Window2d g;
    uint32_t oh = 0, ow = 0; // the output's size, when not floor's (ceil_mode)
};

// {n, c, h, w}, {kh, kw, sh, sw, ph, pw}
const AvgGeo kAvg[] = {
    {"2x2, stride 2", {2, 3, 8, 10}, {2, 2, 2, 2}},
    {"3x3, stride 2, pad 1, odd", {1, 2, 7, 9}, {3, 3, 2, 2, 1, 1}},
    {"3x3, stride 1, pad 1: overlapping, W 65", {2, 1, 5, 65}, {3, 3, 1, 1, 1, 1}},
    {"2x3, stride 1x3, pad 1x1, W 130", {1, 2, 6, 130}, {2, 3, 1, 3, 1, 1}},
    {"3x2, stride 2, ceil_mode: last windows past the padded input", {1, 2, 6, 9},
     {3, 2, 2, 2, 1, 0}, 4, 5},
    {"2x3, stride 70 over W 200", {1, 1, 2, 200}, {2, 3, 1, 70, 0, 1}},
    {"global: the window the whole 7x9 plane", {2, 3, 7, 9}, {7, 9, 1, 1}},
    {"a small CNN's: 2x2, stride 2 over 28x28", {4, 8, 28, 28}, {2, 2, 2, 2}},
};

} // namespace

TEST_CASE("tpclib avgpool2d and avgpool2d_grad, FP32 and BF16: exact against the references, "
          "count_include_pad both ways, divisor_override, ceil_mode outputs, global pooling",
          "[tpclib][cnn]")
{
    Lib L;
    const kref::AvgPool modes[] = {{true, 0}, {false, 0}, {false, 3}};
    uint32_t seed = 700;
    for (const auto &[dt, sfx] : {std::pair{F32, "_f32"}, std::pair{BF16, "_bf16"}}) {
        const bool h = dt == BF16;
        const std::string t = sfx;
        for (const AvgGeo &c : kAvg) {
            Nchw ys = c.g.out(c.x, c.x.c);
            if (c.oh) {
                ys.h = c.oh;
                ys.w = c.ow;
            }
            for (const kref::AvgPool &m : modes) {
                CAPTURE(t, c.name, m.include_pad, m.override);
                std::vector<uint32_t> sc = scalars(c.g);
                sc.push_back(m.scalars()[0]);
                sc.push_back(m.scalars()[1]);
                const auto xv = rand_f32(c.x.size(), seed++, -2, 2, h);
                const Placed x = nchw(L, dt, c.x, xv, 1, 2);
                const Placed y = nchw(L, dt, ys, {}, 2, 1);
                REQUIRE(L.launch("avgpool2d" + t, {x.t, y.t}, sc, vec_index(ys)) == HPU_CQ_OK);
                std::vector<float> wy(ys.size());
                kref::avgpool2d(c.x, ys, c.g, m, from_elems(dt, xv), wy);
                size_t stray = 0;
                check_exact(read_back(L, y, stray), to_elems(dt, wy));
                CHECK(stray == 0);

                const auto dyv = rand_f32(ys.size(), seed++, -1, 1, h);
                const Placed dy = nchw(L, dt, ys, dyv, 0, 3);
                const Placed dx = nchw(L, dt, c.x, {}, 3, 1);
                REQUIRE(L.launch("avgpool2d_grad" + t, {dy.t, dx.t}, sc, vec_index(c.x)) ==
                        HPU_CQ_OK);
                std::vector<float> wdx(c.x.size());
                kref::avgpool2d_grad(c.x, ys, c.g, m, from_elems(dt, dyv), wdx);
                check_exact(read_back(L, dx, stray), to_elems(dt, wdx));
                CHECK(stray == 0);
            }
        }
        // avg_pool2d has no dilation: one asserts, as the other window scalars do
        const Nchw xs{1, 1, 4, 4};
        const Placed a = nchw(L, dt, xs, {}), b = nchw(L, dt, xs, {});
        for (const Window2d &g : {Window2d{2, 2, 1, 1, 0, 0, 2, 1}, Window2d{2, 2, 1, 1, 0, 0, 1, 3},
                                  Window2d{2, 0}}) {
            std::vector<uint32_t> sc = scalars(g);
            sc.insert(sc.end(), {1, 0});
            CHECK(L.launch("avgpool2d" + t, {a.t, b.t}, sc, vec_index(xs)) == HPU_CQ_TPC_ASSERT);
            CHECK(L.launch("avgpool2d_grad" + t, {a.t, b.t}, sc, vec_index(xs)) ==
                  HPU_CQ_TPC_ASSERT);
        }
    }
}
