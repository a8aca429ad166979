// SPDX-License-Identifier: MIT
//
// Row kernels of the TPC library on the device model: softmax and
// log-softmax with their gradients, cross-entropy from logits with integer
// labels, sum, mean, max and argmax over dimension 0, and the bias
// gradient (column sum), over odd row lengths and rows in two dimensions.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "tpclib_rig.hpp"

using namespace hpu_test;

namespace {

const uint32_t kSizes[] = {1, 3, 63, 64, 65, 1000};
constexpr uint32_t R1 = 3, R2 = 2; // rows: dims 1 and 2
constexpr uint32_t NEG_INF = 0xff800000u;
const std::array<uint32_t, 5> kRows = {1, R1, R2, 1, 1};

std::vector<float> row_of(const std::vector<uint32_t> &v, uint32_t n, uint32_t r)
{
    std::vector<float> x(n);
    for (uint32_t i = 0; i < n; i++) {
        x[i] = kref::bits_f32(v[i + n * r]);
    }
    return x;
}

} // namespace

TEST_CASE("tpclib softmax_f32 and log_softmax_f32 within bounds", "[tpclib][rows]")
{
    Lib L;
    Worst ws{16}, wl{4};
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto xv = rand_f32(size_t{n} * R1 * R2, n, -8, 8);
        Tensor x = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}, xv, {}, NEG_INF);
        Tensor y = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}), z = L.tensor(HPU_TPC_DT_F32, {n, R1, R2});
        REQUIRE(L.launch("softmax_f32", {x, y}, {}, kRows) == HPU_CQ_OK);
        REQUIRE(L.launch("log_softmax_f32", {x, z}, {}, kRows) == HPU_CQ_OK);
        auto gy = L.read(y), gz = L.read(z);
        for (uint32_t r = 0; r < R1 * R2; r++) {
            auto xr = row_of(xv, n, r);
            std::vector<double> ry(n), rz(n);
            kref::softmax(xr, ry);
            kref::log_softmax(xr, rz);
            double xmax = 0;
            for (float v : xr) {
                xmax = std::max(xmax, std::fabs(double{v}));
            }
            for (uint32_t i = 0; i < n; i++) {
                ws.add(err_ulps(kref::bits_f32(gy[i + n * r]), ry[i], 0, false), std::to_string(i));
                wl.add(err_ulps(kref::bits_f32(gz[i + n * r]), rz[i], xmax, false),
                       std::to_string(i));
            }
        }
    }
    report("softmax_f32", ws.worst, "ulp");
    report("log_softmax_f32", wl.worst, "ulp of max(|y|, max|x|)");
    INFO("softmax worst " << ws.worst << " log_softmax worst " << wl.worst);
    CHECK(ws.bad == 0);
    CHECK(wl.bad == 0);
}

