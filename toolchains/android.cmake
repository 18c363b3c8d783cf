# SPDX-License-Identifier: Apache-2.0
# Android, on top of the NDK's own toolchain file. ANDROID_NDK comes from the
# environment (or -DANDROID_NDK=...); ANDROID_ABI (arm64-v8a, x86_64) and
# ANDROID_PLATFORM (android-26 or newer) from the preset.
#   ANDROID_NDK=$HOME/Android/Sdk/ndk/<version> cmake --preset android-arm64-v8a
# The host's flatbuffers headers are used (header-only; flatc runs on the
# host); mbedtls is not in the NDK, so the presets build with EPCTX_TRUST=OFF
# unless given -DEPCTX_TRUST=ON -DEPCTX_MBEDCRYPTO_LIB=<Android libmbedcrypto.a>
# -DEPCTX_MBEDTLS_INCLUDE=<its include folder>. Untested in CI: no NDK there.
if(NOT ANDROID_NDK)
  set(ANDROID_NDK "$ENV{ANDROID_NDK}")
endif()
# Short messages: CMake wraps longer ones, and the reason should be one line.
if(NOT ANDROID_NDK)
  message(FATAL_ERROR "android: ANDROID_NDK is not set (export ANDROID_NDK=<NDK folder>)")
elseif(NOT EXISTS "${ANDROID_NDK}/build/cmake/android.toolchain.cmake")
  message(FATAL_ERROR "android: ANDROID_NDK=${ANDROID_NDK} has no build/cmake/android.toolchain.cmake")
endif()
if(NOT ANDROID_PLATFORM)
  set(ANDROID_PLATFORM android-26)
endif()
include("${ANDROID_NDK}/build/cmake/android.toolchain.cmake")

# flatbuffers, header-only, from a private copy of the host's headers (adding
# the host's /usr/include would mix glibc headers into an Android build).
set(EPCTX_FLATBUFFERS_INCLUDE ${CMAKE_BINARY_DIR}/flatbuffers-headers)
if(NOT EXISTS ${EPCTX_FLATBUFFERS_INCLUDE}/flatbuffers/flatbuffers.h)
  file(COPY /usr/include/flatbuffers DESTINATION ${EPCTX_FLATBUFFERS_INCLUDE})
endif()
set(FlatBuffers_DIR ${CMAKE_CURRENT_LIST_DIR}/flatbuffers-headers)
