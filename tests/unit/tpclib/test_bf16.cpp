// SPDX-License-Identifier: MIT
//
// The BF16 row kernels of the TPC library on the device model, against
// double references on the widened inputs: softmax and log-softmax with
// their gradients, cross-entropy (FP32 loss, BF16 gradient), sum, mean,
// max and argmax over dimension 0, and the bias gradient; rows of odd
// lengths around the 128-lane BF16 vector, in two dimensions.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "tpc_ref_types.hpp"
#include "tpclib_rig.hpp"

using namespace hpu_test;

namespace {

const uint32_t kSizes[] = {1, 3, 64, 127, 128, 129, 1000};
constexpr uint32_t R1 = 3, R2 = 2; // rows: dims 1 and 2
constexpr uint32_t NEG_INF_BF16 = 0xff80u;
const std::array<uint32_t, 5> kRows = {1, R1, R2, 1, 1};
constexpr uint8_t BF = HPU_TPC_DT_BF16;

// Row @r of BF16 elements @v, widened.
std::vector<float> row_bf16(const std::vector<uint32_t> &v, uint32_t n, uint32_t r)
{
    std::vector<float> x(n);
    for (uint32_t i = 0; i < n; i++) {
        x[i] = kref::bf16_to_f32(static_cast<uint16_t>(v[i + n * r]));
    }
    return x;
}

float bf(uint32_t bits) { return kref::bf16_to_f32(static_cast<uint16_t>(bits)); }

double max_abs(const std::vector<float> &x)
{
    double m = 0;
    for (float v : x) {
        m = std::max(m, std::fabs(double{v}));
    }
    return m;
}

double sum_abs(const std::vector<float> &x)
{
    double s = 0;
    for (float v : x) {
        s += std::fabs(v);
    }
    return s;
}

// |got - exact| over (1 BF16 ulp of the exact value + @sum_bound): the
// measure of a BF16 result of an FP32 sum.
double sum_err(float got, double exact, double sum_bound)
{
    return std::fabs(got - exact) / (ulp_at(exact, true) + sum_bound);
}

// Reports @w as the measured worst error of @name, and checks that no
// element passed its bound.
void check_worst(const std::string &name, const Worst &w, const char *unit)
{
    report(name, w.worst, unit);
    INFO(name << ": worst " << w.worst << " " << unit << "; " << w.bad << " beyond " << w.bound
              << ", the first at " << w.first);
    CHECK(w.bad == 0);
}

// The references' outputs rounded to BF16, as a forward pass stores them.
std::vector<uint32_t> stored_bf16(const std::vector<uint32_t> &xv, uint32_t n, bool log)
{
    std::vector<uint32_t> out(xv.size());
    for (uint32_t r = 0; r < R1 * R2; r++) {
        auto xr = row_bf16(xv, n, r);
        std::vector<double> y(n);
        log ? kref::log_softmax(xr, y) : kref::softmax(xr, y);
        for (uint32_t i = 0; i < n; i++) {
            out[i + n * r] = kref::f32_to_bf16(static_cast<float>(y[i]));
        }
    }
    return out;
}

} // namespace

TEST_CASE("tpclib softmax_bf16 and log_softmax_bf16 within 1 BF16 ulp, with -inf entries",
          "[tpclib][bf16]")
{
    Lib L;
    Worst ws{1}, wl{1};
    for (float range : {8.0f, 40.0f}) {
        for (uint32_t n : kSizes) {
            CAPTURE(range, n);
            auto xv = rand_f32(size_t{n} * R1 * R2, n, -range, range, true);
            for (size_t i = 1; i < xv.size(); i += 5) {
                xv[i] = NEG_INF_BF16; // masked out, as attention masks do
            }
            Tensor x = L.tensor(BF, {n, R1, R2}, xv, {}, NEG_INF_BF16);
            Tensor y = L.tensor(BF, {n, R1, R2}), z = L.tensor(BF, {n, R1, R2});
            REQUIRE(L.launch("softmax_bf16", {x, y}, {}, kRows) == HPU_CQ_OK);
            REQUIRE(L.launch("log_softmax_bf16", {x, z}, {}, kRows) == HPU_CQ_OK);
            auto gy = L.read(y), gz = L.read(z);
            for (uint32_t r = 0; r < R1 * R2; r++) {
                auto xr = row_bf16(xv, n, r);
                std::vector<double> ry(n), rz(n);
                kref::softmax(xr, ry);
                kref::log_softmax(xr, rz);
                const double xmax = max_abs(xr);
                for (uint32_t i = 0; i < n; i++) {
                    ws.add(err_ulps(bf(gy[i + n * r]), ry[i], 0, true), std::to_string(i));
                    wl.add(err_ulps(bf(gz[i + n * r]), rz[i], xmax, true), std::to_string(i));
                }
            }
        }
    }
    check_worst("softmax_bf16", ws, "BF16 ulp");
    check_worst("log_softmax_bf16", wl, "BF16 ulp of max(|y|, max|x|)");
}

