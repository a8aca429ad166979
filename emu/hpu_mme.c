/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: the Matrix Math Engines (engine indexes 9 and 10) and
 * their MME_GEMM packet (Documentation/hw/mme.md, compute.md).
 *
 * A GEMM runs on the host's OpenBLAS: D is computed by panels of at most
 * HPU_MME_PANEL x HPU_MME_PANEL elements (whole 128 x 128 output tiles).
 * For each HPU_MME_SLICE-deep slice of K (1024: one product for K up to
 * 1024) cblas_sgemm accumulates the product of the panel's slices of A
 * and B into the panel.  An FP32 slice whose rows are in HBM at offsets
 * that follow their addresses (hpum_job_direct(): every byte of its rows
 * translated and checked through the device MMU first) is multiplied in
 * place, with the descriptor's leading dimension; any other slice is
 * gathered as stored (hpum_mem_xfer_rows(): page runs translated in
 * batches, memcpy from HBM chunks, one DMA per host run), BF16 widened to
 * FP32 exactly (so the products and the FP32 accumulation are those of a
 * BF16 GEMM).  Either way the product sees the same numbers with the same
 * shapes, so the result is the same bytes.  The epilogue (alpha, beta * C,
 * bias, activation, conversion) then runs per output tile, in place in D
 * when D is FP32 in HBM the same way, else into a tile buffer that is
 * stored.  The job is checked before every panel, after every slice (which
 * also counts as progress for the watchdog: the tiles of a panel are only
 * stored once all its slices are done) and before every tile store; a
 * stored tile is progress.  An in-place slice or tile is an access in
 * flight for the time of its product or epilogue: a reset, and an
 * MMU_INV of its ASID (MMU_INV_STATUS), wait for it.
 *
 * Host memory per engine is bounded whatever the GEMM: a 4 MiB FP32
 * accumulator, two 4 MiB slices, a 2 MiB BF16 staging buffer and three
 * small tile buffers (about 14.1 MiB), allocated at the engine's first
 * GEMM and kept until teardown.
 *
 * Plain C99, no QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "hpu_internal.h"
#include "hpu_mme.h"

#define HPU_MME_PANEL           1024    /* rows / columns of a panel of D */
#define HPU_MME_PANEL_ELEMS     ((size_t)HPU_MME_PANEL * HPU_MME_PANEL)
#define HPU_MME_SLICE           1024    /* depth (K) of one product */
#define HPU_MME_SLICE_ELEMS     ((size_t)HPU_MME_PANEL * HPU_MME_SLICE)
#define HPU_MME_TILE_ELEMS      ((size_t)HPU_MME_TILE * HPU_MME_TILE)

struct HpuMmeBufs {
    float *a;                   /* panel of A as stored (mc x kc, kc x mc) */
    float *b;                   /* panel of B as stored */
    float *acc;                 /* mc x nc: op(A) x op(B) */
    uint8_t *raw;               /* BF16 staging, HPU_MME_SLICE_ELEMS */
    float *c;                   /* a tile of C */
    uint8_t *out;               /* a tile of D in its type */
    float *bias;                /* nc columns */
};

/* A decoded, checked GEMM descriptor. */
typedef struct HpuGemm {
    uint64_t desc;
    uint32_t m, n, k, batch;
    unsigned int in_sz, out_sz; /* element bytes */
    bool ta, tb, bias, use_c;
    unsigned int act;
    uint64_t a, b, c, d, bias_va;
    uint32_t lda, ldb, ldc, ldd;
    uint64_t sa, sb, sc, sd;
    float alpha, beta;
} HpuGemm;

/*
 * OpenBLAS is process-wide: one thread pool, one thread count.  Both MMEs
 * (of every HPU device in the process) take their products through
 * hpum_blas_lock, one at a time, each run by HpuCoreConfig.mme_threads
 * threads (the device property mme-threads, default 1: the product runs in the
 * engine thread itself and OpenBLAS starts no pool).  So the MMEs never
 * take more than that many host cores for products, however many GEMMs
 * run, and OpenBLAS's spinning pool, if it has one, serves one caller.
 * Operands used in place begin under it (hpum_mme_slice()); it is taken
 * before the core lock, never with it held, and never held over a copy.
 * Nothing takes it under QEMU's BQL: a device's thread count
 * (hpum_mme_setup(), at realize) is only stored, and the next product
 * applies it under the lock.
 */
