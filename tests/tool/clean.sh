#!/usr/bin/env bash
# `jitframes clean` removes exactly the files it can prove are litter: a perf
# map, jitdump or jitted-*.so of a process that is gone (or whose pid now
# belongs to a younger process), with the content its name says, owned by
# the caller (root: anyone), held by no running process, older than
# --older-than; --dry-run removes nothing. A jitdump whose writer died
# before its header was complete (empty, all zeros, a partial header) is
# litter too. Everything else stays: a running process's map or empty dump,
# a file another process holds open, a stranger's file named like a map, a
# symlink, a dump whose header names another pid or with data after zeros,
# a file with a second hard link, a name whose pid is not canonical decimal
# (perf-0123.map), another user's file when not root. Works in a private directory (--dir), never on
# the shared /tmp, so other tests' files are safe.
# Usage: clean.sh JITFRAMES_TOOL
set -uo pipefail
tool=$(realpath "$1")
fail() { echo "FAIL: $*"; exit 1; }
d=$(mktemp -d "${TMPDIR:-/tmp}/jf-clean.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$d"' EXIT
chmod 1777 "$d"

dead_pid() { sh -c 'echo $$' ; }             # a process that has exited
map_line() { printf '7f0000001000 40 js:fn\n'; }
dump_header() { # PID: a little-endian jitdump header naming PID
  python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, int(sys.argv[1]), 1, 0))' "$1"
}

