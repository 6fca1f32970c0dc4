#!/usr/bin/env bash
# Run the shape guest for ARCH under qemu-user and check every recorded
# machine state on the host (see shapes_guest.c, test_cfi_shapes_check.c).
# Usage: check_shapes_qemu.sh ARCH GUEST CHECKER
set -u
arch=$1 guest=$2 checker=$3
qemu=$(command -v "qemu-$arch") || { echo "SKIP: qemu-$arch not installed"; exit 77; }
[ -x "$guest" ] || { echo "SKIP: no $arch cross compiler, guest not built"; exit 77; }
out=$(mktemp "${TMPDIR:-/tmp}/jf-shapes-$arch.XXXXXX")
trap 'rm -f "$out"' EXIT
timeout 120 "$qemu" "$guest" >"$out" || { echo "FAIL: guest exited with $?"; exit 1; }
"$checker" "$arch" <"$out"
