// SPDX-License-Identifier: MIT
//
// Reductions beyond sum, mean and max on the device model: reduce_min and
// argmin over rows of FP32 and BF16 (ties, NaN, +inf), exact; whole-tensor
// sums in two launches (sum_partial_*, then reduce_sum_f32 of the
// partials) over dense, strided and 4-D tensors within their bound.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "tpclib_rig.hpp"

using namespace hpu_test;

namespace {

const uint32_t kSizes[] = {1, 3, 63, 64, 65, 127, 128, 129, 1000};
constexpr uint32_t POS_INF = 0x7f800000u;

} // namespace

TEST_CASE("tpclib reduce_min and argmin, FP32 and BF16: exact, the first minimum, the first "
          "NaN",
          "[tpclib][reduce]")
{
    constexpr uint32_t R1 = 3, R2 = 2;
    Lib L;
    for (bool bf16 : {false, true}) {
        const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
        const std::string sfx = bf16 ? "_bf16" : "_f32";
        for (uint32_t n : kSizes) {
            CAPTURE(bf16, n);
            auto xv = rand_f32(size_t{n} * R1 * R2, n + 40, -3, 3, bf16);
            if (n > 3) {
                xv[2] = xv[n - 1]; // row 0: a tie
                xv[n + 1] = bf16 ? 0x7fc0u : 0x7fc00000u; // row 1: NaNs
                xv[n + 3] = xv[n + 1];
                for (uint32_t i = 0; i < n; i++) { // row 2: all +inf
                    xv[2 * n + i] = bf16 ? POS_INF >> 16 : POS_INF;
                }
            }
            const uint32_t pad = bf16 ? POS_INF >> 16 : POS_INF;
            Tensor x = L.tensor(dt, {n, R1, R2}, xv, {}, pad);
            Tensor mn = L.tensor(dt, {1, R1, R2}), am = L.tensor(HPU_TPC_DT_I32, {1, R1, R2});
            REQUIRE(L.launch("reduce_min" + sfx, {x, mn}, {}, {1, R1, R2, 1, 1}) == HPU_CQ_OK);
            REQUIRE(L.launch("argmin" + sfx, {x, am}, {}, {1, R1, R2, 1, 1}) == HPU_CQ_OK);
            auto gm = L.read(mn), ga = L.read(am);
            for (uint32_t r = 0; r < R1 * R2; r++) {
                float best = INFINITY;
                int32_t arg = -1;
                for (uint32_t i = 0; i < n; i++) {
                    const float v = elem_f32(xv[i + n * r], bf16);
                    if (std::isnan(v)) {
                        best = v;
                        arg = static_cast<int32_t>(i);
                        break;
                    }
                    if (arg < 0 || v < best) {
                        best = v;
                        arg = static_cast<int32_t>(i);
                    }
                }
                CAPTURE(r);
                if (std::isnan(best)) {
                    CHECK(std::isnan(elem_f32(gm[r], bf16)));
                } else {
                    CHECK(elem_f32(gm[r], bf16) == best);
                }
                CHECK(static_cast<int32_t>(ga[r]) == arg);
            }
        }
    }
}

TEST_CASE("tpclib whole-tensor sums: sum_partial_f32/_bf16 then reduce_sum_f32 of the partials, "
          "within (ceil(P/64) + 16) u sum|x|",
          "[tpclib][reduce]")
{
    Lib L;
    Worst w{1};
    for (bool bf16 : {false, true}) {
        const uint8_t dt = bf16 ? HPU_TPC_DT_BF16 : HPU_TPC_DT_F32;
        const std::string k = bf16 ? "sum_partial_bf16" : "sum_partial_f32";
        for (uint32_t n : {1u, 3u, 255u, 256u, 257u, 1000u, 20000u}) {
            const std::vector<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> shapes = {
                {{n}, {}},
                {{n, 3}, {2, 2 * n + 1}},
                {{n, 2, 3, 2}, {12, 1, 4, 2}}, // a permuted 4-D view
            };
            for (const auto &[sz, st] : shapes) {
                CAPTURE(k, n, sz.size());
                auto xv = rand_f32(elems_of(sz, st), n + 3, -2, 3, bf16);
                Tensor x = L.tensor(dt, sz, xv, st);
                const auto idx = ew_index(x);
                const uint32_t p = idx[0] * idx[1] * idx[2] * idx[3];
                Tensor part = L.tensor(HPU_TPC_DT_F32, {p}), s = L.tensor(HPU_TPC_DT_F32, {1});
                REQUIRE(L.launch(k, {x, part}, {}, idx) == HPU_CQ_OK);
                REQUIRE(L.launch("reduce_sum_f32", {part, s}, {}, {1, 1, 1, 1, 1}) == HPU_CQ_OK);
                double sum = 0, asum = 0;
                each5(x, [&](const Coord &c) {
                    const double v = elem_f32(xv[at5(x, c)], bf16);
                    sum += v;
                    asum += std::fabs(v);
                });
                const uint32_t depth = (p + 63) / 64 + 16;
                const double bound = depth * 0x1p-24 * asum;
                w.add(std::fabs(kref::bits_f32(L.read(s)[0]) - sum) / bound, k + " n " + std::to_string(n));
            }
        }
    }
    report("sum_partial + reduce_sum_f32", w.worst, "of (ceil(P/64)+16) u sum|x|");
    INFO("worst " << w.worst << " at " << w.first);
    CHECK(w.bad == 0);
}
