# The QEMU machine of every guest boot of make run and make test: its
# profiles (machine_profile), and boot(), which boots it once.  Source it
# from run.sh; boot() reads out, guest, mem, cpu, timeout, repeat,
# threads, extra, smt and memless, boot_repeat (the guest's runs of each
# case, if not repeat), and vcpus and nodes, which it sets for each boot.
# shellcheck shell=sh

# machine_profile NAME: the machine of a kind of boot, in p_vcpus,
# p_nodes, p_mem, p_smt (threads per core), p_memless (the last node has
# CPUs and no memory), p_1g (the boot-time 1 GiB pool, hugepages=) and
# p_repeat (runs of each case); run.sh's VCPUS=, NODES=, ... override
# each:
#
#   run        make run: a vCPU per host CPU, 16 GiB in 2 nodes
#   scale      make run SCALE=1: 32 vCPUs in 4 nodes
#   test       make test's guest: 4 vCPUs, 8 GiB in 2 nodes, so that
#              deferred init has a helper on each node, and room for two
#              1 GiB pages
#   kselftest  make gauntlet's long selftests: test's, no 1 GiB pool
#              (each 1 GiB case of cow and thuge-gen would write a GiB at
#              TCG's 0.1 GB/s)
#   memless    make test's memoryless node: 2 nodes of 2 cores of 2 SMT
#              threads, node 1 without memory, a 1 GiB page asked of each
machine_profile() {
	p_vcpus=$(host_cpus) p_nodes=2 p_mem=16G p_smt=1 p_memless= p_1g=2 p_repeat=5
	case $1 in
	run) ;;
	scale) p_vcpus=32 p_nodes=4 ;;
	test) p_vcpus=4 p_mem=8G p_repeat=1 ;;
	kselftest) p_vcpus=4 p_mem=8G p_repeat=1 p_1g=0 ;;
	memless) p_vcpus=8 p_smt=2 p_mem=6G p_memless=1 p_1g=0:1,1:1 p_repeat=1 ;;
	*) die "PROFILE=$1: want run, scale, test, kselftest or memless" ;;
	esac
}

# Every boot: a q35 machine with an Intel IOMMU (interrupt remapping on,
# as QEMU requires for it; caching mode, so that the IOMMU's mappings are
# flushed to QEMU) and two edu test devices for guest/vfio.c, which reach
# all of memory (dma_mask) and sit behind the IOMMU, each in an IOMMU
# group of its own: two containers of one process.  (The kernel needs
# intel_iommu=on: run.sh's extra has it, but for the deferred init boots.)
edu="-device edu,dma_mask=0xffffffffffffffff"
machine="-M q35 -device intel-iommu,intremap=on,caching-mode=on $edu $edu"

# "16G" or "2048M" (or plain MiB) -> MiB.
mem_mib() {
	case $1 in
	*[Gg]) echo $((${1%[Gg]} * 1024)) ;;
	*[Mm]) echo "${1%[Mm]}" ;;
	*[!0-9]*|'') die "MEM=$1: want e.g. 16G or 2048M" ;;
	*) echo "$1" ;;
	esac
}

# need_memory: die before any build if the host cannot give QEMU the
# guest's memory, which every boot preallocates (-mem-prealloc): QEMU
# would fail, or the OOM killer end it, only after the builds.
need_memory() {
	nm_want=$(mem_mib "$mem")
	nm_have=$(($(sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo) / 1024))
	[ "$nm_have" -ge $((nm_want + 512)) ] ||
		die "MEM=$mem: QEMU preallocates ${nm_want} MiB and 512 MiB more for itself; this host has ${nm_have} MiB available (make run MEM=8G asks for less)"
}

# One socket per node when the vCPUs split evenly: with all vCPUs in one
# socket the kernel warns that CPUs sharing a cache sit on two nodes.
# Each core has $smt threads.
smp_arg() {
	if [ $((vcpus % (nodes * smt))) -eq 0 ]; then
		echo "$vcpus,sockets=$nodes,cores=$((vcpus / nodes / smt)),threads=$smt"
	elif [ "$smt" -eq 1 ]; then
		echo "$vcpus"
	else
		die "$vcpus vCPUs do not make $nodes nodes of cores of $smt SMT threads"
	fi
}

