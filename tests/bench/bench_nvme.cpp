// SPDX-License-Identifier: MIT
// hpu-bench-nvme: the peer baseline for the HPU job benchmarks, run in the
// same guest: 4 KiB O_DIRECT reads from QEMU's emulated NVMe drive (another
// queue-based PCIe device with doorbells, completion queues and MSI-X).
//   - latency of one read at a time (pread, median and p99);
//   - IOPS with 64 reads in flight (Linux native AIO through raw syscalls,
//     linux/aio_abi.h, no library needed).
//   hpu-bench-nvme [/dev/nvme0n1]
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_common.h"

namespace {

constexpr std::size_t kBlock = 4096;
constexpr unsigned kDepth = 64;

long io_setup(unsigned n, aio_context_t *ctx) { return ::syscall(SYS_io_setup, n, ctx); }
long io_destroy(aio_context_t ctx) { return ::syscall(SYS_io_destroy, ctx); }
long io_submit(aio_context_t ctx, long n, iocb **v) { return ::syscall(SYS_io_submit, ctx, n, v); }
long io_getevents(aio_context_t ctx, long min, long max, io_event *ev)
{
    return ::syscall(SYS_io_getevents, ctx, min, max, ev, nullptr);
}

int fail(const char *what)
{
    std::fprintf(stderr, "hpu-bench-nvme: %s: %s\n", what, std::strerror(errno));
    return 1;
}

} // namespace

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "/dev/nvme0n1"; // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    const int fd = ::open(path, O_RDONLY | O_DIRECT | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    if (fd < 0)
        return fail(path);
    std::uint64_t bytes = 0;
    if (::ioctl(fd, BLKGETSIZE64, &bytes) != 0 || bytes < 16 * kBlock) // NOLINT(cppcoreguidelines-pro-type-vararg)
        return fail("BLKGETSIZE64");
    const std::uint64_t blocks = bytes / kBlock;
    void *mem = nullptr;
    if (::posix_memalign(&mem, kBlock, kBlock * kDepth) != 0)
        return fail("posix_memalign");
    auto *buf = static_cast<unsigned char *>(mem);
    std::mt19937_64 rng(4);
    std::uniform_int_distribution<std::uint64_t> pick(0, blocks - 1);

    std::vector<double> lat;
    for (int i = 0; i < 1050; ++i) {
        const auto off = static_cast<off_t>(pick(rng) * kBlock);
        const double t0 = bench::now_s();
        if (::pread(fd, buf, kBlock, off) != static_cast<ssize_t>(kBlock))
            return fail("pread");
        const double dt = bench::now_s() - t0;
        if (i >= 50)
            lat.push_back(dt * 1e6);
    }
    bench::report("nvme_lat_p50_us", bench::quantile(lat, 0.5));
    bench::report("nvme_lat_p99_us", bench::quantile(lat, 0.99));

    aio_context_t ctx = 0;
    if (io_setup(kDepth, &ctx) != 0)
        return fail("io_setup");
    std::vector<iocb> cbs(kDepth);
    std::vector<iocb *> ptrs(kDepth);
    auto prep = [&](unsigned i) {
        iocb &cb = cbs[i];
        std::memset(&cb, 0, sizeof(cb));
        cb.aio_fildes = static_cast<std::uint32_t>(fd);
        cb.aio_lio_opcode = IOCB_CMD_PREAD;
        cb.aio_buf = reinterpret_cast<std::uintptr_t>(buf + static_cast<std::size_t>(i) * kBlock); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast,cppcoreguidelines-pro-bounds-pointer-arithmetic)
        cb.aio_nbytes = kBlock;
        cb.aio_offset = static_cast<std::int64_t>(pick(rng) * kBlock);
        cb.aio_data = i;
        ptrs[i] = &cb;
    };
    constexpr long kReads = 20000;
    for (unsigned i = 0; i < kDepth; ++i)
        prep(i);
    const double t0 = bench::now_s();
    if (io_submit(ctx, kDepth, ptrs.data()) != kDepth)
        return fail("io_submit");
    long submitted = kDepth;
    long done = 0;
    std::vector<io_event> ev(kDepth);
    while (done < submitted) {
        const long n = io_getevents(ctx, 1, kDepth, ev.data());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return fail("io_getevents");
        }
        std::vector<iocb *> again;
        for (long k = 0; k < n; ++k) {
            if (ev[static_cast<std::size_t>(k)].res != static_cast<std::int64_t>(kBlock)) {
                errno = EIO;
                return fail("read result");
            }
            ++done;
            if (submitted < kReads) {
                const auto i = static_cast<unsigned>(ev[static_cast<std::size_t>(k)].data);
                prep(i);
                again.push_back(ptrs[i]);
                ++submitted;
            }
        }
        if (!again.empty() && io_submit(ctx, static_cast<long>(again.size()), again.data()) != static_cast<long>(again.size()))
            return fail("io_submit");
    }
    bench::report("nvme_qd64_iops", static_cast<double>(done) / (bench::now_s() - t0));
    io_destroy(ctx);
    std::free(mem); // NOLINT(cppcoreguidelines-no-malloc,cppcoreguidelines-owning-memory)
    ::close(fd);
    return 0;
}
