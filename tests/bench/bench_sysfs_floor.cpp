// SPDX-License-Identifier: MIT
// hpu-bench-sysfs-floor: the floor of a full hpu-smi query. Reads, once,
// the sysfs and hwmon files that hold the data hpu-smi -q shows, for every
// HPU (/sys/bus/pci/drivers/hpu/<bdf>/ and its hwmon directory), and prints
// how many files and bytes it read. tests/bench/guest-smi-bench.sh runs it
// as many times as hpu-smi -q and compares the times.
//
// Copyright (c) 2026 The hpu authors
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

// NOLINTBEGIN(performance-inefficient-string-concatenation): a few paths per device
namespace {

std::vector<std::string> list(const std::string &dir)
{
    std::vector<std::string> out;
    DIR *d = ::opendir(dir.c_str());
    if (d == nullptr)
        return out;
    while (const dirent *e = ::readdir(d)) {
        const std::string n = static_cast<const char *>(e->d_name);
        if (n != "." && n != "..")
            out.push_back(n);
    }
    ::closedir(d);
    return out;
}

long read_file(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    if (fd < 0)
        return -1;
    std::array<char, 4096> buf{};
    long total = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n <= 0)
            break;
        total += n;
    }
    ::close(fd);
    return total;
}

} // namespace

int main()
{
    // The device attributes with the data of hpu-smi -q (identity, firmware,
    // clocks, memory, status, ECC and reset counters, the PCIe link).
    static const char *const attrs[] = { // NOLINT(modernize-avoid-c-arrays)
        "serial", "uuid", "chip_id", "hbm_size", "reset_count", "fw_version", "fw_stored_version",
        "fw_min_version", "fw_status", "fw_boot_error", "fw_build", "clk_core_mhz", "clk_core_max_mhz",
        "clk_hbm_mhz", "status", "hbm_total", "hbm_used", "engine_util", "current_link_speed",
        "current_link_width", "max_link_speed", "max_link_width", "ecc_correctable", "ecc_uncorrectable",
        "retired_pages", "mmu_faults", "soft_resets", "hard_resets", "reset_generation"};
    const std::string drv = "/sys/bus/pci/drivers/hpu";
    long files = 0;
    long bytes = 0;
    for (const auto &bdf : list(drv)) {
        if (bdf.find(':') == std::string::npos)
            continue;
        const std::string dir = drv + "/" + bdf;
        for (const char *a : attrs) {
            const long n = read_file(dir + "/" + a);
            if (n >= 0) {
                ++files;
                bytes += n;
            }
        }
        // Every sensor value of hwmon (temp*, power*, energy*, in*, curr*).
        for (const auto &h : list(dir + "/hwmon")) {
            for (const auto &f : list(dir + "/hwmon/" + h)) {
                if (f.ends_with("_input") || f.ends_with("_cap") || f.ends_with("_max") || f.ends_with("_crit") ||
                    f.ends_with("_alarm")) {
                    const long n = read_file(dir + "/hwmon/" + h + "/" + f);
                    if (n >= 0) {
                        ++files;
                        bytes += n;
                    }
                }
            }
        }
    }
    std::printf("files=%ld bytes=%ld\n", files, bytes); // NOLINT(cppcoreguidelines-pro-type-vararg)
    return files > 0 ? 0 : 1;
}
// NOLINTEND(performance-inefficient-string-concatenation)
