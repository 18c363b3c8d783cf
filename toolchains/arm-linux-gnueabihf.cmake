# SPDX-License-Identifier: Apache-2.0
# Cross-compile for 32-bit Arm Linux (armv7-a, hard float: Debian's armhf) with
# Debian's g++-arm-linux-gnueabihf. Binaries run on x86_64 through qemu-arm
# (CTest uses it as emulator); the armhf libraries come from dpkg's armhf
# architecture (tests/setup-deps.sh --cross).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(CMAKE_C_COMPILER arm-linux-gnueabihf-gcc)
set(CMAKE_CXX_COMPILER arm-linux-gnueabihf-g++)
set(CMAKE_FIND_ROOT_PATH /usr/arm-linux-gnueabihf /usr/lib/arm-linux-gnueabihf)
set(CMAKE_LIBRARY_ARCHITECTURE arm-linux-gnueabihf)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
find_program(EPCTX_QEMU_ARM qemu-arm)
set(CMAKE_CROSSCOMPILING_EMULATOR ${EPCTX_QEMU_ARM} -L /usr/arm-linux-gnueabihf)
