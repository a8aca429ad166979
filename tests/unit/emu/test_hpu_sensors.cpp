// SPDX-License-Identifier: MIT
//
// Unit tests of spec version 4 (Documentation/hw/firmware-and-telemetry.md):
// the sensors and their thermal and power model (throttling,
// alarms, THERMAL and POWER events) and the busy counters.
//
// Copyright (c) 2026 The hpu authors

#include "hpu_fw_fixture.hpp"

using namespace hpu_test;
using namespace hpu_fw_test;

TEST_CASE("sensors read 0 unless RUNNING and start at ambient",
          "[emu][fw][sensor]")
{
    Dev d(sensor_opts());

    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_DIE)) == 25000);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_HBM)) == 25000);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_BOARD)) == 25000);
    CHECK(d.rd(HPU_REG_POWER_MW) == 60000);
    CHECK(d.rd(HPU_REG_CLK_CUR_MHZ) == 1600);
    CHECK(d.rd(HPU_REG_CLK_MAX_MHZ) == 1600);
    CHECK(d.rd(HPU_REG_CLK_HBM_MHZ) == 1600);
    CHECK(d.rd(HPU_REG_VOLT_CORE_MV) == 950);
    CHECK(d.rd(HPU_REG_VOLT_HBM_MV) == 1200);
    CHECK(d.rd(HPU_REG_SENSOR_SEQ) == 0);
    CHECK(d.rd(HPU_REG_THROTTLE) == 0);
    CHECK(d.rd(HPU_REG_ALARM) == 0);
    d.advance(10 * MS - 1);
    CHECK(d.rd(HPU_REG_SENSOR_SEQ) == 0);
    d.advance(1);
    CHECK(d.rd(HPU_REG_SENSOR_SEQ) == 1);
    // idle: 60 W, 0.6 J per 10 ms period; die toward 25 + 60 * 0.15 C
    d.advance(990 * MS);
    CHECK(d.rd(HPU_REG_SENSOR_SEQ) == 100);
    CHECK(d.rd(HPU_REG_ENERGY_LO) == 100 * 600000u);
    CHECK(d.rd(HPU_REG_ENERGY_HI) == 0);
    uint32_t die = d.rd(HPU_REG_TEMP(HPU_TEMP_DIE));
    // after 1 s with tau 2 s: 1 - (1 - 1/200)^100 of the 9 C gap
    CHECK(die > 25000 + 3400);
    CHECK(die < 25000 + 3700);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_HBM)) ==
          static_cast<uint32_t>(25000 + 0.6 * (die - 25000) + 0.5) / 1);
    d.advance(60000 * MS);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_DIE)) == 34000);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_HBM)) == 30400);
    CHECK(d.rd(HPU_REG_TEMP(HPU_TEMP_BOARD)) == 27700);
    // HALTED: everything reads 0, no more periods
    d.wr(HPU_REG_INJ_FW, HPU_INJ_FW_FATAL);
    for (uint32_t reg = HPU_REG_TEMP(0); reg <= HPU_REG_SENSOR_SEQ; reg += 4) {
        if (reg != 0x420c) {
            CHECK(d.rd(reg) == 0);
        }
    }
}

TEST_CASE("ENERGY_LO latches ENERGY_HI", "[emu][fw][sensor]")
{
    Dev d(sensor_opts());

    d.core.sens.energy_uj = 0x00000002fffffff0ULL;
    CHECK(d.rd(HPU_REG_ENERGY_HI) == 0);        // nothing latched yet
    CHECK(d.rd(HPU_REG_ENERGY_LO) == 0xfffffff0u);
    d.advance(10 * MS);                         // + 600000 uJ: carries
    CHECK(d.rd(HPU_REG_ENERGY_HI) == 2);        // the latched half
    CHECK(d.rd(HPU_REG_ENERGY_LO) == 0xfffffff0u + 600000u);
    CHECK(d.rd(HPU_REG_ENERGY_HI) == 3);
}

