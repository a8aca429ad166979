// SPDX-License-Identifier: GPL-2.0-only
/*
 * hpu_en: Ethernet netdevs of the HPU's NIC ports.
 *
 * An auxiliary driver of the "hpu.en" devices hpu.ko adds, one per HPU
 * with NIC ports (spec version 7); one netdev per port. Everything it
 * needs of hpu.ko comes through the functions hpu.ko exports (namespace
 * HPU_NIC, hpu_nic.h); hpu.ko deletes the auxiliary device around every
 * device reset, so the netdevs go away and come back then.
 * Documentation/driver/nic.md.
 *
 * Copyright (c) 2026 The hpu authors
 */

#include <linux/auxiliary_bus.h>
#include <linux/etherdevice.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/unaligned.h>

#include "hpu_en.h"
#include "hpu_nic.h"

/* Stop NAPI and the transmit queue, then the rings. Caller holds rtnl. */
static int hpu_en_quiesce(struct hpu_en_port *port)
{
	netif_tx_disable(port->ndev);
	napi_disable(&port->napi);
	return hpu_en_hw_stop(port);
}

/*
 * Start the rings again (or for the first time after a swap): NAPI
 * before the causes are unmasked. The carrier is read afresh: starting
 * clears the LINK cause, so a link change while the rings were stopped
 * would otherwise be lost. Caller holds rtnl. 0, or -EIO (logged) with the
 * rings stopped, NAPI enabled and the queue stopped: the transmit
 * watchdog retries.
 */
static int hpu_en_resume(struct hpu_en_port *port)
{
	int ret;

	hpu_en_rings_reset(port);
	napi_enable(&port->napi);
	ret = hpu_en_hw_start(port);
	if (ret)
		return ret;
	hpu_en_update_carrier(port);
	netif_tx_wake_all_queues(port->ndev);
	return 0;
}

static int hpu_en_open(struct net_device *ndev)
{
	struct hpu_en_port *port = netdev_priv(ndev);
	int ret;

	if (port->wedged) {
		netdev_err(ndev, "the rings did not stop earlier: reset the device first\n");
		return -EIO;
	}
	ret = hpu_en_ring_alloc(port, &port->tx, port->tx_size, 0, false);
	if (ret)
		return ret;
	ret = hpu_en_ring_alloc(port, &port->rx, port->rx_size,
				hpu_en_rx_buf_size(ndev->mtu), true);
	if (ret)
		goto err_tx;
	ret = request_irq(port->irq, hpu_en_irq, 0, port->irq_name, port);
	if (ret) {
		netdev_err(ndev, "cannot request interrupt %d: %d\n", port->irq, ret);
		goto err_rx;
	}
	hpu_en_rings_reset(port);
	napi_enable(&port->napi);
	ret = hpu_en_hw_start(port);
	if (ret)
		goto err_stop;

	port->running = true;
	hpu_en_update_carrier(port);
	netif_tx_start_all_queues(ndev);
	return 0;

err_stop:
	/* hpu_en_hw_start() stopped the rings again, or wedged the port. */
	napi_disable(&port->napi);
	free_irq(port->irq, port);
	if (port->wedged)
		return ret;	/* the device may still reach the rings */
err_rx:
	hpu_en_ring_free(port, &port->rx, true);
err_tx:
	hpu_en_ring_free(port, &port->tx, false);
	return ret;
}

static int hpu_en_stop(struct net_device *ndev)
{
	struct hpu_en_port *port = netdev_priv(ndev);
	int ret;

	if (!port->running)
		return 0;
	port->running = false;
	ret = hpu_en_quiesce(port);
	free_irq(port->irq, port);
	netif_carrier_off(ndev);
	if (ret)
		return 0;	/* wedged: the rings stay allocated */
	hpu_en_tx_reclaim(port);
	hpu_en_ring_free(port, &port->tx, false);
	hpu_en_ring_free(port, &port->rx, true);
	return 0;
}

