#!/bin/sh
# make test (and CI), and make gauntlet: the checks of the series, one
# stage per function, each printing a line when it starts, one a minute
# while it runs (scripts/lib.sh: heartbeat) and its time when it ends.
#
# make test, the tier CI runs (at most 45 minutes from a fresh clone with
# an empty ccache on a 2-core machine, 20 with ccache warm):
#
#   checkpatch  scripts/checkpatch.pl --strict, one check per patch
#   kernel-doc  scripts/kernel-doc -none, one check per file the series adds
#   layers      guest/ includes only downward, no suite calls another
#               (scripts/guest_layers.py)
#   named tests every KUnit case and in-guest test that ktask.rst, the
#               cover letter or a commit message names exists
#               (scripts/named_tests.py)
#   mutations   each of make mutate's mutations finds its text in
#               kernel/ktask.c once (scripts/mutants_apply.py)
#   reports     make run's busy table compares each thread count with
#               the unpatched kernel's runs at that count, and pairs each
#               boot with the other kernel's of its round, on made-up
#               runs (scripts/report_check.py)
#   lock        a second make test or make run stops at once, naming
#               this one (lib.sh: machine_lock)
#   kunit       the KUnit suite on QEMU: 2 NUMA nodes of 2 vCPUs, one check
#               per test case, on a debug kernel (configs/debug.config:
#               lockdep, KASAN, KFENCE, UBSAN, debugobjects, kmemleak,
#               fault injection, hung task and soft lockup detectors)
#               built with CONFIG_PREEMPT=y (and PREEMPT_DYNAMIC, so the
#               same code as a preempt=full boot) and booted in that
#               model, so that a task can be preempted anywhere
#               preemption is on (one more check, of every boot of this
#               kernel: the console names the model it was meant for);
#               its stress case runs thousands of random jobs from 4
#               threads while a CPU goes on and off
#   boots       the same kernel booted once more for each group of cases
#               that needs a machine or kernel arguments of its own
#               (scripts/kunit-boots, which make mutate reads too): three
#               times for the case that makes lockdep report a lock its
#               thread function takes while the caller holds it (a report
#               turns lockdep off for the rest of the boot), taken in a
#               helper's chunk, in a serial job's, held by the start
#               function, each boot's console with that one report; 2
#               cores of 2 SMT threads for the *per_core cases (one thread
#               per core, caps in cores, a busy sibling), with
#               preempt=none, as the guests boot; CPU 3
#               isolated (isolcpus=3) for the isolated-CPU cases.  Each
#               must run there, not skip; in the suite's boot only they
#               may skip
#   guest       the same kernel booted again, its tests off, with guest/
#               as PID 1 in test mode: what needs a user task as the caller
#               (helpers in its process, its affinity, its cgroup's
#               cpu.max, the mm and VFIO callers), allocations failing
#               under ktask (fault injection), then a kmemleak scan; one
#               check per test of its KTAP (guest/ktap.c, read by kunit.py
#               parse: a test the guest did not get to fails, as a
#               crashed one); then a serial boot (ktask.max_threads=1)
#               that must leave the same memory, and a boot with a
#               memoryless node whose boot-time 1 GiB pages must all be
#               gathered, and CPU 7 isolated (isolcpus=7), where a user
#               task's helpers must not be allowed to run
#   w=1         the .c files the series touches, rebuilt with W=1
#   sparse      no sparse warning that baseline does not have
#               (scripts/sparse.sh, against configs/sparse-baseline.txt)
#   matrix      the objects the series changes build in every
#               configuration of scripts/matrix.sh (NUMA=n, SMP=n,
#               PREEMPT, PREEMPT_RT, CONFIG_KTASK=n, features off)
#
# make gauntlet: all of make test, then
#
#   serial      the suite with CONFIG_KTASK=n: the serial fallback of the
#               API must pass the same cases
#   kcsan       the suite on a KCSAN kernel (configs/kcsan.config): a data
#               race in ktask's code fails
#   bisect      every commit of the series builds with CONFIG_KTASK=y and
#               =n (scripts/bisect.sh)
#   scale       make run SCALE=1: the in-guest tests with 32 vCPUs in 4
#               nodes, and the serial boot against them
#   kselftest   the kernel's long mm selftests (gup_longterm, cow,
#               uffd-unit-tests, thuge-gen, the hugetlb ones: scripts/
#               lib.sh) booted on the debug kernel, one check each; and
#               those that fail on 6.12 as it is (hugetlb-read-hwpoison)
#               on make run's two kernels, each to end the same on both
#               (make kselftest: this stage alone, on the debug kernel
#               built)
#
# After each boot, scripts/splat.py reads the console: a kernel report
# (WARN, BUG, lockdep, KASAN, UBSAN, a hang, ...) is printed and fails one
# check.  A stage whose kernel did not build fails, and the stages that
# need that kernel are skipped, each a failed check, never run on an older
# kernel left in the build directory.  Every stage has a time limit.
# The last line is "N passed, N failed"; the exit status is non-zero if
# anything failed or if a KUnit run ran no test (a crash or a timeout).
set -eu
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/checks.sh"
. "$(dirname "$0")/guest-checks.sh"

