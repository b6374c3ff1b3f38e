#!/bin/sh
# make run: build two small kernels from one configuration (allnoconfig +
# configs/guest.config + run.config): the patched series in build/run and
# unpatched Debian 6.12 (the baseline tag, checked out in
# build/linux-baseline) in build/run-baseline.  Boot them in QEMU with
# guest/ as PID 1 and print what ktask buys (scripts/report.py):
#
#   1. the patched kernel: the self-benchmark and the contention runs
#      (console.log);
#   2. both kernels, all vCPUs in one node: the mm benchmark (fallocate,
#      1 GiB first touch, VFIO maps, memset), the patched one at each
#      thread count set through ktask.max_threads, the unpatched one
#      serial; REPEAT boots of each, in turn, a run of each case per boot
#      (console-mm-N.log, console-unpatched-N.log);
#   3. REPEAT rounds of boots for deferred struct page init, all in one
#      node: both kernels (padata and ktask both use a thread per vCPU)
#      at each vCPU count of DEFERRED_VCPUS, with one thread per core
#      and, for even counts, again with two SMT threads per core; and the
#      patched kernel at each thread count below the largest
#      (deferred-*.log).
#
# make test runs the guest's tests with MODE=test,... on the KUnit kernel
# it has just built (build/kunit, booted with kunit.enable=0), which spares
# it a kernel build.
#
# Environment: PROFILE (the machine, boot.sh: machine_profile; run,
# or scale with SCALE=1), VCPUS (default: host CPUs), MEM (guest memory,
# default 16G), NODES (NUMA nodes, default 2), REPEAT (runs of each case,
# and boots of each deferred init case, default 5), THREADS (comma list of thread
# counts, default 1,2,4,... up to VCPUS), TIMEOUT (seconds per boot,
# default 3600), DEFERRED_VCPUS (vCPU counts of the deferred init boots,
# default "1 2 4"), ACCEL (see accel.sh), CPU (QEMU -cpu model, default max;
# max,la57=off for make test's boots),
# APPEND (more kernel parameters), RUN_ALLOW_MISSING=1 (warn instead of
# failing when an option of run.config is not set), MODE (what the
# patched kernel's guest runs, see guest/init.c; default
# bench,startup,contention; "deferred": the deferred init boots alone;
# "mm": the mm boots alone; "busy": the same boots with only the busy
# callers (guest/busy_bench.c); "memmap": the same boots with only the
# pmem driver's bind (guest/mm_bench.c); "thp_move": the same boots, in
# NODES nodes, with only move_pages(2) of THPs from node 0 to node 1
# (guest/mm_bench.c); "huge_move": the same with a 1 GiB hugetlb page;
# "startup": one boot of the patched
# kernel with the start-up table alone (guest/startup.c); "model": what
# the projection (scripts/project.py) takes, one boot of the patched
# kernel in one node with the start-up table and the mm callers but the
# busy ones, then REPEAT deferred init boots of the unpatched kernel on
# 1 vCPU; "kselftest":
# the long mm selftests (build_kselftests) on the KUnit kernel;
# "kselftest-compare": the selftests that fail on 6.12 as it is
# (lib.sh: kselftests_compare) on both run kernels, which must end the
# same (compare_kselftests);
# "test,...", "meminfo", "core", "faults", "falloc", "vfio",
# "guarantees", "zone_device" and "migrate" boot build/kunit's kernel
# once, write build/run/MODE-console.log and print no report),
# CONSOLE (the console log's name in build/run for make test's boots,
# default MODE-console.log), MEMLESS=1 (the last node has CPUs and no
# memory: MEM goes to the others), SMT (threads per core, default 1),
# HUGEPAGES_2M and HUGEPAGES_1G (boot-time pools; default 528 and 2, 320
# for make test), SCALE=1 (below).
#
# SCALE=1 checks correctness and placement at scale, and measures
# nothing: the patched kernel boots with 32 vCPUs in 4 nodes (VCPUS and
# NODES change that) and runs make test's in-guest tests (deferred init
# helpers on every node, fallocate and 1 GiB pages against serial runs,
# VFIO maps, the core's tests), then boots again serially
# (ktask.max_threads=1) and must leave the same memory in every zone.
# Under TCG its times mean nothing.
set -eu
. "$(dirname "$0")/lib.sh"
. "$top/scripts/boot.sh"
. "$top/scripts/kbuild.sh"
. "$top/scripts/initramfs.sh"