/*
 * With the rings stopped and the transmit ring reclaimed: exchange the
 * port's rings with @tx (if @new_tx) and @rx (if @new_rx), repost the
 * receive ring the port keeps, and set the MTU. Caller holds rtnl.
 */
static void hpu_en_swap_rings(struct hpu_en_port *port,
			      struct hpu_en_ring *tx, bool new_tx,
			      struct hpu_en_ring *rx, bool new_rx,
			      unsigned int mtu)
{
	hpu_en_tx_reclaim(port);
	if (new_tx)
		swap(port->tx, *tx);
	if (new_rx)
		swap(port->rx, *rx);
	else
		hpu_en_rx_repost(port);
	WRITE_ONCE(port->ndev->mtu, mtu);
}

/**
 * hpu_en_reconfigure() - change ring sizes or MTU, new rings first
 * @port: the port
 * @tx_size: transmit ring entries
 * @rx_size: receive ring entries
 * @mtu: the MTU
 *
 * On a running port, the rings that change are allocated whole (the
 * receive ring with all its buffers) while the old ones keep running; only
 * then is the port stopped, the new rings swapped in and started, and the
 * old ones freed. All or nothing: if the allocation fails, or the device
 * refuses the new rings, the old rings and MTU are what the port runs
 * with afterwards. A port that is down only records the values. Caller
 * holds rtnl.
 *
 * Return: 0; -ENOMEM (nothing changed); -ETIMEDOUT if the rings did not
 * stop (the port is wedged: down until the device is reset); -EIO if the
 * device refused the new rings (nothing changed; if it then refused the
 * old ones too, they are installed but stopped and the transmit watchdog
 * retries).
 */
int hpu_en_reconfigure(struct hpu_en_port *port, u32 tx_size, u32 rx_size,
		       unsigned int mtu)
{
	unsigned int old_mtu = port->ndev->mtu;
	struct hpu_en_ring tx = {}, rx = {};
	bool new_tx, new_rx;
	int ret;

	ASSERT_RTNL();
	if (!port->running) {
		port->tx_size = tx_size;
		port->rx_size = rx_size;
		WRITE_ONCE(port->ndev->mtu, mtu);
		return 0;
	}
	if (port->wedged)
		return -EIO;

	new_tx = tx_size != port->tx.size;
	new_rx = rx_size != port->rx.size ||
		 hpu_en_rx_buf_size(mtu) != port->rx.buf_size;
	if (new_tx) {
		ret = hpu_en_ring_alloc(port, &tx, tx_size, 0, false);
		if (ret)
			return ret;
	}
	if (new_rx) {
		ret = hpu_en_ring_alloc(port, &rx, rx_size,
					hpu_en_rx_buf_size(mtu), true);
		if (ret) {
			hpu_en_ring_free(port, &tx, false);
			return ret;
		}
	}

	ret = hpu_en_quiesce(port);
	if (ret) {
		/* Wedged: the old rings stay, stopped. */
		hpu_en_ring_free(port, &tx, false);
		hpu_en_ring_free(port, &rx, true);
		napi_enable(&port->napi);
		return ret;
	}
	hpu_en_swap_rings(port, &tx, new_tx, &rx, new_rx, mtu);
	ret = hpu_en_resume(port);
	if (ret && !port->wedged) {
		/* Refused: back to the old rings, stopped by hw_start. */
		netdev_err(port->ndev, "the port refused the new rings: keeping the old ones\n");
		ret = hpu_en_quiesce(port);
		if (ret) {
			napi_enable(&port->napi);	/* wedged, as above */
		} else {
			hpu_en_swap_rings(port, &tx, new_tx, &rx, new_rx,
					  old_mtu);
			hpu_en_resume(port);
			ret = -EIO;
		}
	}
	port->tx_size = port->tx.size;
	port->rx_size = port->rx.size;

	/* The rings not in use: the device was stopped on them. */
	hpu_en_ring_free(port, &tx, false);
	hpu_en_ring_free(port, &rx, true);
	return ret;
}

