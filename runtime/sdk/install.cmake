# SPDX-License-Identifier: Apache-2.0
# The installable SDK: `cmake --install <build> --prefix <dir>` writes
#   include/epctx/...                  the public headers (one include root)
#   lib/libepctx.so.0 (+ .so, .so.X.Y.Z) shared runtime, POSIX PAL, built-in drivers
#   lib/libepctx.a                     the same, static, only epctx_* symbols global
#   lib/libepctx_freestanding.a        core + EPCTX_DRIVERS, PAL undefined (a board's PAL links it)
#   lib/cmake/epctx/epctxConfig.cmake  imported targets epctx::runtime,
#                                      epctx::runtime_static, epctx::freestanding
#   lib/pkgconfig/epctx.pc             `pkg-config --cflags --libs [--static] epctx`
#   bin/                               host tools (host builds) and the device CLIs
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The ABI major of the shared library's SONAME. Bump it whenever epctx.h changes
# incompatibly (a removed or changed function, a changed struct layout).
set(EPCTX_SOVERSION 0)
set_target_properties(epctx_shared PROPERTIES VERSION ${PROJECT_VERSION}
  SOVERSION ${EPCTX_SOVERSION})

# epctx_hidden_archive(<target> <archive name> <object library>...)
# Builds <archive name> from the object libraries with every symbol that is
# not part of the API made local. The build-tree archives keep their symbols
# global (white-box tests call internals); the installed ones must not clash
# with an application's own copies of what the runtime uses inside, such as
# flatbuffers' templates (weak, emitted in COMDAT groups). ld -r merges the
# objects into one and --force-group-allocation dissolves the COMDAT groups:
# otherwise the application's group of the same signature would replace ours
# while our (now local) references still point into it. Then every defined
# symbol but the C API (epctx_*, default visibility) is made local: the hidden
# ones (everything compiled with -fvisibility=hidden, the POSIX PAL included)
# and the out-of-line members of the API's own structs that unoptimised builds
# emit under the headers' default visibility. Undefined references (PAL, libm,
# mbedtls) stay as they are.
option(EPCTX_HIDE_STATIC_SYMBOLS "Installed static libraries export only epctx_* symbols" ON)
function(epctx_hidden_archive target name)
  set(_dir ${PROJECT_BINARY_DIR}/sdk)
  set(_archive ${_dir}/${CMAKE_STATIC_LIBRARY_PREFIX}${name}${CMAKE_STATIC_LIBRARY_SUFFIX})
  set(_objects)
  foreach(_lib IN LISTS ARGN)
    list(APPEND _objects $<TARGET_OBJECTS:${_lib}>)
  endforeach()
  set(_merged ${_dir}/${name}.o)
  add_custom_command(OUTPUT ${_archive}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_dir}
    COMMAND ${CMAKE_LINKER} -r --force-group-allocation -o ${_merged} ${_objects}
    COMMAND ${CMAKE_OBJCOPY} --localize-hidden --wildcard "--keep-global-symbol=epctx_*" ${_merged}
    COMMAND ${CMAKE_COMMAND} -E rm -f ${_archive}
    COMMAND ${CMAKE_AR} qc ${_archive} ${_merged}
    COMMAND ${CMAKE_RANLIB} ${_archive}
    DEPENDS ${ARGN} ${_objects}
    COMMAND_EXPAND_LISTS VERBATIM
    COMMENT "Archiving ${name} with third-party symbols hidden")
  add_custom_target(${target} ALL DEPENDS ${_archive})
  set_target_properties(${target} PROPERTIES EPCTX_ARCHIVE ${_archive})
endfunction()

set(_free_objects epctx_core_obj epctx_ukernels_obj epctx_registry_obj)
foreach(_d IN LISTS EPCTX_DRIVERS)
  list(APPEND _free_objects epctx_${_d}_obj)
endforeach()
set(_static_objects ${_free_objects} epctx_pal_posix_obj)
if(EPCTX_HIDE_STATIC_SYMBOLS)
  epctx_hidden_archive(epctx_sdk_static epctx ${_static_objects})
  epctx_hidden_archive(epctx_sdk_freestanding epctx_freestanding ${_free_objects})
  get_target_property(_static_archive epctx_sdk_static EPCTX_ARCHIVE)
  get_target_property(_free_archive epctx_sdk_freestanding EPCTX_ARCHIVE)
  install(FILES ${_static_archive} ${_free_archive} DESTINATION ${CMAKE_INSTALL_LIBDIR})
else()
  install(TARGETS epctx_static epctx_freestanding ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(TARGETS epctx_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

set(_header_dirs ${PROJECT_SOURCE_DIR}/runtime/include/epctx ${PROJECT_SOURCE_DIR}/hal/include/epctx)
foreach(_d IN LISTS EPCTX_DRIVERS)
  if(EXISTS ${PROJECT_SOURCE_DIR}/hal/drivers/${_d}/include/epctx)
    list(APPEND _header_dirs ${PROJECT_SOURCE_DIR}/hal/drivers/${_d}/include/epctx)
  endif()
endforeach()
install(DIRECTORY ${_header_dirs}
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

foreach(_tool epctx-compile epctx-sign epctx-run epctx-inspect epctx-bench epctx-ocr)
  if(TARGET ${_tool})
    install(TARGETS ${_tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

# What a static link needs besides the archive (the shared library carries
# these itself). The names are plain library names: the application's
# toolchain finds them for its own target.
set(EPCTX_STATIC_DEPS ${EPCTX_SYSTEM_LIBS})
set(EPCTX_FREESTANDING_DEPS m)
if(EPCTX_TRUST)
  list(PREPEND EPCTX_STATIC_DEPS mbedcrypto)
  list(PREPEND EPCTX_FREESTANDING_DEPS mbedcrypto)
endif()
list(TRANSFORM EPCTX_STATIC_DEPS PREPEND -l OUTPUT_VARIABLE _pc_private)
list(JOIN _pc_private " " EPCTX_PC_LIBS_PRIVATE)

set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/epctx)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/epctxConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sdk/epctxConfig.cmake INSTALL_DESTINATION ${_cmake_dir}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sdk/epctxConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sdk/epctxConfig.cmake
  ${PROJECT_BINARY_DIR}/sdk/epctxConfigVersion.cmake DESTINATION ${_cmake_dir})

configure_file(${CMAKE_CURRENT_LIST_DIR}/epctx.pc.in ${PROJECT_BINARY_DIR}/sdk/epctx.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sdk/epctx.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
