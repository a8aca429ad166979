// SPDX-License-Identifier: MIT
//
// Comparisons of the TPC library into bool (u8) tensors on the device
// model: eq, ne, lt, le, gt, ge on FP32, BF16 and every integer type with
// broadcasting, ties, signed zeros, infinities, NaN and integer extremes;
// where_b32, where_b16 and where_b8 with every input broadcast; all exact.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "tpc_ref_types.hpp"
#include "tpclib_rig.hpp"

using namespace hpu_test;

namespace {

const uint32_t kSizes[] = {1, 3, 63, 64, 65, 255, 256, 257, 1000};

// Shapes of the inputs and the output (sizes, strides; empty: dense).
struct CaseN {
    const char *name;
    std::vector<std::vector<uint32_t>> sz, st;
};

std::vector<CaseN> cmp_cases(uint32_t n)
{
    return {
        {"same shape", {{n, 3}, {n, 3}, {n, 3}}, {{}, {}, {}}},
        {"b size 1 in dim 1", {{n, 3}, {n, 1}, {n, 3}}, {{}, {}, {}}},
        {"b stride 0 in dim 1, out strided", {{n, 3}, {n, 3}, {n, 3}}, {{}, {1, 0}, {1, n + 5}}},
        {"a scalar", {{1}, {n, 2}, {n, 2}}, {{}, {}, {}}},
        {"4-D, b [1, 2, 1, 2]", {{n, 2, 2, 2}, {1, 2, 1, 2}, {n, 2, 2, 2}}, {{}, {}, {}}},
    };
}

bool is_fp(uint8_t dt) { return dt == HPU_TPC_DT_F32 || dt == HPU_TPC_DT_BF16; }

// Values with many ties: small numbers, signed zeros, infinities, NaN; the
// integer types' extremes.
uint32_t tie_value(std::mt19937 &g, uint8_t dt)
{
    if (!is_fp(dt)) {
        const auto t = static_cast<kref::Type>(dt);
        const int64_t iv[] = {0, 1, 2, -1, -2, kref::int_min(t), kref::int_max(t), kref::int_max(t) - 1};
        return kref::int_bits(t, iv[g() % std::size(iv)]);
    }
    static const float fv[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f, -2.5f, INFINITY, -INFINITY, NAN};
    const float f = fv[g() % std::size(fv)];
    return dt == HPU_TPC_DT_BF16 ? kref::f32_to_bf16(f) : kref::f32_bits(f);
}

bool compare(int op, uint32_t a, uint32_t b, uint8_t dt)
{
    if (!is_fp(dt)) {
        const auto t = static_cast<kref::Type>(dt);
        const int64_t x = kref::int_value(t, a), y = kref::int_value(t, b);
        const bool r[] = {x == y, x != y, x < y, x <= y, x > y, x >= y};
        return r[op];
    }
    const bool h = dt == HPU_TPC_DT_BF16;
    const float x = elem_f32(a, h), y = elem_f32(b, h);
    const bool r[] = {x == y, x != y, x < y, x <= y, x > y, x >= y};
    return r[op];
}

} // namespace

