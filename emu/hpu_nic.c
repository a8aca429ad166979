/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: NIC ports and their Ethernet path (spec version 7,
 * Documentation/hw/nic.md): port registers, the transmit and receive
 * rings, the receive filter, the MTU, interrupts, counters, fault
 * injection and resets.
 *
 * Register writes only latch state and kick the environment: a TX_PI write
 * asks for hpum_core_nic_tx() (QEMU: a bottom half), an RX_PI write that
 * frees a held frame asks the environment to offer its back end's frames
 * again.  Descriptors and buffers are reached with ASID 0 addresses without
 * the lock; each access begins, under the lock, only while the ring's
 * generation and the device epoch are those the work began with, and
 * counts as in flight for the resets (hpum_dma_begin()).
 *
 * Plain C99, no QEMU headers: see hpu_core.h.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <stdlib.h>
#include <string.h>

#include "hpu_internal.h"
#include "hpu_roce.h"

#define HPU_NIC_BASE            HPU_NIC_PORT_BASE(0)
#define HPU_NIC_REG_END         (HPU_NIC_CNT_HI(HPU_NIC_NUM_COUNTERS - 1) + 4)
#define HPU_NIC_EN_BITS         (HPU_NIC_CTRL_TX_EN | HPU_NIC_CTRL_RX_EN)
#define HPU_NIC_DESC_CODE(code) (HPU_NIC_DESC_DONE | \
                                 (code) << HPU_NIC_DESC_CODE_SHIFT)

/* A frame's work: which ring, and the generation and epoch it began in. */
typedef struct HpuNicWork {
    unsigned int port;
    bool rx;
    uint32_t gen;
    uint32_t epoch;
} HpuNicWork;

/* A frame the transmit step gathers from the ring. */
typedef struct HpuNicTxFrame {
    HpuNicWork w;
    uint64_t base;
    uint32_t size;
    uint32_t ci;                /* its first descriptor */
    uint32_t n;                 /* its descriptors */
    uint32_t total;             /* bytes of its buffers */
    int code;                   /* HPU_NIC_DESC_* */
    uint64_t addr[HPU_NIC_TX_MAX_BUFS];
    uint16_t len[HPU_NIC_TX_MAX_BUFS];
} HpuNicTxFrame;

/* Results of gathering a frame */
enum {
    HPU_NIC_GATHERED,           /* the frame is known (code may be an error) */
    HPU_NIC_INCOMPLETE,         /* its EOP descriptor is not posted yet */
    HPU_NIC_FETCH_FAILED,       /* a descriptor could not be read */
    HPU_NIC_STALE,              /* a reset or re-enable overtook it */
};

static HpuNicRing *hpum_nic_ring(HpuNicPort *np, bool rx)
{
    return rx ? &np->rx : &np->tx;
}

/* Under the lock: whether the frame's work may still reach memory. */
static bool hpum_nic_current(HpuCore *c, const HpuNicWork *w)
{
    HpuNicPort *np = &c->nic[w->port];

    return !c->dead && !c->in_reset && c->epoch == w->epoch &&
           hpum_nic_ring(np, w->rx)->gen == w->gen;
}

/* Interrupts, errors, counters */

static void hpum_nic_cause(HpuCore *c, unsigned int p, uint32_t cause)
{
    HpuNicPort *np = &c->nic[p];

    np->irq_status |= cause;
    if (cause & np->irq_mask) {
        hpum_raise(c, HPU_VEC_NIC(p));
    }
}

static void hpum_nic_error(HpuCore *c, unsigned int p, uint32_t bit)
{
    c->nic[p].err_status |= bit;
    hpum_nic_cause(c, p, HPU_NIC_IRQ_ERROR);
}

static void hpum_nic_count(HpuNicPort *np, unsigned int i, uint64_t n)
{
    np->cnt[i] += n;
}

/* The link */

static bool hpum_nic_link_up(const HpuNicPort *np)
{
    return (np->backend & (HPU_NIC_LINK_STATUS_UP | HPU_NIC_LINK_STATUS_ATTACHED)) ==
           (HPU_NIC_LINK_STATUS_UP | HPU_NIC_LINK_STATUS_ATTACHED) &&
           !(np->inj & HPU_NIC_INJ_LINK_DOWN);
}

static uint32_t hpum_nic_link_reg(const HpuNicPort *np)
{
    return (np->up ? HPU_NIC_LINK_STATUS_UP : 0) |
           (np->backend & HPU_NIC_LINK_STATUS_ATTACHED);
}

/* A frame held by SWAP_TX is dropped (TX_EN cleared, link down). */
static void hpum_nic_drop_held(HpuNicPort *np)
{
    if (np->holding) {
        np->holding = false;
        np->inj &= ~HPU_NIC_INJ_SWAP_TX;
        hpum_nic_count(np, HPU_NIC_CNT_INJ_DROPPED, 1);
    }
}

/* LINK_STATUS.UP may have changed (back end, INJ_CTRL.LINK_DOWN): report it. */
static void hpum_nic_link_update(HpuCore *c, unsigned int p)
{
    HpuNicPort *np = &c->nic[p];
    bool up = hpum_nic_link_up(np);

    if (up == np->up) {
        return;
    }
    np->up = up;
    np->link_changes++;
    if (!up) {
        /* Nothing arrives while it is down: the FIFO goes too. */
        hpum_nic_drop_held(np);
        np->rx_waiting = false;
        c->ops->nic_rx_kick(c->opaque, p, true);
    }
    HPU_TRACE(c, HPU_TRACE_NIC_LINK, p, hpum_nic_link_reg(np),
              np->link_changes);
    hpum_nic_cause(c, p, HPU_NIC_IRQ_LINK);
    hpum_roce_link(c, p, up);
}

void hpum_core_nic_link_changed(HpuCore *c, unsigned int port)
{
    uint32_t link;

    if (port >= c->cfg.nic_ports) {
        return;
    }
    link = c->ops->nic_link(c->opaque, port);
    hpum_lock(c);
    if (!c->dead) {
        c->nic[port].backend = link;
        hpum_nic_link_update(c, port);
    }
    hpum_unlock(c);
}

void hpum_core_nic_mac(const HpuCoreConfig *cfg, unsigned int port,
                       uint8_t mac[6])
{
    mac[0] = HPU_NIC_MAC_PREFIX0;
    mac[1] = HPU_NIC_MAC_PREFIX1;
    mac[2] = HPU_NIC_MAC_PREFIX2;
    mac[3] = cfg->uuid[13];
    mac[4] = cfg->uuid[14];
    mac[5] = (uint8_t)((cfg->uuid[15] & 0xf0) | (port & 0x0f));
}

/* Memory: ASID 0 addresses, bit 63 a host bus address, else HBM */

static bool hpum_nic_hbm_poisoned(HpuCore *c, uint64_t off, uint64_t len)
{
    uint64_t a;

    for (a = off & ~(HPU_HBM_CHUNK_SIZE - 1); a < off + len;
         a += HPU_HBM_CHUNK_SIZE) {
        if (hpum_hbm_poisoned(c, a)) {
            return true;
        }
    }
    return false;
}

