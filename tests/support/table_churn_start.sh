# Sourced by the table_churn tests: a scratch directory removed at exit,
# die(), and start_churn ARGS... running tests/programs/table_churn with ARGS
# until this script ends (its stdin, fd 3, closes), its pid in $pid once it
# has said it is ready. $churn names the program.
tmp=$(mktemp -d)
pid=
cleanup() { exec 3>&- 2>/dev/null; [ -n "$pid" ] && wait "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
die() { echo "FAIL: $*" >&2; exit 1; }

start_churn() {
  mkfifo "$tmp/stdin"
  "$churn" "$@" <"$tmp/stdin" >"$tmp/churn.out" &
  pid=$!
  exec 3>"$tmp/stdin" # it runs until this closes
  for _ in $(seq 600); do grep -q '^pid' "$tmp/churn.out" && break; sleep 0.05; done
  grep -q '^pid' "$tmp/churn.out" || die "table_churn did not start"
}
