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
 * (hpu_ras.c); and, for Documentation/hw/firmware-and-telemetry.md (spec
 * version 4), the boot ROM, image verification, flash, mailbox, sensors
 * and busy counters (hpu_fw.c, hpu_sensors.c); for
 * Documentation/hw/compute.md (spec version 6), the queue managers of the
 * TPC engine and the two MMEs (hpu_qm.c), the MMEs' GEMMs (hpu_mme.c) and
 * the TPC launch (hpu_tpc.c); for Documentation/hw/nic.md (spec version
 * 7), the NIC ports' registers, rings, receive filter, interrupts,
 * counters and fault injection (hpu_nic.c).  It knows nothing about QEMU;
 * it reaches
 * its environment (MSI-X, logging, one one-shot timer, host memory, a
 * lock, engine wake-ups) only through HpuCoreOps, so the same
 * files build into QEMU (emu/hpu_pci.c) and into host unit tests
 * (tests/unit/emu/, which include this header inside extern "C").
 *
 * BAR0 is decoded by a table of register blocks (HpuBlock), one
 * per hardware block, each with its state in HpuCore.
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_CORE_H
#define HPU_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hpu_regs.h"
#include "hpu_fw_image.h"

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
/*
 * Spec version 6: engine indexes 0-7 DMA, 8 the TPC cluster (of
 * HPU_H1_TPC_ENGINES cores), 9-10 the MMEs, each behind a queue manager.
 */
#define HPU_H1_ENGINES          HPU_NUM_ENGINES
/*
 * Spec version 10: 16 streams per queue manager, 0-3 kernel streams,
 * HPU_H1_KSTREAMS on user streams (hpu_uq.c).
 */
#define HPU_H1_STREAMS          HPU_QM_ALL_STREAMS
#define HPU_H1_KSTREAMS         HPU_QM_KSTREAMS
#define HPU_H1_HBM_STACKS       4
#define HPU_H1_REVISION         0x00000100      /* 1.0 */

/* Model parameters (not guest visible). */
#define HPU_HBM_CHUNK_SHIFT     21              /* sparse backing: 2 MiB */
#define HPU_HBM_CHUNK_SIZE      (1ULL << HPU_HBM_CHUNK_SHIFT)
#define HPU_TLB_ENTRIES         4096            /* direct mapped */
#define HPU_DMA_PIECE           (1U << 20)      /* LIN_DMA bounce buffer */
#define HPU_COPY_BULK_MIN       (64U << 10)     /* hpum_copy_bulk() streams */
#define HPU_HB_ACK_DELAY_NS     100000          /* < HPU_HB_ACK_NS */
#define HPU_DEFERRED_EVENTS     64
#define HPU_NIC_TX_BUDGET       32              /* frames per transmit call */
/* The largest frame (MTU 9216), rounded up: a port's frame buffers */
#define HPU_NIC_FRAME_BUF       9240

typedef struct HpuCore HpuCore;
typedef struct HpuRoce HpuRoce;    /* hpu_roce.h */

/*
 * Trace points of the core, passed to the environment (HpuCoreOps.trace)
 * with their arguments in the order listed; unused ones are 0.  In QEMU
 * each is the event hpu_<name> of emu/trace-events.
 */
typedef enum HpuTraceId {
    HPU_TRACE_DOORBELL,         /* engine, stream, PI */
    HPU_TRACE_DESC_FETCH,       /* engine, stream, CI, seq, CB address, size */
    HPU_TRACE_PACKET,           /* engine, stream, offset, opcode, size, ASID */
    HPU_TRACE_COMPLETION,       /* engine, stream, seq, status, offset */
    HPU_TRACE_MMU_FAULT,        /* engine, ASID, VA, FAULT_INFO */
    HPU_TRACE_EVENT,            /* event id, engine, address, info */
    HPU_TRACE_SOFT_RESET,       /* 0: the key write, 1: done */
    HPU_TRACE_HARD_RESET,       /* 0: the key write, 1: done */
    HPU_TRACE_RESET,            /* power-on/FLR: old accesses in flight */
    HPU_TRACE_RESET_FINISH,     /* (none): the function leaves reset */
    HPU_TRACE_DMA_RUNS,         /* engine, bytes, source runs, destination runs, bounce */
    /* Spec version 7 (hpu_nic.c) */
    HPU_TRACE_NIC_DOORBELL,     /* port, ring (0 TX, 1 RX), PI */
    HPU_TRACE_NIC_TX,           /* port, first descriptor, count, code, bytes, action */
    HPU_TRACE_NIC_RX,           /* port, descriptor, bytes, code, rx_flags */
    HPU_TRACE_NIC_DROP,         /* port, HpuNicDrop, bytes */
    HPU_TRACE_NIC_LINK,         /* port, LINK, LINK_CHANGES */
    /* Spec version 7 part 2 (hpu_roce.c) */
    HPU_TRACE_ROCE_CMD,         /* CMD, CMD_INDEX, result */
    HPU_TRACE_ROCE_DOORBELL,    /* page, offset, value, refused */
    HPU_TRACE_ROCE_TX,          /* port, opcode, destination QPN, PSN, bytes */
    HPU_TRACE_ROCE_RX,          /* port, opcode, QPN, PSN, counter counted */
    HPU_TRACE_ROCE_CQE,         /* CQN, QPN, status, index */
    HPU_TRACE_ROCE_QP_ERR,      /* QPN, cause */
    /* Spec version 9 (hpu_qm.c) */
    HPU_TRACE_NOTIFY,           /* engine, stream, DONE, CQ_PI, records, irq */
    /* Spec version 10 (hpu_uq.c) */
    HPU_TRACE_UQ_DOORBELL,      /* engine, stream, offset, size, value, refused */
    /* a user stream notifies: engine, stream, STATUS bits 6:4, DONE, */
    HPU_TRACE_UQ_STOP,          /* err_status, err_where */
    HPU_TRACE_COUNT
} HpuTraceId;

