// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu_ib: the ib_device of the HPU's RoCE v2 engine.
 *
 * An auxiliary driver of "hpu.rdma.<id>" (hpu_rdma.c in hpu.ko), consuming
 * only what hpu.ko exports in namespace HPU_RDMA. One ib_device "hpu_%d"
 * per HPU, one port per NIC port, each tied to hpu_en.ko's netdev of that
 * port, found with a netdevice notifier (no call into hpu_en.ko). This
 * file: probe and removal, ports, GIDs, counters. Verbs: hpu_ib_verbs.c;
 * the command interface and events: hpu_ib_cmd.c.
 * Documentation/driver/rdma.md.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/auxiliary_bus.h>
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>

#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "hpu_ib.h"
#include "hpu_rdma.h"
#include "hpu-abi.h"

static u32 hpu_ib_rd(struct hpu_ib_dev *dev, u32 off)
{
	return readl(dev->regs + off);
}

static void hpu_ib_port_wr(struct hpu_ib_port *p, u32 off, u32 val)
{
	writel(val, p->regs + off);
}

/**
 * hpu_ib_port_counter() - read one 64-bit port counter
 * @dev: the device
 * @port: the port (0-based)
 * @i: the counter, an HPU_ROCE_CNT_* index
 *
 * Return: the counter's value since the device's last reset.
 */
u64 hpu_ib_port_counter(struct hpu_ib_dev *dev, unsigned int port,
			unsigned int i)
{
	struct hpu_ib_port *p = &dev->ports[port];
	u32 lo, hi;

	spin_lock(&p->cnt_lock);
	lo = readl(p->regs + HPU_ROCE_PORT_CNT(i));
	hi = readl(p->regs + HPU_ROCE_PORT_CNT_HI(i));
	spin_unlock(&p->cnt_lock);
	return (u64)hi << 32 | lo;
}

/**
 * hpu_ib_port_event() - tell the port's users it went up or down
 * @dev: the device
 * @port: the port (0-based)
 * @active: up
 */
void hpu_ib_port_event(struct hpu_ib_dev *dev, unsigned int port, bool active)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = port + 1,
		.event = active ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR,
	};

	/*
	 * Not before registration: ib_core's cache would query ports that
	 * do not exist yet. Events after the unregistration began are
	 * harmless (the ports stay until the device is freed).
	 */
	if (READ_ONCE(dev->registered))
		ib_dispatch_event(&ev);
}

static int hpu_ib_query_device(struct ib_device *ibdev,
			       struct ib_device_attr *attr,
			       struct ib_udata *udata)
{
	struct hpu_ib_dev *dev = to_hdev(ibdev);
	struct pci_dev *pdev = to_pci_dev(dev->dma_dev);

	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 0;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = BIT_ULL(48);
	attr->page_size_cap = SZ_4K | SZ_2M;
	attr->vendor_id = pdev->vendor;
	attr->vendor_part_id = pdev->device;
	attr->hw_ver = pdev->revision;
	attr->max_qp = dev->max_qp - 2;
	attr->max_qp_wr = min_t(u32, dev->max_wr,
				1U << HPU_IB_WQ_LOG_ENTRIES_MAX);
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN;
	attr->max_send_sge = min_t(u32, dev->max_sge,
				   ((1U << HPU_IB_SQ_LOG_STRIDE_MAX) - 64 - 32) / 16);
	attr->max_recv_sge = min_t(u32, dev->max_sge,
				   ((1U << HPU_IB_RQ_LOG_STRIDE_MAX) - 16) / 16);
	attr->max_sge_rd = attr->max_send_sge;
	attr->max_cq = dev->max_cq;
	attr->max_cqe = min_t(u32, dev->max_cqe,
			      1U << HPU_IB_CQ_LOG_ENTRIES_MAX);
	attr->max_mr = dev->max_mr - 1;
	attr->max_pd = dev->max_qp;
	attr->max_qp_rd_atom = 16;
	attr->max_qp_init_rd_atom = 16;
	attr->max_res_rd_atom = 16 * attr->max_qp;
	attr->atomic_cap = IB_ATOMIC_NONE;
	attr->max_ah = S32_MAX;
	attr->max_srq = dev->max_srq;
	attr->max_srq_wr = attr->max_qp_wr;
	attr->max_srq_sge = min_t(u32, dev->max_sge,
				  ((1U << HPU_IB_SRQ_LOG_STRIDE_MAX) - 16) / 16);
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
	return 0;
}

