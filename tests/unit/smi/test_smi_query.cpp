// SPDX-License-Identifier: MIT
// hpu-smi: every view of a fixed snapshot (tests/unit/smi_fixture.h): the
// summary table with processes, -q and each -d section, -Q with every CSV
// option, --json (validated against tools/hpu-smi/hpu-smi.schema.json),
// --fw-versions, -i by index, PCI address and UUID, -l with -c, and what
// each view asks the data path for.
//
// Copyright (c) 2026 The hpu authors
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "hpu/hpu.hpp"
#include "smi.h"
#include "smi_run.h"
#include "smi_fixture.h"

using hpu::smi::Backend;
using hpu::smi::Request;
using hpu::smi::Snapshot;
using hpu::test::smi_full;

using hpu::test::run;

namespace {

struct Fake {
    std::vector<Request> requests;
    std::vector<double> waits;
    int stop_after = -1; // wait() returns false at this call (a signal)
    Backend backend()
    {
        Backend be;
        be.gather = [this](const Request &r) {
            requests.push_back(r);
            return smi_full();
        };
        be.reset = [](const std::string &, bool, hpu::smi::ResetTarget &) { return -EIO; };
        be.is_root = []() { return true; };
        be.wait = [this](double s) {
            waits.push_back(s);
            return stop_after < 0 || static_cast<int>(waits.size()) < stop_after;
        };
        return be;
    }
};

std::vector<std::string> lines(const std::string &s)
{
    std::vector<std::string> v;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);)
        v.push_back(l);
    return v;
}

// The value of "    Label   : value" in a block of -q text.
std::string value_of(const std::string &block, const std::string &label)
{
    for (const auto &l : lines(block)) {
        if (l.size() > 31 && l.compare(4, label.size(), label) == 0 && l.find(" : ") == 29 &&
            l.find_first_not_of(' ', 4 + label.size()) == 30)
            return l.substr(32);
    }
    return "<missing " + label + ">";
}

const char *const kTable =
          "hpu-smi 1.0.0  libhpu 1.3.0  driver 0.1.0  devices: 2\n"
          "+-----+------+--------------+--------+------+--------------+------------------+------+------+------+----------+-----------+\n"
          "| HPU | Name | Bus-Id       | Serial | Temp |  Power / Cap | HBM Used / Total |  DMA |  TPC |  MME |    Clock | Status    |\n"
          "+=====+======+==============+========+======+==============+==================+======+======+======+==========+===========+\n"
          "|   0 | H1   | 0000:01:00.0 | HPU-A  | 46 C | 72 W / 350 W |     6 / 2048 MiB | 35 % | 25 % | 30 % | 1500 MHz | ok        |\n"
          "|   1 | H1   | 0000:02:00.0 | HPU-B  |    - |            - |     0 / 4096 MiB |  0 % |    - |    - |        - | fw-failed |\n"
          "+-----+------+--------------+--------+------+--------------+------------------+------+------+------+----------+-----------+\n"
          "Processes:\n"
          "+-----+-----+------------+-----------+------+\n"
          "| HPU | PID | Process    | HBM (MiB) | Util |\n"
          "+=====+=====+============+===========+======+\n"
          "|   0 | 300 | trainer    |         6 | 75 % |\n"
          "|   0 | 301 | bystander  |         2 |    - |\n"
          "|   1 | 302 | idle \"job\" |         0 |  0 % |\n"
          "+-----+-----+------------+-----------+------+\n";

const char *const kPcie =
          "HPU 0: H1 (PCI 0000:01:00.0)\n"
          "    Link generation           : 4\n"
          "    Link generation maximum   : 4\n"
          "    Link width                : x16\n"
          "    Link width maximum        : x16\n"
          "    Link speed                : 16.0 GT/s\n"
          "\n"
          "HPU 1: H1 (PCI 0000:02:00.0)\n"
          "    Link generation           : unknown\n"
          "    Link generation maximum   : 4\n"
          "    Link width                : unknown\n"
          "    Link width maximum        : x16\n"
          "    Link speed                : unknown\n";

// Runs tools/hpu-smi/check-json.py on text: 0 valid, 1 invalid, 2 no validator.
int validate_json(const std::string &text)
{
    char tmpl[] = "/tmp/hpu-smi-json-XXXXXX"; // NOLINT(modernize-avoid-c-arrays)
    const int fd = ::mkstemp(tmpl);
    REQUIRE(fd >= 0);
    ::close(fd);
    {
        std::ofstream f(tmpl);
        f << text;
    }
    const std::string cmd = std::string("/usr/bin/python3 ") + HPU_SOURCE_DIR + "/tools/hpu-smi/check-json.py " + tmpl;
    const int st = std::system(cmd.c_str()); // NOLINT(cert-env33-c,concurrency-mt-unsafe)
    ::unlink(tmpl);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

} // namespace