#define HPU_TRACE_ARGS          6

/* Why a port did not write an arriving frame (HPU_TRACE_NIC_DROP). */
typedef enum HpuNicDrop {
    HPU_NIC_DROP_OFF = 1,       /* RX_EN clear, link down, reset: uncounted */
    HPU_NIC_DROP_INJ,           /* INJ_CTRL.DROP_RX */
    HPU_NIC_DROP_LENGTH,        /* runt or oversized: RX_ERRORS */
    HPU_NIC_DROP_FILTER,        /* RX_FILTERED */
    HPU_NIC_DROP_NOBUF,         /* held for want of a descriptor */
    HPU_NIC_DROP_FETCH,         /* the descriptor could not be read */
    HPU_NIC_DROP_STALE,         /* a reset overtook it */
} HpuNicDrop;

/* What a transmit step did with a frame (HPU_TRACE_NIC_TX). */
typedef enum HpuNicTxAction {
    HPU_NIC_TX_SENT,
    HPU_NIC_TX_FAILED,          /* a status other than OK: not sent */
    HPU_NIC_TX_INJ_DROP,        /* INJ_CTRL.DROP_TX */
    HPU_NIC_TX_HELD,            /* INJ_CTRL.SWAP_TX */
} HpuNicTxAction;

/*
 * Services the environment provides to the core.  All callbacks receive
 * the opaque pointer given to hpum_core_init().  None may be NULL but
 * those marked optional.
 *
 * Threads: BAR accesses, the timer and resets come from one context (QEMU's
 * vCPUs and main loop under the BQL); each engine (DMA, TPC, MME: engine
 * indexes 0..HPU_H1_ENGINES - 1) runs hpum_core_engine_step() in a thread
 * of its own, and the boot ROM's worker
 * runs hpum_core_fw_step() in another.  The core serialises its state with
 * @lock/@unlock, a plain (non-recursive) mutex, which it takes itself in
 * every entry point except hpum_core_engine_ready() and hpum_core_fw_ready().
 * It never holds it while calling @dma_read, @dma_write (or their bulk
 * forms) or @raise_msix, so
 * those may re-enter the device (a DMA aimed at the device's own BAR).
 */
