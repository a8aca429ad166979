/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: the TPC interpreter (Documentation/hw/tpc.md).  Runs
 * decoded bundles (hpu_tpc.c) for the members of one core's share of the
 * index space.
 *
 * A bundle is atomic: the guards are read first, then the load slot reads
 * memory into a buffer, the store slot writes memory from the registers as
 * the previous bundle left them, the scalar slot computes into a buffer,
 * the vector slot computes into a buffer and writes its destination, and
 * last the load's and the scalar slot's results are written.  The one-
 * writer rule of the decoder makes that order equal to "all reads before
 * all writes".  A bundle none of whose slots reads what an earlier one
 * writes (the decoder's "direct") runs its slots one after the other
 * instead, each writing at once: the code is laid out per launch as steps
 * (HpuTpcUop), one per slot of such a bundle with a short path of its own
 * where there is one, and one per other bundle, run by one loop.  Vector
 * instructions are plain C loops over the 64, 128 or 256 lanes of a
 * 256-byte register (the compiler vectorises them; f32 arithmetic also
 * has an AVX2/FMA build with the same results); bf16 lanes are widened to
 * float arrays, computed as f32 and rounded back.  Documentation/hw/
 * device-model.md, "TPC implementation", has the rest.
 *
 * Plain C99, no QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <math.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "hpu_tpc_int.h"

/*
 * The general paths, kept out of the bundle loop they are called from, so
 * that its registers serve the short paths.
 */
#define HPU_TPC_SLOW            __attribute__((noinline))

/* ---- Values ------------------------------------------------------------ */

static inline float b2f(uint32_t u)
{
    float f;

    memcpy(&f, &u, 4);
    return f;
}

static inline uint32_t f2b(float f)
{
    uint32_t u;

    memcpy(&u, &f, 4);
    return u;
}

/* binary32 bits to bfloat16 by rounding mode @rm (tpc.md "Conversions"). */
static inline uint32_t hpum_bf16_round(uint32_t u, unsigned int rm, bool sat,
                                       uint32_t rword)
{
    uint32_t r;

    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (u >> 16) | 0x40;                /* quiet NaN */
    }
    if ((u & 0x7fffffffu) == 0x7f800000u) {
        return u >> 16;                         /* infinities stay */
    }
    switch (rm) {
    case HPU_TPC_RM_RZ:
        r = u >> 16;
        break;
    case HPU_TPC_RM_RU:
        r = (u >> 16) + (!(u >> 31) && (u & 0xffff) ? 1 : 0);
        break;
    case HPU_TPC_RM_RD:
        r = (u >> 16) + ((u >> 31) && (u & 0xffff) ? 1 : 0);
        break;
    case HPU_TPC_RM_SR:
        r = (u + (rword & 0xffff)) >> 16;
        break;
    default:
        r = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
        break;
    }
    if (sat && (r & 0x7fff) == 0x7f80) {
        r = (r & 0x8000) | 0x7f7f;              /* finite input: clamp */
    }
    return r & 0xffff;
}

static inline uint32_t hpum_bf16_rn(uint32_t u)
{
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (u >> 16) | 0x40;
    }
    return ((u + 0x7fff + ((u >> 16) & 1)) >> 16) & 0xffff;
}

/* IEEE 754-2019 minimum / maximum: NaN if either is, -0 below +0. */
static inline float hpum_fmin(float a, float b)
{
    if (a != a || b != b) {
        return a + b;
    }
    if (a == b) {
        return signbit(a) ? a : b;
    }
    return a < b ? a : b;
}

static inline float hpum_fmax(float a, float b)
{
    if (a != a || b != b) {
        return a + b;
    }
    if (a == b) {
        return signbit(a) ? b : a;
    }
    return a > b ? a : b;
}

static inline bool hpum_dt_signed(unsigned int dt)
{
    return dt == HPU_TPC_DT_I32 || dt == HPU_TPC_DT_I16 ||
           dt == HPU_TPC_DT_I8 || dt == HPU_TPC_DT_F32 ||
           dt == HPU_TPC_DT_BF16;
}

static inline bool hpum_dt_fp(unsigned int dt)
{
    return dt == HPU_TPC_DT_F32 || dt == HPU_TPC_DT_BF16;
}

static inline int64_t hpum_int_min(unsigned int dt)
{
    unsigned int w = 8 * hpu_tpc_dtype_size(dt);

    return hpum_dt_signed(dt) ? -((int64_t)1 << (w - 1)) : 0;
}

static inline int64_t hpum_int_max(unsigned int dt)
{
    unsigned int w = 8 * hpu_tpc_dtype_size(dt);

    return hpum_dt_signed(dt) ? ((int64_t)1 << (w - 1)) - 1
                              : ((int64_t)1 << w) - 1;
}

/* The integer value of lane bits @x of integer type @dt. */
static inline int64_t hpum_int_value(unsigned int dt, uint32_t x)
{
    switch (dt) {
    case HPU_TPC_DT_I32:
        return (int32_t)x;
    case HPU_TPC_DT_I16:
        return (int16_t)(uint16_t)x;
    case HPU_TPC_DT_I8:
        return (int8_t)(uint8_t)x;
    case HPU_TPC_DT_U16:
        return (uint16_t)x;
    case HPU_TPC_DT_U8:
        return (uint8_t)x;
    default:
        return x;
    }
}

/* Element bits to 32 bits as ld.ts widens them. */
static inline uint32_t hpum_widen(unsigned int dt, uint32_t x)
{
    if (dt == HPU_TPC_DT_F32) {
        return x;
    }
    if (dt == HPU_TPC_DT_BF16) {
        return x << 16;
    }
    return (uint32_t)hpum_int_value(dt, x);
}

/* 32 bits to element bits as st.ts narrows them. */
static inline uint32_t hpum_narrow(unsigned int dt, uint32_t x)
{
    unsigned int es = hpu_tpc_dtype_size(dt);

    if (dt == HPU_TPC_DT_BF16) {
        return hpum_bf16_rn(x);
    }
    return es == 4 ? x : x & ((1u << (8 * es)) - 1);
}

/* An exact integer (|v| < 2^33) to binary32 by rounding mode @rm. */
static float hpum_i2f(int64_t v, unsigned int rm)
{
    float f = (float)v;
    double d = (double)v;

    if ((double)f == d) {
        return f;
    }
    switch (rm) {
    case HPU_TPC_RM_RZ:
        if (fabs((double)f) > fabs(d)) {
            f = nextafterf(f, 0.0f);
        }
        break;
    case HPU_TPC_RM_RU:
        if ((double)f < d) {
            f = nextafterf(f, INFINITY);
        }
        break;
    case HPU_TPC_RM_RD:
        if ((double)f > d) {
            f = nextafterf(f, -INFINITY);
        }
        break;
    default:
        break;
    }
    return f;
}

/*
 * Convert element bits @x of type @from to type @to (tpc.md
 * "Conversions"); @rword is the lane's random word for .sr.
 */
static uint32_t hpum_cvt(unsigned int from, unsigned int to, uint32_t x,
                         unsigned int rm, bool sat, uint32_t rword)
{
    if (hpum_dt_fp(from)) {
        float f = from == HPU_TPC_DT_F32 ? b2f(x) : b2f(x << 16);
        double r, lo, hi;

        if (to == HPU_TPC_DT_BF16) {
            return hpum_bf16_round(x, rm, sat, rword);
        }
        if (to == HPU_TPC_DT_F32) {
            return f2b(f);
        }
        if (f != f) {
            return 0;
        }
        switch (rm) {
        case HPU_TPC_RM_RZ:
            r = trunc((double)f);
            break;
        case HPU_TPC_RM_RU:
            r = ceil((double)f);
            break;
        case HPU_TPC_RM_RD:
            r = floor((double)f);
            break;
        default:
            r = nearbyint((double)f);
            break;
        }
        lo = (double)hpum_int_min(to);
        hi = (double)hpum_int_max(to);
        r = r < lo ? lo : r > hi ? hi : r;
        return hpum_narrow(to, (uint32_t)(int64_t)r);
    } else {
        int64_t v = hpum_int_value(from, x);

        if (to == HPU_TPC_DT_F32) {
            return f2b(hpum_i2f(v, rm));
        }
        if (to == HPU_TPC_DT_BF16) {
            /* round to odd in binary32, then to bfloat16 by the mode */
            float f = hpum_i2f(v, HPU_TPC_RM_RZ);
            uint32_t u = f2b(f);

            if ((double)f != (double)v) {
                u |= 1;
            }
            return hpum_bf16_round(u, rm, false, 0);
        }
        if (v < hpum_int_min(to) || v > hpum_int_max(to)) {
            if (sat) {
                v = v < hpum_int_min(to) ? hpum_int_min(to) : hpum_int_max(to);
            }
        }
        return hpum_narrow(to, (uint32_t)v);
    }
}

/* ---- Memory ------------------------------------------------------------ */

static void hpum_tpc_bus_fail(HpuTpcCore *k, const HpuMemRun *run,
                              uint64_t va, bool write, const char *why)
{
    HpuTpcLaunch *L = k->L;
    HpuCore *c = L->k->c;
    HpuFault f = {
        .status = HPU_CQ_BUS_ERROR, .va = va, .asid = L->k->j->asid,
        .host = run->host, .bus = run->addr + (va - run->va),
    };

    hpum_lock(c);
    HPU_LOG(c, "TPC: bus error, ASID %u %s at 0x%llx: %s", f.asid,
            write ? "write" : "read", (unsigned long long)va, why);
    hpum_unlock(c);
    hpum_tpc_fail(L, HPU_CQ_BUS_ERROR, 0, 0, 0, &f);
}

/* The translation of @va for the access (NULL: failed, recorded). */
static const HpuMemRun *hpum_tpc_xc(HpuTpcCore *k, uint64_t va, bool write)
{
    HpuTpcLaunch *L = k->L;
    HpuCore *c = L->k->c;
    uint64_t want = HPU_TPC_XC_WANT;
    HpuMemRun run;
    HpuFault f = { 0 };
    unsigned int i;
    int r;

    for (i = 0; i < HPU_TPC_XC_ENTRIES; i++) {
        unsigned int j = (k->xc_last + i) % HPU_TPC_XC_ENTRIES;
        const HpuMemRun *x = &k->xc[j];

        if (k->xc_valid[j] && va - x->va < x->len && (x->write || !write)) {
            k->xc_last = j;
            return x;
        }
    }
    if (want - 1 > ~va) {
        want = ~va + 1;
    }
    hpum_lock(c);
    if (L->status) {
        /*
         * The launch failed on another core: this one stops as at the
         * bundle's end, without translating (a fault of its own would
         * latch FAULT_* with no MMU_FAULT event to release it).
         */
        hpum_unlock(c);
        return NULL;
    }
    r = hpum_mem_run(c, L->k->e, L->k->j->asid, va, want, write, &run, &f);
    if (r) {
        /* the latched fault and the launch's failure are the same one */
        hpum_tpc_fail_locked(L, r, 0, 0, 0, &f);
    }
    hpum_unlock(c);
    if (r) {
        return NULL;
    }
    if (run.inject) {
        hpum_tpc_bus_fail(k, &run, va, write, "injected host access failure");
        return NULL;
    }
    i = k->xc_next++ % HPU_TPC_XC_ENTRIES;
    k->xc[i] = run;
    k->xc_valid[i] = true;
    k->xc_last = i;
    return &k->xc[i];
}

/* Copy @n bytes of run @x at @va (within it); false on a failure (recorded). */
static bool hpum_tpc_copy(HpuTpcCore *k, const HpuMemRun *x, uint64_t va,
                          void *p, uint64_t n, bool write)
{
    HpuCore *c = k->L->k->c;
    uint64_t addr = x->addr + (va - x->va);

    if (x->host) {
        if (write ? c->ops->dma_write(c->opaque, addr, p, n)
                  : c->ops->dma_read(c->opaque, addr, p, n)) {
            hpum_tpc_bus_fail(k, x, va, write, "host memory access failed");
            return false;
        }
    } else if (write) {
        if (!hpum_hbm_write_raw(c, addr, p, n)) {
            hpum_tpc_bus_fail(k, x, va, write,
                              "out of host memory for HBM backing");
            return false;
        }
    } else {
        hpum_hbm_read_raw(c, addr, p, n);
    }
    return true;
}