TEST_CASE("summary table with processes", "[smi][table]")
{
    CHECK(hpu::smi::format_table(smi_full()) == kTable);
    Snapshot s = smi_full();
    s.processes.clear();
    CHECK(hpu::smi::format_table(s).ends_with("+\nProcesses: none\n"));
    s.has_processes = false;
    CHECK(hpu::smi::format_table(s).ends_with("-+\n"));
    Fake fake;
    const auto r = run({}, fake.backend());
    CHECK(r.status == 0);
    CHECK(r.out == kTable);
    REQUIRE(fake.requests.size() == 1);
    CHECK(fake.requests[0].need == (hpu::smi::kNeedTelemetry | hpu::smi::kNeedFirmware | hpu::smi::kNeedProcesses));
    CHECK(fake.requests[0].sample_ms == 100);
    CHECK(run({"--sample-ms", "0"}, fake.backend()).status == 0);
    CHECK(fake.requests.back().sample_ms == 0);
    CHECK(run({"--sample-ms=70000"}, fake.backend()).status == hpu::smi::kExitUsage);
}

TEST_CASE("option -q: every section of every device", "[smi][query]")
{
    const Snapshot s = smi_full();
    const std::string all = hpu::smi::format_query(s, hpu::smi::kSectionAll);
    const std::string dev0 = all.substr(0, all.find("\n\n") + 1);
    const std::string dev1 = all.substr(all.find("\n\n") + 2);
    CHECK(dev0.starts_with("HPU 0: H1 (PCI 0000:01:00.0)\n  Product\n    Name                      : H1\n"));
    CHECK(dev1.starts_with("HPU 1: H1 (PCI 0000:02:00.0)\n  Product\n"));
    // Section titles in order, each once per device.
    std::vector<std::string> titles;
    for (const auto &l : lines(dev0)) {
        if (l.starts_with("  ") && !l.starts_with("    "))
            titles.push_back(l.substr(2));
    }
    CHECK(titles == std::vector<std::string>{"Product", "Power", "Clock", "Temperature", "Memory", "Utilization", "ECC",
                                             "PCIe", "NET", "Processes", "Errors"});
    // Every item, field by field.
    const std::vector<std::pair<std::string, std::string>> want0 = {
        {"Serial", "HPU-A"}, {"UUID", "1b4e28ba-2fa1-11d2-883f-0016d3cca427"}, {"Bus-Id", "0000:01:00.0"},
        {"Revision", "1.0"}, {"Spec version", "4"}, {"Driver version", "0.1.0"},
        {"Firmware version", "1.2.3"}, {"Firmware stored version", "1.2.0"}, {"Firmware minimum version", "1.0.0"},
        {"Firmware state", "running"}, {"Firmware build", "build-42"}, {"Firmware boot source", "flash"},
        {"Firmware boot error", "0"}, {"Firmware boots", "2"}, {"Status", "ok"},
        {"Draw", "72.34 W"}, {"Cap", "350.00 W"}, {"Cap maximum", "400.00 W"}, {"Energy", "987.654 J"},
        {"Core voltage", "850 mV"}, {"HBM voltage", "1200 mV"},
        {"Core", "1500 MHz"}, {"Core maximum", "1800 MHz"}, {"Throttle reasons", "power"},
        {"Die", "45.5 C"}, {"Board", "31.9 C"}, {"Die throttle limit", "95.0 C"}, {"Die critical limit", "105.0 C"},
        {"HBM limit", "85.0 C"}, {"Alarms", "temp-max, power-cap"},
        {"Total", "2048 MiB"}, {"Usable", "2046 MiB"}, {"Used", "6 MiB"}, {"Free", "2040 MiB"},
        {"DMA (mean)", "35 %"}, {"DMA 0", "0 %"}, {"DMA 7", "70 %"}, {"TPC", "25 %"}, {"MME (mean)", "30 %"},
        {"MME 0", "50 %"}, {"MME 1", "10 %"}, {"Window", "1000 ms"},
        {"Correctable", "12"}, {"Uncorrectable", "0"}, {"Retired pages", "1"},
        {"Link generation", "4"}, {"Link width", "x16"}, {"Link speed", "16.0 GT/s"},
        {"Ports", "10"}, {"Links up", "1"},
        {"Port 0", "eth1, 02:48:50:ab:cd:10, link up, 100000 Mb/s, MTU 9000"},
        {"Port 0 RX", "1 packets, 3 bytes, 0 errors, 5 dropped"},
        {"Port 0 TX", "2 packets, 4 bytes, 0 errors, 6 dropped"},
        {"Port 1", "eth2, 02:48:50:ab:cd:11, link down, speed unknown, MTU 1500"},
        {"Port 2", "eth3, 02:48:50:ab:cd:12, link unknown, speed unknown, MTU 1500"},
        {"Port 2 RX", "21 packets, 2003 bytes, 2 errors, 5 dropped"},
        {"Port 3", "error: Permission denied"}, {"Port 9", "no interface (is hpu_en loaded?)"},
        {"PID 300", "trainer, HBM 6 MiB, util 75 %"}, {"PID 301", "bystander, HBM 2 MiB, util -"},
        {"MMU faults", "3"}, {"Reset generation", "1"}};
    for (const auto &[label, v] : want0) {
        INFO(label);
        CHECK(value_of(dev0, label) == v);
    }
    // The device whose firmware failed: sensors n/a, the rest as is.
    const std::vector<std::pair<std::string, std::string>> want1 = {
        {"Firmware version", "none"}, {"Firmware state", "failed"}, {"Firmware build", "none"},
        {"Firmware boot source", "none"}, {"Firmware boot error", "8"}, {"Status", "fw-failed"},
        {"Draw", "n/a"}, {"Energy", "n/a"}, {"Core", "n/a"}, {"Throttle reasons", "n/a"}, {"Die", "n/a"},
        {"Alarms", "n/a"}, {"Total", "4096 MiB"}, {"Used", "0 MiB"}, {"DMA 1", "0 %"},
        {"Link generation", "unknown"}, {"Link width", "unknown"}, {"Link width maximum", "x16"},
        {"Ports", "4"}, {"Links up", "0"}, {"Port 3", "no interface (is hpu_en loaded?)"}, {"PID 302", "idle \"job\", HBM 0 MiB, util 0 %"}, {"MMU faults", "0"}};
    for (const auto &[label, v] : want1) {
        INFO(label);
        CHECK(value_of(dev1, label) == v);
    }
    CHECK(value_of(dev1, "DMA 2").starts_with("<missing"));
    // A device without compute engines (before spec version 6): no TPC or MME lines.
    CHECK(value_of(dev1, "TPC").starts_with("<missing"));
    CHECK(value_of(dev1, "MME (mean)").starts_with("<missing"));
    CHECK(value_of(dev0, "DMA 8").starts_with("<missing")); // entry 8 is the TPC engine
    // Every item line has the label column and the separator at the same place.
    for (const auto &l : lines(all)) {
        if (l.starts_with("    ")) {
            INFO(l);
            CHECK(l.find(" : ") == 29);
        }
    }
}

