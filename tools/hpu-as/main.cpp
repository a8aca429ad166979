// SPDX-License-Identifier: MIT
//
// hpu-as: the TPC assembler and disassembler (Documentation/hpu-as.md).
//   hpu-as [-I DIR]... [-D NAME=VALUE]... [--depfile DEP] -o OUT.tpcbin IN.s
//   hpu-as -d IN.tpcbin [-o OUT.s]
//   hpu-as --check IN.tpcbin
//
// Copyright (c) 2026 The hpu authors
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "tpcasm.h"

namespace
{

int usage()
{
    std::cerr << "usage: hpu-as [-I DIR]... [-D NAME=VALUE]... [--depfile DEP] -o OUT.tpcbin IN.s\n"
                 "       hpu-as -d IN.tpcbin [-o OUT.s]\n"
                 "       hpu-as --check IN.tpcbin\n";
    return 2;
}

bool read_bytes(const std::string &path, hpu::tpc::Bytes &out)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return false;
    out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return true;
}

bool write_bytes(const std::string &path, const void *data, size_t size)
{
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(static_cast<const char *>(data), static_cast<std::streamsize>(size));
    return static_cast<bool>(f);
}

} // namespace

int main(int argc, char **argv)
{
    hpu::tpc::Options opt;
    std::string out, in, depfile;
    bool dis = false, check = false;
    std::vector<std::string> args(argv + 1, argv + argc);
    for (size_t i = 0; i < args.size(); i++) {
        const std::string &a = args[i];
        auto next = [&](std::string &dst) {
            if (i + 1 >= args.size())
                return false;
            dst = args[++i];
            return true;
        };
        std::string v;
        if (a == "-o") {
            if (!next(out))
                return usage();
        } else if (a == "--depfile") {
            if (!next(depfile))
                return usage();
        } else if (a == "-I") {
            if (!next(v))
                return usage();
            opt.include_dirs.push_back(v);
        } else if (a.rfind("-I", 0) == 0) {
            opt.include_dirs.push_back(a.substr(2));
        } else if (a == "-D" || a.rfind("-D", 0) == 0) {
            if (a == "-D") {
                if (!next(v))
                    return usage();
            } else {
                v = a.substr(2);
            }
            size_t eq = v.find('=');
            std::string name = v.substr(0, eq);
            char *end = nullptr;
            std::string val = eq == std::string::npos ? "1" : v.substr(eq + 1);
            long long n = std::strtoll(val.c_str(), &end, 0);
            if (name.empty() || val.empty() || *end) {
                std::cerr << "hpu-as: bad -D " << v << " (NAME=INTEGER)\n";
                return 2;
            }
            opt.defines[name] = n;
        } else if (a == "-d") {
            dis = true;
        } else if (a == "--check") {
            check = true;
        } else if (a == "-h" || a == "--help") {
            usage();
            return 0;
        } else if (in.empty() && (a.empty() || a[0] != '-')) {
            in = a;
        } else {
            return usage();
        }
    }
    if (in.empty() || (dis && check))
        return usage();
    if (dis || check) {
        hpu::tpc::Bytes bin;
        if (!read_bytes(in, bin)) {
            std::cerr << "hpu-as: cannot read " << in << "\n";
            return 1;
        }
        try {
            if (check) {
                hpu::tpc::Kernel k = hpu::tpc::decode_binary(bin);
                std::cout << in << ": kernel " << k.name << ", " << k.code.size() << " bundles, "
                          << k.num_tensors << " tensors, " << k.num_scalars << " scalars\n";
                return 0;
            }
            std::string text = hpu::tpc::disassemble(bin);
            if (out.empty()) {
                std::cout << text;
            } else if (!write_bytes(out, text.data(), text.size())) {
                std::cerr << "hpu-as: cannot write " << out << "\n";
                return 1;
            }
        } catch (const hpu::tpc::Error &e) {
            std::cerr << "hpu-as: " << in << ": " << e.what() << "\n";
            return 1;
        }
        return 0;
    }
    if (out.empty())
        return usage();
    hpu::tpc::Result r = hpu::tpc::assemble_file(in, opt);
    if (!r.ok()) {
        std::cerr << r.error_text();
        return 1;
    }
    if (!write_bytes(out, r.binary.data(), r.binary.size())) {
        std::cerr << "hpu-as: cannot write " << out << "\n";
        return 1;
    }
    if (!depfile.empty()) {
        // make syntax: the output depends on the source and every include
        std::string dep = out + ":";
        for (const auto &f : r.files)
            dep += " " + f;
        dep += "\n";
        if (!write_bytes(depfile, dep.data(), dep.size())) {
            std::cerr << "hpu-as: cannot write " << depfile << "\n";
            return 1;
        }
    }
    return 0;
}
