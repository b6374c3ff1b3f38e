#!/bin/sh
# make test (and CI): every check of the series, one stage per function.
#
#   checkpatch  scripts/checkpatch.pl --strict, one check per patch
#   kernel-doc  scripts/kernel-doc -none, one check per file the series adds
#   kunit       the KUnit suite on QEMU: 2 NUMA nodes of 2 vCPUs, one check
#               per test case, on a debug kernel (configs/debug.config:
#               lockdep, KASAN, KFENCE, UBSAN, debugobjects, kmemleak,
#               fault injection); its stress case runs thousands of
#               random jobs from 4 threads while a CPU goes on and off
#   smt         the same kernel booted with 2 cores of 2 SMT threads, for
#               the case that needs SMT (one thread per core)
#   guest       the same kernel booted again, its tests off, with guest/
#               as PID 1 in test mode: what needs a user task as the caller
#               (helpers in its process, its affinity, its cgroup's
#               cpu.max, the mm and VFIO callers), allocations failing
#               under ktask (fault injection), then a kmemleak scan; one
#               check per test
#   w=1         the .c files the series touches, rebuilt with W=1
#   serial      the same suite with CONFIG_KTASK=n: the serial fallback
#               of the API must pass the same cases
#   kcsan       the suite on a KCSAN kernel (configs/kcsan.config): a data
#               race in ktask's code fails
#   bisect      every commit of the series builds with CONFIG_KTASK=y and
#               =n, and sparse finds nothing new (scripts/bisect.sh)
#
# After each boot, scripts/splat.py reads the console: a kernel report
# (WARN, BUG, lockdep, KASAN, UBSAN, ...) is printed and fails one check.
# The last line is "N passed, N failed"; the exit status is non-zero if
# anything failed or if a KUnit run ran no test (a crash or a timeout).
set -eu
. "$(dirname "$0")/lib.sh"

# The suite of the series (KUNITCONFIG= runs another, e.g. lib/kunit)
# and the Kconfig options every run adds.
kunitconfig=${KUNITCONFIG:-lib/test_ktask.kunitconfig}
qemu_config=$top/configs/kunit-qemu.config
debug_config=$top/configs/debug.config
kcsan_config=$top/configs/kcsan.config

passed=0
failed=0

pass() {
	passed=$((passed + 1))
}

fail() {
	failed=$((failed + 1))
	printf 'FAIL: %s\n' "$*"
}

# Indent command output under the FAIL line it explains.
indent() {
	sed 's/^/    | /'
}

# Files the series changes (vs baseline, committed or not) matching $@.
changed_files() {
	git -C "$tree" diff --name-only "$@" baseline -- '*.c' '*.h'
	git -C "$tree" ls-files --others --exclude-standard -- '*.c' '*.h'
}

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
	for p in $list; do
		out=$(cd "$tree" && scripts/checkpatch.pl --strict --no-summary \
			--terse "$top/patches/$p" 2>&1) || true
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

# "passed failed skipped" test cases in a kunit.py --json file.
count_json() {
	python3 - "$1" <<-'EOF'
	import json, sys
	counts = {'PASS': 0, 'FAIL': 0, 'ERROR': 0, 'SKIP': 0}
	def walk(group):
	    for case in group.get('test_cases', []):
	        status = case.get('status', 'FAIL')
	        counts[status if status in counts else 'FAIL'] += 1
	        if status in ('FAIL', 'ERROR'):
	            print(f'FAIL: kunit {group.get("name")}.{case.get("name")} {status}',
	                  file=sys.stderr)
	    for sub in group.get('sub_groups', []):
	        walk(sub)
	try:
	    with open(sys.argv[1]) as f:
	        walk(json.load(f))
	except (OSError, ValueError):
	    pass
	print(counts['PASS'], counts['FAIL'] + counts['ERROR'], counts['SKIP'])
	EOF
}

# The KUnit guest: 2 NUMA nodes of 2 vCPUs.
numa_topology="-smp 4,sockets=2,cores=2,threads=1 -m 2048
	-object memory-backend-ram,id=m0,size=1G -object memory-backend-ram,id=m1,size=1G
	-numa node,nodeid=0,cpus=0-1,memdev=m0 -numa node,nodeid=1,cpus=2-3,memdev=m1"

