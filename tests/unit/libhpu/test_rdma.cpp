// SPDX-License-Identifier: MIT
// <hpu/hpu_rdma.h>: the ib_device of an HPU found by PCI address in a sysfs
// tree made on disk, and hpu_rdma_reg_buffer() handing libibverbs the
// exported dma-buf (ibv_reg_dmabuf_mr is replaced by this file: the test
// does not link libibverbs). The guest test tests/vm/rdma/hbm-rdma.c runs
// both against the real stack.
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "hpu/hpu_rdma.h"
#include "fixture.h"

namespace {

namespace fs = std::filesystem;

struct RegCall {
    int calls = 0;
    ibv_pd *pd = nullptr;
    std::uint64_t offset = 0;
    std::size_t length = 0;
    std::uint64_t iova = 0;
    int fd = -1;
    int access = 0;
    int fail = 0; // errno to fail with, 0: succeed
};

RegCall g_reg;              // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)
ibv_mr g_mr{};              // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

// A directory tree shaped like sysfs: /class/infiniband/NAME/device links
// to the device's parent directory under /devices.
class FakeSysfs {
public:
    FakeSysfs()
    {
        std::array<char, 32> tmpl{};
        std::strcpy(tmpl.data(), "/tmp/hpu-rdma-XXXXXX");
        REQUIRE(mkdtemp(tmpl.data()) != nullptr);
        root_ = tmpl.data();
    }
    FakeSysfs(const FakeSysfs &) = delete;
    FakeSysfs &operator=(const FakeSysfs &) = delete;
    FakeSysfs(FakeSysfs &&) = delete;
    FakeSysfs &operator=(FakeSysfs &&) = delete;
    ~FakeSysfs()
    {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }

    // An ib_device NAME whose parent is devices/PARENT_PATH.
    ibv_device add(const std::string &name, const std::string &parent_path)
    {
        const fs::path dev = root_ / "devices" / parent_path;
        const fs::path cls = root_ / "class" / name;
        fs::create_directories(dev / "infiniband" / name);
        fs::create_directories(cls);
        fs::create_directory_symlink(dev, cls / "device");
        ibv_device d{};
        std::strncpy(d.name, name.c_str(), sizeof(d.name) - 1);
        std::strncpy(d.ibdev_path, cls.c_str(), sizeof(d.ibdev_path) - 1);
        return d;
    }

private:
    fs::path root_;
};

} // namespace

extern "C" ibv_mr *ibv_reg_dmabuf_mr(ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
                                     int fd, int access)
{
    ++g_reg.calls;
    g_reg.pd = pd;
    g_reg.offset = offset;
    g_reg.length = length;
    g_reg.iova = iova;
    g_reg.fd = fd;
    g_reg.access = access;
    if (g_reg.fail) {
        errno = g_reg.fail;
        return nullptr;
    }
    return &g_mr;
}

TEST_CASE("hpu_rdma_find_device matches the ib_device whose auxiliary parent is the HPU's PCI function",
          "[libhpu][rdma]")
{
    hpu::test::Fixture fx; // HPU 0 open; HPU 1 is another function
    hpu_device_info info{};
    info.size = sizeof(info);
    REQUIRE(hpu_device_get_info(fx.dev, &info) == 0);
    const std::string bdf = info.pci_addr;
    REQUIRE(bdf.size() == 12);
    std::string sibling = bdf;
    sibling.back() = '1'; // function 1 of the same slot
    FakeSysfs sys;
    ibv_device rxe = sys.add("rxe0", "pci0000:00/0000:00:02.0/virtio0/net/eth0");
    ibv_device other = sys.add("hpu_0", "pci0000:00/" + sibling + "/hpu.rdma.1");
    ibv_device mine = sys.add("hpu_1", "pci0000:00/" + bdf + "/hpu.rdma.0");
    ibv_device not_aux = sys.add("mlx5_0", "pci0000:00/" + bdf);
    ibv_device broken{};
    std::strcpy(broken.ibdev_path, "/nonexistent/class/infiniband/x");

    SECTION("found among others, in any order")
    {
        std::array<ibv_device *, 6> list{&broken, &rxe, &other, &not_aux, &mine, nullptr};
        CHECK(hpu_rdma_find_device(list.data(), fx.dev) == &mine);
    }
    SECTION("absent: ENODEV")
    {
        std::array<ibv_device *, 5> list{&rxe, &other, &not_aux, &broken, nullptr};
        errno = 0;
        CHECK(hpu_rdma_find_device(list.data(), fx.dev) == nullptr);
        CHECK(errno == ENODEV);
        errno = 0;
        CHECK(hpu_rdma_find_device(nullptr, fx.dev) == nullptr);
        CHECK(errno == ENODEV);
    }
    SECTION("no device: the library's error")
    {
        std::array<ibv_device *, 2> list{&mine, nullptr};
        errno = 0;
        CHECK(hpu_rdma_find_device(list.data(), nullptr) == nullptr);
        CHECK(errno == EINVAL);
    }
}

