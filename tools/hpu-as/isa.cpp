// SPDX-License-Identifier: MIT
//
// The instruction table, the decoder's checks of a slot and a bundle, the
// text of an instruction, and the kernel binary (encode, decode,
// disassemble).
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "tpcasm.h"

namespace hpu::tpc
{

namespace
{

constexpr hpu_tpc_insn_desc kTable[] = {HPU_TPC_INSN_DESCS};

uint64_t get(uint64_t w, unsigned shift, uint64_t mask)
{
    return (w >> shift) & mask;
}

#define F(w, name) get((w), HPU_TPC_F_##name##_SHIFT, HPU_TPC_F_##name##_MASK)

enum RegClass { kNoClass, kV, kS, kP, kQ, kI, kT };

RegClass opnd_class(unsigned k)
{
    switch (k) {
    case HPU_TPC_OPND_VD:
    case HPU_TPC_OPND_VA:
    case HPU_TPC_OPND_VB:
    case HPU_TPC_OPND_VC:
        return kV;
    case HPU_TPC_OPND_SD:
    case HPU_TPC_OPND_SA:
    case HPU_TPC_OPND_SC:
        return kS;
    case HPU_TPC_OPND_PD:
    case HPU_TPC_OPND_PA:
    case HPU_TPC_OPND_PB:
    case HPU_TPC_OPND_PC:
    case HPU_TPC_OPND_PNA:
        return kP;
    case HPU_TPC_OPND_QD:
    case HPU_TPC_OPND_QA:
    case HPU_TPC_OPND_QB:
    case HPU_TPC_OPND_QC:
        return kQ;
    case HPU_TPC_OPND_ID:
    case HPU_TPC_OPND_IA:
    case HPU_TPC_OPND_IB:
        return kI;
    case HPU_TPC_OPND_TA:
        return kT;
    default:
        return kNoClass;
    }
}

// The field (0 D, 1 A, 2 B, 3 C) a register operand lives in, or -1.
int opnd_field(unsigned k)
{
    switch (k) {
    case HPU_TPC_OPND_VD:
    case HPU_TPC_OPND_SD:
    case HPU_TPC_OPND_PD:
    case HPU_TPC_OPND_QD:
    case HPU_TPC_OPND_ID:
        return 0;
    case HPU_TPC_OPND_VA:
    case HPU_TPC_OPND_SA:
    case HPU_TPC_OPND_PA:
    case HPU_TPC_OPND_PNA:
    case HPU_TPC_OPND_QA:
    case HPU_TPC_OPND_IA:
    case HPU_TPC_OPND_TA:
        return 1;
    case HPU_TPC_OPND_VB:
    case HPU_TPC_OPND_PB:
    case HPU_TPC_OPND_QB:
    case HPU_TPC_OPND_IB:
        return 2;
    case HPU_TPC_OPND_VC:
    case HPU_TPC_OPND_SC:
    case HPU_TPC_OPND_PC:
    case HPU_TPC_OPND_QC:
    case HPU_TPC_OPND_DIMC:
        return 3;
    default:
        return -1;
    }
}

unsigned class_limit(RegClass c)
{
    switch (c) {
    case kV:
    case kS:
        return 32;
    case kT:
        return HPU_TPC_MAX_TENSORS;
    default:
        return 8;
    }
}

uint64_t reg_field(const Slot &s, int field)
{
    static constexpr unsigned shifts[4] = {HPU_TPC_F_D_SHIFT, HPU_TPC_F_A_SHIFT,
                                           HPU_TPC_F_B_SHIFT, HPU_TPC_F_C_SHIFT};
    return get(s.lo, shifts[field], 0xff);
}

unsigned part_ratio(unsigned src, unsigned dst)
{
    unsigned ls = hpu_tpc_lanes(src), ld = hpu_tpc_lanes(dst);
    return ls > ld ? ls / ld : ld / ls;
}

// The immediate of an XB/SXB operand in form 2: is it in range?
bool imm_ok(const hpu_tpc_insn_desc &d, unsigned type, uint32_t imm)
{
    if (d.flags & HPU_TPC_IF_LANEIMM)
        return imm < hpu_tpc_lanes(type);
    if ((d.flags & HPU_TPC_IF_IDX) || d.types == HPU_TPC_TS_NONE)
        return true;
    if (type == HPU_TPC_DT_F32 || type == HPU_TPC_DT_BF16)
        return true;
    unsigned w = 8 * hpu_tpc_dtype_size(type);
    return w >= 32 || (imm >> w) == 0;
}

unsigned check_operands(const hpu_tpc_insn_desc &d, const Slot &s, const CodeContext &ctx,
                        unsigned &used)
{
    unsigned form = F(s.lo, FORM), type = F(s.lo, TYPE);
    auto imm = static_cast<uint32_t>(F(s.hi, IMM));
    for (unsigned k : d.opnd) {
        RegClass c = opnd_class(k);
        int f = opnd_field(k);
        if (c != kNoClass) {
            uint64_t r = reg_field(s, f);
            used |= 1u << f;
            if (r >= class_limit(c))
                return HPU_TPC_ILL_FIELD;
            if ((k == HPU_TPC_OPND_PD || k == HPU_TPC_OPND_QD) && r == 0)
                return HPU_TPC_ILL_FIELD;
            if (c == kT && r >= ctx.num_tensors)
                return HPU_TPC_ILL_TENSOR;
            if (k == HPU_TPC_OPND_PNA) {
                used |= 1u << 4;
                if (F(s.lo, MOD) > 1)
                    return HPU_TPC_ILL_FIELD;
            }
            continue;
        }
        switch (k) {
        case HPU_TPC_OPND_DIMC:
            used |= 1u << 3;
            if (reg_field(s, 3) >= HPU_TPC_DIMS)
                return HPU_TPC_ILL_FIELD;
            break;
        case HPU_TPC_OPND_XB:
        case HPU_TPC_OPND_SXB:
            used |= 1u << 5;
            if (form == 3 || (k == HPU_TPC_OPND_SXB && form == HPU_TPC_FORM_V))
                return HPU_TPC_ILL_FIELD;
            if (form == HPU_TPC_FORM_IMM) {
                used |= 1u << 6;
                if (!imm_ok(d, type, imm))
                    return HPU_TPC_ILL_FIELD;
            } else {
                used |= 1u << 2;
                if (reg_field(s, 2) >= 32)
                    return HPU_TPC_ILL_FIELD;
            }
            break;
        case HPU_TPC_OPND_MEM:
            used |= (1u << 5) | (1u << 6) | (1u << 1);
            if (form == HPU_TPC_FORM_S) {
                if (reg_field(s, 1) >= 32)
                    return HPU_TPC_ILL_FIELD;
            } else if (form != HPU_TPC_FORM_IMM || reg_field(s, 1) != 0) {
                return HPU_TPC_ILL_FIELD;
            }
            break;
        case HPU_TPC_OPND_IMM:
            used |= 1u << 6;
            if ((d.flags & HPU_TPC_IF_BIT) && imm > 1)
                return HPU_TPC_ILL_FIELD;
            if (d.flags & HPU_TPC_IF_ARG) {
                if (imm >= HPU_TPC_MAX_SCALARS)
                    return HPU_TPC_ILL_FIELD;
                if (imm >= ctx.num_scalars)
                    return HPU_TPC_ILL_ARG;
            }
            break;
        case HPU_TPC_OPND_LBL:
            used |= 1u << 6;
            if (imm >= ctx.num_bundles)
                return HPU_TPC_ILL_FIELD;
            break;
        case HPU_TPC_OPND_PART:
            used |= 1u << 7;
            if (F(s.lo, PART) >= part_ratio(type, F(s.lo, TYPE2)))
                return HPU_TPC_ILL_FIELD;
            break;
        default:
            break;
        }
    }
    return HPU_TPC_ILL_NONE;
}

unsigned check_modifiers(const hpu_tpc_insn_desc &d, unsigned slot, const Slot &s)
{
    unsigned type = F(s.lo, TYPE), type2 = F(s.lo, TYPE2), mod = F(s.lo, MOD);
    if (d.types == HPU_TPC_TS_NONE ? type != 0 : !((d.types >> type) & 1))
        return HPU_TPC_ILL_FIELD;
    if (d.flags & HPU_TPC_IF_TYPE2) {
        if (!((d.types >> type2) & 1) || type2 == type)
            return HPU_TPC_ILL_FIELD;
    } else if (type2) {
        return HPU_TPC_ILL_FIELD;
    }
    if (d.flags & HPU_TPC_IF_COND) {
        if (mod >= HPU_TPC_COND_COUNT)
            return HPU_TPC_ILL_FIELD;
    } else if (d.flags & HPU_TPC_IF_RMODE) {
        bool sr_ok = slot == HPU_TPC_SLOT_VECTOR && type == HPU_TPC_DT_F32 &&
                     type2 == HPU_TPC_DT_BF16;
        if (mod > HPU_TPC_RM_SR || (mod == HPU_TPC_RM_SR && !sr_ok))
            return HPU_TPC_ILL_FIELD;
    } else if (mod && d.opnd[0] != HPU_TPC_OPND_PNA) {
        return HPU_TPC_ILL_FIELD;
    }
    if (F(s.lo, SAT)) {
        if (!(d.flags & HPU_TPC_IF_SAT))
            return HPU_TPC_ILL_FIELD;
        if (!(d.flags & HPU_TPC_IF_TYPE2) && !((HPU_TPC_TS_INT >> type) & 1))
            return HPU_TPC_ILL_FIELD;
    }
    if (F(s.lo, GLANE) && !(d.flags & HPU_TPC_IF_LANEG))
        return HPU_TPC_ILL_GUARD;
    return HPU_TPC_ILL_NONE;
}

} // namespace

std::span<const hpu_tpc_insn_desc> insn_table()
{
    return kTable;
}

const hpu_tpc_insn_desc *find_insn(unsigned slot, unsigned opcode)
{
    for (const auto &d : kTable) {
        if (d.slot == slot && d.opcode == opcode)
            return &d;
}
    return nullptr;
}

const hpu_tpc_insn_desc *find_mnemonic(std::string_view mnemonic)
{
    for (const auto &d : kTable) {
        if (mnemonic == d.mnemonic)
            return &d;
}
    return nullptr;
}

std::string_view dtype_name(unsigned dt)
{
#define HPU_TPC_DT_NAME_(n, c, s, b, sg, f) \
    case (c):                                  \
        return s;
    switch (dt) {
        HPU_TPC_DTYPES(HPU_TPC_DT_NAME_)
    default:
        return "";
    }
#undef HPU_TPC_DT_NAME_
}

unsigned dtype_from_name(std::string_view s)
{
    for (unsigned dt = HPU_TPC_DT_F32; dt <= HPU_TPC_DT_U8; dt++) {
        if (s == dtype_name(dt))
            return dt;
}
    return 0;
}

unsigned check_slot(unsigned slot, const Slot &s, const CodeContext &ctx)
{
    unsigned op = F(s.lo, OPCODE);
    if (op == HPU_TPC_OP_NOP)
        return (s.lo || s.hi) ? HPU_TPC_ILL_FIELD : HPU_TPC_ILL_NONE;
    const hpu_tpc_insn_desc *d = find_insn(slot, op);
    if (!d)
        return HPU_TPC_ILL_OPCODE;
    if (F(s.lo, RSVD) || F(s.hi, HIRSVD))
        return HPU_TPC_ILL_FIELD;
    if (unsigned r = check_modifiers(*d, slot, s))
        return r;
    // bits of used: 0-3 fields D A B C, 4 mod, 5 form, 6 imm, 7 part
    unsigned used = 0;
    if (unsigned r = check_operands(*d, s, ctx, used))
        return r;
    if (d->flags & (HPU_TPC_IF_COND | HPU_TPC_IF_RMODE))
        used |= 1u << 4;
    for (int f = 0; f < 4; f++) {
        if (!(used & (1u << f)) && reg_field(s, f))
            return HPU_TPC_ILL_FIELD;
}
    if ((!(used & 0x10) && F(s.lo, MOD)) || (!(used & 0x20) && F(s.lo, FORM)) ||
        (!(used & 0x40) && F(s.hi, IMM)) || (!(used & 0x80) && F(s.lo, PART)))
        return HPU_TPC_ILL_FIELD;
    return HPU_TPC_ILL_NONE;
}

unsigned check_bundle(const Bundle &b, const CodeContext &ctx)
{
    // The first failing slot in slot order decides the reason.
    for (unsigned i = 0; i < HPU_TPC_SLOTS; i++) {
        if (unsigned r = check_slot(i, b.slot[i], ctx))
            return r;
}
    // Two slots writing one register.
    std::array<uint32_t, 8> written{};
    for (unsigned i = 0; i < HPU_TPC_SLOTS; i++) {
        const Slot &s = b.slot[i];
        const hpu_tpc_insn_desc *d = find_insn(i, F(s.lo, OPCODE));
        if (!d || opnd_field(d->opnd[0]) != 0)
            continue;
        RegClass c = opnd_class(d->opnd[0]);
        auto bit = uint32_t{1} << reg_field(s, 0);
        if (written[c] & bit)
            return HPU_TPC_ILL_CONFLICT;
        written[c] |= bit;
    }
    return HPU_TPC_ILL_NONE;
}

unsigned check_tensor_types(const Bundle &b, std::span<const uint8_t> dtypes)
{
    for (unsigned i = 0; i < HPU_TPC_SLOTS; i++) {
        const Slot &s = b.slot[i];
        const hpu_tpc_insn_desc *d = find_insn(i, F(s.lo, OPCODE));
        if (!d || !(d->flags & HPU_TPC_IF_TENSOR))
            continue;
        uint64_t t = reg_field(s, 1);
        if (t >= dtypes.size() || dtypes[t] != F(s.lo, TYPE))
            return HPU_TPC_ILL_TENSOR;
    }
    return HPU_TPC_ILL_NONE;
}

// ---- Text -----------------------------------------------------------------

namespace
{

std::string fp_text(uint32_t bits)
{
    float f = 0;
    std::memcpy(&f, &bits, 4);
    if (std::isnan(f)) {
        char hex[24];
        std::snprintf(hex, sizeof(hex), "bits(0x%08x)", bits);
        return hex;
    }
    if (std::isinf(f))
        return f < 0 ? "-inf" : "inf";
    char buf[48];
    for (int prec = 6; prec <= 9; prec++) {
        std::snprintf(buf, sizeof(buf), "%.*g", prec, static_cast<double>(f));
        if (std::strtof(buf, nullptr) == f || prec == 9)
            break;
    }
    std::string t = buf;
    if (t.find_first_of(".en") == std::string::npos)
        t += ".0";
    return t;
}

std::string int_text(const hpu_tpc_insn_desc &d, unsigned type, uint32_t imm)
{
    if ((d.flags & (HPU_TPC_IF_LANEIMM | HPU_TPC_IF_BIT | HPU_TPC_IF_ARG)))
        return std::to_string(imm);
    if (d.flags & HPU_TPC_IF_IDX)
        return std::to_string(static_cast<int32_t>(imm));
    if (d.types == HPU_TPC_TS_NONE) {
        auto v = static_cast<int32_t>(imm);
        if (v >= -65536 && v <= 65536)
            return std::to_string(v);
        char buf[16];
        std::snprintf(buf, sizeof(buf), "0x%x", imm);
        return buf;
    }
    if (type == HPU_TPC_DT_F32 || type == HPU_TPC_DT_BF16)
        return fp_text(imm);
    unsigned w = 8 * hpu_tpc_dtype_size(type);
    bool sgn = type == HPU_TPC_DT_I32 || type == HPU_TPC_DT_I16 || type == HPU_TPC_DT_I8;
    if (!sgn)
        return std::to_string(imm);
    int64_t v = imm;
    if (w < 32 && (imm >> (w - 1)) & 1)
        v -= int64_t{1} << w;
    if (w == 32)
        v = static_cast<int32_t>(imm);
    return std::to_string(v);
}

std::string reg_text(unsigned k, uint64_t r)
{
    switch (opnd_class(k)) {
    case kV:
        return "v" + std::to_string(r);
    case kS:
        return "s" + std::to_string(r);
    case kP:
        return "sp" + std::to_string(r);
    case kQ:
        return "vp" + std::to_string(r);
    case kI:
        return "i" + std::to_string(r);
    case kT:
        return "t" + std::to_string(r);
    default:
        return "?";
    }
}

const char *cond_name(unsigned c)
{
#define HPU_TPC_COND_STR_(n, v, s) s,
    static const char *const names[] = {HPU_TPC_CONDS(HPU_TPC_COND_STR_)};
#undef HPU_TPC_COND_STR_
    return c < HPU_TPC_COND_COUNT ? names[c] : "?";
}

const char *rmode_name(unsigned m)
{
#define HPU_TPC_RM_STR_(n, v, s) s,
    static const char *const names[] = {HPU_TPC_RMODES(HPU_TPC_RM_STR_)};
#undef HPU_TPC_RM_STR_
    return m < HPU_TPC_RM_COUNT ? names[m] : "?";
}

std::string mnemonic_text(const hpu_tpc_insn_desc &d, const Slot &s)
{
    std::string m = d.mnemonic;
    unsigned type = F(s.lo, TYPE);
    if (d.flags & HPU_TPC_IF_COND)
        m += std::string(".") + cond_name(F(s.lo, MOD));
    if (d.flags & HPU_TPC_IF_TYPE2)
        m += "." + std::string(dtype_name(F(s.lo, TYPE2)));
    if (type)
        m += "." + std::string(dtype_name(type));
    if ((d.flags & HPU_TPC_IF_RMODE) && F(s.lo, MOD))
        m += std::string(".") + rmode_name(F(s.lo, MOD));
    if (F(s.lo, SAT))
        m += ".sat";
    return m;
}

std::string operand_text(const hpu_tpc_insn_desc &d, const Slot &s, unsigned k)
{
    unsigned form = F(s.lo, FORM), type = F(s.lo, TYPE);
    auto imm = static_cast<uint32_t>(F(s.hi, IMM));
    if (opnd_class(k) != kNoClass) {
        std::string r = reg_text(k, reg_field(s, opnd_field(k)));
        if (k == HPU_TPC_OPND_PNA && F(s.lo, MOD))
            r = "!" + r;
        return r;
    }
    switch (k) {
    case HPU_TPC_OPND_DIMC:
        return std::to_string(reg_field(s, 3));
    case HPU_TPC_OPND_XB:
    case HPU_TPC_OPND_SXB:
        if (form == HPU_TPC_FORM_V)
            return "v" + std::to_string(reg_field(s, 2));
        if (form == HPU_TPC_FORM_S)
            return "s" + std::to_string(reg_field(s, 2));
        return int_text(d, type, imm);
    case HPU_TPC_OPND_MEM: {
        auto off = static_cast<int32_t>(imm);
        if (form == HPU_TPC_FORM_IMM)
            return "[" + std::to_string(off) + "]";
        std::string t = "[s" + std::to_string(reg_field(s, 1));
        if (off > 0) {
            t += " + " + std::to_string(off);
        } else if (off < 0) {
            t += " - " + std::to_string(-static_cast<int64_t>(off));
}
        return t + "]";
    }
    case HPU_TPC_OPND_IMM:
        return int_text(d, type, imm);
    case HPU_TPC_OPND_LBL:
        return "L" + std::to_string(imm);
    case HPU_TPC_OPND_PART:
        return std::to_string(F(s.lo, PART));
    default:
        return "?";
    }
}

} // namespace

std::string format_slot(unsigned slot, const Slot &s)
{
    unsigned op = F(s.lo, OPCODE);
    if (op == HPU_TPC_OP_NOP)
        return "";
    const hpu_tpc_insn_desc *d = find_insn(slot, op);
    if (!d)
        return "<illegal>";
    std::string t;
    if (F(s.lo, GREG) || F(s.lo, GNEG) || F(s.lo, GLANE)) {
        t = "(";
        if (F(s.lo, GNEG))
            t += "!";
        t += F(s.lo, GLANE) ? "vp" : "sp";
        t += std::to_string(F(s.lo, GREG)) + ") ";
    }
    t += mnemonic_text(*d, s);
    const char *sep = " ";
    for (unsigned k : d->opnd) {
        if (k == HPU_TPC_OPND_NONE)
            break;
        t += sep + operand_text(*d, s, k);
        sep = ", ";
    }
    return t;
}

std::string format_bundle(const Bundle &b)
{
    std::string t;
    for (unsigned i = 0; i < HPU_TPC_SLOTS; i++) {
        std::string one = format_slot(i, b.slot[i]);
        if (one.empty())
            continue;
        if (!t.empty())
            t += " ; ";
        t += one;
    }
    return t.empty() ? "nop" : t;
}

// ---- Binary ---------------------------------------------------------------

namespace
{

void put32(Bytes &b, size_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}

void put16(Bytes &b, size_t off, uint32_t v)
{
    b[off] = static_cast<uint8_t>(v);
    b[off + 1] = static_cast<uint8_t>(v >> 8);
}

void put64(Bytes &b, size_t off, uint64_t v)
{
    put32(b, off, static_cast<uint32_t>(v));
    put32(b, off + 4, static_cast<uint32_t>(v >> 32));
}

// s as an assembler string: in double quotes, '"' and '\\' escaped.
std::string quoted(const std::string &s)
{
    std::string t = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            t += '\\';
        t += c;
    }
    return t + "\"";
}

} // namespace

