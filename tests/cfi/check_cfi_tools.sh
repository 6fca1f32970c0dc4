#!/usr/bin/env bash
# readelf and llvm-dwarfdump must parse every emitted unwind image (all
# programs, architectures and layouts written by test_cfi_oracle) without a
# warning or error. Negative control: a corrupted FDE length must be caught.
# Usage: check_cfi_tools.sh PATH/TO/test_cfi_oracle
set -u
oracle=$1
for tool in readelf llvm-dwarfdump; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/jf-cfi-tools.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$oracle" "$dir" >/dev/null || { echo "FAIL: test_cfi_oracle failed"; exit 1; }

complaints() { # file -> prints any complaint from either tool
  local f=$1 out
  out=$(readelf --debug-dump=frames,frames-interp "$f" 2>&1) || echo "readelf exit status $?"
  grep -i -E "warning|error|invalid|bad |corrupt|unknown" <<<"$out"
  out=$(llvm-dwarfdump --eh-frame "$f" 2>&1) || echo "llvm-dwarfdump exit status $?"
  grep -i -E "warning|error|invalid|failed|unknown|unsupported" <<<"$out"
  grep -q "FDE cie=" <<<"$out" || echo "llvm-dwarfdump shows no FDE"
}

n=0
for f in "$dir"/*.elf; do
  c=$(complaints "$f")
  if [ -n "$c" ]; then
    echo "FAIL: $(basename "$f"):"; echo "$c"; exit 1
  fi
  n=$((n + 1))
done
[ "$n" -ge 80 ] || { echo "FAIL: only $n ELF files written"; exit 1; }

# Negative control: a broken FDE length (right after the 24-byte x86_64 CIE,
# at file offset 64 + 24) must make the tools complain.
bad="$dir/bad.elf"
cp "$dir/x86_64-framed-absolute+hdr.elf" "$bad"
printf '\xff\xff\xff\x0f' | dd of="$bad" bs=1 seek=88 conv=notrunc 2>/dev/null
[ -n "$(complaints "$bad")" ] || { echo "FAIL: negative control not detected"; exit 1; }
echo "PASS: $n images parse cleanly in readelf and llvm-dwarfdump"
