#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The driver's KUnit suites (kernel/tests/, module hpu_kunit.ko) in a guest
# running a kernel with CONFIG_KUNIT (the debug kernel of make test-debug
# and make kunit), with hpu.ko loaded:
#   tests/vm/kunit.sh <hpu_kunit.ko>
# Loading the module runs every suite; each case's result is read from
# debugfs (/sys/kernel/debug/kunit/<suite>/results, KTAP) before the
# module is unloaded again. One line per case, "PASS vm/kunit/<suite>/<case>"
# or "FAIL vm/kunit/<suite>/<case>: <first failed expectation>", goes to
# stdout and, with HPU_OUT set, to $HPU_OUT/results.txt (the format of
# tests/vm/guest-suite.sh, which tests/run-tests.py counts); each suite's
# KTAP log to $HPU_OUT/kunit-<suite>.ktap. Exit status: 0 when every case
# passed, 1 otherwise.
KO=${1:?usage: kunit.sh hpu_kunit.ko}
RES=${HPU_OUT:+$HPU_OUT/results.txt}
KDIR=/sys/kernel/debug/kunit

emit() { # line
	echo "$1"
	[ -n "$RES" ] && echo "$1" >> "$RES"
	return 0
}

[ -d /sys/kernel/debug/kunit ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
if [ ! -d "$KDIR" ]; then
	emit "FAIL vm/kunit/suites ran: no $KDIR (kernel without CONFIG_KUNIT_DEBUGFS)"
	exit 1
fi
if [ -e /sys/module/hpu_kunit ]; then
	rmmod hpu_kunit 2>/dev/null
fi
if ! out=$(insmod "$KO" 2>&1); then
	emit "FAIL vm/kunit/suites ran: insmod $KO: $out"
	exit 1
fi

total=0
bad=0
for d in "$KDIR"/hpu_*; do
	[ -f "$d/results" ] || continue
	suite=${d##*/}
	[ -n "$HPU_OUT" ] && cat "$d/results" > "$HPU_OUT/kunit-$suite.ktap"
	# KTAP: a case's result is the "ok"/"not ok" line one level in (4
	# spaces); a parameterised case has one more level (8 spaces, after
	# "# Subtest: <case>"), one result per parameter, each counted. The
	# lines before a result are its log: the first failed expectation and
	# the line after it say why.
	lines=$(awk -v suite="$suite" '
		function indent(line) { match(line, /^ */); return RLENGTH }
		function trim(line) { sub(/^ */, "", line); gsub(/: /, " - ", line); return line }
		function result(ok, name, skip) {
			if (skip)
				printf "FAIL vm/kunit/%s/%s: skipped\n", suite, name
			else if (ok)
				printf "PASS vm/kunit/%s/%s\n", suite, name
			else
				printf "FAIL vm/kunit/%s/%s: %s\n", suite, name, why ? why : "failed"
			why = ""; want = 0; more = 0
		}
		function parse(line) {
			skip = line ~ /# SKIP/
			sub(/ *# SKIP.*/, "", line)
			ok = line !~ /^ *not ok/
			sub(/^ *(not )?ok [0-9]+ /, "", line)
			gsub(/: /, " - ", line)
			return line
		}
		/^        # Subtest: / { param_case = $3; nparams = 0; next }
		/^        (not )?ok [0-9]+ / {
			name = parse($0)
			result(ok, param_case "/" name, skip)
			nparams++
			next
		}
		/^    (not )?ok [0-9]+ / {
			name = parse($0)
			if (name != param_case || nparams == 0 || (!ok && why != ""))
				result(ok, name, skip)
			param_case = ""; why = ""
			next
		}
		# The first failed expectation: where, "Expected ...", its values.
		want && indent($0) == ind { why = why " " trim($0); want = 0; more = 2; next }
		more && indent($0) > ind { why = why "; " trim($0); more--; next }
		{ want = 0; more = 0 }
		why == "" && /# [^ ]+: (EXPECTATION|ASSERTION) FAILED at / {
			why = $0; sub(/.*FAILED at /, "", why); sub(/.*\//, "", why)
			ind = indent($0); want = 1
			next
		}
' "$d/results")
	if [ -z "$lines" ]; then
		lines="FAIL vm/kunit/$suite/ran: no case results in $d/results"
	fi
	printf '%s\n' "$lines" > /tmp/kunit-lines
	while IFS= read -r l; do
		emit "$l"
		total=$((total + 1))
		case $l in FAIL*) bad=$((bad + 1)) ;; esac
	done < /tmp/kunit-lines
done
rmmod hpu_kunit

if [ "$total" = 0 ]; then
	emit "FAIL vm/kunit/suites ran: no hpu_* suite in $KDIR"
	exit 1
fi
echo "kunit: $((total - bad)) passed, $bad failed"
[ "$bad" = 0 ]
