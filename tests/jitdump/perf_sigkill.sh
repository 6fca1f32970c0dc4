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
total=$(perf script -i "$DIR/perf.jit.data" -F ip,sym 2>/dev/null | awk '$2 == "mj_lines"' | wc -l)
echo "mj_lines samples after SIGKILL: $total"
[ "$total" -ge 300 ] || fail "perf did not name the JIT code of the killed process"
ls "$DIR"/jitted-*.so >/dev/null || fail "no jitted-*.so"
echo "ok"