TEST_CASE("BUSY_NS counts packet execution in device time, WAIT excluded",
          "[emu][fw][busy]")
{
    Rig r;
    const uint64_t src = r.halloc(2 * MiB, PG);

    CHECK(busy_ns(r, 2) == 0);
    r.env.on_dma_read = [&](uint64_t a) {
        if (a >= src && a < src + 2 * MiB) {
            r.env.now += 3000;
            // mid-packet reads include the packet in execution
            CHECK(r.core.busy[2].running);
        }
    };
    CHECK(r.run_cb(Cb().lin_dma(host_addr(src), 0, 2 * MiB), 0, 2).status ==
          HPU_CQ_OK);
    r.env.on_dma_read = nullptr;
    CHECK(busy_ns(r, 2) == 6000);
    CHECK(busy_ns(r, 1) == 0);
    // a WAIT that blocks for 1 s does not count
    r.setup_stream(2, 1);
    r.submit(2, 1, Cb().wait(3, 1, HPU_WAIT_GE).nop());
    r.run();
    CHECK(r.status(2, 1) == HPU_QS_STATUS_WAITING);
    r.advance(1000 * MS);
    r.wr(HPU_REG_SOB(3), 1);
    r.run();
    CHECK(r.cq_pi(2, 1) == 1);
    CHECK(busy_ns(r, 2) == 6000);
    // LO latches HI; counts survive soft and hard reset, whatever the CPU
    r.core.busy[5].ns = 0x0000000100000005ULL;
    CHECK(r.rd(HPU_REG_BUSY_NS_HI(5)) == 0);
    CHECK(r.rd(HPU_REG_BUSY_NS_LO(5)) == 5);
    r.core.busy[5].ns = 0x0000000200000005ULL;
    CHECK(r.rd(HPU_REG_BUSY_NS_HI(5)) == 1);
    r.wr(HPU_REG_SOFT_RESET, HPU_SOFT_RESET_KEY);
    r.advance(HPU_SOFT_RESET_NS);
    hard_reset(r);
    CHECK(r.rd(HPU_REG_CPU_STATUS) == HPU_CPU_ROM_INIT);
    CHECK(busy_ns(r, 2) == 6000);
    CHECK(busy_ns(r, 5) == 0x0000000200000005ULL);
    // counting goes on while the CPU waits for an image
    r.q[2][0] = {};
    r.env.on_dma_read = [&](uint64_t a) {
        if (a >= src && a < src + 2 * MiB) {
            r.env.now += 500;
        }
    };
    CHECK(r.run_cb(Cb().lin_dma(host_addr(src), 0, MiB), 0, 2).status ==
          HPU_CQ_OK);
    r.env.on_dma_read = nullptr;
    CHECK(busy_ns(r, 2) == 6500);
}

TEST_CASE("power and die temperature rise under load and fall back",
          "[emu][fw][sensor]")
{
    Rig r(sensor_opts());
    Load load(r);

    r.advance(30000 * MS);                      // settle at idle
    uint32_t idle_die = r.rd(HPU_REG_TEMP(HPU_TEMP_DIE));
    CHECK(idle_die == 34000);
    CHECK(r.rd(HPU_REG_POWER_MW) == 60000);
    uint32_t e0 = r.rd(HPU_REG_ENERGY_LO);

    load.run(0, 3000 * MS);                     // 3 s of DMA on engine 0
    // one engine fully busy at the top clock: 60 + 30 W
    CHECK(r.rd(HPU_REG_POWER_MW) == 90000);
    uint32_t hot = r.rd(HPU_REG_TEMP(HPU_TEMP_DIE));
    // toward 25 + 90 * 0.15 = 38.5 C with tau 2 s: about 78 % of the way
    CHECK(hot > idle_die + 3000);
    CHECK(hot < 38500);
    CHECK(r.rd(HPU_REG_TEMP(HPU_TEMP_HBM)) > 30400);
    CHECK(r.rd(HPU_REG_TEMP(HPU_TEMP_BOARD)) > 27700);
    uint32_t e1 = r.rd(HPU_REG_ENERGY_LO);
    CHECK(e1 - e0 > 3 * 89000u * 1000u);        // > 3 s at 89 W
    CHECK(busy_ns(r, 0) >= 3000 * MS);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1600);
    CHECK(r.rd(HPU_REG_THROTTLE) == 0);

    // two engines, each busy half of every period: the sum is one engine
    for (int i = 0; i < 10; i++) {
        load.run(1, 5 * MS, 5 * MS);
        load.run(2, 5 * MS, 5 * MS);
    }
    CHECK(r.rd(HPU_REG_POWER_MW) == 90000);

    r.advance(20 * MS);
    CHECK(r.rd(HPU_REG_POWER_MW) == 60000);
    r.advance(10000 * MS);
    uint32_t cool = r.rd(HPU_REG_TEMP(HPU_TEMP_DIE));
    CHECK(cool < hot);
    CHECK(cool <= idle_die + 100);
    CHECK(r.rd(HPU_REG_ALARM) == 0);
}

