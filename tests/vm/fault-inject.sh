#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Fault injection aimed at hpu.ko (issue 9): sourced by guest-suite.sh on
# the debug kernel of `make test-debug`, which has FAILSLAB,
# FAIL_PAGE_ALLOC and the stack-trace filter. Only allocations with a
# frame of hpu.ko's code on their call stack can fail (require-start/end
# = the module's text), whether the driver calls the allocator itself or
# through the DRM core, the scheduler, devlink or the network stack.
#
# 1. Probe, site by site (tests/vm/fault-probe.py): with device $FI_DEV
#    unbound, bind it with the N-th allocation failing
#    (/proc/self/fail-nth), for N = 1, 2, ... until a bind completes
#    without reaching its N-th allocation. Each bind must either fail with
#    an error or succeed; a bound device is unbound again (so remove runs
#    after every partial recovery too). No oops, WARN or KASAN report, the
#    device binds and works afterwards, and kmemleak (guest-suite.sh,
#    after this) finds nothing the unwinding forgot. Two reports of Linux
#    6.12 itself are let through, each when it is the only new report and
#    has its own call trace: (a) when an allocation in
#    msix_setup_interrupts() fails (its error path, pci_free_msi_irqs(),
#    unmaps the MSI-X table and clears dev->msix_base, then
#    msix_capability_init() calls iounmap() on that NULL, which warns in
#    arch/x86/mm/ioremap.c and returns), with __pci_enable_msix_range in
#    its trace and the bind failed; the driver's unwinding after
#    pci_alloc_irq_vectors() fails is still checked; (b) when a file of
#    /proc/irq/<n>/ could not be made (register_irq_proc() goes on
#    without it), the unbind's unregister_irq_proc() removes it anyway and
#    remove_proc_entry() warns in fs/proc/generic.c ("name '...'", one of
#    the IRQ's files), with unregister_irq_proc in its trace. hpu-vm
#    --allow-report lets the same reports, with the same traces (and
#    message), through its scan of the log.
# 2. Ioctl paths at random: hpu-fuzz with 2% of its hpu-originated
#    allocations failing (task filter: the fuzzer's processes only). It
#    must end with no crash, hang or leak (its own hbm_used, fd and slab
#    checks), and the devices work afterwards.
#
# Uses pass/fail from guest-suite.sh; leaves both devices bound.

