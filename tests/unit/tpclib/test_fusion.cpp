// SPDX-License-Identifier: MIT
//
// Lazy mode's fused elementwise kernels (libhpu/torch/csrc/fusion_gen.h)
// on the device model: a generated chain gives, bit for bit, what the
// library kernels give one launch after another (special values,
// broadcast inputs, strided outputs, stored intermediates), and the
// generator refuses what it cannot run.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "fusion_gen.h"
#include "tpclib_rig.hpp"

using namespace hpu_test;
namespace fu = hpu_torch::fusion;

namespace {

// Launches a generated binary as Lib::launch launches a library kernel.
uint32_t launch_bin(Lib &L, const std::vector<uint8_t> &bin, const std::vector<Tensor> &ts,
                    const std::vector<uint32_t> &scalars, std::array<uint32_t, 5> index)
{
    LaunchDesc ld;
    for (unsigned d = 0; d < 5; d++) {
        ld.index[d] = index[d];
    }
    ld.scalars = scalars;
    for (const Tensor &t : ts) {
        ld.tensors.push_back(t.d);
    }
    const uint64_t desc = place_launch(L.s, bin, ld);
    return L.r.run_cb(tpc_cb(desc), 0, TPC_E, 0).status;
}

// Random FP32 values with NaN, infinities, signed zeros and denormals among them.
std::vector<uint32_t> values(size_t n, uint32_t seed)
{
    std::vector<uint32_t> v = rand_f32(n, seed, -4.0F, 4.0F);
    const uint32_t special[] = {0x7fc00000U, 0x7f800000U, 0xff800000U, 0x80000000U, 0U, 0x00000001U, 0x80400000U};
    for (size_t i = 0; i < n; i += 11) {
        v[i] = special[(i / 11) % std::size(special)];
    }
    return v;
}

Tensor like(Lib &L, const Tensor &t) { return L.tensor(HPU_TPC_DT_F32, {t.size(0), t.size(1)}); }

} // namespace

TEST_CASE("fusion: the library's FP32 ew kernels are fusable, others are not", "[tpclib][fusion]")
{
    for (const char *k : {"add_f32", "sub_f32", "mul_f32", "div_f32", "relu_f32", "relu_grad_f32", "scale_f32",
                          "axpy_f32", "bias_add_f32", "gelu_f32", "max_f32", "min_f32", "tanh_f32", "sigmoid_f32",
                          "gelu_grad_f32", "tanh_grad_f32", "sigmoid_grad_f32"}) {
        INFO(k);
        CHECK(fu::op_info(k) != nullptr);
    }
    for (const char *k : {"add_bf16", "sgd_f32", "cross_entropy_f32", "add_i32", "cast_f32_bf16", "nope"}) {
        INFO(k);
        CHECK(fu::op_info(k) == nullptr);
    }
    CHECK(fu::op_info("axpy_f32")->inputs == 2);
    CHECK(fu::op_info("axpy_f32")->scalars == 1);
    CHECK(fu::op_info("relu_f32")->inputs == 1);
}

TEST_CASE("fusion: a stage is the library's body with its registers renamed", "[tpclib][fusion]")
{
    fu::Chain c;
    c.broadcast = {false, false};
    c.stages = {{"mul_f32", {{false, 0}, {false, 1}}}, {"relu_f32", {{true, 0}}}};
    c.stored = {1};
    REQUIRE(fu::check(c).empty());
    const std::string src = fu::source(c);
    CHECK(src.find("vmul.f32 v18, v16, v17") != std::string::npos);
    CHECK(src.find("vmax.f32 v19, v18, 0.0") != std::string::npos);
    CHECK(src.find("st.t.f32 t2, i0, v19") != std::string::npos);
    CHECK(src.find("t2, i0, v18") == std::string::npos); // the intermediate is not stored
    CHECK(fu::key(c) != fu::key(fu::Chain{c.broadcast, c.stages, {0, 1}}));
}

TEST_CASE("fusion: chains the generator refuses", "[tpclib][fusion]")
{
    fu::Chain c;
    c.broadcast = {true};
    c.stages = {{"relu_f32", {{false, 0}}}};
    c.stored = {0};
    CHECK_FALSE(fu::check(c).empty()); // a one-input kernel never reads a broadcast input
    c.broadcast = {true, true, true, false};
    c.stages = {{"add_f32", {{false, 0}, {false, 1}}}, {"add_f32", {{true, 0}, {false, 2}}}};
    c.stored = {1};
    CHECK_FALSE(fu::check(c).empty()); // three broadcast inputs
    c.broadcast = {false, false};
    c.stages = {{"add_f32", {{false, 0}, {true, 0}}}};
    c.stored = {0};
    CHECK_FALSE(fu::check(c).empty()); // a stage reads its own result
    c.stages = {{"add_bf16", {{false, 0}, {false, 1}}}};
    CHECK_FALSE(fu::check(c).empty());
    CHECK_THROWS(fu::assemble(c));
}

