// SPDX-License-Identifier: MIT
//
// Fused optimizers of the TPC library on the device model, several steps
// each, bit-exact against the references' FP32 operation order: SGD,
// SGD with momentum and Nesterov, AdamW with host-computed bias
// corrections, Adagrad.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>

#include <catch2/catch_test_macros.hpp>

#include "tpclib_rig.hpp"

using namespace hpu_test;

namespace {

const uint32_t kSizes[] = {1, 3, 63, 64, 65, 1000, 4099};

uint32_t fb(float f) { return kref::f32_bits(f); }

size_t mismatches(const std::vector<uint32_t> &got, const std::vector<float> &want)
{
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); i++) {
        bad += got[i] != fb(want[i]);
    }
    return bad;
}

} // namespace

TEST_CASE("tpclib sgd_f32 and sgd_momentum_f32 (plain and Nesterov): bit-exact over steps",
          "[tpclib][opt]")
{
    Lib L;
    const float lr = 0.01f, mu = 0.9f, wd = 1e-4f;
    for (uint32_t n : kSizes) {
        for (int variant = 0; variant < 3; variant++) { // sgd, momentum, nesterov
            CAPTURE(n, variant);
            auto wv = rand_f32(n, n + 1, -1, 1);
            std::vector<float> w = floats(wv), buf(n, 0.0f);
            Tensor tw = L.tensor(HPU_TPC_DT_F32, {n}, wv);
            Tensor tg = L.tensor(HPU_TPC_DT_F32, {n});
            Tensor tb = L.tensor(HPU_TPC_DT_F32, {n});
            for (uint32_t step = 0; step < 3; step++) {
                auto gv = rand_f32(n, n * 7 + step, -2, 2);
                L.s.write(tg.d.base, gv.data(), 4ull * n);
                auto g = floats(gv);
                if (variant == 0) {
                    REQUIRE(L.launch("sgd_f32", {tw, tg}, {fb(lr), fb(wd)}, ew_index(tw)) ==
                            HPU_CQ_OK);
                    for (uint32_t i = 0; i < n; i++) {
                        kref::sgd(w[i], g[i], lr, wd);
                    }
                } else {
                    const bool nest = variant == 2;
                    REQUIRE(L.launch("sgd_momentum_f32", {tw, tg, tb},
                                     {fb(lr), fb(mu), fb(wd), nest ? 1u : 0u},
                                     ew_index(tw)) == HPU_CQ_OK);
                    for (uint32_t i = 0; i < n; i++) {
                        kref::sgd_momentum(w[i], g[i], buf[i], lr, mu, wd, nest);
                    }
                    CHECK(mismatches(L.read(tb), buf) == 0);
                }
                CHECK(mismatches(L.read(tw), w) == 0);
            }
        }
    }
}

TEST_CASE("tpclib adamw_f32: bit-exact over steps with bias corrections", "[tpclib][opt]")
{
    Lib L;
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto wv = rand_f32(n, n + 11, -1, 1);
        std::vector<float> w = floats(wv), m(n, 0.0f), v(n, 0.0f);
        Tensor tw = L.tensor(HPU_TPC_DT_F32, {n}, wv), tg = L.tensor(HPU_TPC_DT_F32, {n});
        Tensor tm = L.tensor(HPU_TPC_DT_F32, {n}), tv = L.tensor(HPU_TPC_DT_F32, {n});
        kref::AdamW p{1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0, 0};
        for (int t = 1; t <= 4; t++) {
            p.c1 = static_cast<float>(1.0 / (1.0 - std::pow(0.9, t)));
            p.c2 = static_cast<float>(1.0 / (1.0 - std::pow(0.999, t)));
            auto gv = rand_f32(n, n * 13 + t, -1, 1);
            L.s.write(tg.d.base, gv.data(), 4ull * n);
            auto g = floats(gv);
            REQUIRE(L.launch("adamw_f32", {tw, tg, tm, tv},
                             {fb(p.lr), fb(p.b1), fb(p.b2), fb(p.eps), fb(p.wd), fb(p.c1), fb(p.c2)},
                             ew_index(tw)) == HPU_CQ_OK);
            for (uint32_t i = 0; i < n; i++) {
                kref::adamw(w[i], g[i], m[i], v[i], p);
            }
            CHECK(mismatches(L.read(tm), m) == 0);
            CHECK(mismatches(L.read(tv), v) == 0);
            CHECK(mismatches(L.read(tw), w) == 0);
        }
    }
}