static pthread_mutex_t hpum_blas_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int hpum_blas_threads_want = 1;     /* atomic */
static unsigned int hpum_blas_threads;  /* OpenBLAS's, 0 unset (BLAS lock) */

void (*hpum_mme_test_hook)(const HpuPacket *k);

void hpum_mme_setup(unsigned int threads)
{
    __atomic_store_n(&hpum_blas_threads_want, threads ? threads : 1,
                     __ATOMIC_RELAXED);
}

/* The thread count last asked for, before a product (BLAS lock held). */
static void hpum_blas_threads_apply(void)
{
    unsigned int t = __atomic_load_n(&hpum_blas_threads_want,
                                     __ATOMIC_RELAXED);

    if (t != hpum_blas_threads) {
        openblas_set_num_threads(t > INT_MAX ? INT_MAX : (int)t);
        hpum_blas_threads = t;
    }
}

void hpum_mme_free(HpuMmeBufs *b)
{
    if (!b) {
        return;
    }
    free(b->a);
    free(b->b);
    free(b->acc);
    free(b->raw);
    free(b->c);
    free(b->out);
    free(b->bias);
    free(b);
}

static HpuMmeBufs *hpum_mme_bufs(HpuEngine *eng)
{
    HpuMmeBufs *b;

    if (eng->mme) {
        return eng->mme;
    }
    b = calloc(1, sizeof(*b));
    if (!b) {
        return NULL;
    }
    b->a = malloc(HPU_MME_SLICE_ELEMS * sizeof(float));
    b->b = malloc(HPU_MME_SLICE_ELEMS * sizeof(float));
    b->acc = malloc(HPU_MME_PANEL_ELEMS * sizeof(float));
    b->raw = malloc(HPU_MME_SLICE_ELEMS * 2);
    b->c = malloc(HPU_MME_TILE_ELEMS * sizeof(float));
    b->out = malloc(HPU_MME_TILE_ELEMS * sizeof(float));
    b->bias = malloc(HPU_MME_PANEL * sizeof(float));
    if (!b->a || !b->b || !b->acc || !b->raw || !b->c || !b->out ||
        !b->bias) {
        hpum_mme_free(b);
        return NULL;
    }
    eng->mme = b;
    return b;
}

/* Number conversions */

static float hpum_f32(uint32_t u)
{
    float v;

    memcpy(&v, &u, sizeof(v));
    return v;
}

static float hpum_bf16_to_f32(uint16_t h)
{
    return hpum_f32((uint32_t)h << 16);
}

/* Round to nearest even; a NaN stays a NaN (quiet, sign kept). */
static uint16_t hpum_f32_to_bf16(float v)
{
    uint32_t u;

    memcpy(&u, &v, sizeof(u));
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)((u >> 16) | 0x0040);
    }
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

/*
 * GELU, tanh form, in double and rounded once to FP32.  It is computed as
 * t / (1 + exp(-2y)), equal to 0.5 t (1 + tanh y) but without the
 * cancellation of 1 + tanh y for negative t (in FP32 that lost all digits
 * below t = -9 and gave NaN for -inf).  The double error is far below
 * an FP32 ulp: the result is within 1 ulp of the exact function of the
 * FP32 t (mme.md).  -inf gives -0 (the limit), +inf +inf, NaN NaN.
 */
static float hpum_gelu(float x)
{
    double t = x, y;

    if (isinf(x)) {
        return x > 0 ? x : -0.0f;
    }
    y = 0.7978845608 * (t + 0.044715 * t * t * t);
    return (float)(t / (1.0 + exp(-2.0 * y)));
}

static float hpum_act(unsigned int act, float x)
{
    switch (act) {
    case HPU_MME_ACT_RELU:
        return x > 0.0f ? x : 0.0f;
    case HPU_MME_ACT_GELU_TANH:
        return hpum_gelu(x);
    default:
        return x;
    }
}

/* Descriptor checks */

/* Bytes from the first element to past the last of a batched operand. */
static bool hpum_extent(uint64_t batch, uint64_t stride, uint64_t rows,
                        uint64_t ld, uint64_t cols, unsigned int sz,
                        uint64_t *bytes)
{
    uint64_t x, y;

    if (__builtin_mul_overflow(batch - 1, stride, &x) ||
        __builtin_mul_overflow(rows - 1, ld, &y) ||
        __builtin_add_overflow(x, y, &x) ||
        __builtin_add_overflow(x, cols, &x) ||
        __builtin_mul_overflow(x, (uint64_t)sz, bytes)) {
        return false;
    }
    return true;
}

