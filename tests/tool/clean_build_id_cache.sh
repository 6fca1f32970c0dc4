#!/usr/bin/env bash
# `jitframes clean --buildid-dir DIR` removes what `perf inject --jit` put in
# perf's build-id cache for processes that are gone, and nothing else:
# a real `perf record -k 1` + `perf inject --jit` of minijit (HOME in a
# temporary directory: the real ~/.debug is never touched) leaves
# <cache>/<dir>/jitted-PID-N.so/<build-id>/{elf,probes} and
# <cache>/.build-id/xx/yyyy links; --dry-run lists them and removes nothing;
# the real run removes them and their links, and keeps perf's other entries
# (libc, [vdso], ...), a running process's entry, a symlink named like an
# entry (never followed), an entry holding a symlink, a name whose pid is not
# canonical, and a .build-id link pointing elsewhere. As root: another user
# sees nothing of root's entries; root removes anyone's.
# Usage: clean_build_id_cache.sh JITFRAMES_TOOL MINIJIT
set -uo pipefail
tool=$(realpath "$1") minijit=$(realpath "$2")
fail() { echo "FAIL: $*"; exit 1; }
command -v perf >/dev/null 2>&1 || { echo "SKIP: perf is not installed"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: minijit emits x86_64 code only"; exit 77; }
w=$(mktemp -d "${TMPDIR:-/tmp}/jf-clean-cache.XXXXXX")
live=
trap '[ -n "$live" ] && kill "$live" 2>/dev/null; rm -rf "$w"' EXIT
chmod 755 "$w"
export HOME=$w/home
unset PERF_BUILDID_DIR
mkdir -p "$HOME" "$w/rec" "$w/none" "$w/outside"
cache=$HOME/.debug

(cd "$w/rec" && JITFRAMES=jitdump JITFRAMES_DIR=$w/rec \
   timeout 120 perf record -q -k 1 -e cpu-clock -o perf.data -- "$minijit" >record.log 2>&1) ||
  fail "perf record: $(cat "$w/rec/record.log")"
timeout 120 perf inject --jit -i "$w/rec/perf.data" -o "$w/rec/perf.jit.data" >"$w/rec/inject.log" 2>&1 ||
  fail "perf inject: $(cat "$w/rec/inject.log")"
entries() { find "$cache" -name 'jitted-*.so' -type d | wc -l; }
links_to_jitted() { find "$cache/.build-id" -type l -lname '*/rec/jitted-*' | wc -l; } # the recording's
n=$(entries) l=$(links_to_jitted) others=$(find "$cache" -path "$cache/.build-id" -prune -o -print | grep -vc jitted-)
# perf's entries for what else the samples hit (libc, [vdso]... as it happens):
# every file among them must survive clean.
find "$cache" -path "$cache/.build-id" -prune -o ! -type d -print | grep -v jitted- >"$w/others.before"
[ -s "$w/others.before" ] || fail "perf cached nothing but the jitted code: $(find "$cache" | head -20)"
echo "perf inject left $n jitted entries, $l .build-id links to them, $others other cache paths"
[ "$n" -gt 0 ] && [ "$l" -eq "$n" ] || fail "perf's cache is not as expected: $(find "$cache" | head -20)"

id40() { printf '%040x' "$1"; }
entry() { # DIR PID N IDNUM: a hand-made entry as perf makes them, with its link
  local e=$cache/$1/jitted-$2-$3.so/$(id40 "$4") id
  id=$(id40 "$4")
  mkdir -p "$e" "$cache/.build-id/${id:0:2}"
  printf '\177ELF' >"$e/elf"; : >"$e/probes"
  ln -s "../../$1/jitted-$2-$3.so/$id" "$cache/.build-id/${id:0:2}/${id:2}"
}
dead=$(sh -c 'echo $$') dead2=$(sh -c 'echo $$')
sleep 300 & live=$!
entry hand "$live" 1 1                                 # its process runs
entry hand "0$dead" 1 2                                # not canonical
entry hand "$dead" 3 3                                 # litter, with a link
echo precious >"$w/outside/elf"
mkdir -p "$cache/hand/jitted-$dead-4.so/$(id40 4)" "$w/outside/$(id40 5)"
ln -s "$w/outside/elf" "$cache/hand/jitted-$dead-4.so/$(id40 4)/elf" # holds a symlink
cp "$w/outside/elf" "$w/outside/$(id40 5)/elf"
ln -s "$w/outside" "$cache/hand/jitted-$dead-5.so"    # a symlink named like an entry
id=$(id40 3); rm "$cache/.build-id/${id:0:2}/${id:2}"
ln -s "../../elsewhere/$id" "$cache/.build-id/${id:0:2}/${id:2}" # a link pointing elsewhere

out=$("$tool" clean --dry-run --dir "$w/none" --buildid-dir "$cache") || fail "dry run failed: $out"
echo "$out"
grep -q "^would remove $cache/.*/jitted-[0-9]*-[0-9]*.so (process [0-9]*: no such process)" <<<"$out" ||
  fail "the dry run does not list perf's entries"
grep -q "clean: would remove $((n + 1)) files" <<<"$out" || fail "dry run: wrong count"
[ "$(entries)" -eq $((n + 4)) ] || fail "the dry run removed something" # and 4 hand-made directories

out=$("$tool" clean --dir "$w/none" --buildid-dir "$cache"); rc=$?; echo "$out"
[ $rc -eq 0 ] || fail "exit status $rc"
[ "$(find "$cache" -name 'jitted-*.so' -path '*/rec/*' | wc -l)" -eq 0 ] || fail "perf's entries are still there"
[ "$(links_to_jitted)" -eq 0 ] || fail ".build-id links to removed entries remain: $(find "$cache/.build-id" -lname '*/rec/jitted-*')"
[ ! -e "$cache/hand/jitted-$dead-3.so" ] || fail "the hand-made litter entry is still there"
[ -L "$cache/.build-id/${id:0:2}/${id:2}" ] || fail "a .build-id link pointing elsewhere was removed"
[ -d "$cache/hand/jitted-$live-1.so/$(id40 1)" ] || fail "a running process's entry was removed"
[ -d "$cache/hand/jitted-0$dead-1.so" ] || fail "a non-canonical name was removed"
[ -L "$cache/hand/jitted-$dead-4.so/$(id40 4)/elf" ] || fail "an entry holding a symlink was removed"
[ -L "$cache/hand/jitted-$dead-5.so" ] && [ -f "$w/outside/$(id40 5)/elf" ] && [ -f "$w/outside/elf" ] ||
  fail "a symlinked entry was followed or removed"
grep -q "kept $cache/hand/jitted-$live-1.so: its process is running" <<<"$out" || fail "the running entry not explained"
grep -q "kept $cache/hand/jitted-$dead-4.so: it holds something other than" <<<"$out" || fail "the symlink holder not explained"
now=$(find "$cache" -path "$cache/.build-id" -prune -o -print | grep -vc jitted-)
while read -r f; do [ -e "$f" ] || [ -L "$f" ] || fail "perf's other entry $f was removed"; done <"$w/others.before"
echo "perf's other cache paths: $others before, $now after (the emptied directories of the recording gone)"

if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
  entry hand "$dead2" 1 6
  out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$tool" clean --dir "$w/none" --buildid-dir "$cache" 2>&1)
  [ -d "$cache/hand/jitted-$dead2-1.so" ] || fail "nobody removed root's entry"
  ! grep -q "jitted-$dead2-1.so" <<<"$out" || fail "nobody's run mentions root's entry: $out"
  chown -R nobody "$cache/hand/jitted-$dead2-1.so"
  "$tool" clean --dir "$w/none" --buildid-dir "$cache" >/dev/null
  [ ! -e "$cache/hand/jitted-$dead2-1.so" ] || fail "root did not remove nobody's entry"
else
  echo "note: not root: the other-user cases need root and setpriv"
fi
echo PASS
