// SPDX-License-Identifier: MIT
// Telemetry (Documentation/driver/telemetry.md): the hwmon device "hpu"
// (sensors, firmware limits, alarms), the telemetry sysfs attributes of the
// PCI device, DRM_HPU_INFO_TELEMETRY and the per-file fdinfo keys.
//
// The firmware's thermal model (firmware/hpu-h1.fwsrc): 25 C ambient,
// 0.15 C/W, 2 s time constant, 60 W idle, 30 W per fully busy DMA engine at
// the top clock (1600 MHz; levels 800..1600 MHz at 750..950 mV), HBM at
// 1600 MHz / 1200 mV; idle the die settles near 34 C. Limits: TEMP_MAX 85 C
// (30..100), TEMP_CRIT 95 C, POWER_CAP 350 W (50..450), HBM_TEMP_MAX 90 C.
// The tests compare values before, during and after load; the only time
// bounds are generous polling limits.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr std::uint32_t kEngines = 8;
// Entries of INFO TELEMETRY in use (engine indexes 0..10: DMA, TPC, MME0, MME1).
constexpr std::uint32_t kEngineIndexes = 11;

// The hwmon directory of the device behind an accel node (name "hpu").
std::string hwmon_dir(const std::string &node)
{
    const std::string base = sysfs_dir(node) + "/hwmon";
    DIR *d = ::opendir(base.c_str());
    if (d == nullptr)
        FAIL("no hwmon directory under " << base);
    std::string found;
    while (const dirent *e = ::readdir(d)) {
        const std::string n = e->d_name;
        std::string path = base;
        path += '/';
        path += n;
        if (n.rfind("hwmon", 0) == 0 && read_text(path + "/name").value_or("") == "hpu\n") {
            found = std::move(path);
        }
    }
    ::closedir(d);
    if (found.empty())
        FAIL("no hwmon device named hpu under " << base);
    return found;
}

// A signed decimal attribute, or nullopt (missing or a read error such as
// ENODATA).
std::optional<long long> read_ll(const std::string &path)
{
    auto t = read_text(path);
    if (!t || t->empty())
        return std::nullopt;
    try {
        return std::stoll(*t);
    } catch (...) {
        return std::nullopt;
    }
}

long long must(const std::string &path)
{
    const auto v = read_ll(path);
    INFO(path);
    REQUIRE(v.has_value());
    return *v;
}

int info_telemetry(int fd, drm_hpu_info_telemetry &t)
{
    drm_hpu_info req{};
    req.op = DRM_HPU_INFO_TELEMETRY;
    req.ptr = reinterpret_cast<std::uintptr_t>(&t); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    req.size = sizeof(t);
    const int e = xioctl(fd, DRM_IOCTL_HPU_INFO, &req);
    if (e == 0 && req.size != sizeof(t))
        return EPROTO;
    return e;
}

drm_hpu_info_telemetry telemetry(int fd)
{
    drm_hpu_info_telemetry t{};
    REQUIRE(info_telemetry(fd, t) == 0);
    return t;
}

// Kernel log since the marker written at construction.
struct Klog {
    std::string marker;
    explicit Klog(const std::string &what)
    {
        static int n = 0;
        marker = "hpu-telemetry-test mark " + std::to_string(::getpid()) + "." + std::to_string(++n) + " " + what;
        REQUIRE(write_text("/dev/kmsg", "<6>" + marker + "\n") == 0);
    }
    [[nodiscard]] std::string since() const
    {
        std::string all;
        if (FILE *p = ::popen("dmesg 2>&1", "r")) {
            char buf[512];
            while (std::fgets(buf, sizeof(buf), p))
                all += buf;
            ::pclose(p);
        }
        const auto pos = all.rfind(marker);
        INFO("kernel log marker \"" << marker << "\" not found in dmesg");
        REQUIRE(pos != std::string::npos);
        return all.substr(pos);
    }
};

// Kernel reports that no test may cause.
void check_no_kernel_reports(const std::string &log)
{
    INFO("kernel log:\n" << log);
    for (const char *bad : {"WARNING:", "UBSAN", "BUG:", "possible circular locking", "firmware mailbox"})
        CHECK(log.find(bad) == std::string::npos);
}

// Waits until the die is idle-cool (below 45 C): earlier tests may have
// left it warm.
void wait_cool(const std::string &hw)
{
    CHECK(eventually([&] { return read_ll(hw + "/temp1_input").value_or(0) < 45000; }, 20000));
}

