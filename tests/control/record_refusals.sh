#!/usr/bin/env bash
# record_refuses_in_one_line_and_creates_nothing: `jitframes record` with an
# output directory it cannot use (-o naming an existing file, a symlink to a
# file, an existing directory (record makes its own), one in a directory it
# may not write, run as nobody since root ignores permission bits, a
# read-only mount) and on a process it cannot record (no
# control channel, a zombie, no such pid) says why in one line, exits 2 (a
# bad -o) or 4 (the process), prints no traceback and creates nothing.
# Usage: record_refusals.sh JITFRAMES_TOOL BUILD_DIR
set -uo pipefail
tool=$(realpath "$1") build=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"

# refused NAME STATUS PATTERN COMMAND...: COMMAND exits STATUS with one line
# on stderr matching PATTERN, nothing on stdout, no traceback.
refused() {
  local name=$1 want=$2 pattern=$3; shift 3
  "$@" >"$work/out" 2>"$work/err"; local rc=$?
  echo "$name: exit status $rc: $(cat "$work/err")"
  [ "$rc" -eq "$want" ] || fail "$name: exit status $rc, not $want"
  [ "$(wc -l <"$work/err")" -eq 1 ] || fail "$name: not one line: $(cat "$work/err")"
  grep -qE -e "$pattern" "$work/err" || fail "$name: the message does not match $pattern"
  [ ! -s "$work/out" ] || fail "$name: wrote on stdout: $(cat "$work/out")"
}

sleep 600 & quiet=$!; pids+=("$quiet")  # a process without a channel

# -o an existing file, and a symlink to one: both stay as they were.
echo data >"$work/file"
ln -s "$work/file" "$work/link"
refused "-o FILE" 2 "-o .*file: exists and is not a directory" "$tool" record "$quiet" -o "$work/file"
refused "-o SYMLINK" 2 "-o .*link: exists and is not a directory" "$tool" record "$quiet" -o "$work/link"
[ "$(cat "$work/file")" = data ] && [ -L "$work/link" ] || fail "-o FILE: the file or the link changed"

# -o where nobody may not write: the tool copied where nobody reaches it.
if [ "$(id -u)" -eq 0 ]; then
  chmod 755 "$work"
  mkdir -m 755 "$work/bin" "$work/roots"
  cp "$tool" "$(dirname "$tool")"/jitframes-record "$(dirname "$tool")"/jfrecord_*.py "$work/bin/"
  as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env PATH=/usr/bin:/bin "$@"; }
  refused "-o in an unwritable directory" 2 "-o .*roots/out: cannot create it: .*roots is not writable" \
    as_nobody "$work/bin/jitframes" record "$quiet" -o "$work/roots/out"
  refused "-o an existing directory" 2 "-o .*roots: exists: record makes its output directory itself" \
    as_nobody "$work/bin/jitframes" record "$quiet" -o "$work/roots"
  [ -z "$(ls "$work/roots")" ] || fail "unwritable: created $(ls "$work/roots")"

  # A read-only mount, in a mount namespace of its own.
  mkdir "$work/ro"
  if unshare -m true 2>/dev/null; then
    unshare -m sh -c 'mount -t tmpfs -o ro tmpfs "$1" && shift && exec "$@"' sh "$work/ro" \
      "$tool" record "$quiet" -o "$work/ro/out" >"$work/out" 2>"$work/err"
    rc=$?
    echo "-o on a read-only mount: exit status $rc: $(cat "$work/err")"
    [ "$rc" -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "ro/out: cannot create it: .*/ro is on a read-only file system" "$work/err" ||
      fail "-o on a read-only mount: exit status $rc: $(cat "$work/err")"
  else
    echo "note: unshare -m not permitted here: no read-only mount case"
  fi
else
  echo "note: not root: no unwritable-directory or read-only-mount case"
fi

# No channel, no process, a zombie: nothing created.
refused "no channel" 4 "process $quiet does not listen" "$tool" record "$quiet" -o "$work/none"
[ ! -e "$work/none" ] || fail "no channel: created the output directory"
sh -c 'sleep 0 & exec sleep 600' & parent=$!; pids+=("$parent")
zombie=
for _ in $(seq 200); do
  zombie=$(cat "/proc/$parent/task/$parent/children" 2>/dev/null | awk '{print $1}')
  [ -n "$zombie" ] && grep -q "^State:.*Z" "/proc/$zombie/status" 2>/dev/null && break
  sleep 0.05
done
grep -q "^State:.*Z" "/proc/$zombie/status" || fail "no zombie to test with"
refused "a zombie" 4 "process $zombie has exited \(zombie\)" "$tool" record "$zombie" -o "$work/zombie"
[ ! -e "$work/zombie" ] || fail "zombie: created the output directory"
kill "$quiet"; wait "$quiet" 2>/dev/null
refused "no process" 4 "no process $quiet" "$tool" record "$quiet" -o "$work/gone"
[ ! -e "$work/gone" ] || fail "no process: created the output directory"
echo PASS