TEST_CASE("POWER_CAP throttles one level per period; POWER event edges",
          "[emu][fw][sensor][event]")
{
    Rig r(sensor_opts(80000));
    Load load(r);

    r.setup_eq(64);
    r.advance(100 * MS);
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    load.run(0, 15 * MS, 5 * MS);               // P 90 W > 80 W: drop once
    // level 3 (1400 MHz) at u = 1: 60 * 0.9375 + 30 * 0.875 = 82.5 W
    // level 2 (1200 MHz): 52.5 + 22.5 = 75 W: below the cap, holds/rises
    CHECK(r.rd(HPU_REG_ALARM) == HPU_ALARM_POWER_CAP);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1400);
    CHECK(r.rd(HPU_REG_VOLT_CORE_MV) == 900);
    CHECK(r.rd(HPU_REG_THROTTLE) == HPU_THROTTLE_POWER);
    auto ev = events(r, HPU_EVENT_POWER);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].info == 90000);
    CHECK(ev[0].severity == HPU_EVENT_SEV_ERROR);
    CHECK(ev[0].engine == HPU_EVENT_ENGINE_NONE);
    load.run(0, 10 * MS);
    CHECK(r.rd(HPU_REG_POWER_MW) == 82500);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1200);
    load.run(0, 400 * MS);
    // the clock dithers between 1200 and 1400 MHz around the cap; the
    // alarm bit follows it, but POWER is not posted again while throttled
    uint32_t mhz = r.rd(HPU_REG_CLK_CUR_MHZ);
    CHECK((mhz == 1200 || mhz == 1400));
    CHECK(r.rd(HPU_REG_THROTTLE) == HPU_THROTTLE_POWER);
    CHECK(events(r, HPU_EVENT_POWER).size() == 1);
    // idle: back to the top, one level per period, THROTTLE clears
    r.advance(10 * MS);
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    r.advance(30 * MS);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1600);
    CHECK(r.rd(HPU_REG_THROTTLE) == 0);
    // re-armed: the next excursion posts again
    r.advance(10 * MS);
    load.run(0, 20 * MS);
    CHECK(events(r, HPU_EVENT_POWER).size() == 2);
    // a cap set through the mailbox takes effect at once, even idle
    r.advance(100 * MS);
    CHECK(mbox(r, HPU_MBOX_SET_LIMIT, HPU_LIMIT_POWER_CAP, 50000) ==
          HPU_MBOX_OK);
    r.advance(100 * MS);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) < 1600);
    CHECK(r.rd(HPU_REG_THROTTLE) == HPU_THROTTLE_POWER);
}

