#!/usr/bin/env bash
# Root reaches a process's control socket however many lines another user
# forges in /proc/net/unix: abstract socket names may hold a newline, so
# `nobody` binds 3,000 sockets whose names continue with text imitating a
# listening "@jitframes/" line carrying the victim socket's inode (half with
# the real name, half with made-up ones), sorting before and after the real
# line. Root's `status` must still find and reach the victim, and quickly.
# Usage: control_forged_unix_lines.sh JITFRAMES_TOOL CONTROL_TARGET (as root)
tool=$1
target=$2
. "$(dirname "$0")/lib.sh"
require_root "to bind the forged sockets as another user"
py=/usr/bin/python3 # the system one: nobody must be able to run it
[ -x "$py" ] || { echo "SKIP: $py absent" >&2; exit 77; }
forgeries=3000

cat >"$dir/forge.py" <<'PY'
import socket, sys
n, inode, name, pid = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
keep = []
for i in range(n):
    shown = name if i % 2 else "@jitframes/%s.%016x" % (pid, i)
    line = "0000000000000000: 00000002 00000000 00010000 0001 01 %s %s" % (inode, shown)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(("\0forged-%d\n%s" % (i, line)).encode())
    keep.append(s)
print("ready 0", flush=True)
sys.stdin.read()
PY
ulimit -n $((forgeries + 64))

# try K: a victim (victimK) and a forger (forgerK) of its line; 0 when the
# forged lines sort both before and after the real one. Where the real line
# falls depends on the kernel's hash of the victim's socket name: now and
# then it comes before every forged line (line 4 in one CI run), and a new
# victim (a new name) is the next try.
try_surrounding() {
  local k=$1 victim_pid_var table forged real_line before after
  start_target "victim$k" env -u JITFRAMES JITFRAMES_CONTROL=1 JITFRAMES_LOG=warning "$target" || finish
  victim_pid_var="victim${k}_pid"
  pid=${!victim_pid_var}
  # The victim's listening socket, as the kernel lists it.
  inodes=$(for l in /proc/"$pid"/fd/*; do readlink "$l"; done | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p')
  real=$(awk -v ids=" $(echo $inodes) " 'index(ids, " " $7 " ") && $8 ~ /^@jitframes\// {print $7, $8}' /proc/net/unix)
  read -r inode name <<<"$real"
  [ -n "$inode" ] || { fail "no listening socket of $pid found"; finish; }
  start_target "forger$k" setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$py" "$dir/forge.py" "$forgeries" "$inode" "$name" "$pid" || finish
  table=$(cat /proc/"$pid"/net/unix)
  forged=$(grep -n "^0000000000000000: .* $inode @jitframes/" <<<"$table" | cut -d: -f1)
  real_line=$(grep -n -E "^[0-9a-f]*[1-9a-f][0-9a-f]*: .* $inode $name\$" <<<"$table" | cut -d: -f1)
  before=$(awk -v r="$real_line" '$1 < r' <<<"$forged" | wc -l)
  after=$(awk -v r="$real_line" '$1 > r' <<<"$forged" | wc -l)
  echo "try $k: real line $real_line; forged lines carrying inode $inode: $before before the real one, $after after"
  victim=victim$k forger=forger$k
  [ "$before" -gt 0 ] && [ "$after" -gt 0 ]
}

# The forged lines sort both before and after the real one (a few tries).
surrounded=0
for k in 1 2 3 4 5 6; do
  if try_surrounding "$k"; then
    surrounded=1
    break
  fi
  stop_target "forger$k"
  stop_target "victim$k"
done
[ "$surrounded" = 1 ] || { fail "the forged lines never surrounded the real one in 6 tries"; finish; }

start=$(date +%s%N)
expect_rc root-status 0 timeout 120 "$tool" status "$pid" --json
ms=$((($(date +%s%N) - start) / 1000000))
echo "root's status took $ms ms"
case $out in *"\"pid\": $pid"*) ;; *) fail "status did not describe $pid: $out" ;; esac
expect_rc root-enable 0 timeout 120 "$tool" enable "$pid" perfmap
[ -e "/tmp/perf-$pid.map" ] || fail "root's enable did not reach the victim"
expect_rc root-disable 0 timeout 120 "$tool" disable "$pid" perfmap
stop_target "$forger"
stop_target "$victim"
rm -f "/tmp/perf-$pid.map"
finish