TEST_CASE("tpclib softmax_grad_f32 and log_softmax_grad_f32 within bounds", "[tpclib][rows]")
{
    Lib L;
    Worst ws{8}, wl{8};
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto xv = rand_f32(size_t{n} * R1 * R2, n + 100, -4, 4);
        auto dv = rand_f32(size_t{n} * R1 * R2, n + 200, -1, 1);
        // y from the references, rounded to FP32, as a forward pass stores it
        std::vector<uint32_t> yv(xv.size()), lv(xv.size());
        for (uint32_t r = 0; r < R1 * R2; r++) {
            auto xr = row_of(xv, n, r);
            std::vector<double> ry(n), rl(n);
            kref::softmax(xr, ry);
            kref::log_softmax(xr, rl);
            for (uint32_t i = 0; i < n; i++) {
                yv[i + n * r] = kref::f32_bits(static_cast<float>(ry[i]));
                lv[i + n * r] = kref::f32_bits(static_cast<float>(rl[i]));
            }
        }
        Tensor y = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}, yv);
        Tensor l = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}, lv);
        Tensor d = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}, dv);
        Tensor o1 = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}), o2 = L.tensor(HPU_TPC_DT_F32, {n, R1, R2});
        REQUIRE(L.launch("softmax_grad_f32", {y, d, o1}, {}, kRows) == HPU_CQ_OK);
        REQUIRE(L.launch("log_softmax_grad_f32", {l, d, o2}, {}, kRows) == HPU_CQ_OK);
        auto g1 = L.read(o1), g2 = L.read(o2);
        for (uint32_t r = 0; r < R1 * R2; r++) {
            auto yr = row_of(yv, n, r), lr = row_of(lv, n, r), dr = row_of(dv, n, r);
            std::vector<double> r1(n), r2(n);
            kref::softmax_grad(yr, dr, r1);
            kref::log_softmax_grad(lr, dr, r2);
            double sdy = 0, sydy = 0;
            for (uint32_t i = 0; i < n; i++) {
                sdy += std::fabs(dr[i]);
                sydy += std::fabs(double{yr[i]} * dr[i]);
            }
            for (uint32_t i = 0; i < n; i++) {
                // scale: the magnitudes the result is made of
                double s1 = yr[i] * (std::fabs(dr[i]) + sydy);
                double s2 = std::fabs(dr[i]) + std::exp(double{lr[i]}) * sdy;
                ws.add(err_ulps(kref::bits_f32(g1[i + n * r]), r1[i], s1, false), std::to_string(i));
                wl.add(err_ulps(kref::bits_f32(g2[i + n * r]), r2[i], s2, false), std::to_string(i));
            }
        }
    }
    report("softmax_grad_f32", ws.worst, "ulp of y*(|dy|+sum|y*dy|)");
    report("log_softmax_grad_f32", wl.worst, "ulp of |dy|+exp(y)*sum|dy|");
    INFO("softmax_grad worst " << ws.worst << " log_softmax_grad worst " << wl.worst);
    CHECK(ws.bad == 0);
    CHECK(wl.bad == 0);
}

TEST_CASE("tpclib cross_entropy_f32: loss per row and gradient within bounds; a bad label "
          "asserts",
          "[tpclib][rows]")
{
    Lib L;
    Worst wloss{4}, wgrad{16};
    const float scale = 1.0f / (R1 * R2);
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto xv = rand_f32(size_t{n} * R1 * R2, n + 300, -6, 6);
        std::vector<uint32_t> lab(size_t{R1} * R2);
        for (uint32_t r = 0; r < R1 * R2; r++) {
            lab[r] = (r * 37 + n) % n;
        }
        lab[R1 * R2 - 1] = n - 1; // the last class
        Tensor x = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}, xv, {}, NEG_INF);
        Tensor t = L.tensor(HPU_TPC_DT_I32, {1, R1, R2}, lab);
        Tensor loss = L.tensor(HPU_TPC_DT_F32, {1, R1, R2});
        Tensor dx = L.tensor(HPU_TPC_DT_F32, {n, R1, R2});
        REQUIRE(L.launch("cross_entropy_f32", {x, t, loss, dx}, {kref::f32_bits(scale)}, kRows) ==
                HPU_CQ_OK);
        auto gl = L.read(loss), gd = L.read(dx);
        for (uint32_t r = 0; r < R1 * R2; r++) {
            auto xr = row_of(xv, n, r);
            std::vector<double> rd(n);
            double rl = kref::cross_entropy(xr, static_cast<int32_t>(lab[r]), scale, rd);
            double xmax = 0;
            for (float v : xr) {
                xmax = std::max(xmax, std::fabs(double{v}));
            }
            wloss.add(err_ulps(kref::bits_f32(gl[r]), rl, xmax, false), "row " + std::to_string(r));
            for (uint32_t i = 0; i < n; i++) {
                // the label's element p - 1 cancels: in ulps of the scale there
                const double sc = i == lab[r] ? scale : 0;
                wgrad.add(err_ulps(kref::bits_f32(gd[i + n * r]), rd[i], sc, false),
                          std::to_string(i));
            }
        }
        // a label outside [0, n) stops the launch with TPC_ASSERT
        lab[1] = n;
        Tensor bad = L.tensor(HPU_TPC_DT_I32, {1, R1, R2}, lab);
        CHECK(L.launch("cross_entropy_f32", {x, bad, loss, dx}, {kref::f32_bits(scale)}, kRows) ==
              HPU_CQ_TPC_ASSERT);
    }
    report("cross_entropy_f32 loss", wloss.worst, "ulp of max(loss, max|x|)");
    report("cross_entropy_f32 grad", wgrad.worst, "ulp (label element: of the scale)");
    INFO("loss worst " << wloss.worst << " grad worst " << wgrad.worst);
    CHECK(wloss.bad == 0);
    CHECK(wgrad.bad == 0);
}

