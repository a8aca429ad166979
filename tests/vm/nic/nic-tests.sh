#!/bin/bash
# SPDX-License-Identifier: MIT
#
# NIC tests (hpu_en.ko, Documentation/driver/nic.md), run by
# tests/vm/guest-suite.sh in the guest with hpu.ko and hpu_en.ko loaded.
# Each check appends "PASS name" or "FAIL name: why" to $HPU_OUT/results.txt;
# measured figures go to $HPU_OUT/nic-figures.txt.
#
# The wiring tests/run-tests.py gives the guest (QEMU -netdev dgram pairs
# on the host's loopback):
#   first HPU (PCI order), port 0  <->  first HPU, port 1
#   first HPU, port 2              <->  virtio-net 52:54:00:48:50:01
#   virtio-net 52:54:00:48:50:02   <->  virtio-net 52:54:00:48:50:03
#                                       (the baseline of the figures)
# Every end sits in its own network namespace, addresses in 192.0.2.0/24
# and IPv6 link-local only:
#   n0: hA0 192.0.2.1   n1: hA1 192.0.2.2   n2: hA2 192.0.2.3
#   nv: the virtio peer of hA2, 192.0.2.4
#   b1, b2: the virtio pair, 192.0.2.5 and 192.0.2.6
#
# Usage: nic-tests.sh [test...]   (default: all, in order; the last one
# unloads hpu_en)
#
# Copyright (c) 2026 The hpu authors

REPO=$(cd "$(dirname "$0")/../../.." && pwd)
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/results.txt
FIG=$OUT/nic-figures.txt
KO=${HPU_KO:-$REPO/kernel/hpu.ko}
KO_EN=${HPU_EN_KO:-$(dirname "$KO")/hpu_en.ko}
NICPY="$REPO/tests/vm/nic/nic_tcp.py"
DBG=/sys/kernel/debug/hpu_en
# Time scale of the debug kernel (make test-debug).
TS=${HPU_TIME_SCALE:-1}
# Bytes of the TCP transfers.
BULK=${HPU_NIC_BULK:-16777216}

pass() { echo "PASS vm/nic/$1" >> "$RES"; echo "PASS vm/nic/$1"; }
fail() { echo "FAIL vm/nic/$1: $2" >> "$RES"; echo "FAIL vm/nic/$1: $2"; }
figure() { echo "NIC $*" | tee -a "$FIG"; }
log() { echo "nic: $*"; }
nsx() { ns=$1; shift; ip netns exec "$ns" "$@"; }
asuser() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# coreutils echo: its write error names the errno.
sysw() { /bin/echo "$1" > "$2"; }

SMI=${HPU_SMI:-$REPO/build/tools/hpu-smi/hpu-smi}

# Wait up to $1 seconds (times the scale) for a command to succeed.
wait_for() {
	local t=$(( $1 * 10 * TS )); shift
	while [ "$t" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1; t=$((t - 1))
	done
	return 1
}

# ---- discovery ----

hpus() { local d; for d in /sys/bus/pci/drivers/hpu/0000:*; do [ -e "$d" ] && echo "${d##*/}"; done | sort; }
BDF0=$(hpus | sed -n 1p)

# The netdev (in this namespace) of port $2 of the HPU at PCI address $1.
port_dev() {
	local n dev
	for n in /sys/class/net/*; do
		dev=$(readlink -f "$n/device" 2>/dev/null) || continue
		case "${dev##*/}" in hpu.en.*) ;; *) continue ;; esac
		[ "$(basename "$(dirname "$dev")")" = "$1" ] || continue
		[ "$(cat "$n/dev_port")" = "$2" ] && { echo "${n##*/}"; return 0; }
	done
	return 1
}

mac_dev() { grep -il "^$1\$" /sys/class/net/*/address 2>/dev/null | head -n1 | cut -d/ -f5; }

# Every hpu_en netdev in this namespace: "name bdf port".
all_ports() {
	local n dev
	for n in /sys/class/net/*; do
		dev=$(readlink -f "$n/device" 2>/dev/null) || continue
		case "${dev##*/}" in hpu.en.*) ;; *) continue ;; esac
		echo "${n##*/} $(basename "$(dirname "$dev")") $(cat "$n/dev_port")"
	done
}

# Put netdev $1 (init namespace) into namespace $2 as $3 with address $4, up.
place() {
	ip link set "$1" down && ip link set "$1" name "$3" && ip link set "$3" netns "$2" &&
	ip -n "$2" addr add "$4/24" dev "$3" && ip -n "$2" link set "$3" up
}

# The first HPU's ports 0-2 into n0, n1, n2 (again after every reset or
# reload: the netdevs come back in the init namespace).
setup_hpu() {
	local p d
	for p in 0 1 2; do
		ip -n n$p link show hA$p >/dev/null 2>&1 && continue
		wait_for 10 port_dev "$BDF0" $p || { echo "no netdev for port $p of $BDF0"; return 1; }
		d=$(port_dev "$BDF0" $p)
		place "$d" n$p hA$p 192.0.2.$((p + 1)) || return 1
	done
	for p in 0 1 2; do
		wait_for 10 carrier n$p hA$p || { echo "no carrier on hA$p"; return 1; }
	done
}

carrier() { ip -n "$1" link show "$2" 2>/dev/null | grep -q LOWER_UP; }
no_carrier() { ip -n "$1" link show "$2" >/dev/null 2>&1 && ! carrier "$1" "$2"; }

setup() {
	local ns d
	for ns in n0 n1 n2 nv b1 b2; do
		ip netns del $ns 2>/dev/null
		ip netns add $ns || return 1
		ip -n $ns link set lo up
		# No router solicitations: fewer unrelated frames in the counts.
		nsx $ns sysctl -qw net.ipv6.conf.default.router_solicitations=0
	done
	modprobe virtio_net || return 1
	wait_for 5 mac_dev 52:54:00:48:50:01 || { echo "no virtio-net 52:54:00:48:50:01 (wiring missing?)"; return 1; }
	place "$(mac_dev 52:54:00:48:50:01)" nv vn 192.0.2.4 || return 1
	place "$(mac_dev 52:54:00:48:50:02)" b1 vb1 192.0.2.5 || return 1
	place "$(mac_dev 52:54:00:48:50:03)" b2 vb2 192.0.2.6 || return 1
	setup_hpu
}

