#!/usr/bin/env bash
# The LuaJIT client's cost (run on demand):
#  - steady state: a hot loop (tests/luajit/hot.lua), plain luajit against
#    luajit -l jitframes with each sink, N interleaved rounds, median CPU
#    seconds and the ratio to plain in the same run (target <= 1.01);
#  - trace creation: 3,000 distinct small functions made with load(); the
#    module times each trace's compilation (start to stop event) and its
#    registration, and prints both per trace (target: registration <= compile).
# Usage: bench/luajit/bench_luajit.sh BUILD_DIR [ROUNDS]
set -euo pipefail
build=$1 rounds=${2:-7}
root=$(cd "$(dirname "$0")/../.." && pwd)
export LUA_CPATH="$build/bindings/luajit/?.so;;"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export JITFRAMES_DIR=$tmp
fresh=$root/tests/support/exec_with_fresh_map.sh
cpu() { # COMMAND...: user+sys CPU seconds of one run; its perf map is removed
  /usr/bin/time -f '%U %S' -o "$tmp/t" "$fresh" "$tmp/pid" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
  rm -f "/tmp/perf-$(cat "$tmp/pid").map"
  awk '{ print $1 + $2 }' "$tmp/t"
}
variants=(plain perfmap jitdump gdb)
declare -A times
for ((r = 0; r < rounds; r++)); do
  for ((k = 0; k < ${#variants[@]}; k++)); do
    v=${variants[$(((k + r) % ${#variants[@]}))]}
    if [ "$v" = plain ]; then t=$(cpu luajit "$root/tests/luajit/hot.lua" 60)
    else t=$(JITFRAMES=$v cpu luajit -l jitframes "$root/tests/luajit/hot.lua" 60); fi
    times[$v]+="$t "
  done
done
median() { tr ' ' '\n' | sed '/^$/d' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
plain=$(median <<<"${times[plain]}")
echo "steady state (hot loop, $rounds interleaved rounds, median CPU s; ratio to plain):"
for v in "${variants[@]}"; do
  m=$(median <<<"${times[$v]}")
  printf '  %-8s %6.3f s  x%.3f\n' "$v" "$m" "$(awk -v a="$m" -v b="$plain" 'BEGIN { print a / b }')"
done
cat >"$tmp/create.lua" <<'LUA'
local jf = require("jitframes")
for i = 1, 3000 do
  local f = load("local s = 0 for j = 1, 100 do s = s + j * " .. i .. " end return s", "=f" .. i)
  for _ = 1, 60 do f() end
end
local s = jf.status()
print(string.format("%d %.9f %.9f", s.registered, s.compile_seconds, s.register_seconds))
LUA
echo "trace creation (3,000 load()ed functions), per trace: LuaJIT's compile time vs registration:"
for v in perfmap jitdump gdb; do
  read -r n comp reg < <(JITFRAMES=$v "$fresh" "$tmp/pid" luajit -l jitframes "$tmp/create.lua")
  rm -f "/tmp/perf-$(cat "$tmp/pid").map"
  awk -v v="$v" -v n="$n" -v c="$comp" -v r="$reg" 'BEGIN {
    printf "  %-8s %d traces: compile %.1f us, register %.1f us (x%.2f of compile)\n", v, n, c / n * 1e6, r / n * 1e6, r / c }'
done
