// SPDX-License-Identifier: MIT
// hpu-smi in the guest ([smi]): every format checked field by field against
// the devices QEMU was given (HPU_EXPECT: serial, HBM size, NIC ports and,
// when given, the UUID) and against sysfs; the JSON against its schema
// (tools/hpu-smi/check-json.py, python3-jsonschema of the shared host root);
// -i by index, PCI address and UUID; -l with -c; the process list showing a
// child that holds HBM. Firmware values (versions, sensors) are checked for
// presence and range only.
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "hpu/hpu.hpp"

// NOLINTBEGIN(performance-inefficient-string-concatenation): test code
namespace {

struct Want {
    std::string serial;
    std::uint64_t hbm = 0;
    unsigned int nics = 0;
    std::string uuid; // empty: not given
};

// HPU_EXPECT: "serial:hbm_bytes:nic_ports[:uuid];..." in PCI order.
std::vector<Want> want()
{
    const char *env = std::getenv("HPU_EXPECT"); // NOLINT(concurrency-mt-unsafe)
    REQUIRE(env != nullptr);
    std::vector<Want> out;
    std::stringstream all(env);
    for (std::string item; std::getline(all, item, ';');) {
        if (item.empty())
            continue;
        std::vector<std::string> f;
        std::stringstream in(item);
        for (std::string x; std::getline(in, x, ':');)
            f.push_back(x);
        Want w;
        if (f.size() >= 4 && f.back().size() == 36) {
            w.uuid = f.back();
            f.pop_back();
        }
        REQUIRE(f.size() >= 3);
        w.nics = static_cast<unsigned>(std::stoul(f.back()));
        f.pop_back();
        w.hbm = std::stoull(f.back());
        f.pop_back();
        w.serial = f[0];
        for (std::size_t i = 1; i < f.size(); ++i)
            w.serial += ":" + f[i];
        out.push_back(w);
    }
    return out;
}

std::string smi()
{
    const char *env = std::getenv("HPU_SMI"); // NOLINT(concurrency-mt-unsafe)
    return env != nullptr ? env : HPU_SMI_DEFAULT;
}

std::string sh(const std::string &cmd, int &status)
{
    std::string out;
    FILE *p = ::popen(cmd.c_str(), "r"); // NOLINT(cert-env33-c)
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
        out.append(buf.data(), n);
    const int st = ::pclose(p);
    status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

std::string ok(const std::string &args)
{
    int st = -1;
    std::string out = sh(smi() + " " + args + " 2>&1", st);
    INFO("hpu-smi " << args << ":\n" << out);
    REQUIRE(st == 0);
    return out;
}

std::string sysfs(const std::string &bdf, const std::string &attr)
{
    std::ifstream f("/sys/bus/pci/devices/" + bdf + "/" + attr);
    std::string v;
    std::getline(f, v);
    return v;
}

std::vector<std::string> split(const std::string &s, const std::string &sep)
{
    std::vector<std::string> out;
    std::size_t b = 0;
    for (;;) {
        const auto e = s.find(sep, b);
        out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
        if (e == std::string::npos)
            return out;
        b = e + sep.size();
    }
}

std::vector<std::string> lines(const std::string &s)
{
    std::vector<std::string> v;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);)
        v.push_back(l);
    return v;
}

// The devices in PCI order (HPU_EXPECT's order).
std::vector<hpu::DeviceEntry> devices()
{
    auto l = hpu::list_devices();
    std::sort(l.begin(), l.end(), [](const auto &a, const auto &b) { return a.pci_addr < b.pci_addr; });
    return l;
}

// CSV (noheader, nounits) rows keyed by bus id.
std::map<std::string, std::map<std::string, std::string>> csv(const std::string &fields, const std::string &extra = "")
{
    const auto names = split(fields, ",");
    std::map<std::string, std::map<std::string, std::string>> out;
    for (const auto &l : lines(ok("-Q index," + fields + ",bus_id -f csv,noheader,nounits " + extra))) {
        const auto v = split(l, ", ");
        REQUIRE(v.size() == names.size() + 2);
        auto &row = out[v.back()];
        row["index"] = v[0];
        for (std::size_t i = 0; i < names.size(); ++i)
            row[names[i]] = v[i + 1];
    }
    return out;
}

