#!/usr/bin/env bash
# perf on LuaJIT programs with the jitframes module (no rebuild of LuaJIT):
# hot.lua (a hot loop, a side trace, a called function) and many.lua (300
# small functions made with load, hundreds of traces).
#   MODE perfmap  JITFRAMES=perfmap luajit -l jitframes: of the samples perf
#                 puts in anonymous JIT memory, the share named TRACE_<n>::
#                 <program>:<line> (at least 95%); without the module: none named
#   MODE jitdump  JITFRAMES=jitdump, perf record -k 1, perf inject --jit:
#                 traces named with their <program>:<line> source lines; the
#                 dump passes jitframes check; without the module: none named
# Usage: perf_luajit.sh MODULE_DIR MODE JITFRAMES_TOOL
set -u
module_dir=$1 mode=$2 tool=$3
here=$(cd "$(dirname "$0")" && pwd)
command -v luajit >/dev/null || { echo "SKIP: luajit is not installed (scripts/deps installs it)"; exit 77; }
. "$here/../support/perf_test_env.sh"
require_perf
export LUA_CPATH="$module_dir/?.so;;"

record() { # NAME WITH_MODULE(0/1): perf record $program into $tmp/NAME/perf.data
  local dir=$tmp/$1 args=()
  mkdir "$dir"
  [ "$2" = 1 ] && args=(-l jitframes)
  local rec=(-e cpu-clock)
  [ "$mode" = jitdump ] && rec=(-k 1 -e cpu-clock)
  (cd "$dir" && JITFRAMES=$mode JITFRAMES_DIR=$dir timeout 300 perf record -q "${rec[@]}" -o perf.data -- \
     "$here/../support/exec_with_fresh_map.sh" pid luajit "${args[@]}" "$here/$program" 30 >out 2>err) ||
    die "perf record $1: $(cat "$dir/err")"
  pids+=("$(cat "$dir/pid")")
  data=$dir/perf.data
  if [ "$mode" = jitdump ] && [ "$2" = 1 ]; then
    "$tool" check "$dir"/jit-*.dump >"$dir/check" 2>&1 || die "jitframes check: $(cat "$dir/check")"
    echo "ok: $(cat "$dir/check")"
    perf inject --jit -i "$data" -o "$dir/perf.jit.data" 2>"$dir/inject" || die "perf inject: $(cat "$dir/inject")"
    data=$dir/perf.jit.data
  fi
  "$perf" script -i "$data" -F ip,sym,dso,srcline >"$dir/script" 2>/dev/null
}

# share FILE: "named total" over the samples in JIT memory (perf map, or
# perf inject's jitted-*.so)
share() {
  awk -v p="$program" 'BEGIN { gsub(/\./, "\\.", p) }
       /\(\/tmp\/perf-[0-9]+\.map\)|jitted-[0-9]+-[0-9]+\.so/ { total++; if ($2 ~ "^TRACE_[0-9]+::[^ ]*" p ":[0-9]+$") named++ }
       END { print named + 0, total + 0 }' "$1"
}

for program in hot.lua many.lua; do
rm -rf "$tmp/with" "$tmp/without"

record with 1
record without 0
read -r named total < <(share "$tmp/with/script")
read -r named0 total0 < <(share "$tmp/without/script")
echo "$program with the module: $named of $total samples in JIT code named TRACE_<n>::$program:<line>"
echo "$program without: $named0 of $total0"
[ "$total" -ge 100 ] || die "too few samples in JIT code ($total)"
[ $((named * 100)) -ge $((total * 95)) ] || die "fewer than 95% of the JIT samples are named"
[ "$named0" = 0 ] || die "negative control: traces named without the module"
if [ "$mode" = jitdump ]; then
  grep -A1 -E "TRACE_[0-9]+::[^ ]*${program/./\\.}:[0-9]+" "$tmp/with/script" |
    grep -qE "^ +${program/./\\.}:[0-9]+" || die "no source line for the traces of $program"
  echo "ok: the traces of $program carry their $program:<line> source lines"
fi
done
echo PASS