# The suite of the series (KUNITCONFIG= runs another, e.g. lib/kunit)
# and the Kconfig options every run adds.
kunitconfig=${KUNITCONFIG:-lib/test_ktask.kunitconfig}
qemu_kunitconfig=$top/configs/kunit-qemu.config
debug_config=$top/configs/debug.config
kcsan_config=$top/configs/kcsan.config

series_patches() {
	[ -f "$top/patches/series" ] || return 0
	grep -v -e '^#' -e '^[[:space:]]*$' "$top/patches/series" || true
}

check_patches() {
	list=$(series_patches)
	if [ -z "$list" ]; then
		step "checkpatch: patches/series is empty, nothing to check"
		return 0
	fi
	step "checkpatch --strict on $(echo "$list" | wc -l) patches"
	# One checkpatch per CPU (a patch takes 1-3 s), each to its own file
	# with its exit status; read in the order of the series.  What did
	# not run has no status, and fails below.
	outdir=$build/checkpatch
	rm -rf "$outdir"
	mkdir -p "$outdir"
	printf '%s\n' $list | tr '\n' '\0' | (cd "$tree" && xargs -0 -P "$(host_cpus)" -I{} sh -c \
		'scripts/checkpatch.pl --strict --no-summary --terse "$1/$3" >"$2/$3.out" 2>&1; echo $? >"$2/$3.rc"' \
		sh "$top/patches" "$outdir" {}) || true
	for p in $list; do
		out=$(cat "$outdir/$p.out" 2>/dev/null) || true
		rc=$(cat "$outdir/$p.rc" 2>/dev/null) || rc=
		# 0: clean, 1: something to report; else it did not finish.
		case $rc in
		0 | 1) ;;
		*)
			fail "checkpatch $p: exit ${rc:-status missing}, it did not finish"
			printf '%s\n' "$out" | tail -n 5 | indent
			continue
			;;
		esac
		if printf '%s\n' "$out" | grep -q -E '(ERROR|WARNING|CHECK):'; then
			fail "checkpatch $p (details: cd build/linux && scripts/checkpatch.pl --strict ../../patches/$p)"
			printf '%s\n' "$out" | indent
		else
			pass
		fi
	done
}

check_kernel_doc() {
	files=$(changed_files --diff-filter=A | sort -u)
	if [ -z "$files" ]; then
		step "kernel-doc: the series adds no .c or .h file"
		return 0
	fi
	step "kernel-doc -none on $(echo "$files" | wc -l) added files"
	for f in $files; do
		out=$(cd "$tree" && scripts/kernel-doc -none "$f" 2>&1) || true
		if [ -n "$out" ]; then
			fail "kernel-doc $f"
			printf '%s\n' "$out" | indent
		else
			pass
		fi
	done
}

# Rebuild the objects of the .c files the series touches with W=1, in the
# KUnit build; files that configuration does not build are skipped.  One
# make for all of them (a make of this configuration costs 3 s before it
# compiles anything); only if that warns does each object get a make of
# its own, so that the check that fails names the object.
check_w1() {
	dir=$build/kunit
	objs=
	for f in $(changed_files | grep '\.c$' | sort -u); do
		obj=${f%.c}.o
		if [ -f "$dir/$obj" ]; then
			objs="$objs $obj"
		else
			step "W=1: $obj is not built by the KUnit configuration, skipped"
		fi
	done
	if [ -z "$objs" ]; then
		fail "W=1: the KUnit configuration builds no .c file of the series"
		return
	fi
	step "W=1:$objs"
	# shellcheck disable=SC2086 # a list of objects
	if together=$(w1_make -k -j2 $objs); then
		for obj in $objs; do
			pass
		done
		return
	fi
	alone=$failed
	for obj in $objs; do
		if out=$(w1_make "$obj"); then
			pass
		else
			fail "W=1 $obj"
			printf '%s\n' "$out" | indent
		fi
	done
	# What failed together and in no object alone (a file of prepare,
	# a make that died once) fails too.
	if [ "$failed" -eq "$alone" ]; then
		fail "W=1: the make of all objects failed, no object alone did"
		{ printf '%s\n' "$together" | grep -E 'warning:|error:|\*\*\*' ||
		  printf '%s\n' "$together" | tail -n 30; } | head -n 30 | indent
	fi
}

