// SPDX-License-Identifier: MIT
//
// The embedded kernel table (libhpu/kernels/tpc_kernels.h): one entry per
// source, named as the binary says, each binary valid and equal to its
// source assembled again; lookup by name.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include "tpclib_rig.hpp"

#include <filesystem>
#include <set>

using namespace hpu_test;
namespace fs = std::filesystem;

TEST_CASE("tpclib table: every kernel source is embedded, valid and named", "[tpclib]")
{
    std::set<std::string> sources;
    for (const auto &e : fs::directory_iterator(HPU_TPC_LIB_SRC)) {
        if (e.path().extension() == ".s") {
            sources.insert(e.path().stem().string());
        }
    }
    auto all = hpu::kernels::tpc_kernels();
    REQUIRE(all.size() == sources.size());
    std::string prev;
    for (const auto &k : all) {
        CAPTURE(k.name);
        CHECK(sources.count(k.name) == 1);
        CHECK(std::string(k.name) > prev);
        prev = k.name;
        CHECK(reinterpret_cast<uintptr_t>(k.data) % 64 == 0);
        std::vector<uint8_t> bin(k.data, k.data + k.size);
        CHECK(hpu::tpc::check_binary(bin) == HPU_TPC_BL_OK);
        hpu::tpc::Kernel dk = hpu::tpc::decode_binary(bin);
        CHECK(dk.name == k.name);
        // the build's binary is the source assembled with the library's includes
        hpu::tpc::Options o;
        o.include_dirs = {std::string(HPU_TPC_LIB_SRC) + "/../inc"};
        hpu::tpc::Result res =
            hpu::tpc::assemble_file(std::string(HPU_TPC_LIB_SRC) + "/" + k.name + ".s", o);
        INFO(res.error_text());
        REQUIRE(res.ok());
        CHECK(res.binary == bin);
        CHECK(hpu::kernels::find_tpc_kernel(k.name) == &k);
    }
    CHECK(hpu::kernels::find_tpc_kernel("no_such_kernel") == nullptr);
    CHECK(hpu::kernels::find_tpc_kernel("") == nullptr);
    CHECK(hpu::kernels::find_tpc_kernel("add_f3") == nullptr);
}