// Keeps all DMA engines busy with HBM -> HBM copies: one queue per engine,
// `depth` jobs in flight per queue.
class Load {
public:
    explicit Load(Ctx &c, std::uint32_t engines = kEngines, std::uint64_t piece = 8 * MiB) : c_(c)
    {
        for (std::uint32_t e = 0; e < engines; ++e) {
            std::uint32_t q = 0;
            REQUIRE(c.queue_create(e, q) == 0);
            const std::uint64_t src = c.hbm_buf(piece);
            const std::uint64_t dst = c.hbm_buf(piece);
            Cb fill;
            fill.memset(0x5a5a5a5a5a5a5a5aULL + e, src, piece);
            REQUIRE(c.run(q, fill) == 1);
            if (e == 0)
                pairs_ = calibrate(q, src, dst, piece, engines);
            const Cb cb = copies(src, dst, piece, pairs_);
            queues_.push_back(q);
            cbs_.push_back(c.put_cb(cb));
            bytes_ = cb.bytes();
        }
    }
    // Keeps `depth` jobs in flight on every queue for `ms` milliseconds,
    // then on until `enough()` holds or `max_ms` have passed: a queue gets
    // its next job as soon as its oldest one ended, and a job is long
    // enough (calibrate()) that the `depth` jobs of a queue outlast a round
    // of reaping and submitting on all of them, so how busy the engines
    // are depends on the jobs more than on how fast the guest kernel
    // submits them (a debug kernel takes several ms per job, more while
    // the engines' copies take the host's CPUs). `each` is called after
    // every queue's turn and about every 10 ms (the driver's utilisation
    // covers the last 100 ms), so that no queue's busy time falls between
    // two calls. Returns once every job ended (a hung job ends at the
    // driver's job timeout).
    template <typename F, typename Enough>
    void run_until(int ms, int max_ms, F each, Enough enough, int depth = 3)
    {
        const std::uint64_t t0 = now_ns();
        std::vector<std::deque<std::uint32_t>> inflight(queues_.size());
        const auto submit = [&](std::size_t i) {
            std::uint32_t so = 0;
            REQUIRE(syncobj_create(c_.fd(), so) == 0);
            REQUIRE(c_.submit(queues_[i], cbs_[i], bytes_, so) == 0);
            inflight[i].push_back(so);
        };
        const auto reap = [&](std::size_t i) {
            const std::uint32_t so = inflight[i].front();
            CHECK(syncobj_status(c_.fd(), so) == 1);
            syncobj_destroy(c_.fd(), so);
            inflight[i].pop_front();
        };
        for (std::size_t i = 0; i < queues_.size(); ++i) {
            for (int d = 0; d < depth; ++d)
                submit(i);
        }
        while (ms_since(t0) < ms || (ms_since(t0) < max_ms && !enough())) {
            for (std::size_t i = 0; i < queues_.size(); ++i) {
                while (!inflight[i].empty() && syncobj_wait_abs(c_.fd(), inflight[i].front(), 0) == 0) {
                    reap(i);
                    submit(i);
                }
                each();
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        const double end = ms_since(t0);
        for (std::size_t i = 0; i < queues_.size(); ++i) {
            while (!inflight[i].empty()) {
                int e = 0;
                do {
                    each();
                    e = syncobj_wait_abs(c_.fd(), inflight[i].front(),
                                         static_cast<std::int64_t>(now_ns() + 25000000ULL));
                } while ((e == ETIME || e == EINTR) && ms_since(t0) < end + 60000);
                REQUIRE(e == 0);
                reap(i);
            }
        }
    }
    template <typename F> void run_for(int ms, F each, int depth = 3)
    {
        run_until(ms, ms, each, [] { return true; }, depth);
    }

private:
    // Copies there and back per job, so that the `depth` jobs in flight on
    // a queue outlast a round of reaping and resubmitting on every queue:
    // a job must keep its engine busy for at least as long as the guest
    // spends on the jobs of all queues (about `engines` times the time one
    // job costs beyond its copies), and for kJobMs at least. A probe job
    // of 4 pairs (64 MiB at the default piece) tells both: its device time
    // from engine 0's BUSY_NS, its cost beyond that from the wall clock.
    // The plain kernel spends about 1 ms per job, the debug kernel of
    // make test-debug about 45 ms: with fixed 4-pair jobs there, the queues
    // handled first in a round sat idle for most of it and read 0 %.
    unsigned int calibrate(std::uint32_t q, std::uint64_t src, std::uint64_t dst, std::uint64_t piece,
                           std::uint32_t engines)
    {
        constexpr std::uint64_t kProbePairs = 4;
        constexpr std::uint64_t kMaxPairs = 256;
        constexpr std::uint64_t kJobNs = 50000000;
        // An idle engine's second per job at most: 8 engines sharing the
        // host's CPUs stretch it several times, well inside the driver's
        // 10 s job timeout.
        constexpr std::uint64_t kMaxJobNs = 1000000000;
        const Cb probe = copies(src, dst, piece, kProbePairs);
        const std::uint64_t busy0 = telemetry(c_.fd()).engine_busy_ns[0];
        const std::uint64_t t0 = now_ns();
        REQUIRE(c_.run(q, probe) == 1);
        const std::uint64_t wall = now_ns() - t0;
        const std::uint64_t busy1 = telemetry(c_.fd()).engine_busy_ns[0];
        REQUIRE(busy1 > busy0); // the engine's busy time counts the probe
        const std::uint64_t dev = busy1 - busy0;
        const std::uint64_t want = std::min<std::uint64_t>(
            std::max<std::uint64_t>(kJobNs, engines * (wall > dev ? wall - dev : 0)), kMaxJobNs);
        const std::uint64_t pairs =
            std::min(kProbePairs * std::max<std::uint64_t>((want + dev - 1) / dev, 1), kMaxPairs);
        std::printf("LOAD probe job: %llu ns on the engine, %llu ns in all: %llu pairs a job\n",
                    static_cast<unsigned long long>(dev), static_cast<unsigned long long>(wall),
                    static_cast<unsigned long long>(pairs));
        return static_cast<unsigned int>(pairs);
    }

    // A command buffer of `pairs` copies of `piece` bytes there and back.
    static Cb copies(std::uint64_t src, std::uint64_t dst, std::uint64_t piece, std::uint64_t pairs)
    {
        Cb cb;
        for (std::uint64_t i = 0; i < pairs; ++i)
            cb.lin_dma(src, dst, piece).lin_dma(dst, src, piece);
        return cb;
    }

    Ctx &c_;
    std::vector<std::uint32_t> queues_;
    std::vector<std::uint64_t> cbs_;
    std::uint32_t bytes_ = 0;
    unsigned int pairs_ = 4;
};

// Reads a decimal attribute with read(2): {value, 0} or {0, errno}.
std::pair<long long, int> read_raw(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    if (fd < 0)
        return {0, errno};
    std::array<char, 64> buf{};
    const ssize_t n = ::read(fd, buf.data(), buf.size() - 1);
    const int e = n < 0 ? errno : 0;
    ::close(fd);
    if (n < 0)
        return {0, e};
    return {std::strtoll(buf.data(), nullptr, 10), 0};
}

// fdinfo of a file: key -> value text (units kept).
std::map<std::string, std::string> fdinfo(pid_t pid, int fd)
{
    std::map<std::string, std::string> kv;
    const auto t = read_text("/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd));
    REQUIRE(t.has_value());
    std::istringstream in(*t);
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        std::string v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        kv[line.substr(0, colon)] = v;
    }
    return kv;
}

// "123", "4 KiB", "64 MiB" in bytes; "123 ns" in ns.
std::uint64_t fd_value(const std::map<std::string, std::string> &kv, const std::string &key)
{
    const auto it = kv.find(key);
    if (it == kv.end())
        FAIL("fdinfo has no key " << key);
    std::istringstream in(it->second);
    std::uint64_t v = 0;
    std::string unit;
    in >> v >> unit;
    if (unit == "KiB") {
        v *= KiB;
    } else if (unit == "MiB") {
        v *= MiB;
    }
    return v;
}

} // namespace

TEST_CASE("hwmon: the hpu chip, its attributes and idle values", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string hw = hwmon_dir(node);
    INFO("hwmon " << hw);

    CHECK(read_text(hw + "/temp1_label") == "die\n");
    CHECK(read_text(hw + "/temp2_label") == "hbm\n");
    CHECK(read_text(hw + "/temp3_label") == "board\n");
    CHECK(read_text(hw + "/in0_label") == "vddc core\n");
    CHECK(read_text(hw + "/in1_label") == "vdd hbm\n");

    const std::map<std::string, unsigned> modes = {
        {"temp1_input", 0444},     {"temp1_max", 0644},      {"temp1_crit", 0444},       {"temp1_max_alarm", 0444},
        {"temp1_crit_alarm", 0444}, {"temp2_input", 0444},    {"temp2_max", 0644},        {"temp2_max_alarm", 0444},
        {"temp3_input", 0444},     {"power1_input", 0444},   {"power1_cap", 0644},       {"power1_cap_max", 0444},
        {"power1_cap_min", 0444},  {"power1_cap_alarm", 0444}, {"energy1_input", 0444}, {"in0_input", 0444},
        {"in1_input", 0444},
    };
    for (const auto &[name, mode] : modes) {
        struct stat st {};
        INFO(name);
        std::string path = hw;
        path += '/';
        path += name;
        REQUIRE(::stat(path.c_str(), &st) == 0);
        CHECK((st.st_mode & 0777U) == mode);
    }
    struct stat st {};
    CHECK(::stat((hw + "/temp3_max").c_str(), &st) != 0);

    wait_cool(hw);
    const long long die = must(hw + "/temp1_input");
    const long long hbm = must(hw + "/temp2_input");
    const long long board = must(hw + "/temp3_input");
    INFO("die " << die << " hbm " << hbm << " board " << board);
    CHECK(die >= 25000);
    CHECK(die < 45000);
    CHECK(hbm >= 25000);
    CHECK(hbm <= die);
    CHECK(board >= 25000);
    CHECK(board <= hbm);

    const long long tmax = must(hw + "/temp1_max");
    CHECK(tmax >= 30000);
    CHECK(tmax <= 100000);
    CHECK(must(hw + "/temp1_crit") >= tmax);
    CHECK(must(hw + "/temp2_max") >= 30000);
    CHECK(must(hw + "/temp1_max_alarm") == 0);
    CHECK(must(hw + "/temp1_crit_alarm") == 0);
    CHECK(must(hw + "/temp2_max_alarm") == 0);

    const long long p = must(hw + "/power1_input");
    const long long cap = must(hw + "/power1_cap");
    const long long cap_min = must(hw + "/power1_cap_min");
    const long long cap_max = must(hw + "/power1_cap_max");
    INFO("power " << p << " uW, cap " << cap << " in [" << cap_min << ", " << cap_max << "]");
    CHECK(p >= 20000000);  // idle: 60 W
    CHECK(p <= 150000000);
    CHECK(cap_min > 0);
    CHECK(cap_min <= cap);
    CHECK(cap <= cap_max);
    CHECK(p < cap);
    CHECK(must(hw + "/power1_cap_alarm") == 0);

    const long long vcore = must(hw + "/in0_input");
    CHECK(vcore >= 500);
    CHECK(vcore <= 1500);
    const long long vhbm = must(hw + "/in1_input");
    CHECK(vhbm >= 500);
    CHECK(vhbm <= 2000);

    const long long e0 = must(hw + "/energy1_input");
    ::usleep(300000);
    const long long e1 = must(hw + "/energy1_input");
    CHECK(e1 > e0);
    // 300 ms at 20..150 W: 6..45 J (generous: guest timing is loose).
    CHECK(e1 - e0 > 1000000);
}

TEST_CASE("sensors (lm-sensors) shows the hpu chip", "[telemetry]")
{
    FILE *p = ::popen("sensors 2>&1", "r"); // NOLINT(cert-env33-c)
    REQUIRE(p != nullptr);
    std::string out;
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
        out.append(buf.data(), n);
    const int st = ::pclose(p);
    INFO(out);
    CHECK(WIFEXITED(st));
    CHECK(out.find("hpu-pci-") != std::string::npos);
    for (const char *label : {"die:", "hbm:", "board:", "vddc core:", "vdd hbm:", "energy1:"})
        CHECK(out.find(label) != std::string::npos);
}

TEST_CASE("sysfs: clocks, status, HBM use, PCIe link, engine utilisation", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string dir = sysfs_dir(node);
    const std::string hw = hwmon_dir(node);

    wait_cool(hw);
    const long long cmax = must(dir + "/clk_core_max_mhz");
    CHECK(cmax >= 800);
    CHECK(eventually([&] { return must(dir + "/clk_core_mhz") == cmax; }, 5000));
    CHECK(must(dir + "/clk_hbm_mhz") > 0);
    CHECK(read_text(dir + "/status") == "operational\n");

    const auto link = read_text(dir + "/pcie_link");
    REQUIRE(link.has_value());
    INFO("pcie_link '" << *link << "'");
    CHECK(std::regex_match(*link, std::regex("[0-9]+\\.[0-9] GT/s x[0-9]+\n")));

    const auto util = read_text(dir + "/engine_util");
    REQUIRE(util.has_value());
    INFO("engine_util '" << *util << "'");
    CHECK(std::regex_match(*util, std::regex("dma0 [0-9]+\\.[0-9]{2}( dma[1-7] [0-9]+\\.[0-9]{2}){7}"
                                             " tpc [0-9]+\\.[0-9]{2} mme0 [0-9]+\\.[0-9]{2} mme1 [0-9]+\\.[0-9]{2}\n")));

    const std::uint64_t total = must(dir + "/hbm_total");
    CHECK(total > 0);
    CHECK(total <= static_cast<std::uint64_t>(must(dir + "/hbm_size")));
    const std::uint64_t used0 = must(dir + "/hbm_used");
    {
        Ctx c(node);
        std::uint32_t h = 0;
        REQUIRE(c.bo_create(64 * MiB, DRM_HPU_BO_HBM, h) == 0);
        CHECK(static_cast<std::uint64_t>(must(dir + "/hbm_used")) == used0 + 64 * MiB);
        drm_hpu_info_memory m{};
        REQUIRE(info_memory(c.fd(), m) == 0);
        CHECK(m.hbm_used == used0 + 64 * MiB);
        CHECK(m.hbm_total == total);
        REQUIRE(c.gem_close(h) == 0);
    }
    CHECK(wait_hbm_used(node, used0) == used0);
    CHECK(static_cast<std::uint64_t>(must(dir + "/hbm_used")) == used0);
}

TEST_CASE("INFO TELEMETRY: fields and rejected requests", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string dir = sysfs_dir(node);
    const std::string hw = hwmon_dir(node);
    Ctx c(node);
    wait_cool(hw);

    SECTION("fields agree with hwmon and sysfs")
    {
        const std::uint64_t before = now_ns();
        const drm_hpu_info_telemetry t = telemetry(c.fd());
        CHECK(t.timestamp_ns >= before);
        CHECK(t.timestamp_ns <= now_ns());
        CHECK(t.num_engines == kEngineIndexes);
        CHECK(t.util_window_ms >= 50);
        CHECK(t.util_window_ms <= 2000);
        for (std::uint32_t e = 0; e < DRM_HPU_MAX_ENGINES_UTIL; ++e) {
            INFO("engine " << e);
            CHECK(t.engine_util[e] <= 10000);
            if (e >= t.num_engines) {
                CHECK(t.engine_util[e] == 0);
                CHECK(t.engine_busy_ns[e] == 0);
            }
        }
        drm_hpu_info_memory m{};
        REQUIRE(info_memory(c.fd(), m) == 0);
        CHECK(t.hbm_total == m.hbm_total);
        CHECK(t.hbm_used == m.hbm_used);

        CHECK(std::llabs(t.temp_die_mc - must(hw + "/temp1_input")) < 5000);
        CHECK(std::llabs(t.temp_hbm_mc - must(hw + "/temp2_input")) < 5000);
        CHECK(std::llabs(t.temp_board_mc - must(hw + "/temp3_input")) < 5000);
        CHECK(t.temp_max_mc == must(hw + "/temp1_max"));
        CHECK(t.temp_crit_mc == must(hw + "/temp1_crit"));
        CHECK(t.hbm_temp_max_mc == must(hw + "/temp2_max"));
        CHECK(static_cast<long long>(t.power_cap_mw) * 1000 == must(hw + "/power1_cap"));
        CHECK(static_cast<long long>(t.power_cap_max_mw) * 1000 == must(hw + "/power1_cap_max"));
        CHECK(t.power_mw > 20000);
        CHECK(t.power_mw < t.power_cap_mw);
        CHECK(t.volt_core_mv == must(hw + "/in0_input"));
        CHECK(t.volt_hbm_mv == must(hw + "/in1_input"));
        CHECK(t.clk_core_max_mhz == must(dir + "/clk_core_max_mhz"));
        CHECK(t.clk_hbm_mhz == must(dir + "/clk_hbm_mhz"));
        CHECK(t.clk_core_mhz <= t.clk_core_max_mhz);
        CHECK(t.throttle == 0);
        CHECK(t.alarms == 0);
        CHECK(t.energy_uj > 0);
        const drm_hpu_info_telemetry t2 = telemetry(c.fd());
        CHECK(t2.energy_uj >= t.energy_uj);
        CHECK(t2.timestamp_ns > t.timestamp_ns);
        for (std::uint32_t e = 0; e < kEngines; ++e)
            CHECK(t2.engine_busy_ns[e] >= t.engine_busy_ns[e]);
    }

    SECTION("size 0 reports the size")
    {
        drm_hpu_info req{};
        req.op = DRM_HPU_INFO_TELEMETRY;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_INFO, &req) == 0);
        CHECK(req.size == sizeof(drm_hpu_info_telemetry));
    }

    SECTION("a short buffer gets the first bytes and the full size")
    {
        std::array<unsigned char, sizeof(drm_hpu_info_telemetry) + 16> buf{};
        buf.fill(0xff);
        drm_hpu_info req{};
        req.op = DRM_HPU_INFO_TELEMETRY;
        req.ptr = reinterpret_cast<std::uintptr_t>(buf.data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        req.size = 8;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_INFO, &req) == 0);
        CHECK(req.size == sizeof(drm_hpu_info_telemetry));
        std::uint64_t ts = 0;
        std::memcpy(&ts, buf.data(), 8);
        CHECK(ts > 0);
        CHECK(ts <= now_ns());
        CHECK(std::all_of(buf.begin() + 8, buf.end(), [](unsigned char b) { return b == 0xff; }));
    }

    SECTION("a larger buffer gets the answer only")
    {
        std::array<unsigned char, sizeof(drm_hpu_info_telemetry) + 16> buf{};
        buf.fill(0xff);
        drm_hpu_info req{};
        req.op = DRM_HPU_INFO_TELEMETRY;
        req.ptr = reinterpret_cast<std::uintptr_t>(buf.data()); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        req.size = buf.size();
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_INFO, &req) == 0);
        CHECK(req.size == sizeof(drm_hpu_info_telemetry));
        CHECK(std::all_of(buf.end() - 16, buf.end(), [](unsigned char b) { return b == 0xff; }));
    }

    SECTION("non-zero flags or pad: EINVAL")
    {
        drm_hpu_info_telemetry t{};
        drm_hpu_info req{};
        req.op = DRM_HPU_INFO_TELEMETRY;
        req.ptr = reinterpret_cast<std::uintptr_t>(&t); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
        req.size = sizeof(t);
        req.flags = 1;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_INFO, &req) == EINVAL);
        req.flags = 0;
        req.pad = 1;
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_INFO, &req) == EINVAL);
    }

    SECTION("an unwritable buffer: EFAULT")
    {
        drm_hpu_info req{};
        req.op = DRM_HPU_INFO_TELEMETRY;
        req.ptr = 8;
        req.size = sizeof(drm_hpu_info_telemetry);
        CHECK(xioctl(c.fd(), DRM_IOCTL_HPU_INFO, &req) == EFAULT);
    }
}

