/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: HBM, the BAR4 window, the device MMU (page walk, TLB,
 * faults) and the HBM scrubber (Documentation/hw/memory-and-queues.md);
 * ECC poison of 2 MiB pages (Documentation/hw/errors-and-reset.md).
 *
 * HBM is sparse: an array of 2 MiB chunk pointers, a chunk allocated zero
 * filled on its first write; never-written chunks read as zeros.  Chunks
 * are allocated and freed under the core lock.  Engines copy data outside
 * the lock: they count themselves in hbm.users first, and while that is
 * non-zero the scrubber zeroes chunks in place instead of freeing them, so
 * a pointer an engine holds stays valid.
 *
 * ECC poison is a byte per 2 MiB page (the chunk size), read with atomic
 * loads by engines outside the lock and changed under it.
 *
 * Plain C99, no QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE         /* MAP_ANONYMOUS, madvise() under -std=c99 */
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "hpu_internal.h"

#define HPU_HUGE_SIZE           (1ULL << HPU_HUGE_PAGE_SHIFT)
#define HPU_PAGE_SIZE           (1ULL << HPU_PAGE_SHIFT)
#define HPU_WIN_ALIGN           ((uint64_t)HPU_BAR_HBM_SIZE)
#define HPU_XLAT_BUS_ERROR      (-1)
#define HPU_XLAT_ECC            (-2)
#define HPU_MMU_ROOT_ADDR_MASK  0xfffff000u

/* hpum_tlb_slot() takes the top 12 bits of a 64-bit hash. */
_Static_assert(HPU_TLB_ENTRIES == 4096, "TLB index is 12 bits");

/*
 * @len bytes of 2 MiB-aligned anonymous memory, so the host can back each
 * chunk with one transparent huge page.  First-touch page faults dominate
 * the cost of writing fresh HBM otherwise (512 faults per chunk instead of
 * one).  Anonymous memory reads as zeros.  MAP_NORESERVE: only the pages
 * written take memory.  @prot PROT_NONE reserves address space only: no
 * page is charged against strict overcommit, nor faulted in and locked
 * under mlockall(MCL_FUTURE) (-overcommit mem-lock=on), until a chunk of
 * it is made accessible (hbm_chunk_mem_alloc()).
 */
static uint8_t *hbm_mem_map(size_t len, int prot)
{
    size_t sz = HPU_HBM_CHUNK_SIZE;
    uint8_t *raw, *p;
    uintptr_t head;

    if (len > SIZE_MAX - sz) {
        return NULL;
    }
    raw = mmap(NULL, len + sz, prot,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        return NULL;
    }
    p = (uint8_t *)(((uintptr_t)raw + sz - 1) & ~(uintptr_t)(sz - 1));
    head = (uintptr_t)(p - raw);
    if (head) {
        munmap(raw, head);
    }
    munmap(p + len, sz - head);
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE);
#endif
    return p;
}

/* Chunk @i's place in the reservation of the whole HBM (hbm.base). */
static uint8_t *hbm_chunk_place(HpuCore *c, size_t i)
{
    return c->hbm.base + (i << HPU_HBM_CHUNK_SHIFT);
}

/* Whether chunk memory @p is in the reservation (else a mapping of its own). */
static bool hbm_chunk_reserved(HpuCore *c, const uint8_t *p)
{
    return c->hbm.base && p >= c->hbm.base &&
           (size_t)(p - c->hbm.base) < c->hbm.nchunks << HPU_HBM_CHUNK_SHIFT;
}

/*
 * Backing memory of chunk @i (lock held): its place in the reservation,
 * made readable and writable (zero filled: never written, or dropped with
 * MADV_DONTNEED or zeroed), or a mapping of its own when there is no
 * reservation or the host refuses the mprotect().
 */
static uint8_t *hbm_chunk_mem_alloc(HpuCore *c, size_t i)
{
    if (c->hbm.base) {
        uint8_t *p = hbm_chunk_place(c, i);

        if (!mprotect(p, HPU_HBM_CHUNK_SIZE, PROT_READ | PROT_WRITE)) {
            return p;
        }
    }
    return hbm_mem_map(HPU_HBM_CHUNK_SIZE, PROT_READ | PROT_WRITE);
}

/*
 * Chunk memory at @p in the reservation back to the host, reading as
 * zeros again (its next allocation is the same place; it stays accessible
 * and, under strict overcommit, charged).  MADV_DONTNEED refuses some
 * memory (locked pages, for one): then it is zeroed.  No old byte may
 * survive into another allocation.
 */
static void hbm_chunk_mem_zero(uint8_t *p)
{
    if (madvise(p, HPU_HBM_CHUNK_SIZE, MADV_DONTNEED)) {
        memset(p, 0, HPU_HBM_CHUNK_SIZE);
    }
}

static void hbm_chunk_mem_free(HpuCore *c, uint8_t *p)
{
    if (!p) {
        return;
    }
    if (hbm_chunk_reserved(c, p)) {
        hbm_chunk_mem_zero(p);
    } else {
        munmap(p, HPU_HBM_CHUNK_SIZE);
    }
}

void hpum_copy_bulk(void *dst, const void *src, size_t n)
{
#if defined(__SSE2__)
    uint8_t *d = dst;
    const uint8_t *s = src;
    size_t head;

    if (n >= HPU_COPY_BULK_MIN) {
            head = (size_t)(-(uintptr_t)d & 63);    /* to a cache line */
        memcpy(d, s, head);
        d += head;
        s += head;
        n -= head;
        for (; n >= 64; n -= 64, d += 64, s += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)s);
            __m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
            __m128i e = _mm_loadu_si128((const __m128i *)(s + 32));
            __m128i f = _mm_loadu_si128((const __m128i *)(s + 48));

            _mm_stream_si128((__m128i *)d, a);
            _mm_stream_si128((__m128i *)(d + 16), b);
            _mm_stream_si128((__m128i *)(d + 32), e);
            _mm_stream_si128((__m128i *)(d + 48), f);
        }
        _mm_sfence();           /* the streamed lines before the tail */
        memcpy(d, s, n);
        _mm_sfence();
        return;
    }
#endif
    memcpy(dst, src, n);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

/* HBM store */

/*
 * The chunks are reserved as one range of host address space when the
 * host allows it (inaccessible: no memory is taken or charged until a
 * chunk is written), so that HBM offsets that follow each other are host
 * addresses that do too (hpum_job_direct()); else, or if a chunk cannot
 * be made accessible there, each chunk is mapped on its first write.
 */
bool hpum_hbm_init(HpuCore *c)
{
    c->hbm.size = c->cfg.hbm_size;
    c->hbm.bar_size = hpum_config_bar4_size(&c->cfg);
    c->hbm.nchunks = (size_t)((c->hbm.size + HPU_HBM_CHUNK_SIZE - 1) >>
                              HPU_HBM_CHUNK_SHIFT);
    c->hbm.chunks = calloc(c->hbm.nchunks, sizeof(c->hbm.chunks[0]));
    c->hbm.poison = calloc(c->hbm.nchunks, 1);
    c->hbm.base = NULL;
    if (!c->hbm.chunks || !c->hbm.poison) {
        return false;           /* hpum_hbm_fini() frees what there is */
    }
    if (c->hbm.nchunks && c->hbm.nchunks <= SIZE_MAX >> HPU_HBM_CHUNK_SHIFT) {
        c->hbm.base = hbm_mem_map(c->hbm.nchunks << HPU_HBM_CHUNK_SHIFT,
                                  PROT_NONE);
    }
    return true;
}

void hpum_hbm_fini(HpuCore *c)
{
    size_t i;

    free(c->hbm.poison);
    c->hbm.poison = NULL;
    if (c->hbm.chunks) {
        for (i = 0; i < c->hbm.nchunks; i++) {
            if (!hbm_chunk_reserved(c, c->hbm.chunks[i])) {
                hbm_chunk_mem_free(c, c->hbm.chunks[i]);
            }
        }
    }
    if (c->hbm.base) {
        munmap(c->hbm.base, c->hbm.nchunks << HPU_HBM_CHUNK_SHIFT);
        c->hbm.base = NULL;
    }
    free(c->hbm.chunks);
    c->hbm.chunks = NULL;
}

static uint8_t *hbm_chunk(HpuCore *c, size_t i)
{
    return __atomic_load_n(&c->hbm.chunks[i], __ATOMIC_ACQUIRE);
}

static bool hbm_in_range(HpuCore *c, uint64_t off, uint64_t len)
{
    return off <= c->hbm.size && len <= c->hbm.size - off;
}

bool hpum_hbm_in_range(HpuCore *c, uint64_t off, uint64_t len)
{
    return hbm_in_range(c, off, len);
}

/* ECC poison */


