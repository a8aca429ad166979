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
