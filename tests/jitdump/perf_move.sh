#!/usr/bin/env bash
# jf_move under the real perf: minijit --move copies its whole module
# elsewhere halfway through, says so with one jf_move_batch and unmaps the
# old copy. After `perf inject --jit`, samples before and after the move
# (told apart by time, and by address: the old and the new copy) carry the
# region's name and its source lines, and --call-graph dwarf unwinds through
# the moved frameless code to main (perf's CODE_MOVE mapping must cover the
# unwind data the .so holds).
. "$(dirname "$0")/perf_lib.sh"

# moved_at: "OLD NEW SIZE SECONDS" from minijit's "moved" line.
moved_at() {
  awk '/^moved / { print $2, $3, $4, $6 }' "$DIR/record.log"
}

# by_side SCRIPT_ARGS...: perf script output of the last recording, with
# every sample's header line ("time: [ip sym]") prefixed by "before"/"after"
# (its time against the move's) and "old"/"new"/"elsewhere" (its ip; "-"
# with call chains, whose addresses perf prints relative to their DSO).
by_side() {
  local old new size at
  read -r old new size at < <(moved_at)
  [ -n "${at:-}" ] || fail "minijit printed no 'moved' line"
  "$PERF_READ" script -i "$DIR/perf.jit.data" "$@" 2>/dev/null | awk -v old="$old" -v new="$new" \
      -v size="$size" -v at="$at" '
    function hex(s,   v, i, c) {
      sub(/^0x/, "", s); v = 0
      for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); v = v * 16 + c - 1 }
      return v
    }
    BEGIN { o = hex(old); n = hex(new) }
    /^ *[0-9]+\.[0-9]+:/ {
      ip = hex($2)
      where = NF < 2 ? "-" : ip >= o && ip < o + size ? "old" : ip >= n && ip < n + size ? "new" : "elsewhere"
      print ($1 + 0 < at ? "before" : "after"), where, $0
      next
    }
    { print }'
}

# Names and lines: every mj_lines sample before the move is in the old copy,
# after it in the new one, and each maps to one of its three lines.
record lines -- --workload lines --seconds 1 --move
by_side -F time,ip,sym,srcline -G | awk '
  $5 == "mj_lines" { key = $1 " " $2; getline; n[key " " $1]++ }
  END { for (k in n) print k, n[k] }' | sort >"$DIR/lines.txt"
cat "$DIR/lines.txt"
for side in "before old" "after new"; do
  total=$(awk -v s="$side" 'index($0, s " ") == 1 { t += $4 } END { print t + 0 }' "$DIR/lines.txt")
  [ "$total" -ge 150 ] || fail "$side: only $total samples in mj_lines"
  for line in 10 20 30; do
    c=$(awk -v s="$side" -v l="minijit_program.mj:$line" 'index($0, s " ") == 1 && $3 == l { print $4 }' "$DIR/lines.txt")
    [ -n "$c" ] && [ $((c * 100)) -ge $((total * 20)) ] || fail "$side, line $line: ${c:-0} of $total samples"
  done
done
stray=$(awk '$1 == "before" && $2 != "old" || $1 == "after" && $2 != "new" { s += $4 } END { print s + 0 }' "$DIR/lines.txt")
[ "$stray" -le 2 ] || fail "$stray mj_lines samples at the wrong copy for their time"
echo "names and lines: before the move in the old copy, after it in the new one"

# Call chains through the moved frameless code (it keeps no frame pointer:
# only the CFI can unwind it).
record frameless --call-graph dwarf -- --workload frameless --seconds 1 --move
by_side -F time,ip,sym | awk '
  BEGIN { RS = ""; FS = "\n" }
  {
    split($1, h, " ")
    split($2, leaf, " ")
    if (leaf[2] != "mj_frameless") next
    side = h[1] " " h[2]; total[side]++
    k = 0
    for (i = 3; i <= NF; i++) {
      split($i, g, " ")
      if (k == 0 && g[2] == "c_caller_frameless") k = 1
      else if (k == 1 && g[2] == "main") k = 2
    }
    if (k == 2) ok[side]++
  }
  END { for (s in total) print s, total[s], ok[s] + 0 }' | sort >"$DIR/chains.txt"
cat "$DIR/chains.txt"
for side in "before -" "after -"; do
  read -r total ok < <(awk -v s="$side" 'index($0, s " ") == 1 { print $3, $4 }' "$DIR/chains.txt")
  expect_share "frameless, dwarf, ${side% -} the move: caller and main below" "${total:-0}" "${ok:-0}" 99 100
done
echo "ok"