/* Whether any 2 MiB page overlapping [off, off + len) is poisoned. */
static bool hbm_any_poisoned(HpuCore *c, uint64_t off, uint64_t len)
{
    uint64_t p;

    if (!len) {
        return false;
    }
    for (p = off & ~(HPU_HBM_CHUNK_SIZE - 1); p < off + len;
         p += HPU_HBM_CHUNK_SIZE) {
        if (hpum_hbm_poisoned(c, p)) {
            return true;
        }
    }
    return false;
}

bool hpum_hbm_poison(HpuCore *c, uint64_t off)
{
    size_t i = (size_t)(off >> HPU_HBM_CHUNK_SHIFT);

    if (c->hbm.poison[i]) {
        return false;
    }
    __atomic_store_n(&c->hbm.poison[i], 1, __ATOMIC_RELEASE);
    return true;
}

/* Drop chunk @i's content: free it, or zero it while an engine copies. */
static void hbm_chunk_drop(HpuCore *c, size_t i)
{
    uint8_t *p = hbm_chunk(c, i);

    __atomic_store_n(&c->hbm.poison[i], 0, __ATOMIC_RELEASE);
    if (!p) {
        return;
    }
    if (__atomic_load_n(&c->hbm.users, __ATOMIC_ACQUIRE)) {
        memset(p, 0, HPU_HBM_CHUNK_SIZE);
    } else {
        __atomic_store_n(&c->hbm.chunks[i], NULL, __ATOMIC_RELEASE);
        hbm_chunk_mem_free(c, p);
    }
}

void hpum_hbm_unpoison(HpuCore *c)
{
    size_t i;

    for (i = 0; i < c->hbm.nchunks; i++) {
        __atomic_store_n(&c->hbm.poison[i], 0, __ATOMIC_RELEASE);
    }
}

void hpum_hbm_clear_start(HpuCore *c)
{
    c->hbm.clear_job = true;
    c->hbm.clear_done = false;
    c->hbm.clear_next = 0;
    c->ops->kick_fw(c->opaque);
}

/* Chunks looked at per worker call; at most one is zeroed in place. */
#define HPU_CLEAR_BATCH         256

/*
 * The worker's share of a hard reset: drop a batch of chunks under the
 * lock (at most one 2 MiB memset, as the scrubber), so no vCPU waits for
 * gigabytes.  The last batch marks the clear done and arms the hard-reset
 * timer, which completes the reset.
 */
bool hpum_hbm_clear_step(HpuCore *c)
{
    HpuHbm *h = &c->hbm;
    unsigned int n;

    hpum_lock(c);
    if (!h->clear_job || c->dead) {
        hpum_unlock(c);
        return false;
    }
    for (n = 0; n < HPU_CLEAR_BATCH && h->clear_next < h->nchunks; n++) {
        bool backed = hbm_chunk(c, h->clear_next) != NULL;

        hbm_chunk_drop(c, h->clear_next++);
        if (backed) {
            break;
        }
    }
    if (h->clear_next >= h->nchunks) {
        h->clear_job = false;
        h->clear_done = true;
        hpum_timer_arm(c, HPU_TMR_HARD_RESET, 0);
    }
    hpum_unlock(c);
    return true;
}

/*
 * Copy out of HBM (range checked by the caller).  Runs under the lock or
 * with hbm.users held.
 */
static void hbm_copy_out(HpuCore *c, uint64_t off, uint8_t *buf,
                         uint64_t len)
{
    while (len) {
        uint64_t in = off & (HPU_HBM_CHUNK_SIZE - 1);
        uint64_t n = HPU_MIN(len, HPU_HBM_CHUNK_SIZE - in);
        const uint8_t *p = hbm_chunk(c, (size_t)(off >> HPU_HBM_CHUNK_SHIFT));

        if (p) {
            memcpy(buf, p + in, n);
        } else {
            memset(buf, 0, n);
        }
        off += n;
        buf += n;
        len -= n;
    }
}

/* The chunk for HBM offset @off, allocated if needed (lock held or not). */
static uint8_t *hbm_chunk_alloc(HpuCore *c, uint64_t off, bool locked)
{
    size_t i = (size_t)(off >> HPU_HBM_CHUNK_SHIFT);
    uint8_t *p = hbm_chunk(c, i);

    if (p) {
        return p;
    }
    if (!locked) {
        c->ops->lock(c->opaque);
    }
    p = hbm_chunk(c, i);
    if (!p) {
        p = hbm_chunk_mem_alloc(c, i);
        if (p) {
            __atomic_store_n(&c->hbm.chunks[i], p, __ATOMIC_RELEASE);
        }
    }
    if (!locked) {
        c->ops->unlock(c->opaque);
    }
    return p;
}

/*
 * Copy into HBM (range checked by the caller).  Returns false if backing
 * memory cannot be allocated.
 */
static bool hbm_copy_in(HpuCore *c, uint64_t off, const uint8_t *buf,
                        uint64_t len, bool locked)
{
    while (len) {
        uint64_t in = off & (HPU_HBM_CHUNK_SIZE - 1);
        uint64_t n = HPU_MIN(len, HPU_HBM_CHUNK_SIZE - in);
        uint8_t *p = hbm_chunk_alloc(c, off, locked);

        if (!p) {
            return false;
        }
        memcpy(p + in, buf, n);
        off += n;
        buf += n;
        len -= n;
    }
    return true;
}

/* An engine write: bytes aimed at poisoned pages are dropped. */
static bool hbm_engine_write(HpuCore *c, uint64_t off,
                             const uint8_t *buf, uint64_t len)
{
    while (len) {
        uint64_t in = off & (HPU_HBM_CHUNK_SIZE - 1);
        uint64_t n = HPU_MIN(len, HPU_HBM_CHUNK_SIZE - in);

        if (!hpum_hbm_poisoned(c, off) &&
            !hbm_copy_in(c, off, buf, n, false)) {
            return false;
        }
        off += n;
        buf += n;
        len -= n;
    }
    return true;
}

bool hpum_core_hbm_read(HpuCore *c, uint64_t off, void *buf,
                        uint64_t len)
{
    bool ok;

    hpum_lock(c);
    ok = hbm_in_range(c, off, len);
    if (ok) {
        hbm_copy_out(c, off, buf, len);
    }
    hpum_unlock(c);
    return ok;
}

bool hpum_core_hbm_write(HpuCore *c, uint64_t off, const void *buf,
                         uint64_t len)
{
    bool ok;

    hpum_lock(c);
    ok = hbm_in_range(c, off, len) && hbm_copy_in(c, off, buf, len, true);
    hpum_unlock(c);
    return ok;
}

uint64_t hpum_core_hbm_backed(HpuCore *c)
{
    uint64_t n = 0;
    size_t i;

    hpum_lock(c);
    for (i = 0; i < c->hbm.nchunks; i++) {
        if (hbm_chunk(c, i)) {
            n += HPU_HBM_CHUNK_SIZE;
        }
    }
    hpum_unlock(c);
    return n;
}

/* BAR4: the HBM window */

uint64_t hpum_hbm_bar_size(uint64_t hbm_size)
{
    uint64_t size = HPU_BAR_HBM_SIZE;

    while (size < hbm_size) {
        size <<= 1;
    }
    return size;
}

uint64_t hpum_config_bar4_size(const HpuCoreConfig *cfg)
{
    return cfg->bar4_v7 ? HPU_BAR_HBM_SIZE : hpum_hbm_bar_size(cfg->hbm_size);
}

uint32_t hpum_config_spec_version(const HpuCoreConfig *cfg)
{
    return cfg->bar4_v7 ? 7 : HPU_SPEC_VERSION_VALUE;
}

static bool hpum_window_check(HpuCore *c, uint64_t addr,
                              unsigned int size, const char *what,
                              uint64_t *off)
{
    uint64_t bar = c->hbm.bar_size;

    if (c->hard_resetting) {
        HPU_LOG(c, "%u-byte %s at BAR4+0x%llx during a hard reset: %s",
                size, what, (unsigned long long)addr,
                what[0] == 'r' ? "reads 0" : "dropped");
        return false;
    }
    if (size < 1 || size > 8 || addr >= bar || size > bar - addr) {
        HPU_LOG(c, "%u-byte %s at BAR4+0x%llx: outside the window", size,
                what, (unsigned long long)addr);
        hpum_set_error(c, HPU_ERROR_BAD_ACCESS);
        return false;
    }
    *off = c->mmu.win_base + addr;
    if (!hbm_in_range(c, *off, size)) {
        HPU_LOG(c, "%u-byte %s at BAR4+0x%llx: HBM offset 0x%llx is beyond "
                "HBM (0x%llx bytes)", size, what, (unsigned long long)addr,
                (unsigned long long)*off, (unsigned long long)c->hbm.size);
        hpum_set_error(c, HPU_ERROR_BAD_ACCESS);
        return false;
    }
    return true;
}

