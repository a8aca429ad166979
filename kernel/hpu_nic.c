// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu: the NIC ports (spec version 7) as auxiliary devices.
 *
 * A device that reports NIC ports gets one auxiliary device, "hpu.en.<id>",
 * for all of them; hpu_en.ko binds to it and makes one netdev per port.
 * A device with a RoCE engine gets a second one, "hpu.rdma.<id>", for
 * hpu_ib.ko (its exports are in hpu_rdma.c), added and deleted with the
 * first (Documentation/driver/rdma.md). The
 * interface between the two modules is the handful of functions exported
 * here (namespace HPU_NIC): the number of ports, a port's register block,
 * a port's interrupt and the device to DMA-map against. Nothing calls back
 * from hpu.ko into hpu_en.ko: around every reset (soft, hard, function
 * level) hpu.ko deletes the auxiliary device, so the netdevs go away, and
 * adds it back after a successful reset. Documentation/driver/nic.md.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/auxiliary_bus.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "hpu_drv.h"
#include "hpu_nic.h"
#include "hpu_rdma.h"
#include "hpu_regs.h"
#include "hpu_reset.h"

/**
 * struct hpu_nic - NIC state of one HPU
 * @hdev: the device.
 * @num_ports: ports the auxiliary driver may drive: those the device
 *	reports (ENGINES.NIC) that have a register block within BAR0 and an
 *	allocated MSI-X vector. Set once by hpu_nic_start() under @lock,
 *	before any auxiliary device is added; read under @lock.
 * @rdma: the device has a RoCE engine (hpu_rdma_usable()): it gets the
 *	"rdma" auxiliary device too. Set with @num_ports.
 * @lock: protects @num_ports, @rdma, @adev, @suspended and @stopped.
 *	Lock order: &hpu_reset.lock, then @lock; the device locks of the
 *	auxiliary devices and everything their drivers take (rtnl) are
 *	taken inside it. Whoever adds or deletes the auxiliary devices holds
 *	both (hpu_nic_start(), the reset hooks), except hpu_nic_fini(),
 *	which runs when no reset can any more.
 * @adev: the registered auxiliary devices, by &enum hpu_nic_adev_kind,
 *	or NULL.
 * @suspended: a reset deleted the devices; the end of the reset adds
 *	them back.
 * @stopped: the device is being removed: nothing is added any more.
 */
struct hpu_nic {
	struct hpu_device *hdev;
	unsigned int num_ports;
	bool rdma;
	/* see above */
	struct mutex lock;
	struct hpu_nic_adev *adev[HPU_NIC_ADEV_KINDS];
	bool suspended;
	bool stopped;
};

static const char *const hpu_nic_adev_names[HPU_NIC_ADEV_KINDS] = {
	[HPU_NIC_ADEV_EN] = HPU_NIC_ADEV_NAME,
	[HPU_NIC_ADEV_RDMA] = HPU_RDMA_ADEV_NAME,
};

/**
 * hpu_nic_num_ports() - number of NIC ports of the device
 * @adev: the auxiliary device hpu_en.ko is bound to
 *
 * Ports 0 to the returned number minus one each have a register block
 * (hpu_nic_port_regs()) and an interrupt (hpu_nic_port_irq()).
 *
 * Return: the number of ports, 1 to %HPU_NIC_MAX_PORTS.
 */
unsigned int hpu_nic_num_ports(struct auxiliary_device *adev)
{
	return to_hpu_nic_adev(adev)->num_ports;
}
EXPORT_SYMBOL_NS_GPL(hpu_nic_num_ports, HPU_NIC);

/**
 * hpu_nic_port_regs() - register block of a NIC port
 * @adev: the auxiliary device hpu_en.ko is bound to
 * @port: the port, below hpu_nic_num_ports()
 *
 * The %HPU_NIC_PORT_SIZE bytes of the port's block in BAR0 (the HPU_NIC_*
 * offsets of hpu_regs.h are relative to it). The mapping is valid while
 * the driver is bound to @adev.
 *
 * Return: the mapping, or NULL for a port that does not exist.
 */
