// SPDX-License-Identifier: MIT
//
// The example kernels of Documentation/hw/tpc.md (tools/hpu-as/examples):
// they assemble, with their include file and macros, and survive the
// disassembler round trip bit for bit.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include <string>

#include "helpers.h"

using namespace hpu::tpc;

namespace
{

Result example(const std::string &name)
{
    Result r = assemble_file(std::string(HPU_TPC_EXAMPLES_DIR) + "/" + name);
    INFO(r.error_text());
    REQUIRE(r.ok());
    return r;
}

void round_trip(const Result &r)
{
    std::string text = disassemble(r.binary);
    Result again = assemble(text, "dis.s");
    INFO(text);
    INFO(again.error_text());
    REQUIRE(again.ok());
    CHECK(again.binary == r.binary);
    CHECK(disassemble(again.binary) == text);
}

} // namespace

TEST_CASE("the broadcasting add example assembles and round-trips", "[kernels]")
{
    Result r = example("add_bcast.s");
    CHECK(r.kernel.name == "add_bcast_f32");
    CHECK(r.kernel.num_tensors == 3);
    CHECK(r.kernel.index_dims == 2);
    REQUIRE(r.kernel.meta.size() == 1);
    CHECK(r.kernel.code.size() == 10);
    // the macro expanded to iid + imul by 256
    const Slot &imul = r.kernel.code[1].slot[HPU_TPC_SLOT_SCALAR];
    CHECK((imul.lo & 0xff) == HPU_TPC_OP_IMUL);
    CHECK(imul.hi == 256);
    round_trip(r);
}

TEST_CASE("the softmax example assembles and round-trips", "[kernels]")
{
    Result r = example("softmax.s");
    CHECK(r.kernel.name == "softmax_f32");
    CHECK(r.kernel.code.size() == 23);
    // every bundle is legal for the decoder with the kernel's counts
    CodeContext ctx{static_cast<uint32_t>(r.kernel.code.size()), r.kernel.num_tensors, r.kernel.num_scalars};
    for (const auto &b : r.kernel.code)
        CHECK(check_bundle(b, ctx) == HPU_TPC_ILL_NONE);
    round_trip(r);
}

TEST_CASE("the bf16 scaling example assembles and round-trips", "[kernels]")
{
    Result r = example("scale_bf16.s");
    REQUIRE(r.kernel.code.size() == 10);
    // vcvt.bf16.f32 v3, v2, 1: source f32 (type), destination bf16 (type2), part 1
    const Slot &s = r.kernel.code[8].slot[HPU_TPC_SLOT_VECTOR];
    CHECK(HPU_TPC_GET(s.lo, TYPE) == HPU_TPC_DT_F32);
    CHECK(HPU_TPC_GET(s.lo, TYPE2) == HPU_TPC_DT_BF16);
    CHECK(HPU_TPC_GET(s.lo, PART) == 1);
    round_trip(r);
}

TEST_CASE("the dropout example assembles and round-trips", "[kernels]")
{
    Result r = example("dropout.s");
    CHECK(r.kernel.num_scalars == 2);
    round_trip(r);
}