# ---- counters ----

# ethtool -S counter $3 of $2 in namespace $1.
est() { nsx "$1" ethtool -S "$2" | awk -v k="$3:" '$1 == k { print $2 }'; }
# ip -s counter: $3 is rx or tx, $4 packets, bytes, errors, dropped...
ips() { ip -n "$1" -j -s link show "$2" | jq ".[0].stats64.$3.$4"; }

# ---- the tests ----

# One netdev per port of every HPU, named by port, with the spec's MAC
# (02:48:50 and the UUID's bytes 13, 14 and the high half of 15).
t_bind() {
	local name=$1 want=0 got i bad="" n bdf port uuid hex mac want_mac
	for i in $(echo "$HPU_EXPECT" | tr ';' ' '); do
		want=$((want + $(echo "$i" | cut -d: -f3)))
	done
	got=$(all_ports | wc -l)
	[ "$got" = "$want" ] || bad="$bad $got netdevs, want $want;"
	i=0
	for bdf in $(hpus); do
		uuid=$(echo "$HPU_EXPECT" | cut -d';' -f$((i + 1)) | cut -d: -f4)
		hex=$(echo "$uuid" | tr -d -)
		ls -d /sys/bus/pci/devices/$bdf/hpu.en.*/driver >/dev/null 2>&1 ||
			bad="$bad $bdf: auxiliary device not bound;"
		all_ports | while read -r n b port; do
			[ "$b" = "$bdf" ] || continue
			mac=$(cat /sys/class/net/$n/address)
			want_mac=$(printf '02:48:50:%s:%s:%02x' "${hex:26:2}" "${hex:28:2}" \
				$(( (0x${hex:30:2} & 0xf0) | port )))
			[ "$mac" = "$want_mac" ] || echo "$n MAC $mac, want $want_mac;"
			[ "$(ethtool -P "$n")" = "Permanent address: $want_mac" ] ||
				echo "$n permanent $(ethtool -P "$n");"
			[ "$(cat /sys/class/net/$n/phys_port_name)" = "p$port" ] || echo "$n phys_port_name;"
			ethtool -i "$n" | grep -qx "driver: hpu_en" || echo "$n driver;"
			ethtool -i "$n" | grep -qx "bus-info: $bdf" || echo "$n bus-info;"
		done > /tmp/nic-bind-bad
		bad="$bad$(tr '\n' ' ' < /tmp/nic-bind-bad)"
		i=$((i + 1))
	done
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

t_link() {
	local name=$1 bad="" d
	for d in 0 1 2; do
		carrier n$d hA$d || bad="$bad hA$d has no carrier;"
	done
	out=$(nsx n0 ethtool hA0)
	echo "$out" | grep -q "Speed: 100000Mb/s" || bad="$bad speed: $(echo "$out" | grep Speed);"
	echo "$out" | grep -q "Duplex: Full" || bad="$bad duplex;"
	echo "$out" | grep -q "Link detected: yes" || bad="$bad link not detected;"
	# Port 3 has no back end: up, but no carrier.
	d=$(port_dev "$BDF0" 3)
	if [ -z "$d" ]; then
		bad="$bad no netdev for port 3;"
	else
		ip link set "$d" up
		sleep $((1 * TS))
		ip link show "$d" | grep -q LOWER_UP && bad="$bad unwired $d has a carrier;"
		ethtool "$d" | grep -q "Link detected: no" || bad="$bad unwired $d: link detected;"
		ethtool "$d" | grep -q "Speed: Unknown" || bad="$bad unwired $d: speed known;"
		ip link set "$d" down
	fi
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

# hpu-smi's NIC views against what the kernel shows, in the namespace
# that holds port 0 (ip netns exec mounts that namespace's sysfs: the other
# ports' interfaces are out of its view) and in the init namespace (port 3,
# unwired and administratively down).
t_smi() {
	local name=$1 bad="" out mac mtu pfx st k v lo hi d
	pfx="($BDF0) port"
	out=$(nsx n0 "$SMI" -n link 2>&1) || bad="$bad -n link failed: $out;"
	echo "$out" | grep -q "$pfx 0: hA0 up\$" || bad="$bad link view of port 0: $(echo "$out" | grep "$pfx 0:");"
	echo "$out" | grep -q "$pfx 1: no interface" || bad="$bad port 1 seen from n0: $(echo "$out" | grep "$pfx 1:");"
	mac=$(nsx n0 cat /sys/class/net/hA0/address)
	mtu=$(nsx n0 cat /sys/class/net/hA0/mtu)
	out=$(nsx n0 "$SMI" -n ports 2>&1) || bad="$bad -n ports failed: $out;"
	echo "$out" | grep -q "$pfx 0: hA0 $mac MTU $mtu 100000 Mb/s\$" ||
		bad="$bad ports view of port 0 (want $mac, MTU $mtu): $(echo "$out" | grep "$pfx 0:");"
	# Counters: each within what sysfs read before and after the view.
	for k in rx_packets rx_bytes tx_packets tx_bytes; do
		eval "lo_$k=\$(nsx n0 cat /sys/class/net/hA0/statistics/$k)"
	done
	out=$(nsx n0 "$SMI" -n stats 2>&1) || bad="$bad -n stats failed: $out;"
	st=$(echo "$out" | sed -n "/$pfx 0: hA0\$/,+2p")
	for k in rx_packets rx_bytes tx_packets tx_bytes; do
		hi=$(nsx n0 cat /sys/class/net/hA0/statistics/$k)
		eval "lo=\$lo_$k"
		case $k in
		rx_packets) v=$(echo "$st" | sed -n 's/^ *RX: \([0-9]*\) packets.*/\1/p') ;;
		rx_bytes) v=$(echo "$st" | sed -n 's/^ *RX: [0-9]* packets, \([0-9]*\) bytes.*/\1/p') ;;
		tx_packets) v=$(echo "$st" | sed -n 's/^ *TX: \([0-9]*\) packets.*/\1/p') ;;
		tx_bytes) v=$(echo "$st" | sed -n 's/^ *TX: [0-9]* packets, \([0-9]*\) bytes.*/\1/p') ;;
		esac
		if [ -z "$v" ] || [ "$v" -lt "$lo" ] || [ "$v" -gt "$hi" ]; then
			bad="$bad $k '$v' not within $lo..$hi;"
		fi
	done
	[ "${lo_rx_packets:-0}" -gt 0 ] || bad="$bad no traffic counted before the view;"
	d=$(port_dev "$BDF0" 3)
	out=$("$SMI" -n link 2>&1)
	echo "$out" | grep -q "$pfx 3: $d unknown\$" || bad="$bad port 3 ($d, down): $(echo "$out" | grep "$pfx 3:");"
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

