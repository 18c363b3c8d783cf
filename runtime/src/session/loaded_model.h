/* SPDX-License-Identifier: Apache-2.0 */
// The first of a session's three parts (session.h): the parsed and verified
// model. Open maps the file (or borrows the caller's buffer), checks a signed
// package's manifest and the model's hash before a byte is parsed, and
// parses the model in place. Later, the plan asks it for initializer data
// (external files mapped beneath the model's folder and verified before
// they are read) and the context binder for context files; every mapping
// and the metadata arena the other parts allocate from are owned here, so
// this part outlives both.
#ifndef EPCTX_SESSION_LOADED_MODEL_H
#define EPCTX_SESSION_LOADED_MODEL_H

#include <epctx/pal.h>

#include "core/budget.h"
#include "core/memory.h"
#include "core/status.h"
#include "kernels/kernel.h"
#include "onnx/model.h"
#include "session/env.h"
#include "session/options.h"
#include "trust/key_wrap.h"
#include "trust/verifier.h"

namespace epctx {

// The folder relative files (context binaries, external data) resolve
// against: that of ep.context_file_path when set (also for a model loaded
// from a path, as QNN does), else the model's; nullptr for a buffer without
// ep.context_file_path. An empty ep.context_file_path counts as unset.
// Copied into `arena`.
const char* ContextBaseDir(const Options& options, const char* model_path, Arena& arena);

class LoadedModel {
 public:
  explicit LoadedModel(Env* env);
  ~LoadedModel();  // unmaps the external-data files and the model
  LoadedModel(const LoadedModel&) = delete;
  LoadedModel& operator=(const LoadedModel&) = delete;

  // Exactly one of path / (buffer, size) is given. `options` must stay valid
  // until Finish (FindExternal reads the application's files from it).
  Status Open(const char* path, const void* buffer, size_t size, const Options& options);
  // The bytes of initializer t of the graph `label` names: a view into the
  // model, or into its external file (beneath the model's folder or
  // session.model_external_initializers_file_folder_path), mapped, range
  // checked and, in a signed package, verified. INVALID_GRAPH for a size
  // that does not match the type and shape, or a BOOL byte other than 0/1.
  Status InitializerData(const onnx::TensorView& t, const char* label, TensorRef* r);
  // Maps `rel` beneath folder `base` (nullptr: unknown, an error naming
  // ep.context_file_path), or the application's stand-in for it. `what`
  // names the file's role in messages.
  Status MapBeneath(const char* base, const char* rel, size_t rel_len, const char* what,
                    epctx_pal_region* out);
  // The application's stand-in for the file `rel` (memory or a descriptor),
  // or nullptr: look on the file system. Only until Finish.
  const Options::ExternalFile* FindExternal(const char* rel, size_t rel_len) const {
    return options_ ? options_->FindExternalFile(rel, rel_len) : nullptr;
  }
  // The package's key-wrap file (schema/keys_format.h: <model>.keys, or
  // epctx.keys_path), read and parsed on the first call; *out = nullptr
  // when the package has none. Only until Finish.
  Status KeyWraps(const trust::KeyWrapFile** out) { return key_wraps_.Get(label_, out); }
  // Loading is done: every byte the session uses is verified (a signed
  // package's rollback counter advances), the OS may read ahead again, and
  // the caller's options and the key-wrap file are no longer read.
  Status Finish();

  Env* env() const { return env_; }
  const Allocator& alloc() const { return alloc_; }
  const Budget& budget() const { return budget_; }
  Arena& meta() { return meta_; }
  size_t meta_bytes() const { return meta_.bytes_allocated(); }
  const char* label() const { return label_; }
  // Folder relative files resolve against; nullptr: none known.
  const char* base_dir() const { return base_dir_; }
  int load_mode() const { return load_mode_; }
  const epctx_pal_region& region() const { return model_region_; }
  const onnx::ModelView& view() const { return model_; }
  trust::PackageVerifier& verifier() { return verifier_; }

 private:
  Status CheckBool(const TensorRef& r, StrView name) const;
  // An encrypted model (sealed.h): decrypted whole into private memory,
  // each segment hashed on its copy when the package is signed.
  Status OpenSealedModel(const char* path, const Options& options);
  // An encrypted external-data file: mapped and opened once per file (its
  // key and plaintext buffer), the ranges initializers use decrypted as
  // they are asked for.
  struct SealedData;
  // The encrypted file `location` once opened (nullptr: not yet, or plain).
  SealedData* FindSealedData(StrView location) const;
  // Opens the encrypted file `location`, mapped as `mapped` (kept mapped).
  Status SealedDataFile(StrView location, const char* what, const epctx_pal_region& mapped,
                        SealedData** out);

  Env* env_;
  // epctx.max_memory_bytes: the metadata arena and every run's memory are
  // taken through alloc_, the budget's allocator (unlimited by default).
  Budget budget_;
  Allocator alloc_;
  Arena meta_;
  int load_mode_ = EPCTX_PAL_LOAD_MMAP;
  epctx_pal_region model_region_{};
  Bytes model_bytes_;
  const char* label_ = "";
  const Options* options_ = nullptr;  // until Finish
  const char* base_dir_ = nullptr;
  const char* ext_folder_ = nullptr;  // session.model_external_initializers_file_folder_path
  onnx::ModelView model_;
  trust::PackageVerifier verifier_;           // signed packages: checks bytes before use
  trust::KeyWraps key_wraps_;                 // encrypted packages: until Finish
  epctx_pal_region* data_regions_ = nullptr;  // external-data files, of every graph
  uint32_t num_data_regions_ = 0;
  uint8_t* model_plain_ = nullptr;  // an encrypted model's plaintext (model_bytes_)
  size_t model_plain_size_ = 0;
  SealedData* sealed_data_ = nullptr;  // encrypted external-data files, a list
};

}  // namespace epctx

#endif
