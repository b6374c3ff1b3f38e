#!/bin/sh
# Install the Debian packages the harness needs, if any is missing.
set -eu
. "$(dirname "$0")/lib.sh"

# liburing-dev: the io_uring fixed-buffer cases of the mm selftests
# gup_longterm and cow (make gauntlet) pin pages long-term through it;
# libnuma-dev: the migration selftest (make gauntlet) moves pages with it.
packages="$source_pkg qemu-system-x86 gcc make flex bison bc libelf-dev
libssl-dev libc6-dev cpio ccache python3 python3-ply python3-git perl git
xz-utils gnuplot-nox sparse liburing-dev libnuma-dev"

missing=
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

step "installing:$missing"
[ "$(id -u)" = 0 ] || die "need root to install:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
# shellcheck disable=SC2086 # word splitting is wanted
apt-get install -y -q --no-install-recommends $missing >/dev/null ||
	die "apt-get install failed for:$missing"
