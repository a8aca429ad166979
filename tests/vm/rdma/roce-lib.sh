# SPDX-License-Identifier: MIT
#
# Shell helpers shared by the guest scripts of the rxe baseline
# (rxe-baseline.sh), the interop run (tests/vm/interop/interop-guest.sh) and
# the MPI run (tests/vm/mpi/mpi-guest.sh).
# Sourced, not run.
#
# Copyright (c) 2026 The hpu authors

# ifname_of MAC: the interface with this MAC address.
ifname_of() {
	local d
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }
	done
	return 1
}

# roce_v2_gid DEV IPV4: the RoCE v2 GID index of port 1 of an RDMA device
# for an IPv4 address (the GID ::ffff:a.b.c.d).
roce_v2_gid() {
	local dev=$1 ip=$2 want n g
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $(echo "$ip" | tr . ' '))
	for g in /sys/class/infiniband/$dev/ports/1/gids/*; do
		n=${g##*/}
		[ "$(cat "$g" 2>/dev/null)" = "$want" ] || continue
		[ "$(cat /sys/class/infiniband/$dev/ports/1/gid_attrs/types/$n 2>/dev/null)" = "RoCE v2" ] || continue
		echo "$n"
		return 0
	done
	return 1
}

# hpu_port0: the netdev of port 0 of the first HPU (hpu_en).
hpu_port0() {
	local n dev
	for n in /sys/class/net/*; do
		dev=$(readlink -f "$n/device" 2>/dev/null) || continue
		case "${dev##*/}" in hpu.en.*) ;; *) continue ;; esac
		[ "$(cat "$n/dev_port")" = 0 ] && { echo "${n##*/}"; return 0; }
	done
	return 1
}

# hpu_ibdev: the first HPU's RDMA device (hpu_ib).
hpu_ibdev() {
	local i
	for i in /sys/class/infiniband/hpu_*; do
		[ -e "$i" ] && { echo "${i##*/}"; return 0; }
	done
	return 1
}

# port_active DEV: port 1 of an RDMA device is ACTIVE.
port_active() { grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state"; }