/* Copy @n bytes between @buf and @va; false on a failure (recorded). */
static bool hpum_tpc_mem(HpuTpcCore *k, uint64_t va, void *buf, uint64_t n,
                         bool write)
{
    uint8_t *p = buf;

    while (n) {
        const HpuMemRun *x = hpum_tpc_xc(k, va, write);
        uint64_t m;

        if (!x) {
            return false;
        }
        m = HPU_MIN(n, x->len - (va - x->va));
        if (!hpum_tpc_copy(k, x, va, p, m, write)) {
            return false;
        }
        va += m;
        p += m;
        n -= m;
    }
    return true;
}

/*
 * hpum_tpc_mem() for an access of tensor @ti.  The run of the tensor's
 * last access in that direction is tried first; when it holds the bytes
 * and they are backed HBM of one chunk, they are copied at their host
 * address, and that chunk of the run is kept for the next accesses
 * (hpum_tpc_tread(), hpum_tpc_twrite()).  Anything else (a first access,
 * bytes across two runs, a fault, host memory, unbacked or poisoned HBM)
 * takes the general path, which sees the same translations in the same
 * order.
 */
static HPU_TPC_SLOW bool hpum_tpc_tmem(HpuTpcCore *k, unsigned int ti,
                                       uint64_t va, void *buf, uint64_t n,
                                       bool write)
{
    HpuMemRun *x = &k->tr[ti][write];
    HpuTpcWin *w = &k->win[ti][write];
    uint64_t in = va - x->va, cin, back;
    uint8_t *p;

    if (in >= x->len || x->len - in < n) {
        const HpuMemRun *r = hpum_tpc_xc(k, va, write);

        if (!r) {
            return false;
        }
        in = va - r->va;
        if (r->len - in < n) {
            return hpum_tpc_mem(k, va, buf, n, write);
        }
        *x = *r;
    }
    if (x->host) {
        return hpum_tpc_copy(k, x, va, buf, n, write);
    }
    p = hpum_hbm_direct(k->L->k->c, x->addr + in, n, write);
    if (!p) {
        return hpum_tpc_copy(k, x, va, buf, n, write);
    }
    if (write) {
        memcpy(p, buf, n);
    } else {
        memcpy(buf, p, n);
    }
    cin = (x->addr + in) & (HPU_HBM_CHUNK_SIZE - 1);
    back = HPU_MIN(cin, in);
    w->va = va - back;
    w->len = back + HPU_MIN(HPU_HBM_CHUNK_SIZE - cin, x->len - in);
    w->addr = x->addr + in - back;
    w->p = p - back;
    return true;
}

/* A read of @n bytes of tensor @ti at @va (hpum_tpc_tmem()). */
static inline bool hpum_tpc_tread(HpuTpcCore *k, unsigned int ti,
                                  uint64_t va, void *buf, uint64_t n)
{
    const HpuTpcWin *w = &k->win[ti][0];
    uint64_t in = va - w->va;

    if (in < w->len && w->len - in >= n) {
        memcpy(buf, w->p + in, n);
        return true;
    }
    return hpum_tpc_tmem(k, ti, va, buf, n, false);
}

/*
 * A write of @n bytes of tensor @ti at @va (hpum_tpc_tmem()); the bytes
 * of a page poisoned since are dropped there.
 */
static inline bool hpum_tpc_twrite(HpuTpcCore *k, unsigned int ti,
                                   uint64_t va, const void *buf, uint64_t n)
{
    const HpuTpcWin *w = &k->win[ti][1];
    uint64_t in = va - w->va;

    if (in < w->len && w->len - in >= n &&
        !hpum_hbm_poisoned(k->L->k->c, w->addr)) {
        memcpy(w->p + in, buf, n);
        return true;
    }
    return hpum_tpc_tmem(k, ti, va, (void *)buf, n, true);
}

/* ---- Tensors ----------------------------------------------------------- */

static inline bool hpum_lane_on(const uint64_t *gm, unsigned int l)
{
    return !gm || ((gm[l >> 6] >> (l & 63)) & 1);
}

static inline uint32_t hpum_get_lane(const HpuTpcVec *v, unsigned int es,
                                     unsigned int l)
{
    return es == 4 ? v->u32[l] : es == 2 ? v->u16[l] : v->u8[l];
}

static inline void hpum_set_lane(HpuTpcVec *v, unsigned int es,
                                 unsigned int l, uint32_t x)
{
    if (es == 4) {
        v->u32[l] = x;
    } else if (es == 2) {
        v->u16[l] = (uint16_t)x;
    } else {
        v->u8[l] = (uint8_t)x;
    }
}

/* Whether c1..c4 of @ci are in range; @c0 gets c0. */
static bool hpum_tpc_row(const HpuTpcTensor *t, const int32_t *ci,
                         uint64_t *off)
{
    unsigned int d;

    *off = 0;
    if (!(ci[1] | ci[2] | ci[3] | ci[4])) {
        return true;                    /* coordinate 0 is in every range */
    }
    for (d = 1; d < HPU_TPC_DIMS; d++) {
        if (ci[d] < 0 || (uint32_t)ci[d] >= t->size[d]) {
            return false;
        }
        *off += (uint64_t)ci[d] * t->stride[d];
    }
    return true;
}

/*
 * The in-range lanes [@lo, @hi) of a vector access at coordinate @ci and
 * the element offset @row of (0, c1..c4); false if none.
 */
static bool hpum_tpc_span(const HpuTpcTensor *t, const int32_t *ci,
                          unsigned int lanes, unsigned int *lo,
                          unsigned int *hi, uint64_t *row)
{
    int64_t c0 = ci[0], a, b;

    if (!hpum_tpc_row(t, ci, row)) {
        return false;
    }
    a = c0 < 0 ? -c0 : 0;
    b = (int64_t)t->size[0] - c0;
    if (b > lanes) {
        b = lanes;
    }
    if (a >= b) {
        return false;
    }
    *lo = (unsigned int)a;
    *hi = (unsigned int)b;
    return true;
}

static inline uint64_t hpum_tpc_elem_va(const HpuTpcTensor *t, uint64_t row,
                                        int64_t c0)
{
    return t->base + t->es * (row + (uint64_t)c0 * t->stride[0]);
}

/*
 * ld.t: lanes of tensor @ti at @ci into @out (which holds the old value).
 * In-range lanes of stride 1 without a lane guard are one copy.
 */
static HPU_TPC_SLOW bool hpum_tpc_ld_t(HpuTpcCore *k, unsigned int ti,
                                       const int32_t *ci, unsigned int lanes,
                                       const uint64_t *gm, HpuTpcVec *out)
{
    const HpuTpcTensor *t = &k->L->t[ti];
    unsigned int es = t->es, lo = 0, hi = 0, l;
    uint64_t row = 0;
    bool any = hpum_tpc_span(t, ci, lanes, &lo, &hi, &row);

    if (!any) {
        lo = hi = lanes;
    }
    for (l = 0; l < lo; l++) {
        if (hpum_lane_on(gm, l)) {
            hpum_set_lane(out, es, l, t->pad);
        }
    }
    for (l = hi; l < lanes; l++) {
        if (hpum_lane_on(gm, l)) {
            hpum_set_lane(out, es, l, t->pad);
        }
    }
    if (!any) {
        return true;
    }
    if (!gm && t->stride[0] == 1) {
        return hpum_tpc_tread(k, ti,
                             hpum_tpc_elem_va(t, row, (int64_t)ci[0] + lo),
                             out->u8 + lo * es, (uint64_t)(hi - lo) * es);
    }
    if (!gm && t->stride[0] == 0) {
        uint32_t x = 0;

        if (!hpum_tpc_tread(k, ti, hpum_tpc_elem_va(t, row, 0), &x, es)) {
            return false;
        }
        for (l = lo; l < hi; l++) {
            hpum_set_lane(out, es, l, x);
        }
        return true;
    }
    for (l = lo; l < hi; l++) {
        uint32_t x = 0;

        if (!hpum_lane_on(gm, l)) {
            continue;
        }
        if (!hpum_tpc_tread(k, ti,
                           hpum_tpc_elem_va(t, row, (int64_t)ci[0] + l),
                           &x, es)) {
            return false;
        }
        hpum_set_lane(out, es, l, x);
    }
    return true;
}

static HPU_TPC_SLOW bool hpum_tpc_st_t(HpuTpcCore *k, unsigned int ti,
                                       const int32_t *ci, unsigned int lanes,
                                       const uint64_t *gm, const HpuTpcVec *v)
{
    const HpuTpcTensor *t = &k->L->t[ti];
    unsigned int es = t->es, lo, hi, l;
    uint64_t row;

    if (!hpum_tpc_span(t, ci, lanes, &lo, &hi, &row)) {
        return true;
    }
    if (!gm && t->stride[0] == 1) {
        return hpum_tpc_twrite(k, ti,
                               hpum_tpc_elem_va(t, row, (int64_t)ci[0] + lo),
                               v->u8 + lo * es, (uint64_t)(hi - lo) * es);
    }
    for (l = lo; l < hi; l++) {
        uint32_t x;

        if (!hpum_lane_on(gm, l)) {
            continue;
        }
        x = hpum_get_lane(v, es, l);
        if (!hpum_tpc_twrite(k, ti,
                             hpum_tpc_elem_va(t, row, (int64_t)ci[0] + l),
                             &x, es)) {
            return false;
        }
    }
    return true;
}

/* ---- Random numbers ------------------------------------------------------ */

static void hpum_tpc_draw(HpuTpcCore *k, unsigned int lanes)
{
    uint32_t k0 = (uint32_t)k->L->seed, k1 = (uint32_t)(k->L->seed >> 32);
    unsigned int g;

    for (g = 0; g < lanes / 4; g++) {
        uint32_t ctr[4] = { k->draw, g, (uint32_t)k->lin,
                            (uint32_t)(k->lin >> 32) };

        hpu_tpc_philox(ctr, k0, k1);
        memcpy(&k->rw[4 * g], ctr, sizeof(ctr));
    }
    k->draw++;
}

/* ---- Vector slot ---------------------------------------------------- */

/* The B operand of a vector instruction as a vector of its type. */
static const HpuTpcVec *hpum_tpc_vb(HpuTpcCore *k, const HpuTpcOp *o)
{
    HpuTpcVec *b = &k->tb;
    unsigned int l, es = hpu_tpc_dtype_size(o->dt);
    uint32_t x;

    if (o->form == HPU_TPC_FORM_V) {
        return &k->v[o->b];
    }
    x = o->form == HPU_TPC_FORM_S ? k->s[o->b] : o->imm;
    if (o->dt == HPU_TPC_DT_BF16) {
        x = hpum_bf16_rn(x);
    }
    if (es == 4) {
        for (l = 0; l < 64; l++) {
            b->u32[l] = x;
        }
    } else if (es == 2) {
        for (l = 0; l < 128; l++) {
            b->u16[l] = (uint16_t)x;
        }
    } else {
        memset(b->u8, (int)(x & 0xff), 256);
    }
    return b;
}

