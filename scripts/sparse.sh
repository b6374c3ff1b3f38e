#!/bin/sh
# make sparse (and a stage of make test): sparse (make C=2) finds nothing
# in the .c files the series changes that it does not find there in the
# pinned Debian 6.12 (the baseline tag).
#
# The warnings of baseline are committed, configs/sparse-baseline.txt, so
# that a run does not build baseline again: "file: message" lines, line
# numbers left out (the series moves code), sorted.  The series' side is
# checked in build/kunit, make test's debug kernel, which it has just
# built; the list was made from the same configuration.
#
#   scripts/sparse.sh           check the series (one check)
#   scripts/sparse.sh --update  write the list again from baseline, built
#                               in build/sparse-baseline with build/kunit's
#                               configuration (after a change of the
#                               Debian version or of configs/debug.config)
#
# Prints "ok" or "FAIL" with the new warnings, then "N passed, N failed"
# (one check); exits non-zero on a failure.
set -eu
# One collation for the committed list and this run (sort, comm).
LC_ALL=C
export LC_ALL
. "$(dirname "$0")/lib.sh"
machine_lock "make sparse"

list=$top/configs/sparse-baseline.txt
seed=$build/kunit/.config

need_tree
[ -f "$seed" ] || die "no $seed: make test builds build/kunit first"
command -v sparse >/dev/null || die "no sparse: scripts/deps.sh installs it"
files=$(changed_files | grep '\.c$' | sort -u)

# warnings SRC OUT: sparse on the objects of $files that OUT builds, as
# sorted "file: message" lines.
warnings() {
	w_objs=$(for f in $files; do
		[ -f "$2/${f%.c}.o" ] && echo "${f%.c}.o"
	done; true)
	[ -n "$w_objs" ] || die "${2#"$top"/} builds none of the series' .c files"
	# One make (each costs 3 s before it checks a file), its jobs' output
	# whole lines (-Otarget).  A make that failed may have checked
	# nothing: no list of warnings then.
	w_rc=0
	# shellcheck disable=SC2086 # a list of objects
	locked make -s -k -j2 -Otarget -C "$1" O="$2" ARCH=x86_64 CC="$kcc" \
		C=2 $w_objs >"$build/sparse-make.log" 2>&1 || w_rc=$?
	if [ "$w_rc" -ne 0 ]; then
		tail -n 30 "$build/sparse-make.log" | sed 's/^/    | /' >&2
		die "sparse: make C=2 in ${2#"$top"/} failed (status $w_rc)"
	fi
	grep -E '(warning|error):' "$build/sparse-make.log" |
		sed -E "s#^($1/|\.\./${1##*/}/)?([^:]+):[0-9]+:[0-9]+: #\\2: #" | sort
}

if [ "${1:-}" = --update ]; then
	baseline_tree
	out=$build/sparse-baseline
	mkdir -p "$out"
	grep -v -e '^CONFIG_KTASK' -e '^# CONFIG_KTASK' "$seed" >"$out/.config"
	step "sparse: building baseline in build/sparse-baseline"
	locked make -s -C "$base_tree" O="$out" ARCH=x86_64 CC="$kcc" olddefconfig
	# The objects to check, built first so that warnings() finds them.
	objs=$(for f in $files; do
		[ -f "$base_tree/$f" ] && [ -f "$build/kunit/${f%.c}.o" ] &&
			echo "${f%.c}.o"
	done; true)
	[ -n "$objs" ] || die "build/kunit builds none of the series' .c files"
	# shellcheck disable=SC2086 # a list of objects
	locked make -s -C "$base_tree" O="$out" ARCH=x86_64 CC="$kcc" -j2 $objs
	{
		echo "# sparse on baseline ($(git -C "$tree" log -1 --format=%s baseline)),"
		echo "# build/kunit's configuration: scripts/sparse.sh --update"
		warnings "$base_tree" "$out"
	} >"$list.new"
	mv "$list.new" "$list"
	step "sparse: $(grep -vc '^#' "$list") warnings in baseline, written to configs/${list##*/}"
	exit 0
fi

[ -f "$list" ] || die "no $list: scripts/sparse.sh --update writes it"
step "sparse (make C=2) on $(echo "$files" | wc -l) .c files the series changes"
warnings "$tree" "$build/kunit" >"$build/sparse-series.txt"
new=$(grep -v '^#' "$list" | comm -13 - "$build/sparse-series.txt")
if [ -z "$new" ]; then
	printf '    ok sparse: no new warning (%s in baseline, %s with the series)\n' \
		"$(grep -vc '^#' "$list")" "$(wc -l <"$build/sparse-series.txt")"
	echo '1 passed, 0 failed'
else
	printf 'FAIL: sparse: new warnings (if they are upstream'"'"'s, the list is old: scripts/sparse.sh --update)\n'
	printf '%s\n' "$new" | sed 's/^/    | /'
	echo '0 passed, 1 failed'
	exit 1
fi
