// SPDX-License-Identifier: MIT
//
// Every instruction of the table assembles to the encoding of
// Documentation/hw/tpc.md (field positions written out here, not taken
// from the header's macros), disassembles to text that assembles back to
// the same bits in every operand form, and the decoder refuses what the
// spec calls illegal.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "helpers.h"

using namespace hpu::tpc;
using namespace hpuas_test;

namespace
{

// The spec's field positions (tpc.md, "Slot encoding").
struct Fields {
    uint64_t op = 0, type = 0, type2 = 0, greg = 0, gneg = 0, glane = 0, form = 0, mod = 0, sat = 0,
             part = 0, d = 0, a = 0, b = 0, c = 0, imm = 0;
    [[nodiscard]] Slot slot() const
    {
        Slot s;
        s.lo = op | type << 8 | type2 << 12 | greg << 16 | gneg << 19 | glane << 20 | form << 21 | mod << 23 |
               sat << 27 | part << 28 | d << 32 | a << 40 | b << 48 | c << 56;
        s.hi = imm;
        return s;
    }
};

uint32_t f32_bits(float f)
{
    uint32_t b = 0;
    std::memcpy(&b, &f, 4);
    return b;
}

// One instruction's text and its expected fields, in B form @form (for XB
// and SXB operands), with data types @type (and @type2 for conversions).
struct Example {
    std::string text;
    Fields f;
};

Example example(const hpu_tpc_insn_desc &d, unsigned type, unsigned type2, unsigned form)
{
    Example e;
    Fields &f = e.f;
    f.op = d.opcode;
    std::string m = d.mnemonic;
    if (d.flags & HPU_TPC_IF_COND) {
        m += ".lt";
        f.mod = 2;
    }
    if (d.flags & HPU_TPC_IF_TYPE2) {
        m += "." + std::string(dtype_name(type2));
        f.type2 = type2;
    }
    if (type) {
        m += "." + std::string(dtype_name(type));
        f.type = type;
    }
    std::vector<std::string> ops;
    for (unsigned k : d.opnd) {
        switch (k) {
        case HPU_TPC_OPND_VD: ops.emplace_back("v3"); f.d = 3; break;
        case HPU_TPC_OPND_VA: ops.emplace_back("v5"); f.a = 5; break;
        case HPU_TPC_OPND_VB: ops.emplace_back("v7"); f.b = 7; break;
        case HPU_TPC_OPND_VC: ops.emplace_back("v9"); f.c = 9; break;
        case HPU_TPC_OPND_SD: ops.emplace_back("s3"); f.d = 3; break;
        case HPU_TPC_OPND_SA: ops.emplace_back("s5"); f.a = 5; break;
        case HPU_TPC_OPND_SC: ops.emplace_back("s9"); f.c = 9; break;
        case HPU_TPC_OPND_PD: ops.emplace_back("sp3"); f.d = 3; break;
        case HPU_TPC_OPND_PA: ops.emplace_back("sp5"); f.a = 5; break;
        case HPU_TPC_OPND_PB: ops.emplace_back("sp6"); f.b = 6; break;
        case HPU_TPC_OPND_PC: ops.emplace_back("sp7"); f.c = 7; break;
        case HPU_TPC_OPND_PNA: ops.emplace_back("!sp2"); f.a = 2; f.mod = 1; break;
        case HPU_TPC_OPND_QD: ops.emplace_back("vp3"); f.d = 3; break;
        case HPU_TPC_OPND_QA: ops.emplace_back("vp5"); f.a = 5; break;
        case HPU_TPC_OPND_QB: ops.emplace_back("vp6"); f.b = 6; break;
        case HPU_TPC_OPND_QC: ops.emplace_back("vp7"); f.c = 7; break;
        case HPU_TPC_OPND_ID: ops.emplace_back("i3"); f.d = 3; break;
        case HPU_TPC_OPND_IA: ops.emplace_back("i5"); f.a = 5; break;
        case HPU_TPC_OPND_IB: ops.emplace_back("i6"); f.b = 6; break;
        case HPU_TPC_OPND_TA: ops.emplace_back("t4"); f.a = 4; break;
        case HPU_TPC_OPND_DIMC: ops.emplace_back("2"); f.c = 2; break;
        case HPU_TPC_OPND_MEM: ops.emplace_back("[s6 + 12]"); f.form = 1; f.a = 6; f.imm = 12; break;
        case HPU_TPC_OPND_IMM: ops.emplace_back("1"); f.imm = 1; break;
        case HPU_TPC_OPND_LBL: ops.emplace_back("top"); f.imm = 0; break;
        case HPU_TPC_OPND_PART: ops.emplace_back("0"); break;
        case HPU_TPC_OPND_XB:
        case HPU_TPC_OPND_SXB:
            f.form = form;
            if (form == 0) {
                ops.emplace_back("v11");
                f.b = 11;
            } else if (form == 1) {
                ops.emplace_back("s11");
                f.b = 11;
            } else {
                ops.emplace_back("1");
                bool fp = type == HPU_TPC_DT_F32 || type == HPU_TPC_DT_BF16;
                f.imm = fp && !(d.flags & HPU_TPC_IF_LANEIMM) ? f32_bits(1.0F) : 1;
            }
            break;
        default:
            break;
        }
    }
    e.text = m;
    for (size_t i = 0; i < ops.size(); i++)
        e.text += (i ? ", " : " ") + ops[i];
    return e;
}

std::vector<unsigned> types_of(uint16_t ts)
{
    std::vector<unsigned> v;
    for (unsigned dt = HPU_TPC_DT_F32; dt <= HPU_TPC_DT_U8; dt++) {
        if ((ts >> dt) & 1)
            v.push_back(dt);
}
    if (v.empty())
        v.push_back(0);
    return v;
}

std::vector<unsigned> forms_of(const hpu_tpc_insn_desc &d)
{
    for (unsigned k : d.opnd) {
        if (k == HPU_TPC_OPND_XB)
            return {0, 1, 2};
        if (k == HPU_TPC_OPND_SXB)
            return {1, 2};
    }
    return {0};
}

Slot assembled_slot(const std::string &line, unsigned slot)
{
    Result r = must_assemble("top: " + line + "\n");
    REQUIRE(r.kernel.code.size() == 1);
    return r.kernel.code[0].slot[slot];
}

} // namespace

