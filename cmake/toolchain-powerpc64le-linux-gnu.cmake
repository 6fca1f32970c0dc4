# Cross-compiling jitframes for ppc64le Linux (see cross-linux-gnu.cmake).
set(CMAKE_SYSTEM_PROCESSOR ppc64le)
set(JITFRAMES_CROSS_TRIPLE powerpc64le-linux-gnu)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