# -m, one preallocated RAM backend per node and the CPUs split evenly;
# with memless set the last node has its CPUs and no memory.
numa_args() {
	total=$(mem_mib "$mem")
	with_mem=$nodes
	[ -z "$memless" ] || with_mem=$((nodes - 1))
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

# host_ticks: the CPU time the host has spent so far, in clock ticks
# (/proc/stat's first line): "BUSY STEAL", busy being user, nice, system,
# irq and softirq, steal the time the host's own hypervisor kept from it.
# Shell arithmetic: awk prints large sums in floating point.
host_ticks() {
	read -r _ user nice system _ _ irq softirq steal _ </proc/stat
	echo "$((user + nice + system + irq + softirq)) $steal"
}

# children_ticks: the CPU time of this shell's children that have ended
# (and of theirs that they waited for), in clock ticks: "USER SYSTEM",
# cutime and cstime of /proc/$$/stat, which a subshell reads for its
# parent.
children_ticks() {
	# shellcheck disable=SC2046 # the fields after the command's name
	set -- $(sed 's/.*) //' "/proc/$$/stat")
	shift 13
	echo "$1 $2"
}

# boot_host_line BUSY STEAL USER SYSTEM START: the console log's last
# line, what the host did during the boot that began with host_ticks,
# children_ticks and date +%s at BUSY STEAL, USER SYSTEM and START:
# QEMU's CPU time, and its part in the host kernel (page faults, its
# system calls), and the host's outside it (other processes, the host
# kernel's threads and interrupts, sampled at each tick: a tick or so
# off either way).  Under TCG a guest's every instruction slows while the
# host runs something else, so a benchmark reads it (results.py,
# report_busy.py).
boot_host_line() {
	hz=$(getconf CLK_TCK)
	# shellcheck disable=SC2046 # "BUSY STEAL" and "USER SYSTEM"
	set -- "$@" $(host_ticks) $(children_ticks) "$(date +%s)"
	qemu=$((($8 - $3) + ($9 - $4)))
	printf '\nktask-run: host_other_cpu_ms=%s host_steal_ms=%s qemu_cpu_ms=%s qemu_sys_ms=%s boot_s=%s\n' \
		$(((($6 - $1) - qemu) * 1000 / hz)) $((($7 - $2) * 1000 / hz)) \
		$((qemu * 1000 / hz)) $((($9 - $4) * 1000 / hz)) $((${10} - $5))
}

# boot KERNEL LOG MODE VCPUS NODES LABEL [APPEND...]: boot once; the
# guest's console goes to LOG, between a first line that says where the
# numbers come from and a last one that says what else the host ran
# (boot_host_line; results.py reads both), and its second serial port,
# the guest's KTAP test results, to LOG less .log plus .ktap
# (ktap_file).
boot() {
	b_kernel=$1 b_log=$2 b_mode=$3 b_vcpus=$4 b_nodes=$5 b_label=$6
	shift 6
	accel=$("$top/scripts/accel.sh")
	# panic=-1: a panic reboots, which ends QEMU (-no-reboot), not a hang.
	# no_timer_check: the IO-APIC timer check counts ticks over a TSC
	# delay, and under TCG on a loaded host a vCPU thread that is not
	# run for that long panics the boot ("timer doesn't work through
	# Interrupt-remapped IO-APIC", seen on the 8-vCPU memless boot);
	# the kernel sets it itself on KVM, VMware and Hyper-V.
	append="console=ttyS0 quiet panic=-1 no_timer_check ktask_mode=$b_mode ktask_repeat=${boot_repeat:-$repeat}"
	[ -z "$threads" ] || append="$append ktask_threads=$threads"
	append="$append $extra $*"
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | tr ' ' _)
	printf 'ktask-run: host_cpu=%s host_cpus=%s accel=%s qemu_vcpus=%s qemu_smt=%s qemu_mem=%s qemu_nodes=%s label=%s append=%s\n' \
		"${model:-unknown}" "$(host_cpus)" "${accel##* }" "$b_vcpus" "$smt" "$mem" \
		"$b_nodes" "$b_label" "$(printf '%s' "$*" | tr ' ' ,)" >"$b_log"
	b_ktap=$(ktap_file "$b_log")
	rm -f "$b_ktap"
	step "booting $b_label ($b_mode): $b_vcpus vCPUs ($smt per core), $mem in $b_nodes nodes, $accel (log: build/run/${b_log##*/})"
	# smp_arg and numa_args read these.
	vcpus=$b_vcpus nodes=$b_nodes
	b_host=$(host_ticks) b_children=$(children_ticks) b_start=$(date +%s)
	# shellcheck disable=SC2046,SC2086 # the argument lists are several words
	{ rc=0; timeout "$timeout" qemu-system-x86_64 $accel -cpu "$cpu" \
		$machine -smp "$(smp_arg)" $(numa_args) -mem-prealloc \
		-bios qboot.rom -nodefaults -nographic -serial stdio \
		-serial "file:$b_ktap" -no-reboot \
		-kernel "$b_kernel" -initrd "$guest/initramfs.cpio" \
		-append "$append" </dev/null 2>&1 || rc=$?
	  echo "$rc" >"$out/qemu.rc"; } >>"$b_log"
	rc=$(cat "$out/qemu.rc")
	# shellcheck disable=SC2086 # "BUSY STEAL" and "USER SYSTEM"
	boot_host_line $b_host $b_children "$b_start" >>"$b_log"
	[ "$rc" = 0 ] || step "warning: QEMU exited with $rc$([ "$rc" = 124 ] && echo ' (timeout)')"
	grep -a 'ktask-[a-z]*: error' "$b_log" | sed 's/^/    /' || true
}
