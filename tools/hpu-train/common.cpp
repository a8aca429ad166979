// SPDX-License-Identifier: MIT
// hpu-train: the dataset loader, models, parameter layout and initial
// values, epoch order and result files shared by the CPU and HPU trainers.
//
// Copyright (c) 2026 The hpu authors
#include "train.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <zlib.h>

namespace hpu_train {

namespace {

// splitmix64: a small, well-mixed generator; the same sequence on every host.
class Rng {
public:
    explicit Rng(std::uint64_t seed) : s_(seed) {}
    std::uint64_t next()
    {
        std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31U);
    }
    // Uniform in [0, 1) with 24 bits.
    float uniform() { return static_cast<float>(next() >> 40U) * 0x1p-24F; }
    // Uniform in [0, n).
    std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>((next() >> 32U) * n >> 32U); }

private:
    std::uint64_t s_;
};

struct GzClose {
    void operator()(gzFile f) const noexcept { (void)gzclose(f); }
};

// The first `max` bytes of a file (all of it when max is 0), inflated when
// it is gzip (zlib reads plain files as they are).
std::vector<std::uint8_t> read_file(const std::string &dir, const std::string &name, std::size_t max)
{
    std::string path = dir + "/" + name;
    gzFile raw = gzopen(path.c_str(), "rb");
    if (raw == nullptr) {
        path += ".gz";
        raw = gzopen(path.c_str(), "rb");
    }
    if (raw == nullptr)
        throw std::runtime_error("cannot open " + dir + "/" + name + "[.gz]");
    const std::unique_ptr<gzFile_s, GzClose> f(raw);
    (void)gzbuffer(raw, 1U << 20U);
    // Read straight into the result, growing it a chunk at a time.
    constexpr std::size_t kChunk = 4U << 20U;
    std::vector<std::uint8_t> out;
    std::size_t have = 0;
    for (;;) {
        std::size_t want = kChunk;
        if (max != 0)
            want = std::min(want, max - have);
        if (want == 0)
            break;
        if (out.size() < have + want)
            out.resize(std::max(have + want, out.size() * 2));
        const int n = gzread(raw, &out[have], static_cast<unsigned int>(want));
        if (n < 0)
            throw std::runtime_error(path + ": read error");
        if (n == 0)
            break;
        have += static_cast<std::size_t>(n);
    }
    out.resize(have);
    return out;
}

std::uint32_t be32(const std::vector<std::uint8_t> &b, std::size_t off)
{
    return static_cast<std::uint32_t>(b.at(off)) << 24U | static_cast<std::uint32_t>(b.at(off + 1)) << 16U |
           static_cast<std::uint32_t>(b.at(off + 2)) << 8U | static_cast<std::uint32_t>(b.at(off + 3));
}

constexpr std::uint32_t kImagesMagic = 0x803;
constexpr std::uint32_t kLabelsMagic = 0x801;

} // namespace

Dataset load_mnist(const std::string &dir, bool train, std::uint32_t limit)
{
    const std::string stem = train ? "train" : "t10k";
    const std::string iname = stem + "-images-idx3-ubyte";
    const std::string lname = stem + "-labels-idx1-ubyte";
    // With a limit, only the samples kept are read (the headers are 16 and 8 bytes).
    const std::size_t px = std::size_t{28} * 28;
    const auto img = read_file(dir, iname, limit != 0 ? 16 + std::size_t{limit} * px : 0);
    const auto lab = read_file(dir, lname, limit != 0 ? 8 + std::size_t{limit} : 0);
    if (img.size() < 16 || be32(img, 0) != kImagesMagic)
        throw std::runtime_error(iname + ": not an idx3 image file");
    if (lab.size() < 8 || be32(lab, 0) != kLabelsMagic)
        throw std::runtime_error(lname + ": not an idx1 label file");
    Dataset d;
    d.count = be32(img, 4);
    d.pixels = be32(img, 8) * be32(img, 12);
    if (be32(lab, 4) != d.count) {
        throw std::runtime_error(lname + ": " + std::to_string(be32(lab, 4)) + " labels for " +
                                 std::to_string(d.count) + " images");
    }
    if (limit > 0 && limit < d.count) {
        if (d.pixels != px)
            throw std::runtime_error(iname + ": images of " + std::to_string(d.pixels) + " pixels, not 28 x 28");
        d.count = limit;
    }
    if (d.pixels == 0 || img.size() != 16 + std::size_t{d.count} * d.pixels || lab.size() != 8 + std::size_t{d.count})
        throw std::runtime_error(iname + ": size does not match its header");
    d.images.assign(img.begin() + 16, img.begin() + 16 + static_cast<std::ptrdiff_t>(std::size_t{d.count} * d.pixels));
    d.labels.resize(d.count);
    for (std::size_t i = 0; i < d.count; ++i) {
        d.labels[i] = lab[8 + i];
        if (d.labels[i] >= static_cast<std::int32_t>(kClasses))
            throw std::runtime_error(lname + ": label " + std::to_string(d.labels[i]) + " out of range");
    }
    return d;
}