TEST_CASE("tpclib sum, mean, max, argmax over dimension 0", "[tpclib][rows]")
{
    Lib L;
    Worst wsum{2}, wmean{2};
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto xv = rand_f32(size_t{n} * R1 * R2, n + 400, -3, 3);
        if (n > 3) {
            xv[2] = xv[n - 1]; // a tie in row 0: the first index wins
        }
        Tensor x0 = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}, xv);
        Tensor xi = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}, xv, {}, NEG_INF);
        Tensor s = L.tensor(HPU_TPC_DT_F32, {1, R1, R2}), m = L.tensor(HPU_TPC_DT_F32, {1, R1, R2});
        Tensor mx = L.tensor(HPU_TPC_DT_F32, {1, R1, R2}), am = L.tensor(HPU_TPC_DT_I32, {1, R1, R2});
        REQUIRE(L.launch("reduce_sum_f32", {x0, s}, {}, kRows) == HPU_CQ_OK);
        REQUIRE(L.launch("reduce_mean_f32", {x0, m}, {}, kRows) == HPU_CQ_OK);
        REQUIRE(L.launch("reduce_max_f32", {xi, mx}, {}, kRows) == HPU_CQ_OK);
        REQUIRE(L.launch("argmax_f32", {xi, am}, {}, kRows) == HPU_CQ_OK);
        auto gs = L.read(s), gm = L.read(m), gx = L.read(mx), ga = L.read(am);
        for (uint32_t r = 0; r < R1 * R2; r++) {
            auto xr = row_of(xv, n, r);
            double sum = 0, asum = 0;
            float big = -INFINITY;
            for (float v : xr) {
                sum += v;
                asum += std::fabs(v);
                big = std::max(big, v);
            }
            // the bound of a blocked sum: (vectors per row + 6 tree levels) u sum|x|
            const uint32_t vecs = (n + 63) / 64;
            const double nv = vecs + 6.0;
            wsum.add(std::fabs(kref::bits_f32(gs[r]) - sum) / (nv * 0x1p-24 * asum),
                     "row " + std::to_string(r));
            wmean.add(std::fabs(kref::bits_f32(gm[r]) - sum / n) / ((nv + 1) * 0x1p-24 * asum / n),
                      "row " + std::to_string(r));
            CHECK(gx[r] == kref::f32_bits(big));
            CHECK(static_cast<int32_t>(ga[r]) == kref::argmax(xr));
        }
    }
    report("reduce_sum_f32", wsum.worst, "of (ceil(N/64)+6) u sum|x|");
    report("reduce_mean_f32", wmean.worst, "of (ceil(N/64)+7) u sum|x|/N");
    CHECK(wsum.bad == 0);
    CHECK(wmean.bad == 0);

    // NaN: max is NaN, argmax names the first NaN
    std::vector<uint32_t> xv = rand_f32(200, 5, -1, 1);
    xv[70] = 0x7fc00000u;
    xv[150] = 0x7fc00000u;
    Tensor x = L.tensor(HPU_TPC_DT_F32, {200}, xv, {}, NEG_INF);
    Tensor mx = L.tensor(HPU_TPC_DT_F32, {1}), am = L.tensor(HPU_TPC_DT_I32, {1});
    REQUIRE(L.launch("reduce_max_f32", {x, mx}, {}, {1, 1, 1, 1, 1}) == HPU_CQ_OK);
    REQUIRE(L.launch("argmax_f32", {x, am}, {}, {1, 1, 1, 1, 1}) == HPU_CQ_OK);
    CHECK(std::isnan(kref::bits_f32(L.read(mx)[0])));
    CHECK(L.read(am)[0] == 70u);
}

