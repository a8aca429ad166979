// SPDX-License-Identifier: MIT
//
// The TPC cluster in the device model (Documentation/hw/tpc.md,
// compute.md): launches end to end, tensors with padding and dropped
// stores, the index-space split, the RNG, launch refusals (BAD_LAUNCH
// rule by rule), TPC_ILLEGAL reasons, TPC_ASSERT, MMU faults contained to
// their context, the watchdog on an endless kernel, threads, and a
// throughput measurement of a 64 MiB elementwise add.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "hpu_alloc_fail.hpp"
#include "hpu_thread_env.hpp"
#include "hpu_tpc_rig.hpp"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

using namespace hpu_test;

namespace {

constexpr uint64_t MS = 1000000;

const char *const kAdd = R"(
.kernel add_f32
.tensors 3
.index_dims 1
.tensor 0, f32
.tensor 1, f32
.tensor 2, f32
        iid i0
        imul i0, i0, 0, 1024
        mov s0, 16
next:
        ld.t.f32 v0, t0, i0
        ld.t.f32 v1, t1, i0
        vadd.f32 v2, v0, v1
        iadd i0, i0, 0, 64 ; st.t.f32 t2, i0, v2
        loop s0, next
        halt
)";

std::vector<Eqe> all_events(Rig &r)
{
    std::vector<Eqe> v;
    for (uint32_t i = 0; i < r.rd(HPU_REG_EQ_PI); i++) {
        v.push_back(r.eqe(i));
    }
    return v;
}

// An elementwise add of @n floats in @s; returns the CQE status.
struct AddJob {
    uint64_t a = 0, b = 0, d = 0, desc = 0;
    uint32_t n;
    AddJob(Space &s, uint32_t count, uint32_t seed) : n(count)
    {
        a = s.alloc(4ull * n);
        b = s.alloc(4ull * n);
        d = s.alloc(4ull * n);
        put_elems(s, a, values(n, seed, false));
        put_elems(s, b, values(n, seed + 1, false));
        LaunchDesc ld;
        ld.index[0] = (n + 1023) / 1024;
        ld.tensors = {TDesc::dense(HPU_TPC_DT_F32, a, {n}), TDesc::dense(HPU_TPC_DT_F32, b, {n}),
                      TDesc::dense(HPU_TPC_DT_F32, d, {n})};
        desc = place_launch(s, tpc_asm(kAdd), ld);
    }
    bool correct(Space &s) const
    {
        auto x = values(n, 0, false);
        auto av = get_elems<float>(s, a, n), bv = get_elems<float>(s, b, n);
        auto dv = get_elems<float>(s, d, n);
        for (uint32_t i = 0; i < n; i++) {
            if (f32_bits(dv[i]) != f32_bits(av[i] + bv[i])) {
                UNSCOPED_INFO("element " << i << ": " << dv[i] << " != " << av[i] + bv[i]);
                return false;
            }
        }
        return true;
    }
};

} // namespace

TEST_CASE("TPC_LAUNCH: an elementwise add runs and completes OK", "[emu][tpc]")
{
    const bool host = GENERATE(false, true);
    const unsigned asid = GENERATE(0u, 3u);
    CAPTURE(host, asid);
    Rig r;
    r.setup_eq();
    Space s(r, asid, host);
    AddJob job(s, 1000, 7);
    Cqe c = r.run_cb(tpc_cb(job.desc), asid, TPC_E, 1);
    CHECK(c.status == HPU_CQ_OK);
    CHECK(c.engine == TPC_E);
    CHECK(job.correct(s));
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
    CHECK(r.env.errors.empty());
}

TEST_CASE("TPC: results are the same whatever the number of cores", "[emu][tpc][split]")
{
    // a kernel whose stores depend on the member and on random numbers
    const char *src = R"(
.kernel split
.tensors 1
.index_dims 3
.tensor 0, u32
        iid i0
        imul i0, i0, 0, 64
        vrand.u32 v0
        iget s1, i0, 1
        vadd.u32 v1, v0, s1
        st.t.u32 t0, i0, v1
        halt
)";
    std::vector<std::vector<uint32_t>> out;
    for (unsigned cores : {1u, 3u, 8u}) {
        Rig r;
        r.core.tpc_cores = cores;
        Space s(r, 0, false);
        const uint32_t X = 64 * 5, Y = 7, Z = 3;
        uint64_t t = s.alloc(4ull * X * Y * Z);
        LaunchDesc ld;
        ld.index[0] = 5;
        ld.index[1] = Y;
        ld.index[2] = Z;
        ld.seed = 0x1234567890abcdefULL;
        ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, t, {X, Y, Z})};
        uint64_t desc = place_launch(s, tpc_asm(src), ld);
        REQUIRE(r.run_cb(tpc_cb(desc), 0, TPC_E, 0).status == HPU_CQ_OK);
        out.push_back(get_elems<uint32_t>(s, t, X * Y * Z));
        // the reference: hpu_tpc_rand_word of the member's linear index
        auto &v = out.back();
        for (uint32_t z = 0; z < Z; z++) {
            for (uint32_t y = 0; y < Y; y++) {
                for (uint32_t x = 0; x < X; x++) {
                    uint64_t lin = x / 64 + 5 * (y + Y * z);
                    uint32_t want = hpu_tpc_rand_word(ld.seed, lin, 0, x % 64) + y;
                    if (v[x + X * (y + Y * z)] != want) {
                        FAIL("cores " << cores << " element " << x << "," << y << "," << z);
                    }
                }
            }
        }
    }
    CHECK(out[0] == out[1]);
    CHECK(out[0] == out[2]);
}

TEST_CASE("TPC: the RNG depends on the seed, member, draw and lane only", "[emu][tpc][rng]")
{
    const char *src = R"(
.kernel rng
.tensors 2
.index_dims 1
.tensor 0, u32
.tensor 1, f32
        iid i0
        imul i0, i0, 0, 64
        vrand.u32 v0
        vrandu.f32 v1
        iset i1, i0, 0, 0 ; st.t.u32 t0, i0, v0
        st.t.f32 t1, i0, v1
        halt
)";
    auto run = [&](uint64_t seed) {
        Rig r;
        Space s(r, 0, false);
        uint64_t t0 = s.alloc(4 * 256), t1 = s.alloc(4 * 256);
        LaunchDesc ld;
        ld.index[0] = 4;
        ld.seed = seed;
        ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, t0, {256}),
                      TDesc::dense(HPU_TPC_DT_F32, t1, {256})};
        REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0).status ==
                HPU_CQ_OK);
        auto a = get_elems<uint32_t>(s, t0, 256);
        auto f = get_elems<float>(s, t1, 256);
        for (uint32_t i = 0; i < 256; i++) {
            CHECK(a[i] == hpu_tpc_rand_word(seed, i / 64, 0, i % 64));
            float u = static_cast<float>(hpu_tpc_rand_word(seed, i / 64, 1, i % 64) >> 8) *
                      0x1p-24f;
            CHECK(f32_bits(f[i]) == f32_bits(u));
            CHECK(f[i] >= 0.0f);
            CHECK(f[i] < 1.0f);
        }
        return a;
    };
    auto a = run(1), b = run(1), c = run(2);
    CHECK(a == b);
    CHECK(a != c);
}