/* Float lanes: d = op(a, b, c) over @n lanes. */
static void hpum_tpc_fop(unsigned int op, float *restrict d, const float *a,
                         const float *b, const float *c, unsigned int n)
{
    unsigned int l;

    switch (op) {
    case HPU_TPC_OP_VADD:
        for (l = 0; l < n; l++) {
            d[l] = a[l] + b[l];
        }
        break;
    case HPU_TPC_OP_VSUB:
        for (l = 0; l < n; l++) {
            d[l] = a[l] - b[l];
        }
        break;
    case HPU_TPC_OP_VMUL:
        for (l = 0; l < n; l++) {
            d[l] = a[l] * b[l];
        }
        break;
    case HPU_TPC_OP_VDIV:
        for (l = 0; l < n; l++) {
            d[l] = a[l] / b[l];
        }
        break;
    case HPU_TPC_OP_VMIN:
        for (l = 0; l < n; l++) {
            d[l] = hpum_fmin(a[l], b[l]);
        }
        break;
    case HPU_TPC_OP_VMAX:
        for (l = 0; l < n; l++) {
            d[l] = hpum_fmax(a[l], b[l]);
        }
        break;
    case HPU_TPC_OP_VMAC:
    case HPU_TPC_OP_VFMA:
        for (l = 0; l < n; l++) {
            d[l] = fmaf(a[l], b[l], c[l]);
        }
        break;
    case HPU_TPC_OP_VEXP:
        for (l = 0; l < n; l++) {
            d[l] = expf(a[l]);
        }
        break;
    case HPU_TPC_OP_VLOG:
        for (l = 0; l < n; l++) {
            d[l] = logf(a[l]);
        }
        break;
    case HPU_TPC_OP_VRCP:
        for (l = 0; l < n; l++) {
            d[l] = 1.0f / a[l];
        }
        break;
    case HPU_TPC_OP_VRSQRT:
        for (l = 0; l < n; l++) {
            d[l] = 1.0f / sqrtf(a[l]);
        }
        break;
    case HPU_TPC_OP_VSQRT:
        for (l = 0; l < n; l++) {
            d[l] = sqrtf(a[l]);
        }
        break;
    case HPU_TPC_OP_VTANH:
        for (l = 0; l < n; l++) {
            d[l] = tanhf(a[l]);
        }
        break;
    case HPU_TPC_OP_VSIGMOID:
        /*
         * In double, rounded once: within 0.5 ulp and a hair, also where
         * expf(-x) would overflow (x <= -88.72) but the result is a
         * subnormal (down to x = -103.97).
         */
        for (l = 0; l < n; l++) {
            d[l] = (float)(1.0 / (1.0 + exp(-(double)a[l])));
        }
        break;
    case HPU_TPC_OP_VERF:
        for (l = 0; l < n; l++) {
            d[l] = erff(a[l]);
        }
        break;
    default:
        break;
    }
}

/* Integer lanes: one loop per type; a, b, c, ub in scope of @EXPR. */
#define HPU_TPC_ILOOP(M, UM, N, W, LO, HI, EXPR)                        \
    do {                                                                \
        const int64_t lo_ = (LO), hi_ = (HI);                           \
        const uint64_t w_ = (W);                                        \
        for (l = 0; l < (N); l++) {                                     \
            int64_t a = A->M[l], b = B->M[l], c = C->M[l];              \
            uint64_t ub = B->UM[l];                                     \
            (void)a; (void)b; (void)c; (void)ub;                        \
            (void)lo_; (void)hi_; (void)w_;                             \
            D->M[l] = (EXPR);                                           \
        }                                                               \
    } while (0)

#define HPU_TPC_IEW(EXPR)                                               \
    do {                                                                \
        switch (dt) {                                                   \
        case HPU_TPC_DT_I32:                                            \
            HPU_TPC_ILOOP(i32, u32, 64, 32, INT32_MIN, INT32_MAX, EXPR); \
            break;                                                      \
        case HPU_TPC_DT_U32:                                            \
            HPU_TPC_ILOOP(u32, u32, 64, 32, 0, UINT32_MAX, EXPR);       \
            break;                                                      \
        case HPU_TPC_DT_I16:                                            \
            HPU_TPC_ILOOP(i16, u16, 128, 16, INT16_MIN, INT16_MAX, EXPR); \
            break;                                                      \
        case HPU_TPC_DT_U16:                                            \
            HPU_TPC_ILOOP(u16, u16, 128, 16, 0, UINT16_MAX, EXPR);      \
            break;                                                      \
        case HPU_TPC_DT_I8:                                             \
            HPU_TPC_ILOOP(i8, u8, 256, 8, INT8_MIN, INT8_MAX, EXPR);    \
            break;                                                      \
        default:                                                        \
            HPU_TPC_ILOOP(u8, u8, 256, 8, 0, UINT8_MAX, EXPR);          \
            break;                                                      \
        }                                                               \
    } while (0)

#define HPU_CLAMP(x) ((x) < lo_ ? lo_ : (x) > hi_ ? hi_ : (x))
#define HPU_UMUL(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))

/* Elementwise integer instruction: D = op(A, B, C). */
static void hpum_tpc_iop(const HpuTpcOp *o, unsigned int dt, HpuTpcVec *D,
                         const HpuTpcVec *A, const HpuTpcVec *B,
                         const HpuTpcVec *C)
{
    unsigned int l;

    switch (o->op) {
    case HPU_TPC_OP_VADD:
        if (o->sat) {
            HPU_TPC_IEW(HPU_CLAMP(a + b));
        } else {
            HPU_TPC_IEW(a + b);
        }
        break;
    case HPU_TPC_OP_VSUB:
        if (o->sat) {
            HPU_TPC_IEW(HPU_CLAMP(a - b));
        } else {
            HPU_TPC_IEW(a - b);
        }
        break;
    case HPU_TPC_OP_VMUL:
        HPU_TPC_IEW(HPU_UMUL(a, b));
        break;
    case HPU_TPC_OP_VMIN:
        HPU_TPC_IEW(a < b ? a : b);
        break;
    case HPU_TPC_OP_VMAX:
        HPU_TPC_IEW(a > b ? a : b);
        break;
    case HPU_TPC_OP_VMAC:
    case HPU_TPC_OP_VFMA:
        HPU_TPC_IEW((int64_t)((uint64_t)c + (uint64_t)HPU_UMUL(a, b)));
        break;
    case HPU_TPC_OP_VABS:
        HPU_TPC_IEW(a < 0 ? -a : a);
        break;
    case HPU_TPC_OP_VNEG:
        HPU_TPC_IEW(-a);
        break;
    case HPU_TPC_OP_VAND:
        HPU_TPC_IEW(a & b);
        break;
    case HPU_TPC_OP_VOR:
        HPU_TPC_IEW(a | b);
        break;
    case HPU_TPC_OP_VXOR:
        HPU_TPC_IEW(a ^ b);
        break;
    case HPU_TPC_OP_VNOT:
        HPU_TPC_IEW(~a);
        break;
    case HPU_TPC_OP_VSHL:
        HPU_TPC_IEW(ub >= w_ ? 0 : (int64_t)((uint64_t)a << ub));
        break;
    case HPU_TPC_OP_VSHR:
        HPU_TPC_IEW(ub >= w_ ? (a < 0 ? -1 : 0) : a >> ub);
        break;
    default:
        break;
    }
}

static bool hpum_cmp_i(unsigned int cond, int64_t a, int64_t b)
{
    switch (cond) {
    case HPU_TPC_COND_EQ:
        return a == b;
    case HPU_TPC_COND_NE:
        return a != b;
    case HPU_TPC_COND_LT:
        return a < b;
    case HPU_TPC_COND_LE:
        return a <= b;
    case HPU_TPC_COND_GT:
        return a > b;
    default:
        return a >= b;
    }
}

static bool hpum_cmp_f(unsigned int cond, float a, float b)
{
    switch (cond) {
    case HPU_TPC_COND_EQ:
        return a == b;
    case HPU_TPC_COND_NE:
        return !(a == b);
    case HPU_TPC_COND_LT:
        return a < b;
    case HPU_TPC_COND_LE:
        return a <= b;
    case HPU_TPC_COND_GT:
        return a > b;
    default:
        return a >= b;
    }
}

/* Widen @n bf16 lanes of @v to @f. */
static void hpum_bf16_widen(const HpuTpcVec *v, float *restrict f)
{
    unsigned int l;

    for (l = 0; l < 128; l++) {
        f[l] = b2f((uint32_t)v->u16[l] << 16);
    }
}

static void hpum_bf16_pack(const float *f, HpuTpcVec *restrict v)
{
    unsigned int l;

    for (l = 0; l < 128; l++) {
        v->u16[l] = (uint16_t)hpum_bf16_rn(f2b(f[l]));
    }
}

/* Write @res to register @dst, lanes of @es bytes enabled by @gm. */
static void hpum_tpc_vwrite(HpuTpcVec *dst, const HpuTpcVec *res,
                            unsigned int es, const uint64_t *gm)
{
    unsigned int l;

    if (!gm) {
        memcpy(dst, res, sizeof(*dst));
        return;
    }
    for (l = 0; l < 256 / es; l++) {
        if (hpum_lane_on(gm, l)) {
            hpum_set_lane(dst, es, l, hpum_get_lane(res, es, l));
        }
    }
}

/* Reductions: the fixed tree of tpc.md, result in every lane of @D. */
static void hpum_tpc_reduce(HpuTpcCore *k, const HpuTpcOp *o,
                            const HpuTpcVec *A, HpuTpcVec *D)
{
    unsigned int dt = o->dt, n = o->lanes, s, l;
    unsigned int es = hpu_tpc_dtype_size(dt);

    if (hpum_dt_fp(dt)) {
        float *f = k->fa;

        for (l = 0; l < n; l++) {
            f[l] = dt == HPU_TPC_DT_F32 ? A->f[l]
                                        : b2f((uint32_t)A->u16[l] << 16);
        }
        for (s = n / 2; s; s /= 2) {
            for (l = 0; l < s; l++) {
                f[l] = o->op == HPU_TPC_OP_VREDSUM ? f[l] + f[l + s] :
                       o->op == HPU_TPC_OP_VREDMAX ? hpum_fmax(f[l], f[l + s]) :
                       hpum_fmin(f[l], f[l + s]);
            }
        }
        for (l = 0; l < n; l++) {
            hpum_set_lane(D, es, l, dt == HPU_TPC_DT_F32 ?
                          f2b(f[0]) : hpum_bf16_rn(f2b(f[0])));
        }
    } else {
        int64_t v[HPU_TPC_MAX_LANES];

        for (l = 0; l < n; l++) {
            v[l] = hpum_int_value(dt, hpum_get_lane(A, es, l));
        }
        for (s = n / 2; s; s /= 2) {
            for (l = 0; l < s; l++) {
                v[l] = o->op == HPU_TPC_OP_VREDSUM ?
                       (int64_t)((uint64_t)v[l] + (uint64_t)v[l + s]) :
                       o->op == HPU_TPC_OP_VREDMAX ?
                       (v[l] > v[l + s] ? v[l] : v[l + s]) :
                       (v[l] < v[l + s] ? v[l] : v[l + s]);
            }
        }
        for (l = 0; l < n; l++) {
            hpum_set_lane(D, es, l, (uint32_t)v[0]);
        }
    }
}

/* The SXB operand's value (scalar register or immediate). */
static inline uint32_t hpum_tpc_sxb(const HpuTpcCore *k, const HpuTpcOp *o)
{
    return o->form == HPU_TPC_FORM_S ? k->s[o->b] : o->imm;
}

/* vcvt: lanes of vA of dt into vD of dt2 (D holds vD's old value). */
static void hpum_tpc_vcvt(HpuTpcCore *k, const HpuTpcOp *o,
                          const HpuTpcVec *A, HpuTpcVec *D)
{
    unsigned int ls = o->lanes, ld = hpu_tpc_lanes(o->dt2), l;
    unsigned int es = hpu_tpc_dtype_size(o->dt);
    unsigned int ed = hpu_tpc_dtype_size(o->dt2);

    if (o->mod == HPU_TPC_RM_SR) {
        hpum_tpc_draw(k, ld);
    }
    if (ls == ld) {
        for (l = 0; l < ls; l++) {
            hpum_set_lane(D, ed, l,
                          hpum_cvt(o->dt, o->dt2, hpum_get_lane(A, es, l),
                                   o->mod, o->sat, k->rw[l]));
        }
    } else if (ld > ls) {
        unsigned int base = o->part * ls;

        for (l = 0; l < ls; l++) {
            hpum_set_lane(D, ed, base + l,
                          hpum_cvt(o->dt, o->dt2, hpum_get_lane(A, es, l),
                                   o->mod, o->sat, k->rw[base + l]));
        }
    } else {
        unsigned int base = o->part * ld;

        for (l = 0; l < ld; l++) {
            hpum_set_lane(D, ed, l,
                          hpum_cvt(o->dt, o->dt2,
                                   hpum_get_lane(A, es, base + l),
                                   o->mod, o->sat, k->rw[l]));
        }
    }
}

