#!/bin/sh
# deps.sh - install the Debian packages t410trace needs, only those missing.
# As root: apt-get installs them. Otherwise: prints the exact command.
# --quiet: say nothing when everything is already there.
# Also the npm package uplot (the report's charts; UPLOT_VERSION below),
# into .deps/ of the repository (no root needed, never committed; the
# build embeds it, so the binary needs nothing at run time), and Debian's
# chromium, which the report's tests open the report in (headless); npm
# from Debian where node is absent. libmicrohttpd serves the metrics
# endpoint; prometheus (the server: started by its test only), tmux
# (top's terminal in its tests), and slurm-wlm with munge (the one-node
# cluster tests/cluster/slurm.sh starts in a temporary directory: never
# the system's daemons or configuration) are for `make check`.
# --bench: also what `make bench` compares against (perf).
# --arm64=DIR: also what `make check-arm64` needs to build and run the
#   tests for aarch64 on an x86_64 host: the cross compilers, Debian's arm64
#   (multiarch) builds of the libraries, qemu-user-static registered with
#   binfmt_misc (Criterion re-executes its own binary for each test, so an
#   explicit `qemu-aarch64 t4test` is not enough), and Criterion's arm64
#   build unpacked into DIR. bookworm cannot install libcriterion3:arm64
#   next to libcriterion3:amd64: its libnanomsg5 is binNMU'd on amd64 only
#   (1.1.5+dfsg-1.1+b1 vs 1.1.5+dfsg-1.1) and multiarch needs equal
#   versions, so those three Debian packages are unpacked (dpkg-deb -x),
#   not installed; everything else is a normal multiarch install.
set -eu
PKGS="gcc make pkg-config liburing-dev libzstd-dev zstd libbpf-dev libelf-dev
zlib1g-dev libcriterion-dev bpftool clang llvm python3 python3-zstandard
libprotobuf-c-dev protobuf-c-compiler protobuf-compiler chromium libmicrohttpd-dev
prometheus tmux slurm-wlm munge"
UPLOT_VERSION=1.6.32
DEPS_DIR=$(cd "$(dirname "$0")/.." && pwd)/.deps
ARM64_PKGS="gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static
pkgconf:arm64 libc6-dev:arm64 liburing-dev:arm64 libzstd-dev:arm64
libbpf-dev:arm64 libelf-dev:arm64 zlib1g-dev:arm64 libprotobuf-c-dev:arm64
libffi8:arm64 libgit2-1.5:arm64 libmicrohttpd-dev:arm64"
ARM64_UNPACK="libcriterion3:arm64 libcriterion-dev:arm64 libnanomsg5:arm64"
BINFMT=/proc/sys/fs/binfmt_misc
quiet=0
arm64_dir=""
for arg in "$@"; do
	case "$arg" in
	--quiet) quiet=1 ;;
	--bench) PKGS="$PKGS linux-perf time" ;;
	--arm64=?*) arm64_dir=${arg#--arm64=}; PKGS="$PKGS $ARM64_PKGS" ;;
	*) echo "deps: unknown option $arg" >&2; exit 2 ;;
	esac
done
native=$(dpkg --print-architecture)
if [ -n "$arm64_dir" ] && [ "$native" = arm64 ]; then
	echo "deps: this machine is arm64: build and test natively (make check)" >&2
	exit 2
fi
root=0
[ "$(id -u)" -ne 0 ] || root=1

apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }
say() { [ $quiet -eq 1 ] || echo "deps: $*"; }

# Installed for the architecture asked (name:arch), else native or all.
have() {
	case "$1" in
	*:*) want=${1#*:} ;;
	*) want="$native|all" ;;
	esac
	dpkg-query -W -f='${Status} ${Architecture}\n' "${1%%:*}" 2>/dev/null |
		grep -Eq "ok installed ($want)\$"
}

command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"
missing=""
for p in $PKGS; do
	have "$p" || missing="$missing $p"
done

if [ -n "$missing" ]; then
	cmd="apt-get install -y --no-install-recommends$missing"
	foreign=""
	if [ -n "$arm64_dir" ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
		foreign="dpkg --add-architecture arm64 && "
	fi
	if [ $root -eq 0 ]; then
		echo "deps: missing packages:$missing" >&2
		echo "deps: run as root:  ${foreign}apt-get update && $cmd" >&2
		exit 1
	fi
	echo "deps: installing$missing"
	[ -z "$foreign" ] || dpkg --add-architecture arm64
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	apt_get update -qq
	# shellcheck disable=SC2086
	apt_get install -y -qq --no-install-recommends $missing >/dev/null
	echo "deps: done"
fi
[ -n "$missing" ] || say "all packages present"

# uPlot, the version pinned above (the stamp is its package.json)
uplot_have=$(sed -n 's/^ *"version": *"\(.*\)",*$/\1/p' \
	"$DEPS_DIR/node_modules/uplot/package.json" 2>/dev/null || true)
if [ "$uplot_have" != "$UPLOT_VERSION" ]; then
	echo "deps: npm install uplot@$UPLOT_VERSION into $DEPS_DIR"
	mkdir -p "$DEPS_DIR"
	npm install --prefix "$DEPS_DIR" --no-save --no-package-lock --no-audit --no-fund \
		--loglevel=error "uplot@$UPLOT_VERSION" >/dev/null
fi
[ -n "$arm64_dir" ] || exit 0

# qemu-aarch64 for every aarch64 ELF (the rule qemu-user-static ships for
# systemd-binfmt, which containers do not run).
if [ ! -e "$BINFMT/qemu-aarch64" ]; then
	if [ $root -eq 0 ]; then
		echo "deps: run as root:  mount -t binfmt_misc binfmt_misc $BINFMT;" \
			"cat /usr/lib/binfmt.d/qemu-aarch64.conf > $BINFMT/register" >&2
		exit 1
	fi
	[ -e "$BINFMT/register" ] || mount -t binfmt_misc binfmt_misc "$BINFMT"
	cat /usr/lib/binfmt.d/qemu-aarch64.conf > "$BINFMT/register"
	say "qemu-aarch64 registered with binfmt_misc"
fi
if ! grep -qx enabled "$BINFMT/qemu-aarch64" 2>/dev/null; then
	echo "deps: $BINFMT/qemu-aarch64 is disabled (echo 1 > it, as root)" >&2
	exit 1
fi

# Criterion for arm64, unpacked into arm64_dir (see the top). The stamp
# names the versions, so a Debian update unpacks again.
candidates() {
	# shellcheck disable=SC2086
	apt-cache policy $ARM64_UNPACK | awk '/Candidate:/ { printf "%s ", $2 }'
}
versions=$(candidates)
stamp="$arm64_dir/.unpacked"
[ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$versions" ] || exit 0
case "$versions" in
*none*)
	[ $root -eq 1 ] || { echo "deps: no arm64 package lists: run apt-get update as root" >&2; exit 1; }
	apt_get update -qq
	versions=$(candidates) ;;
esac
rm -rf "$arm64_dir"
mkdir -p "$arm64_dir/debs"
# shellcheck disable=SC2086
(cd "$arm64_dir/debs" && apt-get -q -o APT::Sandbox::User=root download $ARM64_UNPACK) >/dev/null
for deb in "$arm64_dir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$arm64_dir"
done
echo "$versions" > "$stamp"
say "Criterion for arm64 unpacked into $arm64_dir"
