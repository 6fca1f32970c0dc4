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
# Made as a Debian developer would (lintian -I -E --pedantic: no error, no
# warning; tests/packaging/deb_lintian.sh): a machine-readable copyright
# file and a Debian changelog (gzip -9n) in /usr/share/doc/<package>, man
# pages compressed, binaries stripped with their debug info in -dbgsym
# packages, an ldconfig trigger (not maintainer scripts), Multi-Arch: same
# on the library, and the version of CHANGELOG.md (the project's version)
# with Debian revision 1.
set(JITFRAMES_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
set(JITFRAMES_DEB_RUNTIME libjitframes${JITFRAMES_SOVERSION})
set(JITFRAMES_DEB_REVISION 1)
set(JITFRAMES_DEB_VERSION ${PROJECT_VERSION}-${JITFRAMES_DEB_REVISION})
set(JITFRAMES_MAINTAINER "jitframes maintainers <maintainers@jitframes.dev>")
set(JITFRAMES_HOMEPAGE ${PROJECT_HOMEPAGE_URL})

set(CPACK_PACKAGE_NAME jitframes)
set(CPACK_PACKAGE_VENDOR "The jitframes authors")
set(CPACK_PACKAGE_CONTACT "${JITFRAMES_MAINTAINER}")
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPack would put that one line above
# each package's description; each package's first line is its own summary.
set(CPACK_PACKAGE_HOMEPAGE_URL ${JITFRAMES_HOMEPAGE})
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${JITFRAMES_DEB_REVISION})
set(CPACK_DEBIAN_PACKAGE_SOURCE jitframes)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
# Stripped binaries; their debug info in <package>-dbgsym (Debian's name),
# found by build id under /usr/lib/debug/.build-id.
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
# CPack 3.25 can write neither a Multi-Arch field nor a library package
# without ldconfig maintainer scripts: debian_fixup.cmake edits the packages
# it made (dpkg-deb), adding Multi-Arch: same and the ldconfig trigger.
set(CPACK_POST_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/debian_fixup.cmake)
set(CPACK_JITFRAMES_DEB_TRIGGERS ${PROJECT_SOURCE_DIR}/cmake/debian/triggers)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${JITFRAMES_DEB_RUNTIME})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# The shlibs file: packages linking libjitframes.so.<major.minor> depend on
# this version or later of the same SONAME (dpkg-shlibdeps reads it).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "run-time generated code visible to perf and gdb - library
jitframes makes machine code generated at run time (JIT compilers,
interpreters' trampolines) visible to perf (perf map, jitdump), to gdb and
lldb (GDB JIT interface) and to the process's own unwinder.

This package holds the shared library.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libjitframes-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${JITFRAMES_DEB_RUNTIME} (= ${JITFRAMES_DEB_VERSION})")
set(CPACK_COMPONENT_DEV_DESCRIPTION "run-time generated code visible to perf and gdb - development files
jitframes makes machine code generated at run time (JIT compilers,
interpreters' trampolines) visible to perf (perf map, jitdump), to gdb and
lldb (GDB JIT interface) and to the process's own unwinder.

This package holds the header, the static library, the pkg-config files
(jitframes, jitframes-static), the CMake package (find_package(jitframes))
and jitframes(3).")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME jitframes-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
# The tool links the library statically; its record script is Python.
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "python3")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "linux-perf")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "run-time generated code visible to perf and gdb - command-line tool
The jitframes command checks and dumps perf maps, jitdumps and GDB JIT
symfiles; enables, disables and shows the sinks of a running process; records
a process with perf into a self-contained flame graph page (d3 and
d3-flame-graph inlined, shipped here); and cleans what dead processes left.
Shell completion for bash, zsh and fish.")

include(cmake/DebianDocs.cmake)
include(CPack)
