#!/usr/bin/env bash
# A setuid-root program run by nobody ignores nobody's JITFRAMES,
# JITFRAMES_DIR, JITFRAMES_LOG and JITFRAMES_CONTROL: no sink starts, no
# perf map or jitdump is written where they say, nothing is printed. The
# control: the same program without the setuid bit obeys them.
# Usage: setuid_ignores_environment.sh REGISTER_FROM_ENV (as root)
program=$1
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to make a setuid-root copy"; exit 77; }
. "$(dirname "$0")/../support/for_other_users.sh"
dir=$(mktemp -d /tmp/jf-setuid.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
plain=$(runnable_by_anyone "$dir" "$program") || exit 1
setuid="$dir/bin/register_from_env_setuid"
cp "$plain" "$setuid" && chown root:root "$setuid" && chmod 4755 "$setuid" || exit 1
dumps="$dir/dumps" # nobody's own directory, as a hostile caller would name
mkdir "$dumps" && chown nobody "$dumps" || exit 1
nobody=$(id -u nobody)

# run NAME PROGRAM: PROGRAM as nobody with every variable set; sets pid, out, err.
run() {
  local name=$1 prog=$2
  out=$(env JITFRAMES=perfmap,jitdump JITFRAMES_DIR="$dumps" JITFRAMES_LOG=debug JITFRAMES_CONTROL=1 \
          setpriv --reuid="$nobody" --regid="$nobody" --clear-groups timeout 60 "$prog" 2>"$dir/$name.err")
  local rc=$?
  err=$(head -c 2000 "$dir/$name.err")
  pid=$(printf '%s\n' "$out" | sed -n 's/^pid=\([0-9]*\) .*/\1/p')
  [ "$rc" = 0 ] && [ -n "$pid" ] || fail "$name: exit $rc, output '$out', stderr '$err'"
}

run plain "$plain"
case $out in *" init=0 sinks=3") ;; *) fail "plain: the environment was not obeyed: $out" ;; esac
[ -f "/tmp/perf-$pid.map" ] || fail "plain: no /tmp/perf-$pid.map"
[ -f "$dumps/jit-$pid.dump" ] || fail "plain: no $dumps/jit-$pid.dump"
[ -n "$err" ] || fail "plain: JITFRAMES_LOG=debug printed nothing"
rm -f "/tmp/perf-$pid.map"

# A perf map of the setuid run's pid that is older than the run is another
# process's (pids are reused, and other tests leave theirs in /tmp).
before="$dir/before-setuid"
touch "$before" && sleep 0.01
run setuid "$setuid"
case $out in *" init=0 sinks=0") ;; *) fail "setuid: the caller's environment chose sinks: $out" ;; esac
[ "/tmp/perf-$pid.map" -nt "$before" ] && fail "setuid: /tmp/perf-$pid.map was written" && rm -f "/tmp/perf-$pid.map"
ls "$dumps" | grep -q "^jit-$pid.dump$" && fail "setuid: $dumps/jit-$pid.dump was written"
[ -z "$err" ] || fail "setuid: JITFRAMES_LOG was obeyed, it printed: $err"

[ "$fails" = 0 ] && echo "PASS: a setuid program ignores its caller's JITFRAMES* variables"
[ "$fails" = 0 ]
