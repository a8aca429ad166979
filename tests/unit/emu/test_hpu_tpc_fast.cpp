// SPDX-License-Identifier: MIT
//
// The TPC interpreter's fast paths (Documentation/hw/device-model.md, "TPC
// implementation") at their edges: they must compute exactly what the
// general paths compute.  Whole vectors copied through a tensor's cached run
// and its HBM chunk: vectors across 4 KiB pages that are not contiguous,
// across 2 MiB chunks, a partial last vector, a fault inside a vector,
// stores into a page poisoned during the launch, a chunk first written by
// the launch; bundles run in place: a slot reading what another of its
// bundle writes still sees the old value; f32 arithmetic on the host's
// AVX2/FMA gives the bits the portable code gives; a member is still the
// unit of INJ_HANG and of the watchdog's progress.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "hpu_tpc_rig.hpp"

#include <cmath>

using namespace hpu_test;

namespace {

constexpr unsigned CTX = 7;

// One member adds @vecs vectors of t0 and t1 into t2, stride-1 f32
// tensors, every access a whole-vector fast path when it can be.
std::string add_kernel(unsigned vecs)
{
    return ".kernel add_f32\n.tensors 3\n.index_dims 1\n"
           ".tensor 0, f32\n.tensor 1, f32\n.tensor 2, f32\n"
           "        iid i0\n"
           "        imul i0, i0, 0, " + std::to_string(64 * vecs) + "\n"
           "        mov s0, " + std::to_string(vecs) + "\n"
           "next:\n"
           "        ld.t.f32 v0, t0, i0\n"
           "        ld.t.f32 v1, t1, i0\n"
           "        vadd.f32 v2, v0, v1\n"
           "        iadd i0, i0, 0, 64 ; st.t.f32 t2, i0, v2\n"
           "        loop s0, next\n"
           "        halt\n";
}

std::vector<uint8_t> f32_bytes(const std::vector<float> &v)
{
    std::vector<uint8_t> b(4 * v.size());
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

std::vector<float> f32_of(const std::vector<uint8_t> &b)
{
    std::vector<float> v(b.size() / 4);
    std::memcpy(v.data(), b.data(), b.size());
    return v;
}

// Tensors in HBM mapped in CTX with 4 KiB pages: VA page i of a tensor
// maps HBM page @phys[i] (any order; a page ~0 is left unmapped).
struct Paged {
    Rig &r;
    uint64_t va_next = 0x2000000000ULL;

    explicit Paged(Rig &rig) : r(rig) {}
    // The VA of a tensor @skew bytes into the first of @phys's pages.
    uint64_t map(const std::vector<uint64_t> &phys, uint64_t skew)
    {
        uint64_t va = va_next;
        for (size_t i = 0; i < phys.size(); i++) {
            if (phys[i] != ~0ULL) {
                r.map(CTX, va + i * PG, phys[i], HPU_PTE_WRITE);
            }
        }
        va_next += (phys.size() + 16) * PG;
        return va + skew;
    }
    // Bytes at @va of a tensor mapped by @phys at @base (skew included).
    static uint64_t phys_of(const std::vector<uint64_t> &phys, uint64_t base, uint64_t va)
    {
        uint64_t rel = va - (base & ~(PG - 1));
        return phys[rel / PG] + rel % PG;
    }
    void put(const std::vector<uint64_t> &phys, uint64_t base, const std::vector<float> &v)
    {
        auto b = f32_bytes(v);
        for (size_t i = 0; i < b.size(); i++) {
            r.bwrite(phys_of(phys, base, base + i), &b[i], 1);
        }
    }
    std::vector<float> get(const std::vector<uint64_t> &phys, uint64_t base, size_t n)
    {
        std::vector<uint8_t> b(4 * n);
        for (size_t i = 0; i < b.size(); i++) {
            b[i] = r.bread(phys_of(phys, base, base + i), 1)[0];
        }
        return f32_of(b);
    }
};

// Place the binary and descriptor in host memory mapped in CTX.
uint64_t place_ctx(Rig &r, const std::string &src, const LaunchDesc &ld)
{
    Space s(r, CTX, true);
    return place_launch(s, tpc_asm(src), ld);
}

TDesc f32_vec(uint64_t base, uint32_t n, uint32_t pad = 0)
{
    return TDesc::dense(HPU_TPC_DT_F32, base, {n}, pad);
}

} // namespace

TEST_CASE("TPC fast paths: vectors across 4 KiB pages that are not contiguous, loads and stores",
          "[emu][tpc][fast]")
{
    Rig r;
    Paged pg(r);
    // 5 pages each, in reverse order of HBM pages and interleaved: no two
    // neighbouring VA pages are neighbours in HBM; the tensors start 128
    // bytes into a page, so every 16th vector straddles two pages
    auto pages = [](uint64_t first) {
        std::vector<uint64_t> p;
        for (uint64_t i = 0; i < 5; i++) {
            p.push_back(64 * MiB + (first + 3 * (4 - i)) * PG);
        }
        return p;
    };
    const auto pa = pages(0), pb = pages(1), pd = pages(2);
    const uint32_t n = 4 * 1024;                    // 4 members of 16 vectors
    const uint64_t a = pg.map(pa, 128), b = pg.map(pb, 128), d = pg.map(pd, 128);
    const auto av = values(n, 31, false), bv = values(n, 32, false);
    pg.put(pa, a, av);
    pg.put(pb, b, bv);
    LaunchDesc ld;
    ld.index[0] = 4;
    ld.tensors = {f32_vec(a, n), f32_vec(b, n), f32_vec(d, n)};
    REQUIRE(r.run_cb(tpc_cb(place_ctx(r, add_kernel(16), ld)), CTX, TPC_E, 0).status ==
            HPU_CQ_OK);
    auto dv = pg.get(pd, d, n);
    for (uint32_t i = 0; i < n; i++) {
        INFO("element " << i);
        REQUIRE(f32_bits(dv[i]) == f32_bits(av[i] + bv[i]));
    }
}

TEST_CASE("TPC fast paths: vectors across 2 MiB HBM chunks and host pages", "[emu][tpc][fast]")
{
    const bool host = GENERATE(false, true);
    CAPTURE(host);
    Rig r;
    Space s(r, CTX, host);
    // HBM: 8 KiB before a 2 MiB chunk's end plus 128 bytes, so that a
    // vector straddles the two chunks of one contiguous run; host memory:
    // contiguous 4 KiB pages at a skew of 128 bytes
    const uint32_t n = 8 * 1024;
    uint64_t a, b, d;
    if (host) {
        a = s.alloc(4 * n, 128);
        b = s.alloc(4 * n, 128);
        d = s.alloc(4 * n, 128);
    } else {
        s.alloc(2 * MiB - 8 * 1024 - 4 * n - 128);   // t0 ends before the chunk
        a = s.alloc(4 * n);
        b = s.hbm_base + 4 * MiB - 8 * 1024 - 128;
        d = s.hbm_base + 6 * MiB - 8 * 1024 - 128;
    }
    const auto av = values(n, 41, false), bv = values(n, 42, false);
    put_elems(s, a, av);
    put_elems(s, b, bv);
    put_elems(s, d, std::vector<float>(n, 0.0f));
    LaunchDesc ld;
    ld.index[0] = 8;
    ld.tensors = {f32_vec(a, n), f32_vec(b, n), f32_vec(d, n)};
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(add_kernel(16)), ld)), CTX, TPC_E, 0)
                .status == HPU_CQ_OK);
    auto dv = get_elems<float>(s, d, n);
    for (uint32_t i = 0; i < n; i++) {
        INFO("element " << i);
        REQUIRE(f32_bits(dv[i]) == f32_bits(av[i] + bv[i]));
    }
}

