#!/usr/bin/env bash
# A process in its own pid and mount namespaces, with a private /tmp
# (unshare --pid --mount --fork, tmpfs on /tmp): the tool, outside and
# root, finds it by its pid as seen from here and enables the perf map,
# which appears in the process's /tmp (/proc/PID/root/tmp/perf-<its pid>.map)
# and not in ours. Then the same with its own network namespace too: the
# tool enters it (setns) to reach the abstract socket.
# Usage: control_namespaces.sh JITFRAMES_TOOL CONTROL_TARGET (as root)
tool=$1
target=$2
. "$(dirname "$0")/lib.sh"
require_root "unshare, setns"
if ! why=$(unshare --pid --mount --net --fork sh -c 'mount -t tmpfs tmpfs /tmp' 2>&1); then
  echo "SKIP: unshare --pid --mount --net with a tmpfs /tmp is not permitted here: $why" >&2
  exit 77
fi

# The namespaced process's pid as seen from here: the child of unshare.
host_pid_of() {
  local job=$1 child
  child=$(cat "/proc/$job/task/$job/children" 2>/dev/null)
  echo "${child%% *}"
}

# check_namespaced NAME UNSHARE_FLAGS...
check_namespaced() {
  local name=$1
  shift
  # The target is run from its directory, entered before the tmpfs hides
  # /tmp (a build tree may live there: CI's clean clones do).
  start_target "$name" unshare "$@" --fork sh -c \
    'cd "$(dirname "$0")" && mount -t tmpfs tmpfs /tmp &&
     exec env -u JITFRAMES JITFRAMES_CONTROL=1 "./$(basename "$0")" --regions 40' "$target" || return
  local job=${name}_job inner=${name}_pid pid
  job=${!job}; inner=${!inner}
  pid=$(host_pid_of "$job")
  [ -n "$pid" ] || { fail "$name: no child of unshare ($job)"; return; }
  rm -f "/tmp/perf-$pid.map" # another process's, that had this pid before
  [ "$pid" != "$inner" ] || fail "$name: not in its own pid namespace (pid $pid both sides)"
  local host_map_before=absent
  [ -e "/tmp/perf-$inner.map" ] && host_map_before=$(stat -c %i "/tmp/perf-$inner.map")
  expect_rc "$name-enable" 0 "$tool" enable "$pid" perfmap
  local inside="/proc/$pid/root/tmp/perf-$inner.map"
  [ -f "$inside" ] || fail "$name: no $inside"
  expect_rc "$name-check" 0 "$tool" check "$inside"
  case $out in *"valid perf map: 40 entries"*) ;; *) fail "$name check: $out" ;; esac
  [ -e "/tmp/perf-$pid.map" ] && fail "$name: /tmp/perf-$pid.map appeared outside"
  local host_map_after=absent
  [ -e "/tmp/perf-$inner.map" ] && host_map_after=$(stat -c %i "/tmp/perf-$inner.map")
  [ "$host_map_before" = "$host_map_after" ] || fail "$name: /tmp/perf-$inner.map changed outside"
  expect_rc "$name-status" 0 "$tool" status "$pid" --json
  for want in "\"pid\": $pid, \"pid_inside\": $inner" "\"file_from_here\": \"$inside\"" '"enabled": ["perfmap"]'; do
    case $out in *"$want"*) ;; *) fail "$name status lacks '$want': $out" ;; esac
  done
  stop_target "$name"
}

check_namespaced pid_mount --pid --mount
check_namespaced pid_mount_net --pid --mount --net

# Without root, another network namespace cannot be entered: a clear error.
start_target netns unshare --net env -u JITFRAMES JITFRAMES_CONTROL=1 "$target" || finish
nobody=$(id -u nobody)
. "$(dirname "$0")/../support/for_other_users.sh"
tool_for_nobody=$(runnable_by_anyone "$dir" "$tool") || fail "cannot copy the tool for nobody"
expect_rc netns-nobody 4 setpriv --reuid="$nobody" --regid="$nobody" --clear-groups "$tool_for_nobody" status "$netns_pid"
case $err in *"may be in another network namespace, which only root can enter"*) ;; *) fail "netns as nobody: $err" ;; esac
stop_target netns
finish