TEST_CASE("TPC tensors: padding, dropped stores, negative coordinates, 1-5 dimensions, strides",
          "[emu][tpc][tensor]")
{
    const unsigned nd = GENERATE(1u, 2u, 3u, 4u, 5u);
    CAPTURE(nd);
    // out[c] = in[c + shift] + 1 along dimension 0, two vectors per member
    const char *src = R"(
.kernel shift
.tensors 2
.scalars 1
.index_dims 5
.tensor 0, f32
.tensor 1, f32
        ldarg s1, 0 ; iid i0
        imul i0, i0, 0, 128
        iadd i1, i0, 0, s1
        mov s0, 2
again:
        ld.t.f32 v0, t0, i1 ; iadd i1, i1, 0, 64
        vadd.f32 v1, v0, 1.0
        iadd i0, i0, 0, 64 ; st.t.f32 t1, i0, v1
        loop s0, again
        halt
)";
    Rig r;
    Space s(r, 2, false);
    uint32_t size[5] = {1, 1, 1, 1, 1};
    const uint32_t dims[5] = {100, 3, 2, 2, 3};
    for (unsigned d = 0; d < nd; d++) {
        size[d] = dims[d];
    }
    // input: strided (gaps of 3 elements in dim 0 rows padded), output dense
    // inside a larger buffer full of a sentinel
    TDesc in, out;
    in.dtype = out.dtype = HPU_TPC_DT_F32;
    in.ndims = out.ndims = static_cast<uint8_t>(nd);
    in.pad = f32_bits(7.0f);
    uint32_t ist = 1, ost = 1;
    for (unsigned d = 0; d < nd; d++) {
        in.size[d] = out.size[d] = size[d];
        in.stride[d] = d == 0 ? 2 : ist;
        ist = d == 0 ? 2 * size[0] + 3 : ist * size[d];
        out.stride[d] = ost;
        ost *= size[d];
    }
    uint64_t in_n = in.elems(), out_n = out.elems();
    in.base = s.alloc(4 * in_n);
    uint64_t buf = s.alloc(4 * (out_n + 512));
    out.base = buf + 4 * 256;
    std::vector<float> iv(in_n);
    for (uint64_t i = 0; i < in_n; i++) {
        iv[i] = static_cast<float>(i);
    }
    put_elems(s, in.base, iv);
    std::vector<uint32_t> sentinel(out_n + 512, 0xdeadbeefu);
    put_elems(s, buf, sentinel);
    const int shift = GENERATE(0, -10, 30);
    CAPTURE(shift);
    LaunchDesc ld;
    ld.index[0] = 1;
    for (unsigned d = 1; d < 5; d++) {
        ld.index[d] = size[d];
    }
    ld.scalars = {static_cast<uint32_t>(shift)};
    ld.tensors = {in, out};
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 2, TPC_E, 0).status ==
            HPU_CQ_OK);
    auto ov = get_elems<uint32_t>(s, buf, out_n + 512);
    for (uint64_t i = 0; i < 256; i++) {
        REQUIRE(ov[i] == 0xdeadbeefu);
        REQUIRE(ov[256 + out_n + i] == 0xdeadbeefu);
    }
    uint32_t c[5] = {};
    for (c[4] = 0; c[4] < size[4]; c[4]++)
        for (c[3] = 0; c[3] < size[3]; c[3]++)
            for (c[2] = 0; c[2] < size[2]; c[2]++)
                for (c[1] = 0; c[1] < size[1]; c[1]++)
                    for (c[0] = 0; c[0] < size[0]; c[0]++) {
                        uint64_t oo = 0, io = 0;
                        for (unsigned d = 0; d < 5; d++) {
                            oo += static_cast<uint64_t>(c[d]) * out.stride[d];
                            io += static_cast<uint64_t>(d ? c[d] : 0) * in.stride[d];
                        }
                        int64_t src0 = static_cast<int64_t>(c[0]) + shift;
                        float want = (src0 < 0 || src0 >= size[0])
                                         ? 8.0f
                                         : iv[io + static_cast<uint64_t>(src0) * 2] + 1.0f;
                        float got = bits_f32(ov[256 + oo]);
                        if (got != want) {
                            FAIL("at " << c[0] << "," << c[1] << "," << c[2] << "," << c[3]
                                       << "," << c[4] << ": " << got << " != " << want);
                        }
                    }
}

TEST_CASE("TPC tensors: stride 0 broadcasts, a lane guard loads and stores only its lanes",
          "[emu][tpc][tensor]")
{
    const char *src = R"(
.kernel guard
.tensors 3
.index_dims 1
.tensor 0, i16
.tensor 1, i16
.tensor 2, i16
        viota.i16 v0
        vcmp.lt.i16 vp1, v0, 50
        vmov.i16 v1, 99
        nop
        (vp1) ld.t.i16 v1, t0, i0
        ld.t.i16 v2, t1, i0
        vadd.i16 v3, v1, v2
        (!vp1) st.t.i16 t2, i0, v3
        halt
)";
    Rig r;
    Space s(r, 0, false);
    uint64_t a = s.alloc(2 * 128), b = s.alloc(2), d = s.alloc(2 * 128);
    std::vector<int16_t> av(128), bv = {-5}, dv(128, 1234);
    for (int i = 0; i < 128; i++) {
        av[static_cast<size_t>(i)] = static_cast<int16_t>(i * 3);
    }
    put_elems(s, a, av);
    put_elems(s, b, bv);
    put_elems(s, d, dv);
    TDesc tb = TDesc::dense(HPU_TPC_DT_I16, b, {128});
    tb.stride[0] = 0;
    LaunchDesc ld;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_I16, a, {128}), tb,
                  TDesc::dense(HPU_TPC_DT_I16, d, {128})};
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0).status ==
            HPU_CQ_OK);
    auto out = get_elems<int16_t>(s, d, 128);
    for (int i = 0; i < 128; i++) {
        int want = i < 50 ? 1234 : 99 - 5;
        CHECK(out[static_cast<size_t>(i)] == want);
    }
}

// ---- refusals -------------------------------------------------------------

namespace {

const char *const kTiny = R"(
.kernel tiny
.tensors 1
.scalars 2
.index_dims 2
.tensor 0, f32
        halt
)";

struct Refusal {
    const char *what;
    uint32_t rule;
    unsigned tensor;
    std::function<void(std::vector<uint8_t> &bin, LaunchDesc &ld)> edit;
};

void set32(std::vector<uint8_t> &b, unsigned off, uint32_t v) { std::memcpy(&b[off], &v, 4); }

} // namespace