TEST_CASE("every instruction assembles to its documented encoding", "[encoding]")
{
    for (const auto &d : insn_table()) {
        std::vector<unsigned> ts = types_of(d.types);
        unsigned type = ts[0];
        unsigned type2 = (d.flags & HPU_TPC_IF_TYPE2) ? ts[1] : 0;
        for (unsigned form : forms_of(d)) {
            Example e = example(d, type, type2, form);
            INFO(e.text);
            Slot s = assembled_slot(e.text, d.slot);
            Slot want = e.f.slot();
            CHECK(s.lo == want.lo);
            CHECK(s.hi == want.hi);
        }
    }
}

TEST_CASE("the spec's worked encodings", "[encoding]")
{
    Slot s = assembled_slot("vadd.f32 v2, v0, v1", HPU_TPC_SLOT_VECTOR);
    CHECK(s.lo == 0x0001000200000102ULL);
    CHECK(s.hi == 0);
    s = assembled_slot("(!vp1) vcmp.lt.f32 vp2, v3, 0.5", HPU_TPC_SLOT_VECTOR);
    CHECK(s.lo == 0x0000030201590112ULL);
    CHECK(s.hi == 0x3f000000ULL);
    s = assembled_slot("ld.t.bf16 v4, t1, i2", HPU_TPC_SLOT_LOAD);
    CHECK(s.lo == 0x0002010400000201ULL);
    s = assembled_slot("vcvt.bf16.f32.sr v6, v7, 1", HPU_TPC_SLOT_VECTOR);
    CHECK(s.lo == 0x0000070612002114ULL);
    s = assembled_slot("loop s3, top", HPU_TPC_SLOT_SCALAR);
    CHECK(s.lo == 0x0000000300000021ULL);
    CHECK(s.hi == 0);
    s = assembled_slot("st.l [s1 - 4], s2", HPU_TPC_SLOT_STORE);
    CHECK(s.lo == 0x0200010000200003ULL);
    CHECK(s.hi == 0xfffffffcULL);
}

