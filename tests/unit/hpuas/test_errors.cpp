// SPDX-License-Identifier: MIT
//
// The assembler refuses every malformed input with file:line:column and
// what was wrong; one test per error. Also the macro and include
// machinery and constant expressions.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>

#include "helpers.h"

using namespace hpu::tpc;
using namespace hpuas_test;
using Catch::Matchers::ContainsSubstring;

namespace
{

// The header is 3 lines, so the body starts on line 4.
void expect_error(const std::string &body, unsigned line, unsigned col, const std::string &what)
{
    Diagnostic d = only_error(body);
    CHECK(d.file == "test.s");
    CHECK(d.line == line);
    CHECK(d.column == col);
    CHECK_THAT(d.message, ContainsSubstring(what));
}

} // namespace

TEST_CASE("a diagnostic prints as file:line:column: error: message", "[errors]")
{
    Diagnostic d = only_error("  frob v1\n");
    CHECK(d.str() == "test.s:4:3: error: unknown instruction 'frob'");
}

TEST_CASE("an unknown mnemonic is refused", "[errors]")
{
    expect_error("vadd.f32 v1, v2, v3 ; vfrob.f32 v1\n", 4, 23, "unknown instruction 'vfrob.f32'");
}

TEST_CASE("an unknown suffix is refused", "[errors]")
{
    expect_error("vadd.f32.rz v1, v2, v3\n", 4, 1, "'.rz' is not a suffix of vadd");
}

TEST_CASE("a missing or wrong data type is refused", "[errors]")
{
    expect_error("vadd v1, v2, v3\n", 4, 1, "vadd needs one data type");
    expect_error("vdiv.i32 v1, v2, v3\n", 4, 1, "vdiv does not take .i32 (types: f32, bf16)");
    expect_error("mov.f32 s1, s2\n", 4, 1, "mov takes no data type");
    expect_error("vcvt.f32 v1, v2, 0\n", 4, 1, "needs a destination and a source type");
    expect_error("vcvt.f32.f32 v1, v2, 0\n", 4, 1, "converts between two different types");
}

TEST_CASE("a comparison without a condition is refused", "[errors]")
{
    expect_error("vcmp.f32 vp1, v2, v3\n", 4, 1, "needs a condition");
}

TEST_CASE("stochastic rounding other than f32 to bf16 is refused", "[errors]")
{
    expect_error("vcvt.i32.f32.sr v1, v2, 0\n", 4, 1, "only for vcvt.bf16.f32");
}

TEST_CASE("saturation on a floating-point add is refused", "[errors]")
{
    expect_error("vadd.f32.sat v1, v2, v3\n", 4, 1, ".sat is for integer types only");
}

TEST_CASE("slots out of order are refused", "[errors]")
{
    expect_error("vadd.f32 v1, v2, v3 ; ld.t.f32 v4, t0, i0\n", 4, 23,
                 "'ld.t.f32' belongs to the load slot, which comes before the vector slot");
}

TEST_CASE("two instructions in one slot are refused", "[errors]")
{
    expect_error("add.i32 s1, s2, s3 ; sub.i32 s4, s5, s6\n", 4, 22, "two instructions in the scalar slot");
}

TEST_CASE("an empty slot is refused", "[errors]")
{
    expect_error("add.i32 s1, s2, s3 ; ; vadd.f32 v1, v2, v3\n", 4, 22, "empty slot");
}

TEST_CASE("two slots writing one register are refused", "[errors]")
{
    expect_error("ld.t.f32 v1, t0, i0 ; vadd.f32 v1, v2, v3\n", 4, 23,
                 "v1 is written by both the load and the vector slot");
}

TEST_CASE("a bad register is refused", "[errors]")
{
    expect_error("vadd.f32 v32, v2, v3\n", 4, 10, "bad register 'v32' (v0-v31)");
    expect_error("vpand vp1, vp8, vp2\n", 4, 12, "bad register 'vp8' (vp0-vp7)");
    expect_error("ld.t.f32 v1, t16, i0\n", 4, 14, "bad register 't16' (t0-t15)");
}

TEST_CASE("a register of the wrong class is refused", "[errors]")
{
    expect_error("vadd.f32 s1, v2, v3\n", 4, 10, "expected a vector register, got a scalar register 's1'");
    expect_error("add.i32 s1, s2, v3\n", 4, 17, "expected a scalar register or an immediate, got 'v3'");
    expect_error("iget s1, v2, 0\n", 4, 10, "expected an index register");
}

