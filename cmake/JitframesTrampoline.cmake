# Trampoline template: assemble src/arch/<arch>.S, extract its code and CFI
# with src/host/cfi-extract.c (a build-host program, built into <build>/host), and hand the generated header
# to src/trampoline.c. Adding an architecture = one .S file + one line below
# (and, if its slot reference is a new relocation kind, one case in
# cfi-extract and trampoline.c's link_to_slot).
#
# Defines, in the including directory:
#   JITFRAMES_TEMPLATE_ARCH    x86_64 / aarch64 / riscv64 / ppc64le / s390x, or ""
#                              if unsupported
#   jitframes_template         OBJECT library: the template linked as-is
#                              (tests and benchmarks link it, defining the
#                              data symbol jitframes_trampoline_slot themselves)
#   JITFRAMES_TEMPLATE_HEADER  the generated header (add it to the sources)
#   JITFRAMES_GENERATED_DIR    include directory holding it
#   jitframes_add_template_support(target)  wires both into a library target

set(JITFRAMES_CFI_EXTRACT "" CACHE FILEPATH
  "cfi-extract built for the build host; required when cross-compiling")

string(TOLOWER "${CMAKE_SYSTEM_PROCESSOR}" _jf_cpu)
if(_jf_cpu MATCHES "^(x86_64|amd64)$")
  set(JITFRAMES_TEMPLATE_ARCH x86_64)
elseif(_jf_cpu MATCHES "^(aarch64|arm64)$")
  set(JITFRAMES_TEMPLATE_ARCH aarch64)
elseif(_jf_cpu STREQUAL "riscv64")
  set(JITFRAMES_TEMPLATE_ARCH riscv64)
elseif(_jf_cpu MATCHES "^(ppc64le|powerpc64le)$")
  set(JITFRAMES_TEMPLATE_ARCH ppc64le)
elseif(_jf_cpu STREQUAL "s390x")
  set(JITFRAMES_TEMPLATE_ARCH s390x)
else()
  set(JITFRAMES_TEMPLATE_ARCH "")
  message(STATUS "jitframes: no trampoline template for ${CMAKE_SYSTEM_PROCESSOR}; "
                 "jf_trampoline_create will return JF_ENOTSUP")
endif()
# Visible to every directory (tests and benchmarks use the template too).
set(JITFRAMES_TEMPLATE_ARCH "${JITFRAMES_TEMPLATE_ARCH}" CACHE INTERNAL "trampoline template architecture")

if(JITFRAMES_CFI_EXTRACT)
  set(JITFRAMES_CFI_EXTRACT_COMMAND "${JITFRAMES_CFI_EXTRACT}")
  set(_jf_extract_dep "${JITFRAMES_CFI_EXTRACT}")
elseif(CMAKE_CROSSCOMPILING)
  message(FATAL_ERROR "Cross-compiling jitframes needs -DJITFRAMES_CFI_EXTRACT=<cfi-extract "
                      "built for the build host> (a native build makes one: target jitframes_cfi_extract)")
else()
  add_executable(jitframes_cfi_extract ${PROJECT_SOURCE_DIR}/src/host/cfi-extract.c)
  target_link_libraries(jitframes_cfi_extract PRIVATE jitframes_warnings)
  target_include_directories(jitframes_cfi_extract PRIVATE ${PROJECT_SOURCE_DIR}/src) # dwarf_cfa.h
  set_target_properties(jitframes_cfi_extract PROPERTIES OUTPUT_NAME cfi-extract
    RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/host)
  set(JITFRAMES_CFI_EXTRACT_COMMAND $<TARGET_FILE:jitframes_cfi_extract>)
  set(_jf_extract_dep jitframes_cfi_extract)
endif()

set(JITFRAMES_GENERATED_DIR ${CMAKE_CURRENT_BINARY_DIR}/generated)
set(JITFRAMES_TEMPLATE_HEADER "")
if(JITFRAMES_TEMPLATE_ARCH)
  add_library(jitframes_template OBJECT ${PROJECT_SOURCE_DIR}/src/arch/${JITFRAMES_TEMPLATE_ARCH}.S)
  set(JITFRAMES_TEMPLATE_HEADER ${JITFRAMES_GENERATED_DIR}/trampoline_template.h)
  add_custom_command(OUTPUT ${JITFRAMES_TEMPLATE_HEADER}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${JITFRAMES_GENERATED_DIR}
    COMMAND ${JITFRAMES_CFI_EXTRACT_COMMAND} $<TARGET_OBJECTS:jitframes_template> ${JITFRAMES_TEMPLATE_HEADER}
    DEPENDS jitframes_template $<TARGET_OBJECTS:jitframes_template> ${_jf_extract_dep}
    COMMENT "Extracting the ${JITFRAMES_TEMPLATE_ARCH} trampoline template and its CFI"
    VERBATIM)
endif()

function(jitframes_add_template_support target)
  target_include_directories(${target} PRIVATE ${JITFRAMES_GENERATED_DIR})
  if(JITFRAMES_TEMPLATE_ARCH)
    target_compile_definitions(${target} PRIVATE JF_HAVE_TRAMPOLINE_TEMPLATE=1)
  endif()
endfunction()