/*
 * Under the lock: whether [@addr, @addr + @len) can be reached; @host says
 * where.  A read of a poisoned HBM page cannot (BUS_ERROR for the port).
 */
static bool hpum_nic_reachable(HpuCore *c, uint64_t addr, uint64_t len,
                               bool write, bool *host)
{
    *host = addr & HPU_ADDR_HOST;
    if (*host) {
        uint64_t bus = addr & ~HPU_ADDR_HOST;

        return bus < HPU_HOST_ADDR_LIMIT && len <= HPU_HOST_ADDR_LIMIT - bus;
    }
    return hpum_hbm_in_range(c, addr, len) &&
           (write || !hpum_nic_hbm_poisoned(c, addr, len));
}

/*
 * Copy @len bytes between @buf and @addr (@write: to memory) for work @w.
 * Called without the lock.  Returns 0, HPU_XFER_STALE if the work was
 * overtaken (nothing accessed), or 1 if the memory cannot be reached.
 */
static int hpum_nic_xfer(HpuCore *c, const HpuNicWork *w, uint64_t addr,
                         void *buf, uint64_t len, bool write)
{
    uint32_t epoch = w->epoch;
    bool host;
    int r;

    hpum_lock(c);
    if (!hpum_nic_current(c, w)) {
        hpum_unlock(c);
        return HPU_XFER_STALE;
    }
    if (!hpum_nic_reachable(c, addr, len, write, &host)) {
        hpum_unlock(c);
        return 1;
    }
    if (!host) {
        __atomic_fetch_add(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
    }
    hpum_dma_begin(c, epoch);   /* current: the epoch is checked above */
    hpum_unlock(c);
    if (host) {
        addr &= ~HPU_ADDR_HOST;
        r = write ? c->ops->dma_write(c->opaque, addr, buf, len)
                  : c->ops->dma_read(c->opaque, addr, buf, len);
    } else {
        r = 0;
        if (write) {
            r = !hpum_hbm_write_raw(c, addr, buf, len);
        } else {
            hpum_hbm_read_raw(c, addr, buf, len);
        }
        __atomic_fetch_sub(&c->hbm.users, 1, __ATOMIC_ACQ_REL);
    }
    hpum_lock(c);
    hpum_dma_end(c, epoch);
    hpum_unlock(c);
    return r ? 1 : 0;
}

/* Transmit */

/* Under the lock: whether the transmit ring has work to look at. */
static bool hpum_nic_tx_runnable(HpuCore *c, const HpuNicPort *np)
{
    return !c->dead && !c->in_reset && !c->resetting && !c->hard_resetting &&
           (np->ctrl & HPU_NIC_CTRL_TX_EN) && !np->tx.stop &&
           np->tx.pi != np->tx.ci;
}

/*
 * Under the lock: a frame's work is over.  An enable cleared meanwhile
 * takes effect now (the frame completed first).
 */
static void hpum_nic_ring_end(HpuCore *c, const HpuNicWork *w)
{
    HpuNicPort *np = &c->nic[w->port];
    HpuNicRing *r = hpum_nic_ring(np, w->rx);

    r->busy = false;
    if (!r->stop || r->gen != w->gen) {
        return;
    }
    r->stop = false;
    if (w->rx) {
        np->ctrl &= ~HPU_NIC_CTRL_RX_EN;
        np->rx_waiting = false;
        c->ops->nic_rx_kick(c->opaque, w->port, true);
    } else {
        np->ctrl &= ~HPU_NIC_CTRL_TX_EN;
        hpum_nic_drop_held(np);
    }
}

/* A descriptor of ring @base/@size could not be read: the ring stops. */
static void hpum_nic_fetch_failed(HpuCore *c, const HpuNicWork *w,
                                  uint64_t addr)
{
    HpuNicPort *np = &c->nic[w->port];

    hpum_lock(c);
    if (hpum_nic_current(c, w)) {
        HPU_LOG(c, "NIC%u: the %s descriptor at 0x%llx cannot be read: "
                "the %s ring stops", w->port, w->rx ? "receive" : "transmit",
                (unsigned long long)addr, w->rx ? "receive" : "transmit");
        if (w->rx) {
            np->ctrl &= ~HPU_NIC_CTRL_RX_EN;
            np->rx.stop = false;
            hpum_nic_count(np, HPU_NIC_CNT_RX_ERRORS, 1);
            hpum_nic_error(c, w->port, HPU_NIC_ERR_RX_FETCH);
            HPU_TRACE(c, HPU_TRACE_NIC_DROP, w->port, HPU_NIC_DROP_FETCH, 0);
        } else {
            np->ctrl &= ~HPU_NIC_CTRL_TX_EN;
            np->tx.stop = false;
            hpum_nic_drop_held(np);
            hpum_nic_error(c, w->port, HPU_NIC_ERR_TX_FETCH);
        }
    }
    hpum_nic_ring_end(c, w);
    hpum_unlock(c);
}

static uint64_t hpum_nic_desc_addr(uint64_t base, uint32_t size, uint32_t i)
{
    return base + (uint64_t)(i & (size - 1)) * HPU_NIC_DESC_SIZE;
}

/* Check transmit descriptor @d, the @n-th (from 0) of its frame. */
static bool hpum_nic_txd_ok(const uint8_t *d, uint32_t n, uint16_t *len)
{
    *len = (uint16_t)(d[HPU_NIC_TXD_LEN] | d[HPU_NIC_TXD_LEN + 1] << 8);
    return !(d[HPU_NIC_TXD_FLAGS] & ~HPU_NIC_TXD_EOP) &&
           !hpum_le32(d + HPU_NIC_TXD_RSVD) && *len &&
           *len <= HPU_NIC_TX_BUF_MAX && n < HPU_NIC_TX_MAX_BUFS;
}

/*
 * Read the descriptors of the frame at @f->ci up to its EOP (or the one
 * that breaks a rule, which ends it BAD_DESC).  Without the lock.
 */
static int hpum_nic_tx_gather(HpuCore *c, HpuNicTxFrame *f, uint32_t pi)
{
    uint8_t d[HPU_NIC_DESC_SIZE];
    uint64_t addr;
    uint16_t len;
    int r;

    for (f->n = 0;; f->n++) {
        if (f->ci + f->n == pi) {
            return HPU_NIC_INCOMPLETE;
        }
        addr = hpum_nic_desc_addr(f->base, f->size, f->ci + f->n);
        r = hpum_nic_xfer(c, &f->w, addr, d, sizeof(d), false);
        if (r) {
            return r == HPU_XFER_STALE ? HPU_NIC_STALE : HPU_NIC_FETCH_FAILED;
        }
        if (!hpum_nic_txd_ok(d, f->n, &len)) {
            f->n++;
            f->code = HPU_NIC_DESC_BAD_DESC;
            return HPU_NIC_GATHERED;
        }
        f->addr[f->n] = hpum_le64(d + HPU_NIC_TXD_ADDR);
        f->len[f->n] = len;
        f->total += len;
        if (d[HPU_NIC_TXD_FLAGS] & HPU_NIC_TXD_EOP) {
            f->n++;
            return HPU_NIC_GATHERED;
        }
    }
}

/* Read the frame's buffers into the port's frame buffer. */
static int hpum_nic_tx_read(HpuCore *c, HpuNicTxFrame *f, uint8_t *buf)
{
    uint32_t i, off = 0;
    int r;

    for (i = 0; i < f->n; i++) {
        r = hpum_nic_xfer(c, &f->w, f->addr[i], buf + off, f->len[i], false);
        if (r == HPU_XFER_STALE) {
            return HPU_NIC_STALE;
        }
        if (r) {
            f->code = HPU_NIC_DESC_BUS_ERROR;  /* for the whole frame */
            return HPU_NIC_GATHERED;
        }
        off += f->len[i];
    }
    return HPU_NIC_GATHERED;
}

/* Write the status byte (and the zeroed reserved bytes) of each descriptor. */
static int hpum_nic_tx_status(HpuCore *c, const HpuNicTxFrame *f)
{
    uint8_t st[5] = { (uint8_t)HPU_NIC_DESC_CODE(f->code), 0, 0, 0, 0 };
    uint64_t addr;
    uint32_t i;
    int r;

    for (i = 0; i < f->n; i++) {
        addr = hpum_nic_desc_addr(f->base, f->size, f->ci + i) +
               HPU_NIC_TXD_STATUS;
        r = hpum_nic_xfer(c, &f->w, addr, st, sizeof(st), true);
        if (r == HPU_XFER_STALE) {
            return r;
        }
        if (r) {
            hpum_lock(c);
            HPU_LOG(c, "NIC%u: writing the status of transmit descriptor %u "
                    "at 0x%llx failed", f->w.port, f->ci + i,
                    (unsigned long long)addr);
            hpum_unlock(c);
        }
    }
    return 0;
}

/* Under the lock: the frame is done; count it, advance TX_CI. */
static void hpum_nic_tx_done(HpuCore *c, const HpuNicTxFrame *f)
{
    HpuNicPort *np = &c->nic[f->w.port];

    np->tx.ci += f->n;
    switch (f->code) {
    case HPU_NIC_DESC_OK:
        hpum_nic_count(np, HPU_NIC_CNT_TX_FRAMES, 1);
        hpum_nic_count(np, HPU_NIC_CNT_TX_BYTES, f->total);
        break;
    case HPU_NIC_DESC_LINK_DOWN:
        hpum_nic_count(np, HPU_NIC_CNT_TX_DROPS, 1);
        break;
    default:
        hpum_nic_count(np, HPU_NIC_CNT_TX_ERRORS, 1);
        hpum_nic_error(c, f->w.port, HPU_NIC_ERR_TX_DESC);
        break;
    }
    hpum_nic_cause(c, f->w.port, HPU_NIC_IRQ_TX);
}

static void hpum_nic_tx_log(HpuCore *c, const HpuNicTxFrame *f,
                            uint32_t mtu)
{
    if (f->code == HPU_NIC_DESC_BAD_DESC) {
        HPU_LOG(c, "NIC%u: transmit descriptor %u breaks a rule (flags or "
                "reserved bytes not zero, length 0 or above %u, or more "
                "than %u buffers): BAD_DESC", f->w.port, f->ci + f->n - 1,
                HPU_NIC_TX_BUF_MAX, HPU_NIC_TX_MAX_BUFS);
    } else if (f->code == HPU_NIC_DESC_BAD_LEN) {
        HPU_LOG(c, "NIC%u: frame of %u bytes at transmit descriptor %u: "
                "frames are %u to %u bytes (MTU %u): BAD_LEN", f->w.port,
                f->total, f->ci, HPU_NIC_FRAME_MIN,
                mtu + HPU_NIC_FRAME_OVERHEAD, mtu);
    } else if (f->code == HPU_NIC_DESC_BUS_ERROR) {
        HPU_LOG(c, "NIC%u: a buffer of the frame at transmit descriptor %u "
                "cannot be read: BUS_ERROR", f->w.port, f->ci);
    }
}

/*
 * Under the lock, the frame read: what to do with it (fault injection),
 * and whether a frame held by SWAP_TX goes after it.
 */
static HpuNicTxAction hpum_nic_tx_decide(HpuCore *c, HpuNicTxFrame *f,
                                         uint32_t len, bool *release)
{
    HpuNicPort *np = &c->nic[f->w.port];
    uint32_t drop = (np->inj & HPU_NIC_INJ_DROP_TX_MASK) >>
                    HPU_NIC_INJ_DROP_TX_SHIFT;

    *release = false;
    if (f->code == HPU_NIC_DESC_OK && !np->up) {
        f->code = HPU_NIC_DESC_LINK_DOWN;
    }
    if (f->code != HPU_NIC_DESC_OK) {
        return HPU_NIC_TX_FAILED;
    }
    *release = np->holding;
    if (drop) {
        np->inj = (np->inj & ~HPU_NIC_INJ_DROP_TX_MASK) |
                  (drop - 1) << HPU_NIC_INJ_DROP_TX_SHIFT;
        hpum_nic_count(np, HPU_NIC_CNT_INJ_DROPPED, 1);
        return HPU_NIC_TX_INJ_DROP;
    }
    if ((np->inj & HPU_NIC_INJ_SWAP_TX) && !np->holding) {
        memcpy(np->held, np->frame, len);
        np->held_len = len;
        np->holding = true;
        return HPU_NIC_TX_HELD;
    }
    return HPU_NIC_TX_SENT;
}

/*
 * Read the buffers, decide, send (without the lock).  Returns HPU_NIC_STALE
 * if the frame was overtaken before anything was decided.
 */
static int hpum_nic_tx_send(HpuCore *c, HpuNicTxFrame *f)
{
    HpuNicPort *np = &c->nic[f->w.port];
    uint32_t len = HPU_MIN(f->total, HPU_NIC_FRAME_BUF);
    HpuNicTxAction act;
    bool release;

    if (f->code == HPU_NIC_DESC_OK &&
        hpum_nic_tx_read(c, f, np->frame) == HPU_NIC_STALE) {
        return HPU_NIC_STALE;
    }
    if (len < HPU_NIC_FRAME_PAD) {
        memset(np->frame + len, 0, HPU_NIC_FRAME_PAD - len);
        len = HPU_NIC_FRAME_PAD;
    }
    hpum_lock(c);
    if (!hpum_nic_current(c, &f->w)) {
        hpum_unlock(c);
        return HPU_NIC_STALE;
    }
    act = hpum_nic_tx_decide(c, f, len, &release);
    if (release) {
        np->holding = false;
        np->inj &= ~HPU_NIC_INJ_SWAP_TX;  /* the two frames have gone */
    }
    HPU_TRACE(c, HPU_TRACE_NIC_TX, f->w.port, f->ci, f->n, f->code,
              f->total, act);
    hpum_unlock(c);
    if (act == HPU_NIC_TX_SENT) {
        c->ops->nic_send(c->opaque, f->w.port, np->frame, len);
    }
    if (release) {
        c->ops->nic_send(c->opaque, f->w.port, np->held, np->held_len);
    }
    return HPU_NIC_GATHERED;
}

/* Start a frame's work under the lock: false if there is none. */
static bool hpum_nic_tx_begin(HpuCore *c, unsigned int p, HpuNicTxFrame *f,
                              uint32_t *pi, uint32_t *mtu)
{
    HpuNicPort *np = &c->nic[p];

    if (!hpum_nic_tx_runnable(c, np) || np->tx.busy) {
        return false;
    }
    np->tx.busy = true;
    memset(f, 0, sizeof(*f));
    f->w.port = p;
    f->w.gen = np->tx.gen;
    f->w.epoch = c->epoch;
    f->base = np->tx.base;
    f->size = np->tx.size;
    f->ci = np->tx.ci;
    *pi = np->tx.pi;
    *mtu = np->mtu;
    return true;
}

/*
 * A frame sent with the link down completes LINK_DOWN without its buffers
 * being read (nic.md: the rule comes before BUS_ERROR); the link going
 * down while they are read is caught again when the frame is decided.
 */
static void hpum_nic_tx_link_check(HpuCore *c, HpuNicTxFrame *f)
{
    hpum_lock(c);
    if (!c->nic[f->w.port].up) {
        f->code = HPU_NIC_DESC_LINK_DOWN;
    }
    hpum_unlock(c);
}

/* One frame of port @p: returns whether one was completed. */
static bool hpum_nic_tx_frame(HpuCore *c, unsigned int p)
{
    HpuNicTxFrame f;
    uint32_t pi, mtu;
    int r;

    hpum_lock(c);
    if (!hpum_nic_tx_begin(c, p, &f, &pi, &mtu)) {
        hpum_unlock(c);
        return false;
    }
    hpum_unlock(c);
    r = hpum_nic_tx_gather(c, &f, pi);
    if (r == HPU_NIC_FETCH_FAILED) {
        hpum_nic_fetch_failed(c, &f.w, hpum_nic_desc_addr(f.base, f.size,
                                                          f.ci + f.n));
        return false;
    }
    if (r == HPU_NIC_GATHERED && f.code == HPU_NIC_DESC_OK &&
        (f.total < HPU_NIC_FRAME_MIN ||
         f.total > mtu + HPU_NIC_FRAME_OVERHEAD)) {
        f.code = HPU_NIC_DESC_BAD_LEN;
    }
    if (r == HPU_NIC_GATHERED && f.code == HPU_NIC_DESC_OK) {
        hpum_nic_tx_link_check(c, &f);
    }
    if (r == HPU_NIC_GATHERED) {
        r = hpum_nic_tx_send(c, &f);
    }
    if (r == HPU_NIC_GATHERED && hpum_nic_tx_status(c, &f)) {
        r = HPU_NIC_STALE;
    }
    hpum_lock(c);
    if (r == HPU_NIC_GATHERED && hpum_nic_current(c, &f.w)) {
        hpum_nic_tx_log(c, &f, mtu);
        hpum_nic_tx_done(c, &f);
    } else {
        r = HPU_NIC_STALE;
    }
    hpum_nic_ring_end(c, &f.w);
    hpum_unlock(c);
    return r == HPU_NIC_GATHERED;
}

bool hpum_core_nic_tx(HpuCore *c, unsigned int port)
{
    unsigned int i;
    bool more;

    if (port >= c->cfg.nic_ports) {
        return false;
    }
    for (i = 0; i < HPU_NIC_TX_BUDGET; i++) {
        if (!hpum_nic_tx_frame(c, port)) {
            return false;
        }
    }
    hpum_lock(c);
    more = hpum_nic_tx_runnable(c, &c->nic[port]);
    hpum_unlock(c);
    return more;
}

/* Receive */

static bool hpum_nic_mac_match(const HpuNicPort *np, const uint8_t *dst)
{
    return hpum_le32(dst) == np->mac_lo &&
           (uint32_t)(dst[4] | dst[5] << 8) == (np->mac_hi & 0xffff);
}

static bool hpum_nic_is_broadcast(const uint8_t *dst)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

    return !memcmp(dst, bcast, sizeof(bcast));
}

