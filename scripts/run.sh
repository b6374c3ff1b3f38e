#!/bin/sh
# make run: build two small kernels from one configuration (allnoconfig +
# configs/run.config): the patched series in build/run and unpatched
# Debian 6.12 (the baseline tag, checked out in build/linux-baseline) in
# build/run-baseline.  Boot them in QEMU with guest/ as PID 1 and print
# what ktask buys (scripts/report.py):
#
#   1. the patched kernel: the self-benchmark and the contention runs
#      (console.log);
#   2. both kernels, all vCPUs in one node: the mm benchmark (fallocate,
#      1 GiB first touch, memset), the patched one at each thread count set
#      through ktask.max_threads, the unpatched one serial
#      (console-mm.log, console-unpatched.log);
#   3. REPEAT rounds of boots for deferred struct page init, all in one
#      node: unpatched (padata, every vCPU of the node), patched at each
#      thread count, and both kernels again with one vCPU (deferred-*.log).
#
# make test runs the guest's tests with MODE=test,... on the KUnit kernel
# it has just built (build/kunit, booted with kunit.enable=0), which spares
# it a kernel build.
#
# Environment: VCPUS (default: host CPUs), MEM (guest memory, default 16G),
# NODES (NUMA nodes, default 2), REPEAT (runs of each case, and boots of
# each deferred init case, default 5), THREADS (comma list of thread
# counts, default 1,2,4,... up to VCPUS), TIMEOUT (seconds per boot,
# default 3600), ACCEL (see accel.sh), CPU (QEMU -cpu model, default max;
# max,la57=off for make test's boots),
# APPEND (more kernel parameters), RUN_ALLOW_MISSING=1 (warn instead of
# failing when an option of run.config is not set), MODE (what the
# patched kernel's guest runs, see guest/init.c; default
# bench,contention; "test,...", "meminfo", "faults", "falloc" and "vfio" boot
# build/kunit's kernel once, write build/run/MODE-console.log and print
# no report),
# CONSOLE (the console log's name in build/run for make test's boots,
# default MODE-console.log), MEMLESS=1 (the last node has CPUs and no memory: MEM goes to the
# others), HUGEPAGES_2M and HUGEPAGES_1G (boot-time pools; default 528 and 2,
# 320 and 2 for make test), SCALE=1 (below).
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

out=$build/run
guest=$out/guest
scale=${SCALE:-}
[ "$scale" != 0 ] || scale=
vcpus=${VCPUS:-$([ -n "$scale" ] && echo 32 || host_cpus)}
mem=${MEM:-16G}
nodes=${NODES:-$([ -n "$scale" ] && echo 4 || echo 2)}
repeat=${REPEAT:-5}
threads=${THREADS:-}
timeout=${TIMEOUT:-3600}
cpu=${CPU:-max}
extra=${APPEND:-}
mode=${MODE:-bench,contention}
log=$out/console.log
kernel=$out/arch/x86/boot/bzImage
base_out=$build/run-baseline
pages_2m=${HUGEPAGES_2M:-528}
case $mode in
test|test,*|meminfo|faults|falloc|vfio)
	# make test's boots: the KUnit kernel, not the run kernel.
	log=$out/${CONSOLE:-$(printf '%s' "$mode" | tr , -)-console.log}
	kernel=$build/kunit/arch/x86/boot/bzImage
	# Every warning on the console, where make test looks for reports
	# (quiet would hide those at KERN_WARNING, lockdep's and WARN's).
	extra="$extra kunit.enable=0 loglevel=7"
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
# Every boot: the kernel at a fixed address (nokaslr: a randomly placed
# one can take the room of a 1 GiB page), and the boot-time ktask jobs
# (deferred struct page init) traced from the start, with the global
# trace clock set up front (under TCG the kernel would switch to it late
# in boot, and that empties the trace).  The mm boots also get hugetlb
# pools.
boot_params="trace_clock=global nokaslr trace_event=ktask:ktask_job_end"
user_params=$extra
extra="$boot_params hugepagesz=2M hugepages=$pages_2m hugepagesz=1G hugepages=${HUGEPAGES_1G:-2} $user_params"

# Every boot: a q35 machine with an Intel IOMMU (interrupt remapping on,
# as QEMU requires for it; caching mode, so that the IOMMU's mappings are
# flushed to QEMU) and two edu test devices for guest/vfio.c, which reach
# all of memory (dma_mask) and sit behind the IOMMU, each in an IOMMU
# group of its own: two containers of one process.
edu="-device edu,dma_mask=0xffffffffffffffff"
machine="-M q35 -device intel-iommu,intremap=on,caching-mode=on $edu $edu"
extra="intel_iommu=on $extra"

# kmake SRC OUT ARGS...: make in the kernel tree SRC, objects in OUT.
kmake() {
	src=$1 dir=$2
	shift 2
	locked make -s -C "$src" O="$dir" ARCH=x86_64 CC="$kcc" "$@"
}

