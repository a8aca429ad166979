// SPDX-License-Identifier: MIT
//
// Integer kernels of the TPC library on the device model: the widenings
// into int64 (pairs of INT32 words through a 5-D view, dense, permuted and
// with gaps), integer division truncating and flooring, comparisons on every
// integer type and where_b8; all exact against tpc_ref_types.hpp.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "tpc_ref_types.hpp"
#include "tpclib_rig.hpp"

using namespace hpu_test;
using kref::Type;

namespace {

const uint32_t kSizes[] = {1, 3, 63, 64, 65, 255, 256, 257, 1000};

struct IntType {
    const char *suffix;
    Type t;
};
const IntType kInts[] = {{"i32", Type::i32}, {"u32", Type::u32}, {"i16", Type::i16},
                         {"u16", Type::u16}, {"i8", Type::i8},   {"u8", Type::u8}};

uint8_t code(Type t) { return static_cast<uint8_t>(t); }

// Random element bits of @t with its extremes and small values often.
uint32_t int_sample(std::mt19937 &g, Type t)
{
    switch (g() % 8) {
    case 0: return kref::int_bits(t, kref::int_min(t));
    case 1: return kref::int_bits(t, kref::int_max(t));
    case 2: return kref::int_bits(t, static_cast<int64_t>(g() % 7) - 3);
    default: return kref::int_bits(t, static_cast<int32_t>(g()));
    }
}

// An int64 tensor of @sizes (up to 4-D) with int64 strides @st (empty:
// dense) as the kernels' INT32 view [N0, N1, N2, N3, 2]: strides doubled,
// dimension 4 the word.
Tensor int64_view(Lib &L, const std::vector<uint32_t> &sizes, const std::vector<uint32_t> &st)
{
    std::vector<uint32_t> sz(5, 1), s2(5, 0);
    uint32_t dense = 1;
    for (size_t k = 0; k < sizes.size(); k++) {
        sz[k] = sizes[k];
        s2[k] = 2 * (st.empty() ? dense : st[k]);
        dense *= sizes[k];
    }
    sz[4] = 2;
    s2[4] = 1;
    return L.tensor(HPU_TPC_DT_I32, sz, {}, s2);
}

} // namespace

TEST_CASE("tpclib widen_*_i64: every integer type into int64 words (low, sign- or zero-extended "
          "high), any strides, gaps untouched; exact",
          "[tpclib][int]")
{
    Lib L;
    std::mt19937 g(3);
    for (const IntType &it : kInts) {
        const std::string k = std::string("widen_") + it.suffix + "_i64";
        for (uint32_t n : kSizes) {
            struct C {
                const char *name;
                std::vector<uint32_t> sz, xs, ys;
            };
            const C cases[] = {
                {"dense", {n, 3}, {}, {}},
                {"x transposed, y with gaps", {n, 3}, {3, 1}, {1, n + 3}},
                {"y permuted (int64 stride 2 in dim 0), 4-D", {n, 2, 1, 2}, {}, {2, 1, 4 * n, 2 * n}},
            };
            for (const C &c : cases) {
                CAPTURE(k, n, c.name);
                std::vector<uint32_t> xv(elems_of(c.sz, c.xs));
                for (auto &v : xv) {
                    v = int_sample(g, it.t);
                }
                Tensor x = L.tensor(code(it.t), c.sz, xv, c.xs);
                Tensor y = int64_view(L, c.sz, c.ys);
                REQUIRE(L.launch(k, {x, y}, {}, ew_index(x)) == HPU_CQ_OK);
                const auto got = L.read(y);
                size_t bad = 0;
                each5(y, [&](const Coord &at) {
                    Coord xc = at;
                    xc[4] = 0;
                    const auto v = static_cast<uint64_t>(kref::int_value(it.t, xv[at5(x, xc)]));
                    bad += got[at5(y, at)] != static_cast<uint32_t>(at[4] ? v >> 32 : v);
                });
                CHECK(bad == 0);
                CHECK(gaps_untouched(y, got));
            }
        }
    }
}

