// SPDX-License-Identifier: MIT
// fusion_gen.cpp - fused elementwise kernels from the library's own
// macros (fusion_gen.h).
//
// Register plan of a fused kernel (ew.inc's contract for `args` and
// `body`: scalars into s8-s15, temporaries v3-v15, s16-s23, sp4-sp7,
// vp1-vp6): the chain's values (its input vectors, then each stage's
// result) live in v16-v31, which no library body touches (checked when
// the source is parsed); i0 is the output coordinate, i1/i2, sp1/sp2 and
// s6/s7 the two broadcast inputs' as in ew2, s0 the loop count. A stage
// runs its `args` right before its `body` in every iteration, so the
// fixed registers two stages share (s8, v3, ...) hold the right stage's
// values when its body reads them.
//
// Copyright (c) 2026 The hpu authors
#include "fusion_gen.h"

#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "tpcasm.h"

namespace hpu_torch::fusion {

namespace {

constexpr unsigned kFirstValue = 16; // v16: the first register of the chain's values

// The lines between ".macro NAME" and ".endm" of a kernel's source.
std::optional<std::string> macro_text(const std::string &src, const std::string &name)
{
    const std::string head = ".macro " + name + "\n";
    const std::size_t at = src.find(head);
    if (at == std::string::npos)
        return std::nullopt;
    const std::size_t from = at + head.size();
    const std::size_t end = src.find(".endm", from);
    if (end == std::string::npos)
        return std::nullopt;
    return src.substr(from, end - from);
}

// Whether every register text names is one a stage may use (ew.inc's
// contract), so the fused kernel's own registers stay untouched.
bool registers_allowed(const std::string &text)
{
    static const std::regex reg(R"(\b(vp|sp|v|s|i|t)([0-9]+)\b)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), reg); it != std::sregex_iterator(); ++it) {
        const std::string kind = (*it)[1];
        const int n = std::stoi((*it)[2]);
        const bool ok = (kind == "v" && n < static_cast<int>(kFirstValue)) || (kind == "s" && n >= 8 && n <= 23) ||
                        (kind == "sp" && (n == 0 || (n >= 4 && n <= 7))) || (kind == "vp" && n <= 6);
        if (!ok)
            return false;
    }
    return true;
}

// Whether some instruction of text writes v0 or v1 (its first operand).
bool writes_v0_v1(const std::string &text)
{
    static const std::regex insn(R"((?:^|;)\s*(?:\([^)]*\)\s*)?[a-z][a-z0-9_.]*\s+(v[01])\b)");
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (std::regex_search(line, insn))
            return true;
    }
    return false;
}

std::map<std::string, OpInfo, std::less<>> parse_ops()
{
    static const std::regex scalars(R"(\n\.scalars ([0-9]+)\n)");
    std::map<std::string, OpInfo, std::less<>> ops;
    for (const SourceFile &f : library_sources()) {
        const std::string name = f.name;
        if (name.size() < 3 || name.substr(name.size() - 2) != ".s")
            continue;
        const std::string src = f.text;
        OpInfo op;
        op.name = name.substr(0, name.size() - 2);
        op.inputs = src.find("\n        ew2 f32, F32_LANES\n") != std::string::npos ? 2 : 1;
        if (std::smatch m; std::regex_search(src, m, scalars))
            op.scalars = static_cast<unsigned>(std::stoul(m[1]));
        auto args = macro_text(src, "args");
        auto body = macro_text(src, "body");
        if (!args || !body || !registers_allowed(*args) || !registers_allowed(*body))
            continue; // not of ew.inc's form: never fused
        op.args = *args;
        op.body = *body;
        op.writes_inputs = writes_v0_v1(*body);
        ops.emplace(op.name, std::move(op));
    }
    return ops;
}

std::string vreg(unsigned value) { return "v" + std::to_string(kFirstValue + value); }

// text with v0, v1 and v2 replaced (one pass) by to[0..2]; an empty name is kept.
std::string rename(const std::string &text, const std::array<std::string, 3> &to)
{
    static const std::regex reg(R"(\bv([012])\b)");
    std::string out;
    auto last = text.cbegin();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), reg); it != std::sregex_iterator(); ++it) {
        out.append(last, (*it)[0].first);
        const std::string &r = to.at(static_cast<std::size_t>(std::stoi((*it)[1])));
        out += r.empty() ? (*it)[0].str() : r;
        last = (*it)[0].second;
    }
    out.append(last, text.cend());
    return out;
}