# configure SRC OUT: allnoconfig + configs/run.config.
configure() {
	step "configuring build/${2##*/}: allnoconfig + configs/run.config"
	mkdir -p "$2"
	kmake "$1" "$2" allnoconfig >/dev/null
	"$1/scripts/kconfig/merge_config.sh" -m -O "$2" "$2/.config" \
		"$top/configs/run.config" >/dev/null
	kmake "$1" "$2" olddefconfig >/dev/null
}

# check_config OUT [SKIP]: every line of run.config must be in OUT's
# .config, as kunit.py checks its kunitconfig: a missing one is an unmet
# dependency, not to be ignored.  Lines matching SKIP (the series' own
# options, for the unpatched kernel) are not checked.
check_config() {
	missing=
	for line in $(grep '^CONFIG_' "$top/configs/run.config"); do
		case $line in ${2:-no-skip}*) continue ;; esac
		grep -qx "$line" "$1/.config" || missing="$missing $line"
	done
	[ -z "$missing" ] && return 0
	if [ -n "${RUN_ALLOW_MISSING:-}" ]; then
		step "warning: not set in build/${1##*/}/.config:$missing"
		return 0
	fi
	die "not set in build/${1##*/}/.config after olddefconfig:$missing
  This is probably an unmet dependency: see 'make -C build/linux O=build/${1##*/} menuconfig' (search with /),
  or RUN_ALLOW_MISSING=1 to boot anyway"
}

# build_kernel SRC OUT
build_kernel() {
	step "building build/${2##*/} (-j2)"
	kmake "$1" "$2" -j2 bzImage
}

# The kernel's own hugetlb selftests that this guest can run (it has no
# SysV IPC, userfaultfd or hwpoison injection) in make test's time:
# hugetlb_fault_after_madv passes too but takes 3.5 minutes under TCG.
kselftests="hugepage-mmap hugetlb-madvise map_hugetlb"

# Build them static from the tree into $guest/kselftest; print their
# initramfs entries.
build_kselftests() {
	src=$tree/tools/testing/selftests/mm
	mkdir -p "$guest/kselftest"
	echo "dir /kselftest 0755 0 0"
	for t in $kselftests; do
		gcc -static -O2 -I"$src/.." -isystem "$tree/tools/include/uapi" \
			-o "$guest/kselftest/$t" "$src/$t.c" "$src/vm_util.c" \
			-lpthread -lrt >&2 || die "cannot build the selftest $t"
		echo "file /kselftest/$t $guest/kselftest/$t 0755 0 0"
	done
}

# PID 1 and an uncompressed initramfs holding it, /dev/console and, for
# make test, the kernel's hugetlb selftests.
build_initramfs() {
	step "building guest/init.c and the initramfs"
	mkdir -p "$guest"
	gcc -static -O2 -Wall -Wextra -Werror -o "$guest/init" "$top"/guest/*.c
	gcc -O2 -o "$guest/gen_init_cpio" "$tree/usr/gen_init_cpio.c"
	cat >"$guest/initramfs.list" <<-EOF
	dir /dev 0755 0 0
	nod /dev/console 0600 0 0 c 5 1
	dir /proc 0755 0 0
	dir /sys 0755 0 0
	file /init $guest/init 0755 0 0
	EOF
	[ -z "$test_kernel$scale" ] || build_kselftests >>"$guest/initramfs.list"
	"$guest/gen_init_cpio" "$guest/initramfs.list" >"$guest/initramfs.cpio"
}

# "16G" or "2048M" (or plain MiB) -> MiB.
mem_mib() {
	case $1 in
	*[Gg]) echo $((${1%[Gg]} * 1024)) ;;
	*[Mm]) echo "${1%[Mm]}" ;;
	*[!0-9]*|'') die "MEM=$1: want e.g. 16G or 2048M" ;;
	*) echo "$1" ;;
	esac
}

# One socket per node when the vCPUs split evenly: with all vCPUs in one
# socket the kernel warns that CPUs sharing a cache sit on two nodes.
smp_arg() {
	if [ $((vcpus % nodes)) -eq 0 ]; then
		echo "$vcpus,sockets=$nodes,cores=$((vcpus / nodes)),threads=1"
	else
		echo "$vcpus"
	fi
}

# -m, one preallocated RAM backend per node and the CPUs split evenly;
# with MEMLESS=1 the last node has its CPUs and no memory.
numa_args() {
	total=$(mem_mib "$mem")
	with_mem=$nodes
	[ -z "${MEMLESS:-}" ] || with_mem=$((nodes - 1))
	[ "$with_mem" -gt 0 ] || die "MEMLESS=1 needs NODES=2 or more"
	per=$((total / with_mem))
	[ "$per" -gt 0 ] || die "MEM=$mem is too small for NODES=$nodes"
	printf -- '-m %sM' $((per * with_mem))
	n=0
	while [ "$n" -lt "$nodes" ]; do
		first=$((n * vcpus / nodes))
		last=$(((n + 1) * vcpus / nodes - 1))
		cpus=
		[ "$last" -lt "$first" ] || cpus=",cpus=$first-$last"
		memdev=
		if [ "$n" -lt "$with_mem" ]; then
			printf -- ' -object memory-backend-ram,id=m%s,size=%sM,prealloc=on' "$n" "$per"
			memdev=",memdev=m$n"
		fi
		printf -- ' -numa node,nodeid=%s%s%s' "$n" "$cpus" "$memdev"
		n=$((n + 1))
	done
}

# boot KERNEL LOG MODE VCPUS NODES LABEL [APPEND...]: boot once; the
# guest's console goes to LOG, after a first line that says where the
# numbers come from (report.py reads it).
boot() {
	b_kernel=$1 b_log=$2 b_mode=$3 b_vcpus=$4 b_nodes=$5 b_label=$6
	shift 6
	accel=$("$top/scripts/accel.sh")
	# panic=-1: a panic reboots, which ends QEMU (-no-reboot), not a hang.
	append="console=ttyS0 quiet panic=-1 ktask_mode=$b_mode ktask_repeat=$repeat"
	[ -z "$threads" ] || append="$append ktask_threads=$threads"
	append="$append $extra $*"
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | tr ' ' _)
	printf 'ktask-run: host_cpu=%s host_cpus=%s accel=%s qemu_vcpus=%s qemu_mem=%s qemu_nodes=%s label=%s append=%s\n' \
		"${model:-unknown}" "$(host_cpus)" "${accel##* }" "$b_vcpus" "$mem" \
		"$b_nodes" "$b_label" "$(printf '%s' "$*" | tr ' ' ,)" >"$b_log"
	step "booting $b_label ($b_mode): $b_vcpus vCPUs, $mem in $b_nodes nodes, $accel (log: build/run/${b_log##*/})"
	# smp_arg and numa_args read these.
	vcpus=$b_vcpus nodes=$b_nodes
	# shellcheck disable=SC2046,SC2086 # the argument lists are several words
	{ rc=0; timeout "$timeout" qemu-system-x86_64 $accel -cpu "$cpu" \
		$machine -smp "$(smp_arg)" $(numa_args) -mem-prealloc \
		-bios qboot.rom -nodefaults -nographic -serial stdio -no-reboot \
		-kernel "$b_kernel" -initrd "$guest/initramfs.cpio" \
		-append "$append" </dev/null 2>&1 || rc=$?
	  echo "$rc" >"$out/qemu.rc"; } >>"$b_log"
	rc=$(cat "$out/qemu.rc")
	[ "$rc" = 0 ] || step "warning: QEMU exited with $rc$([ "$rc" = 124 ] && echo ' (timeout)')"
	grep -a 'ktask-[a-z]*: error' "$b_log" | sed 's/^/    /' || true
}