/* Run the vector slot (guard already true); false on a failure. */
static bool hpum_tpc_vector(HpuTpcCore *k, const HpuTpcOp *o,
                            const uint64_t *gm)
{
    HpuTpcVec *D = &k->tv;
    const HpuTpcVec *A = &k->v[o->a], *B;
    unsigned int dt = o->dt, es = hpu_tpc_dtype_size(dt), n = o->lanes, l;
    uint64_t bits[4] = { 0 };
    uint32_t x;

    switch (o->op) {
    case HPU_TPC_OP_VMOV:
        B = hpum_tpc_vb(k, o);
        hpum_tpc_vwrite(&k->v[o->d], B, es, gm);
        return true;
    case HPU_TPC_OP_VADD: case HPU_TPC_OP_VSUB: case HPU_TPC_OP_VMUL:
    case HPU_TPC_OP_VDIV: case HPU_TPC_OP_VMIN: case HPU_TPC_OP_VMAX:
    case HPU_TPC_OP_VMAC: case HPU_TPC_OP_VFMA: case HPU_TPC_OP_VABS:
    case HPU_TPC_OP_VNEG: case HPU_TPC_OP_VAND: case HPU_TPC_OP_VOR:
    case HPU_TPC_OP_VXOR: case HPU_TPC_OP_VNOT: case HPU_TPC_OP_VSHL:
    case HPU_TPC_OP_VSHR: case HPU_TPC_OP_VEXP: case HPU_TPC_OP_VLOG:
    case HPU_TPC_OP_VRCP: case HPU_TPC_OP_VRSQRT: case HPU_TPC_OP_VSQRT:
    case HPU_TPC_OP_VTANH: case HPU_TPC_OP_VSIGMOID: case HPU_TPC_OP_VERF: {
        const HpuTpcVec *C;

        B = o->op == HPU_TPC_OP_VFMA ? &k->v[o->b] : hpum_tpc_vb(k, o);
        C = o->op == HPU_TPC_OP_VFMA ? &k->v[o->c] : &k->v[o->d];
        if ((o->op == HPU_TPC_OP_VABS || o->op == HPU_TPC_OP_VNEG) &&
            hpum_dt_fp(dt)) {
            if (dt == HPU_TPC_DT_F32) {
                for (l = 0; l < 64; l++) {
                    D->u32[l] = o->op == HPU_TPC_OP_VABS ?
                                A->u32[l] & 0x7fffffffu :
                                A->u32[l] ^ 0x80000000u;
                }
            } else {
                for (l = 0; l < 128; l++) {
                    D->u16[l] = (uint16_t)(o->op == HPU_TPC_OP_VABS ?
                                           A->u16[l] & 0x7fff :
                                           A->u16[l] ^ 0x8000);
                }
            }
        } else if (dt == HPU_TPC_DT_F32) {
            hpum_tpc_fop(o->op, D->f, A->f, B->f, C->f, 64);
        } else if (dt == HPU_TPC_DT_BF16) {
            hpum_bf16_widen(A, k->fa);
            hpum_bf16_widen(B, k->fb);
            hpum_bf16_widen(C, k->fc);
            hpum_tpc_fop(o->op, k->fd, k->fa, k->fb, k->fc, 128);
            hpum_bf16_pack(k->fd, D);
        } else {
            hpum_tpc_iop(o, dt, D, A, B, C);
        }
        hpum_tpc_vwrite(&k->v[o->d], D, es, gm);
        return true;
    }
    case HPU_TPC_OP_VCMP:
        B = hpum_tpc_vb(k, o);
        for (l = 0; l < n; l++) {
            bool r;

            if (dt == HPU_TPC_DT_F32) {
                r = hpum_cmp_f(o->mod, A->f[l], B->f[l]);
            } else if (dt == HPU_TPC_DT_BF16) {
                r = hpum_cmp_f(o->mod, b2f((uint32_t)A->u16[l] << 16),
                               b2f((uint32_t)B->u16[l] << 16));
            } else {
                r = hpum_cmp_i(o->mod,
                               hpum_int_value(dt, hpum_get_lane(A, es, l)),
                               hpum_int_value(dt, hpum_get_lane(B, es, l)));
            }
            if (!hpum_lane_on(gm, l)) {
                r = (k->vp[o->d][l >> 6] >> (l & 63)) & 1;
            }
            bits[l >> 6] |= (uint64_t)r << (l & 63);
        }
        memcpy(k->vp[o->d], bits, sizeof(bits));
        return true;
    case HPU_TPC_OP_VSEL:
        /* vD = vpC ? vA : B (operands: D, C = vpC, A = vA, B) */
        B = hpum_tpc_vb(k, o);
        for (l = 0; l < n; l++) {
            bool p = (k->vp[o->c][l >> 6] >> (l & 63)) & 1;

            hpum_set_lane(D, es, l, hpum_get_lane(p ? A : B, es, l));
        }
        hpum_tpc_vwrite(&k->v[o->d], D, es, gm);
        return true;
    case HPU_TPC_OP_VCVT:
        *D = k->v[o->d];
        hpum_tpc_vcvt(k, o, A, D);
        hpum_tpc_vwrite(&k->v[o->d], D, hpu_tpc_dtype_size(o->dt2), gm);
        return true;
    case HPU_TPC_OP_VREDSUM: case HPU_TPC_OP_VREDMAX: case HPU_TPC_OP_VREDMIN:
        hpum_tpc_reduce(k, o, A, D);
        hpum_tpc_vwrite(&k->v[o->d], D, es, NULL);
        return true;
    case HPU_TPC_OP_VBCAST:
        x = hpum_get_lane(A, es, hpum_tpc_sxb(k, o) % n);
        for (l = 0; l < n; l++) {
            hpum_set_lane(D, es, l, x);
        }
        hpum_tpc_vwrite(&k->v[o->d], D, es, gm);
        return true;
    case HPU_TPC_OP_VSHUF:
        B = &k->v[o->b];
        for (l = 0; l < n; l++) {
            hpum_set_lane(D, es, l,
                          hpum_get_lane(A, es, hpum_get_lane(B, es, l) % n));
        }
        hpum_tpc_vwrite(&k->v[o->d], D, es, gm);
        return true;
    case HPU_TPC_OP_VROT:
        x = hpum_tpc_sxb(k, o) % n;
        for (l = 0; l < n; l++) {
            hpum_set_lane(D, es, l, hpum_get_lane(A, es, (l + x) % n));
        }
        hpum_tpc_vwrite(&k->v[o->d], D, es, gm);
        return true;
    case HPU_TPC_OP_VEXT:
        x = hpum_get_lane(A, es, hpum_tpc_sxb(k, o) % n);
        k->s[o->d] = hpum_widen(dt, x);
        return true;
    case HPU_TPC_OP_VINS:
        hpum_set_lane(&k->v[o->d], es, hpum_tpc_sxb(k, o) % n,
                      hpum_narrow(dt, k->s[o->a]));
        return true;
    case HPU_TPC_OP_VIOTA:
        for (l = 0; l < n; l++) {
            x = dt == HPU_TPC_DT_F32 ? f2b((float)l) :
                dt == HPU_TPC_DT_BF16 ? f2b((float)l) >> 16 : l;
            hpum_set_lane(D, es, l, x);
        }
        hpum_tpc_vwrite(&k->v[o->d], D, es, gm);
        return true;
    case HPU_TPC_OP_VRAND:
        hpum_tpc_draw(k, n);
        for (l = 0; l < n; l++) {
            hpum_set_lane(D, es, l, k->rw[l]);
        }
        hpum_tpc_vwrite(&k->v[o->d], D, es, gm);
        return true;
    case HPU_TPC_OP_VRANDU:
        hpum_tpc_draw(k, n);
        for (l = 0; l < n; l++) {
            x = f2b((float)(k->rw[l] >> 8) * (1.0f / 16777216.0f));
            hpum_set_lane(D, es, l, dt == HPU_TPC_DT_F32 ? x : x >> 16);
        }
        hpum_tpc_vwrite(&k->v[o->d], D, es, gm);
        return true;
    case HPU_TPC_OP_VPAND: case HPU_TPC_OP_VPOR: case HPU_TPC_OP_VPXOR:
    case HPU_TPC_OP_VPNOT:
        for (l = 0; l < 4; l++) {
            uint64_t a = k->vp[o->a][l], b = k->vp[o->b][l];

            bits[l] = o->op == HPU_TPC_OP_VPAND ? a & b :
                      o->op == HPU_TPC_OP_VPOR ? a | b :
                      o->op == HPU_TPC_OP_VPXOR ? a ^ b : ~a;
        }
        memcpy(k->vp[o->d], bits, sizeof(bits));
        return true;
    case HPU_TPC_OP_VPFIRST:
        x = 0xffffffffu;
        for (l = 0; l < 256; l++) {
            if ((k->vp[o->a][l >> 6] >> (l & 63)) & 1) {
                x = l;
                break;
            }
        }
        k->s[o->d] = x;
        return true;
    case HPU_TPC_OP_VPCOUNT:
        x = 0;
        for (l = 0; l < 4; l++) {
            x += (uint32_t)__builtin_popcountll(k->vp[o->a][l]);
        }
        k->s[o->d] = x;
        return true;
    case HPU_TPC_OP_VPSET:
        for (l = 0; l < 4; l++) {
            k->vp[o->d][l] = k->sp[o->a] ? ~0ULL : 0;
        }
        return true;
    default:
        return true;
    }
}

/* ---- Scalar slot ---------------------------------------------------- */

enum { SR_NONE, SR_S, SR_P, SR_I };

typedef struct HpuTpcSRes {
    int kind;
    unsigned int reg;
    uint32_t val;
    int32_t iv[HPU_TPC_DIMS];
    bool jump, halt;
    uint32_t target;
} HpuTpcSRes;

static uint32_t hpum_tpc_salu(const HpuTpcOp *o, uint32_t a, uint32_t b)
{
    int32_t sa = (int32_t)a, sb = (int32_t)b;
    float fa = b2f(a), fb = b2f(b);
    bool f = o->dt == HPU_TPC_DT_F32, s = o->dt == HPU_TPC_DT_I32;

    switch (o->op) {
    case HPU_TPC_OP_ADD:
        return f ? f2b(fa + fb) : a + b;
    case HPU_TPC_OP_SUB:
        return f ? f2b(fa - fb) : a - b;
    case HPU_TPC_OP_MUL:
        return f ? f2b(fa * fb) : a * b;
    case HPU_TPC_OP_DIV:
        if (f) {
            return f2b(fa / fb);
        }
        if (!s) {
            return b ? a / b : 0xffffffffu;
        }
        if (!sb) {
            return 0xffffffffu;
        }
        if (sa == INT32_MIN && sb == -1) {
            return a;
        }
        return (uint32_t)(sa / sb);
    case HPU_TPC_OP_REM:
        if (!s) {
            return b ? a % b : a;
        }
        if (!sb) {
            return a;
        }
        if (sa == INT32_MIN && sb == -1) {
            return 0;
        }
        return (uint32_t)(sa % sb);
    case HPU_TPC_OP_MIN:
        return f ? f2b(hpum_fmin(fa, fb)) : s ? (uint32_t)(sa < sb ? sa : sb)
                                             : (a < b ? a : b);
    case HPU_TPC_OP_MAX:
        return f ? f2b(hpum_fmax(fa, fb)) : s ? (uint32_t)(sa > sb ? sa : sb)
                                             : (a > b ? a : b);
    case HPU_TPC_OP_AND:
        return a & b;
    case HPU_TPC_OP_OR:
        return a | b;
    case HPU_TPC_OP_XOR:
        return a ^ b;
    case HPU_TPC_OP_NOT:
        return ~a;
    case HPU_TPC_OP_SHL:
        return b >= 32 ? 0 : a << b;
    case HPU_TPC_OP_SHR:
        if (s) {
            return b >= 32 ? (sa < 0 ? 0xffffffffu : 0) : (uint32_t)(sa >> b);
        }
        return b >= 32 ? 0 : a >> b;
    default:
        return 0;
    }
}

