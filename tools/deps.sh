#!/bin/sh
# deps.sh - install the Debian packages t410trace needs, only those missing.
# As root: apt-get installs them. Otherwise: prints the exact command.
# --quiet: say nothing when everything is already there.
# --bench: also what `make bench` compares against (perf).
# --arm64: also the aarch64 cross compiler (`make check-arm64`).
set -eu
PKGS="gcc make pkg-config liburing-dev libzstd-dev zstd libbpf-dev libelf-dev
zlib1g-dev libcriterion-dev bpftool clang llvm python3
libprotobuf-c-dev protobuf-c-compiler protobuf-compiler"
quiet=0
for arg in "$@"; do
	case "$arg" in
	--quiet) quiet=1 ;;
	--bench) PKGS="$PKGS linux-perf time" ;;
	--arm64) PKGS="$PKGS gcc-aarch64-linux-gnu libc6-dev-arm64-cross" ;;
	*) echo "deps: unknown option $arg" >&2; exit 2 ;;
	esac
done

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	[ $quiet -eq 1 ] || echo "deps: all packages present"
	exit 0
fi

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root:  apt-get update && $cmd" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "deps: done"