static bool hpum_overlap(uint64_t a, uint64_t alen, uint64_t b,
                         uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

/*
 * Decode the 128-byte descriptor @p at @desc and check it in the order of
 * mme.md's table.  Returns 0 or the BAD_LAUNCH code, @why set.
 */
static uint32_t hpum_gemm_decode(const uint8_t *p, HpuGemm *g,
                                 const char **why)
{
    uint32_t flags = hpum_le32(p + HPU_MME_D_FLAGS);
    unsigned int in_t = flags & HPU_MME_F_IN_TYPE_MASK;
    unsigned int out_t = (flags & HPU_MME_F_OUT_TYPE_MASK) >>
                         HPU_MME_F_OUT_TYPE_SHIFT;
    uint64_t ea, eb, ec = 0, ed, ebias = 0;
    uint32_t ar, ac, br, bc;

    g->act = (flags & HPU_MME_F_ACT_MASK) >> HPU_MME_F_ACT_SHIFT;
    if (flags & ~HPU_MME_F_DEFINED) {
        *why = "undefined FLAGS bit set";
        return HPU_MME_ERR_FLAGS;
    }
    if (in_t > HPU_MME_TYPE_BF16) {
        *why = "input type is neither FP32 nor BF16";
        return HPU_MME_ERR_IN_TYPE;
    }
    if (out_t > HPU_MME_TYPE_BF16) {
        *why = "output type is neither FP32 nor BF16";
        return HPU_MME_ERR_OUT_TYPE;
    }
    if (g->act > HPU_MME_ACT_GELU_TANH) {
        *why = "unknown activation";
        return HPU_MME_ERR_ACT;
    }
    if (hpum_le32(p + HPU_MME_D_RSVD0) || hpum_le64(p + HPU_MME_D_RSVD1)) {
        *why = "reserved field not zero";
        return HPU_MME_ERR_RESERVED;
    }
    g->in_sz = in_t == HPU_MME_TYPE_FP32 ? 4 : 2;
    g->out_sz = out_t == HPU_MME_TYPE_FP32 ? 4 : 2;
    g->ta = flags & HPU_MME_F_TRANS_A;
    g->tb = flags & HPU_MME_F_TRANS_B;
    g->bias = flags & HPU_MME_F_BIAS;
    g->m = hpum_le32(p + HPU_MME_D_M);
    g->n = hpum_le32(p + HPU_MME_D_N);
    g->k = hpum_le32(p + HPU_MME_D_K);
    g->batch = hpum_le32(p + HPU_MME_D_BATCH);
    g->a = hpum_le64(p + HPU_MME_D_A);
    g->b = hpum_le64(p + HPU_MME_D_B);
    g->c = hpum_le64(p + HPU_MME_D_C);
    g->d = hpum_le64(p + HPU_MME_D_D);
    g->bias_va = hpum_le64(p + HPU_MME_D_BIAS);
    g->lda = hpum_le32(p + HPU_MME_D_LDA);
    g->ldb = hpum_le32(p + HPU_MME_D_LDB);
    g->ldc = hpum_le32(p + HPU_MME_D_LDC);
    g->ldd = hpum_le32(p + HPU_MME_D_LDD);
    g->sa = hpum_le64(p + HPU_MME_D_STRIDE_A);
    g->sb = hpum_le64(p + HPU_MME_D_STRIDE_B);
    g->sc = hpum_le64(p + HPU_MME_D_STRIDE_C);
    g->sd = hpum_le64(p + HPU_MME_D_STRIDE_D);
    g->alpha = hpum_f32(hpum_le32(p + HPU_MME_D_ALPHA));
    g->beta = hpum_f32(hpum_le32(p + HPU_MME_D_BETA));
    g->use_c = g->beta != 0.0f;

    if (g->m < 1 || g->m > HPU_MME_DIM_MAX || g->n < 1 ||
        g->n > HPU_MME_DIM_MAX || g->k < 1 || g->k > HPU_MME_DIM_MAX) {
        *why = "M, N or K not 1 to 65536";
        return HPU_MME_ERR_DIMS;
    }
    if (g->batch < 1 || g->batch > HPU_MME_BATCH_MAX) {
        *why = "batch count not 1 to 65536";
        return HPU_MME_ERR_BATCH;
    }
    ar = g->ta ? g->k : g->m;
    ac = g->ta ? g->m : g->k;
    br = g->tb ? g->n : g->k;
    bc = g->tb ? g->k : g->n;
    if (g->lda < ac) {
        *why = "lda below the row length of A as stored";
        return HPU_MME_ERR_LDA;
    }
    if (g->ldb < bc) {
        *why = "ldb below the row length of B as stored";
        return HPU_MME_ERR_LDB;
    }
    if (g->use_c && g->ldc < g->n) {
        *why = "ldc below N";
        return HPU_MME_ERR_LDC;
    }
    if (g->ldd < g->n) {
        *why = "ldd below N";
        return HPU_MME_ERR_LDD;
    }
    if (((g->a | g->b) & (g->in_sz - 1)) ||
        (((g->use_c ? g->c : 0) | g->d) & (g->out_sz - 1)) ||
        (g->bias && (g->bias_va & 3))) {
        *why = "an operand address is not aligned to its element size";
        return HPU_MME_ERR_ALIGN;
    }
    if (!hpum_extent(g->batch, g->sa, ar, g->lda, ac, g->in_sz, &ea) ||
        !hpum_extent(g->batch, g->sb, br, g->ldb, bc, g->in_sz, &eb) ||
        !hpum_extent(g->batch, g->sd, g->m, g->ldd, g->n, g->out_sz, &ed) ||
        (g->use_c && !hpum_extent(g->batch, g->sc, g->m, g->ldc, g->n,
                                  g->out_sz, &ec)) ||
        g->a + ea <= g->a || g->b + eb <= g->b || g->d + ed <= g->d ||
        (g->use_c && g->c + ec <= g->c) ||
        (g->bias && g->bias_va + 4ULL * g->n <= g->bias_va)) {
        /*
         * The extents are not zero: an end that wraps to 0 or beyond (an
         * operand ending exactly at 2^64) is refused.
         */
        *why = "an operand runs past the end of the address space";
        return HPU_MME_ERR_RANGE;
    }
    if (g->batch > 1 &&
        g->sd < (uint64_t)(g->m - 1) * g->ldd + g->n) {
        *why = "the D matrices of the batch overlap (stride_d too small)";
        return HPU_MME_ERR_STRIDE_D;
    }
    ebias = g->bias ? 4ULL * g->n : 0;
    if (hpum_overlap(g->d, ed, g->a, ea) || hpum_overlap(g->d, ed, g->b, eb) ||
        (g->bias && hpum_overlap(g->d, ed, g->bias_va, ebias)) ||
        (g->use_c && hpum_overlap(g->d, ed, g->c, ec) &&
         !(g->c == g->d && g->ldc == g->ldd &&
           (g->batch == 1 || g->sc == g->sd)))) {
        *why = "D overlaps A, B, the bias or C (other than C == D)";
        return HPU_MME_ERR_OVERLAP;
    }
    return 0;
}

/* The GEMM */

typedef struct HpuMmeRun {
    const HpuPacket *k;
    const HpuGemm *g;
    HpuMmeBufs *bf;
} HpuMmeRun;

/*
 * Rows [@r0, @r0 + @nr) and columns [@c0, @c0 + @nc) of the stored matrix
 * at @va (elements of @sz bytes, @ld per row) into @dst, dense, as FP32.
 */
static int hpum_mme_gather(const HpuMmeRun *x, uint64_t va, uint32_t ld,
                           unsigned int sz, uint64_t r0, uint64_t nr,
                           uint64_t c0, uint64_t nc, float *dst)
{
    const HpuPacket *k = x->k;
    uint64_t at = va + (r0 * ld + c0) * sz;
    uint8_t *raw = sz == 4 ? (uint8_t *)dst : x->bf->raw;
    size_t i, n = (size_t)(nr * nc);
    int r;

    r = hpum_job_xfer_rows(k, at, (uint64_t)ld * sz, nr, nc * sz, raw,
                           false);
    if (r) {
        return r;
    }
    if (sz == 2) {
        for (i = 0; i < n; i++) {
            dst[i] = hpum_bf16_to_f32((uint16_t)(raw[2 * i] |
                                                 raw[2 * i + 1] << 8));
        }
    }
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    if (sz == 4) {
        for (i = 0; i < n; i++) {
            dst[i] = hpum_f32(hpum_le32(raw + 4 * i));
        }
    }
#endif
    return HPU_CQ_OK;
}

/* @n results in @f (FP32) to their memory format in @dst (may be @f). */
static void hpum_mme_encode(const float *f, size_t n, unsigned int sz,
                            uint8_t *dst)
{
    size_t i;

    if (sz == 2) {
        for (i = 0; i < n; i++) {
            hpum_put_le16(dst + 2 * i, hpum_f32_to_bf16(f[i]));
        }
        return;
    }
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    for (i = 0; i < n; i++) {
        uint32_t u;

        memcpy(&u, &f[i], sizeof(u));
        hpum_put_le32(dst + 4 * i, u);
    }
#else
    if ((const void *)f != (void *)dst) {
        memcpy(dst, f, n * sizeof(float));
    }
#endif
}

/*
 * An operand of a slice's product: rows [@r0, @r0 + @nr) and columns
 * [@c0, @c0 + @nc) of the matrix stored at @va (@sz bytes per element,
 * @ld per row).  It is used in place (@d.p set), or gathered into @buf
 * (dense, FP32; @gathered).  @copy: not tried in place (it cannot be, or
 * an earlier slice was not), gathered first.
 */
typedef struct HpuMmeOperand {
    uint64_t va;
    uint32_t ld;
    unsigned int sz;
    uint64_t r0, nr, c0, nc;
    float *buf;
    HpuDirect d;
    bool gathered;
    bool copy;
} HpuMmeOperand;

/*
 * Whether @o may be used in place: FP32 (on a little-endian host) with a
 * leading dimension that cblas_sgemm takes, an int (the span of its rows,
 * at most HPU_DIRECT_SPAN_MAX, keeps every offset in one too).
 */
static bool hpum_mme_may_direct(const HpuMmeOperand *o)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return o->sz == 4 && o->ld <= INT_MAX;
#else
    return false;
#endif
}

