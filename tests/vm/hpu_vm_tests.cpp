// SPDX-License-Identifier: MIT
// hpu-vm-tests: integration tests of hpu.ko, libhpu and hpu-smi, run inside
// a guest booted with emulated HPUs and the driver loaded.
//
// Environment:
//   HPU_EXPECT  the devices QEMU was given, in PCI address order, separated
//               by ';', each "serial:hbm_bytes:nic_ports[:uuid]", for
//               example "SER-A:2147483648:10;SER-B:4294967296:4". Required.
//   HPU_SMI     path of the hpu-smi binary (default: the one built with
//               this program).
//
// Raw ioctl tests talk to /dev/accel/accelN directly, without libhpu, and
// check errno exactly.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "drm/hpu_accel.h"
#include "hpu/hpu.hpp"
#include "vm_util.h"

using vmt::Fd;

namespace {

struct Expected {
    std::string serial;
    std::uint64_t hbm_bytes = 0;
    unsigned int nic_ports = 0;
    std::string uuid; // empty: not given
};

// Parses HPU_EXPECT (see above); std::nullopt when malformed.
std::optional<std::vector<Expected>> parse_expect(std::string_view spec)
{
    std::vector<Expected> out;
    while (!spec.empty()) {
        const auto semi = spec.find(';');
        std::string_view item = spec.substr(0, semi);
        spec = semi == std::string_view::npos ? std::string_view{} : spec.substr(semi + 1);
        if (item.empty())
            continue;
        // An optional UUID (36 characters with '-') ends the item.
        std::string uuid;
        if (const auto cu = item.rfind(':');
            cu != std::string_view::npos && item.size() - cu - 1 == 36 && item[item.size() - 13] == '-') {
            uuid = std::string(item.substr(cu + 1));
            item = item.substr(0, cu);
        }
        // The serial may itself contain ':'; the numbers are the last two fields.
        const auto c2 = item.rfind(':');
        if (c2 == std::string_view::npos || c2 == 0)
            return std::nullopt;
        const auto c1 = item.rfind(':', c2 - 1);
        if (c1 == std::string_view::npos)
            return std::nullopt;
        Expected e;
        e.uuid = uuid;
        e.serial = std::string(item.substr(0, c1));
        const std::string hbm(item.substr(c1 + 1, c2 - c1 - 1));
        const std::string nic(item.substr(c2 + 1));
        char *end = nullptr;
        e.hbm_bytes = std::strtoull(hbm.c_str(), &end, 10);
        if (hbm.empty() || *end != '\0')
            return std::nullopt;
        const unsigned long n = std::strtoul(nic.c_str(), &end, 10);
        if (nic.empty() || *end != '\0' || n > 255)
            return std::nullopt;
        e.nic_ports = static_cast<unsigned int>(n);
        out.push_back(std::move(e));
    }
    return out;
}

std::vector<Expected> expected()
{
    const char *env = std::getenv("HPU_EXPECT"); // NOLINT(concurrency-mt-unsafe)
    if (env == nullptr)
        FAIL("HPU_EXPECT is not set (serial:hbm_bytes:nic_ports;... in PCI order)");
    auto parsed = parse_expect(env);
    if (!parsed)
        FAIL("HPU_EXPECT is malformed: " << env);
    return *parsed;
}

// The HPUs in PCI address order (the order of HPU_EXPECT).
std::vector<hpu::DeviceEntry> devices_by_pci()
{
    auto list = hpu::list_devices();
    std::sort(list.begin(), list.end(),
              [](const hpu::DeviceEntry &a, const hpu::DeviceEntry &b) { return a.pci_addr < b.pci_addr; });
    return list;
}

// Issues DRM_IOCTL_HPU_INFO; returns 0 or the errno.
int raw_info(int fd, drm_hpu_info &req)
{
    int r = 0;
    do {
        r = ::ioctl(fd, DRM_IOCTL_HPU_INFO, &req); // NOLINT(cppcoreguidelines-pro-type-vararg)
    } while (r < 0 && (errno == EINTR || errno == EAGAIN));
    return r < 0 ? errno : 0;
}

drm_hpu_info make_req(const void *buf, std::uint32_t size)
{
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_DEVICE;
    req.ptr = reinterpret_cast<std::uintptr_t>(buf); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = size;
    return req;
}

std::string first_node()
{
    const auto list = devices_by_pci();
    if (list.empty())
        FAIL("no HPU device found");
    return list.front().node;
}

// Two mapped pages; the caller may protect or unmap the second.
class Pages {
public:
    Pages()
        : size_(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))),
          base_(::mmap(nullptr, 2 * size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
    {
        REQUIRE(base_ != MAP_FAILED);
    }
    Pages(const Pages &) = delete;
    Pages &operator=(const Pages &) = delete;
    Pages(Pages &&) = delete;
    Pages &operator=(Pages &&) = delete;
    ~Pages() { ::munmap(base_, 2 * size_); }
    [[nodiscard]] unsigned char *first() const { return static_cast<unsigned char *>(base_); }
    [[nodiscard]] unsigned char *second() const { return first() + size_; } // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
    [[nodiscard]] std::size_t page() const { return size_; }

private:
    std::size_t size_;
    void *base_;
};

std::string run_command(const std::string &cmd, int &status)
{
    std::string out;
    FILE *p = ::popen(cmd.c_str(), "r"); // NOLINT(cert-env33-c)
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
        out.append(buf.data(), n);
    status = ::pclose(p);
    return out;
}

std::string hpu_smi()
{
    const char *env = std::getenv("HPU_SMI"); // NOLINT(concurrency-mt-unsafe)
    return env != nullptr ? env : HPU_SMI_DEFAULT;
}

constexpr std::uint32_t kAnswerSize = sizeof(drm_hpu_info_device);

} // namespace