TEST_CASE("TPC fast paths: the last member's partial vector pads its loads and drops its stores",
          "[emu][tpc][fast]")
{
    Rig r;
    Space s(r, CTX, false);
    const uint32_t n = 3000, room = 3 * 1024;       // 2 whole members, 952 elements
    const uint64_t a = s.alloc(4 * room), b = s.alloc(4 * room), d = s.alloc(4 * room);
    const auto av = values(room, 51, false), bv = values(room, 52, false);
    put_elems(s, a, av);
    put_elems(s, b, bv);
    put_elems(s, d, std::vector<float>(room, 7.0f));
    // the pads, summed by the lanes past the end, would be 3.0: never seen
    LaunchDesc ld;
    ld.index[0] = 3;
    ld.tensors = {f32_vec(a, n, f32_bits(1.0f)), f32_vec(b, n, f32_bits(2.0f)), f32_vec(d, n)};
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(add_kernel(16)), ld)), CTX, TPC_E, 0)
                .status == HPU_CQ_OK);
    auto dv = get_elems<float>(s, d, room);
    for (uint32_t i = 0; i < room; i++) {
        INFO("element " << i);
        REQUIRE(f32_bits(dv[i]) == f32_bits(i < n ? av[i] + bv[i] : 7.0f));
    }
}

