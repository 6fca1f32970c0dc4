#!/usr/bin/env bash
# record_writes_only_in_the_directory_it_made: root's `jitframes record`
# against a hostile target run as nobody (hostile_jit_target.py), which maps
# jitdumps of its own (jit-0PID.dump, jit-PID.dump outside its jitdump
# directory, one under a "..." directory) beside symlinks jitted-PID-7.so ->
# root-only victim files, and names its code with ESC/OSC 52/C1/U+202E:
# - both routes (--via memory, --via channel): every victim unchanged, the
#   target's symlinks still symlinks, nothing added to its directories;
#   record's output shows the names' controls escaped (no ESC, C1 or U+202E
#   byte) and its flame graph page is valid (names in JSON, no raw control);
# - the confinement on its own: a command run through jfrecord_confine.py
#   writes in the directory it was given and nowhere else (a victim file,
#   /tmp, a sysctl), cannot remount, and runs as neither root nor the target;
# - an output directory nobody made, with DIR/jit -> a root directory and
#   DIR/flamegraph.html -> a root file: refused in one line, both intact;
#   without -o, in a sticky world-writable directory where nobody made the
#   default names of the next 120 seconds: a fresh directory of root's,
#   nobody's untouched;
# - a jitdump the target extends to a sparse 3 GiB (over the 1 GiB cap) or
#   512 MiB: not copied (the output never holds 64 MiB, the reason said).
# Usage: record_own_files.sh JITFRAMES_TOOL HOSTILE_TARGET LIBJITFRAMES CONFINE BUILD_DIR
set -uo pipefail
tool=$(realpath "$1") target_py=$(realpath "$2") lib=$(realpath "$3") confine=$(realpath "$4") build=$5
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (the target runs as nobody, record as root)"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the hostile target's code is x86_64"; exit 77; }

chmod 755 "$work"
cp "$target_py" "$work/target.py" && cp "$lib" "$work/libjitframes.so" && chmod 755 "$work/target.py" "$work/libjitframes.so"
# The victims: root's, in a directory nobody cannot enter.
mkdir -m 700 "$work/root-only" "$work/root-only/dir"
for v in 1 2 3; do echo "root's file $v" >"$work/root-only/victim$v"; done
echo "root's file in its directory" >"$work/root-only/dir/kept"
victims() { (cd "$work/root-only" && find . -printf '%p %y %i %s %T@ %u %m\n' | sort && sha256sum victim* dir/kept); }
victims_before=$(victims)
check_victims() {
  [ "$(victims)" = "$victims_before" ] || fail "$1: a victim changed: $(diff <(echo "$victims_before") <(victims))"
}
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# hostile NAME MODE [VAR=VALUE...]: start the target as nobody in $work/NAME; sets target, own.
hostile() {
  local name=$1 mode=$2; shift 2
  own=$work/$name; mkdir -m 755 "$own" && chown nobody "$own"
  mkdir -m 755 "$own/dump" && chown nobody "$own/dump"
  setpriv --reuid=nobody --regid=nogroup --clear-groups env -i PATH=/usr/bin:/bin "$@" /usr/bin/python3 "$work/target.py" "$work/libjitframes.so" "$own" \
    "$work/root-only/victim1" "$work/root-only/victim2" "$work/root-only/victim3" "$mode" >"$work/$name.target.log" 2>&1 &
  target=$!; pids+=("$target")
  for _ in $(seq 200); do [ -e "$own/ready" ] && break; sleep 0.05; done
  [ -e "$own/ready" ] || fail "$name: the target did not start: $(cat "$work/$name.target.log")"
  forget_stale_files "$target" # an earlier root process's /tmp/perf-PID.map would refuse nobody's
  own_before=$(own_files)
}
own_files() { (cd "$own" && find a b ... -printf '%p %y %i %s %l\n' | sort); }
check_own() {
  [ "$(own_files)" = "$own_before" ] || fail "$1: the target's directories changed: $(diff <(echo "$own_before") <(own_files))"
  for d in a b ...; do [ -L "$own/$d/jitted-$target-7.so" ] || fail "$1: $own/$d/jitted-$target-7.so is no longer a symlink"; done
}
raw_controls() { # FILE: lines holding ESC, a C1 control (UTF-8 C2 80-9F) or U+202E
  LC_ALL=C grep -naP '\x1b|\xc2[\x80-\x9f]|\xe2\x80\xae' "$1"
}
# record_run NAME ARGS...: record the target; sets rc, log (stdout and stderr), out.
record_run() {
  local name=$1; shift
  out=$work/out.$name log=$work/$name.log
  "$tool" record "$target" --duration 2 -o "$out" "$@" >"$log" 2>&1; rc=$?
  echo "--- record, $name: exit status $rc"; cat -v "$log" | head -40
  ! grep -q Traceback "$log" || fail "$name: a Python traceback"
}
check_page() { # OUT [NAME]: the page's data parses (holding NAME, a raw string), no raw control in it
  [ -s "$1/flamegraph.html" ] || fail "$1: no flame graph page"
  ! raw_controls "$1/flamegraph.html" >/dev/null || fail "$1: raw controls in the page: $(raw_controls "$1/flamegraph.html" | cut -c1-200 | cat -v)"
  python3 - "$1/flamegraph.html" "${2:-}" <<'EOF' || fail "$1: the page's data is not valid JSON holding the name"
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
views = json.loads(re.search(r"var views = (\{.*\});\n", page).group(1).replace("<\\/", "</"))
names = set()
def walk(node):
    names.add(node["name"])
    for c in node.get("children", []):
        walk(c)
for v in views.values():
    walk(v)
sys.exit(0 if not sys.argv[2] or any(sys.argv[2] in n for n in names) else 1)
EOF
}