TEST_CASE("tpclib softmax_grad_bf16 and log_softmax_grad_bf16 within 1 BF16 ulp of their terms",
          "[tpclib][bf16]")
{
    Lib L;
    Worst ws{1}, wl{1};
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto xv = rand_f32(size_t{n} * R1 * R2, n + 100, -4, 4, true);
        auto dv = rand_f32(size_t{n} * R1 * R2, n + 200, -1, 1, true);
        auto yv = stored_bf16(xv, n, false), lv = stored_bf16(xv, n, true);
        Tensor y = L.tensor(BF, {n, R1, R2}, yv), l = L.tensor(BF, {n, R1, R2}, lv);
        Tensor d = L.tensor(BF, {n, R1, R2}, dv);
        Tensor o1 = L.tensor(BF, {n, R1, R2}), o2 = L.tensor(BF, {n, R1, R2});
        REQUIRE(L.launch("softmax_grad_bf16", {y, d, o1}, {}, kRows) == HPU_CQ_OK);
        REQUIRE(L.launch("log_softmax_grad_bf16", {l, d, o2}, {}, kRows) == HPU_CQ_OK);
        auto g1 = L.read(o1), g2 = L.read(o2);
        for (uint32_t r = 0; r < R1 * R2; r++) {
            auto yr = row_bf16(yv, n, r), lr = row_bf16(lv, n, r), dr = row_bf16(dv, n, r);
            std::vector<double> r1(n), r2(n);
            kref::softmax_grad(yr, dr, r1);
            kref::log_softmax_grad(lr, dr, r2);
            double sydy = 0;
            for (uint32_t i = 0; i < n; i++) {
                sydy += std::fabs(double{yr[i]} * dr[i]);
            }
            const double sdy = sum_abs(dr);
            for (uint32_t i = 0; i < n; i++) {
                // the magnitudes the result is made of, as for FP32
                const double s1 = yr[i] * (std::fabs(dr[i]) + sydy);
                const double s2 = std::fabs(dr[i]) + std::exp(double{lr[i]}) * sdy;
                ws.add(err_ulps(bf(g1[i + n * r]), r1[i], s1, true), std::to_string(i));
                wl.add(err_ulps(bf(g2[i + n * r]), r2[i], s2, true), std::to_string(i));
            }
        }
    }
    check_worst("softmax_grad_bf16", ws, "BF16 ulp of y*(|dy|+sum|y*dy|)");
    check_worst("log_softmax_grad_bf16", wl, "BF16 ulp of |dy|+exp(y)*sum|dy|");
}

