/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU: an emulated Gaudi-class deep-learning accelerator, PCIe glue.
 *
 * Usage:
 *   -device hpu[,hbm-size=4G][,nic-ports=10][,serial=STR][,uuid=UUID]
 *              [,fw-pubkey=HEX64][,fw-min-version=N][,fw-flash=FILE]
 *              [,hbm-bar=full|64M][,port0=NETDEV]...[,port9=NETDEV]
 *
 * Properties (Documentation/hw/registers.md, "Device properties"):
 *   hbm-size   HBM size, a multiple of 256 MiB from 256 MiB to 32 GiB
 *              (default 4G)
 *   nic-ports  number of NIC ports, 0 to 10 (default 10)
 *   serial     board serial, at most 16 printable ASCII characters
 *              (default HPU-0000000000)
 *   uuid       device UUID (default: random at start)
 *   hbm-bar    full: BAR4 covers HBM (spec version 8, the default); 64M:
 *              the 64 MiB BAR4 of spec version 7, and SPEC_VERSION reads 7
 *              (a device whose HBM the host cannot map into processes)
 *
 * Properties (Documentation/hw/firmware-and-telemetry.md, spec version 4):
 *   fw-pubkey       Ed25519 public key fused into the device, 64 hex digits
 *                   (default empty: no key, every image is refused NO_KEY)
 *   fw-min-version  anti-rollback fuse, fw_version format: bits 31:24 zero
 *                   (default 0)
 *   fw-flash        file loaded as the flash content at realize, at most
 *                   1 MiB (default: empty flash)
 *
 * Properties (Documentation/hw/nic.md, spec version 7):
 *   port0..port9    the network back end (-netdev id) of NIC port p, which
 *                   must be below nic-ports; a port without one has no link
 *
 * Each port with a back end is a QEMU NIC (qemu_new_nic, named
 * "<id>.port<p>" when the device has an id), with the port's permanent MAC
 * address (from the uuid property).  A TX_PI write only schedules the
 * port's transmit bottom half, which runs hpum_core_nic_tx() (descriptor
 * and buffer DMA, qemu_send_packet) in the main loop.  Frames from the
 * back end go to hpum_core_nic_receive() in the NIC's receive callback; a
 * frame that finds no posted receive descriptor is refused (receive
 * returns 0), so the back end's queue holds it and those after it (the
 * port's receive FIFO) until the port's receive bottom half flushes the
 * queue when RX_PI moves.  A reset purges that queue.
 *
 * The boot ROM's work runs in a thread of its own (hpum_fw_thread, "hpu-fw"):
 * the MMIO write of BOOT_CMD or FLASH_CMD only latches a job and wakes it;
 * the thread reads the image from the host with pci_dma_read (BOOT_CMD 1,
 * FLASH_CMD 1) into a private copy and verifies it (SHA-256, Ed25519 with
 * nettle) without the core lock, then records the result under it; the
 * result shows when the verification time (a device timer) has passed.
 *
 * The function is a PCIe endpoint (a root complex integrated endpoint when
 * plugged straight into q35's pcie.0) with:
 *   BAR0  64-bit, 16 MiB: registers, decoded by hpu_core.c
 *   BAR2  64-bit, 4 KiB: MSI-X table (offset 0) and PBA (offset 0x800),
 *         64 vectors
 *   BAR4  64-bit prefetchable, the least power of two of at least 64 MiB
 *         that covers HBM (64 MiB with hbm-bar=64M): HBM window, hpu_mem.c
 *
 * Each engine (8 DMA, the TPC cluster, 2 MMEs: spec version 6) runs in a
 * thread of its own (hpum_engine_thread: hpu-dmaN, hpu-tpc, hpu-mmeN),
 * which steps the core's engine and sleeps on a condition variable while it
 * has no work; a doorbell write only latches PI and wakes it.  The core's
 * state is guarded by s->lock, which the core takes itself.  Engines reach
 * guest memory with pci_dma_read/pci_dma_write (so they work behind a
 * vIOMMU), and large LIN_DMA segments without an IOMMU with pci_dma_map/
 * pci_dma_unmap (hpum_dma_bulk_map()); they raise MSI-X through a bottom
 * half, under the BQL.
 *
 * The core's device timers (soft and hard reset, boot ROM, management CPU
 * boot and heartbeat, engine watchdog, flash, mailbox, sensors) share one
 * QEMU_CLOCK_VIRTUAL timer, which the core keeps armed for the earliest
 * deadline.  An engine hung by fault
 * injection is not ready, so its thread sleeps on its condition variable
 * until a reset releases it; a hard reset never waits for a thread.
 *
 * Resets (machine reset, FLR through the PCIe capability's BCR_FLR, the
 * core's hard reset) never complete while a DMA or MSI-X message of the
 * device is in flight (spec version 5), and nothing ever waits for one
 * with the BQL dropped: the core counts them per epoch and a power-on
 * reset or FLR leaves the function "in reset" (BAR reads all ones, writes
 * and doorbells dropped, Transactions Pending set in Device Status) until
 * the last access begun before it ends; then a bottom half (hpum_reset_bh)
 * finishes it.
 *
 * A DMA or MSI-X message may re-enter QEMU and unplug the device (aimed at
 * its root port's slot control with native hot-plug), on a vCPU or on one
 * of the device's own threads.  So: every thread holds a reference to the
 * device for its lifetime and drops it through a bottom half in the main
 * loop; BAR and configuration accesses and the reset hold one while they
 * run; unrealize (hpum_exit) kills the core (no new DMA, MSI-X or timer
 * after it), tells the threads to quit and neither waits for them nor
 * frees anything, so it never drops the BQL; the device's state goes in
 * instance_finalize, once the last reference is gone, which is after
 * every thread has finished its work (joining it there is immediate).
 *
 * Guest programming errors are logged with -d guest_errors and latched in
 * the ERROR register; they never stop the emulator.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/range.h"
#include "qemu/rcu.h"
#include "qemu/thread.h"
#include "qemu/timer.h"
#include "qemu/uuid.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "system/dma.h"
#include "exec/address-spaces.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "hw/resettable.h"
#include "migration/vmstate.h"
#include "net/net.h"
#include "qom/object.h"

#include "hpu_core.h"
#include "trace.h"

#define TYPE_HPU "hpu"
OBJECT_DECLARE_SIMPLE_TYPE(HpuState, HPU)

#define HPU_PCIE_CAP_OFFSET     0x80
#define HPU_MSIX_BAR_SIZE       4096
#define HPU_MSIX_PBA_OFFSET     0x800

typedef struct HpuEngineThread {
    HpuState *s;
    unsigned int index;
    QemuThread thread;
    QemuCond cond;              /* work arrived; waited on with s->lock */
    bool quit;
    bool started;
} HpuEngineThread;

typedef struct HpuTpcPool HpuTpcPool;

/* A NIC port (spec version 7): its QEMU NIC and bottom halves. */
typedef struct HpuNicGlue {
    HpuState *s;
    unsigned int port;
    NICConf conf;               /* the portN property: conf.peers */
    NICState *nic;              /* NULL: no back end */
    QEMUBH *tx_bh;              /* hpum_core_nic_tx() */
    QEMUBH *rx_bh;              /* flush the back end's queue */
    bool purge;                 /* drop it first (atomic) */
} HpuNicGlue;

typedef struct HpuTpcWorker {
    HpuTpcPool *pool;
    unsigned int index;         /* the core it runs, 1..HPU_H1_TPC_ENGINES-1 */
    QemuThread thread;
} HpuTpcWorker;

/* The TPC engine's worker threads (hpum_run_parallel). */
struct HpuTpcPool {
    QemuMutex lock;             /* the fields below */
    QemuCond work;              /* a job or quit */
    QemuCond idle;              /* every worker is done with the job */
    void (*fn)(void *arg, unsigned int i);
    void *arg;
    unsigned int n;
    unsigned int done;          /* workers done with generation @gen */
    uint64_t gen;
    bool quit;
    bool started;
    HpuTpcWorker w[HPU_H1_TPC_ENGINES];
};

struct HpuState {
    PCIDevice parent_obj;

    MemoryRegion regs;
    MemoryRegion msix_bar;      /* BAR2: forwards to msix_store */
    MemoryRegion msix_store;    /* QEMU's MSI-X table and PBA, not mapped */
    MemoryRegion hbm_win;
    QEMUTimer *timer;
    QemuMutex lock;             /* the core lock */
    QEMUBH *irq_bh;             /* raises irq_pending from the main loop */
    uint64_t irq_pending;       /* vectors, atomic */
    HpuEngineThread eng[HPU_H1_ENGINES];
    HpuTpcPool tpc_pool;        /* the TPC cores but core 0 */
    QemuThread fw_thread;       /* the boot ROM's worker */
    QemuCond fw_cond;           /* a job arrived; waited on with s->lock */
    QEMUBH *reset_bh;           /* finishes a power-on reset / FLR */
    QEMUBH *roce_bh;            /* hpum_core_roce_step() */
    bool fw_quit;
    bool fw_started;
    HpuNicGlue nic[HPU_NIC_MAX_PORTS];
    bool core_ready;            /* realized: core, lock, conds, threads */
    bool dead;                  /* unrealized: no MSI-X, no timer (atomic) */
    uint8_t log_bus;            /* bus number for the log (atomic) */
    HpuCore core;

    /* properties */
    uint64_t hbm_size;
    uint8_t nic_ports;
    char *serial;
    QemuUUID uuid;
    char *fw_pubkey;
    uint32_t fw_min_version;
    char *fw_flash;
    uint8_t mme_threads;
    char *hbm_bar;
};

/* Environment of the core */

static void hpum_notify(PCIDevice *pdev, unsigned int vector)
{
    trace_hpu_msix(vector, msix_enabled(pdev));
    /* A masked vector is left pending by msix_notify(). */
    if (msix_enabled(pdev)) {
        msix_notify(pdev, vector);
    }
}

static void hpum_irq_bh(void *opaque)
{
    HpuState *s = HPU(opaque);
    uint64_t pending = qatomic_xchg(&s->irq_pending, 0);
    unsigned int v;

    if (qatomic_read(&s->dead) || hpum_core_in_reset(&s->core)) {
        if (pending) {
            trace_hpu_msix_drop(pending);
        }
        return;                 /* queued by work a reset overtook */
    }
    for (v = 0; pending; v++, pending >>= 1) {
        if (pending & 1) {
            hpum_notify(PCI_DEVICE(s), v);
        }
    }
}

/*
 * The core calls this without its lock.  From an MMIO handler or the timer
 * (BQL held) the message goes out at once; an engine thread defers it to
 * the main loop.
 */
static void hpum_raise_msix(void *opaque, unsigned int vector)
{
    HpuState *s = HPU(opaque);

    if (qatomic_read(&s->dead)) {
        return;
    }
    if (bql_locked()) {
        /* May re-enter QEMU and unplug the device: see hpum_exit(). */
        object_ref(OBJECT(s));
        hpum_notify(PCI_DEVICE(s), vector);
        object_unref(OBJECT(s));
        return;
    }
    qatomic_or(&s->irq_pending, 1ULL << vector);
    qemu_bh_schedule(s->irq_bh);
}

/*
 * The bus number is looked up only under the BQL while the device is
 * plugged: a worker thread may log after an unplug, when the device has no
 * bus any more; it prints the number last seen.
 */
static void G_GNUC_PRINTF(2, 3)
hpum_log_guest_error(void *opaque, const char *fmt, ...)
{
    HpuState *s = HPU(opaque);
    PCIDevice *pdev = PCI_DEVICE(opaque);
    g_autofree char *msg = NULL;
    va_list ap;

    if (!qemu_loglevel_mask(LOG_GUEST_ERROR)) {
        return;
    }
    if (bql_locked() && !qatomic_read(&s->dead)) {
        qatomic_set(&s->log_bus, pci_dev_bus_num(pdev));
    }
    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    qemu_log_mask(LOG_GUEST_ERROR, "hpu %02x:%02x.%x: %s\n",
                  qatomic_read(&s->log_bus), PCI_SLOT(pdev->devfn),
                  PCI_FUNC(pdev->devfn), msg);
}

static void hpum_arm_timer(void *opaque, uint64_t ns)
{
    HpuState *s = HPU(opaque);

    if (qatomic_read(&s->dead)) {
        return;
    }
    timer_mod(s->timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ns);
}

static void hpum_cancel_timer(void *opaque)
{
    HpuState *s = HPU(opaque);

    timer_del(s->timer);
}

static uint64_t hpum_now_ns(void *opaque)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

/*
 * The one-copy LIN_DMA segments (dma_read_bulk/dma_write_bulk) of
 * HPU_COPY_BULK_MIN bytes or more map guest RAM and copy with
 * hpum_copy_bulk().  Only a range that the bus-master address space
 * reaches as RAM in one piece (bus mastering on, not MMIO, not ROM for a
 * write) is mapped, and only when that address space is system memory
 * itself: behind an IOMMU every access stays a pci_dma_read or
 * pci_dma_write, so the IOMMU translates, and reports a fault, once per
 * access.  (The address space is connected at machine-done, after
 * realize, so it is looked at on each access.)  Everything else, and a
 * mapping that comes back short or bounced, takes pci_dma_read/
 * pci_dma_write, which report errors.  The check and the map each look at
 * the current memory map: should the guest move a BAR over the range
 * between the two, the map reads up to a bounce buffer of MMIO that the
 * fallback then reads again.  Called in the caller's RCU read-side
 * critical section.  Returns the mapping of all @len bytes
 * (hpum_dma_bulk_unmap() ends it), or NULL.
 */
static void *hpum_dma_bulk_map(PCIDevice *pdev, uint64_t addr, uint64_t len,
                               bool write)
{
    DMADirection dir = write ? DMA_DIRECTION_FROM_DEVICE
                             : DMA_DIRECTION_TO_DEVICE;
    MemoryRegion *mr;
    hwaddr xlat, l = len;
    dma_addr_t mapped = len;
    ram_addr_t off;
    void *p;

    if (len < HPU_COPY_BULK_MIN ||
        pdev->bus_master_enable_region.alias != get_system_memory()) {
        return NULL;
    }
    mr = address_space_translate(pci_get_address_space(pdev), addr, &xlat,
                                 &l, write, MEMTXATTRS_UNSPECIFIED);
    if (l < len || !memory_access_is_direct(mr, write,
                                            MEMTXATTRS_UNSPECIFIED)) {
        return NULL;
    }
    p = pci_dma_map(pdev, addr, &mapped, dir);
    if (p && (mapped < len || !memory_region_from_host(p, &off))) {
        pci_dma_unmap(pdev, p, mapped, dir, 0);
        return NULL;
    }
    return p;
}

/*
 * The unmap of a write marks the bytes dirty and drops code translated
 * from them.
 */
static void hpum_dma_bulk_unmap(PCIDevice *pdev, void *p, uint64_t len,
                                bool write)
{
    pci_dma_unmap(pdev, p, len,
                  write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE,
                  write ? len : 0);
}

/*
 * DMA goes through the device's bus-master address space, which unrealize
 * destroys (call_rcu) without waiting for the device's threads.  So the
 * whole access runs in one RCU read-side critical section that begins
 * before the dead check: either the device was still plugged then, and the
 * address space is not freed before the access is done, or the access is
 * refused.
 */
static int hpum_dma_read(void *opaque, uint64_t addr, void *buf, uint64_t len)
{
    int err;

    RCU_READ_LOCK_GUARD();

    if (qatomic_load_acquire(&HPU(opaque)->dead)) {
        return 1;
    }
    err = pci_dma_read(PCI_DEVICE(opaque), addr, buf, len) != MEMTX_OK;
    trace_hpu_dma_read(addr, len, err);
    return err;
}

static int hpum_dma_write(void *opaque, uint64_t addr, const void *buf,
                          uint64_t len)
{
    int err;

    RCU_READ_LOCK_GUARD();

    if (qatomic_load_acquire(&HPU(opaque)->dead)) {
        return 1;
    }
    err = pci_dma_write(PCI_DEVICE(opaque), addr, buf, len) != MEMTX_OK;
    trace_hpu_dma_write(addr, len, err);
    return err;
}

/*
 * A one-copy segment: into @in from guest memory, or from @out (not NULL)
 * to it.  The map path drops the barrier that pci_dma_read/pci_dma_write
 * make before an access (dma_barrier()): it is made here, so the segment
 * is ordered after every earlier access of the engine, as PCIe orders them.
 */
static int hpum_dma_bulk(void *opaque, uint64_t addr, void *in,
                         const void *out, uint64_t len)
{
    PCIDevice *pdev = PCI_DEVICE(opaque);
    bool write = out != NULL;
    void *p;

    RCU_READ_LOCK_GUARD();

    if (qatomic_load_acquire(&HPU(opaque)->dead)) {
        return 1;
    }
    p = hpum_dma_bulk_map(pdev, addr, len, write);
    if (!p) {
        return write ? hpum_dma_write(opaque, addr, out, len)
                     : hpum_dma_read(opaque, addr, in, len);
    }
    smp_mb();   /* after the engine's earlier accesses, as dma_barrier() */
    if (write) {
        hpum_copy_bulk(p, out, len);
        trace_hpu_dma_write(addr, len, 0);
    } else {
        hpum_copy_bulk(in, p, len);
        trace_hpu_dma_read(addr, len, 0);
    }
    hpum_dma_bulk_unmap(pdev, p, len, write);
    return 0;
}

static int hpum_dma_read_bulk(void *opaque, uint64_t addr, void *buf,
                              uint64_t len)
{
    return hpum_dma_bulk(opaque, addr, buf, NULL, len);
}

static int hpum_dma_write_bulk(void *opaque, uint64_t addr, const void *buf,
                               uint64_t len)
{
    return hpum_dma_bulk(opaque, addr, NULL, buf, len);
}

static void hpum_pci_lock(void *opaque)
{
    qemu_mutex_lock(&HPU(opaque)->lock);
}

static void hpum_pci_unlock(void *opaque)
{
    qemu_mutex_unlock(&HPU(opaque)->lock);
}

static void hpum_kick_engine(void *opaque, unsigned int engine)
{
    qemu_cond_signal(&HPU(opaque)->eng[engine].cond);
}

static void hpum_kick_fw(void *opaque)
{
    qemu_cond_signal(&HPU(opaque)->fw_cond);
}

/*
 * Called with s->lock held, on any thread: the last access begun before a
 * power-on reset or FLR has ended.  The reset is finished in the main loop.
 */
static void hpum_reset_drained(void *opaque)
{
    qemu_bh_schedule(HPU(opaque)->reset_bh);
}

static void hpum_reset_bh(void *opaque)
{
    HpuState *s = HPU(opaque);

    if (qatomic_read(&s->dead)) {
        return;
    }
    if (hpum_core_reset_finish(&s->core)) {
        /* MSI-X messages queued by work the reset overtook go too. */
        qatomic_set(&s->irq_pending, 0);
    }
}

/* The core's trace points: the events of the core in trace-events. */
static void hpum_trace(void *opaque, HpuTraceId id, const uint64_t *a)
{
    switch (id) {
    case HPU_TRACE_DOORBELL:
        trace_hpu_doorbell(a[0], a[1], a[2]);
        break;
    case HPU_TRACE_DESC_FETCH:
        trace_hpu_desc_fetch(a[0], a[1], a[2], a[3], a[4], a[5]);
        break;
    case HPU_TRACE_PACKET:
        trace_hpu_packet(a[0], a[1], a[2], a[3], a[4], a[5]);
        break;
    case HPU_TRACE_COMPLETION:
        trace_hpu_completion(a[0], a[1], a[2], (int32_t)a[3], a[4]);
        break;
    case HPU_TRACE_MMU_FAULT:
        trace_hpu_mmu_fault(a[0], a[1], a[2], a[3]);
        break;
    case HPU_TRACE_EVENT:
        trace_hpu_event(a[0], a[1], a[2], a[3]);
        break;
    case HPU_TRACE_SOFT_RESET:
        trace_hpu_soft_reset(a[0]);
        break;
    case HPU_TRACE_HARD_RESET:
        trace_hpu_hard_reset(a[0]);
        break;
    case HPU_TRACE_RESET:
        trace_hpu_reset(a[0]);
        break;
    case HPU_TRACE_RESET_FINISH:
        trace_hpu_reset_finish();
        break;
    case HPU_TRACE_DMA_RUNS:
        trace_hpu_dma_runs(a[0], a[1], a[2], a[3], a[4]);
        break;
    case HPU_TRACE_NIC_DOORBELL:
        trace_hpu_nic_doorbell(a[0], a[1], a[2]);
        break;
    case HPU_TRACE_NIC_TX:
        trace_hpu_nic_tx(a[0], a[1], a[2], a[3], a[4], a[5]);
        break;
    case HPU_TRACE_NIC_RX:
        trace_hpu_nic_rx(a[0], a[1], a[2], a[3], a[4]);
        break;
    case HPU_TRACE_NIC_DROP:
        trace_hpu_nic_drop(a[0], a[1], a[2]);
        break;
    case HPU_TRACE_NIC_LINK:
        trace_hpu_nic_link(a[0], a[1], a[2]);
        break;
    case HPU_TRACE_ROCE_CMD:
        trace_hpu_roce_cmd(a[0], a[1], a[2]);
        break;
    case HPU_TRACE_ROCE_DOORBELL:
        trace_hpu_roce_doorbell(a[0], a[1], a[2], a[3]);
        break;
    case HPU_TRACE_ROCE_TX:
        trace_hpu_roce_tx(a[0], a[1], a[2], a[3], a[4]);
        break;
    case HPU_TRACE_ROCE_RX:
        trace_hpu_roce_rx(a[0], a[1], a[2], a[3], a[4]);
        break;
    case HPU_TRACE_ROCE_CQE:
        trace_hpu_roce_cqe(a[0], a[1], a[2], a[3]);
        break;
    case HPU_TRACE_ROCE_QP_ERR:
        trace_hpu_roce_qp_err(a[0], a[1]);
        break;
    case HPU_TRACE_NOTIFY:
        trace_hpu_notify(a[0], a[1], a[2], a[3], a[4], a[5]);
        break;
    case HPU_TRACE_UQ_DOORBELL:
        trace_hpu_uq_doorbell(a[0], a[1], a[2], a[3], a[4], a[5]);
        break;
    case HPU_TRACE_UQ_STOP:
        trace_hpu_uq_stop(a[0], a[1], a[2], a[3], a[4], a[5]);
        break;
    case HPU_TRACE_COUNT:
        break;
    }
}

/*
 * HpuCoreOps.run_parallel: the TPC cores of a launch on the TPC engine's
 * pool of HPU_H1_TPC_ENGINES - 1 worker threads (the calling engine thread
 * runs core 0).  A launch is a generation of the pool: each worker runs
 * its index of the current job once, then counts itself done.  Workers
 * take part in RCU as engine threads do, since they DMA; they hold no
 * reference to the device: they only run inside a call of the TPC
 * engine's thread, which holds one, and instance_finalize joins them.
 */
static void *hpum_tpc_worker(void *opaque)
{
    HpuTpcWorker *w = opaque;
    HpuTpcPool *p = w->pool;
    uint64_t seen = 0;

    rcu_register_thread();
    qemu_mutex_lock(&p->lock);
    for (;;) {
        while (!p->quit && p->gen == seen) {
            qemu_cond_wait(&p->work, &p->lock);
        }
        if (p->gen != seen) {
            void (*fn)(void *arg, unsigned int i) = p->fn;
            void *arg = p->arg;
            bool mine = w->index < p->n;

            seen = p->gen;
            qemu_mutex_unlock(&p->lock);
            if (mine) {
                fn(arg, w->index);
            }
            qemu_mutex_lock(&p->lock);
            if (++p->done == HPU_H1_TPC_ENGINES - 1) {
                qemu_cond_signal(&p->idle);
            }
            continue;
        }
        break;                  /* quit, no job left */
    }
    qemu_mutex_unlock(&p->lock);
    rcu_unregister_thread();
    return NULL;
}

static void hpum_run_parallel(void *opaque,
                              void (*fn)(void *arg, unsigned int i),
                              void *arg, unsigned int n)
{
    HpuTpcPool *p = &HPU(opaque)->tpc_pool;
    unsigned int i;

    qemu_mutex_lock(&p->lock);
    if (p->quit) {
        /* the workers are gone or going: one core after the other */
        qemu_mutex_unlock(&p->lock);
        for (i = 0; i < n; i++) {
            fn(arg, i);
        }
        return;
    }
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->done = 0;
    p->gen++;
    qemu_cond_broadcast(&p->work);
    qemu_mutex_unlock(&p->lock);
    if (n) {
        fn(arg, 0);
    }
    qemu_mutex_lock(&p->lock);
    while (p->done < HPU_H1_TPC_ENGINES - 1) {
        qemu_cond_wait(&p->idle, &p->lock);
    }
    qemu_mutex_unlock(&p->lock);
}

static void hpum_start_tpc_pool(HpuState *s)
{
    HpuTpcPool *p = &s->tpc_pool;
    unsigned int i;

    qemu_mutex_init(&p->lock);
    qemu_cond_init(&p->work);
    qemu_cond_init(&p->idle);
    p->quit = false;
    p->gen = 0;
    for (i = 1; i < HPU_H1_TPC_ENGINES; i++) {
        HpuTpcWorker *w = &p->w[i];

        w->pool = p;
        w->index = i;
        qemu_thread_create(&w->thread, "hpu-tpc-core", hpum_tpc_worker, w,
                           QEMU_THREAD_JOINABLE);
    }
    p->started = true;
}

static void hpum_stop_tpc_pool(HpuState *s)
{
    HpuTpcPool *p = &s->tpc_pool;

    if (!p->started) {
        return;
    }
    qemu_mutex_lock(&p->lock);
    p->quit = true;
    qemu_cond_broadcast(&p->work);
    qemu_mutex_unlock(&p->lock);
}

static void hpum_join_tpc_pool(HpuState *s)
{
    HpuTpcPool *p = &s->tpc_pool;
    unsigned int i;

    if (!p->started) {
        return;
    }
    for (i = 1; i < HPU_H1_TPC_ENGINES; i++) {
        qemu_thread_join(&p->w[i].thread);
    }
    p->started = false;
    qemu_cond_destroy(&p->work);
    qemu_cond_destroy(&p->idle);
    qemu_mutex_destroy(&p->lock);
}

/* NIC ports (spec version 7) */

/* From hpum_core_nic_tx(), in the port's transmit bottom half. */
static void hpum_nic_send(void *opaque, unsigned int port, const uint8_t *buf,
                          uint32_t len)
{
    HpuNicGlue *g = &HPU(opaque)->nic[port];

    trace_hpu_nic_send(port, len);
    if (g->nic && !qatomic_read(&g->s->dead)) {
        qemu_send_packet(qemu_get_queue(g->nic), buf, len);
    }
}

/* With the core lock held, on any thread: only schedule. */
static void hpum_nic_kick_tx(void *opaque, unsigned int port)
{
    qemu_bh_schedule(HPU(opaque)->nic[port].tx_bh);
}

static void hpum_nic_rx_kick(void *opaque, unsigned int port, bool purge)
{
    HpuNicGlue *g = &HPU(opaque)->nic[port];

    if (purge) {
        qatomic_set(&g->purge, true);
    }
    qemu_bh_schedule(g->rx_bh);
}

static uint32_t hpum_nic_link(void *opaque, unsigned int port)
{
    HpuNicGlue *g = &HPU(opaque)->nic[port];
    NetClientState *nc;

    if (!g->nic) {
        return 0;
    }
    nc = qemu_get_queue(g->nic);
    if (!nc->peer) {
        return 0;
    }
    return HPU_NIC_LINK_STATUS_ATTACHED | (nc->link_down ? 0 : HPU_NIC_LINK_STATUS_UP);
}

/* With the core lock held, on any thread: only schedule. */
static void hpum_roce_kick(void *opaque)
{
    qemu_bh_schedule(HPU(opaque)->roce_bh);
}

static void hpum_roce_bh(void *opaque)
{
    HpuState *s = opaque;

    if (qatomic_read(&s->dead)) {
        return;
    }
    object_ref(OBJECT(s));      /* its DMA may unplug the device */
    if (hpum_core_roce_step(&s->core)) {
        qemu_bh_schedule(s->roce_bh);
    }
    object_unref(OBJECT(s));
}

static void hpum_nic_tx_bh(void *opaque)
{
    HpuNicGlue *g = opaque;
    HpuState *s = g->s;

    if (qatomic_read(&s->dead)) {
        return;
    }
    object_ref(OBJECT(s));      /* its DMA may unplug the device */
    if (hpum_core_nic_tx(&s->core, g->port)) {
        qemu_bh_schedule(g->tx_bh);
    }
    object_unref(OBJECT(s));
}

/* The port takes frames again: offer it those its back end holds. */
static void hpum_nic_rx_bh(void *opaque)
{
    HpuNicGlue *g = opaque;
    NetClientState *nc;

    if (qatomic_read(&g->s->dead) || !g->nic) {
        return;
    }
    nc = qemu_get_queue(g->nic);
    if (qatomic_xchg(&g->purge, false) && nc->peer) {
        trace_hpu_nic_purge(g->port);
        qemu_purge_queued_packets(nc->peer);
    }
    qemu_flush_queued_packets(nc);
}

/*
 * A frame from the wire (hostile: any length, any content).  0 leaves it
 * in the back end's queue: the port found no receive descriptor.
 */
static ssize_t hpum_nic_receive(NetClientState *nc, const uint8_t *buf,
                                size_t size)
{
    HpuNicGlue *g = qemu_get_nic_opaque(nc);
    HpuState *s = g->s;
    bool took;

    if (qatomic_read(&s->dead)) {
        return size;
    }
    object_ref(OBJECT(s));
    took = hpum_core_nic_receive(&s->core, g->port, buf, size);
    object_unref(OBJECT(s));
    trace_hpu_nic_receive(g->port, size, took);
    return took ? size : 0;
}

static void hpum_nic_link_status_changed(NetClientState *nc)
{
    HpuNicGlue *g = qemu_get_nic_opaque(nc);

    if (!qatomic_read(&g->s->dead)) {
        hpum_core_nic_link_changed(&g->s->core, g->port);
    }
}

static NetClientInfo hpum_nic_info = {
    .type = NET_CLIENT_DRIVER_NIC,
    .size = sizeof(NICState),
    .receive = hpum_nic_receive,
    .link_status_changed = hpum_nic_link_status_changed,
};

/*
 * Realize: a back end only for the device's ports, one port each (the
 * property setter cannot see two ports of one device taking the same).
 */
static bool hpum_nic_check(HpuState *s, Error **errp)
{
    unsigned int p, q;

    for (p = 0; p < HPU_NIC_MAX_PORTS; p++) {
        NetClientState *nc = s->nic[p].conf.peers.ncs[0];

        if (!nc) {
            continue;
        }
        if (p >= s->nic_ports) {
            error_setg(errp, "port%u: the device has %u NIC ports "
                       "(nic-ports)", p, s->nic_ports);
            return false;
        }
        for (q = 0; q < p; q++) {
            if (s->nic[q].conf.peers.ncs[0] == nc) {
                error_setg(errp, "port%u and port%u: netdev '%s' is in use",
                           q, p, nc->name);
                return false;
            }
        }
        if (nc->peer) {
            error_setg(errp, "port%u: netdev '%s' is in use", p, nc->name);
            return false;
        }
    }
    return true;
}

/* Realize, before the core: bottom halves, and a NIC per back end. */
static void hpum_nic_create(HpuState *s, const HpuCoreConfig *cfg)
{
    DeviceState *dev = DEVICE(s);
    unsigned int p;

    for (p = 0; p < s->nic_ports; p++) {
        HpuNicGlue *g = &s->nic[p];
        g_autofree char *name = NULL;

        g->s = s;
        g->port = p;
        g->tx_bh = qemu_bh_new_guarded(hpum_nic_tx_bh, g,
                                       &dev->mem_reentrancy_guard);
        g->rx_bh = qemu_bh_new_guarded(hpum_nic_rx_bh, g,
                                       &dev->mem_reentrancy_guard);
        if (!g->conf.peers.ncs[0]) {
            continue;
        }
        hpum_core_nic_mac(cfg, p, g->conf.macaddr.a);
        if (dev->id) {
            name = g_strdup_printf("%s.port%u", dev->id, p);
        }
        g->nic = qemu_new_nic(&hpum_nic_info, &g->conf,
                              object_get_typename(OBJECT(s)), name,
                              &dev->mem_reentrancy_guard, g);
        qemu_format_nic_info_str(qemu_get_queue(g->nic), g->conf.macaddr.a);
    }
}

/*
 * Unrealize leaves the NICs to this bottom half: unrealize may run inside
 * one of their receive callbacks (its DMA unplugged the device), which
 * must not find its NIC freed.  Here the back ends are let go at once, so
 * a device plugged again may take them (the device's state goes later,
 * after its threads).
 */
static void hpum_nic_del_bh(void *opaque)
{
    HpuState *s = opaque;
    unsigned int p;

    for (p = 0; p < HPU_NIC_MAX_PORTS; p++) {
        if (s->nic[p].nic) {
            qemu_del_nic(s->nic[p].nic);
            s->nic[p].nic = NULL;
        }
    }
    object_unref(OBJECT(s));
}

/*
 * instance_finalize (or a failed realize): no thread uses the core, and
 * no NIC callback runs (they run in the main loop, as this does).
 */
static void hpum_nic_destroy(HpuState *s)
{
    unsigned int p;

    for (p = 0; p < HPU_NIC_MAX_PORTS; p++) {
        HpuNicGlue *g = &s->nic[p];

        if (g->nic) {
            qemu_del_nic(g->nic);
            g->nic = NULL;
        }
        if (g->tx_bh) {
            qemu_bh_delete(g->tx_bh);
            qemu_bh_delete(g->rx_bh);
            g->tx_bh = g->rx_bh = NULL;
        }
    }
}

static const HpuCoreOps hpum_pci_core_ops = {
    .raise_msix = hpum_raise_msix,
    .log_guest_error = hpum_log_guest_error,
    .arm_timer = hpum_arm_timer,
    .cancel_timer = hpum_cancel_timer,
    .now_ns = hpum_now_ns,
    .dma_read = hpum_dma_read,
    .dma_write = hpum_dma_write,
    .dma_read_bulk = hpum_dma_read_bulk,
    .dma_write_bulk = hpum_dma_write_bulk,
    .lock = hpum_pci_lock,
    .unlock = hpum_pci_unlock,
    .kick_engine = hpum_kick_engine,
    .kick_fw = hpum_kick_fw,
    .reset_drained = hpum_reset_drained,
    .trace = hpum_trace,
    .run_parallel = hpum_run_parallel,
    .nic_send = hpum_nic_send,
    .nic_kick_tx = hpum_nic_kick_tx,
    .nic_rx_kick = hpum_nic_rx_kick,
    .nic_link = hpum_nic_link,
    .roce_kick = hpum_roce_kick,
};

/*
 * The reference a thread holds on the device goes in the main loop: the
 * last one finalizes the device, which must not happen on the thread
 * itself.
 */
static void hpum_unref_bh(void *opaque)
{
    object_unref(OBJECT(opaque));
}

static void hpum_thread_done(HpuState *s)
{
    aio_bh_schedule_oneshot(qemu_get_aio_context(), hpum_unref_bh, s);
}

/* Engine threads */

static void *hpum_engine_thread(void *opaque)
{
    HpuEngineThread *t = opaque;
    HpuState *s = t->s;

    /*
     * DMA looks up the guest's memory map under RCU: a thread that is not
     * registered is not waited for when the map changes (a BAR moved, a
     * reset), and would walk a freed FlatView.
     */
    rcu_register_thread();
    for (;;) {
        qemu_mutex_lock(&s->lock);
        while (!t->quit && !hpum_core_engine_ready(&s->core, t->index)) {
            qemu_cond_wait(&t->cond, &s->lock);
        }
        if (t->quit) {
            qemu_mutex_unlock(&s->lock);
            break;
        }
        qemu_mutex_unlock(&s->lock);
        hpum_core_engine_step(&s->core, t->index);
    }
    rcu_unregister_thread();
    hpum_thread_done(s);         /* touches nothing of s after this */
    return NULL;
}

static void hpum_start_engines(HpuState *s)
{
    unsigned int e;

    for (e = 0; e < HPU_H1_ENGINES; e++) {
        HpuEngineThread *t = &s->eng[e];
        char name[16];

        t->s = s;
        t->index = e;
        t->quit = false;
        qemu_cond_init(&t->cond);
        if (e < HPU_ENGINE_TPC) {
            snprintf(name, sizeof(name), "hpu-dma%u", e);
        } else if (e == HPU_ENGINE_TPC) {
            snprintf(name, sizeof(name), "hpu-tpc");
        } else {
            snprintf(name, sizeof(name), "hpu-mme%u", e - HPU_ENGINE_MME0);
        }
        object_ref(OBJECT(s));  /* dropped by hpum_thread_done() */
        qemu_thread_create(&t->thread, name, hpum_engine_thread, t,
                           QEMU_THREAD_JOINABLE);
        t->started = true;
    }
}

/* The boot ROM's worker: reads and verifies images (hpum_core_fw_step). */
static void *hpum_fw_thread(void *opaque)
{
    HpuState *s = opaque;

    rcu_register_thread();      /* as hpum_engine_thread() */
    for (;;) {
        qemu_mutex_lock(&s->lock);
        while (!s->fw_quit && !hpum_core_fw_ready(&s->core)) {
            qemu_cond_wait(&s->fw_cond, &s->lock);
        }
        if (s->fw_quit) {
            qemu_mutex_unlock(&s->lock);
            break;
        }
        qemu_mutex_unlock(&s->lock);
        hpum_core_fw_step(&s->core);
    }
    rcu_unregister_thread();
    hpum_thread_done(s);
    return NULL;
}

static void hpum_start_fw(HpuState *s)
{
    s->fw_quit = false;
    qemu_cond_init(&s->fw_cond);
    object_ref(OBJECT(s));
    qemu_thread_create(&s->fw_thread, "hpu-fw", hpum_fw_thread, s,
                       QEMU_THREAD_JOINABLE);
    s->fw_started = true;
}

/*
 * Tell the engine threads and the boot ROM's worker to quit, without
 * waiting for them: one may be inside a DMA that needs the BQL to finish
 * (a DMA to MMIO), or be the calling thread itself (unrealize inside a DMA
 * that unplugged the device).  Each drops its reference to the device when
 * it is done (hpum_thread_done), and instance_finalize joins them.  A job
 * the worker has not taken is freed with the core (hpum_core_fini).
 */
static void hpum_stop_threads(HpuState *s)
{
    unsigned int e;

    qemu_mutex_lock(&s->lock);
    for (e = 0; e < HPU_H1_ENGINES; e++) {
        s->eng[e].quit = true;
        qemu_cond_signal(&s->eng[e].cond);
    }
    s->fw_quit = true;
    qemu_cond_signal(&s->fw_cond);
    qemu_mutex_unlock(&s->lock);
    hpum_stop_tpc_pool(s);
}

/* instance_finalize: the last thread is gone or going (it dropped its ref). */
static void hpum_join_rest(HpuState *s)
{
    unsigned int e;

    for (e = 0; e < HPU_H1_ENGINES; e++) {
        if (s->eng[e].started) {
            qemu_thread_join(&s->eng[e].thread);
            s->eng[e].started = false;
        }
    }
    if (s->fw_started) {
        qemu_thread_join(&s->fw_thread);
        s->fw_started = false;
    }
    hpum_join_tpc_pool(s);
}

static void hpum_timer_cb(void *opaque)
{
    HpuState *s = HPU(opaque);

    object_ref(OBJECT(s));
    hpum_core_timer_expired(&s->core);
    object_unref(OBJECT(s));
}

/* BAR0 */

/*
 * An access may raise MSI-X or write events, which may unplug the device:
 * hold a reference.
 */
static uint64_t hpum_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    HpuState *s = HPU(opaque);
    uint64_t val;

    object_ref(OBJECT(s));
    val = hpum_core_read(&s->core, addr, size);
    object_unref(OBJECT(s));
    trace_hpu_reg_read(addr, size, val);
    return val;
}

static void hpum_regs_write(void *opaque, hwaddr addr, uint64_t val,
                            unsigned size)
{
    HpuState *s = HPU(opaque);

    trace_hpu_reg_write(addr, size, val);
    object_ref(OBJECT(s));
    hpum_core_write(&s->core, addr, val, size);
    object_unref(OBJECT(s));
}

/*
 * Every size and alignment reaches the core, which applies the access
 * rules of the spec (aligned 32-bit only) itself.
 */
static const MemoryRegionOps hpum_regs_ops = {
    .read = hpum_regs_read,
    .write = hpum_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};

/*
 * BAR2: the MSI-X table and PBA.  QEMU's MSI-X emulation sits in a
 * container that is never mapped (msix_store); the BAR forwards to it
 * while the device is plugged.  After an unplug a vCPU may still dispatch
 * an access it translated before the memory map changed (under TCG a vCPU
 * takes the new map only when it next leaves its execution loop), and by
 * then hpum_exit() has freed the MSI-X state: such an access reads all ones
 * and its write goes nowhere, as for a device that is gone.  Called with
 * the BQL held, as hpum_exit() is.
 */
static MemoryRegion *hpum_msix_target(HpuState *s, hwaddr *addr,
                                      unsigned size)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    MemoryRegion *mr = &pdev->msix_table_mmio;

    if (qatomic_read(&s->dead) || !msix_present(pdev)) {
        return NULL;
    }
    if (*addr >= HPU_MSIX_PBA_OFFSET) {
        *addr -= HPU_MSIX_PBA_OFFSET;
        mr = &pdev->msix_pba_mmio;
    }
    if (*addr + size > memory_region_size(mr)) {
        return NULL;            /* reserved: reads 0, writes ignored */
    }
    return mr;
}

