#!/bin/sh
# make bench-readme: put bench/out/table.md and the plot into
# doc/measurements.md, between the "bench begin" and "bench end" markers
# (added at its end the first time), bench/out/mcount.md (make
# bench-mcount) between the "mcount begin" and "mcount end" markers, and
# bench/out/summary.md into README.md between the "summary begin" and
# "summary end" markers.  Nothing in those sections is typed by hand.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
readme=$top/doc/measurements.md table=$top/bench/out/table.md
[ -s "$table" ] || { echo "bench-readme: no $table (make bench first)"; exit 1; }
begin='<!-- bench begin: make bench-readme writes this section -->'
end='<!-- bench end -->'
grep -qF "$begin" "$readme" || printf '\n## Benchmarks\n\n%s\n%s\n' "$begin" "$end" >> "$readme"

# between FILE BEGIN END CONTENT [TRAILER]: FILE's lines strictly between
# the line BEGIN and the line END replaced by CONTENT's (and TRAILER).
between() {
	tmp=$(mktemp)
	awk -v begin="$2" -v end="$3" -v content="$4" -v trailer="${5:-}" '
		$0 == begin {
			print; print ""
			while ((getline l < content) > 0) print l
			print ""
			if (trailer != "") { print trailer; print "" }
			skip = 1; next
		}
		$0 == end { skip = 0 }
		!skip' "$1" > "$tmp"
	cat "$tmp" > "$1"
	rm -f "$tmp"
}

between "$readme" "$begin" "$end" "$table" \
	"![cost per tick taken by tool and rate](../bench/out/cost.png)"
mc=$top/bench/out/mcount.md
[ -s "$mc" ] && between "$readme" \
	'<!-- mcount begin: make bench-readme writes this section -->' \
	'<!-- mcount end -->' "$mc"
sm=$top/bench/out/summary.md
[ -s "$sm" ] && between "$top/README.md" \
	'<!-- summary begin: make bench-readme writes this paragraph from bench/out/summary.md -->' \
	'<!-- summary end -->' "$sm"
echo "bench-readme: $readme and README.md updated from bench/out/"
