// SPDX-License-Identifier: Apache-2.0
// FormatResultJson: the compile report as one JSON document (--json), the
// same facts FormatResult prints as text, through the tools' one JSON
// writer (runtime/tools/json_writer.h).
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "epctx_host/compile_api.h"
#include "json_writer.h"

namespace epctx {
namespace host {
namespace {

void Str(epctx_json* j, const char* key, const std::string& v) {
  epctx_json_key(j, key);
  epctx_json_string_n(j, v.data(), v.size());
}

void Int(epctx_json* j, const char* key, int64_t v) {
  epctx_json_key(j, key);
  epctx_json_int(j, v);
}

void Write(epctx_json* j, const CompileResult& r, const std::string& ep) {
  epctx_json_begin_object(j);
  Str(j, "ep", ep);
  epctx_json_key(j, "models");
  epctx_json_begin_array(j);
  for (const ModelReport& m : r.models) {
    epctx_json_begin_object(j);
    Str(j, "input", m.input);
    Str(j, "output", m.output_path);
    epctx_json_key(j, "written");
    epctx_json_bool(j, m.written);
    Str(j, "message", m.message);
    Int(j, "nodes_total", static_cast<int64_t>(m.nodes_total));
    Int(j, "nodes_npu", static_cast<int64_t>(m.nodes_npu));
    Int(j, "nodes_cpu", static_cast<int64_t>(m.nodes_cpu));
    Int(j, "payload_bytes", static_cast<int64_t>(m.payload_bytes));
    Int(j, "weight_bytes", static_cast<int64_t>(m.weight_bytes));
    Int(j, "model_bytes", static_cast<int64_t>(m.model_bytes));
    epctx_json_key(j, "compile_ms");
    epctx_json_double(j, m.compile_ms);
    Int(j, "partitions_per_run", static_cast<int64_t>(m.partitions_per_run));
    Int(j, "macs_total", static_cast<int64_t>(m.macs_total));
    Int(j, "macs_npu", static_cast<int64_t>(m.macs_npu));
    Int(j, "macs_cpu", static_cast<int64_t>(m.macs_cpu));
    Int(j, "macs_unknown_nodes", static_cast<int64_t>(m.macs_unknown_nodes));
    epctx_json_key(j, "partitions");
    epctx_json_begin_array(j);
    for (const PartitionReport& p : m.partition_reports) {
      epctx_json_begin_object(j);
      Str(j, "name", p.name);
      Int(j, "nodes", static_cast<int64_t>(p.nodes));
      Int(j, "macs", static_cast<int64_t>(p.macs));
      Int(j, "macs_unknown_nodes", static_cast<int64_t>(p.macs_unknown_nodes));
      epctx_json_key(j, "op_types");
      epctx_json_begin_object(j);
      for (const auto& kv : p.op_types) Int(j, kv.first.c_str(), static_cast<int64_t>(kv.second));
      epctx_json_end_object(j);
      epctx_json_end_object(j);
    }
    epctx_json_end_array(j);
    epctx_json_key(j, "cpu_nodes");
    epctx_json_begin_array(j);
    for (const CpuNodeReport& c : m.cpu_nodes) {
      epctx_json_begin_object(j);
      Str(j, "node", c.name);
      Str(j, "output", c.output);
      Str(j, "op_type", c.op_type);
      Str(j, "reason", c.reason);
      Int(j, "macs", static_cast<int64_t>(c.macs));
      epctx_json_key(j, "macs_known");
      epctx_json_bool(j, c.macs_known);
      epctx_json_end_object(j);
    }
    epctx_json_end_array(j);
    epctx_json_end_object(j);
  }
  epctx_json_end_array(j);
  epctx_json_key(j, "binary");
  epctx_json_begin_object(j);
  Str(j, "path", r.binary_pending ? std::string() : r.binary_path);
  Int(j, "bytes", static_cast<int64_t>(r.binary_bytes));
  Int(j, "weight_bytes_before_dedup", static_cast<int64_t>(r.weight_bytes_before_dedup));
  Int(j, "weight_bytes_after_dedup", static_cast<int64_t>(r.weight_bytes_after_dedup));
  epctx_json_end_object(j);
  epctx_json_end_object(j);
  epctx_json_finish(j);
}

}  // namespace

std::string FormatResultJson(const CompileResult& r, const std::string& ep) {
  char* buf = nullptr;
  size_t size = 0;
  FILE* f = open_memstream(&buf, &size);
  if (!f) throw std::runtime_error("out of memory formatting the JSON report");
  epctx_json j;
  epctx_json_init(&j, f, 0);
  Write(&j, r, ep);
  std::fclose(f);
  std::string out(buf, size);
  std::free(buf);
  return out;
}

}  // namespace host
}  // namespace epctx
