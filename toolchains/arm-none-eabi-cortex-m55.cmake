# SPDX-License-Identifier: Apache-2.0
# Bare-metal Cortex-M55 (FPU + MVE) with Debian's gcc-arm-none-eabi and
# picolibc (picolibc-arm-none-eabi, libstdc++-arm-none-eabi-picolibc for the
# freestanding C++ headers). Used by the mps3-an547 preset; the board's own
# startup code replaces picolibc's crt0 (-nostartfiles in boards/mps3-an547).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m55)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
# No OS to link a test program against: probe compilers with a static library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(_epctx_m55 "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard --specs=picolibc.specs")
# GCC 12 if-converts a float-to-double conversion into an IT block as
# `vcvtne.f64.f32`, which binutils 2.40 reads as MVE's VCVTN and rejects when
# MVE is on (runtime/src/kernels/linalg.cc): no post-reload if-conversion.
set(_epctx_m55_cc "${_epctx_m55} -ffunction-sections -fdata-sections -fno-if-conversion2")
set(CMAKE_C_FLAGS_INIT "${_epctx_m55_cc}")
set(CMAKE_CXX_FLAGS_INIT "${_epctx_m55_cc}")
set(CMAKE_ASM_FLAGS_INIT "${_epctx_m55}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