TEST_CASE("modifiers, guards and immediates encode as documented", "[encoding]")
{
    const char *conds[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    for (uint64_t c = 0; c < 6; c++) {
        Slot s = assembled_slot(std::string("cmp.") + conds[c] + ".i32 sp1, s2, s3", HPU_TPC_SLOT_SCALAR);
        CHECK(((s.lo >> 23) & 15) == c);
    }
    const char *rms[] = {"rn", "rz", "ru", "rd"};
    for (uint64_t m = 0; m < 4; m++) {
        Slot s = assembled_slot(std::string("vcvt.i32.f32.") + rms[m] + " v1, v2, 0", HPU_TPC_SLOT_VECTOR);
        CHECK(((s.lo >> 23) & 15) == m);
        CHECK(((s.lo >> 8) & 15) == HPU_TPC_DT_F32);
        CHECK(((s.lo >> 12) & 15) == HPU_TPC_DT_I32);
    }
    CHECK(((assembled_slot("vadd.i8.sat v1, v2, v3", 2).lo >> 27) & 1) == 1);
    Slot g = assembled_slot("(!sp5) add.i32 s1, s2, -7", HPU_TPC_SLOT_SCALAR);
    CHECK(((g.lo >> 16) & 7) == 5);
    CHECK(((g.lo >> 19) & 1) == 1);
    CHECK(((g.lo >> 20) & 1) == 0);
    CHECK(g.hi == 0xfffffff9ULL);
    CHECK(assembled_slot("vadd.i8 v1, v2, -1", 2).hi == 0xff);
    CHECK(assembled_slot("vadd.u8 v1, v2, 255", 2).hi == 0xff);
    CHECK(assembled_slot("vadd.i16 v1, v2, -2", 2).hi == 0xfffe);
    CHECK(assembled_slot("vmov.bf16 v1, -2.5", 2).hi == f32_bits(-2.5F));
    CHECK(assembled_slot("vmov.f32 v1, bits(0x7fc00001)", 2).hi == 0x7fc00001ULL);
    CHECK(assembled_slot("vmov.f32 v1, -inf", 2).hi == 0xff800000ULL);
    CHECK(assembled_slot("vmov.f32 v1, 3", 2).hi == f32_bits(3.0F));
    CHECK(assembled_slot("mov s1, 0.25", 1).hi == f32_bits(0.25F));
    CHECK(assembled_slot("mov s1, 0xffffffff", 1).hi == 0xffffffffULL);
    CHECK(assembled_slot("vbcast.u8 v1, v2, 255", 2).hi == 255);
    CHECK(assembled_slot("ld.l s1, [64]", 0).lo == (0x03ULL | 2ULL << 21 | 1ULL << 32));
    CHECK(assembled_slot("ld.l s1, [64]", 0).hi == 64);
    // (sp0) is "always": the same encoding as no guard; (vp0) is not.
    CHECK(assembled_slot("(sp0) halt", 1) == assembled_slot("halt", 1));
    CHECK(((assembled_slot("(vp0) vneg.f32 v1, v2", 2).lo >> 20) & 1) == 1);
}

TEST_CASE("every instruction and operand form round-trips through the disassembler", "[roundtrip]")
{
    std::string body = "top:\n";
    unsigned lines = 0;
    for (const auto &d : insn_table()) {
        std::vector<unsigned> ts = types_of(d.types);
        std::vector<std::pair<unsigned, unsigned>> tps;
        for (unsigned t : ts) {
            if (d.flags & HPU_TPC_IF_TYPE2) {
                for (unsigned t2 : ts) {
                    if (t2 != t)
                        tps.emplace_back(t, t2);
}
            } else {
                tps.emplace_back(t, 0);
            }
        }
        std::vector<std::string> guards = {"", "(sp2) ", "(!sp3) "};
        if (d.flags & HPU_TPC_IF_LANEG) {
            guards.emplace_back("(vp4) ");
            guards.emplace_back("(!vp0) ");
        }
        for (auto [t, t2] : tps) {
            for (unsigned form : forms_of(d)) {
                Example e = example(d, t, t2, form);
                for (const auto &g : guards) {
                    body += g + e.text + "\n";
                    lines++;
                }
                if (d.flags & HPU_TPC_IF_RMODE) {
                    unsigned ratio = std::max(hpu_tpc_lanes(t), hpu_tpc_lanes(t2)) /
                                     std::min(hpu_tpc_lanes(t), hpu_tpc_lanes(t2));
                    std::string pfx = e.text.substr(0, e.text.find(' '));
                    std::string ops = e.text.substr(e.text.find(' '));
                    if (d.slot == HPU_TPC_SLOT_VECTOR)
                        ops = ops.substr(0, ops.rfind(',')) + ", " + std::to_string(ratio - 1);
                    for (const char *rm : {".rz", ".ru", ".rd", ".sat", ".rz.sat"}) {
                        body += pfx;
                        body += rm;
                        body += ops + "\n";
                        lines++;
                    }
                    if (d.slot == HPU_TPC_SLOT_VECTOR && t == HPU_TPC_DT_F32 && t2 == HPU_TPC_DT_BF16) {
                        body += pfx;
                        body += ".sr" + ops + "\n";
                        lines++;
                    }
                }
                if (d.flags & HPU_TPC_IF_COND) {
                    for (const char *c : {".eq.", ".ne.", ".le.", ".gt.", ".ge."}) {
                        std::string x = e.text;
                        x.replace(x.find(".lt."), 4, c);
                        body += x + "\n";
                        lines++;
                    }
                }
                if ((d.flags & HPU_TPC_IF_SAT) && !(d.flags & HPU_TPC_IF_TYPE2) &&
                    ((HPU_TPC_TS_INT >> t) & 1)) {
                    std::string x = e.text;
                    x.insert(x.find(' '), ".sat");
                    body += x + "\n";
                    lines++;
                }
            }
        }
    }
    body += "nop\n";
    Result r = must_assemble(body);
    REQUIRE(r.kernel.code.size() == lines + 1);
    std::string text = disassemble(r.binary);
    Result again = assemble(text, "dis.s");
    INFO(again.error_text());
    REQUIRE(again.ok());
    CHECK(again.binary == r.binary);
    // Each slot's text alone assembles to the same slot.
    for (size_t i = 0; i < r.kernel.code.size(); i += 7) {
        const Bundle &b = r.kernel.code[i];
        for (unsigned s = 0; s < HPU_TPC_SLOTS; s++) {
            std::string one = format_slot(s, b.slot[s]);
            if (one.empty())
                continue;
            INFO(one);
            CHECK(assembled_slot(one, s) == b.slot[s]);
        }
    }
}

TEST_CASE("immediates at the edges of their ranges round-trip", "[roundtrip]")
{
    const char *lines[] = {
        "vadd.i8 v1, v2, -128", "vadd.i8 v1, v2, 127", "vadd.u8 v1, v2, 255", "vadd.i16 v1, v2, -32768",
        "vadd.u16 v1, v2, 65535", "vadd.i32 v1, v2, -2147483648", "vadd.u32 v1, v2, 4294967295",
        "vmov.f32 v1, -0.0", "vmov.f32 v1, 1e-45", "vmov.f32 v1, 3.40282347e38", "vmov.f32 v1, inf",
        "vmov.f32 v1, nan", "vmov.f32 v1, bits(0xffc00001)", "vmov.f32 v1, 0.1", "vmov.bf16 v1, 1.00390625",
        "mov s1, -2147483648", "mov s1, 65537", "mov s1, -65537", "iadd i1, i1, 0, -2147483648",
        "ld.l s1, [s2 - 2147483648]", "ld.l s1, [s2 + 2147483647]", "ld.lv v1, [-256]",
        "vrot.f32 v1, v2, 63", "vext.u8 s1, v2, 255", "vins.i16 v1, s2, 127", "ldarg s1, 31",
        "pset sp1, 0", "assert sp1, 0xdeadbeef", "vcvt.u8.f32 v1, v2, 3", "vcvt.f32.u8 v1, v2, 3",
    };
    std::string body = "top:\n";
    for (const char *l : lines)
        body += std::string(l) + "\n";
    Result r = must_assemble(body);
    Result again = assemble(disassemble(r.binary), "dis.s");
    INFO(again.error_text());
    REQUIRE(again.ok());
    CHECK(again.binary == r.binary);
    CHECK(r.kernel.code[7].slot[2].hi == 0x80000000ULL); // -0.0 keeps its sign
}

TEST_CASE("the decoder refuses undefined opcodes and fields", "[decoder]")
{
    CodeContext ctx{4, 2, 2};
    for (unsigned slot = 0; slot < HPU_TPC_SLOTS; slot++) {
        for (unsigned op = 1; op < 256; op++) {
            Slot s;
            s.lo = op;
            if (!find_insn(slot, op))
                CHECK(check_slot(slot, s, ctx) == HPU_TPC_ILL_OPCODE);
        }
        Slot nop;
        CHECK(check_slot(slot, nop, ctx) == HPU_TPC_ILL_NONE);
        nop.hi = 1;
        CHECK(check_slot(slot, nop, ctx) == HPU_TPC_ILL_FIELD);
    }
    auto enc = [](const std::string &line, unsigned slot) { return assembled_slot(line, slot); };
    auto chk = [&](Slot s, unsigned slot) { return check_slot(slot, s, ctx); };
    Slot v = enc("vadd.f32 v1, v2, v3", 2);
    CHECK(chk(v, 2) == HPU_TPC_ILL_NONE);
    for (uint64_t bad : {1ULL << 30, 1ULL << 31}) {
        Slot x = v;
        x.lo |= bad;
        CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // reserved bits
    }
    Slot x = v;
    x.hi |= 1ULL << 40;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // hi reserved
    x = v;
    x.hi = 5;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // an immediate the form does not use
    x = v;
    x.lo = (x.lo & ~(0xfULL << 8)) | (9ULL << 8);
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // data type 9
    x = v;
    x.lo |= 3ULL << 21;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // form 3
    x = v;
    x.lo |= 1ULL << 56;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // field C unused
    x = v;
    x.lo |= 1ULL << 27;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // sat on f32
    x = v;
    x.lo |= 32ULL << 32;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // v33
    x = enc("vpand vp1, vp2, vp3", 2);
    x.lo &= ~(0xffULL << 32);
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // writes vp0
    x = enc("vpand vp1, vp2, vp3", 2);
    x.lo |= 8ULL << 40;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // vp8
    x = enc("halt", 1);
    x.lo |= 1ULL << 20;
    CHECK(chk(x, 1) == HPU_TPC_ILL_GUARD); // a lane guard on a scalar op
    x = enc("vredsum.f32 v1, v2", 2);
    x.lo |= 1ULL << 20;
    CHECK(chk(x, 2) == HPU_TPC_ILL_GUARD);
    x = enc("jmp top", 1);
    x.hi = 4;
    CHECK(chk(x, 1) == HPU_TPC_ILL_FIELD); // target past the code
    x.hi = 3;
    CHECK(chk(x, 1) == HPU_TPC_ILL_NONE);
    CHECK(chk(enc("ld.t.f32 v1, t2, i0", 0), 0) == HPU_TPC_ILL_TENSOR); // ctx has 2 tensors
    CHECK(chk(enc("ld.t.f32 v1, t1, i0", 0), 0) == HPU_TPC_ILL_NONE);
    CHECK(chk(enc("ldarg s1, 2", 0), 0) == HPU_TPC_ILL_ARG);
    x = enc("tsize s1, t1, 4", 0);
    CHECK(chk(x, 0) == HPU_TPC_ILL_NONE);
    x.lo += 1ULL << 56;
    CHECK(chk(x, 0) == HPU_TPC_ILL_FIELD); // dimension 5
    x = enc("vcvt.bf16.f32 v1, v2, 1", 2);
    CHECK(chk(x, 2) == HPU_TPC_ILL_NONE);
    x.lo += 1ULL << 28;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // part 2 of 2
    x = enc("vcvt.bf16.f32 v1, v2, 0", 2);
    x.lo = (x.lo & ~(0xfULL << 12)) | (uint64_t{HPU_TPC_DT_F32} << 12);
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // f32 to f32
    x = enc("vcvt.i32.f32 v1, v2, 0", 2);
    x.lo |= uint64_t{HPU_TPC_RM_SR} << 23;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // stochastic rounding to an integer
    x = enc("cvt.i32.f32 s1, s2", 1);
    x.lo |= uint64_t{HPU_TPC_RM_SR} << 23;
    CHECK(chk(x, 1) == HPU_TPC_ILL_FIELD);
    x = enc("vcmp.eq.f32 vp1, v2, v3", 2);
    x.lo |= 6ULL << 23;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // condition 6
    x = enc("vadd.u8 v1, v2, 1", 2);
    x.hi = 256;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // u8 immediate above 255
    x = enc("vext.f32 s1, v2, 1", 2);
    x.hi = 64;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // lane 64 of 64
    x = enc("ld.l s1, [4]", 0);
    x.lo |= 1ULL << 40;
    CHECK(chk(x, 0) == HPU_TPC_ILL_FIELD); // [imm] with a base register
    x = enc("pset sp1, 1", 1);
    x.hi = 2;
    CHECK(chk(x, 1) == HPU_TPC_ILL_FIELD);
    x = enc("assert sp1, 3", 1);
    x.lo |= 2ULL << 23;
    CHECK(chk(x, 1) == HPU_TPC_ILL_FIELD); // mod other than the negation bit
    x = enc("vmov.f32 v1, v2", 2);
    x.lo |= 1ULL << 23;
    CHECK(chk(x, 2) == HPU_TPC_ILL_FIELD); // mod on an op without one
}

TEST_CASE("two slots writing one register is a conflict", "[decoder]")
{
    CodeContext ctx;
    Bundle b;
    b.slot[0] = assembled_slot("ld.t.f32 v1, t0, i0", 0);
    b.slot[2] = assembled_slot("vadd.f32 v1, v2, v3", 2);
    CHECK(check_bundle(b, ctx) == HPU_TPC_ILL_CONFLICT);
    b.slot[2] = assembled_slot("vadd.f32 v2, v1, v3", 2);
    CHECK(check_bundle(b, ctx) == HPU_TPC_ILL_NONE);
    b.slot[1] = assembled_slot("add.i32 s4, s1, 1", 1);
    b.slot[2] = assembled_slot("vext.f32 s4, v1, 0", 2);
    CHECK(check_bundle(b, ctx) == HPU_TPC_ILL_CONFLICT);
    b.slot[2] = assembled_slot("vext.f32 s5, v1, 0", 2);
    CHECK(check_bundle(b, ctx) == HPU_TPC_ILL_NONE);
    // Reading what another slot writes is fine: sources are read first.
    b.slot[0] = assembled_slot("ld.l s1, [s4]", 0);
    CHECK(check_bundle(b, ctx) == HPU_TPC_ILL_NONE);
}

TEST_CASE("a tensor instruction's type must be the launched tensor's", "[decoder]")
{
    Bundle b;
    b.slot[0] = assembled_slot("ld.t.bf16 v1, t1, i0", 0);
    b.slot[3] = assembled_slot("st.ts.u8 t0, i1, s2", 3);
    std::vector<uint8_t> ok = {HPU_TPC_DT_U8, HPU_TPC_DT_BF16};
    std::vector<uint8_t> bad = {HPU_TPC_DT_U8, HPU_TPC_DT_F32};
    CHECK(check_tensor_types(b, ok) == HPU_TPC_ILL_NONE);
    CHECK(check_tensor_types(b, bad) == HPU_TPC_ILL_TENSOR);
}

TEST_CASE("Philox-4x32-10 gives the published known answers", "[rng]")
{
    uint32_t c[4] = {0, 0, 0, 0};
    hpu_tpc_philox(c, 0, 0);
    CHECK(c[0] == 0x6627e8d5u);
    CHECK(c[1] == 0xe169c58du);
    CHECK(c[2] == 0xbc57ac4cu);
    CHECK(c[3] == 0x9b00dbd8u);
    uint32_t f[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
    hpu_tpc_philox(f, 0xffffffffu, 0xffffffffu);
    CHECK(f[0] == 0x408f276du);
    CHECK(f[1] == 0x41c83b0eu);
    CHECK(f[2] == 0xa20bc7c6u);
    CHECK(f[3] == 0x6d5451fdu);
    uint32_t p[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
    hpu_tpc_philox(p, 0xa4093822u, 0x299f31d0u);
    CHECK(p[0] == 0xd16cfe09u);
    CHECK(p[1] == 0x94fdccebu);
    CHECK(p[2] == 0x5001e420u);
    CHECK(p[3] == 0x24126ea1u);
}

TEST_CASE("a lane's random word depends on seed, member, draw and lane only", "[rng]")
{
    uint32_t c[4] = {7, 3, 0x89abcdefu, 0x01234567u};
    hpu_tpc_philox(c, 0xdeadbeefu, 0x0badf00du);
    // lane 13 is word 1 of block 3
    CHECK(hpu_tpc_rand_word(0x0badf00ddeadbeefULL, 0x0123456789abcdefULL, 7, 13) == c[1]);
    CHECK(hpu_tpc_rand_word(1, 2, 3, 4) != hpu_tpc_rand_word(1, 2, 3, 5));
    CHECK(hpu_tpc_rand_word(1, 2, 3, 4) != hpu_tpc_rand_word(1, 2, 4, 4));
    CHECK(hpu_tpc_rand_word(1, 2, 3, 4) != hpu_tpc_rand_word(1, 3, 3, 4));
    CHECK(hpu_tpc_rand_word(1, 2, 3, 4) != hpu_tpc_rand_word(2, 2, 3, 4));
}
