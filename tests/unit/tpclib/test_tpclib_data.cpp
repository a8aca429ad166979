// SPDX-License-Identifier: MIT
//
// Data kernels of the TPC library on the device model: strided copies by
// element size (permuted, expanded and 5-D views, stride 2 in dimension 0:
// the low words of int64), fills, and cross-entropy reading int64 labels
// through a stride-2 INT32 view; all bit-exact.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "tpclib_rig.hpp"

using namespace hpu_test;

namespace {

const uint32_t kLens[] = {1, 3, 63, 255, 256, 257, 1000};

struct Width {
    const char *suffix;
    uint8_t dt;
    uint32_t mask;
};
const Width kWidths[] = {{"b32", HPU_TPC_DT_U32, 0xffffffffu},
                         {"b16", HPU_TPC_DT_U16, 0xffffu},
                         {"b8", HPU_TPC_DT_U8, 0xffu}};

// A copy's source view and destination view (sizes, strides; empty: dense).
struct View2 {
    const char *name;
    std::vector<uint32_t> s, ss, d, ds;
};

std::vector<View2> copy_cases(uint32_t n)
{
    return {
        {"dense", {n, 3}, {}, {n, 3}, {}},
        {"transposed source (permute)", {n, 3}, {3, 1}, {n, 3}, {}},
        {"stride 2 in dim 0 (int64 low words)", {n, 2}, {2, 2 * n}, {n, 2}, {}},
        {"expand: stride 0 in dim 1", {n, 4}, {1, 0}, {n, 4}, {}},
        {"expand: size 1 in dim 1", {n, 1}, {}, {n, 3}, {}},
        {"stride 0 in dim 0", {n, 2}, {0, 1}, {n, 2}, {}},
        {"scalar broadcast (size 1 in dim 0)", {1, 1}, {}, {n, 2}, {}},
        {"strided destination with gaps (cat)", {n, 3}, {}, {n, 3}, {1, 2 * n + 3}},
        {"5-D permuted", {n, 2, 3, 2, 2}, {24, 1, 2, 6, 12}, {n, 2, 3, 2, 2}, {}},
        {"5-D, size 1 in dims 2 and 4", {n, 2, 1, 2, 1}, {}, {n, 2, 3, 2, 2}, {}},
    };
}

} // namespace

TEST_CASE("tpclib copy_b32, copy_b16, copy_b8: any strides, broadcasting, 5-D, bit-exact",
          "[tpclib][data]")
{
    Lib L;
    std::mt19937 g(7);
    for (const Width &w : kWidths) {
        const std::string k = std::string("copy_") + w.suffix;
        for (uint32_t n : kLens) {
            for (const View2 &c : copy_cases(n)) {
                CAPTURE(k, n, c.name);
                std::vector<uint32_t> sv(elems_of(c.s, c.ss));
                for (auto &v : sv) {
                    v = g() & w.mask;
                }
                Tensor s = L.tensor(w.dt, c.s, sv, c.ss);
                Tensor d = L.tensor(w.dt, c.d, {}, c.ds);
                REQUIRE(L.launch(k, {s, d}, {}, ew5_index(d)) == HPU_CQ_OK);
                auto got = L.read(d);
                size_t bad = 0;
                each5(d, [&](const Coord &x) { bad += got[at5(d, x)] != sv[bcast_at5(s, x)]; });
                CHECK(bad == 0);
                CHECK(gaps_untouched(d, got));
            }
        }
    }
}

TEST_CASE("tpclib copy_b32 of int64 low words: an INT32 view with stride 2 reads labels",
          "[tpclib][data]")
{
    // int64 values (two's complement, little-endian: low word first)
    const int64_t vals[] = {0, 1, -1, 7, -100, 123456789, -2147483648LL, 2147483647LL};
    const auto n = static_cast<uint32_t>(std::size(vals));
    std::vector<uint32_t> words;
    for (int64_t v : vals) {
        words.push_back(static_cast<uint32_t>(static_cast<uint64_t>(v)));
        words.push_back(static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32));
    }
    Lib L;
    Tensor s = L.tensor(HPU_TPC_DT_U32, {n}, words, {2});
    Tensor d = L.tensor(HPU_TPC_DT_U32, {n});
    REQUIRE(L.launch("copy_b32", {s, d}, {}, ew5_index(d)) == HPU_CQ_OK);
    auto got = L.read(d);
    for (uint32_t i = 0; i < n; i++) {
        CHECK(static_cast<int32_t>(got[i]) == static_cast<int32_t>(vals[i]));
    }
}

