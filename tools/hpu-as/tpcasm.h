// SPDX-License-Identifier: MIT
//
// The TPC assembler and disassembler as a library (Documentation/hpu-as.md,
// Documentation/hw/tpc.md, include/hw/hpu_tpc.h): used by the hpu-as tool,
// the build of the kernel library and the tests.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TPCASM_H
#define HPU_TPCASM_H

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hpu_tpc.h"

namespace hpu::tpc
{

using Bytes = std::vector<uint8_t>;

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One slot: the two 64-bit words of include/hw/hpu_tpc.h.
struct Slot {
    uint64_t lo = 0;
    uint64_t hi = 0;
    bool operator==(const Slot &) const = default;
};

struct Bundle {
    std::array<Slot, HPU_TPC_SLOTS> slot{};
    bool operator==(const Bundle &) const = default;
};

// What the binary's header says, and the code.
struct Kernel {
    std::string name;
    unsigned num_tensors = 0;
    unsigned num_scalars = 0;
    unsigned index_dims = HPU_TPC_DIMS;
    uint32_t slm_size = 0;
    uint32_t vlm_size = 0;
    uint32_t entry = 0;
    std::array<uint8_t, HPU_TPC_MAX_TENSORS> tensor_dtype{};
    std::vector<std::string> meta;
    std::vector<Bundle> code;
};

// The table row of an instruction, by slot and opcode or by mnemonic.
const hpu_tpc_insn_desc *find_insn(unsigned slot, unsigned opcode);
const hpu_tpc_insn_desc *find_mnemonic(std::string_view mnemonic);
std::span<const hpu_tpc_insn_desc> insn_table();

// Whether a kernel name may stand bare after .kernel: 1-31 of A-Za-z0-9_.-
// (any other printable name is written as a string in double quotes).
bool kernel_name_bare(std::string_view name);

std::string_view dtype_name(unsigned dt); // "f32", ... ("" for none)
unsigned dtype_from_name(std::string_view s); // 0 if unknown

// What the decoder of tpc.md checks of one slot and one bundle, for a
// kernel of @ctx (num_bundles, num_tensors, num_scalars): an
// HPU_TPC_ILL_* reason, HPU_TPC_ILL_NONE when it runs. The device's
// decoder must agree (the launched tensors' data types are the one input
// it has beyond these: see check_tensor_types()).
struct CodeContext {
    uint32_t num_bundles = HPU_TPC_MAX_BUNDLES;
    unsigned num_tensors = HPU_TPC_MAX_TENSORS;
    unsigned num_scalars = HPU_TPC_MAX_SCALARS;
};
unsigned check_slot(unsigned slot, const Slot &s, const CodeContext &ctx);
unsigned check_bundle(const Bundle &b, const CodeContext &ctx);
// TENSOR when a tensor instruction's type differs from @dtypes[tensor].
unsigned check_tensor_types(const Bundle &b, std::span<const uint8_t> dtypes);

// Text of one slot's instruction ("" for a NOP) and of a bundle; branch
// targets print as L<index>.
std::string format_slot(unsigned slot, const Slot &s);
std::string format_bundle(const Bundle &b);

// The binary of a kernel (tpc.md "Kernel binary"): header at 0, code at
// 128, metadata after the code.
Bytes encode_binary(const Kernel &k);
// Parse a binary; throws Error naming the BAD_LAUNCH rule it breaks or
// the first illegal bundle.
Kernel decode_binary(std::span<const uint8_t> bin);
// hpu_tpc_check_binary(): HPU_TPC_BL_OK or the rule broken.
uint32_t check_binary(std::span<const uint8_t> bin);
std::string_view launch_rule_name(uint32_t rule);
std::string_view illegal_name(unsigned reason);

// Assembly text that assembles back to exactly @bin.
std::string disassemble(std::span<const uint8_t> bin);

struct Diagnostic {
    std::string file;
    unsigned line = 0;
    unsigned column = 0;
    std::string message;
    [[nodiscard]] std::string str() const; // "file:line:column: error: message"
};

struct Options {
    std::vector<std::string> include_dirs;
    std::map<std::string, int64_t> defines; // -D NAME=VALUE
    // Reads a file; the default reads the file system. Tests pass one
    // over an in-memory map.
    std::function<std::optional<std::string>(const std::string &path)> read_file;
};

struct Result {
    Bytes binary; // empty when there are errors
    Kernel kernel;
    std::vector<Diagnostic> errors;
    std::vector<std::string> files; // every file read, the source first (for depfiles)
    [[nodiscard]] bool ok() const { return errors.empty(); }
    [[nodiscard]] std::string error_text() const; // one line per error
};

Result assemble(std::string_view source, const std::string &filename, const Options &opt = {});
Result assemble_file(const std::string &path, const Options &opt = {});

} // namespace hpu::tpc

#endif // HPU_TPCASM_H
