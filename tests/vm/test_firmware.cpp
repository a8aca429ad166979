// SPDX-License-Identifier: MIT
// Firmware boot, refusals, flash and health (spec version 4), tag [firmware].
// Destructive: devices are unbound and bound again with other images, the
// flash of device 0 is rewritten and hard resets happen, so the suite runs
// this group on its own (tests/vm/guest-suite.sh), before the hard-reset
// group. Mechanism: the test writes a directory of its own to the firmware
// loader's search path (/sys/module/firmware_class/parameters/path) and
// rebinds the device through /sys/bus/pci/drivers/hpu/{unbind,bind};
// images come from the packer (hpu-fwpack) run in the guest. Each refusal
// test checks the kernel log line, sysfs fw_status/fw_boot_error, that the
// device is unusable (no accel node, ioctls of an old file and the reset
// action fail with ENODEV), then restores the good image and checks that
// the device works again.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <regex>
#include <string>
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

const char *const kFwPath = "/sys/module/firmware_class/parameters/path";
const char *const kDrv = "/sys/bus/pci/drivers/hpu";
const char *const kWork = "/tmp/hpu-fwtest";

std::string trim(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

// Runs a shell command; returns its exit status, output in `out`.
int sh(const std::string &cmd, std::string *out = nullptr)
{
    std::string all;
    FILE *p = ::popen((cmd + " 2>&1").c_str(), "r");
    if (!p)
        return -1;
    char buf[512];
    while (std::fgets(buf, sizeof(buf), p))
        all += buf;
    const int st = ::pclose(p);
    if (out)
        *out = all;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// PCI addresses of the devices the driver has bound, sorted.
std::vector<std::string> bound_bdfs()
{
    std::vector<std::string> v;
    if (DIR *d = ::opendir(kDrv)) {
        while (const dirent *e = ::readdir(d)) {
            if (std::strncmp(e->d_name, "0000:", 5) == 0) {
                v.emplace_back(e->d_name);
            }
        }
        ::closedir(d);
    }
    std::sort(v.begin(), v.end());
    return v;
}

std::string pci(const std::string &bdf) { return "/sys/bus/pci/devices/" + bdf; }

std::string attr(const std::string &bdf, const std::string &name)
{
    return trim(read_text(pci(bdf) + "/" + name).value_or("<unreadable>"));
}

// The accel node of a bound device, or "" when it has none.
std::string accel_node(const std::string &bdf)
{
    std::string node;
    if (DIR *d = ::opendir((pci(bdf) + "/accel").c_str())) {
        while (const dirent *e = ::readdir(d)) {
            if (std::strncmp(e->d_name, "accel", 5) == 0) {
                node = std::string("/dev/accel/") + e->d_name;
            }
        }
        ::closedir(d);
    }
    return node;
}

struct Tools {
    std::string fwpack = HPU_FWPACK_DEFAULT;
    std::string src = std::string(HPU_SOURCE_DIR) + "/firmware/hpu-h1.fwsrc";
    std::string key = std::string(HPU_SOURCE_DIR) + "/firmware/keys/hpu-dev-ed25519.key";
};

// Packs an image into <dir>/hpu/hpu-h1-fw.bin (or `name`); returns its path.
std::string pack(const std::string &dir, const std::string &opts, const std::string &name = "hpu/hpu-h1-fw.bin")
{
    const Tools t;
    std::string out = dir + "/" + name;
    sh("mkdir -p $(dirname " + out + ")");
    std::string log;
    const int rc = sh(t.fwpack + " --source " + t.src + " --out " + out + " " + opts, &log);
    INFO("hpu-fwpack " << opts << ": " << log);
    REQUIRE(rc == 0);
    return out;
}

std::string good_opts() { return "--key " + Tools().key + " --version 1.0.0"; }

// Kernel log since the marker this test wrote.
struct Klog {
    std::string marker;
    explicit Klog(const std::string &what)
    {
        static int n = 0;
        marker = "hpu-fwtest mark " + std::to_string(::getpid()) + "." + std::to_string(++n) + " " + what;
        REQUIRE(write_text("/dev/kmsg", "<6>" + marker + "\n") == 0);
    }
    [[nodiscard]] std::string since() const
    {
        std::string all;
        sh("dmesg", &all);
        const auto p = all.rfind(marker);
        INFO("kernel log marker \"" << marker << "\" not found in dmesg");
        REQUIRE(p != std::string::npos);
        return all.substr(p);
    }
};

// The firmware search path, restored (and the good image back in place)
// when the test ends, whatever happens.
struct FwPath {
    std::string saved;
    std::vector<std::string> rebind;
    FwPath() : saved(trim(read_text(kFwPath).value_or(""))) {}
    FwPath(const FwPath &) = delete;
    FwPath &operator=(const FwPath &) = delete;
    FwPath(FwPath &&) = delete;
    FwPath &operator=(FwPath &&) = delete;
    void set(const std::string &dir) const { REQUIRE(write_text(kFwPath, dir) == 0); }
    ~FwPath()
    {
        write_text(kFwPath, saved);
        for (const auto &b : rebind) {
            write_text(std::string(kDrv) + "/unbind", b);
            write_text(std::string(kDrv) + "/bind", b);
        }
    }
};

// Unbinds and binds a device; the probe boots the firmware again.
void rebind(const std::string &bdf)
{
    REQUIRE(write_text(std::string(kDrv) + "/unbind", bdf) == 0);
    const int e = write_text(std::string(kDrv) + "/bind", bdf);
    INFO("bind " << bdf << ": " << std::strerror(e));
    REQUIRE(e == 0);
}

int info_fw(int fd, drm_hpu_info_firmware &out)
{
    drm_hpu_info a{};
    a.op = DRM_HPU_INFO_FIRMWARE;
    a.size = sizeof(out);
    a.ptr = reinterpret_cast<std::uint64_t>(&out); // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
    return xioctl(fd, DRM_IOCTL_HPU_INFO, &a);
}

// The device works: running firmware, an accel node, INFO and a buffer.
void check_works(const std::string &bdf, const std::string &version = "1.0.0")
{
    CHECK(attr(bdf, "fw_status") == "running");
    CHECK(attr(bdf, "fw_version") == version);
    CHECK(attr(bdf, "fw_boot_error") == "none");
    const std::string node = accel_node(bdf);
    REQUIRE(!node.empty());
    Ctx c(node);
    drm_hpu_info_firmware fw{};
    REQUIRE(info_fw(c.fd(), fw) == 0);
    CHECK(fw.state == DRM_HPU_FW_STATE_RUNNING);
    CHECK(fw.running_version != 0);
    CHECK(fw.boots >= 1);
    CHECK(std::string(fw.running_build).find("hpu-h1-fw") != std::string::npos);
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    const std::uint64_t hbm = c.hbm_buf(kHbmPage);
    CHECK(c.run(q, Cb().lin_dma(hbm, hbm + kHbmPage / 2, 4096)) == 1);
}

// Boots `bdf` from `dir` and checks the refusal: log line, sysfs, the
// device unusable; then restores the good image and checks it works.
void refused(const std::string &bdf, const std::string &dir, const std::string &code, const std::string &log_re)
{
    FwPath path;
    path.rebind.push_back(bdf);
    const std::string node = accel_node(bdf);
    REQUIRE(!node.empty());
    const int old_fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    REQUIRE(old_fd >= 0);

    const Klog klog("refusal " + code);
    path.set(dir);
    rebind(bdf);

    const std::string log = klog.since();
    INFO("kernel log since the rebind:\n" << log);
    CHECK(std::regex_search(log, std::regex(log_re)));
    CHECK(log.find("no firmware running: the device is unusable") != std::string::npos);
    CHECK(attr(bdf, "fw_status") == "failed");
    CHECK(attr(bdf, "fw_boot_error") == code);
    CHECK(attr(bdf, "fw_version") == "none");
    CHECK(attr(bdf, "fw_build").empty());

    // Unusable: bound, but no accel node; the old file's ioctls, INFO
    // included, and the operator reset fail with ENODEV.
    CHECK(::access((std::string(kDrv) + "/" + bdf).c_str(), F_OK) == 0);
    CHECK(accel_node(bdf).empty());
    drm_hpu_info_firmware fw{};
    CHECK(info_fw(old_fd, fw) == ENODEV);
    ::close(old_fd);
    CHECK(write_text(pci(bdf) + "/hpu_reset", "hard") == ENODEV);

    // The good image back: the device works again.
    path.set(path.saved);
    rebind(bdf);
    path.rebind.clear();
    check_works(bdf);
}

std::string case_dir(const std::string &name)
{
    std::string d = std::string(kWork) + "/" + name;
    sh("rm -rf " + d + " && mkdir -p " + d + "/hpu");
    return d;
}

std::string dev0()
{
    const auto b = bound_bdfs();
    REQUIRE(!b.empty());
    return b[0];
}

// The stored (flash) version must be empty for the file to be booted. The
// flash is empty at power-on and these tests run before the flash test:
// anything else is a failure, not a reason to skip.
void require_empty_flash(const std::string &bdf)
{
    INFO("the flash of " << bdf << " must be empty (it is at power-on), so that the image file is booted");
    REQUIRE(attr(bdf, "fw_stored_version") == "none");
}

std::string devlink(const std::string &args)
{
    std::string out;
    sh("devlink " + args, &out);
    return out;
}

long reporter_errors(const std::string &bdf, const std::string &name)
{
    const std::string out = devlink("health show pci/" + bdf + " reporter " + name);
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(R"(error (\d+))")))
        FAIL("devlink health show: " << out);
    return std::stol(m[1]);
}

} // namespace

