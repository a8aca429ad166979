# SPDX-License-Identifier: MIT
#
# Helpers of the RDMA guest tests (sourced by rdma-tests.sh and
# verbs-tools.sh): finding an HPU's ports, netdevs and ib device in sysfs.
# The caller sets TS (HPU_TIME_SCALE).
#
# Copyright (c) 2026 The hpu authors

# wait_for SECONDS CMD...: until CMD succeeds (times TS), quietly.
wait_for() {
	local t=$(( $1 * 10 * TS )); shift
	while [ "$t" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1; t=$((t - 1))
	done
	return 1
}

# HPUs with NIC ports (an hpu.en auxiliary device): their PCI addresses.
hpus() {
	local a
	for a in /sys/bus/auxiliary/devices/hpu.en.*; do
		[ -e "$a" ] && basename "$(readlink -f "$a/..")"
	done | sort -u
}
# The netdev of port $2 of the HPU at $1.
port_netdev() {
	local n
	for n in /sys/class/net/*; do
		[ "$(cat "$n/dev_port" 2>/dev/null)" = "$2" ] || continue
		case "$(readlink -f "$n/device")" in
		*/"$1"/hpu.en.*) echo "${n##*/}"; return 0 ;;
		esac
	done
	return 1
}
ibdevs() { ls /sys/class/infiniband 2>/dev/null | grep '^hpu_'; }
# The ib device of the HPU at $1.
ibdev_of() {
	local i
	for i in $(ibdevs); do
		case "$(readlink -f "/sys/class/infiniband/$i/device")" in
		*/"$1"/hpu.rdma.*) echo "$i"; return 0 ;;
		esac
	done
	return 1
}