TEST_CASE("TPC fast paths: a fault inside a vector is raised at its first unmapped byte, "
          "after the vectors before it", "[emu][tpc][fast][mmu]")
{
    const bool in_store = GENERATE(false, true);
    CAPTURE(in_store);
    Rig r;
    r.setup_eq();
    Paged pg(r);
    // one member of 32 vectors; the faulting tensor has its second page
    // unmapped and starts 128 bytes into the first: vector 15 straddles
    // into the hole
    const uint32_t n = 32 * 64;
    const std::vector<uint64_t> good_a = {64 * MiB, 64 * MiB + PG, 64 * MiB + 2 * PG};
    const std::vector<uint64_t> good_d = {65 * MiB, 65 * MiB + PG, 65 * MiB + 2 * PG};
    const std::vector<uint64_t> holed = {66 * MiB, ~0ULL, 66 * MiB + 2 * PG};
    const std::vector<uint64_t> pb = {67 * MiB, 67 * MiB + PG, 67 * MiB + 2 * PG};
    const auto &pa = in_store ? good_a : holed;
    const auto &pd = in_store ? holed : good_d;
    const uint64_t a = pg.map(pa, 128), b = pg.map(pb, 128), d = pg.map(pd, 128);
    const auto av = values(n, 61, false), bv = values(n, 62, false);
    if (!in_store) {
        pg.put(pa, a, std::vector<float>(av.begin(), av.begin() + 15 * 64 + 32));
    } else {
        pg.put(pa, a, av);
    }
    pg.put(pb, b, bv);
    LaunchDesc ld;
    ld.tensors = {f32_vec(a, n), f32_vec(b, n), f32_vec(d, n)};
    r.setup_stream(TPC_E, 0);
    REQUIRE(r.run_cb(tpc_cb(place_ctx(r, add_kernel(32), ld)), CTX, TPC_E, 0).status ==
            HPU_CQ_MMU_FAULT);
    const uint64_t hole = ((in_store ? d : a) & ~(PG - 1)) + PG;
    auto ev = r.eqe(0);
    CHECK(ev.id == HPU_EVENT_MMU_FAULT);
    CHECK(ev.asid == CTX);
    CHECK(ev.addr == hole);
    const uint32_t info = r.rd(HPU_REG_FAULT_INFO);
    CHECK((info & HPU_FAULT_ENGINE_MASK) >> 8 == TPC_E);
    CHECK(((info & HPU_FAULT_WRITE) != 0) == in_store);
    CHECK((uint64_t{r.rd(HPU_REG_FAULT_VA_HI)} << 32 | r.rd(HPU_REG_FAULT_VA_LO)) == hole);
    // the 15 vectors before it were stored
    auto dv = pg.get(pd, d, 15 * 64);
    for (uint32_t i = 0; i < 15 * 64; i++) {
        INFO("element " << i);
        REQUIRE(f32_bits(dv[i]) == f32_bits(av[i] + bv[i]));
    }
}

TEST_CASE("TPC fast paths: stores into a page poisoned during the launch are dropped, "
          "the others made", "[emu][tpc][fast][ecc]")
{
    Rig r;
    Space hs(r, CTX, true), s(r, CTX, false);
    // t0 in host memory, so that a read of member 2 can poison the HBM page
    // of the output meanwhile; one core, members in order
    r.core.tpc_cores = 1;
    const uint32_t n = 4 * 1024;
    // d alone in its 2 MiB page (b's reads would fail ECC when translated)
    const uint64_t a = hs.alloc(4 * n), b = s.alloc(4 * n), d = s.hbm_base + 8 * MiB;
    const auto av = values(n, 71, false), bv = values(n, 72, false);
    put_elems(hs, a, av);
    put_elems(s, b, bv);
    put_elems(s, d, std::vector<float>(n, 7.0f));
    uint64_t a_bus = 0, d_off = 0;
    REQUIRE(hs.phys(a, &a_bus));
    REQUIRE_FALSE(s.phys(d, &d_off));
    bool poisoned = false;
    r.env.on_dma_read = [&](uint64_t addr) {
        if (!poisoned && addr == a_bus + 4 * 2048) {
            poisoned = true;
            r.wr(HPU_REG_INJ_ECC_ADDR_LO, static_cast<uint32_t>(d_off));
            r.wr(HPU_REG_INJ_ECC_ADDR_HI, static_cast<uint32_t>(d_off >> 32));
            r.wr(HPU_REG_INJ_ECC_CTRL, HPU_INJ_ECC_UE);
        }
    };
    LaunchDesc ld;
    ld.index[0] = 4;
    ld.tensors = {f32_vec(a, n), f32_vec(b, n), f32_vec(d, n)};
    Cqe c = r.run_cb(tpc_cb(place_launch(hs, tpc_asm(add_kernel(16)), ld)), CTX, TPC_E, 0);
    r.env.on_dma_read = nullptr;
    CHECK(poisoned);
    CHECK(c.status == HPU_CQ_OK);
    auto dv = f32_of(r.bread(d_off, 4 * n));
    for (uint32_t i = 0; i < n; i++) {
        INFO("element " << i);
        REQUIRE(f32_bits(dv[i]) == f32_bits(i < 2048 ? av[i] + bv[i] : 7.0f));
    }
}