TEST_CASE("tpclib cross_entropy_bf16: FP32 loss and BF16 gradient within bounds; a bad label "
          "asserts",
          "[tpclib][bf16]")
{
    Lib L;
    Worst wloss{4}, wgrad{1};
    const float scale = 1.0f / (R1 * R2);
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto xv = rand_f32(size_t{n} * R1 * R2, n + 300, -6, 6, true);
        std::vector<uint32_t> lab(size_t{R1} * R2);
        for (uint32_t r = 0; r < R1 * R2; r++) {
            lab[r] = (r * 37 + n) % n;
        }
        lab[R1 * R2 - 1] = n - 1; // the last class
        Tensor x = L.tensor(BF, {n, R1, R2}, xv, {}, NEG_INF_BF16);
        Tensor t = L.tensor(HPU_TPC_DT_I32, {1, R1, R2}, lab);
        Tensor loss = L.tensor(HPU_TPC_DT_F32, {1, R1, R2}), dx = L.tensor(BF, {n, R1, R2});
        REQUIRE(L.launch("cross_entropy_bf16", {x, t, loss, dx}, {kref::f32_bits(scale)}, kRows) ==
                HPU_CQ_OK);
        auto gl = L.read(loss), gd = L.read(dx);
        for (uint32_t r = 0; r < R1 * R2; r++) {
            auto xr = row_bf16(xv, n, r);
            std::vector<double> rd(n);
            const double rl = kref::cross_entropy(xr, static_cast<int32_t>(lab[r]), scale, rd);
            wloss.add(err_ulps(kref::bits_f32(gl[r]), rl, max_abs(xr), false),
                      "row " + std::to_string(r));
            for (uint32_t i = 0; i < n; i++) {
                // the label's element p - 1 cancels: in ulps of the scale there
                const double sc = i == lab[r] ? scale : 0;
                wgrad.add(err_ulps(bf(gd[i + n * r]), rd[i], sc, true), std::to_string(i));
            }
        }
        lab[1] = n; // outside [0, n): TPC_ASSERT
        Tensor bad = L.tensor(HPU_TPC_DT_I32, {1, R1, R2}, lab);
        CHECK(L.launch("cross_entropy_bf16", {x, bad, loss, dx}, {kref::f32_bits(scale)}, kRows) ==
              HPU_CQ_TPC_ASSERT);
    }
    check_worst("cross_entropy_bf16 loss", wloss, "ulp of max(loss, max|x|)");
    check_worst("cross_entropy_bf16 grad", wgrad, "BF16 ulp (label element: of the scale)");
}

TEST_CASE("tpclib sum, mean, max and argmax of BF16 rows", "[tpclib][bf16]")
{
    Lib L;
    Worst wsum{1}, wmean{1};
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto xv = rand_f32(size_t{n} * R1 * R2, n + 400, -3, 3, true);
        if (n > 3) {
            xv[2] = xv[n - 1]; // a tie in row 0: the first index wins
        }
        Tensor x0 = L.tensor(BF, {n, R1, R2}, xv), xi = L.tensor(BF, {n, R1, R2}, xv, {}, NEG_INF_BF16);
        Tensor s = L.tensor(BF, {1, R1, R2}), m = L.tensor(BF, {1, R1, R2});
        Tensor mx = L.tensor(BF, {1, R1, R2}), am = L.tensor(HPU_TPC_DT_I32, {1, R1, R2});
        REQUIRE(L.launch("reduce_sum_bf16", {x0, s}, {}, kRows) == HPU_CQ_OK);
        REQUIRE(L.launch("reduce_mean_bf16", {x0, m}, {}, kRows) == HPU_CQ_OK);
        REQUIRE(L.launch("reduce_max_bf16", {xi, mx}, {}, kRows) == HPU_CQ_OK);
        REQUIRE(L.launch("argmax_bf16", {xi, am}, {}, kRows) == HPU_CQ_OK);
        auto gs = L.read(s), gm = L.read(m), gx = L.read(mx), ga = L.read(am);
        // each FP32 lane sums 2 ceil(N/128) terms, then the 6 levels of the tree
        const uint32_t vecs = (n + 127) / 128;
        const double nv = 2.0 * vecs + 6;
        for (uint32_t r = 0; r < R1 * R2; r++) {
            auto xr = row_bf16(xv, n, r);
            double sum = 0;
            for (float v : xr) {
                sum += v;
            }
            const double asum = sum_abs(xr);
            wsum.add(sum_err(bf(gs[r]), sum, 2 * nv * 0x1p-24 * asum), "row " + std::to_string(r));
            wmean.add(sum_err(bf(gm[r]), sum / n, 2 * (nv + 1) * 0x1p-24 * asum / n),
                      "row " + std::to_string(r));
            CHECK(gx[r] == kref::f32_to_bf16(*std::max_element(xr.begin(), xr.end())));
            CHECK(static_cast<int32_t>(ga[r]) == kref::argmax(xr));
        }
    }
    check_worst("reduce_sum_bf16", wsum, "of 1 BF16 ulp + 2 (2 ceil(N/128)+6) u sum|x|");
    check_worst("reduce_mean_bf16", wmean, "of 1 BF16 ulp + 2 (2 ceil(N/128)+7) u sum|x|/N");

    // NaN: max is NaN, argmax names the first NaN (in the second vector)
    std::vector<uint32_t> xv = rand_f32(300, 5, -1, 1, true);
    xv[170] = 0x7fc0u;
    xv[250] = 0xffc1u;
    Tensor x = L.tensor(BF, {300}, xv, {}, NEG_INF_BF16);
    Tensor mx = L.tensor(BF, {1}), am = L.tensor(HPU_TPC_DT_I32, {1});
    REQUIRE(L.launch("reduce_max_bf16", {x, mx}, {}, {1, 1, 1, 1, 1}) == HPU_CQ_OK);
    REQUIRE(L.launch("argmax_bf16", {x, am}, {}, {1, 1, 1, 1, 1}) == HPU_CQ_OK);
    CHECK(std::isnan(bf(L.read(mx)[0])));
    CHECK(L.read(am)[0] == 170u);
}

