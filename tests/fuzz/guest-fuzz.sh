#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make fuzz, in the guest (started by tests/fuzz/run-fuzz.py through
# tools/dev/vm/hpu-vm): load the driver as tests/vm/guest-suite.sh does, then run
# hpu-fuzz in rounds with fresh seeds until HPU_FUZZ_CALLS calls (default
# 10^7) or HPU_FUZZ_TIME seconds (default 3000) are used up; every second
# round does an operator soft reset half way. Each round checks for crashed
# or hung processes and leaks (hbm_used, fds, slab) itself; at the end the
# driver's kernel-log reports must all be expected ones and the module
# must unload. Writes PASS/FAIL lines to $HPU_OUT/results.txt, each round's
# output to $HPU_OUT/fuzz-round-N.log and the outcome counts of every round
# to $HPU_OUT/fuzz-stats.txt (run-fuzz.py merges them into one table).
REPO=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${HPU_BUILD:-$REPO/build}
OUT=${HPU_OUT:?HPU_OUT not set}
RES=$OUT/results.txt
FUZZ=$BUILD/tests/fuzz/hpu-fuzz
TARGET=${HPU_FUZZ_CALLS:-10000000}
BUDGET=${HPU_FUZZ_TIME:-3000}
ROUND_CALLS=${HPU_FUZZ_ROUND_CALLS:-1000000}
: > "$RES"
: > "$OUT/fuzz-stats.txt"

pass() { echo "PASS $1" >> "$RES"; echo "PASS $1"; }
fail() { echo "FAIL $1: $2" >> "$RES"; echo "FAIL $1: $2"; }

modprobe -a drm drm_buddy drm_shmem_helper gpu-sched
if ! insmod "$REPO/kernel/hpu.ko" ${HPU_PARAMS:-hb_period_ms=250}; then
	fail "fuzz/driver loads" "insmod failed"
	exit 0
fi
pass "fuzz/driver loads"

t0=$(date +%s)
done_calls=0
round=0
bad=0
while [ "$done_calls" -lt "$TARGET" ]; do
	left=$(( BUDGET - ($(date +%s) - t0) ))
	[ "$left" -ge 30 ] || break
	n=$ROUND_CALLS
	[ $((TARGET - done_calls)) -lt "$n" ] && n=$((TARGET - done_calls))
	limit=$left
	[ "$limit" -gt 1200 ] && limit=1200
	seed=0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
	reset=""
	[ $((round % 2)) = 1 ] && reset=--reset
	log=$OUT/fuzz-round-$round.log
	echo "round $round: seed $seed, $n calls, time limit $limit s ${reset}"
	# shellcheck disable=SC2086
	timeout -s KILL $((limit + 60)) "$FUZZ" --seed "$seed" --calls "$n" --time-limit "$limit" \
		--threads "${HPU_FUZZ_THREADS:-3}" --procs "${HPU_FUZZ_PROCS:-3}" $reset \
		--stats-out "$OUT/fuzz-stats.txt" ${HPU_FUZZ_FLAGS:-} > "$log" 2>&1
	rc=$?
	grep -E "^hpu-fuzz: [0-9]+ calls in|FAIL" "$log"
	got=$(sed -n 's/^hpu-fuzz: \([0-9]*\) calls in.*/\1/p' "$log" | tail -n 1)
	done_calls=$((done_calls + ${got:-0}))
	if [ "$rc" != 0 ]; then
		bad=$((bad + 1))
		fail "fuzz/round $round (seed $seed$([ -n "$reset" ] && echo ", soft reset"))" \
			"exit $rc: $(grep -E "FAIL|killed|hang" "$log" | head -n 3 | tr '\n' ' ')"
	fi
	round=$((round + 1))
done
took=$(( $(date +%s) - t0 ))
echo "fuzz: $round rounds, $done_calls calls in $took s"
echo "#total	$done_calls	$took	$round" >> "$OUT/fuzz-stats.txt"
if [ "$bad" = 0 ] && [ "$round" -gt 0 ]; then
	pass "fuzz/$round rounds with fresh seeds ($done_calls calls) without crash, hang or leak"
elif [ "$round" = 0 ]; then
	fail "fuzz/ran" "no round ran (time budget $BUDGET s)"
fi

dmesg --level=emerg,alert,crit,err,warn 2>/dev/null | grep -E "hpu|accel" > /tmp/klog-warn
grep -v -E -f "$REPO/tests/vm/expected-kernel-messages.txt" /tmp/klog-warn > /tmp/klog-unexpected
if [ -s /tmp/klog-unexpected ]; then
	fail "fuzz/kernel log has only the expected error reports" "$(head -n 3 /tmp/klog-unexpected | tr '\n' '|')"
else
	pass "fuzz/kernel log has only the expected error reports"
fi
if rmmod hpu && [ ! -e /sys/module/hpu ]; then pass "fuzz/driver unloads after the run"
else fail "fuzz/driver unloads after the run" "rmmod failed or module left"; fi
exit 0