static int hpu_en_change_mtu(struct net_device *ndev, int new_mtu)
{
	struct hpu_en_port *port = netdev_priv(ndev);

	/* The core checked it against min_mtu and max_mtu. */
	return hpu_en_reconfigure(port, port->tx_size, port->rx_size, new_mtu);
}

static void hpu_en_write_mac(struct hpu_en_port *port, const u8 *mac)
{
	hpu_en_wr32(port, HPU_NIC_MAC_LO, get_unaligned_le32(mac));
	hpu_en_wr32(port, HPU_NIC_MAC_HI, get_unaligned_le16(mac + 4));
}

static int hpu_en_set_mac_address(struct net_device *ndev, void *p)
{
	struct hpu_en_port *port = netdev_priv(ndev);
	int ret;

	/* -EADDRNOTAVAIL for a multicast or zero address. */
	ret = eth_prepare_mac_addr_change(ndev, p);
	if (ret)
		return ret;
	eth_commit_mac_addr_change(ndev, p);
	hpu_en_write_mac(port, ndev->dev_addr);
	return 0;
}

/*
 * The port filters on its one address and takes every multicast frame:
 * promiscuous mode is all there is to set. Secondary unicast addresses
 * make the core ask for it (no IFF_UNICAST_FLT). Called under the
 * netdev's address lock, BHs off.
 */
static void hpu_en_set_rx_mode(struct net_device *ndev)
{
	struct hpu_en_port *port = netdev_priv(ndev);

	/*
	 * RX_FILTER is apart from CTRL's enable bits: no read-modify-write,
	 * no ring restarted. The core calls this after every open, and
	 * stopping the rings leaves the register as it is.
	 */
	hpu_en_wr32(port, HPU_NIC_RX_FILTER,
		    ndev->flags & IFF_PROMISC ? HPU_NIC_RX_FILTER_PROMISC : 0);
}

static void hpu_en_tx_timeout(struct net_device *ndev, unsigned int txqueue)
{
	struct hpu_en_port *port = netdev_priv(ndev);

	atomic64_inc(&port->tx_timeouts);
	if (READ_ONCE(port->wedged)) {
		/* The watchdog fires every period until the device is reset. */
		netdev_warn_once(ndev, "transmit timeout on a wedged port: reset the device\n");
		return;
	}
	if (net_ratelimit())
		netdev_warn(ndev, "transmit timeout: TX_PI %u, TX_CI %u (driver %u/%u), CTRL 0x%08x, ERR_STATUS 0x%08x; restarting the rings\n",
			    hpu_en_rd32(port, HPU_NIC_TX_PI),
			    hpu_en_rd32(port, HPU_NIC_TX_CI),
			    READ_ONCE(port->tx.pi), READ_ONCE(port->tx.ci),
			    hpu_en_rd32(port, HPU_NIC_CTRL),
			    hpu_en_rd32(port, HPU_NIC_ERR_STATUS));
	schedule_work(&port->restart_work);
}

/*
 * Stop and restart the rings without reallocating them: after a transmit
 * timeout or a ring the device stopped (TX_FETCH, RX_FETCH). Frames on
 * the transmit ring are dropped.
 */
static void hpu_en_restart_work(struct work_struct *work)
{
	struct hpu_en_port *port = container_of(work, struct hpu_en_port,
						restart_work);

	rtnl_lock();
	if (port->running && !port->wedged) {
		atomic64_inc(&port->restarts);
		if (!hpu_en_quiesce(port)) {
			hpu_en_tx_reclaim(port);
			hpu_en_rx_repost(port);
			hpu_en_resume(port);
		} else {
			napi_enable(&port->napi);
		}
	}
	rtnl_unlock();
}

static int hpu_en_get_phys_port_name(struct net_device *ndev, char *name,
				     size_t len)
{
	struct hpu_en_port *port = netdev_priv(ndev);

	if (snprintf(name, len, "p%u", port->idx) >= len)
		return -EINVAL;
	return 0;
}

