# Cross-compiling jitframes for s390x Linux (see cross-linux-gnu.cmake).
set(CMAKE_SYSTEM_PROCESSOR s390x)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