TEST_CASE("TPC_LAUNCH refusals: each broken rule is BAD_LAUNCH with its code", "[emu][tpc][bad]")
{
    const std::vector<Refusal> cases = {
        {"magic", HPU_TPC_BL_DESC_MAGIC, 0, [](auto &, auto &ld) { ld.magic = 1; }},
        {"flags", HPU_TPC_BL_DESC_RESERVED, 0, [](auto &, auto &ld) { ld.flags = 1; }},
        {"reserved1", HPU_TPC_BL_DESC_RESERVED, 0, [](auto &, auto &ld) { ld.reserved1 = 1; }},
        {"unused scalar", HPU_TPC_BL_DESC_RESERVED, 0,
         [](auto &, auto &ld) { ld.extra_scalars = {0, 0, 0, 5}; }},
        {"binary alignment", HPU_TPC_BL_BIN_ADDR, 0, [](auto &, auto &ld) { ld.binary += 8; }},
        {"binary size small", HPU_TPC_BL_BIN_SIZE, 0,
         [](auto &, auto &ld) { ld.binary_size = 64; }},
        {"binary size big", HPU_TPC_BL_BIN_SIZE, 0,
         [](auto &, auto &ld) { ld.binary_size = HPU_TPC_MAX_BINARY + 64; }},
        {"binary magic", HPU_TPC_BL_BIN_MAGIC, 0, [](auto &b, auto &) { b[0] ^= 1; }},
        {"binary version", HPU_TPC_BL_BIN_VERSION, 0, [](auto &b, auto &) { b[4] = 2; }},
        {"total size", HPU_TPC_BL_BIN_SIZE, 0,
         [](auto &b, auto &) { set32(b, 8, static_cast<uint32_t>(b.size()) - 64); }},
        {"binary flags", HPU_TPC_BL_BIN_RESERVED, 0, [](auto &b, auto &) { b[12] = 1; }},
        {"code size", HPU_TPC_BL_BIN_CODE, 0, [](auto &b, auto &) { set32(b, 20, 128); }},
        {"entry", HPU_TPC_BL_BIN_ENTRY, 0, [](auto &b, auto &) { set32(b, 28, 1); }},
        {"index dims", HPU_TPC_BL_BIN_COUNTS, 0, [](auto &b, auto &) { b[34] = 6; }},
        {"slm", HPU_TPC_BL_BIN_LOCAL, 0, [](auto &b, auto &) { set32(b, 36, 6); }},
        {"dtype pin", HPU_TPC_BL_BIN_DTYPE, 0, [](auto &b, auto &) { b[64 + 3] = 1; }},
        {"name", HPU_TPC_BL_BIN_NAME, 0, [](auto &b, auto &) { b[80] = 0; }},
        {"meta", HPU_TPC_BL_BIN_META, 0, [](auto &b, auto &) { set32(b, 44, 200); }},
        {"tensor count", HPU_TPC_BL_ARG_COUNT, 0, [](auto &, auto &ld) { ld.num_tensors = 2; }},
        {"scalar count", HPU_TPC_BL_ARG_COUNT, 0,
         [](auto &, auto &ld) { ld.num_scalars = 1; ld.scalars = {1}; }},
        {"index size 0", HPU_TPC_BL_INDEX_SPACE, 0, [](auto &, auto &ld) { ld.index[1] = 0; }},
        {"index above dims", HPU_TPC_BL_INDEX_SPACE, 0,
         [](auto &, auto &ld) { ld.index[2] = 2; }},
        {"index space of 2^64 members (the product wrapped to 0)", HPU_TPC_BL_INDEX_SPACE, 0,
         [](auto &b, auto &ld) {
             b[34] = 3;
             ld.index[0] = ld.index[1] = 1u << 24;
             ld.index[2] = 1u << 16;
         }},
        {"index space of 2^64 + 2^48 members (wrapped to 2^48)", HPU_TPC_BL_INDEX_SPACE, 0,
         [](auto &b, auto &ld) {
             b[34] = 3;
             ld.index[0] = ld.index[1] = 1u << 24;
             ld.index[2] = (1u << 16) + 1;
         }},
        {"tensor dtype", HPU_TPC_BL_TENSOR_DTYPE, 0,
         [](auto &, auto &ld) { ld.tensors[0].dtype = HPU_TPC_DT_I32; }},
        {"tensor ndims", HPU_TPC_BL_TENSOR_SHAPE, 0,
         [](auto &, auto &ld) { ld.tensors[0].ndims = 0; }},
        {"tensor size", HPU_TPC_BL_TENSOR_SHAPE, 0,
         [](auto &, auto &ld) { ld.tensors[0].size[0] = 0; }},
        {"tensor align", HPU_TPC_BL_TENSOR_ALIGN, 0,
         [](auto &, auto &ld) { ld.tensors[0].base += 2; }},
        {"tensor range", HPU_TPC_BL_TENSOR_RANGE, 0,
         [](auto &, auto &ld) { ld.tensors[0].base = ~0ULL - 3; ld.tensors[0].size[0] = 2; }},
        {"tensor span past 2^64", HPU_TPC_BL_TENSOR_RANGE, 0,
         [](auto &b, auto &ld) {
             b[64] = 0; // tensor 0 unpinned: bytes
             TDesc &t = ld.tensors[0];
             t.dtype = HPU_TPC_DT_U8;
             t.ndims = 3;
             for (unsigned d = 0; d < 3; d++) {
                 t.size[d] = 0x7fffffffu;
                 t.stride[d] = 0xffffffffu;
             }
         }},
        // two rules broken: the first in tpc.md's order (the review's examples)
        {"code offset before reserved[4]", HPU_TPC_BL_BIN_CODE, 0,
         [](auto &b, auto &) { set32(b, 16, 0); b[112] = 1; }},
        {"meta offset before the name", HPU_TPC_BL_BIN_META, 0,
         [](auto &b, auto &) { set32(b, 44, 200); b[80] = 0; }},
        {"unused scalar before the counts", HPU_TPC_BL_DESC_RESERVED, 0,
         [](auto &, auto &ld) {
             ld.num_tensors = 17;
             ld.num_scalars = 0;
             ld.scalars.clear();
             ld.extra_scalars = {0, 0, 0, 1};
         }},
        {"tensor flags", HPU_TPC_BL_TENSOR_RESERVED, 0,
         [](auto &, auto &ld) { ld.tensors[0].flags = 1; }},
    };
    for (const auto &rc : cases) {
        CAPTURE(rc.what);
        Rig r;
        r.setup_eq();
        Space s(r, 4, false);
        auto bin = tpc_asm(kTiny);
        LaunchDesc ld;
        ld.binary = s.alloc(bin.size() + 64);
        ld.scalars = {1, 2};
        ld.tensors = {TDesc::dense(HPU_TPC_DT_F32, s.alloc(64), {16})};
        rc.edit(bin, ld);
        s.write(ld.binary & ~63ULL, bin.data(), bin.size());
        uint64_t desc = place_launch(s, bin, ld);
        Cqe c = r.run_cb(tpc_cb(desc), 4, TPC_E, 0);
        CHECK(c.status == HPU_CQ_BAD_LAUNCH);
        auto ev = all_events(r);
        REQUIRE(ev.size() == 1);
        CHECK(ev[0].id == HPU_EVENT_BAD_LAUNCH);
        CHECK(ev[0].engine == TPC_E);
        CHECK(ev[0].asid == 4u);
        CHECK(ev[0].addr == desc);
        CHECK(ev[0].info == HPU_TPC_BL_INFO(rc.rule, rc.tensor));
    }
}

