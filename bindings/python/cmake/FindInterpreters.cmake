# Finding the CPython interpreters to build the extension for.

# jitframes_python_candidates(OUT): /usr/bin/python3 (Debian's) and every
# pyenv CPython 3.11-3.13 ($PYENV_ROOT, `pyenv root` or ~/.pyenv), once each.
function(jitframes_python_candidates out)
  set(found "")
  if(EXISTS /usr/bin/python3)
    list(APPEND found /usr/bin/python3)
  endif()
  set(root "$ENV{PYENV_ROOT}")
  if(NOT root)
    find_program(pyenv_exe pyenv)
    if(pyenv_exe)
      execute_process(COMMAND ${pyenv_exe} root OUTPUT_VARIABLE root OUTPUT_STRIP_TRAILING_WHITESPACE
                      ERROR_QUIET)
    endif()
  endif()
  if(NOT root AND EXISTS "$ENV{HOME}/.pyenv")
    set(root "$ENV{HOME}/.pyenv")
  endif()
  if(root)
    file(GLOB pyenv_pythons LIST_DIRECTORIES false
         "${root}/versions/3.11*/bin/python3" "${root}/versions/3.12*/bin/python3"
         "${root}/versions/3.13*/bin/python3")
    list(SORT pyenv_pythons COMPARE NATURAL)
    list(APPEND found ${pyenv_pythons})
  endif()
  foreach(v IN ITEMS 3.11 3.12 3.13)
    if(NOT found MATCHES "/${v}")
      message(STATUS "jitframes: no pyenv CPython ${v} found (pyenv root: '${root}')")
    endif()
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# jitframes_python_probe(PYTHON OUT): OUT is "version;include dir;extension
# suffix;platlib" for a supported CPython with its headers, or empty (with
# the reason said) otherwise.
function(jitframes_python_probe python out)
  set(${out} "" PARENT_SCOPE)
  set(script [=[
import sys, sysconfig
ok = sys.implementation.name == "cpython" and (3, 11) <= sys.version_info[:2] <= (3, 13) \
     and not sysconfig.get_config_var("Py_GIL_DISABLED")
print("%s;%s;%s;%s;%d" % (sys.version.split()[0], sysconfig.get_paths()["include"],
      sysconfig.get_config_var("EXT_SUFFIX"), sysconfig.get_paths()["platlib"], ok))
]=])
  execute_process(COMMAND ${python} -c "${script}" OUTPUT_VARIABLE probe
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(STATUS "jitframes: ${python} does not run; skipped")
    return()
  endif()
  list(GET probe 0 version)
  list(GET probe 1 include_dir)
  list(GET probe 4 ok)
  if(NOT ok)
    message(STATUS "jitframes: ${python} (${version}) is not a supported CPython (3.11-3.13, with the GIL); skipped")
    return()
  endif()
  if(NOT EXISTS ${include_dir}/internal/pycore_frame.h)
    message(WARNING "jitframes: ${python} (${version}) has no headers in ${include_dir}; skipped "
                    "(Debian: python3-dev)")
    return()
  endif()
  list(REMOVE_AT probe 4)
  set(${out} "${probe}" PARENT_SCOPE)
endfunction()