TEST_CASE("tpclib bias_grad_bf16: column sums of dy [C, R] in FP32, rounded once",
          "[tpclib][bf16]")
{
    Lib L;
    Worst w{1};
    for (uint32_t c : kSizes) {
        for (uint32_t rows : {1u, 7u, 128u}) {
            CAPTURE(c, rows);
            auto dv = rand_f32(size_t{c} * rows, c + rows, -1, 1, true);
            Tensor dy = L.tensor(BF, {c, rows}, dv), db = L.tensor(BF, {c});
            REQUIRE(L.launch("bias_grad_bf16", {dy, db}, {}, {(c + 127) / 128, 1, 1, 1, 1}) ==
                    HPU_CQ_OK);
            auto got = L.read(db);
            for (uint32_t i = 0; i < c; i++) {
                double sum = 0, asum = 0;
                for (uint32_t r = 0; r < rows; r++) {
                    sum += bf(dv[i + c * r]);
                    asum += std::fabs(bf(dv[i + c * r]));
                }
                w.add(sum_err(bf(got[i]), sum, rows * 0x1p-24 * asum), std::to_string(i));
            }
        }
    }
    check_worst("bias_grad_bf16", w, "of 1 BF16 ulp + R u sum|dy|");
}

namespace {

const uint32_t kOptSizes[] = {1, 3, 64, 127, 128, 129, 1000, 4099};

uint32_t fb(float f) { return kref::f32_bits(f); }

// AdamW's parameters at step t (bias corrections from the host).
kref::AdamW adamw_at(int t)
{
    kref::AdamW p{1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0, 0};
    p.c1 = static_cast<float>(1.0 / (1.0 - std::pow(0.9, t)));
    p.c2 = static_cast<float>(1.0 / (1.0 - std::pow(0.999, t)));
    return p;
}

std::vector<uint32_t> adamw_scalars(const kref::AdamW &p)
{
    return {fb(p.lr), fb(p.b1), fb(p.b2), fb(p.eps), fb(p.wd), fb(p.c1), fb(p.c2)};
}

// Element bits of 16-bit @v, for comparing with what the rig reads.
std::vector<uint32_t> bits16(const std::vector<uint16_t> &v) { return {v.begin(), v.end()}; }

std::vector<uint32_t> bits32(const std::vector<float> &v)
{
    std::vector<uint32_t> b(v.size());
    std::transform(v.begin(), v.end(), b.begin(), fb);
    return b;
}

std::vector<uint32_t> bf16_copy(const std::vector<float> &v)
{
    std::vector<uint32_t> b(v.size());
    std::transform(v.begin(), v.end(), b.begin(), [](float f) { return uint32_t{kref::f32_to_bf16(f)}; });
    return b;
}

const float kLr = 0.01f, kMu = 0.9f, kWd = 1e-4f, kEps = 1e-10f;

} // namespace