TEST_CASE("firmware: the devices boot the signed image and report it", "[firmware]")
{
    const auto bdfs = bound_bdfs();
    REQUIRE(!bdfs.empty());
    for (const auto &bdf : bdfs) {
        INFO(bdf);
        CHECK(attr(bdf, "fw_status") == "running");
        CHECK(attr(bdf, "fw_version") != "none");
        CHECK(attr(bdf, "fw_boot_error") == "none");
        CHECK(attr(bdf, "fw_build").find("hpu-h1-fw") != std::string::npos);
        const std::string minv = attr(bdf, "fw_min_version");
        CHECK((minv == "none" || std::regex_match(minv, std::regex(R"(\d+\.\d+\.\d+)"))));
        check_works(bdf, attr(bdf, "fw_version"));
    }
}

TEST_CASE("firmware: an unsigned image is refused (UNSIGNED)", "[firmware]")
{
    const std::string bdf = dev0();
    require_empty_flash(bdf);
    const std::string d = case_dir("unsigned");
    pack(d, "--no-sign --version 1.0.0");
    refused(bdf, d, "UNSIGNED",
            R"(firmware image hpu/hpu-h1-fw\.bin refused: image is not signed \(UNSIGNED\); install a signed image)");
}

TEST_CASE("firmware: a corrupted image is refused (CORRUPT)", "[firmware]")
{
    const std::string bdf = dev0();
    require_empty_flash(bdf);
    const std::string d = case_dir("corrupt");
    const std::string img = pack(d, good_opts());
    // Flip one byte of the section data (after the header and table).
    std::fstream f(img, std::ios::in | std::ios::out | std::ios::binary);
    REQUIRE(f);
    f.seekg(300);
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x5a);
    f.seekp(300);
    f.write(&c, 1);
    f.close();
    refused(bdf, d, "CORRUPT",
            R"(firmware image hpu/hpu-h1-fw\.bin refused: checksum does not match: the image is corrupted \(CORRUPT\); reinstall the image)");
}

