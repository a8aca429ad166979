// SPDX-License-Identifier: MIT
// libhpu's C ABI against a mocked kernel (tests/unit/libhpu/mock_os.h).
//
// Copyright (c) 2026 The hpu authors
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include <fcntl.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "discovery.h"
#include "fixture.h"
#include "hpu/hpu.h"
#include "mock_os.h"

using hpu::test::make_answer;
using hpu::test::MockOs;
using hpu::test::ScopedMock;

namespace {

// Three HPUs (listed out of order), one accel device of another driver, one
// HPU recognised by its PCI ids only, and a non-accelN entry.
void populate(MockOs &m)
{
    m.add_hpu(2, "0000:00:05.0", make_answer("SER-C", 1ULL << 33, 5));
    m.add_hpu(0, "0000:00:03.0", make_answer("SER-A", 1ULL << 31, 3));
    m.add_accel(1, "0000:00:04.0", "ivpu", 0x8086, 0x7d1d);
    m.add_accel(7, "0000:00:0a.0", "", 0x1234, 0x4850);
    m.nodes["/dev/accel/accel7"] = make_answer("SER-D", 1ULL << 30, 10);
    m.add_accel(3, "0000:00:06.0", "", 0x1234, 0x1111); // same vendor, other device
    m.dirs["/sys/class/accel"].push_back("accel_ctl");
}

using Dev0 = hpu::test::OpenDevice<populate, 0>; // device 0 open
using Dev2 = hpu::test::OpenDevice<populate, 2>; // device 2 open

struct List {
    hpu_device_list_t *l = nullptr;
    List() = default;
    List(const List &) = delete;
    List &operator=(const List &) = delete;
    List(List &&) = delete;
    List &operator=(List &&) = delete;
    ~List() { hpu_device_list_free(l); }
};

} // namespace

TEST_CASE("version", "[libhpu]")
{
    CHECK(hpu_get_version() == HPU_API_VERSION);
    CHECK(HPU_API_VERSION == 0x010b00U);
    CHECK(HPU_VERSION_MAJOR(hpu_get_version()) == 1);
    CHECK(HPU_VERSION_MINOR(HPU_MAKE_VERSION(1, 2, 3)) == 2);
    CHECK(HPU_VERSION_PATCH(HPU_MAKE_VERSION(1, 2, 3)) == 3);
}

TEST_CASE("discovery lists only HPUs, ordered by index", "[libhpu][discovery]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);

    CHECK(hpu_device_count() == 3);
    List list;
    REQUIRE(hpu_device_list_get(&list.l) == 0);
    REQUIRE(hpu_device_list_size(list.l) == 3);

    const hpu_device_desc *d0 = hpu_device_list_at(list.l, 0);
    const hpu_device_desc *d1 = hpu_device_list_at(list.l, 1);
    const hpu_device_desc *d2 = hpu_device_list_at(list.l, 2);
    REQUIRE(d0 != nullptr);
    REQUIRE(d1 != nullptr);
    REQUIRE(d2 != nullptr);
    CHECK(d0->index == 0);
    CHECK(std::string(d0->pci_addr) == "0000:00:03.0");
    CHECK(std::string(d0->node) == "/dev/accel/accel0");
    CHECK(d1->index == 2);
    CHECK(std::string(d1->pci_addr) == "0000:00:05.0");
    CHECK(std::string(d1->node) == "/dev/accel/accel2");
    CHECK(d2->index == 7);
    CHECK(std::string(d2->pci_addr) == "0000:00:0a.0");
    CHECK(hpu_device_list_at(list.l, 3) == nullptr);
    CHECK(m.open_calls == 0); // discovery reads sysfs only
}

TEST_CASE("discovery without /sys/class/accel finds nothing", "[libhpu][discovery]")
{
    MockOs m;
    const ScopedMock scoped(m);
    CHECK(hpu_device_count() == 0);
    List list;
    REQUIRE(hpu_device_list_get(&list.l) == 0);
    CHECK(hpu_device_list_size(list.l) == 0);
    hpu_device_t *dev = nullptr;
    CHECK(hpu_open_by_index(0, &dev) == -ENODEV);
    CHECK(dev == nullptr);
}