TEST_CASE("writing the always-true predicates is refused", "[errors]")
{
    expect_error("cmp.eq.i32 sp0, s1, s2\n", 4, 12, "sp0 is always true");
    expect_error("vcmp.eq.f32 vp0, v1, v2\n", 4, 13, "vp0 is always true");
}

TEST_CASE("a lane guard on an instruction that cannot take one is refused", "[errors]")
{
    expect_error("(vp1) add.i32 s1, s2, s3\n", 4, 1, "add cannot be guarded by a lane predicate");
}

TEST_CASE("a malformed guard is refused", "[errors]")
{
    expect_error("(s1) add.i32 s1, s2, s3\n", 4, 2, "guard must be");
    expect_error("(sp1 add.i32 s1, s2, s3\n", 4, 1, "')' expected after the guard");
}

TEST_CASE("a wrong operand count is refused", "[errors]")
{
    expect_error("vadd.f32 v1, v2\n", 4, 10, "vadd takes 3 operands, got 2");
    expect_error("halt s1\n", 4, 6, "halt takes 0 operands, got 1");
}

TEST_CASE("an immediate out of range is refused", "[errors]")
{
    expect_error("vadd.u8 v1, v2, 256\n", 4, 17, "immediate for .u8 256 out of range (-128 to 255)");
    expect_error("vadd.i16 v1, v2, -32769\n", 4, 18, "out of range");
    expect_error("add.i32 s1, s2, 0x100000000\n", 4, 17, "out of range");
    expect_error("vext.f32 s1, v2, 64\n", 4, 18, "lane 64 out of range (0 to 63)");
    expect_error("iget s1, i2, 5\n", 4, 14, "dimension 5 out of range (0-4)");
    expect_error("ldarg s1, 32\n", 4, 11, "scalar argument 32 out of range (0-31)");
    expect_error("vcvt.bf16.f32 v1, v2, 2\n", 4, 23, "part 2 out of range (0-1)");
    expect_error("vmov.f32 v1, 1e39\n", 4, 14, "out of range for f32");
    expect_error("vmov.f32 v1, 16777217\n", 4, 14, "not exact in f32");
    expect_error("vadd.i32 v1, v2, 1.5\n", 4, 18, "integer expected");
    expect_error("pset sp1, 2\n", 4, 11, "out of range (0-1)");
}

TEST_CASE("an undefined label or symbol is refused", "[errors]")
{
    expect_error("jmp nowhere\n", 4, 5, "undefined label 'nowhere'");
    expect_error("vadd.f32 v1, v2, LIMIT\n", 4, 18, "undefined symbol 'LIMIT'");
}

TEST_CASE("a branch target past the code is refused", "[errors]")
{
    expect_error("jmp 1\n", 4, 5, "branch target 1 out of range (0-0)");
}

TEST_CASE("a duplicate label is refused", "[errors]")
{
    expect_error("a: nop\na: nop\n", 5, 1, "label 'a' defined twice");
}

TEST_CASE("a register name as a label is refused", "[errors]")
{
    expect_error("v1: nop\n", 4, 1, "'v1' cannot be a label");
}

TEST_CASE("an unknown directive is refused", "[errors]")
{
    expect_error(".frob 3\nnop\n", 4, 1, "unknown directive '.frob'");
}

TEST_CASE(".equ cannot be redefined, .set can", "[errors]")
{
    expect_error(".equ N, 1\n.equ N, 2\nnop\n", 5, 6, "'N' is already defined");
    expect_error(".equ N, 1\n.set N, 2\nnop\n", 5, 6, "'N' is already defined");
    Result r = must_assemble(".set N, 1\n.set N, N + 1\nvmov.i32 v1, N\n");
    CHECK(r.kernel.code[0].slot[2].hi == 2);
}

TEST_CASE("expression errors are refused", "[errors]")
{
    expect_error("vmov.i32 v1, 4 / 0\n", 4, 16, "division by zero");
    expect_error("vmov.i32 v1, (1 + 2\n", 4, 20, "')' expected");
    expect_error("vmov.i32 v1, 1 +\n", 4, 17, "expression expected");
    expect_error("vmov.i32 v1, 1 << 64\n", 4, 16, "shift count 64 out of range");
    expect_error("vmov.f32 v1, 1.5 & 1\n", 4, 18, "'&' needs integer operands");
    expect_error("vmov.i32 v1, 12abc\n", 4, 16, "bad number");
    expect_error("vmov.i32 v1, v2 + 1\n", 4, 14, "register 'v2' in an expression");
}

