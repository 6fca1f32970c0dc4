#!/usr/bin/env bash
# record_names_generated_code_from_memory_with_nothing_switched_on:
# `jitframes record PID` on programs started with no JITFRAMES* variable at
# all (no sink, no control channel) reads their published table while perf
# records, and perf report/script name their generated code:
# - minijit: names, source lines (perf script -F +srcline) and DWARF call
#   chains through the JIT code reaching main; the summary says "via memory";
#   nothing written in /tmp, ~/.debug as it was, the program runs on.
# - minivm: its trampolines (mvm:<function>) named with their source lines,
#   and frame-pointer chains through them reaching main (in standby its
#   trampolines are packed: no room for unwind data after them in perf's
#   mapping, through the channel as here, so DWARF chains stop there).
# - jit_churn (2 functions, each retired and moved after ~1.4 ms of CPU,
#   far less than the 25 ms between two reads of the table: most are only
#   ever seen in its ring of removals): code registered and removed again
#   during the recording, at two addresses reused by every other function,
#   each sample named after the ground truth's function live at that
#   address at its time.
# - table_liar: a process rewriting its table with lies ("../" names, sizes
#   of 2^40, counts beyond the mapping): record ends in bounded time and
#   creates files only in its output directory.
# --via memory is refused in one line on a process without a table.
# Usage: record_memory.sh JITFRAMES_TOOL MINIJIT MINIVM CALLS_MVM JIT_CHURN TABLE_LIAR BUILD_DIR
set -uo pipefail
tool=$(realpath "$1") minijit=$(realpath "$2") minivm=$(realpath "$3") calls=$(realpath "$4")
churn=$(realpath "$5") liar=$(realpath "$6") build=$7
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"

# "${plain[@]}" COMMAND...: COMMAND with no JITFRAMES* variable in its
# environment (env execs it: $! is its pid).
plain=(env)
for v in $(env | sed -n 's/^\(JITFRAMES[A-Za-z0-9_]*\)=.*/\1/p'); do plain+=(-u "$v"); done

# litter PID: what a recording of PID could have left in /tmp since the test
# began (an older file with the pid is an earlier process's: a busy /tmp has hundreds).
touch "$work/began"
litter() {
  find /tmp -maxdepth 1 \( -name "perf-$1.map" -o -name "jit-$1.dump" -o -name "jitted-$1-*.so" \) \
    -newer "$work/began" 2>/dev/null
}

# check_memory_run NAME OUT: the recording went through memory and named JIT code.
check_memory_run() {
  local name=$1 out=$2
  cat "$out.log"
  grep -q "^  via memory (followed process $pid " "$out.log" || fail "$name: the summary does not say it read memory"
  [ -s "$out/perf.jit.data" ] || fail "$name: no perf.jit.data (perf inject --jit)"
  ls "$out"/jit/jitted-"$pid"-*.so >/dev/null 2>&1 || fail "$name: perf inject made no jitted-$pid-*.so in DIR/jit"
  [ -z "$(litter "$pid")" ] || fail "$name: left in /tmp: $(litter "$pid")"
  kill -0 "$pid" || fail "$name: the program died"
  debug_cache_unchanged "$name"
}

# --- minijit --------------------------------------------------------------
"${plain[@]}" "$minijit" --seconds 120 >"$work/mj.out" 2>&1 &
pid=$!; pids+=("$pid")
for _ in $(seq 400); do "$tool" regions "$pid" 2>/dev/null | grep -q '^4 live regions' && break; sleep 0.05; done
"$tool" status "$pid" >/dev/null 2>&1 && fail "minijit: a control channel although nothing asked for one"
record_cpu "$work/mj" 2000 --keep || { cat "$work/mj.log"; fail "record minijit"; }
check_memory_run minijit "$work/mj"
# The jitdump written from memory (kept): valid, no warning, the table's unwind data in it.
"$tool" check "$work/mj/jit/jit-$pid.dump" >"$work/mj.check" 2>&1 || fail "minijit: jitframes check: $(cat "$work/mj.check")"
grep -q 'valid jitdump: .*(4 loads, 4 with unwind info, 4 with line info' "$work/mj.check" ||
  fail "minijit: the jitdump from memory: $(cat "$work/mj.check")"
