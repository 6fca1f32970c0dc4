#!/usr/bin/env bash
# cfi-extract must refuse a bad template with the message its "# expect:" line
# names, and write no header. (Negative control: the same tool accepts the
# real template of its architecture, checked by the build itself.)
# Usage: cfi_extract_refuses.sh CFI_EXTRACT BAD.S CC
set -u
tool=$1 src=$2 cc=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
expect=$(sed -n 's/^# expect: //p' "$src")
[ -n "$expect" ] || { echo "$src has no '# expect:' line"; exit 1; }
"$cc" -c -x assembler "$src" -o "$dir/bad.o" || { echo "cannot assemble $src"; exit 1; }
if "$tool" "$dir/bad.o" "$dir/out.h" 2>"$dir/err"; then
  echo "cfi-extract accepted $src"; exit 1
fi
cat "$dir/err"
grep -qF -- "$expect" "$dir/err" || { echo "expected a message containing: $expect"; exit 1; }
exit 0
