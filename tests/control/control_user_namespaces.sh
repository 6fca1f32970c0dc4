#!/usr/bin/env bash
# Who the channel obeys across user namespaces: those who could attach a
# debugger to the process, never an identity with no mapping in its user
# namespace (the overflow uid, which every unmapped peer reads as).
#   - under `unshare -U` (no map; the process's own uid is unmapped) uid
#     1000, nobody and even root are refused: nothing written;
#   - a rootless container (`unshare -U -r` by uid 1000, root inside): its
#     owner (1000) and the host's root are obeyed, nobody is refused;
#   - a mapped range (0-65535 -> 100000-165535) as root, as nobody and as
#     uid 1000 inside: the host's root is obeyed (the tool enters the
#     namespace as its root), host users 1000 and nobody are refused, even
#     when the process runs as the container's nobody (65534 inside);
#   - the other direction: the tool as root inside `unshare -U -r` made by
#     uid 1000 is refused by a root process outside (it is uid 1000 there).
# Usage: control_user_namespaces.sh JITFRAMES_TOOL CONTROL_TARGET USERNS_EXEC (as root)
tool=$1
target=$2
userns_exec=$3
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../support/for_other_users.sh"
require_root "to run processes as other users and write uid maps"
# Other users run the tool: a copy in $dir (0755 under /tmp), not the build tree's.
tool=$(runnable_by_anyone "$dir" "$tool") || exit 1
if ! why=$("$userns_exec" --map 0:100000:65536 --as 0 true 2>&1); then
  echo "SKIP: user namespaces with a mapped range are not permitted here: $why" >&2
  exit 77
fi
as() { local uid=$1; shift; setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; }
nobody=$(id -u nobody)
user=1000
overflow=$(cat /proc/sys/kernel/overflowuid)
# The target is started from its directory (a build tree may be closed to other users).
tdir=$(dirname "$target")
tbin=./$(basename "$target")
cd "$tdir" || exit 1

# refused NAME UID PID [MESSAGE]: `enable perfmap` as UID is refused and writes nothing.
refused() {
  local name=$1 uid=$2 pid=$3 want=${4:-refused}
  rm -f "/tmp/perf-$pid.map" # another process's, that had this pid before
  expect_rc "$name" 1 as "$uid" "$tool" enable "$pid" perfmap
  case $err in *"$want"*) ;; *) fail "$name: '$want' not in: $err" ;; esac
  [ -e "/proc/$pid/root/tmp/perf-$pid.map" ] && fail "$name: the map was written"
  rm -f "/proc/$pid/root/tmp/perf-$pid.map"
}

# obeyed NAME UID PID: `enable perfmap` then `disable` as UID succeed.
obeyed() {
  local name=$1 uid=$2 pid=$3
  rm -f "/tmp/perf-$pid.map" # another process's, that had this pid before (sticky /tmp)
  expect_rc "$name" 0 as "$uid" "$tool" enable "$pid" perfmap
  [ -f "/tmp/perf-$pid.map" ] || fail "$name: no map after enable"
  expect_rc "$name-disable" 0 as "$uid" "$tool" disable "$pid" perfmap
  rm -f "/tmp/perf-$pid.map"
}

start() { # NAME COMMAND...: a control target with the channel on
  local name=$1
  shift
  start_target "$name" "$@" env -u JITFRAMES JITFRAMES_CONTROL=1 "$tbin"
}

# 1. No map at all: the process's own uid reads as the overflow uid too.
start nomap unshare -U || finish
[ "$(awk '/^Uid:/{print $2}' "/proc/$nomap_pid/status")" = 0 ] || fail "nomap: not started by root"
for uid in "$user" "$nobody" 0; do
  refused "nomap-$uid" "$uid" "$nomap_pid" "overflow uid $overflow, as every unmapped one does); nor has this process's own uid: it obeys no one"
done
expect_rc nomap-root-status 1 "$tool" status "$nomap_pid"
stop_target nomap

# 2. A rootless container: uid 1000 made it, it is root inside.
start rootless as "$user" unshare -U -r || finish
obeyed rootless-owner "$user" "$rootless_pid"
obeyed rootless-host-root 0 "$rootless_pid"
refused rootless-nobody "$nobody" "$rootless_pid" "uid $overflow is neither this process's uid (0) nor root"
stop_target rootless

# 3. A mapped range, the process as root, nobody and uid 1000 inside.
for inside in 0 "$nobody" "$user"; do
  start "range$inside" "$userns_exec" --map 0:100000:65536 --as "$inside" || finish
  pid_var=range${inside}_pid
  pid=${!pid_var}
  [ "$(stat -c %u "/proc/$pid")" = $((100000 + inside)) ] || fail "range$inside: not uid $((100000 + inside)) outside"
  obeyed "range$inside-host-root" 0 "$pid"
  refused "range$inside-user" "$user" "$pid"
  refused "range$inside-nobody" "$nobody" "$pid"
  stop_target "range$inside"
done

# 4. The other way round: the tool as root inside a rootless container of
# uid 1000 is uid 1000 to a root process outside.
start host_root || finish
expect_rc inside-to-root 1 as "$user" unshare -U -r "$tool" enable "$host_root_pid" perfmap
case $err in *"refused: uid $user is neither this process's uid (0) nor root"*) ;; *) fail "inside-to-root: $err" ;; esac
[ -e "/tmp/perf-$host_root_pid.map" ] && fail "inside-to-root: the map was written"
stop_target host_root
finish
