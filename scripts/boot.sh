# The QEMU machine of every boot of make run and make test, and boot(),
# which boots it once.  Source it from run.sh after its settings: it
# reads out, guest, mem, cpu, timeout, repeat, threads, extra and smt,
# boot_repeat (the guest's runs of each case, if not repeat), and vcpus
# and nodes, which boot() sets for each boot.
# shellcheck shell=sh

# Every boot: a q35 machine with an Intel IOMMU (interrupt remapping on,
# as QEMU requires for it; caching mode, so that the IOMMU's mappings are
# flushed to QEMU) and two edu test devices for guest/vfio.c, which reach
# all of memory (dma_mask) and sit behind the IOMMU, each in an IOMMU
# group of its own: two containers of one process.
edu="-device edu,dma_mask=0xffffffffffffffff"
machine="-M q35 -device intel-iommu,intremap=on,caching-mode=on $edu $edu"
extra="intel_iommu=on $extra"

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
	append="console=ttyS0 quiet panic=-1 ktask_mode=$b_mode ktask_repeat=${boot_repeat:-$repeat}"
	[ -z "$threads" ] || append="$append ktask_threads=$threads"
	append="$append $extra $*"
	model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1 | tr ' ' _)
	printf 'ktask-run: host_cpu=%s host_cpus=%s accel=%s qemu_vcpus=%s qemu_smt=%s qemu_mem=%s qemu_nodes=%s label=%s append=%s\n' \
		"${model:-unknown}" "$(host_cpus)" "${accel##* }" "$b_vcpus" "$smt" "$mem" \
		"$b_nodes" "$b_label" "$(printf '%s' "$*" | tr ' ' ,)" >"$b_log"
	step "booting $b_label ($b_mode): $b_vcpus vCPUs ($smt per core), $mem in $b_nodes nodes, $accel (log: build/run/${b_log##*/})"
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