# run_kunit NAME BUILD_DIR COMMAND QEMU_ARGS [kunit.py options]: build and
# boot the suite (COMMAND run), or only boot it (exec), print kunit.py's
# summary, count each test case as one check.
run_kunit() {
	name=$1
	dir=$2
	command=$3
	qemu_args=$4
	shift 4
	log=$build/kunit-$name.log
	[ "$name" != ktask ] || log=$dir.log
	json=${log%.log}.json
	step "kunit ($name): $command build/${dir##*/} (log: build/${log##*/})"
	# A failed build must not leave the last run's results to be read.
	rm -f "$json" "$dir/test.log" "${log%.log}-console.log"
	rc=0
	(cd "$tree" && locked python3 tools/testing/kunit/kunit.py "$command" \
		--arch=x86_64 --build_dir="$dir" --make_options "CC=$kcc" \
		--kunitconfig="$kunitconfig" --kunitconfig="$qemu_config" \
		--qemu_args "$qemu_args $accel" \
		--timeout 600 --json="$json" "$@") >"$log" 2>&1 || rc=$?
	summary=$(sed -n 's/.*\(Testing complete\..*\)/\1/p' "$log" |
		sed 's/\x1b\[[0-9;]*m//g' | tail -1)
	printf '    kunit (%s): %s\n' "$name" "${summary:-no summary: kunit.py did not finish}"
	# The raw console, kept per run (the next run in $dir overwrites it).
	[ ! -f "$dir/test.log" ] || cp "$dir/test.log" "${log%.log}-console.log"
	# shellcheck disable=SC2046 # three numbers
	set -- $(count_json "$json")
	passed=$((passed + $1))
	failed=$((failed + $2))
	if [ "$rc" -ne 0 ] || [ $(($1 + $2 + $3)) -eq 0 ]; then
		[ "$2" -gt 0 ] || fail "kunit ($name): kunit.py exited with $rc after $(($1 + $2 + $3)) tests"
		tail -n 40 "$log" | indent
	fi
}

# check_splats NAME [--kcsan] LOG...: one check, which fails if the
# kernel reported a bug in LOG (scripts/splat.py); the reports are printed.
check_splats() {
	name=$1
	shift
	rc=0
	out=$(python3 "$top/scripts/splat.py" "$@" 2>&1) || rc=$?
	printf '    %s: %s\n' "$name" "$(printf '%s\n' "$out" | tail -1 | sed 's/^splat.py: //')"
	if [ "$rc" -eq 0 ]; then
		pass
	else
		fail "$name: the kernel reported bugs"
		printf '%s\n' "$out" | head -n 300 | indent
	fi
}

# Rebuild the objects of the .c files the series touches with W=1, in the
# KUnit build; files that configuration does not build are skipped.
check_w1() {
	dir=$build/kunit
	for f in $(changed_files | grep '\.c$' | sort -u); do
		obj=${f%.c}.o
		if [ ! -f "$dir/$obj" ]; then
			step "W=1: $obj is not built by the KUnit configuration, skipped"
			continue
		fi
		step "W=1: $obj"
		rc=0
		out=$(locked make -s -C "$tree" O="$dir" ARCH=x86_64 W=1 \
			CC="$kcc" "$obj" 2>&1) || rc=$?
		if [ "$rc" -ne 0 ] || printf '%s\n' "$out" | grep -q 'warning:'; then
			fail "W=1 $obj"
			printf '%s\n' "$out" | indent
		else
			pass
		fi
	done
}

