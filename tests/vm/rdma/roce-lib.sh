# SPDX-License-Identifier: MIT
#
# Shell helpers shared by the guest scripts of the rxe baseline
# (rxe-baseline.sh) and the interop run (tests/vm/interop/interop-guest.sh).
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