TEST_CASE("TPC_LAUNCH out of host memory: BUS_ERROR with no event, never BAD_LAUNCH",
          "[emu][tpc][bad]")
{
    Rig r;
    r.setup_eq();
    Space s(r, 4, false);
    auto bin = tpc_asm(kTiny);
    LaunchDesc ld;
    ld.scalars = {1, 2};
    ld.index[0] = 3;
    ld.index[1] = 5; // members on several cores
    ld.tensors = {TDesc::dense(HPU_TPC_DT_F32, s.alloc(64), {16})};
    const uint64_t desc = place_launch(s, bin, ld);
    alloc_fail_at(0);
    REQUIRE(r.run_cb(tpc_cb(desc), 4, TPC_E, 0).status == HPU_CQ_OK);
    // the launch, the binary, the decoded code, its steps, the cores' state
    const unsigned long n = alloc_count();
    REQUIRE(n >= 8);
    for (unsigned long k = 1; k <= n; k++) {
        CAPTURE(k);
        const uint32_t events = r.rd(HPU_REG_EQ_PI);
        alloc_fail_at(k);
        const Cqe c = r.run_cb(tpc_cb(desc), 4, TPC_E, 0);
        alloc_fail_at(0);
        CHECK(c.status == HPU_CQ_BUS_ERROR);
        CHECK(r.rd(HPU_REG_EQ_PI) == events);
    }
    CHECK(r.run_cb(tpc_cb(desc), 4, TPC_E, 0).status == HPU_CQ_OK);
}

TEST_CASE("TPC_LAUNCH refusals: a tensor's rule names the tensor; a packet's fields",
          "[emu][tpc][bad]")
{
    const char *src = R"(
.kernel three
.tensors 3
.index_dims 1
        halt
)";
    Rig r;
    r.setup_eq();
    Space s(r, 0, false);
    uint64_t t = s.alloc(256);
    LaunchDesc ld;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_U8, t, {16}), TDesc::dense(HPU_TPC_DT_U8, t, {16}),
                  TDesc::dense(HPU_TPC_DT_U8, t, {16})};
    ld.tensors[2].pad = 0x100;
    uint64_t desc = place_launch(s, tpc_asm(src), ld);
    CHECK(r.run_cb(tpc_cb(desc), 0, TPC_E, 0).status == HPU_CQ_BAD_LAUNCH);
    CHECK(r.eqe(0).info == HPU_TPC_BL_INFO(HPU_TPC_BL_TENSOR_PAD, 2));
    // the packet: reserved word, descriptor alignment
    CHECK(r.run_cb(tpc_cb(desc, 1), 0, TPC_E, 0).status == HPU_CQ_BAD_PACKET);
    CHECK(r.run_cb(tpc_cb(desc + 32), 0, TPC_E, 0).status == HPU_CQ_BAD_LAUNCH);
    // a descriptor in unmapped memory of a context: MMU_FAULT, not BAD_LAUNCH
    Rig r2;
    r2.setup_eq();
    Space s2(r2, 5, false);
    Cqe c = r2.run_cb(tpc_cb(0x7000000000ULL), 5, TPC_E, 0);
    CHECK(c.status == HPU_CQ_MMU_FAULT);
    CHECK(r2.eqe(0).id == HPU_EVENT_MMU_FAULT);
    CHECK(r2.eqe(0).engine == TPC_E);
}

TEST_CASE("TPC_ILLEGAL: each reason, with the bundle's offset and the core", "[emu][tpc][illegal]")
{
    struct Ill {
        const char *what;
        unsigned reason;
        std::function<void(std::vector<uint8_t> &)> edit; // on bundle 1's bytes
        bool reached = true;
    };
    // bundle 0: nop; bundle 1: the edited one (a plain vmov first); bundle 2: halt
    const char *src = R"(
.kernel ill
.tensors 1
.scalars 1
.index_dims 1
.slm 16
.tensor 0, f32
        nop
        vmov.f32 v1, 0.0
        halt
)";
    auto put = [](std::vector<uint8_t> &b, unsigned slot, uint64_t lo, uint64_t hi) {
        std::memcpy(&b[128 + 64 + 16 * slot], &lo, 8);
        std::memcpy(&b[128 + 64 + 16 * slot + 8], &hi, 8);
    };
    const uint64_t vmov = 0x01 | HPU_TPC_PUT(TYPE, HPU_TPC_DT_F32) |
                          HPU_TPC_PUT(FORM, HPU_TPC_FORM_IMM) | HPU_TPC_PUT(D, 1);
    const std::vector<Ill> cases = {
        {"opcode", HPU_TPC_ILL_OPCODE, [&](auto &b) { put(b, 2, 0x3f, 0); }},
        {"unused field", HPU_TPC_ILL_FIELD, [&](auto &b) { put(b, 2, vmov | HPU_TPC_PUT(C, 1), 0); }},
        {"nop not zero", HPU_TPC_ILL_FIELD, [&](auto &b) { put(b, 0, 0, 1); }},
        {"lane guard", HPU_TPC_ILL_GUARD,
         [&](auto &b) { put(b, 1, 0x01 | HPU_TPC_PUT(GLANE, 1) | HPU_TPC_PUT(GREG, 1) |
                                      HPU_TPC_PUT(FORM, HPU_TPC_FORM_IMM), 0); }},
        {"conflict", HPU_TPC_ILL_CONFLICT,
         [&](auto &b) { put(b, 0, 0x04 | HPU_TPC_PUT(FORM, HPU_TPC_FORM_IMM) | HPU_TPC_PUT(D, 1), 0); }},
        {"tensor number", HPU_TPC_ILL_TENSOR,
         [&](auto &b) { put(b, 0, 0x01 | HPU_TPC_PUT(TYPE, HPU_TPC_DT_F32) | HPU_TPC_PUT(D, 2) |
                                      HPU_TPC_PUT(A, 1), 0); }},
        {"tensor type", HPU_TPC_ILL_TENSOR,
         [&](auto &b) { put(b, 0, 0x01 | HPU_TPC_PUT(TYPE, HPU_TPC_DT_I32) | HPU_TPC_PUT(D, 2), 0); }},
        {"ldarg", HPU_TPC_ILL_ARG,
         [&](auto &b) { put(b, 0, 0x05 | HPU_TPC_PUT(D, 2), 1); }},
        {"local", HPU_TPC_ILL_LOCAL,
         [&](auto &b) { put(b, 3, 0x03 | HPU_TPC_PUT(FORM, HPU_TPC_FORM_IMM), 16); }},
        {"pc range", HPU_TPC_ILL_PC_RANGE, [&](auto &b) { std::memset(&b[128 + 128], 0, 64); }},
    };
    for (const auto &ic : cases) {
        CAPTURE(ic.what);
        Rig r;
        r.setup_eq();
        Space s(r, 6, false);
        auto bin = tpc_asm(src);
        ic.edit(bin);
        LaunchDesc ld;
        ld.index[0] = 16;
        ld.scalars = {0};
        ld.tensors = {TDesc::dense(HPU_TPC_DT_F32, s.alloc(256), {64})};
        Cqe c = r.run_cb(tpc_cb(place_launch(s, bin, ld)), 6, TPC_E, 2);
        CHECK(c.status == HPU_CQ_TPC_ILLEGAL);
        auto ev = all_events(r);
        REQUIRE(ev.size() == 1);
        CHECK(ev[0].id == HPU_EVENT_TPC_ILLEGAL);
        CHECK(ev[0].engine == TPC_E);
        CHECK(ev[0].asid == 6u);
        CHECK(ev[0].addr == (ic.reason == HPU_TPC_ILL_PC_RANGE ? 192u : 64u));
        CHECK(ev[0].info >> 8 == ic.reason);
        CHECK((ev[0].info & 0xff) == 0u);    // core 0 reaches it first
    }
}

