// SPDX-License-Identifier: MIT
// hpu-train: the CPU reference. The same model, initial parameters, batch
// order and optimizer update as the HPU trainer, in plain C++ on the host:
// OpenBLAS' sgemm for the matrix products, the TPC kernel library's own
// host references (ref/tpc_ref.hpp) for cross-entropy and the optimizers.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <chrono>
#include <span>

#include <cblas.h>

#include "ref/tpc_ref.hpp"
#include "train.h"

namespace hpu_train {

namespace ref = hpu::kernels::ref;

namespace {

using Clock = std::chrono::steady_clock;

// The activations of one batch: acts[0] the input, acts[l + 1] layer l's output.
struct Net {
    std::vector<Layer> layers;
    ParamLayout pl;
    std::vector<std::vector<float>> acts;

    Net(std::vector<Layer> ls, std::uint32_t rows) : layers(std::move(ls)), pl(param_layout(layers))
    {
        acts.emplace_back(std::size_t{rows} * layers.front().in);
        for (const Layer &l : layers)
            acts.emplace_back(std::size_t{rows} * l.out);
    }

    // acts[0] holds `rows` inputs; fills the other activations.
    void forward(const std::vector<float> &p, std::uint32_t rows)
    {
        for (std::size_t i = 0; i < layers.size(); ++i) {
            const Layer &l = layers[i];
            const auto n = static_cast<int>(l.out);
            float *out = acts[i + 1].data();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), n, static_cast<int>(l.in),
                        1.0F, acts[i].data(), static_cast<int>(l.in), &p[pl.weight[i]], n, 0.0F, out, n);
            for (std::size_t r = 0; r < rows; ++r) {
                for (std::size_t j = 0; j < l.out; ++j) {
                    float &y = out[r * l.out + j];
                    y += p[pl.bias[i] + j];
                    if (l.relu)
                        y = std::max(y, 0.0F);
                }
            }
        }
    }
};

double evaluate(Net &net, const std::vector<float> &p, const Dataset &test, std::uint32_t chunk)
{
    std::uint32_t right = 0;
    for (std::uint32_t s = 0; s < test.count; s += chunk) {
        const std::uint32_t rows = std::min(chunk, test.count - s);
        for (std::uint32_t r = 0; r < rows; ++r)
            test.image_f32(s + r, &net.acts[0][std::size_t{r} * test.pixels]);
        net.forward(p, rows);
        const std::vector<float> &logits = net.acts.back();
        for (std::uint32_t r = 0; r < rows; ++r) {
            const std::span<const float> row(&logits[std::size_t{r} * kClasses], kClasses);
            if (ref::argmax(row) == test.labels[s + r])
                ++right;
        }
    }
    return 100.0 * right / test.count;
}

} // namespace

Result train_cpu(const Config &cfg, const Dataset &train, const Dataset &test)
{
    const std::vector<Layer> layers = model_layers(cfg, train.pixels);
    const ParamLayout pl = param_layout(layers);
    std::vector<float> p = init_params(layers, pl, cfg.seed);
    std::vector<float> g(pl.total, 0.0F);
    std::vector<float> m(pl.total, 0.0F);
    std::vector<float> v(pl.total, 0.0F);
    const std::uint32_t bmax = cfg.batch;
    Net net(layers, std::max(bmax, 1000U));
    std::vector<std::int32_t> labels(bmax);
    std::vector<std::vector<float>> grads(layers.size() + 1);
    for (std::size_t i = 0; i < grads.size(); ++i)
        grads[i].resize(net.acts[i].size());
    std::vector<double> dx(kClasses);
    std::uint64_t step = 0;

    Result res;
    res.name = "cpu";
    res.config = config_line(cfg, train, test);
    for (std::uint32_t e = 0; e < cfg.epochs; ++e) {
        const auto t0 = Clock::now();
        const std::vector<std::uint32_t> order = epoch_order(train.count, cfg.seed, e);
        double loss = 0;
        for (std::uint32_t s = 0; s < train.count; s += bmax) {
            const std::uint32_t rows = std::min(bmax, train.count - s);
            for (std::uint32_t r = 0; r < rows; ++r) {
                const std::uint32_t idx = order[s + r];
                train.image_f32(idx, &net.acts[0][std::size_t{r} * train.pixels]);
                labels[r] = train.labels[idx];
            }
            net.forward(p, rows);
            // Loss and the logits' gradient, scaled by 1 / rows rounded to FP32,
            // exactly the kernel's scalar.
            const double scale = 1.0F / static_cast<float>(rows);
            std::vector<float> &dlog = grads.back();
            for (std::uint32_t r = 0; r < rows; ++r) {
                const std::span<const float> row(&net.acts.back()[std::size_t{r} * kClasses], kClasses);
                loss += ref::cross_entropy(row, labels[r], scale, dx);
                for (std::uint32_t c = 0; c < kClasses; ++c)
                    dlog[std::size_t{r} * kClasses + c] = static_cast<float>(dx[c]);
            }
            // Backward: dW = a^T d, db = column sums of d, d_prev = d W^T masked by ReLU.
            for (std::size_t li = layers.size(); li-- > 0;) {
                const Layer &l = layers[li];
                const std::vector<float> &d = grads[li + 1];
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(l.in), static_cast<int>(l.out),
                            static_cast<int>(rows), 1.0F, net.acts[li].data(), static_cast<int>(l.in), d.data(),
                            static_cast<int>(l.out), 0.0F, &g[pl.weight[li]], static_cast<int>(l.out));
                for (std::size_t j = 0; j < l.out; ++j) {
                    float sum = 0;
                    for (std::size_t r = 0; r < rows; ++r)
                        sum += d[r * l.out + j];
                    g[pl.bias[li] + j] = sum;
                }
                if (li == 0)
                    break;
                std::vector<float> &dp = grads[li];
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows), static_cast<int>(l.in),
                            static_cast<int>(l.out), 1.0F, d.data(), static_cast<int>(l.out), &p[pl.weight[li]],
                            static_cast<int>(l.out), 0.0F, dp.data(), static_cast<int>(l.in));
                if (layers[li - 1].relu) {
                    const std::vector<float> &a = net.acts[li];
                    for (std::size_t i = 0; i < std::size_t{rows} * l.in; ++i)
                        dp[i] = a[i] > 0.0F ? dp[i] : 0.0F;
                }
            }
            ++step;
            if (cfg.optimizer() == Optimizer::Sgd) {
                for (std::size_t i = 0; i < pl.total; ++i)
                    ref::sgd(p[i], g[i], cfg.lr(), 0.0F);
            } else {
                const ref::AdamW a{cfg.lr(),
                                   Config::kAdamB1,
                                   Config::kAdamB2,
                                   Config::kAdamEps,
                                   Config::kAdamWd,
                                   adam_correction(Config::kAdamB1, step),
                                   adam_correction(Config::kAdamB2, step)};
                for (std::size_t i = 0; i < pl.total; ++i)
                    ref::adamw(p[i], g[i], m[i], v[i], a);
            }
        }
        EpochResult er;
        er.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        er.loss = loss / train.count;
        er.accuracy = evaluate(net, p, test, std::max(bmax, 1000U));
        res.epochs.push_back(er);
    }
    res.params = std::move(p);
    return res;
}

} // namespace hpu_train
