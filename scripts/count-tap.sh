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
#  - every test of a plan ("1..N") that printed no verdict;
#  - a non-zero exit status with no "not ok" to explain it;
#  - a guest check ("ok - guest: NAME") in GUEST_CHECKS that is missing;
#  - a dmesg that was never printed, or one with BUG/WARNING/oops lines;
#  - a guest that never said it was done.
# A missing or empty LOG is all of these, and still ends in three numbers.
# Exits 1 when it counted a failure, 0 otherwise.
set -u
log=$1
shift
[ -r "$log" ] || log=/dev/null

# The guest's own checks, each of which must appear ("ok -" or "not ok -").
checks=${GUEST_CHECKS-"insmod profil.ko
rmmod profil with no session left
pins balanced"}

awk -v runs="$*" -v checks="$checks" '
function fail(msg) { print "not ok - " msg; f++ }
BEGIN {
	nruns = split(runs, want, " ")
	nchecks = split(checks, check, "\n")
}
/^@@ dmesg begin/ { indmesg = 1; dmesg_begin = 1; next }
/^@@ dmesg end/ { indmesg = 0; dmesg_end = 1; next }
indmesg {
	# Reports, not the debug kernel saying "RCU lockdep checking is
	# enabled" or "kmemleak: ... initialized" at boot.
	if ($0 ~ /BUG:|WARNING:|Oops|possible circular|possible recursive locking|inconsistent lock state|lock inversion|lockdep is turned off|general protection|Call Trace|refcount_t:|UBSAN:|KASAN:|unreferenced object|suspected memory leak|suspicious RCU|detected stall|blocked for more than/) {
		if (nbad++ < 20)
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
	if ($1 == "ok") p++; else f++
	next
}
cur == "" { next }
/^1\.\.[0-9]+/ { plan[cur] = substr($1, 4) + 0; next }
/^ok [0-9]/ {
	verdicts[cur]++
	if ($0 ~ /# SKIP/) s++; else p++
	next
}
/^not ok [0-9]/ { verdicts[cur]++; notok[cur]++; f++; next }
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
