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

# A short job timeout keeps the timeout tests quick (default 10 s).
check "vm/driver loads" sh -c "modprobe -a drm drm_buddy drm_shmem_helper gpu-sched && insmod $REPO/kernel/hpu.ko job_timeout_ms=3000"

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

# The in-guest Catch2 program, one run per group of tests (so that a crash or
# hang in one group cannot lose the others' results), each with its own JUnit
# file hpu-vm-tests*.xml and a time limit:
#   (issue 2) INFO ioctl, discovery, hpu-smi -L
#   uapi-mem  raw ioctls of buffers, VM_BIND, queues, SUBMIT, bad packets
#   dma       data paths, fences, command lists, waits through libhpu
#   isolation contexts and processes
vmtests() { # name, time limit (s), Catch2 test spec
	t0=$(date +%s)
	# The JUnit reporter writes a few bytes per system call: to tmpfs first,
	# since every write to the 9p share is a round trip to the host.
	rm -f "/tmp/hpu-vm-tests$1.xml"
	timeout -s KILL "$2" "$BUILD/tests/vm/hpu-vm-tests" "$3" \
		--reporter "junit::out=/tmp/hpu-vm-tests$1.xml" \
		--reporter console > "$OUT/hpu-vm-tests$1.log" 2>&1
	rc=$?
	took=$(( $(date +%s) - t0 ))
	[ -s "/tmp/hpu-vm-tests$1.xml" ] && cp "/tmp/hpu-vm-tests$1.xml" "$OUT/"
	echo "hpu-vm-tests$1 exit status $rc after $took s"
	tail -n 5 "$OUT/hpu-vm-tests$1.log"
	# Catch2 exits with the number of failed tests (so the status alone
	# cannot tell a kill); only a run that ends writes its JUnit file, and a
	# process that hangs on exit (closing its files) runs into the limit.
	if [ ! -s "$OUT/hpu-vm-tests$1.xml" ]; then
		fail "vm/hpu-vm-tests$1 ran to the end" "exit $rc after $took s: killed at the $2 s limit or crashed"
	elif [ "$took" -ge "$2" ]; then
		fail "vm/hpu-vm-tests$1 exits in time" "still running at the $2 s limit (exit $rc), after writing its results"
	else
		pass "vm/hpu-vm-tests$1 ran to the end"
	fi
}
vmtests "" 120 "~[uapi-mem]~[dma]~[isolation]"
vmtests "-uapi-mem" 150 "[uapi-mem]"
vmtests "-dma" 240 "[dma]"
vmtests "-isolation" 150 "[isolation]"

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