static MemTxResult hpum_msix_read(void *opaque, hwaddr addr, uint64_t *data,
                                  unsigned size, MemTxAttrs attrs)
{
    HpuState *s = HPU(opaque);
    MemoryRegion *mr;

    if (qatomic_read(&s->dead)) {
        *data = MAKE_64BIT_MASK(0, size * 8);
        return MEMTX_OK;
    }
    mr = hpum_msix_target(s, &addr, size);
    if (!mr) {
        *data = 0;
        return MEMTX_OK;
    }
    return memory_region_dispatch_read(mr, addr, data,
                                       size_memop(size) | MO_LE, attrs);
}

static MemTxResult hpum_msix_write(void *opaque, hwaddr addr, uint64_t data,
                                   unsigned size, MemTxAttrs attrs)
{
    HpuState *s = HPU(opaque);
    MemoryRegion *mr = hpum_msix_target(s, &addr, size);

    if (!mr) {
        return MEMTX_OK;
    }
    return memory_region_dispatch_write(mr, addr, data,
                                        size_memop(size) | MO_LE, attrs);
}

/* The access rules of QEMU's MSI-X table and PBA: aligned 32 or 64 bits. */
static const MemoryRegionOps hpum_msix_ops = {
    .read_with_attrs = hpum_msix_read,
    .write_with_attrs = hpum_msix_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 8,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* BAR4: HBM window */

static uint64_t hpum_hbm_win_read(void *opaque, hwaddr addr, unsigned size)
{
    HpuState *s = HPU(opaque);
    uint64_t val = hpum_core_hbm_window_read(&s->core, addr, size);

    trace_hpu_hbm_win_read(addr, size, val);
    return val;
}

static void hpum_hbm_win_write(void *opaque, hwaddr addr, uint64_t val,
                               unsigned size)
{
    HpuState *s = HPU(opaque);

    trace_hpu_hbm_win_write(addr, size, val);
    hpum_core_hbm_window_write(&s->core, addr, val, size);
}

static const MemoryRegionOps hpum_hbm_win_ops = {
    .read = hpum_hbm_win_read,
    .write = hpum_hbm_win_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 8,
        .unaligned = true,
    },
};