machine_lock "make run"
out=$build/run
guest=$out/guest
scale=${SCALE:-}
[ "$scale" != 0 ] || scale=
machine_profile "${PROFILE:-$([ -n "$scale" ] && echo scale || echo run)}"
vcpus=${VCPUS:-$p_vcpus}
mem=${MEM:-$p_mem}
nodes=${NODES:-$p_nodes}
memless=${MEMLESS:-$p_memless}
repeat=${REPEAT:-$p_repeat}
case $repeat in
''|*[!0-9]*|0) die "REPEAT=$repeat: want a number of runs, 1 or more" ;;
esac
# The guest's runs of each case in one boot, if not REPEAT (boot.sh).
boot_repeat=
threads=${THREADS:-}
deferred_vcpus=$(printf '%s' "${DEFERRED_VCPUS:-1 2 4}" | tr , ' ')
case $deferred_vcpus in
*[!0-9\ ]*|'') die "DEFERRED_VCPUS=$deferred_vcpus: want vCPU counts, e.g. \"1 2 4\"" ;;
esac
# SMT threads per core of every boot but the deferred init ones (which
# try 1 and 2).
smt=${SMT:-$p_smt}
timeout=${TIMEOUT:-3600}
cpu=${CPU:-max}
extra=${APPEND:-}
mode=${MODE:-bench,startup,contention}
log=$out/console.log
kernel=$out/arch/x86/boot/bzImage
base_out=$build/run-baseline
pages_2m=${HUGEPAGES_2M:-528}
case $mode in
test|test,*|meminfo|meminfo,*|core|isolated|faults|falloc|vfio|guarantees|zone_device|migrate|kselftest)
	# make test's boots: the KUnit kernel, not the run kernel.
	log=$out/${CONSOLE:-$(printf '%s' "$mode" | tr , -)-console.log}
	kernel=$build/kunit/arch/x86/boot/bzImage
	# Every warning on the console, where make test looks for reports
	# (quiet would hide those at KERN_WARNING, lockdep's and WARN's).
	# The guests run in a server's preemption model, not the kernel's
	# (CONFIG_PREEMPT: configs/debug.config), unless APPEND says another.
	extra="preempt=none $extra kunit.enable=0 loglevel=7"
	pages_2m=${HUGEPAGES_2M:-320}
	# No 5-level paging for the KASAN kernel: identify_boot_cpu()
	# zeroes the boot CPU's feature bits and probes them again with
	# interrupts on, and an interrupt in that window sees LA57 off,
	# takes the LA57 direct map for a wild address and KASAN reports
	# it (seen once in CI, in the spin lock of handle_edge_irq()).
	cpu=${CPU:-max,la57=off}
	test_kernel=1
	;;
*)
	test_kernel=
	;;
esac
compare=
[ "$mode" != kselftest-compare ] || compare=1
# Every boot: the kernel at a fixed address (nokaslr: a randomly placed
# one can take the room of a 1 GiB page), and the boot-time ktask jobs
# (deferred struct page init) traced from the start, with the global
# trace clock set up front (under TCG the kernel would switch to it late
# in boot, and that empties the trace).  The mm boots also get hugetlb
# pools.  In a guest of 6 GiB or more (the pools take 3), the GiB from 5
# GiB (q35 puts the RAM past 2 GiB at 4 GiB and up: node 0's in every
# profile) is legacy persistent memory (memmap=), which the pmem driver
# maps with struct pages (guest/pmem.c).  Not at the top of node 1's RAM
# on make test's KASAN kernel: KASAN's early shadow of the direct map
# (merged across nodes) and node 0's 1 GiB page then left node 0 too
# little to defer, its first allocation took the rest (6.12's
# deferred_grow_zone()), and no deferred init job ran on node 0.
# MODE=memmap, whose guest does nothing but bind it, gets 4 GiB in a
# guest of 12 GiB or more: a GiB's struct pages take 7.5 ms on one vCPU
# under TCG, and a 2-thread job of a GiB took 4.2 to 16.7 ms.  In the
# slow ones the guest's scheduler saw nothing (sched_switch): the
# helper's idle vCPU ran it up to 7 ms after its fork, or the caller,
# never off its CPU, ran its chunks 1.5 times slower; the host's
# scheduling of the vCPU threads, which a longer job averages out.
boot_params="trace_clock=global nokaslr trace_event=ktask:ktask_job_start,ktask:ktask_job_end"
pmem_gib=1
[ "$mode" != memmap ] || [ "$(mem_mib "$mem")" -lt 12288 ] || pmem_gib=4
pmem_param=
[ "$(mem_mib "$mem")" -lt 6144 ] || pmem_param="memmap=${pmem_gib}G!5G"
user_params=$extra
extra="intel_iommu=on $boot_params $pmem_param hugepagesz=2M hugepages=$pages_2m hugepagesz=1G hugepages=${HUGEPAGES_1G:-$p_1g} $user_params"

