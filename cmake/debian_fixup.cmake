# CPACK_POST_BUILD_SCRIPTS of the DEB generator (Packaging.cmake): CPack
# 3.25 writes no Multi-Arch field and gives a package holding a shared
# library postinst/postrm scripts that run ldconfig, which Debian replaced by
# a trigger. For the library package (libjitframes<major.minor>) this
# unpacks what CPack made with dpkg-deb, adds "Multi-Arch: same", drops
# those two scripts (they hold nothing else), adds the ldconfig trigger and
# builds it again with root-owned files; its md5sums stay valid (the files
# are untouched).
foreach(deb IN LISTS CPACK_PACKAGE_FILES)
  get_filename_component(name ${deb} NAME)
  if(NOT name MATCHES "^libjitframes[0-9]+\\.[0-9]+_.*\\.deb$")
    continue()
  endif()
  set(work ${deb}.fixup)
  file(REMOVE_RECURSE ${work})
  execute_process(COMMAND dpkg-deb -R ${deb} ${work} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -R ${deb} failed")
  endif()
  foreach(script IN ITEMS postinst postrm)
    if(EXISTS ${work}/DEBIAN/${script})
      file(STRINGS ${work}/DEBIAN/${script} lines REGEX "^[^#]")
      foreach(line IN LISTS lines)
        if(NOT line MATCHES "^(set -e|if \\[ \"\\$1\" = \"(configure|remove)\" \\]; then|[ \t]+ldconfig|fi)$")
          message(FATAL_ERROR "${name}: ${script} does more than run ldconfig ('${line}'): not dropped")
        endif()
      endforeach()
      file(REMOVE ${work}/DEBIAN/${script})
    endif()
  endforeach()
  file(COPY ${CPACK_JITFRAMES_DEB_TRIGGERS} DESTINATION ${work}/DEBIAN
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  file(READ ${work}/DEBIAN/control control)
  if(NOT control MATCHES "\nMulti-Arch:")
    string(REGEX REPLACE "\nPriority:" "\nMulti-Arch: same\nPriority:" control "${control}")
    file(WRITE ${work}/DEBIAN/control "${control}")
  endif()
  execute_process(COMMAND dpkg-deb --root-owner-group -Zxz -b ${work} ${deb} OUTPUT_QUIET RESULT_VARIABLE rc)
  file(REMOVE_RECURSE ${work})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -b ${deb} failed")
  endif()
endforeach()
