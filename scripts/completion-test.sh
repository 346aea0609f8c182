#!/bin/bash
# completion-test.sh: profil(1)'s bash completion (tools/profil.bash-completion),
# on the host: each case is a command line, the cursor on its last word,
# and the words the completion must offer, exactly.  Exit 1 on any
# difference.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck disable=SC1091
. "$top/tools/profil.bash-completion"
fail=0

# expect 'WANTED' WORD...: the completion of WORD... as profil's line.
expect() {
	local want=$1 got
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_profil
	got="${COMPREPLY[*]}"
	if [ "$got" = "$want" ]; then
		echo "ok - $* -> $want"
	else
		echo "not ok - $*: '$got', not '$want'"
		fail=1
	fi
}

expect 'text csv gmon pprof' profil -f ''
expect 'pprof' profil --format p
expect 'symbol object process' profil -l --sort ''
expect 'object' profil --sort o
expect '--percent-limit' profil --perc
expect '--children' profil -r 100 --chi
expect '' profil --percent-limit ''
expect '' profil -p 1 --duration ''
expect '--pid' profil --pi
# -p: the running processes' IDs, this shell's among them.
for words in "profil -p" "profil -f csv --pid"; do
	# shellcheck disable=SC2206
	COMP_WORDS=($words '')
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_profil
	case " ${COMPREPLY[*]} " in
	*" $$ "*) echo "ok - $words: offers pid $$" ;;
	*) echo "not ok - $words: pid $$ not offered"; fail=1 ;;
	esac
done
# After the command, its words are its own: files here, where
# bash-completion's _command_offset is not loaded.
expect '' profil -- profil_no_such_command --so
expect '' profil --sort object profil_no_such_command --so
expect '/tmp' profil -- ls /tm
expect '/tmp' profil -r 100 ls /tm
dir=$(mktemp -d) && touch "$dir/out.pb.gz" || exit 1
expect "$dir/out.pb.gz" profil -f pprof -o "$dir/out."
rm -r "$dir"
# The subcommands, and each one's own options and words.
expect 'record' profil recor
expect 'report' profil repor
expect '--children' profil record --chi
expect '' profil record --form
expect '--debuginfo-path' profil report --debug
expect '' profil report --chi
expect 'text csv gmon pprof' profil report -f ''
expect 'symbol object process' profil report -l --sort ''
expect '/tmp' profil -- ls /tm
expect '/tmp' profil record -o /tm
expect '/tmp' profil record -r 100 -- ls /tm
expect '/tmp' profil record --children ls /tm
dir=$(mktemp -d) && mkdir "$dir/rec.data" && touch "$dir/rec.txt" || exit 1
expect "$dir/rec.data" profil report "$dir/rec."
expect "$dir/rec.data" profil report -f csv -o out.csv "$dir/rec."
expect "$dir/rec.data" profil record -o "$dir/rec."
expect "$dir/rec.data" profil --debuginfo-path "$dir/rec."
expect '' profil report "$dir/rec.data" ''
rm -r "$dir"
complete -p profil > /dev/null || { echo "not ok - no completion for profil"; fail=1; }

# Every long option of tools/profil.c's tables, for plain profil, record and
# report: offered by the completion after "--", named in profil(1), and in
# --help's usage by its long name or its letter (-r for --rate, -p PID).
profil=$top/build/tools/profil
usage=$("$profil" --help 2>&1) || { echo "not ok - $profil --help failed"; fail=1; }
for mode in profile record report; do
	words="profil"
	[ "$mode" = profile ] || words="profil $mode"
	# shellcheck disable=SC2206
	COMP_WORDS=($words --)
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMPREPLY=()
	_profil
	offered=" ${COMPREPLY[*]} "
	opts=$(awk -v t="${mode}_longs" '
		$0 ~ "struct option " t "\\[\\]" { on = 1; next }
		on && /\{ 0 \}/ { exit }
		on && match($0, /"[a-z-]+", [a-z_]+, NULL, (\x27.\x27|[A-Z_]+)/) {
			split(substr($0, RSTART, RLENGTH), f, /, */)
			gsub(/"/, "", f[1]); gsub(/\x27/, "", f[4])
			print f[1] " " f[4]
		}' "$top/tools/profil.c")
	[ -n "$opts" ] || { echo "not ok - no long options read for $mode"; fail=1; }
	while read -r long letter; do
		[ -n "$long" ] || continue
		case $offered in
		*" --$long "*) ;;
		*) echo "not ok - $words: --$long not offered by the completion"; fail=1 ;;
		esac
		grep -Eq "Fl Fl $long( |$)" "$top/man/profil.1" ||
			{ echo "not ok - --$long not in man/profil.1"; fail=1; }
		[ "$long" = help ] && continue
		case $letter in
		[a-z]) alt="-$letter" ;;
		*) alt="--$long" ;;
		esac
		printf '%s\n' "$usage" | grep -q -- "--$long\|\[$alt[] ]\| $alt " ||
			{ echo "not ok - $words: --$long not in --help"; fail=1; }
	done <<-EOF2
	$opts
	EOF2
	[ "$fail" = 0 ] && echo "ok - $words: every long option completed, in profil(1) and --help"
done
exit $fail