TEST_CASE("load on all DMA engines raises utilisation, power and temperature", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string hw = hwmon_dir(node);
    Ctx c(node);
    Load load(c);
    wait_cool(hw);

    const drm_hpu_info_telemetry idle = telemetry(c.fd());
    INFO("idle: " << idle.power_mw << " mW, die " << idle.temp_die_mc << " m°C");
    std::uint64_t energy = idle.energy_uj;
    std::uint32_t pmax = 0;
    std::int32_t tmax = 0;
    std::array<std::uint32_t, kEngines> umax{};
    bool energy_monotonic = true;
    // 5 s, and on (up to 60 s) until every engine was seen 10 % busy: a
    // slow guest (the debug kernel) may take longer to see each of them
    // busy in a window, never forever.
    const auto seen_all = [&] {
        return std::all_of(umax.begin(), umax.end(), [](std::uint32_t u) { return u >= 1000; }) &&
               *std::max_element(umax.begin(), umax.end()) >= 5000;
    };
    load.run_until(5000, 60000, [&] {
        const drm_hpu_info_telemetry t = telemetry(c.fd());
        pmax = std::max(pmax, t.power_mw);
        tmax = std::max(tmax, t.temp_die_mc);
        for (std::uint32_t e = 0; e < kEngines; ++e)
            umax.at(e) = std::max(umax.at(e), t.engine_util[e]);
        energy_monotonic = energy_monotonic && t.energy_uj >= energy;
        energy = t.energy_uj;
    }, seen_all, 6);
    const drm_hpu_info_telemetry busy = telemetry(c.fd());
    INFO("under load: max " << pmax << " mW, die max " << tmax << " m°C, util max " << umax[0] << " "
                            << umax[1] << " " << umax[2] << " " << umax[3] << " " << umax[4] << " " << umax[5]
                            << " " << umax[6] << " " << umax[7]);
    std::printf("TELEMETRY idle %u mW %d mC; load max %u mW %d mC; util max %u %u %u %u %u %u %u %u (1/100 %%)\n",
                idle.power_mw, idle.temp_die_mc, pmax, tmax, umax[0], umax[1], umax[2], umax[3], umax[4], umax[5],
                umax[6], umax[7]);
    CHECK(energy_monotonic);
    CHECK(pmax >= idle.power_mw + 30000);
    CHECK(tmax >= idle.temp_die_mc + 3000);
    for (std::uint32_t e = 0; e < kEngines; ++e) {
        INFO("engine " << e);
        CHECK(busy.engine_busy_ns[e] > idle.engine_busy_ns[e]);
        CHECK(umax.at(e) >= 1000);
    }
    CHECK(*std::max_element(umax.begin(), umax.end()) >= 5000);

    // And back: power at once, temperature with the 2 s time constant.
    CHECK(eventually([&] { return telemetry(c.fd()).power_mw < idle.power_mw + 10000; }, 10000));
    CHECK(eventually([&] { return telemetry(c.fd()).temp_die_mc < tmax - 3000; }, 20000));
    CHECK(eventually(
        [&] {
            const auto t = telemetry(c.fd());
            return std::all_of(std::begin(t.engine_util), std::end(t.engine_util),
                               [](std::uint32_t u) { return u == 0; });
        },
        5000));
    CHECK(telemetry(c.fd()).energy_uj >= energy);
}