static const struct net_device_ops hpu_en_netdev_ops = {
	.ndo_open = hpu_en_open,
	.ndo_stop = hpu_en_stop,
	.ndo_start_xmit = hpu_en_start_xmit,
	.ndo_get_stats64 = hpu_en_get_stats64,
	.ndo_set_mac_address = hpu_en_set_mac_address,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_change_mtu = hpu_en_change_mtu,
	.ndo_set_rx_mode = hpu_en_set_rx_mode,
	.ndo_tx_timeout = hpu_en_tx_timeout,
	.ndo_get_phys_port_name = hpu_en_get_phys_port_name,
};

/* The permanent MAC, or a random one if the device's is not usable. */
static void hpu_en_init_mac(struct hpu_en_port *port)
{
	struct net_device *ndev = port->ndev;
	u8 mac[ETH_ALEN];

	put_unaligned_le32(hpu_en_rd32(port, HPU_NIC_PERM_MAC_LO), mac);
	put_unaligned_le16(hpu_en_rd32(port, HPU_NIC_PERM_MAC_HI), mac + 4);
	if (is_valid_ether_addr(mac)) {
		eth_hw_addr_set(ndev, mac);
		ether_addr_copy(ndev->perm_addr, mac);
	} else {
		eth_hw_addr_random(ndev);
		netdev_warn(ndev, "port %u: invalid permanent MAC %pM, using %pM\n",
			    port->idx, mac, ndev->dev_addr);
	}
	hpu_en_write_mac(port, ndev->dev_addr);
}

static int hpu_en_port_probe(struct hpu_en_dev *edev, unsigned int idx)
{
	struct auxiliary_device *adev = edev->adev;
	struct hpu_en_port *port;
	struct net_device *ndev;
	unsigned int i;
	int ret;

	ndev = alloc_etherdev(sizeof(*port));
	if (!ndev)
		return -ENOMEM;
	SET_NETDEV_DEV(ndev, &adev->dev);
	port = netdev_priv(ndev);
	port->ndev = ndev;
	port->edev = edev;
	port->idx = idx;
	port->regs = hpu_nic_port_regs(adev, idx);
	port->irq = hpu_nic_port_irq(adev, idx);
	if (!port->regs || port->irq < 0) {
		ret = port->irq < 0 ? port->irq : -ENXIO;
		dev_err(&adev->dev, "port %u: no registers or interrupt: %d\n",
			idx, ret);
		free_netdev(ndev);
		return ret;
	}
	snprintf(port->irq_name, sizeof(port->irq_name), "%s-p%u@%s",
		 HPU_EN_DRIVER_NAME, idx, dev_name(edev->dma_dev));
	port->tx_size = HPU_EN_TX_RING_DEFAULT;
	port->rx_size = HPU_EN_RX_RING_DEFAULT;
	spin_lock_init(&port->cnt_lock);
	mutex_init(&port->inj_lock);
	INIT_WORK(&port->restart_work, hpu_en_restart_work);
	u64_stats_init(&port->xstats.syncp);
	u64_stats_init(&port->nstats.syncp);

	ndev->netdev_ops = &hpu_en_netdev_ops;
	ndev->ethtool_ops = &hpu_en_ethtool_ops;
	ndev->watchdog_timeo = 5 * HZ;
	ndev->min_mtu = HPU_NIC_MTU_MIN;
	ndev->max_mtu = HPU_NIC_MTU_MAX;
	ndev->dev_port = idx;
	ndev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	netif_napi_add(ndev, &port->napi, hpu_en_poll);
	hpu_en_init_mac(port);
	for (i = 0; i < HPU_NIC_NUM_COUNTERS; i++)
		port->hw_base[i] = hpu_en_read_counter(port, i);
	/* The rings are off (reset values); so is the carrier until open. */
	netif_carrier_off(ndev);

	ret = register_netdev(ndev);
	if (ret) {
		dev_err(&adev->dev, "port %u: cannot register the netdev: %d\n",
			idx, ret);
		mutex_destroy(&port->inj_lock);
		free_netdev(ndev);
		return ret;
	}
	edev->ports[idx] = ndev;
	hpu_en_debugfs_port_init(port);
	return 0;
}