void __iomem *hpu_nic_port_regs(struct auxiliary_device *adev,
				unsigned int port)
{
	struct hpu_nic_adev *na = to_hpu_nic_adev(adev);

	if (port >= na->num_ports)
		return NULL;
	return na->hdev->regs + HPU_NIC_PORT_BASE(port);
}
EXPORT_SYMBOL_NS_GPL(hpu_nic_port_regs, HPU_NIC);

/**
 * hpu_nic_port_irq() - Linux interrupt number of a port's Ethernet vector
 * @adev: the auxiliary device hpu_en.ko is bound to
 * @port: the port, below hpu_nic_num_ports()
 *
 * MSI-X vector %HPU_VEC_NIC(@port), allocated by hpu.ko; the caller
 * requests and frees the interrupt itself, while bound to @adev.
 *
 * Return: the interrupt number, or -ENXIO for a port that does not exist.
 */
int hpu_nic_port_irq(struct auxiliary_device *adev, unsigned int port)
{
	struct hpu_nic_adev *na = to_hpu_nic_adev(adev);

	if (port >= na->num_ports)
		return -ENXIO;
	return pci_irq_vector(na->hdev->pdev, HPU_VEC_NIC(port));
}
EXPORT_SYMBOL_NS_GPL(hpu_nic_port_irq, HPU_NIC);

/**
 * hpu_nic_dma_device() - the device to DMA-map the ports' buffers against
 * @adev: the auxiliary device hpu_en.ko is bound to
 *
 * The PCI function: ring and buffer addresses are its bus addresses (with
 * bit 63 set, the device's ASID 0 host addresses), translated by an IOMMU
 * when there is one. Its name is the PCI address, for ethtool's bus_info.
 *
 * Return: the PCI function's &struct device.
 */
struct device *hpu_nic_dma_device(struct auxiliary_device *adev)
{
	return &to_hpu_nic_adev(adev)->hdev->pdev->dev;
}
EXPORT_SYMBOL_NS_GPL(hpu_nic_dma_device, HPU_NIC);

/*
 * The auxiliary bus puts MODALIAS in the uevent only, and rdma-core's
 * libibverbs matches its providers against the file device/modalias of an
 * ib_device: "auxiliary:hpu.rdma" lets the hpu provider claim hpu_ib's
 * devices by their driver rather than by a name any RDMA device may take
 * (Documentation/driver/rdma.md). The device's name is
 * "<module>.<name>.<id>"; the alias drops the id.
 */
static ssize_t modalias_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	const char *name = dev_name(dev);
	const char *dot = strrchr(name, '.');

	return sysfs_emit(buf, "%s%.*s\n", AUXILIARY_MODULE_PREFIX,
			  dot ? (int)(dot - name) : (int)strlen(name), name);
}
static DEVICE_ATTR_RO(modalias);

static struct attribute *hpu_nic_adev_attrs[] = {
	&dev_attr_modalias.attr,
	NULL
};
ATTRIBUTE_GROUPS(hpu_nic_adev);

static void hpu_nic_adev_release(struct device *dev)
{
	kfree(to_hpu_nic_adev(to_auxiliary_dev(dev)));
}

/*
 * Add an auxiliary device; its driver, if loaded, probes it right away.
 * Caller holds &hpu_nic.lock. 0 or a negative error code (logged).
 */