TEST_CASE("hpu_rdma_reg_buffer registers the exported dma-buf and closes its fd", "[libhpu][rdma]")
{
    hpu::test::Fixture fx;
    g_reg = RegCall{};
    ibv_pd pd{};
    hpu_buffer_t *b = nullptr;
    REQUIRE(hpu_buffer_create(fx.dev, 4ULL << 20, HPU_MEM_DEVICE, &b) == 0);
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;

    SECTION("the range, address and rights pass through")
    {
        ibv_mr *mr = hpu_rdma_reg_buffer(&pd, b, 4096, 1U << 20, 0x7000, access);
        CHECK(mr == &g_mr);
        CHECK(g_reg.calls == 1);
        CHECK(g_reg.pd == &pd);
        CHECK(g_reg.offset == 4096);
        CHECK(g_reg.length == 1U << 20);
        CHECK(g_reg.iova == 0x7000);
        CHECK(g_reg.access == access);
        CHECK(fx.m.aux_fds.count(g_reg.fd) == 1); // the dma-buf of this buffer
        CHECK(fx.m.close(g_reg.fd) == 0);
    }
    SECTION("the whole buffer, up to its last byte")
    {
        CHECK(hpu_rdma_reg_buffer(&pd, b, 0, 4U << 20, 0, access) == &g_mr);
        CHECK(fx.m.close(g_reg.fd) == 0);
    }
    SECTION("bad arguments: EINVAL before any export")
    {
        const auto refused = [&](ibv_pd *p, hpu_buffer_t *buf, std::uint64_t off, std::size_t len) {
            errno = 0;
            const bool r = hpu_rdma_reg_buffer(p, buf, off, len, 0, access) == nullptr && errno == EINVAL;
            return r;
        };
        CHECK(refused(nullptr, b, 0, 4096));
        CHECK(refused(&pd, nullptr, 0, 4096));
        CHECK(refused(&pd, b, 0, 0));
        CHECK(refused(&pd, b, 4U << 20, 1));
        CHECK(refused(&pd, b, (4U << 20) - 4096, 8192));
        CHECK(refused(&pd, b, UINT64_MAX, 2));
        CHECK(refused(&pd, b, 4096, SIZE_MAX));
        CHECK(g_reg.calls == 0);
        CHECK(fx.m.aux_fds.empty());
    }
    SECTION("a user-pointer buffer registers through its dma-buf like any other")
    {
        std::array<std::uint8_t, 8192> mem{};
        hpu_buffer_t *u = nullptr;
        REQUIRE(hpu_buffer_from_user(fx.dev, mem.data(), mem.size(), 0, &u) == 0);
        CHECK(hpu_rdma_reg_buffer(&pd, u, 0, 4096, 0, access) == &g_mr);
        CHECK(g_reg.calls == 1);
        CHECK(fx.m.close(g_reg.fd) == 0);
        CHECK(hpu_buffer_destroy(u) == 0);
    }
    SECTION("libibverbs' error reaches the caller in errno")
    {
        g_reg.fail = EACCES;
        errno = 0;
        CHECK(hpu_rdma_reg_buffer(&pd, b, 0, 4096, 0, access | IBV_ACCESS_REMOTE_WRITE) == nullptr);
        CHECK(errno == EACCES); // not the close's EBADF of the mock's fd number
        CHECK(g_reg.calls == 1);
        CHECK(fx.m.close(g_reg.fd) == 0);
    }
    CHECK(hpu_buffer_destroy(b) == 0);
}
