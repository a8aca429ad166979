// SPDX-License-Identifier: MIT
// hpu-train: train the getting-started model (or an MLP) on Fashion-MNIST
// on the HPU and/or the host CPU, and compare them (Documentation/training.md).
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "train.h"
#include "train_hpu.h"

namespace {

using namespace hpu_train;

const char *const kUsage =
    "usage: hpu-train [options]\n"
    "  --model linear|mlp     the seed's model (Flatten -> Dense 10, SGD lr 0.01) or\n"
    "                         an MLP (Dense 128 ReLU -> Dense 10, AdamW lr 1e-3); linear\n"
    "  --device cpu|hpu       where to train; hpu\n"
    "  --mode eager|lazy|both HPU execution mode; both (eager, then lazy)\n"
    "  --epochs N             5;  --batch N  128\n"
    "  --limit N              use only the first N training images (0: all)\n"
    "  --test-limit N         use only the first N test images (0: all)\n"
    "  --max-steps N          (hpu) at most N steps per epoch (0: all); not with --compare\n"
    "  --data DIR             the dataset; /usr/share/datasets/fashion-mnist\n"
    "  --hpu N                the HPU's index (/dev/accel/accelN); 0\n"
    "  --seed N               initial parameters and batch order; 2026\n"
    "  --save FILE            (cpu) write the result for --compare\n"
    "  --compare FILE         (hpu) print the CPU result of FILE beside the HPU's and\n"
    "                         fail when the final accuracies differ by more than\n"
    "  --max-diff P           percentage points; 0.5\n"
    "  --bench                also print \"BENCH train_<model>_<run>_epoch_s=S\", the mean\n"
    "                         training time per epoch of each run (make bench)\n";

struct Args {
    Config cfg;
    std::string device = "hpu";
    std::vector<Mode> modes{Mode::Eager, Mode::Lazy};
    std::uint32_t limit = 0;
    std::uint32_t test_limit = 0;
    std::uint32_t max_steps = 0;
    unsigned int hpu = 0;
    std::string data = "/usr/share/datasets/fashion-mnist";
    std::string save;
    std::string compare;
    double max_diff = 0.5;
    bool bench = false;
};

[[noreturn]] void usage_error(const std::string &why)
{
    std::fprintf(stderr, "hpu-train: %s\n%s", why.c_str(), kUsage);
    std::exit(2);
}

std::uint32_t number(const std::string &opt, const std::string &v)
{
    char *end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n > UINT32_MAX)
        usage_error(opt + ": not a number: " + v);
    return static_cast<std::uint32_t>(n);
}

Args parse(int argc, char **argv)
{
    Args a;
    const std::vector<std::string> args(argv + 1, argv + argc); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string &o = args[i];
        if (o == "-h" || o == "--help") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        }
        if (o == "--bench") {
            a.bench = true;
            continue;
        }
        if (i + 1 >= args.size())
            usage_error(o + ": missing value or unknown option");
        const std::string &v = args[++i];
        if (o == "--model") {
            if (v != "linear" && v != "mlp")
                usage_error("--model: linear or mlp, not " + v);
            a.cfg.model = v == "linear" ? ModelKind::Linear : ModelKind::Mlp;
        } else if (o == "--device") {
            if (v != "cpu" && v != "hpu")
                usage_error("--device: cpu or hpu, not " + v);
            a.device = v;
        } else if (o == "--mode") {
            if (v == "eager") {
                a.modes = {Mode::Eager};
            } else if (v == "lazy") {
                a.modes = {Mode::Lazy};
            } else if (v == "both") {
                a.modes = {Mode::Eager, Mode::Lazy};
            } else {
                usage_error("--mode: eager, lazy or both, not " + v);
            }
        } else if (o == "--epochs") {
            a.cfg.epochs = number(o, v);
        } else if (o == "--batch") {
            a.cfg.batch = number(o, v);
            if (a.cfg.batch == 0)
                usage_error("--batch: must be at least 1");
        } else if (o == "--limit") {
            a.limit = number(o, v);
        } else if (o == "--test-limit") {
            a.test_limit = number(o, v);
        } else if (o == "--max-steps") {
            a.max_steps = number(o, v);
        } else if (o == "--data") {
            a.data = v;
        } else if (o == "--hpu") {
            a.hpu = number(o, v);
        } else if (o == "--seed") {
            char *end = nullptr;
            a.cfg.seed = std::strtoull(v.c_str(), &end, 0);
            if (v.empty() || *end != '\0' || v[0] == '-')
                usage_error("--seed: not a number: " + v);
        } else if (o == "--save") {
            a.save = v;
        } else if (o == "--compare") {
            a.compare = v;
        } else if (o == "--max-diff") {
            char *end = nullptr;
            a.max_diff = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(a.max_diff >= 0))
                usage_error("--max-diff: not a non-negative number: " + v);
        } else {
            usage_error("unknown option " + o);
        }
    }
    // A run cut short is not the training a --compare FILE (a whole CPU
    // training) describes, and the CPU reference always trains whole epochs.
    if (a.max_steps != 0 && !a.compare.empty())
        usage_error("--max-steps with --compare: the HPU run would stop early, the CPU result is of whole epochs");
    if (a.max_steps != 0 && a.device == "cpu")
        usage_error("--max-steps: the CPU reference trains whole epochs (--device hpu only)");
    return a;
}

