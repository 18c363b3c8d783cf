/* SPDX-License-Identifier: Apache-2.0 */
// Verifying a flatbuffer root without flatbuffers' identifier check.
//
// Verifier::VerifyBuffer compares the file identifier with strncmp, which a
// bare-metal board need not have (and -O0 builds keep the call even when the
// identifier is null). Callers compare the 4 identifier bytes with memcmp
// themselves and then verify the root table here.
#ifndef EPCTX_CORE_FB_VERIFY_H
#define EPCTX_CORE_FB_VERIFY_H

#include <cstddef>
#include <cstdint>

#include <flatbuffers/flatbuffers.h>

namespace epctx {

template <typename T>
bool VerifyFlatbufferRoot(flatbuffers::Verifier& verifier, const uint8_t* buf, size_t size) {
  if (size < sizeof(flatbuffers::uoffset_t) + sizeof(flatbuffers::soffset_t) +
                 2 * sizeof(flatbuffers::voffset_t))
    return false;
  flatbuffers::uoffset_t root = verifier.VerifyOffset(0);
  return root != 0 && reinterpret_cast<const T*>(buf + root)->Verify(verifier);
}

}  // namespace epctx

#endif
