# The guest's initramfs: guest/ built static as PID 1, and the kernel's
# mm selftests a mode needs.  Source it from run.sh after its settings:
# it reads guest, out, tree, kernel, mode, test_kernel, scale and
# compare.
# shellcheck shell=sh

# Build the selftests (lib.sh: kselftests, kselftests_long in MODE=
# kselftest, kselftests_compare in MODE=kselftest-compare) static from
# the tree into $guest/kselftest; the long ones
# against the tree's own UAPI headers (userfaultfd's are newer than the
# host's) and with the libraries their Makefile probes for, recorded by
# its check_config.sh.  Print their initramfs entries.
build_kselftests() {
	ks=$tree/tools/testing/selftests/mm
	list=$kselftests
	case $mode in
	kselftest) list=$kselftests_long ;;
	kselftest-compare)
		list=
		for t in $kselftests_compare; do
			list="$list ${t%%=*}"
		done
		;;
	esac
	# The long ones need the tree's UAPI headers and local_config.h.
	hdr=$out/headers
	libs=
	if [ "$list" = "$kselftests_long" ]; then
		mkdir -p "$hdr"
		kmake "$tree" "$hdr" headers >&2
		(cd "$hdr" && TMPDIR=$hdr sh "$ks/check_config.sh" gcc) >&2
		libs=$(sed -n 's/^IOURING_EXTRA_LIBS = //p' "$hdr/local_config.mk")
	fi
	mkdir -p "$guest/kselftest"
	echo "dir /kselftest 0755 0 0"
	for t in $list; do
		extra_src= extra_libs=
		case $t in
		cow) extra_src=thp_settings.c ;;
		migration) extra_src=thp_settings.c extra_libs=-lnuma ;;
		uffd-unit-tests) extra_src=uffd-common.c ;;
		esac
		# From the selftests' directory with relative names, as their
		# Makefile builds them: gup_longterm makes its temporary file
		# next to __FILE__, which must be a path the guest has.
		# shellcheck disable=SC2086 # $extra_* and $libs: 0 or more words
		(cd "$ks" && gcc -static -O2 -I.. -I"$hdr" -isystem "$hdr/usr/include" \
			-isystem "$tree/tools/include/uapi" \
			-o "$guest/kselftest/$t" "$t.c" vm_util.c $extra_src \
			$libs $extra_libs -lpthread -lrt -lm) >&2 ||
			die "cannot build the selftest $t"
		echo "file /kselftest/$t $guest/kselftest/$t 0755 0 0"
	done
}

# PID 1 and an uncompressed initramfs holding it, /dev/console, the
# port of its KTAP results (/dev/ttyS1, guest/ktap.c) and, for make test,
# the kernel's mm selftests; packed by the gen_init_cpio of the kernel's
# own build (usr/, as CONFIG_BLK_DEV_INITRD builds it).
build_initramfs() {
	step "building guest/ and the initramfs"
	mkdir -p "$guest"
	gcc -static -O2 -Wall -Wextra -Wno-unused-parameter -Werror \
		-o "$guest/init" "$top"/guest/*.c
	cpio_tool=${kernel%/arch/x86/boot/bzImage}/usr/gen_init_cpio
	[ -x "$cpio_tool" ] || die "no $cpio_tool: the kernel's build makes it"
	cat >"$guest/initramfs.list" <<-EOF
	dir /dev 0755 0 0
	nod /dev/console 0600 0 0 c 5 1
	nod /dev/ttyS1 0600 0 0 c 4 65
	dir /proc 0755 0 0
	dir /sys 0755 0 0
	dir /tmp 1777 0 0
	file /init $guest/init 0755 0 0
	EOF
	[ -z "$test_kernel$scale$compare" ] ||
		build_kselftests >>"$guest/initramfs.list"
	"$cpio_tool" "$guest/initramfs.list" >"$guest/initramfs.cpio"
}
