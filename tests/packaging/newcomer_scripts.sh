#!/usr/bin/env bash
# The top-level scripts as a newcomer meets them (README's Quick start):
#   cache:  scripts/test's perf build-id cache checks (scripts/debug-cache.sh)
#           with a fresh HOME that has no ~/.debug: an empty cache, no exit
#           (find under pipefail once ended scripts/test silently), and an
#           entry added there is still reported;
#   deps:   scripts/deps stopping on a failed apt-get says which command failed;
#   demo:   scripts/demo stopping on a failure inside one of its functions
#           says which command failed (its ERR trap once missed functions).
# Usage: newcomer_scripts.sh cache|deps|demo SOURCE_DIR
set -euo pipefail
mode=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

case $mode in
cache)
  mkdir "$tmp/home"
  out=$(HOME=$tmp/home bash -c '
    set -Eeuo pipefail
    source "$1/scripts/debug-cache.sh"
    cache_entries >"$2/before"
    cache_unchanged plain "$2/before"
    echo "unchanged: yes"
    mkdir -p "$HOME/.debug/.build-id/ab"
    cache_unchanged plain "$2/before" || echo "unchanged: no"' _ "$src" "$tmp" 2>&1) ||
    fail "the cache checks ended the script with a fresh HOME (no ~/.debug): $out"
  echo "$out"
  grep -qx 'unchanged: yes' <<<"$out" || fail "a missing ~/.debug did not count as an unchanged cache"
  grep -q "^FAIL: the plain suite added 3 entries to $tmp/home/.debug" <<<"$out" &&
    grep -q "$tmp/home/.debug/.build-id/ab" <<<"$out" && grep -qx 'unchanged: no' <<<"$out" ||
    fail "entries added to a new ~/.debug were not reported"
  ;;
deps)
  # Every package looks missing and apt-get fails without a word, as a
  # broken mirror or a held lock may make it.
  mkdir "$tmp/bin"
  printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/dpkg-query"
  printf '#!/bin/sh\nexit 100\n' >"$tmp/bin/apt-get"
  printf '#!/bin/sh\n[ "$1" = -n ] && shift; exec "$@"\n' >"$tmp/bin/sudo"
  chmod +x "$tmp/bin/"*
  rc=0
  PATH=$tmp/bin:$PATH "$src/scripts/deps" build >"$tmp/out" 2>&1 || rc=$?
  cat "$tmp/out"
  [ "$rc" -ne 0 ] || fail "scripts/deps exited 0 although apt-get failed"
  grep -q 'scripts/deps: stopped: ".*apt-get update -qq" failed (exit 100) at line [0-9]' "$tmp/out" ||
    fail "scripts/deps stopped (exit $rc) without naming the command that failed"
  ;;
demo)
  # A build tree with an interpreter line and a perf that records nothing:
  # the demo's record function finds no pid file.
  mkdir -p "$tmp/build/bindings/python" "$tmp/bin"
  echo "cp311 /usr/bin/python3 $tmp/nowhere" >"$tmp/build/bindings/python/interpreters.txt"
  printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/perf"
  chmod +x "$tmp/bin/perf"
  rc=0
  PATH=$tmp/bin:$PATH JITFRAMES_DEMO_BUILD=$tmp/build JITFRAMES_DEMO_OUT=$tmp/out \
    "$src/scripts/demo" >"$tmp/log" 2>&1 || rc=$?
  cat "$tmp/log"
  [ "$rc" -ne 0 ] || fail "scripts/demo exited 0 with a perf that records nothing"
  grep -q 'scripts/demo: stopped: ".*cat .*pid.*" failed (exit 1) at line [0-9]' "$tmp/log" ||
    fail "scripts/demo stopped (exit $rc) without naming the command that failed"
  ;;
*) fail "unknown mode $mode" ;;
esac
echo PASS
