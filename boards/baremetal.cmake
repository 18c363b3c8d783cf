# SPDX-License-Identifier: Apache-2.0
# Included by the top-level CMakeLists when EPCTX_BOARD names a bare-metal
# board (boards/<name>, selected by its preset). Such a target has no /usr of
# its own, so the runtime's two dependencies come from the host instead:
#   - flatbuffers: Debian's libflatbuffers-dev is header-only for our use and
#     target-independent; its folder is staged alone so that the host's
#     /usr/include (glibc) never shadows the board's C library headers.
#   - mbedtls (libmbedcrypto): built here from Debian's source package
#     (tests/setup-deps.sh --cross unpacks it under /usr/local/src) with the
#     board's own config, boards/<name>/mbedtls_config.h: only SHA-256, ECDSA
#     P-256 verification and key parsing, ChaCha20-Poly1305 and HKDF (encrypted
#     packages), memory through the PAL allocator.
set(EPCTX_BOARD_DIR ${PROJECT_SOURCE_DIR}/boards/${EPCTX_BOARD})
if(NOT EXISTS ${EPCTX_BOARD_DIR}/CMakeLists.txt)
  message(FATAL_ERROR "EPCTX_BOARD=${EPCTX_BOARD}: no boards/${EPCTX_BOARD}/CMakeLists.txt")
endif()
# Code is linked at fixed addresses: position-independent code would only add
# a GOT for nothing.
set(CMAKE_POSITION_INDEPENDENT_CODE OFF)
# arm-none-eabi's uint32_t is unsigned long: every "%u" of a uint32_t warns,
# though both types are 32 bits and the runtime's formatter reads them alike.
add_compile_options(-Wno-format)
# The board's tests (images run under an emulator) are registered by the
# board's CMakeLists; CTest looks for them from the build root.
enable_testing()

find_path(EPCTX_FLATBUFFERS_INCLUDE flatbuffers/flatbuffers.h PATHS /usr/include
  NO_DEFAULT_PATH NO_CMAKE_FIND_ROOT_PATH)
if(NOT EPCTX_FLATBUFFERS_INCLUDE)
  message(FATAL_ERROR "flatbuffers headers not found in /usr/include (Debian: libflatbuffers-dev)")
endif()
set(_epctx_stage ${CMAKE_BINARY_DIR}/board-include)
file(MAKE_DIRECTORY ${_epctx_stage})
file(CREATE_LINK ${EPCTX_FLATBUFFERS_INCLUDE}/flatbuffers ${_epctx_stage}/flatbuffers SYMBOLIC)
add_library(flatbuffers::flatbuffers_shared INTERFACE IMPORTED)
set_target_properties(flatbuffers::flatbuffers_shared PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${_epctx_stage})

set(EPCTX_MBEDTLS_SOURCE_DIR "" CACHE PATH
  "mbedtls 2.28 source tree for the board's libmbedcrypto (default: /usr/local/src/mbedtls-2.*)")
if(NOT EPCTX_MBEDTLS_SOURCE_DIR)
  file(GLOB _epctx_mbed_trees LIST_DIRECTORIES true /usr/local/src/mbedtls-2.*)
  list(SORT _epctx_mbed_trees COMPARE NATURAL ORDER DESCENDING)
  set(_epctx_mbed_tree "")
  if(_epctx_mbed_trees)
    list(GET _epctx_mbed_trees 0 _epctx_mbed_tree)
  endif()
  if(NOT _epctx_mbed_tree OR NOT EXISTS ${_epctx_mbed_tree}/library/ecdsa.c)
    message(FATAL_ERROR "mbedtls source not found under /usr/local/src (run "
      "'bash tests/setup-deps.sh --cross', or set EPCTX_MBEDTLS_SOURCE_DIR)")
  endif()
  set(EPCTX_MBEDTLS_SOURCE_DIR ${_epctx_mbed_tree} CACHE PATH "" FORCE)
endif()
set(_mbed ${EPCTX_MBEDTLS_SOURCE_DIR}/library)
add_library(epctx_board_mbedcrypto STATIC
  ${_mbed}/asn1parse.c ${_mbed}/asn1write.c ${_mbed}/base64.c ${_mbed}/bignum.c
  ${_mbed}/constant_time.c ${_mbed}/ecdsa.c ${_mbed}/ecp.c ${_mbed}/ecp_curves.c
  ${_mbed}/md.c ${_mbed}/oid.c ${_mbed}/pem.c ${_mbed}/pk.c ${_mbed}/pk_wrap.c
  ${_mbed}/pkparse.c ${_mbed}/pkwrite.c ${_mbed}/platform.c ${_mbed}/platform_util.c
  ${_mbed}/sha256.c ${_mbed}/chacha20.c ${_mbed}/poly1305.c ${_mbed}/chachapoly.c
  ${_mbed}/hkdf.c)
# The config decides struct layouts: every user of the headers must see it,
# the runtime's trust code included.
add_compile_definitions("MBEDTLS_CONFIG_FILE=\"${EPCTX_BOARD_DIR}/mbedtls_config.h\"")
target_include_directories(epctx_board_mbedcrypto SYSTEM PUBLIC ${EPCTX_MBEDTLS_SOURCE_DIR}/include)
target_compile_options(epctx_board_mbedcrypto PRIVATE -Os -w)
# runtime/CMakeLists.txt links whatever these name (find_library and
# find_path keep a value that is already set).
set(EPCTX_MBEDCRYPTO_LIB epctx_board_mbedcrypto CACHE STRING "" FORCE)
set(EPCTX_MBEDTLS_INCLUDE ${EPCTX_MBEDTLS_SOURCE_DIR}/include CACHE PATH "" FORCE)
