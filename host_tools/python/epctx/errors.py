# SPDX-License-Identifier: Apache-2.0
"""Exceptions of the epctx package.

Every failure of the runtime or the compiler raises EpctxError (a
RuntimeError) or the subclass named for its code, as ONNX Runtime's Python
package does (onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument,
...). Each carries .code (the epctx_code number, ORT's numbers for ORT's
codes), .code_name ("INVALID_ARGUMENT"), .cause (the detailed code behind
the status, e.g. INCOMPATIBLE_SDK behind INVALID_GRAPH) and .message.
"""


class EpctxError(RuntimeError):
    """A failed epctx call; see the module docstring for the attributes."""

    code = 1
    code_name = "FAIL"

    def __init__(self, message, code=None, cause=None):
        super().__init__(message)
        if code is not None:
            self.code = code
            self.code_name = _NAMES.get(code, "UNKNOWN")
        self.cause = self.code if cause is None else cause
        self.cause_name = _NAMES.get(self.cause, "UNKNOWN")
        self.message = message

    def __str__(self):
        return f"[{self.code_name}] {self.message}"


# code -> (name, class name); ORT's class names for ORT's codes.
_CODES = {
    1: ("FAIL", "Fail"),
    2: ("INVALID_ARGUMENT", "InvalidArgument"),
    3: ("NO_SUCHFILE", "NoSuchFile"),
    4: ("NO_MODEL", "NoModel"),
    5: ("ENGINE_ERROR", "EngineError"),
    6: ("RUNTIME_EXCEPTION", "RuntimeException"),
    7: ("INVALID_PROTOBUF", "InvalidProtobuf"),
    8: ("MODEL_LOADED", "ModelLoaded"),
    9: ("NOT_IMPLEMENTED", "NotImplemented"),
    10: ("INVALID_GRAPH", "InvalidGraph"),
    11: ("EP_FAIL", "EPFail"),
    12: ("MODEL_LOAD_CANCELED", "ModelLoadCanceled"),
    13: ("MODEL_REQUIRES_COMPILATION", "ModelRequiresCompilation"),
    14: ("NOT_FOUND", "NotFound"),
    100: ("OUT_OF_MEMORY", "OutOfMemory"),
    101: ("PATH_REJECTED", "PathRejected"),
    102: ("INVALID_CONTAINER", "InvalidContainer"),
    110: ("INCOMPATIBLE_DRIVER", "IncompatibleDriver"),
    111: ("INCOMPATIBLE_SDK", "IncompatibleSdk"),
    112: ("INCOMPATIBLE_HARDWARE", "IncompatibleHardware"),
    120: ("SIGNATURE_INVALID", "SignatureInvalid"),
    121: ("KEY_REJECTED", "KeyRejected"),
    122: ("HASH_MISMATCH", "HashMismatch"),
    123: ("ROLLBACK", "Rollback"),
    124: ("KEY_MISSING", "KeyMissing"),
    125: ("DECRYPTION_FAILED", "DecryptionFailed"),
    126: ("UNSUPPORTED_ALGORITHM", "UnsupportedAlgorithm"),
    130: ("RUN_TERMINATED", "RunTerminated"),
    131: ("RUN_DEADLINE_EXCEEDED", "RunDeadlineExceeded"),
}
_NAMES = {code: name for code, (name, _) in _CODES.items()}
_CLASSES = {}
for _code, (_name, _cls) in _CODES.items():
    _CLASSES[_code] = type(_cls, (EpctxError,), {"code": _code, "code_name": _name,
                                                 "__doc__": f"epctx code {_name} ({_code})."})
    globals()[_cls] = _CLASSES[_code]
del _code, _name, _cls

__all__ = ["EpctxError"] + [cls for _, cls in _CODES.values()]


def _from_status(code, cause, message):
    """The exception for a failed call (used by the extension modules)."""
    return _CLASSES.get(code, EpctxError)(message, code, cause)
