# SPDX-License-Identifier: Apache-2.0
"""Generates the package with external data the trust tests sign.

ext/model.onnx: y = Relu(x + b), b a [4, 1024] float initializer stored in
ext/weights.bin (16 KiB: four 4 KiB chunks). Runs on CPU kernels, no compile.
Run with Debian's python3 (python3-onnx, numpy): gen_trust_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = os.path.join(sys.argv[1], "ext")
    os.makedirs(out, exist_ok=True)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 1024])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 1024])
    b = numpy_helper.from_array(
        np.linspace(-1.0, 1.0, 4096, dtype=np.float32).reshape(4, 1024), "b")
    n1 = helper.make_node("Add", ["x", "b"], ["t"], name="add0")
    n2 = helper.make_node("Relu", ["t"], ["y"], name="relu0")
    g = helper.make_graph([n1, n2], "ext_add_relu", [x], [y], [b])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    # onnx appends external data to an existing file: a re-run (after an edit
    # of this script) would leave 16 KiB of stale bytes no model references.
    weights = os.path.join(out, "weights.bin")
    if os.path.exists(weights):
        os.remove(weights)
    onnx.save_model(m, os.path.join(out, "model.onnx"), save_as_external_data=True,
                    all_tensors_to_one_file=True, location="weights.bin", size_threshold=0)


if __name__ == "__main__":
    main()
