#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The VM test suite, run inside one guest by tests/run-tests.py through
# tools/vm/hpu-vm.  Each check writes "PASS name" or "FAIL name: why" to
# $HPU_OUT/results.txt; the Catch2 programs write JUnit files to $HPU_OUT.
# HPU_EXPECT describes the devices QEMU was given, in PCI order:
#   serial:hbm_bytes:nic_ports;serial:hbm_bytes:nic_ports;...
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${HPU_BUILD:-$REPO/build}
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/results.txt
SMI=$BUILD/tools/hpu-smi/hpu-smi
export HPU_SMI=$SMI
: > "$RES"

pass() { echo "PASS $1" >> "$RES"; echo "PASS $1"; }
fail() { echo "FAIL $1: $2" >> "$RES"; echo "FAIL $1: $2"; }
check() { # name, command...
	name=$1; shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"; fi
}

ndev=$(echo "$HPU_EXPECT" | tr ';' '\n' | grep -c .)

check "vm/driver loads" sh -c "modprobe drm && insmod $REPO/kernel/hpu.ko"

bound=$(ls -d /sys/bus/pci/drivers/hpu/0000:* 2>/dev/null | wc -l)
if [ "$bound" = "$ndev" ]; then pass "vm/driver binds all $ndev devices"
else fail "vm/driver binds all $ndev devices" "bound $bound"; fi

nodes=$(ls /dev/accel/accel* 2>/dev/null | wc -l)
if [ "$nodes" = "$ndev" ]; then pass "vm/one accel node per device"
else fail "vm/one accel node per device" "found $nodes: $(ls /dev/accel 2>&1)"; fi

# sysfs attributes match QEMU's properties, device by device in PCI order.
i=0
for dev in $(ls -d /sys/bus/pci/drivers/hpu/0000:* 2>/dev/null | sort); do
	want=$(echo "$HPU_EXPECT" | cut -d';' -f$((i + 1)))
	ser=$(echo "$want" | cut -d: -f1); hbm=$(echo "$want" | cut -d: -f2)
	got_ser=$(cat "$dev/serial" 2>&1); got_hbm=$(cat "$dev/hbm_size" 2>&1)
	if [ "$got_ser" = "$ser" ] && [ "$got_hbm" = "$hbm" ]; then
		pass "vm/sysfs serial and hbm_size of device $i"
	else
		fail "vm/sysfs serial and hbm_size of device $i" "want $ser/$hbm got $got_ser/$got_hbm"
	fi
	i=$((i + 1))
done

# The in-guest Catch2 programs (INFO ioctl, negative tests, libhpu, hpu-smi -L).
"$BUILD/tests/vm/hpu-vm-tests" --reporter "junit::out=$OUT/hpu-vm-tests.xml" \
	--reporter console > "$OUT/hpu-vm-tests.log" 2>&1
echo "hpu-vm-tests exit status $?"
tail -n 5 "$OUT/hpu-vm-tests.log"

# hpu-smi's table shows every device with its serial and HBM size in MiB:
# rows are "| index | name | bus id | serial | HBM MiB | driver |".
table=$("$SMI" 2>&1)
echo "$table"
i=0
for want in $(echo "$HPU_EXPECT" | tr ';' ' '); do
	ser=$(echo "$want" | cut -d: -f1); mib=$(( $(echo "$want" | cut -d: -f2) / 1048576 ))
	row=$(echo "$table" | awk -F'|' -v i="$i" '{ f = $2; gsub(/ /, "", f) } f == i')
	got=$(echo "$row" | awk -F'|' '{ gsub(/ /, ""); print $5 ":" $6 }')
	if [ "$got" = "$ser:$mib" ]; then
		pass "vm/hpu-smi table row of device $i ($ser, $mib MiB)"
	else
		fail "vm/hpu-smi table row of device $i ($ser, $mib MiB)" "row is '$row'"
	fi
	i=$((i + 1))
done

check "vm/driver unloads with devices present" rmmod hpu
if [ -e /sys/module/hpu ] || ls /dev/accel/accel* >/dev/null 2>&1; then
	fail "vm/nothing left after unload" "$(ls /sys/module/hpu /dev/accel 2>&1 | tr '\n' ' ')"
else
	pass "vm/nothing left after unload"
fi
check "vm/driver reloads and unloads again" sh -c \
	"insmod $REPO/kernel/hpu.ko && test \$(ls /dev/accel/accel* | wc -l) = $ndev && rmmod hpu"
exit 0