TEST_CASE("option -q -d: one section prints without its title, several with", "[smi][query]")
{
    const Snapshot s = smi_full();
    CHECK(hpu::smi::format_query(s, hpu::smi::kPcie) == kPcie);
    // ERRORS alone is the errors view of hpu-smi 1.2, byte for byte.
    CHECK(hpu::smi::format_query(s, hpu::smi::kErrors) == hpu::smi::format_errors(s));
    const std::string two = hpu::smi::format_query(s, hpu::smi::kNet | hpu::smi::kMemory);
    CHECK(two.starts_with("HPU 0: H1 (PCI 0000:01:00.0)\n  Memory\n    Total                     : 2048 MiB\n"));
    CHECK(two.find("  NET\n    Ports                     : 10\n") != std::string::npos);
    CHECK(two.find("Product") == std::string::npos);

    Fake fake;
    struct Case {
        std::vector<std::string> args;
        unsigned need;
    };
    using hpu::smi::kNeedErrors;
    using hpu::smi::kNeedFirmware;
    using hpu::smi::kNeedPcie;
    using hpu::smi::kNeedProcesses;
    using hpu::smi::kNeedTelemetry;
    const auto c = GENERATE(Case{{"-q"}, hpu::smi::kNeedAll},
                            Case{{"-q", "-d", "PRODUCT"}, kNeedFirmware},
                            Case{{"-q", "-d", "power,clock"}, kNeedTelemetry | kNeedFirmware},
                            Case{{"-q", "-d", "TEMPERATURE"}, kNeedTelemetry | kNeedFirmware},
                            Case{{"-q", "-d", "MEMORY"}, kNeedTelemetry | kNeedFirmware},
                            Case{{"-q", "-d", "UTILIZATION"}, kNeedTelemetry | kNeedFirmware},
                            Case{{"-q", "-d", "ECC"}, kNeedErrors},
                            Case{{"-q", "-d", "PCIE"}, kNeedPcie},
                            Case{{"-q", "-d", "NET"}, hpu::smi::kNeedNet},
                            Case{{"-q", "-d", "PROCESSES"}, kNeedProcesses},
                            Case{{"-q", "--display=ECC,PCIE"}, kNeedErrors | kNeedPcie});
    const auto r = run(c.args, fake.backend());
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    REQUIRE(fake.requests.size() == 1);
    CHECK(fake.requests[0].need == c.need);
}

