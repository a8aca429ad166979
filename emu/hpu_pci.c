/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU: an emulated Gaudi-class deep-learning accelerator, PCIe glue.
 *
 * Usage:
 *   -device hpu[,hbm-size=4G][,nic-ports=10][,serial=STR][,uuid=UUID]
 *
 * Properties (Documentation/hw/registers.md, "Device properties"):
 *   hbm-size   HBM size, a multiple of 256 MiB from 256 MiB to 32 GiB
 *              (default 4G)
 *   nic-ports  number of NIC ports, 0 to 10 (default 10)
 *   serial     board serial, at most 16 printable ASCII characters
 *              (default HPU-0000000000)
 *   uuid       device UUID (default: random at start)
 *
 * The function is a PCIe endpoint (a root complex integrated endpoint when
 * plugged straight into q35's pcie.0) with:
 *   BAR0  64-bit, 1 MiB: registers, decoded by hpu_core.c
 *   BAR2  64-bit, 4 KiB: MSI-X table (offset 0) and PBA (offset 0x800),
 *         16 vectors
 *
 * Guest programming errors are logged with -d guest_errors and latched in
 * the ERROR register; they never stop the emulator.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "qemu/uuid.h"
#include "qapi/error.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "hw/resettable.h"
#include "migration/vmstate.h"
#include "qom/object.h"

#include "hpu_core.h"

#define TYPE_HPU "hpu"
OBJECT_DECLARE_SIMPLE_TYPE(HpuState, HPU)

#define HPU_PCIE_CAP_OFFSET     0x80
#define HPU_MSIX_BAR_SIZE       4096
#define HPU_MSIX_PBA_OFFSET     0x800

struct HpuState {
    PCIDevice parent_obj;

    MemoryRegion regs;
    MemoryRegion msix_bar;
    QEMUTimer *timer;
    struct hpu_core core;

    /* properties */
    uint64_t hbm_size;
    uint8_t nic_ports;
    char *serial;
    QemuUUID uuid;
};

/* Environment of the core */

static void hpu_raise_msix(void *opaque, unsigned int vector)
{
    PCIDevice *pdev = PCI_DEVICE(opaque);

    /* A masked vector is left pending by msix_notify(). */
    if (msix_enabled(pdev)) {
        msix_notify(pdev, vector);
    }
}

static void G_GNUC_PRINTF(2, 3)
hpu_log_guest_error(void *opaque, const char *fmt, ...)
{
    PCIDevice *pdev = PCI_DEVICE(opaque);
    g_autofree char *msg = NULL;
    va_list ap;

    if (!qemu_loglevel_mask(LOG_GUEST_ERROR)) {
        return;
    }
    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    qemu_log_mask(LOG_GUEST_ERROR, "hpu %02x:%02x.%x: %s\n",
                  pci_dev_bus_num(pdev), PCI_SLOT(pdev->devfn),
                  PCI_FUNC(pdev->devfn), msg);
}

static void hpu_arm_timer(void *opaque, uint64_t ns)
{
    HpuState *s = HPU(opaque);

    timer_mod(s->timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + ns);
}

static void hpu_cancel_timer(void *opaque)
{
    HpuState *s = HPU(opaque);

    timer_del(s->timer);
}

static const struct hpu_core_ops hpu_core_ops = {
    .raise_msix = hpu_raise_msix,
    .log_guest_error = hpu_log_guest_error,
    .arm_timer = hpu_arm_timer,
    .cancel_timer = hpu_cancel_timer,
};

static void hpu_timer_cb(void *opaque)
{
    HpuState *s = HPU(opaque);

    hpu_core_timer_expired(&s->core);
}

/* BAR0 */

static uint64_t hpu_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    HpuState *s = HPU(opaque);

    return hpu_core_read(&s->core, addr, size);
}

static void hpu_regs_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    HpuState *s = HPU(opaque);

    hpu_core_write(&s->core, addr, val, size);
}