TEST_CASE("tpclib adagrad_f32: bit-exact over steps", "[tpclib][opt]")
{
    Lib L;
    const float lr = 0.05f, eps = 1e-10f, wd = 0.001f;
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        auto wv = rand_f32(n, n + 21, -1, 1);
        std::vector<float> w = floats(wv), sum(n, 0.0f);
        Tensor tw = L.tensor(HPU_TPC_DT_F32, {n}, wv), tg = L.tensor(HPU_TPC_DT_F32, {n});
        Tensor ts = L.tensor(HPU_TPC_DT_F32, {n});
        for (int t = 0; t < 3; t++) {
            auto gv = rand_f32(n, n * 17 + t, -1, 1);
            L.s.write(tg.d.base, gv.data(), 4ull * n);
            auto g = floats(gv);
            REQUIRE(L.launch("adagrad_f32", {tw, tg, ts}, {fb(lr), fb(eps), fb(wd)}, ew_index(tw)) ==
                    HPU_CQ_OK);
            for (uint32_t i = 0; i < n; i++) {
                kref::adagrad(w[i], g[i], sum[i], lr, eps, wd);
            }
            CHECK(mismatches(L.read(ts), sum) == 0);
            CHECK(mismatches(L.read(tw), w) == 0);
        }
    }
}

TEST_CASE("tpclib LAMB in three launches: moments and update exact, norms and step within "
          "bounds",
          "[tpclib][opt]")
{
    Lib L;
    Worst wnorm{1}, wstep{4};
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        const uint32_t parts = (n + 255) / 256;
        auto wv = rand_f32(n, n + 31, -1, 1);
        std::vector<float> w = floats(wv), m(n, 0.0f), v(n, 0.0f);
        Tensor tw = L.tensor(HPU_TPC_DT_F32, {n}, wv), tg = L.tensor(HPU_TPC_DT_F32, {n});
        Tensor tm = L.tensor(HPU_TPC_DT_F32, {n}), tv = L.tensor(HPU_TPC_DT_F32, {n});
        Tensor tu = L.tensor(HPU_TPC_DT_F32, {n}), tp = L.tensor(HPU_TPC_DT_F32, {parts, 2});
        Tensor tn = L.tensor(HPU_TPC_DT_F32, {1, 2});
        const float lr = 0.01f;
        kref::Lamb p{0.9f, 0.999f, 1e-6f, 0.01f, 0, 0};
        for (int t = 1; t <= 3; t++) {
            p.c1 = static_cast<float>(1.0 / (1.0 - std::pow(0.9, t)));
            p.c2 = static_cast<float>(1.0 / (1.0 - std::pow(0.999, t)));
            auto gv = rand_f32(n, n * 19 + t, -1, 1);
            L.s.write(tg.d.base, gv.data(), 4ull * n);
            auto g = floats(gv);
            REQUIRE(L.launch("lamb_update_f32", {tw, tg, tm, tv, tu, tp},
                             {fb(p.b1), fb(p.b2), fb(p.eps), fb(p.wd), fb(p.c1), fb(p.c2)},
                             {parts, 1, 1, 1, 1}) == HPU_CQ_OK);
            REQUIRE(L.launch("reduce_sum_f32", {tp, tn}, {}, {1, 2, 1, 1, 1}) == HPU_CQ_OK);
            REQUIRE(L.launch("lamb_apply_f32", {tw, tu, tn}, {fb(lr)}, {parts, 1, 1, 1, 1}) ==
                    HPU_CQ_OK);
            std::vector<float> u(n);
            double wsq = 0, usq = 0;
            for (uint32_t i = 0; i < n; i++) {
                u[i] = kref::lamb_update(w[i], g[i], m[i], v[i], p);
                wsq += double{w[i]} * w[i];
                usq += double{u[i]} * u[i];
            }
            CHECK(mismatches(L.read(tm), m) == 0);
            CHECK(mismatches(L.read(tv), v) == 0);
            CHECK(mismatches(L.read(tu), u) == 0);
            auto norms = L.read(tn);
            // squares round once, then lane blocks, trees and the partials' sum
            const uint32_t blocks = (parts + 63) / 64;
            const double c = blocks + 2 * 6 + 4 + 1.0;
            wnorm.add(std::fabs(kref::bits_f32(norms[0]) - wsq) / (c * 0x1p-24 * wsq), "wsq");
            wnorm.add(std::fabs(kref::bits_f32(norms[1]) - usq) / (c * 0x1p-24 * usq), "usq");
            const double r = kref::lamb_ratio(wsq, usq);
            auto gw = L.read(tw);
            for (uint32_t i = 0; i < n; i++) {
                double want = w[i] - lr * r * u[i];
                wstep.add(err_ulps(kref::bits_f32(gw[i]), want, std::fabs(w[i]), false),
                          std::to_string(i));
                w[i] = kref::bits_f32(gw[i]); // continue from the device's weights
            }
        }
    }
    report("lamb norms", wnorm.worst, "of the sum bound");
    report("lamb_apply_f32 w", wstep.worst, "ulp of max(|w'|, |w|)");
    INFO("norms " << wnorm.worst << " step " << wstep.worst);
    CHECK(wnorm.bad == 0);
    CHECK(wstep.bad == 0);
}

