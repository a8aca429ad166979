// SPDX-License-Identifier: MIT
//
// TPC launches for the device-model tests (Documentation/hw/tpc.md):
// kernels assembled with the hpu-tpcasm library, tensor descriptors, the
// launch descriptor, placement in a Space (HBM or host memory, ASID 0 or a
// context) and the TPC_LAUNCH packet.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include "hpu_mme_rig.hpp"
#include "tpcasm.h"

#include <string>

namespace hpu_test {

constexpr unsigned TPC_E = HPU_ENGINE_TPC;

// Assemble @src; the test fails with the assembler's errors.
inline std::vector<uint8_t> tpc_asm(const std::string &src)
{
    hpu::tpc::Result res = hpu::tpc::assemble(src, "test.s");
    INFO(res.error_text());
    REQUIRE(res.ok());
    return res.binary;
}

struct TDesc {
    uint64_t base = 0;
    uint8_t dtype = HPU_TPC_DT_F32;
    uint8_t ndims = 1;
    uint16_t flags = 0;
    uint32_t pad = 0;
    uint32_t size[5] = {1, 0, 0, 0, 0};
    uint32_t stride[5] = {1, 0, 0, 0, 0};
    uint64_t reserved = 0;

    // A dense view of @sizes (dimension 0 first).
    static TDesc dense(uint8_t dt, uint64_t base, std::initializer_list<uint32_t> sizes,
                       uint32_t pad = 0)
    {
        TDesc t;
        t.base = base;
        t.dtype = dt;
        t.pad = pad;
        t.ndims = static_cast<uint8_t>(sizes.size());
        uint32_t st = 1;
        unsigned d = 0;
        for (uint32_t s : sizes) {
            t.size[d] = s;
            t.stride[d] = st;
            st *= s;
            d++;
        }
        return t;
    }
    uint64_t elems() const
    {
        uint64_t n = 0;
        for (unsigned d = 0; d < ndims; d++) {
            n += static_cast<uint64_t>(size[d] - 1) * stride[d];
        }
        return n + 1;
    }
    std::array<uint8_t, HPU_TPC_TENSOR_DESC_SIZE> bytes() const
    {
        std::array<uint8_t, HPU_TPC_TENSOR_DESC_SIZE> p{};
        std::memcpy(&p[0], &base, 8);
        p[8] = dtype;
        p[9] = ndims;
        std::memcpy(&p[10], &flags, 2);
        std::memcpy(&p[12], &pad, 4);
        std::memcpy(&p[16], size, 20);
        std::memcpy(&p[36], stride, 20);
        std::memcpy(&p[56], &reserved, 8);
        return p;
    }
};

struct LaunchDesc {
    uint32_t magic = HPU_TPC_LAUNCH_MAGIC;
    uint32_t flags = 0;
    uint64_t binary = 0;
    uint32_t binary_size = 0;          // 0: the binary's size
    int num_tensors = -1;              // -1: tensors.size()
    int num_scalars = -1;              // -1: scalars.size()
    uint16_t reserved0 = 0;
    uint32_t index[5] = {1, 1, 1, 1, 1};
    uint32_t reserved1 = 0;
    uint64_t seed = 0;
    uint64_t reserved2 = 0;
    std::vector<uint32_t> scalars;
    std::vector<TDesc> tensors;
    std::vector<uint32_t> extra_scalars; // raw words 0..31 overriding (tests)

    std::vector<uint8_t> bytes(uint32_t bin_size) const
    {
        std::vector<uint8_t> p(HPU_TPC_LAUNCH_FIXED_SIZE + 64 * tensors.size());
        auto put32 = [&](unsigned o, uint32_t v) { std::memcpy(&p[o], &v, 4); };
        auto put64 = [&](unsigned o, uint64_t v) { std::memcpy(&p[o], &v, 8); };
        put32(0, magic);
        put32(4, flags);
        put64(8, binary);
        put32(16, binary_size ? binary_size : bin_size);
        p[20] = static_cast<uint8_t>(num_tensors < 0 ? tensors.size() : num_tensors);
        p[21] = static_cast<uint8_t>(num_scalars < 0 ? scalars.size() : num_scalars);
        std::memcpy(&p[22], &reserved0, 2);
        for (unsigned d = 0; d < 5; d++) {
            put32(24 + 4 * d, index[d]);
        }
        put32(44, reserved1);
        put64(48, seed);
        put64(56, reserved2);
        for (size_t i = 0; i < scalars.size(); i++) {
            put32(64 + 4 * static_cast<unsigned>(i), scalars[i]);
        }
        for (size_t i = 0; i < extra_scalars.size(); i++) {
            if (extra_scalars[i]) {
                put32(64 + 4 * static_cast<unsigned>(i), extra_scalars[i]);
            }
        }
        for (size_t i = 0; i < tensors.size(); i++) {
            auto t = tensors[i].bytes();
            std::memcpy(&p[192 + 64 * i], t.data(), 64);
        }
        return p;
    }
};

inline Cb tpc_cb(uint64_t desc, uint32_t reserved = 0)
{
    Cb cb;
    cb.raw(HPU_PKT_TPC_LAUNCH, reserved)
      .raw(static_cast<uint32_t>(desc), static_cast<uint32_t>(desc >> 32));
    return cb;
}

// Place @bin and the descriptor in @s; the descriptor's address.
inline uint64_t place_launch(Space &s, const std::vector<uint8_t> &bin, LaunchDesc ld)
{
    if (!ld.binary) {
        ld.binary = s.alloc(bin.size());
        s.write(ld.binary, bin.data(), bin.size());
    }
    auto d = ld.bytes(static_cast<uint32_t>(bin.size()));
    uint64_t at = s.alloc(d.size());
    s.write(at, d.data(), d.size());
    return at;
}

// Elements of a tensor in a Space, typed.
template <typename T>
inline void put_elems(Space &s, uint64_t base, const std::vector<T> &v)
{
    s.write(base, v.data(), v.size() * sizeof(T));
}

template <typename T>
inline std::vector<T> get_elems(Space &s, uint64_t base, size_t n)
{
    auto b = s.read(base, n * sizeof(T));
    std::vector<T> v(n);
    std::memcpy(v.data(), b.data(), n * sizeof(T));
    return v;
}

} // namespace hpu_test
