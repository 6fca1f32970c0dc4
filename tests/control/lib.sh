# Helpers for the control channel's shell tests (sourced).
# Targets (control_target) run with standard input from a FIFO: closing our
# end makes them shut jitframes down and exit.
set -u
failures=0
dir=$(mktemp -d "${JF_TEST_TMP:-/tmp}/jf-control.XXXXXX")
chmod 755 "$dir"
trap 'cleanup' EXIT
declare -a target_fds=()

cleanup() {
  for fd in "${target_fds[@]}"; do eval "exec $fd>&-" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}

# require_root WHY: skip (77) unless root.
require_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: needs root ($1)" >&2
    exit 77
  fi
}

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

. "$(dirname "${BASH_SOURCE[0]}")/../support/stale_files.sh"

# start_target NAME COMMAND...: run COMMAND in the background; waits (at
# most 60 s) for its "ready <pid>" line and sets ${NAME}_pid (that pid: the
# target's own view), ${NAME}_job ($!, for stop_target), ${NAME}_fd (our end
# of its stdin) and ${NAME}_out (its stdout file).
# Stale files named for that pid go first (forget_stale_files).
start_target() {
  local name=$1 fifo="$dir/$1.in" out="$dir/$1.out"
  shift
  mkfifo "$fifo"
  "$@" <"$fifo" >"$out" 2>"$dir/$name.err" &
  local pid=$! fd
  exec {fd}>"$fifo"
  target_fds+=("$fd")
  printf -v "${name}_job" %s "$pid"
  printf -v "${name}_fd" %s "$fd"
  printf -v "${name}_out" %s "$out"
  for _ in $(seq 1200); do
    if grep -q '^ready ' "$out"; then
      printf -v "${name}_pid" %s "$(awk '/^ready /{print $2; exit}' "$out")"
      forget_stale_files "$(awk '/^ready /{print $2; exit}' "$out")"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  fail "$name did not start: $(cat "$dir/$name.err")"
  return 1
}

# stop_target NAME: close its stdin, wait; it must exit 0 (jf_shutdown ok,
# no sanitizer report).
stop_target() {
  local name=$1 pid fd
  pid=${name}_job; pid=${!pid}
  fd=${name}_fd; fd=${!fd}
  eval "exec $fd>&-"
  wait "$pid"
  local rc=$?
  [ "$rc" -eq 0 ] || fail "$name exited $rc: $(cat "$dir/$name.err")"
}

# expect_rc NAME WANT_RC COMMAND...: run it, keep stdout/stderr in $out/$err.
expect_rc() {
  local name=$1 want=$2
  shift 2
  "$@" >"$dir/last.out" 2>"$dir/last.err"
  local rc=$?
  out=$(cat "$dir/last.out")
  err=$(cat "$dir/last.err")
  [ "$rc" -eq "$want" ] || fail "$name: exit $rc, want $want (stdout: $out; stderr: $err)"
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)" >&2
    exit 1
  fi
  echo "all passed"
  exit 0
}
