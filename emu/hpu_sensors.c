/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: the sensors with their thermal and power model and the
 * per-engine busy counters (Documentation/hw/firmware-and-telemetry.md,
 * spec version 4).  No firmware runs: what it would measure is modelled
 * from the THERMAL and CLOCKS tables of the image the boot ROM accepted
 * (HpuRom.fw), once per sensor period while the CPU is RUNNING.
 *
 * Register handlers and timers run under the core lock.  Plain C99, no
 * QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <string.h>

#include "hpu_internal.h"

#define HPU_SENSOR_BLOCK_SIZE   (HPU_REG_SENSOR_SEQ + 4 - HPU_REG_TEMP(0))
#define HPU_BUSY_BLOCK_SIZE     (HPU_REG_BUSY_NS_HI(HPU_H1_ENGINES - 1) + \
                                 4 - HPU_REG_BUSY_NS_LO(0))

/* Busy counters */

static uint64_t hpum_busy_total(HpuCore *c, unsigned int e,
                                uint64_t now)
{
    const HpuBusy *b = &c->busy[e];

    return b->ns + (b->running && now > b->start ? now - b->start : 0);
}

void hpum_busy_begin(HpuCore *c, unsigned int e)
{
    c->busy[e].start = hpum_now(c);
    c->busy[e].running = true;
}

void hpum_busy_end(HpuCore *c, unsigned int e)
{
    HpuBusy *b = &c->busy[e];
    uint64_t now = hpum_now(c);

    if (b->running) {
        b->ns += now > b->start ? now - b->start : 0;
        b->running = false;
    }
}

static HpuAccess hpum_busy_read(HpuCore *c, uint32_t offset,
                                uint32_t *val)
{
    unsigned int e = (offset - HPU_REG_BUSY_NS_LO(0)) / 8;
    uint64_t v;

    if (offset & 4) {
        *val = c->busy[e].hi;
    } else {
        v = hpum_busy_total(c, e, hpum_now(c));
        c->busy[e].hi = (uint32_t)(v >> 32);
        *val = (uint32_t)v;
    }
    return HPU_ACCESS_OK;
}

static HpuAccess hpum_busy_write(HpuCore *c, uint32_t offset,
                                 uint32_t val)
{
    (void)c;
    (void)offset;
    (void)val;
    return HPU_ACCESS_READ_ONLY;
}

const HpuBlock hpum_busy_block = {
    .name = "busy",
    .base = HPU_REG_BUSY_NS_LO(0),
    .size = HPU_BUSY_BLOCK_SIZE,
    .read = hpum_busy_read,
    .write = hpum_busy_write,
};

/* Sensors and the thermal model */

static double hpum_clock_ratio(const HpuFwInfo *fw, unsigned int l)
{
    uint32_t fmax = fw->clk_mhz[fw->nclocks - 1];

    return fmax ? (double)fw->clk_mhz[l] / fmax : 1.0;
}

static uint32_t hpum_round(double v)
{
    if (v <= 0) {
        return 0;
    }
    if (v >= 4294967295.0) {
        return UINT32_MAX;
    }
    return (uint32_t)(v + 0.5);
}

static void hpum_sensor_publish(HpuCore *c)
{
    HpuSensors *s = &c->sens;
    double ambient = c->rom.fw.thermal.ambient_mc;
    double rise = s->die_mc - ambient;

    s->temp[HPU_TEMP_DIE] = hpum_round(s->die_mc);
    s->temp[HPU_TEMP_HBM] = hpum_round(ambient + 0.6 * rise);
    s->temp[HPU_TEMP_BOARD] = hpum_round(ambient + 0.3 * rise);
    s->power = hpum_round(s->power_mw);
}