/* The scalar slot into @r (guard true; asserts are handled before). */
static void hpum_tpc_scalar(HpuTpcCore *k, const HpuTpcOp *o, HpuTpcSRes *r)
{
    uint32_t a = k->s[o->a], b = hpum_tpc_sxb(k, o);
    unsigned int d;

    r->reg = o->d;
    switch (o->op) {
    case HPU_TPC_OP_MOV:
        r->kind = SR_S;
        r->val = b;
        break;
    case HPU_TPC_OP_ADD: case HPU_TPC_OP_SUB: case HPU_TPC_OP_MUL:
    case HPU_TPC_OP_DIV: case HPU_TPC_OP_REM: case HPU_TPC_OP_MIN:
    case HPU_TPC_OP_MAX: case HPU_TPC_OP_AND: case HPU_TPC_OP_OR:
    case HPU_TPC_OP_XOR: case HPU_TPC_OP_NOT: case HPU_TPC_OP_SHL:
    case HPU_TPC_OP_SHR:
        r->kind = SR_S;
        r->val = hpum_tpc_salu(o, a, b);
        break;
    case HPU_TPC_OP_CMP:
        r->kind = SR_P;
        if (o->dt == HPU_TPC_DT_F32) {
            r->val = hpum_cmp_f(o->mod, b2f(a), b2f(b));
        } else {
            r->val = hpum_cmp_i(o->mod, hpum_int_value(o->dt, a),
                                hpum_int_value(o->dt, b));
        }
        break;
    case HPU_TPC_OP_SEL:
        r->kind = SR_S;
        r->val = k->sp[o->c] ? a : b;
        break;
    case HPU_TPC_OP_CVT:
        r->kind = SR_S;
        r->val = hpum_cvt(o->dt, o->dt2, a, o->mod, o->sat, 0);
        break;
    case HPU_TPC_OP_PAND:
        r->kind = SR_P;
        r->val = k->sp[o->a] & k->sp[o->b];
        break;
    case HPU_TPC_OP_POR:
        r->kind = SR_P;
        r->val = k->sp[o->a] | k->sp[o->b];
        break;
    case HPU_TPC_OP_PXOR:
        r->kind = SR_P;
        r->val = k->sp[o->a] ^ k->sp[o->b];
        break;
    case HPU_TPC_OP_PNOT:
        r->kind = SR_P;
        r->val = !k->sp[o->a];
        break;
    case HPU_TPC_OP_PSET:
        r->kind = SR_P;
        r->val = o->imm;
        break;
    case HPU_TPC_OP_JMP:
        r->jump = true;
        r->target = o->imm;
        break;
    case HPU_TPC_OP_LOOP:
        r->kind = SR_S;
        r->val = k->s[o->d] - 1;
        r->jump = r->val != 0;
        r->target = o->imm;
        break;
    case HPU_TPC_OP_HALT:
        r->halt = true;
        break;
    case HPU_TPC_OP_IID:
        r->kind = SR_I;
        for (d = 0; d < HPU_TPC_DIMS; d++) {
            r->iv[d] = (int32_t)k->m[d];
        }
        break;
    case HPU_TPC_OP_IMOV:
    case HPU_TPC_OP_ISET:
    case HPU_TPC_OP_IADD:
    case HPU_TPC_OP_IMUL:
        r->kind = SR_I;
        memcpy(r->iv, k->ir[o->a], sizeof(r->iv));
        if (o->op == HPU_TPC_OP_ISET) {
            r->iv[o->c] = (int32_t)b;
        } else if (o->op == HPU_TPC_OP_IADD) {
            r->iv[o->c] = (int32_t)((uint32_t)r->iv[o->c] + b);
        } else if (o->op == HPU_TPC_OP_IMUL) {
            r->iv[o->c] = (int32_t)((uint32_t)r->iv[o->c] * b);
        }
        break;
    case HPU_TPC_OP_IGET:
        r->kind = SR_S;
        r->val = (uint32_t)k->ir[o->a][o->c];
        break;
    default:
        break;
    }
}

/* ---- Bundles ---------------------------------------------------------- */

enum { HPU_TPC_NEXT, HPU_TPC_HALT, HPU_TPC_FAIL };

static HPU_TPC_SLOW int hpum_tpc_illegal(HpuTpcCore *k, uint32_t pc,
                                         unsigned int why)
{
    hpum_tpc_fail(k->L, HPU_CQ_TPC_ILLEGAL, HPU_EVENT_TPC_ILLEGAL,
                  (uint64_t)pc * HPU_TPC_BUNDLE_SIZE, k->index | why << 8,
                  NULL);
    return HPU_TPC_FAIL;
}

/* A guard: whether the instruction runs; @gm the lane mask if any. */
static inline bool hpum_tpc_guard(const HpuTpcCore *k, const HpuTpcOp *o,
                                  uint64_t *mask, const uint64_t **gm)
{
    unsigned int w;

    *gm = NULL;
    if (!o->op) {
        return false;
    }
    if (!o->glane) {
        return k->sp[o->greg] ^ o->gneg;
    }
    for (w = 0; w < 4; w++) {
        mask[w] = k->vp[o->greg][w] ^ (o->gneg ? ~0ULL : 0);
    }
    *gm = mask;
    return true;
}

/* Local memory address of a MEM operand; false: LOCAL. */
static bool hpum_tpc_local(const HpuTpcCore *k, const HpuTpcOp *o,
                           uint32_t size, uint32_t align, uint32_t *addr)
{
    uint32_t a = o->form == HPU_TPC_FORM_S ? k->s[o->a] + o->imm : o->imm;

    *addr = a;
    return !(a % align) && a < size && size - a >= align;
}

/*
 * The load slot (guard true, lane mask @gm) of bundle @pc: a vector
 * result into @vd (which holds the destination's value), a scalar one
 * into @sd.  HPU_TPC_NEXT or HPU_TPC_FAIL (recorded).
 */
static int hpum_tpc_load(HpuTpcCore *k, const HpuTpcOp *o,
                         const uint64_t *gm, uint32_t pc, HpuTpcVec *vd,
                         uint32_t *sd)
{
    HpuTpcLaunch *L = k->L;
    uint32_t addr;

    switch (o->op) {
    case HPU_TPC_OP_LD_T:
        if (!hpum_tpc_ld_t(k, o->a, k->ir[o->b], o->lanes, gm, vd)) {
            return HPU_TPC_FAIL;
        }
        break;
    case HPU_TPC_OP_LD_TS: {
        const HpuTpcTensor *t = &L->t[o->a];
        unsigned int lo, hi;
        uint64_t row;
        uint32_t x = 0;

        if (hpum_tpc_span(t, k->ir[o->b], 1, &lo, &hi, &row)) {
            if (!hpum_tpc_tread(k, o->a,
                                hpum_tpc_elem_va(t, row, k->ir[o->b][0]),
                                &x, t->es)) {
                return HPU_TPC_FAIL;
            }
        } else {
            x = t->pad;
        }
        *sd = hpum_widen(t->dt, x);
        break;
    }
    case HPU_TPC_OP_LD_L:
        if (!hpum_tpc_local(k, o, L->slm_size, 4, &addr)) {
            return hpum_tpc_illegal(k, pc, HPU_TPC_ILL_LOCAL);
        }
        memcpy(sd, k->slm + addr, 4);
        break;
    case HPU_TPC_OP_LD_LV:
        if (!hpum_tpc_local(k, o, L->vlm_size, 256, &addr)) {
            return hpum_tpc_illegal(k, pc, HPU_TPC_ILL_LOCAL);
        }
        memcpy(vd, k->vlm + addr, 256);
        break;
    case HPU_TPC_OP_LDARG:
        *sd = L->scalars[o->imm];
        break;
    case HPU_TPC_OP_TSIZE:
        *sd = L->t[o->a].size[o->c];
        break;
    default:
        break;
    }
    return HPU_TPC_NEXT;
}

/* The store slot (guard true, lane mask @gm) of bundle @pc. */
static int hpum_tpc_store(HpuTpcCore *k, const HpuTpcOp *o,
                          const uint64_t *gm, uint32_t pc)
{
    HpuTpcLaunch *L = k->L;
    uint32_t addr;

    switch (o->op) {
    case HPU_TPC_OP_ST_T:
        if (!hpum_tpc_st_t(k, o->a, k->ir[o->b], o->lanes, gm,
                           &k->v[o->c])) {
            return HPU_TPC_FAIL;
        }
        break;
    case HPU_TPC_OP_ST_TS: {
        const HpuTpcTensor *t = &L->t[o->a];
        unsigned int lo, hi;
        uint64_t row;
        uint32_t x = hpum_narrow(t->dt, k->s[o->c]);

        if (hpum_tpc_span(t, k->ir[o->b], 1, &lo, &hi, &row) &&
            !hpum_tpc_twrite(k, o->a,
                             hpum_tpc_elem_va(t, row, k->ir[o->b][0]),
                             &x, t->es)) {
            return HPU_TPC_FAIL;
        }
        break;
    }
    case HPU_TPC_OP_ST_L:
        if (!hpum_tpc_local(k, o, L->slm_size, 4, &addr)) {
            return hpum_tpc_illegal(k, pc, HPU_TPC_ILL_LOCAL);
        }
        memcpy(k->slm + addr, &k->s[o->c], 4);
        break;
    case HPU_TPC_OP_ST_LV:
        if (!hpum_tpc_local(k, o, L->vlm_size, 256, &addr)) {
            return hpum_tpc_illegal(k, pc, HPU_TPC_ILL_LOCAL);
        }
        memcpy(k->vlm + addr, &k->v[o->c], 256);
        break;
    default:
        break;
    }
    return HPU_TPC_NEXT;
}

/* Write the scalar slot's result @sr. */
static void hpum_tpc_scommit(HpuTpcCore *k, const HpuTpcSRes *sr)
{
    switch (sr->kind) {
    case SR_S:
        k->s[sr->reg] = sr->val;
        break;
    case SR_P:
        k->sp[sr->reg] = (uint8_t)(sr->val & 1);
        break;
    case SR_I:
        memcpy(k->ir[sr->reg], sr->iv, sizeof(sr->iv));
        break;
    default:
        break;
    }
}

/*
 * A false assert of bundle @pc (guard true): TPC_ASSERT, before anything
 * of the bundle is written.
 */
static bool hpum_tpc_assert_fails(HpuTpcCore *k, const HpuTpcOp *os,
                                  uint32_t pc)
{
    if (os->op != HPU_TPC_OP_ASSERT || (k->sp[os->a] ^ (os->mod & 1))) {
        return false;
    }
    hpum_tpc_fail(k->L, HPU_CQ_TPC_ASSERT, HPU_EVENT_TPC_ASSERT,
                  (uint64_t)pc * HPU_TPC_BUNDLE_SIZE, hpum_tpc_sxb(k, os),
                  NULL);
    return true;
}