TEST_CASE("firmware: a truncated image is refused (TRUNCATED)", "[firmware]")
{
    const std::string bdf = dev0();
    require_empty_flash(bdf);
    const std::string d = case_dir("truncated");
    const std::string img = pack(d, good_opts());
    struct stat st {};
    REQUIRE(::stat(img.c_str(), &st) == 0);
    // Drop half of the signature trailer.
    REQUIRE(::truncate(img.c_str(), st.st_size - 48) == 0);
    refused(bdf, d, "TRUNCATED",
            R"(firmware image hpu/hpu-h1-fw\.bin refused: image is shorter than its header says \(TRUNCATED\); reinstall the complete image)");
}

TEST_CASE("firmware: an image signed with another key is refused (BAD_SIGNATURE)", "[firmware]")
{
    const std::string bdf = dev0();
    require_empty_flash(bdf);
    const std::string d = case_dir("badsig");
    const std::string key = d + "/other.key";
    REQUIRE(sh(Tools().fwpack + " --gen-key " + key) == 0);
    pack(d, "--key " + key + " --version 1.0.0");
    refused(bdf, d, "BAD_SIGNATURE",
            R"(firmware image hpu/hpu-h1-fw\.bin refused: signature does not verify with the device key \(BAD_SIGNATURE\); install an image signed for this device)");
}

