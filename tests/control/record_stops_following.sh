#!/usr/bin/env bash
# record_stops_following_the_table_when_the_recording_ends: `jitframes
# record --via memory` stops its table follower when the recording's
# duration has passed, not when perf exits: perf's own wrap-up of a large
# recording takes seconds (24 s measured), and the old follower kept every
# region published meanwhile (35,234 kept for an 8 s recording, 23,723 of
# them never live during it), which made its jitdump and perf inject's work
# several times larger. Here `perf` is a wrapper whose `record` returns
# only once jit_churn has published 1,000 more regions after the real perf
# record exited; the kept jitdump (--keep) may hold none of them (a margin
# of 50 for the follower's last read).
# Usage: record_stops_following.sh JITFRAMES_TOOL JIT_CHURN BUILD_DIR
set -uo pipefail
tool=$(realpath "$1") churn=$(realpath "$2") build=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../support/record_env.sh"
after=1000 margin=50

# The wrapper and the churn's log where the confined helper user (record
# runs perf as a uid no account has, when root) can read them.
shared=$(mktemp -d "${TMPDIR:-/tmp}/jf-stops.XXXXXX")
on_exit="rm -rf '$shared'"
chmod 755 "$shared"
real_perf=$(command -v perf)
cat >"$shared/perf" <<EOF
#!/usr/bin/env bash
# perf, whose record returns once the churn has registered $after more regions.
"$real_perf" "\$@"; rc=\$?
case " \$* " in *" record "*) ;; *) exit \$rc ;; esac
n=\$(grep -c '^reg ' "$shared/truth.log")
echo "wrapper: perf record exited after \$n registrations" >&2
for _ in \$(seq 2400); do
  [ "\$(grep -c '^reg ' "$shared/truth.log")" -ge \$((n + $after)) ] && break
  sleep 0.1
done
exit \$rc
EOF
chmod 755 "$shared/perf"

mkfifo "$work/churn.in"
env -u JITFRAMES_CONTROL "$churn" 2 0 "$shared/truth.log" 1000000 <"$work/churn.in" >"$work/churn.out" 2>&1 &
pid=$!; pids+=("$pid")
exec 3>"$work/churn.in"
for _ in $(seq 400); do grep -q '^pid' "$work/churn.out" && break; sleep 0.05; done
grep -q '^pid' "$work/churn.out" || fail "jit_churn did not start"
chmod 644 "$shared/truth.log"

PATH="$shared:$PATH" "$tool" record "$pid" --via memory --duration 2 --keep --call-graph fp -o "$work/rec" \
  >"$work/rec.log" 2>&1
rc=$?
cat "$work/rec.log"
[ "$rc" -le 1 ] || fail "record: exit status $rc"
n=$(sed -n 's/^wrapper: perf record exited after \([0-9]*\) registrations$/\1/p' "$work/rec.log")
[ -n "$n" ] || fail "the perf wrapper did not run"
dump="$work/rec/jit/jit-$pid.dump"
[ -s "$dump" ] || fail "no kept jitdump $dump"
# The kept regions' generations (churn_g<N>_f<F>: the Nth registration).
python3 - "$dump" "$n" "$margin" <<'PY' || fail "the follower kept regions published after the recording ended"
import re, struct, sys
data = open(sys.argv[1], "rb").read()
n, margin = int(sys.argv[2]), int(sys.argv[3])
total = struct.unpack_from("<I", data, 8)[0]
at, gens = total, []
while at + 16 <= len(data):
    rid, size = struct.unpack_from("<II", data, at)
    if size < 16:
        break
    if rid == 0:  # CODE_LOAD: prefix, pid, tid, vma, code_addr, code_size, code_index, name
        name = data[at + 56:data.index(b"\0", at + 56)].decode()
        m = re.match(r"churn_g(\d+)_f\d+$", name)
        if m:
            gens.append(int(m.group(1)))
    at += size
late = sum(1 for g in gens if g >= n + margin)
print("kept %d regions, the newest the registration #%d; %d published more than %d registrations "
      "after perf record exited (#%d)" % (len(gens), max(gens, default=-1), late, margin, n))
sys.exit(late != 0 or not gens)
PY
exec 3>&-
wait "$pid" || fail "jit_churn failed"
echo PASS
