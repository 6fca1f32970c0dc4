# Sourced by the shell tests that check which files a process wrote in /tmp.
# pid_max is 32,768 on many machines: a suite's own processes reuse pids.
# forget_stale_files PID: a perf map or jitdump in /tmp named for PID that
# the process neither holds open nor maps is an earlier process's, which had
# the same pid (a busy machine's /tmp has hundreds): remove it, so that the
# checks of what PID wrote see only its own files.
forget_stale_files() {
  local pid=$1 f
  for f in "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"; do
    [ -e "$f" ] || continue
    if ! grep -qF " $f" "/proc/$pid/maps" 2>/dev/null &&
       ! ls -l "/proc/$pid/fd" 2>/dev/null | grep -qF -- "-> $f"; then
      rm -f "$f"
    fi
  done
}