TEST_CASE("firmware: an image older than the device's minimum is refused (TOO_OLD)", "[firmware]")
{
    std::string bdf;
    for (const auto &b : bound_bdfs()) {
        if (attr(b, "fw_min_version") != "none") {
            bdf = b;
        }
    }
    // tests/run-tests.py gives device B fw-min-version: without it this
    // refusal would go untested, so that is a failure, not a skip.
    INFO("no device has an anti-rollback minimum (QEMU property fw-min-version)");
    REQUIRE(!bdf.empty());
    require_empty_flash(bdf);
    const std::string d = case_dir("tooold");
    pack(d, "--key " + Tools().key + " --version 0.9.0");
    const std::string minv = attr(bdf, "fw_min_version");
    refused(bdf, d, "TOO_OLD",
            R"(firmware image hpu/hpu-h1-fw\.bin refused: version 0\.9\.0 is below the device's minimum )" +
                std::regex_replace(minv, std::regex(R"(\.)"), "\\.") + R"( \(TOO_OLD\); install version )");
}

TEST_CASE("firmware: a missing image with an empty flash leaves the device unusable (NO_IMAGE)", "[firmware]")
{
    const std::string bdf = dev0();
    require_empty_flash(bdf);
    const std::string d = case_dir("missing");
    refused(bdf, d, "NO_IMAGE",
            R"(no firmware: hpu/hpu-h1-fw\.bin cannot be loaded \(-2\) and the flash is empty \(NO_IMAGE\); install hpu/hpu-h1-fw\.bin)");
}

TEST_CASE("firmware: devlink dev info shows the serial, the chip and the versions", "[firmware]")
{
    const std::string bdf = dev0();
    const std::string out = devlink("dev info pci/" + bdf);
    INFO(out);
    CHECK(out.find("driver hpu") != std::string::npos);
    CHECK(out.find("serial_number " + attr(bdf, "serial")) != std::string::npos);
    CHECK(out.find("board.id H1") != std::string::npos);
    CHECK(out.find("asic.id 0x1") != std::string::npos);
    CHECK(std::regex_search(out, std::regex("running:[^]*fw\\.mgmt " + attr(bdf, "fw_version"))));
    CHECK(out.find("fw.mgmt.build " + attr(bdf, "fw_build")) != std::string::npos);
    if (attr(bdf, "fw_stored_version") == "none")
        CHECK(out.find("stored:") == std::string::npos);
}

