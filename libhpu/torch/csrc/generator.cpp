// SPDX-License-Identifier: MIT
// generator.cpp - the HPU's random number generators: one default
// generator per HPU (created on first use, as CUDA's), and new ones on
// request (hpu_torch.hpu.Generator). A generator is a 64-bit seed and a
// 64-bit offset, Philox style: every draw on the device takes the key
// derived from (seed, offset) for its launch(es) and advances the offset
// by the one key it consumed. The device's kernels are unchanged: a launch
// gets one 64-bit seed (Documentation/hw/tpc.md, "Random numbers") and
// the key is philox4x32_10(counter = {offset lo, offset hi, "HPUG", 0},
// key = {seed lo, seed hi}), words 0 and 1, so consecutive offsets give
// unrelated keys. HPU draws never touch PyTorch's CPU generator
// (Documentation/pytorch.md, "Random numbers").
//
// Copyright (c) 2026 The hpu authors
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>
#include <c10/core/TensorImpl.h>
#include <torch/library.h>

#include <array>
#include <cstring>
#include <deque>

#include "hpu_torch.h"
#include "hw/hpu_tpc.h"

namespace hpu_torch {

namespace {

// The state tensor (get_state / set_state): kStateBytes bytes, three
// little-endian u64: magic and version (kStateTag), seed, offset.
constexpr std::uint64_t kStateMagic = 0x47555048; // "HPUG"
constexpr std::uint64_t kStateVersion = 1;
constexpr std::uint64_t kStateTag = kStateMagic | (kStateVersion << 32);
constexpr std::size_t kStateWords = 3;
constexpr std::size_t kStateBytes = kStateWords * sizeof(std::uint64_t);

class HPUGeneratorImpl final : public c10::GeneratorImpl {
public:
    explicit HPUGeneratorImpl(c10::DeviceIndex device, std::uint64_t seed = c10::default_rng_seed_val)
        : c10::GeneratorImpl(c10::Device(c10::DeviceType::HPU, device), c10::DispatchKeySet(c10::DispatchKey::HPU)),
          seed_(seed)
    {
    }

    static c10::DeviceType device_type() { return c10::DeviceType::HPU; }

    void set_current_seed(std::uint64_t seed) override
    {
        seed_ = seed;
        offset_ = 0;
    }
    [[nodiscard]] std::uint64_t current_seed() const override { return seed_; }
    std::uint64_t seed() override
    {
        const std::uint64_t s = c10::detail::getNonDeterministicRandom();
        set_current_seed(s);
        return s;
    }

    [[nodiscard]] c10::intrusive_ptr<c10::TensorImpl> get_state() const override
    {
        at::Tensor state = at::empty({static_cast<std::int64_t>(kStateBytes)}, at::TensorOptions().dtype(at::kByte));
        const std::array<std::uint64_t, kStateWords> words{kStateTag, seed_, offset_};
        std::memcpy(state.data_ptr<std::uint8_t>(), words.data(), kStateBytes);
        return state.getIntrusivePtr();
    }

    void set_state(const c10::TensorImpl &new_state) override
    {
        at::detail::check_rng_state(new_state);
        const auto n = static_cast<std::size_t>(new_state.numel());
        TORCH_CHECK(n == kStateBytes, "an HPU generator state is ", kStateBytes,
                    " bytes (hpu_torch.hpu.get_rng_state()), not ", n);
        std::array<std::uint64_t, kStateWords> words{};
        std::memcpy(words.data(), new_state.data(), kStateBytes);
        TORCH_CHECK((words[0] & 0xffffffffU) == kStateMagic, "not an HPU generator state (no \"HPUG\" tag)");
        TORCH_CHECK(words[0] >> 32 == kStateVersion, "an HPU generator state of version ", words[0] >> 32,
                    ", this hpu_torch reads version ", kStateVersion);
        seed_ = words[1];
        offset_ = words[2];
    }

    // The key of the next draw: (seed, offset) through Philox; offset + 1.
    std::uint64_t next_key()
    {
        std::array<std::uint32_t, 4> ctr{static_cast<std::uint32_t>(offset_), static_cast<std::uint32_t>(offset_ >> 32),
                                         static_cast<std::uint32_t>(kStateMagic), 0};
        hpu_tpc_philox(ctr.data(), static_cast<std::uint32_t>(seed_), static_cast<std::uint32_t>(seed_ >> 32));
        ++offset_;
        return ctr[0] | (static_cast<std::uint64_t>(ctr[1]) << 32);
    }

private:
    [[nodiscard]] HPUGeneratorImpl *clone_impl() const override
    {
        auto *g = new HPUGeneratorImpl(device_.index(), seed_); // NOLINT(cppcoreguidelines-owning-memory): clone()'s contract
        g->offset_ = offset_;
        return g;
    }