t_ping4() {
	local name=$1 out
	out=$(nsx n0 ping -c 20 -i 0.05 -W 2 192.0.2.2 2>&1)
	if echo "$out" | grep -q " 0% packet loss"; then
		pass "$name"
		figure "ping hA0 -> hA1: $(echo "$out" | grep rtt)"
		out=$(nsx b1 ping -c 20 -i 0.05 -W 2 192.0.2.6 2>&1)
		figure "ping virtio-net pair (baseline): $(echo "$out" | grep rtt)"
	else
		fail "$name" "$(echo "$out" | tail -n 2 | tr '\n' ' ')"
	fi
}

# The link-local address of $2 in namespace $1, once DAD is done.
ll_addr() {
	ip -n "$1" -6 addr show dev "$2" scope link | grep -v tentative |
		awk '/inet6/ { sub(/\/.*/, "", $2); print $2; exit }'
}
ll_ready() { [ -n "$(ll_addr "$1" "$2")" ]; }

t_ping6() {
	local name=$1 a out
	if ! wait_for 10 ll_ready n1 hA1 || ! wait_for 10 ll_ready n0 hA0; then
		fail "$name" "no link-local address: $(ip -n n1 -6 addr show dev hA1 | tr '\n' ' ')"
		return
	fi
	a=$(ll_addr n1 hA1)
	out=$(nsx n0 ping -6 -c 5 -i 0.2 -W 2 "$a%hA0" 2>&1)
	if echo "$out" | grep -q " 0% packet loss"; then pass "$name"
	else fail "$name" "$a: $(echo "$out" | tail -n 2 | tr '\n' ' ')"; fi
}

# TCP transfer of $4 bytes from namespace $1 to $2 (address $3), port $5;
# "OK <bytes> <s> <MB/s>" of the receiver on success.
bulk() {
	local from=$1 to=$2 addr=$3 bytes=$4 port=$5 seed=$RANDOM rs ss
	nsx "$to" python3 "$NICPY" serve "$port" "$bytes" "$seed" $((120 * TS)) > /tmp/nic-serve.$port 2>&1 &
	rs=$!
	ss=$(nsx "$from" python3 "$NICPY" send "$addr" "$port" "$bytes" "$seed" $((120 * TS)) 2>&1)
	wait $rs
	if grep -q ^OK /tmp/nic-serve.$port && echo "$ss" | grep -q ^OK; then
		cat /tmp/nic-serve.$port
		return 0
	fi
	echo "receiver: $(cat /tmp/nic-serve.$port) sender: $ss"
	return 1
}

t_tcp() {
	local name=$1 out out2 base
	if out=$(bulk n0 n1 192.0.2.2 "$BULK" 5001) && out2=$(bulk n1 n0 192.0.2.1 $((BULK / 2)) 5002); then
		pass "$name"
		figure "TCP hA0 -> hA1: $(echo "$out" | awk '{ print $2 " bytes in " $3 " s, " $4 " MB/s" }')"
		figure "TCP hA1 -> hA0: $(echo "$out2" | awk '{ print $2 " bytes in " $3 " s, " $4 " MB/s" }')"
		base=$(bulk b1 b2 192.0.2.6 "$BULK" 5003) &&
			figure "TCP virtio-net pair (baseline): $(echo "$base" | awk '{ print $2 " bytes in " $3 " s, " $4 " MB/s" }')"
	else
		fail "$name" "$out $out2"
	fi
}

# Counters of both ends, back to back: "txf txb rxf rxb ip_txp ip_txb
# ip_rxp ip_rxb" of hA0, then of hA1.
snap() {
	local ns d
	for ns in 0 1; do
		d=hA$ns
		nsx n$ns ethtool -S $d | awk '
			$1 == "hw_tx_frames:" { a = $2 } $1 == "hw_tx_bytes:" { b = $2 }
			$1 == "hw_rx_frames:" { c = $2 } $1 == "hw_rx_bytes:" { e = $2 }
			END { printf "%s %s %s %s ", a, b, c, e }'
		ip -n n$ns -j -s link show $d | jq -r '.[0].stats64 |
			"\(.tx.packets) \(.tx.bytes) \(.rx.packets) \(.rx.bytes) "'
	done
}

