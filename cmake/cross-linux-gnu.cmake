# Shared part of the toolchain files: Debian's <arch>-linux-gnu cross gcc,
# its sysroot in /usr/<arch>-linux-gnu (libc6-dev-*-cross), and qemu-<arch>
# to run what it builds. CMAKE_SYSTEM_PROCESSOR is set by the includer, and
# JITFRAMES_CROSS_TRIPLE when Debian's triple is not <processor>-linux-gnu
# (ppc64le: powerpc64le-linux-gnu).
# Pass -DJITFRAMES_CFI_EXTRACT=<cfi-extract built for the build host>.
set(CMAKE_SYSTEM_NAME Linux)
if(NOT JITFRAMES_CROSS_TRIPLE)
  set(JITFRAMES_CROSS_TRIPLE ${CMAKE_SYSTEM_PROCESSOR}-linux-gnu)
endif()
set(CMAKE_C_COMPILER ${JITFRAMES_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${JITFRAMES_CROSS_TRIPLE}-g++) # tests/cross only
set(CMAKE_ASM_COMPILER ${JITFRAMES_CROSS_TRIPLE}-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/${JITFRAMES_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# LD_LIBRARY_PATH=/lib (the sysroot's, through -L) keeps the guest's loader
# from falling back to the host's multiarch libraries for the same
# architecture (libc6:arm64, which Debian's arm64 LuaJIT brings): a libc of
# another build than the sysroot's loader hangs threaded programs.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${CMAKE_SYSTEM_PROCESSOR} -L /usr/${JITFRAMES_CROSS_TRIPLE}
    -E LD_LIBRARY_PATH=/lib)