/* The receive descriptor's rx_flags for a frame (at least 14 bytes). */
static uint8_t hpum_nic_rx_flags(const uint8_t *buf)
{
    uint8_t f = 0;

    if (hpum_nic_is_broadcast(buf)) {
        f |= HPU_NIC_RXD_BROADCAST;
    } else if (buf[0] & 1) {
        f |= HPU_NIC_RXD_MULTICAST;
    }
    if (buf[12] == 0x81 && buf[13] == 0x00) {
        f |= HPU_NIC_RXD_VLAN;
    }
    return f;
}

enum {
    HPU_NIC_RX_DROP,            /* taken and dropped */
    HPU_NIC_RX_HOLD,            /* no descriptor: the back end keeps it */
    HPU_NIC_RX_TAKE,            /* to the descriptor at RX_CI */
};

static int hpum_nic_rx_dropped(HpuCore *c, unsigned int p, HpuNicDrop why,
                               unsigned int counter, size_t len)
{
    if (counter < HPU_NIC_NUM_COUNTERS) {
        hpum_nic_count(&c->nic[p], counter, 1);
    }
    HPU_TRACE(c, HPU_TRACE_NIC_DROP, p, why, len);
    return HPU_NIC_RX_DROP;
}

/*
 * Under the lock: what the port does with an arriving frame.  A frame held
 * once (RX_NOBUF counted) is not filtered or counted again when offered
 * again: it waits in the FIFO.
 */
