/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: core logic, independent of QEMU.
 *
 * The core implements Documentation/hw/registers.md,
 * Documentation/hw/memory-and-queues.md and
 * Documentation/hw/errors-and-reset.md: the BAR0 register file, the soft
 * and hard reset state machines, the device timers, the interrupt
 * self-test and the guest error bits (hpu_core.c); HBM, ECC poison, the
 * BAR4 window, the device MMU and the scrubber (hpu_mem.c); queue
 * managers, DMA engines, packets, sync objects and the event queue
 * (hpu_qm.c); the management CPU, the engine watchdog and fault injection
 * (hpu_ras.c).  It knows nothing about QEMU; it reaches its environment
 * (MSI-X, logging, one one-shot timer, host memory, a lock, engine
 * wake-ups) only through
 * struct hpu_core_ops, so the same file builds into QEMU (emu/hpu_pci.c)
 * and into host unit tests (tests/unit/emu/, which include this header
 * inside extern "C").
 *
 * BAR0 is decoded by a table of register blocks (struct hpu_block), one
 * per hardware block, each with its state in struct hpu_core.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_CORE_H
#define HPU_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hpu_regs.h"

/* Property limits (Documentation/hw/registers.md, "Device properties"). */
#define HPU_HBM_SIZE_GRANULE    (256ULL << 20)
#define HPU_HBM_SIZE_MIN        (256ULL << 20)
#define HPU_HBM_SIZE_MAX        (32ULL << 30)
#define HPU_HBM_SIZE_DEFAULT    (4ULL << 30)
#define HPU_NIC_PORTS_MAX       10
#define HPU_NIC_PORTS_DEFAULT   10
#define HPU_SERIAL_DEFAULT      "HPU-0000000000"

/* Fixed configuration of the H1 chip. */
#define HPU_H1_DMA_ENGINES      8
#define HPU_H1_TPC_ENGINES      8
#define HPU_H1_MME_ENGINES      2
#define HPU_H1_HBM_STACKS       4
#define HPU_H1_REVISION         0x00000100      /* 1.0 */

/* Model parameters (not guest visible). */
#define HPU_HBM_CHUNK_SHIFT     21              /* sparse backing: 2 MiB */
#define HPU_HBM_CHUNK_SIZE      (1ULL << HPU_HBM_CHUNK_SHIFT)
#define HPU_TLB_ENTRIES         4096            /* direct mapped */
#define HPU_DMA_PIECE           (1U << 20)      /* LIN_DMA bounce buffer */
#define HPU_HB_ACK_DELAY_NS     100000          /* < HPU_HB_ACK_NS */
#define HPU_DEFERRED_EVENTS     64

struct hpu_core;

/*
 * Services the environment provides to the core.  All callbacks receive
 * the opaque pointer given to hpu_core_init().  None may be NULL.
 *
 * Threads: BAR accesses, the timer and resets come from one context (QEMU's
 * vCPUs and main loop under the BQL); each DMA engine runs
 * hpu_core_engine_step() in a thread of its own.  The core serialises its
 * state with @lock/@unlock, a plain (non-recursive) mutex, which it takes
 * itself in every entry point except hpu_core_engine_ready().  It never
 * holds it while calling @dma_read, @dma_write or @raise_msix, so those may
 * re-enter the device (a DMA aimed at the device's own BAR).
 */
