# SPDX-License-Identifier: Apache-2.0
# Cross-compile for 64-bit RISC-V Linux (rv64gc) with Debian's
# g++-riscv64-linux-gnu. Binaries run on x86_64 through qemu-riscv64 (CTest
# uses it as emulator). Debian 12 has no riscv64 architecture to install
# libraries from, so tests/setup-deps.sh --cross builds cmocka and mbedtls's
# libmbedcrypto from Debian's own source packages for riscv64 into
# EPCTX_RISCV64_PREFIX and copies flatbuffers' headers there (the runtime uses
# flatbuffers header-only).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR riscv64)
set(CMAKE_C_COMPILER riscv64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER riscv64-linux-gnu-g++)
if(NOT EPCTX_RISCV64_PREFIX)
  set(EPCTX_RISCV64_PREFIX /usr/local/epctx-riscv64)
endif()
if(NOT EXISTS ${EPCTX_RISCV64_PREFIX}/include/cmocka.h)
  message(FATAL_ERROR "riscv64-linux: no riscv64 cmocka/mbedtls in ${EPCTX_RISCV64_PREFIX}: "
    "run 'bash tests/setup-deps.sh --cross' first")
endif()
set(CMAKE_FIND_ROOT_PATH /usr/riscv64-linux-gnu ${EPCTX_RISCV64_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# BOTH: also an application's own CMAKE_PREFIX_PATH (an installed epctx SDK).
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# The header-only flatbuffers package (toolchains/flatbuffers-headers/).
set(EPCTX_FLATBUFFERS_INCLUDE ${EPCTX_RISCV64_PREFIX}/include)
set(FlatBuffers_DIR ${CMAKE_CURRENT_LIST_DIR}/flatbuffers-headers)
find_program(EPCTX_QEMU_RISCV64 qemu-riscv64)
set(CMAKE_CROSSCOMPILING_EMULATOR ${EPCTX_QEMU_RISCV64} -L /usr/riscv64-linux-gnu)
