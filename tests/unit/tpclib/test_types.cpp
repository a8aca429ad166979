// SPDX-License-Identifier: MIT
//
// The type families of the TPC library on the device model: the casts
// between all eight data types over every 8- and 16-bit value and over the
// special and boundary values of the 32-bit types (NaN, infinities, -0,
// halfway cases, each type's minimum and maximum and their neighbours), and
// the binary ops of the integer types over every pair of their extreme
// values, with broadcasting, strides and tails; all exact.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/generators/catch_generators_range.hpp>

#include "tpc_ref_types.hpp"
#include "tpclib_rig.hpp"

#include <sstream>

using namespace hpu_test;
using kref::Type;

namespace {

const Type kTypes[] = {Type::f32, Type::bf16, Type::i32, Type::u32,
                       Type::i16, Type::u16,  Type::i8,  Type::u8};

const char *suffix(Type t)
{
    static const char *const s[] = {"", "f32", "bf16", "i32", "u32", "i16", "u16", "i8", "u8"};
    return s[static_cast<int>(t)];
}

uint8_t code(Type t) { return static_cast<uint8_t>(t); }

std::string hex(uint32_t v)
{
    std::ostringstream o;
    o << "0x" << std::hex << v;
    return o.str();
}

// The FP32 values at and around the integer types' limits, rounding cases
// for every integer type and for BF16, and the special values.
std::vector<uint32_t> f32_inputs()
{
    std::vector<float> f = {0.0f, -0.0f, INFINITY, -INFINITY, 0.5f, -0.5f, 1.0f, -1.0f, 1.5f,
                            -1.5f, 2.5f, -2.5f, 0.99999994f, -0.99999994f, 3.14159274f,
                            std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::min(), std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(), 16777216.0f, 16777218.0f};
    for (Type t : {Type::i32, Type::u32, Type::i16, Type::u16, Type::i8, Type::u8}) {
        for (int64_t lim : {kref::int_min(t), kref::int_max(t)}) {
            const auto l = static_cast<float>(lim); // 2^31 - 1 is 2^31 in FP32
            for (float d : {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f}) {
                f.push_back(l + d);
            }
            f.push_back(std::nextafter(l, 0.0f));
            f.push_back(std::nextafter(l, l < 0 ? -INFINITY : INFINITY));
        }
    }
    std::vector<uint32_t> v;
    v.reserve(f.size() + 14 + size_t{5} * 512);
    for (float x : f) {
        v.push_back(kref::f32_bits(x));
    }
    // NaNs (quiet, signalling, negative, payloads) and BF16 halfway cases
    for (uint32_t b : {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0xff800100u, 0x7fffffffu,
                       0x3f808000u, 0x3f818000u, 0x3f808001u, 0x3f80ffffu, 0x7f7f8000u, 0x7f7fffffu,
                       0xc3008000u, 0x00008000u, 0x00018000u}) {
        v.push_back(b);
    }
    std::mt19937 g(7);
    for (float range : {2.0f, 300.0f, 70000.0f, 5e9f}) { // every type's range
        std::uniform_real_distribution<float> u(-range, range);
        for (int i = 0; i < 512; i++) {
            v.push_back(kref::f32_bits(u(g)));
        }
    }
    for (int i = 0; i < 512; i++) { // any bits
        v.push_back(static_cast<uint32_t>(g()));
    }
    return v;
}

// 32-bit integers: the limits of every type with their neighbours, FP32
// and BF16 halfway cases, random values of every magnitude.
std::vector<uint32_t> i32_inputs()
{
    std::vector<int64_t> s = {0, 1, -1, 2, -2, 257, 259, -257, 0x8080, 0x8180, 0x1000001,
                              0x1000003, -0x1000001, 0x7fffff80, 0x7fffffc0, 0xffffff80};
    for (Type t : {Type::i32, Type::u32, Type::i16, Type::u16, Type::i8, Type::u8}) {
        for (int64_t lim : {kref::int_min(t), kref::int_max(t)}) {
            for (int64_t d = -2; d <= 2; d++) {
                s.push_back(lim + d);
            }
        }
    }
    std::vector<uint32_t> v;
    v.reserve(s.size() + size_t{2} * 2048);
    for (int64_t x : s) {
        v.push_back(static_cast<uint32_t>(x));
    }
    std::mt19937 g(11);
    for (int i = 0; i < 2048; i++) {
        v.push_back(static_cast<uint32_t>(g()) >> (i % 32));
        v.push_back(static_cast<uint32_t>(-static_cast<int32_t>(g() >> (i % 32))));
    }
    return v;
}

// Every value of the 8- and 16-bit types, the lists above otherwise.
std::vector<uint32_t> cast_inputs(Type t)
{
    if (t == Type::f32) {
        return f32_inputs();
    }
    if (t == Type::i32 || t == Type::u32) {
        return i32_inputs();
    }
    std::vector<uint32_t> v(size_t{1} << kref::type_bits(t));
    for (size_t i = 0; i < v.size(); i++) {
        v[i] = static_cast<uint32_t>(i);
    }
    return v;
}

// Mismatches of @got against the reference cast of @in, the first named.
size_t cast_mismatches(Type from, Type to, const std::vector<uint32_t> &in,
                       const std::vector<uint32_t> &got, std::string &first)
{
    size_t bad = 0;
    for (size_t i = 0; i < in.size() && i < got.size(); i++) {
        const uint32_t want = kref::cast(from, to, in[i]);
        if (got[i] != want && !bad++) {
            first = "in " + hex(in[i]) + " got " + hex(got[i]) + " want " + hex(want);
        }
    }
    return bad;
}

} // namespace