static int hpum_nic_rx_accept(HpuCore *c, unsigned int p, const uint8_t *buf,
                              size_t len)
{
    HpuNicPort *np = &c->nic[p];
    uint32_t drop = (np->inj & HPU_NIC_INJ_DROP_RX_MASK) >>
                    HPU_NIC_INJ_DROP_RX_SHIFT;

    if (c->dead || c->in_reset || c->resetting || c->hard_resetting ||
        !(np->ctrl & HPU_NIC_CTRL_RX_EN) || np->rx.stop || np->rx.busy ||
        !np->up) {
        np->rx_waiting = false;
        return hpum_nic_rx_dropped(c, p, HPU_NIC_DROP_OFF,
                                   HPU_NIC_NUM_COUNTERS, len);
    }
    if (!np->rx_waiting && drop) {
        np->inj = (np->inj & ~HPU_NIC_INJ_DROP_RX_MASK) |
                  (drop - 1) << HPU_NIC_INJ_DROP_RX_SHIFT;
        return hpum_nic_rx_dropped(c, p, HPU_NIC_DROP_INJ,
                                   HPU_NIC_CNT_INJ_DROPPED, len);
    }
    /* Checked for a held frame too: the back end may have dropped it. */
    if (len < HPU_NIC_FRAME_MIN || len > np->mtu + HPU_NIC_FRAME_OVERHEAD) {
        np->rx_waiting = false;
        return hpum_nic_rx_dropped(c, p, HPU_NIC_DROP_LENGTH,
                                   HPU_NIC_CNT_RX_ERRORS, len);
    }
    if (!np->rx_waiting) {
        if (!(np->rx_filter & HPU_NIC_RX_FILTER_PROMISC) && !(buf[0] & 1) &&
            !hpum_nic_mac_match(np, buf)) {
            return hpum_nic_rx_dropped(c, p, HPU_NIC_DROP_FILTER,
                                       HPU_NIC_CNT_RX_FILTERED, len);
        }
        switch (hpum_roce_rx_steer(c, p, buf, len)) {
        case HPU_ROCE_RX_TAKEN:
            return HPU_NIC_RX_DROP;     /* taken by the RoCE engine */
        case HPU_ROCE_RX_HOLD:
            return HPU_NIC_RX_HOLD;     /* offered again when it has room */
        default:
            break;
        }
    }
    if (np->rx.pi == np->rx.ci) {
        if (!np->rx_waiting) {
            np->rx_waiting = true;
            hpum_nic_count(np, HPU_NIC_CNT_RX_NOBUF, 1);
            hpum_nic_cause(c, p, HPU_NIC_IRQ_RX_NOBUF);
            HPU_TRACE(c, HPU_TRACE_NIC_DROP, p, HPU_NIC_DROP_NOBUF, len);
        }
        return HPU_NIC_RX_HOLD;
    }
    np->rx_waiting = false;
    return HPU_NIC_RX_TAKE;
}