TEST_CASE("firmware: devlink health lists the fw and memory reporters; fw counts a fatal error", "[firmware]")
{
    const std::string bdf = dev0();
    // This iproute2 wants a reporter name with a device: list them all.
    const std::string all = devlink("health show");
    INFO(all);
    const auto at = all.find("pci/" + bdf + ":");
    REQUIRE(at != std::string::npos);
    const std::string out = all.substr(at, all.find("pci/", at + 4) - at);
    CHECK(out.find("reporter fw") != std::string::npos);
    CHECK(out.find("reporter memory") != std::string::npos);

    const long before = reporter_errors(bdf, "fw");
    const auto hard0 = read_u64(pci(bdf) + "/hard_resets").value_or(0);
    inject(accel_node(bdf), "inject_fw", "fatal");
    // The hard reset boots the firmware again; the report follows it.
    const std::uint64_t t0 = now_ns();
    while ((read_u64(pci(bdf) + "/hard_resets").value_or(0) == hard0 || reporter_errors(bdf, "fw") == before) &&
           ms_since(t0) < 10000)
        ::usleep(50000);
    CHECK(read_u64(pci(bdf) + "/hard_resets").value_or(0) == hard0 + 1);
    CHECK(reporter_errors(bdf, "fw") == before + 1);
    const std::string diag = devlink("health diagnose pci/" + bdf + " reporter fw");
    INFO(diag);
    CHECK(diag.find("state: running") != std::string::npos);
    CHECK(diag.find("fw_fatal:") != std::string::npos);
    CHECK(diag.find("last_failure:") != std::string::npos);
    CHECK(diag.find("reason: firmware fatal error cpu_status: 3 fw_error: 0x0000dead") != std::string::npos);
    const std::string show = devlink("health show pci/" + bdf + " reporter fw");
    CHECK(show.find("state healthy") != std::string::npos);
    check_works(bdf, attr(bdf, "fw_version"));
}

TEST_CASE("firmware: devlink flash stores a new version; it runs after a hard reset; a bad image is refused",
          "[firmware]")
{
    const std::string bdf = dev0();
    FwPath path;
    const std::string d = case_dir("flash");
    // A version the flash does not hold yet, so that a write that does
    // nothing cannot pass.
    const std::string stored = attr(bdf, "fw_stored_version");
    const bool first = stored != "1.1.0";
    const std::string ver = first ? "1.1.0" : "1.1.1";
    const std::uint32_t ver_code = first ? 0x010100 : 0x010101;
    const std::string ver_re = first ? R"(1\.1\.0)" : R"(1\.1\.1)";
    INFO("stored before: " << stored << ", flashing " << ver);
    REQUIRE(stored != ver);
    pack(d, "--key " + Tools().key + " --version " + ver, "hpu-h1-fw-new.bin");
    pack(d, "--no-sign --version 1.2.0", "hpu-h1-fw-unsigned.bin");
    path.set(d);

    const std::string running = attr(bdf, "fw_version");
    std::string out;
    int rc = sh("devlink dev flash pci/" + bdf + " file hpu-h1-fw-new.bin", &out);
    INFO("devlink dev flash: " << out);
    REQUIRE(rc == 0);
    REQUIRE(attr(bdf, "fw_stored_version") == ver);
    CHECK(attr(bdf, "fw_version") == running);
    const std::string info = devlink("dev info pci/" + bdf);
    INFO(info);
    CHECK(std::regex_search(info, std::regex(R"(stored:\s*fw\.mgmt )" + ver_re)));

    // A bad image: refused, with the code in the message; the flash keeps it.
    rc = sh("devlink dev flash pci/" + bdf + " file hpu-h1-fw-unsigned.bin", &out);
    INFO("devlink dev flash (unsigned): " << out);
    CHECK(rc != 0);
    CHECK(out.find("UNSIGNED") != std::string::npos);
    CHECK(attr(bdf, "fw_stored_version") == ver);

    // The next boot (hard reset) runs the flash image.
    REQUIRE(write_text(pci(bdf) + "/hpu_reset", "hard") == 0);
    CHECK(attr(bdf, "fw_version") == ver);
    check_works(bdf, ver);
    drm_hpu_info_firmware fw{};
    Ctx c(accel_node(bdf));
    REQUIRE(info_fw(c.fd(), fw) == 0);
    CHECK(fw.boot_source == DRM_HPU_FW_SOURCE_FLASH);
    CHECK(fw.running_version == ver_code);
    CHECK(fw.stored_version == ver_code);
}