bool kernel_name_bare(std::string_view name)
{
    return !name.empty() && name.size() < HPU_TPC_NAME_SIZE && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    });
}

Bytes encode_binary(const Kernel &k)
{
    size_t meta = 0;
    for (const auto &m : k.meta)
        meta += m.size() + 1;
    size_t code = k.code.size() * HPU_TPC_BUNDLE_SIZE;
    Bytes b(HPU_TPC_BIN_HEADER_SIZE + code + meta, 0);
    put32(b, HPU_TPC_BIN_OFF(magic), HPU_TPC_BIN_MAGIC);
    put16(b, HPU_TPC_BIN_OFF(format_version), HPU_TPC_BIN_VERSION);
    put16(b, HPU_TPC_BIN_OFF(header_size), HPU_TPC_BIN_HEADER_SIZE);
    put32(b, HPU_TPC_BIN_OFF(total_size), static_cast<uint32_t>(b.size()));
    put32(b, HPU_TPC_BIN_OFF(code_offset), HPU_TPC_BIN_HEADER_SIZE);
    put32(b, HPU_TPC_BIN_OFF(code_size), static_cast<uint32_t>(code));
    put32(b, HPU_TPC_BIN_OFF(num_bundles), static_cast<uint32_t>(k.code.size()));
    put32(b, HPU_TPC_BIN_OFF(entry), k.entry);
    b[HPU_TPC_BIN_OFF(num_tensors)] = static_cast<uint8_t>(k.num_tensors);
    b[HPU_TPC_BIN_OFF(num_scalars)] = static_cast<uint8_t>(k.num_scalars);
    b[HPU_TPC_BIN_OFF(index_dims)] = static_cast<uint8_t>(k.index_dims);
    put32(b, HPU_TPC_BIN_OFF(slm_size), k.slm_size);
    put32(b, HPU_TPC_BIN_OFF(vlm_size), k.vlm_size);
    if (meta) {
        put32(b, HPU_TPC_BIN_OFF(meta_offset), static_cast<uint32_t>(HPU_TPC_BIN_HEADER_SIZE + code));
        put32(b, HPU_TPC_BIN_OFF(meta_size), static_cast<uint32_t>(meta));
    }
    std::copy(k.tensor_dtype.begin(), k.tensor_dtype.end(), b.begin() + HPU_TPC_BIN_OFF(tensor_dtype));
    std::copy_n(k.name.begin(), std::min<size_t>(k.name.size(), HPU_TPC_NAME_SIZE - 1),
                b.begin() + HPU_TPC_BIN_OFF(name));
    size_t off = HPU_TPC_BIN_HEADER_SIZE;
    for (const auto &bd : k.code) {
        for (const auto &s : bd.slot) {
            put64(b, off, s.lo);
            put64(b, off + 8, s.hi);
            off += HPU_TPC_SLOT_SIZE;
        }
    }
    for (const auto &m : k.meta) {
        std::copy(m.begin(), m.end(), b.begin() + static_cast<ptrdiff_t>(off));
        off += m.size() + 1;
    }
    return b;
}

