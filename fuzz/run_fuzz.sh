#!/usr/bin/env bash
# Run the fuzz target on a copy of the seed corpus, for at most SECONDS and
# at most RUNS inputs. Fails (non-zero) on any crash, sanitizer report, leak
# or timeout.
# The test suite runs it with a fixed seed, so a CI run explores exactly the
# inputs a developer's run of the same commit explored (a slower machine a
# prefix of them): it cannot turn red on an input nobody has seen. Set
# JITFRAMES_FUZZ_SEED=0 for a random seed (libFuzzer's own choice) when
# hunting; every crash found is kept in the corpus as a regress-* seed.
# Usage: run_fuzz.sh FUZZER SEED_DIR SECONDS [RUNS]
set -eu
fuzzer=$1 seeds=$2 seconds=$3 runs=${4:--1}
seed=${JITFRAMES_FUZZ_SEED:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/jf-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cd "$work" # crash-* files land here and are printed by libFuzzer
echo "run_fuzz: seed $seed (0: random), at most $seconds s and $runs runs (-1: unbounded)"
"$fuzzer" -seed="$seed" -runs="$runs" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -print_final_stats=1 "$work/corpus" "$seeds"