static int hpu_nic_add_one(struct hpu_nic *nic, enum hpu_nic_adev_kind kind)
{
	struct hpu_device *hdev = nic->hdev;
	struct pci_dev *pdev = hdev->pdev;
	struct hpu_nic_adev *na;
	int ret;

	lockdep_assert_held(&nic->lock);

	na = kzalloc(sizeof(*na), GFP_KERNEL);
	if (!na)
		return -ENOMEM;
	na->hdev = hdev;
	na->num_ports = nic->num_ports;
	na->kind = kind;
	na->adev.name = hpu_nic_adev_names[kind];
	/* Unique and stable: the PCI domain and routing id. */
	na->adev.id = (u32)pci_domain_nr(pdev->bus) << 16 | pci_dev_id(pdev);
	na->adev.dev.parent = &pdev->dev;
	na->adev.dev.release = hpu_nic_adev_release;
	na->adev.dev.groups = hpu_nic_adev_groups;

	ret = auxiliary_device_init(&na->adev);
	if (ret) {
		kfree(na);
		goto err;
	}
	ret = auxiliary_device_add(&na->adev);
	if (ret) {
		/* Drops the last reference: the release frees @na. */
		auxiliary_device_uninit(&na->adev);
		goto err;
	}
	nic->adev[kind] = na;
	return 0;

err:
	drm_err(&hdev->drm, "cannot add the %s auxiliary device: %d\n",
		hpu_nic_adev_names[kind], ret);
	return ret;
}

/*
 * Add the Ethernet device, then the RDMA one (whose driver looks for the
 * netdevs). A failure of one leaves the other. Caller holds the lock.
 */
static void hpu_nic_add(struct hpu_nic *nic)
{
	lockdep_assert_held(&nic->lock);

	hpu_nic_add_one(nic, HPU_NIC_ADEV_EN);
	if (nic->rdma)
		hpu_nic_add_one(nic, HPU_NIC_ADEV_RDMA);
}

static bool hpu_nic_added(struct hpu_nic *nic)
{
	return nic->adev[HPU_NIC_ADEV_EN] || nic->adev[HPU_NIC_ADEV_RDMA];
}

/*
 * Delete the auxiliary devices, RDMA first, unbinding their drivers.
 * Caller holds the lock.
 */
static void hpu_nic_del(struct hpu_nic *nic)
{
	int kind;

	lockdep_assert_held(&nic->lock);

	for (kind = HPU_NIC_ADEV_KINDS - 1; kind >= 0; kind--) {
		if (!nic->adev[kind])
			continue;
		auxiliary_device_delete(&nic->adev[kind]->adev);
		auxiliary_device_uninit(&nic->adev[kind]->adev);
		nic->adev[kind] = NULL;
	}
}

/* The ports the auxiliary driver may use: block in BAR0, vector allocated. */
static unsigned int hpu_nic_usable_ports(struct hpu_device *hdev)
{
	resource_size_t bar_len = pci_resource_len(hdev->pdev, HPU_BAR_REGS);
	unsigned int n = min_t(unsigned int, hdev->id.num_nic, HPU_NIC_MAX_PORTS);

	if (hdev->id.num_nic > HPU_NIC_MAX_PORTS)
		drm_warn(&hdev->drm, "the device reports %u NIC ports; using %u\n",
			 hdev->id.num_nic, HPU_NIC_MAX_PORTS);
	while (n && HPU_NIC_PORT_BASE(n - 1) + HPU_NIC_PORT_SIZE > bar_len)
		n--;
	while (n && HPU_VEC_NIC(n - 1) >= hdev->irq_vectors)
		n--;
	if (n < min_t(unsigned int, hdev->id.num_nic, HPU_NIC_MAX_PORTS))
		drm_warn(&hdev->drm, "only %u of %u NIC ports usable (BAR0 %pa bytes, %d MSI-X vectors)\n",
			 n, hdev->id.num_nic, &bar_len, hdev->irq_vectors);
	return n;
}

static void hpu_nic_release(struct drm_device *drm, void *arg)
{
	struct hpu_nic *nic = arg;

	mutex_destroy(&nic->lock);
}

/**
 * hpu_nic_init() - set up the NIC state, before any reset can run
 * @hdev: the device, identity read
 *
 * The auxiliary device is added later, by hpu_nic_start(). A device
 * without NIC ports, or of a spec version before 7, gets the state too:
 * the reset hooks then find nothing to do.
 *
 * Return: 0 or -ENOMEM.
 */
