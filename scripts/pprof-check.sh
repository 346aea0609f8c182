#!/bin/sh
# pprof-check.sh LOG: go tool pprof (Debian's golang-go) reads the profile
# profil report -f pprof wrote in the guest for a record of
# selftests/cmd_subject split, handed back base64 in LOG between
# "@@ profil-pprof begin" and "@@ profil-pprof end", and names the same
# functions with the same samples as the CSV report of that record
# (between "@@ profil-csv begin" and "@@ profil-csv end"): each function
# with 1% of the samples or more within one sample (a shared bin's
# shares are rounded), fifty, thirty and twenty among them.  Prints
# go tool pprof -top.
set -eu
log=$1
out=${log%.log}.pprof
sed -n '/^@@ profil-pprof begin/,/^@@ profil-pprof end/p' "$log" | sed '1d;$d' |
	base64 -d > "$out.pb.gz"
sed -n '/^@@ profil-csv begin/,/^@@ profil-csv end/p' "$log" | sed '1d;$d' > "$out.csv"
go tool pprof -top -sample_index=samples -nodefraction=0 -nodecount=10000 \
	"$out.pb.gz" > "$out.top" 2>&1
cat "$out.top"
# CSV: process, samples, percent, self_seconds, function, object, ...; the
# rows of process "all", summed by function (no name here has a comma).
# pprof -top: flat flat% sum% cum cum% name.
exec awk -F, '
	FNR == NR {
		if ($0 ~ /^#/ || $1 != "all")
			next
		csv[$5] += $2
		total += $2
		next
	}
	/flat  flat%/ { rows = 1; next }
	rows && NF >= 6 {
		name = $0
		sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", name)
		split($0, f, " ")
		top[name] = f[1]
	}
	END {
		if (!total)
			exit 1
		bad = 0
		for (fn in csv) {
			if (csv[fn] < total / 100)
				continue
			d = top[fn] - csv[fn]
			if (!(fn in top) || d > 1 || d < -1) {
				printf "pprof-check: %s: %s samples in the CSV, %s in pprof\n",
				       fn, csv[fn], (fn in top) ? top[fn] : "none"
				bad = 1
			}
		}
		exit bad || !("fifty" in csv) || !("thirty" in csv) || !("twenty" in csv)
	}' "$out.csv" FS=' ' "$out.top"