TEST_CASE("discovery propagates errors", "[libhpu][discovery]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);

    SECTION("listing the class directory")
    {
        m.list_fail["/sys/class/accel"] = -EACCES;
        CHECK(hpu_device_count() == -EACCES);
        static char sentinel = 0;
        auto *l = reinterpret_cast<hpu_device_list_t *>(&sentinel); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        CHECK(hpu_device_list_get(&l) == -EACCES);
        CHECK(l == nullptr);
    }
    SECTION("reading the driver link")
    {
        m.link_fail["/sys/class/accel/accel2/device/driver"] = -EIO;
        CHECK(hpu_device_count() == -EIO);
    }
    SECTION("reading the PCI ids of a device without a driver link")
    {
        m.read_fail["/sys/class/accel/accel7/device/vendor"] = -EACCES;
        CHECK(hpu_device_count() == -EACCES);
    }
    SECTION("reading the device link")
    {
        m.link_fail["/sys/class/accel/accel0/device"] = -ENOMEM;
        CHECK(hpu_device_count() == -ENOMEM);
    }
    SECTION("a device that vanished while listing is skipped")
    {
        m.links.erase("/sys/class/accel/accel0/device");
        CHECK(hpu_device_count() == 2);
    }
    SECTION("malformed PCI ids mean not an HPU")
    {
        m.files["/sys/class/accel/accel7/device/vendor"] = "garbage\n";
        CHECK(hpu_device_count() == 2);
    }
}

TEST_CASE("PCI address and accel name parsing", "[libhpu][discovery]")
{
    using hpu::detail::normalize_pci_addr;
    using hpu::detail::parse_accel_name;
    CHECK(normalize_pci_addr("0000:00:03.0").value() == "0000:00:03.0");
    CHECK(normalize_pci_addr("0000:1A:1f.7").value() == "0000:1a:1f.7");
    CHECK(normalize_pci_addr("01:00.0").value() == "0000:01:00.0");
    CHECK(normalize_pci_addr("10000:00:00.0").value() == "10000:00:00.0");
    CHECK_FALSE(normalize_pci_addr(""));
    CHECK_FALSE(normalize_pci_addr("zz"));
    CHECK_FALSE(normalize_pci_addr("0000:00:20.0")); // device > 0x1f
    CHECK_FALSE(normalize_pci_addr("0000:00:03.8")); // function > 7
    CHECK_FALSE(normalize_pci_addr("0000:100:03.0"));
    CHECK_FALSE(normalize_pci_addr("0000:00:03.0x"));
    CHECK_FALSE(normalize_pci_addr("platform-device"));
    CHECK(parse_accel_name("accel0").value() == 0);
    CHECK(parse_accel_name("accel12").value() == 12);
    CHECK_FALSE(parse_accel_name("accel"));
    CHECK_FALSE(parse_accel_name("accel-1"));
    CHECK_FALSE(parse_accel_name("accel1a"));
    CHECK_FALSE(parse_accel_name("card0"));
    CHECK_FALSE(parse_accel_name("accel99999999999"));
}

TEST_CASE("open by index", "[libhpu][open]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);

    hpu_device_t *dev = nullptr;
    REQUIRE(hpu_open_by_index(2, &dev) == 0);
    REQUIRE(dev != nullptr);
    const int fd = hpu_device_get_fd(dev);
    REQUIRE(m.open_fds.count(fd) == 1);
    CHECK(m.open_fds[fd] == "/dev/accel/accel2");
    CHECK((m.last_open_flags & O_ACCMODE) == O_RDWR);
    CHECK(hpu_close(dev) == 0);
    CHECK(m.close_calls == 1);
    CHECK(m.closed_fds == std::vector<int>{fd});
    CHECK(m.open_fds.empty());

    SECTION("no such index")
    {
        dev = nullptr;
        CHECK(hpu_open_by_index(5, &dev) == -ENODEV);
        CHECK(dev == nullptr);
    }
    SECTION("an accel device of another driver is not an HPU")
    {
        CHECK(hpu_open_by_index(1, &dev) == -ENODEV);
        CHECK(hpu_open_by_index(3, &dev) == -ENODEV);
        CHECK(m.open_calls == 1);
    }
    SECTION("open(2) errors propagate and leave no handle")
    {
        m.open_fail["/dev/accel/accel0"] = -EACCES;
        CHECK(hpu_open_by_index(0, &dev) == -EACCES);
        CHECK(dev == nullptr);
        CHECK(m.close_calls == 1);
    }
    SECTION("a missing node (no devtmpfs) propagates ENOENT")
    {
        m.nodes.erase("/dev/accel/accel0");
        CHECK(hpu_open_by_index(0, &dev) == -ENOENT);
    }
}

TEST_CASE("open by PCI address", "[libhpu][open]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);
    hpu_device_t *dev = nullptr;

    const char *addr = GENERATE("0000:00:0a.0", "0000:00:0A.0", "00:0a.0");
    REQUIRE(hpu_open_by_pci(addr, &dev) == 0);
    CHECK(m.open_fds.at(hpu_device_get_fd(dev)) == "/dev/accel/accel7");
    CHECK(hpu_close(dev) == 0);

    dev = nullptr;
    CHECK(hpu_open_by_pci("0000:00:09.0", &dev) == -ENODEV);
    CHECK(hpu_open_by_pci("0000:00:04.0", &dev) == -ENODEV); // ivpu
    CHECK(hpu_open_by_pci("nonsense", &dev) == -EINVAL);
    CHECK(hpu_open_by_pci("0000:00:03.9", &dev) == -EINVAL);
    CHECK(dev == nullptr);
}

