# perf's build-id cache (~/.debug) checks of scripts/test, sourced by it and
# by its test (tests/packaging/newcomer_scripts.sh): every perf run of the
# suite keeps its cache in its own directory (a private HOME, or
# --buildid-dir), so a suite that adds to the user's ~/.debug fails, with
# what it added. A user who never ran perf has no ~/.debug: that is an empty
# cache, not an error (find's failure under pipefail once ended scripts/test
# with no word).
debug_cache=${HOME:-/nonexistent}/.debug
cache_entries() { [ -d "$debug_cache" ] || return 0; find "$debug_cache" | LC_ALL=C sort; }
cache_unchanged() { # suite-name entries-before-file
  local added
  added=$(cache_entries | LC_ALL=C comm -13 "$2" -)
  [ -z "$added" ] && return 0
  echo "FAIL: the $1 suite added $(echo "$added" | wc -l) entries to $debug_cache (perf's build-id cache):"
  echo "$added" | head -20
  return 1
}
