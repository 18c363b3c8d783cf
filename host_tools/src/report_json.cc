// SPDX-License-Identifier: Apache-2.0
// FormatResultJson: the compile report as one JSON document (--json), the
// same facts FormatResult prints as text.
#include <cstdio>
#include <sstream>

#include "epctx_host/compile_api.h"

namespace epctx {
namespace host {
namespace {

std::string Str(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      o += buf;
    } else {
      o += char(c);
    }
  }
  return o + "\"";
}

}  // namespace

std::string FormatResultJson(const CompileResult& r, const std::string& ep) {
  std::ostringstream o;
  o << "{\"ep\":" << Str(ep) << ",\"models\":[";
  for (size_t k = 0; k < r.models.size(); ++k) {
    const ModelReport& m = r.models[k];
    o << (k ? "," : "") << "{\"input\":" << Str(m.input) << ",\"output\":" << Str(m.output_path)
      << ",\"written\":" << (m.written ? "true" : "false") << ",\"message\":" << Str(m.message)
      << ",\"nodes_total\":" << m.nodes_total << ",\"nodes_npu\":" << m.nodes_npu
      << ",\"nodes_cpu\":" << m.nodes_cpu << ",\"payload_bytes\":" << m.payload_bytes
      << ",\"weight_bytes\":" << m.weight_bytes << ",\"model_bytes\":" << m.model_bytes
      << ",\"compile_ms\":" << m.compile_ms << ",\"macs_total\":" << m.macs_total
      << ",\"macs_npu\":" << m.macs_npu << ",\"partitions\":[";
    for (size_t i = 0; i < m.partition_reports.size(); ++i) {
      const PartitionReport& p = m.partition_reports[i];
      o << (i ? "," : "") << "{\"name\":" << Str(p.name) << ",\"nodes\":" << p.nodes
        << ",\"macs\":" << p.macs << ",\"op_types\":{";
      bool first = true;
      for (const auto& kv : p.op_types) {
        o << (first ? "" : ",") << Str(kv.first) << ":" << kv.second;
        first = false;
      }
      o << "}}";
    }
    o << "],\"cpu_nodes\":[";
    for (size_t i = 0; i < m.cpu_nodes.size(); ++i) {
      const CpuNodeReport& c = m.cpu_nodes[i];
      o << (i ? "," : "") << "{\"node\":" << Str(c.name) << ",\"output\":" << Str(c.output)
        << ",\"op_type\":" << Str(c.op_type)
        << ",\"reason\":" << Str(c.reason) << ",\"macs\":" << c.macs << "}";
    }
    o << "]}";
  }
  o << "],\"binary\":{\"path\":" << Str(r.binary_pending ? std::string() : r.binary_path)
    << ",\"bytes\":" << r.binary_bytes << ",\"weight_bytes_before_dedup\":"
    << r.weight_bytes_before_dedup << ",\"weight_bytes_after_dedup\":"
    << r.weight_bytes_after_dedup << "}}\n";
  return o.str();
}

}  // namespace host
}  // namespace epctx
