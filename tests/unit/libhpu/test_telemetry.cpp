// SPDX-License-Identifier: MIT
// libhpu 1.3 against the mocked kernel: telemetry and firmware (INFO), the
// PCIe link and hwmon directory (sysfs), the processes (fdinfo), opening
// from a discovery snapshot, and their C++ wrappers.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "drm/hpu_accel.h"
#include "fixture.h"
#include "hpu/hpu.h"
#include "hpu/hpu.hpp"
#include "mock_os.h"
#include "sample_telemetry.h"
#include "telemetry.h"

using hpu::test::make_answer;
using hpu::test::MockOs;
using hpu::test::ScopedMock;

namespace {

constexpr const char *kBdf0 = "0000:00:03.0";
constexpr const char *kBdf1 = "0000:00:04.0";

void populate(MockOs &m)
{
    m.add_hpu(0, kBdf0, make_answer("SER-A", 1ULL << 31, 3));
    m.add_hpu(1, kBdf1, make_answer("SER-B", 1ULL << 32, 4, 4));
    drm_hpu_info_telemetry &t = m.telemetry_answer;
    t.timestamp_ns = 123456789;
    hpu::test::fill_sample_telemetry(t);
    t.throttle = DRM_HPU_THROTTLE_POWER;
    t.alarms = DRM_HPU_ALARM_POWER_CAP;
    for (unsigned int i = 0; i < 8; ++i)
        t.engine_busy_ns[i] = 1000000ULL * i; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
    drm_hpu_info_firmware &f = m.firmware_answer;
    f.running_version = 0x010203;
    f.stored_version = 0x010200;
    f.min_version = 0x010000;
    f.state = DRM_HPU_FW_STATE_RUNNING;
    f.boot_source = DRM_HPU_FW_SOURCE_FLASH;
    f.boot_error = 0;
    f.boots = 2;
    std::strncpy(static_cast<char *>(f.running_build), "build-42", sizeof(f.running_build) - 1);
}

using Dev0 = hpu::test::OpenDevice<populate, 0>; // device 0 open
using Dev1 = hpu::test::OpenDevice<populate, 1>; // device 1 open

void add_link(MockOs &m, const std::string &bdf, const std::string &cs, const std::string &cw, const std::string &ms,
              const std::string &mw)
{
    const std::string d = "/sys/bus/pci/devices/" + bdf + "/";
    m.files[d + "current_link_speed"] = cs;
    m.files[d + "current_link_width"] = cw;
    m.files[d + "max_link_speed"] = ms;
    m.files[d + "max_link_width"] = mw;
}

std::string fdinfo(const std::string &pdev, unsigned int client, const std::string &hbm,
                   const std::vector<unsigned long long> &ns, const std::string &driver = "hpu")
{
    std::string s = "pos:\t0\nflags:\t02100002\nmnt_id:\t24\nino:\t5\ndrm-driver:\t" + driver +
                    "\ndrm-client-id:\t" + std::to_string(client) + "\ndrm-pdev:\t" + pdev + "\n";
    for (std::size_t i = 0; i < ns.size(); ++i)
        s += "drm-engine-dma" + std::to_string(i) + ":\t" + std::to_string(ns[i]) + " ns\n";
    if (!hbm.empty())
        s += "drm-total-hbm:\t" + hbm + "\ndrm-resident-hbm:\t" + hbm + "\n";
    return s;
}

struct Procs {
    hpu_process_list_t *l = nullptr;
    Procs() = default;
    Procs(const Procs &) = delete;
    Procs &operator=(const Procs &) = delete;
    Procs(Procs &&) = delete;
    Procs &operator=(Procs &&) = delete;
    ~Procs() { hpu_process_list_free(l); }
};

} // namespace