// A function level reset is a power-on reset: the device's BUSY_NS counters
// start again from 0. The driver's busy time must go on from where it was
// and utilisation must show the load at once, not stand still until the
// counters pass their old values.
TEST_CASE("after an FLR with the driver bound, busy time goes on and utilisation shows the load", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string dir = sysfs_dir(node);
    const auto trim = [](std::string t) {
        while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
            t.pop_back();
        return t;
    };
    const std::string methods = trim(read_text(dir + "/reset_method").value_or(""));
    REQUIRE(methods.find("flr") != std::string::npos);

    std::uint64_t before = 0;
    std::uint64_t t_before = 0;
    {
        Ctx c(node);
        Load load(c, 2);
        // Busy time to lose: longer than the load after the reset.
        load.run_for(3000, [] {});
        before = telemetry(c.fd()).engine_busy_ns[0];
        t_before = now_ns();
    }
    INFO("engine 0 busy before the FLR: " << before << " ns");
    REQUIRE(before >= 2000000000ULL);

    REQUIRE(write_text(dir + "/reset_method", "flr") == 0);
    const int reset = write_text(dir + "/reset", "1");
    REQUIRE(write_text(dir + "/reset_method", methods) == 0);
    REQUIRE(reset == 0);

    Ctx c(node);
    CHECK(telemetry(c.fd()).engine_busy_ns[0] >= before);
    Load load(c, 2);
    std::uint32_t umax = 0;
    std::uint64_t low = std::numeric_limits<std::uint64_t>::max();
    load.run_for(1500, [&] {
        const drm_hpu_info_telemetry t = telemetry(c.fd());
        umax = std::max(umax, t.engine_util[0]);
        low = std::min<std::uint64_t>(low, t.engine_busy_ns[0]);
    });
    const std::uint64_t after = telemetry(c.fd()).engine_busy_ns[0];
    const std::uint64_t elapsed = now_ns() - t_before;
    INFO("after: " << after << " ns, lowest read meanwhile " << low << " ns, utilisation max " << umax << ", "
                   << elapsed << " ns since the first read");
    CHECK(low >= before);
    CHECK(after >= before + 500000000ULL);
    // Nothing counted twice: an engine is busy for at most the time that
    // passed (device time follows the host's clock, as the guest's does).
    CHECK(after - before <= elapsed + elapsed / 10 + 100000000ULL);
    CHECK(umax >= 5000);
}

