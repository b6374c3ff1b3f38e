#!/bin/sh
# make export: write the commits baseline..HEAD of build/linux to
# patches/NNNN-*.patch and patches/series, plus patches/0000-cover-letter.patch
# made from patches/cover-letter.txt, each line "@NAME@" of it replaced by
# patches/cover-name.txt: the tables of a make run, from make cover
# ("@REPORT@": cover-report.txt; "@BUSY@": cover-busy.txt, of a run with
# MODE=busy; "@MODEL@": cover-model.txt, the projection of MODE=model).
# Exporting unchanged commits again gives byte-identical files, so `git
# status` shows only real changes.
set -eu
. "$(dirname "$0")/lib.sh"

patches=$top/patches
cover_src=$patches/cover-letter.txt

# Pinned so the output does not depend on the user's git configuration
# or on the number of objects in the tree (which changes abbreviations).
fp_opts="-c core.abbrev=12 -c diff.algorithm=myers -c diff.renames=true"

write_placeholder_cover() {
	step "no $cover_src: writing a placeholder"
	cat >"$cover_src" <<-EOF
	ktask: placeholder subject, edit patches/cover-letter.txt

	This is a placeholder: patches/cover-letter.txt did not exist when the
	series was exported.  Its first line is the subject of the cover letter
	(without [PATCH]), then a blank line, then the body; edit it and run
	'make export' again.
	EOF
}

remove_stale() {
	rm -f "$patches"/0[0-9][0-9][0-9]-*.patch
}

# format-patch the series; the file names go to stdout.
format_series() {
	# The cover letter's From: and Date: are the committer's; take both
	# from HEAD so a re-export is identical.
	# shellcheck disable=SC2086 # fp_opts is several words
	GIT_COMMITTER_NAME=$(git -C "$tree" log -1 --format=%cn HEAD) \
	GIT_COMMITTER_EMAIL=$(git -C "$tree" log -1 --format=%ce HEAD) \
	GIT_COMMITTER_DATE=$(git -C "$tree" log -1 --format=%cI HEAD) \
	git -C "$tree" $fp_opts format-patch --zero-commit --no-signature \
		--cover-letter --no-base -o "$patches" baseline..HEAD
}

# Replace git's placeholders in the cover letter with cover-letter.txt.
fill_cover() {
	python3 - "$patches/0000-cover-letter.patch" "$cover_src" <<-'EOF'
	import sys
	path, src = sys.argv[1], sys.argv[2]
	with open(src, encoding='utf-8') as f:
	    lines = f.read().split('\n')
	subject = lines[0].strip()
	blurb = '\n'.join(lines[1:]).strip('\n')
	with open(path, encoding='utf-8') as f:
	    text = f.read()
	for old in ('*** SUBJECT HERE ***', '*** BLURB HERE ***'):
	    if old not in text:
	        sys.exit(f'error: {path} has no "{old}"; git format-patch changed?')
	# The tables of make runs, from scripts/cover.sh.
	def tables(line):
	    name = line[1:-1].lower()
	    if line != f'@{name.upper()}@' or not name.isalpha():
	        return line
	    report = src.replace('cover-letter.txt', f'cover-{name}.txt')
	    try:
	        with open(report, encoding='utf-8') as f:
	            return f.read().rstrip('\n')
	    except OSError:
	        sys.exit(f'error: {src} has {line} but there is no {report}: run make cover')
	blurb = '\n'.join(tables(l) for l in blurb.split('\n'))
	text = text.replace('*** SUBJECT HERE ***', subject, 1)
	text = text.replace('*** BLURB HERE ***', blurb, 1)
	with open(path, 'w', encoding='utf-8') as f:
	    f.write(text)
	EOF
}

need_tree
[ -z "$(git -C "$tree" status --porcelain --untracked-files=no)" ] ||
	step "note: build/linux has uncommitted changes; only commits are exported"
[ -f "$cover_src" ] || write_placeholder_cover

remove_stale
count=$(git -C "$tree" rev-list --count baseline..HEAD)
if [ "$count" -eq 0 ]; then
	step "no commits on baseline: the series is empty"
	: >"$patches/series"
else
	step "exporting $count commits from build/linux"
	files=$(format_series)
	printf '%s\n' "$files" | sed 's|.*/||' | grep -v '^0000-cover-letter\.patch$' \
		>"$patches/series"
	fill_cover
fi
git -C "$top" status --short -- patches
