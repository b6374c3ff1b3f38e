#!/bin/sh
# make matrix (and a stage of make test): the objects the series changes
# build without a warning in every kernel configuration a user may have,
# not only in the one make test boots.
#
# Each configuration is allnoconfig + configs/guest.config and run.config
# (every caller of the series on) + configs/matrix.config (its KUnit
# suite and padata's user, so that every file the series changes is
# built), with one change from the list below.  They are built one after the other in one object
# directory, build/matrix, so that a configuration rebuilds only what it
# changes and ccache has the rest.  The objects are those of the .c files
# the series changes (build/linux against baseline) that the configuration
# builds, as its Makefiles say; the others (fs/hugetlbfs/inode.o with
# HUGETLBFS=n) are named as skipped.  Object level keeps it cheap; a link
# error is make bisect's.
#
# Each configuration names the objects it must not build (SMP=n has no
# padata): one more or one fewer fails, so that an object the series
# drops from the build, or a change of Kconfig, cannot pass as "skipped".
#
# Prints one line per configuration, "ok" or "FAIL" with its first
# errors, then "N passed, N failed"; exits non-zero on a failure.
# MATRIX="NAME ..." builds only the named configurations.
set -eu
. "$(dirname "$0")/lib.sh"
machine_lock "make matrix"

dir=$build/matrix
passed=0
failed=0

# NAME, the Kconfig lines that make it ("|" between lines, an option off
# is "X=n", "-" for none) and the objects of the series it does not build
# ("|" between them, "-" for none).
configurations='
default		-				-
KTASK=n		KTASK=n				-
NUMA=n		NUMA=n				-
SMP=n		SMP=n				kernel/padata.o
PREEMPT=y	PREEMPT_NONE=n|PREEMPT=y	-
PREEMPT_RT=y	EXPERT=y|PREEMPT_NONE=n|PREEMPT_RT=y	-
HUGETLBFS=n	HUGETLBFS=n			fs/hugetlbfs/inode.o|mm/hugetlb.o
CGROUPS=n	CGROUPS=n			-
VFIO=n		VFIO=n				drivers/vfio/vfio_iommu_type1.o|drivers/vfio/vfio_iommu_type1_test.o
TRACING=n	FTRACE=n|TRACEPOINTS=n		lib/ktask_bench.o
DEFERRED_INIT=n	DEFERRED_STRUCT_PAGE_INIT=n	-
'

kmake() {
	locked make -s -C "$tree" O="$dir" ARCH=x86_64 CC="$kcc" "$@" 2>&1
}

# fragment LINES: the "|"-separated X=y / X=n lines as a Kconfig fragment.
fragment() {
	printf '%s\n' "$1" | tr '|' '\n' | sed -n \
		-e 's/^\([A-Z0-9_]*\)=n$/# CONFIG_\1 is not set/p' \
		-e 's/^\([A-Z0-9_]*=.*\)$/CONFIG_\1/p'
}

# configure LINES: write build/matrix/.config (and the build's auto.conf);
# print what did not stick.
# allnoconfig is the same for every configuration: made once a run.
configure() {
	mkdir -p "$dir"
	if [ -f "$dir/allno.config" ]; then
		cp "$dir/allno.config" "$dir/.config"
	else
		kmake allnoconfig >/dev/null
		cp "$dir/.config" "$dir/allno.config"
	fi
	fragment "$1" >"$dir/variant.config"
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$dir" "$dir/.config" \
		"$top/configs/guest.config" "$top/configs/run.config" \
		"$top/configs/matrix.config" \
		"$dir/variant.config" >/dev/null
	# syncconfig, not olddefconfig: the same .config (each new symbol
	# its default, its prompt at the end of input), and auto.conf with
	# it, which the build would otherwise make in a second pass over
	# every Kconfig file.  A default that is no valid value stops it at
	# the end of input, naming the symbol.
	if ! kmake syncconfig </dev/null >"$dir/syncconfig.log"; then
		grep -v -e '^\*' -e 'Error in reading' -e '^$' \
			"$dir/syncconfig.log" | tail -n 10
		return 1
	fi
	printf '%s\n' "$1" | tr '|' '\n' | while IFS='=' read -r opt val; do
		[ -n "$opt" ] || continue
		case $val in
		n) ! grep -q "^CONFIG_$opt=" "$dir/.config" || echo "CONFIG_$opt=n" ;;
		*) grep -qx "CONFIG_$opt=$val" "$dir/.config" || echo "CONFIG_$opt=$val" ;;
		esac
	done
}