TEST_CASE("temp1_max below the die temperature: alarm, THERMAL event, throttling", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string dir = sysfs_dir(node);
    const std::string hw = hwmon_dir(node);
    Ctx c(node);
    wait_cool(hw);

    const long long orig = must(hw + "/temp1_max");
    const long long die = must(hw + "/temp1_input");
    const long long cmax = must(dir + "/clk_core_max_mhz");
    REQUIRE(die > 31000);
    const std::uint64_t ev0 = errors_now(node).thermal_events;

    REQUIRE(write_text(hw + "/temp1_max", "30000") == 0);
    CHECK(must(hw + "/temp1_max") == 30000);
    CHECK(telemetry(c.fd()).temp_max_mc == 30000);
    CHECK(eventually([&] { return must(hw + "/temp1_max_alarm") == 1; }, 5000));
    CHECK(eventually([&] { return errors_now(node).thermal_events == ev0 + 1; }, 5000));
    CHECK(eventually([&] { return must(dir + "/clk_core_mhz") < cmax; }, 5000));
    const drm_hpu_info_telemetry t = telemetry(c.fd());
    CHECK((t.throttle & DRM_HPU_THROTTLE_THERMAL) != 0);
    CHECK((t.alarms & DRM_HPU_ALARM_TEMP_MAX) != 0);
    CHECK(t.clk_core_mhz < t.clk_core_max_mhz);

    REQUIRE(write_text(hw + "/temp1_max", std::to_string(orig)) == 0);
    CHECK(must(hw + "/temp1_max") == orig);
    CHECK(eventually([&] { return must(hw + "/temp1_max_alarm") == 0; }, 5000));
    CHECK(eventually([&] { return must(dir + "/clk_core_mhz") == cmax; }, 5000));
    CHECK(errors_now(node).thermal_events == ev0 + 1);

}

