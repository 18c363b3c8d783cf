// SPDX-License-Identifier: Apache-2.0
// The signature policy option (epctx.signature_policy), shared by the
// verifier and by the EPCTX_TRUST=OFF stub.
#include "core/types.h"
#include "trust/verifier.h"

namespace epctx {
namespace trust {

bool ParsePolicy(const char* value, Policy* out) {
  if (cstr_eq(value, "off")) *out = Policy::kOff;
  else if (cstr_eq(value, "if_signed")) *out = Policy::kIfSigned;
  else if (cstr_eq(value, "required")) *out = Policy::kRequired;
  else return false;
  return true;
}

Policy DefaultPolicy() {
#if defined(EPCTX_REQUIRE_SIGNATURES)
  return Policy::kRequired;
#else
  return Policy::kIfSigned;
#endif
}

}  // namespace trust
}  // namespace epctx
