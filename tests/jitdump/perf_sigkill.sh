#!/usr/bin/env bash
# A JIT killed with SIGKILL leaves its dump untrimmed: complete records, then
# the zero-filled reserved tail. perf must read it as the end and still name
# every sample.
. "$(dirname "$0")/perf_lib.sh"

ALLOW_KILLED=1 record sigkill -- --workload lines --seconds 0.5 --kill-self
dump=$(ls "$DIR"/jit-*.dump)
size=$(stat -c %s "$dump")
tail_bytes=$(tail -c 4096 "$dump" | od -An -v -tx1 | tr -d ' \n' | tr -d 0)
echo "dump $size bytes, last 4096 bytes zero: $([ -z "$tail_bytes" ] && echo yes || echo no)"
[ -z "$tail_bytes" ] || fail "the killed writer's dump has no zero tail (was it trimmed?)"
grep -q "jitted code must be sampled" "$DIR/inject.log" && fail "inject refused the dump"
"$PERF_READ" script -i "$DIR/perf.jit.data" -F ip,sym 2>/dev/null >"$DIR/script.txt"
named=$(awk '$2 == "mj_lines"' "$DIR/script.txt" | wc -l)
unknown=$(awk '$2 == "[unknown]"' "$DIR/script.txt" | wc -l)
echo "after SIGKILL: $named samples named mj_lines, $unknown unnamed"
[ "$named" -ge 50 ] || fail "perf did not name the JIT code of the killed process"
[ $((unknown * 100)) -le $((named * 2)) ] || fail "too many unnamed samples: $unknown"
ls "$DIR"/jitted-*.so >/dev/null || fail "no jitted-*.so"
echo "ok"