/*
 * Write the frame and the descriptor's device bytes (status last).
 * Returns the status code, or HPU_XFER_STALE.
 */
static int hpum_nic_rx_write(HpuCore *c, const HpuNicWork *w, uint64_t desc,
                             const uint8_t *d, const uint8_t *buf,
                             uint32_t len)
{
    uint64_t addr = hpum_le64(d + HPU_NIC_RXD_ADDR);
    uint16_t size = (uint16_t)(d[HPU_NIC_RXD_SIZE] |
                               d[HPU_NIC_RXD_SIZE + 1] << 8);
    uint8_t tail[6] = { 0 };
    int code = HPU_NIC_DESC_OK, r;

    if (size < HPU_NIC_RX_BUF_MIN || size > HPU_NIC_RX_BUF_MAX ||
        size < len || d[HPU_NIC_RXD_RSVD] || d[HPU_NIC_RXD_RSVD + 1]) {
        code = HPU_NIC_DESC_BAD_DESC;
    } else {
        r = hpum_nic_xfer(c, w, addr, (void *)buf, len, true);
        if (r == HPU_XFER_STALE) {
            return r;
        }
        code = r ? HPU_NIC_DESC_BUS_ERROR : HPU_NIC_DESC_OK;
    }
    if (code == HPU_NIC_DESC_OK) {
        hpum_put_le16(tail, (uint16_t)len);
        tail[HPU_NIC_RXD_FLAGS - HPU_NIC_RXD_LEN] = hpum_nic_rx_flags(buf);
    }
    r = hpum_nic_xfer(c, w, desc + HPU_NIC_RXD_LEN, tail, sizeof(tail), true);
    if (r != HPU_XFER_STALE) {
        int r2;

        tail[0] = (uint8_t)HPU_NIC_DESC_CODE(code);
        r2 = hpum_nic_xfer(c, w, desc + HPU_NIC_RXD_STATUS, tail, 1, true);
        r = r2 == HPU_XFER_STALE ? r2 : r | r2;
    }
    if (r == HPU_XFER_STALE) {
        return r;
    }
    if (r) {
        hpum_lock(c);
        HPU_LOG(c, "NIC%u: writing receive descriptor at 0x%llx failed",
                w->port, (unsigned long long)desc);
        hpum_unlock(c);
    }
    return code;
}

/* Under the lock: the descriptor completed with @code; count, RX_CI. */
static void hpum_nic_rx_done(HpuCore *c, const HpuNicWork *w, int code,
                             const uint8_t *buf, uint32_t len, uint64_t desc)
{
    HpuNicPort *np = &c->nic[w->port];
    uint8_t flags = hpum_nic_rx_flags(buf);

    HPU_TRACE(c, HPU_TRACE_NIC_RX, w->port, np->rx.ci, len, code, flags);
    np->rx.ci++;
    if (code == HPU_NIC_DESC_OK) {
        hpum_nic_count(np, HPU_NIC_CNT_RX_FRAMES, 1);
        hpum_nic_count(np, HPU_NIC_CNT_RX_BYTES, len);
        if (flags & (HPU_NIC_RXD_BROADCAST | HPU_NIC_RXD_MULTICAST)) {
            hpum_nic_count(np, HPU_NIC_CNT_RX_MCAST, 1);
        }
    } else {
        hpum_nic_count(np, HPU_NIC_CNT_RX_ERRORS, 1);
    }
    if (code == HPU_NIC_DESC_BAD_DESC) {
        HPU_LOG(c, "NIC%u: receive descriptor at 0x%llx has a size out of "
                "%u..%u or below the frame's %u bytes, or reserved bytes "
                "set: BAD_DESC", w->port, (unsigned long long)desc,
                HPU_NIC_RX_BUF_MIN, HPU_NIC_RX_BUF_MAX, len);
        hpum_nic_error(c, w->port, HPU_NIC_ERR_RX_DESC);
    } else if (code == HPU_NIC_DESC_BUS_ERROR) {
        HPU_LOG(c, "NIC%u: the buffer of receive descriptor at 0x%llx "
                "cannot be written: BUS_ERROR", w->port,
                (unsigned long long)desc);
    }
    hpum_nic_cause(c, w->port, HPU_NIC_IRQ_RX);
}

/* The frame goes to the descriptor at RX_CI (its work begun in @w). */
static void hpum_nic_rx_take(HpuCore *c, const HpuNicWork *w, uint64_t desc,
                             const uint8_t *buf, uint32_t len)
{
    uint8_t d[HPU_NIC_DESC_SIZE];
    int r;

    r = hpum_nic_xfer(c, w, desc, d, sizeof(d), false);
    if (r == 1) {
        hpum_nic_fetch_failed(c, w, desc);
        return;
    }
    if (!r) {
        r = hpum_nic_rx_write(c, w, desc, d, buf, len);
    }
    hpum_lock(c);
    if (r != HPU_XFER_STALE && hpum_nic_current(c, w)) {
        hpum_nic_rx_done(c, w, r, buf, len, desc);
    } else {
        HPU_TRACE(c, HPU_TRACE_NIC_DROP, w->port, HPU_NIC_DROP_STALE, len);
    }
    hpum_nic_ring_end(c, w);
    hpum_unlock(c);
}

