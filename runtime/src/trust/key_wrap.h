/* SPDX-License-Identifier: Apache-2.0 */
// Key-wrap files (schema/keys_format.h): the data key of a package's
// encrypted assets wrapped under device keys, in "<model>.keys" beside the
// package and outside its signature, so a device is re-keyed without
// signing again. Here: the strict parser, the unwrap of one entry, the one
// data key lookup sealed assets use, and a session's copy of the file.
//
// The lookup for a data key id (DataKeyFor):
//   1. the application's keys: added (epctx_env_add_decryption_key), else
//      the key provider's. Found: done; a provider failure: that failure.
//   2. else, for each entry of the key-wrap file for that data key id, in
//      file order: the device key of its wrap key id, from the application
//      exactly as in 1 (never from another entry: one level only). The
//      first entry whose device key the application has is unwrapped; a
//      tag that does not verify is DECRYPTION_FAILED (file, entry, ids),
//      not a reason to try the next entry.
//   3. no entry, or no device key for any: KEY_MISSING listing the device
//      key ids tried.
// Device keys and unwrapped data keys live on the stack only while they
// are used, and are wiped then.
//
// Ownership: a KeyWrapFile is a view of bytes its owner keeps; nothing in
// it is secret (every key in it is wrapped). A session's KeyWraps reads the
// file into private memory, so the bytes checked are the bytes used.
#ifndef EPCTX_TRUST_KEY_WRAP_H
#define EPCTX_TRUST_KEY_WRAP_H

#include <cstddef>
#include <cstdint>

#include <epctx/pal.h>

#include "core/status.h"
#include "core/types.h"
#include "trust/keyring.h"

namespace epctx {
namespace trust {

// A parsed key-wrap file: a view of `file`, whose every entry has been
// checked. `what` names it in messages (the owner's string).
struct KeyWrapFile {
  Bytes file{};
  uint32_t count = 0;
  const char* what = "";
};

// Entry i of a parsed file, its ids as strings.
struct KeyWrapEntry {
  char data_key_id[33] = {0};
  char wrap_key_id[33] = {0};
  uint8_t alg = 0;
  const uint8_t* bytes = nullptr;  // the entry's bytes in the file
};

// Checks `file` whole (header, sizes, every entry, duplicates) and points
// *out at it. INVALID_CONTAINER naming `what`, the entry and the field,
// expected vs found; UNSUPPORTED_ALGORITHM for an alg no format knows.
Status ParseKeyWrapFile(Bytes file, const char* what, KeyWrapFile* out);
// Entry i (< f.count) of a file ParseKeyWrapFile accepted.
KeyWrapEntry KeyWrapEntryAt(const KeyWrapFile& f, uint32_t i);
// The data key entry i wraps, unwrapped with its 32-byte device key into
// out. DECRYPTION_FAILED (a wrong device key, or the entry was changed or
// relabelled) and UNSUPPORTED_ALGORITHM (an alg this build lacks) name the
// file and the entry; out is zero then.
Status UnwrapKey(const KeyWrapFile& f, uint32_t i, const uint8_t device_key[32], uint8_t out[32]);
// The data key of `id` for the asset `what` names, as the header explains
// (wraps: nullptr when the package has no key-wrap file).
Status DataKeyFor(const Keyring& keys, const KeyWrapFile* wraps, const char* id, const char* what,
                  uint8_t out[32]);

// A session's key-wrap file: read on first use (only packages with an
// encrypted asset read it), held until Release.
class KeyWraps {
 public:
  KeyWraps() = default;
  ~KeyWraps() { Release(); }
  KeyWraps(const KeyWraps&) = delete;
  KeyWraps& operator=(const KeyWraps&) = delete;

  // The file to read: `path` (nullptr: none; the caller's string, valid
  // until Release), and whether a missing file is an error (the
  // application named it) or means the package has none.
  void Configure(const char* path, bool required) {
    path_ = path;
    required_ = required;
  }
  // Reads the file into private memory (refusing one larger than
  // EPCTX_KEYS_MAX_FILE_SIZE before reading it) and parses it, once;
  // *out = nullptr when there is no file. `label` names the model.
  Status Get(const char* label, const KeyWrapFile** out);
  // Frees the file; later Gets find none (loading is done).
  void Release();

 private:
  const char* path_ = nullptr;
  bool required_ = false;
  bool loaded_ = false;
  epctx_pal_region region_{};
  KeyWrapFile file_;
};

}  // namespace trust
}  // namespace epctx

#endif