/* The fast path of slot @o (of @slot) in a direct bundle. */
static unsigned int hpum_tpc_xop(const HpuTpcLaunch *L, unsigned int slot,
                                 const HpuTpcOp *o)
{
    switch (slot) {
    case HPU_TPC_SLOT_LOAD:
        if (o->op == HPU_TPC_OP_LD_T) {
            return !o->glane && L->t[o->a].stride[0] == 1 ? HPU_TPC_X_LD_T
                                                         : HPU_TPC_X_SLOT;
        }
        return o->op == HPU_TPC_OP_TSIZE ? HPU_TPC_X_TSIZE :
               o->op == HPU_TPC_OP_LDARG ? HPU_TPC_X_LDARG : HPU_TPC_X_SLOT;
    case HPU_TPC_SLOT_STORE:
        return o->op == HPU_TPC_OP_ST_T && !o->glane &&
               L->t[o->a].stride[0] == 1 ? HPU_TPC_X_ST_T : HPU_TPC_X_SLOT;
    case HPU_TPC_SLOT_SCALAR:
        switch (o->op) {
        case HPU_TPC_OP_MOV:
            return HPU_TPC_X_MOV;
        case HPU_TPC_OP_ADD: case HPU_TPC_OP_SUB: case HPU_TPC_OP_MUL:
        case HPU_TPC_OP_DIV: case HPU_TPC_OP_REM: case HPU_TPC_OP_MIN:
        case HPU_TPC_OP_MAX: case HPU_TPC_OP_AND: case HPU_TPC_OP_OR:
        case HPU_TPC_OP_XOR: case HPU_TPC_OP_NOT: case HPU_TPC_OP_SHL:
        case HPU_TPC_OP_SHR:
            return HPU_TPC_X_SALU;
        case HPU_TPC_OP_CMP:
            return HPU_TPC_X_CMP;
        case HPU_TPC_OP_LOOP:
            return HPU_TPC_X_LOOP;
        case HPU_TPC_OP_JMP:
            return HPU_TPC_X_JMP;
        case HPU_TPC_OP_HALT:
            return HPU_TPC_X_HALT;
        case HPU_TPC_OP_IID:
            return HPU_TPC_X_IID;
        case HPU_TPC_OP_IADD:
            return o->d == o->a ? HPU_TPC_X_IADD : HPU_TPC_X_IDX;
        case HPU_TPC_OP_IMOV: case HPU_TPC_OP_ISET: case HPU_TPC_OP_IMUL:
            return HPU_TPC_X_IDX;
        default:
            return HPU_TPC_X_SLOT;
        }
    default:
        switch (o->op) {
        case HPU_TPC_OP_VADD: case HPU_TPC_OP_VSUB: case HPU_TPC_OP_VMUL:
        case HPU_TPC_OP_VDIV: case HPU_TPC_OP_VMIN: case HPU_TPC_OP_VMAX:
        case HPU_TPC_OP_VMAC: case HPU_TPC_OP_VFMA: case HPU_TPC_OP_VEXP:
        case HPU_TPC_OP_VLOG: case HPU_TPC_OP_VRCP: case HPU_TPC_OP_VRSQRT:
        case HPU_TPC_OP_VSQRT: case HPU_TPC_OP_VTANH: case HPU_TPC_OP_VSIGMOID:
        case HPU_TPC_OP_VERF:
            return o->dt == HPU_TPC_DT_F32 && !o->glane ? HPU_TPC_X_VF32
                                                       : HPU_TPC_X_SLOT;
        default:
            return HPU_TPC_X_SLOT;
        }
    }
}

/* Bundle @pc's steps at @u (NULL: count them only); how many. */
static unsigned int hpum_tpc_steps(const HpuTpcLaunch *L, uint32_t pc,
                                   HpuTpcUop *u)
{
    static const unsigned int order[HPU_TPC_SLOTS] = {
        HPU_TPC_SLOT_LOAD, HPU_TPC_SLOT_STORE, HPU_TPC_SLOT_SCALAR,
        HPU_TPC_SLOT_VECTOR,
    };
    const HpuTpcBundle *b = &L->code[pc];
    unsigned int i, n = 0;

    if (!b->direct) {
        if (u) {
            memset(u, 0, sizeof(*u));
            u->o.xop = HPU_TPC_X_BUNDLE;
            u->last = true;
            u->pc = pc;
        }
        return 1;
    }
    for (i = 0; i < HPU_TPC_SLOTS; i++) {
        const HpuTpcOp *o = &b->s[order[i]];

        if (!o->op) {
            continue;
        }
        if (u) {
            memset(&u[n], 0, sizeof(u[n]));
            u[n].o = *o;
            u[n].o.xop = (uint8_t)hpum_tpc_xop(L, order[i], o);
            u[n].pc = pc;
        }
        n++;
    }
    if (!n && u) {
        memset(u, 0, sizeof(*u));
        u->o.xop = HPU_TPC_X_END;
        u->pc = pc;
    }
    n = n ? n : 1;
    if (u) {
        u[n - 1].last = true;
    }
    return n;
}

/*
 * The member's prologue.  Every member begins in the same start state
 * (tpc.md "Members": registers zero, sp0 true) and differs from the others
 * only by its coordinate (iid) and what it reads from memory, so the
 * steps from the entry that compute, from the launch's constants, values
 * that are the same in every member (tsize, ldarg, mov, integer scalar
 * arithmetic, compares) or the same function of the coordinate (iid and
 * the index arithmetic on it, HpuTpcAff) are computed here once, and a
 * step whose guard is false is left out.  They end before the first step
 * that computes anything else (a memory access, a vector instruction, a
 * branch, a halt, f32 scalar arithmetic, a bundle run whole), which may
 * be in the middle of a bundle.  The prologue is then the writes of the
 * registers those steps leave different from the start state: it cannot
 * fail nor be stopped, and it counts for its whole bundles in the checks
 * of hpum_tpc_steps_run().
 */
#define HPU_TPC_PRO_BUNDLES     64      /* below HPU_TPC_CHECK_BUNDLES */

typedef struct HpuTpcFold {
    uint32_t val[HPU_TPC_SREGS + HPU_TPC_PREGS];   /* then predicates */
    HpuTpcAff ix[HPU_TPC_IREGS];
    bool ixset[HPU_TPC_IREGS];
} HpuTpcFold;

/* Scalar operand B of @o. */
static uint32_t hpum_tpc_fold_b(const HpuTpcFold *f, const HpuTpcOp *o)
{
    return o->form == HPU_TPC_FORM_S ? f->val[o->b] : o->imm;
}

/* The index step @o (hpum_tpc_idx()). */
static void hpum_tpc_fold_idx(HpuTpcFold *f, const HpuTpcOp *o)
{
    const uint32_t x = hpum_tpc_fold_b(f, o);
    HpuTpcAff r = f->ix[o->a];
    const unsigned int c = o->c;

    if (o->op == HPU_TPC_OP_ISET) {
        r.src[c] = HPU_TPC_DIMS;
        r.a[c] = 0;
        r.b[c] = x;
    } else if (o->op == HPU_TPC_OP_IADD) {
        r.b[c] += x;
    } else if (o->op == HPU_TPC_OP_IMUL) {
        r.a[c] *= x;
        r.b[c] *= x;
    }
    f->ix[o->d] = r;
    f->ixset[o->d] = true;
}

/*
 * Step @o (guard true) computed into @f: false if it is not one the
 * prologue computes.  Only steps of the scalar, predicate and index
 * registers whose short paths in hpum_tpc_step() read nothing else.
 */
static bool hpum_tpc_fold_step(const HpuTpcLaunch *L, HpuTpcFold *f,
                               const HpuTpcOp *o)
{
    const uint32_t b = hpum_tpc_fold_b(f, o);
    uint32_t a;
    unsigned int c;

    switch (o->xop) {
    case HPU_TPC_X_TSIZE:
        f->val[o->d] = L->t[o->a].size[o->c];
        return true;
    case HPU_TPC_X_LDARG:
        f->val[o->d] = L->scalars[o->imm];
        return true;
    case HPU_TPC_X_MOV:
        f->val[o->d] = b;
        return true;
    case HPU_TPC_X_SALU:
        /* f32 arithmetic is left to the cores (their floating-point state) */
        if (o->dt == HPU_TPC_DT_F32) {
            return false;
        }
        f->val[o->d] = hpum_tpc_salu(o, f->val[o->a], b);
        return true;
    case HPU_TPC_X_CMP:
        a = f->val[o->a];
        f->val[HPU_TPC_SREGS + o->d] = o->dt == HPU_TPC_DT_F32 ?
            hpum_cmp_f(o->mod, b2f(a), b2f(b)) :
            hpum_cmp_i(o->mod, hpum_int_value(o->dt, a),
                       hpum_int_value(o->dt, b));
        return true;
    case HPU_TPC_X_IID:
        for (c = 0; c < HPU_TPC_DIMS; c++) {
            f->ix[o->d].src[c] = (uint8_t)c;
            f->ix[o->d].a[c] = 1;
            f->ix[o->d].b[c] = 0;
        }
        f->ixset[o->d] = true;
        return true;
    case HPU_TPC_X_IDX: case HPU_TPC_X_IADD:
        hpum_tpc_fold_idx(f, o);
        return true;
    default:
        return false;
    }
}

/* L->pro and the rest of the prologue's fields; false: no host memory. */
static bool hpum_tpc_fold(HpuTpcLaunch *L)
{
    const HpuTpcUop *u = &L->uops[L->first[L->entry]];
    /* the sentinel bundle past the code is one step, run whole */
    const HpuTpcUop *end = &L->uops[L->first[L->nb] + 1];
    HpuTpcFold f;
    HpuTpcUop *p;
    uint32_t bundles = 0, n = 0, r;

    memset(&f, 0, sizeof(f));
    f.val[HPU_TPC_SREGS] = 1;           /* sp0 */
    for (r = 0; r < HPU_TPC_IREGS; r++) {
        memset(f.ix[r].src, HPU_TPC_DIMS, sizeof(f.ix[r].src));
    }
    for (; u < end && bundles < HPU_TPC_PRO_BUNDLES; u++) {
        const uint32_t g = f.val[HPU_TPC_SREGS + u->o.greg] ^ u->o.gneg;

        if (u->o.xop == HPU_TPC_X_BUNDLE ||
            (u->o.xop != HPU_TPC_X_END && g &&
             !hpum_tpc_fold_step(L, &f, &u->o))) {
            break;
        }
        bundles += u->last;             /* four NOPs, a false guard: nothing */
    }
    if (!bundles) {
        return true;
    }
    L->pro = calloc(HPU_TPC_SREGS + HPU_TPC_PREGS + HPU_TPC_IREGS,
                    sizeof(*L->pro));
    L->pro_aff = calloc(HPU_TPC_IREGS, sizeof(*L->pro_aff));
    if (!L->pro || !L->pro_aff) {
        return false;                   /* freed with the launch */
    }
    /* the registers as those bundles leave them: what differs from zero */
    for (r = 0; r < HPU_TPC_SREGS + HPU_TPC_PREGS; r++) {
        if (f.val[r] != (r == HPU_TPC_SREGS)) {
            p = &L->pro[n++];
            p->o.xop = r < HPU_TPC_SREGS ? HPU_TPC_X_MOV : HPU_TPC_X_PSET;
            p->o.d = (uint8_t)(r < HPU_TPC_SREGS ? r : r - HPU_TPC_SREGS);
            p->o.imm = f.val[r];
        }
    }
    for (r = 0; r < HPU_TPC_IREGS; r++) {
        if (f.ixset[r]) {
            p = &L->pro[n++];
            p->o.xop = HPU_TPC_X_IAFF;
            p->o.d = (uint8_t)r;
            p->o.imm = r;
            L->pro_aff[r] = f.ix[r];
        }
    }
    L->npro = n;
    L->pro_bundles = bundles;
    L->pro_next = (uint32_t)(u - L->uops);
    return true;
}

bool hpum_tpc_prepare(HpuTpcLaunch *L)
{
    uint32_t pc, n = 0, i;

    L->first = calloc((size_t)L->nb + 1, sizeof(*L->first));
    for (pc = 0; pc <= L->nb; pc++) {
        n += hpum_tpc_steps(L, pc, NULL);
    }
    L->uops = calloc(n, sizeof(*L->uops));
    if (!L->first || !L->uops) {
        return false;
    }
    for (pc = 0, n = 0; pc <= L->nb; pc++) {
        L->first[pc] = n;
        n += hpum_tpc_steps(L, pc, &L->uops[n]);
    }
    for (i = 0; i < n; i++) {
        HpuTpcUop *u = &L->uops[i];

        if (u->o.xop == HPU_TPC_X_LOOP || u->o.xop == HPU_TPC_X_JMP) {
            u->to = L->first[u->o.imm];     /* below nb: the decoder checked */
        }
    }
    return hpum_tpc_fold(L);
}

/*
 * The bytes of tensor @t's vector at @ci (@lanes of it) when every lane is
 * in range and stride 0 is 1: *@va gets their address.
 */
static inline bool hpum_tpc_whole(const HpuTpcTensor *t, const int32_t *ci,
                                  unsigned int lanes, uint64_t *va)
{
    uint64_t row;

    if (ci[0] < 0 || (uint64_t)ci[0] + lanes > t->size[0]) {
        return false;
    }
    row = 0;
    if ((ci[1] | ci[2] | ci[3] | ci[4]) && !hpum_tpc_row(t, ci, &row)) {
        return false;
    }
    *va = t->base + t->es * (row + (uint64_t)ci[0]);
    return true;
}