TEST_CASE("tpclib BF16 optimizers with BF16 state (sgd, sgd_momentum plain and Nesterov, adamw, "
          "adagrad): "
          "bit-exact over steps",
          "[tpclib][bf16][opt]")
{
    Lib L;
    for (uint32_t n : kOptSizes) {
        for (int variant = 0; variant < 5; variant++) { // sgd, momentum, nesterov, adamw, adagrad
            CAPTURE(n, variant);
            auto wv = rand_f32(n, n + 1, -1, 1, true);
            std::vector<uint16_t> w(wv.begin(), wv.end()), s1(n, 0), s2(n, 0);
            Tensor tw = L.tensor(BF, {n}, wv), tg = L.tensor(BF, {n});
            Tensor t1 = L.tensor(BF, {n}), t2 = L.tensor(BF, {n});
            for (int step = 1; step <= 3; step++) {
                auto gv = rand_f32(n, n * 7 + step, -2, 2, true);
                std::vector<uint16_t> g(gv.begin(), gv.end());
                L.s.write(tg.d.base, g.data(), 2ull * n);
                if (variant == 0) {
                    REQUIRE(L.launch("sgd_bf16", {tw, tg}, {fb(kLr), fb(kWd)}, ew_index(tw)) ==
                            HPU_CQ_OK);
                    for (uint32_t i = 0; i < n; i++) {
                        kref::sgd_bf16(w[i], g[i], kLr, kWd);
                    }
                } else if (variant < 3) {
                    const bool nest = variant == 2;
                    REQUIRE(L.launch("sgd_momentum_bf16", {tw, tg, t1},
                                     {fb(kLr), fb(kMu), fb(kWd), nest ? 1u : 0u},
                                     ew_index(tw)) == HPU_CQ_OK);
                    for (uint32_t i = 0; i < n; i++) {
                        kref::sgd_momentum_bf16(w[i], g[i], s1[i], kLr, kMu, kWd, nest);
                    }
                } else if (variant == 4) {
                    REQUIRE(L.launch("adagrad_bf16", {tw, tg, t1}, {fb(kLr), fb(kEps), fb(kWd)},
                                     ew_index(tw)) == HPU_CQ_OK);
                    for (uint32_t i = 0; i < n; i++) {
                        kref::adagrad_bf16(w[i], g[i], s1[i], kLr, kEps, kWd);
                    }
                } else {
                    const auto p = adamw_at(step);
                    REQUIRE(L.launch("adamw_bf16", {tw, tg, t1, t2}, adamw_scalars(p),
                                     ew_index(tw)) == HPU_CQ_OK);
                    for (uint32_t i = 0; i < n; i++) {
                        kref::adamw_bf16(w[i], g[i], s1[i], s2[i], p);
                    }
                    CHECK(L.read(t2) == bits16(s2));
                }
                if (variant > 0) {
                    CHECK(L.read(t1) == bits16(s1));
                }
                CHECK(L.read(tw) == bits16(w));
            }
        }
    }
}

TEST_CASE("tpclib BF16 optimizers with FP32 master weights and state: the FP32 step from a BF16 "
          "gradient, the BF16 copy rounded once, bit-exact over steps",
          "[tpclib][bf16][opt]")
{
    Lib L;
    for (uint32_t n : kOptSizes) {
        for (int variant = 0; variant < 5; variant++) { // sgd, momentum, nesterov, adamw, adagrad
            CAPTURE(n, variant);
            auto wv = rand_f32(n, n + 2, -1, 1);
            std::vector<float> w(n), s1(n, 0.0f), s2(n, 0.0f);
            std::transform(wv.begin(), wv.end(), w.begin(), kref::bits_f32);
            Tensor tw = L.tensor(HPU_TPC_DT_F32, {n}, wv), tg = L.tensor(BF, {n});
            Tensor t1 = L.tensor(HPU_TPC_DT_F32, {n}), t2 = L.tensor(HPU_TPC_DT_F32, {n});
            Tensor tw16 = L.tensor(BF, {n});
            for (int step = 1; step <= 3; step++) {
                auto gv = rand_f32(n, n * 11 + step, -2, 2, true);
                std::vector<uint16_t> g16(gv.begin(), gv.end());
                L.s.write(tg.d.base, g16.data(), 2ull * n);
                std::vector<float> g(n);
                std::transform(g16.begin(), g16.end(), g.begin(), kref::bf16_to_f32);
                if (variant == 0) {
                    REQUIRE(L.launch("sgd_master_bf16", {tw, tg, tw16}, {fb(kLr), fb(kWd)},
                                     ew_index(tw)) == HPU_CQ_OK);
                    for (uint32_t i = 0; i < n; i++) {
                        kref::sgd(w[i], g[i], kLr, kWd);
                    }
                } else if (variant < 3) {
                    const bool nest = variant == 2;
                    REQUIRE(L.launch("sgd_momentum_master_bf16", {tw, tg, t1, tw16},
                                     {fb(kLr), fb(kMu), fb(kWd), nest ? 1u : 0u},
                                     ew_index(tw)) == HPU_CQ_OK);
                    for (uint32_t i = 0; i < n; i++) {
                        kref::sgd_momentum(w[i], g[i], s1[i], kLr, kMu, kWd, nest);
                    }
                } else if (variant == 4) {
                    REQUIRE(L.launch("adagrad_master_bf16", {tw, tg, t1, tw16},
                                     {fb(kLr), fb(kEps), fb(kWd)}, ew_index(tw)) == HPU_CQ_OK);
                    for (uint32_t i = 0; i < n; i++) {
                        kref::adagrad(w[i], g[i], s1[i], kLr, kEps, kWd);
                    }
                } else {
                    const auto p = adamw_at(step);
                    REQUIRE(L.launch("adamw_master_bf16", {tw, tg, t1, t2, tw16}, adamw_scalars(p),
                                     ew_index(tw)) == HPU_CQ_OK);
                    for (uint32_t i = 0; i < n; i++) {
                        kref::adamw(w[i], g[i], s1[i], s2[i], p);
                    }
                    CHECK(L.read(t2) == bits32(s2));
                }
                if (variant > 0) {
                    CHECK(L.read(t1) == bits32(s1));
                }
                CHECK(L.read(tw) == bits32(w));
                CHECK(L.read(tw16) == bf16_copy(w));
            }
        }
    }
}