bool hpum_core_nic_receive(HpuCore *c, unsigned int port,
                           const uint8_t *buf, size_t len)
{
    HpuNicWork w = { .port = port, .rx = true };
    HpuNicPort *np;
    uint64_t desc;
    int r;

    if (port >= c->cfg.nic_ports) {
        return true;
    }
    np = &c->nic[port];
    hpum_lock(c);
    r = hpum_nic_rx_accept(c, port, buf, len);
    if (r != HPU_NIC_RX_TAKE) {
        hpum_unlock(c);
        return r == HPU_NIC_RX_DROP;
    }
    np->rx.busy = true;
    w.gen = np->rx.gen;
    w.epoch = c->epoch;
    desc = hpum_nic_desc_addr(np->rx.base, np->rx.size, np->rx.ci);
    hpum_unlock(c);
    hpum_nic_rx_take(c, &w, desc, buf, (uint32_t)len);
    return true;
}

/* Registers (BAR0 + 0x100000 + 0x4000 * p) */

static bool hpum_nic_ring_config_ok(const HpuNicRing *r)
{
    return r->base && !(r->base & (HPU_NIC_RING_ALIGN - 1)) &&
           hpum_is_pow2_in(r->size, HPU_NIC_RING_MIN, HPU_NIC_RING_MAX);
}

static void hpum_nic_bad_config(HpuCore *c, unsigned int p, const char *what,
                                uint32_t val)
{
    HPU_LOG(c, "NIC%u: %s (0x%x): dropped, ERR_STATUS.BAD_CONFIG", p, what,
            val);
    hpum_nic_error(c, p, HPU_NIC_ERR_BAD_CONFIG);
}

/* CTRL: set or clear one ring's enable bit @bit (@want: the new value). */
static void hpum_nic_enable(HpuCore *c, unsigned int p, bool rx, bool want)
{
    HpuNicPort *np = &c->nic[p];
    HpuNicRing *r = hpum_nic_ring(np, rx);
    uint32_t bit = rx ? HPU_NIC_CTRL_RX_EN : HPU_NIC_CTRL_TX_EN;
    bool was = np->ctrl & bit;

    if (want && was) {
        r->stop = false;        /* cleared while busy, set again: stays */
    } else if (want) {
        if (!hpum_nic_ring_config_ok(r)) {
            HPU_LOG(c, "NIC%u: %s ring enabled with base 0x%llx, %u entries "
                    "(64-byte aligned, a power of two from %u to %u): left "
                    "disabled, ERR_STATUS.BAD_CONFIG", p,
                    rx ? "receive" : "transmit",
                    (unsigned long long)r->base, r->size, HPU_NIC_RING_MIN,
                    HPU_NIC_RING_MAX);
            hpum_nic_error(c, p, HPU_NIC_ERR_BAD_CONFIG);
            return;
        }
        np->ctrl |= bit;
        r->pi = r->ci = 0;
        r->gen++;
        r->stop = false;
    } else if (was && r->busy) {
        r->stop = true;         /* the frame in progress completes first */
    } else if (was) {
        np->ctrl &= ~bit;
        if (rx) {
            np->rx_waiting = false;
            c->ops->nic_rx_kick(c->opaque, p, true);
        } else {
            hpum_nic_drop_held(np);
        }
    }
}

static void hpum_nic_write_ctrl(HpuCore *c, unsigned int p, uint32_t val)
{
    HpuNicPort *np = &c->nic[p];

    hpum_nic_enable(c, p, false, val & HPU_NIC_CTRL_TX_EN);
    hpum_nic_enable(c, p, true, val & HPU_NIC_CTRL_RX_EN);
    if ((np->ctrl & HPU_NIC_CTRL_TX_EN) && !np->tx.stop &&
        np->tx.pi != np->tx.ci) {
        c->ops->nic_kick_tx(c->opaque, p);
    }
}

static void hpum_nic_write_mtu(HpuCore *c, unsigned int p, uint32_t val)
{
    HpuNicPort *np = &c->nic[p];

    if (np->ctrl & HPU_NIC_EN_BITS) {
        hpum_nic_bad_config(c, p, "MTU written while a ring is enabled",
                            val);
    } else if (val < HPU_NIC_MTU_MIN || val > HPU_NIC_MTU_MAX) {
        hpum_nic_bad_config(c, p, "MTU out of 68..9216", val);
    } else {
        np->mtu = val;
    }
}

/* TX_BASE_*, TX_SIZE, RX_BASE_*, RX_SIZE at @reg (relative to the ring). */
static void hpum_nic_write_ring(HpuCore *c, unsigned int p, bool rx,
                                uint32_t reg, uint32_t val)
{
    HpuNicPort *np = &c->nic[p];
    HpuNicRing *r = hpum_nic_ring(np, rx);

    if (np->ctrl & (rx ? HPU_NIC_CTRL_RX_EN : HPU_NIC_CTRL_TX_EN)) {
        hpum_nic_bad_config(c, p, rx ? "receive ring register written "
                            "while RX_EN is set" : "transmit ring register "
                            "written while TX_EN is set", val);
        return;
    }
    if (reg == HPU_NIC_TX_BASE_LO - HPU_NIC_TX_BASE_LO) {
        r->base = (r->base & 0xffffffff00000000ULL) | val;
    } else if (reg == HPU_NIC_TX_BASE_HI - HPU_NIC_TX_BASE_LO) {
        r->base = (r->base & 0xffffffffULL) | (uint64_t)val << 32;
    } else {
        r->size = val;
    }
}

static void hpum_nic_write_pi(HpuCore *c, unsigned int p, bool rx,
                              uint32_t val)
{
    HpuNicPort *np = &c->nic[p];
    HpuNicRing *r = hpum_nic_ring(np, rx);
    uint32_t en = rx ? HPU_NIC_CTRL_RX_EN : HPU_NIC_CTRL_TX_EN;

    if (val - r->ci > r->size) {
        HPU_LOG(c, "NIC%u: %s_PI %u is more than %u entries ahead of %s_CI "
                "%u: dropped, ERR_STATUS.BAD_PI", p, rx ? "RX" : "TX", val,
                r->size, rx ? "RX" : "TX", r->ci);
        hpum_nic_error(c, p, HPU_NIC_ERR_BAD_PI);
        return;
    }
    r->pi = val;
    HPU_TRACE(c, HPU_TRACE_NIC_DOORBELL, p, rx, val);
    if (!(np->ctrl & en) || r->stop) {
        return;
    }
    if (!rx) {
        c->ops->nic_kick_tx(c->opaque, p);
    } else if (np->rx_waiting && r->pi != r->ci) {
        c->ops->nic_rx_kick(c->opaque, p, false);   /* the FIFO drains */
    }
}