grep -qE '"mj_(frameless|framed|stencils|lines)"' "$work/mj/flamegraph.html" || fail "minijit: flame graph names no JIT function"
perf script -i "$work/mj/perf.jit.data" -F ip,sym,srcline --pid "$pid" 2>/dev/null >"$work/mj.script"
awk '$2 == "mj_lines" { getline; t++; if ($1 ~ /^minijit_program\.mj:[0-9]+$/) ok++ }
  END { printf "minijit: %d of %d mj_lines frames have a source line\n", ok, t; exit !(t >= 50 && ok * 100 >= t * 95) }' \
  "$work/mj.script" || fail "minijit: no source lines for the JIT code"
perf script -i "$work/mj/perf.jit.data" -F ip,sym --pid "$pid" 2>/dev/null | awk '
  BEGIN { RS = ""; FS = "\n" } $1 ~ / mj_frameless$/ { t++; if ($0 ~ /c_caller_frameless/ && $0 ~ / main/) ok++ }
  END { printf "minijit: %d of %d samples in mj_frameless unwind to main\n", ok, t; exit !(t >= 50 && ok * 100 >= t * 95) }' ||
  fail "minijit: DWARF chains do not go through the JIT code"
kill "$pid"

# --- minivm: trampolines ----------------------------------------------------
"${plain[@]}" "$minivm" "$calls" 100000000 >"$work/vm.out" 2>&1 &
pid=$!; pids+=("$pid")
for _ in $(seq 400); do "$tool" regions "$pid" 2>/dev/null | grep -q 'mvm:main' && break; sleep 0.05; done
record_cpu "$work/vm" 1000 --call-graph fp || { cat "$work/vm.log"; fail "record minivm"; }
check_memory_run minivm "$work/vm"
grep -A8 "generated code on the stack" "$work/vm.log" | grep -qE "^ +[0-9.]+%  mvm:main$" ||
  fail "minivm: the summary does not list mvm:main as generated code on the stack"
perf script -i "$work/vm/perf.jit.data" -F ip,sym,srcline --pid "$pid" 2>/dev/null >"$work/vm.script"
awk '$2 ~ /^mvm:/ { getline; t++; if ($1 ~ /^calls\.mvm:[0-9]+$/) ok++ }
  END { printf "minivm: %d of %d trampoline frames have a source line\n", ok, t; exit !(t >= 50 && ok * 100 >= t * 95) }' \
  "$work/vm.script" || fail "minivm: no source lines for the trampolines"
perf script -i "$work/vm/perf.jit.data" -F ip,sym --pid "$pid" 2>/dev/null | awk '
  BEGIN { RS = ""; FS = "\n" } / mvm:/ { t++; if ($0 ~ / mvm:main\n/ && $0 ~ / main\n/) ok++ }
  END { printf "minivm: %d of %d samples under a trampoline reach mvm:main and main\n", ok, t; exit !(t >= 50 && ok * 100 >= t * 95) }' ||
  fail "minivm: chains do not go through the trampolines to main"
kill "$pid"

# --- jit_churn: code that dies during the recording --------------------------
mkfifo "$work/churn.in"
"${plain[@]}" "$churn" 2 0 "$work/truth.log" 1000000 <"$work/churn.in" >"$work/churn.out" 2>&1 &
pid=$!; pids+=("$pid")
exec 3>"$work/churn.in"
for _ in $(seq 400); do grep -q '^pid' "$work/churn.out" && break; sleep 0.05; done
record_cpu "$work/ch" 1500 --call-graph fp || { cat "$work/ch.log"; fail "record jit_churn"; }
check_memory_run jit_churn "$work/ch"
unseen=$(sed -n 's/.* regions kept (\([0-9]*\) removed before a read saw them.*/\1/p' "$work/ch.log")
[ "${unseen:-0}" -ge 100 ] || fail "jit_churn: ${unseen:-no} regions taken from the ring of removals (100 wanted)"
exec 3>&-
wait "$pid" || fail "jit_churn failed"
perf script -i "$work/ch/perf.jit.data" -F time,ip,sym --ns -G --pid "$pid" 2>/dev/null >"$work/ch.script"
python3 - "$work/truth.log" "$work/ch.script" <<'PY' || fail "jit_churn: samples not named after the function live at their address and time"
import bisect, sys
lives = {}  # start -> [(registered, removed, name)]
open_at = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "reg":
        open_at[int(f[1], 16)] = (int(f[4]), f[3], int(f[2], 16))
    elif f[0] == "unreg":
        start = int(f[1], 16)
        t, name, size = open_at.pop(start)
        lives.setdefault(start, []).append((t, int(f[2]), name, size))