# w1_make ARGS: make ARGS in the KUnit build with W=1; its output, and
# failure if make failed or warned.  The objects named are removed first:
# one up to date would be no check (ccache has it and its warnings).
w1_make() {
	w1_rc=0
	for w1_obj in "$@"; do
		case $w1_obj in
		*.o) rm -f "$build/kunit/$w1_obj" ;;
		esac
	done
	w1_out=$(locked make -s -C "$tree" O="$build/kunit" ARCH=x86_64 W=1 \
		CC="$kcc" "$@" 2>&1) || w1_rc=$?
	printf '%s\n' "$w1_out"
	[ "$w1_rc" -eq 0 ] && ! printf '%s\n' "$w1_out" | grep -q 'warning:'
}

# The suite on the KCSAN kernel; a race in ktask's code fails.
run_kcsan() {
	timed "kunit, KCSAN" run_kunit kcsan "$build/kunit-kcsan" run \
		numa --jobs=2 --kunitconfig="$kcsan_config"
	[ -z "$kernel_built" ] ||
		check_splats "kunit (kcsan): data races in ktask" --kcsan \
			"$build/kunit-kcsan-console.log"
}

# expect_cases_ran NAME: the KUnit run NAME (run_kunit), of cases that
# skip in every other boot, passed or failed each of them and ran at
# least one; a skip fails.
expect_cases_ran() {
	# shellcheck disable=SC2046 # three numbers
	set -- $(count_json "$build/kunit-$1.json") "$1"
	if [ "$3" -gt 0 ] || [ "$(($1 + $2))" -eq 0 ]; then
		fail "kunit ($4): $(($1 + $2)) of $(($1 + $2 + $3)) cases ran, where each must run"
		grep -a 'SKIPPED' "$build/kunit-$4.log" 2>/dev/null | indent
	fi
}

# The suite boot's skipped cases: only those a boot of scripts/kunit-boots
# runs, which need its machine or arguments; a case that skips in the
# suite boot for any other reason (too few threads planned, a busy CPU)
# checked nothing, and fails.
check_kunit_skips() {
	rc=0
	strays=$(python3 "$top/scripts/kunit_boots.py" --skips "$build/kunit.json") || rc=$?
	case $rc in
	0) pass ;;
	1) fail "kunit (ktask): skipped, and no boot of scripts/kunit-boots runs them: $(printf '%s' "$strays" | tr '\n' ' ')" ;;
	*) fail "kunit (ktask): its skips could not be read: $strays" ;;
	esac
}

# The boots of scripts/kunit-boots: the cases that need lockdep on at
# their start, SMT, or CPU 3 isolated, each in a boot of its own; each
# case's result, then the console: no kernel report, or the one the
# table names (scripts/splat.py --expect) and no other.  The table's
# rows, read and checked by scripts/kunit_boots.py (make mutate's reader
# too); what is wrong with it, and a non-zero status, if it is wrong.
kunit_boots() {
	python3 "$top/scripts/kunit_boots.py"
}

run_kunit_boots() {
	if ! rows=$(kunit_boots); then
		fail "$rows"
		return 0
	fi
	while read -r name machine ran console cases args; do
		set --
		set -f
		for a in $args; do
			set -- "$@" --kernel_args "$a"
		done
		set +f
		run_kunit "$name" "$build/kunit" exec "$machine" "$cases" "$@" </dev/null
		[ "$ran" != must ] || expect_cases_ran "$name"
		# The kernel's model, full, unless the last preempt= says.
		model=full
		set -f
		for a in $args; do
			case $a in
			preempt=*) model=${a#preempt=} ;;
			esac
		done
		set +f
		check_preempt "kunit ($name)" "$build/kunit-$name-console.log" "$model"
		if [ "$console" = clean ]; then
			check_splats "kunit ($name): kernel reports" \
				"$build/kunit-$name-console.log"
		else
			check_splats "kunit ($name): the $console report, nothing else" \
				--expect "$console" "$build/kunit-$name-console.log"
		fi
	done <<EOF
$rows
EOF
}