TEST_CASE("tpclib casts between all eight types: exact over every 8- and 16-bit value and the "
          "32-bit types' special and boundary values",
          "[tpclib][types]")
{
    const Type from = GENERATE(from_range(std::begin(kTypes), std::end(kTypes)));
    const Type to = GENERATE(from_range(std::begin(kTypes), std::end(kTypes)));
    if (from == to) {
        return;
    }
    const std::string k = std::string("cast_") + suffix(from) + "_" + suffix(to);
    CAPTURE(k);
    const auto in = cast_inputs(from);
    Lib L;
    // all the values in one row
    const auto n = static_cast<uint32_t>(in.size());
    Tensor x = L.tensor(code(from), {n}, in), y = L.tensor(code(to), {n});
    REQUIRE(L.launch(k, {x, y}, {}, ew_index(y)) == HPU_CQ_OK);
    std::string first;
    const size_t bad = cast_mismatches(from, to, in, L.read(y), first);
    INFO(first);
    CHECK(bad == 0);
    // rows with tails, written to a strided output whose gaps stay 0
    for (uint32_t w : {1u, 63u, 129u, 1000u}) {
        CAPTURE(w);
        std::vector<uint32_t> part(in.begin(), in.begin() + std::min<ptrdiff_t>(std::ssize(in), ptrdiff_t{3} * w));
        Tensor xs = L.tensor(code(from), {w, 3}, part);
        Tensor ys = L.tensor(code(to), {w, 3}, {}, {1, w + 5});
        REQUIRE(L.launch(k, {xs, ys}, {}, ew_index(ys)) == HPU_CQ_OK);
        auto got = L.read(ys);
        std::vector<uint32_t> dense, gaps;
        for (size_t i = 0; i < got.size(); i++) {
            (i % (w + 5) < w ? dense : gaps).push_back(got[i]);
        }
        const size_t bad_rows = cast_mismatches(from, to, part, dense, first);
        INFO(first);
        CHECK(bad_rows == 0);
        CHECK(std::count(gaps.begin(), gaps.end(), 0u) == static_cast<ptrdiff_t>(gaps.size()));
    }
}