TEST_CASE("TPC fast paths: a chunk first written by the launch is read back by it",
          "[emu][tpc][fast]")
{
    const char *src = R"(
.kernel back
.tensors 2
.index_dims 1
        iid i0
        ld.t.u32 v0, t0, i0
        viota.u32 v1
        vadd.u32 v1, v1, 100
        st.t.u32 t0, i0, v1
        ld.t.u32 v2, t0, i0
        vadd.u32 v3, v0, v2
        st.t.u32 t1, i0, v3
        halt
)";
    Rig r;
    Space s(r, CTX, false);
    const uint64_t fresh = s.hbm_base + 80 * MiB;   // never written: not backed
    const uint64_t out = s.alloc(256);
    LaunchDesc ld;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, fresh, {64}),
                  TDesc::dense(HPU_TPC_DT_U32, out, {64})};
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), CTX, TPC_E, 0).status ==
            HPU_CQ_OK);
    auto o = get_elems<uint32_t>(s, out, 64), f = get_elems<uint32_t>(s, fresh, 64);
    for (uint32_t l = 0; l < 64; l++) {
        CHECK(o[l] == 100 + l);                     // 0 read first, then the store
        CHECK(f[l] == 100 + l);
    }
}

TEST_CASE("TPC bundles run in place: a slot reading what another slot of its bundle writes "
          "sees the value from before the bundle", "[emu][tpc][fast]")
{
    // A = t0's lanes 0-63, B = lanes 64-127; output k is t1's lanes 64k..
    const char *src = R"(
.kernel order
.tensors 2
.index_dims 1
        iset i2, i2, 0, 64
        ld.t.u32 v0, t0, i0 ; mov s1, 5
        ld.t.u32 v0, t0, i2 ; vadd.u32 v1, v0, v0
        mov s1, 7 ; vadd.u32 v2, v0, s1
        st.t.u32 t1, i1, v1
        iset i1, i1, 0, 64
        ld.t.u32 v1, t0, i0 ; st.t.u32 t1, i1, v1
        iset i1, i1, 0, 128
        iadd i1, i1, 0, 64 ; st.t.u32 t1, i1, v2
        ld.ts.u32 s2, t0, i0 ; add.u32 s3, s2, 1
        cmp.eq.u32 sp1, s3, 1 ; vmov.u32 v3, s3
        st.t.u32 t1, i1, v3
        iset i1, i1, 0, 256
        pset sp1, 0 ; (sp1) vmov.u32 v3, 0xbad
        st.t.u32 t1, i1, v3
        iset i1, i1, 0, 320
        vpset vp1, sp0
        (vp1) ld.t.u32 v4, t0, i2 ; vadd.u32 v5, v4, 1
        st.t.u32 t1, i1, v5
        iset i1, i1, 0, 384
        st.t.u32 t1, i1, v4
        halt
)";
    Rig r;
    Space s(r, 0, false);
    std::vector<uint32_t> in(128);
    for (uint32_t i = 0; i < 128; i++) {
        in[i] = 1000 + i;
    }
    const uint64_t t0 = s.alloc(512), t1 = s.alloc(7 * 256);
    put_elems(s, t0, in);
    LaunchDesc ld;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, t0, {128}),
                  TDesc::dense(HPU_TPC_DT_U32, t1, {7 * 64})};
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0).status ==
            HPU_CQ_OK);
    auto o = get_elems<uint32_t>(s, t1, 7 * 64);
    for (uint32_t l = 0; l < 64; l++) {
        const uint32_t A = 1000 + l, B = 1064 + l;
        INFO("lane " << l);
        CHECK(o[l] == 2 * A);                       // vadd read v0 before the load wrote it
        CHECK(o[64 + l] == 2 * A);                  // the store read v1 before the load
        CHECK(o[128 + l] == B + 5);                 // vadd read s1 before mov; st.t i1 before iadd
        CHECK(o[192 + l] == 1u);                    // add read s2 before ld.ts wrote it
        CHECK(o[256 + l] == 0xbadu);                // the guard read sp1 before pset
        CHECK(o[320 + l] == 1u);                    // vadd read v4 before the guarded load
        CHECK(o[384 + l] == B);
    }
}

