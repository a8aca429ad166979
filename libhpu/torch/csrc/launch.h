// SPDX-License-Identifier: MIT
// launch.h - TPC launches over torch tensors: strided operands in torch
// order turned into tensor descriptors (dimension 0 innermost), dimensions
// merged where every operand allows, the elementwise and row index spaces
// of libhpu/kernels/README.md.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TORCH_LAUNCH_H
#define HPU_TORCH_LAUNCH_H

#include <string>
#include <vector>

#include "hpu_torch.h"

namespace hpu_torch {

/** A strided operand: its VA, HPU dtype and strides in elements (torch order, 0 broadcasts). */
struct Operand {
    std::uint64_t va = 0;
    std::uint32_t dtype = 0;
    std::vector<std::int64_t> strides;
    std::uint32_t pad = 0;
};

/** t as an operand of a launch over sizes (t broadcast to them). t is on an HPU. */
Operand operand(const at::Tensor &t, at::IntArrayRef sizes);
/** t as an operand with its own dtype given (an int64 tensor read as I32 low words, ...). */
Operand operand_as(const at::Tensor &t, at::IntArrayRef sizes, std::uint32_t dtype);

/**
 * An elementwise kernel over sizes: ops in the kernel's tensor order, each
 * with sizes' rank of strides. Empty sizes launch nothing.
 */
void launch_ew(DeviceContext &ctx, const std::string &kernel, at::IntArrayRef sizes, const std::vector<Operand> &ops,
               const std::vector<std::uint32_t> &scalars = {}, std::uint64_t seed = 0, std::size_t max_dims = 4);

/**
 * widen_*_i64 over sizes: x (any integer type of 32 bits or less) written
 * into an int64 tensor y given as its I32 low-word operand (int64 strides
 * doubled); the kernel's y descriptor gets the word dimension (4) added.
 */
void launch_widen(DeviceContext &ctx, const std::string &kernel, at::IntArrayRef sizes, const Operand &x,
                  const Operand &y);

/**
 * A row kernel: every operand is [N (dimension 0), rows...]; a row
 * operand's row strides are given in torch order with row_sizes, its
 * dimension 0 as (size0, stride0). Per-row results have size0 1.
 */
struct RowOperand {
    std::uint64_t va = 0;
    std::uint32_t dtype = 0;
    std::int64_t size0 = 1;
    std::int64_t stride0 = 1;
    std::vector<std::int64_t> row_strides;
    std::uint32_t pad = 0;
};
void launch_rows(DeviceContext &ctx, const std::string &kernel, at::IntArrayRef row_sizes,
                 const std::vector<RowOperand> &ops, const std::vector<std::uint32_t> &scalars = {});

/**
 * One launch of kernel with the descriptors ts, the scalars and the index
 * space given as they are (kernels whose layout the helpers above do not
 * describe: channel, window and optimizer kernels).
 */
void launch(DeviceContext &ctx, const std::string &kernel, const std::vector<hpu_tensor> &ts,
            const std::vector<std::uint32_t> &scalars, const std::vector<std::uint32_t> &index);

/** The row operand of t reduced along dim (the other dims are the rows). */
RowOperand row_operand(const at::Tensor &t, std::int64_t dim, std::uint32_t pad = 0);
/** The row sizes of t along dim: its sizes without dim. */
std::vector<std::int64_t> row_sizes(const at::Tensor &t, std::int64_t dim);

/** "f32" or "bf16" (kernel name suffix) of a float tensor the TPC library covers, else "". */
std::string float_suffix(c10::ScalarType t);
/** The suffix of an HPU dtype: f32, bf16, i32, u32, i16, u16, i8, u8. */
const char *dtype_suffix(std::uint32_t dtype);

constexpr std::uint32_t kNegInfF32 = 0xff800000U;
constexpr std::uint32_t kNegInfBf16 = 0xff80U;

} // namespace hpu_torch

#endif // HPU_TORCH_LAUNCH_H
