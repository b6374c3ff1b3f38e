#!/bin/sh
# make cover: put the tables of the last `make run` (build/report/report.md)
# into patches/cover-report.txt, or with COVER=name into
# patches/cover-name.txt (COVER=busy after make run MODE=busy); `make
# export` puts that file in the cover letter where
# patches/cover-letter.txt has a line "@REPORT@" ("@BUSY@"), so the
# figures in the cover letter are a run's, never typed.
set -eu
. "$(dirname "$0")/lib.sh"

name=${COVER:-report}
case $name in
*[!a-z]*|'') die "COVER=$name: want a lower-case name, e.g. busy" ;;
esac
md=$build/report/report.md
out=$top/patches/cover-$name.txt
[ -f "$md" ] || die "no build/report/report.md: run 'make run' first"
{
	printf 'make run of %s:\n\n' "$(date -u -r "$md" +%Y-%m-%d)"
	sed -n '/^```$/,/^```$/p' "$md" | sed '1d;$d' | sed 's/^/  /; s/^  $//'
} >"$out"
step "wrote patches/cover-$name.txt; 'make export' puts it in the cover letter"
