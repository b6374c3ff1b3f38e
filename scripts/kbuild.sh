# The kernels of make run: build/run (patched) and build/run-baseline
# (unpatched), each allnoconfig plus configs/guest.config and run.config.
# Source it from run.sh; it uses kcc and top of lib.sh.
# shellcheck shell=sh

# kmake SRC OUT ARGS...: make in the kernel tree SRC, objects in OUT.
kmake() {
	src=$1 dir=$2
	shift 2
	locked make -s -C "$src" O="$dir" ARCH=x86_64 CC="$kcc" "$@"
}

# configure SRC OUT: allnoconfig + configs/guest.config + run.config.
configure() {
	step "configuring build/${2##*/}: allnoconfig + configs/guest.config + run.config"
	mkdir -p "$2"
	kmake "$1" "$2" allnoconfig >/dev/null
	"$1/scripts/kconfig/merge_config.sh" -m -O "$2" "$2/.config" \
		"$top/configs/guest.config" "$top/configs/run.config" >/dev/null
	kmake "$1" "$2" olddefconfig >/dev/null
}

# check_config OUT [SKIP]: every line of guest.config and run.config
# must be in OUT's .config, as kunit.py checks its kunitconfig: a missing
# one is an unmet dependency, not to be ignored.  Lines matching SKIP (the series' own
# options, for the unpatched kernel) are not checked.
check_config() {
	missing=
	for line in $(grep -h '^CONFIG_' "$top/configs/guest.config" "$top/configs/run.config"); do
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
