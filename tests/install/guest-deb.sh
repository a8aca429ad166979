#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The guest half of tests/install/test-deb.sh: runs in a guest booted on the
# clean root the Debian packages were installed into (hpu-vm --root), as an
# operator's machine would boot after the installation.
#
#   guest-deb.sh VERSION USER OTHER [full]
#
# VERSION is the package version installed, USER a member of the group
# "render", OTHER a user who is not. With "full" it also runs the programs
# built against the installed libhpu and the PyTorch example. Prints
# "PASS deb/..." and "FAIL deb/...: why"; the host side counts them.
#
# Copyright (c) 2026 The hpu authors
set -uo pipefail

VERSION=$1 USER_IN=$2 USER_OUT=$3 MODE=${4:-quick}
KVER=$(uname -r)
tag="deb/boot $VERSION"
pass() { echo "PASS $tag: $1"; }
fail() { echo "FAIL $tag: $1: $2"; }
as() { # as USER command...: a login-less shell of USER, nothing inherited
	local u=$1
	shift
	su -s /bin/sh "$u" -c "cd ~ && env -i PATH=/usr/bin:/bin HOME=\$HOME $*"
}

# Nothing of hpu is loaded before udev has seen the devices.
if [ -d /sys/module/hpu ]; then fail "hpu.ko not loaded before udev runs" "it is"
else pass "hpu.ko not loaded before udev runs"; fi

# udev, as at boot: coldplug every device. The PCI device's modalias makes
# modprobe load the DKMS-built hpu.ko (depmod put it in updates/dkms), the
# driver's auxiliary devices bring hpu_en and hpu_ib, and the package's rule
# gives /dev/accel/accel* to the group render.
/lib/systemd/systemd-udevd --daemon --resolve-names=late 2>/dev/null ||
	/usr/lib/systemd/systemd-udevd --daemon 2>/dev/null
udevadm trigger --action=add --type=subsystems
udevadm trigger --action=add --type=devices
udevadm settle --timeout=300

