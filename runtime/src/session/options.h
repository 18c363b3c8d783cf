/* SPDX-License-Identifier: Apache-2.0 */
// Session options: string key/value config entries (ORT's key names, ours
// under "epctx."). Keys are checked when set, so a typo fails at once.
#ifndef EPCTX_SESSION_OPTIONS_H
#define EPCTX_SESSION_OPTIONS_H

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace epctx {

// Keys this runtime understands.
extern const char* const kOptEpContextFilePath;  // ep.context_file_path
// session.model_external_initializers_file_folder_path
extern const char* const kOptExternalInitializersFolder;
extern const char* const kOptLoadMode;             // epctx.load_mode = mmap | read
extern const char* const kOptShareEpContexts;      // ep.share_ep_contexts = 0 | 1
extern const char* const kOptStopShareEpContexts;  // ep.stop_share_ep_contexts = 0 | 1
extern const char* const kOptAdvise;               // epctx.advise = none | willneed
// epctx.max_memory_bytes = N[K|M|G] (arena + metadata)
extern const char* const kOptMaxMemoryBytes;
// session.fail_on_suboptimal_compiled_model = 0 | 1
extern const char* const kOptFailOnSuboptimal;
// session.intra_op_num_threads = 0 (the cores the process may use) | 1 (the
// caller only) | N (the caller and N - 1 pool threads), at most 256.
extern const char* const kOptIntraOpThreads;
// session.disable_prepacking = 0 | 1 (CPU kernels' constant weights unpacked)
extern const char* const kOptDisablePrepacking;
// Read by trust/verifier.cc:
// epctx.signature_policy = required | if_signed | off
extern const char* const kOptSignaturePolicy;
extern const char* const kOptSignaturePath;  // epctx.signature_path = the manifest's path
// epctx.keys_path = the key-wrap file's path (read by session/trust_config.cc)
extern const char* const kOptKeysPath;
// epctx.expected_model_id = the id signed packages must carry
extern const char* const kOptExpectedModelId;

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

  // The keys Set accepts (<epctx/session_config_keys.h> documents them).
  static uint32_t KnownKeyCount();
  static const char* KnownKey(uint32_t i);  // nullptr past the end

  // A file the model names by a relative path (an EPContext node's
  // ep_cache_context, an initializer's external location) given by the app
  // instead of the file system: bytes in memory (borrowed: valid and
  // unchanged while the sessions live) or a range of an open file
  // descriptor (mapped or read at create; the app may close it after).
  struct ExternalFile {
    static constexpr size_t kMaxName = 255;
    char name[kMaxName + 1];
    const void* data;  // memory, or nullptr for a descriptor
    uint64_t size;     // bytes of data, or the range's length
    int fd;            // -1 for memory
    uint64_t offset;   // the range's start in fd
  };
  static constexpr int kMaxExternalFiles = 8;
  // INVALID_ARGUMENT naming the name when it is empty, too long, absolute or
  // given twice, or when kMaxExternalFiles are set.
  Status AddExternalFile(const char* name, const void* data, uint64_t size, int fd,
                         uint64_t offset);
  // The entry whose name is exactly `name` (not NUL-terminated), or nullptr.
  const ExternalFile* FindExternalFile(const char* name, size_t len) const;

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
  ExternalFile external_[kMaxExternalFiles];
  int num_external_ = 0;
};

}  // namespace epctx

#endif
