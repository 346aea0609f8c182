#!/bin/sh
# count-tap.sh LOG RUN...: count what a guest log says, trusting nothing it
# does not show.  Each RUN is USER:PROGRAM, a kselftest program the guest
# was to run as that user, between "@@ run USER PROGRAM" and
# "@@ exit USER PROGRAM STATUS".  Prints a "not ok - ..." line for every
# failure it finds beyond the guest's own "not ok" lines, then, last,
# "PASSED FAILED SKIPPED".  A failure is:
#  - a test that printed "not ok";
#  - a run that never started, printed no plan (a missing program, a
#    library that cannot load), or never ended (the guest died or hung);
#  - every test of a plan ("1..N") that printed no verdict; a verdict for a
#    number outside the plan or one already given; a second plan;
#  - a skip that $EXPECTED_SKIPS (default selftests/expected-skips) does
#    not list for this user, program, test and kind of kernel
#    ($SKIP_KERNEL: "debian" or "debug"); a listed skip that ran instead
#    is reported on a "# " line, not counted;
#  - a non-zero exit status with no "not ok" to explain it;
#  - a guest check ("ok - guest: NAME") in GUEST_CHECKS or
#    GUEST_CHECKS_MORE that is missing,
#    or "pins balanced" without its two numbers;
#  - a dmesg that was never printed, or one with a line that
#    scripts/kernel-errors.ere matches (BUG, WARNING, oops, lockdep, KASAN...),
#    or a kmemleak that disabled itself ("Cannot allocate a scan area" is
#    not that: it scans the whole object instead);
#  - a guest that never said it was done.
# A missing or empty LOG is all of these, and still ends in three numbers.
# Exits 1 when it counted a failure, 0 otherwise.
set -u
log=$1
shift
[ -r "$log" ] || log=/dev/null
skips=${EXPECTED_SKIPS:-$(cd "$(dirname "$0")/.." && pwd)/selftests/expected-skips}

# The guest's own checks, each of which must appear ("ok -" or "not ok -"),
# and $GUEST_CHECKS_MORE, those a kind of guest owes besides.
checks=${GUEST_CHECKS-"insmod profil.ko
rmmod profil with no session left
pins balanced"}
[ -z "${GUEST_CHECKS_MORE:-}" ] || checks="$checks
$GUEST_CHECKS_MORE"

awk -v runs="$*" -v checks="$checks" -v skips="$skips" \
    -v kernel="${SKIP_KERNEL:-debian}" \
    -v errors="$(cat "$(dirname "$0")/kernel-errors.ere")" '
function fail(msg) { print "not ok - " msg; f++ }
BEGIN {
	nruns = split(runs, want, " ")
	nchecks = split(checks, check, "\n")
	for (i = 1; i <= nruns; i++)
		owed[want[i]] = 1
	# KIND USER PROGRAM TEST: a skip that is expected there.
	while ((getline line < skips) > 0) {
		if (line ~ /^#/ || split(line, w, " ") < 4)
			continue
		if (w[1] == "all" || w[1] == kernel)
			expect[w[2] ":" w[3] " " w[4]] = 1
	}
}
/^@@ dmesg begin/ { indmesg = 1; dmesg_begin = 1; next }
/^@@ dmesg end/ { indmesg = 0; dmesg_end = 1; next }
indmesg {
	# Reports, not the debug kernel saying "RCU lockdep checking is
	# enabled" or "kmemleak: ... initialized" at boot.
	# The frames under a "Call Trace:" line are shown too.
	if ($0 ~ errors) {
		if (nbad++ < 20)
			bad = bad "\n   | " $0
		frames = $0 ~ /Call Trace/ ? 16 : 0
	} else if (frames > 0 && nbad <= 20) {
		frames--
		bad = bad "\n   | " $0
	}
	next
}
/^@@ guest done/ { done = 1; next }
/^@@ run / {
	cur = $3 ":" $4
	started[cur] = 1
	plan[cur] = -1
	next
}
/^@@ exit / {
	key = $3 ":" $4
	ended[key] = 1
	status[key] = $5
	cur = ""
	next
}
# The guest checks: "ok - guest: NAME" / "not ok - guest: NAME (...)".
/^(not )?ok - guest: / {
	name = $0
	sub(/^(not )?ok - guest: /, "", name)
	for (i = 1; i <= nchecks; i++)
		if (index(name, check[i]) == 1)
			seen[i] = 1
	if ($1 == "ok" && index(name, "pins balanced") == 1 &&
	    name !~ /acquired [0-9]+, released [0-9]+/)
		fail("guest: pins balanced, but without the counts: " name)
	else if ($1 == "ok")
		p++
	else
		f++
	next
}
cur == "" { next }
/^1\.\.[0-9]+/ {
	if (plan[cur] >= 0)
		fail(cur ": a second plan, " $1)
	else
		plan[cur] = substr($1, 4) + 0
	next
}
/^#  RUN / { test = $3; next }
/^(not )?ok [0-9]/ {
	n = $1 == "ok" ? $2 : $3
	if (n < 1 || n > plan[cur]) { fail(cur ": test " n " is outside its plan"); next }
	if ((cur, n) in given) { fail(cur ": test " n " given a verdict again"); next }
	given[cur, n] = 1
	verdicts[cur]++
	if ($1 == "not") { notok[cur]++; f++; next }
	if ($0 !~ /# SKIP/) { p++; next }
	key = cur " " test
	if (key in expect) { s++; skipped[key] = 1; next }
	why = $0
	sub(/.*# SKIP */, "", why)
	fail(cur ": " test " skipped, which " kernel " kernels are not expected to (" why ")")
	next
}
END {
	for (i = 1; i <= nruns; i++) {
		r = want[i]
		if (!(r in started)) { fail(r ": never started"); continue }
		if (plan[r] < 0) { fail(r ": no TAP plan (missing program or library?)"); continue }
		if (!(r in ended)) fail(r ": never ended (the guest died or hung)")
		if (verdicts[r] < plan[r]) {
			fail(r ": " plan[r] - verdicts[r] " of " plan[r] " planned tests printed no verdict, each a failure")
			f += plan[r] - verdicts[r] - 1
		}
		if ((r in ended) && status[r] != 0 && !notok[r])
			fail(r ": exit status " status[r] " with no failing test")
	}
	for (key in expect) {
		split(key, w, " ")
		if ((w[1] in owed) && (w[1] in started) && !(key in skipped))
			print "# expected to skip, but ran: " key
	}
	for (i = 1; i <= nchecks; i++)
		if (!seen[i])
			fail("guest: " check[i] ": never reported")
	if (!dmesg_begin || !dmesg_end)
		fail("guest: dmesg never printed in full")
	else if (nbad)
		fail("guest: dmesg has kernel errors:" bad)
	else
		p++
	if (!done)
		fail("guest: never said it was done")
	printf "%d %d %d\n", p, f, s
	exit f > 0
}' "$log"