double num(const std::string &s)
{
    char *end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    INFO("value '" << s << "'");
    REQUIRE((end != nullptr && *end == '\0' && !s.empty()));
    return d;
}

} // namespace

TEST_CASE("hpu-smi -Q: every device's fields match QEMU's properties and sysfs", "[smi]")
{
    const auto exp = want();
    const auto devs = devices();
    REQUIRE(devs.size() == exp.size());
    const auto rows = csv("serial,uuid,memory.total,memory.used,memory.usable,memory.free,nic.ports,name,status,"
                          "driver_version,fw_version,fw_stored_version,temperature.die,temperature.hbm,"
                          "temperature.board,power.draw,power.cap,energy,clocks.core,clocks.core.max,clocks.hbm,"
                          "voltage.core,utilization.dma,utilization.dma0,utilization.dma8,utilization.tpc,utilization.mme,"
                          "utilization.mme0,utilization.mme1,utilization.mme2,ecc.correctable,pcie.link.gen.max,"
                          "pcie.link.width.max,reset_count,throttle,alarms");
    REQUIRE(rows.size() == exp.size());
    for (std::size_t i = 0; i < exp.size(); ++i) {
        const std::string &bdf = devs[i].pci_addr;
        INFO("device " << bdf);
        REQUIRE(rows.count(bdf) == 1);
        const auto &r = rows.at(bdf);
        CHECK(r.at("index") == std::to_string(devs[i].index));
        CHECK(r.at("serial") == exp[i].serial);
        CHECK(r.at("serial") == sysfs(bdf, "serial"));
        CHECK(r.at("uuid") == sysfs(bdf, "uuid"));
        if (!exp[i].uuid.empty())
            CHECK(r.at("uuid") == exp[i].uuid);
        CHECK(r.at("memory.total") == std::to_string(exp[i].hbm >> 20U));
        CHECK(r.at("memory.total") == std::to_string(std::stoull(sysfs(bdf, "hbm_size")) >> 20U));
        CHECK(num(r.at("memory.used")) + num(r.at("memory.free")) == num(r.at("memory.usable")));
        CHECK(num(r.at("memory.usable")) <= num(r.at("memory.total")));
        CHECK(r.at("nic.ports") == std::to_string(exp[i].nics));
        CHECK(r.at("name") == "H1");
        CHECK(r.at("status") == "ok");
        CHECK(r.at("reset_count") == sysfs(bdf, "reset_count"));
        // Firmware values: present and plausible, not exact.
        CHECK(r.at("fw_version") != "none");
        if (const std::string v = sysfs(bdf, "fw_version"); !v.empty())
            CHECK(r.at("fw_version") == v);
        for (const char *t : {"temperature.die", "temperature.hbm", "temperature.board"}) {
            INFO(t);
            CHECK(num(r.at(t)) > 0.0);
            CHECK(num(r.at(t)) < 150.0);
        }
        CHECK(num(r.at("power.draw")) > 0.0);
        CHECK(num(r.at("power.draw")) < 2000.0);
        CHECK(num(r.at("power.cap")) > 0.0);
        CHECK(num(r.at("energy")) >= 0.0);
        CHECK(num(r.at("clocks.core")) > 0.0);
        CHECK(num(r.at("clocks.core")) <= num(r.at("clocks.core.max")));
        CHECK(num(r.at("clocks.hbm")) > 0.0);
        CHECK(num(r.at("voltage.core")) > 0.0);
        CHECK(num(r.at("utilization.dma")) <= 100.0);
        CHECK(num(r.at("utilization.dma0")) <= 100.0);
        // Entry 8 is the TPC engine: no DMA engine 8; one TPC engine, two MMEs.
        CHECK(r.at("utilization.dma8") == "n/a");
        for (const char *f : {"utilization.tpc", "utilization.mme", "utilization.mme0", "utilization.mme1"}) {
            INFO(f);
            CHECK(num(r.at(f)) >= 0.0);
            CHECK(num(r.at(f)) <= 100.0);
        }
        CHECK(r.at("utilization.mme2") == "n/a");
        CHECK(r.at("ecc.correctable") == sysfs(bdf, "ecc_correctable"));
        CHECK(r.at("pcie.link.gen.max") == "4");
        CHECK(r.at("pcie.link.width.max") == "16");
        CHECK(!r.at("throttle").empty());
        CHECK(!r.at("alarms").empty());
    }
    // With units and a header: the same values plus their units.
    const auto with = lines(ok("-Q index,memory.total,power.draw -f csv"));
    REQUIRE(with.size() == exp.size() + 1);
    CHECK(with[0] == "index, memory.total [MiB], power.draw [W]");
    CHECK(with[1].find(" MiB, ") != std::string::npos);
    CHECK(with[1].ends_with(" W"));
}

