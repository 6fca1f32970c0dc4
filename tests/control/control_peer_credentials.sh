#!/usr/bin/env bash
# Only the process's own uid or root is obeyed, as the kernel tells
# (SO_PEERCRED): the tool as nobody against a root process is refused,
# logged, and changes nothing (status neither); root against a process
# running as nobody is obeyed, and so is nobody itself; another non-root
# uid against it is refused.
# Usage: control_peer_credentials.sh JITFRAMES_TOOL CONTROL_TARGET (as root)
tool=$1
target=$2
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../support/for_other_users.sh"
require_root "to run processes as other users"
# nobody runs both: copies in $dir (0755 under /tmp), not the build tree's.
tool=$(runnable_by_anyone "$dir" "$tool") && target=$(runnable_by_anyone "$dir" "$target") || exit 1
as() { local uid=$1; shift; setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"; }
nobody=$(id -u nobody)
other=54321

# A root process; the tool as nobody.
start_target root_t env -u JITFRAMES JITFRAMES_CONTROL=1 JITFRAMES_LOG=warning "$target" || finish
pid=$root_t_pid
rm -f "/tmp/perf-$pid.map" # another process's, that had this pid before
expect_rc nobody-enable 1 as "$nobody" "$tool" enable "$pid" perfmap
case $err in *"refused: uid $nobody is neither this process's uid (0) nor root"*) ;; *) fail "nobody-enable: $err" ;; esac
[ -e "/tmp/perf-$pid.map" ] && fail "nobody-enable: the map was written"
expect_rc nobody-status 1 as "$nobody" "$tool" status "$pid"
[ -z "$out" ] || fail "nobody-status printed the process's state: $out"
expect_rc root-status 0 "$tool" status "$pid" --json
case $out in *'"enabled": []'*) ;; *) fail "a refused request changed the sinks: $out" ;; esac
expect_rc root-enable 0 "$tool" enable "$pid" perfmap
expect_rc nobody-disable 1 as "$nobody" "$tool" disable "$pid" perfmap
expect_rc root-status-2 0 "$tool" status "$pid" --json
case $out in *'"enabled": ["perfmap"]'*) ;; *) fail "a refused disable changed the sinks: $out" ;; esac
stop_target root_t
grep -q "jitframes: control channel: refused a request from uid $nobody" "$dir/root_t.err" ||
  fail "the refusal was not logged: $(cat "$dir/root_t.err")"
rm -f "/tmp/perf-$pid.map"

# A process running as nobody: root and nobody are obeyed, another uid is not.
start_target nobody_t as "$nobody" env -u JITFRAMES JITFRAMES_CONTROL=1 "$target" || finish
pid=$nobody_t_pid
rm -f "/tmp/perf-$pid.map" # another process's, that had this pid before
expect_rc other-enable 1 as "$other" "$tool" enable "$pid" perfmap
case $err in *"refused: uid $other is neither this process's uid ($nobody) nor root"*) ;; *) fail "other-enable: $err" ;; esac
[ -e "/tmp/perf-$pid.map" ] && fail "other-enable: the map was written"
expect_rc root-enable-nobody 0 "$tool" enable "$pid" perfmap
[ "$(stat -c %u "/tmp/perf-$pid.map" 2>/dev/null)" = "$nobody" ] || fail "no map owned by nobody after root's enable"
expect_rc nobody-disable-own 0 as "$nobody" "$tool" disable "$pid" perfmap
expect_rc nobody-status-own 0 as "$nobody" "$tool" status "$pid" --json
case $out in *'"enabled": []'*"\"uid\": $nobody"*|*"\"uid\": $nobody"*'"enabled": []'*) ;; *) fail "nobody's own status: $out" ;; esac
stop_target nobody_t
rm -f "/tmp/perf-$pid.map"
finish