/*
 * Begin @o in place if hpum_job_direct() finds its rows in HBM; else
 * @o->d.p stays NULL and later slices copy it first.
 */
static int hpum_mme_try_direct(const HpuMmeRun *x, HpuMmeOperand *o)
{
    int r = hpum_job_direct(x->k, o->va + (o->r0 * o->ld + o->c0) * 4,
                            (uint64_t)o->ld * 4, o->nr, o->nc * 4, false,
                            &o->d);

    o->copy = !r && !o->d.p;
    return r;
}

static int hpum_mme_gather_op(const HpuMmeRun *x, HpuMmeOperand *o)
{
    int r = hpum_mme_gather(x, o->va, o->ld, o->sz, o->r0, o->nr, o->c0,
                            o->nc, o->buf);

    o->gathered = !r;
    return r;
}

/* The matrix that the product takes for @o, and its leading dimension. */
static const float *hpum_mme_matrix(const HpuMmeOperand *o, int *ld)
{
    if (o->d.p) {
        *ld = (int)o->ld;       /* at most INT_MAX: hpum_mme_try_direct() */
        return (const float *)o->d.p;
    }
    *ld = (int)o->nc;
    return o->buf;
}

/*
 * Whether cblas_sgemm takes these arguments (row major): it refuses any
 * other with a line on stderr and computes nothing, which would leave the
 * accumulator's old contents for D.
 */