TEST_CASE("an expression nested too deeply is refused, not a stack overflow", "[errors]")
{
    // 256 levels are fine; the limit counts parentheses and unary operators.
    const std::string ok = std::string(255, '(') + "1" + std::string(255, ')');
    CHECK(must_assemble("vmov.i32 v1, " + ok + "\n").kernel.code.size() == 1);
    for (const std::string &deep : {std::string(100000, '(') + "1" + std::string(100000, ')'),
                                    std::string(256, '(') + "1" + std::string(256, ')'), std::string(100000, '-') + "1",
                                    std::string(300, '~') + "1", "bits(" + std::string(300, '(') + "1"}) {
        const Diagnostic d = only_error("vmov.i32 v1, " + deep + "\n");
        CHECK(d.line == 4);
        CHECK_THAT(d.message, ContainsSubstring("expression nested too deeply (more than 256 levels)"));
    }
}

TEST_CASE("constant expressions follow C precedence", "[expressions]")
{
    Result r = must_assemble(".set A, 3\nmov s1, 1 + 2 * A << 1 | 1\nmov s2, -(A - 5) % 4\nmov s3, ~0 ^ 0xf0\n"
                             "mov s4, 0b101 & 6\nvmov.f32 v1, 1.5 * 2 - 0.25\n");
    CHECK(r.kernel.code[0].slot[1].hi == (((1 + 2 * 3) << 1) | 1));
    CHECK(r.kernel.code[1].slot[1].hi == 2);
    CHECK(r.kernel.code[2].slot[1].hi == 0xffffff0fu);
    CHECK(r.kernel.code[3].slot[1].hi == 4);
    CHECK(r.kernel.code[4].slot[2].hi == 0x40300000u); // 2.75f
}

TEST_CASE("labels are bundle indexes usable in expressions", "[expressions]")
{
    Result r = must_assemble("nop\nthere: nop\njmp there ; vmov.i32 v1, there + 10\n");
    CHECK(r.kernel.code[2].slot[1].hi == 1);
    CHECK(r.kernel.code[2].slot[2].hi == 11);
}

TEST_CASE("defines from the command line are constants", "[expressions]")
{
    Options o;
    o.defines["VECS"] = 8;
    Result r = assemble_text("vmov.i32 v1, VECS * 2\n", kHeader, o);
    REQUIRE(r.ok());
    CHECK(r.kernel.code[0].slot[2].hi == 16);
}

TEST_CASE("a kernel without .kernel or without code is refused", "[errors]")
{
    Result r = assemble("nop\n", "k.s");
    REQUIRE(r.errors.size() == 1);
    CHECK_THAT(r.errors[0].message, ContainsSubstring("missing .kernel"));
    r = assemble(".kernel k\n", "k.s");
    REQUIRE(r.errors.size() == 1);
    CHECK_THAT(r.errors[0].message, ContainsSubstring("no code"));
}

TEST_CASE("bad kernel header directives are refused", "[errors]")
{
    expect_error(".kernel again\nnop\n", 4, 1, ".kernel given twice");
    Diagnostic d = only_error("nop\n", ".kernel bad name\n");
    CHECK_THAT(d.message, ContainsSubstring(".kernel needs a name"));
    d = only_error("nop\n", ".kernel k\n.tensors 17\n");
    CHECK_THAT(d.message, ContainsSubstring(".tensors 17 out of range (0-16)"));
    d = only_error("nop\n", ".kernel k\n.index_dims 0\n");
    CHECK_THAT(d.message, ContainsSubstring(".index_dims 0 out of range (1-5)"));
    d = only_error("nop\n", ".kernel k\n.slm 6\n");
    CHECK_THAT(d.message, ContainsSubstring("multiple of 4"));
    d = only_error("nop\n", ".kernel k\n.vlm 100\n");
    CHECK_THAT(d.message, ContainsSubstring("multiple of 256"));
    d = only_error("nop\n", ".kernel k\n.tensor 0, f64\n");
    CHECK_THAT(d.message, ContainsSubstring("unknown data type 'f64'"));
    d = only_error("nop\n", ".kernel k\n.tensors 1\n.tensor 1, f32\n");
    CHECK_THAT(d.message, ContainsSubstring(".tensor 1 but .tensors is 1"));
    d = only_error("nop\n", ".kernel k\n.meta \"caf\xc3\xa9\"\n");
    CHECK_THAT(d.message, ContainsSubstring("printable ASCII"));
}