TEST_CASE("tpclib bias_grad_f32: column sums of dy [C, R]", "[tpclib][rows]")
{
    Lib L;
    Worst w{1};
    for (uint32_t c : kSizes) {
        for (uint32_t rows : {1u, 7u, 128u}) {
            CAPTURE(c, rows);
            auto dv = rand_f32(size_t{c} * rows, c + rows, -1, 1);
            Tensor dy = L.tensor(HPU_TPC_DT_F32, {c, rows}, dv), db = L.tensor(HPU_TPC_DT_F32, {c});
            REQUIRE(L.launch("bias_grad_f32", {dy, db}, {}, {(c + 63) / 64, 1, 1, 1, 1}) ==
                    HPU_CQ_OK);
            auto got = L.read(db);
            for (uint32_t i = 0; i < c; i++) {
                double sum = 0, asum = 0;
                for (uint32_t r = 0; r < rows; r++) {
                    sum += kref::bits_f32(dv[i + c * r]);
                    asum += std::fabs(kref::bits_f32(dv[i + c * r]));
                }
                w.add(std::fabs(kref::bits_f32(got[i]) - sum) / (rows * 0x1p-24 * asum + 1e-300),
                      std::to_string(i));
            }
        }
    }
    report("bias_grad_f32", w.worst, "of R u sum|dy|");
    CHECK(w.bad == 0);
}

