#!/bin/sh
# make run: build a small patched kernel (allnoconfig + configs/run.config)
# in build/run, boot it in QEMU with guest/ as PID 1, which runs the ktask
# self-benchmark and the contention runs, and print the tables
# (scripts/report.py).  make test runs the guest's tests with MODE=test, on
# the KUnit kernel it has just built (build/kunit, booted with
# kunit.enable=0), which spares it a kernel build.
#
# Environment: VCPUS (default: host CPUs), MEM (guest memory, default 16G),
# NODES (NUMA nodes, default 2), REPEAT (runs of each case, default 3),
# THREADS (comma list of thread counts, default 1,2,4,... up to VCPUS),
# TIMEOUT (seconds for the boot, default 3600), ACCEL (see accel.sh),
# CPU (QEMU -cpu model, default max), APPEND (more kernel parameters),
# RUN_ALLOW_MISSING=1 (warn instead of failing when an option of
# run.config is not set, e.g. before the series has it), MODE (what the
# guest runs, see guest/init.c; default bench,contention; "test,..." and
# "meminfo" boot build/kunit's kernel, write build/run/MODE-console.log
# and print no report), HUGEPAGES_2M and HUGEPAGES_1G (boot-time pools,
# default 320 and 2).
set -eu
. "$(dirname "$0")/lib.sh"

out=$build/run
guest=$out/guest
vcpus=${VCPUS:-$(host_cpus)}
mem=${MEM:-16G}
nodes=${NODES:-2}
repeat=${REPEAT:-3}
threads=${THREADS:-}
timeout=${TIMEOUT:-3600}
cpu=${CPU:-max}
extra=${APPEND:-}
mode=${MODE:-bench,contention}
log=$out/console.log
kernel=$out/arch/x86/boot/bzImage
# The hugetlb pools of the mm tests and benchmarks, at fixed addresses
# (nokaslr: a randomly placed kernel can take the room of a 1 GiB page);
# the boot-time ktask jobs (deferred struct page init) are traced from the
# start, with the global trace clock set up front (under TCG the kernel
# would switch to it late in boot, and that empties the trace).
mm_params="trace_clock=global nokaslr hugepagesz=2M hugepages=${HUGEPAGES_2M:-320} hugepagesz=1G hugepages=${HUGEPAGES_1G:-2} trace_event=ktask:ktask_job_end"
case $mode in
test|test,*|meminfo)
	# make test's boots: the KUnit kernel, not the run kernel.
	log=$out/$(printf '%s' "$mode" | tr , -)-console.log
	kernel=$build/kunit/arch/x86/boot/bzImage
	extra="$extra kunit.enable=0"
	test_kernel=1
	;;
*)
	test_kernel=
	;;
esac
extra="$mm_params $extra"

kmake() {
	locked make -s -C "$tree" O="$out" ARCH=x86_64 CC="$kcc" "$@"
}

configure() {
	step "configuring build/run: allnoconfig + configs/run.config"
	mkdir -p "$out"
	kmake allnoconfig >/dev/null
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" \
		"$top/configs/run.config" >/dev/null
	kmake olddefconfig >/dev/null
}

# Every line of run.config must be in .config, as kunit.py checks its
# kunitconfig: a missing one is an unmet dependency, not to be ignored.
check_config() {
	missing=
	for line in $(grep '^CONFIG_' "$top/configs/run.config"); do
		grep -qx "$line" "$out/.config" || missing="$missing $line"
	done
	[ -z "$missing" ] && return 0
	if [ -n "${RUN_ALLOW_MISSING:-}" ]; then
		step "warning: not set in build/run/.config:$missing"
		return 0
	fi
	die "not set in build/run/.config after olddefconfig:$missing
  This is probably an unmet dependency: see 'make -C build/linux O=build/run menuconfig' (search with /),
  or RUN_ALLOW_MISSING=1 to boot anyway"
}

build_kernel() {
	step "building the run kernel in build/run (-j2)"
	kmake -j2 bzImage
}

# PID 1 and an uncompressed initramfs holding only it and /dev/console.
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

# -m, one preallocated RAM backend per node and the CPUs split evenly.
numa_args() {
	total=$(mem_mib "$mem")
	per=$((total / nodes))
	[ "$per" -gt 0 ] || die "MEM=$mem is too small for NODES=$nodes"
	printf -- '-m %sM' $((per * nodes))
	n=0
	while [ "$n" -lt "$nodes" ]; do
		first=$((n * vcpus / nodes))
		last=$(((n + 1) * vcpus / nodes - 1))
		cpus=
		[ "$last" -lt "$first" ] || cpus=",cpus=$first-$last"
		printf -- ' -object memory-backend-ram,id=m%s,size=%sM,prealloc=on' "$n" "$per"
		printf -- ' -numa node,nodeid=%s%s,memdev=m%s' "$n" "$cpus" "$n"
		n=$((n + 1))
	done
}

boot() {
	accel=$("$top/scripts/accel.sh")
	# panic=-1: a panic reboots, which ends QEMU (-no-reboot), not a hang.
	append="console=ttyS0 quiet panic=-1 ktask_mode=$mode ktask_repeat=$repeat"
	[ -z "$threads" ] || append="$append ktask_threads=$threads"
	[ -z "$extra" ] || append="$append $extra"
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | tr ' ' _)
	# The first line says where the numbers come from (report.py reads it).
	printf 'ktask-run: host_cpu=%s host_cpus=%s accel=%s qemu_vcpus=%s qemu_mem=%s qemu_nodes=%s\n' \
		"${model:-unknown}" "$(host_cpus)" "${accel##* }" "$vcpus" "$mem" "$nodes" \
		>"$log"
	step "booting: $vcpus vCPUs, $mem in $nodes nodes, $accel, up to ${timeout}s (log: build/run/${log##*/})"
	# shellcheck disable=SC2046,SC2086 # the argument lists are several words
	{ rc=0; timeout "$timeout" qemu-system-x86_64 $accel -cpu "$cpu" \
		-smp "$(smp_arg)" $(numa_args) -mem-prealloc \
		-bios qboot.rom -nodefaults -nographic -serial stdio -no-reboot \
		-kernel "$kernel" -initrd "$guest/initramfs.cpio" \
		-append "$append" </dev/null 2>&1 || rc=$?
	  echo "$rc" >"$out/qemu.rc"; } | tee -a "$log"
	rc=$(cat "$out/qemu.rc")
	[ "$rc" = 0 ] || step "warning: QEMU exited with $rc$([ "$rc" = 124 ] && echo ' (timeout)')"
}

if [ -n "$test_kernel" ]; then
	[ -f "$kernel" ] || die "no $kernel: make test builds it first"
else
	sync_tree
	configure
	check_config
	build_kernel
fi
build_initramfs
boot
[ -z "$test_kernel" ] || exit 0
step "results"
exec python3 "$top/scripts/report.py" "$log"
