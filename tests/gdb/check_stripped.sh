#!/usr/bin/env bash
# The GDB JIT interface survives a stripped, LTO, --gc-sections executable
# that links the static library: both symbols are in .dynsym and gdb names a
# frameless JIT frame. The opted-out build is the negative control, and the
# pkg-config file ships the same flags for static linking.
# Usage: check_stripped.sh EXPORTING NOEXPORT JITFRAMES_PC
set -uo pipefail
prog=$1 noexport=$2 pc=$3
fail() { echo "FAIL: $*"; exit 1; }
command -v gdb >/dev/null || { echo "SKIP: gdb is not installed"; exit 77; }

readelf -S -W "$prog" | grep -q ' \.symtab ' && fail "$prog is not stripped"
dyn=$(readelf --dyn-syms -W "$prog")
grep -qE 'FUNC +GLOBAL +DEFAULT +[0-9]+ __jit_debug_register_code$' <<<"$dyn" || fail "__jit_debug_register_code not exported"
grep -qE 'OBJECT +GLOBAL +DEFAULT +[0-9]+ __jit_debug_descriptor$' <<<"$dyn" || fail "__jit_debug_descriptor not exported"
readelf --dyn-syms -W "$noexport" | grep -q __jit_debug && fail "negative control exports the interface"

frame0() { timeout -k 5 90 gdb -nx -batch -ex run -ex 'bt 1' --args "$1" trap:jit_frameless 2>&1 | grep '^#0'; }
f=$(frame0 "$prog"); echo "exported:     $f"
grep -q 'in jit_frameless ()' <<<"$f" || fail "gdb does not name the JIT frame in the stripped executable"
f=$(frame0 "$noexport"); echo "not exported: $f"
grep -q 'jit_frameless' <<<"$f" && fail "negative control: named without the exported interface"

grep -q 'Libs.private:.*export_ldflags' "$pc" && grep -q 'export-dynamic-symbol=__jit_debug_register_code' "$pc" \
  && grep -q 'export-dynamic-symbol=__jit_debug_descriptor' "$pc" || fail "$pc lacks the export flags"
echo PASS