# 1. --via memory: the target's own jitdump mappings are dropped.
hostile mem plain
record_run mem --via memory
[ "$rc" -eq 0 ] || fail "mem: record exit status $rc"
grep -q "via memory (followed" "$log" || fail "mem: not through memory"
check_victims mem; check_own mem
! raw_controls "$log" || fail "mem: raw controls in record's output"
check_page "$out"
[ "$(stat -c %U "$out")" = root ] && [ "$(stat -c %a "$out")" = 700 ] || fail "mem: $out is not root's 0700"
[ -z "$(find "$out" ! -user root)" ] || fail "mem: files in $out not root's: $(find "$out" ! -user root)"

# 2. An output directory nobody made, and the default names in a sticky directory.
mkdir -m 755 "$work/premade" && chown nobody "$work/premade"
as_nobody sh -c 'ln -s "$1/root-only/dir" "$2/jit" && ln -s "$1/root-only/victim1" "$2/flamegraph.html"' sh "$work" "$work/premade"
"$tool" record "$target" --via memory --duration 1 -o "$work/premade" >"$work/premade.out" 2>"$work/premade.err"; rc=$?
echo "--- -o a directory nobody made: exit status $rc: $(cat "$work/premade.err")"
[ "$rc" -eq 2 ] && [ "$(wc -l <"$work/premade.err")" -eq 1 ] && grep -q "exists: record makes its output directory itself" "$work/premade.err" ||
  fail "premade: not refused in one line"
check_victims premade
mkdir -m 1777 "$work/sticky"
now=$(date +%s)
as_nobody sh -c 'cd "$1" && for t in $(seq "$2" "$(($2 + 120))"); do
    d=jitframes-record-$3-$(date -d "@$t" +%Y%m%d-%H%M%S); mkdir -m 777 "$d" &&
    ln -s "$4/root-only/dir" "$d/jit" && ln -s "$4/root-only/victim1" "$d/flamegraph.html"; done' sh "$work/sticky" "$now" "$target" "$work"
premade=$(ls "$work/sticky" | sort)
(cd "$work/sticky" && "$tool" record "$target" --via memory --duration 1 >"$work/sticky.log" 2>&1); rc=$?
echo "--- default name in a sticky directory: exit status $rc"; cat -v "$work/sticky.log" | tail -5
[ "$rc" -eq 0 ] || fail "sticky: record exit status $rc"
made=$(comm -13 <(echo "$premade") <(ls "$work/sticky" | sort))
[ "$(echo "$made" | wc -w)" -eq 1 ] && [ "$(stat -c %U "$work/sticky/$made")" = root ] && [ -s "$work/sticky/$made/perf.data" ] ||
  fail "sticky: no fresh directory of root's holding perf.data (new: $made)"
