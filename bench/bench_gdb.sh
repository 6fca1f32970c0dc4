#!/usr/bin/env bash
# The gdb sink under a live debugger. Usage: bench_gdb.sh BENCH_GDB [naive]
#   scale:  registration costs at 1k/10k/100k live regions, 100k via the batch
#           API, one `bt` (gdb runs the program: its JIT breakpoint is live)
#   attach: gdb attaching to a process holding 100k regions, then `bt`
#   naive:  (only with the "naive" argument: takes minutes) one symfile per
#           registration up to 10,000 regions, for comparison
set -uo pipefail
bench=$1
echo "== without a debugger (our own cost)"
timeout 300 "$bench" scale 2>&1 | grep -v '^$' || true

echo "== under gdb"
timeout 600 gdb -nx -batch -ex run \
  -ex 'python import time; t = time.perf_counter(); gdb.execute("bt", to_string=True); print("bt: %.3f s" % (time.perf_counter() - t))' \
  -ex 'bt 2' -ex kill --args "$bench" scale 2>&1 | grep -E 'live|batch|^bt|^#'

echo "== attach"
out=$(mktemp); trap 'rm -f "$out"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null' EXIT
"$bench" hold >"$out" 2>&1 & pid=$!
for _ in $(seq 600); do grep -q ready "$out" && break; sleep 0.2; done
cat "$out"
start=$(date +%s%N)
timeout 300 gdb -nx -batch -p "$pid" -ex 'bt 3' -ex 'info symbol jit_fn_99999' -ex detach 2>&1 | grep -E '^#|jit_fn'
end=$(date +%s%N)
echo "attach + bt: $(( (end - start) / 1000000 )) ms"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=

if [ "${2:-}" = naive ]; then
  echo "== naive (one symfile per registration) under gdb"
  timeout 1200 gdb -nx -batch -ex run --args "$bench" naive 2>&1 | grep naive
fi