TEST_CASE("TPC: an illegal bundle never reached does no harm", "[emu][tpc][illegal]")
{
    const char *src = R"(
.kernel skip
.tensors 0
.index_dims 1
        jmp over
        nop
over:
        halt
)";
    Rig r;
    Space s(r, 0, false);
    auto bin = tpc_asm(src);
    uint64_t junk = 0xff;
    std::memcpy(&bin[128 + 64], &junk, 8);
    LaunchDesc ld;
    ld.index[0] = 9;
    CHECK(r.run_cb(tpc_cb(place_launch(s, bin, ld)), 0, TPC_E, 0).status == HPU_CQ_OK);
}

TEST_CASE("TPC_ASSERT reaches the event with its value and pc; nothing of its bundle is stored",
          "[emu][tpc][assert]")
{
    const char *src = R"(
.kernel chk
.tensors 1
.index_dims 1
.tensor 0, i32
        iid i0
        iget s1, i0, 0
        cmp.ne.i32 sp1, s1, 5
        mov s2, 1
        assert sp1, 0xc0ffee ; st.ts.i32 t0, i0, s2
        halt
)";
    Rig r;
    r.setup_eq();
    r.core.tpc_cores = 1;                        // members in order
    Space s(r, 7, false);
    uint64_t t = s.alloc(4 * 16);
    LaunchDesc ld;
    ld.index[0] = 16;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_I32, t, {16})};
    Cqe c = r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 7, TPC_E, 0);
    CHECK(c.status == HPU_CQ_TPC_ASSERT);
    auto ev = all_events(r);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].id == HPU_EVENT_TPC_ASSERT);
    CHECK(ev[0].engine == TPC_E);
    CHECK(ev[0].asid == 7u);
    CHECK(ev[0].addr == 4u * 64);
    CHECK(ev[0].info == 0xc0ffeeu);
    auto v = get_elems<int32_t>(s, t, 16);
    for (int i = 0; i < 16; i++) {
        CHECK(v[static_cast<size_t>(i)] == (i < 5 ? 1 : 0));
    }
}

TEST_CASE("TPC: an access outside the context's memory faults only that context",
          "[emu][tpc][mmu]")
{
    Rig r;
    r.setup_eq();
    const unsigned A = 5, B = 6;
    Space sa(r, A, false), sb(r, B, false);
    AddJob bad(sa, 4096, 1);
    // the output tensor of A runs past its mapping: unmap its last 2 MiB page
    LaunchDesc ld;
    ld.index[0] = 4;
    uint64_t out = sa.hbm_base + Space::WINDOW - 4096;   // 4 KiB before the hole
    ld.tensors = {TDesc::dense(HPU_TPC_DT_F32, bad.a, {4096}),
                  TDesc::dense(HPU_TPC_DT_F32, bad.b, {4096}),
                  TDesc::dense(HPU_TPC_DT_F32, out, {4096})};
    uint64_t desc = place_launch(sa, tpc_asm(kAdd), ld);
    AddJob good(sb, 4096, 2);
    r.setup_stream(TPC_E, 0);
    r.setup_stream(TPC_E, 1);
    r.submit(TPC_E, 0, tpc_cb(desc), A, 0x50);
    r.submit(TPC_E, 1, tpc_cb(good.desc), B, 0x51);
    r.run();
    CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_MMU_FAULT);
    CHECK(r.cqe(TPC_E, 1, 0).status == HPU_CQ_OK);
    CHECK(good.correct(sb));
    auto ev = all_events(r);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].id == HPU_EVENT_MMU_FAULT);
    CHECK(ev[0].engine == TPC_E);
    CHECK(ev[0].asid == A);
    CHECK(ev[0].addr >= sa.hbm_base + Space::WINDOW);
    uint32_t info = r.rd(HPU_REG_FAULT_INFO);
    CHECK((info & HPU_FAULT_ENGINE_MASK) >> 8 == TPC_E);
    CHECK((info & HPU_FAULT_WRITE) != 0u);
    // the stores before the hole stayed inside A's window
    auto head = get_elems<float>(sa, out, 1024);
    auto av = get_elems<float>(sa, bad.a, 1024), bv = get_elems<float>(sa, bad.b, 1024);
    for (size_t i = 0; i < 1024; i++) {
        CHECK(head[i] == av[i] + bv[i]);
    }
}

TEST_CASE("TPC: two contexts' launches on the engine stay isolated", "[emu][tpc][iso]")
{
    Rig r;
    Space sa(r, 8, false), sb(r, 9, true);
    AddJob ja(sa, 3000, 11), jb(sb, 2000, 12);
    r.setup_stream(TPC_E, 2);
    r.setup_stream(TPC_E, 3);
    r.submit(TPC_E, 2, tpc_cb(ja.desc), 8);
    r.submit(TPC_E, 3, tpc_cb(jb.desc), 9);
    r.run();
    CHECK(r.cqe(TPC_E, 2, 0).status == HPU_CQ_OK);
    CHECK(r.cqe(TPC_E, 3, 0).status == HPU_CQ_OK);
    CHECK(ja.correct(sa));
    CHECK(jb.correct(sb));
    // context 9's descriptor is not visible from context 8
    r.setup_eq();
    CHECK(r.run_cb(tpc_cb(jb.desc), 8, TPC_E, 2).status == HPU_CQ_MMU_FAULT);
}