samples = []
for line in open(sys.argv[2]):
    f = line.split()
    if len(f) >= 2 and f[0].endswith(":"):
        sec, ns = f[0][:-1].split(".")
        samples.append((int(sec) * 1000000000 + int(ns), int(f[1], 16), f[2] if len(f) > 2 else "[unknown]"))
first, last = min(s[0] for s in samples), max(s[0] for s in samples)
starts = sorted(lives)
judged = right = died = died_right = 0
verdicts = []  # (time, right) of each judged sample
for t, ip, sym in samples:
    i = bisect.bisect_right(starts, ip) - 1
    if i < 0:
        continue
    for reg, unreg, name, size in lives[starts[i]]:
        # the log's times bracket the calls: "reg" logged before the first, "unreg" after the last
        if starts[i] <= ip < starts[i] + size and reg < t < unreg:
            judged += 1
            right += sym == name
            verdicts.append((t, sym == name))
            if sym != name:
                print("jit_churn: sample at %d in %s named %s" % (t, name, sym))
            if first < reg and unreg < last:
                died += 1
                died_right += sym == name
print("jit_churn: %d of %d samples in churned code named right; %d of %d in functions born and "
      "removed during the recording" % (right, judged, died_right, died))
# The recording's last samples: perf samples until its workload ends, after
# record's own timer; the table must be followed until then (the follower once
# stopped at the timer, and the last ~10 ms of samples were named after the
# function that lived there before).
last = [ok for _, ok in sorted(verdicts)[-50:]]
print("jit_churn: the last %d samples in churned code: %d named right" % (len(last), sum(last)))
sys.exit(not (judged >= 200 and right * 100 >= judged * 95 and died >= 100 and died_right * 100 >= died * 95
              and all(last)))
PY

# --- table_liar: a hostile table -----------------------------------------------
mkfifo "$work/liar.in"
mkdir "$work/liar-cwd"
"${plain[@]}" "$liar" <"$work/liar.in" >"$work/liar.out" 2>&1 &
pid=$!; pids+=("$pid")
exec 4>"$work/liar.in"
for _ in $(seq 400); do grep -q '^pid' "$work/liar.out" && break; sleep 0.05; done
touch "$work/before-liar"
(cd "$work/liar-cwd" && "$tool" record "$pid" --via memory --duration 3 -o out >"$work/liar.log" 2>&1) &
rec=$!
for _ in $(seq 1200); do [ -e "$work/liar-cwd/out/perf.data" ] && break; sleep 0.05; done
echo lie >&4  # it lies from now on, while the table is followed
start=$SECONDS
for _ in $(seq 1800); do kill -0 "$rec" 2>/dev/null || break; sleep 0.1; done
kill -0 "$rec" 2>/dev/null && { kill -INT "$rec"; fail "liar: record still runs 180 s after it started"; }
wait "$rec"; rc=$?
cat "$work/liar.log"
echo "liar: record exit status $rc after $((SECONDS - start)) s"
[ "$rc" -le 1 ] || fail "liar: record exit status $rc"
grep -q "^  via memory (followed process $pid " "$work/liar.log" || fail "liar: record did not follow the table"
unexpected=$(cd "$work/liar-cwd" && find . -mindepth 1 | grep -vE '^\./out$|^\./out/(perf\.data|perf\.jit\.data|flamegraph\.html|jit|jit/jitted-'"$pid"'-[0-9]+\.so)$')
[ -z "$unexpected" ] || fail "liar: record created $unexpected"
# (the names its table gives: jf-liar-*; other tests' own liar-* files are not its)
made=$(find /tmp "$work" /etc -maxdepth 3 -newer "$work/before-liar" -name 'jf-liar-*' 2>/dev/null || true)
[ -z "$made" ] || fail "liar: files named after the liar's lies: $made"
[ -z "$(litter "$pid")" ] || fail "liar: left in /tmp: $(litter "$pid")"
exec 4>&-
wait "$pid"

# --via memory on a process without a table: one line, exit 4, nothing made.
sleep 600 & quiet=$!; pids+=("$quiet")
"$tool" record "$quiet" --via memory -o "$work/quiet" >"$work/quiet.out" 2>"$work/quiet.err"; rc=$?
[ "$rc" -eq 4 ] && [ "$(wc -l <"$work/quiet.err")" -eq 1 ] && grep -q "no published region table" "$work/quiet.err" ||
  fail "--via memory without a table: exit status $rc: $(cat "$work/quiet.err")"
[ ! -e "$work/quiet" ] || fail "--via memory without a table: created the output directory"
echo PASS
