# Shared helpers for the ktask harness scripts; source it, do not run it.
# shellcheck shell=sh

top=$(cd "$(dirname "$0")/.." && pwd)

# Debian's tools first, as deps.sh installs them: a python3 from pyenv or
# a venv lacks python3-ply, which checkpatch's spdxcheck.py needs.
PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH
export PATH
build=$top/build
tree=$build/linux
# The baseline tag checked out (baseline_tree), for unpatched builds.
base_tree=$build/linux-baseline

# The Debian package the series is based on, and where it puts the source.
source_pkg=linux-source-6.12
source_tarball=/usr/src/linux-source-6.12.tar.xz

# The kernel's own mm selftests (tools/testing/selftests/mm) that touch
# the paths the series changes, which run.sh builds into the guest: make
# test runs the quick ones, MODE=kselftest (make gauntlet) the rest, which
# take minutes under TCG.
kselftests="hugepage-mmap hugetlb-madvise map_hugetlb"
kselftests_long="gup_longterm cow uffd-unit-tests hugetlb_fault_after_madv
hugetlb_madv_vs_map thuge-gen hugepage-vmemmap migration"
# Those that fail on 6.12 as it is, each with the exit status it ends
# with there, which MODE=kselftest-compare runs on make run's two
# kernels: both must end with it, and with the same output.
# hugetlb-read-hwpoison=135 (SIGBUS): MADV_HWPOISON injects with
# MF_ACTION_REQUIRED (mm/madvise.c), so memory_failure() sends SIGBUS to
# the test itself for the dirty hugetlb page it poisons; upstream later
# gave the test a SIGBUS handler ("selftests/mm: hugetlb-read-hwpoison:
# add SIGBUS handler").  Its output dies with it (stdout is a pipe, so
# fully buffered): the output the guest compares is empty on both.
kselftests_compare="hugetlb-read-hwpoison=135"

# Print a progress line, so a long step never looks like a hang.
step() {
	printf '==> %s\n' "$*"
}

die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}

# Identity for commits made in build/linux: the repository's own.  Set
# through the environment: a name with spaces cannot go through "-c".
git_identity() {
	GIT_COMMITTER_NAME=$(git -C "$top" config user.name || echo ktask)
	GIT_COMMITTER_EMAIL=$(git -C "$top" config user.email || echo ktask@localhost)
	export GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL
}

# The .c and .h files the series changes (against baseline, committed or
# not: make test tests the tree as it is), with git diff options $@.
changed_files() {
	git -C "$tree" diff --name-only "$@" baseline -- '*.c' '*.h'
	git -C "$tree" ls-files --others --exclude-standard -- '*.c' '*.h'
}

# build/linux-baseline: the baseline tag of build/linux, checked out as a
# worktree; made again when build/linux was unpacked anew.
baseline_tree() {
	want=$(git -C "$tree" rev-parse baseline)
	have=$(git -C "$base_tree" rev-parse HEAD 2>/dev/null || true)
	[ "$have" != "$want" ] || return 0
	step "checking out the baseline in build/linux-baseline"
	rm -rf "$base_tree"
	git -C "$tree" worktree prune
	git -C "$tree" worktree add -q --detach "$base_tree" baseline
}

need_tree() {
	git -C "$tree" rev-parse -q --verify baseline >/dev/null 2>&1 ||
		die "no kernel tree in $tree: run 'make tree' first"
}

# Number of host CPUs, the default vCPU count.
host_cpus() {
	getconf _NPROCESSORS_ONLN
}

# Kernel builds go through ccache; with the base directory set, a fresh
# clone in another folder still hits the cache of an earlier one.
kcc="ccache gcc"
CCACHE_BASEDIR=$top
export CCACHE_BASEDIR

# ktap_file LOG: where a guest boot whose console is LOG writes its KTAP
# (scripts/boot.sh, guest/ktap.c).
ktap_file() {
	echo "${1%.log}.ktap"
}

# Run one kernel build (or KUnit run) at a time on this machine: 2 cores
# do not fit two.  Lock each command, never a whole script, so a script
# can call another without waiting on itself.
locked() {
	flock "$build/.kbuild.lock" "$@"
}