// ---- MMU_INV during a launch --------------------------------------------------

namespace {

// An endless member: each iteration stores its number to tensor 0 (HBM, a
// 2 MiB page of its own) and the next number to tensor 1 (host memory, so
// that on_dma_write counts iterations).  Two bundles an iteration.
const char *const kSpin = R"(
.kernel spin
.tensors 2
.index_dims 1
.tensor 0, u32
.tensor 1, u32
again:
        vadd.u32 v0, v0, 1 ; st.t.u32 t0, i0, v0
        jmp again ; st.t.u32 t1, i0, v0
)";

// tpc.md "Precisions": a core sees a change within 1024 bundles of a member
constexpr uint64_t kSliceIters = 1024 / 2;

uint32_t lane0(const std::vector<uint8_t> &b)
{
    uint32_t v = 0;
    std::memcpy(&v, b.data(), 4);
    return v;
}

// A launch of kSpin on one core in context 5, its tensor 0 at VA va in
// HBM page OLD; NEW is another free 2 MiB page of HBM.
struct SpinLaunch {
    static constexpr unsigned A = 5;
    static constexpr uint64_t OLD = 160 * MiB, NEW = 192 * MiB;
    Rig &r;
    Space s, h;
    uint64_t va = 0, t1 = 0, t1_bus = 0, desc = 0;

    explicit SpinLaunch(Rig &rig) : r(rig), s(rig, A, false), h(rig, A, true)
    {
        r.core.tpc_cores = 1;
        std::vector<uint8_t> z(256);
        r.bwrite(OLD, z.data(), z.size());          // backed: stored in place
        r.bwrite(NEW, z.data(), z.size());
        va = r.map_hbm(A, OLD, HUGE_PG);
        t1 = h.alloc(256);
        REQUIRE(h.phys(t1, &t1_bus));
        LaunchDesc ld;
        ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, va, {64}),
                      TDesc::dense(HPU_TPC_DT_U32, t1, {64})};
        desc = place_launch(s, tpc_asm(kSpin), ld);
        r.setup_stream(TPC_E, 0);
    }
    bool busy() { return r.rd(HPU_REG_MMU_INV_STATUS) == HPU_MMU_INV_BUSY; }
    void stop() { r.wr(r.qreg(TPC_E, 0, HPU_QS_CTRL), 0); }
};

} // namespace

TEST_CASE("TPC: MMU_INV waits for at most one slice of a launch; no store lands through a "
          "translation made before it once it completes", "[emu][tpc][mmu][inv]")
{
    const bool unmap = GENERATE(false, true);
    CAPTURE(unmap);
    Rig r;
    r.setup_eq();
    SpinLaunch sl(r);
    const uint64_t n_inv = 100;
    uint64_t n = 0, n_clear = 0;
    bool busy_at_inv = false, stopped = false;
    std::vector<uint8_t> old_at_clear, old_later, new_later;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr != sl.t1_bus) {
            return;
        }
        n++;                        // iteration n - 1 stored n - 1 to tensor 0
        if (n == n_inv) {
            if (unmap) {
                r.bwrite64(r.pte_slot(SpinLaunch::A, sl.va, 2), 0);
            } else {
                r.map(SpinLaunch::A, sl.va, SpinLaunch::NEW, HPU_PTE_WRITE, true);
            }
            r.wr(HPU_REG_MMU_INV, SpinLaunch::A);
            busy_at_inv = sl.busy();
        } else if (n > n_inv && !n_clear && !sl.busy()) {
            n_clear = n;
            old_at_clear = r.bread(SpinLaunch::OLD, 256);
        } else if (n_clear && n == n_clear + 3 * kSliceIters) {
            old_later = r.bread(SpinLaunch::OLD, 256);
            new_later = r.bread(SpinLaunch::NEW, 256);
            sl.stop();
            stopped = true;
        }
        if (!stopped && n == n_inv + 20 * kSliceIters) {
            sl.stop();              // the kernel never ends by itself
            stopped = true;
        }
    };
    r.submit(TPC_E, 0, tpc_cb(sl.desc), SpinLaunch::A, 0x42);
    r.run();
    r.env.on_dma_write = nullptr;
    REQUIRE(r.cq_pi(TPC_E, 0) == 1u);
    // the invalidation waited for the core's slice, and for no more
    CHECK(busy_at_inv);
    CHECK_FALSE(sl.busy());
    CHECK(r.core.hbm.dir_stale == 0u);
    CHECK(r.core.hbm.dir_cur[SpinLaunch::A] == 0u);
    // the last store to the old page: within the slice of the invalidation
    const uint32_t old_last = lane0(r.bread(SpinLaunch::OLD, 256));
    CHECK(old_last < n_inv + kSliceIters);
    if (unmap) {
        // the first store after the slice faults at the unmapped address
        CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_MMU_FAULT);
        auto ev = all_events(r);
        REQUIRE(ev.size() == 1);
        CHECK(ev[0].id == HPU_EVENT_MMU_FAULT);
        CHECK(ev[0].asid == SpinLaunch::A);
        CHECK(ev[0].addr == sl.va);
        CHECK(n <= n_inv + kSliceIters + 1);
        CHECK(lane0(r.bread(SpinLaunch::NEW, 256)) == 0u);
        return;
    }
    CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_ABORTED);
    // BUSY cleared within one slice, while the kernel ran on
    REQUIRE(n_clear != 0u);
    CHECK(n_clear <= n_inv + kSliceIters + 1);
    // three slices later: nothing more in the old page, the stores in the new one
    REQUIRE(old_later.size() == 256u);
    CHECK(old_later == old_at_clear);
    CHECK(lane0(old_at_clear) == old_last);
    CHECK(lane0(new_later) == n_clear + 3 * kSliceIters - 1);
}

TEST_CASE("TPC: MMU_INV of another ASID does not wait for a launch; MMU_INV_ALL does",
          "[emu][tpc][mmu][inv]")
{
    Rig r;
    SpinLaunch sl(r);
    uint64_t n = 0, n_clear = 0;
    bool busy_other = true, busy_all = false;
    uint32_t alert = 0;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr != sl.t1_bus) {
            return;
        }
        n++;
        if (n == 10) {
            alert = r.core.job_alert;
            r.wr(HPU_REG_MMU_INV, SpinLaunch::A + 1);
            busy_other = sl.busy();
            CHECK(r.core.job_alert == alert);       // the cores' fast path stays
            r.wr(HPU_REG_MMU_INV, HPU_MMU_INV_ALL);
            busy_all = sl.busy();
        } else if (n > 10 && !n_clear && !sl.busy()) {
            n_clear = n;
            sl.stop();
        } else if (n == 10 + 20 * kSliceIters) {
            sl.stop();
        }
    };
    r.submit(TPC_E, 0, tpc_cb(sl.desc), SpinLaunch::A);
    r.run();
    r.env.on_dma_write = nullptr;
    CHECK_FALSE(busy_other);
    CHECK(busy_all);
    REQUIRE(n_clear != 0u);
    CHECK(n_clear <= 10 + kSliceIters + 1);
    CHECK(r.rd(HPU_REG_MMU_INV_COUNT) == 2u);
    CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_ABORTED);
    CHECK(r.core.hbm.dir_stale == 0u);
}