    std::uint64_t seed_;
    std::uint64_t offset_ = 0;
};

int resolve(int device)
{
    const int d = device < 0 ? current_device() : device;
    TORCH_CHECK(d >= 0 && d < device_count(), "HPU device index ", d, " out of range: ", device_count(),
                " HPU(s) present");
    return d;
}

} // namespace

const at::Generator &default_generator(int device)
{
    // As CUDA's: sized once, each device's generator made on its first use.
    static std::once_flag sized;
    static std::deque<std::once_flag> made;
    static std::vector<at::Generator> gens;
    std::call_once(sized, [] {
        made.resize(static_cast<std::size_t>(device_count()));
        gens.resize(static_cast<std::size_t>(device_count()));
    });
    const auto d = static_cast<std::size_t>(resolve(device));
    std::call_once(made[d], [d] { gens[d] = at::make_generator<HPUGeneratorImpl>(static_cast<c10::DeviceIndex>(d)); });
    return gens[d];
}

at::Generator new_generator(int device)
{
    return at::make_generator<HPUGeneratorImpl>(static_cast<c10::DeviceIndex>(resolve(device)));
}

std::uint64_t next_seed(const c10::optional<at::Generator> &gen, c10::Device device)
{
    const bool given = gen.has_value() && gen->defined();
    at::Generator g = given ? *gen : default_generator(device.index());
    if (g.device().type() == c10::DeviceType::CPU) {
        // An explicit CPU generator: its next 64 bits, as before there
        // were HPU generators.
        const std::lock_guard<std::mutex> lock(g.mutex());
        return g.get<at::CPUGeneratorImpl>()->random64();
    }
    TORCH_CHECK(g.device().type() == c10::DeviceType::HPU, "an HPU random draw takes an HPU or a CPU generator, not ",
                g.device());
    const std::lock_guard<std::mutex> lock(g.mutex());
    return g.get<HPUGeneratorImpl>()->next_key();
}

namespace {

// A CPU generator whose whole Mersenne Twister state comes from the 64-bit
// key: word i of the state is word i % 4 of philox4x32_10(counter =
// {i / 4, 0, "HPUC", 0}, key = {key lo, key hi}). (at::mt19937(seed)
// keeps only the seed's low 32 bits: 2^32 streams, so that two of 10^5
// fallback draws would likely repeat one.)
at::Generator cpu_generator_from_key(std::uint64_t key)
{
    constexpr std::uint32_t kCpuMagic = 0x43555048; // "HPUC"
    at::mt19937_data_pod pod{};
    for (std::size_t i = 0; i < pod.state_.size(); i += 4) {
        std::array<std::uint32_t, 4> ctr{static_cast<std::uint32_t>(i / 4), 0, kCpuMagic, 0};
        hpu_tpc_philox(ctr.data(), static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32));
        for (std::size_t w = 0; w < 4 && i + w < pod.state_.size(); ++w)
            pod.state_.at(i + w) = ctr.at(w);
    }
    pod.seed_ = key;
    pod.left_ = 1; // the first draw runs the twist, as after at::mt19937(seed)
    pod.next_ = 0;
    pod.seeded_ = true;
    at::mt19937 engine;
    engine.set_data(pod);
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(key);
    g.get<at::CPUGeneratorImpl>()->set_engine(engine);
    return g;
}

} // namespace

at::Generator cpu_generator_for(const c10::optional<at::Generator> &gen, c10::Device device)
{
    if (gen.has_value() && gen->defined() && gen->device().type() == c10::DeviceType::CPU)
        return *gen;
    return cpu_generator_from_key(next_seed(gen, device));
}

namespace {

c10::optional<at::Generator> op_default_generator(std::int64_t device)
{
    return default_generator(static_cast<int>(device));
}
c10::optional<at::Generator> op_new_generator(std::int64_t device) { return new_generator(static_cast<int>(device)); }
// For the tests: the CPU generator a fallback draw with this key gets.
c10::optional<at::Generator> op_cpu_generator_from_key(std::int64_t key)
{
    return cpu_generator_from_key(static_cast<std::uint64_t>(key));
}

} // namespace

// Returned as Generator? (1.13 infers that type for a returned
// at::Generator); Python gets a torch.Generator of the HPU.
TORCH_LIBRARY_FRAGMENT(hpu_torch, m)
{
    m.def("default_generator(int device=-1) -> Generator?", &op_default_generator);
    m.def("new_generator(int device=-1) -> Generator?", &op_new_generator);
    m.def("cpu_generator_from_key(int key) -> Generator?", &op_cpu_generator_from_key);
}

} // namespace hpu_torch
