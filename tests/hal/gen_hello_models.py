# SPDX-License-Identifier: Apache-2.0
"""EPContext models for the hello_npu sample driver (hal/samples/hello_npu).

Run with Debian's python3 (python3-onnx):  gen_hello_models.py OUTDIR
    OUTDIR/hello_ctx.onnx      x[8] -> EPContext(scale 2) -> y[8], blob embedded
    OUTDIR/hello_bad_ctx.onnx  the same with a blob of the wrong size
"""
import os
import struct
import sys

from onnx import TensorProto, helper, save

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "models"))
from onnx_util import ep_node  # noqa: E402

N = 8


def hello_blob(n, scale):
    return b"HELLONPU" + struct.pack("<IIf", 1, n, scale)


def hello_model(blob):
    node = ep_node("hello0", ["x"], ["y"], ep_cache_context=blob, embed_mode=1,
                   main_context=1, source="hello_npu", ep_sdk_version="1.0.0",
                   hardware_architecture="hello-1.0")
    g = helper.make_graph([node], "hello",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [N])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    save(hello_model(hello_blob(N, 2.0)), os.path.join(out, "hello_ctx.onnx"))
    save(hello_model(hello_blob(N, 2.0)[:19]), os.path.join(out, "hello_bad_ctx.onnx"))


if __name__ == "__main__":
    main()