static bool hpum_mme_blas_ok(bool ta, bool tb, uint32_t m, uint32_t n,
                             uint32_t k, int lda, int ldb, int ldc)
{
    uint32_t ac = ta ? m : k, bc = tb ? k : n;

    return m && n && k && m <= INT_MAX && n <= INT_MAX && k <= INT_MAX &&
           lda > 0 && (uint32_t)lda >= ac && ldb > 0 &&
           (uint32_t)ldb >= bc && ldc > 0 && (uint32_t)ldc >= n;
}

/*
 * The end of the operands' direct accesses (either may be none); with
 * @read, the first error, A's before B's, as the copies would have met
 * them (a product that did not run read nothing).
 */
static int hpum_mme_operands_end(const HpuMmeRun *x, HpuMmeOperand *a,
                                 HpuMmeOperand *b, bool read)
{
    int r, rb;

    if (!read) {
        a->d.write = b->d.write = true;     /* nothing to check */
    }
    r = hpum_job_direct_end(x->k, &a->d);
    if (r) {
        b->d.write = true;      /* no check: it would replace A's report */
    }
    rb = hpum_job_direct_end(x->k, &b->d);
    return r ? r : rb;
}

/*
 * acc (+)= op(A) x op(B) for one slice: @a and @b in place or gathered.
 *
 * hpum_blas_lock is taken before an operand begins in place, so that none
 * is in flight (a reset waiting for it) while the engine waits for the
 * lock behind other products.  It is never held over a copy (a DMA may
 * wait for QEMU's BQL, and every other MME would wait with it) nor taken
 * with the core lock held: hpum_job_direct() takes the core lock inside
 * it.  So an operand that is copied is copied first, and the
 * direct accesses are tried under the lock; if one misses, whatever began
 * is ended, the lock dropped, that operand copied (and in the following
 * slices copied first), and the other tried again; on a second miss
 * everything is copied.
 */