namespace {

const Type kIntTypes[] = {Type::i32, Type::u32, Type::i16, Type::u16, Type::i8, Type::u8};

// Every value of the 8-bit types; otherwise the extremes and their
// neighbours, small values and a few others.
std::vector<uint32_t> int_specials(Type t)
{
    if (kref::type_bits(t) == 8) {
        return cast_inputs(t);
    }
    const int64_t lo = kref::int_min(t), hi = kref::int_max(t);
    std::vector<uint32_t> v;
    for (int64_t x : {lo, lo + 1, lo + 2, lo / 2, -3 + lo / 2, int64_t{-2}, int64_t{-1}, int64_t{0},
                      int64_t{1}, int64_t{2}, int64_t{3}, int64_t{255}, hi / 2 - 1, hi / 2,
                      hi / 2 + 1, hi - 2, hi - 1, hi, int64_t{0x1234}, int64_t{-0x4321}}) {
        v.push_back(kref::int_bits(t, x));
    }
    return v;
}

// A broadcasting case of a binary op: a's, b's and out's sizes and strides
// (empty: dense).
struct Bcast {
    const char *name;
    std::vector<uint32_t> a, as, b, bs, o, os;
};

std::vector<Bcast> bcasts(uint32_t n)
{
    return {
        {"same shape", {n, 2}, {}, {n, 2}, {}, {n, 2}, {}},
        {"b [n, 1] over dim 1", {n, 3}, {}, {n, 1}, {}, {n, 3}, {}},
        {"b [n], a 3-D", {n, 2, 2}, {}, {n}, {}, {n, 2, 2}, {}},
        {"b stride 0 in dim 1, out strided", {n, 2}, {}, {n, 2}, {1, 0}, {n, 2}, {1, n + 3}},
        {"a stride 0 in dim 0, a strided in dim 1", {n, 2}, {0, 5}, {n, 2}, {}, {n, 2}, {}},
        {"4-D, b [1, 2, 1, 2]", {n, 2, 1, 2}, {}, {1, 2, 1, 2}, {}, {n, 2, 1, 2}, {}},
    };
}

// The backing index of @t's element for output coordinate @c (size-1
// dimensions of @t read at 0).
size_t at_bcast(const Tensor &t, const std::array<uint32_t, 4> &c)
{
    size_t i = 0;
    for (unsigned k = 0; k < 4 && k < t.d.ndims; k++) {
        i += size_t{t.d.size[k] == 1 ? 0 : c[k]} * t.d.stride[k];
    }
    return i;
}

// Runs kernel @k on @a, @b into @out and counts the elements that differ
// from @ref, and the elements of out's gaps that are no longer 0.
size_t run_binop(Lib &L, const std::string &k, const Tensor &a, const Tensor &b, const Tensor &o,
                 const std::function<uint32_t(uint32_t, uint32_t)> &ref)
{
    const auto av = L.read(a), bv = L.read(b);
    REQUIRE(L.launch(k, {a, b, o}, {}, ew_index(o)) == HPU_CQ_OK);
    const auto got = L.read(o);
    std::vector<bool> covered(o.n);
    size_t bad = 0;
    for (uint32_t w = 0; w < o.size(3); w++) {
        for (uint32_t z = 0; z < o.size(2); z++) {
            for (uint32_t y = 0; y < o.size(1); y++) {
                for (uint32_t x = 0; x < o.size(0); x++) {
                    const std::array<uint32_t, 4> c = {x, y, z, w};
                    const size_t i = at_bcast(o, c);
                    covered[i] = true;
                    bad += got[i] != ref(av[at_bcast(a, c)], bv[at_bcast(b, c)]);
                }
            }
        }
    }
    for (size_t i = 0; i < o.n; i++) {
        bad += !covered[i] && got[i] != 0;
    }
    return bad;
}

uint32_t backing(const std::vector<uint32_t> &sz, const std::vector<uint32_t> &st)
{
    uint64_t last = 0, dense = 1;
    for (size_t k = 0; k < sz.size(); k++) {
        last += uint64_t{sz[k] - 1} * (st.empty() ? dense : st[k]);
        dense *= sz[k];
    }
    return static_cast<uint32_t>(last + 1);
}

} // namespace

TEST_CASE("tpclib binary ops on the integer types: wrapping add, sub, mul, max and min by "
          "signedness, every pair of extremes, broadcasting, exact",
          "[tpclib][types]")
{
    using kref::IntOp;
    const Type t = GENERATE(from_range(std::begin(kIntTypes), std::end(kIntTypes)));
    const IntOp op = GENERATE(IntOp::add, IntOp::sub, IntOp::mul, IntOp::max, IntOp::min);
    static const char *const names[] = {"add_", "sub_", "mul_", "max_", "min_"};
    const std::string k = names[static_cast<int>(op)] + std::string(suffix(t));
    CAPTURE(k);
    auto ref = [&](uint32_t a, uint32_t b) { return kref::binop_int(t, op, a, b); };
    Lib L;
    // every pair of special values: a along dimension 0, b along dimension 1
    const auto sv = int_specials(t);
    const auto ns = static_cast<uint32_t>(sv.size());
    Tensor a = L.tensor(code(t), {ns, 1}, sv), b = L.tensor(code(t), {1, ns}, sv);
    Tensor o = L.tensor(code(t), {ns, ns});
    CHECK(run_binop(L, k, a, b, o, ref) == 0);
    std::mt19937 g(static_cast<uint32_t>(op) * 16 + code(t));
    for (uint32_t n : {1u, 3u, 63u, 65u, 129u, 255u, 257u, 1000u}) {
        for (const Bcast &c : bcasts(n)) {
            CAPTURE(n, c.name);
            std::vector<uint32_t> av(backing(c.a, c.as)), bv(backing(c.b, c.bs));
            for (auto *v : {&av, &bv}) {
                for (auto &x : *v) {
                    x = kref::int_bits(t, static_cast<int32_t>(g()));
                }
            }
            av[0] = kref::int_bits(t, kref::int_min(t));
            bv[0] = kref::int_bits(t, kref::int_max(t));
            Tensor ta = L.tensor(code(t), c.a, av, c.as), tb = L.tensor(code(t), c.b, bv, c.bs);
            Tensor to = L.tensor(code(t), c.o, {}, c.os);
            CHECK(run_binop(L, k, ta, tb, to, ref) == 0);
        }
    }
}