/* Free a port's netdev, unregistered already. */
static void hpu_en_port_free(struct hpu_en_dev *edev, unsigned int idx)
{
	struct net_device *ndev = edev->ports[idx];
	struct hpu_en_port *port;

	if (!ndev)
		return;
	port = netdev_priv(ndev);
	/* Stopped: the work finds the port not running, if it runs at all. */
	cancel_work_sync(&port->restart_work);
	if (port->wedged)
		netdev_err(ndev, "leaking the rings of a port that did not stop\n");
	mutex_destroy(&port->inj_lock);
	free_netdev(ndev);
	edev->ports[idx] = NULL;
}

static void hpu_en_remove(struct auxiliary_device *adev)
{
	struct hpu_en_dev *edev = auxiliary_get_drvdata(adev);
	LIST_HEAD(list);
	unsigned int i;

	/* No injection into a port being removed. */
	hpu_en_debugfs_dev_fini(edev);
	/*
	 * All ports in one batch: one RCU grace period instead of one per
	 * port, which matters because hpu.ko does this before every reset.
	 */
	rtnl_lock();
	for (i = 0; i < edev->num_ports; i++)
		if (edev->ports[i])
			unregister_netdevice_queue(edev->ports[i], &list);
	unregister_netdevice_many(&list);
	rtnl_unlock();
	for (i = 0; i < edev->num_ports; i++)
		hpu_en_port_free(edev, i);
}

static int hpu_en_probe(struct auxiliary_device *adev,
			const struct auxiliary_device_id *id)
{
	struct hpu_en_dev *edev;
	unsigned int i;
	int ret;

	edev = devm_kzalloc(&adev->dev, sizeof(*edev), GFP_KERNEL);
	if (!edev)
		return -ENOMEM;
	edev->adev = adev;
	edev->dma_dev = hpu_nic_dma_device(adev);
	edev->num_ports = min_t(unsigned int, hpu_nic_num_ports(adev),
				HPU_NIC_MAX_PORTS);
	if (!edev->num_ports)
		return -ENODEV;
	auxiliary_set_drvdata(adev, edev);
	hpu_en_debugfs_dev_init(edev);

	for (i = 0; i < edev->num_ports; i++) {
		ret = hpu_en_port_probe(edev, i);
		if (ret)
			goto err;
	}
	dev_info(&adev->dev, "%u ports on %s: %s to %s\n", edev->num_ports,
		 dev_name(edev->dma_dev), edev->ports[0]->name,
		 edev->ports[edev->num_ports - 1]->name);
	return 0;

err:
	hpu_en_remove(adev);
	return ret;
}

static const struct auxiliary_device_id hpu_en_id_table[] = {
	{ .name = "hpu." HPU_NIC_ADEV_NAME },
	{ }
};
MODULE_DEVICE_TABLE(auxiliary, hpu_en_id_table);

static struct auxiliary_driver hpu_en_driver = {
	.probe = hpu_en_probe,
	.remove = hpu_en_remove,
	.id_table = hpu_en_id_table,
};

static int __init hpu_en_init(void)
{
	int ret;

	hpu_en_debugfs_init();
	ret = auxiliary_driver_register(&hpu_en_driver);
	if (ret)
		hpu_en_debugfs_exit();
	return ret;
}
module_init(hpu_en_init);

static void __exit hpu_en_exit(void)
{
	auxiliary_driver_unregister(&hpu_en_driver);
	hpu_en_debugfs_exit();
}
module_exit(hpu_en_exit);

MODULE_DESCRIPTION("HPU NIC ports: Ethernet");
MODULE_AUTHOR("The hpu authors");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(HPU_NIC);