TEST_CASE("tpclib LAMB on BF16 (lamb_update_bf16, lamb_apply_bf16): the FP32 kernels on the "
          "widened state bit for bit, BF16 tensors rounded once; the step within 1 BF16 ulp",
          "[tpclib][opt][bf16]")
{
    Lib L;
    const uint8_t F32 = HPU_TPC_DT_F32, BF16 = HPU_TPC_DT_BF16;
    double worst = 0;
    auto widen = [](const std::vector<uint32_t> &h) {
        std::vector<uint32_t> f(h.size());
        for (size_t i = 0; i < h.size(); i++) {
            f[i] = fb(kref::bf16_to_f32(static_cast<uint16_t>(h[i])));
        }
        return f;
    };
    auto narrow = [](const std::vector<uint32_t> &f) {
        std::vector<uint32_t> h(f.size());
        for (size_t i = 0; i < f.size(); i++) {
            h[i] = kref::f32_to_bf16(kref::bits_f32(f[i]));
        }
        return h;
    };
    for (uint32_t n : kSizes) {
        CAPTURE(n);
        const uint32_t parts = (n + 255) / 256;
        const std::array<uint32_t, 5> idx = {parts, 1, 1, 1, 1};
        auto w16 = rand_f32(n, n + 41, -1, 1, true);
        std::vector<uint32_t> m16(n, 0), v16(n, 0);
        Tensor bw = L.tensor(BF16, {n}, w16), bg = L.tensor(BF16, {n});
        Tensor bm = L.tensor(BF16, {n}), bv = L.tensor(BF16, {n});
        Tensor fw = L.tensor(F32, {n}), fg = L.tensor(F32, {n}), fm = L.tensor(F32, {n}),
               fv = L.tensor(F32, {n});
        std::array<Tensor, 2> tu = {L.tensor(F32, {n}), L.tensor(F32, {n})};
        std::array<Tensor, 2> tp = {L.tensor(F32, {parts, 2}), L.tensor(F32, {parts, 2})};
        std::array<Tensor, 2> tn = {L.tensor(F32, {1, 2}), L.tensor(F32, {1, 2})};
        const float lr = 0.05f;
        kref::Lamb p{0.9f, 0.999f, 1e-6f, 0.01f, 0, 0};
        for (int t = 1; t <= 3; t++) {
            p.c1 = static_cast<float>(1.0 / (1.0 - std::pow(0.9, t)));
            p.c2 = static_cast<float>(1.0 / (1.0 - std::pow(0.999, t)));
            const std::vector<uint32_t> sc = {fb(p.b1), fb(p.b2), fb(p.eps), fb(p.wd), fb(p.c1), fb(p.c2)};
            const auto g16 = rand_f32(n, n * 23 + t, -1, 1, true);
            L.s.write(bg.d.base, std::vector<uint16_t>(g16.begin(), g16.end()).data(), 2ull * n);
            // the FP32 kernels from the widened BF16 state
            const std::pair<const Tensor *, const std::vector<uint32_t> *> state[] = {
                {&fw, &w16}, {&fg, &g16}, {&fm, &m16}, {&fv, &v16}};
            for (const auto &[tf, h] : state) {
                const auto f = widen(*h);
                L.s.write(tf->d.base, f.data(), 4ull * n);
            }
            REQUIRE(L.launch("lamb_update_f32", {fw, fg, fm, fv, tu[0], tp[0]}, sc, idx) == HPU_CQ_OK);
            REQUIRE(L.launch("lamb_update_bf16", {bw, bg, bm, bv, tu[1], tp[1]}, sc, idx) == HPU_CQ_OK);
            for (int k = 0; k < 2; k++) {
                REQUIRE(L.launch("reduce_sum_f32", {tp[k], tn[k]}, {}, {1, 2, 1, 1, 1}) == HPU_CQ_OK);
            }
            REQUIRE(L.launch("lamb_apply_f32", {fw, tu[0], tn[0]}, {fb(lr)}, idx) == HPU_CQ_OK);
            REQUIRE(L.launch("lamb_apply_bf16", {bw, tu[1], tn[1]}, {fb(lr)}, idx) == HPU_CQ_OK);
            // the reference's moments and direction on the widened values
            std::vector<float> u(n);
            for (uint32_t i = 0; i < n; i++) {
                float m = kref::bf16_to_f32(static_cast<uint16_t>(m16[i]));
                float v = kref::bf16_to_f32(static_cast<uint16_t>(v16[i]));
                u[i] = kref::lamb_update(kref::bf16_to_f32(static_cast<uint16_t>(w16[i])),
                                         kref::bf16_to_f32(static_cast<uint16_t>(g16[i])), m, v, p);
                m16[i] = kref::f32_to_bf16(m);
                v16[i] = kref::f32_to_bf16(v);
            }
            CHECK(L.read(bm) == m16);
            CHECK(L.read(bv) == v16);
            CHECK(mismatches(L.read(tu[1]), u) == 0);
            CHECK(L.read(tu[1]) == L.read(tu[0]));
            CHECK(L.read(tp[1]) == L.read(tp[0]));
            const auto nw = L.read(bw);
            CHECK(nw == narrow(L.read(fw)));
            // the step against double from the device's norms
            const auto norms = floats(L.read(tn[1]));
            const double r = kref::lamb_ratio(norms[0], norms[1]);
            for (uint32_t i = 0; i < n; i++) {
                const double w0 = kref::bf16_to_f32(static_cast<uint16_t>(w16[i]));
                worst = std::max(worst, err_ulps(kref::bf16_to_f32(static_cast<uint16_t>(nw[i])),
                                                 w0 - lr * r * u[i], std::fabs(w0), true));
            }
            w16 = nw;
        }
    }
    report("lamb_apply_bf16 w", worst, "BF16 ulp of max(|w'|, |w|)");
    CHECK(worst <= 1);
}