void hpum_sensor_start(HpuCore *c)
{
    const HpuFwInfo *fw = &c->rom.fw;
    HpuSensors *s = &c->sens;
    uint64_t now = hpum_now(c);
    unsigned int e;

    memset(s, 0, sizeof(*s));
    s->die_mc = fw->thermal.ambient_mc;
    s->level = fw->nclocks - 1;
    s->power_mw = fw->thermal.idle_mw;          /* idle, top clock */
    s->thermal_armed = s->power_armed = true;
    for (e = 0; e < HPU_H1_DMA_ENGINES; e++) {
        s->busy_last[e] = hpum_busy_total(c, e, now);
    }
    hpum_sensor_publish(c);
    hpum_timer_arm(c, HPU_TMR_SENSOR, fw->thermal.period_ms * HPU_NS_PER_MS);
}

void hpum_sensor_period(HpuCore *c)
{
    const HpuFwInfo *fw = &c->rom.fw;
    HpuSensors *s = &c->sens;
    const HpuFwLimitState *lim = fw->limit;
    uint64_t now = hpum_now(c);
    uint64_t period_ns = fw->thermal.period_ms * HPU_NS_PER_MS;
    double u = 0, r, p, target, k, energy;
    int64_t tmax = lim[HPU_LIMIT_TEMP_MAX].cur;
    int64_t cool = tmax - (int64_t)fw->thermal.hysteresis_mc;
    unsigned int e, top = fw->nclocks - 1;
    uint32_t alarm = 0, rising;
    bool hot, over;

    for (e = 0; e < HPU_H1_DMA_ENGINES; e++) {
        uint64_t t = hpum_busy_total(c, e, now);
        double ue = (double)(t - s->busy_last[e]) / (double)period_ns;

        s->busy_last[e] = t;
        u += ue > 1 ? 1 : ue;
    }
    r = hpum_clock_ratio(fw, s->level);
    p = fw->thermal.idle_mw * (0.5 + 0.5 * r) + fw->thermal.engine_mw * r * u;
    target = fw->thermal.ambient_mc + p * fw->thermal.rth_mc_per_w / 1000.0;
    k = (double)fw->thermal.period_ms / fw->thermal.tau_ms;
    s->die_mc += (target - s->die_mc) * (k > 1 ? 1 : k);
    s->power_mw = p;
    /* mW * ms = uJ */
    energy = p * fw->thermal.period_ms + s->energy_frac;
    s->energy_uj += (uint64_t)energy;
    s->energy_frac = energy - (double)(uint64_t)energy;
    hpum_sensor_publish(c);

    if (s->temp[HPU_TEMP_DIE] >= lim[HPU_LIMIT_TEMP_MAX].cur) {
        alarm |= HPU_ALARM_TEMP_MAX;
    }
    if (s->temp[HPU_TEMP_DIE] >= lim[HPU_LIMIT_TEMP_CRIT].cur) {
        alarm |= HPU_ALARM_TEMP_CRIT;
    }
    if (s->power > lim[HPU_LIMIT_POWER_CAP].cur) {
        alarm |= HPU_ALARM_POWER_CAP;
    }
    if (s->temp[HPU_TEMP_HBM] >= lim[HPU_LIMIT_HBM_TEMP_MAX].cur) {
        alarm |= HPU_ALARM_HBM_TEMP_MAX;
    }
    rising = alarm & ~s->alarm;
    s->alarm = alarm;
    if ((rising & HPU_ALARM_TEMP_MAX) && s->thermal_armed) {
        s->thermal_armed = false;
        hpum_event_defer(c, &(HpuEvent){
            .id = HPU_EVENT_THERMAL,
            .severity = HPU_EVENT_SEV_ERROR,
            .engine = HPU_EVENT_ENGINE_NONE,
            .info = s->temp[HPU_TEMP_DIE],
        });
    } else if (!(alarm & HPU_ALARM_TEMP_MAX) &&
               (int64_t)s->temp[HPU_TEMP_DIE] < cool) {
        s->thermal_armed = true;
    }
    if ((rising & HPU_ALARM_POWER_CAP) && s->power_armed) {
        s->power_armed = false;
        hpum_event_defer(c, &(HpuEvent){
            .id = HPU_EVENT_POWER,
            .severity = HPU_EVENT_SEV_ERROR,
            .engine = HPU_EVENT_ENGINE_NONE,
            .info = s->power,
        });
    } else if (!(alarm & HPU_ALARM_POWER_CAP) &&
               s->power < lim[HPU_LIMIT_POWER_CAP].cur && s->level == top) {
        /* the episode is over: below the cap at the top clock again */
        s->power_armed = true;
    }

    /* The clock for the next period. */
    hot = alarm & HPU_ALARM_TEMP_MAX;
    over = alarm & HPU_ALARM_POWER_CAP;
    if (hot || over) {
        if (s->level > 0) {
            s->level--;
        }
        if (s->level < top) {
            s->throttle |= (hot ? HPU_THROTTLE_THERMAL : 0) |
                           (over ? HPU_THROTTLE_POWER : 0);
        }
    } else if ((int64_t)s->temp[HPU_TEMP_DIE] < cool &&
               s->power < lim[HPU_LIMIT_POWER_CAP].cur && s->level < top) {
        s->level++;
    }
    if (s->level == top) {
        s->throttle = 0;
    }
    s->seq++;
    hpum_timer_arm(c, HPU_TMR_SENSOR, period_ns);
}

