#!/usr/bin/env bash
# record_ignores_what_a_hostile_target_says: root's `jitframes record`
# against a fake listener run as `nobody` (lying_listener.py) that answers
# the control protocol with lies in every field of every reply (another
# process's pid, uid 0, a dump directory of its choosing, absurd counters,
# sinks it never turned on, a reply size that does not match). Victims: a
# live root process's /tmp/perf-V.map and a root-owned jit-V.dump in the
# directory the liar names; files planted during the recording under the
# liar's own names (root-owned ones, symlinks to the victims). Every one
# survives unchanged, record says why it left what it left and does not exit
# 0; only a perf map the liar really wrote itself is removed; a reply of the
# wrong size fails the recording before anything is created.
# Usage: record_hostile_target.sh JITFRAMES_TOOL LYING_LISTENER BUILD_DIR
set -uo pipefail
tool=$(realpath "$1") listener=$(realpath "$2") build=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (the liar runs as nobody, record as root)"; exit 77; }
planted=() on_exit='rm -f "${planted[@]}"'

# nobody must reach the listener and its directories (mktemp -d is 0700),
# and runs the system python3 (a pyenv shim under /root is out of its reach).
chmod 755 "$work"
cp "$listener" "$work/listener.py" && chmod 755 "$work/listener.py"

# The victims: a live root process with a perf map, a root-owned jitdump.
sleep 600 & victim=$!; pids+=("$victim")
vmap=/tmp/perf-$victim.map
(set -o noclobber; echo "4000 10 victim_function" >"$vmap") || fail "cannot create $vmap"
planted+=("$vmap")
mkdir -m 755 "$work/victim"
jitdump_header() { # FILE PID: a jitdump header (magic, version 1, size 40, pid)
  python3 -c 'import struct,sys; open(sys.argv[1],"xb").write(struct.pack("<IIIIIIQQ",0x4A695444,1,40,62,0,int(sys.argv[2]),0,0))' "$1" "$2"
}
vdump=$work/victim/jit-$victim.dump
jitdump_header "$vdump" "$victim"
fingerprint() { stat -c '%n %i %s %Y %U %h %F' "$@"; sha256sum "$@"; }
victims_before=$(fingerprint "$vmap" "$vdump")

# liar MODE DUMP_DIR: start the listener as nobody; sets liar, markers.
liar() {
  markers=$work/markers.$1; mkdir -m 777 "$markers"
  setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 "$work/listener.py" "$victim" "$2" \
    "$markers" "$1" >"$work/liar.$1.log" 2>&1 &
  liar=$!; pids+=("$liar")
  # The liar writes no file: a perf map or jitdump in /tmp named for its pid
  # is an earlier process's that had the pid (a busy /tmp holds hundreds).
  rm -f "/tmp/perf-$liar.map" "/tmp/jit-$liar.dump"
  for _ in $(seq 200); do
    grep -q "@jitframes/$liar\." /proc/net/unix 2>/dev/null && return 0
    sleep 0.05
  done
  fail "the liar ($1) does not listen: $(cat "$work/liar.$1.log")"
}

# record_liar NAME [ACTION]: record the liar for 3 s; ACTION runs (as root)
# once the liar was asked to enable, i.e. during the recording. Sets rc, log.
record_liar() {
  local name=$1 action=${2:-}
  log=$work/$name.log
  "$tool" record "$liar" --via channel --duration 3 -o "$work/out.$name" >"$log" 2>&1 &
  local rec=$!
  if [ -n "$action" ]; then
    for _ in $(seq 400); do [ -e "$markers/enabled" ] && break; sleep 0.05; done
    [ -e "$markers/enabled" ] || fail "$name: record never asked the liar to enable"
    $action
  fi
  wait "$rec"; rc=$?
  echo "--- record, $name: exit status $rc"; cat "$log"
  ! grep -q Traceback "$log" || fail "$name: a Python traceback"
}

check_victims() {
  [ "$(fingerprint "$vmap" "$vdump")" = "$victims_before" ] || fail "$1: a victim changed:
$victims_before
now:
$(fingerprint "$vmap" "$vdump" 2>&1)"
  [ "$(ls "$work/victim")" = "jit-$victim.dump" ] || [ "$1" = "lie" ] || fail "$1: $work/victim now holds $(ls "$work/victim")"
}

# 1. Lies only, and root plants files under the liar's own names while it
# records: new, named right, valid content, but root's: they stay.
plant_as_root() {
  lmap=/tmp/perf-$liar.map; planted+=("$lmap")
  (set -o noclobber; echo "5000 10 root_function" >"$lmap") || fail "cannot plant $lmap"
  jitdump_header "$work/victim/jit-$liar.dump" "$liar"
  root_planted=$(fingerprint "$lmap" "$work/victim/jit-$liar.dump")
}
liar lie "$work/victim"
record_liar lie plant_as_root
check_victims lie
[ "$rc" -ne 0 ] || fail "lie: record exited 0"
grep -q "contradict the kernel" "$log" || fail "lie: record does not say the answers contradict the kernel"
grep -q "left /proc/$liar/root/tmp/perf-$liar.map: owned by uid 0" "$log" || fail "lie: root's perf map not reported as left"
grep -q "left .*jit-$liar.dump: owned by uid 0" "$log" || fail "lie: root's jitdump not reported as left"
[ "$(fingerprint "$lmap" "$work/victim/jit-$liar.dump")" = "$root_planted" ] || fail "lie: a root file planted under the liar's names changed"
[ -s "$work/out.lie/perf.data" ] || fail "lie: no perf.data"
rm -f "$lmap" "$work/victim/jit-$liar.dump"
kill "$liar"

# 2. The liar plants symlinks to the victims under its own names, in /tmp and
# in a directory of its own that it names as its dump directory.
mkdir -m 755 "$work/liar-dir" && chown nobody "$work/liar-dir"
liar plant "$work/liar-dir"
planted+=("/tmp/perf-$liar.map")
record_liar plant
[ "$rc" -ne 0 ] || fail "plant: record exited 0"
[ -L "/tmp/perf-$liar.map" ] || fail "plant: the liar's symlink in /tmp was removed"
[ -L "$work/liar-dir/jit-$liar.dump" ] || fail "plant: the liar's symlink in its dump directory was removed"
grep -q "left /proc/$liar/root/tmp/perf-$liar.map: not a regular file" "$log" || fail "plant: the symlink not reported"
check_victims plant
rm -f "/tmp/perf-$liar.map"
kill "$liar"

# 3. The liar writes a perf map of its own: new, its uid, its name, a perf
# map's content. That one file is record's to remove.
liar own "$work/liar-dir"
planted+=("/tmp/perf-$liar.map")
record_liar own
[ -e "/tmp/perf-$liar.map" ] && fail "own: the perf map the liar wrote itself is still there"
[ "$rc" -ne 0 ] || fail "own: record exited 0 although the answers were lies"
check_victims own
kill "$liar"

# 4. A reply whose size is a lie: record fails before creating anything.
liar bad-size "$work/victim"
record_liar bad-size
[ "$rc" -ne 0 ] || fail "bad-size: record exited 0"
[ ! -e "$work/out.bad-size" ] || fail "bad-size: record created its output directory"
[ "$(grep -c . "$log")" -eq 1 ] || fail "bad-size: not one line"
check_victims bad-size
echo PASS