# kbuild_lists DIR: what DIR's Makefile builds in build/matrix/.config:
# its obj-y, obj-m and lib-y objects and subdirectories, and the parts of
# its composite objects.  (make of a single object builds it whether the
# configuration has it or not, so kbuild cannot be asked by building.)
kbuild_lists() {
	make -s --no-print-directory -f - srctree="$tree" 2>/dev/null <<EOF
.DEFAULT_GOAL := matrix-lists
matrix-lists: ;
include $dir/.config
src := $1
obj := $1
include $tree/$1/Makefile
all-objs := \$(obj-y) \$(obj-m) \$(lib-y)
\$(info \$(all-objs) \$(foreach o,\$(all-objs),\$(\$(o:.o=-objs)) \$(\$(o:.o=-y)) \$(\$(o:.o=-m))))
EOF
}

# configured OBJ: whether this configuration builds OBJ: its directory's
# Makefile lists it, and each directory up to the top level is listed in
# its parent's.
configured() {
	c_dir=${1%/*}
	c_name=${1##*/}
	while :; do
		case " $(kbuild_lists "$c_dir") " in
		*" $c_name "*) ;;
		*) return 1 ;;
		esac
		case $c_dir in
		*/*) c_name=${c_dir##*/}/ c_dir=${c_dir%/*} ;;
		*) return 0 ;;
		esac
	done
}

# build_one NAME LINES SKIPPED: one check.
build_one() {
	name=$1
	start=$(date +%s)
	if ! unmet=$(configure "$2" 2>&1); then
		failed=$((failed + 1))
		printf 'FAIL: %s: the configuration failed\n' "$name"
		printf '%s\n' "$unmet" | tail -n 10 | sed 's/^/    | /'
		return
	fi
	if [ -n "$unmet" ]; then
		failed=$((failed + 1))
		printf 'FAIL: %s: syncconfig did not keep %s (unmet dependencies?)\n' \
			"$name" "$(echo $unmet)"
		return
	fi
	built=
	skipped=
	for f in $files; do
		o=${f%.c}.o
		rm -f "$dir/$o"
		if configured "$o"; then
			built="$built $o"
		else
			skipped="$skipped $o"
		fi
	done
	# -k: every object, though one fails.
	# shellcheck disable=SC2086 # a list of objects
	out=$(kmake -k -j2 $built) || true
	missing=
	for o in $built; do
		[ -f "$dir/$o" ] || missing="$missing $o"
	done
	problems=$(printf '%s\n' "$out" | grep -E '(error|warning):' || true)
	if [ "$(echo $skipped)" != "$(echo "$3" | tr '|' ' ')" ]; then
		failed=$((failed + 1))
		printf 'FAIL: %s: builds all of the series but%s, not all but %s\n' \
			"$name" "${skipped:- nothing}" "${3:-nothing}"
	elif [ -z "$missing" ] && [ -z "$problems" ]; then
		passed=$((passed + 1))
		printf '    ok %s: %s objects (%ss)%s\n' "$name" \
			"$(echo $built | wc -w)" $(($(date +%s) - start)) \
			"${skipped:+; not in this configuration:$skipped}"
	else
		failed=$((failed + 1))
		printf 'FAIL: %s:%s\n' "$name" "${missing:+ did not build:$missing}"
		printf '%s\n' "${problems:-$out}" | head -n 20 | sed 's/^/    | /'
	fi
}

need_tree
rm -f "$dir/allno.config"
files=$(changed_files | grep '\.c$' | sort -u)
[ -n "$files" ] || die "the series changes no .c file"
only=${MATRIX:-}

while read -r name lines skip; do
	[ -n "$name" ] || continue
	case " ${only:-$name} " in
	*" $name "*) ;;
	*) continue ;;
	esac
	step "matrix: $name"
	[ "$lines" != - ] || lines=
	[ "$skip" != - ] || skip=
	build_one "$name" "$lines" "$skip" </dev/null
done <<EOF
$configurations
EOF
printf '%s passed, %s failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