make_files() {
  rm -rf "${d:?}"/*
  dead=$(dead_pid); dead2=$(dead_pid); dead3=$(dead_pid); dead4=$(dead_pid); dead5=$(dead_pid); dead6=$(dead_pid)
  dead7=$(dead_pid); dead8=$(dead_pid); dead9=$(dead_pid); dead10=$(dead_pid)
  sleep 3600 & live=$!; pids+=("$live")               # (every sleep is killed at exit)
  map_line >"$d/perf-$dead.map"                     # litter
  dump_header "$dead" >"$d/jit-$dead.dump"          # litter
  printf '\177ELF' >"$d/jitted-$dead-7.so"          # litter (perf inject's)
  map_line >"$d/perf-$live.map"                     # its process runs
  echo "not a perf map at all" >"$d/perf-$dead2.map" # a stranger's file
  ln -s "$d/perf-$dead.map" "$d/perf-$dead3.map"    # a symlink
  dump_header 1 >"$d/jit-$dead5.dump"               # names another pid
  map_line >"$d/perf-$dead4.map"                    # held open by a process below
  sleep 3600 <"$d/perf-$dead4.map" & holder=$!; pids+=("$holder")
  sleep 3600 & reused=$!; pids+=("$reused")          # a pid whose file predates it
  map_line >"$d/perf-$reused.map"; touch -d '1 hour ago' "$d/perf-$reused.map"
  map_line >"$d/perf-fresh.map"                     # not the pattern
  map_line >"$d/perf-0$dead.map"                    # not a pid in canonical form
  map_line >"$d/perf-4194305.map"                   # above any pid
  printf '\177ELF' >"$d/jitted-$dead-07.so"          # its index not canonical
  map_line >"$d/perf-$dead6.map"; ln "$d/perf-$dead6.map" "$d/hard-link" # two links
  # Dumps whose writer was killed before its header was complete: litter.
  : >"$d/jit-$dead7.dump"                                           # empty
  head -c 266240 /dev/zero >"$d/jit-$dead8.dump"                    # reserved, all zeros
  { printf 'DTiJ\1\0\0\0'; head -c 266232 /dev/zero; } >"$d/jit-$dead9.dump" # a partial header
  : >"$d/jit-$live.dump"                                            # its process runs
  { head -c 4096 /dev/zero; printf x; } >"$d/jit-$dead10.dump"      # zeros, then something
  # The holder has the map open once its shell did the redirection: wait for
  # that, not for a time.
  for _ in $(seq 1200); do
    [ "$(readlink "/proc/$holder/fd/0")" = "$d/perf-$dead4.map" ] && return 0
    sleep 0.05
  done
  fail "the process holding perf-$dead4.map did not open it in 60 s"
}

expect_present() { for f; do [ -e "$d/$f" ] || [ -L "$d/$f" ] || fail "$f was removed"; done; }
expect_absent() { for f; do [ ! -e "$d/$f" ] && [ ! -L "$d/$f" ] || fail "$f is still there"; done; }

# --dry-run: says what would go, removes nothing.
make_files
out=$("$tool" clean --dry-run --dir "$d"); echo "$out"
grep -q "would remove $d/perf-$dead.map" <<<"$out" || fail "dry run does not list the litter"
grep -q "clean: would remove 7 files" <<<"$out" || fail "dry run: wrong count"
expect_present "perf-$dead.map" "jit-$dead.dump" "jitted-$dead-7.so" "perf-$reused.map"

# The real run: the seven litter files go, everything else stays, with its reason.
out=$("$tool" clean --dir "$d"); rc=$?; echo "$out"
[ $rc -eq 0 ] || fail "exit status $rc"
expect_absent "perf-$dead.map" "jit-$dead.dump" "jitted-$dead-7.so" "perf-$reused.map"
expect_absent "jit-$dead7.dump" "jit-$dead8.dump" "jit-$dead9.dump"
expect_present "jit-$live.dump" "jit-$dead10.dump"
grep -q "kept $d/jit-$dead10.dump: its content is not" <<<"$out" || fail "a dump with data after zeros not explained"
expect_present "perf-$live.map" "perf-$dead2.map" "perf-$dead3.map" "perf-$dead4.map" "jit-$dead5.dump" perf-fresh.map
expect_present "perf-0$dead.map" perf-4194305.map "jitted-$dead-07.so" "perf-$dead6.map" hard-link
grep -q "kept $d/perf-$dead6.map: it has more than one hard link" <<<"$out" || fail "hard link not explained"
grep -q "kept $d/perf-$live.map: its process is running" <<<"$out" || fail "no reason for the running process's map"
grep -q "kept $d/perf-$dead4.map: a running process has it open" <<<"$out" || fail "held file not explained"
grep -q "kept $d/perf-$dead2.map: its content is not" <<<"$out" || fail "stranger's file not explained"
grep -q "kept $d/perf-$dead3.map: not a regular file" <<<"$out" || fail "symlink not explained"
grep -q "kept $d/jit-$dead5.dump: its content is not" <<<"$out" || fail "foreign dump not explained"
grep -q "perf-$reused.map (process $reused: its pid now belongs to a process started after" <<<"$out" ||
  fail "the reused pid's file was not removed for that reason"

# --older-than: a fresh litter file stays until it is old enough.
map_line >"$d/perf-$dead.map"
"$tool" clean --older-than 1h --dir "$d" | grep -q "kept $d/perf-$dead.map: newer than --older-than" ||
  fail "--older-than 1h removed a fresh file"
touch -d '2 hours ago' "$d/perf-$dead.map"
"$tool" clean --older-than 1h --dir "$d" >/dev/null; expect_absent "perf-$dead.map"
"$tool" clean --older-than 3x --dir "$d" >/dev/null 2>&1; [ $? -eq 2 ] || fail "a bad duration is not a usage error"

# Users: root removes anyone's litter; another user only their own, and does
# not even mention root's.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
  # nobody runs a copy the build tree's place cannot hide (a 0700 clone).
  . "$(dirname "$0")/../support/for_other_users.sh"
  bin=$(mktemp -d /tmp/jf-clean-bin.XXXXXX) && trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$d" "$bin"' EXIT
  tool_for_nobody=$(runnable_by_anyone "$bin" "$tool") || fail "cannot copy the tool for nobody"
  make_files
  chown nobody "$d/perf-$dead.map"
  out=$(as_nobody "$tool_for_nobody" clean --dir "$d"); echo "$out"
  expect_absent "perf-$dead.map"
  expect_present "jit-$dead.dump" "jitted-$dead-7.so"
  ! grep -q "jit-$dead.dump" <<<"$out" || fail "nobody's run mentions root's file"
  "$tool" clean --dir "$d" >/dev/null
  expect_absent "jit-$dead.dump" "jitted-$dead-7.so"
  map_line >"$d/perf-$dead2.map"; chown nobody "$d/perf-$dead2.map"
  "$tool" clean --dir "$d" >/dev/null; expect_absent "perf-$dead2.map" # root: anyone's
else
  echo "note: not root: the other-user cases need root and setpriv"
fi
echo PASS