static int hpu_ib_query_port(struct ib_device *ibdev, u32 port,
			     struct ib_port_attr *attr)
{
	struct net_device *ndev;
	bool up = false;
	int mtu = 1500;

	ndev = ib_device_get_netdev(ibdev, port);
	if (ndev) {
		up = netif_running(ndev) && netif_carrier_ok(ndev);
		mtu = READ_ONCE(ndev->mtu);
		dev_put(ndev);
	}

	/* Zeroed by the core. */
	attr->gid_tbl_len = HPU_ROCE_PORT_GIDS;
	attr->pkey_tbl_len = 1;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = 1U << 30;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = ndev ? iboe_get_mtu(mtu) : IB_MTU_1024;
	if (!attr->active_mtu)
		attr->active_mtu = IB_MTU_256;
	attr->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	attr->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
				IB_PORT_PHYS_STATE_DISABLED;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->max_vl_num = 1;
	/* 100 Gb/s as hpu_en reports (4X EDR). */
	attr->active_speed = IB_SPEED_EDR;
	attr->active_width = IB_WIDTH_4X;
	return 0;
}

static int hpu_ib_get_port_immutable(struct ib_device *ibdev, u32 port,
				     struct ib_port_immutable *imm)
{
	struct ib_port_attr attr = {};
	int ret;

	ret = ib_query_port(ibdev, port, &attr);
	if (ret)
		return ret;
	imm->pkey_tbl_len = attr.pkey_tbl_len;
	imm->gid_tbl_len = attr.gid_tbl_len;
	/* RoCE v2 only, no MADs (no QP1: max_mad_size stays 0). */
	imm->core_cap_flags = RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP |
			      RDMA_CORE_CAP_ETH_AH;
	imm->max_mad_size = 0;
	return 0;
}

