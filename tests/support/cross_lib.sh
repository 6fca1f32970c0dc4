# cross_triple ARCH: Debian's GNU triple (its gcc is TRIPLE-gcc, its sysroot
# /usr/TRIPLE); ppc64le's is powerpc64le-linux-gnu.
cross_triple() {
  case $1 in
    ppc64le) echo powerpc64le-linux-gnu ;;
    *) echo "$1-linux-gnu" ;;
  esac
}

# Sourced by the cross tests: build jitframes for ARCH with its toolchain
# file and install it into BUILD/prefix, incrementally (quick when nothing
# changed) and under a lock shared by the tests using BUILD.
# cross_lib ARCH SOURCE_DIR BUILD_DIR CFI_EXTRACT: 0, or 1 after saying what
# failed. The lock (fd 9) stays held: release it with `flock -u 9` once the
# caller's own builds against the prefix are done.
cross_lib() {
  local arch=$1 src=$2 build=$3 extract=$4
  local triple
  triple=$(cross_triple "$arch")
  mkdir -p "$build"
  exec 9>"$build.lock"
  flock 9
  cmake -S "$src" -B "$build/lib" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain-$triple.cmake" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITFRAMES_CFI_EXTRACT="$extract" \
    -DJITFRAMES_BUILD_TESTS=OFF -DJITFRAMES_BUILD_TOOLS=OFF -DJITFRAMES_BUILD_EXAMPLES=OFF \
    -DJITFRAMES_BUILD_BENCH=OFF -DJITFRAMES_WERROR=OFF -DCMAKE_INSTALL_PREFIX="$build/prefix" \
    >/dev/null || { echo "configure jitframes for $arch"; return 1; }
  cmake --build "$build/lib" -j 2 >/dev/null || { echo "build jitframes for $arch"; return 1; }
  cmake --install "$build/lib" >/dev/null || { echo "install jitframes for $arch"; return 1; }
}

# start_gdbstub LOG QEMU_ARGS... -- PROGRAM ARGS...: run PROGRAM under
# qemu with a gdb stub on a free port (a few tries: a port taken by another
# test makes qemu exit at once). Sets $port and $qpid (the caller kills it).
start_gdbstub() {
  local log=$1 qemu=() attempt
  shift
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do qemu+=("$1"); shift; done
  shift
  qpid=
  for attempt in 1 2 3 4 5; do
    port=$((20000 + (RANDOM * 7 + $$ + attempt * 131) % 40000))
    "${qemu[@]}" -g "$port" "$@" >"$log" 2>&1 &
    qpid=$!
    sleep 0.3
    kill -0 "$qpid" 2>/dev/null && return 0 # still alive: it bound the port
    qpid=
  done
  return 1
}