std::vector<Layer> model_layers(const Config &cfg, std::uint32_t pixels)
{
    if (cfg.model == ModelKind::Linear)
        return {{pixels, kClasses, false}};
    return {{pixels, cfg.hidden, true}, {cfg.hidden, kClasses, false}};
}

std::string describe(const Config &cfg, std::uint32_t pixels)
{
    std::ostringstream s;
    s << "Flatten " << pixels;
    for (const Layer &l : model_layers(cfg, pixels))
        s << " -> Dense " << l.out << (l.relu ? " ReLU" : "");
    s << ", softmax cross-entropy, ";
    if (cfg.optimizer() == Optimizer::Sgd) {
        s << "SGD lr " << cfg.lr();
    } else {
        s << "AdamW lr " << cfg.lr() << " wd " << Config::kAdamWd;
    }
    s << ", batch " << cfg.batch << ", " << cfg.epochs << " epochs";
    return s.str();
}

ParamLayout param_layout(const std::vector<Layer> &layers)
{
    constexpr std::size_t kAlign = 64; // elements: 256 bytes
    auto up = [](std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; };
    ParamLayout pl;
    for (const Layer &l : layers) {
        pl.weight.push_back(pl.total);
        pl.total = up(pl.total + std::size_t{l.in} * l.out);
        pl.bias.push_back(pl.total);
        pl.total = up(pl.total + l.out);
    }
    return pl;
}

std::vector<float> init_params(const std::vector<Layer> &layers, const ParamLayout &pl, std::uint64_t seed)
{
    std::vector<float> p(pl.total, 0.0F);
    Rng rng(seed);
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Layer &l = layers[i];
        const float limit = std::sqrt(6.0F / static_cast<float>(l.in + l.out));
        for (std::size_t j = 0; j < std::size_t{l.in} * l.out; ++j)
            p[pl.weight[i] + j] = (2.0F * rng.uniform() - 1.0F) * limit;
    }
    return p;
}

std::vector<std::uint32_t> epoch_order(std::uint32_t count, std::uint64_t seed, std::uint32_t epoch)
{
    std::vector<std::uint32_t> order(count);
    for (std::uint32_t i = 0; i < count; ++i)
        order[i] = i;
    Rng rng(seed ^ (0x5eedULL + epoch) * 0x100000001b3ULL);
    for (std::uint32_t i = count; i > 1; --i)
        std::swap(order[i - 1], order[rng.below(i)]);
    return order;
}

float adam_correction(float beta, std::uint64_t t)
{
    return static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(beta), static_cast<double>(t))));
}

std::string config_line(const Config &cfg, const Dataset &train, const Dataset &test)
{
    return describe(cfg, train.pixels) + ", seed " + std::to_string(cfg.seed) + ", " + std::to_string(train.count) +
           " training and " + std::to_string(test.count) + " test images";
}

void save_result(const std::string &path, const Result &r)
{
    std::ofstream f(path);
    if (!f)
        throw std::runtime_error("cannot write " + path);
    f << "# hpu-train result: " << r.name << "\n";
    f << "config " << r.config << "\n";
    f.precision(9);
    for (std::size_t e = 0; e < r.epochs.size(); ++e) {
        f << "epoch " << e + 1 << " loss " << r.epochs[e].loss << " accuracy " << r.epochs[e].accuracy << " seconds "
          << r.epochs[e].seconds << "\n";
    }
    if (!f)
        throw std::runtime_error("error writing " + path);
}

Result load_result(const std::string &path)
{
    std::ifstream f(path);
    if (!f)
        throw std::runtime_error("cannot read " + path);
    Result r;
    r.name = "cpu";
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        if (line.rfind("config ", 0) == 0) {
            r.config = line.substr(7);
            continue;
        }
        std::istringstream s(line);
        std::string w1;
        std::string w2;
        std::string w3;
        std::string w4;
        std::size_t e = 0;
        EpochResult er;
        if (!(s >> w1 >> e >> w2 >> er.loss >> w3 >> er.accuracy >> w4 >> er.seconds) || w1 != "epoch" ||
            e != r.epochs.size() + 1) {
            std::string why = path;
            why += ": malformed line: ";
            why += line;
            throw std::runtime_error(why);
        }
        r.epochs.push_back(er);
    }
    return r;
}

} // namespace hpu_train
