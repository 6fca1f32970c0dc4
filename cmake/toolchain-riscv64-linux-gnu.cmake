# Cross-compiling jitframes for riscv64 Linux (see cross-linux-gnu.cmake).
set(CMAKE_SYSTEM_PROCESSOR riscv64)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