int hpu_nic_init(struct hpu_device *hdev)
{
	struct hpu_nic *nic;

	nic = drmm_kzalloc(&hdev->drm, sizeof(*nic), GFP_KERNEL);
	if (!nic)
		return -ENOMEM;
	nic->hdev = hdev;
	mutex_init(&nic->lock);
	hdev->nic = nic;
	return drmm_add_action_or_reset(&hdev->drm, hpu_nic_release, nic);
}

/**
 * hpu_nic_start() - add the NIC ports' auxiliary device
 * @hdev: the device, fully probed, its interrupts allocated
 *
 * Only for a usable device of spec version 7 or later with NIC ports. A
 * failure is logged and leaves the device without its netdevs: the
 * compute side does not depend on them. Takes &hpu_reset.lock, so that the
 * devices are never added while a reset (started by then: resets run from
 * hpu_reset_start() on) has the device down; one that ran before found
 * nothing to delete. May sleep.
 */
void hpu_nic_start(struct hpu_device *hdev)
{
	struct hpu_nic *nic = hdev->nic;
	unsigned int ports;
	bool rdma;

	if (hdev->id.spec_version < 7 || !hdev->id.num_nic)
		return;
	ports = hpu_nic_usable_ports(hdev);
	if (!ports)
		return;
	rdma = hpu_rdma_usable(hdev);

	mutex_lock(&hdev->reset->lock);
	mutex_lock(&nic->lock);
	nic->num_ports = ports;
	nic->rdma = rdma;
	if (!nic->stopped && !hpu_nic_added(nic) && !hpu_reset_unusable(hdev))
		hpu_nic_add(nic);
	mutex_unlock(&nic->lock);
	mutex_unlock(&hdev->reset->lock);
}

/**
 * hpu_nic_fini() - delete the auxiliary device for good
 * @hdev: the device, being removed (after hpu_reset_fini(): no reset runs)
 *
 * The netdevs are unregistered and their driver unbound before this
 * returns. Also on a probe failure. May sleep.
 */
void hpu_nic_fini(struct hpu_device *hdev)
{
	struct hpu_nic *nic = hdev->nic;

	if (!nic)
		return;
	mutex_lock(&nic->lock);
	nic->stopped = true;
	nic->suspended = false;
	hpu_nic_del(nic);
	mutex_unlock(&nic->lock);
}

/**
 * hpu_nic_reset_prepare() - delete the auxiliary device before a reset
 * @hdev: the device; the caller holds &hpu_reset.lock and is not inside
 *	drm_dev_enter() nor a fence-signalling section
 *
 * A reset returns every port register to its reset value (rings off,
 * counters zero, MAC and MTU back to their defaults): the netdevs go away
 * before it, with their rings stopped and their buffers freed by their
 * driver, and come back after it, from hpu_nic_reset_done(). May sleep.
 */
void hpu_nic_reset_prepare(struct hpu_device *hdev)
{
	struct hpu_nic *nic = hdev->nic;

	if (!nic)
		return;
	lockdep_assert_held(&hdev->reset->lock);
	mutex_lock(&nic->lock);
	if (hpu_nic_added(nic)) {
		hpu_nic_del(nic);
		nic->suspended = true;
	}
	mutex_unlock(&nic->lock);
}

/**
 * hpu_nic_reset_done() - add the auxiliary device back after a reset
 * @hdev: the device; the caller holds &hpu_reset.lock
 * @usable: the reset succeeded; after a failed one the device is unusable
 *	and the netdevs stay away until it is unbound
 *
 * May sleep.
 */
void hpu_nic_reset_done(struct hpu_device *hdev, bool usable)
{
	struct hpu_nic *nic = hdev->nic;

	if (!nic)
		return;
	lockdep_assert_held(&hdev->reset->lock);
	mutex_lock(&nic->lock);
	if (nic->suspended) {
		nic->suspended = false;
		if (usable && !nic->stopped)
			hpu_nic_add(nic);
	}
	mutex_unlock(&nic->lock);
}