TEST_CASE("fusion: relu(alpha x + y) fused is bit-identical to scale, add, relu", "[tpclib][fusion]")
{
    for (const std::vector<uint32_t> &sizes : {std::vector<uint32_t>{1000, 3}, {64, 1}, {1, 1}, {300, 5}}) {
        Lib L;
        const uint32_t n = sizes[0] * sizes[1];
        const Tensor x = L.tensor(HPU_TPC_DT_F32, sizes, values(n, 1));
        const Tensor y = L.tensor(HPU_TPC_DT_F32, sizes, values(n, 2));
        const uint32_t alpha = kref::f32_bits(2.0F);
        const Tensor t1 = like(L, x);
        const Tensor t2 = like(L, x);
        const Tensor ref = like(L, x);
        const auto idx = ew_index(x);
        REQUIRE(L.launch("scale_f32", {x, t1}, {alpha}, idx) == 0);
        REQUIRE(L.launch("add_f32", {t1, y, t2}, {}, idx) == 0);
        REQUIRE(L.launch("relu_f32", {t2, ref}, {}, idx) == 0);

        fu::Chain c;
        c.broadcast = {false, false};
        c.stages = {{"scale_f32", {{false, 0}}}, {"add_f32", {{true, 0}, {false, 1}}}, {"relu_f32", {{true, 1}}}};
        c.stored = {1, 2}; // the add's result is kept too
        const Tensor s2 = like(L, x);
        const Tensor out = like(L, x);
        REQUIRE(launch_bin(L, fu::assemble(c), {x, y, s2, out}, {alpha}, idx) == 0);
        INFO("sizes " << sizes[0] << "x" << sizes[1]);
        CHECK(L.read(out) == L.read(ref));
        CHECK(L.read(s2) == L.read(t2));
    }
}

TEST_CASE("fusion: broadcast inputs and strided tensors, bit-identical", "[tpclib][fusion]")
{
    Lib L;
    const uint32_t c0 = 200;
    const uint32_t r = 7;
    // x [r, c0] with a row stride of 256; b [1, c0] (a bias row) and s [1, 1] broadcast.
    const Tensor x = L.tensor(HPU_TPC_DT_F32, {c0, r}, values(std::size_t{256} * r, 3), {1, 256});
    const Tensor b = L.tensor(HPU_TPC_DT_F32, {c0, 1}, values(c0, 4));
    const Tensor s = L.tensor(HPU_TPC_DT_F32, {1, 1}, {kref::f32_bits(-0.75F)});
    const Tensor dy = L.tensor(HPU_TPC_DT_F32, {c0, r}, values(std::size_t{c0} * r, 5));
    const auto idx = ew_index(dy);
    const Tensor t1 = like(L, dy);
    const Tensor t2 = like(L, dy);
    const Tensor ref = L.tensor(HPU_TPC_DT_F32, {c0, r}, {}, {2, 2 * c0}); // a strided output
    REQUIRE(L.launch("add_f32", {x, b, t1}, {}, idx) == 0);
    REQUIRE(L.launch("mul_f32", {t1, s, t2}, {}, idx) == 0);
    REQUIRE(L.launch("relu_grad_f32", {t2, dy, ref}, {}, idx) == 0);

    fu::Chain c;
    c.broadcast = {false, true, true, false};
    c.stages = {{"add_f32", {{false, 0}, {false, 1}}},
                {"mul_f32", {{true, 0}, {false, 2}}},
                {"relu_grad_f32", {{true, 1}, {false, 3}}}};
    c.stored = {2};
    const Tensor out = L.tensor(HPU_TPC_DT_F32, {c0, r}, {}, {2, 2 * c0});
    REQUIRE(launch_bin(L, fu::assemble(c), {x, b, s, dy, out}, {}, idx) == 0);
    CHECK(L.read(out) == L.read(ref));
}

TEST_CASE("fusion: SGD-like axpy chains and in-place stages, bit-identical", "[tpclib][fusion]")
{
    Lib L;
    const std::vector<uint32_t> sizes{777, 2};
    const uint32_t n = sizes[0] * sizes[1];
    const auto wv = values(n, 6);
    const auto gv = values(n, 7);
    const auto nv = values(n, 8);
    const uint32_t lr = kref::f32_bits(-0.01F);
    // Library: g += new (add in place), w = lr g + w (axpy in place).
    const Tensor w = L.tensor(HPU_TPC_DT_F32, sizes, wv);
    const Tensor g = L.tensor(HPU_TPC_DT_F32, sizes, gv);
    const Tensor nw = L.tensor(HPU_TPC_DT_F32, sizes, nv);
    const auto idx = ew_index(w);
    REQUIRE(L.launch("add_f32", {g, nw, g}, {}, idx) == 0);
    REQUIRE(L.launch("axpy_f32", {g, w, w}, {lr}, idx) == 0);
    // Fused on fresh copies: inputs g, new, w; outputs g and w, in place.
    const Tensor w2 = L.tensor(HPU_TPC_DT_F32, sizes, wv);
    const Tensor g2 = L.tensor(HPU_TPC_DT_F32, sizes, gv);
    const Tensor nw2 = L.tensor(HPU_TPC_DT_F32, sizes, nv);
    fu::Chain c;
    c.broadcast = {false, false, false};
    c.stages = {{"add_f32", {{false, 0}, {false, 1}}}, {"axpy_f32", {{true, 0}, {false, 2}}}};
    c.stored = {0, 1};
    REQUIRE(launch_bin(L, fu::assemble(c), {g2, nw2, w2, g2, w2}, {lr}, idx) == 0);
    CHECK(L.read(g2) == L.read(g));
    CHECK(L.read(w2) == L.read(w));
}