TEST_CASE("tpclib fill_b32, fill_b16, fill_b8: strided outputs, the scalar's low bits",
          "[tpclib][data]")
{
    Lib L;
    const uint32_t pattern = 0x7fc0a5b6u; // a NaN's bits as FP32
    for (const Width &w : kWidths) {
        const std::string k = std::string("fill_") + w.suffix;
        for (uint32_t n : kLens) {
            const std::vector<std::vector<uint32_t>> shapes = {{n, 3}, {n, 2, 1, 2, 2}};
            const std::vector<std::vector<uint32_t>> strides = {{2, 2 * n + 1},
                                                                {1, n + 3, 2 * n + 6, 2 * n + 6, 4 * n + 13}};
            for (size_t i = 0; i < shapes.size(); i++) {
                CAPTURE(k, n, i);
                Tensor d = L.tensor(w.dt, shapes[i], {}, strides[i]);
                REQUIRE(L.launch(k, {d}, {pattern}, ew5_index(d)) == HPU_CQ_OK);
                auto got = L.read(d);
                size_t bad = 0;
                each5(d, [&](const Coord &x) { bad += got[at5(d, x)] != (pattern & w.mask); });
                CHECK(bad == 0);
                CHECK(gaps_untouched(d, got));
            }
        }
    }
}

TEST_CASE("tpclib cross_entropy_f32 reads int64 labels through a stride-2 INT32 view",
          "[tpclib][data]")
{
    constexpr uint32_t C = 70, R1 = 3, R2 = 2;
    constexpr size_t R = size_t{R1} * R2;
    Lib L;
    auto xv = rand_f32(size_t{C} * R1 * R2, 11, -4, 4);
    std::vector<uint32_t> lab(R), lab64(2 * R);
    for (size_t r = 0; r < R; r++) {
        lab[r] = static_cast<uint32_t>((r * 29 + 5) % C);
        lab64[2 * r] = lab[r];
        lab64[2 * r + 1] = 0; // the high word of a small non-negative int64
    }
    Tensor x = L.tensor(HPU_TPC_DT_F32, {C, R1, R2}, xv, {}, 0xff800000u);
    Tensor t32 = L.tensor(HPU_TPC_DT_I32, {1, R1, R2}, lab);
    Tensor t64 = L.tensor(HPU_TPC_DT_I32, {1, R1, R2}, lab64, {2, 2, 2 * R1});
    Tensor l1 = L.tensor(HPU_TPC_DT_F32, {1, R1, R2}), l2 = L.tensor(HPU_TPC_DT_F32, {1, R1, R2});
    Tensor d1 = L.tensor(HPU_TPC_DT_F32, {C, R1, R2}), d2 = L.tensor(HPU_TPC_DT_F32, {C, R1, R2});
    const uint32_t scale = kref::f32_bits(0.25f);
    REQUIRE(L.launch("cross_entropy_f32", {x, t32, l1, d1}, {scale}, {1, R1, R2, 1, 1}) ==
            HPU_CQ_OK);
    REQUIRE(L.launch("cross_entropy_f32", {x, t64, l2, d2}, {scale}, {1, R1, R2, 1, 1}) ==
            HPU_CQ_OK);
    CHECK(L.read(l1) == L.read(l2));
    CHECK(L.read(d1) == L.read(d2));
}

TEST_CASE("tpclib index_select_b32: rows gathered by INT32 (and int64 stride-2) indices, "
          "strided table and out; a bad index asserts",
          "[tpclib][data]")
{
    constexpr uint32_t V = 7, N = 5;
    Lib L;
    std::mt19937 g(21);
    for (uint32_t d : kLens) {
        for (bool wide : {false, true}) {
            CAPTURE(d, wide);
            std::vector<uint32_t> tv(size_t{d + 2} * V);
            for (auto &v : tv) {
                v = g();
            }
            const uint32_t ix[N] = {3, 0, 6, 3, 1};
            std::vector<uint32_t> iv;
            for (uint32_t i : ix) {
                iv.push_back(i);
                if (wide) {
                    iv.push_back(0);
                }
            }
            Tensor table = L.tensor(HPU_TPC_DT_U32, {d, V}, tv, {1, d + 2});
            Tensor idx = L.tensor(HPU_TPC_DT_I32, {N}, iv, {wide ? 2u : 1u});
            Tensor out = L.tensor(HPU_TPC_DT_U32, {d, N}, {}, {1, d + 1});
            const std::array<uint32_t, 5> space = {(d + 255) / 256, N, 1, 1, 1};
            REQUIRE(L.launch("index_select_b32", {table, idx, out}, {}, space) == HPU_CQ_OK);
            auto got = L.read(out);
            size_t bad = 0;
            for (uint32_t n = 0; n < N; n++) {
                for (uint32_t i = 0; i < d; i++) {
                    bad += got[out.at(i, n)] != tv[table.at(i, ix[n])];
                }
            }
            CHECK(bad == 0);
            CHECK(gaps_untouched(out, got));
            for (uint32_t badi : {V, 0xffffffffu}) {
                iv[wide ? 4 : 2] = badi;
                Tensor bidx = L.tensor(HPU_TPC_DT_I32, {N}, iv, {wide ? 2u : 1u});
                CHECK(L.launch("index_select_b32", {table, bidx, out}, {}, space) == HPU_CQ_TPC_ASSERT);
            }
        }
    }
}
