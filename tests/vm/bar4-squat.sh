#!/bin/bash
# SPDX-License-Identifier: MIT
#
# A BAR4 partly taken by someone else (Documentation/driver/memory.md, "HBM
# in a process"). hpu_test_squat.ko (kernel/tests/hpu_test_squat.c, built
# next to hpu.ko) claims a range of physical addresses; with it over part
# of an unbound HPU's BAR4, the HPU is bound again:
#   1. over the last 4 KiB of BAR4: the bind succeeds with only the
#      page-table area claimed ("BAR4: cannot claim all N MiB of it (-16),
#      only the page tables"), /proc/iomem shows hpu-hbm over the page-table
#      area and the squatter over its 4 KiB, HBM buffers do not map into
#      processes (no DRM_HPU_CAP_HBM_MMAP, BO_MMAP_OFFSET EOPNOTSUPP) and
#      jobs through HBM still run. Unbound, the squatter unloaded and bound
#      again, the HPU claims all of BAR4 and maps HBM again;
#   2. over the first 4 KiB (inside the page-table area): the bind fails
#      with EBUSY ("cannot claim BAR4: -16") and leaves nothing of BAR4
#      claimed; the squatter unloaded, the bind succeeds and HBM maps.
# The HPU is the first (PCI order) whose BAR4 covers its HBM. The ioctl
# checks are hidden hpu-vm-tests cases ([.bar4-partial], [.bar4-full],
# tests/vm/test_uapi_mem.cpp), their output in $HPU_OUT/bar4-squat-*.log.
#
# Run by tests/vm/guest-suite.sh with hpu.ko loaded, or alone in a guest
# (it loads hpu.ko when it is not loaded):
#   tools/dev/vm/hpu-vm --hpu hbm-size=2G,serial=HPU-TEST-A -- tests/vm/bar4-squat.sh
# Each check appends "PASS vm/bar4/..." or "FAIL vm/bar4/...: why" to
# $HPU_OUT/results.txt; exit status 0 when every check passed, 1 when one
# failed (other statuses: killed or crashed). The HPU is left bound (with
# all of BAR4) and the squatter unloaded.
#
# Copyright (c) 2026 The hpu authors

REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${HPU_BUILD:-$REPO/build}
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/results.txt
KO=${HPU_KO:-$REPO/kernel/hpu.ko}
SQUAT_KO=$(dirname "$KO")/hpu_test_squat.ko
TESTS=$BUILD/tests/vm/hpu-vm-tests
DRV=/sys/bus/pci/drivers/hpu
TS=${HPU_TIME_SCALE:-1}
NFAIL=0

pass() { echo "PASS vm/bar4/$1" >> "$RES"; echo "PASS vm/bar4/$1"; }
fail() { echo "FAIL vm/bar4/$1: $2" >> "$RES"; echo "FAIL vm/bar4/$1: $2"; NFAIL=$((NFAIL + 1)); }
# name, reasons ("" passes)
verdict() { if [ -z "$2" ]; then pass "$1"; else fail "$1" "$2"; fi; }
# coreutils echo: its write error names the errno.
sysw() { /bin/echo "$1" > "$2"; }
bound() { [ -e "$DRV/$BDF" ]; }
# shellcheck disable=SC2317 # (also from the EXIT trap)
squatting() { [ -e /sys/module/hpu_test_squat ]; }

# A mark in the kernel log (info level, unique to this run), and the log
# since it.
mark() { echo "<6>bar4-squat $$: $1" > /dev/kmsg; }
log_since() { dmesg | sed -n "/bar4-squat $$: $1\$/,\$p"; }

