# The stages of make test that boot build/kunit's kernel with guest/ as
# PID 1 (scripts/run.sh): the in-guest tests, the serial boot against
# them, the memoryless-node boot.  Source it after checks.sh.
# shellcheck shell=sh

# The guest of the in-guest tests: 2 NUMA nodes of 2 vCPUs, so that
# deferred struct page init has a helper on each node, and room for two
# 1 GiB pages.
guest_env="VCPUS=4 NODES=2 MEM=8G REPEAT=1"

# tally_results LINES: print each "ok|FAIL NAME ..." line of LINES,
# indented, and count it; sets ok and bad to this call's counts.
tally_results() {
	printf '%s\n' "$1" | sed -n 's/^\(ok\|FAIL\) /    \1 /p'
	ok=$(printf '%s\n' "$1" | grep -c '^ok ' || true)
	bad=$(printf '%s\n' "$1" | grep -c '^FAIL ' || true)
	passed=$((passed + ok))
	failed=$((failed + bad))
}

# count_guest_results NAME LOG RC OUT: print and count the "ktask-test:
# ok|FAIL NAME ..." lines of the console LOG of a boot whose run.sh
# exited with RC, its output in OUT; fail once if it did not finish.
count_guest_results() {
	results=$(sed -n 's/.*ktask-test: //p' "$2" 2>/dev/null | tr -d '\r')
	tally_results "$results"
	if [ "$3" -ne 0 ] || ! printf '%s\n' "$results" | grep -q '^done'; then
		fail "$1: the tests did not finish (exit $3; build/${4#"$build"/}, build/${2#"$build"/})"
		tail -n 5 "$4" | indent
		tail -n 30 "$2" 2>/dev/null | indent
	fi
}

