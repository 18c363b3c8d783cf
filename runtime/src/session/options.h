/* SPDX-License-Identifier: Apache-2.0 */
// Session options: string key/value config entries (ORT's key names, ours
// under "epctx."). Keys are checked when set, so a typo fails at once.
#ifndef EPCTX_SESSION_OPTIONS_H
#define EPCTX_SESSION_OPTIONS_H

#include <cstdint>

#include "core/status.h"

namespace epctx {

// Keys this runtime understands.
extern const char* const kOptEpContextFilePath;           // ep.context_file_path
extern const char* const kOptExternalInitializersFolder;  // session.model_external_initializers_file_folder_path
extern const char* const kOptLoadMode;                    // epctx.load_mode = mmap | read
extern const char* const kOptShareEpContexts;             // ep.share_ep_contexts = 0 | 1
extern const char* const kOptStopShareEpContexts;         // ep.stop_share_ep_contexts = 0 | 1
extern const char* const kOptAdvise;                      // epctx.advise = none | willneed
extern const char* const kOptFailOnSuboptimal;  // session.fail_on_suboptimal_compiled_model = 0 | 1
// session.intra_op_num_threads = 0 (the cores the process may use) | 1 (the
// caller only) | N (the caller and N - 1 pool threads), at most 256.
extern const char* const kOptIntraOpThreads;
// Read by trust/verifier.cc:
extern const char* const kOptSignaturePolicy;  // epctx.signature_policy = required | if_signed | off
extern const char* const kOptSignaturePath;    // epctx.signature_path = the manifest's path
extern const char* const kOptExpectedModelId;  // epctx.expected_model_id = the id signed packages must carry

class ContextGroup;

// session.intra_op_num_threads: decimal 0..256; false for anything else.
bool ParseThreadCount(const char* value, uint32_t* out);

class Options {
 public:
  static constexpr int kMaxEntries = 32;
  static constexpr int kMaxValue = 1024;

  // INVALID_ARGUMENT naming the key when it is unknown, its value is invalid
  // or longer than kMaxValue (ORT silently drops such values; we refuse).
  Status Set(const char* key, const char* value);
  // The value, or nullptr when not set.
  const char* Get(const char* key) const;
  // True when a 0/1 key is set to 1.
  bool Flag(const char* key) const;

  // The context group sessions created with these options join (nullptr:
  // none, or the env's when ep.share_ep_contexts=1). Not owned here: the C
  // API's options object holds the reference.
  ContextGroup* group = nullptr;

 private:
  struct Entry {
    const char* key;  // points at a static key name
    char value[kMaxValue + 1];
  };
  Entry entries_[kMaxEntries];
  int count_ = 0;
};

}  // namespace epctx

#endif