if [ -d /sys/module/hpu ]; then pass "udev loads hpu.ko for the device (modalias)"
else fail "udev loads hpu.ko for the device (modalias)" "no /sys/module/hpu"; fi
file=$(modinfo -n hpu 2>/dev/null)
case $file in
/lib/modules/"$KVER"/updates/dkms/hpu.ko*) pass "modprobe's hpu.ko is the DKMS build ($file)" ;;
*) fail "modprobe's hpu.ko is the DKMS build" "modinfo -n hpu: '$file'" ;;
esac
want=$(modinfo -F srcversion hpu 2>/dev/null)
got=$(cat /sys/module/hpu/srcversion 2>/dev/null)
if [ -n "$want" ] && [ "$want" = "$got" ]; then pass "the loaded hpu.ko is that file (srcversion $got)"
else fail "the loaded hpu.ko is that file" "srcversion loaded '$got', file '$want'"; fi
for m in hpu_en hpu_ib; do
	f=$(modinfo -n $m 2>/dev/null)
	if [ -d /sys/module/$m ] && [[ $f == /lib/modules/$KVER/updates/dkms/* ]]; then
		pass "$m loaded from the DKMS build for the auxiliary device"
	else
		fail "$m loaded from the DKMS build for the auxiliary device" "loaded: $([ -d /sys/module/$m ] && echo yes || echo no), file '$f'"
	fi
done
# No firmware_class.path: the kernel found the image of hpu-firmware in
# /lib/firmware (the device's flash is empty).
line=$(dmesg | grep -o "firmware .* running, booted from .*" | head -n1)
if echo "$line" | grep -q "booted from hpu/hpu-h1-fw.bin" && dpkg -S /lib/firmware/hpu/hpu-h1-fw.bin >/dev/null 2>&1; then
	pass "the driver booted the device with hpu-firmware's image ($line)"
else
	fail "the driver booted the device with hpu-firmware's image" "'$line'"
fi
node=$(ls /dev/accel/accel* 2>/dev/null | head -n1)
perm=$([ -n "$node" ] && stat -c '%G %a' "$node")
if [ "$perm" = "render 660" ]; then pass "$node is group render, mode 0660 (the package's udev rule)"
else fail "/dev/accel/accel0 is group render, mode 0660" "'$node': '$perm'"; fi

# hpu-smi as an unprivileged member of render, and as a user who is not.
out=$(as "$USER_IN" hpu-smi -L 2>&1)
rc=$?
if [ $rc = 0 ] && echo "$out" | grep -q "0000:"; then pass "hpu-smi -L as $USER_IN (group render) lists the device"
else fail "hpu-smi -L as $USER_IN (group render) lists the device" "exit $rc: $out"; fi
out=$(as "$USER_IN" hpu-smi 2>&1)
rc=$?
if [ $rc = 0 ] && echo "$out" | grep -q "MiB"; then pass "hpu-smi's table as $USER_IN"
else fail "hpu-smi's table as $USER_IN" "exit $rc: $(echo "$out" | tail -n 3)"; fi
out=$(as "$USER_OUT" hpu-smi -L 2>&1)
rc=$?
if [ $rc = 4 ]; then pass "hpu-smi as $USER_OUT (not in render) is refused with exit 4"
else fail "hpu-smi as $USER_OUT (not in render) is refused with exit 4" "exit $rc: $out"; fi
bus=$(as "$USER_IN" hpu-smi -L 2>/dev/null | grep -o '0000:[0-9a-f:.]*' | head -n1)
out=$(as "$USER_IN" hpu-smi -r -i "$bus" 2>&1)
rc=$?
if [ $rc = 4 ]; then pass "hpu-smi -r (reset) as $USER_IN is refused: root only"
else fail "hpu-smi -r (reset) as $USER_IN is refused: root only" "exit $rc: $out"; fi
out=$(as "$USER_IN" hpu-smi --version 2>&1)
if echo "$out" | grep -q "^hpu-smi "; then pass "hpu-smi --version: $out"
else fail "hpu-smi --version" "$out"; fi

# The provider of ibverbs-provider-hpu, found by libibverbs through the
# package's /etc/libibverbs.d/hpu.driver (no RDMAV_DRIVERS).
out=$(as "$USER_IN" ibv_devinfo -l 2>&1)
if echo "$out" | grep -q "hpu"; then pass "ibv_devinfo -l lists the HPU's RDMA device (installed provider)"
else fail "ibv_devinfo -l lists the HPU's RDMA device (installed provider)" "$out"; fi
ibdev=$(echo "$out" | grep -o 'hpu[_a-z0-9]*' | head -n1)
out=$(as "$USER_IN" ibv_devinfo -d "$ibdev" 2>&1)
if echo "$out" | grep -q "transport:.*InfiniBand\|link_layer:.*Ethernet"; then
	pass "ibv_devinfo -d $ibdev opens it through the provider"
else
	fail "ibv_devinfo -d $ibdev opens it through the provider" "$(echo "$out" | head -n 5)"
fi

if [ "$MODE" = full ]; then
	for p in hpu-pc-prog hpu-cmake-prog; do
		out=$(as "$USER_IN" "bin/$p" 2>&1)
		rc=$?
		if [ $rc = 0 ] && echo "$out" | grep -q "devices 1"; then
			pass "$p (built against the installed libhpu) runs as $USER_IN: $(echo "$out" | tail -n1)"
		else
			fail "$p (built against the installed libhpu) runs as $USER_IN" "exit $rc: $out"
		fi
	done
	ex=/usr/share/doc/python3-hpu-torch/examples/getting_started_hpu.py
	out=$(as "$USER_IN" python3 -c "'import hpu_torch; print(hpu_torch.__file__)'" 2>&1)
	case $out in
	/usr/lib/python3/dist-packages/hpu_torch/*) pass "python3 imports hpu_torch from the package ($out)" ;;
	*) fail "python3 imports hpu_torch from the package" "$out" ;;
	esac
	t0=$(date +%s)
	out=$(as "$USER_IN" PT_HPU_LAZY_MODE=1 python3 "$ex" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/  example: /'
	acc=$(echo "$out" | sed -n 's/^hpu epoch 5: .*test accuracy \([0-9.]*\)%.*/\1/p')
	if [ $rc = 0 ] && [ -n "$acc" ] && awk -v a="$acc" 'BEGIN { exit !(a >= 75) }'; then
		pass "the PyTorch example trains the seed's model as $USER_IN: 5 epochs, test accuracy $acc % ($(( $(date +%s) - t0 )) s)"
	else
		fail "the PyTorch example trains the seed's model as $USER_IN" "exit $rc, accuracy '$acc'"
	fi
fi
exit 0