TEST_CASE("TPC fast paths: f32 arithmetic on the host's AVX2 and FMA gives the portable code's "
          "bits", "[emu][tpc][fast][isa]")
{
    const char *ops[] = {"vadd.f32 v3, v0, v1",  "vsub.f32 v3, v0, v1", "vmul.f32 v3, v0, v1",
                         "vdiv.f32 v3, v0, v1",  "vmov.f32 v3, v2\n        vmac.f32 v3, v0, v1",
                         "vfma.f32 v3, v0, v1, v2", "vsqrt.f32 v3, v0", "vrsqrt.f32 v3, v0",
                         "vmin.f32 v3, v0, v1",  "vmax.f32 v3, v0, v1", "vexp.f32 v3, v0",
                         "vadd.f32 v3, v0, s5",  "vmul.f32 v3, v0, -0.0",
                         "vmov.f32 v3, v2\n        vmac.f32 v3, v0, s5", "vdiv.f32 v3, v0, 3.0",
                         "vsigmoid.f32 v3, v0"};
    std::vector<float> x(3 * 64);
    const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-40f, -1e-40f,
                        3.4e38f, -3.4e38f, 1.0f, -1.0f, 1e-30f, -2.5f, 16777217.0f, 0.1f};
    uint32_t seed = 1;
    for (size_t i = 0; i < x.size(); i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = i % 3 ? sp[(seed >> 8) % 16]
                     : std::ldexp(static_cast<float>(seed >> 9) - 4194304.0f, static_cast<int>(seed % 40) - 30);
    }
    for (uint32_t i = 0; i < 8; i++) {                   // NaNs with payloads
        uint32_t q = 0x7fc00001u + 77 * i + ((i & 1) << 31);
        std::memcpy(&x[9 * i], &q, 4);
    }
    for (const char *op : ops) {
        CAPTURE(op);
        std::vector<uint32_t> out[2];
        for (int simd = 0; simd < 2; simd++) {
            std::string src = std::string(".kernel simd\n.tensors 4\n.index_dims 1\n") +
                              "        ld.t.f32 v0, t0, i0 ; mov s5, 0x3fc00001\n"
                              "        ld.t.f32 v1, t1, i0\n"
                              "        ld.t.f32 v2, t2, i0\n        " + op + "\n"
                              "        st.t.f32 t3, i0, v3\n        halt\n";
            Rig r;
            r.core.tpc_host_simd = simd != 0;
            Space s(r, 0, false);
            uint64_t t[4];
            LaunchDesc ld;
            for (unsigned k = 0; k < 4; k++) {
                t[k] = s.alloc(256);
                if (k < 3) {
                    put_elems(s, t[k], std::vector<float>(x.begin() + 64 * k, x.begin() + 64 * k + 64));
                }
                ld.tensors.push_back(f32_vec(t[k], 64));
            }
            REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0).status ==
                    HPU_CQ_OK);
            out[simd] = get_elems<uint32_t>(s, t[3], 64);
        }
        CHECK(out[0] == out[1]);
    }
}

