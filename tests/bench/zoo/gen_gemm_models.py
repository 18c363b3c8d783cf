# SPDX-License-Identifier: Apache-2.0
"""The GEMM shapes of the model zoo as one-node models: y = x[M x K] * W[K x N]
+ b (MatMul then Add, W and b constant), and its convolution layers as
Conv + Relu (entries with "conv": [out channels, kernel, stride], input
shape [1, C, H, W], same padding), for the micro-kernel benchmark
(peer_bench.py --models gemm): epctx runs them through the vnpu GEMM op and,
with --ep none, through the CPU MatMul on the shared SGEMM; ONNX Runtime
through its MatMul. Shapes are zoo.json's entries of source "gemm" (input
shape [M, K], "n": N), taken from the zoo's models: transformer
projections (ViT-B/16, the BERT-style encoder), convolutions as GEMMs, and
small-M decode and classifier shapes. A convolution layer runs through
the vnpu conv strategies (dense, pixel-row, depthwise...) and the CPU Conv
rather than a GEMM op: the same K x N, reached through im2col or the
input's rows. W ~ N(0, 1/K) like a trained layer (K = C * kernel^2 for a
convolution).

usage: gen_gemm_models.py OUT_DIR
Writes OUT_DIR/models/<name>.onnx (skipped when newer than this script and
zoo.json). Any failure: one line "gen_gemm_models.py: error: ..." and exit 1.
"""
import json
import os
import sys
import zlib

ZOO_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo.json")


def build(entry):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(zlib.crc32(entry["name"].encode()))
    if "conv" in entry:
        return build_conv(entry, rng)
    (m, k), n = entry["shape"], entry["n"]
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    b = (rng.standard_normal(n) * 0.1).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["input", "W"], ["xw"]),
         helper.make_node("Add", ["xw", "b"], ["output"])],
        entry["name"],
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def build_conv(entry, rng):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    shape = entry["shape"]
    co, kernel, stride = entry["conv"]
    k = shape[1] * kernel * kernel
    out = [(d + 2 * (kernel // 2) - kernel) // stride + 1 for d in shape[2:]]
    w = (rng.standard_normal((co, shape[1], kernel, kernel)) / np.sqrt(k)).astype(np.float32)
    b = (rng.standard_normal(co) * 0.1).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Conv", ["input", "W", "b"], ["conv"], pads=[kernel // 2] * 4,
                          strides=[stride, stride]),
         helper.make_node("Relu", ["conv"], ["output"])],
        entry["name"],
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, co] + out)],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main(argv):
    if len(argv) != 1:
        print("usage: gen_gemm_models.py OUT_DIR", file=sys.stderr)
        return 2
    try:
        import onnx
        with open(ZOO_JSON) as f:
            entries = [m for m in json.load(f)["models"] if m["source"] == "gemm"]
        os.makedirs(os.path.join(argv[0], "models"), exist_ok=True)
        newest = max(os.path.getmtime(__file__), os.path.getmtime(ZOO_JSON))
        for e in entries:
            path = os.path.join(argv[0], "models", f"{e['name']}.onnx")
            if os.path.exists(path) and os.path.getmtime(path) >= newest:
                continue
            onnx.save(build(e), path + ".tmp")
            os.replace(path + ".tmp", path)
    except (OSError, ValueError, KeyError, ImportError) as e:
        print(f"gen_gemm_models.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