TEST_CASE("a tensor or scalar argument beyond the declared counts is refused", "[errors]")
{
    Diagnostic d = only_error("ld.t.f32 v1, t2, i0\n", ".kernel k\n.tensors 2\n");
    CHECK(d.line == 3);
    CHECK_THAT(d.message, ContainsSubstring("t2 but .tensors is 2"));
    d = only_error("ldarg s1, 1\n", ".kernel k\n.scalars 1\n");
    CHECK_THAT(d.message, ContainsSubstring("scalar argument 1 but .scalars is 1"));
}

TEST_CASE("a tensor instruction of another type than .tensor declares is refused", "[errors]")
{
    Diagnostic d = only_error("st.t.bf16 t0, i0, v1\n", ".kernel k\n.tensors 1\n.tensor 0, f32\n");
    CHECK_THAT(d.message, ContainsSubstring("t0 is declared .f32 by .tensor, not .bf16"));
}

TEST_CASE("macros take parameters and make unique labels", "[macros]")
{
    Result r = must_assemble(".macro addk d, s, k\n"
                             "lbl\\@: add.i32 \\d, \\s, \\k  // \\@ is unique per expansion\n"
                             "        jmp lbl\\@\n"
                             ".endm\n"
                             "addk s1, s2, 5\n"
                             "addk s3, s4, 6 * 2\n");
    REQUIRE(r.kernel.code.size() == 4);
    CHECK(r.kernel.code[0].slot[1] == must_assemble("add.i32 s1, s2, 5").kernel.code[0].slot[1]);
    CHECK(r.kernel.code[2].slot[1].hi == 12);
    CHECK(r.kernel.code[1].slot[1].hi == 0); // jmp to its own expansion's label
    CHECK(r.kernel.code[3].slot[1].hi == 2);
}

TEST_CASE("macros may call other macros", "[macros]")
{
    Result r = must_assemble(".macro one r\nvmov.i32 \\r, 1\n.endm\n"
                             ".macro two a, b\none \\a\none \\b\n.endm\n"
                             "two v1, v2\n");
    REQUIRE(r.kernel.code.size() == 2);
    CHECK(((r.kernel.code[1].slot[2].lo >> 32) & 0xff) == 2);
}

TEST_CASE("a recursive macro is refused", "[errors]")
{
    Diagnostic d = only_error(".macro a\nb\n.endm\n.macro b\na\n.endm\na\n");
    CHECK(d.line == 8);
    CHECK_THAT(d.message, ContainsSubstring("recursive macro 'a'"));
    CHECK_THAT(d.message, ContainsSubstring("in macro 'b' at test.s:5"));
}

TEST_CASE("macro definition errors are refused", "[errors]")
{
    expect_error(".macro m\nnop\n", 4, 1, "macro 'm' has no .endm");
    expect_error(".endm\nnop\n", 4, 1, ".endm without .macro");
    expect_error(".macro vadd\n.endm\nnop\n", 4, 8, "names an instruction");
    expect_error(".macro m a, a\n.endm\nnop\n", 4, 13, "bad macro parameter 'a'");
    Diagnostic d = only_error(".macro m\n.macro n\n.endm\nnop\n");
    CHECK_THAT(d.message, ContainsSubstring(".macro inside the definition"));
}

TEST_CASE("a macro called with the wrong number of arguments is refused", "[errors]")
{
    expect_error(".macro m a, b\nnop\n.endm\nm v1\n", 7, 1, "macro 'm' takes 2 arguments, got 1");
}

TEST_CASE("an unknown macro parameter is refused", "[errors]")
{
    Diagnostic d = only_error(".macro m a\nvmov.i32 \\a, \\b\n.endm\nm v1\n");
    CHECK(d.line == 5);
    CHECK_THAT(d.message, ContainsSubstring("unknown macro parameter '\\b'"));
}

TEST_CASE("errors inside a macro point at the body line and the call", "[errors]")
{
    Diagnostic d = only_error(".macro m r\nvadd.f32 \\r, v1, v2\n.endm\nnop\nm v40\n");
    CHECK(d.line == 5);
    CHECK_THAT(d.message, ContainsSubstring("bad register 'v40'"));
    CHECK_THAT(d.message, ContainsSubstring("(in macro 'm' at test.s:8)"));
}

TEST_CASE("includes are searched beside the file, then in -I directories", "[includes]")
{
    Options o = files({{"dir/k.s", ".kernel k\n.include \"defs.inc\"\n.include \"lib.inc\"\nvmov.i32 v1, N\nm\n"},
                       {"dir/defs.inc", ".equ N, 7\n"},
                       {"inc/lib.inc", ".macro m\nhalt\n.endm\n"}});
    o.include_dirs.emplace_back("inc");
    Result r = assemble_file("dir/k.s", o);
    INFO(r.error_text());
    REQUIRE(r.ok());
    REQUIRE(r.kernel.code.size() == 2);
    CHECK(r.kernel.code[0].slot[2].hi == 7);
    CHECK((r.kernel.code[1].slot[1].lo & 0xff) == HPU_TPC_OP_HALT);
}