struct hpu_core_ops {
    /* Signal MSI-X vector @vector (< HPU_MSIX_VECTORS) once. */
    void (*raise_msix)(void *opaque, unsigned int vector);
    /* Report a guest programming error (printf format, no newline). */
    void (*log_guest_error)(void *opaque, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
    /*
     * Call hpu_core_timer_expired() @ns nanoseconds of device time from now
     * (replacing any pending expiry).  The core multiplexes its timers
     * (struct hpu_timers) onto this one.
     */
    void (*arm_timer)(void *opaque, uint64_t ns);
    /* Cancel a pending timer, if any. */
    void (*cancel_timer)(void *opaque);
    /* Device time in nanoseconds (event timestamps). */
    uint64_t (*now_ns)(void *opaque);
    /* Host memory at PCIe bus address @addr; 0 on success, else an error. */
    int (*dma_read)(void *opaque, uint64_t addr, void *buf, uint64_t len);
    int (*dma_write)(void *opaque, uint64_t addr, const void *buf,
                     uint64_t len);
    /* The core lock. */
    void (*lock)(void *opaque);
    void (*unlock)(void *opaque);
    /*
     * Engine @engine may have work: wake its thread if it sleeps.  Called
     * with the core lock held.
     */
    void (*kick_engine)(void *opaque, unsigned int engine);
};

/* Device configuration, from the QEMU properties. */
struct hpu_core_config {
    uint64_t hbm_size;                  /* bytes */
    unsigned int nic_ports;
    char serial[HPU_SERIAL_LEN];        /* ASCII, NUL padded, not terminated */
    uint8_t uuid[HPU_UUID_LEN];         /* RFC 4122 byte order */
};

/*
 * A decoded region of BAR0.  @read and @write get the offset relative to
 * BAR0; accesses reaching them are aligned 32-bit and run with the core
 * lock held.  They return one of enum hpu_access.
 */
enum hpu_access {
    HPU_ACCESS_OK,
    HPU_ACCESS_UNMAPPED,        /* no register at this offset */
    HPU_ACCESS_READ_ONLY,       /* write to a read-only register */
};

struct hpu_block {
    const char *name;
    uint32_t base;
    uint32_t size;
    enum hpu_access (*read)(struct hpu_core *c, uint32_t offset,
                            uint32_t *val);
    enum hpu_access (*write)(struct hpu_core *c, uint32_t offset,
                             uint32_t val);
};

/* Identity and control block state. */
struct hpu_ctrl {
    uint32_t scratch;
    uint32_t status;
    uint32_t reset_count;
    uint32_t irq_test_count;
    uint32_t error;
    uint32_t irq_status;
    uint32_t irq_mask;
    uint32_t hard_reset_count;
    uint32_t wdt_ms;
    uint32_t ecc_ce_count;
    uint32_t ecc_ue_count;
};

/* The device timers, multiplexed onto the environment's one timer. */
enum hpu_timer_id {
    HPU_TMR_SOFT_RESET,
    HPU_TMR_HARD_RESET,
    HPU_TMR_CPU_BOOT,
    HPU_TMR_HB_ACK,
    HPU_TMR_HB_EVENT,
    HPU_TMR_WDT,
    HPU_TMR_COUNT
};

struct hpu_timers {
    uint64_t deadline[HPU_TMR_COUNT];   /* device time, ns */
    uint32_t armed;                     /* bit per enum hpu_timer_id */
    bool programmed;                    /* the environment timer is armed */
    uint64_t programmed_at;             /* for this deadline */
};

/* Management CPU block (BAR0 + 0x4000). */
struct hpu_cpu {
    uint32_t status;            /* HPU_CPU_* */
    uint32_t hb_req;
    uint32_t hb_ack;
    uint32_t hb_event_ms;
    uint32_t fw_error;
    uint32_t hb_seq;            /* HEARTBEAT events since boot */
    bool hb_stopped;            /* INJ_FW 1 */
};

/* Fault injection block (BAR0 + 0x3000). */
struct hpu_inj {
    uint32_t hang;              /* engine mask */
    uint32_t dma_fail;          /* engine mask */
    uint64_t ecc_addr;
};

/* An event-queue entry before it is written. */
struct hpu_event {
    uint16_t id;
    uint8_t severity;
    uint8_t engine;
    uint16_t asid;
    uint64_t ts;                /* device time; 0: when written */
    uint64_t addr;
    uint32_t info;
};

/*
 * Events raised under the lock (MMIO handlers, timers), written to the
 * event queue once the lock is dropped.
 */
struct hpu_deferred {
    struct hpu_event ev[HPU_DEFERRED_EVENTS];
    unsigned int head;
    unsigned int count;
    /* RESET_DONE, written to the slot reserved when the queue is enabled */
    uint32_t reset_done;        /* info of the next RESET_DONE, 0: none */
    bool rd_reserved;           /* slot 0 reserved for it */
    uint32_t rd_info;
    uint64_t rd_ts;
    uint32_t rd_gen;            /* hpu_eq.gen of the reservation */
};

/* Sparse HBM: 2 MiB chunks allocated (zero filled) on first write. */
struct hpu_hbm {
    uint64_t size;
    size_t nchunks;
    uint8_t **chunks;           /* atomic loads/stores; set under the lock */
    /*
     * Engine copies in progress outside the lock (atomic).  While it is
     * non-zero the scrubber zeroes chunks instead of freeing them.
     */
    unsigned int users;
    uint8_t *poison;            /* per 2 MiB page: ECC poisoned (atomic) */
};

struct hpu_tlb_entry {
    uint64_t vpn;               /* virtual address >> 12 */
    uint64_t pa;                /* address of the 4 KiB page */
    uint16_t asid;
    bool valid;
    bool write;
    bool host;
    bool huge;                  /* from a 2 MiB leaf */
};

/* MMU, HBM window and scrubber block (BAR0 + 0x1000). */
struct hpu_mmu {
    uint32_t root_lo[HPU_MMU_NUM_ASIDS];
    uint32_t root_hi[HPU_MMU_NUM_ASIDS];
    uint32_t inv_count;
    uint32_t fault_asid;
    uint64_t fault_va;
    uint32_t fault_info;
    uint32_t fault_count;
    uint64_t win_base;
    uint64_t scrub_addr;
    uint64_t scrub_size;
    uint32_t scrub_status;
    uint32_t scrub_count;
    struct hpu_tlb_entry tlb[HPU_TLB_ENTRIES];
};

/* Event queue block (BAR0 + 0x2000). */
struct hpu_eq {
    uint64_t base;
    uint32_t size;
    uint32_t pi;
    uint32_t ci;
    uint32_t ctrl;
    uint32_t dropped;
    uint32_t reserved;          /* entries handed to writers */
    uint32_t writers;           /* entry writes in flight */
    uint32_t gen;               /* bumped when the ring is re-initialised */
};

/* One stream of a queue manager. */
struct hpu_stream {
    /* registers */
    uint64_t ring;
    uint32_t ring_size;
    uint32_t pi;
    uint32_t ci;
    uint64_t cq;
    uint32_t cq_size;
    uint32_t cq_pi;
    uint32_t ctrl;
    bool halted;
    /* the descriptor in flight */
    uint32_t gen;               /* bumped on enable and reset */
    bool active;
    bool waiting;
    uint32_t wait_sob;          /* device index */
    uint32_t wait_value;
    uint32_t wait_cond;
    uint64_t seq;
    uint64_t cb_addr;
    uint32_t cb_size;
    uint32_t pos;               /* offset of the next packet */
    uint16_t asid;
    bool hung;                  /* STATUS.HUNG: the watchdog fired */
    uint64_t progress_ns;       /* fetched, packet done or WAIT released */
};

struct hpu_engine {
    struct hpu_stream st[HPU_QM_STREAMS];
    unsigned int rr;            /* next stream to consider */
    bool busy;                  /* a step runs outside the lock */
    bool stuck;                 /* INJ_HANG took it: runs nothing */
    uint64_t progress_ns;       /* last packet or LIN_DMA piece done */
    uint8_t *bounce;            /* HPU_DMA_PIECE bytes, engine thread only */
};

struct hpu_core {
    const struct hpu_core_ops *ops;
    void *opaque;
    struct hpu_core_config cfg;
    struct hpu_ctrl ctrl;
    struct hpu_hbm hbm;
    struct hpu_mmu mmu;
    struct hpu_eq eq;
    struct hpu_engine eng[HPU_H1_DMA_ENGINES];
    uint32_t sob[HPU_NUM_SOBS];
    struct hpu_timers tmr;
    struct hpu_cpu cpu;
    struct hpu_inj inj;
    struct hpu_deferred dq;
    bool resetting;             /* a soft reset is stopping the engines */
    bool hard_resetting;        /* STATUS.HARD_RESET_BUSY */
    uint64_t wdt_epoch;         /* device time of the last WDT_MS write */
    uint32_t irq_pending;       /* vectors to raise when the lock drops */
};

/*
 * Check a configuration against the property limits.  Returns true if it
 * is valid; otherwise false with a message in @err (if @err is not NULL).
 * @serial is the NUL-terminated property string.
 */
bool hpu_core_check_config(uint64_t hbm_size, unsigned int nic_ports,
                           const char *serial, char *err, size_t errlen);

/*
 * Fill @cfg from validated property values (@serial NUL-terminated, at
 * most HPU_SERIAL_LEN characters; @uuid HPU_UUID_LEN bytes).
 */
void hpu_core_make_config(struct hpu_core_config *cfg, uint64_t hbm_size,
                          unsigned int nic_ports, const char *serial,
                          const uint8_t *uuid);

/*
 * Bind the core to its environment and apply a power-on reset.  Returns
 * false if the HBM chunk table cannot be allocated.
 */
bool hpu_core_init(struct hpu_core *c, const struct hpu_core_ops *ops,
                   void *opaque, const struct hpu_core_config *cfg);

/* Free what hpu_core_init() and the engines allocated (engines stopped). */
void hpu_core_fini(struct hpu_core *c);

/*
 * Power-on / PCI function reset: every register to its reset value, any
 * soft or hard reset in progress abandoned (timers cancelled), HBM kept,
 * the management CPU booting again (RUNNING HPU_CPU_BOOT_NS later).
 */
void hpu_core_reset(struct hpu_core *c);

/*
 * BAR0 access of @size bytes (1..8) at @addr.  Accesses that break the
 * access rules are flagged in ERROR.BAD_ACCESS and logged; such a read
 * returns 0 and such a write is dropped.
 */
uint64_t hpu_core_read(struct hpu_core *c, uint64_t addr, unsigned int size);
void hpu_core_write(struct hpu_core *c, uint64_t addr, uint64_t val,
                    unsigned int size);

/*
 * The timer armed through hpu_core_ops.arm_timer has expired: run every
 * device timer that is due (a stale or early call is harmless).
 */
void hpu_core_timer_expired(struct hpu_core *c);

/*
 * BAR4, the HBM window: an access of @size bytes (1..8, any alignment) at
 * @addr, reaching HBM at HBM_WIN_BASE + @addr.  Bytes beyond HBM read as 0,
 * are not written, and set ERROR.BAD_ACCESS.
 */
uint64_t hpu_core_hbm_window_read(struct hpu_core *c, uint64_t addr,
                                  unsigned int size);
void hpu_core_hbm_window_write(struct hpu_core *c, uint64_t addr,
                               uint64_t val, unsigned int size);

/*
 * Run one unit of work of DMA engine @e (fetch a descriptor, execute one
 * packet, release a WAIT, or write an ABORTED completion), taking its
 * streams round robin.  Returns whether the engine has more work at once.
 * The engine's thread calls it in a loop and sleeps (until kick_engine)
 * while hpu_core_engine_ready() is false; tests call it synchronously.
 * Only one thread may step a given engine.
 */
bool hpu_core_engine_step(struct hpu_core *c, unsigned int e);

/* Whether engine @e has work.  Call with the core lock held. */
bool hpu_core_engine_ready(struct hpu_core *c, unsigned int e);

/*
 * HBM backdoor for tests and debugging (no window, no MMU): copy @len
 * bytes between HBM offset @off and @buf.  Returns false if the range is
 * outside HBM.  Takes the core lock.
 */
bool hpu_core_hbm_read(struct hpu_core *c, uint64_t off, void *buf,
                       uint64_t len);
bool hpu_core_hbm_write(struct hpu_core *c, uint64_t off, const void *buf,
                        uint64_t len);

/* HBM bytes currently backed by host memory. */
uint64_t hpu_core_hbm_backed(struct hpu_core *c);

#endif /* HPU_CORE_H */