// Runs after the flash test, which leaves a newer version stored and
// running on device 0. A flipped bit in the stored image (debugfs
// inject_flash, the device's INJ_FLASH) makes the boot ROM refuse it
// (CORRUPT) at the next boot: the driver falls back to the image file. A
// new flash write repairs the flash for the rest of the suite.
TEST_CASE("firmware: a corrupted flash image is refused (CORRUPT), the image file boots instead; a new write repairs it",
          "[firmware]")
{
    const std::string bdf = dev0();
    const std::string stored = attr(bdf, "fw_stored_version");
    INFO("stored before: " << stored);
    // The flash test stored a version (1.1.x), newer than the file's 1.0.0.
    REQUIRE(std::regex_match(stored, std::regex(R"(1\.1\.\d+)")));
    const std::uint32_t stored_code = 0x010100 + static_cast<std::uint32_t>(std::stoul(stored.substr(4)));
    const std::string stored_re = std::regex_replace(stored, std::regex(R"(\.)"), R"(\.)");
    const std::string node = accel_node(bdf);
    REQUIRE(!node.empty());

    {
        const Klog klog("flash corruption");
        inject(node, "inject_flash", "corrupt");
        // The header is intact: the stored version does not change.
        CHECK(attr(bdf, "fw_stored_version") == stored);
        REQUIRE(write_text(pci(bdf) + "/hpu_reset", "hard") == 0);
        const std::string log = klog.since();
        INFO("kernel log since the injection:\n" << log);
        CHECK(std::regex_search(log, std::regex("flash firmware image " + stored_re +
                                                R"( refused: checksum does not match: the image is corrupted \(CORRUPT\); )"
                                                R"(reinstall the image; booting hpu/hpu-h1-fw\.bin instead)")));
        CHECK(std::regex_search(log, std::regex(R"(firmware 1\.0\.0 \(.*\) running, booted from hpu/hpu-h1-fw\.bin)")));
        CHECK(log.find("device is unusable") == std::string::npos);
    }
    check_works(bdf, "1.0.0");
    CHECK(attr(bdf, "fw_stored_version") == stored);
    {
        drm_hpu_info_firmware fw{};
        Ctx c(accel_node(bdf));
        REQUIRE(info_fw(c.fd(), fw) == 0);
        CHECK(fw.boot_source == DRM_HPU_FW_SOURCE_HOST);
        CHECK(fw.running_version == 0x010000);
        CHECK(fw.stored_version == stored_code);
    }
    // Resets do not undo the corruption: the next hard reset falls back again.
    {
        const Klog klog("flash corruption, second reset");
        REQUIRE(write_text(pci(bdf) + "/hpu_reset", "hard") == 0);
        const std::string log = klog.since();
        INFO("kernel log since the second reset:\n" << log);
        CHECK(std::regex_search(log, std::regex("flash firmware image " + stored_re + R"( refused: .*\(CORRUPT\))")));
        CHECK(attr(bdf, "fw_version") == "1.0.0");
    }

    // Repair: the good image written again; the flash boots it again.
    FwPath path;
    const std::string d = case_dir("flash-repair");
    pack(d, "--key " + Tools().key + " --version " + stored, "hpu-h1-fw-new.bin");
    path.set(d);
    std::string out;
    const int rc = sh("devlink dev flash pci/" + bdf + " file hpu-h1-fw-new.bin", &out);
    INFO("devlink dev flash: " << out);
    REQUIRE(rc == 0);
    CHECK(attr(bdf, "fw_stored_version") == stored);
    {
        const Klog klog("flash repaired");
        REQUIRE(write_text(pci(bdf) + "/hpu_reset", "hard") == 0);
        const std::string log = klog.since();
        INFO("kernel log since the reset after the repair:\n" << log);
        CHECK(log.find("refused") == std::string::npos);
    }
    check_works(bdf, stored);
    drm_hpu_info_firmware fw{};
    Ctx c(accel_node(bdf));
    REQUIRE(info_fw(c.fd(), fw) == 0);
    CHECK(fw.boot_source == DRM_HPU_FW_SOURCE_FLASH);
    CHECK(fw.running_version == stored_code);
    CHECK(fw.stored_version == stored_code);
}