TEST_CASE("option -Q: CSV with every option", "[smi][csv]")
{
    const Snapshot s = smi_full();
    Fake fake;
    const std::string q = "index,name,serial,uuid,bus_id,driver_version,fw_version,fw_stored_version,fw_min_version,"
                          "fw_state,status,temperature.die,temperature.hbm,temperature.board,temperature.die.max,"
                          "temperature.die.crit,temperature.hbm.max,power.draw,power.cap,power.cap.max,energy,"
                          "voltage.core,voltage.hbm,clocks.core,clocks.core.max,clocks.hbm,throttle,alarms,"
                          "memory.total,memory.usable,memory.used,memory.free,utilization.dma,utilization.dma0,"
                          "utilization.dma7,ecc.correctable,ecc.uncorrectable,ecc.retired_pages,"
                          "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,"
                          "reset_count,resets.hard,nic.ports,nic.links_up,nic.link_state";
    SECTION("header and units")
    {
        const auto r = run({"-Q", q, "-f", "csv"}, fake.backend());
        REQUIRE(r.status == 0);
        const auto l = lines(r.out);
        REQUIRE(l.size() == 3);
        CHECK(l[0] ==
              "index, name, serial, uuid, bus_id, driver_version, fw_version, fw_stored_version, fw_min_version, "
              "fw_state, status, temperature.die [C], temperature.hbm [C], temperature.board [C], "
              "temperature.die.max [C], temperature.die.crit [C], temperature.hbm.max [C], power.draw [W], "
              "power.cap [W], power.cap.max [W], energy [J], voltage.core [mV], voltage.hbm [mV], clocks.core [MHz], "
              "clocks.core.max [MHz], clocks.hbm [MHz], throttle, alarms, memory.total [MiB], memory.usable [MiB], "
              "memory.used [MiB], memory.free [MiB], utilization.dma [%], utilization.dma0 [%], "
              "utilization.dma7 [%], ecc.correctable, ecc.uncorrectable, ecc.retired_pages, pcie.link.gen.current, "
              "pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max, reset_count, resets.hard, nic.ports, "
              "nic.links_up, nic.link_state");
        CHECK(l[1] == "0, H1, HPU-A, 1b4e28ba-2fa1-11d2-883f-0016d3cca427, 0000:01:00.0, 0.1.0, 1.2.3, 1.2.0, 1.0.0, "
                      "running, ok, 45.5 C, 38.3 C, 31.9 C, 95.0 C, 105.0 C, 85.0 C, 72.34 W, 350.00 W, 400.00 W, "
                      "987.654 J, 850 mV, 1200 mV, 1500 MHz, 1800 MHz, 1600 MHz, power, temp-max|power-cap, "
                      "2048 MiB, 2046 MiB, 6 MiB, 2040 MiB, 35 %, 0 %, 70 %, 12, 0, 1, 4, 4, 16, 16, 3, 1, 10, 1, "
                      "up|down|unknown|-|-|-|-|-|-|-");
        CHECK(l[2] == "1, H1, HPU-B, ffffffff-ffff-ffff-ffff-ffffffffffff, 0000:02:00.0, 0.1.0, none, 1.2.0, 1.0.0, "
                      "failed, fw-failed, n/a, n/a, n/a, n/a, n/a, n/a, n/a, n/a, n/a, n/a, n/a, n/a, n/a, n/a, n/a, "
                      "n/a, n/a, 4096 MiB, 4094 MiB, 0 MiB, 4094 MiB, 0 %, 0 %, n/a, 0, 0, 0, unknown, 4, unknown, "
                      "16, 3, 0, 4, 0, -|-|-|-");
        CHECK(fake.requests[0].need == hpu::smi::kNeedAll - hpu::smi::kNeedProcesses);
    }
    SECTION("the compute engines' utilisation")
    {
        const auto r = run({"-Q", "index,utilization.tpc,utilization.mme,utilization.mme0,utilization.mme1,"
                                  "utilization.dma7,utilization.dma8"},
                           fake.backend());
        REQUIRE(r.status == 0);
        const auto l = lines(r.out);
        REQUIRE(l.size() == 3);
        CHECK(l[0] == "index, utilization.tpc [%], utilization.mme [%], utilization.mme0 [%], utilization.mme1 [%], "
                      "utilization.dma7 [%], utilization.dma8 [%]");
        // Entry 8 is the TPC engine, not a DMA engine: dma8 is n/a.
        CHECK(l[1] == "0, 25 %, 30 %, 50 %, 10 %, 70 %, n/a");
        // A device without compute engines.
        CHECK(l[2] == "1, n/a, n/a, n/a, n/a, n/a, n/a");
    }
    SECTION("noheader, nounits, both, long options")
    {
        auto r = run({"--query-hpu=index,power.draw,memory.used", "--format=csv,noheader"}, fake.backend());
        CHECK(r.out == "0, 72.34 W, 6 MiB\n1, n/a, 0 MiB\n");
        r = run({"-Q", "index,power.draw,memory.used", "-f", "csv,nounits"}, fake.backend());
        CHECK(r.out == "index, power.draw, memory.used\n0, 72.34, 6\n1, n/a, 0\n");
        r = run({"-Q", "index,power.draw,memory.used", "-f", "csv,noheader,nounits"}, fake.backend());
        CHECK(r.out == "0, 72.34, 6\n1, n/a, 0\n");
        r = run({"-Q", "index,serial"}, fake.backend()); // csv is the default
        CHECK(r.out == "index, serial\n0, HPU-A\n1, HPU-B\n");
        CHECK(fake.requests.back().need == 0); // INFO DEVICE only
    }
    SECTION("quoting")
    {
        Snapshot t = smi_full();
        t.devices[0].serial = "A,\"B\"";
        CHECK(hpu::smi::format_csv_rows(t, {"serial", "index"}, {}) == "\"A,\"\"B\"\"\", 0\nHPU-B, 1\n");
    }
    SECTION("usage errors")
    {
        auto r = run({"-Q", "index,bogus"}, fake.backend());
        CHECK(r.status == hpu::smi::kExitUsage);
        CHECK(r.err == "hpu-smi: unknown field 'bogus' for -Q (see the manual for the field names)\n"
                       "Try 'hpu-smi -h' for help.\n");
        for (const char *bad : {"utilization.dma16", "utilization.dma01", "utilization.dmax", "utilization.mme16",
                                "utilization.mmex", "utilization.tpc0", "index,"})
            CHECK(run({"-Q", bad}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(run({"-Q", "index", "-f", "json"}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(run({"-Q", "index", "-f", "csv,bold"}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(run({"-f", "csv"}, fake.backend()).err == "hpu-smi: -f goes with -Q\nTry 'hpu-smi -h' for help.\n");
        CHECK(run({"-Q", "index", "-q"}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(fake.requests.empty());
    }
    SECTION("every documented field name is known")
    {
        for (const auto &f : hpu::smi::field_names()) {
            if (f != "utilization.dma<N>" && f != "utilization.mme<N>")
                CHECK(hpu::smi::field_info(f).has_value());
        }
        CHECK(hpu::smi::field_names().size() == 49);
    }
}

TEST_CASE("option --json: every section, valid against the schema", "[smi][json]")
{
    Fake fake;
    const auto r = run({"--json"}, fake.backend());
    REQUIRE(r.status == 0);
    CHECK(fake.requests[0].need == hpu::smi::kNeedAll);
    const std::string &j = r.out;
    // NOLINTBEGIN(modernize-raw-string-literal): JSON fragments read better escaped
    for (const char *frag : {"\"libhpu_version\": \"1.3.0\"", "\"driver_loaded\": true", "\"serial\": \"HPU-A\"",
                             "\"draw_mw\": 72340", "\"energy_uj\": 987654321", "\"throttle\": [\"power\"]",
                             "\"alarms\": [\"temp-max\", \"power-cap\"]", "\"die_mc\": 45500",
                             "\"total_bytes\": 2147483648", "\"used_bytes\": 6291456", "\"dma_mean_percent\": 35.00",
                             "\"width_current\": 16", "\"ports\": 10", "\"utilization_percent\": 75.00",
                             "\"utilization_percent\": null", R"("name": "idle \"job\"")", "\"mmu_faults\": 3",
                             "\"status\": \"fw-failed\"", "\"draw_mw\": null", "\"throttle\": null",
                             "\"gen_current\": null", "\"version\": \"none\"", "\"tpc_percent\": 25.00",
                             "\"mme_mean_percent\": 30.00", "\"mme_percent\": [50.00, 10.00]",
                             "\"dma_percent\": [0.00, 0.00]", "\"tpc_percent\": null", "\"mme_mean_percent\": null",
                             "\"mme_percent\": []"}) {
        INFO(frag);
        CHECK(j.find(frag) != std::string::npos);
    }
    // NOLINTEND(modernize-raw-string-literal)
    const int v = validate_json(j);
    // tools/dev/bootstrap.sh installs python3-jsonschema: no validator is a failure.
    REQUIRE(v != 2);
    CHECK(v == 0);
    // -d selects sections of the JSON too; the result is still valid.
    const auto r2 = run({"--json", "-d", "MEMORY,NET"}, fake.backend());
    CHECK(r2.out.find("\"memory\"") != std::string::npos);
    CHECK(r2.out.find("\"power\"") == std::string::npos);
    CHECK(validate_json(r2.out) == 0);
    CHECK(run({"-q", "--json"}, fake.backend()).out == r.out);
    // Broken documents are caught by the validator.
    std::string bad = r.out;
    bad.replace(bad.find(R"("ports": 10)"), 11, R"("ports": "10")");
    CHECK(validate_json(bad) == 1);
    CHECK(validate_json("{\"devices\": []}") == 1);
    CHECK(validate_json("not json") == 1);
}

TEST_CASE("option --fw-versions", "[smi]")
{
    Fake fake;
    const auto r = run({"--fw-versions"}, fake.backend());
    CHECK(r.status == 0);
    CHECK(r.out == "HPU 0 (0000:01:00.0): running 1.2.3, stored 1.2.0, minimum 1.0.0, status ok\n"
                   "HPU 1 (0000:02:00.0): running none, stored 1.2.0, minimum 1.0.0, status fw-failed\n");
    CHECK(fake.requests[0].need == hpu::smi::kNeedFirmware);
}

TEST_CASE("option -i by index, PCI address, UUID, lists", "[smi]")
{
    Fake fake;
    const std::string one = "0, HPU-A\n";
    for (const char *id : {"0", "0000:01:00.0", "01:00.0", "01:00.0", "1B4E28BA-2FA1-11D2-883F-0016D3CCA427",
                           "1b4e28ba-2fa1-11d2-883f-0016d3cca427"}) {
        INFO(id);
        const auto r = run({"-Q", "index,serial", "-f", "csv,noheader", "-i", id}, fake.backend());
        CHECK(r.status == 0);
        CHECK(r.out == one);
    }
    auto r = run({"-Q", "index,serial", "-f", "csv,noheader", "--id=ffffffff-ffff-ffff-ffff-ffffffffffff,0"},
                 fake.backend());
    CHECK(r.out == "0, HPU-A\n1, HPU-B\n");
    // The processes of the other device go too.
    r = run({"-i", "1"}, fake.backend());
    CHECK(r.out.find("| trainer") == std::string::npos);
    CHECK(r.out.find("| idle \"job\"") != std::string::npos);
    r = run({"-L", "-i", "0,7"}, fake.backend());
    CHECK(r.status == hpu::smi::kExitNoDevices);
    CHECK(r.err == "hpu-smi: no HPU matches '-i 7'\n");
    r = run({"-L", "-i", "0,zz"}, fake.backend());
    CHECK(r.status == hpu::smi::kExitUsage);
    CHECK(run({"-L", "-i", "0", "-i", "1"}, fake.backend()).status == hpu::smi::kExitUsage);

    hpu::smi::DeviceSnapshot d = smi_full().devices[0];
    CHECK(hpu::smi::matches(d, "1b4e28ba-2fa1-11d2-883f-0016d3cca427"));
    CHECK_FALSE(hpu::smi::matches(d, "1b4e28ba-2fa1-11d2-883f-0016d3cca428"));
    CHECK(hpu::smi::valid_id("0000:0a:00.0"));
    CHECK_FALSE(hpu::smi::valid_id("1b4e28ba2fa111d2883f0016d3cca427"));
    CHECK_FALSE(hpu::smi::valid_id("0a:00"));
}

TEST_CASE("option -l loop with -c, stopped by a signal", "[smi][loop]")
{
    Fake fake;
    SECTION("-Q rows repeat, the header once")
    {
        const auto r = run({"-Q", "index,memory.used", "-f", "csv,nounits", "-l", "2", "-c", "3"}, fake.backend());
        CHECK(r.status == 0);
        CHECK(r.out == "index, memory.used\n0, 6\n1, 0\n0, 6\n1, 0\n0, 6\n1, 0\n");
        CHECK(fake.requests.size() == 3);
        CHECK(fake.waits == std::vector<double>{2.0, 2.0});
    }
    SECTION("default interval 1 s; tables separated by a blank line")
    {
        const auto r = run({"-l", "--count=2"}, fake.backend());
        CHECK(r.out == std::string(kTable) + "\n" + kTable);
        CHECK(fake.waits == std::vector<double>{1.0});
        const auto r2 = run({"--loop=0.5", "-c", "2", "-L"}, fake.backend());
        CHECK(r2.out == hpu::smi::format_list(smi_full()) + "\n" + hpu::smi::format_list(smi_full()));
    }
    SECTION("SIGINT/SIGTERM ends the loop cleanly with status 0")
    {
        fake.stop_after = 2;
        const auto r = run({"-Q", "index", "-f", "csv,noheader", "-l", "1"}, fake.backend());
        CHECK(r.status == 0);
        CHECK(r.out == "0\n1\n0\n1\n");
        CHECK(fake.requests.size() == 2);
    }
    SECTION("an error ends it with the error's status")
    {
        Backend be = fake.backend();
        int n = 0;
        be.gather = [&n](const Request &) -> Snapshot {
            if (++n == 2)
                throw hpu::Error(-EACCES, "opening HPU 0");
            return smi_full();
        };
        const auto r = run({"-L", "-l", "-c", "5"}, be);
        CHECK(r.status == hpu::smi::kExitPermission);
        CHECK(n == 2);
    }
    SECTION("usage errors")
    {
        CHECK(run({"-c", "3"}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(run({"-l", "0"}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(run({"-l", "1x"}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(run({"-l", "-c", "0"}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(run({"-r", "-i", "0", "-l"}, fake.backend()).status == hpu::smi::kExitUsage);
        CHECK(fake.requests.empty());
    }
}

namespace {

// A CSV line split as Python's csv module does with skipinitialspace=True:
// spaces after a separator are skipped, a cell then starting with '"' is
// quoted ("" inside is one quote).
std::vector<std::string> parse_csv_skipinitialspace(const std::string &line)
{
    std::vector<std::string> cells;
    std::size_t i = 0;
    for (;;) {
        while (i < line.size() && line[i] == ' ')
            ++i;
        std::string cell;
        if (i < line.size() && line[i] == '"') {
            for (++i; i < line.size(); ++i) {
                if (line[i] == '"') {
                    if (i + 1 < line.size() && line[i + 1] == '"') {
                        cell += '"';
                        ++i;
                        continue;
                    }
                    ++i;
                    break;
                }
                cell += line[i];
            }
            while (i < line.size() && line[i] != ',')
                cell += line[i++];
        } else {
            while (i < line.size() && line[i] != ',')
                cell += line[i++];
        }
        cells.push_back(cell);
        if (i >= line.size())
            return cells;
        ++i; // the ','
    }
}

} // namespace

TEST_CASE("untrusted text: no control characters in text and CSV", "[smi][escape]")
{
    Snapshot s = smi_full();
    s.devices[0].serial = "SN\x1b]0;pwned\x07";
    s.devices[0].name = "H1\x7f";
    s.processes[0].name = "evil\x1b[2J\x9b" "1m\xc2\x9b" "Z\xc3\xbc";
    const std::string table = hpu::smi::format_table(s);
    CHECK(table.find('\x1b') == std::string::npos);
    CHECK(table.find('\x7f') == std::string::npos);
    CHECK(table.find("SN?]0;pwned?") != std::string::npos);
    CHECK(table.find("evil?[2J?1m?Z\xc3\xbc") != std::string::npos); // valid UTF-8 stays
    const std::string q = hpu::smi::format_query(s, hpu::smi::kProduct | hpu::smi::kProcesses);
    CHECK(q.find('\x1b') == std::string::npos);
    CHECK(q.find("HPU 0: H1? (PCI") != std::string::npos);
    CHECK(hpu::smi::format_list(s).find('\x1b') == std::string::npos);
    const std::string csv = hpu::smi::format_csv_rows(s, {"serial"}, {});
    CHECK(csv.find("SN?]0;pwned?\n") == 0);
    s.devices[0].serial = "a\nb\r";
    CHECK(hpu::smi::format_csv_rows(s, {"serial"}, {}).find("a?b?\n") == 0); // one line per device
    CHECK(hpu::smi::printable("ok \xe2\x82\xac \xff") == "ok \xe2\x82\xac ?");
}

TEST_CASE("JSON strings: UTF-8 passes, invalid bytes are U+FFFD, controls escaped", "[smi][json]")
{
    Snapshot s = smi_full();
    s.devices[0].serial = "Z\xc3\xbcrich \xe2\x82\xac";
    s.processes[0].name = "bad\xff\xc3(\x1b\x7f\xc2\x9b";
    const std::string j = hpu::smi::format_json(s, hpu::smi::kProcesses);
    CHECK(j.find("\"serial\": \"Z\xc3\xbcrich \xe2\x82\xac\"") != std::string::npos);
    CHECK(j.find("\"name\": \"bad\\ufffd\\ufffd(\\u001b\\u007f\\u009b\"") != std::string::npos);
}

TEST_CASE("CSV: a quoted cell after ', ' reads back with skipinitialspace", "[smi][csv]")
{
    Snapshot s = smi_full();
    s.devices[0].serial = "HPU, \"A\"";
    const std::string rows = hpu::smi::format_csv_rows(s, {"index", "serial", "name"}, {});
    const std::string first = rows.substr(0, rows.find('\n'));
    CHECK(first == "0, \"HPU, \"\"A\"\"\", H1");
    CHECK(parse_csv_skipinitialspace(first) == std::vector<std::string>{"0", "HPU, \"A\"", "H1"});
}

TEST_CASE("option -l blocks SIGINT and SIGTERM before the first round", "[smi][loop]")
{
    Fake fake;
    std::vector<std::string> calls;
    Backend be = fake.backend();
    be.block_signals = [&calls]() {
        calls.emplace_back("block");
        return true;
    };
    be.gather = [&calls](const Request &) {
        calls.emplace_back("gather");
        return smi_full();
    };
    CHECK(run({"-L", "-l", "-c", "2"}, be).status == 0);
    CHECK(calls == std::vector<std::string>{"block", "gather", "gather"});
    calls.clear();
    CHECK(run({"-L"}, be).status == 0); // without -l nothing is blocked
    CHECK(calls == std::vector<std::string>{"gather"});
}

TEST_CASE("option -n: the link, ports and stats views of the NIC ports", "[smi][nic]")
{
    const Snapshot s = smi_full();
    const std::string link = hpu::smi::format_nic(s, hpu::smi::NicView::Link);
    const auto l = lines(link);
    REQUIRE(l.size() == 14);
    CHECK(l[0] == "HPU 0 (0000:01:00.0) port 0: eth1 up");
    CHECK(l[1] == "HPU 0 (0000:01:00.0) port 1: eth2 down");
    CHECK(l[2] == "HPU 0 (0000:01:00.0) port 2: eth3 unknown");
    CHECK(l[3] == "HPU 0 (0000:01:00.0) port 3: error: Permission denied");
    CHECK(l[4] == "HPU 0 (0000:01:00.0) port 4: no interface (is hpu_en loaded?)");
    CHECK(l[10] == "HPU 1 (0000:02:00.0) port 0: no interface (is hpu_en loaded?)");
    const std::string ports = hpu::smi::format_nic(s, hpu::smi::NicView::Ports);
    CHECK(ports.starts_with("HPU 0 (0000:01:00.0) port 0: eth1 02:48:50:ab:cd:10 MTU 9000 100000 Mb/s\n"
                            "HPU 0 (0000:01:00.0) port 1: eth2 02:48:50:ab:cd:11 MTU 1500 -\n"));
    const std::string stats = hpu::smi::format_nic(s, hpu::smi::NicView::Stats);
    CHECK(stats.starts_with("HPU 0 (0000:01:00.0) port 0: eth1\n"
                            "    RX: 1 packets, 3 bytes, 0 errors, 5 dropped\n"
                            "    TX: 2 packets, 4 bytes, 0 errors, 6 dropped\n"
                            "HPU 0 (0000:01:00.0) port 1: eth2\n"));
    // A device that could not be read, a device without ports.
    Snapshot t = smi_full();
    t.devices[0].error = "Input/output error";
    t.devices[1].nic.clear();
    CHECK(hpu::smi::format_nic(t, hpu::smi::NicView::Link) ==
          "HPU 0 (0000:01:00.0): error: Input/output error\nHPU 1 (0000:02:00.0): no NIC ports\n");

    Fake fake;
    for (const char *v : {"link", "ports", "stats"}) {
        const auto r = run({"-n", v}, fake.backend());
        CHECK(r.status == 0);
        REQUIRE_FALSE(fake.requests.empty());
        CHECK(fake.requests.back().need == hpu::smi::kNeedNet);
    }
    CHECK(run({"--nic=stats"}, fake.backend()).out == stats);
    auto r = run({"-n", "speed"}, fake.backend());
    CHECK(r.status == hpu::smi::kExitUsage);
    CHECK(r.err == "hpu-smi: unknown view 'speed' for -n (known: link, ports, stats)\nTry 'hpu-smi -h' for help.\n");
    CHECK(run({"-n"}, fake.backend()).status == hpu::smi::kExitUsage);
    CHECK(run({"-n", "link", "-q"}, fake.backend()).status == hpu::smi::kExitUsage);
}

TEST_CASE("JSON net: one object per port, an interface or the reason it has none", "[smi][nic][json]")
{
    const Snapshot s = smi_full();
    const std::string j = hpu::smi::format_json(s, hpu::smi::kNet);
    CHECK(validate_json(j) == 0);
    CHECK(j.find("\"links_up\": 1") != std::string::npos);
    CHECK(j.find("\"interface\": \"eth1\"") != std::string::npos);
    CHECK(j.find("\"mac\": \"02:48:50:ab:cd:10\"") != std::string::npos);
    CHECK(j.find("\"speed_mbps\": 100000") != std::string::npos);
    CHECK(j.find("\"link\": \"unknown\"") != std::string::npos);
    CHECK(j.find("\"error\": \"no interface (is hpu_en loaded?)\"") != std::string::npos);
}
