# SPDX-License-Identifier: Apache-2.0
# cmake -DLISTED=cpu_ops.txt -DEMITTED="a.txt;b.txt" -P check_cpu_ops.cmake
# Fails when the board's kernel list (LISTED) differs from the union of the
# op lists epctx-compile emitted for the board's models (EMITTED): a missing
# op would fail on the device with "no CPU kernel", an extra one costs flash.
function(read_ops file out)
  file(STRINGS ${file} _lines)
  set(_ops)
  foreach(_l IN LISTS _lines)
    string(REGEX REPLACE "#.*" "" _l "${_l}")
    string(STRIP "${_l}" _l)
    if(NOT _l STREQUAL "")
      list(APPEND _ops ${_l})
    endif()
  endforeach()
  set(${out} ${_ops} PARENT_SCOPE)
endfunction()
read_ops(${LISTED} _listed)
set(_needed)
foreach(_f IN LISTS EMITTED)
  read_ops(${_f} _ops)
  list(APPEND _needed ${_ops})
endforeach()
list(REMOVE_DUPLICATES _needed)
list(SORT _needed)
list(REMOVE_DUPLICATES _listed)
list(SORT _listed)
if(NOT "${_listed}" STREQUAL "${_needed}")
  string(REPLACE ";" ", " _a "${_listed}")
  string(REPLACE ";" ", " _b "${_needed}")
  message(FATAL_ERROR "${LISTED}: lists [${_a}] but the board's compiled models leave "
    "[${_b}] to the CPU (epctx-compile --emit-op-list): update the list")
endif()