TEST_CASE_METHOD(Dev2, "INFO ioctl marshalling", "[libhpu][info]")
{

    hpu_device_info info{};
    info.size = sizeof(info);
    REQUIRE(hpu_device_get_info(dev, &info) == 0);

    // What the kernel received.
    CHECK(m.ioctl_calls == 1);
    CHECK(m.last_request == DRM_IOCTL_HPU_INFO);
    CHECK(m.last_info.op == DRM_HPU_INFO_DEVICE);
    CHECK(m.last_info.flags == 0);
    CHECK(m.last_info.pad == 0);
    CHECK(m.last_info.size == sizeof(drm_hpu_info_device));
    CHECK(m.last_info.ptr != 0);

    // What the caller got.
    CHECK(info.size == sizeof(info));
    CHECK(info.chip_id == HPU_CHIP_H1);
    CHECK(info.revision == 0x0100);
    CHECK(info.spec_version == 1);
    CHECK(info.hbm_size == (1ULL << 33));
    CHECK(info.index == 2);
    CHECK(info.pci_domain == 0);
    CHECK(info.pci_bus == 5);
    CHECK(info.pci_dev == 0);
    CHECK(info.pci_func == 0);
    CHECK(info.hbm_stacks == 4);
    CHECK(info.num_dma == 8);
    CHECK(info.num_tpc == 8);
    CHECK(info.num_mme == 2);
    CHECK(info.num_nic == 10);
    CHECK(info.driver_major == 0);
    CHECK(info.driver_minor == 1);
    CHECK(info.driver_patch == 2);
    CHECK(info.reserved0 == 0);
    CHECK(info.msix_vectors == 16);
    CHECK(info.reset_count == 3);
    CHECK(info.class_engines[HPU_ENGINE_CLASS_DMA] == 8);
    CHECK(info.class_engines[HPU_ENGINE_CLASS_TPC] == 1);
    CHECK(info.class_engines[HPU_ENGINE_CLASS_MME] == 2);
    for (unsigned int c = 3; c < HPU_MAX_ENGINE_CLASSES; ++c)
        CHECK(info.class_engines[c] == 0); // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    CHECK(std::string(info.serial) == "SER-C");
    CHECK(std::string(info.name) == "H1");
    CHECK(std::string(info.pci_addr) == "0000:05:00.0"); // from the answer, not from sysfs
    for (unsigned int i = 0; i < HPU_UUID_SIZE; ++i)
        CHECK(info.uuid[i] == 0x15 + i); // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)

    CHECK(hpu_close(dev) == 0);
}

TEST_CASE_METHOD(Dev0, "INFO respects the caller's structure size", "[libhpu][info]")
{

    SECTION("an older, shorter structure: nothing written past it")
    {
        std::array<unsigned char, sizeof(hpu_device_info) + 16> buf{};
        buf.fill(0xAB);
        const uint32_t short_size = offsetof(hpu_device_info, index);
        std::memcpy(buf.data(), &short_size, sizeof(short_size));
        REQUIRE(hpu_device_get_info(dev, reinterpret_cast<hpu_device_info *>(buf.data())) == 0); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        hpu_device_info got{};
        std::memcpy(&got, buf.data(), short_size);
        CHECK(got.size == short_size);
        CHECK(got.chip_id == HPU_CHIP_H1);
        CHECK(got.hbm_size == (1ULL << 31));
        for (std::size_t i = short_size; i < buf.size(); ++i)
            CHECK(buf.at(i) == 0xAB);
    }
    SECTION("a newer, larger structure: filled up to ours, size says so")
    {
        std::array<unsigned char, sizeof(hpu_device_info) + 16> buf{};
        buf.fill(0xAB);
        const auto big = static_cast<uint32_t>(buf.size());
        std::memcpy(buf.data(), &big, sizeof(big));
        REQUIRE(hpu_device_get_info(dev, reinterpret_cast<hpu_device_info *>(buf.data())) == 0); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        uint32_t size = 0;
        std::memcpy(&size, buf.data(), sizeof(size));
        CHECK(size == sizeof(hpu_device_info));
        for (std::size_t i = sizeof(hpu_device_info); i < buf.size(); ++i)
            CHECK(buf.at(i) == 0xAB);
    }
    SECTION("a size too small for the size field is invalid")
    {
        hpu_device_info info{};
        info.size = 3;
        CHECK(hpu_device_get_info(dev, &info) == -EINVAL);
        CHECK(m.ioctl_calls == 0);
    }
    CHECK(hpu_close(dev) == 0);
}