need_memory

# The thread counts of the deferred init boots: THREADS, or 1, 2, 4, ...
# below $1 vCPUs.
thread_counts() {
	if [ -n "$threads" ]; then
		printf '%s\n' "$threads" | tr , ' '
		return
	fi
	t=1
	while [ "$t" -lt "$1" ]; do
		printf '%s ' "$t"
		t=$((t * 2))
	done
}

# compare_kselftests: boot both kernels, in one node, with the selftests
# of kselftests_compare; each must end on both with the exit status it
# is listed with, the same KTAP totals and the same output (the guest's
# "ktask-compare:" line).  An ok or FAIL line per selftest; non-zero if
# one failed.  Each boot's KTAP (kernel_log: no WARNING or BUG) is for
# make gauntlet to count.
compare_kselftests() {
	rm -f "$out"/kselftest-compare-*.log
	boot "$kernel" "$out/kselftest-compare-patched.log" kselftest-compare \
		"$vcpus" 1 patched
	boot "$base_kernel" "$out/kselftest-compare-unpatched.log" kselftest-compare \
		"$vcpus" 1 unpatched
	cmp_rc=0
	for entry in $kselftests_compare; do
		t=${entry%%=*} want="exit ${entry#*=},"
		p=$(sed -n "s/.*ktask-compare: $t: //p" "$out/kselftest-compare-patched.log" | tr -d '\r')
		u=$(sed -n "s/.*ktask-compare: $t: //p" "$out/kselftest-compare-unpatched.log" | tr -d '\r')
		if [ "${u#"$want"}" != "$u" ] && [ "$p" = "$u" ]; then
			printf '    ok %s: as on unpatched 6.12: %s\n' "$t" "$p"
		else
			printf '    FAIL %s: patched: %s; unpatched: %s; want %s...\n' \
				"$t" "${p:-no result}" "${u:-no result}" "$want"
			cmp_rc=1
		fi
	done
	return "$cmp_rc"
}

# deferred_boots VCPUS SMT ROUND: both kernels, deferred init only.
deferred_boots() {
	saved_smt=$smt smt=$2
	tag=v$1$([ "$2" = 1 ] || echo "-smt$2")
	boot "$base_kernel" "$out/deferred-unpatched-$tag-$3.log" meminfo "$1" 1 "unpatched-$tag"
	boot "$kernel" "$out/deferred-patched-$tag-$3.log" meminfo "$1" 1 "patched-$tag"
	smt=$saved_smt
}

if [ -n "$test_kernel" ]; then
	[ -f "$kernel" ] || die "no $kernel: make test builds it first"
	# No console log of an earlier boot where a failed build stops us.
	rm -f "$log"
	build_initramfs
	boot "$kernel" "$log" "$mode" "$vcpus" "$nodes" test
	# QEMU's status: 124 if the boot ran out of time (make test says so).
	exit "$(cat "$out/qemu.rc")"
fi

sync_tree
configure "$tree" "$out"
check_config "$out"
build_kernel "$tree" "$out"
if [ -n "$scale" ]; then
	build_initramfs
	step "SCALE=1: correctness and placement only; under TCG the times mean nothing"
	boot "$kernel" "$out/scale-console.log" test,meminfo "$vcpus" "$nodes" scale
	boot "$kernel" "$out/scale-serial-console.log" meminfo "$vcpus" "$nodes" \
		scale-serial ktask.max_threads=1
	exec python3 "$top/scripts/scale.py" "$out/scale-console.log" \
		"$out/scale-serial-console.log"
fi
# MODE=startup: the start-up table alone, of the patched kernel only.
if [ "$mode" = startup ]; then
	build_initramfs
	boot "$kernel" "$log" startup "$vcpus" "$nodes" patched
	step "results"
	exec python3 "$top/scripts/report.py" "$log"
fi
baseline_tree
configure "$base_tree" "$base_out"
check_config "$base_out" CONFIG_KTASK
build_kernel "$base_tree" "$base_out"
base_kernel=$base_out/arch/x86/boot/bzImage
build_initramfs
if [ -n "$compare" ]; then
	compare_kselftests
	exit
fi

all=$vcpus
logs=

