// SPDX-License-Identifier: MIT
//
// hpu-bench-roce-model: the RoCE engine of the device model (emu/hpu_roce.c)
// on its own, without QEMU or a guest: ports 0 and 1 wired back to back
// (tests/unit/emu/hpu_roce_rig.hpp), one RC QP on each, the engine run as
// QEMU's bottom half runs it. What it costs the host per message, for
// profiling (perf record, valgrind --tool=callgrind) and before/after
// comparisons of the engine; make bench's RDMA rows (perftest in a guest)
// stay the figures that count. Data is checked after the warm-up.
//
//   HPU_BENCH_RUNS (5)   timed runs after a warm-up; the median is printed
//   HPU_BENCH_WHAT       "write" (RDMA WRITE of 64 KiB, path MTU 4096),
//                        "send" (2-byte SEND and its receive), or both
//   HPU_BENCH_MSGS       messages per run (default 500)
//
// Prints "BENCH roce_model_write_64k_us=", "..._write_mbs=",
// "roce_model_send_2b_us=" (host microseconds per message, both ports'
// work included) and, for scale, "host_memcpy_64k_us=".
//
// Copyright (c) 2026 The hpu authors

#include "bench_common.h"
#include "hpu_roce_rig.hpp"

#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <cstring>

using namespace hpu_test;

namespace {

Bytes host_read(RoceRig &r, uint64_t bus, size_t n)
{
    return {r.hp(bus), r.hp(bus) + n};
}

void bench_write(int runs, int msgs)
{
    RoceRig r;
    r.record = false;
    auto p = r.pair(5);
    auto local = r.make_mr(65536), remote = r.make_mr(65536);
    const Bytes w = pattern_bytes(65536, 3);
    r.hwrite(local.bus, w.data(), w.size());
    const double t = bench::median_s(
        runs,
        [&] {
            for (int i = 0; i < msgs; i++) {
                r.post_send(p.a, HPU_ROCE_WR_RDMA_WRITE, static_cast<uint64_t>(i),
                            { { local.va, 65536, local.key } }, remote.va, remote.key);
                r.pump();
                REQUIRE(r.poll1(p.ca).status == HPU_ROCE_WC_SUCCESS);
            }
        },
        [&] { REQUIRE(host_read(r, remote.bus, 65536) == w); });
    const double us = t / msgs * 1e6;
    bench::report("roce_model_write_64k_us", us);
    bench::report("roce_model_write_mbs", 65536.0 / us);

    Bytes a(65536), b(w);
    const double m = bench::median_s(runs, [&] {
        for (int i = 0; i < msgs; i++) {
            std::memcpy(a.data(), b.data(), a.size());
            std::swap(a, b);
        }
    });
    bench::report("host_memcpy_64k_us", m / msgs * 1e6);
}

void bench_send(int runs, int msgs)
{
    RoceRig r;
    r.record = false;
    auto p = r.pair(5);
    auto src = r.make_mr(4096), dst = r.make_mr(4096);
    const Bytes w = pattern_bytes(2, 5);
    r.hwrite(src.bus, w.data(), w.size());
    const double t = bench::median_s(
        runs,
        [&] {
            for (int i = 0; i < msgs; i++) {
                r.post_recv(p.b, static_cast<uint64_t>(i), { { dst.va, 4096, dst.key } });
                r.post_send(p.a, HPU_ROCE_WR_SEND, static_cast<uint64_t>(i),
                            { { src.va, 2, src.key } });
                r.pump();
                REQUIRE(r.poll1(p.cb).status == HPU_ROCE_WC_SUCCESS);
                REQUIRE(r.poll1(p.ca).status == HPU_ROCE_WC_SUCCESS);
            }
        },
        [&] { REQUIRE(host_read(r, dst.bus, 2) == w); });
    bench::report("roce_model_send_2b_us", t / msgs * 1e6);
}

} // namespace

TEST_CASE("RoCE engine on the host", "[bench]")
{
    const int runs = static_cast<int>(bench::env_u64("HPU_BENCH_RUNS", 5));
    const int msgs = static_cast<int>(bench::env_u64("HPU_BENCH_MSGS", 500));
    if (bench::want("write")) {
        bench_write(runs, msgs);
    }
    if (bench::want("send")) {
        bench_send(runs, msgs);
    }
}
