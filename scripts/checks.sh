# The bookkeeping of make test's stages (scripts/test.sh): checks counted
# and printed, KUnit runs, kernel reports, scripts that count their own.
# Source it after lib.sh; run_kunit uses $kunitconfig, $qemu_kunitconfig,
# $accel and $kunit_limit of the sourcing script.
# shellcheck shell=sh

passed=0
failed=0

# stage_limit SECONDS: the time limit of a stage, SECONDS, or what is left
# before $deadline (at least a minute) if that is less, so that the run
# ends with its summary before CI's own limit.
stage_limit() {
	sl_left=$((deadline - $(date +%s)))
	[ "$sl_left" -ge 60 ] || sl_left=60
	[ "$1" -le "$sl_left" ] && echo "$1" || echo "$sl_left"
}

# limit_note RC: ", time limit" if RC is the status timeout(1) gives.
limit_note() {
	case $1 in
	124 | 137) echo ', time limit' ;;
	esac
}

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

# timed NAME CMD...: run CMD, then print how long it took.
timed() {
	timed_name=$1
	shift
	timed_start=$(date +%s)
	"$@"
	printf '    (%s: %ss)\n' "$timed_name" $(($(date +%s) - timed_start))
}

# "passed failed skipped" test cases in a kunit.py --json file.
count_json() {
	python3 "$top/scripts/kunit_counts.py" "$1"
}

# failed_cases LOG: what kunit.py printed of each failed or crashed case
# (the lines since the result before it: its messages and expectations),
# the last 30 lines of each, so that a failure in CI says why without its
# console.  A failed parameterized case or suite comes with its own lines.
failed_cases() {
	fc_esc=$(printf '\033')
	sed "s/$fc_esc\[[0-9;]*m//g" "$1" | awk '
		function show(result,   i, first) {
			first = n > 30 ? n - 30 : 0
			if (first)
				print "(" first " lines before these left out)"
			for (i = first; i < n; i++)
				print kept[i % 30]
			print result
			n = 0
		}
		/\[(FAILED|CRASHED)\]/ { show($0); next }
		/\[(PASSED|SKIPPED|NO TESTS RUN)\]|^\[[0-9:]+\] =+ / { n = 0; next }
		{ kept[n % 30] = $0; n++ }' | indent
}

# run_kunit NAME BUILD_DIR COMMAND MACHINE [kunit.py options]: build and
# boot the suite (COMMAND run), or only boot it (exec), on MACHINE of
# configs/kunit-qemu.py (numa or smt), print kunit.py's summary, count
# each test case as one check.
run_kunit() {
	name=$1
	dir=$2
	command=$3
	machine=$4
	shift 4
	log=$build/kunit-$name.log
	[ "$name" != ktask ] || log=$dir.log
	json=${log%.log}.json
	step "kunit ($name): $command build/${dir##*/} (log: build/${log##*/})"
	# A failed build must not leave the last run's results to be read.
	rm -f "$json" "$dir/test.log" "${log%.log}-console.log"
	rc=0
	# -u: kunit.py's lines reach the log (and the heartbeat) as they come.
	(cd "$tree" && watched "kunit ($name)" "$log" "$dir" '\[(PASSED|FAILED|SKIPPED)\]' \
		locked env KTASK_KUNIT_MACHINE="$machine" KTASK_QEMU_ACCEL="$accel" \
		timeout -k 30 "$(stage_limit "$kunit_limit")" python3 -u tools/testing/kunit/kunit.py "$command" \
		--qemu_config="$top/configs/kunit-qemu.py" --build_dir="$dir" --make_options "CC=$kcc" \
		--kunitconfig="$kunitconfig" --kunitconfig="$top/configs/guest.config" \
		--kunitconfig="$qemu_kunitconfig" \
		--timeout 600 --json="$json" "$@" >"$log" 2>&1) || rc=$?
	# kunit.py boots the kernel only once it has built it.
	kernel_built=
	! grep -q 'Starting KUnit Kernel' "$log" || kernel_built=1
	if [ -z "$kernel_built" ] && [ "$command" = run ]; then
		fail "kunit ($name): the kernel did not build (exit $rc$(limit_note "$rc"); build/${log##*/})"
		tail -n 40 "$log" | indent
		return 0
	fi
	summary=$(sed -n 's/.*\(Testing complete\..*\)/\1/p' "$log" |
		sed 's/\x1b\[[0-9;]*m//g' | tail -1)
	# The raw console, kept per run (the next run in $dir overwrites it).
	[ ! -f "$dir/test.log" ] || cp "$dir/test.log" "${log%.log}-console.log"
	# A case that looks more than once at what a moment decides logs
	# "missed:" for each look that went wrong (lib/test_ktask.c), which
	# kunit.py shows only if the case fails.
	missed='?'
	[ ! -f "${log%.log}-console.log" ] ||
		missed=$(grep -a -c '^ *# [a-z0-9_]*: missed: ' "${log%.log}-console.log" || true)
	printf '    kunit (%s): %s; looks missed: %s\n' "$name" \
		"${summary:-no summary: kunit.py did not finish}" "$missed"
	# shellcheck disable=SC2046 # three numbers
	set -- $(count_json "$json")
	passed=$((passed + $1))
	failed=$((failed + $2))
	# A failed case says why; kunit.py stopped or dead (no results, or
	# none failed) shows its last lines.
	if [ ! -f "$json" ]; then
		printf '    kunit (%s): kunit.py exited with %s%s, no results\n' \
			"$name" "$rc" "$(limit_note "$rc")"
		tail -n 40 "$log" | indent
	elif [ "$2" -gt 0 ]; then
		failed_cases "$log"
	elif [ "$rc" -ne 0 ] || [ $(($1 + $2 + $3)) -eq 0 ]; then
		fail "kunit ($name): kunit.py exited with $rc$(limit_note "$rc") after $(($1 + $2 + $3)) tests"
		tail -n 40 "$log" | indent
	fi
}