TEST_CASE("HPU_EXPECT parsing", "[self]")
{
    const auto v = parse_expect("SER-A:2147483648:10;S:ER:B:4294967296:4;");
    REQUIRE(v);
    REQUIRE(v->size() == 2);
    CHECK(v->at(0).serial == "SER-A");
    CHECK(v->at(0).hbm_bytes == 2147483648ULL);
    CHECK(v->at(0).nic_ports == 10);
    CHECK(v->at(1).serial == "S:ER:B");
    CHECK(v->at(1).nic_ports == 4);
    CHECK_FALSE(parse_expect("SER-A:2G:10"));
    CHECK_FALSE(parse_expect("SER-A:10"));
    CHECK_FALSE(parse_expect("SER-A:1:256"));
}

TEST_CASE("the number of HPUs matches HPU_EXPECT", "[info]")
{
    const auto exp = expected();
    CHECK(hpu::list_devices().size() == exp.size());
    CHECK(hpu::device_count() == exp.size());
}

TEST_CASE("INFO reports what QEMU was given", "[info]")
{
    const auto exp = expected();
    const auto list = devices_by_pci();
    REQUIRE(list.size() == exp.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
        const auto &entry = list[i];
        INFO("device " << entry.node << " at " << entry.pci_addr);
        const auto by_pci = hpu::Device::open_pci(entry.pci_addr);
        const auto info = by_pci.info();
        CHECK(info.hbm_size == exp[i].hbm_bytes);
        CHECK(std::string(static_cast<const char *>(info.serial)) == exp[i].serial);
        CHECK(info.num_nic == exp[i].nic_ports);
        if (!exp[i].uuid.empty()) {
            std::string hex;
            for (std::size_t b = 0; b < sizeof(info.uuid); ++b) {
                std::array<char, 3> two{};
                std::snprintf(two.data(), two.size(), "%02x", info.uuid[b]);
                hex += two.data();
                if (b == 3 || b == 5 || b == 7 || b == 9)
                    hex += '-';
            }
            CHECK(hex == exp[i].uuid);
        }
        CHECK(info.chip_id == HPU_CHIP_H1);
        CHECK(std::string(static_cast<const char *>(info.name)) == "H1");
        CHECK(info.num_dma == 8);
        CHECK(info.num_tpc == 8);
        CHECK(info.num_mme == 2);
        CHECK(info.index == entry.index);
        CHECK(std::string(static_cast<const char *>(info.pci_addr)) == entry.pci_addr);

        const auto by_index = hpu::Device::open(entry.index);
        const auto again = by_index.info();
        CHECK(std::memcmp(&again, &info, sizeof(info)) == 0);
    }
}

TEST_CASE("libhpu reports missing devices", "[info]")
{
    const auto list = hpu::list_devices();
    unsigned int unused = 0;
    for (const auto &e : list)
        unused = std::max(unused, e.index + 1);
    hpu_device_t *dev = nullptr;
    CHECK(hpu_open_by_index(unused, &dev) == -ENODEV);
    CHECK(hpu_open_by_pci("ffff:ff:1f.7", &dev) == -ENODEV);
    CHECK(dev == nullptr);
}

TEST_CASE("raw INFO ioctl: malformed requests are rejected", "[uapi]")
{
    const Fd fd(first_node());
    REQUIRE(fd.get() >= 0);
    std::array<unsigned char, kAnswerSize> buf{};

    SECTION("valid request")
    {
        auto req = make_req(buf.data(), kAnswerSize);
        CHECK(raw_info(fd.get(), req) == 0);
        CHECK(req.size == kAnswerSize);
    }
    SECTION("unknown op: EINVAL")
    {
        auto req = make_req(buf.data(), kAnswerSize);
        req.op = 0x7fff;
        CHECK(raw_info(fd.get(), req) == EINVAL);
    }
    SECTION("non-zero flags: EINVAL")
    {
        auto req = make_req(buf.data(), kAnswerSize);
        req.flags = 1;
        CHECK(raw_info(fd.get(), req) == EINVAL);
        req.flags = 0x80000000U;
        CHECK(raw_info(fd.get(), req) == EINVAL);
    }
    SECTION("non-zero pad: EINVAL")
    {
        auto req = make_req(buf.data(), kAnswerSize);
        req.pad = 1;
        CHECK(raw_info(fd.get(), req) == EINVAL);
    }
    SECTION("pointer into an unmapped page: EFAULT")
    {
        const Pages pages;
        REQUIRE(::munmap(pages.second(), pages.page()) == 0);
        auto req = make_req(pages.second(), kAnswerSize);
        CHECK(raw_info(fd.get(), req) == EFAULT);
        // Pages' destructor unmaps both pages; unmapping a hole is harmless.
    }
    SECTION("answer buffer straddling into a PROT_NONE page: EFAULT")
    {
        const Pages pages;
        REQUIRE(::mprotect(pages.second(), pages.page(), PROT_NONE) == 0);
        auto req = make_req(pages.second() - 16, kAnswerSize); // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        CHECK(raw_info(fd.get(), req) == EFAULT);
    }
}

