#!/usr/bin/env bash
# bcc's `profile` tool samples a process spinning below a framed JIT function
# and must name it from the perf map jitframes wrote (folded user stacks).
# profile compiles its BPF program at run time and needs the headers of the
# running kernel; when they are missing it cannot run at all: this test then
# says exactly why and exits 77 (skipped).
# Usage: bcc_profile.sh JIT_TARGET
. "$(dirname "$0")/common.sh"
target=$1

profile=$(command -v profile-bpfcc || true)
[ -n "$profile" ] || { echo "SKIP: profile-bpfcc not installed (Debian bpfcc-tools; scripts/deps installs it)"; exit 77; }

start_target "$target" 10 5000
out=$(timeout 60 "$profile" -U -f -F 499 -p "$PID" 3 2>&1) || true
if grep -q "Failed to compile BPF module\|Unable to find kernel headers" <<<"$out"; then
  kver=$(uname -r)
  echo "NOT RUN: bcc's profile could not compile its BPF program: no headers for the running kernel $kver."
  [ -e "/lib/modules/$kver/build" ] || echo "  /lib/modules/$kver/build does not exist (no kernel development package for $kver)"
  [ -e /sys/kernel/kheaders.tar.xz ] || echo "  /sys/kernel/kheaders.tar.xz does not exist (kernel built without CONFIG_IKHEADERS, or the kheaders module is not loaded)"
  apt-cache show "linux-headers-$kver" >/dev/null 2>&1 || echo "  apt has no package linux-headers-$kver"
  echo "  profile's own words:"; grep -v "^ \|Traceback" <<<"$out" | sed 's/^/  | /'
  exit 77
fi
echo "--- profile -U -f (folded user stacks):"; echo "$out" | head -20
grep -q "jitframes bpftrace target" <<<"$out" || { echo "FAIL: the JIT function is not named"; exit 1; }
echo PASSED
