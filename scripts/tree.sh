#!/bin/sh
# make tree: build/linux = Debian's 6.12 source committed as `baseline`,
# with patches/series applied on top by `git am`.  Idempotent: when the
# tree already holds exactly the series, nothing is touched, so the
# out-of-tree object directories stay valid for incremental builds.
set -eu
. "$(dirname "$0")/lib.sh"

"$top/scripts/deps.sh"

unpack_baseline() {
	step "unpacking $source_tarball into $tree"
	rm -rf "$tree" "$build/linux-source-6.12"
	mkdir -p "$build"
	tar -C "$build" -xf "$source_tarball"
	mv "$build/linux-source-6.12" "$tree"
	# Debian's .gitignore ends with a block that ignores everything at
	# the top level; drop it or git would track nothing.
	sed -i '/^# Debian packaging/,$d' "$tree/.gitignore"
	version=$(dpkg-query -W -f='${Version}' "$source_pkg")
	step "committing the baseline (Debian $source_pkg $version)"
	git -C "$tree" init -q
	# No automatic gc: after the baseline's 90,000 loose objects, the
	# first commits of the series started one in the background, which
	# took a CPU from make test's first stage for a minute (checkpatch:
	# 84 to 97 s instead of 40).  A scratch tree has no need to be packed.
	git -C "$tree" config gc.auto 0
	git -C "$tree" add -A
	# Fixed identity and date: the same source gives the same baseline.
	GIT_AUTHOR_NAME=Debian GIT_AUTHOR_EMAIL=debian-kernel@lists.debian.org \
	GIT_COMMITTER_NAME=Debian GIT_COMMITTER_EMAIL=debian-kernel@lists.debian.org \
	GIT_AUTHOR_DATE='2000-01-01T00:00:00Z' GIT_COMMITTER_DATE='2000-01-01T00:00:00Z' \
		git -C "$tree" commit -q -m "Linux 6.12 (Debian $source_pkg $version)"
	git -C "$tree" tag baseline
}

# One stable patch-id per line, in order, for the series in patches/.
series_ids() {
	[ -f "$top/patches/series" ] || return 0
	grep -v '^#' "$top/patches/series" | while read -r p; do
		[ -n "$p" ] && git patch-id --stable <"$top/patches/$p" | cut -d' ' -f1
	done
}

# The same for the commits on top of baseline in build/linux.
tree_ids() {
	for c in $(git -C "$tree" rev-list --reverse baseline..HEAD); do
		git -C "$tree" show "$c" | git patch-id --stable | cut -d' ' -f1
	done
}

apply_series() {
	stamp=$tree/.git/ktask-applied
	head=$(git -C "$tree" rev-parse HEAD)
	if [ "$head" != "$(git -C "$tree" rev-parse baseline)" ] &&
	   [ "$head" != "$(cat "$stamp" 2>/dev/null)" ]; then
		die "build/linux has commits that are not in patches/: run 'make export' to keep them, or 'git -C build/linux reset --hard baseline' to drop them"
	fi
	git -C "$tree" reset -q --hard baseline
	[ -f "$top/patches/series" ] || return 0
	git_identity
	grep -v '^#' "$top/patches/series" | while read -r p; do
		[ -n "$p" ] || continue
		step "applying $p"
		if ! out=$(git -C "$tree" am -q --keep-cr "$top/patches/$p" 2>&1); then
			printf '%s\n' "$out" >&2
			git -C "$tree" am --abort 2>/dev/null || true
			die "$p does not apply to $(git -C "$tree" log -1 --format=%s baseline); the hunk named above failed.
  The series was verified on $source_pkg ${verified:-?}; this host has $installed.
  Install that version if Debian still has it (apt-get install $source_pkg=${verified:-VERSION},
  then rm -rf build/linux and make tree), or rebase the series onto this one (README: Hacking on the series)"
		fi
	done
	git -C "$tree" rev-parse HEAD >"$stamp"
}

git -C "$tree" rev-parse -q --verify baseline >/dev/null 2>&1 || unpack_baseline

verified=$(sed -n 's/^Verified on Debian linux-source-6.12 \(.*\)\.$/\1/p' "$top/README.md" 2>/dev/null || true)
installed=$(dpkg-query -W -f='${Version}' "$source_pkg")
[ -z "$verified" ] || [ "$verified" = "$installed" ] ||
	step "note: the series was verified on $source_pkg $verified, this is $installed"

[ -z "$(git -C "$tree" status --porcelain --untracked-files=no)" ] ||
	die "build/linux has uncommitted changes: commit them and run 'make export', or discard them"

if [ "$(series_ids)" = "$(tree_ids)" ]; then
	step "build/linux is up to date with patches/series"
	# Remember this state as the series', so a later change of patches/
	# (git pull) may replace it.
	git -C "$tree" rev-parse HEAD >"$tree/.git/ktask-applied"
	exit 0
fi
apply_series
step "build/linux: $(git -C "$tree" rev-list --count baseline..HEAD) patches on baseline"