TEST_CASE("TPC: INJ_HANG stops a launch between two members, the member in flight completes",
          "[emu][tpc][inj]")
{
    Rig r;
    Space s(r, 0, true);                            // output in host memory: hooks see it
    const uint32_t n = 8 * 1024;
    const uint64_t a = s.alloc(4 * n), b = s.alloc(4 * n), d = s.alloc(4 * n);
    put_elems(s, a, values(n, 81, false));
    put_elems(s, b, values(n, 82, false));
    const uint64_t d_bus = d & ~HPU_ADDR_HOST;
    unsigned writes = 0;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr >= d_bus && addr < d_bus + 4ull * n && ++writes == 1) {
            r.wr(HPU_REG_INJ_HANG, 1u << TPC_E);
        }
    };
    LaunchDesc ld;
    ld.index[0] = 8;
    ld.tensors = {f32_vec(a, n), f32_vec(b, n), f32_vec(d, n)};
    r.setup_stream(TPC_E, 0);
    r.submit(TPC_E, 0, tpc_cb(place_launch(s, tpc_asm(add_kernel(16)), ld)));
    r.run();
    r.env.on_dma_write = nullptr;
    CHECK(writes == 16u);                           // the first member's vectors only
    CHECK(r.cq_pi(TPC_E, 0) == 0u);
    CHECK_FALSE(hpum_core_engine_ready(&r.core, TPC_E));
    r.wr(HPU_REG_INJ_HANG, 0);
    r.wr(r.qreg(TPC_E, 0, HPU_QS_CTRL), 0);
    r.run();
    CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_ABORTED);
    auto dv = get_elems<float>(s, d, n);
    CHECK(std::all_of(dv.begin() + 1024, dv.end(), [](float f) { return f == 0.0f; }));
}

TEST_CASE("TPC: the watchdog counts a member as progress", "[emu][tpc][wdt]")
{
    Rig r;
    r.setup_eq();
    Space s(r, 0, true);
    const uint32_t n = 8 * 1024;
    const uint64_t a = s.alloc(4 * n), b = s.alloc(4 * n), d = s.alloc(4 * n);
    const uint64_t d_bus = d & ~HPU_ADDR_HOST;
    r.wr(HPU_REG_WDT_MS, 1);
    // 0.7 ms of device time per member: 5.6 ms in all, never 1 ms without
    // a member done
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr >= d_bus && addr < d_bus + 4ull * n && (addr - d_bus) % 4096 == 0) {
            r.advance(700000);
        }
    };
    LaunchDesc ld;
    ld.index[0] = 8;
    ld.tensors = {f32_vec(a, n), f32_vec(b, n), f32_vec(d, n)};
    r.setup_stream(TPC_E, 0);
    Cqe c = r.run_cb(tpc_cb(place_launch(s, tpc_asm(add_kernel(16)), ld)), 0, TPC_E, 0);
    r.env.on_dma_write = nullptr;
    CHECK(c.status == HPU_CQ_OK);
    CHECK((r.status(TPC_E, 0) & HPU_QS_STATUS_HUNG) == 0u);
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
}

TEST_CASE("TPC: progress a core notes without the lock after the watchdog read its clock is "
          "progress, not a hang", "[emu][tpc][wdt]")
{
    Rig r;
    r.setup_eq();
    r.setup_stream(TPC_E, 0);
    r.wr(HPU_REG_WDT_MS, 5);
    r.wr(HPU_REG_INJ_HANG, 1u << TPC_E);            // the engine stays in the packet
    r.submit(TPC_E, 0, Cb().nop(), 0, 0x70);
    r.run();
    REQUIRE_FALSE(hpum_core_engine_ready(&r.core, TPC_E));
    // a member's end noted a time later than the watchdog's reading of now
    __atomic_store_n(&r.core.eng[TPC_E].progress_ns, r.env.now + 8000000, __ATOMIC_RELAXED);
    r.advance(5000000);
    CHECK((r.status(TPC_E, 0) & HPU_QS_STATUS_HUNG) == 0u);
    CHECK(r.rd(HPU_REG_EQ_PI) == 0u);
    // and without more progress the period runs out as usual
    r.advance(10000000);
    CHECK((r.status(TPC_E, 0) & HPU_QS_STATUS_HUNG) != 0u);
    r.wr(HPU_REG_INJ_HANG, 0);
    r.wr(r.qreg(TPC_E, 0, HPU_QS_CTRL), 0);
    r.run();
    CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_ABORTED);
}

// Review additions: the paths above that no test took.