t_counters() {
	local name=$1 try s0 s1 why
	for try in 1 2 3; do
		sleep 1
		s0=$(snap)
		nsx n0 ping -q -c 200 -i 0.005 -s 1000 -W 2 192.0.2.2 > /tmp/nic-ping 2>&1
		sleep 1
		s1=$(snap)
		# shellcheck disable=SC2086
		why=$(echo $s0 $s1 | awk '{
			for (i = 1; i <= 16; i++) d[i] = $(i + 16) - $i
			# hA0: hw tx = ip tx (frames, bytes); hA1: hw rx = ip rx
			if (d[1] != d[5] || d[2] != d[6]) printf "hA0 hw tx %d/%d B, ip -s %d/%d B; ", d[1], d[2], d[5], d[6]
			if (d[11] != d[15] || d[12] != d[16]) printf "hA1 hw rx %d/%d B, ip -s %d/%d B; ", d[11], d[12], d[15], d[16]
			# the wire loses nothing, both ways
			if (d[1] != d[11]) printf "hA0 sent %d, hA1 received %d; ", d[1], d[11]
			if (d[9] != d[3]) printf "hA1 sent %d, hA0 received %d; ", d[9], d[3]
			if (d[15] < 200 || d[7] < 200) printf "only %d requests, %d replies counted; ", d[15], d[7]
			if (d[16] < 200 * 1042) printf "hA1 rx bytes %d < 200 * 1042; ", d[16]
		}')
		[ -z "$why" ] && break
		log "counters, try $try: $why"
	done
	grep -q " 0% packet loss" /tmp/nic-ping || why="$why ping: $(tail -n 2 /tmp/nic-ping | tr '\n' ' ')"
	if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why"; fi
	nsx n1 ethtool -S hA1 > "$OUT/nic-ethtool-S-hA1.txt"
}