static void hpum_nic_write_inj(HpuCore *c, unsigned int p, uint32_t val)
{
    c->nic[p].inj = val & HPU_NIC_INJ_DEFINED;
    hpum_nic_link_update(c, p);
}

static void hpum_nic_write_irq_mask(HpuCore *c, unsigned int p, uint32_t val)
{
    HpuNicPort *np = &c->nic[p];

    np->irq_mask = val & HPU_NIC_IRQ_ALL;
    if (np->irq_mask & np->irq_status) {
        hpum_raise(c, HPU_VEC_NIC(p));  /* a pending cause enabled */
    }
}

/* The port of BAR0 offset @offset and the register in its block. */
static HpuNicPort *hpum_nic_port_at(HpuCore *c, uint32_t offset,
                                    unsigned int *p, uint32_t *reg)
{
    *p = (offset - HPU_NIC_BASE) / HPU_NIC_PORT_SIZE;
    *reg = (offset - HPU_NIC_BASE) % HPU_NIC_PORT_SIZE;
    if (*p >= c->cfg.nic_ports || *reg >= HPU_NIC_REG_END) {
        return NULL;
    }
    return &c->nic[*p];
}

static HpuAccess hpum_nic_read_counter(HpuNicPort *np, uint32_t reg,
                                       uint32_t *val)
{
    unsigned int i = (reg - HPU_NIC_CNT_LO(0)) / 8;

    if (reg & 4) {
        *val = np->cnt_hi[i];
    } else {
        *val = (uint32_t)np->cnt[i];
        np->cnt_hi[i] = (uint32_t)(np->cnt[i] >> 32);
    }
    return HPU_ACCESS_OK;
}

/* Port block offsets 0x1000-0x1fff: the port's RoCE registers. */
static bool hpum_nic_roce_reg(HpuCore *c, uint32_t offset, unsigned int *p,
                              uint32_t *reg)
{
    *p = (offset - HPU_NIC_BASE) / HPU_NIC_PORT_SIZE;
    *reg = (offset - HPU_NIC_BASE) % HPU_NIC_PORT_SIZE - HPU_NIC_ROCE_OFFSET;
    return *p < c->cfg.nic_ports && *reg < HPU_ROCE_PORT_SIZE;
}

