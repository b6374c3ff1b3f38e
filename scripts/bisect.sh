#!/bin/sh
# make bisect (and a stage of make gauntlet): every prefix of the series
# builds, with CONFIG_KTASK=y and with CONFIG_KTASK=n.  It runs alone too:
# without make gauntlet's serial KUnit kernel, it configures one.
#
# The commits of build/linux since baseline are checked out one after the
# other in a worktree of it, build/bisect/linux, and built into
# build/bisect/y and build/bisect/n (vmlinux only) from the configuration
# of make test's serial KUnit kernel, with CONFIG_KTASK set; y also has
# CONFIG_KUNIT=n, which every other kernel of make test has on, so that
# code meant for KUnit only (VISIBLE_IF_KUNIT) is built without it too.  The builds
# are incremental: each commit rebuilds what it changes, and ccache has
# the rest from make test's own builds (same configuration, same relative
# path to the source).  Sparse is make test's (scripts/sparse.sh), and
# the other kernel configurations are scripts/matrix.sh's.
#
# Prints one line per commit and configuration, "ok" or "FAIL", then
# "N passed, N failed"; exits non-zero on a failure.
set -eu
. "$(dirname "$0")/lib.sh"

wt=$build/bisect/linux
seed=$build/kunit-serial/.config
passed=0
failed=0

machine_lock "make bisect"
need_tree
# make bisect alone: configure the serial KUnit kernel as make gauntlet
# does (scripts/test.sh: run_kunit serial), without building it.
if [ ! -f "$seed" ]; then
	step "configuring build/kunit-serial (kunit.py config), which make gauntlet builds"
	(cd "$tree" && KTASK_KUNIT_MACHINE=numa python3 tools/testing/kunit/kunit.py config \
		--qemu_config="$top/configs/kunit-qemu.py" --build_dir="$build/kunit-serial" \
		--make_options "CC=$kcc" --kunitconfig=lib/test_ktask.kunitconfig \
		--kunitconfig="$top/configs/guest.config" \
		--kunitconfig="$top/configs/kunit-qemu.config" \
		--kconfig_add CONFIG_KTASK=n) >"$build/bisect-config.log" 2>&1 ||
		die "kunit.py config failed (build/bisect-config.log)"
fi

# kmake K ARGS...: make in the worktree, into build/bisect/K.
kmake() {
	k=$1
	shift
	locked make -s -C "$wt" O="$build/bisect/$k" ARCH=x86_64 CC="$kcc" -j2 \
		"$@" 2>&1
}

# configure K: make test's serial configuration with CONFIG_KTASK=K, on
# the first build of a run and after a commit that changed a Kconfig file.
configure() {
	case "$kconfig_changed $configured" in
	" "*" $1 "*) return 0 ;;
	esac
	configured="$configured $1 "
	mkdir -p "$build/bisect/$1"
	sed '/^CONFIG_KTASK=/d; /^# CONFIG_KTASK is not set/d' "$seed" \
		>"$build/bisect/$1/.config"
	if [ "$1" = y ]; then
		sed -i '/^CONFIG_KUNIT=/d' "$build/bisect/$1/.config"
		printf 'CONFIG_KTASK=y\n# CONFIG_KUNIT is not set\n' \
			>>"$build/bisect/$1/.config"
	else
		echo '# CONFIG_KTASK is not set' >>"$build/bisect/$1/.config"
	fi
	kmake "$1" olddefconfig >/dev/null
}

# build K SUBJECT: one check.  A commit that changes no file the build
# reads (only Documentation/ or MAINTAINERS) builds as its parent did.
build_one() {
	if [ -n "$docs_only" ]; then
		passed=$((passed + 1))
		printf '    ok KTASK=%s %s (changes no built file: as its parent)\n' "$1" "$2"
		return
	fi
	start=$(date +%s)
	rc=0
	out=
	configure "$1" || rc=$?
	[ "$rc" -ne 0 ] || out=$(kmake "$1" vmlinux) || rc=$?
	if [ "$rc" -eq 0 ] && ! printf '%s\n' "$out" | grep -q 'warning:'; then
		passed=$((passed + 1))
		printf '    ok KTASK=%s %s (%ss)\n' "$1" "$2" $(($(date +%s) - start))
	else
		failed=$((failed + 1))
		printf 'FAIL: KTASK=%s %s\n' "$1" "$2"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    | /'
	fi
}

if git -C "$tree" worktree list --porcelain | grep -qx "worktree $wt"; then
	git -C "$wt" checkout -q --detach baseline
else
	# make clean removed it, or it was never made.
	rm -rf "$wt"
	git -C "$tree" worktree prune
	step "bisect: checking out baseline in build/bisect/linux"
	git -C "$tree" worktree add -q --detach "$wt" baseline
fi
commits=$(git -C "$tree" rev-list --reverse baseline..HEAD)
[ -n "$commits" ] || die "build/linux has no commit since baseline"
[ -z "$(git -C "$tree" status --porcelain --untracked-files=no)" ] ||
	step "note: build/linux has uncommitted changes; bisect builds its commits"

kconfig_changed=1
configured=

n=0
total=$(echo "$commits" | wc -l)
for c in $commits; do
	n=$((n + 1))
	subject=$(git -C "$tree" log -1 --format=%s "$c")
	step "bisect: $n/$total $subject"
	git -C "$wt" checkout -q --detach "$c"
	changed=$(git -C "$tree" diff --name-only "$c~1" "$c")
	kconfig_changed=$(printf '%s\n' "$changed" | grep 'Kconfig' || true)
	docs_only=$(printf '%s\n' "$changed" |
		grep -q -v -e '^Documentation/' -e '^MAINTAINERS$' || echo 1)
	build_one y "$n/$total $subject"
	build_one n "$n/$total $subject"
done

printf '%s passed, %s failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