TEST_CASE("tpclib dropout_bf16 drops what dropout_f32 drops for the seed, rounded once; "
          "bias_add_bf16 is add_bf16",
          "[tpclib][bf16]")
{
    const float p = 0.3f, scale = 1.0f / (1.0f - p);
    Lib L;
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto xv = rand_f32(size_t{n} * 3, n, -2, 2, true);
        std::vector<uint32_t> wide(xv.size());
        std::transform(xv.begin(), xv.end(), wide.begin(), [](uint32_t h) { return h << 16; });
        Tensor x = L.tensor(BF, {n, 3}, xv), y = L.tensor(BF, {n, 3});
        Tensor xf = L.tensor(HPU_TPC_DT_F32, {n, 3}, wide), yf = L.tensor(HPU_TPC_DT_F32, {n, 3});
        const std::vector<uint32_t> sc = {fb(p), fb(scale)};
        REQUIRE(L.launch("dropout_bf16", {x, y}, sc, ew_index(y), 0x5eed77) == HPU_CQ_OK);
        REQUIRE(L.launch("dropout_f32", {xf, yf}, sc, ew_index(yf), 0x5eed77) == HPU_CQ_OK);
        auto got = L.read(y), want = L.read(yf);
        size_t bad = 0, kept = 0;
        for (size_t i = 0; i < got.size(); i++) {
            bad += got[i] != kref::f32_to_bf16(kref::bits_f32(want[i]));
            kept += want[i] != 0;
        }
        CHECK(bad == 0);
        CHECK(kept >= got.size() / 2);

        auto bv = rand_f32(n, n + 1, -2, 2, true);
        Tensor b = L.tensor(BF, {n}, bv), o = L.tensor(BF, {n, 3});
        REQUIRE(L.launch("bias_add_bf16", {x, b, o}, {}, ew_index(o)) == HPU_CQ_OK);
        got = L.read(o);
        bad = 0;
        for (size_t i = 0; i < got.size(); i++) {
            bad += got[i] != kref::f32_to_bf16(kref::binop_bf16(kref::BinOp::add, bf(xv[i]), bf(bv[i % n])));
        }
        CHECK(bad == 0);
    }
}

namespace {

// Layer norm's parameters and statistics for the BF16 test.
struct LnCase {
    uint32_t n, rows;
    std::vector<uint32_t> x, gamma, beta, dy; // BF16 bits
    [[nodiscard]] std::vector<float> xf(uint32_t r) const { return row_bf16(x, n, r); }
};

LnCase ln_case(uint32_t n)
{
    const uint32_t rows = R1 * R2;
    return {n, rows, rand_f32(size_t{n} * rows, n + 500, -3, 5, true),
            rand_f32(n, n + 501, 0.5f, 1.5f, true), rand_f32(n, n + 502, -1, 1, true),
            rand_f32(size_t{n} * rows, n + 503, -1, 1, true)};
}

} // namespace

