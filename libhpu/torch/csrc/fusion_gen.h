// SPDX-License-Identifier: MIT
// fusion_gen.h - lazy mode's fused elementwise kernels: one TPC kernel
// that runs a chain of the library's FP32 elementwise kernels (ew1/ew2 of
// libhpu/kernels/inc/ew.inc) over one index space, the values passed
// between the chain's stages in vector registers.
//
// Bit-identical by construction: a stage is the library kernel's own
// `args` and `body` macros, taken from the library's source text (embedded
// at build time, cmake/embed_ew_src.cmake), with only their input and
// output registers (v0, v1 -> v2) renamed to the chain's registers (or the
// inputs copied into v0/v1 when the body writes them). Loads, broadcasts
// and stores are ew.inc's own sequences (ew_base, bcast_coord, ld.t/ld.ts,
// st.t at the output's coordinate). Pure functions of the chain's
// structure: no torch, no device; tested on the host against the library
// kernels on the device model (tests/unit/tpclib/test_fusion.cpp).
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TORCH_FUSION_GEN_H
#define HPU_TORCH_FUSION_GEN_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hpu_torch::fusion {

/** One source file of the TPC library (name with its extension, text). */
struct SourceFile {
    const char *name;
    const char *text;
};
/** The library's include files and fusable kernels' sources (generated table). */
const std::vector<SourceFile> &library_sources();

/** A library kernel a chain can use: FP32, ew1 (one input) or ew2 (two inputs). */
struct OpInfo {
    std::string name;
    unsigned inputs = 1;  // tensor operands read; the output is tensor `inputs`
    unsigned scalars = 0; // scalar arguments (ldarg)
    std::string args;     // the `args` macro's lines
    std::string body;     // the `body` macro's lines
    bool writes_inputs = false; // the body writes v0 or v1 (inputs are then copied in)
};

/** The fusable library kernel of that name, or nullptr. */
const OpInfo *op_info(std::string_view kernel);

/** Where a stage's input comes from: an input tensor of the chain, or an earlier stage's result. */
struct Ref {
    bool stage = false;
    unsigned index = 0;
    bool operator==(const Ref &) const = default;
};

struct Stage {
    std::string op;      // library kernel name (op_info() knows it)
    std::vector<Ref> in; // op_info(op)->inputs of them
};

/**
 * A chain: input tensors t0..t(n-1), stages in order, then the stored
 * results, one output tensor each after the inputs, in `stored`'s order
 * (the last stage's result is always among them). A broadcast input (its
 * sizes differ from the output's: size-1 dimensions) is read through
 * ew.inc's bcast_coord; only an ew2 stage may read one, at most
 * kMaxBroadcast per chain. Scalars: each stage's, in stage order.
 */
struct Chain {
    std::vector<bool> broadcast; // per input tensor
    std::vector<Stage> stages;
    std::vector<unsigned> stored; // stage indices
};

constexpr unsigned kMaxBroadcast = 2; // sp1/sp2, i1/i2 as ew2's
constexpr unsigned kMaxValues = 16;   // v16-v31: inputs plus stage results

/** Why the chain cannot be generated ("" when it can). */
std::string check(const Chain &c);
/** A string that identifies the chain's structure (its cache key). */
std::string key(const Chain &c);
/** The chain's kernel as TPC assembly text. c must pass check(). */
std::string source(const Chain &c);
/** The chain's kernel binary (tpc.md "Kernel binary"). Throws std::runtime_error. */
std::vector<std::uint8_t> assemble(const Chain &c);

} // namespace hpu_torch::fusion

#endif // HPU_TORCH_FUSION_GEN_H