TEST_CASE_METHOD(Dev0, "INFO errors", "[libhpu][info]")
{
    hpu_device_info info{};
    info.size = sizeof(info);

    SECTION("ioctl errno propagates")
    {
        const int err = GENERATE(-EFAULT, -EINVAL, -ENODEV, -EIO);
        m.ioctl_fail = err;
        CHECK(hpu_device_get_info(dev, &info) == err);
    }
    SECTION("a short answer from the kernel is a protocol error")
    {
        m.answer_size = 16;
        CHECK(hpu_device_get_info(dev, &info) == -EPROTO);
    }
    SECTION("a larger answer (newer kernel) is fine")
    {
        m.answer_size = sizeof(drm_hpu_info_device) + 32;
        CHECK(hpu_device_get_info(dev, &info) == 0);
        CHECK(std::string(info.serial) == "SER-A");
    }
    SECTION("a serial without NUL is terminated")
    {
        auto &answer = m.nodes["/dev/accel/accel0"];
        std::memset(static_cast<char *>(answer.serial), 'X', sizeof(answer.serial));
        REQUIRE(hpu_device_get_info(dev, &info) == 0);
        CHECK(std::string(info.serial) == std::string(sizeof(answer.serial), 'X'));
    }
    SECTION("an unknown chip is named unknown")
    {
        m.nodes["/dev/accel/accel0"].chip_id = 99;
        REQUIRE(hpu_device_get_info(dev, &info) == 0);
        CHECK(info.chip_id == 99);
        CHECK(std::string(info.name) == "unknown");
    }
    CHECK(hpu_close(dev) == 0);
}

TEST_CASE_METHOD(Dev0, "close reports errors and frees the handle", "[libhpu][open]")
{
    m.close_fail = -EIO;
    CHECK(hpu_close(dev) == -EIO); // the sanitizer build would see a leak otherwise
    CHECK(m.close_calls == 1);
}

TEST_CASE("C ABI argument checks", "[libhpu][abi]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);

    hpu_device_t *dev = nullptr;
    hpu_device_info info{};
    info.size = sizeof(info);
    CHECK(hpu_open_by_index(0, nullptr) == -EINVAL);
    CHECK(hpu_open_by_pci("0000:00:03.0", nullptr) == -EINVAL);
    CHECK(hpu_open_by_pci(nullptr, &dev) == -EINVAL);
    CHECK(hpu_device_get_info(nullptr, &info) == -EINVAL);
    CHECK(hpu_device_get_fd(nullptr) == -EINVAL);
    CHECK(hpu_device_list_get(nullptr) == -EINVAL);
    CHECK(hpu_device_list_size(nullptr) == 0);
    CHECK(hpu_device_list_at(nullptr, 0) == nullptr);
    CHECK(hpu_close(nullptr) == 0);
    hpu_device_list_free(nullptr);
    CHECK(m.open_calls == 0);

    REQUIRE(hpu_open_by_index(0, &dev) == 0);
    CHECK(hpu_device_get_info(dev, nullptr) == -EINVAL);
    CHECK(m.ioctl_calls == 0);
    CHECK(hpu_close(dev) == 0);
}

TEST_CASE("hpu_strerror", "[libhpu][abi]")
{
    CHECK(std::string(hpu_strerror(0)) == "Success");
    CHECK(std::string(hpu_strerror(-ENODEV)) == "No such HPU device");
    CHECK(std::string(hpu_strerror(ENODEV)) == "No such HPU device");
    CHECK(std::string(hpu_strerror(-EACCES)) == "Permission denied (no access to the HPU device node)");
    CHECK(std::string(hpu_strerror(-EINVAL)) == "Invalid argument");
    CHECK(std::string(hpu_strerror(-EPROTO)) == "Unexpected answer from the hpu driver (version mismatch?)");
    CHECK(std::string(hpu_strerror(-EAGAIN)) == "Resource temporarily unavailable");
    CHECK(std::string(hpu_strerror(-999999)) == "Unknown error");
    CHECK(hpu_strerror(-2147483647) != nullptr);
}

TEST_CASE("driver presence", "[libhpu][abi]")
{
    MockOs m;
    const ScopedMock scoped(m);
    CHECK(hpu_driver_loaded() == 0);
    m.dirs["/sys/module/hpu"] = {"refcnt", "version"};
    CHECK(hpu_driver_loaded() == 1);
    m.list_fail["/sys/module/hpu"] = -EACCES;
    CHECK(hpu_driver_loaded() == -EACCES);
}
