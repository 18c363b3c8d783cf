/* SPDX-License-Identifier: Apache-2.0 */
// Aligning the raw_data of a serialized model's initializers, so a runtime
// that maps the model can use every weight in place instead of copying the
// ones protobuf happened to put at an odd offset.
//
// How: inside each initializer (GraphProto field 5) with raw_data, empty
// packed `float_data` fields (TensorProto field 4: tag 0x22, length 0, or
// 0x22 0x80 0x00 for an odd count) are inserted just before raw_data. To any
// protobuf reader an empty packed field is the field absent, so the model
// means exactly what it meant; only offsets change. Enclosing lengths (the
// tensor's, the graph's) are rewritten.
#ifndef EPCTX_HOST_RAW_ALIGN_H
#define EPCTX_HOST_RAW_ALIGN_H

#include <cstddef>
#include <string>

namespace epctx {
namespace host {

// raw_data of at least `large_bytes` is aligned to `large_align`, smaller
// non-empty raw_data to `small_align` (file offsets). Bytes that do not
// parse as a ModelProto with one graph are returned unchanged. `aligned`
// (optional) receives how many initializers were moved.
std::string AlignRawInitializers(const std::string& model, size_t large_align = 64,
                                 size_t small_align = 8, size_t large_bytes = 64,
                                 size_t* aligned = nullptr);

}  // namespace host
}  // namespace epctx

#endif