TEST_CASE("errors in an included file name that file", "[includes]")
{
    Options o = files({{"k.s", ".kernel k\n.include \"bad.inc\"\n"}, {"bad.inc", "nop\n  vfoo\n"}});
    Result r = assemble_file("k.s", o);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].str() == "bad.inc:2:3: error: unknown instruction 'vfoo'");
}

TEST_CASE("a recursive include is refused", "[errors]")
{
    Options o = files({{"k.s", ".kernel k\nnop\n.include \"a.inc\"\n"},
                       {"a.inc", ".include \"b.inc\"\n"},
                       {"b.inc", "nop\n.include \"a.inc\"\n"}});
    Result r = assemble_file("k.s", o);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].file == "b.inc");
    CHECK(r.errors[0].line == 2);
    CHECK_THAT(r.errors[0].message, ContainsSubstring("recursive .include of \"a.inc\""));
}

TEST_CASE("macros or includes expanding without bound are refused after a million lines", "[errors]")
{
    // m25 expands to 2^25 lines (each macro calls the one below twice):
    // stopped at the limit, with one error, in both passes.
    std::string src = ".macro m0\n// a line\n.endm\n";
    for (int i = 1; i <= 25; i++)
        src += ".macro m" + std::to_string(i) + "\nm" + std::to_string(i - 1) + "\nm" + std::to_string(i - 1) + "\n.endm\n";
    src += "halt\nm25\n";
    Diagnostic d = only_error(src);
    CHECK_THAT(d.message, ContainsSubstring("more than 1000000 lines after expanding macros and includes"));
    CHECK_THAT(d.message, ContainsSubstring("in macro 'm1'"));
    // The same with files including the next file twice.
    std::map<std::string, std::string> m{{"k.s", ".kernel k\nhalt\n.include \"f25.inc\"\n"}, {"f0.inc", "// x\n"}};
    for (int i = 1; i <= 25; i++) {
        const std::string inc = ".include \"f" + std::to_string(i - 1) + ".inc\"\n";
        m["f" + std::to_string(i) + ".inc"] = inc + inc;
    }
    Result r = assemble_file("k.s", files(m));
    REQUIRE(r.errors.size() == 1);
    CHECK_THAT(r.errors[0].message, ContainsSubstring("more than 1000000 lines after expanding"));
    CHECK(r.binary.empty());
}

TEST_CASE("too many bundles are refused without keeping them all", "[errors]")
{
    // 2^20 bundles: refused once past 16384 (the lines after are not read).
    std::string src = ".macro b0\nnop\n.endm\n";
    for (int i = 1; i <= 20; i++)
        src += ".macro b" + std::to_string(i) + "\nb" + std::to_string(i - 1) + "\nb" + std::to_string(i - 1) + "\n.endm\n";
    Diagnostic d = only_error(src + "b20\n");
    CHECK_THAT(d.message, ContainsSubstring("too many bundles (more than 16384)"));
    // 16384 are fine, 16385 are not.
    Result r = assemble_text(src + "b14\n");
    INFO(r.error_text());
    CHECK(r.ok());
    CHECK(r.kernel.code.size() == 16384);
    d = only_error(src + "b14\nnop\n");
    CHECK_THAT(d.message, ContainsSubstring("too many bundles (more than 16384)"));
}

TEST_CASE("a missing include file is refused", "[errors]")
{
    expect_error(".include \"nope.inc\"\nnop\n", 4, 10, "cannot find include file \"nope.inc\"");
    expect_error(".include nope.inc\nnop\n", 4, 10, "string in double quotes expected");
}

TEST_CASE("comments and blank lines are ignored; a label may stand alone", "[syntax]")
{
    Result r = must_assemble("// a comment\n\n   \nstart:   // the start\n  halt // end\n");
    REQUIRE(r.kernel.code.size() == 1);
}

TEST_CASE("bad local addresses are refused", "[errors]")
{
    expect_error("ld.l s1, s2\n", 4, 10, "expected a local address");
    expect_error("ld.l s1, [v2]\n", 4, 11, "the base of a local address is a scalar register");
    expect_error("ld.l s1, [s2 * 4]\n", 4, 14, "'+' or '-' expected");
}