TEST_CASE("tpclib layernorm_bf16, its input gradient and parameter gradients within bounds",
          "[tpclib][bf16]")
{
    Lib L;
    Worst wy{1}, wstat{4}, wdx{1}, wpar{1};
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        const LnCase c = ln_case(n);
        const auto gam = row_bf16(c.gamma, n, 0), bet = row_bf16(c.beta, n, 0);
        Tensor x = L.tensor(BF, {n, R1, R2}, c.x), gamma = L.tensor(BF, {n}, c.gamma);
        Tensor beta = L.tensor(BF, {n}, c.beta), y = L.tensor(BF, {n, R1, R2});
        Tensor mean = L.tensor(HPU_TPC_DT_F32, {1, R1, R2}), rstd = L.tensor(HPU_TPC_DT_F32, {1, R1, R2});
        REQUIRE(L.launch("layernorm_bf16", {x, gamma, beta, y, mean, rstd}, {fb(1e-5f)}, kRows) ==
                HPU_CQ_OK);
        const auto gy = L.read(y), gm = L.read(mean), gr = L.read(rstd);
        for (uint32_t r = 0; r < c.rows; r++) {
            const auto xr = c.xf(r);
            std::vector<double> ry(n);
            const auto st = kref::layernorm(xr, gam, bet, 1e-5f, ry);
            wstat.add(err_ulps(kref::bits_f32(gm[r]), st.mean, max_abs(xr), false), "mean");
            wstat.add(err_ulps(kref::bits_f32(gr[r]), st.rstd, 0, false), "rstd");
            for (uint32_t i = 0; i < n; i++) {
                const double sc = (std::fabs(xr[i]) + std::fabs(st.mean)) * st.rstd * gam[i] +
                                  std::fabs(bet[i]);
                wy.add(err_ulps(bf(gy[i + n * r]), ry[i], sc, true), std::to_string(i));
            }
        }
        // the backward from the device's statistics
        Tensor dy = L.tensor(BF, {n, R1, R2}, c.dy), dx = L.tensor(BF, {n, R1, R2});
        REQUIRE(L.launch("layernorm_grad_bf16", {x, gamma, dy, mean, rstd, dx}, {}, kRows) ==
                HPU_CQ_OK);
        const auto gd = L.read(dx);
        for (uint32_t r = 0; r < c.rows; r++) {
            const auto xr = c.xf(r), dr = row_bf16(c.dy, n, r);
            const double mu = kref::bits_f32(gm[r]), rs = kref::bits_f32(gr[r]);
            std::vector<double> rd(n);
            kref::layernorm_grad(xr, gam, dr, mu, rs, rd);
            const auto sc = layernorm_grad_scales(xr, gam, dr, mu, rs);
            for (uint32_t i = 0; i < n; i++) {
                wdx.add(err_ulps(bf(gd[i + n * r]), rd[i], sc[i], true), std::to_string(i));
            }
        }
        // the parameter gradients over the rows of a 2-D view [n, rows]
        Tensor x2 = L.tensor(BF, {n, c.rows}, c.x), dy2 = L.tensor(BF, {n, c.rows}, c.dy);
        Tensor m2 = L.tensor(HPU_TPC_DT_F32, {1, c.rows}, gm), r2 = L.tensor(HPU_TPC_DT_F32, {1, c.rows}, gr);
        Tensor dg = L.tensor(BF, {n}), db = L.tensor(BF, {n});
        REQUIRE(L.launch("layernorm_grad_params_bf16", {x2, dy2, m2, r2, dg, db}, {},
                         {(n + 127) / 128, 1, 1, 1, 1}) == HPU_CQ_OK);
        const auto gg = L.read(dg), gb = L.read(db);
        for (uint32_t i = 0; i < n; i++) {
            double sg = 0, sb = 0, ag = 0, ab = 0;
            for (uint32_t r = 0; r < c.rows; r++) {
                const double d = bf(c.dy[i + n * r]);
                const double xh = (bf(c.x[i + n * r]) - kref::bits_f32(gm[r])) * kref::bits_f32(gr[r]);
                sg += d * xh;
                ag += std::fabs(d * xh);
                sb += d;
                ab += std::fabs(d);
            }
            wpar.add(sum_err(bf(gg[i]), sg, (c.rows + 2) * 0x1p-24 * ag), "dgamma " + std::to_string(i));
            wpar.add(sum_err(bf(gb[i]), sb, c.rows * 0x1p-24 * ab), "dbeta " + std::to_string(i));
        }
    }
    check_worst("layernorm_bf16 y", wy, "BF16 ulp of (|x|+|mean|)*rstd*gamma+|beta|");
    check_worst("layernorm_bf16 mean, rstd", wstat, "ulp (mean: of max|x|)");
    check_worst("layernorm_grad_bf16", wdx, "BF16 ulp of the terms' magnitudes");
    check_worst("layernorm_grad_params_bf16", wpar, "of 1 BF16 ulp + the sum bound");
}