uint64_t hpum_core_hbm_window_read(HpuCore *c, uint64_t addr,
                                   unsigned int size)
{
    uint8_t b[8] = { 0 };
    uint64_t off;

    unsigned int i;

    hpum_lock(c);
    if (c->in_reset) {
        HPU_LOG(c, "%u-byte BAR4 read at 0x%llx while the function is in "
                "reset: all ones", size, (unsigned long long)addr);
        hpum_unlock(c);
        return hpum_all_ones(size);
    }
    if (hpum_window_check(c, addr, size, "read", &off)) {
        hbm_copy_out(c, off, b, size);
        for (i = 0; i < size; i++) {
            if (hpum_hbm_poisoned(c, off + i)) {
                b[i] = 0xff;    /* poisoned: all ones, like a PCIe poison */
            }
        }
    }
    hpum_unlock(c);
    return hpum_le64(b);
}

void hpum_core_hbm_window_write(HpuCore *c, uint64_t addr,
                                uint64_t val, unsigned int size)
{
    uint8_t b[8];
    uint64_t off;

    unsigned int i;

    hpum_put_le64(b, val);
    hpum_lock(c);
    if (c->in_reset) {
        HPU_LOG(c, "%u-byte BAR4 write at 0x%llx while the function is in "
                "reset: dropped", size, (unsigned long long)addr);
    } else if (hpum_window_check(c, addr, size, "write", &off)) {
        for (i = 0; i < size; i++) {
            /* bytes aimed at a poisoned page are dropped */
            if (!hpum_hbm_poisoned(c, off + i) &&
                !hbm_copy_in(c, off + i, b + i, 1, true)) {
                HPU_LOG(c, "BAR4 write: out of host memory for HBM backing");
                break;
            }
        }
    }
    hpum_unlock(c);
}

/*
 * Scrubber.  The SCRUB_CTRL write checks the range, sets BUSY and hands
 * the job to the worker (kick_fw); the worker scrubs a chunk per call of
 * hpum_scrub_step(), each under the lock, so no vCPU waits for more than
 * one chunk (spec version 5; the scrub ran inside the MMIO write before).
 */
static void hpum_scrub(HpuCore *c)
{
    uint64_t addr = c->mmu.scrub_addr, size = c->mmu.scrub_size;

    if (c->mmu.scrub_status & HPU_SCRUB_BUSY) {
        HPU_LOG(c, "SCRUB_CTRL started while a scrub is in progress: "
                "ignored");
        c->mmu.scrub_status |= HPU_SCRUB_ERROR;
        return;
    }
    if ((addr | size) & (HPU_HBM_CHUNK_SIZE - 1) || !size ||
        !hbm_in_range(c, addr, size)) {
        HPU_LOG(c, "scrub of 0x%llx bytes at HBM offset 0x%llx: the range "
                "must be 2 MiB aligned, non-empty and inside HBM "
                "(0x%llx bytes)", (unsigned long long)size,
                (unsigned long long)addr, (unsigned long long)c->hbm.size);
        c->mmu.scrub_status = HPU_SCRUB_ERROR;
        return;
    }
    c->mmu.scrub_status = HPU_SCRUB_BUSY;
    c->mmu.scrub_next = addr;
    c->mmu.scrub_end = addr + size;
    c->mmu.scrub_job = true;
    c->ops->kick_fw(c->opaque);
}

bool hpum_scrub_ready(HpuCore *c)
{
    return c->mmu.scrub_job;
}

bool hpum_scrub_step(HpuCore *c)
{
    HpuMmu *m = &c->mmu;

    hpum_lock(c);
    if (!m->scrub_job || c->dead) {
        hpum_unlock(c);
        return false;
    }
    /*
     * Chunks are 2 MiB like the scrub granule: free them, or zero them in
     * place while an engine may hold a pointer to one.  Scrubbing clears
     * ECC poison.
     */
    hbm_chunk_drop(c, (size_t)(m->scrub_next >> HPU_HBM_CHUNK_SHIFT));
    m->scrub_next += HPU_HBM_CHUNK_SIZE;
    if (m->scrub_next >= m->scrub_end) {
        m->scrub_job = false;
        /*
         * ERROR stays: it belongs to a start refused while this scrub ran,
         * and only the next accepted start clears it (a driver that polled
         * BUSY after a refused start must not read success).
         */
        m->scrub_status &= ~HPU_SCRUB_BUSY;
        m->scrub_count++;
    }
    hpum_unlock(c);
    return true;
}

/* TLB */

static HpuTlbEntry *hpum_tlb_slot(HpuCore *c, uint16_t asid,
                                  uint64_t vpn)
{
    /* Multiplicative hash: strided pages do not pile up on a few slots. */
    uint64_t h = (vpn ^ (uint64_t)asid << 40) * 0x9e3779b97f4a7c15ULL;

    return &c->mmu.tlb[h >> 52];
}

static void hpum_tlb_invalidate(HpuCore *c, bool all, uint16_t asid)
{
    size_t i;

    for (i = 0; i < HPU_TLB_ENTRIES; i++) {
        if (all || c->mmu.tlb[i].asid == asid) {
            c->mmu.tlb[i].valid = false;
        }
    }
}

/* Translation */

typedef struct HpuXlat {
    bool host;                  /* addr is a host bus address, else HBM */
    uint64_t addr;
    uint64_t len;               /* bytes contiguous from addr (page end) */
} HpuXlat;

static uint64_t hbm_read64(HpuCore *c, uint64_t off)
{
    uint8_t b[8];

    hbm_copy_out(c, off, b, sizeof(b));
    return hpum_le64(b);
}

/* Walk the page tables of @asid (1..63) for @va; fills a TLB entry. */
static int hpum_walk(HpuCore *c, uint16_t asid, uint64_t va,
                     HpuTlbEntry *t)
{
    uint64_t table, pte = 0, base;
    unsigned int level;
    bool huge = false;

    if (!(c->mmu.root_lo[asid] & HPU_MMU_ROOT_VALID)) {
        return HPU_FAULT_NOT_PRESENT;
    }
    table = (uint64_t)c->mmu.root_hi[asid] << 32 |
            (c->mmu.root_lo[asid] & HPU_MMU_ROOT_ADDR_MASK);
    for (level = 0; level < HPU_PT_LEVELS; level++) {
        unsigned int idx = (va >> (39 - 9 * level)) & (HPU_PT_ENTRIES - 1);

        if (!hbm_in_range(c, table, HPU_PAGE_SIZE)) {
            return HPU_FAULT_BAD_PTE;
        }
        if (hpum_hbm_poisoned(c, table)) {
            return HPU_XLAT_ECC;
        }
        pte = hbm_read64(c, table + 8ULL * idx);
        if (!(pte & HPU_PTE_PRESENT)) {
            return HPU_FAULT_NOT_PRESENT;
        }
        if (pte & HPU_PTE_RSVD_MASK) {
            return HPU_FAULT_BAD_PTE;
        }
        if (pte & HPU_PTE_HUGE) {
            if (level != 2 || (pte & HPU_PTE_ADDR_MASK & (HPU_HUGE_SIZE - 1))) {
                return HPU_FAULT_BAD_PTE;
            }
            huge = true;
            break;
        }
        table = pte & HPU_PTE_ADDR_MASK;
    }
    base = pte & HPU_PTE_ADDR_MASK;
    if (!(pte & HPU_PTE_HOST) &&
        !hbm_in_range(c, base, huge ? HPU_HUGE_SIZE : HPU_PAGE_SIZE)) {
        return HPU_FAULT_BAD_PTE;
    }
    t->valid = true;
    t->asid = asid;
    t->vpn = va >> HPU_PAGE_SHIFT;
    t->pa = huge ? base + (va & (HPU_HUGE_SIZE - 1) & ~(HPU_PAGE_SIZE - 1))
                 : base;
    t->write = pte & HPU_PTE_WRITE;
    t->host = pte & HPU_PTE_HOST;
    t->huge = huge;
    return 0;
}

/*
 * Translate @va of @asid for an access (under the lock).  Returns 0, a
 * fault cause (HPU_FAULT_*), HPU_XLAT_BUS_ERROR (ASID 0 HBM offset
 * beyond HBM) or HPU_XLAT_ECC (a page table is poisoned).
 */
