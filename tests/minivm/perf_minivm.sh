#!/usr/bin/env bash
# perf on minivm with the perf map (x86_64): with JITFRAMES=perfmap,
# `perf record -e cpu-clock -g` + `perf report` show one entry per interpreted
# function under its own name (mvm:<function>), and the call chains follow the
# interpreted calls (mvm:fib under mvm:fib under mvm:main, above the C main).
# Negative control: without $JITFRAMES no mvm: name appears anywhere.
# Usage: perf_perfmap.sh MINIVM PROGRAMS_DIR
set -u
minivm=$1 programs=$2
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v perf >/dev/null || ! perf --version >/dev/null 2>&1; then
  echo "SKIP: perf is not installed"; exit 77
fi
tmp=$(mktemp -d)
export HOME=$tmp/home # perf's ~/.debug cache stays private
mkdir -p "$HOME"
pids=()
cleanup() {
  for p in "${pids[@]}"; do rm -f "/tmp/perf-$p.map"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}

# record NAME JITFRAMES-VALUE PROGRAM ARGS...: a fresh directory per recording.
record() {
  local name=$1 sinks=$2
  shift 2
  mkdir "$tmp/$name"
  (cd "$tmp/$name" &&
   if [ -n "$sinks" ]; then export JITFRAMES=$sinks; else unset JITFRAMES; fi &&
   timeout 120 perf record -q -e cpu-clock -F 4000 -g -o perf.data -- \
     sh -c 'echo $$ >pid; exec "$@"' sh "$minivm" "$@" >out 2>err)
  local status=$?
  pids+=("$(cat "$tmp/$name/pid" 2>/dev/null)")
  if [ "$status" != 0 ]; then
    echo "FAIL: perf record $name exited $status: $(cat "$tmp/$name/err")"; exit 1
  fi
  timeout 120 perf report -i "$tmp/$name/perf.data" --stdio --children --sort sym -g none \
    >"$tmp/$name/report" 2>/dev/null
  timeout 120 perf script -i "$tmp/$name/perf.data" -F ip,sym --no-inline 2>/dev/null |
    awk -f "$here/perf_chains.awk" >"$tmp/$name/chains"
}

entries() { grep -c "\[\.\] $2\$" "$tmp/$1/report"; }
one_entry() { [ "$(entries "$1" "$2")" = 1 ]; }
no_mvm_names() { ! grep -q 'mvm:' "$tmp/$1/report" && [ ! -s "$tmp/$1/chains" ]; }
# At least MIN samples with minivm frames; at least PCT% of them well formed.
enough_wellformed() {
  awk -v min="$2" -v pct="$3" '{ n++; w += $1 } END {
    printf "  %d samples with minivm frames, %d well formed\n", n, w
    exit !(n >= min && w * 100 >= pct * n) }' "$tmp/$1/chains"
}
# Every chain matches the extended regex (anchored).
all_chains_match() { ! awk '{ print $2 }' "$tmp/$1/chains" | grep -Evq "^($2)\$"; }
some_chain_matches() { awk '{ print $2 }' "$tmp/$1/chains" | grep -Eq "^($2)\$"; }

# --- fib: recursion ---------------------------------------------------------
record fib perfmap "$programs/fib.mvm" 32
check "fib output" grep -qx 'fib 32 = 2178309' "$tmp/fib/out"
check "fib: one report entry mvm:fib" one_entry fib 'mvm:fib'
check "fib: one report entry mvm:main" one_entry fib 'mvm:main'
check "fib: only main>fib... chains" all_chains_match fib 'main(>fib)*'
check "fib: fib under fib under fib under main" some_chain_matches fib 'main>fib>fib>fib(>fib)*'
check "fib: native stack mirrors the interpreted one" enough_wellformed fib 50 80

# --- calls: a call tree and mutual recursion ----------------------------------
record calls perfmap "$programs/calls.mvm" 20000
check "calls output" grep -qx 'rounds: 20000 checksum: [0-9]*' "$tmp/calls/out"
for f in main work parse digit_sum compute helper is_even is_odd; do
  check "calls: one report entry mvm:$f" one_entry calls "mvm:$f"
done
# Every chain follows edges of the program's call graph, nothing else.
parity='(>is_(even|odd))*'
check "calls: chains follow the call graph" all_chains_match calls \
  "main(>work(>parse(>digit_sum)?|>compute(>helper)?|$parity)?)?"
check "calls: helper under compute under work under main" some_chain_matches calls 'main>work>compute>helper'
check "calls: digit_sum under parse under work" some_chain_matches calls 'main>work>parse>digit_sum'
check "calls: is_odd under is_even (mutual recursion)" some_chain_matches calls "main>work$parity>is_even>is_odd$parity"
check "calls: native stack mirrors the interpreted one" enough_wellformed calls 30 80

# --- negative control: no $JITFRAMES, no names --------------------------------
record plain "" "$programs/fib.mvm" 30
check "control output" grep -qx 'fib 30 = 832040' "$tmp/plain/out"
check "control: no mvm: names without JITFRAMES" no_mvm_names plain
check "control: the eval function is still seen" grep -q '\[\.\] mvm_eval_function$' "$tmp/plain/report"
check "control: no perf map written" test ! -e "/tmp/perf-${pids[2]}.map"

[ "$fail" = 0 ] || { echo "--- fib chains (sample):"; head -5 "$tmp/fib/chains"; }
exit "$fail"