uint32_t check_binary(std::span<const uint8_t> bin)
{
    if (bin.size() > HPU_TPC_MAX_BINARY)
        return HPU_TPC_BL_BIN_SIZE;
    return hpu_tpc_check_binary(bin.data(), static_cast<uint32_t>(bin.size()));
}

std::string_view launch_rule_name(uint32_t rule)
{
#define HPU_TPC_BL_STR_(name, value) \
    case (value):                    \
        return #name;
    switch (rule) {
        HPU_TPC_LAUNCH_RULES(HPU_TPC_BL_STR_)
    default:
        return "?";
    }
#undef HPU_TPC_BL_STR_
}

std::string_view illegal_name(unsigned reason)
{
#define HPU_TPC_ILL_STR_(name, value) \
    case (value):                     \
        return #name;
    switch (reason) {
        HPU_TPC_ILLEGAL_REASONS(HPU_TPC_ILL_STR_)
    default:
        return "?";
    }
#undef HPU_TPC_ILL_STR_
}

Kernel decode_binary(std::span<const uint8_t> bin)
{
    if (uint32_t r = check_binary(bin))
        throw Error("not a valid TPC kernel binary: " + std::string(launch_rule_name(r)));
    const uint8_t *h = bin.data();
    Kernel k;
    k.name = reinterpret_cast<const char *>(h + HPU_TPC_BIN_OFF(name));
    k.num_tensors = h[HPU_TPC_BIN_OFF(num_tensors)];
    k.num_scalars = h[HPU_TPC_BIN_OFF(num_scalars)];
    k.index_dims = h[HPU_TPC_BIN_OFF(index_dims)];
    k.slm_size = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(slm_size));
    k.vlm_size = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(vlm_size));
    k.entry = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(entry));
    std::copy_n(h + HPU_TPC_BIN_OFF(tensor_dtype), HPU_TPC_MAX_TENSORS, k.tensor_dtype.begin());
    uint32_t off = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(code_offset));
    uint32_t n = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(num_bundles));
    CodeContext ctx{n, k.num_tensors, k.num_scalars};
    for (uint32_t i = 0; i < n; i++) {
        Bundle b;
        for (unsigned s = 0; s < HPU_TPC_SLOTS; s++) {
            const uint8_t *p = h + off + size_t{i} * HPU_TPC_BUNDLE_SIZE + size_t{s} * HPU_TPC_SLOT_SIZE;
            b.slot[s].lo = hpu_tpc_le64(p);
            b.slot[s].hi = hpu_tpc_le64(p + 8);
        }
        if (unsigned r = check_bundle(b, ctx)) {
            throw Error("bundle " + std::to_string(i) + " is illegal: " +
                        std::string(illegal_name(r)));
}
        k.code.push_back(b);
    }
    uint32_t moff = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(meta_offset));
    uint32_t msize = hpu_tpc_le32(h + HPU_TPC_BIN_OFF(meta_size));
    for (uint32_t p = moff; p < moff + msize;) {
        std::string m(reinterpret_cast<const char *>(h + p));
        p += static_cast<uint32_t>(m.size()) + 1;
        k.meta.push_back(std::move(m));
    }
    return k;
}

