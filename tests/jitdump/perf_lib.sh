# Shared helpers for the jitdump tests that drive the real perf.
# Sourced by the test scripts; arguments: MINIJIT JITFRAMES_TOOL (may be "").
# Every recording gets a fresh directory and is injected once; HOME is
# private (perf fills ~/.debug) and removed at exit.
set -euo pipefail

MINIJIT=$(realpath "$1")
JF_TOOL=${2:+$(realpath "$2")}

if ! command -v perf >/dev/null 2>&1 || ! perf --version >/dev/null 2>&1; then
  echo "SKIP: perf is not installed (scripts/deps installs linux-perf)"
  exit 77
fi
if [ "$(uname -m)" != x86_64 ]; then
  echo "SKIP: minijit emits x86_64 code only"
  exit 77
fi

# perf reading a recording may run addr2line: see perf_ignoring_sigpipe.sh
PERF_READ=$(cd "$(dirname "${BASH_SOURCE[0]}")/../support" && pwd)/perf_ignoring_sigpipe.sh

WORK=$(mktemp -d "${TMPDIR:-/tmp}/jf-perf.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export HOME=$WORK/home
mkdir -p "$HOME"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# check_dumps DIR: every jitdump in DIR passes `jitframes check`.
check_dumps() {
  local dir=$1 f out
  [ -n "$JF_TOOL" ] || return 0
  for f in "$dir"/jit-*.dump; do
    [ -e "$f" ] || fail "no jitdump in $dir"
    if ! out=$("$JF_TOOL" check "$f" 2>&1); then
      case $out in
        *"jitdump is not supported yet"*) echo "note: jitframes check does not read jitdumps yet" ;;
        *) fail "jitframes check $f: $out" ;;
      esac
    fi
  done
}

# record NAME PERF_RECORD_ARGS... -- MINIJIT_ARGS...
# Records minijit into $WORK/NAME, checks the dump, injects once.
# Sets DIR to the recording's directory.
record() {
  local name=$1
  shift
  local pargs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do pargs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  DIR=$WORK/$name
  mkdir -p "$DIR"
  (cd "$DIR" && JITFRAMES=jitdump JITFRAMES_DIR=$DIR \
     perf record -q -k 1 -e cpu-clock "${pargs[@]}" -o "$DIR/perf.data" -- "$MINIJIT" "$@" \
     >"$DIR/record.log" 2>&1) || [ -n "${ALLOW_KILLED:-}" ] || { cat "$DIR/record.log" >&2; fail "perf record ($name)"; }
  check_dumps "$DIR"
  perf inject --jit -i "$DIR/perf.data" -o "$DIR/perf.jit.data" >"$DIR/inject.log" 2>&1 ||
    { cat "$DIR/inject.log" >&2; fail "perf inject ($name)"; }
}

# chains: perf script call chains of the last recording, one sample per
# paragraph, each line "ip symbol".
chains() {
  "$PERF_READ" script -i "$DIR/perf.jit.data" -F ip,sym 2>/dev/null
}

# chain_stats LEAF [FRAME...]: among samples whose leaf frame is LEAF, print
# "total matching", where matching samples contain every FRAME below the
# leaf, in that order.
chain_stats() {
  local leaf=$1
  shift
  chains | awk -v leaf="$leaf" -v frames="$*" '
    BEGIN { RS = ""; FS = "\n"; n = split(frames, want, " ") }
    {
      split($1, f, " ")
      if (f[2] != leaf) next
      total++
      k = 1
      for (i = 2; i <= NF && k <= n; i++) {
        split($i, g, " ")
        if (g[2] == want[k]) k++
      }
      if (k > n) ok++
    }
    END { printf "%d %d\n", total, ok + 0 }'
}

# expect_share NAME TOTAL OK MIN_PERCENT MIN_SAMPLES
expect_share() {
  local what=$1 total=$2 ok=$3 min=$4 min_samples=$5
  echo "$what: $ok of $total samples"
  [ "$total" -ge "$min_samples" ] || fail "$what: only $total samples"
  [ $((ok * 100)) -ge $((total * min)) ] || fail "$what: $ok of $total is below $min%"
}

# expect_at_most NAME TOTAL OK MAX_PERCENT MIN_SAMPLES (negative controls)
expect_at_most() {
  local what=$1 total=$2 ok=$3 max=$4 min_samples=$5
  echo "$what: $ok of $total samples"
  [ "$total" -ge "$min_samples" ] || fail "$what: only $total samples"
  [ $((ok * 100)) -le $((total * max)) ] || fail "$what: $ok of $total is above $max%"
}