void print_epoch(const Result &r, std::size_t e, std::uint32_t epochs)
{
    const EpochResult &er = r.epochs[e];
    std::printf("[%-9s] epoch %zu/%u: loss %.4f  test accuracy %6.2f %%  (%.1f s)\n", r.name.c_str(), e + 1, epochs,
                er.loss, er.accuracy, er.seconds);
}

// "BENCH train_linear_hpu_eager_epoch_s=4.2": the mean seconds per epoch.
void print_bench(const Args &a, const Result &r)
{
    if (!a.bench || r.epochs.empty())
        return;
    double s = 0;
    for (const EpochResult &e : r.epochs)
        s += e.seconds;
    std::string name = r.name;
    std::replace(name.begin(), name.end(), ' ', '_');
    std::printf("BENCH train_%s_%s_epoch_s=%.3f\n", a.cfg.model == ModelKind::Linear ? "linear" : "mlp", name.c_str(),
                s / static_cast<double>(r.epochs.size()));
}

void print_table(const std::vector<Result> &rs)
{
    std::printf("\n%-6s", "epoch");
    for (const Result &r : rs)
        std::printf(" | %-9s %7s %7s %7s", r.name.c_str(), "loss", "acc %", "s");
    std::printf("\n");
    std::size_t n = 0;
    for (const Result &r : rs)
        n = std::max(n, r.epochs.size());
    for (std::size_t e = 0; e < n; ++e) {
        std::printf("%-6zu", e + 1);
        for (const Result &r : rs) {
            if (e < r.epochs.size()) {
                std::printf(" | %-9s %7.4f %7.2f %7.1f", "", r.epochs[e].loss, r.epochs[e].accuracy, r.epochs[e].seconds);
            } else {
                std::printf(" | %-9s %7s %7s %7s", "", "-", "-", "-");
            }
        }
        std::printf("\n");
    }
}

int run(const Args &a)
{
    const Dataset train = load_mnist(a.data, true, a.limit);
    const Dataset test = load_mnist(a.data, false, a.test_limit);
    std::printf("hpu-train: %s\n", describe(a.cfg, train.pixels).c_str());
    std::printf("hpu-train: data %s: %u training and %u test images\n", a.data.c_str(), train.count, test.count);
    std::fflush(stdout);
    if (a.device == "cpu") {
        const Result r = train_cpu(a.cfg, train, test);
        for (std::size_t e = 0; e < r.epochs.size(); ++e)
            print_epoch(r, e, a.cfg.epochs);
        print_bench(a, r);
        if (!a.save.empty())
            save_result(a.save, r);
        return 0;
    }
    std::vector<Result> rs;
    if (!a.compare.empty()) {
        rs.push_back(load_result(a.compare));
        // The reference must be of the same training, whole.
        const std::string want = config_line(a.cfg, train, test);
        if (rs.front().config != want || rs.front().epochs.size() != a.cfg.epochs) {
            std::fprintf(stderr, "hpu-train: %s is the result of another training:\n  it: %s, %zu epochs\n  this: %s\n",
                         a.compare.c_str(), rs.front().config.c_str(), rs.front().epochs.size(), want.c_str());
            return 2;
        }
    }
    std::optional<std::vector<float>> first_params;
    int rc = 0;
    for (const Mode m : a.modes) {
        HpuOptions o;
        o.device_index = a.hpu;
        o.mode = m;
        o.max_steps = a.max_steps;
        Result r = train_hpu(a.cfg, train, test, o);
        for (std::size_t e = 0; e < r.epochs.size(); ++e)
            print_epoch(r, e, a.cfg.epochs);
        print_bench(a, r);
        std::fflush(stdout);
        if (!first_params) {
            first_params = r.params;
        } else if (*first_params == r.params) {
            std::printf("hpu-train: eager and lazy mode end with bit-identical parameters\n");
        } else {
            std::printf("hpu-train: FAIL: eager and lazy mode end with different parameters\n");
            rc = 1;
        }
        r.params.clear();
        rs.push_back(std::move(r));
    }
    print_table(rs);
    if (!a.compare.empty()) {
        const Result &cpu = rs.front();
        for (std::size_t i = 1; i < rs.size(); ++i) {
            if (rs[i].epochs.empty() || cpu.epochs.empty()) {
                std::printf("hpu-train: FAIL: nothing to compare (no epoch)\n");
                return 1;
            }
            const double d = rs[i].epochs.back().accuracy - cpu.epochs.back().accuracy;
            const bool ok = std::fabs(d) <= a.max_diff;
            std::printf("hpu-train: %s: final test accuracy %.2f %% vs cpu %.2f %%: %+.2f points (%s, limit %.2f)\n",
                        rs[i].name.c_str(), rs[i].epochs.back().accuracy, cpu.epochs.back().accuracy, d,
                        ok ? "agree" : "FAIL", a.max_diff);
            if (!ok)
                rc = 1;
        }
    }
    return rc;
}

} // namespace

int main(int argc, char **argv)
{
    const Args a = parse(argc, argv);
    try {
        return run(a);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "hpu-train: %s\n", e.what());
        return 1;
    }
}