/* Lanes of @d from those of @a and B (@b, or every lane @x if NULL). */
#define HPU_VF32_LANES(EXPR)                                            \
    do {                                                                \
        if (b) {                                                        \
            for (l = 0; l < 64; l++) {                                  \
                const float bl = b[l];                                  \
                d[l] = (EXPR);                                          \
            }                                                           \
        } else {                                                        \
            for (l = 0; l < 64; l++) {                                  \
                const float bl = x;                                     \
                d[l] = (EXPR);                                          \
            }                                                           \
        }                                                               \
    } while (0)

/*
 * f32 arithmetic of hpum_tpc_fop() over 64 lanes with B a vector (@b) or
 * a broadcast value (@x, @b NULL); false for the other instructions.
 * Inlined where it is called, so that it is compiled for each target.
 */
static inline __attribute__((always_inline)) bool
hpum_vf32_arith(unsigned int op, float *restrict d, const float *a,
                const float *b, float x, const float *c)
{
    unsigned int l;

    switch (op) {
    case HPU_TPC_OP_VADD:
        HPU_VF32_LANES(a[l] + bl);
        return true;
    case HPU_TPC_OP_VSUB:
        HPU_VF32_LANES(a[l] - bl);
        return true;
    case HPU_TPC_OP_VMUL:
        HPU_VF32_LANES(a[l] * bl);
        return true;
    case HPU_TPC_OP_VDIV:
        HPU_VF32_LANES(a[l] / bl);
        return true;
    case HPU_TPC_OP_VMAC:
    case HPU_TPC_OP_VFMA:
        HPU_VF32_LANES(fmaf(a[l], bl, c[l]));
        return true;
    default:
        return false;
    }
}