TEST_CASE_METHOD(Dev0, "telemetry: every field of INFO TELEMETRY", "[libhpu][telemetry]")
{

    hpu_telemetry t{};
    t.size = sizeof(t);
    REQUIRE(hpu_device_get_telemetry(dev, &t) == 0);
    CHECK(m.last_info.op == DRM_HPU_INFO_TELEMETRY);
    CHECK(m.last_info.size == sizeof(drm_hpu_info_telemetry));
    CHECK(t.size == sizeof(t));
    CHECK(t.timestamp_ns == 123456789);
    CHECK(t.energy_uj == 987654321);
    CHECK(t.hbm_total == (1ULL << 31) - (2ULL << 20));
    CHECK(t.hbm_used == 6ULL << 20);
    CHECK(t.temp_die_mc == 45500);
    CHECK(t.temp_hbm_mc == 38300);
    CHECK(t.temp_board_mc == 31900);
    CHECK(t.temp_max_mc == 95000);
    CHECK(t.temp_crit_mc == 105000);
    CHECK(t.hbm_temp_max_mc == 85000);
    CHECK(t.power_mw == 72340);
    CHECK(t.power_cap_mw == 350000);
    CHECK(t.power_cap_max_mw == 400000);
    CHECK(t.volt_core_mv == 850);
    CHECK(t.volt_hbm_mv == 1200);
    CHECK(t.clk_core_mhz == 1500);
    CHECK(t.clk_core_max_mhz == 1800);
    CHECK(t.clk_hbm_mhz == 1600);
    CHECK(t.throttle == HPU_CLK_THROTTLE_POWER);
    CHECK(t.alarms == HPU_OVER_POWER_CAP);
    CHECK(t.num_engines == 8);
    CHECK(t.util_window_ms == 1000);
    CHECK(t.engine_util[7] == 7000);
    CHECK(t.engine_busy_ns[3] == 3000000);
    CHECK(t.engine_util[8] == 0);
    CHECK(t.reserved0 == 0);

    SECTION("a smaller structure gets a prefix, nothing beyond")
    {
        std::vector<unsigned char> buf(sizeof(hpu_telemetry), 0xAB);
        auto *p = reinterpret_cast<hpu_telemetry *>(buf.data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        p->size = 24;
        REQUIRE(hpu_device_get_telemetry(dev, p) == 0);
        CHECK(p->size == 24);
        CHECK(p->num_engines == 8);
        CHECK(p->energy_uj == 987654321);
        CHECK(buf[24] == 0xAB);
    }
    SECTION("errors")
    {
        CHECK(hpu_device_get_telemetry(nullptr, &t) == -EINVAL);
        CHECK(hpu_device_get_telemetry(dev, nullptr) == -EINVAL);
        hpu_telemetry small{};
        small.size = 2;
        CHECK(hpu_device_get_telemetry(dev, &small) == -EINVAL);
        m.has_telemetry = false; // a driver before INFO TELEMETRY
        CHECK(hpu_device_get_telemetry(dev, &t) == -EINVAL);
        m.has_telemetry = true;
        m.answer_size = 16; // a shorter answer than this ABI's
        CHECK(hpu_device_get_telemetry(dev, &t) == -EPROTO);
        m.answer_size = -1;
        m.telemetry_answer.num_engines = 17; // impossible
        CHECK(hpu_device_get_telemetry(dev, &t) == -EPROTO);
        m.telemetry_answer.num_engines = 8;
        m.ioctl_fail = -ENODEV;
        CHECK(hpu_device_get_telemetry(dev, &t) == -ENODEV);
        CHECK(hpu_device_is_lost(dev) == 1);
        m.ioctl_fail = 0;
    }
    SECTION("utilisation is clamped at 100 %")
    {
        m.telemetry_answer.engine_util[0] = 20000;
        REQUIRE(hpu_device_get_telemetry(dev, &t) == 0);
        CHECK(t.engine_util[0] == 10000);
    }
    CHECK(hpu_close(dev) == 0);
}

TEST_CASE_METHOD(Dev1, "firmware info: every field of INFO FIRMWARE", "[libhpu][telemetry]")
{
    hpu_firmware_info f{};
    f.size = sizeof(f);
    REQUIRE(hpu_device_get_firmware_info(dev, &f) == 0);
    CHECK(m.last_info.op == DRM_HPU_INFO_FIRMWARE);
    CHECK(f.size == sizeof(f));
    CHECK(f.running_version == HPU_MAKE_FW_VERSION(1, 2, 3));
    CHECK(f.stored_version == HPU_MAKE_FW_VERSION(1, 2, 0));
    CHECK(f.min_version == HPU_MAKE_FW_VERSION(1, 0, 0));
    CHECK(f.state == HPU_FIRMWARE_RUNNING);
    CHECK(f.boot_source == HPU_FIRMWARE_FROM_FLASH);
    CHECK(f.boot_error == 0);
    CHECK(f.boots == 2);
    CHECK(std::string(static_cast<const char *>(f.running_build)) == "build-42");

    SECTION("a build string without NUL is cut at 31 characters")
    {
        std::memset(static_cast<char *>(m.firmware_answer.running_build), 'x', sizeof(m.firmware_answer.running_build));
        REQUIRE(hpu_device_get_firmware_info(dev, &f) == 0);
        CHECK(std::string(static_cast<const char *>(f.running_build)) == std::string(31, 'x'));
    }
    SECTION("errors")
    {
        m.has_firmware = false;
        CHECK(hpu_device_get_firmware_info(dev, &f) == -EINVAL);
        m.has_firmware = true;
        m.answer_size = 8;
        CHECK(hpu_device_get_firmware_info(dev, &f) == -EPROTO);
        m.answer_size = -1;
        CHECK(hpu_device_get_firmware_info(nullptr, &f) == -EINVAL);
        f.size = 0;
        CHECK(hpu_device_get_firmware_info(dev, &f) == -EINVAL);
    }
    CHECK(hpu_close(dev) == 0);
}

TEST_CASE_METHOD(Dev0, "PCIe link from sysfs", "[libhpu][telemetry]")
{
    hpu_pcie_link l{};
    l.size = sizeof(l);

    SECTION("current kernels: '16.0 GT/s PCIe'")
    {
        add_link(m, kBdf0, "16.0 GT/s PCIe\n", "8\n", "16.0 GT/s PCIe\n", "16\n");
        REQUIRE(hpu_device_get_pcie_link(dev, &l) == 0);
        CHECK(l.size == sizeof(l));
        CHECK(l.cur_speed_mts == 16000);
        CHECK(l.cur_gen == 4);
        CHECK(l.cur_width == 8);
        CHECK(l.max_speed_mts == 16000);
        CHECK(l.max_gen == 4);
        CHECK(l.max_width == 16);
        // Each file is read once.
        CHECK(m.read_calls_by_path["/sys/bus/pci/devices/0000:00:03.0/current_link_speed"] == 1);
    }
    SECTION("every generation, older formats")
    {
        const auto [text, mts, gen] = GENERATE(table<std::string, unsigned, unsigned>({
            {"2.5 GT/s PCIe", 2500, 1},
            {"5.0 GT/s", 5000, 2},
            {"8 GT/s", 8000, 3},
            {"32.0 GT/s PCIe", 32000, 5},
            {"64.0 GT/s PCIe", 64000, 6},
            {"Unknown", 0, 0},
            {"Unknown speed", 0, 0},
        }));
        add_link(m, kBdf0, text, "x4", text, "0");
        REQUIRE(hpu_device_get_pcie_link(dev, &l) == 0);
        CHECK(l.cur_speed_mts == mts);
        CHECK(l.cur_gen == gen);
        CHECK(l.cur_width == 4);
        CHECK(l.max_width == 0);
    }
    SECTION("malformed text: -EPROTO")
    {
        const auto [cs, cw] = GENERATE(table<std::string, std::string>({
            {"fast", "16"},
            {"16.0 MT/s", "16"},
            {"16.0000 GT/s", "16"},
            {"-1 GT/s", "16"},
            {"16.0 GT/s", "sixteen"},
            {"16.0 GT/s", "999"},
            {"", "16"},
        }));
        add_link(m, kBdf0, cs, cw, "16.0 GT/s", "16");
        CHECK(hpu_device_get_pcie_link(dev, &l) == -EPROTO);
    }
    SECTION("missing or unreadable attributes")
    {
        CHECK(hpu_device_get_pcie_link(dev, &l) == -ENOENT);
        add_link(m, kBdf0, "16.0 GT/s", "16", "16.0 GT/s", "16");
        m.read_fail["/sys/bus/pci/devices/0000:00:03.0/max_link_width"] = -EACCES;
        CHECK(hpu_device_get_pcie_link(dev, &l) == -EACCES);
    }
    SECTION("argument checks and a smaller structure")
    {
        add_link(m, kBdf0, "16.0 GT/s", "16", "16.0 GT/s", "16");
        CHECK(hpu_device_get_pcie_link(nullptr, &l) == -EINVAL);
        CHECK(hpu_device_get_pcie_link(dev, nullptr) == -EINVAL);
        hpu_pcie_link small{};
        small.size = 8;
        small.cur_gen = 77;
        REQUIRE(hpu_device_get_pcie_link(dev, &small) == 0);
        CHECK(small.size == 8);
        CHECK(small.cur_speed_mts == 16000);
        CHECK(small.cur_gen == 77);
    }
    CHECK(hpu_close(dev) == 0);
}

TEST_CASE_METHOD(Dev0, "hwmon directory", "[libhpu][telemetry]")
{
    std::array<char, 128> buf{};
    CHECK(hpu_device_hwmon_path(dev, buf.data(), buf.size()) == -ENOENT);
    m.dirs["/sys/bus/pci/devices/0000:00:03.0/hwmon"] = {};
    CHECK(hpu_device_hwmon_path(dev, buf.data(), buf.size()) == -ENOENT);
    m.dirs["/sys/bus/pci/devices/0000:00:03.0/hwmon"] = {"hwmon7", "hwmon3"};
    REQUIRE(hpu_device_hwmon_path(dev, buf.data(), buf.size()) == 0);
    CHECK(std::string(buf.data()) == "/sys/bus/pci/devices/0000:00:03.0/hwmon/hwmon3");
    CHECK(hpu_device_hwmon_path(dev, buf.data(), 20) == -ERANGE);
    CHECK(hpu_device_hwmon_path(dev, buf.data(), 0) == -EINVAL);
    CHECK(hpu_device_hwmon_path(nullptr, buf.data(), buf.size()) == -EINVAL);
    m.list_fail["/sys/bus/pci/devices/0000:00:03.0/hwmon"] = -EIO;
    CHECK(hpu_device_hwmon_path(dev, buf.data(), buf.size()) == -EIO);
    {
        const hpu::Device cxx = hpu::Device::open(1);
        CHECK_THROWS_AS(cxx.hwmon_path(), hpu::Error);
        m.dirs["/sys/bus/pci/devices/0000:00:04.0/hwmon"] = {"hwmon1"};
        CHECK(cxx.hwmon_path() == "/sys/bus/pci/devices/0000:00:04.0/hwmon/hwmon1");
    }
    CHECK(hpu_close(dev) == 0);
}

TEST_CASE("fdinfo parsing", "[libhpu][processes]")
{
    hpu::detail::FdInfo i;
    SECTION("keys, units and engines")
    {
        REQUIRE(hpu::detail::parse_fdinfo(fdinfo("0000:00:03.0", 7, "6 MiB", {5, 0, 12}), i));
        CHECK(i.driver == "hpu");
        CHECK(i.pdev == "0000:00:03.0");
        CHECK(i.client_id == 7);
        CHECK(i.hbm_total == 6ULL << 20U);
        CHECK(i.hbm_resident == 6ULL << 20U);
        CHECK(i.num_engines == 3);
        CHECK(i.engine_ns[2] == 12);
        for (const auto &[text, bytes] : std::vector<std::pair<std::string, std::uint64_t>>{
                 {"4096", 4096}, {"4 KiB", 4096}, {"3 MiB", 3ULL << 20U}, {"2 GiB", 2ULL << 30U}, {"17 B", 17}}) {
            REQUIRE(hpu::detail::parse_fdinfo("drm-client-id: 1\ndrm-total-hbm: " + text + "\n", i));
            CHECK(i.hbm_total == bytes);
        }
    }
    SECTION("the compute engines' keys: their engine indexes")
    {
        REQUIRE(hpu::detail::parse_fdinfo("drm-client-id: 1\ndrm-engine-dma0: 4 ns\ndrm-engine-tpc: 8 ns\n"
                                          "drm-engine-mme0: 9 ns\ndrm-engine-mme1: 10 ns\n",
                                          i));
        CHECK(i.num_engines == HPU_ENGINE_INDEX_MME(1) + 1);
        CHECK(i.engine_ns[0] == 4);
        CHECK(i.engine_ns[HPU_ENGINE_INDEX_TPC] == 8);
        CHECK(i.engine_ns[HPU_ENGINE_INDEX_MME(0)] == 9);
        CHECK(i.engine_ns[HPU_ENGINE_INDEX_MME(1)] == 10);
    }
    SECTION("engines beyond the library's room and unknown keys are ignored")
    {
        REQUIRE(hpu::detail::parse_fdinfo("drm-client-id: 1\ndrm-engine-dma99: 5 ns\ndrm-engine-copy: 3 ns\n"
                                          "drm-engine-mme99: 5 ns\ndrm-engine-tpc1: 2 ns\n"
                                          "drm-cycles-dma0: 5\nnonsense line\ndrm-memory-vram: 3 KiB\n",
                                          i));
        CHECK(i.num_engines == 0);
    }
    SECTION("malformed: ignored as a whole")
    {
        for (const char *bad : {"drm-driver: hpu\n",                               // no client id
                                "drm-client-id: x\n",                              // bad id
                                "drm-client-id: 1\ndrm-total-hbm: 4 TiB\n",        // unknown unit
                                "drm-client-id: 1\ndrm-total-hbm: lots\n",         // not a number
                                "drm-client-id: 1\ndrm-engine-dma0: 12 ms x\n",    // bad time
                                "drm-client-id: 1\ndrm-resident-hbm: 99999999999999999999999 KiB\n"}) {
            INFO(bad);
            CHECK_FALSE(hpu::detail::parse_fdinfo(bad, i));
        }
    }
}

TEST_CASE("processes from fdinfo", "[libhpu][processes]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);

    m.add_process(1, "init");                                 // no HPU
    m.add_fd(1, 0, "/dev/null", "pos: 0\n");
    m.add_process(300, "trainer");                            // two clients on HPU 0, a dup, one on HPU 1
    m.add_fd(300, 3, "/dev/accel/accel0", fdinfo("0000:00:03.0", 11, "4 MiB", {1000000, 0}));
    m.add_fd(300, 4, "/dev/accel/accel0", fdinfo("0000:00:03.0", 11, "4 MiB", {1000000, 0})); // dup of fd 3
    m.add_fd(300, 5, "/dev/accel/accel0", fdinfo("0000:00:03.0", 12, "2048 KiB", {0, 500000}));
    m.add_fd(300, 6, "/dev/accel/accel1", fdinfo("00:04.0", 13, "", {}));
    m.add_process(200, "other");                              // an ivpu file and a malformed one
    m.add_fd(200, 3, "/dev/accel/accel2", fdinfo("0000:00:05.0", 1, "1 MiB", {}, "ivpu"));
    m.add_fd(200, 4, "/dev/accel/accel0", "drm-driver: hpu\n");
    m.add_process(400, "secret");                            // another user's: unreadable
    m.list_fail["/proc/400/fd"] = -EACCES;
    m.dirs["/proc"].emplace_back("self");
    m.dirs["/proc"].emplace_back("meminfo");

    SECTION("one sample: raw counters of every HPU, one scan")
    {
        Procs p;
        REQUIRE(hpu_device_list_processes(nullptr, 0, &p.l) == 0);
        CHECK(m.sleeps.empty());
        REQUIRE(hpu_process_list_size(p.l) == 2);
        const hpu_process *a = hpu_process_list_at(p.l, 0);
        CHECK(a->size == sizeof(hpu_process));
        CHECK(a->pid == 300);
        CHECK(std::string(static_cast<const char *>(a->comm)) == "trainer");
        CHECK(std::string(static_cast<const char *>(a->pci_addr)) == kBdf0);
        CHECK(a->clients == 2);
        CHECK(a->hbm_total == 6ULL << 20U);
        CHECK(a->hbm_resident == 6ULL << 20U);
        CHECK(a->num_engines == 2);
        CHECK(a->engine_ns[0] == 1000000);
        CHECK(a->engine_ns[1] == 500000);
        CHECK(a->sample_ns == 0);
        CHECK(a->util == HPU_UTIL_UNKNOWN);
        CHECK(a->engine_util[0] == HPU_UTIL_UNKNOWN);
        const hpu_process *b = hpu_process_list_at(p.l, 1);
        CHECK(std::string(static_cast<const char *>(b->pci_addr)) == kBdf1); // "00:04.0" normalised
        CHECK(b->pid == 300);
        CHECK(b->clients == 1);
        CHECK(b->hbm_total == 0);
        CHECK(hpu_process_list_at(p.l, 2) == nullptr);
        CHECK(hpu_process_list_at(nullptr, 0) == nullptr);
        CHECK(hpu_process_list_size(nullptr) == 0);
        // fdinfo is read only for fds on an accel node; comm once per process.
        CHECK(m.read_calls_by_path.count("/proc/1/fdinfo/0") == 0);
        // comm before the first HPU client and after the last (PID reuse).
        CHECK(m.read_calls_by_path["/proc/300/comm"] == 2);
        CHECK(m.read_calls_by_path.count("/proc/1/comm") == 0);
    }
    SECTION("one device")
    {
        hpu_device_t *dev = nullptr;
        REQUIRE(hpu_open_by_index(1, &dev) == 0);
        Procs p;
        REQUIRE(hpu_device_list_processes(dev, 0, &p.l) == 0);
        REQUIRE(hpu_process_list_size(p.l) == 1);
        CHECK(std::string(static_cast<const char *>(hpu_process_list_at(p.l, 0)->pci_addr)) == kBdf1);
        CHECK(hpu_close(dev) == 0);
    }
    SECTION("two samples: utilisation over the interval")
    {
        m.on_sleep = [&m]() {
            // 100 ms later: engine 0 busy 50 ms more, engine 1 idle; a new
            // client (fd 7) ran 100 ms on engine 1 since it opened.
            m.files["/proc/300/fdinfo/3"] = fdinfo("0000:00:03.0", 11, "4 MiB", {51000000, 0});
            m.files["/proc/300/fdinfo/4"] = m.files["/proc/300/fdinfo/3"];
            m.add_fd(300, 7, "/dev/accel/accel0", fdinfo("0000:00:03.0", 14, "2 MiB", {0, 100000000}));
        };
        Procs p;
        REQUIRE(hpu_device_list_processes(nullptr, 100, &p.l) == 0);
        CHECK(m.sleeps == std::vector<std::int64_t>{100000000});
        REQUIRE(hpu_process_list_size(p.l) == 2);
        const hpu_process *a = hpu_process_list_at(p.l, 0);
        CHECK(a->sample_ns == 100000000);
        CHECK(a->clients == 3);
        CHECK(a->hbm_total == 8ULL << 20U);
        CHECK(a->engine_util[0] == 5000);   // 50 ms of 100
        CHECK(a->engine_util[1] == 10000);  // the new client: 100 ms of 100
        CHECK(a->util == 7500);             // mean of the two engines
        CHECK(a->engine_util[2] == 0);
        const hpu_process *b = hpu_process_list_at(p.l, 1);
        CHECK(b->util == 0);                // no engine keys
    }
    SECTION("a client closed between the samples is not a new client")
    {
        // fd 5 (client 12, 500 us on engine 1) closes; client 11 runs 20 ms
        // more on engine 0. Summed per process the engine 1 total goes
        // backwards, which must not read as a new client at 100 %.
        m.add_fd(300, 8, "/dev/accel/accel0", fdinfo("0000:00:03.0", 15, "", {0, 90000000}));
        m.on_sleep = [&m]() {
            m.files["/proc/300/fdinfo/3"] = fdinfo("0000:00:03.0", 11, "4 MiB", {21000000, 0});
            m.files["/proc/300/fdinfo/4"] = m.files["/proc/300/fdinfo/3"];
            m.files["/proc/300/fdinfo/8"] = fdinfo("0000:00:03.0", 15, "", {0, 90000000});
            auto &fds = m.dirs["/proc/300/fd"];
            fds.erase(std::find(fds.begin(), fds.end(), "5"));
        };
        Procs p;
        REQUIRE(hpu_device_list_processes(nullptr, 100, &p.l) == 0);
        const hpu_process *a = hpu_process_list_at(p.l, 0);
        REQUIRE(a->pid == 300);
        CHECK(a->clients == 2);
        CHECK(a->engine_util[0] == 2000); // 20 ms of 100
        CHECK(a->engine_util[1] == 0);    // client 15 idle, client 12 gone
        CHECK(a->util == 1000);
    }
    SECTION("the interval starts after the first scan")
    {
        // The first scan takes 1 s (the clock moves while it reads fd 3).
        int reads = 0;
        m.on_read = [&m, &reads](const std::string &path) {
            if (path == "/proc/300/fdinfo/3" && ++reads == 1)
                m.now_ns += 1000000000;
        };
        m.on_sleep = [&m]() {
            m.files["/proc/300/fdinfo/3"] = fdinfo("0000:00:03.0", 11, "4 MiB", {51000000, 0});
            m.files["/proc/300/fdinfo/4"] = m.files["/proc/300/fdinfo/3"];
        };
        Procs p;
        REQUIRE(hpu_device_list_processes(nullptr, 100, &p.l) == 0);
        const hpu_process *a = hpu_process_list_at(p.l, 0);
        CHECK(a->sample_ns == 100000000);
        CHECK(a->engine_util[0] == 5000);
    }
    SECTION("a PID reused while its fds are read: not listed with a wrong name")
    {
        int reads = 0;
        m.on_read = [&m, &reads](const std::string &path) {
            if (path == "/proc/300/comm" && ++reads == 2)
                m.files["/proc/300/comm"] = "intruder\n"; // a new process after the first read
        };
        Procs p;
        REQUIRE(hpu_device_list_processes(nullptr, 0, &p.l) == 0);
        for (std::size_t i = 0; i < hpu_process_list_size(p.l); ++i)
            CHECK(hpu_process_list_at(p.l, i)->pid != 300);
        // The next scan lists it under its (stable) new name.
        Procs q;
        REQUIRE(hpu_device_list_processes(nullptr, 0, &q.l) == 0);
        REQUIRE(hpu_process_list_size(q.l) == 2);
        CHECK(std::string(static_cast<const char *>(hpu_process_list_at(q.l, 0)->comm)) == "intruder");
    }
    SECTION("no process: no sleep")
    {
        m.dirs["/proc"] = {"1"};
        Procs p;
        REQUIRE(hpu_device_list_processes(nullptr, 500, &p.l) == 0);
        CHECK(hpu_process_list_size(p.l) == 0);
        CHECK(m.sleeps.empty());
    }
    SECTION("processes that end or close while we look")
    {
        m.read_fail["/proc/300/fdinfo/5"] = -ENOENT;
        m.link_fail["/proc/300/fd/6"] = -ENOENT;
        m.read_fail["/proc/300/comm"] = -ENOENT;
        Procs p;
        REQUIRE(hpu_device_list_processes(nullptr, 0, &p.l) == 0);
        REQUIRE(hpu_process_list_size(p.l) == 1);
        CHECK(hpu_process_list_at(p.l, 0)->clients == 1);
        CHECK(std::string(static_cast<const char *>(hpu_process_list_at(p.l, 0)->comm)).empty());
    }
    SECTION("errors")
    {
        CHECK(hpu_device_list_processes(nullptr, 0, nullptr) == -EINVAL);
        m.list_fail["/proc"] = -EACCES;
        Procs p;
        CHECK(hpu_device_list_processes(nullptr, 0, &p.l) == -EACCES);
        CHECK(p.l == nullptr);
    }
    SECTION("C++")
    {
        const auto all = hpu::list_processes();
        CHECK(all.size() == 2);
        const hpu::Device d = hpu::Device::open(0);
        const auto one = hpu::list_processes(&d, std::chrono::milliseconds(10));
        REQUIRE(one.size() == 1);
        CHECK(one[0].sample_ns == 10000000);
        m.list_fail["/proc"] = -EIO;
        CHECK_THROWS_AS(hpu::list_processes(), hpu::Error);
    }
}

TEST_CASE("utilisation arithmetic", "[libhpu][processes]")
{
    hpu_process now{};
    now.num_engines = 2;
    hpu::detail::EngineNs client{};
    client[0] = 300;
    client[1] = 50;
    hpu::detail::EngineNs before{};
    before[0] = 100;
    before[1] = 100; // went backwards: the id of a new client, counted from 0
    hpu::detail::EngineNs busy{};
    hpu::detail::add_client_busy(client, &before, busy);
    CHECK(busy[0] == 200);
    CHECK(busy[1] == 50);
    hpu::detail::apply_utilisation(now, busy, 200);
    CHECK(now.engine_util[0] == 10000);
    CHECK(now.engine_util[1] == 2500);
    CHECK(now.util == 6250);
    hpu::detail::add_client_busy(client, nullptr, busy); // a second client, new: from 0
    CHECK(busy[0] == 500);
    hpu::detail::apply_utilisation(now, busy, 100); // more than the interval: clamped
    CHECK(now.engine_util[0] == 10000);
    CHECK(now.util == 10000);
}

TEST_CASE("open from a discovery snapshot without discovering again", "[libhpu][telemetry]")
{
    MockOs m;
    populate(m);
    const ScopedMock scoped(m);
    hpu_device_list_t *list = nullptr;
    REQUIRE(hpu_device_list_get(&list) == 0);
    m.list_fail["/sys/class/accel"] = -EIO; // any new discovery would fail
    hpu_device_t *dev = nullptr;
    REQUIRE(hpu_device_list_open(list, 1, &dev) == 0);
    hpu_device_info info{};
    info.size = sizeof(info);
    REQUIRE(hpu_device_get_info(dev, &info) == 0);
    CHECK(std::string(static_cast<const char *>(info.serial)) == "SER-B");
    CHECK(info.index == 1);
    CHECK(hpu_close(dev) == 0);
    CHECK(hpu_device_list_open(list, 2, &dev) == -ENODEV);
    CHECK(dev == nullptr);
    CHECK(hpu_device_list_open(nullptr, 0, &dev) == -EINVAL);
    CHECK(hpu_device_list_open(list, 0, nullptr) == -EINVAL);
    m.open_fail["/dev/accel/accel0"] = -EACCES;
    CHECK(hpu_device_list_open(list, 0, &dev) == -EACCES);
    hpu_device_list_free(list);
    CHECK(m.leaks() == 0);

    m.list_fail.clear();
    m.open_fail.clear();
    const auto l = hpu::DeviceList::discover();
    REQUIRE(l.size() == 2);
    CHECK(l.at(1).pci_addr == kBdf1);
    CHECK_THROWS_AS(l.at(2), hpu::Error);
    const hpu::Device d = l.open(0);
    CHECK(d.info().index == 0);
    CHECK(d.telemetry().clk_core_mhz == 1500);
    CHECK(d.firmware_info().boots == 2);
    add_link(m, kBdf0, "8.0 GT/s PCIe", "16", "16.0 GT/s PCIe", "16");
    CHECK(d.pcie_link().cur_gen == 3);
    m.has_firmware = false;
    CHECK_THROWS_AS(d.firmware_info(), hpu::Error);
}
