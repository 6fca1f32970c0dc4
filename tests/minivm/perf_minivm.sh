#!/usr/bin/env bash
# perf on minivm (x86_64): every interpreted function shows up in perf under
# its own name (mvm:<function>), once, and the call chains follow the
# interpreted calls (mvm:fib under mvm:fib under mvm:main, above the C main).
#   MODE perfmap  JITFRAMES=perfmap, perf record -e cpu-clock -g (frame pointers)
#   MODE jitdump  JITFRAMES=jitdump, perf record -k 1 --call-graph dwarf, then
#                 perf inject --jit; every dump passes `jitframes check`
# Negative control: without $JITFRAMES no mvm: name appears anywhere.
# Usage: perf_minivm.sh MINIVM PROGRAMS_DIR MODE [JITFRAMES_TOOL]
set -u
minivm=$1 programs=$2 mode=$3 tool=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/perf_test_env.sh"
require_perf
case "$mode" in
  perfmap) record_args=(-g) ;;
  jitdump) record_args=(-k 1 --call-graph dwarf) ;;
  *) echo "perf_minivm.sh: unknown mode $mode" >&2; exit 2 ;;
esac
fail=0
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fail=1; fi
}

# A jitdump recording: check the dumps, inject once; prints the data file to report on.
check_and_inject() {
  local dir=$1 dump
  for dump in "$dir"/jit-*.dump; do
    [ -e "$dump" ] || die "no jitdump written in $dir"
    if [ -n "$tool" ]; then
      "$tool" check "$dump" >"$dir/check.log" 2>&1 || die "jitframes check $dump: $(cat "$dir/check.log")"
      echo "ok: jitframes check: $(cat "$dir/check.log")" >&2
    else
      echo "note: the jitframes tool is not built; dump not checked" >&2
    fi
  done
  timeout 300 perf inject --jit -i "$dir/perf.data" -o "$dir/perf.jit.data" >"$dir/inject.log" 2>&1 ||
    die "perf inject: $(cat "$dir/inject.log")"
  echo "$dir/perf.jit.data"
}

