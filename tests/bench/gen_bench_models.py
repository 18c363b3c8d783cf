# SPDX-License-Identifier: Apache-2.0
"""Generates the weight-heavy models epctx-bench measures.

A chain of MatMul + Relu layers over a [1, N] input: nothing but weights, so
the package size is the weight size and create time shows whether loading
depends on it (it should not: weights are mapped, never read at create).

Run with Debian's python3 (python3-onnx, numpy):
  gen_bench_models.py OUTDIR [NAME:LAYERS:WIDTH ...]
Default: w1mb:4:256 (1 MiB of weights) and w100mb:25:1024 (100 MiB).
Each model goes to OUTDIR/NAME/model.onnx with OUTDIR/NAME/input.npy.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def chain(layers, width, seed):
    rng = np.random.default_rng(seed)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])
    inits, nodes = [], []
    cur = "x"
    for i in range(layers):
        # Scaled so activations stay O(1) through any depth.
        w = (rng.standard_normal((width, width)) * (2.0 / width) ** 0.5).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        out = "y" if i == layers - 1 else f"r{i}"
        nodes.append(helper.make_node("MatMul", [cur, f"w{i}"], [f"m{i}"], name=f"matmul{i}"))
        nodes.append(helper.make_node("Relu", [f"m{i}"], [out], name=f"relu{i}"))
        cur = out
    g = helper.make_graph(nodes, f"chain_{layers}x{width}", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: gen_bench_models.py OUTDIR [NAME:LAYERS:WIDTH ...]")
    out = sys.argv[1]
    specs = sys.argv[2:] or ["w1mb:4:256", "w100mb:25:1024"]
    for spec in specs:
        name, layers, width = spec.split(":")
        layers, width = int(layers), int(width)
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        onnx.save(chain(layers, width, seed=layers * 7919 + width), os.path.join(d, "model.onnx"))
        rng = np.random.default_rng(1)
        np.save(os.path.join(d, "input.npy"), rng.standard_normal((1, width)).astype(np.float32))
        mb = layers * width * width * 4 / 2**20
        print(f"{d}/model.onnx: {layers} x MatMul[{width}x{width}], {mb:.1f} MiB of weights")


if __name__ == "__main__":
    main()