t_mtu() {
	local name=$1 bad="" e0 e1
	ip -n n0 link set hA0 mtu 9000 && ip -n n1 link set hA1 mtu 9000 || bad="$bad mtu 9000 refused;"
	nsx n0 ping -c 3 -i 0.2 -W 2 -M "do" -s 8972 192.0.2.2 > /tmp/nic-ping 2>&1 ||
		bad="$bad jumbo ping: $(tail -n 2 /tmp/nic-ping | tr '\n' ' ');"
	for m in 9217 67 65536; do
		ip -n n0 link set hA0 mtu $m 2>/dev/null && bad="$bad mtu $m accepted;"
	done
	ip -n n0 link show hA0 | grep -q "mtu 9000 " || bad="$bad mtu changed by a refused request;"
	# A frame longer than the receiver's MTU + 18 is dropped by its port and
	# counted as a receive error.
	ip -n n1 link set hA1 mtu 1500
	e0=$(ips n1 hA1 rx errors)
	nsx n0 ping -c 3 -i 0.2 -W 1 -M "do" -s 4000 192.0.2.2 > /tmp/nic-ping 2>&1 &&
		bad="$bad a 4028-byte packet reached an MTU 1500 port;"
	e1=$(ips n1 hA1 rx errors)
	[ "$((e1 - e0))" -ge 3 ] || bad="$bad rx errors $e0 -> $e1 for 3 oversized frames;"
	ip -n n0 link set hA0 mtu 1500
	nsx n0 ping -c 2 -i 0.2 -W 2 192.0.2.2 >/dev/null 2>&1 || bad="$bad no ping back at MTU 1500;"
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

# Send $1 raw frames from hA0 to MAC $2.
raw() { nsx n0 python3 "$NICPY" raw hA0 "$2" "$1" >/dev/null; }

t_promisc() {
	local name=$1 try f0 r0 f1 r1 why
	for try in 1 2 3; do
		why=""
		f0=$(est n1 hA1 hw_rx_filtered); r0=$(est n1 hA1 hw_rx_frames)
		raw 5 02:00:00:00:00:99; sleep 0.5
		f1=$(est n1 hA1 hw_rx_filtered); r1=$(est n1 hA1 hw_rx_frames)
		[ $((f1 - f0)) = 5 ] && [ "$r1" = "$r0" ] || why="$why not promiscuous: filtered +$((f1 - f0)), received +$((r1 - r0));"
		ip -n n1 link set hA1 promisc on
		raw 5 02:00:00:00:00:99; sleep 0.5
		f0=$(est n1 hA1 hw_rx_filtered); r0=$(est n1 hA1 hw_rx_frames)
		[ "$f0" = "$f1" ] && [ $((r0 - r1)) -ge 5 ] || why="$why promiscuous: filtered +$((f0 - f1)), received +$((r0 - r1));"
		ip -n n1 link set hA1 promisc off
		raw 5 02:00:00:00:00:99; sleep 0.5
		f1=$(est n1 hA1 hw_rx_filtered)
		[ $((f1 - f0)) = 5 ] || why="$why promiscuous off again: filtered +$((f1 - f0));"
		[ -z "$why" ] && break
		log "promisc, try $try: $why"
	done
	if [ -z "$why" ]; then pass "$name"; else fail "$name" "$why"; fi
}

t_mac() {
	local name=$1 bad="" perm f0 f1
	perm=$(ip -n n1 link show hA1 | awk '/link\/ether/ { print $2 }')
	ip -n n1 link set hA1 address 02:48:50:aa:bb:cc || bad="$bad change refused;"
	ip -n n0 neigh flush dev hA0
	nsx n0 ping -c 3 -i 0.2 -W 2 192.0.2.2 >/dev/null 2>&1 || bad="$bad no ping with the new MAC;"
	# The port filters on the new address now.
	f0=$(est n1 hA1 hw_rx_filtered); raw 3 "$perm"; sleep 0.5; f1=$(est n1 hA1 hw_rx_filtered)
	[ $((f1 - f0)) = 3 ] || bad="$bad frames to the old MAC: filtered +$((f1 - f0));"
	if ip -n n1 link set hA1 address 01:00:5e:00:00:01 2>/tmp/nic-err; then
		bad="$bad multicast MAC accepted;"
	elif ! grep -qi "cannot assign" /tmp/nic-err; then
		bad="$bad multicast MAC: $(cat /tmp/nic-err);"
	fi
	ip -n n1 link set hA1 address "$perm"
	ip -n n0 neigh flush dev hA0
	nsx n0 ping -c 2 -i 0.2 -W 2 192.0.2.2 >/dev/null 2>&1 || bad="$bad no ping back with the permanent MAC;"
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

ring() { nsx "$1" ethtool -g "$2" | awk '/^Current/ { c = 1 } c && $1 == "'"$3"':" { print $2 }'; }

t_rings() {
	local name=$1 bad="" seed=$RANDOM rs out
	nsx n1 python3 "$NICPY" serve 5004 $((BULK * 2)) $seed $((120 * TS)) > /tmp/nic-serve.5004 2>&1 &
	rs=$!
	nsx n0 python3 "$NICPY" send 192.0.2.2 5004 $((BULK * 2)) $seed $((120 * TS)) > /tmp/nic-send.5004 2>&1 &
	sleep 1
	for g in "rx 64 tx 64" "rx 1024 tx 512" "rx 16 tx 4096" "rx 4096 tx 16"; do
		# shellcheck disable=SC2086
		nsx n0 ethtool -G hA0 $g 2>&1 || bad="$bad hA0 -G $g refused;"
		# shellcheck disable=SC2086
		nsx n1 ethtool -G hA1 $g 2>&1 || bad="$bad hA1 -G $g refused;"
		sleep 0.3
	done
	# An MTU change reallocates the receive ring too, under the same flow.
	ip -n n1 link set hA1 mtu 9000 && ip -n n1 link set hA1 mtu 1500 || bad="$bad mtu change under traffic;"
	wait $rs
	wait
	grep -q ^OK /tmp/nic-serve.5004 || bad="$bad transfer: $(cat /tmp/nic-serve.5004 /tmp/nic-send.5004 | tr '\n' ' ');"
	[ "$(ring n0 hA0 RX)/$(ring n0 hA0 TX)" = 4096/16 ] || bad="$bad ethtool -g shows $(ring n0 hA0 RX)/$(ring n0 hA0 TX);"
	for g in "rx 100" "tx 8" "rx 8192" "tx 0"; do
		# shellcheck disable=SC2086
		if out=$(nsx n0 ethtool -G hA0 $g 2>&1); then bad="$bad -G $g accepted;"
		elif ! echo "$out" | grep -qi "invalid argument\|powers of two\|exceeds"; then bad="$bad -G $g: $out;"; fi
	done
	[ "$(ring n0 hA0 RX)/$(ring n0 hA0 TX)" = 4096/16 ] || bad="$bad a refused -G changed the rings;"
	nsx n0 ethtool -G hA0 rx 256 tx 256
	nsx n1 ethtool -G hA1 rx 256 tx 256
	nsx n0 ping -c 2 -i 0.2 -W 2 192.0.2.2 >/dev/null 2>&1 || bad="$bad no ping after the resizes;"
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

# The debugfs directory of port $1 of the first HPU.
port_dbg() {
	local p
	for p in $DBG/hpu.en.*/port"$1"; do
		[ -e "/sys/bus/pci/devices/$BDF0/$(basename "$(dirname "$p")")" ] && { echo "$p"; return; }
	done
}

# Ring and MTU changes whose allocation fails change nothing: the old
# rings keep running (a TCP transfer across all of it loses no byte).
t_nomem() {
	local name=$1 bad="" f seed=$RANDOM rs d out
	f=$(port_dbg 1)
	nsx n1 python3 "$NICPY" serve 5009 "$BULK" $seed $((120 * TS)) > /tmp/nic-serve.5009 2>&1 &
	rs=$!
	nsx n0 python3 "$NICPY" send 192.0.2.2 5009 "$BULK" $seed $((120 * TS)) > /tmp/nic-send.5009 2>&1 &
	sleep 1
	sysw 1 "$f/fail_ring_alloc"
	if out=$(nsx n1 ethtool -G hA1 rx 1024 2>&1); then bad="$bad -G rx 1024 succeeded;"
	elif ! echo "$out" | grep -qi "cannot allocate memory"; then bad="$bad -G rx 1024: $out;"; fi
	# Two rings: the transmit one is allocated, the receive one fails.
	sysw 2 "$f/fail_ring_alloc"
	if out=$(nsx n1 ethtool -G hA1 rx 512 tx 512 2>&1); then bad="$bad -G rx 512 tx 512 succeeded;"
	elif ! echo "$out" | grep -qi "cannot allocate memory"; then bad="$bad -G rx 512 tx 512: $out;"; fi
	[ "$(ring n1 hA1 RX)/$(ring n1 hA1 TX)" = 256/256 ] || bad="$bad rings now $(ring n1 hA1 RX)/$(ring n1 hA1 TX);"
	sysw 1 "$f/fail_ring_alloc"
	ip -n n1 link set hA1 mtu 9000 2>/dev/null && bad="$bad mtu 9000 succeeded;"
	ip -n n1 link show hA1 | grep -q "mtu 1500 " || bad="$bad mtu changed;"
	[ "$(cat "$f/fail_ring_alloc")" = 0 ] || bad="$bad fail_ring_alloc left at $(cat "$f/fail_ring_alloc");"
	wait $rs
	wait
	grep -q ^OK /tmp/nic-serve.5009 || bad="$bad transfer: $(cat /tmp/nic-serve.5009 /tmp/nic-send.5009 | tr '\n' ' ');"
	# An open that cannot allocate its receive ring fails and stays down.
	d=$(port_dev "$BDF0" 3)
	f=$(port_dbg 3)
	sysw 2 "$f/fail_ring_alloc"
	ip link set "$d" up 2>/dev/null && bad="$bad $d came up without its receive ring;"
	ip link show "$d" | grep -q ",UP" && bad="$bad $d is up;"
	ip link set "$d" up || bad="$bad $d does not come up after;"
	ip link set "$d" down
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

t_link_inject() {
	local name=$1 bad="" f c0 c1 l0 l1
	f=$(ls -d $DBG/hpu.en.*/port0 2>/dev/null | while read -r p; do
		a=$(basename "$(dirname "$p")")
		[ -e "/sys/bus/pci/devices/$BDF0/$a" ] && echo "$p"; done | head -n1)
	if [ -z "$f" ]; then fail "$name" "no debugfs port0 directory of $BDF0 under $DBG"; return; fi
	c0=$(nsx n0 cat /sys/class/net/hA0/carrier_changes); l0=$(est n0 hA0 hw_link_changes)
	sysw 1 "$f/link_down" || bad="$bad link_down write refused;"
	wait_for 5 no_carrier n0 hA0 || bad="$bad carrier stayed up;"
	nsx n0 ethtool hA0 | grep -q "Link detected: no" || bad="$bad ethtool still detects the link;"
	nsx n0 ping -c 2 -i 0.3 -W 1 192.0.2.2 >/dev/null 2>&1 && bad="$bad ping passed with the link down;"
	[ "$(cat "$f/link_down")" = 1 ] || bad="$bad link_down reads $(cat "$f/link_down");"
	sysw 0 "$f/link_down"
	wait_for 5 carrier n0 hA0 || bad="$bad carrier did not come back;"
	nsx n0 ping -c 3 -i 0.2 -W 2 192.0.2.2 >/dev/null 2>&1 || bad="$bad no ping after the link came back;"
	c1=$(nsx n0 cat /sys/class/net/hA0/carrier_changes); l1=$(est n0 hA0 hw_link_changes)
	[ $((c1 - c0)) = 2 ] || bad="$bad carrier_changes $c0 -> $c1;"
	[ $((l1 - l0)) = 2 ] || bad="$bad hw_link_changes $l0 -> $l1;"
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

# Whether the injection count in debugfs file $1 has run down to 0.
inj_zero() { [ "$(cat "$1")" = 0 ]; }

# Whether $2 in namespace $1 received more than $4 frames since $3.
rx_since() { [ $(( $(est "$1" "$2" hw_rx_frames) - $3 )) -gt "$4" ]; }

t_drop_inject() {
	local name=$1 bad="" d0 d1 i0 i1 o0 o1 r0 r1 f0 seed=$RANDOM rs
	d0=$(ls -d $DBG/hpu.en.*/port0 | while read -r p; do
		[ -e "/sys/bus/pci/devices/$BDF0/$(basename "$(dirname "$p")")" ] && echo "$p"; done | head -n1)
	d1=${d0%/port0}/port1
	i0=$(est n1 hA1 hw_inj_dropped); o0=$(est n0 hA0 hw_inj_dropped)
	r0=$(nsx n0 nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ { print $2 }')
	f0=$(est n1 hA1 hw_rx_frames)
	nsx n1 python3 "$NICPY" serve 5005 $((BULK * 2)) $seed $((120 * TS)) > /tmp/nic-serve.5005 2>&1 &
	rs=$!
	nsx n0 python3 "$NICPY" send 192.0.2.2 5005 $((BULK * 2)) $seed $((120 * TS)) > /tmp/nic-send.5005 2>&1 &
	# Once the data flows (not on the handshake: a lost SYN costs seconds).
	wait_for 20 rx_since n1 hA1 "$f0" 1000 || bad="$bad no data flowing;"
	sysw 8 "$d1/drop_rx" || bad="$bad drop_rx write refused;"
	sysw 4 "$d0/drop_tx" || bad="$bad drop_tx write refused;"
	# And one pair of frames swapped on the wire. The debugfs write is a
	# read-modify-write of INJ_CTRL, whose DROP_TX the device counts down
	# meanwhile: write it once DROP_TX reads 0, or a count written back
	# stale drops a frame too many.
	wait_for 20 inj_zero "$d0/drop_tx" || bad="$bad drop_tx stayed $(cat "$d0/drop_tx");"
	sysw 1 "$d0/swap_tx" || bad="$bad swap_tx write refused;"
	wait $rs
	wait
	[ "$(cat "$d0/drop_tx")/$(cat "$d1/drop_rx")/$(cat "$d0/swap_tx")" = 0/0/0 ] ||
		bad="$bad injections left: $(cat "$d0/drop_tx")/$(cat "$d1/drop_rx")/$(cat "$d0/swap_tx");"
	sysw 0 "$d0/drop_tx"; sysw 0 "$d1/drop_rx"; sysw 0 "$d0/swap_tx"
	grep -q ^OK /tmp/nic-serve.5005 || bad="$bad transfer: $(cat /tmp/nic-serve.5005 /tmp/nic-send.5005 | tr '\n' ' ');"
	i1=$(est n1 hA1 hw_inj_dropped); o1=$(est n0 hA0 hw_inj_dropped)
	r1=$(nsx n0 nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ { print $2 }')
	[ $((i1 - i0)) = 8 ] || bad="$bad hA1 hw_inj_dropped +$((i1 - i0)), want 8;"
	[ $((o1 - o0)) = 4 ] || bad="$bad hA0 hw_inj_dropped +$((o1 - o0)), want 4;"
	[ $((r1 - r0)) -gt 0 ] || bad="$bad no TCP retransmission;"
	figure "TCP recovered 12 injected drops with $((r1 - r0)) retransmitted segments"
	# Bad input: the right errno, nothing changed.
	for v in "256 drop_rx" "2 link_down" "-1 drop_tx" "foo swap_tx"; do
		set -- $v
		if sysw "$1" "$d0/$2" 2>/tmp/nic-err; then bad="$bad '$1' > $2 accepted;"
		elif ! grep -qi "invalid argument\|numerical result" /tmp/nic-err; then bad="$bad '$1' > $2: $(cat /tmp/nic-err);"; fi
	done
	[ "$(cat "$d0/link_down")" = 0 ] || bad="$bad a refused write changed link_down;"
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

t_virtio() {
	local name=$1 bad="" a out out2
	nsx n2 ping -c 5 -i 0.2 -W 2 192.0.2.4 >/dev/null 2>&1 || bad="$bad hA2 -> virtio ping;"
	nsx nv ping -c 5 -i 0.2 -W 2 192.0.2.3 >/dev/null 2>&1 || bad="$bad virtio -> hA2 ping;"
	if wait_for 10 ll_ready nv vn; then
		a=$(ll_addr nv vn)
		nsx n2 ping -6 -c 3 -i 0.2 -W 2 "$a%hA2" >/dev/null 2>&1 || bad="$bad IPv6 link-local ping $a;"
	else
		bad="$bad no link-local address on the virtio-net peer;"
	fi
	out=$(bulk n2 nv 192.0.2.4 "$BULK" 5006) || bad="$bad hA2 -> virtio: $out;"
	out2=$(bulk nv n2 192.0.2.3 "$BULK" 5007) || bad="$bad virtio -> hA2: $out2;"
	if [ -z "$bad" ]; then
		pass "$name"
		figure "TCP hA2 -> virtio-net: $(echo "$out" | awk '{ print $2 " bytes in " $3 " s, " $4 " MB/s" }')"
		figure "TCP virtio-net -> hA2: $(echo "$out2" | awk '{ print $2 " bytes in " $3 " s, " $4 " MB/s" }')"
	else
		fail "$name" "$bad"
	fi
}

t_nonroot() {
	local name=$1 bad="" out
	if out=$(nsx n0 setpriv --reuid=65534 --regid=65534 --clear-groups ethtool -G hA0 rx 128 2>&1); then
		bad="$bad ethtool -G as nobody accepted;"
	elif ! echo "$out" | grep -qi "not permitted"; then bad="$bad ethtool -G as nobody: $out;"; fi
	if out=$(nsx n0 setpriv --reuid=65534 --regid=65534 --clear-groups ip link set hA0 mtu 1400 2>&1); then
		bad="$bad mtu as nobody accepted;"
	elif ! echo "$out" | grep -qi "not permitted"; then bad="$bad mtu as nobody: $out;"; fi
	if out=$(asuser sh -c "/bin/echo 1 > $(ls -d $DBG/hpu.en.*/port0 | head -n1)/link_down" 2>&1); then
		bad="$bad link_down as nobody accepted;"
	elif ! echo "$out" | grep -qi "permission denied"; then bad="$bad link_down as nobody: $out;"; fi
	# Statistics are for everyone.
	nsx n0 setpriv --reuid=65534 --regid=65534 --clear-groups ethtool -S hA0 | grep -q hw_tx_frames ||
		bad="$bad ethtool -S as nobody;"
	carrier n0 hA0 || bad="$bad carrier lost;"
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

# A reset deletes the first HPU's netdevs and adds them back: wait for
# the old ones to go, then set them up again and pass traffic.
after_reset() {
	local bad=""
	out=$(setup_hpu 2>&1) || bad="$bad netdevs not back: $out;"
	nsx n0 ping -c 3 -i 0.2 -W 2 192.0.2.2 >/dev/null 2>&1 || bad="$bad no ping;"
	out=$(bulk n0 n1 192.0.2.2 $((BULK / 4)) 5008) || bad="$bad tcp: $out;"
	echo "$bad"
}

t_reset() {
	local name=$1 kind=$2 bad="" rattr=/sys/bus/pci/devices/$BDF0/hpu_reset idx0 idx1 m t0 t1
	idx0=$(nsx n0 cat /sys/class/net/hA0/ifindex)
	# Traffic during the reset: it fails, nothing else may.
	nsx n0 ping -q -i 0.01 -c 300 -W 1 192.0.2.2 >/dev/null 2>&1 &
	sleep 0.5
	t0=$(date +%s%N)
	case $kind in
	soft|hard) sysw "$kind" "$rattr" 2>/tmp/nic-err || bad="$bad $kind reset failed: $(cat /tmp/nic-err);" ;;
	flr)
		m=$(cat /sys/bus/pci/devices/$BDF0/reset_method)
		sysw flr /sys/bus/pci/devices/$BDF0/reset_method &&
			sysw 1 /sys/bus/pci/devices/$BDF0/reset 2>/tmp/nic-err || bad="$bad FLR failed: $(cat /tmp/nic-err);"
		sysw "$m" /sys/bus/pci/devices/$BDF0/reset_method
		;;
	esac
	t1=$(date +%s%N)
	wait
	ip -n n0 link show hA0 >/dev/null 2>&1 && bad="$bad hA0 survived the reset;"
	bad="$bad$(after_reset)"
	idx1=$(nsx n0 cat /sys/class/net/hA0/ifindex)
	[ "$idx0" != "$idx1" ] || bad="$bad same ifindex $idx0: the netdev was not recreated;"
	figure "$kind reset with the netdevs: $(( (t1 - t0) / 1000000 )) ms, netdevs back and passing traffic"
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

# Objects of the caches a leak of the rings would show in, after
# shrinking them (per-CPU slabs; the debug kernel's KASAN quarantine).
# Objects in use in the caches a ring's buffers come from. Every receive
# buffer has an sk_buff head (skbuff_head_cache) whatever its data is: a
# kmalloc'd block (the buffers open allocates) or a page fragment (those
# the poll allocates, invisible to the kmalloc caches), so the heads are
# what a leaked ring cannot hide from.
slab_flush() {
	local c
	for c in /sys/kernel/slab/skbuff_head_cache /sys/kernel/slab/kmalloc-*k /sys/kernel/slab/kmalloc-cg-*k; do
		echo 1 > "$c/shrink" 2>/dev/null
	done
}
slab_objs() {
	awk '$1 ~ /^(kmalloc-(2k|4k|8k|16k)|kmalloc-cg-(2k|4k|8k|16k))$/ { n += $2 } END { print n + 0 }' /proc/slabinfo
}
skb_heads() {
	awk '$1 == "skbuff_head_cache" { print $2 }' /proc/slabinfo
}

t_reload() {
	local name=$1 bad="" i s0 s1 h0 h1 m0 m1 pids
	# Measured with the ports down (no receive buffers) before and after.
	for ns in n0 n1 n2; do ip -n $ns link set hA${ns#n} down; done
	sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1
	slab_flush
	s0=$(slab_objs); h0=$(skb_heads); m0=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	for ns in n0 n1 n2; do ip -n $ns link set hA${ns#n} up; done
	wait_for 10 carrier n1 hA1
	for i in 1 2; do
		# Traffic in both directions while the module goes.
		nsx n0 ping -q -i 0.005 -s 1400 -W 1 192.0.2.2 >/dev/null 2>&1 &
		pids=$!
		nsx n2 ping -q -i 0.005 -s 1400 -W 1 192.0.2.4 >/dev/null 2>&1 &
		pids="$pids $!"
		sleep 1
		rmmod hpu_en || { bad="$bad rmmod $i failed;"; break; }
		kill $pids 2>/dev/null; wait
		[ -z "$(all_ports)" ] && ! ip -n n0 link show hA0 >/dev/null 2>&1 || bad="$bad netdevs left after unload $i;"
		[ -e $DBG ] && bad="$bad debugfs left after unload $i;"
		insmod "$KO_EN" || { bad="$bad insmod $i failed;"; break; }
		out=$(setup_hpu) || { bad="$bad reload $i: $out;"; break; }
		nsx n0 ping -c 2 -i 0.2 -W 2 192.0.2.2 >/dev/null 2>&1 || bad="$bad no ping after reload $i;"
	done
	for ns in n0 n1 n2; do ip -n $ns link set hA${ns#n} down 2>/dev/null; done
	sync; echo 3 > /proc/sys/vm/drop_caches; sleep 1
	slab_flush
	s1=$(slab_objs); h1=$(skb_heads); m1=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	figure "module reload x2 under traffic: sk_buff heads $h0 -> $h1, kmalloc 2k-16k $s0 -> $s1 objects, MemAvailable $m0 -> $m1 kB"
	for ns in n0 n1 n2; do ip -n $ns link set hA${ns#n} up 2>/dev/null; done
	# Three open ports with 256 receive buffers each, reloaded twice: one
	# receive ring leaked once is 256 heads, whatever holds its data. The
	# bound leaves room for the per-CPU caches of freed heads (NAPI keeps
	# up to 64 per CPU), which can differ between the two reads.
	[ $((h1 - h0)) -lt 256 ] || bad="$bad sk_buff heads $h0 -> $h1;"
	[ $((s1 - s0)) -lt 512 ] || bad="$bad kmalloc objects $s0 -> $s1;"
	[ $((m0 - m1)) -lt 32768 ] || bad="$bad MemAvailable $m0 -> $m1 kB;"
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

t_unload() {
	local name=$1 bad=""
	for ns in n0 n1 n2 nv b1 b2; do ip netns del $ns 2>/dev/null; done
	rmmod hpu_en || bad="$bad rmmod failed;"
	[ -e /sys/module/hpu_en ] && bad="$bad module still there;"
	[ -z "$(all_ports)" ] || bad="$bad netdevs left: $(all_ports | tr '\n' ' ');"
	ls -d /sys/bus/auxiliary/devices/hpu.en.* >/dev/null 2>&1 || bad="$bad auxiliary devices gone with the driver;"
	if [ -z "$bad" ]; then pass "$name"; else fail "$name" "$bad"; fi
}

TESTS="bind link ping4 ping6 tcp smi counters mtu promisc mac rings nomem link_inject drop_inject virtio nonroot soft_reset hard_reset flr reload unload"
[ $# -gt 0 ] && TESTS="$*"

if [ ! -e /sys/module/hpu_en ]; then
	insmod "$KO_EN" || { fail "hpu_en loaded" "insmod $KO_EN failed"; exit 0; }
fi
: > "$FIG"
# Before the set-up moves ports into namespaces: every netdev in view.
case " $TESTS " in
*" bind "*)
	TESTS=$(echo " $TESTS " | sed 's/ bind / /')
	t_bind "hpu_en makes one netdev per port, named by port, with the spec's permanent MAC"
	;;
esac
if ! out=$(setup 2>&1); then
	fail "ports and namespaces set up" "$out"
	for ns in n0 n1 n2 nv b1 b2; do ip netns del $ns 2>/dev/null; done
	rmmod hpu_en
	exit 0
fi

for t in $TESTS; do
	t0=$(date +%s)
	case $t in
	link) t_link "carrier and ethtool follow the link: wired ports up at 100000 Mb/s full duplex, unwired down" ;;
	ping4) t_ping4 "IPv4 ping between two ports of one HPU" ;;
	ping6) t_ping6 "IPv6 link-local ping between two ports of one HPU" ;;
	tcp) t_tcp "TCP transfers both ways arrive byte for byte" ;;
	smi) t_smi "hpu-smi -n link, ports and stats show each port's interface, link, MAC, MTU, speed and counters as the kernel does" ;;
	counters) t_counters "ip -s and ethtool -S agree with each other, with the traffic and across the wire" ;;
	mtu) t_mtu "MTU 9000 carries a jumbo ping, out-of-range MTUs are refused, oversized frames are counted" ;;
	promisc) t_promisc "frames for another MAC are filtered and counted unless promiscuous" ;;
	mac) t_mac "a MAC change moves the receive filter, a multicast MAC is refused" ;;
	rings) t_rings "ring and MTU changes under TCP traffic lose no byte, bad ring sizes are refused" ;;
	nomem) t_nomem "ring and MTU changes that cannot allocate change nothing, the old rings keep running" ;;
	link_inject) t_link_inject "a forced link down drops the carrier and traffic, link up restores both" ;;
	drop_inject) t_drop_inject "frames dropped or swapped on the wire are recovered by TCP, injection input checked" ;;
	virtio) t_virtio "an HPU port and virtio-net exchange IPv4, IPv6 and TCP both ways" ;;
	nonroot) t_nonroot "ring and MTU changes and fault injection are refused to non-root, statistics are not" ;;
	soft_reset) t_reset "after a soft reset the netdevs come back and pass traffic" soft ;;
	hard_reset) t_reset "after a hard reset the netdevs come back and pass traffic" hard ;;
	flr) t_reset "after a function level reset the netdevs come back and pass traffic" flr ;;
	reload) t_reload "hpu_en unloads and reloads under traffic without leaking ring memory" ;;
	unload) t_unload "hpu_en unloads cleanly and leaves the auxiliary devices" ;;
	*) fail "$t" "no such test" ;;
	esac
	log "$t took $(( $(date +%s) - t0 )) s"
done
exit 0