# count_ktap NAME KTAP: the in-guest tests' results (guest/ktap.c), read
# by kunit.py parse, as KUnit's are: each test one check.  A skipped
# test fails (make test's kernel and guest have what every test needs).
# A test of a plan without its result (the guest died, or the boot's time
# limit) is a crashed test, which kunit.py counts; if it found no failed
# test and still failed or saw errors (no KTAP at all, a result past a
# plan), one check fails.
count_ktap() {
	ck_json=${2%.ktap}.json
	rm -f "$ck_json"
	ck_rc=0
	(cd "$tree" && python3 tools/testing/kunit/kunit.py parse \
		--json="$ck_json" "$2") >"${2%.ktap}-parse.log" 2>&1 || ck_rc=$?
	ck_summary=$(sed -n 's/.*\(Testing complete\..*\)/\1/p' "${2%.ktap}-parse.log" |
		sed 's/\x1b\[[0-9;]*m//g' | tail -1)
	ck_retries=$(grep -a -c '# retry: ' "$2" 2>/dev/null || true)
	printf '    %s: %s; runs again: %s (guest/sys.c: retry_until)\n' \
		"$1" "${ck_summary:-kunit.py parse did not finish}" "${ck_retries:-0}"
	grep -a '^    \(not \)\?ok ' "$2" 2>/dev/null | tr -d '\r' | cut -c1-200 || true
	# Where the boot's time went (guest/ktap.c: ktap_suite_end()).
	tr -d '\r' 2>/dev/null <"$2" | awk '
		/^    # time: / { t = substr($0, 13) }
		/^(not )?ok / && t != "" { printf "    time of %s: %s\n", $NF, t; t = "" }' || true
	# shellcheck disable=SC2046 # three numbers
	set -- "$1" $(count_json "$ck_json")
	passed=$((passed + $2))
	failed=$((failed + $3 + $4))
	[ "$4" -eq 0 ] || printf 'FAIL: %s: %s tests skipped\n' "$1" "$4"
	# kunit.py's errors: a result past a suite's plan is read as the next
	# suite's and hides the suites after it from the JSON.
	ck_errors=$(printf '%s\n' "$ck_summary" | sed -n 's/.*errors: \([0-9]*\).*/\1/p')
	if [ "$3" -eq 0 ] && { [ "$ck_rc" -ne 0 ] || [ "${ck_errors:-0}" -ne 0 ]; }; then
		fail "$1: kunit.py parse exited with $ck_rc, ${ck_errors:-0} errors (build/${ck_json#"$build"/})"
		grep -a 'ERROR\|CRASHED' "${ck_json%.json}-parse.log" | head -n 20 | indent
	fi
}

