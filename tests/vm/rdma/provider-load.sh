#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Does Debian's libibverbs load the hpu provider from the build tree and
# claim hpu devices with it? Runs on the host, no kernel RDMA device needed.
#
#   tests/vm/rdma/provider-load.sh [PROVIDER]
#     PROVIDER: the provider's path without "-rdmav34.so" (default: what
#     tools/rdma-provider/build.sh --print-path reports, minus the suffix)
#
# libibverbs 44 finds devices over RDMA netlink and, when that is missing
# (the host kernel has no ib_core), in $SYSFS_PATH/class/infiniband_verbs;
# it dlopens providers only once it has found a device, and lists a device
# only when its /dev/infiniband/uverbsN exists. So each case runs in a
# private mount namespace with a tmpfs over /dev and a fake sysfs tree
# describing one device. The provider comes from RDMAV_DRIVERS (an absolute
# name gets "-rdmav34.so" appended); LD_DEBUG=files shows the dlopen and the
# provider's constructor (its registration with libibverbs).
# Prints "PASS name" / "FAIL name: why" lines; exit status 1 on any failure.
#
# Copyright (c) 2026 The hpu authors
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
prov=${1:-}
if [ -z "$prov" ]; then
	so=$("$ROOT/tools/rdma-provider/build.sh" --print-path 2>/dev/null) || {
		echo "FAIL rdma/provider built: run make rdma-provider"; exit 1; }
	prov=${so%-rdmav34.so}
fi
[ -f "$prov-rdmav34.so" ] || { echo "FAIL rdma/provider built: no $prov-rdmav34.so"; exit 1; }

# NETLINK_RDMA (20) must be missing, or libibverbs ignores the fake sysfs.
if /usr/bin/python3 -c "import socket; socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 20)" 2>/dev/null; then
	echo "FAIL rdma/provider-load runs where RDMA netlink is missing: this kernel has ib_core (run it on the build host, not in a guest)"
	exit 1
fi

if [ "$(id -u)" = 0 ]; then
	UNSHARE=(unshare --mount)
else
	UNSHARE=(unshare --map-root-user --mount)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

pass() { echo "PASS rdma/$1"; }
fail() { echo "FAIL rdma/$1: $2"; fails=$((fails + 1)); }

# fake_sysfs DIR IBDEV ABI [MODALIAS]: one uverbs0 device named IBDEV with
# uverbs ABI ABI whose parent device has the modalias MODALIAS (none: no
# device/modalias file, as for rxe or siw).
fake_sysfs() {
	local s=$1/sys
	rm -rf "$1"
	mkdir -p "$s/class/infiniband_verbs/uverbs0" "$s/class/infiniband/$2"
	if [ -n "${4:-}" ]; then
		mkdir -p "$s/class/infiniband/$2/device"
		echo "$4" > "$s/class/infiniband/$2/device/modalias"
	fi
	echo 6 > "$s/class/infiniband_verbs/abi_version"
	echo "$2" > "$s/class/infiniband_verbs/uverbs0/ibdev"
	echo 231:192 > "$s/class/infiniband_verbs/uverbs0/dev"
	echo "$3" > "$s/class/infiniband_verbs/uverbs0/abi_version"
	echo 1 > "$s/class/infiniband/$2/node_type"            # RDMA_NODE_IB_CA
	echo 0200:00ff:fe00:0001 > "$s/class/infiniband/$2/node_guid"
}

# in_ns SYSFS CMD...: CMD in a private mount namespace whose /dev holds only
# null and infiniband/uverbs0 (a directory: stat succeeds, opening it as the
# command device fails, so nothing ever talks to a fake kernel).
in_ns() {
	local sys=$1
	shift
	"${UNSHARE[@]}" /bin/sh -c '
		mount -t tmpfs tmpfs /dev || exit 99
		mkdir -p /dev/infiniband/uverbs0 && : > /dev/null
		exec env SYSFS_PATH="$0" "$@"' "$sys" "$@"
}

