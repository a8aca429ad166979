// SPDX-License-Identifier: MIT
// hpu-smi: show the HPUs of this machine (see Documentation/hpu-smi.md).
//
// Copyright (c) 2026 The hpu authors
#include <exception>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "smi.h"

int main(int argc, char **argv)
{
    try {
        const std::span<char *> argspan(argv, static_cast<std::size_t>(argc));
        const std::vector<std::string> args(argspan.begin() + 1, argspan.end());
        const int status = hpu::smi::run(args, std::cout, std::cerr, hpu::smi::default_backend());
        std::cout.flush();
        return std::cout.good() ? status : hpu::smi::kExitError;
    } catch (const std::exception &e) {
        std::cerr << "hpu-smi: " << e.what() << "\n";
        return hpu::smi::kExitError;
    }
}
