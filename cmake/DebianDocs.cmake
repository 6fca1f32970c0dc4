# What Debian policy wants in /usr/share/doc/<package> of each package
# (included by Packaging.cmake): a machine-readable copyright file
# (copyright-format 1.0: jitframes' MIT licence, and for jitframes-tools the
# d3 files it ships) and a Debian changelog, compressed with gzip -9n. Only
# component installs (cpack, cmake --install --component) put them there.
set(debian_doc ${PROJECT_BINARY_DIR}/debian)
file(MAKE_DIRECTORY ${debian_doc})

# LICENSE's text after its copyright line, as a copyright-format body:
# each line indented by one space, blank lines as " .".
file(STRINGS ${PROJECT_SOURCE_DIR}/LICENSE license_lines)
set(JITFRAMES_EXPAT_TEXT "")
set(past_copyright FALSE)
foreach(line IN LISTS license_lines)
  if(past_copyright)
    if(line STREQUAL "")
      string(APPEND JITFRAMES_EXPAT_TEXT " .\n")
    else()
      string(APPEND JITFRAMES_EXPAT_TEXT " ${line}\n")
    endif()
  elseif(line MATCHES "^Copyright")
    set(past_copyright TRUE)
  endif()
endforeach()
string(REGEX REPLACE "^ \\.\n" "" JITFRAMES_EXPAT_TEXT "${JITFRAMES_EXPAT_TEXT}")
string(REGEX REPLACE "\n$" "" JITFRAMES_EXPAT_TEXT "${JITFRAMES_EXPAT_TEXT}")

# The d3 versions the lock file pins (what npm ci installs).
file(READ ${PROJECT_SOURCE_DIR}/tools/record/flamegraph/package-lock.json lock)
string(JSON JITFRAMES_D3_VERSION GET "${lock}" packages node_modules/d3 version)
string(JSON JITFRAMES_D3_FLAME_GRAPH_VERSION GET "${lock}" packages node_modules/d3-flame-graph version)
set(JITFRAMES_ISC_TEXT " Permission to use, copy, modify, and/or distribute this software for any
 purpose with or without fee is hereby granted, provided that the above
 copyright notice and this permission notice appear in all copies.
 .
 THE SOFTWARE IS PROVIDED \"AS IS\" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR ANY
 SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN ACTION
 OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF OR IN
 CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.")

# The changelog's date: SOURCE_DATE_EPOCH when set (string(TIMESTAMP) reads
# it), else the commit's, so two builds of one commit give one file.
string(TIMESTAMP JITFRAMES_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
if(NOT DEFINED ENV{SOURCE_DATE_EPOCH})
  find_package(Git QUIET)
  if(GIT_FOUND)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} log -1 --format=%cD
                    OUTPUT_VARIABLE commit_date OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                    RESULT_VARIABLE git_rc)
    if(git_rc EQUAL 0 AND commit_date)
      set(JITFRAMES_DEB_DATE "${commit_date}")
    endif()
  endif()
endif()
set(JITFRAMES_DEB_SOURCE jitframes)
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/changelog.in ${debian_doc}/changelog.Debian @ONLY)
# gzip -9n: no name or time stamp in the header (reproducible).
execute_process(COMMAND gzip -9n -c ${debian_doc}/changelog.Debian OUTPUT_FILE ${debian_doc}/changelog.Debian.gz
                RESULT_VARIABLE gzip_rc)
if(NOT gzip_rc EQUAL 0)
  message(FATAL_ERROR "gzip -9n of the Debian changelog failed (${gzip_rc})")
endif()

set(JITFRAMES_COPYRIGHT_EXTRA "")
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/copyright.in ${debian_doc}/copyright @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/copyright-d3.in ${debian_doc}/copyright-d3 @ONLY)
file(READ ${debian_doc}/copyright-d3 JITFRAMES_COPYRIGHT_EXTRA)
configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/copyright.in ${debian_doc}/copyright-tools @ONLY)

foreach(component IN ITEMS runtime dev tools)
  string(TOUPPER ${component} c)
  set(package ${CPACK_DEBIAN_${c}_PACKAGE_NAME})
  set(copyright ${debian_doc}/copyright)
  if(component STREQUAL tools)
    set(copyright ${debian_doc}/copyright-tools)
  endif()
  install(FILES ${copyright} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} RENAME copyright
          COMPONENT ${component} EXCLUDE_FROM_ALL)
  install(FILES ${debian_doc}/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package}
          COMPONENT ${component} EXCLUDE_FROM_ALL)
  # The one lintian tag that does not apply: these packages are built from a
  # release, not uploaded to Debian's archive, so there is no ITP bug for
  # the first changelog entry to close.
  file(WRITE ${debian_doc}/overrides-${package}
       "# Not uploaded to the Debian archive: no ITP bug for the first entry to close.\n"
       "${package}: initial-upload-closes-no-bugs\n")
  install(FILES ${debian_doc}/overrides-${package} DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
          RENAME ${package} COMPONENT ${component} EXCLUDE_FROM_ALL)
endforeach()
