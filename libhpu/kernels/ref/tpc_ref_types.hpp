// SPDX-License-Identifier: MIT
//
// Host references of the TPC kernel library for its type families
// (libhpu/kernels/README.md): casts between the eight data types, binary
// ops on the integer types, and the BF16 optimizers' rounding. Element
// values travel as raw bits in a uint32_t (the element's bits, zero above
// the element). Header only, like tpc_ref.hpp.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include "tpc_ref.hpp"

namespace hpu::kernels::ref {

// The data types by their tpc.md codes.
enum class Type : uint8_t { f32 = 1, bf16, i32, u32, i16, u16, i8, u8 };

inline bool is_fp(Type t) { return t == Type::f32 || t == Type::bf16; }

inline unsigned type_bits(Type t)
{
    switch (t) {
    case Type::bf16:
    case Type::i16:
    case Type::u16: return 16;
    case Type::i8:
    case Type::u8: return 8;
    default: return 32;
    }
}

inline bool is_signed_int(Type t) { return t == Type::i32 || t == Type::i16 || t == Type::i8; }

inline int64_t int_min(Type t)
{
    return is_signed_int(t) ? -(int64_t{1} << (type_bits(t) - 1)) : 0;
}

inline int64_t int_max(Type t)
{
    return is_signed_int(t) ? (int64_t{1} << (type_bits(t) - 1)) - 1
                            : (int64_t{1} << type_bits(t)) - 1;
}

// The value of integer element bits.
inline int64_t int_value(Type t, uint32_t bits)
{
    const unsigned w = type_bits(t);
    const uint64_t u = w == 32 ? bits : bits & ((1u << w) - 1);
    if (is_signed_int(t) && (u >> (w - 1))) {
        return static_cast<int64_t>(u) - (int64_t{1} << w);
    }
    return static_cast<int64_t>(u);
}

// The element bits of @v modulo 2^width (two's complement wrap).
inline uint32_t int_bits(Type t, int64_t v)
{
    const unsigned w = type_bits(t);
    const auto u = static_cast<uint64_t>(v);
    return static_cast<uint32_t>(w == 32 ? u & 0xffffffffu : u & ((1u << w) - 1));
}

// An exact integer (|v| < 2^53) to BF16 bits, one rounding to nearest even.
inline uint16_t int_to_bf16(int64_t v)
{
    if (v == 0) {
        return 0;
    }
    const auto d = static_cast<double>(v);
    const int e = std::ilogb(d);
    const double q = std::ldexp(std::nearbyint(std::ldexp(d, 7 - e)), e - 7);
    return static_cast<uint16_t>(f32_bits(static_cast<float>(q)) >> 16);
}

// A floating-point value toward zero, clamped to @t's range, NaN to 0.
inline int64_t fp_to_int_rz(double f, Type t)
{
    if (std::isnan(f)) {
        return 0;
    }
    const double r = std::trunc(f);
    if (r <= static_cast<double>(int_min(t))) {
        return int_min(t);
    }
    if (r >= static_cast<double>(int_max(t))) {
        return int_max(t);
    }
    return static_cast<int64_t>(r);
}

// The library's cast_FROM_TO kernels: FP32 <-> BF16 as tpc_ref.hpp says;
// floating point to integers toward zero, saturating, NaN to 0; integers to
// floating point rounded to nearest even (once); integers to integers
// wrapping modulo 2^width.
inline uint32_t cast(Type from, Type to, uint32_t bits)
{
    if (is_fp(from)) {
        const float f = from == Type::f32 ? bits_f32(bits) : bf16_to_f32(static_cast<uint16_t>(bits));
        if (to == Type::f32) {
            return f32_bits(f);
        }
        if (to == Type::bf16) {
            return f32_to_bf16(f);
        }
        return int_bits(to, fp_to_int_rz(f, to));
    }
    const int64_t v = int_value(from, bits);
    if (to == Type::f32) {
        return f32_bits(static_cast<float>(static_cast<double>(v))); // exact, then one rounding
    }
    if (to == Type::bf16) {
        return int_to_bf16(v);
    }
    return int_bits(to, v);
}

// ---- binary ops on integer types: add, sub, mul wrap; max, min by the
// type's signedness -----------------------------------------------------------
enum class IntOp { add, sub, mul, max, min };

inline uint32_t binop_int(Type t, IntOp op, uint32_t a, uint32_t b)
{
    const int64_t x = int_value(t, a), y = int_value(t, b);
    switch (op) {
    case IntOp::add: return int_bits(t, x + y);
    case IntOp::sub: return int_bits(t, x - y);
    case IntOp::mul: // the low bits of the product
        return int_bits(t, static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)));
    case IntOp::max: return int_bits(t, std::max(x, y));
    case IntOp::min: return int_bits(t, std::min(x, y));
    }
    return 0;
}

// ---- integer division (div_i32, div_floor_i32, fmod_i32, remainder_i32) ----
enum class DivMode { trunc, floor, fmod, remainder };

// a / b (b != 0) rounded toward zero or down, or the remainder of either
// division; INT_MIN / -1 wraps to INT_MIN.
inline int32_t div_i32(int32_t a, int32_t b, DivMode m)
{
    int64_t q = int64_t{a} / b, r = int64_t{a} % b;
    if ((m == DivMode::floor || m == DivMode::remainder) && r != 0 && ((r < 0) != (b < 0))) {
        q -= 1;
        r += b;
    }
    const int64_t v = m == DivMode::trunc || m == DivMode::floor ? q : r;
    return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

// ---- BF16 optimizers with BF16 state (PyTorch's default: the state in the
// parameter's dtype): the FP32 step of tpc_ref.hpp on the widened values,
// each stored tensor rounded to nearest even once -------------------------
inline void sgd_bf16(uint16_t &w, uint16_t g, float lr, float wd)
{
    float wf = bf16_to_f32(w);
    sgd(wf, bf16_to_f32(g), lr, wd);
    w = f32_to_bf16(wf);
}

inline void sgd_momentum_bf16(uint16_t &w, uint16_t g, uint16_t &buf, float lr, float mu, float wd,
                              bool nesterov)
{
    float wf = bf16_to_f32(w), bf = bf16_to_f32(buf);
    sgd_momentum(wf, bf16_to_f32(g), bf, lr, mu, wd, nesterov);
    w = f32_to_bf16(wf);
    buf = f32_to_bf16(bf);
}

inline void adamw_bf16(uint16_t &w, uint16_t g, uint16_t &m, uint16_t &v, const AdamW &p)
{
    float wf = bf16_to_f32(w), mf = bf16_to_f32(m), vf = bf16_to_f32(v);
    adamw(wf, bf16_to_f32(g), mf, vf, p);
    w = f32_to_bf16(wf);
    m = f32_to_bf16(mf);
    v = f32_to_bf16(vf);
}

inline void adagrad_bf16(uint16_t &w, uint16_t g, uint16_t &sum, float lr, float eps, float wd)
{
    float wf = bf16_to_f32(w), sf = bf16_to_f32(sum);
    adagrad(wf, bf16_to_f32(g), sf, lr, eps, wd);
    w = f32_to_bf16(wf);
    sum = f32_to_bf16(sf);
}

} // namespace hpu::kernels::ref