TEST_CASE("tpclib LAMB over segments (lamb_norms_f32): padded parameters in one flat buffer, "
          "three launches, bit-exact; the per-member partials those of per-parameter launches",
          "[tpclib][opt]")
{
    Lib L;
    const uint8_t F32 = HPU_TPC_DT_F32, I32 = HPU_TPC_DT_I32, BF16 = HPU_TPC_DT_BF16;
    // odd lengths, an empty parameter, one exactly a member
    const std::vector<uint32_t> lens = {1, 255, 257, 0, 3, 256, 1000, 513};
    std::vector<uint32_t> off, seg = {0};
    uint32_t n = 0;
    for (uint32_t len : lens) {
        off.push_back(n);
        n += (len + 255) / 256 * 256;
        seg.push_back(n / 256);
    }
    const uint32_t parts = n / 256, segs = static_cast<uint32_t>(lens.size());
    const std::array<uint32_t, 5> idx = {parts, 1, 1, 1, 1};
    const float lr = 0.01f;
    kref::Lamb p{0.9f, 0.999f, 1e-6f, 0.01f, 0, 0};
    for (const bool bf16 : {false, true}) {
        CAPTURE(bf16);
        const uint8_t dt = bf16 ? BF16 : F32;
        const std::string sfx = bf16 ? "bf16" : "f32";
        // padding zero, as hpu_torch.optim keeps it
        auto pad = [&](const std::vector<uint32_t> &v) {
            std::vector<uint32_t> f(n, 0);
            for (size_t j = 0; j < lens.size(); j++) {
                std::copy(v.begin() + off[j], v.begin() + off[j] + lens[j], f.begin() + off[j]);
            }
            return f;
        };
        auto val = [&](uint32_t bits) { return elem_f32(bits, bf16); };
        std::vector<uint32_t> w = pad(rand_f32(n, 77 + bf16, -1, 1, bf16));
        std::vector<float> m(n, 0.0f), v(n, 0.0f);
        Tensor tw = L.tensor(dt, {n}, w), tg = L.tensor(dt, {n}), tm = L.tensor(dt, {n}), tv = L.tensor(dt, {n});
        Tensor tu = L.tensor(F32, {n}), tp = L.tensor(F32, {parts, 2}), tn = L.tensor(F32, {parts, 2});
        // the table with a base of 5 (a slice of a longer table)
        std::vector<uint32_t> table(seg);
        for (auto &x : table) {
            x += 5;
        }
        Tensor ts = L.tensor(I32, {segs + 1}, table);
        for (int t = 1; t <= 3; t++) {
            CAPTURE(t);
            p.c1 = static_cast<float>(1.0 / (1.0 - std::pow(0.9, t)));
            p.c2 = static_cast<float>(1.0 / (1.0 - std::pow(0.999, t)));
            const std::vector<uint32_t> sc = {fb(p.b1), fb(p.b2), fb(p.eps), fb(p.wd), fb(p.c1), fb(p.c2)};
            const auto g = pad(rand_f32(n, 91 * t + bf16, -1, 1, bf16));
            const auto m0 = L.read(tm), v0 = L.read(tv);
            if (bf16) {
                L.s.write(tg.d.base, std::vector<uint16_t>(g.begin(), g.end()).data(), 2ull * n);
            } else {
                L.s.write(tg.d.base, g.data(), 4ull * n);
            }
            // the per-parameter launches (the per-tensor path) on copies
            std::vector<std::vector<uint32_t>> want_part(2);
            for (size_t j = 0; j < lens.size(); j++) {
                if (lens[j] == 0) {
                    continue;
                }
                auto sub = [&](const std::vector<uint32_t> &a) {
                    return std::vector<uint32_t>(a.begin() + off[j], a.begin() + off[j] + lens[j]);
                };
                const uint32_t pj = (lens[j] + 255) / 256;
                Tensor jw = L.tensor(dt, {lens[j]}, sub(w)), jg = L.tensor(dt, {lens[j]}, sub(g));
                Tensor jm = L.tensor(dt, {lens[j]}, sub(m0)), jv = L.tensor(dt, {lens[j]}, sub(v0));
                Tensor ju = L.tensor(F32, {lens[j]}), jp = L.tensor(F32, {pj, 2});
                REQUIRE(L.launch("lamb_update_" + sfx, {jw, jg, jm, jv, ju, jp}, sc, {pj, 1, 1, 1, 1}) ==
                        HPU_CQ_OK);
                const auto pp = L.read(jp);
                for (size_t c = 0; c < 2; c++) {
                    const auto first = static_cast<std::ptrdiff_t>(c * pj);
                    want_part[c].insert(want_part[c].end(), pp.begin() + first, pp.begin() + first + pj);
                }
            }
            REQUIRE(L.launch("lamb_update_" + sfx, {tw, tg, tm, tv, tu, tp}, sc, idx) == HPU_CQ_OK);
            REQUIRE(L.launch("lamb_norms_f32", {tp, ts, tn}, {}, {segs, 1, 1, 1, 1}) == HPU_CQ_OK);
            REQUIRE(L.launch("lamb_apply_" + sfx, {tw, tu, tn}, {fb(lr)}, idx) == HPU_CQ_OK);
            // moments and direction: the reference on every element, padding included
            std::vector<float> u(n);
            for (uint32_t i = 0; i < n; i++) {
                float mi = val(m0[i]), vi = val(v0[i]);
                u[i] = kref::lamb_update(val(w[i]), val(g[i]), mi, vi, p);
                m[i] = bf16 ? kref::bf16_to_f32(kref::f32_to_bf16(mi)) : mi;
                v[i] = bf16 ? kref::bf16_to_f32(kref::f32_to_bf16(vi)) : vi;
            }
            const auto gm = L.read(tm), gv = L.read(tv);
            size_t bad = 0;
            for (uint32_t i = 0; i < n; i++) {
                bad += val(gm[i]) != m[i] || val(gv[i]) != v[i];
            }
            CHECK(bad == 0);
            CHECK(mismatches(L.read(tu), u) == 0);
            const auto part = L.read(tp);
            CHECK(std::vector<uint32_t>(part.begin(), part.begin() + parts) == want_part[0]);
            CHECK(std::vector<uint32_t>(part.begin() + parts, part.end()) == want_part[1]);
            // the norms: each parameter's partials summed in order, in each of its members' rows
            const auto pf = floats(part);
            const auto norms = floats(L.read(tn));
            std::vector<float> wsq(parts), usq(parts);
            bad = 0;
            for (size_t j = 0; j < lens.size(); j++) {
                const float a = kref::lamb_seg_sum(pf.data(), seg[j], seg[j + 1]);
                const float b = kref::lamb_seg_sum(pf.data() + parts, seg[j], seg[j + 1]);
                for (uint32_t k = seg[j]; k < seg[j + 1]; k++) {
                    wsq[k] = a;
                    usq[k] = b;
                    bad += fb(norms[k]) != fb(a) || fb(norms[parts + k]) != fb(b);
                }
            }
            CHECK(bad == 0);
            // the step: every element with its member's norms, padding staying 0
            const auto gw = L.read(tw);
            bad = 0;
            for (uint32_t i = 0; i < n; i++) {
                const float want = kref::lamb_apply(val(w[i]), u[i], wsq[i / 256], usq[i / 256], lr);
                bad += gw[i] != (bf16 ? kref::f32_to_bf16(want) : fb(want));
            }
            CHECK(bad == 0);
            for (size_t j = 0; j < lens.size(); j++) {
                for (uint32_t i = off[j] + lens[j]; i < (j + 1 < lens.size() ? off[j + 1] : n); i++) {
                    bad += gw[i] != 0;
                }
            }
            CHECK(bad == 0);
            w = gw;
        }
    }
}