# MODE=model: the projection's costs, measured in as few boots as it can,
# in logs of their own: the start-up table at 1 and 2 threads, whatever
# THREADS says; the serial deferred init boots with one thread per core.
if [ "$mode" = model ]; then
	threads=1,2
	boot "$kernel" "$out/model-console.log" startup,callers "$all" 1 patched
	extra="nokaslr $user_params" smt=1
	rm -f "$out"/model-deferred-*.log
	r=1
	while [ "$r" -le "$repeat" ]; do
		boot "$base_kernel" "$out/model-deferred-$r.log" meminfo 1 1 unpatched-v1
		r=$((r + 1))
	done
	step "results"
	python3 "$top/scripts/report.py" "$out/model-console.log" "$out"/model-deferred-*.log
	grep -q '^projection: ' "$build/report/report.md" ||
		die "make run MODE=model measured too little for the projection (see above)"
	exit
fi

# mm_boot patched|unpatched ROUND: one boot of the mm benchmark, all
# vCPUs in one node (in NODES for MODE=thp_move and huge_move, which move
# pages from node 0 to node 1), its log added to logs.  The busy table
# runs its thread counts upwards in odd rounds and downwards in even ones
# (guest/busy_bench.c: busy_order()), the same for both kernels.
mm_boot() {
	mm_order=
	[ $(($2 % 2)) = 1 ] || mm_order=ktask_order=down
	# shellcheck disable=SC2086 # $mm_order is no word or one
	if [ "$1" = patched ]; then
		mm_log=$out/console-mm-$2.log
		boot "$kernel" "$mm_log" "$mm_mode" "$all" "$mm_nodes" patched \
			$mm_order
	else
		mm_log=$out/console-unpatched-$2.log
		boot "$base_kernel" "$mm_log" "$mm_mode" "$all" "$mm_nodes" \
			unpatched $mm_order
	fi
	logs="$logs $mm_log"
}

# MODE=mm, busy, memmap, thp_move or huge_move: those boots alone, no
# other.
mm_mode=mm
mm_nodes=1
case $mode in
mm|busy|memmap) mm_mode=$mode ;;
thp_move|huge_move) mm_mode=$mode mm_nodes=$nodes ;;
esac
if [ "$mode" != deferred ]; then
	if [ "$mode" != "$mm_mode" ]; then
		boot "$kernel" "$log" "$mode" "$all" "$nodes" patched
		logs=$log
	fi
	# The mm benchmark in one node: fallocate() binds its helpers to the
	# caller's node, as a task with the default memory policy allocates
	# there.  How fast a guest writes memory differs from boot to boot
	# (memset() by 10% between two boots of make run of 2026-11-30), so
	# the kernels take turns, a run of each case per boot, the first
	# kernel of a round alternating, and each median spans REPEAT boots
	# rather than one boot's luck.
	rm -f "$out"/console-mm*.log "$out"/console-unpatched*.log
	boot_repeat=1
	r=1
	while [ "$r" -le "$repeat" ]; do
		if [ $((r % 2)) = 1 ]; then
			mm_boot patched "$r"
			mm_boot unpatched "$r"
		else
			mm_boot unpatched "$r"
			mm_boot patched "$r"
		fi
		r=$((r + 1))
	done
	boot_repeat=
fi
if [ "$mode" = "$mm_mode" ]; then
	step "results"
	# shellcheck disable=SC2086 # $logs is a list of paths without spaces
	exec python3 "$top/scripts/report.py" $logs
fi
# Deferred init in one node at each vCPU count, with and without SMT,
# and the patched kernel at each thread count of the largest; no pools,
# so every page but the first section's is deferred.  No tracing either:
# both kernels get the same command line but for ktask.max_threads (make
# test checks the jobs and threads deferred init uses).
rm -f "$out"/deferred-*.log
extra="nokaslr $user_params"
# shellcheck disable=SC2086 # a list of numbers
most=$(printf "%s\n" $deferred_vcpus | sort -n | tail -1)
r=1
while [ "$r" -le "$repeat" ]; do
	step "deferred init boots, round $r of $repeat"
	for v in $deferred_vcpus; do
		deferred_boots "$v" 1 "$r"
		[ $((v % 2)) -ne 0 ] || deferred_boots "$v" 2 "$r"
	done
	for t in $(thread_counts "$most"); do
		boot "$kernel" "$out/deferred-patched-v$most-t$t-$r.log" meminfo "$most" 1 \
			"patched-v$most-t$t" "ktask.max_threads=$t"
	done
	r=$((r + 1))
done
step "results"
# The header's machine: the mm boot's, or the deferred boot with most vCPUs.
[ -n "$logs" ] || logs=$out/deferred-patched-v$most-1.log
# shellcheck disable=SC2086 # $logs is a list of paths without spaces
exec python3 "$top/scripts/report.py" $logs "$out"/deferred-*.log
