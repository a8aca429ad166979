// SPDX-License-Identifier: MIT
// The real OS-interface layer: thin wrappers over Linux system calls that
// report errors as negative errno values.
//
// Copyright (c) 2026 The hpu authors
#include "os.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <memory>

#include <dirent.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace hpu::detail {

void Os::flush_wc_stores()
{
#if defined(__x86_64__)
    __builtin_ia32_sfence();
#elif defined(__aarch64__)
    asm volatile("dsb st" ::: "memory"); // as rdma-core's mmio_flush_writes()
#else
    std::atomic_thread_fence(std::memory_order_seq_cst); // a locked instruction on i386
#endif
}

namespace {

struct DirCloser {
    void operator()(DIR *d) const noexcept { ::closedir(d); }
};

class RealOs final : public Os {
public:
    int open(const std::string &path, int flags) override
    {
        int fd = 0;
        do {
            fd = ::open(path.c_str(), flags | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
        } while (fd < 0 && errno == EINTR);
        return fd < 0 ? -errno : fd;
    }

    int close(int fd) override
    {
        // Linux releases the descriptor even when close() reports EINTR:
        // never retry, and do not report EINTR as a failure.
        if (::close(fd) < 0 && errno != EINTR)
            return -errno;
        return 0;
    }

    int ioctl(int fd, unsigned long request, void *arg) override
    {
        int ret = 0;
        do {
            ret = ::ioctl(fd, request, arg); // NOLINT(cppcoreguidelines-pro-type-vararg)
        } while (ret < 0 && (errno == EINTR || errno == EAGAIN));
        return ret < 0 ? -errno : ret;
    }

    int read_file(const std::string &path, std::string &out) override
    {
        return read_file_max(path, out, SIZE_MAX);
    }

    int read_file_max(const std::string &path, std::string &out, std::size_t max) override
    {
        const int fd = open(path, O_RDONLY);
        if (fd < 0)
            return fd;
        out.clear();
        std::array<char, 4096> buf{};
        int err = 0;
        for (;;) {
            const ssize_t n = ::read(fd, buf.data(), buf.size());
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                err = -errno;
                break;
            }
            if (n == 0)
                break;
            if (static_cast<std::size_t>(n) > max - out.size()) {
                err = -EFBIG;
                break;
            }
            out.append(buf.data(), static_cast<size_t>(n));
        }
        ::close(fd);
        return err;
    }

    int list_dir(const std::string &path, std::vector<std::string> &out) override
    {
        const std::unique_ptr<DIR, DirCloser> dir(::opendir(path.c_str()));
        if (!dir)
            return -errno;
        out.clear();
        for (;;) {
            errno = 0;
            const dirent *ent = ::readdir(dir.get());
            if (ent == nullptr)
                return errno != 0 ? -errno : 0;
            const std::string name(static_cast<const char *>(ent->d_name));
            if (name != "." && name != "..")
                out.push_back(name);
        }
    }

    int read_link(const std::string &path, std::string &out) override
    {
        std::array<char, 4096> buf{};
        const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
        if (n < 0)
            return -errno;
        if (static_cast<size_t>(n) >= buf.size())
            return -ENAMETOOLONG;
        out.assign(buf.data(), static_cast<size_t>(n));
        return 0;
    }

    int mmap(std::size_t len, int prot, int flags, int fd, std::int64_t offset, void **out) override
    {
        void *p = ::mmap(nullptr, len, prot, flags, fd, static_cast<off_t>(offset));
        if (p == MAP_FAILED) // NOLINT(cppcoreguidelines-pro-type-cstyle-cast,performance-no-int-to-ptr)
            return -errno;
        *out = p;
        return 0;
    }

    int munmap(void *addr, std::size_t len) override
    {
        return ::munmap(addr, len) < 0 ? -errno : 0;
    }

    std::int64_t monotonic_ns() override
    {
        timespec ts{};
        ::clock_gettime(CLOCK_MONOTONIC, &ts);
        return static_cast<std::int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
    }

    long read(int fd, void *buf, std::size_t len) override
    {
        ssize_t n = 0;
        do {
            n = ::read(fd, buf, len);
        } while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : static_cast<long>(n);
    }

    long write(int fd, const void *buf, std::size_t len) override
    {
        ssize_t n = 0;
        do {
            n = ::write(fd, buf, len);
        } while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : static_cast<long>(n);
    }

    int poll(pollfd *fds, std::size_t nfds, int timeout_ms) override
    {
        const int n = ::poll(fds, static_cast<nfds_t>(nfds), timeout_ms);
        return n < 0 ? -errno : n;
    }

    int eventfd() override
    {
        const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        return fd < 0 ? -errno : fd;
    }

    int write_file(const std::string &path, const std::string &data) override
    {
        const int fd = open(path, O_WRONLY);
        if (fd < 0)
            return fd;
        const long n = write(fd, data.data(), data.size());
        // A sysfs store reports its error from write(); close adds nothing.
        (void)close(fd);
        if (n < 0)
            return static_cast<int>(n);
        return static_cast<std::size_t>(n) == data.size() ? 0 : -EIO;
    }

    void sleep_ns(std::int64_t ns) override
    {
        if (ns <= 0)
            return;
        timespec end{};
        ::clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += static_cast<time_t>(ns / 1000000000LL);
        end.tv_nsec += static_cast<long>(ns % 1000000000LL);
        if (end.tv_nsec >= 1000000000L) {
            end.tv_nsec -= 1000000000L;
            ++end.tv_sec;
        }
        while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, nullptr) == EINTR) {
        }
    }
};

std::atomic<Os *> g_mock{nullptr};

} // namespace

Os &real_os()
{
    static RealOs real;
    return real;
}

Os &default_os()
{
    Os *mock = g_mock.load(std::memory_order_acquire);
    return mock != nullptr ? *mock : real_os();
}

Os *set_default_os(Os *os)
{
    return g_mock.exchange(os, std::memory_order_acq_rel);
}

} // namespace hpu::detail
