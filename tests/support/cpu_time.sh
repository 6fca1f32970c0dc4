# Sourced: a process's CPU time, to size a test by the work done rather than
# by wall-clock time (which a busy machine stretches).
# cpu_ticks PID: its utime + stime, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# interrupt_after_cpu PID MS OTHER: once PID has run MS ms of CPU time from
# now, SIGINT OTHER; returns then, or when OTHER ended first.
interrupt_after_cpu() {
  local hz start
  hz=$(getconf CLK_TCK)
  start=$(cpu_ticks "$1")
  while kill -0 "$3" 2>/dev/null; do
    [ $(( ($(cpu_ticks "$1") - start) * 1000 / hz )) -ge "$2" ] && { kill -INT "$3"; return 0; }
    sleep 0.05
  done
  return 0
}