static int hpum_mme_slice(const HpuMmeRun *x, HpuMmeOperand *a,
                          HpuMmeOperand *b, uint32_t mc, uint32_t nc,
                          uint32_t kc, bool first)
{
    const HpuGemm *g = x->g;
    const float *ma, *mb;
    int r, lda, ldb;
    unsigned int round;

    a->d.p = b->d.p = NULL;
    a->gathered = b->gathered = false;
    a->copy |= !hpum_mme_may_direct(a);
    b->copy |= !hpum_mme_may_direct(b);
    r = a->copy ? hpum_mme_gather_op(x, a) : HPU_CQ_OK;
    if (!r && b->copy) {
        r = hpum_mme_gather_op(x, b);
    }
    if (r) {
        return r;
    }
    for (round = 0;; round++) {
        bool miss_a, miss_b = false;

        pthread_mutex_lock(&hpum_blas_lock);
        r = a->gathered ? HPU_CQ_OK : hpum_mme_try_direct(x, a);
        miss_a = !r && !a->gathered && !a->d.p;
        if (!r && !miss_a && !b->gathered) {
            /* (else A is copied first, and B tried after it) */
            r = hpum_mme_try_direct(x, b);
            miss_b = !r && !b->d.p;
        }
        if (!r && !miss_a && !miss_b && (b->gathered || b->d.p)) {
            break;                      /* the lock held */
        }
        pthread_mutex_unlock(&hpum_blas_lock);
        hpum_mme_operands_end(x, a, b, false);
        if (r) {
            return r;
        }
        if (miss_a || (round && !a->gathered)) {
            r = hpum_mme_gather_op(x, a);
            if (r) {
                return r;
            }
        }
        if (miss_b || (round && !b->gathered)) {
            r = hpum_mme_gather_op(x, b);
            if (r) {
                return r;
            }
        }
    }
    ma = hpum_mme_matrix(a, &lda);
    mb = hpum_mme_matrix(b, &ldb);
    if (!hpum_mme_blas_ok(g->ta, g->tb, mc, nc, kc, lda, ldb, (int)nc)) {
        pthread_mutex_unlock(&hpum_blas_lock);
        hpum_mme_operands_end(x, a, b, false);
        HPU_LOG(x->k->c, "%s.%u: internal error: cblas_sgemm would refuse "
                "%ux%ux%u with lda %d, ldb %d", hpum_engine_name(x->k->e),
                x->k->s, mc, nc, kc, lda, ldb);
        return HPU_CQ_BUS_ERROR;
    }
    /* one product at a time in the process: see hpum_blas_lock */
    hpum_blas_threads_apply();
    if (hpum_mme_test_hook) {
        hpum_mme_test_hook(x->k);
    }
    cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans,
                g->tb ? CblasTrans : CblasNoTrans, (int)mc, (int)nc, (int)kc,
                1.0f, ma, lda, mb, ldb, first ? 0.0f : 1.0f, x->bf->acc,
                (int)nc);
    pthread_mutex_unlock(&hpum_blas_lock);
    return hpum_mme_operands_end(x, a, b, true);
}

