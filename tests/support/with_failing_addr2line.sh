#!/bin/sh
# with_failing_addr2line.sh OBJECT COMMAND ARGS...
# Run COMMAND with an addr2line first in PATH that exits at once, as the real
# one does on an object it cannot read, when asked about OBJECT (by its path
# or by its build-id, as perf names objects from its ~/.debug cache), and
# runs the real addr2line otherwise. perf starts one addr2line per object it
# needs source lines or inlined frames from; this shows a perf consumer test
# still sees everything it checks when one of those children fails.
object=$1
shift
real=$(command -v addr2line) || { echo "SKIP: addr2line is not installed"; exit 77; }
build_id=$(readelf -n "$object" 2>/dev/null | awk '/Build ID/ { print $3 }')
[ -n "$build_id" ] || { echo "with_failing_addr2line.sh: $object has no build-id" >&2; exit 1; }
# perf's cache path splits the id after two digits: .build-id/ab/cdef.../elf
cached=$(echo "$build_id" | cut -c3-)
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
cat >"$dir/addr2line" <<SCRIPT
#!/bin/sh
case "\$*" in *"$object"*|*"$cached"*) exit 1 ;; esac
exec "$real" "\$@"
SCRIPT
chmod +x "$dir/addr2line"
PATH=$dir:$PATH "$@"