// args with each `ldarg sN, K` reading scalar K + base instead.
std::string shift_args(const std::string &text, unsigned base)
{
    static const std::regex ld(R"((ldarg\s+s[0-9]+\s*,\s*)([0-9]+))");
    std::string out;
    auto last = text.cbegin();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), ld); it != std::sregex_iterator(); ++it) {
        out.append(last, (*it)[0].first);
        out += (*it)[1].str() + std::to_string(std::stoul((*it)[2]) + base);
        last = (*it)[0].second;
    }
    out.append(last, text.cend());
    return out;
}

unsigned num_inputs(const Chain &c) { return static_cast<unsigned>(c.broadcast.size()); }

// The register of a value: inputs first, then the stages' results.
std::string value_reg(const Chain &c, Ref r) { return vreg(r.stage ? num_inputs(c) + r.index : r.index); }

} // namespace

const OpInfo *op_info(std::string_view kernel)
{
    static const std::map<std::string, OpInfo, std::less<>> ops = parse_ops();
    auto it = ops.find(kernel);
    return it == ops.end() ? nullptr : &it->second;
}

std::string check(const Chain &c)
{
    if (c.stages.empty())
        return "no stage";
    if (num_inputs(c) + c.stages.size() > kMaxValues)
        return "too many values for v16-v31";
    if (c.stored.empty() || c.stored.back() != c.stages.size() - 1)
        return "the last stage's result is not the last stored";
    unsigned bcast = 0;
    for (const bool b : c.broadcast)
        bcast += b ? 1 : 0;
    if (bcast > kMaxBroadcast)
        return "more than two broadcast inputs";
    for (std::size_t s = 0; s < c.stages.size(); ++s) {
        const Stage &st = c.stages[s];
        const OpInfo *op = op_info(st.op);
        if (op == nullptr)
            return st.op + " is not a fusable kernel";
        if (st.in.size() != op->inputs)
            return st.op + ": wrong number of inputs";
        for (const Ref &r : st.in) {
            if (r.stage ? r.index >= s : r.index >= num_inputs(c))
                return st.op + ": an input is not defined before it";
            if (!r.stage && c.broadcast[r.index] && op->inputs == 1)
                return st.op + " (one input) reads a broadcast input";
        }
    }
    for (const unsigned s : c.stored) {
        if (s >= c.stages.size())
            return "a stored stage does not exist";
    }
    return {};
}

std::string key(const Chain &c)
{
    std::string k;
    for (const bool b : c.broadcast)
        k += b ? 'b' : 'd';
    for (const Stage &st : c.stages) {
        k += '|' + st.op;
        for (const Ref &r : st.in)
            k += (r.stage ? ",s" : ",t") + std::to_string(r.index);
    }
    k += '>';
    for (const unsigned s : c.stored)
        k += std::to_string(s) + ',';
    return k;
}

