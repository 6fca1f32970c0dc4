#!/usr/bin/env bash
# perf -g (frame pointers) walks through JIT code that keeps an rbp frame;
# a frameless function hides its caller (negative control).
. "$(dirname "$0")/perf_lib.sh"

record framed -g -- --workload framed --seconds 0.6
read -r total ok < <(chain_stats mj_framed c_caller_framed main)
expect_share "framed, -g: caller and main below" "$total" "$ok" 99 100

record frameless -g -- --workload frameless --seconds 0.6
read -r total ok < <(chain_stats mj_frameless c_caller_frameless main)
expect_at_most "frameless, -g (negative control): caller found" "$total" "$ok" 10 100
echo "ok"