/*
 * Every size and alignment reaches the core, which applies the access
 * rules of the spec (aligned 32-bit only) itself.
 */
static const MemoryRegionOps hpu_regs_ops = {
    .read = hpu_regs_read,
    .write = hpu_regs_write,
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

static void hpu_realize(PCIDevice *pdev, Error **errp)
{
    HpuState *s = HPU(pdev);
    struct hpu_core_config cfg;
    const char *serial = s->serial ? s->serial : HPU_SERIAL_DEFAULT;
    char err[160];
    unsigned int v;
    int ret;

    if (!hpu_core_check_config(s->hbm_size, s->nic_ports, serial,
                               err, sizeof(err))) {
        error_setg(errp, "%s", err);
        return;
    }
    hpu_core_make_config(&cfg, s->hbm_size, s->nic_ports, serial,
                         s->uuid.data);

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

    memory_region_init_io(&s->regs, OBJECT(s), &hpu_regs_ops, s,
                          "hpu-regs", HPU_BAR_REGS_SIZE);
    pci_register_bar(pdev, HPU_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->regs);

    /* msix_init_exclusive_bar() would make a 32-bit BAR; the spec wants 64 */
    memory_region_init(&s->msix_bar, OBJECT(s), "hpu-msix",
                       HPU_MSIX_BAR_SIZE);
    ret = msix_init(pdev, HPU_MSIX_VECTORS, &s->msix_bar, HPU_BAR_MSIX, 0,
                    &s->msix_bar, HPU_BAR_MSIX, HPU_MSIX_PBA_OFFSET, 0, errp);
    if (ret) {
        pcie_cap_exit(pdev);
        return;
    }
    pci_register_bar(pdev, HPU_BAR_MSIX, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->msix_bar);
    for (v = 0; v < HPU_MSIX_VECTORS; v++) {
        msix_vector_use(pdev, v);
    }

    s->timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, hpu_timer_cb, s);
    hpu_core_init(&s->core, &hpu_core_ops, s, &cfg);
}

static void hpu_exit(PCIDevice *pdev)
{
    HpuState *s = HPU(pdev);

    timer_free(s->timer);
    s->timer = NULL;
    msix_unuse_all_vectors(pdev);
    msix_uninit(pdev, &s->msix_bar, &s->msix_bar);
    pcie_cap_exit(pdev);
}

static void hpu_reset_hold(Object *obj, ResetType type)
{
    HpuState *s = HPU(obj);

    if (s->timer) {             /* realized */
        hpu_core_reset(&s->core);
    }
}

static const VMStateDescription vmstate_hpu = {
    .name = "hpu",
    .unmigratable = 1,
};

static const Property hpu_properties[] = {
    DEFINE_PROP_SIZE("hbm-size", HpuState, hbm_size, HPU_HBM_SIZE_DEFAULT),
    DEFINE_PROP_UINT8("nic-ports", HpuState, nic_ports,
                      HPU_NIC_PORTS_DEFAULT),
    DEFINE_PROP_STRING("serial", HpuState, serial),
    DEFINE_PROP_UUID("uuid", HpuState, uuid),
};

static void hpu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->realize = hpu_realize;
    k->exit = hpu_exit;
    k->vendor_id = HPU_PCI_VENDOR_ID;
    k->device_id = HPU_PCI_DEVICE_ID;
    k->revision = HPU_PCI_REVISION;
    k->class_id = HPU_PCI_CLASS;
    rc->phases.hold = hpu_reset_hold;
    dc->desc = "HPU deep-learning accelerator (emulated)";
    dc->vmsd = &vmstate_hpu;
    device_class_set_props(dc, hpu_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo hpu_info = {
    .name = TYPE_HPU,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(HpuState),
    .class_init = hpu_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { }
    },
};

static void hpu_register_types(void)
{
    type_register_static(&hpu_info);
}

type_init(hpu_register_types)