static bool hpum_vf32_base(unsigned int op, float *restrict d, const float *a,
                           const float *b, float x, const float *c)
{
    return hpum_vf32_arith(op, d, a, b, x, c);
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * The same compiled for AVX2 and FMA: fmaf() is then the vfmadd
 * instruction, as libm's own fmaf is on such a host, and square roots are
 * vsqrtps, the same correctly rounded IEEE operation as sqrtf() (so the
 * results are those of hpum_vf32_base()).
 */
__attribute__((target("avx2,fma")))
static bool hpum_vf32_avx2(unsigned int op, float *restrict d,
                           const float *a, const float *b, float x,
                           const float *c)
{
    unsigned int l;

    if (op == HPU_TPC_OP_VSQRT || op == HPU_TPC_OP_VRSQRT) {
        for (l = 0; l < 64; l += 8) {
            __m256 r = _mm256_sqrt_ps(_mm256_loadu_ps(a + l));

            if (op == HPU_TPC_OP_VRSQRT) {
                r = _mm256_div_ps(_mm256_set1_ps(1.0f), r);
            }
            _mm256_storeu_ps(d + l, r);
        }
        return true;
    }
    return hpum_vf32_arith(op, d, a, b, x, c);
}

bool hpum_tpc_host_avx2(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
static bool hpum_vf32_avx2(unsigned int op, float *restrict d,
                           const float *a, const float *b, float x,
                           const float *c)
{
    return hpum_vf32_base(op, d, a, b, x, c);
}

bool hpum_tpc_host_avx2(void)
{
    return false;
}
#endif

/*
 * The f32 vector instructions of HPU_TPC_X_VF32 (no lane guard), as
 * hpum_tpc_vector() computes them.
 */
static inline __attribute__((always_inline)) void
hpum_tpc_vf32(HpuTpcCore *k, const HpuTpcOp *o)
{
    const float *a = k->v[o->a].f, *b = NULL, *c = k->v[o->d].f;
    float *d = k->v[o->d].f, x = 0;
    bool done;

    if (o->op == HPU_TPC_OP_VFMA) {
        b = k->v[o->b].f;
        c = k->v[o->c].f;
    } else if (o->form == HPU_TPC_FORM_V) {
        b = k->v[o->b].f;
    } else {
        x = b2f(hpum_tpc_sxb(k, o));
    }
    /* the result straight into vD unless vD is an operand too */
    if (d == a || d == b || (d == c && (o->op == HPU_TPC_OP_VMAC ||
                                        o->op == HPU_TPC_OP_VFMA))) {
        d = k->tv.f;
    }
    done = k->L->avx2 ? hpum_vf32_avx2(o->op, d, a, b, x, c)
                      : hpum_vf32_base(o->op, d, a, b, x, c);
    if (!done) {
        hpum_tpc_fop(o->op, d, a, hpum_tpc_vb(k, o)->f, c, 64);
    }
    if (d == k->tv.f) {
        memcpy(&k->v[o->d], &k->tv, sizeof(k->tv));
    }
}

/*
 * A slot of a direct bundle without a fast path (guard true); *@next gets
 * a branch's target.
 */
static HPU_TPC_SLOW int hpum_tpc_slot(HpuTpcCore *k, const HpuTpcOp *o,
                                      uint32_t pc, uint32_t *next)
{
    HpuTpcSRes sr;

    switch (o->slot) {
    case HPU_TPC_SLOT_LOAD:
        return hpum_tpc_load(k, o, NULL, pc, &k->v[o->d], &k->s[o->d]);
    case HPU_TPC_SLOT_STORE:
        return hpum_tpc_store(k, o, NULL, pc);
    case HPU_TPC_SLOT_SCALAR:
        memset(&sr, 0, sizeof(sr));
        hpum_tpc_scalar(k, o, &sr);
        hpum_tpc_scommit(k, &sr);
        if (sr.jump) {
            *next = sr.target;
        }
        return sr.halt ? HPU_TPC_HALT : HPU_TPC_NEXT;
    default:
        hpum_tpc_vector(k, o, NULL);
        return HPU_TPC_NEXT;
    }
}

/* iD = iA with component C set (ISET), added to (IADD) or multiplied by B. */
static inline void hpum_tpc_idx(HpuTpcCore *k, const HpuTpcOp *o)
{
    int32_t *ir = k->ir[o->d];
    uint32_t x = hpum_tpc_sxb(k, o);

    if (o->d != o->a) {
        memcpy(ir, k->ir[o->a], sizeof(k->ir[0]));
    }
    if (o->op == HPU_TPC_OP_ISET) {
        ir[o->c] = (int32_t)x;
    } else if (o->op == HPU_TPC_OP_IADD) {
        ir[o->c] = (int32_t)((uint32_t)ir[o->c] + x);
    } else if (o->op == HPU_TPC_OP_IMUL) {
        ir[o->c] = (int32_t)((uint32_t)ir[o->c] * x);
    }
}

/*
 * Any other bundle: the load and scalar results are buffered and written
 * after the vector slot.
 */
static HPU_TPC_SLOW int hpum_tpc_bundle_buffered(HpuTpcCore *k,
                                                 const HpuTpcBundle *b,
                                                 uint32_t *pc)
{
    const HpuTpcOp *ol = &b->s[HPU_TPC_SLOT_LOAD];
    const HpuTpcOp *os = &b->s[HPU_TPC_SLOT_SCALAR];
    const HpuTpcOp *ov = &b->s[HPU_TPC_SLOT_VECTOR];
    const HpuTpcOp *ot = &b->s[HPU_TPC_SLOT_STORE];
    /* a vector load's destination, or the buffer written after the rest */
    HpuTpcVec *lv = b->ld_direct ? &k->v[ol->d] : &k->tl;
    const uint64_t *gl, *gv, *gt, *gs;
    bool rl, rs, rv, rt;
    HpuTpcSRes sr = { 0 };
    uint32_t ls = 0;
    int r;

    rl = hpum_tpc_guard(k, ol, k->gmask[HPU_TPC_SLOT_LOAD], &gl);
    rs = hpum_tpc_guard(k, os, k->gmask[HPU_TPC_SLOT_SCALAR], &gs);
    rv = hpum_tpc_guard(k, ov, k->gmask[HPU_TPC_SLOT_VECTOR], &gv);
    rt = hpum_tpc_guard(k, ot, k->gmask[HPU_TPC_SLOT_STORE], &gt);
    if (rs && hpum_tpc_assert_fails(k, os, *pc)) {
        return HPU_TPC_FAIL;
    }
    if (rl) {
        if (gl && lv != &k->v[ol->d]) {
            *lv = k->v[ol->d];          /* disabled lanes keep their value */
        }
        r = hpum_tpc_load(k, ol, gl, *pc, lv, &ls);
        if (r != HPU_TPC_NEXT) {
            return r;
        }
    }
    /* store slot: registers as the previous bundle left them */
    if (rt) {
        r = hpum_tpc_store(k, ot, gt, *pc);
        if (r != HPU_TPC_NEXT) {
            return r;
        }
    }
    if (rs && os->op != HPU_TPC_OP_ASSERT) {
        hpum_tpc_scalar(k, os, &sr);
    }
    if (rv) {
        hpum_tpc_vector(k, ov, gv);
    }
    /* the buffered writes */
    if (rl && ol->dst_class == HPU_TPC_CL_V && lv == &k->tl) {
        memcpy(&k->v[ol->d], &k->tl, sizeof(k->tl));
    } else if (rl && ol->dst_class == HPU_TPC_CL_S) {
        k->s[ol->d] = ls;
    }
    hpum_tpc_scommit(k, &sr);
    if (sr.halt) {
        return HPU_TPC_HALT;
    }
    *pc = sr.jump ? sr.target : *pc + 1;
    return HPU_TPC_NEXT;
}

/* Run bundle @pc as a whole; *@pc gets the next one. */
static HPU_TPC_SLOW int hpum_tpc_bundle(HpuTpcCore *k, uint32_t *pc)
{
    const HpuTpcBundle *b = &k->L->code[*pc];

    if (b->ill) {
        return hpum_tpc_illegal(k, *pc, b->ill);
    }
    return hpum_tpc_bundle_buffered(k, b, pc);
}

/* ---- Members ----------------------------------------------------------- */

/* Forget the translations the core keeps (xc, tr, win). */
static void hpum_tpc_xlat_forget(HpuTpcCore *k)
{
    memset(k->xc_valid, 0, sizeof(k->xc_valid));
    memset(k->tr, 0, sizeof(k->tr));
    memset(k->win, 0, sizeof(k->win));
    k->xc_next = 0;
    k->xc_last = 0;
}

/*
 * Begin a slice of the core's work: the job may go on, and its accesses
 * count as in flight (hpum_dma_begin(), hbm.users raised) and its
 * translations as held for MMU_INV (hpum_xlat_hold_locked()) until
 * hpum_tpc_slice_end().  False: stop (recorded).
 */
static bool hpum_tpc_slice_begin(HpuTpcCore *k)
{
    HpuTpcLaunch *L = k->L;
    const HpuPacket *p = L->k;
    HpuCore *c = p->c;
    int r;

    if (__atomic_load_n(&L->stop, __ATOMIC_ACQUIRE)) {
        return false;
    }
    hpum_tpc_xlat_forget(k);
    hpum_lock(c);
    r = hpum_job_check_locked(p, false);
    k->alert = c->job_alert;
    if (r == HPU_CQ_OK) {
        if (hpum_dma_begin(c, p->j->epoch)) {
            __atomic_fetch_add(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
            k->inv_gen = hpum_xlat_hold_locked(c, p->j->asid);
            k->inflight = true;
        } else {
            r = HPU_STEP_ABORT;
        }
    }
    hpum_unlock(c);
    if (r != HPU_CQ_OK) {
        hpum_tpc_fail(L, r, 0, 0, 0, NULL);
        return false;
    }
    return true;
}

static void hpum_tpc_slice_end_locked(HpuTpcCore *k)
{
    const HpuPacket *p = k->L->k;
    HpuCore *c = p->c;

    k->inflight = false;
    hpum_xlat_release_locked(c, p->j->asid, k->inv_gen);
    __atomic_fetch_sub(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
    hpum_dma_end(c, p->j->epoch);
}

static void hpum_tpc_slice_end(HpuTpcCore *k)
{
    HpuCore *c = k->L->k->c;

    hpum_lock(c);
    hpum_tpc_slice_end_locked(k);
    hpum_unlock(c);
}

/*
 * End the slice in flight and begin the next, in one critical section
 * (@progress: a member ended, which is the engine's progress).  While the
 * job may go on, the epoch is the one the slice began in, so the access
 * simply stays in flight: the same as ending it and beginning another.
 * If an MMU_INV of the job's ASID came during the slice, it waited for
 * the slice's translations: they are let go of (the invalidation may
 * complete) and forgotten, and the next slice translates afresh.
 * Nothing the check looks at changed and no MMU_INV waits for the slice
 * since the job was last found going on (HpuCore.job_alert, bumped in the
 * critical section of every such change): then the check would find the
 * same, and the lock is not taken; the check is the same as one made just
 * before the change.  False: stop (recorded; the slice ended).
 */
static bool hpum_tpc_slice_next(HpuTpcCore *k, bool progress)
{
    HpuTpcLaunch *L = k->L;
    const HpuPacket *p = L->k;
    HpuCore *c = p->c;
    bool stale = false;
    int r;

    if (hpum_job_unchanged(c, k->alert)) {
        if (progress) {
            hpum_job_note_progress_unlocked(p);
        }
        return !__atomic_load_n(&L->stop, __ATOMIC_ACQUIRE);
    }
    hpum_lock(c);
    r = hpum_job_check_locked(p, progress);
    k->alert = c->job_alert;
    if (r != HPU_CQ_OK) {
        hpum_tpc_slice_end_locked(k);
    } else if (hpum_xlat_stale_locked(c, p->j->asid, k->inv_gen)) {
        hpum_xlat_release_locked(c, p->j->asid, k->inv_gen);
        k->inv_gen = hpum_xlat_hold_locked(c, p->j->asid);
        stale = true;
    }
    hpum_unlock(c);
    if (r != HPU_CQ_OK) {
        hpum_tpc_fail(L, r, 0, 0, 0, NULL);
        return false;
    }
    if (stale) {
        hpum_tpc_xlat_forget(k);
    }
    return !__atomic_load_n(&L->stop, __ATOMIC_ACQUIRE);
}

/*
 * Step @u (its guard true): HPU_TPC_NEXT, HPU_TPC_HALT (the member ends
 * after the bundle) or HPU_TPC_FAIL; *@to gets the step a branch goes to.
 */
static inline __attribute__((always_inline)) int
hpum_tpc_step(HpuTpcCore *k, const HpuTpcUop *u, const HpuTpcUop **to)
{
    HpuTpcLaunch *L = k->L;
    const HpuTpcOp *o = &u->o;
    uint32_t pc, x;
    uint64_t va;
    int r;

    switch (o->xop) {
    case HPU_TPC_X_LD_T:
        if (!hpum_tpc_whole(&L->t[o->a], k->ir[o->b], o->lanes, &va)) {
            r = hpum_tpc_ld_t(k, o->a, k->ir[o->b], o->lanes, NULL,
                              &k->v[o->d]);
        } else {
            r = hpum_tpc_tread(k, o->a, va, &k->v[o->d], 256);
        }
        if (!r) {
            return HPU_TPC_FAIL;
        }
        break;
    case HPU_TPC_X_ST_T:
        if (!hpum_tpc_whole(&L->t[o->a], k->ir[o->b], o->lanes, &va)) {
            r = hpum_tpc_st_t(k, o->a, k->ir[o->b], o->lanes, NULL,
                              &k->v[o->c]);
        } else {
            r = hpum_tpc_twrite(k, o->a, va, &k->v[o->c], 256);
        }
        if (!r) {
            return HPU_TPC_FAIL;
        }
        break;
    case HPU_TPC_X_TSIZE:
        k->s[o->d] = L->t[o->a].size[o->c];
        break;
    case HPU_TPC_X_LDARG:
        k->s[o->d] = L->scalars[o->imm];
        break;
    case HPU_TPC_X_MOV:
        k->s[o->d] = hpum_tpc_sxb(k, o);
        break;
    case HPU_TPC_X_SALU:
        k->s[o->d] = hpum_tpc_salu(o, k->s[o->a], hpum_tpc_sxb(k, o));
        break;
    case HPU_TPC_X_CMP:
        x = hpum_tpc_sxb(k, o);
        k->sp[o->d] = o->dt == HPU_TPC_DT_F32 ?
            hpum_cmp_f(o->mod, b2f(k->s[o->a]), b2f(x)) :
            hpum_cmp_i(o->mod, hpum_int_value(o->dt, k->s[o->a]),
                       hpum_int_value(o->dt, x));
        break;
    case HPU_TPC_X_LOOP:
        if (--k->s[o->d]) {
            *to = &L->uops[u->to];
        }
        break;
    case HPU_TPC_X_JMP:
        *to = &L->uops[u->to];
        break;
    case HPU_TPC_X_HALT:
        return HPU_TPC_HALT;
    case HPU_TPC_X_IID:
        for (x = 0; x < HPU_TPC_DIMS; x++) {
            k->ir[o->d][x] = (int32_t)k->m[x];
        }
        break;
    case HPU_TPC_X_IDX:
        hpum_tpc_idx(k, o);
        break;
    case HPU_TPC_X_IADD:
        k->ir[o->d][o->c] = (int32_t)((uint32_t)k->ir[o->d][o->c] +
                                      hpum_tpc_sxb(k, o));
        break;
    case HPU_TPC_X_VF32:
        hpum_tpc_vf32(k, o);
        break;
    case HPU_TPC_X_SLOT:
        pc = u->pc + 1;
        r = hpum_tpc_slot(k, o, u->pc, &pc);
        if (pc != u->pc + 1) {
            *to = &L->uops[L->first[pc]];
        }
        return r;
    case HPU_TPC_X_BUNDLE:
        pc = u->pc;
        r = hpum_tpc_bundle(k, &pc);
        *to = &L->uops[L->first[pc]];
        return r;
    default:
        break;
    }
    return HPU_TPC_NEXT;
}

/*
 * The member's prologue (hpum_tpc_fold()): register writes only, which
 * neither fail nor branch.
 */
#if HPU_TPC_DIMS != 5
#error "hpum_tpc_pro_run() writes the five components of an index register"
#endif
static HPU_TPC_SLOW void hpum_tpc_pro_run(HpuTpcCore *k)
{
    const HpuTpcLaunch *L = k->L;
    const HpuTpcUop *u = L->pro, *end = u + L->npro;
    uint32_t m[HPU_TPC_DIMS + 1];

    memcpy(m, k->m, sizeof(k->m));
    m[HPU_TPC_DIMS] = 0;                /* a constant component: b only */
    for (; u < end; u++) {
        const HpuTpcOp *o = &u->o;
        const HpuTpcAff *f;
        int32_t *ir;

        if (o->xop == HPU_TPC_X_MOV) {
            k->s[o->d] = o->imm;
        } else if (o->xop == HPU_TPC_X_PSET) {
            k->sp[o->d] = (uint8_t)o->imm;
        } else {
            f = &L->pro_aff[o->imm];
            ir = k->ir[o->d];
            ir[0] = (int32_t)(m[f->src[0]] * f->a[0] + f->b[0]);
            ir[1] = (int32_t)(m[f->src[1]] * f->a[1] + f->b[1]);
            ir[2] = (int32_t)(m[f->src[2]] * f->a[2] + f->b[2]);
            ir[3] = (int32_t)(m[f->src[3]] * f->a[3] + f->b[3]);
            ir[4] = (int32_t)(m[f->src[4]] * f->a[4] + f->b[4]);
        }
    }
}

/*
 * Run the member's steps from the entry bundle: a direct bundle's slots
 * one after the other, each with its own guard (read before anything of
 * the bundle is written: only the scalar slot writes predicates, and a
 * vector slot guarded by one it writes makes the bundle run whole).  At
 * every bundle's end: a halt, the launch's stop flag, and the slice's
 * renewal every HPU_TPC_CHECK_BUNDLES bundles.  HALT or FAIL.
 */
static int hpum_tpc_steps_run(HpuTpcCore *k)
{
    HpuTpcLaunch *L = k->L;
    const HpuTpcUop *u = &L->uops[L->first[L->entry]], *to = NULL;
    unsigned int n = HPU_TPC_CHECK_BUNDLES;
    bool halt = false;
    int r;

    if (L->pro) {
        hpum_tpc_pro_run(k);
        if (__atomic_load_n(&L->stop, __ATOMIC_RELAXED)) {
            return HPU_TPC_FAIL;
        }
        n -= L->pro_bundles;            /* fewer than HPU_TPC_CHECK_BUNDLES */
        u = &L->uops[L->pro_next];
    }
    for (;;) {
        if (k->sp[u->o.greg] ^ u->o.gneg) {
            r = hpum_tpc_step(k, u, &to);
            if (r == HPU_TPC_FAIL) {
                return r;
            }
            halt |= r == HPU_TPC_HALT;
        }
        if (!u->last) {
            u++;
            continue;
        }
        /* the bundle's end */
        if (halt) {
            return HPU_TPC_HALT;
        }
        if (__atomic_load_n(&L->stop, __ATOMIC_RELAXED)) {
            return HPU_TPC_FAIL;
        }
        if (!--n) {
            n = HPU_TPC_CHECK_BUNDLES;
            if (!hpum_tpc_slice_next(k, false)) {
                return HPU_TPC_FAIL;
            }
        }
        u = to ? to : u + 1;
        to = NULL;
    }
}

/* Member @lin (coordinate k->m) from its start state; HALT or FAIL. */
static int hpum_tpc_member(HpuTpcCore *k, uint64_t lin)
{
    HpuTpcLaunch *L = k->L;
    uint32_t m;

    /* the registers a member can read: those its code names */
    for (m = L->vmask; m; m &= m - 1) {
        memset(&k->v[__builtin_ctz(m)], 0, sizeof(k->v[0]));
    }
    /* all of them, in fewer stores: the others are never read */
    memset(k->s, 0, sizeof(k->s));
    memset(k->ir, 0, sizeof(k->ir));
    for (m = L->qmask & ~1u; m; m &= m - 1) {
        memset(k->vp[__builtin_ctz(m)], 0, sizeof(k->vp[0]));
    }
    memset(k->sp, 0, sizeof(k->sp));
    k->sp[0] = 1;
    if (L->slm_size) {
        memset(k->slm, 0, L->slm_size);
    }
    if (L->vlm_size) {
        memset(k->vlm, 0, L->vlm_size);
    }
    k->draw = 0;
    k->lin = lin;
    return hpum_tpc_steps_run(k);
}

/* k->m: the coordinate of member @lin (tpc.md "Index space"). */
static void hpum_tpc_coord(HpuTpcCore *k, uint64_t lin)
{
    const HpuTpcLaunch *L = k->L;
    unsigned int d;

    for (d = 0; d < HPU_TPC_DIMS; d++) {
        k->m[d] = (uint32_t)(lin % L->isize[d]);
        lin /= L->isize[d];
    }
}

/* k->m: the coordinate of the next member, lin + 1. */
static void hpum_tpc_coord_next(HpuTpcCore *k)
{
    const HpuTpcLaunch *L = k->L;
    unsigned int d;

    for (d = 0; d < HPU_TPC_DIMS; d++) {
        if (++k->m[d] < L->isize[d]) {
            return;
        }
        k->m[d] = 0;
    }
}

/*
 * The members run as one access in flight, renewed at every member's end
 * and every HPU_TPC_CHECK_BUNDLES bundles in a member, each renewal
 * checking the job (stream, reset, INJ_HANG) as the member's progress
 * is noted: so the member in flight when a stop comes is the last one.
 */
void hpum_tpc_run_members(HpuTpcCore *k, uint64_t first, uint64_t end)
{
    uint64_t lin;
    int r;

    if (!hpum_tpc_slice_begin(k)) {
        return;
    }
    hpum_tpc_coord(k, first);
    for (lin = first; lin < end; lin++) {
        r = hpum_tpc_member(k, lin);
        if (r != HPU_TPC_HALT || !hpum_tpc_slice_next(k, true)) {
            break;
        }
        hpum_tpc_coord_next(k);
    }
    if (k->inflight) {
        hpum_tpc_slice_end(k);
    }
}
