# SPDX-License-Identifier: Apache-2.0
# Cross-compile for aarch64 Linux with Debian's g++-aarch64-linux-gnu.
# Binaries run on x86_64 through qemu-aarch64 (CTest uses it as emulator).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
find_program(EPCTX_QEMU_AARCH64 qemu-aarch64)
set(CMAKE_CROSSCOMPILING_EMULATOR ${EPCTX_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