# The regions of /proc/iomem inside BAR4 (the BAR's own included), one a
# line: "start-end name", hexadecimal without leading zeros.
bar_iomem() {
	local line range a b
	while IFS= read -r line; do
		range=${line%% : *}
		range=${range// /}
		a=$((16#${range%-*}))
		b=$((16#${range#*-}))
		if [ "$a" -ge "$BAR_START" ] && [ "$b" -le "$BAR_END" ]; then
			printf '%x-%x %s\n' "$a" "$b" "${line#* : }"
		fi
	done < /proc/iomem
}
# Whether BAR4 holds the region $1 (name) from $2 to $3.
has_region() { bar_iomem | grep -qxF "$(printf '%x-%x %s' "$2" "$3" "$1")"; }
iomem_now() { bar_iomem | tr '\n' '|'; }

# A hidden hpu-vm-tests case on the HPU: log name, Catch2 test spec.
vmtests() {
	HPU_BAR4_BDF=$BDF timeout -s KILL $((120 * TS)) "$TESTS" "$2" > "$OUT/bar4-squat-$1.log" 2>&1
}
vmtests_why() {
	echo "hpu-vm-tests $1 failed, see bar4-squat-$2.log: $(grep -E -A3 'REQUIRE\(|CHECK\(|No test cases' \
		"$OUT/bar4-squat-$2.log" | grep -v -E '^(--)?$' | head -n 8 | tr -s ' \n' ' ')"
}

# Whatever happened: no squatter, the HPU bound (with all of BAR4).
# shellcheck disable=SC2317 # (the EXIT trap)
cleanup() {
	if squatting; then
		bound && sysw "$BDF" "$DRV/unbind"
		rmmod hpu_test_squat
	fi
	[ -n "$BDF" ] && ! bound && sysw "$BDF" "$DRV/bind"
}

if [ ! -e /sys/module/hpu ] && ! { modprobe -a drm drm_buddy drm_shmem_helper gpu-sched && insmod "$KO"; }; then
	fail "hpu.ko loads" "modprobe or insmod $KO failed"
	exit 1
fi
if [ ! -f "$SQUAT_KO" ]; then
	fail "hpu_test_squat.ko present" "no $SQUAT_KO (make kernel builds it)"
	exit 1
fi

# The HPU: the first whose BAR4 (line 5 of sysfs "resource": start, end,
# flags) covers its HBM.
BDF=""
for d in "$DRV"/0000:*; do
	[ -e "$d" ] || continue
	# A here-string: the guest has no /dev/fd for process substitution.
	read -r s e _ <<< "$(sed -n 5p "/sys/bus/pci/devices/${d##*/}/resource")"
	if [ $((e - s + 1)) -ge "$(cat "$d/hbm_size")" ]; then
		BDF=${d##*/}
		BAR_START=$((s))
		BAR_END=$((e))
		break
	fi
done
if [ -z "$BDF" ]; then
	fail "an HPU whose BAR4 covers its HBM" "none among the bound ones: $(echo "$DRV"/0000:*)"
	exit 1
fi
trap cleanup EXIT
echo "bar4-squat: HPU $BDF, BAR4 $(printf '%#x-%#x' "$BAR_START" "$BAR_END")"
LAST=$((BAR_END - 4095))

# ---- before: all of BAR4 claimed, HBM maps ----
why=""
has_region hpu-hbm "$BAR_START" "$BAR_END" || why="$why hpu-hbm does not claim all of BAR4 (iomem: $(iomem_now));"
vmtests before "[.bar4-full]" || why="$why $(vmtests_why "[.bar4-full]" before);"
verdict "before, the HPU claims all of BAR4 and maps HBM" "$why"

# ---- 1. the last 4 KiB taken: the page tables only ----
why=""
sysw "$BDF" "$DRV/unbind" 2>&1 || why="$why unbind failed;"
bound && why="$why still bound after unbind;"
if out=$(insmod "$SQUAT_KO" start="$LAST" len=4096 2>&1); then
	has_region hpu-test-squatter "$LAST" "$BAR_END" ||
		why="$why /proc/iomem does not show the squatter (iomem: $(iomem_now));"
else
	why="$why insmod start=$LAST len=4096 failed: $out;"
fi
verdict "the squatter claims the last 4 KiB of the unbound HPU's BAR4" "$why"

why=""
mark last-page
if ! out=$(sysw "$BDF" "$DRV/bind" 2>&1); then
	why="$why bind failed: $out;"
elif ! bound; then
	why="$why not bound after the bind;"
fi
log_since last-page | grep -F "$BDF" |
	grep -qE "BAR4: cannot claim all [0-9]+ MiB of it \(-16\), only the page tables" ||
	why="$why no 'cannot claim all ... only the page tables' message: $(log_since last-page | grep -F "$BDF" | tail -n 3 | tr '\n' '|');"
verdict "with the last 4 KiB of BAR4 taken the bind succeeds and says it claims only the page tables" "$why"

why=""
pt=$(cat "/sys/bus/pci/devices/$BDF/limits/page_tables" 2>/dev/null)
if [ -z "$pt" ] || [ "$pt" -le 0 ]; then
	why="$why no limits/page_tables;"
else
	pt_end=$((BAR_START + pt * 4096 - 1))
	has_region hpu-hbm "$BAR_START" "$pt_end" ||
		why="$why hpu-hbm is not $(printf '%x-%x' "$BAR_START" "$pt_end") ($pt page tables);"
	has_region hpu-test-squatter "$LAST" "$BAR_END" || why="$why the squatter's region is gone;"
	has_region hpu-hbm "$BAR_START" "$BAR_END" && why="$why hpu-hbm claims all of BAR4;"
	[ -n "$why" ] && why="$why iomem: $(iomem_now)"
fi
verdict "with the last 4 KiB taken hpu-hbm claims the page-table area and the squatter its 4 KiB (/proc/iomem)" "$why"

why=""
vmtests partial "[.bar4-partial]" || why=$(vmtests_why "[.bar4-partial]" partial)
verdict "with only the page tables claimed HBM does not map (EOPNOTSUPP, no caps bit) and a job through HBM runs" "$why"

why=""
sysw "$BDF" "$DRV/unbind" 2>&1 || why="$why unbind failed;"
bar_iomem | grep -q " hpu-hbm$" && why="$why hpu-hbm still claimed after the unbind: $(iomem_now);"
rmmod hpu_test_squat 2>&1 || why="$why rmmod hpu_test_squat failed;"
bar_iomem | grep -q " hpu-test-squatter$" && why="$why the squatter's region outlives its module;"
mark last-page-free
if ! out=$(sysw "$BDF" "$DRV/bind" 2>&1); then
	why="$why bind failed: $out;"
elif ! bound; then
	why="$why not bound after the bind;"
fi
log_since last-page-free | grep -F "$BDF" | grep -q "cannot claim" && why="$why the bind still says 'cannot claim';"
has_region hpu-hbm "$BAR_START" "$BAR_END" || why="$why hpu-hbm does not claim all of BAR4 (iomem: $(iomem_now));"
vmtests after-last "[.bar4-full]" || why="$why $(vmtests_why "[.bar4-full]" after-last);"
verdict "the squatter unloaded, the rebound HPU claims all of BAR4 and maps HBM again (caps bit back)" "$why"

# ---- 2. the first 4 KiB taken (inside the page-table area): no bind ----
why=""
sysw "$BDF" "$DRV/unbind" 2>&1 || why="$why unbind failed;"
if out=$(insmod "$SQUAT_KO" start="$BAR_START" len=4096 2>&1); then
	has_region hpu-test-squatter "$BAR_START" $((BAR_START + 4095)) ||
		why="$why /proc/iomem does not show the squatter (iomem: $(iomem_now));"
else
	why="$why insmod start=$BAR_START len=4096 failed: $out;"
fi
before=$(bar_iomem)
mark first-page
if out=$(sysw "$BDF" "$DRV/bind" 2>&1); then
	why="$why the bind succeeded;"
elif ! echo "$out" | grep -qi "resource busy"; then
	why="$why the bind failed, not with EBUSY: $out;"
fi
bound && why="$why bound;"
log_since first-page | grep -F "$BDF" | grep -qF "cannot claim BAR4: -16" ||
	why="$why no 'cannot claim BAR4: -16' message: $(log_since first-page | grep -F "$BDF" | tail -n 3 | tr '\n' '|');"
log_since first-page | grep -F "$BDF" | grep -q "only the page tables" && why="$why it claimed the page tables;"
[ "$(bar_iomem)" = "$before" ] ||
	why="$why BAR4's regions changed: $(echo "$before" | tr '\n' '|') -> $(iomem_now);"
[ -n "$(ls -d /sys/bus/pci/devices/"$BDF"/accel/accel* 2>/dev/null)" ] && why="$why an accel node is left;"
verdict "with the first 4 KiB of BAR4 taken the bind fails with EBUSY, says it cannot claim BAR4 and leaves nothing claimed" "$why"

why=""
rmmod hpu_test_squat 2>&1 || why="$why rmmod hpu_test_squat failed;"
if ! out=$(sysw "$BDF" "$DRV/bind" 2>&1); then
	why="$why bind failed: $out;"
elif ! bound; then
	why="$why not bound after the bind;"
fi
has_region hpu-hbm "$BAR_START" "$BAR_END" || why="$why hpu-hbm does not claim all of BAR4 (iomem: $(iomem_now));"
vmtests after-first "[.bar4-full]" || why="$why $(vmtests_why "[.bar4-full]" after-first);"
verdict "the squatter unloaded, the HPU binds, claims all of BAR4 and maps HBM" "$why"

[ "$NFAIL" = 0 ]