/* acc = op(A) x op(B) for rows @m0.. (@mc) and columns @n0.. (@nc). */
static int hpum_mme_panel(const HpuMmeRun *x, uint32_t bt, uint32_t m0,
                          uint32_t mc, uint32_t n0, uint32_t nc)
{
    const HpuGemm *g = x->g;
    HpuMmeOperand a = {
        .va = g->a + (uint64_t)bt * g->sa * g->in_sz,
        .ld = g->lda, .sz = g->in_sz, .buf = x->bf->a,
    };
    HpuMmeOperand b = {
        .va = g->b + (uint64_t)bt * g->sb * g->in_sz,
        .ld = g->ldb, .sz = g->in_sz, .buf = x->bf->b,
    };
    uint32_t k0, kc;
    int r;

    r = hpum_job_check(x->k);
    if (r) {
        return r;
    }
    for (k0 = 0; k0 < g->k; k0 += kc) {
        kc = HPU_MIN(g->k - k0, (uint32_t)HPU_MME_SLICE);
        /* A is M x K stored (K x M transposed), B K x N (N x K) */
        a.r0 = g->ta ? k0 : m0;
        a.nr = g->ta ? kc : mc;
        a.c0 = g->ta ? m0 : k0;
        a.nc = g->ta ? mc : kc;
        b.r0 = g->tb ? n0 : k0;
        b.nr = g->tb ? nc : kc;
        b.c0 = g->tb ? k0 : n0;
        b.nc = g->tb ? kc : nc;
        r = hpum_mme_slice(x, &a, &b, mc, nc, kc, k0 == 0);
        if (r) {
            return r;
        }
        if (k0 + kc < g->k) {
            /* a slice of the panel's tiles: progress (device-model.md) */
            r = hpum_job_progress(x->k);
            if (r) {
                return r;
            }
        }
    }
    return HPU_CQ_OK;
}

/*
 * The epilogue of @tm x @tn results at @acc (@lda apart) with C at @cin
 * (@tn apart, if used) and the panel's bias from column @tn0, into @out
 * (FP32, @ldo apart).
 */
static void hpum_mme_epilogue(const HpuGemm *g, const HpuMmeBufs *bf,
                              const float *acc, size_t lda, const float *cin,
                              uint32_t tn0, uint32_t tm, uint32_t tn,
                              float *out, size_t ldo)
{
    const float *bias = bf->bias + tn0;
    uint32_t i, j;

    for (i = 0; i < tm; i++, acc += lda, cin += tn, out += ldo) {
        float *o = out;

        /* one pass per step, in mme.md's order, so that they vectorize */
        if (g->alpha == 1.0f) {
            memcpy(o, acc, tn * sizeof(float));     /* 1 * x is x */
        } else {
            for (j = 0; j < tn; j++) {
                o[j] = g->alpha * acc[j];
            }
        }
        if (g->use_c) {
            for (j = 0; j < tn; j++) {
                o[j] += g->beta * cin[j];
            }
        }
        if (g->bias) {
            for (j = 0; j < tn; j++) {
                o[j] += bias[j];
            }
        }
        if (g->act == HPU_MME_ACT_RELU) {
            for (j = 0; j < tn; j++) {
                o[j] = o[j] > 0.0f ? o[j] : 0.0f;
            }
        } else if (g->act != HPU_MME_ACT_NONE) {
            for (j = 0; j < tn; j++) {
                o[j] = hpum_act(g->act, o[j]);
            }
        }
    }
}

/*
 * Epilogue and store of the tile at (@tm0, @tn0) of the panel: computed
 * in place in D when D is FP32 in one HBM chunk (hpum_job_direct()), else
 * into a tile buffer that is then stored.
 */
static int hpum_mme_tile(const HpuMmeRun *x, uint32_t bt, uint32_t m0,
                         uint32_t n0, uint32_t nc, uint32_t tm0,
                         uint32_t tm, uint32_t tn0, uint32_t tn)
{
    const HpuPacket *k = x->k;
    const HpuGemm *g = x->g;
    HpuMmeBufs *bf = x->bf;
    uint64_t row = m0 + tm0, col = n0 + tn0;
    uint64_t d = g->d + (uint64_t)bt * g->sd * g->out_sz;
    const float *acc = bf->acc + (size_t)tm0 * nc + tn0;
    float *out = (float *)bf->out;
    int r;

    if (g->use_c) {
        r = hpum_mme_gather(x, g->c + (uint64_t)bt * g->sc * g->out_sz,
                            g->ldc, g->out_sz, row, tm, col, tn, bf->c);
        if (r) {
            return r;
        }
    }
    d += (row * g->ldd + col) * g->out_sz;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (g->out_sz == 4) {
        HpuDirect dd;

        /* the job is checked before every store, in place or not */
        r = hpum_job_check(k);
        if (r) {
            return r;
        }
        r = hpum_job_direct(k, d, (uint64_t)g->ldd * 4, tm,
                            (uint64_t)tn * 4, true, &dd);
        if (r) {
            return r;
        }
        if (dd.p) {
            hpum_mme_epilogue(g, bf, acc, nc, bf->c, tn0, tm, tn,
                              (float *)dd.p, g->ldd);
            return hpum_job_direct_end(k, &dd);
        }
    }
#endif
    hpum_mme_epilogue(g, bf, acc, nc, bf->c, tn0, tm, tn, out, tn);
    hpum_mme_encode(out, (size_t)tm * tn, g->out_sz, bf->out);
    r = hpum_job_check(k);
    if (r) {
        return r;
    }
    /* each batch of the store begins only while the job may go on */
    return hpum_job_xfer_rows(k, d, (uint64_t)g->ldd * g->out_sz, tm,
                              (uint64_t)tn * g->out_sz, bf->out, true);
}

