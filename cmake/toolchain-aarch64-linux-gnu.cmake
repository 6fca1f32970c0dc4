# Cross-compiling jitframes for aarch64 Linux (see cross-linux-gnu.cmake).
set(CMAKE_SYSTEM_PROCESSOR aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