TEST_CASE("TPC: a core's slow path without an MMU_INV keeps its hold; the launch gives back "
          "exactly what it held", "[emu][tpc][mmu][inv]")
{
    // The slice renewal takes its slow path whenever job_alert moved: here
    // for another stream's disable, not for an invalidation. The hold must
    // stay (an MMU_INV then still waits for the slice) and go once at the
    // end (a hold let go twice wrapped the count, and every MMU_INV of the
    // context after the launch stayed BUSY: seen as TLB invalidation
    // timeouts in the VM suite's compute hang tests).
    Rig r;
    SpinLaunch sl(r);
    r.setup_stream(TPC_E, 1);
    uint64_t n = 0;
    bool busy_after_alert = false;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr != sl.t1_bus) {
            return;
        }
        n++;
        if (n == 10) {
            r.wr(r.qreg(TPC_E, 1, HPU_QS_CTRL), 0);   // moves job_alert
        } else if (n == 10 + 2 * kSliceIters) {
            CHECK(r.core.hbm.dir_cur[SpinLaunch::A] == 1u);
            r.wr(HPU_REG_MMU_INV, SpinLaunch::A);
            busy_after_alert = sl.busy();
        } else if (n == 10 + 6 * kSliceIters) {
            sl.stop();
        }
    };
    r.submit(TPC_E, 0, tpc_cb(sl.desc), SpinLaunch::A);
    r.run();
    r.env.on_dma_write = nullptr;
    CHECK(busy_after_alert);
    CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_ABORTED);
    CHECK(r.core.hbm.dir_cur[SpinLaunch::A] == 0u);
    CHECK(r.core.hbm.dir_stale == 0u);
    r.wr(HPU_REG_MMU_INV, SpinLaunch::A);
    CHECK_FALSE(sl.busy());
}

// ---- threads: the watchdog, stream disable, a soft reset -------------------

namespace {

DevOpts th_dev()
{
    return thread_dev(512 * MiB);
}

} // namespace

TEST_CASE("TPC on worker threads: the add is right with 8 threads", "[emu][tpc][threads]")
{
    Rig r(th_dev());
    Space s(r, 3, false);
    AddJob job(s, 100000, 5);
    Cqe c = r.run_cb(tpc_cb(job.desc), 3, TPC_E, 0);
    CHECK(c.status == HPU_CQ_OK);
    CHECK(job.correct(s));
}

TEST_CASE("TPC: an endless kernel is hung by the watchdog, abandoned when its stream is "
          "disabled, and the engine works afterwards", "[emu][tpc][wdt][threads]")
{
    const char *src = R"(
.kernel forever
.tensors 1
.index_dims 1
.tensor 0, f32
        iid i0
again:
        vadd.f32 v0, v0, 1.0 ; st.t.f32 t0, i0, v0
        jmp again
)";
    Rig r(th_dev());
    r.setup_eq();
    Space s(r, 4, false);
    uint64_t t = s.alloc(4 * 64 * 8);
    LaunchDesc ld;
    ld.index[0] = 8;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_F32, t, {64 * 8})};
    uint64_t desc = place_launch(s, tpc_asm(src), ld);
    AddJob after(s, 5000, 3);
    r.setup_stream(TPC_E, 0);
    r.setup_stream(TPC_E, 1);
    r.wr(HPU_REG_WDT_MS, 5);
    r.submit(TPC_E, 0, tpc_cb(desc), 4, 0x77);
    std::atomic<bool> done{false};
    std::thread eng([&] {
        while (!done) {
            bool more = hpum_core_engine_step(&r.core, TPC_E);
            if (!more) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
    });
    // the kernel has begun storing
    for (int i = 0; i < 10000; i++) {
        float f = get_elems<float>(s, t, 1)[0];
        if (f > 0) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    r.advance(6 * MS);
    uint32_t st = r.status(TPC_E, 0);
    CHECK((st & HPU_QS_STATUS_HUNG) != 0u);
    r.wr(r.qreg(TPC_E, 0, HPU_QS_CTRL), 0);
    r.submit(TPC_E, 1, tpc_cb(after.desc), 4, 0x78);
    for (int i = 0; i < 20000 && r.cq_pi(TPC_E, 1) == 0; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    done = true;
    eng.join();
    REQUIRE(r.cq_pi(TPC_E, 0) == 1u);
    CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_ABORTED);
    CHECK(r.cqe(TPC_E, 0, 0).seq == 0x77u);
    REQUIRE(r.cq_pi(TPC_E, 1) == 1u);
    CHECK(r.cqe(TPC_E, 1, 0).status == HPU_CQ_OK);
    CHECK(after.correct(s));
    auto ev = all_events(r);
    REQUIRE_FALSE(ev.empty());
    CHECK(ev[0].id == HPU_EVENT_ENGINE_HANG);
    CHECK(ev[0].engine == TPC_E);
    CHECK(r.rd(HPU_REG_RESET_COUNT) == 0u);
}

TEST_CASE("TPC: a soft reset stops an endless kernel; nothing is stored after it",
          "[emu][tpc][reset][threads]")
{
    const char *src = R"(
.kernel forever
.tensors 1
.index_dims 1
.tensor 0, u32
        iid i0
again:
        vadd.u32 v0, v0, 1 ; st.t.u32 t0, i0, v0
        jmp again
)";
    Rig r(th_dev());
    Space s(r, 0, false);
    uint64_t t = s.alloc(4 * 64 * 8);
    LaunchDesc ld;
    ld.index[0] = 8;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, t, {64 * 8})};
    uint64_t desc = place_launch(s, tpc_asm(src), ld);
    r.setup_stream(TPC_E, 0);
    r.submit(TPC_E, 0, tpc_cb(desc), 0, 0x99);
    std::thread eng([&] {
        while (hpum_core_engine_step(&r.core, TPC_E)) {
        }
    });
    for (int i = 0; i < 10000; i++) {
        if (get_elems<uint32_t>(s, t, 1)[0] > 100) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    eng.join();
    auto v1 = get_elems<uint32_t>(s, t, 64 * 8);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto v2 = get_elems<uint32_t>(s, t, 64 * 8);
    CHECK(v1 == v2);
    CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_ABORTED);
    r.advance(HPU_SOFT_RESET_NS);
    CHECK(r.rd(HPU_REG_STATUS) == HPU_STATUS_READY);
}

// ---- a fault on one core after the launch failed on another -------------------

