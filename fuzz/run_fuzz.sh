#!/usr/bin/env bash
# Run the fuzz target for a bounded time on a copy of the seed corpus.
# Fails (non-zero) on any crash, sanitizer report, leak or timeout.
# Usage: run_fuzz.sh FUZZER SEED_DIR SECONDS
set -eu
fuzzer=$1 seeds=$2 seconds=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cd "$work" # crash-* files land here and are printed by libFuzzer
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 "$work/corpus" "$seeds"
