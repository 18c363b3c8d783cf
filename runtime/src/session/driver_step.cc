// SPDX-License-Identifier: Apache-2.0
// The driver step of a run (executor.h): an EPContext node's tensors handed
// to its driver as HAL tensors, staged through device-visible buffers when
// the driver has them (driver_io.h), and its graph executed.
#include "session/driver_io.h"
#include "session/executor.h"

namespace epctx {

using runmem::alloc_output;
using runmem::scratch;

__attribute__((noinline)) Status run_driver_step(RunState& rs, const Step& s,
                                                 const TensorRef* const* in_refs) {
  const epctx_hal_graph_info& gi = s.graph_info;
  // The HAL tensors go with the step's scratch, not a 5 KB frame.
  epctx_hal_tensor* hal_in = static_cast<epctx_hal_tensor*>(
      scratch(&rs, sizeof(epctx_hal_tensor) * (s.num_inputs + s.num_outputs + 1), 16));
  if (!hal_in)
    return node_error(s, rs.label, EPCTX_OUT_OF_MEMORY, "out of memory for the driver's tensors");
  epctx_hal_tensor* hal_out = hal_in + s.num_inputs;
  for (uint32_t i = 0; i < s.num_inputs; ++i) {
    const TensorRef* t = in_refs[i];
    hal_in[i] = epctx_hal_tensor{t ? t->dtype : 0, t ? t->rank : 0, t ? t->dims : nullptr,
                                 t ? t->data : nullptr, t ? t->bytes : 0};
  }
  for (uint32_t o = 0; o < s.num_outputs; ++o) {
    const epctx_hal_tensor_desc& d = gi.outputs[o];
    TensorRef* t = nullptr;
    EPCTX_RETURN_IF_ERROR(alloc_output(&rs, o, d.dtype, d.rank, d.dims, &t));
    hal_out[o] = epctx_hal_tensor{t->dtype, t->rank, t->dims, t->data, t->bytes};
  }
  uint64_t planned = rs.mplan ? rs.mplan->driver_scratch[&s - rs.plan->steps] : UINT64_MAX;
  void* arena = !gi.scratch_bytes       ? nullptr
                : planned != UINT64_MAX ? rs.arena + planned
                                        : scratch(&rs, gi.scratch_bytes, gi.scratch_alignment);
  if (gi.scratch_bytes && !arena)
    return node_error(s, rs.label, EPCTX_OUT_OF_MEMORY, "out of memory for the driver arena");
  char msg[Status::kMaxMessage];
  msg[0] = '\0';
  const epctx_hal_driver& fns = s.driver->fns;
  // Staging entries only for a driver with device-visible I/O buffers.
  const uint32_t n_io = s.num_inputs + s.num_outputs;
  IoStaging::Entry* entries =
      fns.alloc_io ? static_cast<IoStaging::Entry*>(
                         scratch(&rs, sizeof(IoStaging::Entry) * (n_io ? n_io : 1), 16))
                   : nullptr;
  if (fns.alloc_io && !entries)
    return node_error(s, rs.label, EPCTX_OUT_OF_MEMORY, "out of memory staging driver buffers");
  IoStaging staging(*s.driver, s.graph, entries, n_io);
  int64_t refused = staging.Stage(hal_in, s.num_inputs, true);
  if (refused < 0) refused = staging.Stage(hal_out, s.num_outputs, false);
  if (refused >= 0)
    return Status::Error(EPCTX_OUT_OF_MEMORY,
                         "%s: EPContext node '%.*s' on driver '%s': alloc_io refused a "
                         "device-visible buffer for a tensor",
                         rs.label, s.node->name.len(), s.node->name.data, s.driver->info.name);
  if (fns.sync_for_device) fns.sync_for_device(s.driver->driver, s.graph, hal_in, s.num_inputs);
  int rc;
  if (fns.execute_parallel && rs.pool) {
    // The session's intra-op threads, lent for this call (ABI 2.2).
    epctx_hal_parallel par;
    par.struct_size = sizeof par;
    par.threads = rs.pool->threads();
    par.user = rs.pool;
    par.parallel_for = [](void* user, uint32_t chunks, epctx_hal_chunk_fn fn, void* arg) {
      static_cast<ThreadPool*>(user)->ParallelFor(chunks, fn, arg);
    };
    rc = fns.execute_parallel(s.driver->driver, s.graph, hal_in, s.num_inputs, hal_out,
                              s.num_outputs, arena, gi.scratch_bytes, &par, msg, sizeof msg);
  } else {
    rc = s.driver->driver->execute(s.driver->driver, s.graph, hal_in, s.num_inputs, hal_out,
                                   s.num_outputs, arena, gi.scratch_bytes, msg, sizeof msg);
  }
  if (rc != EPCTX_OK)
    // The driver's own code stays the cause (epctx_status_cause).
    return Status::Error(rc, "%s: EPContext node '%.*s' on driver '%s': %s", rs.label,
                         s.node->name.len(), s.node->name.data, s.driver->info.name, msg)
        .WithCode(rc == EPCTX_INVALID_ARGUMENT ? rc : EPCTX_EP_FAIL);
  if (fns.sync_for_cpu) fns.sync_for_cpu(s.driver->driver, s.graph, hal_out, s.num_outputs);
  staging.CopyOut();
  return Status::Ok();
}

}  // namespace epctx
