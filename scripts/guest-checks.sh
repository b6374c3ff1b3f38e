# The stages of make test that boot build/kunit's kernel with guest/ as
# PID 1 (scripts/run.sh): the in-guest tests, the serial boot against
# them, the memoryless-node boot.  Source it after checks.sh.
# shellcheck shell=sh

# What the heartbeat counts on a test boot's console: the copy of each
# test's KTAP result (guest/ktap.c).
ktap_done='ktask-ktap:     (not )?ok '

# boot_failed NAME RC OUT LOG: one failed check if the boot's run.sh
# exited with RC (its output in OUT, the console in LOG); the tests it
# did not get to are counted as crashed by count_ktap.
boot_failed() {
	[ "$2" -ne 0 ] || return 0
	fail "$1: the boot failed (exit $2$(limit_note "$2"); build/${3#"$build"/}, build/${4#"$build"/})"
	tail -n 5 "$3" | indent
	tail -n 30 "$4" 2>/dev/null | indent
}

# Boot the KUnit kernel with guest/ in test mode (scripts/run.sh) and
# count its KTAP results.
run_guest_tests() {
	log=$build/run/test-meminfo-console.log
	step "guest: build/kunit's kernel in test mode (log: build/${log#"$build"/})"
	rc=0
	rm -f "$log" "$(ktap_file "$log")"
	watched guest "$log" "" "$ktap_done" \
		env PROFILE=test TIMEOUT="$(stage_limit 1800)" MODE=test,meminfo \
		"$top/scripts/run.sh" >"$build/guest-test.log" 2>&1 || rc=$?
	count_ktap guest "$(ktap_file "$log")"
	boot_failed guest "$rc" "$build/guest-test.log" "$log"
	check_splats "guest: kernel reports" "$log"
	check_preempt guest "$log" none
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
	env PROFILE=test TIMEOUT="$(stage_limit 600)" MODE=meminfo APPEND=ktask.max_threads=1 \
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
	check_preempt "guest (serial boot)" "$serial" none
}

# Boot-time gigantic pages asked for on a node of CPUs only come from
# another node's memory and are listed under the node asked for: boot with
# node 1 memoryless and one 1 GiB page on each node, and want both in the
# pool, as 6.12 gathers them.  The vCPUs are SMT pairs, 2 cores per node:
# deferred init counts CPUs, not cores, and plans the 4 threads of node 0;
# fallocate() from node 1 under each memory policy must bind its helpers
# as ktask_mem_node() says and put every page on node 0, where the serial
# code puts it (placement.c).  CPU 7, the second thread of node 1's
# second core, is isolated (isolcpus=7): a user task that may run on
# every CPU must get no helper that may run there (core.c:
# isolated_helpers); node 1 still has two cores for placement's helpers.
run_guest_memless() {
	log=$build/run/memless-console.log
	step "guest: a memoryless node 1, hugepages=0:1,1:1 of 1 GiB, 2 SMT threads per core, CPU 7 isolated (log: build/run/${log##*/})"
	rc=0
	rm -f "$log" "$(ktap_file "$log")"
	watched "guest (memoryless node)" "$log" "" "$ktap_done" \
		env PROFILE=memless TIMEOUT="$(stage_limit 900)" APPEND=isolcpus=7 \
		MODE=meminfo,placement,isolated CONSOLE=memless-console.log \
		"$top/scripts/run.sh" >"$build/guest-memless.log" 2>&1 || rc=$?
	pool=$(sed -n 's/.*ktask-meminfo: 1G pool \([0-9-]*\) pages.*/\1/p' "$log" 2>/dev/null | tail -1)
	if [ "$rc" -eq 0 ] && [ "$pool" = 2 ]; then
		pass
		printf '    ok memless: 2 of 2 pages of 1 GiB in the pool\n'
	else
		fail "guest (memoryless node): ${pool:-no} pages of 1 GiB in the pool, want 2 (exit $rc$(limit_note "$rc"))"
		grep -a 'HugeTLB' "$log" 2>/dev/null | indent
	fi
	# Planned, not used: a vCPU the host did not run during the job
	# (2 host cores for 4 vCPUs) takes no chunk, and boot is not retried.
	planned=$(sed -n 's/.*ktask-klog: deferred_init_planned=\([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -1)
	threads=$(sed -n 's/.*ktask-klog: deferred_init_threads=\([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -1)
	if [ "${planned:-0}" -eq 4 ]; then
		pass
		printf '    ok memless: deferred init planned 4 threads on 2 cores of 2 SMT threads (%s ran a chunk)\n' "${threads:-no}"
	else
		fail "guest (memoryless node): deferred init planned ${planned:-no} threads on 2 cores of 2 SMT threads, want 4 (${threads:-no} ran a chunk)"
	fi
	count_ktap "guest (memoryless node)" "$(ktap_file "$log")"
	check_splats "guest (memoryless node): kernel reports" "$log"
	check_preempt "guest (memoryless node)" "$log" none
}

# make gauntlet: the kernel's long mm selftests (scripts/run.sh:
# kselftests_long) on the KUnit kernel, one check each (machine: boot.sh's
# kselftest profile, no 1 GiB pool).
run_guest_kselftests() {
	log=$build/run/kselftest-console.log
	step "guest: the kernel's mm selftests (log: build/${log#"$build"/})"
	rc=0
	rm -f "$log" "$(ktap_file "$log")"
	watched kselftest "$log" "" "$ktap_done" \
		env PROFILE=kselftest TIMEOUT="$(stage_limit 3600)" MODE=kselftest \
		"$top/scripts/run.sh" >"$build/guest-kselftest.log" 2>&1 || rc=$?
	count_ktap kselftest "$(ktap_file "$log")"
	boot_failed kselftest "$rc" "$build/guest-kselftest.log" "$log"
	check_splats "guest (kselftest): kernel reports" "$log"
	check_preempt "guest (kselftest)" "$log" none
}

# make gauntlet: the selftests that fail on 6.12 as it is (lib.sh:
# kselftests_compare) on make run's two kernels, which run.sh builds if
# it must; one check each: the same end on both.
run_kselftest_compare() {
	out=$build/guest-kselftest-compare.log
	step "guest: selftests against unpatched 6.12 (log: build/${out#"$build"/})"
	rc=0
	rm -f "$build"/run/kselftest-compare-*
	watched kselftest-compare "$out" "$build/run" '' \
		env TIMEOUT="$(stage_limit 1800)" MODE=kselftest-compare \
		"$top/scripts/run.sh" >"$out" 2>&1 || rc=$?
	# run.sh's own comparisons: an ok or FAIL line per selftest.
	sed -n 's/^    \(ok\|FAIL\) /    \1 /p' "$out"
	ok=$(grep -c '^    ok ' "$out" || true)
	bad=$(grep -c '^    FAIL ' "$out" || true)
	passed=$((passed + ok))
	failed=$((failed + bad))
	want=$(printf '%s\n' $kselftests_compare | grep -c .)
	[ "$((ok + bad))" -eq "$want" ] || {
		fail "kselftest-compare: $((ok + bad)) comparisons, want $want (exit $rc; build/${out#"$build"/})"
		tail -n 20 "$out" | indent
	}
	# Each kernel's own tests: its log has no WARNING or BUG.
	for k in patched unpatched; do
		count_ktap "kselftest-compare ($k)" \
			"$(ktap_file "$build/run/kselftest-compare-$k.log")"
	done
	for k in patched unpatched; do
		check_splats "guest (kselftest-compare, $k): kernel reports" \
			"$build/run/kselftest-compare-$k.log"
	done
}