TEST_CASE("tpclib div_i32, div_floor_i32, fmod_i32, remainder_i32: every pair of extremes, "
          "random pairs, broadcasting; exact; a zero divisor asserts",
          "[tpclib][int]")
{
    using kref::DivMode;
    const std::pair<const char *, DivMode> kernels[] = {{"div_i32", DivMode::trunc},
                                                        {"div_floor_i32", DivMode::floor},
                                                        {"fmod_i32", DivMode::fmod},
                                                        {"remainder_i32", DivMode::remainder}};
    const uint8_t I32 = HPU_TPC_DT_I32;
    Lib L;
    std::mt19937 g(13);
    // the extremes, small values and their neighbours
    std::vector<uint32_t> sv;
    for (int64_t v : {int64_t{INT32_MIN}, int64_t{INT32_MIN} + 1, int64_t{INT32_MIN} / 2,
                      int64_t{-65536}, int64_t{-7}, int64_t{-3}, int64_t{-2}, int64_t{-1},
                      int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, int64_t{7}, int64_t{65535},
                      int64_t{INT32_MAX} / 2, int64_t{INT32_MAX} - 1, int64_t{INT32_MAX}}) {
        sv.push_back(static_cast<uint32_t>(v));
    }
    std::vector<uint32_t> nz; // divisors: no 0
    std::copy_if(sv.begin(), sv.end(), std::back_inserter(nz), [](uint32_t v) { return v != 0; });
    for (const auto &[k, mode] : kernels) {
        CAPTURE(k);
        auto ref = [mode = mode](uint32_t a, uint32_t b) {
            return static_cast<uint32_t>(kref::div_i32(static_cast<int32_t>(a), static_cast<int32_t>(b), mode));
        };
        // every pair: a along dimension 0, b along dimension 1
        const auto na = static_cast<uint32_t>(sv.size()), nb = static_cast<uint32_t>(nz.size());
        Tensor a = L.tensor(I32, {na, 1}, sv), b = L.tensor(I32, {1, nb}, nz);
        Tensor o = L.tensor(I32, {na, nb});
        REQUIRE(L.launch(k, {a, b, o}, {}, ew_index(o)) == HPU_CQ_OK);
        auto got = L.read(o);
        size_t bad = 0;
        each5(o, [&](const Coord &c) { bad += got[at5(o, c)] != ref(sv[c[0]], nz[c[1]]); });
        CHECK(bad == 0);
        // random pairs of every magnitude, b strided or broadcast
        for (uint32_t n : kSizes) {
            const uint32_t bdim1 = n % 2 ? 1 : 3;
            CAPTURE(n, bdim1);
            std::vector<uint32_t> av(size_t{n} * 3), bv(size_t{n} * 2 * bdim1);
            for (auto &v : av) {
                v = static_cast<uint32_t>(g()) >> (g() % 32);
                v = g() % 2 ? v : 0u - v;
            }
            for (auto &v : bv) {
                v = static_cast<uint32_t>(g()) >> (g() % 32);
                v = (g() % 2 ? v : 0u - v) | (v == 0 ? 1u : 0u);
            }
            Tensor ta = L.tensor(I32, {n, 3}, av);
            Tensor tb = L.tensor(I32, {n, bdim1}, bv, {2, 2 * n});
            Tensor to = L.tensor(I32, {n, 3}, {}, {1, n + 2});
            REQUIRE(L.launch(k, {ta, tb, to}, {}, ew_index(to)) == HPU_CQ_OK);
            got = L.read(to);
            bad = 0;
            each5(to, [&](const Coord &c) {
                bad += got[at5(to, c)] != ref(av[bcast_at5(ta, c)], bv[bcast_at5(tb, c)]);
            });
            CHECK(bad == 0);
            CHECK(gaps_untouched(to, got));
        }
        // a zero divisor asserts; b's padding lanes (0) past the output do not
        Tensor a3 = L.tensor(I32, {3}, {7, 8, 9}), b3 = L.tensor(I32, {3}, {1, 2, 3});
        Tensor z3 = L.tensor(I32, {3}, {1, 0, 3}), o3 = L.tensor(I32, {3});
        CHECK(L.launch(k, {a3, b3, o3}, {}, ew_index(o3)) == HPU_CQ_OK);
        CHECK(L.launch(k, {a3, z3, o3}, {}, ew_index(o3)) == HPU_CQ_TPC_ASSERT);
        Tensor zs = L.tensor(I32, {1}, {0});
        CHECK(L.launch(k, {a3, zs, o3}, {}, ew_index(o3)) == HPU_CQ_TPC_ASSERT);
    }
}