# record NAME SINKS PROGRAM ARGS...: record into a fresh directory, then
# write NAME/report (perf report entries) and NAME/chains (perf_chains.awk).
# exec_with_fresh_map.sh notes the pid and removes a map a dead process with
# the same pid left behind, so the control's "no map" means this run wrote none.
record() {
  local name=$1 sinks=$2
  shift 2
  local dir=$tmp/$name
  mkdir "$dir"
  (cd "$dir" &&
   if [ -n "$sinks" ]; then export JITFRAMES=$sinks JITFRAMES_DIR=$dir; else unset JITFRAMES; fi &&
   timeout 120 perf record -q -e cpu-clock "${record_args[@]}" -o perf.data -- \
     "$here/../support/exec_with_fresh_map.sh" pid "$minivm" "$@" >out 2>err)
  local status=$?
  pids+=("$(cat "$dir/pid" 2>/dev/null)")
  [ "$status" = 0 ] || die "perf record $name exited $status: $(cat "$dir/err")"
  local data=$dir/perf.data
  if [ "$sinks" = jitdump ]; then data=$(check_and_inject "$dir") || exit 1; fi
  echo "$data" >"$dir/data_file"
  timeout 300 "$perf" report -i "$data" --stdio --children --sort sym -g none >"$dir/report" 2>/dev/null
  timeout 300 "$perf" script -i "$data" -F ip,sym --no-inline 2>/dev/null |
    awk -f "$here/perf_chains.awk" >"$dir/chains"
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
# Every caller>callee pair in every chain is one of the allowed edges (a
# sample whose unwinding stopped early still shows only real calls).
only_edges() {
  awk -v allowed="$2" 'BEGIN { n = split(allowed, a, " "); for (i = 1; i <= n; i++) ok[a[i]] = 1 }
    { k = split($2, f, ">")
      for (i = 1; i < k; i++) if (!((f[i] ">" f[i + 1]) in ok)) { print "  unexpected edge: " f[i] ">" f[i + 1]; bad = 1 } }
    END { exit bad }' "$tmp/$1/chains"
}
# Every complete chain (well formed, the C main below it) starts at the interpreted main.
complete_chains_start_at_main() { ! awk '$1 == 1 { print $2 }' "$tmp/$1/chains" | grep -Evq '^main(>|$)'; }
some_chain_matches() { awk '{ print $2 }' "$tmp/$1/chains" | grep -Eq "^($2)\$"; }

# --- fib: recursion ---------------------------------------------------------
record fib "$mode" "$programs/fib.mvm" 30
check "fib output" grep -qx 'fib 30 = 832040' "$tmp/fib/out"
check "fib: one report entry mvm:fib" one_entry fib 'mvm:fib'
check "fib: one report entry mvm:main" one_entry fib 'mvm:main'
check "fib: only main>fib and fib>fib calls" only_edges fib 'main>fib fib>fib'
check "fib: complete chains start at mvm:main" complete_chains_start_at_main fib
check "fib: fib under fib under fib under main" some_chain_matches fib 'main>fib>fib>fib(>fib)*'
check "fib: native stack mirrors the interpreted one" enough_wellformed fib 50 80

# jitdump carries each trampoline's file and line: every mvm:<f> frame in the
# call chains resolves to the line of `fn <f>(` in the program.
# perf resolves source lines through addr2line children; perf 6.1 dies of
# SIGPIPE when one of them fails on an object it cannot read (a DWARF-unwound
# frame in a data mapping does that), so the pass runs with SIGPIPE ignored and
# prints perf's status and its first complaints when no minivm frame came out.
lines_match_definitions() { # NAME PROGRAM: every trampoline frame has its definition line
  local name=$1 program=$2 dir=$tmp/$1
  timeout 300 "$perf" script -i "$(cat "$dir/data_file")" \
    -F ip,sym,srcline --no-inline >"$dir/srclines" 2>"$dir/srclines.err"
  local status=$?
  echo "  perf script (srcline) exited $status, $(wc -l <"$dir/srclines") lines"
  awk -v base="$(basename "$program")" -v defs="$(grep -n '^fn ' "$program" | sed -E 's/^([0-9]+):fn ([a-z_0-9]+).*/\2=\1/')" '
      BEGIN { n = split(defs, d, "\n"); for (i = 1; i <= n; i++) { split(d[i], kv, "="); line[kv[1]] = kv[2] } }
      want != "" { frames++; if ($1 != want) { bad++; if (bad <= 3) print "  " fn " at " $1 ", expected " want } want = "" }
      $2 ~ /^mvm:/ { fn = substr($2, 5); want = base ":" line[fn] }
      END { printf "  %d trampoline frames, %d with another line\n", frames, bad; exit frames == 0 ? 2 : bad != 0 }' \
    "$dir/srclines"
  local rc=$?
  if [ "$rc" = 2 ] || [ "$status" != 0 ]; then
    echo "  perf's stderr (first lines):"
    sort "$dir/srclines.err" | uniq -c | sort -rn | head -5 | sed 's/^/    /'
  fi
  [ "$status" = 0 ] && [ "$rc" = 0 ]
}
if [ "$mode" = jitdump ]; then
  check "fib: trampoline frames carry the definition lines" lines_match_definitions fib "$programs/fib.mvm"
fi

# --- calls: a call tree and mutual recursion ----------------------------------
record calls "$mode" "$programs/calls.mvm" 20000
check "calls output" grep -qx 'rounds: 20000 checksum: [0-9]*' "$tmp/calls/out"
for f in main work parse digit_sum compute helper is_even is_odd; do
  check "calls: one report entry mvm:$f" one_entry calls "mvm:$f"
done
check "calls: chains follow the program's call graph" only_edges calls \
  'main>work work>parse parse>digit_sum work>compute compute>helper work>is_even work>is_odd is_even>is_odd is_odd>is_even'
check "calls: complete chains start at mvm:main" complete_chains_start_at_main calls
parity='(>is_(even|odd))*'
check "calls: helper under compute under work under main" some_chain_matches calls 'main>work>compute>helper'
check "calls: digit_sum under parse under work" some_chain_matches calls 'main>work>parse>digit_sum'
check "calls: is_odd under is_even (mutual recursion)" some_chain_matches calls "main>work$parity>is_even>is_odd$parity"
check "calls: native stack mirrors the interpreted one" enough_wellformed calls 30 80
if [ "$mode" = jitdump ]; then
  check "calls: trampoline frames carry the definition lines" lines_match_definitions calls "$programs/calls.mvm"
fi

# --- negative control: no $JITFRAMES, no names --------------------------------
record plain "" "$programs/fib.mvm" 30
check "control output" grep -qx 'fib 30 = 832040' "$tmp/plain/out"
check "control: no mvm: names without JITFRAMES" no_mvm_names plain
check "control: the eval function is still seen" grep -q '\[\.\] mvm_eval_function$' "$tmp/plain/report"
check "control: no perf map written" test ! -e "/tmp/perf-${pids[2]}.map"
check "control: no jitdump written" test -z "$(ls "$tmp/plain" | grep '^jit-')"

if [ "$fail" != 0 ]; then
  for r in fib calls; do
    echo "--- $r chains (most common; 'wellformed chain'):"
    sort "$tmp/$r/chains" | uniq -c | sort -rn | head -5 | cut -c1-200
  done
  echo "--- fib chains that are not main>fib...:"
  grep -Ev ' main(>fib)*$' "$tmp/fib/chains" | head -5 | cut -c1-200
fi
exit "$fail"