TEST_CASE("hpu-smi -L, the table and -q show what QEMU was given", "[smi]")
{
    const auto exp = want();
    const auto devs = devices();
    REQUIRE(devs.size() == exp.size());
    const std::string list = ok("-L");
    const std::string table = ok("--sample-ms 0");
    const std::string q = ok("-q");
    const auto blocks = split(q, "\n\n");
    REQUIRE(blocks.size() == exp.size());
    for (std::size_t i = 0; i < exp.size(); ++i) {
        const std::string &bdf = devs[i].pci_addr;
        INFO("device " << bdf);
        CHECK(list.find("(PCI " + bdf + ", SN " + exp[i].serial + ", UUID " + sysfs(bdf, "uuid") + ")") !=
              std::string::npos);
        // Table row: | index | name | bus | serial | temp | power | used / total MiB | dma | tpc | mme | clock |
        // status |
        bool found = false;
        for (const auto &l : lines(table)) {
            auto cells = split(l, "|");
            if (cells.size() != 14 || cells[3].find(bdf) == std::string::npos)
                continue;
            found = true;
            CHECK(cells[4].find(" " + exp[i].serial + " ") != std::string::npos);
            CHECK(cells[7].ends_with(" / " + std::to_string(exp[i].hbm >> 20U) + " MiB "));
            // The device has compute engines (spec version 6): TPC and MME utilisation shown.
            CHECK(cells[8].ends_with(" % "));
            CHECK(cells[9].ends_with(" % "));
            CHECK(cells[10].ends_with(" % "));
            CHECK(cells[12] == " ok     ");
        }
        CHECK(found);
        // The -q block of the device.
        const auto b = std::find_if(blocks.begin(), blocks.end(),
                                    [&bdf](const std::string &x) { return x.find("(PCI " + bdf + ")") != std::string::npos; });
        REQUIRE(b != blocks.end());
        for (const auto &[label, value] : std::vector<std::pair<std::string, std::string>>{
                 {"Serial", exp[i].serial},
                 {"UUID", sysfs(bdf, "uuid")},
                 {"Bus-Id", bdf},
                 {"Total", std::to_string(exp[i].hbm >> 20U) + " MiB"},
                 {"Ports", std::to_string(exp[i].nics)},
                 {"Status", "ok"},
                 {"Firmware state", "running"},
                 {"Links up", "0"}}) {
            INFO(label);
            std::string label_col = label;
            label_col.resize(26, ' ');
            CHECK(b->find("\n    " + label_col + ": " + value + "\n") != std::string::npos);
        }
        // The last port: the interface hpu_en registered for it (the
        // suite loads hpu_en before these tests; administratively down,
        // so its link is unknown), or without hpu_en, no interface.
        if (exp[i].nics > 0) {
            const unsigned int last = exp[i].nics - 1;
            std::string label_col = "Port " + std::to_string(last);
            label_col.resize(26, ' ');
            std::string ifname;
            std::error_code ec;
            const std::string pci = "/sys/bus/pci/devices/" + bdf;
            for (const auto &aux : std::filesystem::directory_iterator(pci, ec)) {
                if (aux.path().filename().string().rfind("hpu.en.", 0) != 0) {
                    continue;
                }
                for (const auto &n : std::filesystem::directory_iterator(aux.path() / "net", ec)) {
                    std::ifstream f(n.path() / "dev_port");
                    unsigned int port = ~0U;
                    f >> port;
                    if (port == last) {
                        ifname = n.path().filename().string();
                    }
                }
            }
            INFO("port " << last << " interface '" << ifname << "'");
            if (ifname.empty()) {
                CHECK(b->find("\n    " + label_col + ": no interface (is hpu_en loaded?)\n") != std::string::npos);
            } else {
                CHECK(b->find("\n    " + label_col + ": " + ifname + ", ") != std::string::npos);
            }
        }
    }
}