TEST_CASE("tpclib layer norm forward, input gradient and parameter gradients", "[tpclib][rows]")
{
    Lib L;
    Worst wy{8}, wstat{4}, wdx{16}, wpar{1};
    const float eps = 1e-5f;
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        const uint32_t rows = R1 * R2;
        auto xv = rand_f32(size_t{n} * rows, n + 500, -3, 5);
        auto gv = rand_f32(n, n + 501, 0.5f, 1.5f), bv = rand_f32(n, n + 502, -1, 1);
        auto dv = rand_f32(size_t{n} * rows, n + 503, -1, 1);
        Tensor x = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}, xv);
        Tensor gamma = L.tensor(HPU_TPC_DT_F32, {n}, gv), beta = L.tensor(HPU_TPC_DT_F32, {n}, bv);
        Tensor y = L.tensor(HPU_TPC_DT_F32, {n, R1, R2});
        Tensor mean = L.tensor(HPU_TPC_DT_F32, {1, R1, R2}), rstd = L.tensor(HPU_TPC_DT_F32, {1, R1, R2});
        REQUIRE(L.launch("layernorm_f32", {x, gamma, beta, y, mean, rstd}, {kref::f32_bits(eps)},
                         kRows) == HPU_CQ_OK);
        auto gy = L.read(y), gm = L.read(mean), gr = L.read(rstd);
        auto gam = row_of(gv, n, 0), bet = row_of(bv, n, 0);
        // the backward runs from the reference's statistics, rounded to FP32
        std::vector<uint32_t> sm(rows), sr(rows);
        for (uint32_t r = 0; r < rows; r++) {
            auto xr = row_of(xv, n, r);
            std::vector<double> ry(n);
            auto st = kref::layernorm(xr, gam, bet, eps, ry);
            sm[r] = kref::f32_bits(static_cast<float>(st.mean));
            sr[r] = kref::f32_bits(static_cast<float>(st.rstd));
            double xmax = 0;
            for (float v : xr) {
                xmax = std::max(xmax, std::fabs(double{v}));
            }
            wstat.add(err_ulps(kref::bits_f32(gm[r]), st.mean, xmax, false), "mean");
            wstat.add(err_ulps(kref::bits_f32(gr[r]), st.rstd, 0, false), "rstd");
            for (uint32_t i = 0; i < n; i++) {
                // x - mean rounds at the magnitude of x and mean
                double sc = (std::fabs(xr[i]) + std::fabs(st.mean)) * st.rstd * gam[i] +
                            std::fabs(bet[i]);
                wy.add(err_ulps(kref::bits_f32(gy[i + n * r]), ry[i], sc, false), std::to_string(i));
            }
        }
        Tensor dy = L.tensor(HPU_TPC_DT_F32, {n, R1, R2}, dv);
        Tensor m2 = L.tensor(HPU_TPC_DT_F32, {1, R1, R2}, sm), r2 = L.tensor(HPU_TPC_DT_F32, {1, R1, R2}, sr);
        Tensor dx = L.tensor(HPU_TPC_DT_F32, {n, R1, R2});
        REQUIRE(L.launch("layernorm_grad_f32", {x, gamma, dy, m2, r2, dx}, {}, kRows) == HPU_CQ_OK);
        auto gd = L.read(dx);
        for (uint32_t r = 0; r < rows; r++) {
            auto xr = row_of(xv, n, r), dr = row_of(dv, n, r);
            const double mu = kref::bits_f32(sm[r]), rs = kref::bits_f32(sr[r]);
            std::vector<double> rd(n);
            kref::layernorm_grad(xr, gam, dr, mu, rs, rd);
            const auto sc = layernorm_grad_scales(xr, gam, dr, mu, rs);
            for (uint32_t i = 0; i < n; i++) {
                wdx.add(err_ulps(kref::bits_f32(gd[i + n * r]), rd[i], sc[i], false), std::to_string(i));
            }
        }
        // parameter gradients over the rows of a 2-D view [n, rows]
        Tensor x2 = L.tensor(HPU_TPC_DT_F32, {n, rows}, xv), dy2 = L.tensor(HPU_TPC_DT_F32, {n, rows}, dv);
        Tensor m3 = L.tensor(HPU_TPC_DT_F32, {1, rows}, sm), r3 = L.tensor(HPU_TPC_DT_F32, {1, rows}, sr);
        Tensor dg = L.tensor(HPU_TPC_DT_F32, {n}), db = L.tensor(HPU_TPC_DT_F32, {n});
        REQUIRE(L.launch("layernorm_grad_params_f32", {x2, dy2, m3, r3, dg, db}, {},
                         {(n + 63) / 64, 1, 1, 1, 1}) == HPU_CQ_OK);
        auto gg = L.read(dg), gb = L.read(db);
        for (uint32_t i = 0; i < n; i++) {
            double sg = 0, sb = 0, ag = 0, ab = 0;
            for (uint32_t r = 0; r < rows; r++) {
                const double mu = kref::bits_f32(sm[r]), rs = kref::bits_f32(sr[r]);
                double d = kref::bits_f32(dv[i + n * r]);
                double xh = (kref::bits_f32(xv[i + n * r]) - mu) * rs;
                sg += d * xh;
                ag += std::fabs(d * xh);
                sb += d;
                ab += std::fabs(d);
            }
            // (rows + 2) u of the sum of magnitudes: each term rounds twice more
            wpar.add(std::fabs(kref::bits_f32(gg[i]) - sg) / ((rows + 2) * 0x1p-24 * ag + 1e-300),
                     "dgamma " + std::to_string(i));
            wpar.add(std::fabs(kref::bits_f32(gb[i]) - sb) / (rows * 0x1p-24 * ab + 1e-300),
                     "dbeta " + std::to_string(i));
        }
    }
    report("layernorm_f32 y", wy.worst, "ulp of (|x|+|mean|)*rstd*gamma+|beta|");
    report("layernorm_f32 mean, rstd", wstat.worst, "ulp (mean: of max|x|)");
    report("layernorm_grad_f32", wdx.worst, "ulp of the terms' magnitudes");
    report("layernorm_grad_params_f32", wpar.worst, "of the sum bound");
    INFO("y " << wy.worst << " stats " << wstat.worst << " dx " << wdx.worst << " params "
              << wpar.worst);
    CHECK(wy.bad == 0);
    CHECK(wstat.bad == 0);
    CHECK(wdx.bad == 0);
    CHECK(wpar.bad == 0);
}