# machine_lock NAME: hold this machine for one make test, make run,
# make bisect, make mutate, make matrix or make sparse (NAME) of this
# user at a time, or die saying
# which holds it.  Two at once share the 2 cores and time out each
# other's guests (a CI clone's make test beside another made a guest
# test wait out 746 s of other CPU time), so the lock is the machine's,
# not build/'s: each clone has a build/ of its own.  The lock is on file
# descriptor 8, which the scripts one starts inherit (test.sh runs
# run.sh), and so does every process it starts: it is free again once
# the holder and whatever it left running (a QEMU) are gone.
machine_lock() {
	ml_file=${KTASK_MACHINE_LOCK:-/tmp/ktask-machine-$(id -u).lock}
	# Inherited: descriptor 8 is already this lock, held.
	if [ "${KTASK_MACHINE_LOCKED:-}" = "$ml_file" ] && flock -n 8 2>/dev/null; then
		return 0
	fi
	{ true >>"$ml_file"; } 2>/dev/null ||
		die "$1: cannot open $ml_file: set KTASK_MACHINE_LOCK to a file this user may write"
	exec 8>>"$ml_file"
	flock -n 8 ||
		die "$1: this machine is busy with $(cat "$ml_file.who" 2>/dev/null ||
			echo 'another make test or make run') ($ml_file, held by it or what it left running); two at once time out each other's guests: wait for it or stop it"
	# Who holds it, for the next one's message: written whole, then named.
	if printf '%s in %s, pid %s, since %s UTC\n' "$1" "$top" $$ \
		"$(date -u +%H:%M)" >"$ml_file.who.$$" 2>/dev/null; then
		mv -f "$ml_file.who.$$" "$ml_file.who"
	fi
	KTASK_MACHINE_LOCKED=$ml_file
	export KTASK_MACHINE_LOCKED
}

# Bring build/linux to patches/series with tree.sh, unless it holds local
# work (uncommitted changes, or commits tree.sh did not make): then use
# it as it is, which is what a person hacking on the series wants.
sync_tree() {
	"$top/scripts/deps.sh"
	if git -C "$tree" rev-parse -q --verify baseline >/dev/null 2>&1; then
		head=$(git -C "$tree" rev-parse HEAD)
		if [ -n "$(git -C "$tree" status --porcelain --untracked-files=no)" ] ||
		   { [ "$head" != "$(git -C "$tree" rev-parse baseline)" ] &&
		     [ "$head" != "$(cat "$tree/.git/ktask-applied" 2>/dev/null)" ]; }; then
			step "note: build/linux holds local work, using it as it is (not patches/)"
			return 0
		fi
	fi
	"$top/scripts/tree.sh"
}

# heartbeat NAME LOG DIR PATTERN: every minute, until killed or the
# script that started it is gone, print how long NAME has run, the objects
# built in DIR since it started and the lines of LOG that match PATTERN
# (both if given), and LOG's last line.
heartbeat() {
	hb_start=$(date +%s)
	hb_stamp=$(mktemp)
	hb_sleep=
	trap 'kill $hb_sleep 2>/dev/null; rm -f "$hb_stamp"; exit 0' TERM
	while :; do
		sleep 60 &
		hb_sleep=$!
		wait "$hb_sleep" || true
		if ! kill -0 "$$" 2>/dev/null; then
			rm -f "$hb_stamp"
			exit 0
		fi
		hb_info=
		[ -z "$3" ] || [ ! -d "$3" ] ||
			hb_info=", $(find "$3" -name '*.o' -newer "$hb_stamp" | wc -l) objects built"
		[ -z "$4" ] || hb_info="$hb_info, $(grep -a -c -E "$4" "$2" 2>/dev/null || true) done"
		hb_last=$(tail -n 1 "$2" 2>/dev/null | tr -d '\r' |
			sed 's/\x1b\[[0-9;]*m//g' | cut -c1-90)
		printf '    ... %s: %ss%s: %s\n' "$1" $(($(date +%s) - hb_start)) \
			"$hb_info" "$hb_last"
	done
}

# watched NAME LOG DIR PATTERN CMD...: run CMD with a heartbeat on file
# descriptor 3 (test.sh opens it on its standard output, so that the
# heartbeat reaches the terminal while CMD's output goes to LOG); return
# CMD's status.
watched() {
	w_name=$1 w_log=$2 w_dir=$3 w_pattern=$4
	shift 4
	heartbeat "$w_name" "$w_log" "$w_dir" "$w_pattern" >&3 &
	w_hb=$!
	w_rc=0
	"$@" || w_rc=$?
	kill "$w_hb" 2>/dev/null || true
	wait "$w_hb" 2>/dev/null || true
	return "$w_rc"
}