TEST_CASE("TPC: a core that faults after another core failed the launch latches nothing",
          "[emu][tpc][mmu][threads]")
{
    // Member 0 loads, then asserts; member 1 loads and stores to an
    // unmapped address in the same bundle (its guard keeps member 0 from
    // storing).  The host reads are held so that member 1's store comes
    // after member 0's assert, on another core.
    const char *src = R"(
.kernel late
.tensors 2
.index_dims 1
.tensor 0, u32
.tensor 1, u32
        iid i0
        iget s0, i0, 0
        cmp.ne.u32 sp1, s0, 0
        ld.t.u32 v0, t0, i0 ; (sp1) st.t.u32 t1, i0, v1
        assert sp1, 0xbad
        halt
)";
    Rig r(th_dev());
    r.setup_eq();
    r.core.tpc_cores = 2;                           // member 0 and member 1 on cores of their own
    struct {
        std::mutex m;
        std::condition_variable cv;
        bool asserted = false;                      // member 0's assert is recorded
        bool reading = false;                       // member 1 is in its host read
    } w;
    r.env.on_log = [&](const char *msg) {           // under the lock that records it
        if (std::strstr(msg, "assert failed")) {
            std::lock_guard<std::mutex> g(w.m);
            w.asserted = true;
            w.cv.notify_all();
        }
    };
    const unsigned A = 6;
    Space s(r, A, false), h(r, A, true);
    uint64_t t0 = h.alloc(4ULL * 128), t0_bus = 0;
    REQUIRE(h.phys(t0, &t0_bus));
    LaunchDesc ld;
    ld.index[0] = 2;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, t0, {128}),
                  TDesc::dense(HPU_TPC_DT_U32, s.hbm_base + Space::WINDOW, {128})};
    uint64_t desc = place_launch(s, tpc_asm(src), ld);
    std::atomic<bool> timed_out{false};
    r.env.on_dma_read = [&](uint64_t addr) {
        std::unique_lock<std::mutex> g(w.m);
        if (addr == t0_bus) {                       // member 0: after member 1 is in its read
            if (!w.cv.wait_for(g, std::chrono::seconds(30), [&] { return w.reading; })) {
                timed_out = true;
            }
        } else if (addr == t0_bus + 4) {            // member 1: after member 0's assert
            w.reading = true;
            w.cv.notify_all();
            if (!w.cv.wait_for(g, std::chrono::seconds(30), [&] { return w.asserted; })) {
                timed_out = true;
            }
        }
    };
    Cqe c = r.run_cb(tpc_cb(desc), A, TPC_E, 0);
    r.env.on_dma_read = nullptr;
    r.env.on_log = nullptr;
    CHECK_FALSE(timed_out);
    CHECK(c.status == HPU_CQ_TPC_ASSERT);
    auto ev = all_events(r);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].id == HPU_EVENT_TPC_ASSERT);
    // member 1's store was not translated: no fault counted or latched
    CHECK(r.rd(HPU_REG_FAULT_COUNT) == 0u);
    CHECK((r.rd(HPU_REG_FAULT_INFO) & HPU_FAULT_VALID) == 0u);
}

// ---- throughput --------------------------------------------------------------

TEST_CASE("TPC bench: elementwise add of 64 MiB tensors against memcpy", "[emu][tpc][bench]")
{
    // Not a timing assertion: the bytes per second are printed for `make
    // bench`; the test checks the result.
    DevOpts o = th_dev();
    o.hbm = 1ULL << 30;
    Rig r(o);
    const uint32_t n = 16u << 20;                   // 64 MiB of f32
    const uint64_t a = 64 * MiB, b = 192 * MiB, d = 320 * MiB;
    std::vector<float> x(n, 1.5f), y(n, 2.25f);
    r.bwrite(a, x.data(), 4ull * n);
    r.bwrite(b, y.data(), 4ull * n);
    std::vector<uint8_t> zero(4ull * n);
    r.bwrite(d, zero.data(), zero.size());           // backed, like a and b
    Space s(r, 0, false);
    LaunchDesc ld;
    ld.index[0] = n / 1024;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_F32, a, {n}), TDesc::dense(HPU_TPC_DT_F32, b, {n}),
                  TDesc::dense(HPU_TPC_DT_F32, d, {n})};
    uint64_t desc = place_launch(s, tpc_asm(kAdd), ld);
    auto t0 = std::chrono::steady_clock::now();
    Cqe c = r.run_cb(tpc_cb(desc), 0, TPC_E, 0);
    auto t1 = std::chrono::steady_clock::now();
    REQUIRE(c.status == HPU_CQ_OK);
    auto out = r.bread(d, 4ull * n);
    std::vector<float> ov(n);
    std::memcpy(ov.data(), out.data(), out.size());
    CHECK(std::all_of(ov.begin(), ov.end(), [](float f) { return f == 3.75f; }));
    auto m0 = std::chrono::steady_clock::now();
    std::memcpy(ov.data(), x.data(), 4ull * n);
    auto m1 = std::chrono::steady_clock::now();
    double tpc_s = std::chrono::duration<double>(t1 - t0).count();
    double cpy_s = std::chrono::duration<double>(m1 - m0).count();
    double tpc_bw = 3.0 * 4 * n / tpc_s, cpy_bw = 2.0 * 4 * n / cpy_s;
    WARN("TPC add 64 MiB: " << tpc_bw / 1e9 << " GB/s moved (3 x 64 MiB), host memcpy "
                            << cpy_bw / 1e9 << " GB/s (2 x 64 MiB), ratio " << tpc_bw / cpy_bw);
}

TEST_CASE("TPC: a power-on reset at a launch's first store: the member in flight completes, "
          "nothing after it", "[emu][tpc][reset]")
{
    const bool disable = GENERATE(false, true);
    CAPTURE(disable);
    Rig r;
    Space s(r, 0, true);                            // output in host memory: hooks see it
    AddJob job(s, 8 * 1024, 4);                     // 8 members of 16 vectors
    r.setup_stream(TPC_E, 0);
    const uint64_t d_bus = job.d & ~HPU_ADDR_HOST;
    unsigned writes = 0;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr >= d_bus && addr < d_bus + 4ull * job.n && ++writes == 1) {
            if (disable) {
                r.wr(r.qreg(TPC_E, 0, HPU_QS_CTRL), 0);
            } else {
                hpum_core_reset(&r.core);
            }
        }
    };
    r.submit(TPC_E, 0, tpc_cb(job.desc));
    r.run();
    r.env.on_dma_write = nullptr;
    // the first member's 16 vector stores (one slice), nothing of the others
    CHECK(writes == 16u);
    auto out = get_elems<float>(s, job.d, job.n);
    CHECK(std::all_of(out.begin() + 1024, out.end(), [](float f) { return f == 0.0f; }));
    if (disable) {
        REQUIRE(r.cq_pi(TPC_E, 0) == 1u);
        CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_ABORTED);
    } else {
        CHECK(r.cq_pi(TPC_E, 0) == 0u);
        r.bh();
        CHECK_FALSE(hpum_core_in_reset(&r.core));
    }
}
