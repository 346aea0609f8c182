#!/bin/sh
# check-harness.sh: the host's count checked on canned guest logs
# (scripts/harness-test/*.log), each naming the runs it owes ("#! runs")
# and the "PASSED FAILED SKIPPED" count-tap.sh must give it ("#! expect"),
# and maybe a line it must print ("#! says"), with the skips of
# harness-test/expected-skips expected,
# plus the skip-in-setup fix of selftests/common.h checked against the
# kselftest harness in use.  Exits non-zero on any wrong answer.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$top/scripts/harness-test
bad=0

for log in "$dir"/*.log; do
	runs=$(sed -n 's/^#! runs //p' "$log")
	want=$(sed -n 's/^#! expect //p' "$log")
	says=$(sed -n 's/^#! says //p' "$log")
	# shellcheck disable=SC2086
	out=$(EXPECTED_SKIPS=$dir/expected-skips "$top/scripts/count-tap.sh" "$log" $runs)
	rc=$?
	got=$(echo "$out" | tail -n 1)
	# The exit status says whether anything failed: 0 exactly when F is 0.
	case "$want" in *" 0 "*) wrc=0 ;; *) wrc=1 ;; esac
	if [ "$got" = "$want" ] && [ "$rc" -eq "$wrc" ] &&
	   { [ -z "$says" ] || echo "$out" | grep -qxF "$says"; }; then
		echo "ok - $(basename "$log" .log): $got"
	else
		echo "not ok - $(basename "$log" .log): counted '$got' (exit $rc), expected '$want' (exit $wrc)"
		echo "$out" | sed 's/^/   | /'
		bad=$((bad + 1))
	fi
	# Whatever else, a log with a failure must say so in its count.
	case "$want" in *" 0 "*) ;; *) [ "${got#* }" != "0 ${got##* }" ] || bad=$((bad + 1)) ;; esac
done

# A missing log counts everything owed as failed, and still ends in numbers.
got=$("$top/scripts/count-tap.sh" /nonexistent root:a_test | tail -n 1)
rc=$("$top/scripts/count-tap.sh" /nonexistent root:a_test > /dev/null; echo $?)
if [ "$got" = "0 6 0" ] && [ "$rc" -eq 1 ]; then
	echo "ok - no log: $got"
else
	echo "not ok - no log: counted '$got', expected '0 6 0'"
	bad=$((bad + 1))
fi

# SKIP_NOW() in a fixture setup must keep the body from running.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if cc -std=gnu11 -I"$top/uapi" -I"$top/lib/include" -I"$top/build/kselftest" \
	-o "$tmp/skip" "$dir/skip_in_setup.c" -pthread 2>"$tmp/cc.log" &&
   "$tmp/skip" > "$tmp/out" 2>&1 &&
   grep -q '^ok 1 # SKIP' "$tmp/out" && ! grep -q 'BODY RAN' "$tmp/out"; then
	echo "ok - SKIP_NOW in a fixture setup skips the body"
else
	echo "not ok - SKIP_NOW in a fixture setup skips the body"
	cat "$tmp/cc.log" "$tmp/out" 2>/dev/null | sed 's/^/   | /'
	bad=$((bad + 1))
fi
[ "$bad" -eq 0 ]
