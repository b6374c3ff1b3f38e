#!/bin/sh
# Print the QEMU accelerator arguments for this machine: "-accel kvm" if
# KVM runs a guest here, else "-accel tcg,thread=multi".  /dev/kvm existing
# proves nothing (on some hosts KVM opens but runs no kernel), so a probe
# boots scripts/accel-probe.S with KVM and looks for its message.
#
# The answer is cached in build/accel: 'rm build/accel' probes again.
# ACCEL=kvm, ACCEL=tcg or ACCEL="-accel ..." overrides both.
set -eu
. "$(dirname "$0")/lib.sh"

kvm="-accel kvm"
tcg="-accel tcg,thread=multi"
cache=$build/accel

# Boot the probe with KVM; succeed iff its message reaches the serial port.
probe_kvm() {
	[ -c /dev/kvm ] && [ -w /dev/kvm ] || return 1
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	if ! gcc -c -o "$dir/probe.o" "$top/scripts/accel-probe.S" ||
	   ! ld -Ttext 0x7c00 --oformat binary -o "$dir/probe.img" "$dir/probe.o"; then
		die "cannot assemble scripts/accel-probe.S: run scripts/deps.sh"
	fi
	# shellcheck disable=SC2086 # $kvm is several words
	timeout 10 qemu-system-x86_64 $kvm -nodefaults -nographic -monitor none \
		-serial stdio -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-drive format=raw,file="$dir/probe.img" </dev/null >"$dir/out" 2>&1 || true
	grep -q 'accel-probe: long mode ok' "$dir/out"
}

case ${ACCEL:-} in
kvm)	echo "$kvm"; exit 0 ;;
tcg)	echo "$tcg"; exit 0 ;;
?*)	echo "$ACCEL"; exit 0 ;;
esac

if [ ! -s "$cache" ]; then
	step "probing whether KVM runs a guest here (cached in build/accel)" >&2
	mkdir -p "$build"
	if probe_kvm; then
		echo "$kvm" >"$cache"
	else
		echo "$tcg" >"$cache"
	fi
fi
cat "$cache"
