#!/bin/sh
# make bench-readme: put bench/out/table.md and the plot into
# doc/measurements.md, between the "bench begin" and "bench end" markers
# (added at its end the first time), and bench/out/mcount.md (make
# bench-mcount) between the "mcount begin" and "mcount end" markers.
# Nothing in those sections is typed by hand.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
readme=$top/doc/measurements.md table=$top/bench/out/table.md
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
		print "![cost per sample by tool and rate](../bench/out/cost.png)"
		print ""
		skip = 1; next
	}
	$0 == end { skip = 0 }
	!skip' "$readme" > "$tmp"
cat "$tmp" > "$readme"
mc=$top/bench/out/mcount.md
if [ -s "$mc" ]; then
	awk -v begin='<!-- mcount begin: make bench-readme writes this section -->' \
	    -v end='<!-- mcount end -->' -v table="$mc" '
		$0 == begin {
			print; print ""
			while ((getline l < table) > 0) print l
			print ""
			skip = 1; next
		}
		$0 == end { skip = 0 }
		!skip' "$readme" > "$tmp"
	cat "$tmp" > "$readme"
fi
rm -f "$tmp"
echo "bench-readme: $readme updated from $table and $mc"