# The thread counts of the deferred init boots: THREADS, or 1, 2, 4, ...
# up to all the vCPUs.
thread_counts() {
	if [ -n "$threads" ]; then
		printf '%s\n' "$threads" | tr , ' '
		return
	fi
	t=1
	while [ "$t" -lt "$all" ]; do
		printf '%s ' "$t"
		t=$((t * 2))
	done
	echo "$all"
}

if [ -n "$test_kernel" ]; then
	[ -f "$kernel" ] || die "no $kernel: make test builds it first"
	build_initramfs
	boot "$kernel" "$log" "$mode" "$vcpus" "$nodes" test
	exit 0
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
baseline_tree
configure "$base_tree" "$base_out"
check_config "$base_out" CONFIG_KTASK
build_kernel "$base_tree" "$base_out"
base_kernel=$base_out/arch/x86/boot/bzImage
build_initramfs

all=$vcpus
boot "$kernel" "$log" "$mode" "$all" "$nodes" patched
# The mm benchmark in one node: fallocate() binds its helpers to the
# caller's node, as a task with the default memory policy allocates there.
boot "$kernel" "$out/console-mm.log" mm "$all" 1 patched
boot "$base_kernel" "$out/console-unpatched.log" mm "$all" 1 unpatched
# Deferred init in one node, which then has every vCPU, and again with
# one vCPU; no pools, so every page but the first section's is deferred.
# No tracing either: both kernels get the same command line but for
# ktask.max_threads (make test checks the threads deferred init uses).
rm -f "$out"/deferred-*.log
extra="nokaslr $user_params"
r=1
while [ "$r" -le "$repeat" ]; do
	step "deferred init boots, round $r of $repeat"
	boot "$base_kernel" "$out/deferred-unpatched-v$all-$r.log" meminfo "$all" 1 "unpatched-v$all"
	for t in $(thread_counts); do
		boot "$kernel" "$out/deferred-patched-v$all-t$t-$r.log" meminfo "$all" 1 \
			"patched-v$all-t$t" "ktask.max_threads=$t"
	done
	if [ "$all" -gt 1 ]; then
		boot "$base_kernel" "$out/deferred-unpatched-v1-$r.log" meminfo 1 1 unpatched-v1
		boot "$kernel" "$out/deferred-patched-v1-$r.log" meminfo 1 1 patched-v1
	fi
	r=$((r + 1))
done
step "results"
exec python3 "$top/scripts/report.py" "$log" "$out/console-mm.log" \
	"$out/console-unpatched.log" "$out"/deferred-*.log