# Every prefix of the series builds with CONFIG_KTASK=y and =n, and sparse
# finds nothing new (scripts/bisect.sh): each of its checks counts here.
check_bisect() {
	log=$build/bisect.log
	step "bisect: each commit with KTASK=y and =n, then sparse (log: build/bisect.log)"
	rc=0
	"$top/scripts/bisect.sh" >"$log" 2>&1 || rc=$?
	# shellcheck disable=SC2046 # two numbers
	set -- $(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
	if [ $# -eq 2 ]; then
		passed=$((passed + $1))
		failed=$((failed + $2))
		printf '    bisect: %s passed, %s failed\n' "$1" "$2"
		grep -e '^    ok sparse' "$log" || true
		sed -n '/^FAIL: /,/^[^ ]/p' "$log" | grep -v '^    ok ' || true
	else
		fail "bisect: scripts/bisect.sh did not finish (exit $rc)"
		tail -n 20 "$log" | indent
	fi
}

# The guest of the in-guest tests: 2 NUMA nodes of 2 vCPUs, so that
# deferred struct page init has a helper on each node, and room for two
# 1 GiB pages.
guest_env="VCPUS=4 NODES=2 MEM=8G REPEAT=1"

# Boot the KUnit kernel with guest/ in test mode (scripts/run.sh); count
# its "ktask-test: ok|FAIL NAME ..." lines, and want its "done".
run_guest_tests() {
	log=$build/run/test-meminfo-console.log
	step "guest: build/kunit's kernel in test mode (log: build/${log#"$build"/})"
	rc=0
	rm -f "$log"
	env $guest_env MODE=test,meminfo "$top/scripts/run.sh" >"$build/guest-test.log" 2>&1 || rc=$?
	results=$(sed -n 's/.*ktask-test: //p' "$log" 2>/dev/null | tr -d '\r')
	printf '%s\n' "$results" | sed -n 's/^\(ok\|FAIL\) /    \1 /p'
	ok=$(printf '%s\n' "$results" | grep -c '^ok ' || true)
	bad=$(printf '%s\n' "$results" | grep -c '^FAIL ' || true)
	passed=$((passed + ok))
	failed=$((failed + bad))
	if [ "$rc" -ne 0 ] || ! printf '%s\n' "$results" | grep -q '^done'; then
		fail "guest: the tests did not finish (exit $rc; build/guest-test.log, ${log#"$build"/})"
		tail -n 5 "$build/guest-test.log" | indent
		tail -n 30 "$log" 2>/dev/null | indent
	fi
	# The tests of the debug kernel: a kernel without its options skips
	# them, which must not pass unnoticed.
	for t in fault_nth fault_random kmemleak; do
		printf '%s\n' "$results" | grep -q "^\(ok\|FAIL\) $t " ||
			fail "guest: $t did not run (configs/debug.config not in build/kunit?)"
	done
	check_splats "guest: kernel reports" "$log"
}

# Deferred struct page init must leave the same memory with helpers as
# serially: boot again with ktask.max_threads=1 and compare the totals and
# each zone's present and managed pages with those of the test boot.
run_guest_meminfo() {
	threaded=$build/run/test-meminfo-console.log
	serial=$build/run/meminfo-console.log
	step "guest: deferred init, serial boot (ktask.max_threads=1) against the test boot"
	rc=0
	rm -f "$serial"
	env $guest_env MODE=meminfo APPEND=ktask.max_threads=1 \
		"$top/scripts/run.sh" >"$build/guest-meminfo.log" 2>&1 || rc=$?
	a=$(grep -a 'ktask-meminfo:' "$threaded" 2>/dev/null | tr -d '\r')
	b=$(grep -a 'ktask-meminfo:' "$serial" 2>/dev/null | tr -d '\r')
	if [ "$rc" -eq 0 ] && [ -n "$a" ] && [ "$a" = "$b" ]; then
		pass
		printf '%s\n' "$a" | grep -c . | sed 's/^/    same /; s/$/ lines: MemTotal, zone present and managed/'
	else
		fail "guest: memory after a serial boot differs (exit $rc)"
		diff "$threaded" "$serial" | grep 'ktask-meminfo' | indent
	fi
	check_splats "guest (serial boot): kernel reports" "$serial"
}

# timed NAME CMD...: run CMD, then print how long it took.
timed() {
	timed_name=$1
	shift
	timed_start=$(date +%s)
	"$@"
	printf '    (%s: %ss)\n' "$timed_name" $(($(date +%s) - timed_start))
}

# The suite on the KCSAN kernel; a race in ktask's code fails.
run_kcsan() {
	timed "kunit, KCSAN" run_kunit kcsan "$build/kunit-kcsan" run \
		"$numa_topology" --jobs=2 --kunitconfig="$kcsan_config"
	check_splats "kunit (kcsan): data races in ktask" --kcsan \
		"$build/kunit-kcsan-console.log"
}

sync_tree
accel=$("$top/scripts/accel.sh")
# make kcsan: that stage alone.
if [ "${1:-}" = kcsan ]; then
	run_kcsan
	printf '%s passed, %s failed\n' "$passed" "$failed"
	[ "$failed" -eq 0 ]
	exit
fi
check_patches
check_kernel_doc
timed "kunit, debug kernel" run_kunit ktask "$build/kunit" run "$numa_topology" \
	--jobs=2 --kunitconfig="$debug_config"
check_splats "kunit (ktask): kernel reports" "$build/kunit-console.log"
run_kunit smt "$build/kunit" exec "-smp 4,sockets=1,cores=2,threads=2 -m 1024" \
	'ktask.ktask_test_one_thread_per_core'
check_splats "kunit (smt): kernel reports" "$build/kunit-smt-console.log"
timed "guest tests" run_guest_tests
timed "guest serial boot" run_guest_meminfo
timed "W=1" check_w1
timed "kunit, CONFIG_KTASK=n" run_kunit serial "$build/kunit-serial" run \
	"$numa_topology" --jobs=2 --kconfig_add CONFIG_KTASK=n
check_splats "kunit (serial): kernel reports" "$build/kunit-serial-console.log"
run_kcsan
timed "bisect and sparse" check_bisect

printf '%s passed, %s failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