TEST_CASE("temp2_max below the HBM temperature: alarm only", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string hw = hwmon_dir(node);
    wait_cool(hw);
    const std::uint64_t ev0 = errors_now(node).thermal_events;
    const long long horig = must(hw + "/temp2_max");
    const long long hbm = must(hw + "/temp2_input");
    // The lowest HBM_TEMP_MAX the firmware accepts (firmware/hpu-h1.fwsrc).
    constexpr long long kHbmMaxMin = 30000;
    CHECK(write_text(hw + "/temp2_max", std::to_string(kHbmMaxMin - 1)) == EINVAL);
    // Just below the HBM temperature, as close as the range allows; the
    // HBM only cools to ambient + 60 % of the idle rise (30.4 C), so the
    // limit stays below it while the alarm is checked.
    const long long limit = std::max(kHbmMaxMin, hbm - 1000);
    INFO("HBM " << hbm << " m°C, limit " << limit);
    REQUIRE(hbm > limit);
    REQUIRE(write_text(hw + "/temp2_max", std::to_string(limit)) == 0);
    CHECK(must(hw + "/temp2_max") == limit);
    CHECK(eventually([&] { return must(hw + "/temp2_max_alarm") == 1; }, 5000));
    REQUIRE(write_text(hw + "/temp2_max", std::to_string(horig)) == 0);
    CHECK(eventually([&] { return must(hw + "/temp2_max_alarm") == 0; }, 5000));
    CHECK(must(hw + "/temp2_max") == horig);
    CHECK(errors_now(node).thermal_events == ev0);
}

TEST_CASE("temperature limits outside the firmware's range: EINVAL", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string hw = hwmon_dir(node);
    const long long t1 = must(hw + "/temp1_max");
    const long long t2 = must(hw + "/temp2_max");
    for (const char *bad : {"-1000", "29999", "100001", "1000000", "abc"}) {
        INFO("value " << bad);
        CHECK(write_text(hw + "/temp1_max", bad) == EINVAL);
        CHECK(write_text(hw + "/temp2_max", bad) == EINVAL);
    }
    CHECK(must(hw + "/temp1_max") == t1);
    CHECK(must(hw + "/temp2_max") == t2);
}

TEST_CASE("power1_cap values beyond 32-bit mW and negative ones: EINVAL", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string hw = hwmon_dir(node);
    const long long cap = must(hw + "/power1_cap");
    const Klog klog("power1_cap overflow");
    for (const char *bad : {"9223372036854775807", "-1", "-9223372036854775808", "4294967296000"}) {
        INFO("value " << bad);
        CHECK(write_text(hw + "/power1_cap", bad) == EINVAL);
    }
    for (const char *bad : {"9223372036854775807", "4294967296"}) {
        INFO("temperature " << bad);
        CHECK(write_text(hw + "/temp1_max", bad) == EINVAL);
        CHECK(write_text(hw + "/temp2_max", bad) == EINVAL);
    }
    CHECK(must(hw + "/power1_cap") == cap);
    check_no_kernel_reports(klog.since());
}

TEST_CASE("power1_cap below the board power: alarm, POWER event, throttling", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string dir = sysfs_dir(node);
    const std::string hw = hwmon_dir(node);
    Ctx c(node);
    wait_cool(hw);

    const long long orig = must(hw + "/power1_cap");
    const long long cap_min = must(hw + "/power1_cap_min");
    const long long cap_max = must(hw + "/power1_cap_max");
    const long long cmax = must(dir + "/clk_core_max_mhz");
    const long long p = must(hw + "/power1_input");
    INFO("power " << p << " uW, cap " << orig << " in [" << cap_min << ", " << cap_max << "]");
    REQUIRE(cap_min < p);
    const std::uint64_t ev0 = errors_now(node).power_events;

    REQUIRE(write_text(hw + "/power1_cap", std::to_string(cap_min)) == 0);
    CHECK(must(hw + "/power1_cap") == cap_min);
    CHECK(static_cast<long long>(telemetry(c.fd()).power_cap_mw) * 1000 == cap_min);
    CHECK(eventually([&] { return errors_now(node).power_events >= ev0 + 1; }, 5000));
    CHECK(eventually([&] { return must(dir + "/clk_core_mhz") < cmax; }, 5000));
    // The clock settles around the cap, so the alarm comes and goes.
    CHECK(eventually([&] { return must(hw + "/power1_cap_alarm") == 1; }, 5000));
    CHECK(eventually([&] { return (telemetry(c.fd()).throttle & DRM_HPU_THROTTLE_POWER) != 0; }, 5000));

    REQUIRE(write_text(hw + "/power1_cap", std::to_string(orig)) == 0);
    CHECK(must(hw + "/power1_cap") == orig);
    CHECK(eventually([&] { return must(hw + "/power1_cap_alarm") == 0; }, 5000));
    CHECK(eventually([&] { return must(dir + "/clk_core_mhz") == cmax; }, 5000));
    CHECK(telemetry(c.fd()).throttle == 0);

    // Outside [cap_min, cap_max]: EINVAL, nothing changes.
    for (const long long bad : {cap_min - 1000000, cap_max + 1000000, -1LL}) {
        INFO("power1_cap " << bad);
        CHECK(write_text(hw + "/power1_cap", std::to_string(bad)) == EINVAL);
    }
    CHECK(must(hw + "/power1_cap") == orig);
}

