# SPDX-License-Identifier: Apache-2.0
"""Generates the peer benchmark's per-run overhead model: three elementwise
nodes (Add, Mul, Relu) on a [1, 16] float tensor. The work is a few dozen
flops, so its run time is what a runtime spends around the kernels: input
binding, scheduling, output allocation.

Run with Debian's python3 (python3-onnx, numpy):
  gen_tiny_model.py OUTDIR
Writes OUTDIR/tiny3.onnx and OUTDIR/tiny3/{input_0.npy, manifest.txt} in the
layout tests/real/ort_reference.js gives the real models (cache/models/ and
cache/ref/), so peer_bench.py treats all models alike.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WIDTH = 16


def model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, WIDTH])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, WIDTH])
    rng = np.random.default_rng(3)
    bias = numpy_helper.from_array(rng.standard_normal(WIDTH).astype(np.float32), "bias")
    scale = numpy_helper.from_array(rng.standard_normal(WIDTH).astype(np.float32), "scale")
    nodes = [
        helper.make_node("Add", ["x", "bias"], ["a"], name="add"),
        helper.make_node("Mul", ["a", "scale"], ["m"], name="mul"),
        helper.make_node("Relu", ["m"], ["y"], name="relu"),
    ]
    g = helper.make_graph(nodes, "tiny3", [x], [y], [bias, scale])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_tiny_model.py OUTDIR")
    out = sys.argv[1]
    ref = os.path.join(out, "tiny3")
    os.makedirs(ref, exist_ok=True)
    m = model()
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, "tiny3.onnx"))
    x = np.random.default_rng(1).standard_normal((1, WIDTH)).astype(np.float32)
    np.save(os.path.join(ref, "input_0.npy"), x)
    with open(os.path.join(ref, "manifest.txt"), "w") as f:
        f.write("case tiny3\ninputs x\noutputs y\n")


if __name__ == "__main__":
    main()