TEST_CASE("tpclib eq, ne, lt, le, gt, ge on FP32, BF16 and the six integer types into u8 0/1: "
          "broadcasting, ties, -0, infinities, NaN, integer extremes by signedness; exact",
          "[tpclib][cmp]")
{
    static const char *const ops[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    const std::pair<const char *, uint8_t> types[] = {
        {"f32", HPU_TPC_DT_F32}, {"bf16", HPU_TPC_DT_BF16}, {"i32", HPU_TPC_DT_I32},
        {"u32", HPU_TPC_DT_U32}, {"i16", HPU_TPC_DT_I16},   {"u16", HPU_TPC_DT_U16},
        {"i8", HPU_TPC_DT_I8},   {"u8", HPU_TPC_DT_U8}};
    Lib L;
    std::mt19937 g(5);
    for (int op = 0; op < 6; op++) {
        for (const auto &ty : types) {
            const uint8_t dt = ty.second;
            const std::string k = std::string(ops[op]) + "_" + ty.first;
            for (uint32_t n : kSizes) {
                for (const CaseN &c : cmp_cases(n)) {
                    CAPTURE(k, n, c.name);
                    std::vector<uint32_t> av(elems_of(c.sz[0], c.st[0])), bv(elems_of(c.sz[1], c.st[1]));
                    for (auto &v : av) {
                        v = tie_value(g, dt);
                    }
                    for (auto &v : bv) {
                        v = tie_value(g, dt);
                    }
                    Tensor a = L.tensor(dt, c.sz[0], av, c.st[0]), b = L.tensor(dt, c.sz[1], bv, c.st[1]);
                    Tensor o = L.tensor(HPU_TPC_DT_U8, c.sz[2], {}, c.st[2]);
                    REQUIRE(L.launch(k, {a, b, o}, {}, ew_index(o)) == HPU_CQ_OK);
                    auto got = L.read(o);
                    size_t bad = 0;
                    each5(o, [&](const Coord &x) {
                        bad += got[at5(o, x)] != uint32_t{compare(op, av[bcast_at5(a, x)], bv[bcast_at5(b, x)], dt)};
                    });
                    CHECK(bad == 0);
                    CHECK(gaps_untouched(o, got));
                }
            }
        }
    }
}

TEST_CASE("tpclib where_b32, where_b16 and where_b8: cond ? a : b, any nonzero byte true, every input "
          "broadcast; exact",
          "[tpclib][cmp]")
{
    Lib L;
    std::mt19937 g(9);
    const std::tuple<const char *, uint8_t, uint32_t> widths[] = {
        {"where_b32", HPU_TPC_DT_U32, 0xffffffffu},
        {"where_b16", HPU_TPC_DT_U16, 0xffffu},
        {"where_b8", HPU_TPC_DT_U8, 0xffu}};
    for (const auto &[name, dt, mask] : widths) {
        const std::string k = name;
        for (uint32_t n : kSizes) {
            const std::vector<CaseN> cases = {
                {"same shape", {{n, 3}, {n, 3}, {n, 3}, {n, 3}}, {{}, {}, {}, {}}},
                {"cond [n, 1], a scalar", {{n, 1}, {1}, {n, 3}, {n, 3}}, {{}, {}, {}, {}}},
                {"cond stride 0 in dim 0, b size 1 in dim 1, out strided",
                 {{n, 3}, {n, 3}, {n, 1}, {n, 3}}, {{0, 1}, {}, {}, {1, n + 2}}},
                {"4-D, cond [1, 2, 1, 2], a strided", {{1, 2, 1, 2}, {n, 2, 2, 2}, {n, 2, 2, 2}, {n, 2, 2, 2}},
                 {{}, {2, 2 * n, 4 * n, 8 * n}, {}, {}}},
            };
            for (const CaseN &c : cases) {
                CAPTURE(k, n, c.name);
                std::vector<std::vector<uint32_t>> vals(3);
                std::vector<Tensor> ts;
                for (size_t t = 0; t < 3; t++) {
                    vals[t].resize(elems_of(c.sz[t], c.st[t]));
                    for (auto &v : vals[t]) {
                        v = t == 0 ? (g() % 3 == 0 ? 0 : (g() % 2 ? 1 : 0x80 + g() % 128)) : g() & mask;
                    }
                    ts.push_back(L.tensor(t == 0 ? uint8_t{HPU_TPC_DT_U8} : dt, c.sz[t], vals[t], c.st[t]));
                }
                ts.push_back(L.tensor(dt, c.sz[3], {}, c.st[3]));
                const Tensor &o = ts[3];
                REQUIRE(L.launch(k, ts, {}, ew_index(o)) == HPU_CQ_OK);
                auto got = L.read(o);
                size_t bad = 0;
                each5(o, [&](const Coord &x) {
                    const bool cond = vals[0][bcast_at5(ts[0], x)] != 0;
                    bad += got[at5(o, x)] != (cond ? vals[1][bcast_at5(ts[1], x)] : vals[2][bcast_at5(ts[2], x)]);
                });
                CHECK(bad == 0);
                CHECK(gaps_untouched(o, got));
            }
        }
    }
}
