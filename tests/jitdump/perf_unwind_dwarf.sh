#!/usr/bin/env bash
# perf --call-graph dwarf unwinds through frameless JIT code with the CFI
# jitframes writes (CODE_UNWINDING_INFO), and loses the caller without it.
. "$(dirname "$0")/perf_lib.sh"

record frameless --call-graph dwarf -- --workload frameless --seconds 0.6
read -r total ok < <(chain_stats mj_frameless c_caller_frameless main)
expect_share "frameless, dwarf, with CFI: caller and main below" "$total" "$ok" 99 100

record frameless-nocfi --call-graph dwarf -- --workload frameless --seconds 0.6 --no-unwind
read -r total ok < <(chain_stats mj_frameless c_caller_frameless main)
expect_at_most "frameless, dwarf, no CFI (negative control): caller found" "$total" "$ok" 10 100

# One region, two FDEs: samples in stencil B (frameless) show B, then A
# (framed), then the C caller; samples in A show A then the C caller.
record stencils --call-graph dwarf -- --workload stencils --seconds 0.8
read -r total ok < <(chain_stats mj_stencils c_caller_stencils main)
expect_share "stencils, both parts: caller and main below" "$total" "$ok" 99 100
read -r _ in_b < <(chain_stats mj_stencils mj_stencils c_caller_stencils main)
in_a=$((ok - in_b))
echo "stencils: $in_b samples in part B (frameless FDE, unwound through A), $in_a in part A (framed FDE)"
[ "$in_b" -ge 30 ] || fail "too few complete samples in stencil B: $in_b"
[ "$in_a" -ge 30 ] || fail "too few complete samples in stencil A: $in_a"

record framed --call-graph dwarf -- --workload framed --seconds 0.5
read -r total ok < <(chain_stats mj_framed c_caller_framed main)
expect_share "framed, dwarf: caller and main below" "$total" "$ok" 99 100
echo "ok"
