# SPDX-License-Identifier: Apache-2.0
"""epctx: run precompiled EPContext models, ONNX Runtime's way.

    import numpy as np, epctx
    epctx.compile("model.onnx", "model_ctx.onnx")          # for the vnpu NPU
    sess = epctx.InferenceSession("model_ctx.onnx")
    x = sess.get_inputs()[0]
    (y,) = sess.run(None, {x.name: np.zeros([1, 3, 8, 8], np.float32)})

InferenceSession, SessionOptions, RunOptions, NodeArg and OrtValue follow
onnxruntime's Python classes; failures raise EpctxError (or its subclass
named for the code, InvalidArgument, NoSuchFile, ...) carrying .code.
host_tools/python/README.md documents every call and what differs from ORT.
"""
import os as _os

from . import errors
from ._epctx import (NodeArg, OrtValue, RunOptions, SessionOptions, add_decryption_key,  # noqa: F401
                     add_trusted_key, api_version, code_name, load_driver_library,
                     session_config_keys,
                     set_default_logger_severity, set_rollback_store)
from ._epctx import _InferenceSession
from ._epctx import version as _runtime_version
from .errors import *  # noqa: F401,F403
from .errors import EpctxError

__version__ = _runtime_version()


def get_version_string():
    """The runtime's release, as onnxruntime.get_version_string()."""
    return __version__


def get_available_providers():
    """EpctxExecutionProvider (EPContext nodes on the built-in NPU drivers)
    and CPUExecutionProvider (every other node)."""
    return ["EpctxExecutionProvider", "CPUExecutionProvider"]


def get_device():
    return "NPU"


class ModelMetadata:
    """ORT's ModelMetadata: producer_name, producer_version, domain,
    graph_name, description and graph_description ("": epctx does not keep
    them), version (model_version), ir_version, custom_metadata_map."""

    def __init__(self, fields):
        self.producer_name = fields["producer_name"]
        self.producer_version = fields["producer_version"]
        self.domain = fields["domain"]
        self.graph_name = fields["graph_name"]
        self.description = ""
        self.graph_description = ""
        self.version = fields["version"]
        self.ir_version = fields["ir_version"]
        self.custom_metadata_map = fields["custom_metadata_map"]

    def __repr__(self):
        return (f"ModelMetadata(producer_name={self.producer_name!r}, "
                f"graph_name={self.graph_name!r}, version={self.version})")


class InferenceSession(_InferenceSession):
    """An EPContext model (or any model whose nodes all have CPU kernels).

    path_or_bytes: a path (str or os.PathLike) or the model's bytes (kept
    by the session: the runtime borrows them). sess_options: a
    SessionOptions, a dict {config key: value} or None. providers: None or
    names from get_available_providers() (reported by get_providers(); the
    runtime places nodes by the model, not by this list).
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 **kwargs):
        if provider_options:
            raise ValueError("provider_options: epctx's providers take none")
        if kwargs:
            raise TypeError(f"unexpected arguments: {sorted(kwargs)}")
        super().__init__(path_or_bytes, sess_options, providers)

    def run(self, output_names, input_feed, run_options=None):
        """Returns a list of numpy arrays, one per name of output_names (None
        or []: every output in order). input_feed maps input names to numpy arrays
        (borrowed without a copy when C-contiguous), OrtValues or values
        numpy turns into arrays of the declared type. The GIL is released
        while the model runs."""
        # An empty list means every output, as in ORT.
        return self._run(output_names or None, input_feed, run_options)

    def get_modelmeta(self):
        return ModelMetadata(self._metadata())

    def get_provider_options(self):
        return {name: {} for name in self.get_providers()}

    def get_overridable_initializers(self):
        return []

    @property
    def model_path(self):
        return self._model_path


class CompileReport:
    """What epctx.compile wrote: output_path, files_written, binary_path,
    nodes_npu / nodes_cpu / partitions, message (a warning or ""),
    model_data (bytes, with output=None and embed_mode=1 ... see compile),
    summary (epctx-compile's summary lines)."""

    def __init__(self, report):
        model = report["models"][0] if report["models"] else {}
        self.output_path = model.get("output_path", "")
        self.model_data = model.get("model_data")
        self.message = model.get("message", "")
        self.nodes_total = model.get("nodes_total", 0)
        self.nodes_npu = model.get("nodes_npu", 0)
        self.nodes_cpu = model.get("nodes_cpu", 0)
        self.partitions = model.get("partitions", 0)
        self.partition_names = model.get("partition_names", [])
        self.files_written = report["files_written"]
        self.binary_path = report["binary_path"]
        self.binary_bytes = report["binary_bytes"]
        self.compile_ms = report["compile_ms"]
        self.summary = report["summary"]

    def __repr__(self):
        return self.summary.strip()


# Keyword options of compile() -> config keys (compile_api.h).
_COMPILE_KEYS = {
    "embed_mode": "ep.context_embed_mode",
    "node_name_prefix": "ep.context_node_name_prefix",
    "external_initializers_file": "ep.context_model_external_initializers_file_name",
    "external_initializers_folder": "session.model_external_initializers_file_folder_path",
}


def _config_value(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def compile(model, output=None, ep="vnpu", *, config=None, input_shapes=None,  # noqa: A001
            backend_options=None, force=False, error_if_no_compiled_nodes=False, **options):
    """Compiles model (a path or the model's bytes) into an EPContext model
    at output (ep.context_file_path; None: <model>_ctx.onnx beside a path,
    or, for bytes with embed_mode=1, returned in CompileReport.model_data).

    ep: "vnpu" (or another built-in backend), "none" for CPU only.
    options: embed_mode, node_name_prefix, external_initializers_file,
    external_initializers_folder; config: any other entries {key: value}
    with ORT's names. input_shapes: {input: [dims]} fixing symbolic
    dimensions; backend_options: {key: value} for the backend; force:
    overwrite existing outputs. Raises EpctxError with the compiler's code
    (INVALID_ARGUMENT for an unknown key, NO_SUCHFILE, INVALID_GRAPH ...).
    The GIL is released while it compiles.
    """
    from . import _epctx_compile  # libonnx and protobuf only when compiling

    entries = {}
    for name, value in options.items():
        if name not in _COMPILE_KEYS:
            raise TypeError(f"compile() got an unexpected option {name!r}; "
                            f"options: {sorted(_COMPILE_KEYS)} or config={{key: value}}")
        entries[_COMPILE_KEYS[name]] = _config_value(value)
    for key, value in (config or {}).items():
        entries[key] = _config_value(value)
    to_memory = False
    if output is not None:
        entries["ep.context_file_path"] = _os.fspath(output)
    elif isinstance(model, (bytes, bytearray)):
        to_memory = True
    shapes = [(k, [int(d) for d in v]) for k, v in (input_shapes or {}).items()]
    backend = [(k, _config_value(v)) for k, v in (backend_options or {}).items()]
    model_arg = bytes(model) if isinstance(model, bytearray) else model
    report = _epctx_compile.compile(model_arg, list(entries.items()), ep, shapes, backend,
                                    bool(force), to_memory, bool(error_if_no_compiled_nodes))
    return CompileReport(report)