# Boot the KUnit kernel with guest/ in test mode (scripts/run.sh); count
# its "ktask-test: ok|FAIL NAME ..." lines, and want its "done".
run_guest_tests() {
	log=$build/run/test-meminfo-console.log
	step "guest: build/kunit's kernel in test mode (log: build/${log#"$build"/})"
	rc=0
	rm -f "$log"
	watched guest "$log" "" 'ktask-test: (ok|FAIL) ' \
		env $guest_env TIMEOUT="$(stage_limit 1800)" MODE=test,meminfo \
		"$top/scripts/run.sh" >"$build/guest-test.log" 2>&1 || rc=$?
	count_guest_results guest "$log" "$rc" "$build/guest-test.log"
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
	env $guest_env TIMEOUT="$(stage_limit 600)" MODE=meminfo APPEND=ktask.max_threads=1 \
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

# Boot-time gigantic pages asked for on a node of CPUs only come from
# another node's memory and are listed under the node asked for: boot with
# node 1 memoryless and one 1 GiB page on each node, and want both in the
# pool, as 6.12 gathers them.  The vCPUs are SMT pairs, 2 cores per node:
# deferred init counts CPUs, not cores, and wants the 4 threads of node 0;
# fallocate() from node 1 under each memory policy must bind its helpers
# as ktask_mem_node() says and put every page on node 0, where the serial
# code puts it (placement.c).
run_guest_memless() {
	log=$build/run/memless-console.log
	step "guest: a memoryless node 1, hugepages=0:1,1:1 of 1 GiB, 2 SMT threads per core (log: build/run/${log##*/})"
	rc=0
	rm -f "$log"
	watched "guest (memoryless node)" "$log" "" 'ktask-test: (ok|FAIL) ' \
		env VCPUS=8 NODES=2 SMT=2 MEM=6G MEMLESS=1 REPEAT=1 TIMEOUT="$(stage_limit 900)" \
		MODE=meminfo,placement CONSOLE=memless-console.log HUGEPAGES_1G=0:1,1:1 \
		"$top/scripts/run.sh" >"$build/guest-memless.log" 2>&1 || rc=$?
	pool=$(sed -n 's/.*ktask-meminfo: 1G pool \([0-9-]*\) pages.*/\1/p' "$log" 2>/dev/null | tail -1)
	if [ "$rc" -eq 0 ] && [ "$pool" = 2 ]; then
		pass
		printf '    ok memless: 2 of 2 pages of 1 GiB in the pool\n'
	else
		fail "guest (memoryless node): ${pool:-no} pages of 1 GiB in the pool, want 2 (exit $rc$(limit_note "$rc"))"
		grep -a 'HugeTLB' "$log" 2>/dev/null | indent
	fi
	threads=$(sed -n 's/.*ktask-klog: deferred_init_threads=\([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -1)
	if [ "${threads:-0}" -eq 4 ]; then
		pass
		printf '    ok memless: deferred init used 4 threads on 2 cores of 2 SMT threads\n'
	else
		fail "guest (memoryless node): deferred init used ${threads:-no} threads on 2 cores of 2 SMT threads, want 4"
	fi
	tally_results "$(sed -n 's/.*ktask-test: \(\(ok\|FAIL\) falloc_placement\) /\1 (memless) /p' \
		"$log" 2>/dev/null | tr -d '\r')"
	# One line per policy of placement.c's policies_memless.
	[ "$((ok + bad))" -eq 7 ] ||
		fail "guest (memoryless node): $((ok + bad)) fallocate placement results, want 7"
	check_splats "guest (memoryless node): kernel reports" "$log"
}

# make gauntlet: the kernel's long mm selftests (scripts/run.sh:
# kselftests_long) on the KUnit kernel, one check each.  No 1 GiB pool:
# each 1 GiB case of cow and thuge-gen would write a GiB at TCG's 0.1 GB/s.
run_guest_kselftests() {
	log=$build/run/kselftest-console.log
	step "guest: the kernel's mm selftests (log: build/${log#"$build"/})"
	rc=0
	rm -f "$log"
	watched kselftest "$log" "" 'ktask-test: (ok|FAIL) ' \
		env $guest_env TIMEOUT="$(stage_limit 3600)" MODE=kselftest HUGEPAGES_1G=0 \
		"$top/scripts/run.sh" >"$build/guest-kselftest.log" 2>&1 || rc=$?
	count_guest_results kselftest "$log" "$rc" "$build/guest-kselftest.log"
	# Each selftest and the kernel log check, or some did not run.
	want=$(($(printf '%s\n' $kselftests_long | grep -c .) + 1))
	got=$(printf '%s\n' "$results" | grep -c '^\(ok\|FAIL\) ' || true)
	[ "$got" -eq "$want" ] ||
		fail "kselftest: $got results, want $want (each of: $(echo $kselftests_long), kernel_log)"
	check_splats "guest (kselftest): kernel reports" "$log"
}

# make gauntlet: the selftests that fail on 6.12 as it is (lib.sh:
# kselftests_compare) on make run's two kernels, which run.sh builds if
# it must; one check each: the same end on both.
run_kselftest_compare() {
	out=$build/guest-kselftest-compare.log
	step "guest: selftests against unpatched 6.12 (log: build/${out#"$build"/})"
	rc=0
	rm -f "$build"/run/kselftest-compare-*.log
	watched kselftest-compare "$out" "$build/run" '' \
		env TIMEOUT="$(stage_limit 1800)" MODE=kselftest-compare \
		"$top/scripts/run.sh" >"$out" 2>&1 || rc=$?
	tally_results "$(sed -n 's/^    \(\(ok\|FAIL\) \)/\1/p' "$out")"
	# A line per selftest, and the kernel log of each kernel.
	want=$(($(printf '%s\n' $kselftests_compare | grep -c .) + 2))
	[ "$((ok + bad))" -eq "$want" ] || {
		fail "kselftest-compare: $((ok + bad)) results, want $want (exit $rc; build/${out#"$build"/})"
		tail -n 20 "$out" | indent
	}
	for k in patched unpatched; do
		check_splats "guest (kselftest-compare, $k): kernel reports" \
			"$build/run/kselftest-compare-$k.log"
	done
}
