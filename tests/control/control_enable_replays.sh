#!/usr/bin/env bash
# A process started with JITFRAMES_CONTROL=1 and no sinks writes nothing;
# `jitframes enable PID perfmap` makes it write its perf map with every
# live region (a replay), valid for `jitframes check`; status reports it;
# disable turns it off. Errors: no process, no channel, bad operands.
# Usage: control_enable_replays.sh JITFRAMES_TOOL CONTROL_TARGET
tool=$1
target=$2
. "$(dirname "$0")/lib.sh"

regions=250
start_target t env -u JITFRAMES JITFRAMES_CONTROL=1 "$target" --regions $regions || finish
pid=$t_pid
map=/tmp/perf-$pid.map
[ -e "$map" ] && fail "standby: $map exists before enable"
[ -e "/tmp/jit-$pid.dump" ] && fail "standby: /tmp/jit-$pid.dump exists before enable"

expect_rc status-before 0 "$tool" status "$pid" --json
case $out in *"\"live_regions\": $regions, \"enabled\": []"*) ;; *) fail "status before: $out" ;; esac
grep -q "\"pid\": $pid, \"pid_inside\": $pid" "$dir/last.out" || fail "status pid: $out"

expect_rc enable 0 "$tool" enable "$pid" perfmap
case $out in *"enabled perfmap; enabled now: perfmap ($regions live regions)"*) ;; *) fail "enable said: $out" ;; esac
[ -f "$map" ] || fail "enable: no $map"
expect_rc check 0 "$tool" check "$map"
case $out in *"valid perf map: $regions entries"*) ;; *) fail "check: $out" ;; esac
for i in 0 1 $((regions / 2)) $((regions - 1)); do
  grep -q " ctl_region_$i\$" "$map" || fail "replay: ctl_region_$i missing from $map"
done

expect_rc status-json 0 "$tool" status "$pid" --json
for want in "\"live_regions\": $regions" '"enabled": ["perfmap"]' \
            "\"perfmap\": {\"enabled\": true, \"failed\": false, \"regions\": $regions" \
            "\"file\": \"/tmp/perf-$pid.map\"" '"jitdump": {"enabled": false'; do
  case $out in *"$want"*) ;; *) fail "status --json lacks '$want': $out" ;; esac
done
expect_rc status-text 0 "$tool" status "$pid"
case $out in *"perfmap  on"*) ;; *) fail "status text: $out" ;; esac

expect_rc disable 0 "$tool" disable "$pid" perfmap
expect_rc status-after 0 "$tool" --json status "$pid"
case $out in *'"enabled": []'*) ;; *) fail "after disable: $out" ;; esac

# Errors, each with its exit status.
expect_rc bad-sink 2 "$tool" enable "$pid" perfmop
case $err in *"unknown sink 'perfmop'"*) ;; *) fail "bad sink: $err" ;; esac
expect_rc no-sink 2 "$tool" enable "$pid" ""
expect_rc bad-pid 2 "$tool" status 12x
expect_rc extra-operand 2 "$tool" status "$pid" perfmap
expect_rc no-process 4 "$tool" status 2147483646
case $err in *"no process 2147483646"*) ;; *) fail "no process: $err" ;; esac
stop_target t
rm -f "$map"

start_target quiet env -u JITFRAMES -u JITFRAMES_CONTROL "$target" || finish
rm -f "/tmp/perf-$quiet_pid.map" # another process's, that had this pid before
expect_rc no-channel 4 "$tool" enable "$quiet_pid" perfmap
[ "$err" = "jitframes enable: process $quiet_pid does not listen: start it with JITFRAMES_CONTROL=1" ] ||
  fail "no channel: '$err'"
[ -e "/tmp/perf-$quiet_pid.map" ] && fail "no channel: a map appeared"
stop_target quiet
finish