std::string disassemble(std::span<const uint8_t> bin)
{
    Kernel k = decode_binary(bin);
    // The assembler lays binaries out one way; anything else would not
    // assemble back to the same bytes.
    if (encode_binary(k) != Bytes(bin.begin(), bin.end()))
        throw Error("binary layout differs from the assembler's (code at 128, metadata after it)");
    std::vector<bool> target(k.code.size(), false);
    target[k.entry] = k.entry != 0;
    for (const auto &b : k.code) {
        const Slot &s = b.slot[HPU_TPC_SLOT_SCALAR];
        const hpu_tpc_insn_desc *d = find_insn(HPU_TPC_SLOT_SCALAR, F(s.lo, OPCODE));
        if (d && (d->flags & HPU_TPC_IF_BRANCH))
            target[F(s.hi, IMM)] = true;
    }
    std::string t = "// disassembled by hpu-as\n.kernel " + (kernel_name_bare(k.name) ? k.name : quoted(k.name)) + "\n";
    t += ".tensors " + std::to_string(k.num_tensors) + "\n";
    t += ".scalars " + std::to_string(k.num_scalars) + "\n";
    t += ".index_dims " + std::to_string(k.index_dims) + "\n";
    for (unsigned i = 0; i < HPU_TPC_MAX_TENSORS; i++) {
        if (k.tensor_dtype[i])
            t += ".tensor " + std::to_string(i) + ", " + std::string(dtype_name(k.tensor_dtype[i])) + "\n";
}
    if (k.slm_size)
        t += ".slm " + std::to_string(k.slm_size) + "\n";
    if (k.vlm_size)
        t += ".vlm " + std::to_string(k.vlm_size) + "\n";
    if (k.entry)
        t += ".entry L" + std::to_string(k.entry) + "\n";
    for (const auto &m : k.meta)
        t += ".meta " + quoted(m) + "\n";
    for (size_t i = 0; i < k.code.size(); i++) {
        if (target[i])
            t += "L" + std::to_string(i) + ":\n";
        t += "    " + format_bundle(k.code[i]) + "\n";
    }
    return t;
}

} // namespace hpu::tpc