# 1. An hpu device: the provider is loaded, registers and claims it.
fake_sysfs "$work/a" hpu_0 1 auxiliary:hpu.rdma
out=$(in_ns "$work/a/sys" env RDMAV_DRIVERS="$prov" LD_DEBUG=files ibv_devices 2>&1)
rc=$?
if [ $rc = 99 ]; then
	fail "fake sysfs namespace" "cannot mount a tmpfs over /dev in a private mount namespace"
	exit 1
fi
if grep -q "calling init: $prov-rdmav34.so" <<< "$out"; then
	pass "libibverbs dlopens the provider from the build tree (RDMAV_DRIVERS) and runs its constructor"
else
	fail "libibverbs dlopens the provider from the build tree" "no 'calling init' for $prov-rdmav34.so: $(tail -n 3 <<< "$out")"
fi
if [ $rc = 0 ] && grep -qE '^\s+hpu_0\s+020000fffe000001$' <<< "$out"; then
	pass "ibv_devices lists hpu_0 with its node GUID (matched by its modalias auxiliary:hpu.rdma)"
else
	fail "ibv_devices lists hpu_0" "exit $rc: $(grep -v '^ *[0-9]*:' <<< "$out" | tail -n 3)"
fi

# 2. The same device without the provider: nothing installed claims it
#    (unless an hpu.driver was installed in /etc/libibverbs.d).
if [ ! -e /etc/libibverbs.d/hpu.driver ]; then
	out=$(in_ns "$work/a/sys" ibv_devices 2>&1)
	if grep -q hpu_0 <<< "$out"; then
		fail "without RDMAV_DRIVERS no provider claims hpu_0" "listed: $out"
	else
		pass "without RDMAV_DRIVERS no provider claims hpu_0"
	fi
fi

# 3. Opening the device fails cleanly (its command device cannot be opened).
out=$(in_ns "$work/a/sys" env RDMAV_DRIVERS="$prov" ibv_devinfo -d hpu_0 2>&1)
rc=$?
if [ $rc != 0 ] && [ $rc -lt 128 ] && grep -q 'Failed to open device' <<< "$out"; then
	pass "ibv_devinfo on a device that cannot be opened fails cleanly"
else
	fail "ibv_devinfo on a device that cannot be opened fails cleanly" "exit $rc: $out"
fi

# 4. Another uverbs ABI version: matched by modalias, refused by the ABI range.
fake_sysfs "$work/b" hpu_1 2 auxiliary:hpu.rdma
out=$(in_ns "$work/b/sys" env RDMAV_DRIVERS="$prov" ibv_devices 2>&1)
if ! grep -q 'hpu_1 ' <<< "$out" &&
	grep -q 'Driver hpu does not support the kernel ABI of 2 (supports 1 to 1)' <<< "$out"; then
	pass "a device of another uverbs ABI version is refused"
else
	fail "a device of another uverbs ABI version is refused" "$out"
fi

# 5. A device of another name is not claimed.
fake_sysfs "$work/c" vnic0 1
out=$(in_ns "$work/c/sys" env RDMAV_DRIVERS="$prov" ibv_devices 2>&1)
if grep -q vnic0 <<< "$out"; then
	fail "a device named otherwise is not claimed" "listed: $out"
else
	pass "a device named otherwise is not claimed"
fi

# 6. Another driver's device named like ours (an rxe or siw link a user
#    named hpu0: no device/modalias; a device of another auxiliary driver):
#    not claimed.
for alias in "" auxiliary:irdma.iwarp; do
	fake_sysfs "$work/d" hpu0 1 "$alias"
	out=$(in_ns "$work/d/sys" env RDMAV_DRIVERS="$prov" ibv_devices 2>&1)
	if grep -q 'hpu0 ' <<< "$out"; then
		fail "a device named hpu0 of another driver (modalias '${alias:-none}') is not claimed" "listed: $out"
	else
		pass "a device named hpu0 of another driver (modalias '${alias:-none}') is not claimed"
	fi
done

[ $fails = 0 ]