TEST_CASE("TEMP_MAX throttles with hysteresis; THERMAL event edges, re-arm",
          "[emu][fw][sensor][event]")
{
    // TEMP_MAX 36 C: reached under load (toward 38.5 C), not idle (34 C)
    Rig r(sensor_opts(450000, 36000));
    Load load(r);

    r.setup_eq(64);
    r.advance(30000 * MS);
    CHECK(r.rd(HPU_REG_TEMP(HPU_TEMP_DIE)) == 34000);
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    // load until the die reaches 36 C
    uint64_t t = 0;
    while (!(r.rd(HPU_REG_ALARM) & HPU_ALARM_TEMP_MAX) && t < 10000 * MS) {
        load.run(0, 10 * MS);
        t += 10 * MS;
    }
    REQUIRE(r.rd(HPU_REG_ALARM) == HPU_ALARM_TEMP_MAX);
    CHECK(r.rd(HPU_REG_TEMP(HPU_TEMP_DIE)) >= 36000);
    auto ev = events(r, HPU_EVENT_THERMAL);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].info == r.rd(HPU_REG_TEMP(HPU_TEMP_DIE)));
    CHECK(ev[0].severity == HPU_EVENT_SEV_ERROR);
    CHECK(r.rd(HPU_REG_THROTTLE) == HPU_THROTTLE_THERMAL);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1400);
    // keep the load on: the clock keeps dropping while the die is hot
    load.run(0, 30 * MS);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) <= 1200);
    load.run(0, 2000 * MS);
    CHECK(events(r, HPU_EVENT_THERMAL).size() == 1);
    // idle: the die cools; the clock holds until below 36 - 3 C; no
    // re-arm before that, so dipping just under TEMP_MAX posts nothing
    r.advance(2000 * MS);
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    uint32_t die = r.rd(HPU_REG_TEMP(HPU_TEMP_DIE));
    CHECK(die < 36000);
    // with the level lowered the idle equilibrium is below 33 C
    r.advance(20000 * MS);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1600);
    CHECK(r.rd(HPU_REG_THROTTLE) == 0);
    // TEMP_CRIT and HBM_TEMP_MAX only report
    CHECK(mbox(r, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_CRIT, 40000) ==
          HPU_MBOX_OK);
    CHECK(mbox(r, HPU_MBOX_SET_LIMIT, HPU_LIMIT_HBM_TEMP_MAX, 30000) ==
          HPU_MBOX_OK);
    r.advance(20 * MS);
    CHECK(r.rd(HPU_REG_ALARM) == HPU_ALARM_HBM_TEMP_MAX);
    CHECK(r.rd(HPU_REG_CLK_CUR_MHZ) == 1600);
    // lower TEMP_MAX below the idle die: THERMAL again (re-armed)
    CHECK(mbox(r, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_MAX, 30000) ==
          HPU_MBOX_OK);
    r.advance(20 * MS);
    CHECK((r.rd(HPU_REG_ALARM) & HPU_ALARM_TEMP_MAX));
    CHECK(r.rd(HPU_REG_THROTTLE) == HPU_THROTTLE_THERMAL);
    CHECK(events(r, HPU_EVENT_THERMAL).size() == 2);
}

TEST_CASE("TEMP_CRIT alarm follows the die temperature", "[emu][fw][sensor]")
{
    Dev d(sensor_opts());

    d.advance(30000 * MS);                      // 34 C idle
    CHECK(mbox(d, HPU_MBOX_SET_LIMIT, HPU_LIMIT_TEMP_CRIT, 40000) ==
          HPU_MBOX_OK);
    d.advance(10 * MS);
    CHECK(d.rd(HPU_REG_ALARM) == 0);
    d.core.rom.fw.limit[HPU_LIMIT_TEMP_CRIT].cur = 34000;   // == die
    d.advance(10 * MS);
    CHECK(d.rd(HPU_REG_ALARM) == HPU_ALARM_TEMP_CRIT);
    CHECK(d.rd(HPU_REG_CLK_CUR_MHZ) == 1600);   // reported only
}

TEST_CASE("THERMAL re-arms only below TEMP_MAX - hysteresis",
          "[emu][fw][sensor][event]")
{
    Rig r(sensor_opts(450000, 36000));          // hysteresis 3 C: 33 C
    auto die = [&](double mc) {
        r.core.sens.die_mc = mc;                // backdoor: the die now
        r.advance(10 * MS);                     // one period
    };

    r.setup_eq(64);
    r.advance(30000 * MS);                      // idle: 34 C, no alarm
    die(36500);
    CHECK(r.rd(HPU_REG_ALARM) == HPU_ALARM_TEMP_MAX);
    CHECK(events(r, HPU_EVENT_THERMAL).size() == 1);
    die(36500);                                 // still set: no new edge
    CHECK(events(r, HPU_EVENT_THERMAL).size() == 1);
    die(35500);                                 // clear, not below 33 C
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    die(36500);                                 // an edge, not re-armed
    CHECK(r.rd(HPU_REG_ALARM) == HPU_ALARM_TEMP_MAX);
    CHECK(events(r, HPU_EVENT_THERMAL).size() == 1);
    die(32000);                                 // clear and below 33 C
    CHECK(r.rd(HPU_REG_ALARM) == 0);
    die(36500);
    auto ev = events(r, HPU_EVENT_THERMAL);
    REQUIRE(ev.size() == 2);
    CHECK(ev[1].info == r.rd(HPU_REG_TEMP(HPU_TEMP_DIE)));
    CHECK(ev[1].info >= 36000);
    CHECK(events(r, HPU_EVENT_POWER).empty());
}
