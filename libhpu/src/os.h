// SPDX-License-Identifier: MIT
// The OS-interface layer of libhpu: every system call the library makes
// (open, close, ioctl, mmap, munmap, reading the monotonic clock, reading
// and writing sysfs files, listing directories, readlink, read, write,
// poll, eventfd, sleeping) goes through an Os. Each device object holds the
// Os it was opened with and uses only that one, as do the buffers, fences,
// queues and command lists made on it; only the calls that have no object
// yet (discovery, opening a device, the process list) take default_os().
// Unit tests pass a mock (set_default_os() before opening, or open_entry()
// with an Os) to fake the kernel and inject failures. The ioctls of a
// device go through its Kmd (kmd.h), never through Os::ioctl directly.
// The event thread of a device (events.cpp) calls poll() and read() while
// other threads use the rest: implementations must allow that.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_SRC_OS_H
#define HPU_SRC_OS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <poll.h>

namespace hpu::detail {

class Os {
public:
    Os() = default;
    Os(const Os &) = delete;
    Os &operator=(const Os &) = delete;
    Os(Os &&) = delete;
    Os &operator=(Os &&) = delete;
    virtual ~Os() = default;

    // Returns a file descriptor (>= 0) or a negative errno value.
    virtual int open(const std::string &path, int flags) = 0;
    // Returns 0 or a negative errno value.
    virtual int close(int fd) = 0;
    // Returns the ioctl's non-negative result or a negative errno value.
    // Implementations restart the call on EINTR and EAGAIN.
    virtual int ioctl(int fd, unsigned long request, void *arg) = 0;
    // Reads a whole (small) file into out. Returns 0 or a negative errno.
    virtual int read_file(const std::string &path, std::string &out) = 0;
    // Reads a whole file of at most max bytes into out; -EFBIG (and out
    // undefined) once it holds more, without reading the rest. Returns 0 or
    // a negative errno.
    virtual int read_file_max(const std::string &path, std::string &out, std::size_t max) = 0;
    // Lists the entries of a directory, without "." and "..", in no
    // particular order. Returns 0 or a negative errno value.
    virtual int list_dir(const std::string &path, std::vector<std::string> &out) = 0;
    // Reads the target of a symbolic link. Returns 0 or a negative errno.
    virtual int read_link(const std::string &path, std::string &out) = 0;
    // mmap(2) with a NULL address hint: maps len bytes of fd at offset.
    // Returns 0 and the address in out, or a negative errno value.
    virtual int mmap(std::size_t len, int prot, int flags, int fd, std::int64_t offset, void **out) = 0;
    // munmap(2). Returns 0 or a negative errno value.
    virtual int munmap(void *addr, std::size_t len) = 0;
    // clock_gettime(CLOCK_MONOTONIC) in nanoseconds (the clock of the
    // absolute timeouts of the DRM syncobj wait ioctls).
    virtual std::int64_t monotonic_ns() = 0;

    // Since 1.2 (events, reset).
    // read(2): returns the bytes read (0 at end of file) or a negative
    // errno; restarted on EINTR.
    virtual long read(int fd, void *buf, std::size_t len) = 0;
    // write(2): returns the bytes written or a negative errno; restarted on
    // EINTR.
    virtual long write(int fd, const void *buf, std::size_t len) = 0;
    // poll(2): returns the number of ready entries (0 on timeout) or a
    // negative errno (-EINTR is returned, not restarted). timeout_ms < 0
    // waits forever.
    virtual int poll(pollfd *fds, std::size_t nfds, int timeout_ms) = 0;
    // eventfd(2) with EFD_CLOEXEC | EFD_NONBLOCK and the value 0. Returns
    // the fd or a negative errno.
    virtual int eventfd() = 0;
    // Writes data to an existing (sysfs) file in one write(2): returns 0,
    // or the negative errno of open(2) or of the write (a sysfs store
    // function's error), -EIO for a short write.
    virtual int write_file(const std::string &path, const std::string &data) = 0;

    // Since 1.3 (process sampling).
    // Sleeps ns nanoseconds of CLOCK_MONOTONIC (restarted on EINTR with
    // the same end).
    virtual void sleep_ns(std::int64_t ns) = 0;

    // Since 1.9 (device memory mapped into the process).
    // Makes the process's earlier write-combined stores (device memory
    // mapped with hpu_buffer_map()) globally visible: an sfence on x86-64.
    // Kmd::submit() calls it before each SUBMIT, so that a job reads what
    // the CPU stored. Not a system call: the real one is the default, and
    // a mock may count the calls.
    virtual void flush_wc_stores();
};

// The Os of the calls that have no device object yet and of the devices
// opened from now on (the real one unless a mock is installed). An open
// device keeps the Os it was opened with.
Os &default_os();

// Installs os as default_os() (nullptr: the real one again) and returns the
// previous one (nullptr if that was the real one). Test-only; not
// thread-safe with respect to concurrent library calls.
Os *set_default_os(Os *os);

// The real implementation on Linux system calls.
Os &real_os();

} // namespace hpu::detail

#endif // HPU_SRC_OS_H