static int hpum_mme_run(const HpuMmeRun *x)
{
    const HpuGemm *g = x->g;
    uint32_t bt, m0, n0, mc, nc, tm0, tn0;
    int r;

    for (bt = 0; bt < g->batch; bt++) {
        for (m0 = 0; m0 < g->m; m0 += mc) {
            mc = HPU_MIN(g->m - m0, (uint32_t)HPU_MME_PANEL);
            for (n0 = 0; n0 < g->n; n0 += nc) {
                nc = HPU_MIN(g->n - n0, (uint32_t)HPU_MME_PANEL);
                r = hpum_mme_panel(x, bt, m0, mc, n0, nc);
                if (r) {
                    return r;
                }
                if (g->bias) {
                    r = hpum_mme_gather(x, g->bias_va, g->n, 4, 0, 1, n0, nc,
                                        x->bf->bias);
                    if (r) {
                        return r;
                    }
                }
                for (tm0 = 0; tm0 < mc; tm0 += HPU_MME_TILE) {
                    for (tn0 = 0; tn0 < nc; tn0 += HPU_MME_TILE) {
                        bool last = bt + 1 == g->batch && m0 + mc == g->m &&
                                    n0 + nc == g->n &&
                                    tm0 + HPU_MME_TILE >= mc &&
                                    tn0 + HPU_MME_TILE >= nc;

                        r = hpum_mme_tile(x, bt, m0, n0, nc, tm0,
                                          HPU_MIN(mc - tm0,
                                                  (uint32_t)HPU_MME_TILE),
                                          tn0,
                                          HPU_MIN(nc - tn0,
                                                  (uint32_t)HPU_MME_TILE));
                        if (r) {
                            return r;
                        }
                        /*
                         * A stored tile is progress.  After the last one
                         * every store is done: the GEMM completes OK
                         * whatever INJ_HANG or a disable say now.
                         */
                        if (last) {
                            hpum_job_note_progress(x->k);
                        } else {
                            r = hpum_job_progress(x->k);
                            if (r) {
                                return r;
                            }
                        }
                    }
                }
            }
        }
    }
    return HPU_CQ_OK;
}

int hpum_mme_gemm(const HpuPacket *k)
{
    uint8_t p[HPU_MME_DESC_SIZE];
    uint64_t desc = hpum_le64(k->p + 8);
    const char *why = NULL;
    HpuGemm g = { .desc = desc };
    HpuMmeRun x = { k, &g, NULL };
    uint32_t code;
    int r;

    if (hpum_le32(k->p + 4)) {
        return hpum_pkt_bad(k, "MME_GEMM reserved field not zero");
    }
    if (desc & (HPU_LAUNCH_DESC_ALIGN - 1)) {
        return hpum_bad_launch(k, desc, HPU_MME_ERR_DESC_ALIGN,
                               "GEMM descriptor not 64-byte aligned");
    }
    r = hpum_mem_xfer(k->c, k->e, k->j->epoch, k->j->asid, desc, p,
                      sizeof(p), false, k->f);
    if (r) {
        return r;
    }
    code = hpum_gemm_decode(p, &g, &why);
    if (code) {
        return hpum_bad_launch(k, desc, code, why);
    }
    x.bf = hpum_mme_bufs(&k->c->eng[k->e]);
    if (!x.bf) {
        HPU_LOG(k->c, "%s.%u: out of host memory for the GEMM buffers",
                hpum_engine_name(k->e), k->s);
        return HPU_CQ_BUS_ERROR;
    }
    return hpum_mme_run(&x);
}
