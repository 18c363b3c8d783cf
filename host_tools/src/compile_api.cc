// SPDX-License-Identifier: Apache-2.0
// The compile library's entry points: Compiler (one model, or one model of a
// weight-sharing group), CompileModel, CompileModelGroup, FormatResult.
#include "epctx_host/compile_api.h"

#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

#include "epctx_host/model_io.h"
#include "pipeline.h"

namespace epctx {
namespace host {

struct Compiler::Group {
  std::unique_ptr<SharedBinary> bin;
  size_t models = 0;
};

namespace {

CompileStatus StatusOf(int code, const std::string& message) {
  CompileStatus s;
  s.code = code;
  s.message = message;
  return s;
}

// Runs `body`, turning every exception into the result's status.
template <typename F>
void Guard(CompileResult* r, const std::string& name, F body) {
  try {
    body();
  } catch (const ToolError& e) {
    r->status = StatusOf(e.code(), e.file() + ": " + e.what());
  } catch (const CompileError& e) {
    r->status = StatusOf(EPCTX_EP_FAIL, name + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    r->status = StatusOf(EPCTX_INVALID_ARGUMENT, e.what());
  } catch (const std::exception& e) {
    r->status = StatusOf(EPCTX_FAIL, name + ": internal error: " + e.what());
  }
}

[[noreturn]] void BadConfig(const std::string& what) {
  throw ToolError("session config", what, EPCTX_INVALID_ARGUMENT);
}

}  // namespace

ModelInput ModelInput::FromPath(const std::string& path) {
  ModelInput m;
  m.path = path;
  m.name = path;
  return m;
}

ModelInput ModelInput::FromBuffer(std::string bytes, const std::string& name) {
  ModelInput m;
  m.bytes = std::move(bytes);
  m.name = name;
  return m;
}

Compiler::Compiler() = default;
Compiler::~Compiler() = default;
bool Compiler::group_open() const { return group_ != nullptr; }

CompileResult Compiler::Compile(const ModelInput& input, const CompileSettings& settings) {
  CompileResult r;
  const auto t0 = std::chrono::steady_clock::now();
  bool opened_here = false;
  Guard(&r, input.name, [&] {
    if (input.in_memory() && input.bytes.empty())
      throw ToolError(input.name, "empty model buffer", EPCTX_INVALID_ARGUMENT);
    const GenOptions gen = ResolveConfig(settings.config);
    const bool none = settings.ep == "none";
    if (none && gen.share) BadConfig("ep.share_ep_contexts=1 needs a backend, not --ep none");
    if (gen.share && settings.output_to_memory)
      BadConfig("ep.share_ep_contexts: a group writes its models to files (output_to_memory)");
    OutputPlan plan = PlanOutputs(input, gen, settings.ep, settings.output_to_memory);
    if (gen.share && group_) {
      const SharedBinary& g = *group_->bin;
      if (g.ep != settings.ep || g.backend_options != settings.backend_options)
        BadConfig("ep.share_ep_contexts: every model of a group needs the same backend and "
                  "backend options (the group was opened with '" +
                  g.ep + "')");
      if (PathDir(plan.output_path) != PathDir(g.bin_path))
        throw ToolError(plan.output_path,
                        "ep.share_ep_contexts: the output must be in the folder of the shared "
                        "binary " +
                            g.bin_path + " (models refer to it by file name)",
                        EPCTX_INVALID_ARGUMENT);
      plan.bin_name = g.bin_name;
      plan.bin_path = g.bin_path;
    }
    // Everything that can be refused without compiling is refused first.
    if (!settings.force) {
      if (!settings.output_to_memory) RefuseExisting(plan.output_path);
      if (!none && gen.embed_mode == 0 && !(gen.share && group_)) RefuseExisting(plan.bin_path);
      if (!plan.external_initializers_path.empty()) RefuseExisting(plan.external_initializers_path);
    }
    std::unique_ptr<SharedBinary> local;
    SharedBinary* bin = nullptr;
    if (!none) {
      if (gen.share) {
        if (!group_) {
          group_.reset(new Group);
          opened_here = true;
          group_->bin = MakeSharedBinary(settings, plan);
          settings.progress("share: group opened; context binary " + plan.bin_path);
        }
        bin = group_->bin.get();
      } else {
        local = MakeSharedBinary(settings, plan);
        bin = local.get();
      }
    }
    CompileOneModel(input, settings, gen, plan, bin, &r);
    if (gen.share) ++group_->models;
    const bool finish = !gen.share || gen.stop_share;
    if (bin && gen.embed_mode == 0) {
      if (finish) {
        FinishBinary(*bin, settings.progress, &r);
      } else {
        r.binary_pending = true;
        r.binary_path = bin->bin_path;
      }
    }
    if (gen.share && gen.stop_share) {
      settings.progress("share: group closed after " + std::to_string(group_->models) + " models");
      group_.reset();
    }
  });
  // A group whose first model failed never existed for the caller.
  if (!r.ok() && opened_here && group_ && group_->models == 0) group_.reset();
  r.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

CompileResult CompileModel(const ModelInput& input, const CompileSettings& settings) {
  CompileResult r;
  Guard(&r, input.name, [&] {
    const GenOptions gen = ResolveConfig(settings.config);
    if (gen.share && !gen.stop_share)
      BadConfig("ep.share_ep_contexts=1 without ep.stop_share_ep_contexts=1 compiles one model "
                "of a group: use a Compiler object (or CompileModelGroup) to keep the group");
  });
  if (!r.ok()) return r;
  Compiler c;
  return c.Compile(input, settings);
}

CompileResult CompileModelGroup(const std::vector<ModelInput>& inputs,
                                const CompileSettings& settings) {
  CompileResult total;
  const auto t0 = std::chrono::steady_clock::now();
  Guard(&total, inputs.empty() ? std::string("group") : inputs[0].name, [&] {
    if (inputs.empty()) BadConfig("no input models");
    if (settings.ep == "none") BadConfig("weight sharing needs a backend, not --ep none");
    const GenOptions gen = ResolveConfig(settings.config);
    if (gen.set_file_path)
      BadConfig("ep.context_file_path cannot be set for a group: each output is "
                "[model]_ctx.onnx beside its model");
    if (gen.set_embed_mode && gen.embed_mode != 0)
      BadConfig("ep.context_embed_mode must stay 0 for a group (one shared .bin)");
    if (gen.set_share && !gen.share) BadConfig("ep.share_ep_contexts must stay 1 for a group");
    if (gen.set_stop_share)
      BadConfig("ep.stop_share_ep_contexts is set by the group itself on its last model");
    if (!gen.external_initializers_file.empty())
      BadConfig("ep.context_model_external_initializers_file_name names one file: not "
                "supported for a group of models");
    // Plan and check all outputs before compiling anything.
    std::set<std::string> outputs;
    std::string bin_path;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].in_memory())
        BadConfig("a group compiles models from paths (use Compiler for buffers)");
      OutputPlan p = PlanOutputs(inputs[i], gen, settings.ep);
      if (i == 0) bin_path = p.bin_path;
      if (!outputs.insert(p.output_path).second)
        throw ToolError(p.output_path, "two models of the group would write this file",
                        EPCTX_INVALID_ARGUMENT);
      if (PathDir(p.output_path) != PathDir(bin_path))
        throw ToolError(p.output_path,
                        "the models of a group must be in one folder (their outputs refer to "
                        "the shared binary " +
                            bin_path + " by file name)",
                        EPCTX_INVALID_ARGUMENT);
      if (!settings.force) RefuseExisting(p.output_path);
    }
    if (!settings.force) RefuseExisting(bin_path);

    Compiler c;
    for (size_t i = 0; i < inputs.size(); ++i) {
      CompileSettings s = settings;
      s.force = true;  // checked above, as a whole
      s.config.emplace_back("ep.share_ep_contexts", "1");
      if (i + 1 == inputs.size()) s.config.emplace_back("ep.stop_share_ep_contexts", "1");
      CompileResult r = c.Compile(inputs[i], s);
      total.models.insert(total.models.end(), r.models.begin(), r.models.end());
      total.files_written.insert(total.files_written.end(), r.files_written.begin(),
                                 r.files_written.end());
      if (!r.ok()) {
        // A half-written group is worse than none: the ctx models written so
        // far would refer to a .bin that does not exist.
        for (const auto& f : total.files_written) std::remove(f.c_str());
        total.files_written.clear();
        total.status = r.status;
        return;
      }
      if (i + 1 == inputs.size()) {
        total.binary_path = r.binary_path;
        total.binary_bytes = r.binary_bytes;
        total.weight_bytes_before_dedup = r.weight_bytes_before_dedup;
        total.weight_bytes_after_dedup = r.weight_bytes_after_dedup;
        total.weight_segment_bytes = r.weight_segment_bytes;
        total.payload_bytes = r.payload_bytes;
      }
    }
  });
  total.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return total;
}

namespace {
std::string Percent(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", whole ? 100.0 * double(part) / double(whole) : 0.0);
  return buf;
}
}  // namespace

std::string FormatResult(const CompileResult& r, const std::string& ep) {
  std::ostringstream o;
  char ms[32];
  for (const auto& m : r.models) {
    std::snprintf(ms, sizeof ms, "%.1f", m.compile_ms);
    if (!m.written) {
      o << m.input << ": " << m.message << "; " << m.nodes_total << " nodes, " << ms << " ms\n";
      continue;
    }
    o << (m.output_path.empty() ? std::string("<memory>") : m.output_path) << ": nodes "
      << m.nodes_total << " total, " << m.nodes_npu << " on " << ep << ", " << m.nodes_cpu
      << " on CPU; " << m.partitions << " partitions";
    if (m.partitions_per_run != m.partitions) o << " (" << m.partitions_per_run << " per run)";
    o << "; payload " << m.payload_bytes << " bytes; weights " << m.weight_bytes << " bytes; "
      << m.macs_total << " MACs, " << Percent(m.macs_npu, m.macs_total) << "% on " << ep;
    if (m.macs_unknown_nodes)
      o << " (" << m.macs_unknown_nodes << (m.macs_unknown_nodes == 1 ? " node" : " nodes")
        << " with unknown MACs)";
    o << "; " << ms << " ms\n";
  }
  if (!r.binary_path.empty() && !r.binary_pending) {
    const uint64_t before = r.weight_bytes_before_dedup, after = r.weight_bytes_after_dedup;
    o << r.binary_path << ": " << r.binary_bytes << " bytes; weights " << before
      << " bytes before dedup, " << after << " after (segment " << r.weight_segment_bytes << ")";
    if (before > 0) {
      std::snprintf(ms, sizeof ms, "%.1f",
                    100.0 * static_cast<double>(before > after ? before - after : 0) /
                        static_cast<double>(before));
      o << "; " << ms << "% saved";
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace host
}  // namespace epctx
