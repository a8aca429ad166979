// SPDX-License-Identifier: MIT
// ops_nn.h - what the other op files use of ops_nn.cpp.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TORCH_OPS_NN_H
#define HPU_TORCH_OPS_NN_H

#include "hpu_torch.h"

namespace hpu_torch {

/**
 * out = self + alpha other for int64 tensors on the device (BatchNorm's
 * num_batches_tracked += 1): the 32-bit halves added with the carry. other
 * is an HPU tensor (alpha 1) or a host scalar; out has the broadcast shape.
 * False, doing nothing, for other arguments.
 */
bool add_int64(const at::Tensor &self, const at::Tensor &other, const c10::Scalar &alpha, const at::Tensor &out);

} // namespace hpu_torch

#endif // HPU_TORCH_OPS_NN_H
