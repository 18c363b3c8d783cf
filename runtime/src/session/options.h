// Session options: string key/value config entries (ORT's key names, ours
// under "epctx."). Keys are checked when set, so a typo fails at once.
#ifndef EPCTX_SESSION_OPTIONS_H
#define EPCTX_SESSION_OPTIONS_H

#include "core/status.h"

namespace epctx {

// Keys this runtime understands.
extern const char* const kOptEpContextFilePath;           // ep.context_file_path
extern const char* const kOptExternalInitializersFolder;  // session.model_external_initializers_file_folder_path
extern const char* const kOptLoadMode;                    // epctx.load_mode = mmap | read
extern const char* const kOptFailOnSuboptimal;  // session.fail_on_suboptimal_compiled_model = 0 | 1

class Options {
 public:
  static constexpr int kMaxEntries = 32;
  static constexpr int kMaxValue = 1024;

  // INVALID_ARGUMENT naming the key when it is unknown, its value is invalid
  // or longer than kMaxValue (ORT silently drops such values; we refuse).
  Status Set(const char* key, const char* value);
  // The value, or nullptr when not set.
  const char* Get(const char* key) const;

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