/* Device */

static void hpum_realize(PCIDevice *pdev, Error **errp)
{
    HpuState *s = HPU(pdev);
    HpuCoreConfig cfg;
    const char *serial = s->serial ? s->serial : HPU_SERIAL_DEFAULT;
    g_autofree gchar *flash = NULL;
    gsize flash_len = 0;
    g_autoptr(GError) gerr = NULL;
    char err[160];
    unsigned int v;
    int ret;

    if (!hpum_core_check_config(s->hbm_size, s->nic_ports, serial,
                                err, sizeof(err))) {
        error_setg(errp, "%s", err);
        return;
    }
    hpum_core_make_config(&cfg, s->hbm_size, s->nic_ports, serial,
                          s->uuid.data);
    if (!hpum_core_parse_fw_key(s->fw_pubkey, &cfg, err, sizeof(err))) {
        error_setg(errp, "%s", err);
        return;
    }
    if (s->fw_min_version >> 24) {
        error_setg(errp, "fw-min-version: 0x%08x has bits 31:24 set: it "
                   "takes the fw_version format, major.minor.patch in bits "
                   "23:0 (at most 0xffffff)", s->fw_min_version);
        return;
    }
    cfg.fw_min_version = s->fw_min_version;
    if (s->mme_threads < 1 || s->mme_threads > 64) {
        error_setg(errp, "mme-threads: %u is not 1 to 64", s->mme_threads);
        return;
    }
    cfg.mme_threads = s->mme_threads;
    if (s->hbm_bar && !strcmp(s->hbm_bar, "64M")) {
        cfg.bar4_v7 = true;
    } else if (s->hbm_bar && strcmp(s->hbm_bar, "full")) {
        error_setg(errp, "hbm-bar: '%s' is neither 'full' (BAR4 covers "
                   "HBM) nor '64M' (spec version 7's BAR4)", s->hbm_bar);
        return;
    }
    if (!hpum_nic_check(s, errp)) {
        return;
    }
    if (s->fw_flash && *s->fw_flash) {
        if (!g_file_get_contents(s->fw_flash, &flash, &flash_len, &gerr)) {
            error_setg(errp, "fw-flash: cannot read %s: %s", s->fw_flash,
                       gerr->message);
            return;
        }
        if (flash_len > HPU_FW_MAX_SIZE) {
            error_setg(errp, "fw-flash: %s has %zu bytes: the flash holds "
                       "at most %u", s->fw_flash, (size_t)flash_len,
                       HPU_FW_MAX_SIZE);
            return;
        }
        cfg.fw_flash = (const uint8_t *)flash;
        cfg.fw_flash_len = (uint32_t)flash_len;
    }

    pci_config_set_interrupt_pin(pdev->config, 0);

    ret = pcie_endpoint_cap_init(pdev, HPU_PCIE_CAP_OFFSET);
    if (ret < 0) {
        error_setg(errp, "cannot add the PCI Express capability");
        return;
    }
    if (pcie_cap_get_type(pdev) == PCI_EXP_TYPE_ENDPOINT) {
        /* Gen4 x16, as the spec advertises; an RCiEP has no link. */
        pcie_cap_fill_link_ep_usp(pdev, QEMU_PCI_EXP_LNK_X16,
                                  QEMU_PCI_EXP_LNK_16GT);
    }
    pcie_cap_flr_init(pdev);

    memory_region_init_io(&s->regs, OBJECT(s), &hpum_regs_ops, s,
                          "hpu-regs", HPU_BAR_REGS_SIZE);
    pci_register_bar(pdev, HPU_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->regs);

    /* msix_init_exclusive_bar() would make a 32-bit BAR; the spec wants 64 */
    memory_region_init(&s->msix_store, OBJECT(s), "hpu-msix-store",
                       HPU_MSIX_BAR_SIZE);
    ret = msix_init(pdev, HPU_MSIX_VECTORS, &s->msix_store, HPU_BAR_MSIX, 0,
                    &s->msix_store, HPU_BAR_MSIX, HPU_MSIX_PBA_OFFSET, 0,
                    errp);
    if (ret) {
        pcie_cap_exit(pdev);
        return;
    }
    memory_region_init_io(&s->msix_bar, OBJECT(s), &hpum_msix_ops, s,
                          "hpu-msix", HPU_MSIX_BAR_SIZE);
    /* It only forwards: the MSI-X regions apply the guard themselves. */
    s->msix_bar.disable_reentrancy_guard = true;
    pci_register_bar(pdev, HPU_BAR_MSIX, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->msix_bar);
    for (v = 0; v < HPU_MSIX_VECTORS; v++) {
        msix_vector_use(pdev, v);
    }

    memory_region_init_io(&s->hbm_win, OBJECT(s), &hpum_hbm_win_ops, s,
                          "hpu-hbm-window", hpum_config_bar4_size(&cfg));
    pci_register_bar(pdev, HPU_BAR_HBM, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64 |
                     PCI_BASE_ADDRESS_MEM_PREFETCH, &s->hbm_win);

    qemu_mutex_init(&s->lock);
    s->irq_bh = qemu_bh_new_guarded(hpum_irq_bh, s,
                                    &DEVICE(pdev)->mem_reentrancy_guard);
    s->reset_bh = qemu_bh_new_guarded(hpum_reset_bh, s,
                                      &DEVICE(pdev)->mem_reentrancy_guard);
    s->roce_bh = qemu_bh_new_guarded(hpum_roce_bh, s,
                                     &DEVICE(pdev)->mem_reentrancy_guard);
    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, hpum_timer_cb, s);
    hpum_nic_create(s, &cfg);
    if (!hpum_core_init(&s->core, &hpum_pci_core_ops, s, &cfg)) {
        error_setg(errp, "cannot allocate the HBM chunk table, the "
                   "flash or the NIC ports' frame buffers");
        hpum_nic_destroy(s);
        timer_free(s->timer);
        s->timer = NULL;
        qemu_bh_delete(s->irq_bh);
        s->irq_bh = NULL;
        qemu_bh_delete(s->reset_bh);
        s->reset_bh = NULL;
        qemu_bh_delete(s->roce_bh);
        s->roce_bh = NULL;
        qemu_mutex_destroy(&s->lock);
        msix_unuse_all_vectors(pdev);
        msix_uninit(pdev, &s->msix_store, &s->msix_store);
        pcie_cap_exit(pdev);
        return;
    }
    s->core_ready = true;
    hpum_start_tpc_pool(s);
    hpum_start_engines(s);
    hpum_start_fw(s);
}