TEST_CASE("TPC: INJ_HANG stops one core between two of its members (the check that skips the "
          "lock sees job_alert change)", "[emu][tpc][inj]")
{
    Rig r;
    r.core.tpc_cores = 1;                           // every member on one core: no slice begins
    Space s(r, 0, true);
    const uint32_t n = 8 * 1024;
    const uint64_t a = s.alloc(4 * n), b = s.alloc(4 * n), d = s.alloc(4 * n);
    put_elems(s, a, values(n, 81, false));
    put_elems(s, b, values(n, 82, false));
    const uint64_t d_bus = d & ~HPU_ADDR_HOST;
    unsigned writes = 0;
    r.env.on_dma_write = [&](uint64_t addr) {
        if (addr >= d_bus && addr < d_bus + 4ull * n && ++writes == 1) {
            r.wr(HPU_REG_INJ_HANG, 1u << TPC_E);
        }
    };
    LaunchDesc ld;
    ld.index[0] = 8;
    ld.tensors = {f32_vec(a, n), f32_vec(b, n), f32_vec(d, n)};
    r.setup_stream(TPC_E, 0);
    r.submit(TPC_E, 0, tpc_cb(place_launch(s, tpc_asm(add_kernel(16)), ld)));
    r.run();
    r.env.on_dma_write = nullptr;
    CHECK(writes == 16u);                           // the first member's vectors only
    CHECK_FALSE(hpum_core_engine_ready(&r.core, TPC_E));
    r.wr(HPU_REG_INJ_HANG, 0);
    r.wr(r.qreg(TPC_E, 0, HPU_QS_CTRL), 0);
    r.run();
    CHECK(r.cqe(TPC_E, 0, 0).status == HPU_CQ_ABORTED);
}

TEST_CASE("TPC bundles run in place: negated scalar guards on every slot, a taken jmp",
          "[emu][tpc][fast]")
{
    const char *src = R"(
.kernel neg
.tensors 2
.index_dims 1
        pset sp1, 1
        pset sp2, 0
        (!sp2) ld.t.u32 v0, t0, i0 ; (!sp1) mov s1, 5 ; (!sp2) vmov.u32 v1, 9
)"
        "        (!sp1) ld.t.u32 v2, t0, i0 ; (!sp2) mov s2, 7 ; (!sp1) vmov.u32 v3, 11 ; "
        "(!sp2) st.t.u32 t1, i1, v0" R"(
        iset i1, i1, 0, 64 ; (!sp1) st.t.u32 t1, i1, v1
        (!sp2) jmp over ; (!sp2) vmov.u32 v4, 3
        vmov.u32 v4, 0xbad
over:
        (!sp1) jmp over2 ; vmov.u32 v5, s2
        vadd.u32 v5, v5, 100
over2:
        (!sp1) halt ; vins.u32 v5, s1, 1
        st.t.u32 t1, i1, v1
        iset i1, i1, 0, 128
        st.t.u32 t1, i1, v2
        iset i1, i1, 0, 192
        st.t.u32 t1, i1, v3
        iset i1, i1, 0, 256
        st.t.u32 t1, i1, v4
        iset i1, i1, 0, 320
        st.t.u32 t1, i1, v5
        halt
)";
    Rig r;
    Space s(r, 0, false);
    std::vector<uint32_t> in(64);
    for (uint32_t i = 0; i < 64; i++) {
        in[i] = 1000 + i;
    }
    const uint64_t t0 = s.alloc(256), t1 = s.alloc(6 * 256);
    put_elems(s, t0, in);
    LaunchDesc ld;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, t0, {64}),
                  TDesc::dense(HPU_TPC_DT_U32, t1, {6 * 64})};
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0).status ==
            HPU_CQ_OK);
    auto o = get_elems<uint32_t>(s, t1, 6 * 64);
    for (uint32_t l = 0; l < 64; l++) {
        INFO("lane " << l);
        CHECK(o[l] == 1000 + l);                    // (!sp2) load and store ran
        CHECK(o[64 + l] == 9u);                     // (!sp2) vmov ran, (!sp1) store did not
        CHECK(o[128 + l] == 0u);                    // (!sp1) load skipped
        CHECK(o[192 + l] == 0u);                    // (!sp1) vmov skipped
        CHECK(o[256 + l] == 3u);                    // jmp taken, its bundle's vmov ran
        CHECK(o[320 + l] == (l == 1 ? 0u : 107u));  // jmp and halt not taken; s1 never set
    }
}

TEST_CASE("TPC bundles run in place: a local store's [sN + imm] reads sN as the bundle before "
          "left it", "[emu][tpc][fast]")
{
    const char *src = R"(
.kernel memrd
.tensors 1
.index_dims 1
.slm 64
.vlm 512
        mov s2, 77
        mov s4, 256
        st.l [8], s4
        vmov.u32 v1, 5
        ld.l s1, [8] ; st.l [s1 + 4], s2
        ld.l s5, [4]
        ld.l s6, [8] ; st.lv [s6], v1
        ld.lv v2, [0]
        vmov.u32 v3, s5
        st.t.u32 t0, i0, v3
        iset i0, i0, 0, 64
        st.t.u32 t0, i0, v2
        halt
)";
    Rig r;
    Space s(r, 0, false);
    const uint64_t t0 = s.alloc(2 * 256);
    LaunchDesc ld;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, t0, {2 * 64})};
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0).status ==
            HPU_CQ_OK);
    auto o = get_elems<uint32_t>(s, t0, 2 * 64);
    for (uint32_t l = 0; l < 64; l++) {
        INFO("lane " << l);
        CHECK(o[l] == 77u);                         // st.l used s1 = 0, not the loaded 256
        CHECK(o[64 + l] == 5u);                     // st.lv used s6 = 0
    }
}