static int hpum_xlat(HpuCore *c, uint16_t asid, uint64_t va,
                     bool write, HpuXlat *x)
{
    HpuTlbEntry *t;
    uint64_t vpn = va >> HPU_PAGE_SHIFT, span;
    int cause;

    if (asid == 0) {
        if (va & HPU_ADDR_HOST) {
            /* The device drives 52 host address bits. */
            x->addr = va & ~HPU_ADDR_HOST;
            if (x->addr >= HPU_HOST_ADDR_LIMIT) {
                return HPU_XLAT_BUS_ERROR;
            }
            x->host = true;
            x->len = HPU_HOST_ADDR_LIMIT - x->addr;
            return 0;
        }
        if (va >= c->hbm.size) {
            return HPU_XLAT_BUS_ERROR;
        }
        x->host = false;
        x->addr = va;
        x->len = c->hbm.size - va;
        return 0;
    }
    if (asid >= HPU_MMU_NUM_ASIDS || (va >> HPU_VA_BITS)) {
        return HPU_FAULT_RANGE;
    }
    t = hpum_tlb_slot(c, asid, vpn);
    if (!t->valid || t->asid != asid || t->vpn != vpn) {
        HpuTlbEntry n;

        cause = hpum_walk(c, asid, va, &n);
        if (cause) {
            return cause;
        }
        *t = n;
    }
    if (write && !t->write) {
        return HPU_FAULT_PROT;
    }
    span = t->huge ? HPU_HUGE_SIZE : HPU_PAGE_SIZE;
    x->host = t->host;
    x->addr = t->pa + (va & (HPU_PAGE_SIZE - 1));
    x->len = span - (va & (span - 1));
    return 0;
}

static const char *const hpum_fault_names[] = {
    [HPU_FAULT_NOT_PRESENT] = "not present",
    [HPU_FAULT_PROT] = "write to a read-only page",
    [HPU_FAULT_BAD_PTE] = "bad page-table entry",
    [HPU_FAULT_RANGE] = "address or ASID out of range",
};

/* Under the lock: count and latch a fault, describe it in @f. */
static void hpum_mmu_fault(HpuCore *c, unsigned int e, uint16_t asid,
                           uint64_t va, bool write, int cause,
                           HpuFault *f)
{
    uint32_t info = HPU_FAULT_VALID | (write ? HPU_FAULT_WRITE : 0) |
                    ((uint32_t)cause << 4 & HPU_FAULT_CAUSE_MASK) |
                    (e << 8 & HPU_FAULT_ENGINE_MASK);

    HPU_LOG(c, "%s: MMU fault, ASID %u %s at 0x%llx: %s", hpum_engine_name(e),
            asid,
            write ? "write" : "read", (unsigned long long)va,
            hpum_fault_names[cause]);
    HPU_TRACE(c, HPU_TRACE_MMU_FAULT, e, asid, va, info);
    c->mmu.fault_count++;
    if (!(c->mmu.fault_info & HPU_FAULT_VALID)) {
        c->mmu.fault_asid = asid;
        c->mmu.fault_va = va;
        c->mmu.fault_info = info;
    }
    f->status = HPU_CQ_MMU_FAULT;
    f->va = va;
    f->info = info;
    f->asid = asid;
}

static void hpum_bus_error(HpuCore *c, unsigned int e, uint16_t asid,
                           uint64_t va, bool write, const char *why,
                           HpuFault *f)
{
    HPU_LOG(c, "%s: bus error, ASID %u %s at 0x%llx: %s", hpum_engine_name(e),
            asid,
            write ? "write" : "read", (unsigned long long)va, why);
    f->status = HPU_CQ_BUS_ERROR;
    f->va = va;
    f->info = 0;
    f->asid = asid;
    f->host = false;
}

static void hpum_ecc_error(HpuCore *c, unsigned int e, uint16_t asid,
                           uint64_t va, const char *why, HpuFault *f)
{
    HPU_LOG(c, "%s: ECC error, ASID %u read at 0x%llx: %s", hpum_engine_name(e),
            asid,
            (unsigned long long)va, why);
    f->status = HPU_CQ_ECC;
    f->va = va;
    f->info = 0;
    f->asid = asid;
    f->host = false;
}

/*
 * Run by run: each is translated under the lock and accessed without it.
 * In a user ASID a run's translation is held (hpum_xlat_hold_locked())
 * until its access is done, so an MMU_INV of the ASID reads BUSY until
 * nothing can land through a translation it dropped.
 */