TEST_CASE("limits are root's: a non-root write fails EACCES", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string hw = hwmon_dir(node);
    const long long tmax = must(hw + "/temp1_max");
    const long long cap = must(hw + "/power1_cap");

    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int rc = 0;
        if (::setgid(65534) != 0 || ::setuid(65534) != 0)
            ::_exit(10);
        if (write_text(hw + "/temp1_max", "50000") != EACCES)
            rc |= 1;
        if (write_text(hw + "/temp2_max", "50000") != EACCES)
            rc |= 2;
        if (write_text(hw + "/power1_cap", "100000000") != EACCES)
            rc |= 4;
        // Reading is for everyone.
        if (!read_ll(hw + "/temp1_input") || !read_ll(hw + "/power1_cap"))
            rc |= 8;
        ::_exit(rc);
    }
    int st = 0;
    REQUIRE(::waitpid(pid, &st, 0) == pid);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
    CHECK(must(hw + "/temp1_max") == tmax);
    CHECK(must(hw + "/power1_cap") == cap);
}

TEST_CASE("fdinfo: client id, memory and engine time per file", "[telemetry]")
{
    const std::string node = vmt::node(0);

    // The other process: 128 MiB of HBM, no jobs. It reports its fd, then
    // its own fdinfo when told to, then waits to be told to exit.
    std::array<int, 2> up{};
    std::array<int, 2> down{};
    REQUIRE(::pipe(up.data()) == 0);
    REQUIRE(::pipe(down.data()) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(up[0]);
        ::close(down[1]);
        const int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
        drm_hpu_bo_create bc{};
        bc.size = 128 * MiB;
        bc.flags = DRM_HPU_BO_HBM;
        const int ok = fd >= 0 && xioctl(fd, DRM_IOCTL_HPU_BO_CREATE, &bc) == 0;
        const int msg = ok ? fd : -1;
        if (::write(up[1], &msg, sizeof(msg)) != sizeof(msg))
            ::_exit(1);
        char c = 0;
        while (::read(down[0], &c, 1) == 1 && c == 'r') {
            const auto t = read_text("/proc/self/fdinfo/" + std::to_string(fd)).value_or("");
            const auto len = static_cast<std::uint32_t>(t.size());
            if (::write(up[1], &len, sizeof(len)) != sizeof(len) ||
                ::write(up[1], t.data(), len) != static_cast<ssize_t>(len))
                ::_exit(1);
        }
        ::_exit(0);
    }
    ::close(up[1]);
    ::close(down[0]);
    int child_fd = -1;
    REQUIRE(::read(up[0], &child_fd, sizeof(child_fd)) == sizeof(child_fd));
    REQUIRE(child_fd >= 0);
    const auto child_own = [&] {
        std::map<std::string, std::string> kv;
        const char r = 'r';
        REQUIRE(::write(down[1], &r, 1) == 1);
        std::uint32_t len = 0;
        REQUIRE(::read(up[0], &len, sizeof(len)) == sizeof(len));
        std::string t(len, '\0');
        std::size_t got = 0;
        while (got < len) {
            const ssize_t n = ::read(up[0], t.data() + got, len - got);
            REQUIRE(n > 0);
            got += static_cast<std::size_t>(n);
        }
        std::istringstream in(t);
        std::string line;
        while (std::getline(in, line)) {
            const auto colon = line.find(':');
            if (colon == std::string::npos)
                continue;
            std::string v = line.substr(colon + 1);
            v.erase(0, v.find_first_not_of(" \t"));
            kv[line.substr(0, colon)] = v;
        }
        return kv;
    };

    // This process: 64 MiB of HBM, host buffers, copies on engines 0 and 1.
    Ctx c(node);
    std::uint32_t h = 0;
    REQUIRE(c.bo_create(64 * MiB, DRM_HPU_BO_HBM, h) == 0);
    const auto host = c.host_buf(1 * MiB);
    Load load(c, 2, 8 * MiB);
    const std::uint64_t t0 = now_ns();
    load.run_for(1000, [] {});
    const std::uint64_t wall1 = now_ns() - t0;

    const auto mine = fdinfo(::getpid(), c.fd());
    const auto other = child_own();
    const auto other_proc = fdinfo(pid, child_fd);
    INFO("mine: dma0 " << mine.at("drm-engine-dma0") << ", hbm " << mine.at("drm-total-hbm") << ", host "
                       << mine.at("drm-total-host"));

    CHECK(mine.at("drm-driver") == "hpu");
    CHECK(other.at("drm-driver") == "hpu");
    CHECK(mine.count("drm-client-id") == 1);
    CHECK(mine.at("drm-client-id") != other.at("drm-client-id"));
    CHECK(other.at("drm-client-id") == other_proc.at("drm-client-id"));
    CHECK(mine.at("drm-pdev") == other.at("drm-pdev"));

    // HBM: this file's 64 MiB plus the load's 2 x 2 x 8 MiB; the other's 128.
    CHECK(fd_value(mine, "drm-total-hbm") == 64 * MiB + 32 * MiB);
    CHECK(fd_value(mine, "drm-resident-hbm") == 64 * MiB + 32 * MiB);
    CHECK(fd_value(other, "drm-total-hbm") == 128 * MiB);
    CHECK(fd_value(other, "drm-resident-hbm") == 128 * MiB);
    CHECK(fd_value(mine, "drm-total-host") >= host.size);
    CHECK(fd_value(mine, "drm-resident-host") >= host.size);
    CHECK(fd_value(other, "drm-total-host") == 0);

    // Engine time: only for the engines this file used, at most the wall time.
    const std::uint64_t dma0 = fd_value(mine, "drm-engine-dma0");
    const std::uint64_t dma1 = fd_value(mine, "drm-engine-dma1");
    CHECK(dma0 > 0);
    CHECK(dma1 > 0);
    CHECK(dma0 <= wall1 + 100000000);
    for (std::uint32_t e = 0; e < kEngines; ++e) {
        const std::string key = "drm-engine-dma" + std::to_string(e);
        INFO(key);
        CHECK(fd_value(other, key) == 0);
        if (e >= 2)
            CHECK(fd_value(mine, key) == 0);
    }
    for (const char *key : {"drm-engine-tpc", "drm-engine-mme0", "drm-engine-mme1"}) {
        INFO(key);
        CHECK(fd_value(mine, key) == 0);
        CHECK(fd_value(other, key) == 0);
    }

    // More jobs: this file's time grows, the other's stays zero.
    load.run_for(500, [] {});
    const auto mine2 = fdinfo(::getpid(), c.fd());
    const auto other2 = child_own();
    CHECK(fd_value(mine2, "drm-engine-dma0") > dma0);
    CHECK(fd_value(mine2, "drm-engine-dma1") > dma1);
    CHECK(fd_value(other2, "drm-engine-dma0") == 0);
    CHECK(fd_value(other2, "drm-total-hbm") == 128 * MiB);

    // Closing a buffer handle takes it out of this file's memory.
    REQUIRE(c.gem_close(h) == 0);
    CHECK(fd_value(fdinfo(::getpid(), c.fd()), "drm-total-hbm") == 32 * MiB);

    ::close(down[1]);
    int st = 0;
    REQUIRE(::waitpid(pid, &st, 0) == pid);
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
    ::close(up[0]);
}