/*
 * Unrealize.  May run on a vCPU, in the main loop or on one of the
 * device's own threads (a DMA or MSI-X message that unplugged it): nothing
 * that a caller further up the stack still uses is freed here.
 */
static void hpum_exit(PCIDevice *pdev)
{
    HpuState *s = HPU(pdev);

    if (s->core_ready) {
        qatomic_store_release(&s->dead, true);
        hpum_core_kill(&s->core);        /* no DMA, MSI-X or timer after */
        timer_del(s->timer);
        hpum_stop_threads(s);
        object_ref(OBJECT(s));          /* dropped by hpum_nic_del_bh() */
        aio_bh_schedule_oneshot(qemu_get_aio_context(), hpum_nic_del_bh, s);
    }
    msix_unuse_all_vectors(pdev);
    msix_uninit(pdev, &s->msix_store, &s->msix_store);
    pcie_cap_exit(pdev);
}

static void hpum_instance_finalize(Object *obj)
{
    HpuState *s = HPU(obj);
    unsigned int e;

    if (!s->core_ready) {
        return;
    }
    hpum_join_rest(s);
    s->core_ready = false;
    hpum_nic_destroy(s);
    hpum_core_fini(&s->core);
    qemu_bh_delete(s->irq_bh);
    s->irq_bh = NULL;
    qemu_bh_delete(s->reset_bh);
    s->reset_bh = NULL;
    qemu_bh_delete(s->roce_bh);
    s->roce_bh = NULL;
    timer_free(s->timer);
    s->timer = NULL;
    for (e = 0; e < HPU_H1_ENGINES; e++) {
        qemu_cond_destroy(&s->eng[e].cond);
    }
    qemu_cond_destroy(&s->fw_cond);
    qemu_mutex_destroy(&s->lock);
}

