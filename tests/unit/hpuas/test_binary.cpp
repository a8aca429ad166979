// SPDX-License-Identifier: MIT
//
// The kernel binary's header, the launch descriptor and the tensor
// descriptors: what the assembler writes, and every rule of the checks of
// include/hw/hpu_tpc.h (the device's), each with its BAD_LAUNCH code.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstring>

#include "helpers.h"

using namespace hpu::tpc;
using namespace hpuas_test;

namespace
{

Bytes sample()
{
    return must_assemble("top: ld.t.f32 v0, t0, i0\nhalt\n",
                         ".kernel sample\n.tensors 2\n.scalars 3\n.index_dims 2\n.tensor 1, bf16\n"
                         ".slm 64\n.vlm 512\n.meta \"a=1\"\n.meta \"b=\\\"x\\\"\"\n")
        .binary;
}

void set32(Bytes &b, uint32_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t get32(const Bytes &b, uint32_t off)
{
    return hpu_tpc_le32(b.data() + off);
}

uint32_t check_with(Bytes b, uint32_t off, uint32_t v)
{
    set32(b, off, v);
    return check_binary(b);
}

uint32_t check_byte(Bytes b, uint32_t off, uint8_t v)
{
    b[off] = v;
    return check_binary(b);
}

} // namespace

TEST_CASE("the assembler writes the documented header", "[binary]")
{
    Bytes b = sample();
    REQUIRE(b.size() == 128 + 2 * 64 + 10);
    CHECK(get32(b, 0) == 0x43505448u);
    CHECK(std::memcmp(b.data(), "HTPC", 4) == 0);
    CHECK(hpu_tpc_le16(b.data() + 4) == 1);
    CHECK(hpu_tpc_le16(b.data() + 6) == 128);
    CHECK(get32(b, 8) == b.size());
    CHECK(get32(b, 12) == 0);
    CHECK(get32(b, 16) == 128);
    CHECK(get32(b, 20) == 128);
    CHECK(get32(b, 24) == 2);
    CHECK(get32(b, 28) == 0);
    CHECK(b[32] == 2);
    CHECK(b[33] == 3);
    CHECK(b[34] == 2);
    CHECK(get32(b, 36) == 64);
    CHECK(get32(b, 40) == 512);
    CHECK(get32(b, 44) == 256);
    CHECK(get32(b, 48) == 10);
    CHECK(b[64] == 0);
    CHECK(b[65] == HPU_TPC_DT_BF16);
    CHECK(std::string(reinterpret_cast<const char *>(b.data() + 80)) == "sample");
    CHECK(std::memcmp(b.data() + 256, "a=1\0b=\"x\"\0", 10) == 0);
    // bundle 0's load slot at 128, little-endian
    CHECK(hpu_tpc_le64(b.data() + 128) == 0x0000000000000101ULL);
    CHECK(check_binary(b) == HPU_TPC_BL_OK);
}

TEST_CASE("decode_binary reads back what encode_binary wrote", "[binary]")
{
    Kernel k = decode_binary(sample());
    CHECK(k.name == "sample");
    CHECK(k.num_tensors == 2);
    CHECK(k.num_scalars == 3);
    CHECK(k.index_dims == 2);
    CHECK(k.slm_size == 64);
    CHECK(k.vlm_size == 512);
    CHECK(k.tensor_dtype[1] == HPU_TPC_DT_BF16);
    REQUIRE(k.meta.size() == 2);
    CHECK(k.meta[1] == "b=\"x\"");
    CHECK(k.code.size() == 2);
    CHECK(encode_binary(k) == sample());
}

TEST_CASE("the header checks give each rule its BAD_LAUNCH code", "[binary]")
{
    Bytes b = sample();
    CHECK(check_with(b, 0, 0x43505449u) == HPU_TPC_BL_BIN_MAGIC);
    CHECK(check_byte(b, 4, 2) == HPU_TPC_BL_BIN_VERSION);
    CHECK(check_byte(b, 6, 64) == HPU_TPC_BL_BIN_VERSION);
    CHECK(check_with(b, 8, static_cast<uint32_t>(b.size()) + 1) == HPU_TPC_BL_BIN_SIZE);
    CHECK(check_binary(Bytes(b.begin(), b.begin() + 100)) == HPU_TPC_BL_BIN_SIZE);
    CHECK(check_with(b, 12, 1) == HPU_TPC_BL_BIN_RESERVED);
    CHECK(check_byte(b, 35, 1) == HPU_TPC_BL_BIN_RESERVED);
    CHECK(check_byte(b, 52, 1) == HPU_TPC_BL_BIN_RESERVED);
    CHECK(check_byte(b, 127, 1) == HPU_TPC_BL_BIN_RESERVED);
    CHECK(check_with(b, 16, 64) == HPU_TPC_BL_BIN_CODE);  // inside the header
    CHECK(check_with(b, 16, 130) == HPU_TPC_BL_BIN_CODE); // not 64-aligned
    CHECK(check_with(b, 20, 64) == HPU_TPC_BL_BIN_CODE);  // code_size != bundles * 64
    CHECK(check_with(b, 24, 0) == HPU_TPC_BL_BIN_CODE);
    CHECK(check_with(b, 24, 16385) == HPU_TPC_BL_BIN_CODE);
    {
        Bytes c = b; // code past the end
        set32(c, 16, 192);
        CHECK(check_binary(c) == HPU_TPC_BL_BIN_CODE);
    }
    CHECK(check_with(b, 28, 2) == HPU_TPC_BL_BIN_ENTRY);
    CHECK(check_with(b, 28, 1) == HPU_TPC_BL_OK);
    CHECK(check_byte(b, 32, 17) == HPU_TPC_BL_BIN_COUNTS);
    CHECK(check_byte(b, 33, 33) == HPU_TPC_BL_BIN_COUNTS);
    CHECK(check_byte(b, 34, 0) == HPU_TPC_BL_BIN_COUNTS);
    CHECK(check_byte(b, 34, 6) == HPU_TPC_BL_BIN_COUNTS);
    CHECK(check_with(b, 36, 62) == HPU_TPC_BL_BIN_LOCAL);
    CHECK(check_with(b, 36, 4100) == HPU_TPC_BL_BIN_LOCAL);
    CHECK(check_with(b, 40, 300) == HPU_TPC_BL_BIN_LOCAL);
    CHECK(check_with(b, 40, 65536 + 256) == HPU_TPC_BL_BIN_LOCAL);
    CHECK(check_byte(b, 64, 9) == HPU_TPC_BL_BIN_DTYPE);      // not a type
    CHECK(check_byte(b, 66, 1) == HPU_TPC_BL_BIN_DTYPE);      // tensor 2 of 2
    CHECK(check_byte(b, 80, 0) == HPU_TPC_BL_BIN_NAME);       // empty
    CHECK(check_byte(b, 81, 0x07) == HPU_TPC_BL_BIN_NAME);    // not printable
    CHECK(check_byte(b, 90, 'x') == HPU_TPC_BL_BIN_NAME);     // after the NUL
    {
        Bytes c = b; // 32 characters, no NUL
        std::memset(c.data() + 80, 'n', 32);
        CHECK(check_binary(c) == HPU_TPC_BL_BIN_NAME);
    }
    CHECK(check_with(b, 44, 200) == HPU_TPC_BL_BIN_META);     // overlaps the code
    CHECK(check_with(b, 48, 13) == HPU_TPC_BL_BIN_META);      // past the end
    CHECK(check_byte(b, static_cast<uint32_t>(b.size()) - 1, 'x') == HPU_TPC_BL_BIN_META); // no final NUL
    CHECK(check_byte(b, 257, 0x80) == HPU_TPC_BL_BIN_META);   // not printable
    {
        Bytes c = b; // no metadata but an offset
        set32(c, 48, 0);
        CHECK(check_binary(c) == HPU_TPC_BL_BIN_META);
    }
}

TEST_CASE("the header checks run in the order of tpc.md's table: the first rule broken wins",
          "[binary]")
{
    // Two rules broken at once, one pair per neighbouring rows of the table
    // (the first two are the review's examples: the reserved fields were
    // checked right after flags and the metadata last).
    struct Pair {
        const char *what;
        uint32_t off1, v1, off2, v2; // u32 fields at multiples of 4 below 64 but 32;
                                     // else a byte (the counts at 32-35, from 64 on)
        uint32_t want;
    };
    const Pair pairs[] = {
        {"code_offset 0, reserved[4]", 16, 0, 112, 1, HPU_TPC_BL_BIN_CODE},
        {"meta_offset, empty name", 44, 200, 80, 0, HPU_TPC_BL_BIN_META},
        {"flags, code", 12, 1, 16, 0, HPU_TPC_BL_BIN_RESERVED},
        {"entry, reserved byte 35", 28, 2, 35, 1, HPU_TPC_BL_BIN_ENTRY},
        {"counts, reserved byte 35", 34, 0, 35, 1, HPU_TPC_BL_BIN_COUNTS},
        {"reserved byte 35, slm", 35, 1, 36, 62, HPU_TPC_BL_BIN_RESERVED},
        {"slm, meta", 36, 62, 44, 200, HPU_TPC_BL_BIN_LOCAL},
        {"vlm, reserved[3]", 40, 300, 52, 1, HPU_TPC_BL_BIN_LOCAL},
        {"meta, reserved[3]", 44, 200, 56, 1, HPU_TPC_BL_BIN_META},
        {"reserved[3], dtype", 60, 1, 64, 9, HPU_TPC_BL_BIN_RESERVED},
        {"dtype, name", 66, 1, 81, 7, HPU_TPC_BL_BIN_DTYPE},
        {"name, reserved[4]", 81, 7, 127, 1, HPU_TPC_BL_BIN_NAME},
        {"reserved[4], metadata's last byte", 120, 1, 265, 'x', HPU_TPC_BL_BIN_RESERVED},
    };
    const Bytes b = sample();
    REQUIRE(b.size() == 266);
    auto put = [](Bytes &c, uint32_t off, uint32_t v) {
        if (off % 4 == 0 && off < 64 && off != 32) {
            set32(c, off, v);
        } else {
            c[off] = static_cast<uint8_t>(v);
        }
    };
    for (const Pair &p : pairs) {
        CAPTURE(p.what);
        Bytes c = b;
        put(c, p.off1, p.v1);
        put(c, p.off2, p.v2);
        CHECK(check_binary(c) == p.want);
    }
}

TEST_CASE("rule names come from the header's table", "[binary]")
{
    CHECK(launch_rule_name(HPU_TPC_BL_BIN_META) == "BIN_META");
    CHECK(launch_rule_name(HPU_TPC_BL_TENSOR_RESERVED) == "TENSOR_RESERVED");
    CHECK(illegal_name(HPU_TPC_ILL_CONFLICT) == "CONFLICT");
    CHECK(launch_rule_name(HPU_TPC_BL_INDEX_SPACE) == "INDEX_SPACE");
}

TEST_CASE("decode_binary refuses a bad header or an illegal bundle", "[binary]")
{
    Bytes b = sample();
    b[0] = 0;
    CHECK_THROWS_WITH(decode_binary(b), Catch::Matchers::ContainsSubstring("BIN_MAGIC"));
    b = sample();
    b[128 + 64 + 16] = 0xee; // bundle 1's scalar opcode
    CHECK_THROWS_WITH(decode_binary(b), Catch::Matchers::ContainsSubstring("bundle 1 is illegal: OPCODE"));
    b = sample();
    set32(b, 28, 1);
    Kernel k = decode_binary(b);
    CHECK(k.entry == 1);
    CHECK(assemble(disassemble(b), "d.s").binary == b); // .entry round-trips
}

TEST_CASE("the disassembler refuses a layout the assembler would not write", "[binary]")
{
    Bytes b = sample();
    // The same content with the metadata moved one byte on.
    b.insert(b.begin() + 256, 0);
    set32(b, 8, static_cast<uint32_t>(b.size()));
    set32(b, 44, 257);
    REQUIRE(check_binary(b) == HPU_TPC_BL_OK);
    CHECK_THROWS_WITH(disassemble(b), Catch::Matchers::ContainsSubstring("layout"));
}

TEST_CASE("a kernel name of any printable characters disassembles to text that assembles back", "[binary]")
{
    // Valid binaries (the header allows any printable ASCII name) whose
    // names the bare .kernel syntax cannot write: quoted, with escapes.
    for (const std::string name : {"my kernel", "a+b", "x/y", "a // b", "q\"uote", "back\\slash", "semi;colon",
                                   " lead", "trail ", "~", "0123456789 123456789 123456789 "}) {
        INFO(name);
        Kernel k = decode_binary(sample());
        k.name = name;
        const Bytes b = encode_binary(k);
        REQUIRE(check_binary(b) == HPU_TPC_BL_OK);
        const std::string text = disassemble(b);
        CHECK_THAT(text, Catch::Matchers::ContainsSubstring(".kernel \""));
        const Result r = assemble(text, "d.s");
        INFO(r.error_text());
        CHECK(r.binary == b);
        CHECK(r.kernel.name == name);
    }
    // A bare name stays bare.
    CHECK_THAT(disassemble(sample()), Catch::Matchers::ContainsSubstring(".kernel sample\n"));
}

TEST_CASE(".kernel takes a quoted name of 1-31 printable characters", "[binary]")
{
    CHECK(must_assemble("halt\n", ".kernel \"a b\"\n").kernel.name == "a b");
    CHECK(must_assemble("halt\n", ".kernel \"plain\"\n").binary == must_assemble("halt\n", ".kernel plain\n").binary);
    for (const char *bad : {".kernel \"\"\n", ".kernel \"0123456789012345678901234567890x\"\n"}) {
        INFO(bad);
        const Diagnostic d = only_error("halt\n", bad);
        CHECK_THAT(d.message, Catch::Matchers::ContainsSubstring(".kernel needs a name of 1-31 characters"));
    }
    CHECK_THAT(only_error("halt\n", ".kernel a b\n").message,
               Catch::Matchers::ContainsSubstring("(others in double quotes)"));
    CHECK_THAT(only_error("halt\n", ".kernel \"a\tb\"\n").message,
               Catch::Matchers::ContainsSubstring("printable ASCII"));
}

namespace
{

struct Launch {
    Bytes d = Bytes(HPU_TPC_LAUNCH_FIXED_SIZE, 0);
    Launch()
    {
        set32(d, 0, HPU_TPC_LAUNCH_MAGIC);
        d[20] = 2; // tensors, as in sample()
        d[21] = 3; // scalars
        for (unsigned i = 0; i < 5; i++)
            set32(d, 24 + 4 * i, i < 2 ? 10 : 1);
        set32(d, 8, 0x10000); // binary address
    }
};

struct Tensor {
    Bytes t = Bytes(HPU_TPC_TENSOR_DESC_SIZE, 0);
    Tensor()
    {
        set32(t, 0, 0x1000); // base
        t[8] = HPU_TPC_DT_F32;
        t[9] = 2;
        set32(t, 16, 100); // size[0]
        set32(t, 20, 7);   // size[1]
        set32(t, 36, 1);   // stride[0]
        set32(t, 40, 100); // stride[1]
    }
    [[nodiscard]] uint32_t check(uint32_t want = 0) const { return hpu_tpc_check_tensor(t.data(), want); }
};

} // namespace

TEST_CASE("the launch descriptor's fixed part is checked rule by rule", "[launch]")
{
    Launch l;
    CHECK(hpu_tpc_check_launch_fixed(l.d.data()) == HPU_TPC_BL_OK);
    auto with = [&](uint32_t off, uint32_t v) {
        Launch x;
        set32(x.d, off, v);
        return hpu_tpc_check_launch_fixed(x.d.data());
    };
    CHECK(with(0, 0) == HPU_TPC_BL_DESC_MAGIC);
    CHECK(with(4, 1) == HPU_TPC_BL_DESC_RESERVED);  // flags
    CHECK(with(22, 1) == HPU_TPC_BL_DESC_RESERVED); // reserved0
    CHECK(with(44, 1) == HPU_TPC_BL_DESC_RESERVED); // reserved1
    CHECK(with(60, 1) == HPU_TPC_BL_DESC_RESERVED); // reserved2
    CHECK(with(64 + 4 * 3, 5) == HPU_TPC_BL_DESC_RESERVED); // scalar 3 of 3
    CHECK(with(64 + 4 * 2, 5) == HPU_TPC_BL_OK);
    CHECK(with(8, 0x10020) == HPU_TPC_BL_BIN_ADDR);
    Launch x;
    x.d[20] = 17;
    CHECK(hpu_tpc_check_launch_fixed(x.d.data()) == HPU_TPC_BL_ARG_COUNT);
    // tpc.md's order: unused scalars before the counts (the review's example)
    x.d[21] = 0;
    set32(x.d, 64 + 4 * 3, 1);
    CHECK(hpu_tpc_check_launch_fixed(x.d.data()) == HPU_TPC_BL_DESC_RESERVED);
    // the counts before the binary's alignment
    x = Launch();
    x.d[21] = 33;
    set32(x.d, 8, 0x10020);
    CHECK(hpu_tpc_check_launch_fixed(x.d.data()) == HPU_TPC_BL_ARG_COUNT);
}

TEST_CASE("the launch's counts and index space are checked against the binary", "[launch]")
{
    Bytes b = sample(); // 2 tensors, 3 scalars, index_dims 2
    Launch l;
    CHECK(hpu_tpc_check_launch_args(l.d.data(), b.data()) == HPU_TPC_BL_OK);
    l.d[20] = 1;
    CHECK(hpu_tpc_check_launch_args(l.d.data(), b.data()) == HPU_TPC_BL_ARG_COUNT);
    l = Launch();
    l.d[21] = 2;
    CHECK(hpu_tpc_check_launch_args(l.d.data(), b.data()) == HPU_TPC_BL_ARG_COUNT);
    l = Launch();
    set32(l.d, 24 + 4 * 2, 2); // dimension 2 of a 2-D kernel
    CHECK(hpu_tpc_check_launch_args(l.d.data(), b.data()) == HPU_TPC_BL_INDEX_SPACE);
    l = Launch();
    set32(l.d, 24, 0);
    CHECK(hpu_tpc_check_launch_args(l.d.data(), b.data()) == HPU_TPC_BL_INDEX_SPACE);
    l = Launch();
    set32(l.d, 24, 0x80000000u);
    CHECK(hpu_tpc_check_launch_args(l.d.data(), b.data()) == HPU_TPC_BL_INDEX_SPACE);
    l = Launch();
    set32(l.d, 24, 0x7fffffffu);
    set32(l.d, 28, 0x20001u); // (2^31 - 1) * (2^17 + 1) > 2^48 members
    CHECK(hpu_tpc_check_launch_args(l.d.data(), b.data()) == HPU_TPC_BL_INDEX_SPACE);
    set32(l.d, 28, 0x10000u);
    CHECK(hpu_tpc_check_launch_args(l.d.data(), b.data()) == HPU_TPC_BL_OK);
}

TEST_CASE("an index space whose product passes 2^64 is INDEX_SPACE, not a wrapped count",
          "[launch]")
{
    Bytes b = sample();
    b[34] = 3; // index_dims 3
    REQUIRE(check_binary(b) == HPU_TPC_BL_OK);
    auto space = [&](uint32_t s0, uint32_t s1, uint32_t s2) {
        Launch l;
        set32(l.d, 24, s0);
        set32(l.d, 28, s1);
        set32(l.d, 32, s2);
        return l;
    };
    const Launch max = space(1u << 24, 1u << 24, 1); // exactly 2^48 members
    CHECK(hpu_tpc_check_launch_args(max.d.data(), b.data()) == HPU_TPC_BL_OK);
    CHECK(hpu_tpc_launch_members(max.d.data()) == 1ULL << 48);
    const Launch over = space(1u << 24, 1u << 24, 2);
    CHECK(hpu_tpc_check_launch_args(over.d.data(), b.data()) == HPU_TPC_BL_INDEX_SPACE);
    const Launch wrap0 = space(1u << 24, 1u << 24, 1u << 16); // 2^64: wrapped to 0
    CHECK(hpu_tpc_check_launch_args(wrap0.d.data(), b.data()) == HPU_TPC_BL_INDEX_SPACE);
    CHECK(hpu_tpc_launch_members(wrap0.d.data()) == 0);
    const Launch wrap48 = space(1u << 24, 1u << 24, (1u << 16) + 1); // wrapped to 2^48
    CHECK(hpu_tpc_check_launch_args(wrap48.d.data(), b.data()) == HPU_TPC_BL_INDEX_SPACE);
    CHECK(hpu_tpc_launch_members(wrap48.d.data()) == 0);
    const Launch big = space(0x7fffffffu, 0x7fffffffu, 0x7fffffffu);
    CHECK(hpu_tpc_check_launch_args(big.d.data(), b.data()) == HPU_TPC_BL_INDEX_SPACE);
    const Launch small = space(10, 10, 3);
    CHECK(hpu_tpc_launch_members(small.d.data()) == 300);
}

TEST_CASE("tensor descriptors are checked rule by rule", "[launch]")
{
    CHECK(Tensor().check() == HPU_TPC_BL_OK);
    CHECK(Tensor().check(HPU_TPC_DT_F32) == HPU_TPC_BL_OK);
    CHECK(Tensor().check(HPU_TPC_DT_BF16) == HPU_TPC_BL_TENSOR_DTYPE);
    Tensor t;
    t.t[8] = 0;
    CHECK(t.check() == HPU_TPC_BL_TENSOR_DTYPE);
    t = Tensor();
    t.t[8] = 9;
    CHECK(t.check() == HPU_TPC_BL_TENSOR_DTYPE);
    t = Tensor();
    t.t[10] = 1; // flags
    CHECK(t.check() == HPU_TPC_BL_TENSOR_RESERVED);
    t = Tensor();
    t.t[63] = 1;
    CHECK(t.check() == HPU_TPC_BL_TENSOR_RESERVED);
    t = Tensor();
    t.t[9] = 0;
    CHECK(t.check() == HPU_TPC_BL_TENSOR_SHAPE);
    t.t[9] = 6;
    CHECK(t.check() == HPU_TPC_BL_TENSOR_SHAPE);
    t = Tensor();
    set32(t.t, 20, 0); // size[1] of 2 dims
    CHECK(t.check() == HPU_TPC_BL_TENSOR_SHAPE);
    t = Tensor();
    set32(t.t, 24, 1); // size[2] of 2 dims must be 0
    CHECK(t.check() == HPU_TPC_BL_TENSOR_SHAPE);
    t = Tensor();
    set32(t.t, 44, 1); // stride[2] likewise
    CHECK(t.check() == HPU_TPC_BL_TENSOR_SHAPE);
    t = Tensor();
    set32(t.t, 16, 0x80000000u);
    CHECK(t.check() == HPU_TPC_BL_TENSOR_SHAPE);
    t = Tensor();
    set32(t.t, 40, 0); // stride 0 broadcasts: allowed
    CHECK(t.check() == HPU_TPC_BL_OK);
    t = Tensor();
    set32(t.t, 0, 0x1002);
    CHECK(t.check() == HPU_TPC_BL_TENSOR_ALIGN);
    t.t[8] = HPU_TPC_DT_BF16;
    CHECK(t.check() == HPU_TPC_BL_OK);
    t = Tensor();
    set32(t.t, 0, 0xfffff000u);
    set32(t.t, 4, 0xffffffffu); // base near 2^64: the last element wraps
    set32(t.t, 40, 0x10000000u);
    CHECK(t.check() == HPU_TPC_BL_TENSOR_RANGE);
    t = Tensor(); // a span past 2^64 at base 0: 3 * (2^31 - 2) * (2^32 - 1) bytes
    set32(t.t, 0, 0);
    t.t[8] = HPU_TPC_DT_U8;
    t.t[9] = 3;
    for (uint32_t d = 0; d < 3; d++) {
        set32(t.t, 16 + 4 * d, 0x7fffffffu);
        set32(t.t, 36 + 4 * d, 0xffffffffu);
    }
    CHECK(t.check() == HPU_TPC_BL_TENSOR_RANGE);
    t.t[9] = 2; // two such dimensions end below 2^64
    set32(t.t, 24, 0);
    set32(t.t, 44, 0);
    CHECK(t.check() == HPU_TPC_BL_OK);
    t = Tensor();
    set32(t.t, 12, 0xff800000u); // -inf padding for f32
    CHECK(t.check() == HPU_TPC_BL_OK);
    t.t[8] = HPU_TPC_DT_U16;
    CHECK(t.check() == HPU_TPC_BL_TENSOR_PAD); // bits above a 16-bit element
    set32(t.t, 12, 0xffff);
    CHECK(t.check() == HPU_TPC_BL_OK);
}

TEST_CASE("the launch descriptor's layout is the spec's", "[launch]")
{
    CHECK(HPU_TPC_LAUNCH_OFF(binary) == 8);
    CHECK(HPU_TPC_LAUNCH_OFF(binary_size) == 16);
    CHECK(HPU_TPC_LAUNCH_OFF(num_tensors) == 20);
    CHECK(HPU_TPC_LAUNCH_OFF(index_size) == 24);
    CHECK(HPU_TPC_LAUNCH_OFF(seed) == 48);
    CHECK(HPU_TPC_LAUNCH_OFF(scalars) == 64);
    CHECK(hpu_tpc_launch_size(16) == 192 + 1024);
    CHECK(HPU_TPC_TENSOR_OFF(pad) == 12);
    CHECK(HPU_TPC_TENSOR_OFF(reserved) == 56);
}

TEST_CASE("f32 to bf16 rounds, saturates and keeps NaNs as the spec says", "[convert]")
{
    auto cv = [](uint32_t x, unsigned rm, int sat = 0, uint32_t rnd = 0) {
        return hpu_tpc_f32_to_bf16(x, rm, sat, rnd);
    };
    CHECK(cv(0x3f800000u, HPU_TPC_RM_RN) == 0x3f80);   // 1.0 exact
    CHECK(cv(0x3f808000u, HPU_TPC_RM_RN) == 0x3f80);   // tie to even (down)
    CHECK(cv(0x3f818000u, HPU_TPC_RM_RN) == 0x3f82);   // tie to even (up)
    CHECK(cv(0x3f808001u, HPU_TPC_RM_RN) == 0x3f81);   // above the tie
    CHECK(cv(0x3f80ffffu, HPU_TPC_RM_RZ) == 0x3f80);
    CHECK(cv(0x3f800001u, HPU_TPC_RM_RU) == 0x3f81);
    CHECK(cv(0x3f800001u, HPU_TPC_RM_RD) == 0x3f80);
    CHECK(cv(0xbf800001u, HPU_TPC_RM_RU) == 0xbf80);   // toward +inf: smaller magnitude
    CHECK(cv(0xbf800001u, HPU_TPC_RM_RD) == 0xbf81);
    CHECK(cv(0x3f800000u, HPU_TPC_RM_RU) == 0x3f80);   // exact stays
    CHECK(cv(0x7f7fffffu, HPU_TPC_RM_RN) == 0x7f80);   // overflow to inf
    CHECK(cv(0x7f7fffffu, HPU_TPC_RM_RN, 1) == 0x7f7f); // .sat: largest finite
    CHECK(cv(0x7f7fffffu, HPU_TPC_RM_RZ) == 0x7f7f);
    CHECK(cv(0xff7fffffu, HPU_TPC_RM_RU) == 0xff7f);   // negative toward +inf stays finite
    CHECK(cv(0xff7fffffu, HPU_TPC_RM_RD) == 0xff80);
    CHECK(cv(0x7f800000u, HPU_TPC_RM_RN, 1) == 0x7f80); // inf stays, even with .sat
    CHECK(cv(0xff800000u, HPU_TPC_RM_RZ) == 0xff80);
    CHECK(cv(0x7f800001u, HPU_TPC_RM_RN) == 0x7fc0);   // signalling NaN: quiet, never inf
    CHECK(cv(0xff800001u, HPU_TPC_RM_RZ) == 0xffc0);
    CHECK(cv(0x7fc12345u, HPU_TPC_RM_RN) == 0x7fc1);
    CHECK(cv(0x80000000u, HPU_TPC_RM_RN) == 0x8000);   // -0
    CHECK(cv(0x00008000u, HPU_TPC_RM_RN) == 0x0000);   // subnormal tie to even
    CHECK(cv(0x00018000u, HPU_TPC_RM_RN) == 0x0002);
    CHECK(cv(0x3f800001u, HPU_TPC_RM_SR, 0, 0) == 0x3f80);      // SR: adds the low 16 random bits
    CHECK(cv(0x3f800001u, HPU_TPC_RM_SR, 0, 0xffff) == 0x3f81);
    CHECK(cv(0x3f80c000u, HPU_TPC_RM_SR, 0, 0x3fffu) == 0x3f80);
    CHECK(cv(0x3f80c000u, HPU_TPC_RM_SR, 0, 0xffff4000u) == 0x3f81); // only the low 16 bits count
    CHECK(cv(0x7f7fffffu, HPU_TPC_RM_SR, 0, 0xffff) == 0x7f80);
    CHECK(cv(0x7f7fffffu, HPU_TPC_RM_SR, 1, 0xffff) == 0x7f7f);
}