# make run SCALE=1 (it builds build/run's kernel): one check, its exit
# status (scripts/scale.py judges the two boots).
run_scale() {
	log=$build/scale.log
	step "scale: make run SCALE=1 (log: build/scale.log)"
	rc=0
	watched scale "$log" "$build/run" '' \
		env SCALE=1 TIMEOUT="$(stage_limit 3600)" "$top/scripts/run.sh" >"$log" 2>&1 || rc=$?
	if [ "$rc" -eq 0 ]; then
		pass
		tail -n 5 "$log" | indent
	else
		fail "scale: make run SCALE=1 exited with $rc (build/scale.log)"
		tail -n 30 "$log" | indent
	fi
}

# The longest a KUnit stage may take: a cold debug kernel builds in about
# 15 minutes here, and kunit.py gives the run itself 600 s.
kunit_limit=3600
# The whole run's limit (TEST_LIMIT seconds, default 80 minutes for make
# test, 6 hours for make gauntlet): no stage starts with less than a
# minute left, so the summary is printed before CI's limit of 90 minutes.
# The heartbeats go to file descriptor 3, the terminal (lib.sh: watched).
exec 3>&1

machine_lock "make ${1:-test}"
sync_tree
accel=$("$top/scripts/accel.sh")
tier=${1:-test}
case $tier in
test|gauntlet|kcsan|kselftest) ;;
*) die "usage: scripts/test.sh [test|gauntlet|kcsan|kselftest]" ;;
esac
all_start=$(date +%s)
[ "$tier" = test ] && limit=4800 || limit=21600
deadline=$((all_start + ${TEST_LIMIT:-$limit}))
# make kcsan and make kselftest: that stage alone.
if [ "$tier" = kcsan ] || [ "$tier" = kselftest ]; then
	if [ "$tier" = kcsan ]; then
		run_kcsan
	else
		if [ -f "$build/kunit/arch/x86/boot/bzImage" ]; then
			timed "guest kselftests" run_guest_kselftests
		else
			fail "kselftest: no build/kunit kernel: make test builds it"
		fi
		timed "kselftests against unpatched" run_kselftest_compare
	fi
	printf '%s passed, %s failed\n' "$passed" "$failed"
	[ "$failed" -eq 0 ]
	exit
fi
timed checkpatch check_patches
timed kernel-doc check_kernel_doc
check_guest_layers
check_named_tests
check_mutants_apply
check_reports
check_machine_lock
timed "kunit, debug kernel" run_kunit ktask "$build/kunit" run numa \
	--jobs=2 --kunitconfig="$debug_config"
debug_built=$kernel_built
if [ -n "$debug_built" ]; then
	check_splats "kunit (ktask): kernel reports" "$build/kunit-console.log"
	check_preempt "kunit (ktask)" "$build/kunit-console.log" full
	check_kunit_skips
	timed "kunit, other boots" run_kunit_boots
	timed "guest tests" run_guest_tests
	timed "guest serial boot" run_guest_meminfo
	timed "guest memoryless node" run_guest_memless
	timed "W=1" check_w1
	timed sparse summed sparse "$build/sparse.log" 1200 "$top/scripts/sparse.sh"
else
	if rows=$(kunit_boots); then
		for name in $(printf '%s\n' "$rows" | awk '{ print $1 }'); do
			skipped "kunit ($name)"
		done
	else
		fail "$rows"
	fi
	skipped guest "guest serial boot" "guest memoryless node" W=1 sparse
fi
timed matrix summed matrix "$build/matrix.log" 3600 "$top/scripts/matrix.sh"
if [ "$tier" = gauntlet ]; then
	timed "kunit, CONFIG_KTASK=n" run_kunit serial "$build/kunit-serial" run \
		numa --jobs=2 --kconfig_add CONFIG_KTASK=n
	serial_built=$kernel_built
	[ -z "$serial_built" ] ||
		check_splats "kunit (serial): kernel reports" "$build/kunit-serial-console.log"
	run_kcsan
	if [ -n "$serial_built" ]; then
		timed bisect summed bisect "$build/bisect.log" 5400 "$top/scripts/bisect.sh"
	else
		fail "bisect: skipped, build/kunit-serial did not build"
	fi
	timed "scale (make run SCALE=1)" run_scale
	if [ -n "$debug_built" ]; then
		timed "guest kselftests" run_guest_kselftests
	else
		fail "kselftest: skipped, build/kunit did not build"
	fi
	timed "kselftests against unpatched" run_kselftest_compare
fi

printf '    (%s: %ss)\n' "make $tier" $(($(date +%s) - all_start))
printf '%s passed, %s failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