typedef struct HpuCoreOps {
    /* Signal MSI-X vector @vector (< HPU_MSIX_VECTORS) once. */
    void (*raise_msix)(void *opaque, unsigned int vector);
    /* Report a guest programming error (printf format, no newline). */
    void (*log_guest_error)(void *opaque, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
    /*
     * Call hpum_core_timer_expired() @ns nanoseconds of device time from now
     * (replacing any pending expiry).  The core multiplexes its timers
     * (HpuTimers) onto this one.
     */
    void (*arm_timer)(void *opaque, uint64_t ns);
    /* Cancel a pending timer, if any. */
    void (*cancel_timer)(void *opaque);
    /*
     * Device time in nanoseconds (event timestamps).  Called with or
     * without the core lock, on any thread.
     */
    uint64_t (*now_ns)(void *opaque);
    /* Host memory at PCIe bus address @addr; 0 on success, else an error. */
    int (*dma_read)(void *opaque, uint64_t addr, void *buf, uint64_t len);
    int (*dma_write)(void *opaque, uint64_t addr, const void *buf,
                     uint64_t len);
    /*
     * Optional: the same for a one-copy LIN_DMA segment between host
     * memory and HBM chunk memory, whose bytes no engine reads back
     * soon: the environment may copy them with hpum_copy_bulk().  NULL:
     * @dma_read and @dma_write.
     */
    int (*dma_read_bulk)(void *opaque, uint64_t addr, void *buf,
                         uint64_t len);
    int (*dma_write_bulk)(void *opaque, uint64_t addr, const void *buf,
                          uint64_t len);
    /* The core lock. */
    void (*lock)(void *opaque);
    void (*unlock)(void *opaque);
    /*
     * Engine @engine may have work: wake its thread if it sleeps.  Called
     * with the core lock held.
     */
    void (*kick_engine)(void *opaque, unsigned int engine);
    /*
     * The boot ROM has a job (hpum_core_fw_ready() is true): wake its
     * worker if it sleeps.  Called with the core lock held.
     */
    void (*kick_fw)(void *opaque);
    /*
     * The last DMA or MSI-X call begun before a power-on reset or FLR has
     * ended (spec version 5): call hpum_core_reset_finish() soon, without
     * the core lock and not from inside this call (QEMU: a bottom half).
     * Called with the core lock held, on any thread.
     */
    void (*reset_drained)(void *opaque);
    /*
     * Trace point @id with HPU_TRACE_ARGS arguments @arg (see HpuTraceId).
     * Called with or without the core lock, on any thread; must not call
     * back into the core.
     */
    void (*trace)(void *opaque, HpuTraceId id, const uint64_t *arg);
    /*
     * Optional: call @fn(@arg, i) for every i < @n, on worker threads of
     * the environment (the TPC engine's pool), and return when all calls
     * have returned.  Called without the core lock, from the TPC engine's
     * thread only; @fn takes the lock itself and may call @dma_read and
     * @dma_write.  NULL: the core makes the calls one after the other.
     */
    void (*run_parallel)(void *opaque, void (*fn)(void *arg, unsigned int i),
                         void *arg, unsigned int n);
    /*
     * Spec version 7 (nic.md).  Hand the frame @buf of @len bytes (at
     * least HPU_NIC_FRAME_PAD, padding included) to port @port's wire.
     * Called without the core lock, from hpum_core_nic_tx() and
     * hpum_core_roce_step() only.
     */
    void (*nic_send)(void *opaque, unsigned int port, const uint8_t *buf,
                     uint32_t len);
    /*
     * Port @port has transmit work: call hpum_core_nic_tx() soon (QEMU: a
     * bottom half), not from inside this call.  Called with the lock held.
     */
    void (*nic_kick_tx)(void *opaque, unsigned int port);
    /*
     * Port @port takes frames again: offer it the frames its back end holds
     * (those hpum_core_nic_receive() refused) soon, not from inside this
     * call; with @purge drop them first (a reset emptied the port's FIFO).
     * Called with the lock held.
     */
    void (*nic_rx_kick)(void *opaque, unsigned int port, bool purge);
    /*
     * Port @port's back end: HPU_NIC_LINK_STATUS_ATTACHED if it has one, and
     * HPU_NIC_LINK_STATUS_UP if its link is up.  Called with or without the lock
     * from hpum_core_init(), power-on resets and
     * hpum_core_nic_link_changed(); reads state only.
     */
    uint32_t (*nic_link)(void *opaque, unsigned int port);
    /*
     * Spec version 7 part 2 (roce.md): the RoCE engine has work: call
     * hpum_core_roce_step() soon (QEMU: a bottom half), not from inside
     * this call.  Called with the lock held.
     */
    void (*roce_kick)(void *opaque);
} HpuCoreOps;

/* Device configuration, from the QEMU properties. */
typedef struct HpuCoreConfig {
    uint64_t hbm_size;                  /* bytes */
    unsigned int nic_ports;
    char serial[HPU_SERIAL_LEN];        /* ASCII, NUL padded, not terminated */
    uint8_t uuid[HPU_UUID_LEN];         /* RFC 4122 byte order */
    /* Spec version 4 fuses and flash (hpum_core_make_config: none) */
    bool fw_key_set;                    /* false: no key fused (NO_KEY) */
    uint8_t fw_key[HPU_FW_PUBKEY_SIZE];
    uint32_t fw_min_version;            /* anti-rollback fuse */
    const uint8_t *fw_flash;            /* power-on flash content, copied */
    uint32_t fw_flash_len;              /* at most HPU_FW_MAX_SIZE */
    /* Spec version 6: OpenBLAS threads per MME product (0: 1) */
    unsigned int mme_threads;
    /*
     * Spec version 7's BAR4 (the hbm-bar=64M property): a 64 MiB window
     * whatever HBM_SIZE, and SPEC_VERSION reads 7 (hpum_config_bar4_size())
     */
    bool bar4_v7;
} HpuCoreConfig;

/*
 * Spec version 7: a NIC port (nic.md).  Registers as the guest sees them,
 * and the work in progress: a transmit step (hpum_core_nic_tx()) or a
 * receive (hpum_core_nic_receive()) runs its DMA without the lock and
 * checks the ring's generation (bumped by enabling the ring and by every
 * reset) and the epoch in the critical section that begins each access.
 */
typedef struct HpuNicRing {
    uint64_t base;
    uint32_t size;
    uint32_t pi;
    uint32_t ci;
    uint32_t gen;
    bool busy;                  /* a frame is in progress without the lock */
    bool stop;                  /* enable cleared while busy: at its end */
} HpuNicRing;

typedef struct HpuNicPort {
    uint32_t mac_lo;
    uint32_t mac_hi;
    uint32_t mtu;
    uint32_t ctrl;              /* as CTRL reads */
    uint32_t rx_filter;         /* RX_FILTER */
    uint32_t irq_status;
    uint32_t irq_mask;
    uint32_t err_status;
    uint32_t link_changes;
    uint32_t inj;               /* INJ_CTRL */
    uint32_t backend;           /* HPU_NIC_LINK_* of the back end */
    bool up;                    /* LINK_STATUS.UP */
    HpuNicRing tx;
    HpuNicRing rx;
    uint64_t cnt[HPU_NIC_NUM_COUNTERS];
    uint32_t cnt_hi[HPU_NIC_NUM_COUNTERS];  /* latched by reading *_LO */
    bool rx_waiting;            /* a frame counted RX_NOBUF is held */
    bool holding;               /* SWAP_TX holds the frame in @held */
    uint32_t held_len;
    uint8_t *frame;             /* the frame being sent, transmit step only */
    uint8_t *held;
} HpuNicPort;

/*
 * A decoded region of BAR0.  @read and @write get the offset relative to
 * BAR0; accesses reaching them are aligned 32-bit and run with the core
 * lock held.  They return one of HpuAccess.
 */
typedef enum HpuAccess {
    HPU_ACCESS_OK,
    HPU_ACCESS_UNMAPPED,        /* no register at this offset */
    HPU_ACCESS_READ_ONLY,       /* write to a read-only register */
} HpuAccess;

typedef struct HpuBlock {
    const char *name;
    uint32_t base;
    uint32_t size;
    HpuAccess (*read)(HpuCore *c, uint32_t offset,
                      uint32_t *val);
    HpuAccess (*write)(HpuCore *c, uint32_t offset,
                       uint32_t val);
} HpuBlock;

/* Identity and control block state. */
typedef struct HpuCtrl {
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
    uint32_t time_hi;           /* DEVICE_TIME_HI, latched by the LO read */
    uint32_t uq_db_refused;     /* spec version 10: UQ_DB_REFUSED */
} HpuCtrl;

/* The device timers, multiplexed onto the environment's one timer. */
typedef enum HpuTimerId {
    HPU_TMR_SOFT_RESET,
    HPU_TMR_HARD_RESET,
    HPU_TMR_CPU_BOOT,
    HPU_TMR_HB_ACK,
    HPU_TMR_HB_EVENT,
    HPU_TMR_WDT,
    HPU_TMR_ROM,                /* ROM_INIT and VERIFYING end */
    HPU_TMR_FLASH,              /* a flash write ends */
    HPU_TMR_MBOX,               /* the firmware answers the mailbox */
    HPU_TMR_SENSOR,             /* sensor period */
    HPU_TMR_ROCE,               /* the RoCE engine's QP timers */
    HPU_TMR_IRQ_MOD,            /* a stream's moderation delay ends */
    HPU_TMR_COUNT
} HpuTimerId;

typedef struct HpuTimers {
    uint64_t deadline[HPU_TMR_COUNT];   /* device time, ns */
    uint32_t armed;                     /* bit per HpuTimerId */
    bool programmed;                    /* the environment timer is armed */
    uint64_t programmed_at;             /* for this deadline */
} HpuTimers;

/* Management CPU block (BAR0 + 0x4000). */
typedef struct HpuCpu {
    uint32_t status;            /* HPU_CPU_* */
    uint32_t hb_req;
    uint32_t hb_ack;
    uint32_t hb_event_ms;
    uint32_t fw_error;
    uint32_t hb_seq;            /* HEARTBEAT events since boot */
    bool hb_stopped;            /* INJ_FW 1 */
} HpuCpu;

/* The tables of a firmware image, as the boot ROM parsed them. */
typedef struct HpuFwLimitState {
    uint32_t cur;               /* set through the mailbox */
    uint32_t def;
    uint32_t min;
    uint32_t max;
} HpuFwLimitState;

typedef struct HpuFwInfo {
    uint32_t version;
    uint8_t build[HPU_FW_BUILD_LEN];
    HpuFwLimitState limit[HPU_NUM_LIMITS];
    uint32_t nclocks;
    uint32_t clk_mhz[HPU_FW_MAX_CLOCKS];
    uint32_t clk_mv[HPU_FW_MAX_CLOCKS];
    struct hpu_fw_thermal thermal;  /* host byte order */
} HpuFwInfo;

/*
 * An image held in flash: immutable once stored, shared by reference with
 * the verification of a BOOT_CMD 2 (which reads it outside the lock).
 * @refs changes under the core lock only; the last reference frees it.
 */
typedef struct HpuFlashImg {
    unsigned int refs;
    uint32_t len;
    uint8_t *data;              /* @len bytes, in the same allocation */
} HpuFlashImg;

/*
 * Work of the boot ROM that the MMIO write of BOOT_CMD / FLASH_CMD latches
 * and the boot ROM's worker (hpum_core_fw_step()) runs outside the lock: the
 * DMA read of the image and its verification.
 */
typedef enum HpuFwJobKind {
    HPU_FW_JOB_NONE,
    HPU_FW_JOB_BOOT_HOST,
    HPU_FW_JOB_BOOT_FLASH,
    HPU_FW_JOB_FLASH_WRITE,
} HpuFwJobKind;

typedef struct HpuFwJob {
    HpuFwJobKind kind;
    uint64_t addr;              /* FW_IMG_ADDR */
    uint32_t size;              /* FW_IMG_SIZE */
    uint32_t gen;               /* HpuRom.gen or hpu_flash.gen */
    uint32_t epoch;             /* HpuCore.epoch when taken */
    HpuFlashImg *flash;    /* BOOT_FLASH: a reference */
} HpuFwJob;

/* Boot ROM (BAR0 + 0x4014..0x405f). */
typedef struct HpuRom {
    uint32_t boot_error;
    uint64_t img_addr;
    uint32_t img_size;
    uint32_t gen;               /* bumped when a verification is abandoned */
    HpuFwJob job;      /* latched by BOOT_CMD, not yet taken */
    bool verified;              /* the verification of the boot finished */
    uint32_t result;            /* its refusal code */
    HpuFwInfo pending; /* the accepted image's tables */
    bool loaded;                /* fw describes the booting/running image */
    HpuFwInfo fw;
} HpuRom;

/* Flash */
typedef struct HpuFlash {
    HpuFlashImg *img;  /* NULL: empty */
    uint32_t version;           /* FLASH_VERSION */
    uint32_t status;            /* HPU_FLASH_* */
    uint32_t error;
    uint32_t gen;               /* bumped when a write is abandoned */
    bool verified;              /* the verification of the write finished */
    uint32_t result;
    HpuFlashImg *pending;  /* the accepted image, stored at the end */
    uint32_t pending_version;
    HpuFwJob job;      /* latched by FLASH_CMD, not yet taken */
} HpuFlash;

/* Mailbox (BAR0 + 0x4100) */
typedef struct HpuMbox {
    uint32_t cmd;
    uint32_t arg0;
    uint32_t arg1;
    uint32_t status;
    uint32_t resp0;
    uint32_t resp1;
    /* the request as latched by the MBOX_CMD write */
    uint32_t req_cmd;
    uint32_t req_arg0;
    uint32_t req_arg1;
} HpuMbox;

/* Sensors and the thermal model (BAR0 + 0x4200) */
typedef struct HpuSensors {
    double die_mc;
    double power_mw;
    uint32_t temp[HPU_NUM_TEMPS];
    uint32_t power;
    uint64_t energy_uj;
    double energy_frac;         /* below 1 uJ, carried over */
    uint32_t energy_hi;         /* latched by reading ENERGY_LO */
    unsigned int level;         /* current clock level */
    uint32_t throttle;
    uint32_t alarm;
    uint32_t seq;
    bool thermal_armed;
    bool power_armed;
    uint64_t busy_last[HPU_H1_DMA_ENGINES];     /* BUSY_NS at last period */
} HpuSensors;

/* BUSY_NS of an engine */
typedef struct HpuBusy {
    uint64_t ns;                /* completed packets */
    uint64_t start;             /* of the packet in execution */
    bool running;
    uint32_t hi;                /* latched by reading BUSY_NS_LO */
} HpuBusy;

/* Fault injection block (BAR0 + 0x3000). */
typedef struct HpuInj {
    uint32_t hang;              /* engine mask */
    uint32_t dma_fail;          /* engine mask */
    uint64_t ecc_addr;
    uint32_t mmu_inv;           /* INJ_MMU_INV: invalidations never complete */
    uint32_t quiesce;           /* INJ_QUIESCE: kept until power-on */
    uint32_t roce_cmd;          /* INJ_ROCE_CMD: RoCE commands never complete */
} HpuInj;

/* An event-queue entry before it is written. */
typedef struct HpuEvent {
    uint16_t id;
    uint8_t severity;
    uint8_t engine;
    uint16_t asid;
    uint64_t ts;                /* device time; 0: when written */
    uint64_t addr;
    uint32_t info;
} HpuEvent;

/*
 * Events raised under the lock (MMIO handlers, timers), written to the
 * event queue once the lock is dropped.
 */
typedef struct HpuDeferred {
    HpuEvent ev[HPU_DEFERRED_EVENTS];
    unsigned int head;
    unsigned int count;
    /* RESET_DONE, written to the slot reserved when the queue is enabled */
    uint32_t reset_done;        /* info of the next RESET_DONE, 0: none */
    bool rd_reserved;           /* slot 0 reserved for it */
    uint32_t rd_info;
    uint64_t rd_ts;
    uint32_t rd_gen;            /* hpu_eq.gen of the reservation */
} HpuDeferred;

/* Sparse HBM: 2 MiB chunks allocated (zero filled) on first write. */
typedef struct HpuHbm {
    uint64_t size;
    uint64_t bar_size;          /* BAR4's, hpum_config_bar4_size() */
    size_t nchunks;
    uint8_t **chunks;           /* atomic loads/stores; set under the lock */
    /*
     * All chunks' address space reserved (PROT_NONE, a chunk made
     * accessible when allocated), or NULL; a chunk the host would not
     * make accessible there has a mapping of its own.
     */
    uint8_t *base;
    uint64_t direct;            /* hpum_job_direct() accesses (under lock) */
    /*
     * Translations held per ASID, and invalidations (under the lock;
     * hpum_xlat_hold_locked(): direct accesses, TPC cores' slices): a
     * holder counts in @dir_cur[asid] while its ASID's @inv_gen is the
     * one it began with; an MMU_INV of the ASID moves them to @dir_stale
     * (their translations may be stale) and bumps @inv_gen.
     * MMU_INV_STATUS is BUSY while @dir_stale is non-zero.  Kept over
     * resets (the holders let go whatever the resets do).
     */
    uint32_t inv_gen[HPU_MMU_NUM_ASIDS];
    uint32_t dir_cur[HPU_MMU_NUM_ASIDS];
    uint32_t dir_stale;
    /*
     * Engine copies in progress outside the lock (atomic).  While it is
     * non-zero the scrubber zeroes chunks instead of freeing them.
     */
    unsigned int users;
    uint8_t *poison;            /* per 2 MiB page: ECC poisoned (atomic) */
    /*
     * A hard reset's clear, run by the worker (hpum_hbm_clear_step):
     * @clear_job while chunks from @clear_next on are left, @clear_done
     * once all are (the hard reset then completes).  Under the lock.
     */
    bool clear_job;
    bool clear_done;
    size_t clear_next;
} HpuHbm;

typedef struct HpuTlbEntry {
    uint64_t vpn;               /* virtual address >> 12 */
    uint64_t pa;                /* address of the 4 KiB page */
    uint16_t asid;
    bool valid;
    bool write;
    bool host;
    bool huge;                  /* from a 2 MiB leaf */
} HpuTlbEntry;

/* MMU, HBM window and scrubber block (BAR0 + 0x1000). */
typedef struct HpuMmu {
    uint32_t root_lo[HPU_MMU_NUM_ASIDS];
    uint32_t root_hi[HPU_MMU_NUM_ASIDS];
    uint32_t inv_count;
    bool inv_stuck;             /* MMU_INV under INJ_MMU_INV: BUSY for good */
    uint32_t fault_asid;
    uint64_t fault_va;
    uint32_t fault_info;
    uint32_t fault_count;
    uint64_t win_base;
    uint64_t scrub_addr;
    uint64_t scrub_size;
    uint32_t scrub_status;
    uint32_t scrub_count;
    /*
     * The scrub in progress (SCRUB_STATUS.BUSY), run by the worker
     * (hpum_core_fw_step()) a 2 MiB chunk at a time under the lock.
     */
    bool scrub_job;             /* latched by SCRUB_CTRL, not yet taken */
    uint64_t scrub_next;        /* next chunk to scrub */
    uint64_t scrub_end;         /* resets abandon the job (cleared) */
    HpuTlbEntry tlb[HPU_TLB_ENTRIES];
} HpuMmu;

/* Event queue block (BAR0 + 0x2000). */
typedef struct HpuEq {
    uint64_t base;
    uint32_t size;
    uint32_t pi;
    uint32_t ci;
    uint32_t ctrl;
    uint32_t dropped;
    uint32_t reserved;          /* entries handed to writers */
    uint32_t writers;           /* entry writes in flight */
    uint32_t gen;               /* bumped when the ring is re-initialised */
} HpuEq;

/* One stream of a queue manager. */
typedef struct HpuStream {
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
    /* spec version 9: registers */
    uint64_t wb;                /* WB_LO/HI */
    uint32_t irq_mod;
    uint64_t done;              /* DONE */
    uint64_t busy_ns;           /* BUSY_NS of the packets that ended */
    uint32_t done_hi;           /* latched by reading DONE_LO */
    uint32_t busy_hi;           /* latched by reading BUSY_NS_LO */
    /* spec version 9: state */
    bool executing;             /* a packet of it runs since @exec_start */
    uint64_t exec_start;
    uint32_t err_status;        /* last failed record since enable */
    uint32_t err_where;
    uint32_t held;              /* records not yet notified */
    uint64_t mod_deadline;      /* their notification is due; 0: none */
    bool notify_due;            /* a notification waits to be made */
    uint32_t notify_records;    /* ... covering these records */
    bool wb_busy;               /* its write-back record is being written */
    bool notify_engine;         /* ... then left to the engine's thread */
    /* spec version 10, user streams (hpu_uq.c): registers */
    uint16_t uq_asid;           /* ASID */
    uint64_t arm;               /* ARM_HI:ARM_LO, 0: not armed */
    uint32_t signal;            /* SIGNAL */
    uint32_t tmo_ms;            /* TMO_MS */
    uint64_t start;             /* START */
    /* spec version 10, user streams: state */
    bool uq_error;              /* STATUS.ERROR: error stop until RESUME */
    bool uq_fault;              /* STATUS.FAULT: queue fault until disabled */
    bool uq_timeout;            /* STATUS.TIMEOUT: until disabled */
    bool abort_req;             /* CTRL.ABORT: the stop completes ABORTED */
    bool notify_vec;            /* the notification due raises the vector */
    uint64_t fetch_ns;          /* device time the descriptor was fetched */
} HpuStream;

/* The class of an engine index (compute.md): which packets it runs. */
typedef enum HpuEngineClass {
    HPU_ENG_DMA,
    HPU_ENG_TPC,
    HPU_ENG_MME,
} HpuEngineClass;

typedef struct HpuMmeBufs HpuMmeBufs;  /* hpu_mme.c */
typedef struct HpuDmaRuns HpuDmaRuns;  /* hpu_mem.c */

typedef struct HpuEngine {
    HpuStream st[HPU_H1_STREAMS];
    unsigned int rr;            /* next stream to consider */
    bool busy;                  /* a step runs outside the lock */
    /*
     * INJ_HANG took it: runs nothing.  A compute engine is stuck in the
     * packet of stream @stuck_s and lets go when that stream is disabled
     * (compute.md); a DMA engine only with a reset.
     */
    bool stuck;
    unsigned int stuck_s;
    /*
     * The watchdog marked hung the stream @hung_s whose packet the engine
     * was executing (a compute engine): the engine lets go when that
     * stream's descriptor completes (disabled: ABORTED), not before.
     */
    bool hung_in;
    unsigned int hung_s;
    unsigned int run_s;         /* the stream of the step while @busy */
    /* packet, piece, tile or member done (atomic: hpum_engine_progress()) */
    uint64_t progress_ns;
    uint8_t *bounce;            /* HPU_DMA_PIECE bytes, engine thread only */
    HpuDmaRuns *dma_runs;       /* hpum_dma_copy()'s, engine thread only */
    HpuMmeBufs *mme;            /* MME work buffers, engine thread only */
} HpuEngine;

struct HpuCore {
    const HpuCoreOps *ops;
    void *opaque;
    HpuCoreConfig cfg;
    HpuCtrl ctrl;
    HpuHbm hbm;
    HpuMmu mmu;
    HpuEq eq;
    HpuEngine eng[HPU_H1_ENGINES];
    uint32_t sob[HPU_NUM_SOBS];
    HpuTimers tmr;
    HpuCpu cpu;
    HpuInj inj;
    HpuRom rom;
    HpuFlash flash;
    HpuMbox mbox;
    HpuSensors sens;
    HpuBusy busy[HPU_H1_ENGINES];
    HpuNicPort nic[HPU_NIC_MAX_PORTS];  /* spec version 7: cfg.nic_ports */
    HpuRoce *roce;                      /* spec version 7 part 2 */
    /*
     * TPC cores a launch is split across: ENGINES.TPC (HPU_H1_TPC_ENGINES)
     * from init; the unit tests lower it to compare splits.
     */
    unsigned int tpc_cores;
    /*
     * TPC f32 vector arithmetic may use the host's AVX2 and FMA when it has
     * them (true from init; the results are the same, which the unit tests
     * check by clearing it).
     */
    bool tpc_host_simd;
    HpuDeferred dq;
    bool resetting;             /* a soft reset is stopping the engines */
    bool hard_resetting;        /* STATUS.HARD_RESET_BUSY */
    uint64_t wdt_epoch;         /* device time of the last WDT_MS write */
    uint64_t irq_pending;       /* vectors to raise when the lock drops */
    bool notify_pending;        /* a stream's notify_due may be set */
    /*
     * Reset quiescing (spec version 5).  @epoch is bumped by power-on /
     * FLR, hard reset and hpum_core_kill(): work begun in an older epoch
     * writes nothing.  @inflight counts DMA and MSI-X calls of the current
     * epoch in progress without the lock (each begun under the lock by
     * hpum_dma_begin() after checking that its work is still current),
     * @inflight_old those begun before the last bump.  @in_reset: a
     * power-on reset or FLR is not done yet because @inflight_old is not
     * zero (BAR reads all ones, writes dropped, no MSI-X);
     * hpum_core_reset_finish() ends it.  @dead: hpum_core_kill() ran,
     * nothing reaches memory any more.  All under the lock.
     */
    uint32_t epoch;
    unsigned int inflight;
    unsigned int inflight_old;
    bool in_reset;
    bool dead;
    /*
     * Bumped (under the lock, read atomically) whenever something a job's
     * check looks at changes, or an MMU_INV waits for translations held:
     * hpum_job_alert().
     */
    uint32_t job_alert;
};

/*
 * Copy @n bytes from @src to @dst for an engine's bulk transfer (the ranges
 * must not overlap).  From HPU_COPY_BULK_MIN bytes on, the destination is
 * written with non-temporal stores where the host CPU has them: the bytes
 * go to memory, as a DMA engine's writes do, without each destination line
 * being read into a CPU cache first (a memcpy() of that size may do that:
 * glibc streams only above a threshold set by the last-level cache's
 * size), and with fewer of the vCPUs' cache lines evicted.  Everything
 * written is visible to other threads, in order, when it returns (a store
 * fence after the streamed bytes and after the rest).  Smaller copies, and every copy
 * on hosts without SSE2, are a plain memcpy() followed by a release fence.
 * Safe on any thread, with or without the lock.
 */
void hpum_copy_bulk(void *dst, const void *src, size_t n);

/*
 * Check a configuration against the property limits.  Returns true if it
 * is valid; otherwise false with a message in @err (if @err is not NULL).
 * @serial is the NUL-terminated property string.
 */
bool hpum_core_check_config(uint64_t hbm_size, unsigned int nic_ports,
                            const char *serial, char *err, size_t errlen);

/*
 * Fill @cfg from validated property values (@serial NUL-terminated, at
 * most HPU_SERIAL_LEN characters; @uuid HPU_UUID_LEN bytes).
 */
void hpum_core_make_config(HpuCoreConfig *cfg, uint64_t hbm_size,
                           unsigned int nic_ports, const char *serial,
                           const uint8_t *uuid);

/*
 * Parse the fw-pubkey property: 64 hex digits, or empty (no key).  Returns
 * false with a message in @err if it is malformed.
 */
bool hpum_core_parse_fw_key(const char *hex, HpuCoreConfig *cfg,
                            char *err, size_t errlen);

/*
 * Bind the core to its environment and apply a power-on reset.  The flash
 * content of @cfg is copied.  Returns false if memory cannot be allocated
 * (HBM chunk table, flash).
 */
bool hpum_core_init(HpuCore *c, const HpuCoreOps *ops,
                    void *opaque, const HpuCoreConfig *cfg);

/*
 * Free what hpum_core_init(), the engines and the boot ROM allocated (their
 * threads stopped).
 */
void hpum_core_fini(HpuCore *c);

/*
 * Power-on / PCI function reset: every register to its reset value, any
 * soft or hard reset in progress abandoned (timers cancelled), HBM and the
 * flash content kept (a flash write in progress is abandoned), the boot
 * ROM starting again (ROM_INIT, WAIT_IMAGE HPU_ROM_INIT_NS later).  Never
 * waits: if a DMA or MSI-X call begun before it is still in progress (on
 * another thread, or further up this thread's stack), the function stays
 * in reset (hpum_core_in_reset()) until the last one ends, reset_drained
 * is called and the environment calls hpum_core_reset_finish().
 */
void hpum_core_reset(HpuCore *c);

/*
 * Finish a power-on reset whose accesses in flight have drained: the
 * function leaves reset.  Returns true if it did now (the environment then
 * drops MSI-X messages it queued before); false if there was none or
 * accesses are still in flight.
 */
bool hpum_core_reset_finish(HpuCore *c);

/* Whether a power-on reset or FLR is not done yet.  Takes the core lock. */
bool hpum_core_in_reset(HpuCore *c);

/*
 * The device goes away (unrealize): from now on the core reaches neither
 * memory nor MSI-X nor the timer.  Never waits: a DMA or MSI-X call in
 * progress on another thread (or further up the calling thread's stack:
 * a DMA that re-entered the emulator and unplugged the device) returns
 * later and finds nothing more to do.  Only hpum_core_fini() may follow,
 * once no thread uses the core any more.
 */
void hpum_core_kill(HpuCore *c);

/*
 * BAR0 access of @size bytes (1..8) at @addr.  Accesses that break the
 * access rules are flagged in ERROR.BAD_ACCESS and logged; such a read
 * returns 0 and such a write is dropped.  While the function is in reset
 * a read returns all ones and a write is dropped (logged, no ERROR bit).
 */
uint64_t hpum_core_read(HpuCore *c, uint64_t addr, unsigned int size);
void hpum_core_write(HpuCore *c, uint64_t addr, uint64_t val,
                     unsigned int size);

/*
 * The timer armed through HpuCoreOps.arm_timer has expired: run every
 * device timer that is due (a stale or early call is harmless).
 */
void hpum_core_timer_expired(HpuCore *c);

/*
 * The size of BAR4 for @hbm_size bytes of HBM (spec version 8): the least
 * power of two that covers HBM, at least HPU_BAR_HBM_SIZE (64 MiB).
 */
uint64_t hpum_hbm_bar_size(uint64_t hbm_size);

/*
 * The size of BAR4 of a device made with @cfg: hpum_hbm_bar_size(), or
 * HPU_BAR_HBM_SIZE with cfg->bar4_v7 (a version 7 device).
 */
uint64_t hpum_config_bar4_size(const HpuCoreConfig *cfg);

/*
 * SPEC_VERSION of a device made with @cfg: HPU_SPEC_VERSION_VALUE, or 7
 * with cfg->bar4_v7.
 */
uint32_t hpum_config_spec_version(const HpuCoreConfig *cfg);

/*
 * BAR4, the HBM window: an access of @size bytes (1..8, any alignment) at
 * @addr (< hpum_config_bar4_size()), reaching HBM at HBM_WIN_BASE + @addr.
 * Bytes beyond HBM read as 0, are not written, and set ERROR.BAD_ACCESS.
 */
uint64_t hpum_core_hbm_window_read(HpuCore *c, uint64_t addr,
                                   unsigned int size);
void hpum_core_hbm_window_write(HpuCore *c, uint64_t addr,
                                uint64_t val, unsigned int size);

/*
 * Run one unit of work of engine @e (< HPU_H1_ENGINES: fetch a descriptor,
 * execute one packet, release a WAIT, write an ABORTED completion, or
 * make the notifications a drain left to it), taking its
 * streams round robin.  Returns whether the engine has more work at once.
 * The engine's thread calls it in a loop and sleeps (until kick_engine)
 * while hpum_core_engine_ready() is false; tests call it synchronously.
 * Only one thread may step a given engine.
 */
bool hpum_core_engine_step(HpuCore *c, unsigned int e);

/* Whether engine @e has work.  Call with the core lock held. */
bool hpum_core_engine_ready(HpuCore *c, unsigned int e);

/*
 * Run one job of the boot ROM, if one is latched (BOOT_CMD 1 or 2,
 * FLASH_CMD 1): take it under the core lock, read the image from the host
 * (dma_read) and verify it without the lock, then record the result under
 * the lock, unless a reset overtook the job (generation numbers).  The
 * result shows when the boot ROM's or the flash's timer fires.  Returns
 * whether a job ran.  The boot ROM's worker thread calls it while
 * hpum_core_fw_ready() is true and sleeps until kick_fw otherwise; tests
 * call it synchronously.  Only one thread may call it.
 *
 * The same worker runs the HBM scrubber (spec version 5): a SCRUB_CTRL
 * start only latches the job; each call scrubs one 2 MiB chunk under the
 * lock, and the call that scrubs the last one clears SCRUB_STATUS.BUSY.
 */
bool hpum_core_fw_step(HpuCore *c);

/* Whether the worker has a job.  Call with the core lock held. */
bool hpum_core_fw_ready(HpuCore *c);

/*
 * HBM backdoor for tests and debugging (no window, no MMU): copy @len
 * bytes between HBM offset @off and @buf.  Returns false if the range is
 * outside HBM.  Takes the core lock.
 */
bool hpum_core_hbm_read(HpuCore *c, uint64_t off, void *buf,
                        uint64_t len);
bool hpum_core_hbm_write(HpuCore *c, uint64_t off, const void *buf,
                         uint64_t len);

/* HBM bytes currently backed by host memory. */
uint64_t hpum_core_hbm_backed(HpuCore *c);

/*
 * Spec version 7 (nic.md).  The permanent MAC address of port @port of a
 * device with configuration @cfg.
 */
void hpum_core_nic_mac(const HpuCoreConfig *cfg, unsigned int port,
                       uint8_t mac[6]);

/*
 * Send up to HPU_NIC_TX_BUDGET frames of port @port's transmit ring:
 * descriptors and buffers read by DMA, frames handed to nic_send, statuses
 * written, TX_CI advanced.  Returns whether more work is ready (call again
 * soon).  The environment calls it after nic_kick_tx (QEMU: in a bottom
 * half); calls for one port must not overlap.
 */
bool hpum_core_nic_tx(HpuCore *c, unsigned int port);

/*
 * A frame of @len bytes (any length, any content) arrived at port @port
 * from its back end.  Returns true if the port took it (written to a
 * receive buffer, or dropped and counted as nic.md says), false if it
 * holds it for want of a receive descriptor: the environment keeps it and
 * offers it (and frames after it) again after nic_rx_kick, first in line.
 */
bool hpum_core_nic_receive(HpuCore *c, unsigned int port,
                           const uint8_t *buf, size_t len);

/* Port @port's back end changed its link: ask nic_link again. */
void hpum_core_nic_link_changed(HpuCore *c, unsigned int port);

/*
 * Spec version 7 part 2 (roce.md).  Run the RoCE engine's worker once:
 * the latched command, queued frames, doorbells and due timers, with the
 * frames it builds handed to nic_send at the end (without the lock).
 * Returns whether more work is ready (call again soon).  The environment
 * calls it after roce_kick (QEMU: a bottom half); calls must not overlap.
 */
bool hpum_core_roce_step(HpuCore *c);

#endif /* HPU_CORE_H */
