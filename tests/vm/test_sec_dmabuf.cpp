// SPDX-License-Identifier: MIT
// dma-buf security (issue 9, defects 1 and 2), raw ioctls:
//  - mmap(2) of a dma-buf: a host buffer's maps its pages (whole, or from a
//    page offset), coherent with the buffer's own mapping and the device;
//    an HBM or user-pointer buffer's refuses it with ENODEV (it used to
//    oops in drm_gem_mmap: accel devices have no primary minor);
//  - dma-bufs imported into the second HPU and mapped there through
//    BO_MMAP_OFFSET: a host buffer's work, a user pointer's are refused
//    with ENODEV, an HBM buffer's import is refused with EOPNOTSUPP;
//  - a read-only user pointer stays read-only through export and import:
//    HPU B imports it read-only (a writable VM_BIND is EINVAL, a read-only
//    mapping's DMA write faults -EFAULT), another driver (vgem) that asks
//    for a writable attachment is refused with EACCES, and the sealed
//    memfd behind it keeps its bytes.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint64_t kPages = 16;
constexpr std::uint64_t kSize = kPages * kHostPage;
constexpr std::uint64_t kWordsPerPage = kHostPage / 8;

// DRM_IOCTL_PRIME_HANDLE_TO_FD; returns the errno, the dma-buf in fd.
int prime_export(int dev, std::uint32_t handle, int &fd, std::uint32_t flags = DRM_CLOEXEC | DRM_RDWR)
{
    drm_prime_handle p{};
    p.handle = handle;
    p.flags = flags;
    p.fd = -1;
    const int e = xioctl(dev, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
    fd = p.fd;
    return e;
}

// DRM_IOCTL_PRIME_FD_TO_HANDLE; returns the errno.
int prime_import(int dev, int fd, std::uint32_t &handle)
{
    drm_prime_handle p{};
    p.fd = fd;
    const int e = xioctl(dev, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
    handle = p.handle;
    return e;
}

// An mmap(2) that is unmapped on scope exit; err is its errno (0: mapped).
class Mapping {
public:
    Mapping(int fd, std::uint64_t size, int prot, std::uint64_t offset, int flags = MAP_SHARED)
        : size_(size), p_(::mmap(nullptr, size, prot, flags, fd, static_cast<off_t>(offset))),
          err_(p_ == MAP_FAILED ? errno : 0)
    {
    }
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;
    Mapping(Mapping &&) = delete;
    Mapping &operator=(Mapping &&) = delete;
    ~Mapping()
    {
        if (p_ != MAP_FAILED)
            ::munmap(p_, size_);
    }
    [[nodiscard]] int err() const { return err_; }
    [[nodiscard]] std::uint64_t *words() const { return static_cast<std::uint64_t *>(p_); }

private:
    std::uint64_t size_;
    void *p_;
    int err_;
};

std::uint64_t *words(unsigned char *p)
{
    return reinterpret_cast<std::uint64_t *>(p); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
}

std::uint32_t make_queue(const Ctx &c, std::uint32_t engine = 0)
{
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(engine, q) == 0);
    return q;
}

// kSize bytes of anonymous memory, written (real pages), unmapped on exit.
class Anon {
public:
    Anon() : p_(::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
    {
        REQUIRE(p_ != MAP_FAILED);
        std::memset(p_, 0x42, kSize);
    }
    Anon(const Anon &) = delete;
    Anon &operator=(const Anon &) = delete;
    Anon(Anon &&) = delete;
    Anon &operator=(Anon &&) = delete;
    ~Anon() { ::munmap(p_, kSize); }
    [[nodiscard]] void *get() const { return p_; }
    [[nodiscard]] std::uint64_t *words() const { return static_cast<std::uint64_t *>(p_); }

private:
    void *p_;
};

// A memfd holding the pattern `seed`, sealed against every write (not even
// its owner can change it), and mapped read-only and shared.
class SealedFile {
public:
    explicit SealedFile(std::uint64_t seed) : seed_(seed), fd_(::memfd_create("hpu-sec-ro", MFD_ALLOW_SEALING))
    {
        REQUIRE(fd_ >= 0);
        std::vector<std::uint64_t> w(kSize / 8);
        fill_words(w.data(), w.size(), seed);
        REQUIRE(::pwrite(fd_, w.data(), kSize, 0) == static_cast<ssize_t>(kSize));
        REQUIRE(::fcntl(fd_, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0); // NOLINT(cppcoreguidelines-pro-type-vararg)
        p_ = ::mmap(nullptr, kSize, PROT_READ, MAP_SHARED, fd_, 0);
        REQUIRE(p_ != MAP_FAILED);
        // A writable mapping of it is impossible.
        REQUIRE(::mprotect(p_, kSize, PROT_READ | PROT_WRITE) != 0);
    }
    SealedFile(const SealedFile &) = delete;
    SealedFile &operator=(const SealedFile &) = delete;
    SealedFile(SealedFile &&) = delete;
    SealedFile &operator=(SealedFile &&) = delete;
    ~SealedFile()
    {
        ::munmap(p_, kSize);
        ::close(fd_);
    }
    [[nodiscard]] const void *get() const { return p_; }
    // Index of the first word of the file (read with pread) that is not
    // the pattern any more, or kSize / 8.
    [[nodiscard]] std::uint64_t first_changed_word() const
    {
        std::vector<std::uint64_t> w(kSize / 8);
        REQUIRE(::pread(fd_, w.data(), kSize, 0) == static_cast<ssize_t>(kSize));
        return check_words(w.data(), w.size(), seed_);
    }

private:
    std::uint64_t seed_;
    int fd_;
    void *p_ = nullptr;
};

// Loads vgem (a DRM driver that imports dma-bufs like any other device
// would: drm_gem_prime_import, a DMA_BIDIRECTIONAL attachment) and opens
// its render node; unloads it again if it was not loaded before.
class Vgem {
public:
    Vgem()
    {
        loaded_before_ = ::access("/sys/module/vgem", F_OK) == 0;
        if (!loaded_before_)
            REQUIRE(std::system("modprobe vgem") == 0); // NOLINT(concurrency-mt-unsafe)
        DIR *d = ::opendir("/dev/dri");
        REQUIRE(d != nullptr);
        while (const dirent *e = ::readdir(d)) { // NOLINT(concurrency-mt-unsafe)
            const std::string name = e->d_name;
            if (name.rfind("renderD", 0) != 0)
                continue;
            const int fd = ::open(("/dev/dri/" + name).c_str(), O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
            if (fd < 0)
                continue;
            std::vector<char> drv(64, '\0');
            drm_version v{};
            v.name = drv.data();
            v.name_len = drv.size() - 1;
            if (xioctl(fd, DRM_IOCTL_VERSION, &v) == 0 && std::string(drv.data()) == "vgem") {
                fd_ = fd;
                break;
            }
            ::close(fd);
        }
        ::closedir(d);
        REQUIRE(fd_ >= 0);
    }
    Vgem(const Vgem &) = delete;
    Vgem &operator=(const Vgem &) = delete;
    Vgem(Vgem &&) = delete;
    Vgem &operator=(Vgem &&) = delete;
    ~Vgem()
    {
        if (fd_ >= 0)
            ::close(fd_);
        if (!loaded_before_)
            std::ignore = std::system("modprobe -r vgem"); // NOLINT(concurrency-mt-unsafe)
    }
    [[nodiscard]] int fd() const { return fd_; }

private:
    bool loaded_before_ = false;
    int fd_ = -1;
};

} // namespace

TEST_CASE("a host buffer's dma-buf maps its pages with mmap(2)", "[security][prime]")
{
    Ctx c(node(0));
    const auto b = c.host_buf(kSize);
    Fd dbuf;
    REQUIRE(prime_export(c.fd(), b.handle, dbuf.ref()) == 0);
    std::uint64_t *own = words(b.ptr);

    SECTION("whole buffer: what either mapping or the device writes, the others read") {
        const Mapping m(dbuf.get(), kSize, PROT_READ | PROT_WRITE, 0);
        REQUIRE(m.err() == 0);
        fill_words(m.words(), kSize / 8, 11);
        CHECK(check_words(own, kSize / 8, 11) == kSize / 8);
        fill_words(own, kSize / 8, 12);
        CHECK(check_words(m.words(), kSize / 8, 12) == kSize / 8);
        const std::uint32_t q = make_queue(c);
        REQUIRE(c.run(q, Cb().write_value(b.va + kSize - 8, 0x5ec0ffeeU)) == 1);
        CHECK(static_cast<std::uint32_t>(m.words()[kSize / 8 - 1]) == 0x5ec0ffeeU); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
    SECTION("from a page offset: the mapping starts at that page of the buffer") {
        fill_words(own, kSize / 8, 13);
        const Mapping m(dbuf.get(), 4 * kHostPage, PROT_READ | PROT_WRITE, 3 * kHostPage);
        REQUIRE(m.err() == 0);
        CHECK(check_words(m.words(), 4 * kWordsPerPage, 13, 3 * kWordsPerPage) == 4 * kWordsPerPage);
        fill_words(m.words(), 4 * kWordsPerPage, 14);
        CHECK(check_words(own + 3 * kWordsPerPage, 4 * kWordsPerPage, 14) == 4 * kWordsPerPage); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(check_words(own, 3 * kWordsPerPage, 13) == 3 * kWordsPerPage);
    }
    SECTION("a range beyond the buffer: EINVAL") {
        const Mapping m(dbuf.get(), kSize, PROT_READ, kHostPage);
        CHECK(m.err() == EINVAL);
    }
    SECTION("MAP_PRIVATE (copy on write): EINVAL") {
        const Mapping m(dbuf.get(), kSize, PROT_READ | PROT_WRITE, 0, MAP_PRIVATE);
        CHECK(m.err() == EINVAL);
    }
    SECTION("PROT_WRITE of a dma-buf exported without DRM_RDWR: EACCES, PROT_READ works") {
        // A buffer exported for the first time (the dma-buf's file mode
        // is set then; later exports give the same dma-buf).
        const auto b2 = c.host_buf(kSize);
        Fd ro2;
        REQUIRE(prime_export(c.fd(), b2.handle, ro2.ref(), DRM_CLOEXEC) == 0);
        const Mapping w(ro2.get(), kSize, PROT_READ | PROT_WRITE, 0);
        CHECK(w.err() == EACCES);
        fill_words(words(b2.ptr), kSize / 8, 15);
        const Mapping r(ro2.get(), kSize, PROT_READ, 0);
        REQUIRE(r.err() == 0);
        CHECK(check_words(r.words(), kSize / 8, 15) == kSize / 8);
    }
}

TEST_CASE("the dma-buf of an HBM or user-pointer buffer refuses mmap(2) with ENODEV", "[security][prime]")
{
    Ctx c(node(0));
    const Anon mem;
    std::uint32_t h = 0;
    std::uint64_t size = kSize;
    // The dma-buf of a read-only buffer is a read-only file: PROT_WRITE
    // is refused before the driver is asked.
    int write_errno = ENODEV;

    SECTION("HBM buffer of 2 MiB") {
        REQUIRE(c.bo_create(2 * MiB, DRM_HPU_BO_HBM, h) == 0);
        size = 2 * MiB;
    }
    SECTION("user pointer") { REQUIRE(c.userptr(mem.get(), kSize, h) == 0); }
    SECTION("read-only user pointer (PROT_WRITE: EACCES)") {
        REQUIRE(c.userptr(mem.get(), kSize, h, DRM_HPU_USERPTR_READONLY) == 0);
        write_errno = EACCES;
    }

    Fd dbuf;
    REQUIRE(prime_export(c.fd(), h, dbuf.ref()) == 0);
    const Mapping r(dbuf.get(), size, PROT_READ, 0);
    CHECK(r.err() == ENODEV);
    const Mapping rw(dbuf.get(), size, PROT_READ | PROT_WRITE, 0);
    CHECK(rw.err() == write_errno);
    // The buffer is still usable by the device.
    const std::uint32_t q = make_queue(c);
    std::uint64_t va = 0;
    REQUIRE(c.map(h, 0, size, va, DRM_HPU_VM_READONLY) == 0);
    const auto out = c.host_buf(kHostPage);
    CHECK(c.run(q, Cb().lin_dma(va, out.va, kHostPage)) == 1);
}

TEST_CASE("dma-bufs imported into the second HPU and mapped through BO_MMAP_OFFSET", "[security][prime]")
{
    Ctx a(node(0));
    Ctx b(node(1));
    const std::uint32_t qb = make_queue(b);

    SECTION("host buffer: B's mapping shares A's pages, and so does B's device") {
        const auto ha = a.host_buf(kSize);
        Fd dbuf;
        REQUIRE(prime_export(a.fd(), ha.handle, dbuf.ref()) == 0);
        std::uint32_t hb = 0;
        REQUIRE(prime_import(b.fd(), dbuf.get(), hb) == 0);
        drm_hpu_bo_mmap_offset o{};
        o.handle = hb;
        REQUIRE(xioctl(b.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        const Mapping m(b.fd(), kSize, PROT_READ | PROT_WRITE, o.offset);
        REQUIRE(m.err() == 0);
        fill_words(words(ha.ptr), kSize / 8, 21);
        CHECK(check_words(m.words(), kSize / 8, 21) == kSize / 8);
        fill_words(m.words(), kSize / 8, 22);
        CHECK(check_words(words(ha.ptr), kSize / 8, 22) == kSize / 8);
        std::uint64_t va = 0;
        REQUIRE(b.map(hb, 0, kSize, va) == 0);
        REQUIRE(b.run(qb, Cb().write_value(va + 8, 0xb0b0U)) == 1);
        CHECK(static_cast<std::uint32_t>(m.words()[1]) == 0xb0b0U); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(static_cast<std::uint32_t>(words(ha.ptr)[1]) == 0xb0b0U); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
    SECTION("user pointer: B's device uses it, B's mmap of it is refused with ENODEV") {
        const Anon mem;
        fill_words(mem.words(), kSize / 8, 23);
        std::uint32_t ha = 0;
        REQUIRE(a.userptr(mem.get(), kSize, ha) == 0);
        Fd dbuf;
        REQUIRE(prime_export(a.fd(), ha, dbuf.ref()) == 0);
        std::uint32_t hb = 0;
        REQUIRE(prime_import(b.fd(), dbuf.get(), hb) == 0);
        drm_hpu_bo_mmap_offset o{};
        o.handle = hb;
        REQUIRE(xioctl(b.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        {
            const Mapping m(b.fd(), kSize, PROT_READ | PROT_WRITE, o.offset);
            CHECK(m.err() == ENODEV);
            const Mapping r(b.fd(), kSize, PROT_READ, o.offset);
            CHECK(r.err() == ENODEV);
        }
        std::uint64_t va = 0;
        REQUIRE(b.map(hb, 0, kSize, va) == 0);
        const auto out = b.host_buf(kSize);
        REQUIRE(b.run(qb, Cb().lin_dma(va, out.va, kSize).write_value(va, 0x77U)) == 1);
        CHECK(check_words(words(out.ptr), kSize / 8, 23) == kSize / 8);
        CHECK(static_cast<std::uint32_t>(mem.words()[0]) == 0x77U); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    }
    SECTION("HBM buffer: the import is refused with EOPNOTSUPP") {
        std::uint32_t ha = 0;
        REQUIRE(a.bo_create(2 * MiB, DRM_HPU_BO_HBM, ha) == 0);
        Fd dbuf;
        REQUIRE(prime_export(a.fd(), ha, dbuf.ref()) == 0);
        std::uint32_t hb = 0;
        CHECK(prime_import(b.fd(), dbuf.get(), hb) == EOPNOTSUPP);
    }
    // B still works.
    CHECK(b.run(qb, Cb().nop()) == 1);
}

TEST_CASE("a read-only user pointer stays read-only through export and import", "[security][prime]")
{
    Ctx a(node(0));
    const SealedFile file(0x5eed);
    std::uint32_t ha = 0;
    REQUIRE(a.userptr(file.get(), kSize, ha, DRM_HPU_USERPTR_READONLY) == 0);
    Fd dbuf;
    REQUIRE(prime_export(a.fd(), ha, dbuf.ref()) == 0);

    SECTION("imported into HPU B: a writable VM_BIND is refused with EINVAL") {
        Ctx b(node(1));
        const std::uint32_t qb = make_queue(b);
        std::uint32_t hb = 0;
        REQUIRE(prime_import(b.fd(), dbuf.get(), hb) == 0);
        std::uint64_t va = 0;
        const int e = b.map(hb, 0, kSize, va);
        CHECK(e == EINVAL);
        if (e == 0) {
            // The old driver mapped it writable: show what B's DMA does.
            INFO("B's memset job: " << b.run(qb, Cb().memset(0xdeaddeaddeaddeadULL, va, kSize)));
            CHECK(file.first_changed_word() == kSize / 8);
        }
    }
    SECTION("imported into HPU B: its read-only mapping reads, a DMA write faults -EFAULT") {
        Ctx b(node(1));
        const std::uint32_t qb = make_queue(b);
        std::uint32_t hb = 0;
        REQUIRE(prime_import(b.fd(), dbuf.get(), hb) == 0);
        std::uint64_t va = 0;
        REQUIRE(b.map(hb, 0, kSize, va, DRM_HPU_VM_READONLY) == 0);
        const auto out = b.host_buf(kSize);
        REQUIRE(b.run(qb, Cb().lin_dma(va, out.va, kSize)) == 1);
        CHECK(check_words(words(out.ptr), kSize / 8, 0x5eed) == kSize / 8);
        CHECK(b.run(qb, Cb().memset(0xdeaddeaddeaddeadULL, va, kSize)) == -EFAULT);
        CHECK(b.run(qb, Cb().write_value(va + kSize - 4, 1)) == -EFAULT);
        CHECK(b.run(qb, Cb().lin_dma(out.va, va, kHostPage)) == -EFAULT);
    }
    SECTION("imported into HPU B: B's mmap of it is refused with ENODEV") {
        Ctx b(node(1));
        std::uint32_t hb = 0;
        REQUIRE(prime_import(b.fd(), dbuf.get(), hb) == 0);
        drm_hpu_bo_mmap_offset o{};
        o.handle = hb;
        REQUIRE(xioctl(b.fd(), DRM_IOCTL_HPU_BO_MMAP_OFFSET, &o) == 0);
        const Mapping m(b.fd(), kSize, PROT_READ, o.offset);
        CHECK(m.err() == ENODEV);
    }
    SECTION("imported by another file of HPU A: a writable VM_BIND is refused with EINVAL") {
        Ctx a2(node(0));
        std::uint32_t h2 = 0;
        REQUIRE(prime_import(a2.fd(), dbuf.get(), h2) == 0);
        std::uint64_t va = 0;
        CHECK(a2.map(h2, 0, kSize, va) == EINVAL);
        va = 0;
        CHECK(a2.map(h2, 0, kSize, va, DRM_HPU_VM_READONLY) == 0);
    }
    SECTION("imported by another driver (vgem, a writable attachment): EACCES") {
        const Vgem vgem;
        std::uint32_t hv = 0;
        CHECK(prime_import(vgem.fd(), dbuf.get(), hv) == EACCES);
    }
    SECTION("the dma-buf is a read-only file even when exported with DRM_RDWR") {
        const int fl = ::fcntl(dbuf.get(), F_GETFL); // NOLINT(cppcoreguidelines-pro-type-vararg)
        REQUIRE(fl >= 0);
        CHECK((static_cast<unsigned>(fl) & O_ACCMODE) == O_RDONLY);
    }
    CHECK(file.first_changed_word() == kSize / 8);
}
