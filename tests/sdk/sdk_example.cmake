# SPDX-License-Identifier: Apache-2.0
# cmake -P driver of the sdk_install_example test (see CMakeLists.txt here).
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

# Runs an example binary on the compiled model; it must print its PASS line.
function(check_example what exe)
  run("${what}: running" ${EMULATOR} ${exe} ${WORK}/cnn_ctx.onnx ${CASE}/input_0.npy
      ${CASE}/expected_0.npy)
  if(NOT run_out MATCHES "epctx_example: PASS")
    message(FATAL_ERROR "${what}: no PASS line in: ${run_out}")
  endif()
  message(STATUS "${what}: ${run_out}")
endfunction()

file(REMOVE_RECURSE ${PREFIX} ${WORK})
file(MAKE_DIRECTORY ${WORK})
run("install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${PREFIX})
run("epctx-compile" ${COMPILE} ${CASE}/model.onnx -o ${WORK}/cnn_ctx.onnx --quiet)

# What the installed tree promises.
foreach(f include/epctx/epctx.h include/epctx/epctx.hpp include/epctx/hal.h include/epctx/pal.h
    lib/libepctx.a lib/libepctx_freestanding.a lib/libepctx.so.0 lib/cmake/epctx/epctxConfig.cmake
    lib/cmake/epctx/epctxConfigVersion.cmake lib/pkgconfig/epctx.pc)
  if(NOT EXISTS ${PREFIX}/${f})
    message(FATAL_ERROR "installed tree lacks ${f}")
  endif()
endforeach()
run("readelf" ${READELF} -d ${PREFIX}/lib/libepctx.so.0)
if(NOT run_out MATCHES "Library soname: \\[libepctx\\.so\\.0\\]")
  message(FATAL_ERROR "libepctx.so.0 has no SONAME libepctx.so.0:\n${run_out}")
endif()
# The static archives define only the API globally: no flatbuffers (or any
# other) template an application could also have.
foreach(lib libepctx.a libepctx_freestanding.a)
  run("nm ${lib}" ${NM} -g --defined-only --format=posix ${PREFIX}/lib/${lib})
  string(REGEX MATCHALL "\n[^ \n]+ [A-Za-z]" defs "\n${run_out}")
  set(count 0)
  foreach(d IN LISTS defs)
    string(STRIP "${d}" d)
    if(d MATCHES "^[^ ]+\\[" OR d MATCHES ":$")
      continue()  # archive member headers
    endif()
    if(NOT d MATCHES "^epctx_")
      message(FATAL_ERROR "${lib} exports a non-API symbol: ${d}")
    endif()
    math(EXPR count "${count} + 1")
  endforeach()
  if(count LESS 20)
    message(FATAL_ERROR "${lib} exports only ${count} epctx_ symbols:\n${run_out}")
  endif()
endforeach()

set(toolchain_arg)
if(TOOLCHAIN)
  set(toolchain_arg -DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN})
endif()
foreach(kind shared static)
  set(static OFF)
  if(kind STREQUAL static)
    set(static ON)
  endif()
  set(dir ${WORK}/cmake-${kind})
  run("find_package (${kind}): configure" ${CMAKE_COMMAND} -G ${GENERATOR} -S ${EXAMPLE} -B ${dir}
      -DCMAKE_PREFIX_PATH=${PREFIX} -DEPCTX_EXAMPLE_STATIC=${static} ${toolchain_arg})
  run("find_package (${kind}): build" ${CMAKE_COMMAND} --build ${dir})
  check_example("find_package (${kind})" ${dir}/epctx_example)

  set(dir ${WORK}/make-${kind})
  file(MAKE_DIRECTORY ${dir})
  file(COPY ${EXAMPLE}/example.c ${EXAMPLE}/Makefile DESTINATION ${dir})
  set(make_static)
  if(static)
    set(make_static STATIC=1)
  endif()
  run("pkg-config (${kind}): make" ${CMAKE_COMMAND} -E env PKG_CONFIG_LIBDIR=${PREFIX}/lib/pkgconfig
      PKG_CONFIG_PATH= ${MAKE} -C ${dir} CC=${CC} ${make_static})
  check_example("pkg-config (${kind})" ${dir}/epctx_example)
endforeach()

# The OCR example application on its own against the installed SDK, as its
# README says; the installed tree has the epctx-ocr this build made.
if(OCR_APP)
  if(NOT EXISTS ${PREFIX}/bin/epctx-ocr)
    message(FATAL_ERROR "installed tree lacks bin/epctx-ocr")
  endif()
  set(dir ${WORK}/ocr-app)
  run("epctx-ocr against the SDK: configure" ${CMAKE_COMMAND} -G ${GENERATOR} -S ${OCR_APP} -B ${dir}
      -DCMAKE_PREFIX_PATH=${PREFIX} ${toolchain_arg})
  run("epctx-ocr against the SDK: build" ${CMAKE_COMMAND} --build ${dir})
  run("epctx-ocr against the SDK: --version" ${EMULATOR} ${dir}/epctx-ocr --version)
  if(NOT run_out MATCHES "^epctx-ocr \\(epctx\\)")
    message(FATAL_ERROR "epctx-ocr --version printed: ${run_out}")
  endif()
  message(STATUS "epctx-ocr against the SDK: ${run_out}")
endif()
