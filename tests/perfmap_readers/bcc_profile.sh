#!/usr/bin/env bash
# bcc's `profile` tool samples a process spinning below a framed JIT function
# and must name it from the perf map jitframes wrote (folded user stacks),
# with its C caller below it.
# profile compiles its BPF program at run time against kernel headers. When
# the running kernel has none (no /lib/modules/$(uname -r)/build, no
# kheaders), Debian's linux-headers-ARCH of another version are used through
# BCC_KERNEL_SOURCE: the program uses only stable interfaces (perf event
# data, stack maps), and the running kernel's verifier checks what it loads.
# With no headers at all the test says exactly why and exits 77 (skipped).
# Usage: bcc_profile.sh JIT_TARGET
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/../support/cpu_time.sh"
target=$1

profile=$(command -v profile-bpfcc || true)
[ -n "$profile" ] || { echo "SKIP: profile-bpfcc not installed (Debian bpfcc-tools; scripts/deps installs it)"; exit 77; }
no_headers() { grep -q "Failed to compile BPF module\|Unable to find kernel headers" <<<"$out"; }
# run_profile: profile until the target has run 1 s of CPU time since profile
# attached (about 500 samples, however busy the machine), then Ctrl-C, which
# ends it with its output. Its BPF program is compiled first: up to 4 minutes.
# (SIGINT back to its default: a background command starts with it ignored.)
run_profile() {
  python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
    "$profile" -U -f -F 499 -p "$PID" 600 >"$WORK/profile.out" 2>&1 &
  local prof=$!
  # Attached once it holds its loaded BPF program and perf events (a perf
  # event alone may be bcc probing the kernel while it still compiles).
  local fds
  for _ in $(seq 4800); do
    kill -0 "$prof" 2>/dev/null || break
    fds=$(ls -l "/proc/$prof/fd" 2>/dev/null || true)
    grep -q 'bpf-prog' <<<"$fds" && grep -q 'perf_event' <<<"$fds" && break
    sleep 0.05
  done
  interrupt_after_cpu "$PID" 1000 "$prof"
  for _ in $(seq 1200); do kill -0 "$prof" 2>/dev/null || break; sleep 0.1; done
  kill "$prof" 2>/dev/null || true
  wait "$prof" || true
  out=$(cat "$WORK/profile.out")
}

start_target "$target" 10 5000
run_profile
kver=$(uname -r)
if no_headers; then
  # Debian splits a kernel's headers in two trees (per-arch generated files,
  # and -common sources); bcc wants one: join them as a tree of symlinks.
  headers=$(ls -d /usr/src/linux-headers-*-"$(dpkg --print-architecture 2>/dev/null)" 2>/dev/null | sort -V | tail -1)
  if [ -n "$headers" ] && [ -d "${headers%-*}-common" ]; then
    echo "note: no headers for the running kernel $kver; compiling against $(basename "$headers")"
    mkdir "$WORK/kernel"
    cp -rs "${headers%-*}-common/." "$WORK/kernel/" && cp -rsf "$headers/." "$WORK/kernel/"
    BCC_KERNEL_SOURCE=$WORK/kernel run_profile
  fi
fi
if no_headers; then
  echo "NOT RUN: bcc's profile could not compile its BPF program: no headers for the running kernel $kver."
  [ -e "/lib/modules/$kver/build" ] || echo "  /lib/modules/$kver/build does not exist (no kernel development package for $kver)"
  [ -e /sys/kernel/kheaders.tar.xz ] || echo "  /sys/kernel/kheaders.tar.xz does not exist (kernel built without CONFIG_IKHEADERS, or the kheaders module is not loaded)"
  apt-cache show "linux-headers-$kver" >/dev/null 2>&1 || echo "  apt has no package linux-headers-$kver"
  [ -n "${headers:-}" ] || echo "  no Debian linux-headers-$(dpkg --print-architecture 2>/dev/null) is installed either (scripts/deps installs it)"
  echo "  profile's own words:"; grep -v "^ \|Traceback" <<<"$out" | sed 's/^/  | /'
  exit 77
fi
echo "--- profile -U -f (folded user stacks, the most sampled first):"
awk '{ print $NF "\t" $0 }' <<<"$out" | sort -rn | cut -f2- | head -8 || true  # head may close the pipe early
grep -q ";main;jitframes bpftrace target" <<<"$out" || { echo "FAIL: the JIT function is not named, with main below it"; exit 1; }
echo PASSED