static HpuAccess hpum_sensor_read(HpuCore *c, uint32_t offset,
                                  uint32_t *val)
{
    const HpuFwInfo *fw = &c->rom.fw;
    HpuSensors *s = &c->sens;
    bool on = hpum_cpu_running(c);

    switch (offset) {
    case HPU_REG_TEMP(0):
    case HPU_REG_TEMP(1):
    case HPU_REG_TEMP(2):
        *val = on ? s->temp[(offset - HPU_REG_TEMP(0)) / 4] : 0;
        break;
    case HPU_REG_POWER_MW:
        *val = on ? s->power : 0;
        break;
    case HPU_REG_ENERGY_LO:
        s->energy_hi = on ? (uint32_t)(s->energy_uj >> 32) : 0;
        *val = on ? (uint32_t)s->energy_uj : 0;
        break;
    case HPU_REG_ENERGY_HI:
        *val = on ? s->energy_hi : 0;
        break;
    case HPU_REG_VOLT_CORE_MV:
        *val = on ? fw->clk_mv[s->level] : 0;
        break;
    case HPU_REG_VOLT_HBM_MV:
        *val = on ? fw->thermal.hbm_mv : 0;
        break;
    case HPU_REG_CLK_CUR_MHZ:
        *val = on ? fw->clk_mhz[s->level] : 0;
        break;
    case HPU_REG_CLK_MAX_MHZ:
        *val = on ? fw->clk_mhz[fw->nclocks - 1] : 0;
        break;
    case HPU_REG_CLK_HBM_MHZ:
        *val = on ? fw->thermal.hbm_mhz : 0;
        break;
    case HPU_REG_THROTTLE:
        *val = on ? s->throttle : 0;
        break;
    case HPU_REG_ALARM:
        *val = on ? s->alarm : 0;
        break;
    case HPU_REG_SENSOR_SEQ:
        *val = on ? s->seq : 0;
        break;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

static HpuAccess hpum_sensor_write(HpuCore *c, uint32_t offset,
                                   uint32_t val)
{
    uint32_t dummy;

    (void)val;
    /* Every register of the block is read-only. */
    if (hpum_sensor_read(c, offset, &dummy) == HPU_ACCESS_UNMAPPED) {
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_READ_ONLY;
}

const HpuBlock hpum_sensor_block = {
    .name = "sensor",
    .base = HPU_REG_TEMP(0),
    .size = HPU_SENSOR_BLOCK_SIZE,
    .read = hpum_sensor_read,
    .write = hpum_sensor_write,
};

void hpum_sensors_reset(HpuCore *c, HpuResetKind kind)
{
    if (kind == HPU_RESET_SOFT) {
        return;                 /* the soft reset touches none of this */
    }
    memset(&c->sens, 0, sizeof(c->sens));
    if (kind == HPU_RESET_POWER_ON) {
        memset(c->busy, 0, sizeof(c->busy));
    }
}