TEST_CASE("TPC: lane predicates start at zero in every member of a core, vp0 all ones",
          "[emu][tpc][fast]")
{
    const char *src = R"(
.kernel vpstart
.tensors 1
.index_dims 1
        iid i0
        iget s0, i0, 0
        cmp.eq.u32 sp1, s0, 0
        vpcount s1, vp3
        vpand vp2, vp0, vp4
        vpcount s2, vp2
        vpcount s3, vp0
        (sp1) vpset vp3, sp0
        (sp1) vpset vp4, sp0
        imul i0, i0, 0, 64
        vmov.u32 v0, s1
        vins.u32 v0, s2, 1
        vins.u32 v0, s3, 2
        st.t.u32 t0, i0, v0
        halt
)";
    Rig r;
    r.core.tpc_cores = 1;                           // member 1 runs after member 0 on its core
    Space s(r, 0, false);
    const uint64_t t0 = s.alloc(2 * 256);
    LaunchDesc ld;
    ld.index[0] = 2;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, t0, {2 * 64})};
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0).status ==
            HPU_CQ_OK);
    auto o = get_elems<uint32_t>(s, t0, 2 * 64);
    for (uint32_t m = 0; m < 2; m++) {
        INFO("member " << m);
        CHECK(o[64 * m] == 0u);                     // vp3 zero at the start
        CHECK(o[64 * m + 1] == 0u);                 // vp4 zero at the start
        CHECK(o[64 * m + 2] == 256u);               // vp0 every lane
    }
}

TEST_CASE("TPC: the prologue computed once per launch leaves each member's registers as running "
          "it would (coordinate arithmetic, tsize, ldarg, guards known at launch)",
          "[emu][tpc][fast]")
{
    // Everything before the first vmov is computed once per launch
    // (device-model.md, "Prologue"): i0 = (0, 2 m1 + 1, m2), i1 = (0, 2 m1,
    // m2), s3 = 7 + 5, sp2 true; the prologue ends in the middle of the
    // bundle of the last iadd, whose vmov then runs.
    const char *src = R"(
.kernel pro
.tensors 1
.index_dims 3
.scalars 1
        ldarg s1, 0 ; iid i0
        tsize s2, t0, 1 ; imul i0, i0, 1, 2
        cmp.eq.u32 sp1, s2, 6
        (sp1) mov s3, 7
        (!sp1) mov s3, 9
        (sp1) iadd i0, i0, 1, 1
        (!sp1) iadd i0, i0, 1, 3
        cmp.lt.u32 sp2, s1, 6
        (sp2) add.u32 s3, s3, s1
        mov s4, 0xffffffff
        imov i1, i0
        iadd i1, i1, 1, s4 ; vmov.u32 v0, s3
        vmov.u32 v1, s1
        (sp2) st.t.u32 t0, i0, v0
        (sp1) st.t.u32 t0, i1, v1
        halt
)";
    const unsigned cores = GENERATE(1u, 8u);
    Rig r;
    r.core.tpc_cores = cores;
    Space s(r, 0, false);
    const uint64_t t0 = s.alloc(64 * 6 * 2 * 4);
    LaunchDesc ld;
    ld.tensors = {TDesc::dense(HPU_TPC_DT_U32, t0, {64, 6, 2})};
    ld.scalars = {5};
    ld.index[1] = 3;
    ld.index[2] = 2;
    REQUIRE(r.run_cb(tpc_cb(place_launch(s, tpc_asm(src), ld)), 0, TPC_E, 0).status ==
            HPU_CQ_OK);
    auto o = get_elems<uint32_t>(s, t0, 64 * 6 * 2);
    for (uint32_t i = 0; i < 64 * 6 * 2; i++) {
        INFO("cores " << cores << " element " << i);
        CHECK(o[i] == ((i / 64) % 2 ? 12u : 5u));
    }
}