static void hpum_reset_hold(Object *obj, ResetType type)
{
    HpuState *s = HPU(obj);

    if (s->core_ready && !qatomic_read(&s->dead)) {
        /*
         * Power-on reset (machine reset, FLR).  Nothing waits here, and
         * the BQL is never dropped: the core bumps every generation and
         * the epoch, so work in progress drops what it computed; if DMA or
         * MSI-X calls it had begun are still running, the function stays
         * in reset until they end (hpum_reset_bh finishes it).  MSI-X
         * messages queued for the bottom half before the reset go too.
         */
        trace_hpu_pci_reset(type);
        object_ref(obj);
        hpum_core_reset(&s->core);
        qatomic_set(&s->irq_pending, 0);
        object_unref(obj);
    }
}

/*
 * Configuration writes: the PCIe capability's Initiate FLR bit resets the
 * function (pci_device_reset: hpum_reset_hold, then the PCI registers and
 * MSI-X) and reads back 0.  The reset never drops the BQL; a reference is
 * held all the same, as for BAR accesses.
 */
static void hpum_config_write(PCIDevice *pdev, uint32_t addr, uint32_t val,
                              int len)
{
    object_ref(OBJECT(pdev));
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
    object_unref(OBJECT(pdev));
}

/*
 * Configuration reads: Device Status reports Transactions Pending while a
 * power-on reset or FLR waits for DMA begun before it.
 */
