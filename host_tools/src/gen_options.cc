// SPDX-License-Identifier: Apache-2.0
// Session config entries and output naming for the compile library.
#include "gen_options.h"

#include <sys/stat.h>

#include <stdexcept>

#include <epctx/session_config_keys.h>

#include "epctx_host/model_io.h"

namespace epctx {
namespace host {

namespace {

// ORT's key names (<epctx/session_config_keys.h>: scope GEN and BOTH).
const char* const kKeyEnable = EPCTX_CONFIG_EP_CONTEXT_ENABLE;
const char* const kKeyFilePath = EPCTX_CONFIG_EP_CONTEXT_FILE_PATH;
const char* const kKeyEmbedMode = EPCTX_CONFIG_EP_CONTEXT_EMBED_MODE;
const char* const kKeyNodeNamePrefix = EPCTX_CONFIG_EP_CONTEXT_NODE_NAME_PREFIX;
const char* const kKeyExternalInitializersFile = EPCTX_CONFIG_EP_CONTEXT_EXTERNAL_INITIALIZERS_FILE;
const char* const kKeyExternalInitializersFolder = EPCTX_CONFIG_EXTERNAL_INITIALIZERS_FOLDER;
const char* const kKeyShare = EPCTX_CONFIG_SHARE_EP_CONTEXTS;
const char* const kKeyStopShare = EPCTX_CONFIG_STOP_SHARE_EP_CONTEXTS;

const char* const kConfig = "session config";  // the "file" of config errors

[[noreturn]] void Bad(const std::string& what) {
  throw ToolError(kConfig, what, EPCTX_INVALID_ARGUMENT);
}

bool Flag(const std::string& key, const std::string& value) {
  if (value == "0") return false;
  if (value == "1") return true;
  Bad("'" + key + "': expected 0 or 1, found '" + value + "'");
}

// A file name the output model refers to: no folder escape, not absolute.
void CheckRelativeName(const std::string& key, const std::string& value) {
  if (value.empty()) Bad("'" + key + "': empty file name");
  if (value[0] == '/' || value.find("..") != std::string::npos || value.back() == '/')
    Bad("'" + key + "': '" + value +
        "' must be a file name relative to the output model, without '..'");
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

GenOptions ResolveConfig(const ConfigEntries& config) {
  GenOptions g;
  for (const auto& kv : config) {
    const std::string& k = kv.first;
    const std::string& v = kv.second;
    if (k == kKeyEnable) {
      if (!Flag(k, v))
        Bad("'ep.context_enable' is 0: compiling always generates an EPContext "
            "model (leave the key out or set it to 1)");
    } else if (k == kKeyFilePath) {
      g.set_file_path = true;
      g.file_path = v;
    } else if (k == kKeyEmbedMode) {
      g.set_embed_mode = true;
      g.embed_mode = Flag(k, v) ? 1 : 0;
    } else if (k == kKeyNodeNamePrefix) {
      for (char c : v)
        if (c == '/' || c == '\0' || static_cast<unsigned char>(c) < 0x20)
          Bad("'ep.context_node_name_prefix': '" + v + "' contains a '/' or control character");
      g.prefix = v;
    } else if (k == kKeyExternalInitializersFile) {
      CheckRelativeName(k, v);
      g.external_initializers_file = v;
    } else if (k == kKeyExternalInitializersFolder) {
      g.external_folder = v;
    } else if (k == kKeyShare) {
      g.set_share = true;
      g.share = Flag(k, v);
    } else if (k == kKeyStopShare) {
      g.set_stop_share = true;
      g.stop_share = Flag(k, v);
    } else {
      Bad("unknown key '" + k + "' (known: ep.context_enable, " +
          "ep.context_file_path, ep.context_embed_mode, ep.context_node_name_prefix, " +
          "ep.context_model_external_initializers_file_name, " +
          "session.model_external_initializers_file_folder_path, ep.share_ep_contexts, " +
          "ep.stop_share_ep_contexts)");
    }
  }
  if (g.share && g.embed_mode == 1)
    Bad("ep.share_ep_contexts=1 needs ep.context_embed_mode=0 (the models of a "
        "group share one [model]_[ep].bin)");
  return g;
}

ConfigEntries ParseConfigEntries(const std::string& text, const char* option) {
  ConfigEntries out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i == text.size()) break;
    size_t end = text.find(' ', i);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(i, end - i);
    const size_t bar = item.find('|');
    if (bar == std::string::npos || bar == 0)
      throw std::invalid_argument(std::string(option) + ": '" + item +
                                  "' is not of the form key|value");
    out.emplace_back(item.substr(0, bar), item.substr(bar + 1));
    i = end;
  }
  return out;
}

OutputPlan PlanOutputs(const ModelInput& input, const GenOptions& gen, const std::string& ep,
                       bool to_memory) {
  OutputPlan p;
  if (!gen.file_path.empty()) {
    const std::string& f = gen.file_path;
    const std::string base = PathBaseName(f);
    if (base.empty() || base == "." || base == ".." || PathStem(f) == base || IsDirectory(f))
      throw ToolError(f,
                      "ep.context_file_path should not point to a folder: give a file name "
                      "with an extension (e.g. " +
                          PathDir(f) + (base.empty() ? "" : base + "/") + "model_ctx.onnx)",
                      EPCTX_INVALID_ARGUMENT);
    p.output_path = f;
  } else if (input.in_memory() && to_memory && gen.embed_mode == 1 &&
             gen.external_initializers_file.empty()) {
    p.model_name = "model";  // nothing is written: the name only prefixes graph names
    return p;
  } else if (input.in_memory()) {
    throw ToolError(input.name,
                    "the model is given as a buffer and EPContext generation has no output "
                    "location. Please specify a valid ep.context_file_path",
                    EPCTX_FAIL);
  } else {
    p.output_path = DefaultOutputPath(input.path);
  }
  if (!input.in_memory() && p.output_path == input.path)
    throw ToolError(p.output_path, "the output would overwrite the input model",
                    EPCTX_INVALID_ARGUMENT);
  p.model_name = input.in_memory() ? PathStem(p.output_path) : PathStem(input.path);
  // [model_name]_[ep].bin (the design's name). ORT's QNN EP names it after
  // ep.context_file_path when set; we keep the model's name so -o does not
  // rename the binary, and refuse to overwrite one that exists.
  p.bin_name = p.model_name + "_" + ep + ".bin";
  p.bin_path = PathDir(p.output_path) + p.bin_name;
  if (!gen.external_initializers_file.empty())
    p.external_initializers_path = PathDir(p.output_path) + gen.external_initializers_file;
  return p;
}

void RefuseExisting(const std::string& path) {
  if (!FileExists(path)) return;
  throw ToolError(path,
                  "Failed to generate EP context model since the file exists already: nothing "
                  "was compiled or overwritten. Please remove it if you want to re-generate it "
                  "(or pass --force)",
                  EPCTX_FAIL);
}

}  // namespace host
}  // namespace epctx