std::string source(const Chain &c)
{
    const unsigned nin = num_inputs(c);
    const auto ntensors = static_cast<unsigned>(nin + c.stored.size());
    unsigned nscalars = 0;
    for (const Stage &st : c.stages)
        nscalars += op_info(st.op)->scalars;
    std::ostringstream o;
    o << "// A fused chain: " << key(c) << "\n.kernel fused_ew\n.tensors " << ntensors << "\n";
    if (nscalars > 0)
        o << ".scalars " << nscalars << "\n";
    o << ".index_dims 4\n";
    for (unsigned t = 0; t < ntensors; ++t)
        o << ".tensor " << t << ", f32\n";
    o << ".include \"tpclib.inc\"\n";
    unsigned base = 0;
    for (std::size_t s = 0; s < c.stages.size(); ++s) {
        const Stage &st = c.stages[s];
        const OpInfo &op = *op_info(st.op);
        std::array<std::string, 3> to{"", "", value_reg(c, {true, static_cast<unsigned>(s)})};
        for (std::size_t i = 0; i < st.in.size() && !op.writes_inputs; ++i)
            to.at(i) = value_reg(c, st.in[i]);
        o << "// stage " << s << ": " << st.op << "\n.macro fa" << s << "\n"
          << shift_args(op.args, base) << ".endm\n.macro fb" << s << "\n"
          << rename(op.body, to) << ".endm\n";
        base += op.scalars;
    }
    o << "        ew_base\n";
    // Broadcast inputs as ew2 reads them: a size-1 dimension at coordinate
    // 0; a size-1 dimension 0 as one element in every lane, loaded once.
    std::vector<unsigned> slot(nin, 0); // 1, 2: broadcast slot; 0: dense
    unsigned next = 1;
    for (unsigned t = 0; t < nin; ++t) {
        if (!c.broadcast[t])
            continue;
        slot[t] = next++;
        const std::string n = std::to_string(slot[t]);
        const std::string s = std::to_string(5 + slot[t]);
        o << "        bcast_coord i" << n << ", t" << t << ", sp" << n << "\n"
          << "        (sp" << n << ") ld.ts.f32 s" << s << ", t" << t << ", i" << n << "\n"
          << "        (sp" << n << ") vmov.f32 " << vreg(t) << ", s" << s << "\n";
    }
    o << "        mov s0, EW_ELEMS / F32_LANES\nfused_loop:\n";
    for (unsigned t = 0; t < nin; ++t) {
        if (slot[t] == 0) {
            o << "        ld.t.f32 " << vreg(t) << ", t" << t << ", i0\n";
            continue;
        }
        const std::string n = std::to_string(slot[t]);
        o << "        (!sp" << n << ") ld.t.f32 " << vreg(t) << ", t" << t << ", i" << n << " ; iadd i" << n << ", i"
          << n << ", 0, F32_LANES\n";
    }
    for (std::size_t s = 0; s < c.stages.size(); ++s) {
        const Stage &st = c.stages[s];
        if (op_info(st.op)->writes_inputs) {
            for (std::size_t i = 0; i < st.in.size(); ++i)
                o << "        vmov.f32 v" << i << ", " << value_reg(c, st.in[i]) << "\n";
        }
        o << "        fa" << s << "\n        fb" << s << "\n";
    }
    for (std::size_t k = 0; k < c.stored.size(); ++k)
        o << "        st.t.f32 t" << nin + k << ", i0, " << value_reg(c, {true, c.stored[k]}) << "\n";
    o << "        iadd i0, i0, 0, F32_LANES\n        loop s0, fused_loop\n        halt\n";
    return o.str();
}

std::vector<std::uint8_t> assemble(const Chain &c)
{
    if (const std::string why = check(c); !why.empty())
        throw std::runtime_error("fused kernel " + key(c) + ": " + why);
    hpu::tpc::Options opt;
    opt.read_file = [](const std::string &path) -> std::optional<std::string> {
        for (const SourceFile &f : library_sources()) {
            if (path == f.name)
                return std::string(f.text);
        }
        return std::nullopt;
    };
    hpu::tpc::Result r = hpu::tpc::assemble(source(c), "fused.s", opt);
    if (!r.ok())
        throw std::runtime_error("fused kernel " + key(c) + ": " + r.error_text());
    return std::move(r.binary);
}

} // namespace hpu_torch::fusion
