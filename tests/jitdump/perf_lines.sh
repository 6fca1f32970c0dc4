#!/usr/bin/env bash
# perf maps samples to the source lines of CODE_DEBUG_INFO: every range of a
# three-line table, including the last one (which ends with the region's
# last instructions and is only closed by jitframes' closing entry).
. "$(dirname "$0")/perf_lib.sh"

record lines -- --workload lines --seconds 0.8
"$PERF_READ" script -i "$DIR/perf.jit.data" \
  -F ip,sym,srcline -G 2>/dev/null >"$DIR/script.txt"
awk '
  prev == "mj_lines" && NF == 1 { count[$1]++; total++ }
  { prev = (NF >= 2 ? $2 : "") }
  END { for (l in count) printf "%s %d %d\n", l, count[l], total }' "$DIR/script.txt" | sort >"$DIR/lines.txt"
cat "$DIR/lines.txt"
total=$(awk 'NR == 1 { print $3 }' "$DIR/lines.txt")
[ -n "$total" ] && [ "$total" -ge 150 ] || fail "too few samples in mj_lines: ${total:-0}"
for line in 10 20 30; do
  n=$(awk -v l="minijit_program.mj:$line" '$1 == l { print $2 }' "$DIR/lines.txt")
  [ -n "$n" ] && [ $((n * 100)) -ge $((total * 20)) ] || fail "line $line: ${n:-0} of $total samples"
done
other=$(awk '$1 !~ /^minijit_program\.mj:(10|20|30)$/ { s += $2 } END { print s + 0 }' "$DIR/lines.txt")
[ $((other * 100)) -le "$total" ] || fail "$other of $total samples in mj_lines have no or a wrong line"
echo "ok"