TEST_CASE("a hard reset: no zeros while the firmware reboots, default limits after", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string dir = sysfs_dir(node);
    const std::string hw = hwmon_dir(node);
    const long long def = must(hw + "/temp1_max");
    const std::uint64_t hard0 = errors_now(node).hard_resets;
    REQUIRE(write_text(hw + "/temp1_max", std::to_string(def - 5000)) == 0);
    REQUIRE(must(hw + "/temp1_max") == def - 5000);

    std::atomic<bool> done{false};
    int reset_err = -1;
    std::thread reset([&] {
        reset_err = write_text(dir + "/hpu_reset", "hard");
        done = true;
    });
    // Meanwhile: a sensor read gives a believable value, ENODATA (firmware
    // not running) or, never seen here, ENODEV (device unusable).
    std::map<int, int> errs;
    long long reads = 0;
    long long zeros = 0;
    bool in_reset = false;
    while (!done) {
        const auto [v, e] = read_raw(hw + "/temp1_input");
        ++reads;
        if (e != 0) {
            ++errs[e];
        } else if (v < 20000) {
            ++zeros;
        }
        in_reset = in_reset || read_text(dir + "/status") == "in reset\n";
    }
    reset.join();
    std::string seen;
    for (const auto &[e, n] : errs)
        seen += std::to_string(e) + "x" + std::to_string(n) + " ";
    INFO(reads << " reads during the reset; errors " << seen << "; values below 20 C: " << zeros);
    REQUIRE(reset_err == 0);
    CHECK(zeros == 0);
    for (const auto &[e, n] : errs)
        CHECK(e == ENODATA);
    // The reads overlapped the reset: the status said so, or a sensor read
    // found the firmware down (a slow guest may fit only a read or two in
    // the reset, each waiting for the reset lock).
    CHECK((in_reset || errs.count(ENODATA) != 0U));
    CHECK(read_text(dir + "/status") == "operational\n");
    CHECK(errors_now(node).hard_resets == hard0 + 1);

    // The firmware rebooted with its defaults: the driver's cache follows.
    CHECK(eventually([&] { return read_raw(hw + "/temp1_input").second == 0; }, 5000));
    CHECK(must(hw + "/temp1_max") == def);
    Ctx c(node);
    CHECK(telemetry(c.fd()).temp_max_mc == def);
    CHECK(must(hw + "/temp1_input") >= 20000);
    CHECK(must(dir + "/clk_core_mhz") > 0);
}

TEST_CASE("a limit write racing with a hard reset: applied or failed, never applied after a failure", "[telemetry]")
{
    const std::string node = vmt::node(0);
    const std::string dir = sysfs_dir(node);
    const std::string hw = hwmon_dir(node);
    const long long def = must(hw + "/temp1_max");
    const Klog klog("limit write vs hard reset");

    for (int round = 0; round < 3; ++round) {
        INFO("round " << round);
        // Every write has its own value, so that the final one tells which
        // write the firmware took last.
        std::vector<std::pair<long long, int>> writes;
        std::atomic<bool> done{false};
        int reset_err = -1;
        std::thread reset([&] {
            ::usleep(5000);
            reset_err = write_text(dir + "/hpu_reset", "hard");
            done = true;
        });
        for (long long v = 40000 + round * 1000; !done && v < 40000 + (round + 1) * 1000; ++v) {
            writes.emplace_back(v, write_text(hw + "/temp1_max", std::to_string(v)));
            ::usleep(2000);
        }
        reset.join();
        REQUIRE(reset_err == 0);
        REQUIRE(eventually([&] { return read_raw(hw + "/temp1_max").second == 0; }, 5000));
        const long long now = must(hw + "/temp1_max");

        long long last_ok = def;
        std::map<int, int> errs;
        for (const auto &[v, e] : writes) {
            if (e == 0) {
                last_ok = v;
            } else {
                ++errs[e];
            }
        }
        std::string seen;
        for (const auto &[e, n] : errs)
            seen += std::to_string(e) + "x" + std::to_string(n) + " ";
        INFO(writes.size() << " writes, errors " << seen << "; last successful " << last_ok << ", limit now " << now);
        // A write that failed is not applied, not even later: the limit is
        // the default of the rebooted firmware, or the last write that
        // succeeded after its boot.
        CHECK((now == def || now == last_ok));
        // The mailbox never spans the reset: no timeout, only "no data"
        // while the firmware is not running.
        for (const auto &[e, n] : errs)
            CHECK(e == ENODATA);
    }
    REQUIRE(write_text(hw + "/temp1_max", std::to_string(def)) == 0);
    CHECK(must(hw + "/temp1_max") == def);
    check_no_kernel_reports(klog.since());
}
