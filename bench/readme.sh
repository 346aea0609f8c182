#!/bin/sh
# make bench-readme: put bench/out/table.md and the plot into README.md,
# between the "bench begin" and "bench end" markers (added at the end of
# README.md the first time).  Nothing in that section is typed by hand.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
readme=$top/README.md table=$top/bench/out/table.md
[ -s "$table" ] || { echo "bench-readme: no $table (make bench first)"; exit 1; }
begin='<!-- bench begin: make bench-readme writes this section -->'
end='<!-- bench end -->'
grep -qF "$begin" "$readme" || printf '\n## Benchmarks\n\n%s\n%s\n' "$begin" "$end" >> "$readme"
tmp=$(mktemp)
awk -v begin="$begin" -v end="$end" -v table="$table" '
	$0 == begin {
		print; print ""
		while ((getline l < table) > 0) print l
		print ""
		print "![cost per sample by tool and rate](bench/out/cost.png)"
		print ""
		skip = 1; next
	}
	$0 == end { skip = 0 }
	!skip' "$readme" > "$tmp"
cat "$tmp" > "$readme"
rm -f "$tmp"
echo "bench-readme: README.md updated from $table"