static int hpum_mem_xfer_inj(HpuCore *c, unsigned int e, uint32_t epoch,
                             uint16_t asid, uint64_t va, void *buf,
                             uint64_t len, bool write, bool inj, HpuFault *f)
{
    uint8_t *p = buf;

    while (len) {
        HpuXlat x, y;
        bool inject = false;
        uint32_t gen = 0;
        uint64_t n;
        int r;

        hpum_lock(c);
        if (c->dead || epoch != c->epoch) {
            /* A reset overtook the work: no translation, no access. */
            hpum_unlock(c);
            return HPU_XFER_STALE;
        }
        r = hpum_xlat(c, asid, va, write, &x);
        if (r == HPU_XLAT_BUS_ERROR) {
            hpum_bus_error(c, e, asid, va, write, "beyond HBM", f);
            hpum_unlock(c);
            return f->status;
        }
        if (r == HPU_XLAT_ECC) {
            hpum_ecc_error(c, e, asid, va, "page table in a poisoned page", f);
            hpum_unlock(c);
            return f->status;
        }
        if (r) {
            hpum_mmu_fault(c, e, asid, va, write, r, f);
            hpum_unlock(c);
            return f->status;
        }
        /* Extend the run over physically contiguous pages. */
        n = HPU_MIN(len, x.len);
        while (n < len && hpum_xlat(c, asid, va + n, write, &y) == 0 &&
               y.host == x.host && y.addr == x.addr + n) {
            n += HPU_MIN(len - n, y.len);
        }
        if (!x.host && !write && hbm_any_poisoned(c, x.addr, n)) {
            hpum_ecc_error(c, e, asid, va, "read of a poisoned HBM page", f);
            hpum_unlock(c);
            return f->status;
        }
        if (inj && x.host && e < 32 && (c->inj.dma_fail & (1u << e))) {
            c->inj.dma_fail &= ~(1u << e);      /* INJ_DMA_FAIL: used */
            inject = true;
        }
        if (!x.host) {
            __atomic_fetch_add(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
        }
        hpum_dma_begin(c, epoch);        /* checked above, lock held since */
        if (asid) {
            gen = hpum_xlat_hold_locked(c, asid);
        }
        hpum_unlock(c);

        if (inject) {
            r = 1;
        } else if (x.host) {
            r = write ? c->ops->dma_write(c->opaque, x.addr, p, n)
                      : c->ops->dma_read(c->opaque, x.addr, p, n);
        } else {
            r = 0;
            if (write) {
                r = !hbm_engine_write(c, x.addr, p, n);
            } else {
                hbm_copy_out(c, x.addr, p, n);
            }
            __atomic_fetch_sub(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
        }
        hpum_lock(c);
        if (asid) {
            hpum_xlat_release_locked(c, asid, gen);
        }
        hpum_dma_end(c, epoch);
        hpum_unlock(c);
        if (r) {
            hpum_lock(c);
            hpum_bus_error(c, e, asid, va, write,
                           inject ? "injected host access failure" :
                           x.host ? "host memory access failed"
                                 : "out of host memory for HBM backing", f);
            f->host = x.host;
            f->bus = x.addr;
            hpum_unlock(c);
            return f->status;
        }
        va += n;
        p += n;
        len -= n;
    }
    return HPU_CQ_OK;
}

int hpum_mem_xfer(HpuCore *c, unsigned int e, uint32_t epoch,
                  uint16_t asid, uint64_t va, void *buf, uint64_t len,
                  bool write, HpuFault *f)
{
    return hpum_mem_xfer_inj(c, e, epoch, asid, va, buf, len, write, true, f);
}

int hpum_queue_xfer(HpuCore *c, unsigned int e, uint32_t epoch,
                    uint16_t asid, uint64_t va, void *buf, uint64_t len,
                    bool write, HpuFault *f)
{
    return hpum_mem_xfer_inj(c, e, epoch, asid, va, buf, len, write, false, f);
}

/*
 * LIN_DMA pieces moved once (hpum_dma_copy()).  A piece is at most
 * HPU_DMA_PIECE bytes, so a side of it touches at most this many 4 KiB
 * pages, each at most one run.
 */
#define HPU_DMA_RUNS_MAX        (HPU_DMA_PIECE / HPU_PAGE_SIZE + 1)
/* hpum_dma_back(): HBM chunks a piece may back in one lock hold */
#define HPU_DMA_BACK_MAX        4
/* hpum_dma_walk(): a host access failed (or a chunk was not backed) */
#define HPU_DMA_WALK_FAILED     1

typedef struct HpuDmaRun {
    uint64_t va;
    uint64_t addr;              /* host bus address or HBM offset of @va */
    uint64_t len;
    bool host;
} HpuDmaRun;

struct HpuDmaRuns {
    HpuDmaRun src[HPU_DMA_RUNS_MAX];
    HpuDmaRun dst[HPU_DMA_RUNS_MAX];
};

/*
 * Under the lock: [@va, @va + @n) of @asid as runs of physically
 * contiguous pages, cut where hpum_mem_xfer() cuts them, latching and
 * taking nothing.  Returns the number of runs, or 0 if a byte does not
 * translate or lies in a poisoned HBM page (read: ECC; write: bytes
 * dropped): hpum_mem_xfer() then does the piece and reports.
 */
static unsigned int hpum_dma_runs(HpuCore *c, uint16_t asid, uint64_t va,
                                  uint64_t n, bool write, HpuDmaRun *run)
{
    unsigned int k = 0;
    uint64_t done = 0, len;
    HpuXlat x, y;

    while (done < n) {
        if (k == HPU_DMA_RUNS_MAX ||
            hpum_xlat(c, asid, va + done, write, &x)) {
            return 0;
        }
        len = HPU_MIN(n - done, x.len);
        while (done + len < n &&
               hpum_xlat(c, asid, va + done + len, write, &y) == 0 &&
               y.host == x.host && y.addr == x.addr + len) {
            len += HPU_MIN(n - done - len, y.len);
        }
        if (!x.host && hbm_any_poisoned(c, x.addr, len)) {
            return 0;
        }
        run[k].va = va + done;
        run[k].addr = x.addr;
        run[k].len = len;
        run[k].host = x.host;
        k++;
        done += len;
    }
    return k;
}

static bool hpum_dma_any_host(const HpuDmaRun *run, unsigned int n)
{
    unsigned int i;

    for (i = 0; i < n; i++) {
        if (run[i].host) {
            return true;
        }
    }
    return false;
}

/*
 * Under the lock: back every chunk the HBM runs touch; false if one fails,
 * or if more than HPU_DMA_BACK_MAX of them are not backed yet.  Backing a
 * chunk maps (and, with mem-lock, faults in) 2 MiB while vCPUs wait for
 * the lock; scattered pages of a user context can put each of a piece's
 * up to HPU_DMA_RUNS_MAX runs in a chunk of its own.  Such a piece goes
 * through the bounce buffer, which backs one chunk per lock hold: the
 * chunks backed here stay backed, and the next piece there moves once.
 */
static bool hpum_dma_back(HpuCore *c, const HpuDmaRun *run, unsigned int n)
{
    unsigned int i, backed = 0;
    uint64_t off;

    for (i = 0; i < n; i++) {
        if (run[i].host) {
            continue;
        }
        for (off = run[i].addr & ~(HPU_HBM_CHUNK_SIZE - 1);
             off < run[i].addr + run[i].len; off += HPU_HBM_CHUNK_SIZE) {
            if (hbm_chunk(c, (size_t)(off >> HPU_HBM_CHUNK_SHIFT))) {
                continue;
            }
            if (backed++ == HPU_DMA_BACK_MAX ||
                !hbm_chunk_alloc(c, off, true)) {
                return false;
            }
        }
    }
    return true;
}

/*
 * HBM from @off as host memory (hbm.users held): sets @p to the bytes of
 * @off (NULL: not backed, reads as zeros) and returns how many of @len
 * follow them there (chunks next to each other in the reservation, or
 * unbacked chunks one after the other).
 */
static uint64_t hbm_span(HpuCore *c, uint64_t off, uint64_t len,
                         uint8_t **p)
{
    size_t i = (size_t)(off >> HPU_HBM_CHUNK_SHIFT);
    uint64_t in = off & (HPU_HBM_CHUNK_SIZE - 1);
    uint64_t n = HPU_MIN(len, HPU_HBM_CHUNK_SIZE - in);
    uint8_t *q = hbm_chunk(c, i), *next;

    *p = q ? q + in : NULL;
    while (n < len) {
        next = hbm_chunk(c, ++i);
        if (q ? next != q + HPU_HBM_CHUNK_SIZE : next != NULL) {
            break;
        }
        q = next;
        n += HPU_MIN(len - n, HPU_HBM_CHUNK_SIZE);
    }
    return n;
}

/*
 * Copy one segment (at most @len bytes from @so into run @s, to @do_ into
 * run @d) straight between host memory and HBM chunk memory.  Returns the
 * bytes copied (as many as both sides hold contiguously), or 0 with
 * *@dst_failed set to the side whose access failed.
 */
static uint64_t hpum_dma_segment(HpuCore *c, unsigned int e,
                                 const HpuDmaRun *s, uint64_t so,
                                 const HpuDmaRun *d, uint64_t do_,
                                 uint64_t len, bool *dst_failed)
{
    uint8_t *sp = NULL, *dp = NULL;

    if (!s->host) {
        len = hbm_span(c, s->addr + so, len, &sp);
    }
    if (!d->host) {
        len = hbm_span(c, d->addr + do_, len, &dp);
        if (!dp) {
            *dst_failed = true;         /* backed before: not reached */
            return 0;
        }
    }
    if (s->host) {                      /* host to HBM, into the chunk */
        *dst_failed = false;
        return (c->ops->dma_read_bulk ? c->ops->dma_read_bulk
                                      : c->ops->dma_read)(c->opaque,
                                                          s->addr + so, dp,
                                                          len) ? 0 : len;
    }
    if (!sp) {                          /* unbacked: reads as zeros */
        if (!d->host) {
            memset(dp, 0, len);
            return len;
        }
        sp = c->eng[e].bounce;
        memset(sp, 0, len);
    }
    if (d->host) {                      /* HBM to host, from the chunk */
        *dst_failed = true;
        return (c->ops->dma_write_bulk ? c->ops->dma_write_bulk
                                       : c->ops->dma_write)(c->opaque,
                                                            d->addr + do_,
                                                            sp, len) ? 0 : len;
    }
    if ((uintptr_t)dp + len <= (uintptr_t)sp ||         /* HBM to HBM */
        (uintptr_t)sp + len <= (uintptr_t)dp) {
        hpum_copy_bulk(dp, sp, len);
    } else {
        memmove(dp, sp, len);
    }
    return len;
}

/*
 * Walk the run lists pairwise without the lock (hbm.users held, the
 * access begun): each segment is as long as both runs allow.  A reset or
 * hpum_core_kill() stops the walk before the next segment (the core's
 * job_alert moves with the epoch, so the lock is taken only when it
 * does).  Returns HPU_CQ_OK, HPU_XFER_STALE, or HPU_DMA_WALK_FAILED with
 * @bad the run whose access failed and *@bad_dst its side.
 */
static int hpum_dma_walk(HpuCore *c, unsigned int e, uint32_t epoch,
                         const HpuDmaRuns *rl, unsigned int ns,
                         unsigned int nd, uint32_t seen,
                         const HpuDmaRun **bad, bool *bad_dst)
{
    unsigned int i = 0, j = 0;
    uint64_t so = 0, do_ = 0, len;
    bool stale;

    while (i < ns && j < nd) {
        const HpuDmaRun *s = &rl->src[i], *d = &rl->dst[j];

        if (!hpum_job_unchanged(c, seen)) {
            hpum_lock(c);
            stale = c->dead || epoch != c->epoch;
            seen = c->job_alert;
            hpum_unlock(c);
            if (stale) {
                return HPU_XFER_STALE;
            }
        }
        len = hpum_dma_segment(c, e, s, so, d, do_,
                               HPU_MIN(s->len - so, d->len - do_), bad_dst);
        if (!len) {
            *bad = *bad_dst ? d : s;
            return HPU_DMA_WALK_FAILED;
        }
        so += len;
        do_ += len;
        if (so == s->len) {
            i++;
            so = 0;
        }
        if (do_ == d->len) {
            j++;
            do_ = 0;
        }
    }
    return HPU_CQ_OK;
}

/*
 * One LIN_DMA piece (hpu_internal.h).  Whatever the one-copy walk cannot
 * do exactly as the bounce buffer does goes through the bounce buffer:
 * a translation failure or poisoned page on either side (so faults, ECC
 * errors and dropped bytes are those of hpum_mem_xfer(), with nothing of
 * the piece written first), INJ_DMA_FAIL pending for the engine, host
 * memory on both sides, a destination overlapping above the source, an
 * HBM chunk that cannot be backed, more than HPU_DMA_BACK_MAX destination
 * chunks to back (hpum_dma_back()).  In a user ASID the runs are held
 * as translations (hpum_xlat_hold_locked()): an MMU_INV of the ASID
 * stays BUSY until the piece is done, as nothing may land through a
 * translation the invalidation dropped.
 */
int hpum_dma_copy(HpuCore *c, unsigned int e, uint32_t epoch,
                  uint16_t asid, uint64_t src, uint64_t dst, uint64_t n,
                  HpuFault *f)
{
    HpuEngine *eng = &c->eng[e];
    HpuDmaRuns *rl = eng->dma_runs;
    const HpuDmaRun *bad = NULL;
    bool bad_dst = false;
    unsigned int ns = 0, nd = 0;
    uint32_t gen = 0, seen;
    int r;

    if (!rl) {
        rl = eng->dma_runs = malloc(sizeof(*rl));
    }
    if (!rl || (dst > src && dst - src < n)) {
        goto bounce;
    }
    hpum_lock(c);
    if (c->dead || epoch != c->epoch) {
        hpum_unlock(c);
        return HPU_XFER_STALE;
    }
    if (!(e < 32 && (c->inj.dma_fail & (1u << e)))) {
        ns = hpum_dma_runs(c, asid, src, n, false, rl->src);
        nd = ns ? hpum_dma_runs(c, asid, dst, n, true, rl->dst) : 0;
    }
    if (!nd || (hpum_dma_any_host(rl->src, ns) &&
                hpum_dma_any_host(rl->dst, nd)) ||
        !hpum_dma_back(c, rl->dst, nd)) {
        hpum_unlock(c);
        goto bounce;
    }
    __atomic_fetch_add(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
    hpum_dma_begin(c, epoch);           /* checked above, lock held since */
    if (asid) {
        gen = hpum_xlat_hold_locked(c, asid);
    }
    seen = c->job_alert;
    hpum_unlock(c);
    HPU_TRACE(c, HPU_TRACE_DMA_RUNS, e, n, ns, nd, 0);

    r = hpum_dma_walk(c, e, epoch, rl, ns, nd, seen, &bad, &bad_dst);

    __atomic_fetch_sub(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
    hpum_lock(c);
    if (asid) {
        hpum_xlat_release_locked(c, asid, gen);
    }
    hpum_dma_end(c, epoch);
    if (r == HPU_DMA_WALK_FAILED) {
        /* as hpum_mem_xfer() reports the run it was copying */
        hpum_bus_error(c, e, asid, bad->va, bad_dst,
                       bad->host ? "host memory access failed"
                                 : "out of host memory for HBM backing", f);
        f->host = bad->host;
        f->bus = bad->addr;
        r = f->status;
    }
    hpum_unlock(c);
    return r;

bounce:
    HPU_TRACE(c, HPU_TRACE_DMA_RUNS, e, n, ns, nd, 1);
    r = hpum_mem_xfer(c, e, epoch, asid, src, eng->bounce, n, false, f);
    return r ? r : hpum_mem_xfer(c, e, epoch, asid, dst, eng->bounce, n,
                                 true, f);
}

/* hpum_mem_xfer_rows(): runs translated per lock hold, bytes per batch */
#define HPU_XFER_RUNS           64
#define HPU_XFER_BATCH          (1ULL << 20)

typedef struct HpuRun {
    bool host;
    bool inject;                /* INJ_DMA_FAIL: fail without access */
    uint64_t va;
    uint64_t addr;              /* bus address or HBM offset */
    uint64_t len;
    uint8_t *p;
} HpuRun;

/*
 * Under the lock: translate the run at @va (at most @want bytes, extended
 * over physically contiguous pages) into @run.  Returns 0 or the failure
 * status with @f filled (a fault latched); with @latch false a failure
 * returns 1 and latches nothing (runs before it are still to be copied:
 * the caller copies them and translates @va again, latching).
 */
static int hpum_run_xlat(HpuCore *c, unsigned int e, uint16_t asid,
                         uint64_t va, uint64_t want, bool write,
                         bool latch, HpuRun *run, HpuFault *f)
{
    HpuXlat x, y;
    uint64_t n;
    int r = hpum_xlat(c, asid, va, write, &x);

    if (r && !latch) {
        return 1;
    }
    if (r == HPU_XLAT_BUS_ERROR) {
        hpum_bus_error(c, e, asid, va, write, "beyond HBM", f);
        return f->status;
    }
    if (r == HPU_XLAT_ECC) {
        hpum_ecc_error(c, e, asid, va, "page table in a poisoned page", f);
        return f->status;
    }
    if (r) {
        hpum_mmu_fault(c, e, asid, va, write, r, f);
        return f->status;
    }
    n = HPU_MIN(want, x.len);
    while (n < want && hpum_xlat(c, asid, va + n, write, &y) == 0 &&
           y.host == x.host && y.addr == x.addr + n) {
        n += HPU_MIN(want - n, y.len);
    }
    if (!x.host && !write && hbm_any_poisoned(c, x.addr, n)) {
        if (!latch) {
            return 1;
        }
        hpum_ecc_error(c, e, asid, va, "read of a poisoned HBM page", f);
        return f->status;
    }
    run->host = x.host;
    run->inject = false;
    if (x.host && e < 32 && (c->inj.dma_fail & (1u << e))) {
        c->inj.dma_fail &= ~(1u << e);          /* INJ_DMA_FAIL: used */
        run->inject = true;
    }
    run->va = va;
    run->addr = x.addr;
    run->len = n;
    return 0;
}

/*
 * hpum_mem_run(): one translated run for an engine that caches runs
 * itself (the TPC cores' translation caches).
 */
int hpum_mem_run(HpuCore *c, unsigned int e, uint16_t asid, uint64_t va,
                 uint64_t want, bool write, HpuMemRun *out, HpuFault *f)
{
    HpuRun run;
    int r = hpum_run_xlat(c, e, asid, va, want, write, true, &run, f);

    if (r) {
        return r;
    }
    out->va = va;
    out->addr = run.addr;
    out->len = run.len;
    out->host = run.host;
    out->inject = run.inject;
    out->write = write;
    return 0;
}

void hpum_hbm_read_raw(HpuCore *c, uint64_t off, void *buf, uint64_t len)
{
    hbm_copy_out(c, off, buf, len);
}

bool hpum_hbm_write_raw(HpuCore *c, uint64_t off, const void *buf,
                        uint64_t len)
{
    return hbm_engine_write(c, off, buf, len);
}

uint8_t *hpum_hbm_direct(HpuCore *c, uint64_t off, uint64_t len, bool write)
{
    uint64_t in = off & (HPU_HBM_CHUNK_SIZE - 1);
    uint8_t *p;

    if (len > HPU_HBM_CHUNK_SIZE - in ||
        (write && hpum_hbm_poisoned(c, off))) {
        return NULL;
    }
    p = hbm_chunk(c, (size_t)(off >> HPU_HBM_CHUNK_SHIFT));
    return p ? p + in : NULL;
}

/* Copy one translated run (without the lock); 0 on success. */
static int hpum_run_copy(HpuCore *c, const HpuRun *run, bool write)
{
    if (run->inject) {
        return 1;
    }
    if (run->host) {
        return write ? c->ops->dma_write(c->opaque, run->addr, run->p,
                                         run->len)
                     : c->ops->dma_read(c->opaque, run->addr, run->p,
                                        run->len);
    }
    if (write) {
        return !hbm_engine_write(c, run->addr, run->p, run->len);
    }
    hbm_copy_out(c, run->addr, run->p, run->len);
    return 0;
}

/*
 * hpum_mem_xfer_rows(), and for @k (not NULL) hpum_job_xfer_rows(): each
 * batch begins in the critical section that checks the epoch and the job.
 * A translation failure part way through a batch is not latched at once:
 * the runs before it are copied first (one of them may fail, and that is
 * the fault to report), then the next batch begins at the failing run and
 * latches its failure.
 */
static int hpum_xfer_rows(HpuCore *c, unsigned int e, uint32_t epoch,
                          uint16_t asid, const HpuPacket *k, uint64_t va,
                          uint64_t stride, uint64_t rows, uint64_t row_len,
                          void *buf, bool write, HpuFault *f)
{
    HpuRun run[HPU_XFER_RUNS];
    uint8_t *p = buf;
    uint64_t row = 0, in = 0;

    if (rows > 1 && stride == row_len) {
        row_len *= rows;                /* dense: one run of runs */
        rows = 1;
    }
    while (row < rows && row_len) {
        unsigned int n = 0, i;
        uint64_t bytes = 0;
        uint32_t gen = 0;
        int r = 0;

        hpum_lock(c);
        if (c->dead || epoch != c->epoch) {
            hpum_unlock(c);
            return HPU_XFER_STALE;
        }
        if (k && hpum_job_stopped_locked(k)) {
            hpum_unlock(c);
            return HPU_STEP_ABORT;
        }
        while (row < rows && n < HPU_XFER_RUNS && bytes < HPU_XFER_BATCH) {
            int fail = hpum_run_xlat(c, e, asid, va + row * stride + in,
                                     HPU_MIN(row_len - in,
                                             HPU_XFER_BATCH - bytes),
                                     write, n == 0, &run[n], f);

            if (fail && !n) {
                hpum_unlock(c);
                return fail;            /* latched: nothing before it */
            }
            if (fail) {
                break;                  /* again, latching, after these */
            }
            run[n].p = p;
            p += run[n].len;
            bytes += run[n].len;
            in += run[n].len;
            if (in == row_len) {
                in = 0;
                row++;
            }
            n++;
        }
        __atomic_fetch_add(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
        hpum_dma_begin(c, epoch);        /* checked above, lock held since */
        if (asid) {
            gen = hpum_xlat_hold_locked(c, asid);
        }
        hpum_unlock(c);
        for (i = 0; i < n && !r; i++) {
            r = hpum_run_copy(c, &run[i], write);
        }
        __atomic_fetch_sub(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
        hpum_lock(c);
        if (asid) {
            hpum_xlat_release_locked(c, asid, gen);
        }
        hpum_dma_end(c, epoch);
        if (r) {
            const HpuRun *bad = &run[i - 1];

            hpum_bus_error(c, e, asid, bad->va, write,
                           bad->inject ? "injected host access failure" :
                           bad->host ? "host memory access failed"
                                     : "out of host memory for HBM backing",
                           f);
            f->host = bad->host;
            f->bus = bad->addr;
            hpum_unlock(c);
            return f->status;
        }
        hpum_unlock(c);
    }
    return HPU_CQ_OK;
}

int hpum_mem_xfer_rows(HpuCore *c, unsigned int e, uint32_t epoch,
                       uint16_t asid, uint64_t va, uint64_t stride,
                       uint64_t rows, uint64_t row_len, void *buf,
                       bool write, HpuFault *f)
{
    return hpum_xfer_rows(c, e, epoch, asid, NULL, va, stride, rows,
                          row_len, buf, write, f);
}

int hpum_job_xfer_rows(const HpuPacket *k, uint64_t va, uint64_t stride,
                       uint64_t rows, uint64_t row_len, void *buf,
                       bool write)
{
    return hpum_xfer_rows(k->c, k->e, k->j->epoch, k->j->asid, k, va,
                          stride, rows, row_len, buf, write, k->f);
}

/*
 * Under the lock: the HBM offset of @va if every byte of the rows maps to
 * HBM at offsets that follow their addresses (hpum_job_direct()), in at
 * most HPU_DIRECT_XLAT_MAX translations.  Those are in one chunk, or in
 * chunks that follow each other in hbm.base.
 */
static bool hpum_direct_xlat(HpuCore *c, uint16_t asid, uint64_t va,
                             uint64_t stride, uint64_t rows,
                             uint64_t row_len, bool write, uint64_t *off)
{
    uint64_t r, at, end, run = 0, run_end = 0;
    unsigned int n = 0;
    HpuXlat x;

    for (r = 0; r < rows; r++) {
        at = va + r * stride;
        end = at + row_len;
        while (at < end) {
            if (at >= run && at < run_end) {
                at = HPU_MIN(end, run_end);     /* same page run */
                continue;
            }
            if (++n > HPU_DIRECT_XLAT_MAX ||
                hpum_xlat(c, asid, at, write, &x) || x.host) {
                return false;
            }
            if (r == 0 && at == va) {
                *off = x.addr;
            } else if (x.addr != *off + (at - va)) {
                return false;
            }
            run = at;
            run_end = at + x.len;
        }
    }
    return true;
}

uint32_t hpum_xlat_hold_locked(HpuCore *c, uint16_t asid)
{
    if (asid >= HPU_MMU_NUM_ASIDS) {
        return 0;
    }
    c->hbm.dir_cur[asid]++;
    return c->hbm.inv_gen[asid];
}

bool hpum_xlat_stale_locked(HpuCore *c, uint16_t asid, uint32_t gen)
{
    return asid < HPU_MMU_NUM_ASIDS && gen != c->hbm.inv_gen[asid];
}

bool hpum_xlat_release_locked(HpuCore *c, uint16_t asid, uint32_t gen)
{
    if (asid >= HPU_MMU_NUM_ASIDS) {
        return false;
    }
    if (gen == c->hbm.inv_gen[asid]) {
        c->hbm.dir_cur[asid]--;
        return false;
    }
    c->hbm.dir_stale--;                 /* an MMU_INV waited for them */
    return true;
}

int hpum_job_direct(const HpuPacket *k, uint64_t va, uint64_t stride,
                    uint64_t rows, uint64_t row_len, bool write,
                    HpuDirect *d)
{
    HpuCore *c = k->c;
    uint16_t asid = k->j->asid;
    uint64_t off = 0, span, in;
    uint8_t *chunk;

    memset(d, 0, sizeof(*d));
    if (!rows || !row_len || asid >= HPU_MMU_NUM_ASIDS ||
        row_len > HPU_DIRECT_SPAN_MAX || rows > HPU_DIRECT_XLAT_MAX ||
        (rows > 1 && stride < row_len) ||
        (stride &&
         rows - 1 > (HPU_DIRECT_SPAN_MAX - row_len) / stride)) {
        return HPU_CQ_OK;               /* nothing, or copied: too wide */
    }
    span = (rows - 1) * stride + row_len;
    hpum_lock(c);
    if (c->dead || k->j->epoch != c->epoch) {
        hpum_unlock(c);
        return HPU_XFER_STALE;
    }
    if (hpum_job_stopped_locked(k)) {
        hpum_unlock(c);
        return HPU_STEP_ABORT;
    }
    if (!hpum_direct_xlat(c, asid, va, stride, rows, row_len, write, &off) ||
        (!c->hbm.base &&
         span > HPU_HBM_CHUNK_SIZE - (off & (HPU_HBM_CHUNK_SIZE - 1))) ||
        hbm_any_poisoned(c, off, span)) {
        hpum_unlock(c);
        return HPU_CQ_OK;               /* the copying path decides */
    }
    /* every chunk of the span backed (for a write: allocated) */
    for (in = off & ~(HPU_HBM_CHUNK_SIZE - 1); in < off + span;
         in += HPU_HBM_CHUNK_SIZE) {
        chunk = write ? hbm_chunk_alloc(c, in, true)
                      : hbm_chunk(c, (size_t)(in >> HPU_HBM_CHUNK_SHIFT));
        if (!chunk) {
            hpum_unlock(c);
            return HPU_CQ_OK;           /* unbacked: reads as zeros */
        }
        if (span > HPU_HBM_CHUNK_SIZE - (off & (HPU_HBM_CHUNK_SIZE - 1)) &&
            chunk != hbm_chunk_place(c, (size_t)(in >> HPU_HBM_CHUNK_SHIFT))) {
            hpum_unlock(c);
            return HPU_CQ_OK;           /* not where its neighbours are */
        }
    }
    chunk = hbm_chunk(c, (size_t)(off >> HPU_HBM_CHUNK_SHIFT));
    in = off & (HPU_HBM_CHUNK_SIZE - 1);
    __atomic_fetch_add(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
    hpum_dma_begin(c, k->j->epoch);     /* checked above, lock held since */
    c->hbm.direct++;
    d->gen = hpum_xlat_hold_locked(c, asid);
    hpum_unlock(c);
    d->p = chunk + in;
    d->va = va;
    d->off = off;
    d->stride = stride;
    d->rows = rows;
    d->row_len = row_len;
    d->asid = asid;
    d->write = write;
    return HPU_CQ_OK;
}

/*
 * Under the lock: the VA of the first byte of direct access @d's rows in
 * a poisoned page, if there is one.
 */
static bool hpum_direct_poisoned(HpuCore *c, const HpuDirect *d,
                                 uint64_t *va)
{
    uint64_t r, o, p;

    for (r = 0; r < d->rows; r++) {
        o = d->off + r * d->stride;
        for (p = o & ~(HPU_HBM_CHUNK_SIZE - 1); p < o + d->row_len;
             p += HPU_HBM_CHUNK_SIZE) {
            if (hpum_hbm_poisoned(c, p)) {
                *va = d->va + r * d->stride + (p > o ? p - o : 0);
                return true;
            }
        }
    }
    return false;
}

int hpum_job_direct_end(const HpuPacket *k, HpuDirect *d)
{
    HpuCore *c = k->c;
    uint64_t va;
    int r = HPU_CQ_OK;

    if (!d->p) {
        return HPU_CQ_OK;
    }
    d->p = NULL;
    __atomic_fetch_sub(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
    hpum_lock(c);
    hpum_xlat_release_locked(c, d->asid, d->gen);
    /* poisoned during the read: what the copy would have met */
    if (!d->write && k->j->epoch == c->epoch && !c->dead &&
        hpum_direct_poisoned(c, d, &va)) {
        hpum_ecc_error(c, k->e, d->asid, va,
                       "read in place of a page poisoned during the read",
                       k->f);
        r = k->f->status;
    }
    hpum_dma_end(c, k->j->epoch);
    hpum_unlock(c);
    return r;
}

/*
 * MMU_INV of @asid (or @all): the translations of those ASIDs held
 * (hpum_xlat_hold_locked(): direct accesses, TPC cores' slices) were made
 * before it; it completes (MMU_INV_STATUS) when they are let go.  The
 * compute cores' job check is alerted, so that a TPC core's next slice
 * renewal sees the invalidation (hpum_tpc_slice_next()).
 */
static void hpum_xlat_invalidate(HpuCore *c, bool all, uint16_t asid)
{
    uint32_t held = 0;
    unsigned int a;

    for (a = 0; a < HPU_MMU_NUM_ASIDS; a++) {
        if (all || a == asid) {
            held += c->hbm.dir_cur[a];
            c->hbm.dir_cur[a] = 0;
            c->hbm.inv_gen[a]++;
        }
    }
    if (held) {
        c->hbm.dir_stale += held;
        hpum_job_alert(c);
    }
}

/* MMU block registers (BAR0 + 0x1000) */

static HpuAccess hpum_mmu_read(HpuCore *c, uint32_t offset,
                               uint32_t *val)
{
    HpuMmu *m = &c->mmu;

    if (offset >= HPU_REG_MMU_ROOT_LO(0) &&
        offset < HPU_REG_MMU_ROOT_LO(HPU_MMU_NUM_ASIDS)) {
        unsigned int n = (offset - HPU_REG_MMU_ROOT_LO(0)) / 8;

        *val = (offset & 4) ? m->root_hi[n] : m->root_lo[n];
        return HPU_ACCESS_OK;
    }
    switch (offset) {
    case HPU_REG_MMU_ASIDS:
        *val = HPU_MMU_NUM_ASIDS;
        break;
    case HPU_REG_MMU_INV:
    case HPU_REG_SCRUB_CTRL:
        *val = 0;               /* write-only */
        break;
    case HPU_REG_MMU_INV_STATUS:
        /*
         * Done at once for the TLB, but INJ_MMU_INV keeps a written one
         * pending, and an invalidation waits for the translations of its
         * ASIDs held since before it (hpum_xlat_hold_locked(): direct
         * accesses, TPC cores' slices).
         */
        *val = m->inv_stuck || c->hbm.dir_stale ? HPU_MMU_INV_BUSY : 0;
        break;
    case HPU_REG_MMU_INV_COUNT:
        *val = m->inv_count;
        break;
    case HPU_REG_FAULT_ASID:
        *val = m->fault_asid;
        break;
    case HPU_REG_FAULT_VA_LO:
        *val = (uint32_t)m->fault_va;
        break;
    case HPU_REG_FAULT_VA_HI:
        *val = (uint32_t)(m->fault_va >> 32);
        break;
    case HPU_REG_FAULT_INFO:
        *val = m->fault_info;
        break;
    case HPU_REG_FAULT_COUNT:
        *val = m->fault_count;
        break;
    case HPU_REG_HBM_WIN_BASE_LO:
        *val = (uint32_t)m->win_base;
        break;
    case HPU_REG_HBM_WIN_BASE_HI:
        *val = (uint32_t)(m->win_base >> 32);
        break;
    case HPU_REG_SCRUB_ADDR_LO:
        *val = (uint32_t)m->scrub_addr;
        break;
    case HPU_REG_SCRUB_ADDR_HI:
        *val = (uint32_t)(m->scrub_addr >> 32);
        break;
    case HPU_REG_SCRUB_SIZE_LO:
        *val = (uint32_t)m->scrub_size;
        break;
    case HPU_REG_SCRUB_SIZE_HI:
        *val = (uint32_t)(m->scrub_size >> 32);
        break;
    case HPU_REG_SCRUB_STATUS:
        *val = m->scrub_status;
        break;
    case HPU_REG_SCRUB_COUNT:
        *val = m->scrub_count;
        break;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

static uint64_t set_lo(uint64_t v, uint32_t lo)
{
    return (v & 0xffffffff00000000ULL) | lo;
}

static uint64_t set_hi(uint64_t v, uint32_t hi)
{
    return (v & 0xffffffffULL) | (uint64_t)hi << 32;
}

static HpuAccess hpum_mmu_write(HpuCore *c, uint32_t offset,
                                uint32_t val)
{
    HpuMmu *m = &c->mmu;

    if (offset >= HPU_REG_MMU_ROOT_LO(0) &&
        offset < HPU_REG_MMU_ROOT_LO(HPU_MMU_NUM_ASIDS)) {
        unsigned int n = (offset - HPU_REG_MMU_ROOT_LO(0)) / 8;

        if (offset & 4) {
            m->root_hi[n] = val;
        } else {
            m->root_lo[n] = val & (HPU_MMU_ROOT_ADDR_MASK |
                                   HPU_MMU_ROOT_VALID);
        }
        return HPU_ACCESS_OK;
    }
    switch (offset) {
    case HPU_REG_MMU_INV:
        if (c->inj.mmu_inv) {
            m->inv_stuck = true;        /* INJ_MMU_INV: until a hard reset */
            break;
        }
        if (m->inv_stuck) {
            break;                      /* the stuck one is still pending */
        }
        hpum_tlb_invalidate(c, val & HPU_MMU_INV_ALL,
                            val & HPU_MMU_INV_ASID_MASK);
        hpum_xlat_invalidate(c, val & HPU_MMU_INV_ALL,
                             val & HPU_MMU_INV_ASID_MASK);
        m->inv_count++;
        break;
    case HPU_REG_FAULT_INFO:
        if (val & HPU_FAULT_VALID) {
            m->fault_info &= ~HPU_FAULT_VALID;
        }
        break;
    case HPU_REG_HBM_WIN_BASE_LO:
        if (val & (HPU_WIN_ALIGN - 1)) {
            HPU_LOG(c, "HBM_WIN_BASE_LO written with 0x%08x: the window "
                    "base is 64 MiB aligned, low bits ignored", val);
        }
        m->win_base = set_lo(m->win_base, val & ~(uint32_t)(HPU_WIN_ALIGN - 1));
        break;
    case HPU_REG_HBM_WIN_BASE_HI:
        m->win_base = set_hi(m->win_base, val);
        break;
    case HPU_REG_SCRUB_ADDR_LO:
        m->scrub_addr = set_lo(m->scrub_addr, val);
        break;
    case HPU_REG_SCRUB_ADDR_HI:
        m->scrub_addr = set_hi(m->scrub_addr, val);
        break;
    case HPU_REG_SCRUB_SIZE_LO:
        m->scrub_size = set_lo(m->scrub_size, val);
        break;
    case HPU_REG_SCRUB_SIZE_HI:
        m->scrub_size = set_hi(m->scrub_size, val);
        break;
    case HPU_REG_SCRUB_CTRL:
        if (val & HPU_SCRUB_START) {
            hpum_scrub(c);
        }
        break;
    case HPU_REG_MMU_ASIDS:
    case HPU_REG_MMU_INV_STATUS:
    case HPU_REG_MMU_INV_COUNT:
    case HPU_REG_FAULT_ASID:
    case HPU_REG_FAULT_VA_LO:
    case HPU_REG_FAULT_VA_HI:
    case HPU_REG_FAULT_COUNT:
    case HPU_REG_SCRUB_STATUS:
    case HPU_REG_SCRUB_COUNT:
        return HPU_ACCESS_READ_ONLY;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

const HpuBlock hpum_mmu_block = {
    .name = "mmu",
    .base = HPU_REG_MMU_ASIDS,
    .size = HPU_REG_MMU_ROOT_LO(HPU_MMU_NUM_ASIDS) - HPU_REG_MMU_ASIDS,
    .read = hpum_mmu_read,
    .write = hpum_mmu_write,
};

void hpum_mmu_reset(HpuCore *c, HpuResetKind kind)
{
    HpuMmu *m = &c->mmu;
    uint32_t inv_count = m->inv_count, fault_count = m->fault_count;
    uint32_t scrub_count = m->scrub_count;

    switch (kind) {
    case HPU_RESET_POWER_ON:
        /* A scrub in progress is abandoned with the rest. */
        memset(m, 0, sizeof(*m));
        break;
    case HPU_RESET_HARD:
        /* Everything but the counters; HBM is cleared when it is done. */
        memset(m, 0, sizeof(*m));
        m->inv_count = inv_count;
        m->fault_count = fault_count;
        m->scrub_count = scrub_count;
        break;
    case HPU_RESET_SOFT:
        /* Roots, window, scrub range and the counters survive. */
        m->fault_asid = 0;
        m->fault_va = 0;
        m->fault_info = 0;
        m->scrub_status = 0;
        hpum_tlb_invalidate(c, true, 0);
        break;
    }
}
