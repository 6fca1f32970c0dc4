# Debian packages with CPack (cpack -G DEB in a build tree), one per install
# component, with the dependencies dpkg-shlibdeps finds plus those it cannot
# (the tool's record script needs python3; perf is recommended):
#   libjitframes<major.minor>  the shared library (runtime), its SONAME
#   libjitframes-dev           headers, .so link, archive, pkg-config, CMake package, jitframes(3)
#   jitframes-tools            the jitframes command, its record script and page, jitframes(1)
# Files go under /usr (lib/ as GNUInstallDirs chose at configure time: a
# tree configured with -DCMAKE_INSTALL_PREFIX=/usr gets Debian's multiarch
# lib/<triplet>). The clients (python, luajit components) are not in them:
# the wheel and the rock carry those.
set(JITFRAMES_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
set(JITFRAMES_DEB_RUNTIME libjitframes${JITFRAMES_SOVERSION})

set(CPACK_PACKAGE_NAME jitframes)
set(CPACK_PACKAGE_VENDOR "The jitframes authors")
set(CPACK_PACKAGE_CONTACT "The jitframes authors <jitframes@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Run-time generated code visible to perf, gdb, lldb and unwinders")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${JITFRAMES_DEB_RUNTIME})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# The shlibs file: packages linking libjitframes.so.<major.minor> depend on
# this version or later of the same SONAME (dpkg-shlibdeps reads it).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "jitframes: the shared library
 Makes machine code generated at run time visible to perf (perf map, jitdump),
 gdb and lldb (GDB JIT interface) and the process's own unwinder.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libjitframes-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${JITFRAMES_DEB_RUNTIME} (= ${PROJECT_VERSION})")
set(CPACK_COMPONENT_DEV_DESCRIPTION "jitframes: development files
 The header, the static library, pkg-config files (jitframes,
 jitframes-static), the CMake package (find_package(jitframes)) and jitframes(3).")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME jitframes-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
# The tool links the library statically; its record script is Python.
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "python3")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "linux-perf")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "jitframes: the jitframes command
 check and dump perf maps, jitdumps and symfiles; enable, disable and status
 of a running process's sinks; record a process with perf into a flame graph;
 clean what dead processes left.")

include(CPack)