FI=/sys/kernel/debug
FI_TIME=$(( ${HPU_FI_TIME:-4800} * ${HPU_TIME_SCALE:-1} / 4 ))
fi_set() { # value, attribute (in both failslab and fail_page_alloc)
	for d in failslab fail_page_alloc; do
		echo "$1" > "$FI/$d/$2" || return 1
	done
}
fi_off() {
	fi_set 0 probability; fi_set N task-filter
	fi_set 0 require-start; fi_set 0xffffffffffffffff require-end
	fi_set 0 reject-start; fi_set 0 reject-end
}
# Kernel reports (not the allocator's own report of a failed allocation,
# which comes with a call trace by design).
bugs() { dmesg | grep -cE "BUG:|WARNING:|Oops|kernel BUG|general protection fault"; }
# The text of hpu.ko: lowest and highest address of its code symbols,
# plus a page for the length of the last function.
range=$(python3 -c '
import sys
a = [int(l.split()[0], 16) for l in open("/proc/kallsyms")
     if l.rstrip().endswith("[hpu]") and l.split()[1] in "tT"]
if not a or min(a) == 0:
    sys.exit("no hpu text symbols in /proc/kallsyms")
print("0x%x 0x%x" % (min(a), max(a) + 4096))')
if [ -z "$range" ]; then
	fail "vm/fault-inject: hpu.ko text found" "no [hpu] symbols in /proc/kallsyms"
	return 0 2>/dev/null || exit 0
fi
lo=${range% *}; hi=${range#* }
# [start, end) of the first function of module $1 whose name starts with $2
# (its address and the next code symbol's), or nothing.
fn_text() {
	python3 - "$1" "$2" <<'PY'
import sys
mod, name = "[" + sys.argv[1] + "]", sys.argv[2]
syms = sorted((int(l.split()[0], 16), l.split()[2]) for l in open("/proc/kallsyms")
              if l.rstrip().endswith(mod) and l.split()[1] in "tT")
for i, (a, n) in enumerate(syms):
    if n.startswith(name) and i + 1 < len(syms):
        print("0x%x 0x%x" % (a, syms[i + 1][0]))
        break
PY
}
# Allocations under that function never fail (the one reject window of
# failslab and fail_page_alloc).
reject_fn() { # module, function, why (for the failure message)
	r=$(fn_text "$1" "$2")
	if [ -n "$r" ]; then fi_set "${r% *}" reject-start; fi_set "${r#* }" reject-end
	else fail "vm/fault-inject: $3 found" "no $2 in /proc/kallsyms"; fi
}
fi_off
fi_set 0 verbose; fi_set N ignore-gfp-wait
echo N > "$FI/fail_page_alloc/ignore-gfp-highmem"; echo 0 > "$FI/fail_page_alloc/min-order"
fi_set "$lo" require-start; fi_set "$hi" require-end
# One site is left out: a failure inside drm_sysfs_minor_alloc() oopses in
# the DRM core of Linux 6.12, not in hpu.ko (drm_minor_alloc() leaves the
# ERR_PTR in minor->kdev and its managed release put_device()s it).
reject_fn drm drm_sysfs_minor_alloc "the DRM core's minor allocation"
fi_set 32 stacktrace-depth

# ---- 1. probe and remove, one allocation site after another ----
# tests/vm/fault-probe.py, twice: every allocation hpu.ko makes itself or
# through an allocator helper (a stack-trace depth of 8 frames: about
# 1300 in a bind of the suite's second HPU), then every 23rd of all those
# with a frame of hpu.ko anywhere in 32 (about 6700, most of them made by
# the subsystems it registers with: sysfs and debugfs files, IRQ
# descriptors, the DRM minor), about 290 binds.
drv=/sys/bus/pci/drivers/hpu
bdf=$(ls -d "$drv"/0000:* | sort | tail -n 1); bdf=${bdf##*/}
FI_DEV=$bdf
fi_probe() { # name, fault-probe.py options...
	local name=$1 res rc
	shift
	res=$(python3 "$REPO/tests/vm/fault-probe.py" "$bdf" --log "$OUT/recovery.txt" "$@" 2>&1)
	rc=$?
	echo "$res" | head -n 1 | tee -a "$OUT/recovery.txt"
	if [ "$rc" = 0 ]; then
		pass "vm/fault-inject: $name"
	else
		fail "vm/fault-inject: $name" "$(echo "$res" | tail -n 1)"
	fi
	[ -e "$drv/$bdf" ] || echo "$bdf" > "$drv/bind"
}
fi_probe "every allocation of probe made by hpu.ko fails cleanly" --depth 8 --time "$FI_TIME"
fi_probe "every 23rd allocation of probe under hpu.ko fails cleanly" --depth 32 --first 7 --stride 23 \
	--time $(( FI_TIME / 3 ))
fi_set 32 stacktrace-depth
check "vm/fault-inject: the device works after the probe sweep" timeout 120 "$BUILD/tests/vm/hpu-vm-tests" \
	"memset and write-value,a recorded command list is submitted many times"

# ---- 2. the ioctl paths: hpu-fuzz with 2% of its allocations failing ----
# Here the one reject window goes to drm_buddy's node allocator instead: a
# failed split_block() corrupts drm_buddy's free tree in Linux 6.12 (its
# err_undo paths free a block that is still linked in the tree, which
# then holds a cycle and the next allocation spins in rb_last forever).
reject_fn drm_buddy drm_block_alloc "drm_buddy's node allocator"
fi_set Y task-filter; fi_set 1 interval; fi_set -1 times; fi_set 0 space
fi_set 2 probability
b0=$(bugs); t0=$(date +%s)
fuzz_time=$(( 300 * ${HPU_TIME_SCALE:-1} / 4 + 60 ))
timeout -s KILL $((fuzz_time + 120)) sh -c "echo 1 > /proc/self/make-it-fail && exec $BUILD/tests/fuzz/hpu-fuzz \
	--seed 0x5eedfa11 --calls ${HPU_FI_CALLS:-20000} --threads 2 --procs 2 --time-limit $fuzz_time" \
	> "$OUT/hpu-fuzz-fault-inject.log" 2>&1
rc=$?
fi_off
grep -E "^hpu-fuzz: (seed|[0-9]+ calls in)|^HPU_BO_CREATE|^HPU_VM_BIND|^HPU_SUBMIT" "$OUT/hpu-fuzz-fault-inject.log"
echo "FAULT-INJECT hpu-fuzz: exit $rc after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/recovery.txt"
if [ "$rc" = 0 ] && [ "$(bugs)" = "$b0" ]; then
	pass "vm/fault-inject: hpu-fuzz with failing allocations, no crash, hang or leak"
else
	fail "vm/fault-inject: hpu-fuzz with failing allocations, no crash, hang or leak" \
		"exit $rc, kernel reports $b0 -> $(bugs): $(grep -E "FAIL|hang|killed" "$OUT/hpu-fuzz-fault-inject.log" | head -n 3 | tr '\n' ' ')"
fi
check "vm/fault-inject: the devices work after the fuzzer" timeout 120 "$BUILD/tests/vm/hpu-vm-tests" \
	"memset and write-value,a recorded command list is submitted many times"