static uint32_t hpum_config_read(PCIDevice *pdev, uint32_t addr, int len)
{
    HpuState *s = HPU(pdev);
    uint32_t val = pci_default_read_config(pdev, addr, len);
    uint32_t devsta = pdev->exp.exp_cap + PCI_EXP_DEVSTA;

    if (s->core_ready && pdev->exp.exp_cap &&
        range_covers_byte(addr, len, devsta) &&
        hpum_core_in_reset(&s->core)) {
        val |= (uint32_t)PCI_EXP_DEVSTA_TRPND << ((devsta - addr) * 8);
    }
    return val;
}

static const VMStateDescription vmstate_hpum = {
    .name = "hpu",
    .unmigratable = 1,
};

static const Property hpum_properties[] = {
    DEFINE_PROP_SIZE("hbm-size", HpuState, hbm_size, HPU_HBM_SIZE_DEFAULT),
    DEFINE_PROP_UINT8("nic-ports", HpuState, nic_ports,
                      HPU_NIC_PORTS_DEFAULT),
    DEFINE_PROP_STRING("serial", HpuState, serial),
    DEFINE_PROP_UUID("uuid", HpuState, uuid),
    DEFINE_PROP_STRING("fw-pubkey", HpuState, fw_pubkey),
    DEFINE_PROP_UINT32("fw-min-version", HpuState, fw_min_version, 0),
    /* OpenBLAS threads of an MME product (process-wide, hpu_mme.c) */
    DEFINE_PROP_UINT8("mme-threads", HpuState, mme_threads, 1),
    DEFINE_PROP_STRING("fw-flash", HpuState, fw_flash),
    /* Spec version 8: "full" BAR4, or "64M" (version 7's, SPEC_VERSION 7) */
    DEFINE_PROP_STRING("hbm-bar", HpuState, hbm_bar),
    /* Spec version 7: the NIC ports' network back ends */
    DEFINE_PROP_NETDEV("port0", HpuState, nic[0].conf.peers),
    DEFINE_PROP_NETDEV("port1", HpuState, nic[1].conf.peers),
    DEFINE_PROP_NETDEV("port2", HpuState, nic[2].conf.peers),
    DEFINE_PROP_NETDEV("port3", HpuState, nic[3].conf.peers),
    DEFINE_PROP_NETDEV("port4", HpuState, nic[4].conf.peers),
    DEFINE_PROP_NETDEV("port5", HpuState, nic[5].conf.peers),
    DEFINE_PROP_NETDEV("port6", HpuState, nic[6].conf.peers),
    DEFINE_PROP_NETDEV("port7", HpuState, nic[7].conf.peers),
    DEFINE_PROP_NETDEV("port8", HpuState, nic[8].conf.peers),
    DEFINE_PROP_NETDEV("port9", HpuState, nic[9].conf.peers),
};

static void hpum_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->realize = hpum_realize;
    k->exit = hpum_exit;
    k->config_read = hpum_config_read;
    k->config_write = hpum_config_write;
    k->vendor_id = HPU_PCI_VENDOR_ID;
    k->device_id = HPU_PCI_DEVICE_ID;
    k->revision = HPU_PCI_REVISION;
    k->class_id = HPU_PCI_CLASS;
    rc->phases.hold = hpum_reset_hold;
    dc->desc = "HPU deep-learning accelerator (emulated)";
    dc->vmsd = &vmstate_hpum;
    device_class_set_props(dc, hpum_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo hpum_info = {
    .name = TYPE_HPU,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(HpuState),
    .instance_finalize = hpum_instance_finalize,
    .class_init = hpum_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void hpum_register_types(void)
{
    type_register_static(&hpum_info);
}

type_init(hpum_register_types)
