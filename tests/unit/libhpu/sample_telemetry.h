// SPDX-License-Identifier: MIT
// The sample readings the telemetry tests share: one set of values, filled
// into the kernel's answer (drm_hpu_info_telemetry) or into the library's
// structure (hpu_telemetry), whose fields have the same names.
//
// Copyright (c) 2026 The hpu authors
#ifndef HPU_TESTS_SAMPLE_TELEMETRY_H
#define HPU_TESTS_SAMPLE_TELEMETRY_H

namespace hpu::test {

// Energy, 2 GiB of HBM (6 MiB used), temperatures, power, voltages, clocks
// and the utilisation of 8 engines (engine i at i * 10 %).
template <class Telemetry>
void fill_sample_telemetry(Telemetry &t)
{
    t.num_engines = 8;
    t.energy_uj = 987654321;
    t.hbm_total = (1ULL << 31U) - (2ULL << 20U);
    t.hbm_used = 6ULL << 20U;
    t.temp_die_mc = 45500;
    t.temp_hbm_mc = 38300;
    t.temp_board_mc = 31900;
    t.temp_max_mc = 95000;
    t.temp_crit_mc = 105000;
    t.hbm_temp_max_mc = 85000;
    t.power_mw = 72340;
    t.power_cap_mw = 350000;
    t.power_cap_max_mw = 400000;
    t.volt_core_mv = 850;
    t.volt_hbm_mv = 1200;
    t.clk_core_mhz = 1500;
    t.clk_core_max_mhz = 1800;
    t.clk_hbm_mhz = 1600;
    t.util_window_ms = 1000;
    for (unsigned int i = 0; i < 8; ++i)
        t.engine_util[i] = i * 1000; // NOLINT(cppcoreguidelines-pro-bounds-constant-array-index)
}

} // namespace hpu::test

#endif // HPU_TESTS_SAMPLE_TELEMETRY_H
