// SPDX-License-Identifier: MIT
// hpu-train: training on the HPU through libhpu only (no ioctl of its own).
//
// A training step is a program of device operations (copies on a DMA
// queue, GEMMs on the MMEs, TPC kernels of the library by name) whose
// dependencies follow from the memory each one reads and writes. Eager
// mode runs each operation as one job as soon as it is issued, waiting for
// the fences of the operations it depends on; lazy mode records the
// step's program once as an hpu graph (one per batch shape) and launches
// it per step, changing only the scalars that differ (AdamW's bias
// corrections). Documentation/training.md describes both.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TRAIN_TRAIN_HPU_H
#define HPU_TRAIN_TRAIN_HPU_H

#include "train.h"

namespace hpu_train {

enum class Mode { Eager, Lazy };

struct HpuOptions {
    unsigned int device_index = 0;
    Mode mode = Mode::Eager;
    // Steps to run per epoch at most (0: all); for tests.
    std::uint32_t max_steps = 0;
};

/** The training of cfg on the HPU; throws hpu::Error or std::runtime_error. */
Result train_hpu(const Config &cfg, const Dataset &train, const Dataset &test, const HpuOptions &opt);

/** Mode name: "eager" or "lazy". */
const char *mode_name(Mode m);

} // namespace hpu_train

#endif // HPU_TRAIN_TRAIN_HPU_H
