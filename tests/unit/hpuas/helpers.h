// SPDX-License-Identifier: MIT
//
// Helpers of the hpu-as tests: assembling a snippet inside a kernel and
// picking slots out of the result.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPUAS_TEST_HELPERS_H
#define HPUAS_TEST_HELPERS_H

#include <catch2/catch_test_macros.hpp>

#include <map>
#include <string>

#include "tpcasm.h"

namespace hpuas_test
{

// Every tensor and scalar argument available, so any operand is legal.
inline const char *const kHeader = ".kernel t\n.tensors 16\n.scalars 32\n";

inline hpu::tpc::Result assemble_text(const std::string &body, const std::string &header = kHeader,
                                      const hpu::tpc::Options &opt = {})
{
    return hpu::tpc::assemble(header + body, "test.s", opt);
}

inline hpu::tpc::Result must_assemble(const std::string &body, const std::string &header = kHeader)
{
    hpu::tpc::Result r = assemble_text(body, header);
    INFO(r.error_text());
    REQUIRE(r.ok());
    return r;
}

// The one error of assembling @body (asserts there is exactly one).
inline hpu::tpc::Diagnostic only_error(const std::string &body, const std::string &header = kHeader,
                                       const hpu::tpc::Options &opt = {})
{
    hpu::tpc::Result r = assemble_text(body, header, opt);
    INFO(body);
    INFO(r.error_text());
    REQUIRE(r.errors.size() == 1);
    REQUIRE(r.binary.empty());
    return r.errors[0];
}

// Options whose file reader serves an in-memory map.
inline hpu::tpc::Options files(std::map<std::string, std::string> m)
{
    hpu::tpc::Options o;
    o.read_file = [m = std::move(m)](const std::string &p) -> std::optional<std::string> {
        auto it = m.find(p);
        if (it == m.end())
            return std::nullopt;
        return it->second;
    };
    return o;
}

} // namespace hpuas_test

#endif
