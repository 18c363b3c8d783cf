# SPDX-License-Identifier: Apache-2.0
# flatbuffers as a header-only package for targets without a flatbuffers
# library of their own (riscv64 on Debian 12, Android): the runtime never
# links libflatbuffers. The toolchain file sets EPCTX_FLATBUFFERS_INCLUDE to
# a folder holding flatbuffers/ (a copy of the host's headers).
if(NOT TARGET flatbuffers::flatbuffers_shared)
  add_library(flatbuffers::flatbuffers_shared INTERFACE IMPORTED)
  set_target_properties(flatbuffers::flatbuffers_shared PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES ${EPCTX_FLATBUFFERS_INCLUDE})
endif()
set(FlatBuffers_FOUND TRUE)