static HpuAccess hpum_nic_read(HpuCore *c, uint32_t offset, uint32_t *val)
{
    unsigned int p;
    uint32_t reg;
    HpuNicPort *np;

    if (hpum_nic_roce_reg(c, offset, &p, &reg)) {
        return hpum_roce_port_read(c, p, reg, val);
    }
    np = hpum_nic_port_at(c, offset, &p, &reg);
    if (!np) {
        return HPU_ACCESS_UNMAPPED;
    }
    if (reg >= HPU_NIC_CNT_LO(0)) {
        return hpum_nic_read_counter(np, reg, val);
    }
    switch (reg) {
    case HPU_NIC_PORT_ID:
        *val = p;
        break;
    case HPU_NIC_PERM_MAC_LO:
    case HPU_NIC_PERM_MAC_HI: {
        uint8_t mac[6];

        hpum_core_nic_mac(&c->cfg, p, mac);
        *val = reg == HPU_NIC_PERM_MAC_LO ? hpum_le32(mac)
                                          : (uint32_t)(mac[4] | mac[5] << 8);
        break;
    }
    case HPU_NIC_MAC_LO:
        *val = np->mac_lo;
        break;
    case HPU_NIC_MAC_HI:
        *val = np->mac_hi;
        break;
    case HPU_NIC_LINK_STATUS:
        *val = hpum_nic_link_reg(np);
        break;
    case HPU_NIC_SPEED:
        *val = HPU_NIC_SPEED_MBPS;
        break;
    case HPU_NIC_MTU:
        *val = np->mtu;
        break;
    case HPU_NIC_CTRL:
        *val = np->ctrl;
        break;
    case HPU_NIC_IRQ_STATUS:
        *val = np->irq_status;
        break;
    case HPU_NIC_IRQ_MASK:
        *val = np->irq_mask;
        break;
    case HPU_NIC_ERR_STATUS:
        *val = np->err_status;
        break;
    case HPU_NIC_LINK_CHANGES:
        *val = np->link_changes;
        break;
    case HPU_NIC_RX_FILTER:
        *val = np->rx_filter;
        break;
    case HPU_NIC_TX_BASE_LO:
    case HPU_NIC_RX_BASE_LO:
        *val = (uint32_t)hpum_nic_ring(np, reg == HPU_NIC_RX_BASE_LO)->base;
        break;
    case HPU_NIC_TX_BASE_HI:
    case HPU_NIC_RX_BASE_HI:
        *val = (uint32_t)(hpum_nic_ring(np, reg == HPU_NIC_RX_BASE_HI)->base
                          >> 32);
        break;
    case HPU_NIC_TX_SIZE:
    case HPU_NIC_RX_SIZE:
        *val = hpum_nic_ring(np, reg == HPU_NIC_RX_SIZE)->size;
        break;
    case HPU_NIC_TX_PI:
    case HPU_NIC_RX_PI:
        *val = hpum_nic_ring(np, reg == HPU_NIC_RX_PI)->pi;
        break;
    case HPU_NIC_TX_CI:
    case HPU_NIC_RX_CI:
        *val = hpum_nic_ring(np, reg == HPU_NIC_RX_CI)->ci;
        break;
    case HPU_NIC_INJ_CTRL:
        *val = np->inj;
        break;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

static HpuAccess hpum_nic_write(HpuCore *c, uint32_t offset, uint32_t val)
{
    unsigned int p;
    uint32_t reg;
    HpuNicPort *np;

    if (hpum_nic_roce_reg(c, offset, &p, &reg)) {
        return hpum_roce_port_write(c, p, reg, val);
    }
    np = hpum_nic_port_at(c, offset, &p, &reg);
    if (!np) {
        return HPU_ACCESS_UNMAPPED;
    }
    switch (reg) {
    case HPU_NIC_MAC_LO:
        np->mac_lo = val;
        break;
    case HPU_NIC_MAC_HI:
        np->mac_hi = val & 0xffff;
        break;
    case HPU_NIC_MTU:
        hpum_nic_write_mtu(c, p, val);
        break;
    case HPU_NIC_CTRL:
        hpum_nic_write_ctrl(c, p, val);
        break;
    case HPU_NIC_RX_FILTER:
        np->rx_filter = val & HPU_NIC_RX_FILTER_PROMISC;
        break;
    case HPU_NIC_IRQ_STATUS:
        np->irq_status &= ~val;
        break;
    case HPU_NIC_IRQ_MASK:
        hpum_nic_write_irq_mask(c, p, val);
        break;
    case HPU_NIC_ERR_STATUS:
        np->err_status &= ~val;
        break;
    case HPU_NIC_TX_BASE_LO:
    case HPU_NIC_TX_BASE_HI:
    case HPU_NIC_TX_SIZE:
        hpum_nic_write_ring(c, p, false, reg - HPU_NIC_TX_BASE_LO, val);
        break;
    case HPU_NIC_RX_BASE_LO:
    case HPU_NIC_RX_BASE_HI:
    case HPU_NIC_RX_SIZE:
        hpum_nic_write_ring(c, p, true, reg - HPU_NIC_RX_BASE_LO, val);
        break;
    case HPU_NIC_TX_PI:
    case HPU_NIC_RX_PI:
        hpum_nic_write_pi(c, p, reg == HPU_NIC_RX_PI, val);
        break;
    case HPU_NIC_INJ_CTRL:
        hpum_nic_write_inj(c, p, val);
        break;
    case HPU_NIC_PORT_ID:
    case HPU_NIC_PERM_MAC_LO:
    case HPU_NIC_PERM_MAC_HI:
    case HPU_NIC_LINK_STATUS:
    case HPU_NIC_SPEED:
    case HPU_NIC_LINK_CHANGES:
    case HPU_NIC_TX_CI:
    case HPU_NIC_RX_CI:
        return HPU_ACCESS_READ_ONLY;
    default:
        if (reg >= HPU_NIC_CNT_LO(0) && reg < HPU_NIC_REG_END) {
            return HPU_ACCESS_READ_ONLY;
        }
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

const HpuBlock hpum_nic_block = {
    .name = "nic",
    .base = HPU_NIC_BASE,
    .size = HPU_NIC_PORT_SIZE * HPU_NIC_MAX_PORTS,
    .read = hpum_nic_read,
    .write = hpum_nic_write,
};

/* Reset, set-up, teardown */

/* Every register of port @p to its reset value; work in progress overtaken. */
static void hpum_nic_port_reset(HpuCore *c, unsigned int p)
{
    HpuNicPort *np = &c->nic[p];
    uint32_t tx_gen = np->tx.gen, rx_gen = np->rx.gen;
    bool tx_busy = np->tx.busy, rx_busy = np->rx.busy;
    uint8_t mac[6];

    hpum_core_nic_mac(&c->cfg, p, mac);
    np->mac_lo = hpum_le32(mac);
    np->mac_hi = (uint32_t)(mac[4] | mac[5] << 8);
    np->mtu = HPU_NIC_MTU_DEFAULT;
    np->ctrl = np->irq_status = np->irq_mask = np->err_status = 0;
    np->rx_filter = 0;
    np->link_changes = np->inj = 0;
    memset(&np->tx, 0, sizeof(np->tx));
    memset(&np->rx, 0, sizeof(np->rx));
    np->tx.gen = tx_gen + 1;
    np->rx.gen = rx_gen + 1;
    np->tx.busy = tx_busy;      /* the step in progress clears it */
    np->rx.busy = rx_busy;
    memset(np->cnt, 0, sizeof(np->cnt));
    memset(np->cnt_hi, 0, sizeof(np->cnt_hi));
    np->holding = false;
    np->rx_waiting = false;
    np->up = hpum_nic_link_up(np);
    c->ops->nic_rx_kick(c->opaque, p, true);    /* the FIFO emptied */
}

void hpum_nic_reset(HpuCore *c, HpuResetKind kind)
{
    unsigned int p;

    hpum_roce_reset(c);

    for (p = 0; p < c->cfg.nic_ports; p++) {
        if (kind == HPU_RESET_POWER_ON) {
            c->nic[p].backend = c->ops->nic_link(c->opaque, p);
        }
        hpum_nic_port_reset(c, p);
        if (kind != HPU_RESET_HARD && c->nic[p].up) {
            c->nic[p].irq_status = HPU_NIC_IRQ_LINK;    /* reported afresh */
        }
    }
}

void hpum_nic_hard_done(HpuCore *c)
{
    unsigned int p;

    for (p = 0; p < c->cfg.nic_ports; p++) {
        if (c->nic[p].up) {
            hpum_nic_cause(c, p, HPU_NIC_IRQ_LINK);
        }
    }
}

void hpum_nic_stop(HpuCore *c)
{
    unsigned int p;

    hpum_roce_reset(c);

    for (p = 0; p < c->cfg.nic_ports; p++) {
        HpuNicPort *np = &c->nic[p];

        np->ctrl &= ~HPU_NIC_EN_BITS;
        np->tx.gen++;
        np->rx.gen++;
        np->tx.stop = np->rx.stop = false;
        np->holding = false;
        np->rx_waiting = false;
        c->ops->nic_rx_kick(c->opaque, p, true);
    }
}

/* RoCE frames (roce.md): the link, the MTU and INJ_CTRL.DROP_TX apply. */
HpuNicRoceTx hpum_nic_roce_tx(HpuCore *c, unsigned int p, uint32_t len)
{
    HpuNicPort *np = &c->nic[p];
    uint32_t drop = (np->inj & HPU_NIC_INJ_DROP_TX_MASK) >>
                    HPU_NIC_INJ_DROP_TX_SHIFT;

    if (!np->up || len > np->mtu + HPU_NIC_FRAME_OVERHEAD) {
        return HPU_NIC_ROCE_DISCARD;
    }
    if (drop) {
        np->inj = (np->inj & ~HPU_NIC_INJ_DROP_TX_MASK) |
                  (drop - 1) << HPU_NIC_INJ_DROP_TX_SHIFT;
        hpum_nic_count(np, HPU_NIC_CNT_INJ_DROPPED, 1);
        return HPU_NIC_ROCE_INJ_DROP;
    }
    return HPU_NIC_ROCE_SEND;
}

void hpum_nic_cur_mac(HpuCore *c, unsigned int p, uint8_t mac[6])
{
    hpum_put_le32(mac, c->nic[p].mac_lo);
    mac[4] = (uint8_t)c->nic[p].mac_hi;
    mac[5] = (uint8_t)(c->nic[p].mac_hi >> 8);
}

bool hpum_nic_quiet(HpuCore *c)
{
    unsigned int p;

    for (p = 0; p < c->cfg.nic_ports; p++) {
        if (c->nic[p].tx.busy || c->nic[p].rx.busy) {
            return false;
        }
    }
    return true;
}

bool hpum_nic_init(HpuCore *c)
{
    if (!hpum_roce_init(c)) {
        return false;
    }
    unsigned int p;

    for (p = 0; p < c->cfg.nic_ports; p++) {
        c->nic[p].frame = calloc(1, HPU_NIC_FRAME_BUF);
        c->nic[p].held = calloc(1, HPU_NIC_FRAME_BUF);
        if (!c->nic[p].frame || !c->nic[p].held) {
            return false;
        }
    }
    return true;
}

void hpum_nic_fini(HpuCore *c)
{
    hpum_roce_fini(c);
    unsigned int p;

    for (p = 0; p < HPU_NIC_MAX_PORTS; p++) {
        free(c->nic[p].frame);
        free(c->nic[p].held);
        c->nic[p].frame = c->nic[p].held = NULL;
    }
}