TEST_CASE("hpu-smi --json is valid against its schema and matches QEMU's properties", "[smi]")
{
    const auto exp = want();
    const std::string doc = ok("--json");
    {
        std::ofstream f("/tmp/hpu-smi.json");
        f << doc;
    }
    int st = -1;
    // Debian's python3 with python3-jsonschema (tools/dev/bootstrap.sh installs
    // it): a missing validator (exit 2) fails the test.
    const std::string v = sh(std::string("/usr/bin/python3 ") + HPU_SOURCE_DIR + "/tools/hpu-smi/check-json.py /tmp/hpu-smi.json 2>&1", st);
    INFO(v);
    CHECK(st == 0);
    for (const auto &e : exp) {
        CHECK(doc.find("\"serial\": \"" + e.serial + "\"") != std::string::npos);
        CHECK(doc.find("\"total_bytes\": " + std::to_string(e.hbm)) != std::string::npos);
        CHECK(doc.find("\"ports\": " + std::to_string(e.nics)) != std::string::npos);
    }
}

TEST_CASE("hpu-smi -i by index, PCI address and UUID; -l with -c", "[smi]")
{
    const auto devs = devices();
    REQUIRE(!devs.empty());
    const auto &d = devs.back();
    const std::string want_row = std::to_string(d.index) + ", " + d.pci_addr + "\n";
    for (const std::string &id : {std::to_string(d.index), d.pci_addr, d.pci_addr.substr(5), sysfs(d.pci_addr, "uuid")}) {
        INFO("-i " << id);
        CHECK(ok("-Q index,bus_id -f csv,noheader -i " + id) == want_row);
    }
    int st = -1;
    sh(smi() + " -L -i 99 2>&1", st);
    CHECK(st == 6);
    const std::string loop = ok("-Q index -f csv,noheader -l 0.2 -c 3");
    CHECK(lines(loop).size() == 3 * devs.size());
}

TEST_CASE("hpu-smi lists a process with its HBM", "[smi]")
{
    const auto devs = devices();
    REQUIRE(!devs.empty());
    int ready[2] = {-1, -1}; // NOLINT(modernize-avoid-c-arrays)
    REQUIRE(::pipe(ready) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::close(ready[0]);
        try {
            const hpu::Device dev = hpu::Device::open_pci(devs.front().pci_addr);
            const auto buf = hpu::Buffer::create(dev, 64ULL << 20U, HPU_MEM_DEVICE);
            auto q = hpu::Queue::create(dev, 0);
            (void)q.memset(buf.va(), 0, buf.size()).wait();
            const char c = 1;
            std::ignore = ::write(ready[1], &c, 1);
            ::pause();
        } catch (...) { // NOLINT(bugprone-empty-catch)
        }
        ::_exit(1);
    }
    ::close(ready[1]);
    char c = 0;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    ::close(ready[0]);
    const std::string pid = std::to_string(child);
    const std::string table = ok("");
    const std::string q = ok("-q -d PROCESSES -i " + devs.front().pci_addr);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    bool row = false;
    for (const auto &l : lines(table)) {
        const auto cells = split(l, "|");
        if (cells.size() == 7 && cells[2] == " " + std::string(cells[2].size() - 2 - pid.size(), ' ') + pid + " ") {
            row = true;
            CHECK(cells[1].find(std::to_string(devs.front().index)) != std::string::npos);
            CHECK(cells[3].find("hpu-vm-tests") != std::string::npos);
            const std::string mib = cells[4].substr(cells[4].find_first_not_of(' '));
            CHECK(num(mib.substr(0, mib.find(' '))) >= 64.0);
        }
    }
    INFO(table);
    CHECK(row);
    CHECK(q.find("PID " + pid) != std::string::npos);
    CHECK(q.find("HBM 64 MiB") != std::string::npos);
}
// NOLINTEND(performance-inefficient-string-concatenation)
