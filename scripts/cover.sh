#!/bin/sh
# make cover: put the tables of the last `make run` (build/report/report.md)
# into patches/cover-report.txt, or with COVER=name into
# patches/cover-name.txt (COVER=busy after make run MODE=busy; COVER=model
# after make run MODE=model: the projection and its costs alone); `make
# export` puts that file in the cover letter where
# patches/cover-letter.txt has a line "@REPORT@" ("@BUSY@", "@MODEL@"),
# so the figures in the cover letter are a run's, never typed.
set -eu
. "$(dirname "$0")/lib.sh"

name=${COVER:-report}
case $name in
*[!a-z]*|'') die "COVER=$name: want a lower-case name, e.g. busy" ;;
esac
md=$build/report/report.md
out=$top/patches/cover-$name.txt
[ -f "$md" ] || die "no build/report/report.md: run 'make run' first"
# A MODE=busy run has the busy table alone; a MODE=model run the
# projection and the patched kernel's tables alone; the full run has the
# rest.
if grep -q '^projection: ' "$md" && ! grep -q '^ *unpatched |' "$md"; then
	[ "$name" = model ] || die "build/report/report.md is a MODE=model run's: make cover COVER=model"
elif grep -q '^real callers on a busy machine' "$md" && ! grep -q '^mm callers' "$md"; then
	[ "$name" = busy ] || die "build/report/report.md is a MODE=busy run's: make cover COVER=busy"
elif [ "$name" = busy ]; then
	die "build/report/report.md is not a MODE=busy run's"
fi
# The tables but the projection, which has a file of its own, or the
# projection from its title to their end (sed addresses: the $ is sed's).
# shellcheck disable=SC2016
section='/^```$/,/^```$/' skip='/^projection: /,/^guest: /{/^guest: /!d;}'
if [ "$name" = model ]; then
	grep -q '^projection: ' "$md" || die "build/report/report.md has no projection: make run MODE=model"
	section='/^projection: /,/^```$/' skip=
fi
# The start-up and busy tables have covers of their own, from runs of
# them alone (MODE=busy pools more rounds than a full run has), so the
# full run's cover has neither: two tables of one thing would differ.
if [ "$name" = report ]; then
	skip="$skip;/^start-up: /,/^contention: /{/^contention: /!d;}"
	skip="$skip;/^real callers on a busy machine/,/^deferred struct page init/{/^deferred struct page init/!d;}"
fi
{
	printf 'make run of %s:\n\n' "$(date -u -r "$md" +%Y-%m-%d)"
	sed -n "$section"p "$md" | sed '/^```$/d' | sed "$skip" |
		sed 's/^/  /; s/^  $//'
} >"$out"
step "wrote patches/cover-$name.txt; 'make export' puts it in the cover letter"