TEST_CASE("tpclib lamb_norms_f32 with a table that breaks the rules: rows clamped to part's, "
          "no runaway member, nothing outside a clamped segment written",
          "[tpclib][opt]")
{
    Lib L;
    const uint8_t F32 = HPU_TPC_DT_F32, I32 = HPU_TPC_DT_I32;
    const uint32_t P = 4;
    // part [P, 2]: column 0 = 1, 2, 4, 8; column 1 = 16, 32, 64, 128
    const std::vector<uint32_t> part = {fb(1), fb(2), fb(4), fb(8), fb(16), fb(32), fb(64), fb(128)};
    const uint32_t sentinel = 0x7fc0dead;
    struct Case {
        const char *what;
        std::vector<uint32_t> table;
        std::vector<float> want; // per row, column 0 (column 1 is 16 times it); < 0: untouched
    };
    const std::vector<Case> cases = {
        {"a span of 2^31 - 1 rows: clamped to P", {0, 0x7fffffff}, {15, 15, 15, 15}},
        {"a span past P: ends at P, a first row past P stores nothing", {0, 1, 100, 200}, {1, 14, 14, 14}},
        {"descending and below the base: nothing stored", {5, 2, 7}, {-1, -1, -1, -1}},
        {"a base past every row (negative offsets): nothing stored", {0x7fffffff, 0, 3}, {-1, -1, -1, -1}},
    };
    for (const Case &c : cases) {
        CAPTURE(c.what);
        Tensor tp = L.tensor(F32, {P, 2}, part);
        Tensor ts = L.tensor(I32, {static_cast<uint32_t>(c.table.size())}, c.table);
        Tensor tn = L.tensor(F32, {P, 2}, std::vector<uint32_t>(std::size_t{2} * P, sentinel));
        const auto segs = static_cast<uint32_t>(c.table.size() - 1);
        REQUIRE(L.launch("lamb_norms_f32", {tp, ts, tn}, {}, {segs, 1, 1, 1, 1}) == HPU_CQ_OK);
        const auto got = L.read(tn);
        for (uint32_t r = 0; r < P; r++) {
            CAPTURE(r);
            if (c.want[r] < 0) {
                CHECK(got[r] == sentinel);
                CHECK(got[P + r] == sentinel);
            } else {
                CHECK(got[r] == fb(c.want[r]));
                CHECK(got[P + r] == fb(16 * c.want[r]));
            }
        }
    }
}