[ -z "$(find "$work/sticky" -mindepth 2 -path "*/jitframes-record-*" -user root ! -path "$work/sticky/$made*")" ] ||
  fail "sticky: root wrote into nobody's directories"
check_victims sticky
kill "$target"

# 3. --via channel: the same lies through a target that listens.
hostile chan plain JITFRAMES_CONTROL=1 JITFRAMES_DIR="$work/chan/dump"
record_run chan --via channel
[ "$rc" -eq 0 ] || fail "chan: record exit status $rc"
check_victims chan; check_own chan
! raw_controls "$log" || fail "chan: raw controls in record's output"
grep -qF '\x1b]52;c;cHduZWQ=\x07\x1b[2Jspin_b\x9b\u202e' "$log" || fail "chan: the perf map's name is not shown escaped"
check_page "$out" "$(printf '\033]52;c;cHduZWQ=\007')"
[ -z "$(find "$out" ! -user root)" ] || fail "chan: files in $out not root's"
kill "$target"

# 4. A jitdump extended to a sparse 3 GiB (over the cap), and to 512 MiB: not copied.
# sparse NAME BYTES REASON
# (The output's size is sampled while record runs: the old copy was removed after inject.)
peak_kib() { # DIR STOP: the most KiB DIR held, every 0.1 s until STOP exists (at most 300 s), into STOP.peak
  local max=0 k
  for _ in $(seq 3000); do
    [ -e "$2" ] && break
    k=$(du -sk "$1" 2>/dev/null | cut -f1); [ "${k:-0}" -gt "$max" ] && max=$k
    sleep 0.1
  done
  echo "$max" >"$2.peak"
}
sparse() {
  hostile "$1" "sparse=$2" JITFRAMES_CONTROL=1 JITFRAMES=jitdump JITFRAMES_DIR="$work/$1/dump"
  peak_kib "$work/out.$1" "$work/$1.stop" & local sampler=$!
  record_run "$1" --via channel
  touch "$work/$1.stop"; wait "$sampler"
  used=$(cat "$work/$1.stop.peak")
  echo "$1: $out held at most $used KiB"
  [ "$used" -lt 65536 ] || fail "$1: the output held $used KiB"
  grep -q "no perf.jit.data: jit-$target.dump $3" "$log" || fail "$1: not refused for the right reason"
  check_victims "$1"
  kill "$target"
}
sparse sparse-3g 3221225472 "holds 3221225472 bytes, more than the 1073741824 copied at most"
sparse sparse-512m 536870912 "is sparse (536870912 bytes, [0-9]* allocated): not copied"

# 5. The confinement by itself: asked to write everywhere, it writes only in its directory.
mkdir -m 700 "$work/confined" && chown 1785001234:1785001234 "$work/confined"  # as record gives DIR to its helpers
echo 0 >"$work/tmp-victim"
exec 9<"$work/confined"
python3 "$confine" 9 1785001234 dac_read_search,sys_ptrace -- sh -c '
  id -u >uid; echo written >inside
  echo changed >"$1/root-only/victim1" && echo "wrote a victim"
  echo changed >"$1/tmp-victim" && echo "wrote /tmp"
  touch "$1/new-file" && echo "created a file outside"
  d=$(cat /proc/sys/kernel/domainname); echo "$d" >/proc/sys/kernel/domainname && echo "wrote a sysctl"
  mount -o remount,rw / 2>/dev/null && echo "remounted /"
  exit 0' sh "$work" >"$work/confine.out" 2>"$work/confine.err"; rc=$?
exec 9<&-
echo "--- confined: exit status $rc: $(cat "$work/confine.out") / $(head -c 600 "$work/confine.err")"
[ "$rc" -eq 0 ] && [ "$(cat "$work/confined/inside" 2>/dev/null)" = written ] || fail "confined: could not write in its directory"
[ ! -s "$work/confine.out" ] || fail "confined: $(cat "$work/confine.out")"
[ "$(cat "$work/confined/uid")" = 1785001234 ] || fail "confined: ran as uid $(cat "$work/confined/uid")"
[ "$(cat "$work/tmp-victim")" = 0 ] && [ ! -e "$work/new-file" ] || fail "confined: wrote outside"
check_victims confined
echo PASS
