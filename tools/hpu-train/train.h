// SPDX-License-Identifier: MIT
// hpu-train: the getting-started model (and a two-layer MLP) trained on
// Fashion-MNIST on the HPU through libhpu, eagerly or as recorded graphs,
// and the same training on the host CPU as the reference.
//
// What both trainers share lives here, so that they start from the same
// parameters and see the batches in the same order: the dataset, the
// models, the parameter layout and initialisation, the epoch order, the
// optimizers' settings and the results.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TRAIN_TRAIN_H
#define HPU_TRAIN_TRAIN_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hpu_train {

/** Images (one row of rows x cols bytes each, as in the file) and labels. */
struct Dataset {
    std::uint32_t count = 0;
    std::uint32_t pixels = 0; // per image: 28 x 28
    std::vector<std::uint8_t> images;
    std::vector<std::int32_t> labels;

    /** Image i as the models take it: pixels / 255, into out[0 .. pixels). */
    void image_f32(std::uint32_t i, float *out) const
    {
        const std::uint8_t *in = &images.at(std::size_t{i} * pixels);
        for (std::uint32_t p = 0; p < pixels; ++p)
            out[p] = static_cast<float>(in[p]) / 255.0F; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
};

/**
 * load_mnist() - the training or test half of an MNIST-format dataset in
 * dir (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-...), each
 * file plain or gzip-compressed (".gz"). limit > 0 keeps the first limit
 * samples. Throws std::runtime_error naming the file and what is wrong.
 */
Dataset load_mnist(const std::string &dir, bool train, std::uint32_t limit);

enum class ModelKind { Linear, Mlp };
enum class Optimizer { Sgd, AdamW };

/** A dense layer: y = x W + b, W stored [in, out] row-major, then ReLU if relu. */
struct Layer {
    std::uint32_t in;
    std::uint32_t out;
    bool relu;
};

struct Config {
    ModelKind model = ModelKind::Linear;
    std::uint32_t epochs = 5;
    std::uint32_t batch = 128;
    std::uint32_t hidden = 128; // the MLP's hidden width
    std::uint64_t seed = 2026;
    // The optimizer follows the model: the seed's SGD for the linear model,
    // AdamW for the MLP (PyTorch's defaults with lr 1e-3).
    [[nodiscard]] Optimizer optimizer() const { return model == ModelKind::Linear ? Optimizer::Sgd : Optimizer::AdamW; }
    [[nodiscard]] float lr() const { return model == ModelKind::Linear ? 0.01F : 1e-3F; }
    static constexpr float kAdamB1 = 0.9F;
    static constexpr float kAdamB2 = 0.999F;
    static constexpr float kAdamEps = 1e-8F;
    static constexpr float kAdamWd = 0.01F;
};

/** The layers of a model over images of `pixels` and 10 classes. */
std::vector<Layer> model_layers(const Config &cfg, std::uint32_t pixels);
/** A line describing the model and its training ("Flatten 784 -> Dense 10, SGD lr 0.01 ..."). */
std::string describe(const Config &cfg, std::uint32_t pixels);

constexpr std::uint32_t kClasses = 10;

/**
 * Where each parameter lives in one flat FP32 array: every weight and
 * bias starts at a multiple of 64 elements (256 bytes), the gaps are zero.
 * The gradients, and the optimizer's state, use the same layout, so one
 * optimizer launch covers every parameter.
 */
struct ParamLayout {
    std::vector<std::size_t> weight;
    std::vector<std::size_t> bias;
    std::size_t total = 0;
};
ParamLayout param_layout(const std::vector<Layer> &layers);

/** Glorot-uniform weights (as Keras' Dense), zero biases, from seed. */
std::vector<float> init_params(const std::vector<Layer> &layers, const ParamLayout &pl, std::uint64_t seed);

/** The order of the samples in epoch e (a seeded shuffle, the same for every trainer). */
std::vector<std::uint32_t> epoch_order(std::uint32_t count, std::uint64_t seed, std::uint32_t epoch);

/** AdamW's bias corrections for step t (from 1): 1 / (1 - b^t). */
float adam_correction(float beta, std::uint64_t t);

struct EpochResult {
    double loss = 0;     // mean cross-entropy over the epoch's samples
    double accuracy = 0; // on the test set, percent
    double seconds = 0;  // training time of the epoch (without the evaluation)
};

struct Result {
    std::string name;   // "cpu", "hpu eager", "hpu lazy"
    std::string config; // what was trained: model, data and settings (for --compare)
    std::vector<EpochResult> epochs;
    std::vector<float> params; // the parameters at the end
    // HPU only: training steps run, and what they submitted: one job per
    // operation (eager) or one graph launch per step (lazy), and the graphs
    // recorded (one per batch shape).
    std::uint64_t steps = 0;
    std::uint64_t submissions = 0;
    std::size_t graphs = 0;
};

/** The reference: the same training on the host CPU (plain C++ with OpenBLAS' sgemm). */
Result train_cpu(const Config &cfg, const Dataset &train, const Dataset &test);

/**
 * config_line() - what a result depends on, as one line: the model and its
 * training (describe()), the seed and the numbers of samples.
 */
std::string config_line(const Config &cfg, const Dataset &train, const Dataset &test);

/** Writes / reads a result as text (its config line, one line per epoch) for --save / --compare. */
void save_result(const std::string &path, const Result &r);
Result load_result(const std::string &path);

} // namespace hpu_train

#endif // HPU_TRAIN_TRAIN_H