# check_preempt NAME CONSOLE MODEL: the boot ran in preemption model
# MODEL (none, voluntary or full), as the kernel printed it last
# (configs/debug.config has CONFIG_PREEMPT and PREEMPT_DYNAMIC): a boot in
# another model than the one it was meant for (its preempt= lost or
# misspelt, which the kernel calls an unsupported mode and ignores, the
# config's default changed) fails, not passes unseen.
check_preempt() {
	lines=$(grep -a 'Dynamic Preempt:' "$2" | tr -d '\r') || true
	line=$(printf '%s\n' "$lines" | tail -n 1)
	case $3:$lines in
	none:*unsupported* | voluntary:*unsupported* | full:*unsupported*) ;;
	none:* | voluntary:* | full:*)
		if [ "${line##*: }" = "$3" ]; then
			pass
			return
		fi
		;;
	esac
	lines=$(printf '%s' "$lines" | tr '\n' ';')
	fail "$1: not in preemption model $3 (${lines:-no "Dynamic Preempt" line in ${2##*/}})"
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

# summed NAME LOG LIMIT SCRIPT: run SCRIPT (its output in LOG), which
# ends with "N passed, N failed"; add those, and print its ok and FAIL
# lines.
summed() {
	name=$1
	log=$2
	rc=0
	watched "$name" "$log" "" '^(    ok |FAIL: )' \
		timeout -k 30 "$(stage_limit "$3")" "$4" >"$log" 2>&1 || rc=$?
	# shellcheck disable=SC2046 # two numbers
	set -- $(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log")
	if [ $# -eq 2 ]; then
		passed=$((passed + $1))
		failed=$((failed + $2))
		printf '    %s: %s passed, %s failed\n' "$name" "$1" "$2"
		grep -e '^    ok ' "$log" || true
		sed -n '/^FAIL: /,/^[^ ]/p' "$log" | grep -v '^    ok ' || true
	else
		fail "$name: ${log##*/} did not finish (exit $rc$(limit_note "$rc"))"
		tail -n 20 "$log" | indent
	fi
}

# check_script STEP FAILURE SCRIPT ARG...: one check, that the Python
# script scripts/SCRIPT passes with ARG...; FAILURE and its output if not.
check_script() {
	cs_failure=$2
	cs_script=$top/scripts/$3
	step "$1"
	shift 3
	if out=$(python3 "$cs_script" "$@" 2>&1); then
		pass
	else
		fail "$cs_failure"
		printf '%s\n' "$out" | indent
	fi
}

# check_guest_layers: one check, that guest/ imports only downward
# (scripts/guest_layers.py).
check_guest_layers() {
	check_script "guest/: each file includes only the layers below it" \
		"guest/ imports upward or sideways" guest_layers.py "$top/guest"
}

# check_named_tests: one check, that every KUnit case and in-guest test
# ktask.rst, the cover letter and the commit messages name exists
# (scripts/named_tests.py).
check_named_tests() {
	check_script "tests named by ktask.rst, the cover letter and the commit messages exist" \
		"a claim names a test that does not exist" named_tests.py "$tree" "$top"
}

# check_mutants_apply: one check, that each mutation make mutate puts
# into kernel/ktask.c still finds its text there once
# (scripts/mutants_apply.py).
check_mutants_apply() {
	check_script "make mutate's mutations apply to kernel/ktask.c" \
		"a mutation's text is gone from kernel/ktask.c" mutants_apply.py "$tree"
}

# check_reports: one check, that the busy table compares each thread count
# with the unpatched runs at that count (scripts/report_check.py), which
# no boot of make test feeds.
check_reports() {
	check_script "make run's busy table compares each count with the unpatched kernel's at that count, paired by round" \
		"the busy table compares the wrong runs" report_check.py
}

# check_machine_lock: one check, that this make test holds the machine
# (lib.sh: machine_lock): a second make test or make run started now
# must stop at once, saying which holds it.
check_machine_lock() {
	step "a second make test or make run stops at once while this one runs"
	if out=$(env -u KTASK_MACHINE_LOCKED sh -c 8>&- \
		'. "${0%/*}/lib.sh" && machine_lock "make run"' "$top/scripts/probe" 2>&1); then
		fail "a second make run took the machine"
	elif printf '%s\n' "$out" | grep -q "busy with make $tier in $top,"; then
		pass
	else
		fail "a second make run stopped without naming make $tier"
		printf '%s\n' "$out" | indent
	fi
}

# skipped STAGE...: the stages that need build/kunit, when it did not build.
skipped() {
	for stage in "$@"; do
		fail "$stage: skipped, build/kunit did not build"
	done
}