TEST_CASE("raw INFO ioctl: size handling", "[uapi]")
{
    const Fd fd(first_node());
    REQUIRE(fd.get() >= 0);

    std::array<unsigned char, kAnswerSize> full{};
    auto ref = make_req(full.data(), kAnswerSize);
    REQUIRE(raw_info(fd.get(), ref) == 0);
    REQUIRE(ref.size == kAnswerSize);

    SECTION("size 0 reports the size and writes nothing")
    {
        std::array<unsigned char, kAnswerSize> buf{};
        buf.fill(0xFF);
        auto req = make_req(buf.data(), 0);
        CHECK(raw_info(fd.get(), req) == 0);
        CHECK(req.size == kAnswerSize);
        CHECK(std::all_of(buf.begin(), buf.end(), [](unsigned char c) { return c == 0xFF; }));

        auto null_req = make_req(nullptr, 0);
        CHECK(raw_info(fd.get(), null_req) == 0);
        CHECK(null_req.size == kAnswerSize);
    }
    SECTION("a short buffer gets an exact prefix")
    {
        for (const std::uint32_t n : {1U, 4U, 16U, kAnswerSize - 1}) {
            INFO("size " << n);
            std::array<unsigned char, kAnswerSize> buf{};
            buf.fill(0xFF);
            auto req = make_req(buf.data(), n);
            CHECK(raw_info(fd.get(), req) == 0);
            CHECK(req.size == kAnswerSize);
            CHECK(std::equal(buf.begin(), buf.begin() + n, full.begin()));
            CHECK(std::all_of(buf.begin() + n, buf.end(), [](unsigned char c) { return c == 0xFF; }));
        }
    }
    SECTION("a larger buffer gets the whole answer and nothing beyond")
    {
        std::array<unsigned char, kAnswerSize + 64> buf{};
        buf.fill(0xFF);
        auto req = make_req(buf.data(), static_cast<std::uint32_t>(buf.size()));
        CHECK(raw_info(fd.get(), req) == 0);
        CHECK(req.size == kAnswerSize);
        CHECK(std::equal(full.begin(), full.end(), buf.begin()));
        CHECK(std::all_of(buf.begin() + kAnswerSize, buf.end(), [](unsigned char c) { return c == 0xFF; }));
    }
    SECTION("the answer's own padding is zero")
    {
        drm_hpu_info_device d{};
        std::memcpy(&d, full.data(), sizeof(d));
        CHECK(d.pad == 0);
        CHECK(d.chip_id == DRM_HPU_CHIP_H1);
    }
}

TEST_CASE("a device opens twice and closes cleanly", "[uapi]")
{
    const std::string node = first_node();
    Fd a(node);
    Fd b(node);
    REQUIRE(a.get() >= 0);
    REQUIRE(b.get() >= 0);
    std::array<unsigned char, kAnswerSize> buf{};
    auto req = make_req(buf.data(), kAnswerSize);
    CHECK(raw_info(a.get(), req) == 0);
    CHECK(a.close() == 0);
    req = make_req(buf.data(), kAnswerSize);
    CHECK(raw_info(b.get(), req) == 0);
    CHECK(b.close() == 0);
}

TEST_CASE("hpu-smi -L lists every device", "[smi]")
{
    const auto exp = expected();
    int status = -1;
    const std::string out = run_command(hpu_smi() + " -L", status);
    INFO("hpu-smi -L output:\n" << out);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n')) == exp.size());
    for (const auto &e : exp)
        CHECK(out.find("SN " + e.serial + ",") != std::string::npos);
}

TEST_CASE("hpu-smi table shows every serial and HBM size", "[smi]")
{
    const auto exp = expected();
    int status = -1;
    const std::string out = run_command(hpu_smi(), status);
    INFO("hpu-smi output:\n" << out);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    std::istringstream lines(out);
    std::string line;
    std::size_t rows = 0;
    while (std::getline(lines, line)) {
        for (const auto &e : exp) {
            if (line.find(" " + e.serial + " ") != std::string::npos) {
                ++rows;
                CHECK(line.find(" " + std::to_string(e.hbm_bytes >> 20U) + " ") != std::string::npos);
            }
        }
    }
    CHECK(rows == exp.size());
}