static int hpu_ib_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			     u16 *pkey)
{
	if (index > 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static enum rdma_link_layer hpu_ib_link_layer(struct ib_device *ibdev,
					      u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/* Write GID entry @index of @port (0-based); NULL clears it. */
static void hpu_ib_write_gid(struct hpu_ib_dev *dev, u32 port, u32 index,
			     const union ib_gid *gid)
{
	struct hpu_ib_port *p = &dev->ports[port];
	u32 base = HPU_ROCE_PORT_GID(index), w;
	int i;

	/* Invalid first, so that no QP sends from a half-written entry. */
	hpu_ib_port_wr(p, base + HPU_ROCE_PORT_GID_VALID_OFF, 0);
	for (i = 0; i < 4; i++) {
		/* Byte 0 of the wire order in bits 7:0. */
		w = gid ? get_unaligned_le32(&gid->raw[4 * i]) : 0;
		hpu_ib_port_wr(p, base + 4 * i, w);
	}
	if (gid)
		hpu_ib_port_wr(p, base + HPU_ROCE_PORT_GID_VALID_OFF, 1);
}

/*
 * The port of @dev whose netdev @ndev is: hpu_en.ko's netdevs are
 * children of the Ethernet auxiliary device of the same PCI function,
 * with dev_port the port. -1 if it is not one of ours.
 */
static int hpu_ib_netdev_port(struct hpu_ib_dev *dev, struct net_device *ndev)
{
	struct device *parent = ndev->dev.parent;

	if (!parent || parent->parent != dev->dma_dev)
		return -1;
	if (!parent->bus || strcmp(parent->bus->name, "auxiliary") ||
	    strncmp(dev_name(parent), "hpu.en.", 7))
		return -1;
	if (ndev->dev_port >= dev->num_ports)
		return -1;
	return ndev->dev_port;
}

static int hpu_ib_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct hpu_ib_dev *dev = to_hdev(attr->device);
	struct net_device *ndev;
	bool foreign;

	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	if (attr->index >= HPU_ROCE_PORT_GIDS)
		return -EINVAL;
	/*
	 * The engine sends untagged frames from the port's own MAC and
	 * steers by it: addresses of VLAN or macvlan devices stacked on the
	 * port's netdev cannot be used.
	 */
	rcu_read_lock();
	ndev = rcu_dereference(attr->ndev);
	foreign = ndev && hpu_ib_netdev_port(dev, ndev) != attr->port_num - 1;
	rcu_read_unlock();
	if (foreign)
		return -EOPNOTSUPP;
	hpu_ib_write_gid(dev, attr->port_num - 1, attr->index, &attr->gid);
	return 0;
}

static int hpu_ib_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct hpu_ib_dev *dev = to_hdev(attr->device);

	if (attr->index >= HPU_ROCE_PORT_GIDS)
		return -EINVAL;
	hpu_ib_write_gid(dev, attr->port_num - 1, attr->index, NULL);
	return 0;
}

/* Port counters, by their HPU_ROCE_CNT_* index. */
static const struct rdma_stat_desc hpu_ib_counter_descs[HPU_ROCE_NUM_COUNTERS] = {
	[HPU_ROCE_CNT_TX_PKTS] = { .name = "tx_packets" },
	[HPU_ROCE_CNT_TX_BYTES] = { .name = "tx_bytes" },
	[HPU_ROCE_CNT_RX_PKTS] = { .name = "rx_packets" },
	[HPU_ROCE_CNT_RX_BYTES] = { .name = "rx_bytes" },
	[HPU_ROCE_CNT_RX_ICRC_ERR] = { .name = "rx_icrc_errors" },
	[HPU_ROCE_CNT_RX_MALFORMED] = { .name = "rx_malformed" },
	[HPU_ROCE_CNT_RX_UNKNOWN_QP] = { .name = "rx_unknown_qpn" },
	[HPU_ROCE_CNT_RX_DROPPED] = { .name = "rx_dropped" },
	[HPU_ROCE_CNT_SEQ_NAK_SENT] = { .name = "seq_nak_sent" },
	[HPU_ROCE_CNT_SEQ_NAK_RCVD] = { .name = "seq_nak_received" },
	[HPU_ROCE_CNT_RNR_NAK_SENT] = { .name = "rnr_nak_sent" },
	[HPU_ROCE_CNT_RNR_NAK_RCVD] = { .name = "rnr_nak_received" },
	[HPU_ROCE_CNT_RETRANSMITS] = { .name = "retransmissions" },
	[HPU_ROCE_CNT_ACK_TIMEOUTS] = { .name = "local_ack_timeouts" },
	[HPU_ROCE_CNT_REM_ACCESS_ERR] = { .name = "remote_access_errors" },
	[HPU_ROCE_CNT_TX_DISCARDS] = { .name = "tx_discards" },
	[HPU_ROCE_CNT_DUP_REQUESTS] = { .name = "duplicate_requests" },
};

static struct rdma_hw_stats *hpu_ib_alloc_port_stats(struct ib_device *ibdev,
						     u32 port)
{
	return rdma_alloc_hw_stats_struct(hpu_ib_counter_descs,
					  HPU_ROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int hpu_ib_get_hw_stats(struct ib_device *ibdev,
			       struct rdma_hw_stats *stats, u32 port,
			       int index)
{
	struct hpu_ib_dev *dev = to_hdev(ibdev);
	unsigned int i;

	if (!port)
		return 0;
	for (i = 0; i < HPU_ROCE_NUM_COUNTERS; i++)
		stats->value[i] = hpu_ib_port_counter(dev, port - 1, i);
	return HPU_ROCE_NUM_COUNTERS;
}

static const struct ib_device_ops hpu_ib_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = HPU_IB_UVERBS_ABI_VERSION,
	.query_device = hpu_ib_query_device,
	.query_port = hpu_ib_query_port,
	.get_port_immutable = hpu_ib_get_port_immutable,
	.query_pkey = hpu_ib_query_pkey,
	.get_link_layer = hpu_ib_link_layer,
	.add_gid = hpu_ib_add_gid,
	.del_gid = hpu_ib_del_gid,
	.alloc_hw_port_stats = hpu_ib_alloc_port_stats,
	.get_hw_stats = hpu_ib_get_hw_stats,
};

/* rtnl held: tie @ndev to its port, or untie it (@ndev NULL). */
static void hpu_ib_set_netdev(struct hpu_ib_dev *dev, int port,
			      struct net_device *ndev)
{
	int ret;

	ASSERT_RTNL();
	ret = ib_device_set_netdev(&dev->ibdev, ndev, port + 1);
	if (ret)
		ibdev_warn(&dev->ibdev, "port %d: cannot set its netdev: %d\n",
			   port + 1, ret);
}

/* The GIDs of a port whose netdev (hpu_en's) came after the ib_device. */
static void hpu_ib_rescan_work(struct work_struct *work)
{
	struct hpu_ib_dev *dev = container_of(work, struct hpu_ib_dev, rescan_work);

	if (READ_ONCE(dev->registered))
		rdma_roce_rescan_device(&dev->ibdev);
}

static int hpu_ib_netdev_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct hpu_ib_dev *dev = container_of(nb, struct hpu_ib_dev, nb);
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	int port = hpu_ib_netdev_port(dev, ndev);
	struct net_device *cur;

	if (port < 0)
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_REGISTER:
		hpu_ib_set_netdev(dev, port, ndev);
		/* The rescan takes rtnl, which notifiers run under. */
		if (dev->registered)
			schedule_work(&dev->rescan_work);
		break;
	case NETDEV_UNREGISTER:
		/* ib_core holds a reference: drop it, or the netdev waits. */
		cur = ib_device_get_netdev(&dev->ibdev, port + 1);
		if (cur == ndev)
			hpu_ib_set_netdev(dev, port, NULL);
		dev_put(cur);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		hpu_ib_port_event(dev, port,
				  netif_running(ndev) && netif_carrier_ok(ndev));
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

/* Read the capabilities; a device without the engine reads zeros. */
static int hpu_ib_read_caps(struct hpu_ib_dev *dev)
{
	dev->max_qp = min_t(u32, hpu_ib_rd(dev, HPU_ROCE_MAX_QP), 1U << 24);
	dev->max_cq = min_t(u32, hpu_ib_rd(dev, HPU_ROCE_MAX_CQ), 1U << 24);
	dev->max_srq = min_t(u32, hpu_ib_rd(dev, HPU_ROCE_MAX_SRQ), 1U << 24);
	dev->max_mr = min_t(u32, hpu_ib_rd(dev, HPU_ROCE_MAX_MR), 1U << 24);
	dev->max_wr = hpu_ib_rd(dev, HPU_ROCE_MAX_WR);
	dev->max_cqe = hpu_ib_rd(dev, HPU_ROCE_MAX_CQE);
	dev->max_sge = min_t(u32, hpu_ib_rd(dev, HPU_ROCE_MAX_SGE), 32);
	if (dev->max_qp < 3 || !dev->max_cq || !dev->max_mr ||
	    dev->max_wr < 2 || dev->max_cqe < 2 || !dev->max_sge) {
		dev_info(&dev->adev->dev, "no RoCE engine (MAX_QP %u MAX_CQ %u MAX_MR %u)\n",
			 dev->max_qp, dev->max_cq, dev->max_mr);
		return -ENODEV;
	}
	return 0;
}

static void hpu_ib_ports_enable(struct hpu_ib_dev *dev, bool on)
{
	unsigned int p, i;

	for (p = 0; p < dev->num_ports; p++) {
		for (i = 0; on && i < HPU_ROCE_PORT_GIDS; i++)
			hpu_ib_write_gid(dev, p, i, NULL);
		hpu_ib_port_wr(&dev->ports[p], HPU_ROCE_PORT_CTRL,
			       on ? HPU_ROCE_CTRL_ENABLE : 0);
	}
}

static void hpu_ib_free(struct hpu_ib_dev *dev)
{
	kvfree(dev->mr_variant);
	ida_destroy(&dev->pd_ida);
	ida_destroy(&dev->db_ida);
	ida_destroy(&dev->qp_ida);
	ida_destroy(&dev->cq_ida);
	ida_destroy(&dev->srq_ida);
	ida_destroy(&dev->mr_ida);
	WARN_ON(!xa_empty(&dev->users));
	xa_destroy(&dev->users);
	mutex_destroy(&dev->users_lock);
	WARN_ON(!list_empty(&dev->kept));
	mutex_destroy(&dev->kept_lock);
	xa_destroy(&dev->qps);
	xa_destroy(&dev->cqs);
	xa_destroy(&dev->srqs);
	mutex_destroy(&dev->eq_lock);
	mutex_destroy(&dev->cmd_lock);
	ib_dealloc_device(&dev->ibdev);
}

static int hpu_ib_init_dev(struct hpu_ib_dev *dev, struct auxiliary_device *adev)
{
	unsigned int p;

	dev->adev = adev;
	dev->dma_dev = hpu_rdma_dma_device(adev);
	dev->regs = hpu_rdma_ctrl_regs(adev);
	dev->num_ports = hpu_rdma_num_ports(adev);
	dev->num_db_pages = hpu_rdma_num_db_pages(adev);
	dev->irq = hpu_rdma_eq_irq(adev);
	mutex_init(&dev->cmd_lock);
	mutex_init(&dev->eq_lock);
	INIT_WORK(&dev->rescan_work, hpu_ib_rescan_work);
	ida_init(&dev->pd_ida);
	ida_init(&dev->db_ida);
	ida_init(&dev->qp_ida);
	ida_init(&dev->cq_ida);
	ida_init(&dev->srq_ida);
	ida_init(&dev->mr_ida);
	xa_init(&dev->qps);
	xa_init(&dev->cqs);
	xa_init(&dev->srqs);
	mutex_init(&dev->users_lock);
	xa_init(&dev->users);
	mutex_init(&dev->kept_lock);
	INIT_LIST_HEAD(&dev->kept);
	for (p = 0; p < dev->num_ports; p++) {
		dev->ports[p].regs = hpu_rdma_port_regs(adev, p);
		spin_lock_init(&dev->ports[p].cnt_lock);
	}
	if (dev->irq < 0)
		return dev->irq;
	if (!dev->num_db_pages)
		return -ENODEV;
	/*
	 * A doorbell page is mapped whole into its one process: with pages
	 * larger than the device's, the mapping would take in the doorbell
	 * pages of other contexts.
	 */
	if (PAGE_SIZE != HPU_ROCE_DB_PAGE_SIZE) {
		dev_err(&adev->dev, "%lu-byte pages: the doorbell pages are %u bytes, no RDMA device\n",
			PAGE_SIZE, HPU_ROCE_DB_PAGE_SIZE);
		return -EOPNOTSUPP;
	}
	return hpu_ib_read_caps(dev);
}

static void hpu_ib_setup_ibdev(struct hpu_ib_dev *dev)
{
	struct ib_device *ibdev = &dev->ibdev;
	struct pci_dev *pdev = to_pci_dev(dev->dma_dev);
	u8 guid[8];

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = dev->num_ports;
	ibdev->num_comp_vectors = 1;
	ibdev->dev.parent = &dev->adev->dev;
	/* EUI-64 from the PCI address: stable across resets and reloads. */
	guid[0] = 0x02;
	guid[1] = 'h';
	guid[2] = 'p';
	guid[3] = 'u';
	guid[4] = pci_domain_nr(pdev->bus) & 0xff;
	guid[5] = pdev->bus->number;
	guid[6] = pdev->devfn;
	guid[7] = 0;
	memcpy(&ibdev->node_guid, guid, sizeof(guid));
	strscpy(ibdev->node_desc, "hpu RoCE v2", sizeof(ibdev->node_desc));
	ib_set_device_ops(ibdev, &hpu_ib_dev_ops);
	ib_set_device_ops(ibdev, &hpu_ib_verbs_ops);
}

static int hpu_ib_probe(struct auxiliary_device *adev,
			const struct auxiliary_device_id *id)
{
	struct hpu_ib_dev *dev;
	int ret;

	dev = ib_alloc_device(hpu_ib_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	ret = hpu_ib_init_dev(dev, adev);
	if (ret)
		goto err_free;
	dev->mr_variant = kvzalloc(dev->max_mr, GFP_KERNEL);
	if (!dev->mr_variant) {
		ret = -ENOMEM;
		goto err_free;
	}
	hpu_ib_setup_ibdev(dev);

	writel(HPU_ROCE_CTRL_ENABLE, dev->regs + HPU_ROCE_CTRL);
	ret = hpu_ib_eq_init(dev);
	if (ret)
		goto err_disable;
	hpu_ib_ports_enable(dev, true);

	/* Replays NETDEV_REGISTER for the netdevs already there. */
	dev->nb.notifier_call = hpu_ib_netdev_event;
	ret = register_netdevice_notifier(&dev->nb);
	if (ret)
		goto err_eq;

	ret = ib_register_device(&dev->ibdev, HPU_IB_DEVICE_NAME_PREFIX "_%d",
				 dev->dma_dev);
	if (ret)
		goto err_nb;
	rtnl_lock();
	WRITE_ONCE(dev->registered, true);
	rtnl_unlock();
	auxiliary_set_drvdata(adev, dev);
	ibdev_info(&dev->ibdev, "%u ports, %u QPs, %u CQs, %u MRs, %u doorbell pages\n",
		   dev->num_ports, dev->max_qp - 2, dev->max_cq, dev->max_mr - 1,
		   dev->num_db_pages);
	return 0;

err_nb:
	unregister_netdevice_notifier(&dev->nb);
err_eq:
	hpu_ib_ports_enable(dev, false);
	hpu_ib_eq_fini(dev);
err_disable:
	writel(0, dev->regs + HPU_ROCE_CTRL);
err_free:
	hpu_ib_free(dev);
	return ret;
}

static void hpu_ib_remove(struct auxiliary_device *adev)
{
	struct hpu_ib_dev *dev = auxiliary_get_drvdata(adev);

	rtnl_lock();
	WRITE_ONCE(dev->registered, false);
	rtnl_unlock();
	/* Not scheduled again: the notifier saw registered false under rtnl. */
	cancel_work_sync(&dev->rescan_work);
	/* Destroys every user object (DESTROY commands), then unregisters. */
	ib_unregister_device(&dev->ibdev);
	unregister_netdevice_notifier(&dev->nb);
	hpu_ib_ports_enable(dev, false);
	hpu_ib_eq_fini(dev);
	writel(0, dev->regs + HPU_ROCE_CTRL);
	/* No object is left in the engine: what it could reach may go. */
	hpu_ib_kept_release(dev);
	hpu_ib_free(dev);
}

static const struct auxiliary_device_id hpu_ib_id_table[] = {
	{ .name = "hpu." HPU_RDMA_ADEV_NAME },
	{}
};
MODULE_DEVICE_TABLE(auxiliary, hpu_ib_id_table);

static struct auxiliary_driver hpu_ib_driver = {
	.name = "ib",
	.probe = hpu_ib_probe,
	.remove = hpu_ib_remove,
	.id_table = hpu_ib_id_table,
};
module_auxiliary_driver(hpu_ib_driver);

MODULE_DESCRIPTION("hpu RoCE v2 RDMA device (ib_device of hpu.rdma)");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(HPU_RDMA);
