// SPDX-License-Identifier: MIT
// Runs hpu-smi's command line in-process for the tests: its exit status
// and what it wrote to stdout and stderr.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_SMI_RUN_H
#define HPU_TESTS_SMI_RUN_H

#include <sstream>
#include <string>
#include <vector>

#include "smi.h"

namespace hpu::test {

struct Result {
    int status;
    std::string out;
    std::string err;
};

// hpu-smi with args and the back end be.
inline Result run(const std::vector<std::string> &args, const hpu::smi::Backend &be)
{
    std::ostringstream out;
    std::ostringstream err;
    const int status = hpu::smi::run(args, out, err, be);
    return {status, out.str(), err.str()};
}

// hpu-smi with args, gathering its snapshots with gather (the default back
// end otherwise).
inline Result run(const std::vector<std::string> &args, const hpu::smi::Gatherer &gather)
{
    std::ostringstream out;
    std::ostringstream err;
    const int status = hpu::smi::run(args, out, err, gather);
    return {status, out.str(), err.str()};
}

} // namespace hpu::test

#endif // HPU_TESTS_SMI_RUN_H
