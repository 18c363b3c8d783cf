# SPDX-License-Identifier: Apache-2.0
"""Small ONNX models the Python tests build for themselves (Debian's
python3-onnx): every node has a CPU kernel, so the runtime loads them
without compiling."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def add_model(path, dtype=TensorProto.FLOAT, shape=(2, 3)):
    """y = a + b, both of `dtype` and `shape`."""
    a = helper.make_tensor_value_info("a", dtype, list(shape))
    b = helper.make_tensor_value_info("b", dtype, list(shape))
    y = helper.make_tensor_value_info("y", dtype, list(shape))
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "add_graph", [a, b], [y])
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)]), path)


def two_outputs_model(path):
    """sum = x + 1, neg = -x, flag = x > 0 (bool), count = Shape(x) (int64);
    x float [N, 4] with a symbolic N. With metadata to read back."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    outs = [helper.make_tensor_value_info("sum", TensorProto.FLOAT, ["N", 4]),
            helper.make_tensor_value_info("neg", TensorProto.FLOAT, ["N", 4]),
            helper.make_tensor_value_info("flag", TensorProto.BOOL, ["N", 4]),
            helper.make_tensor_value_info("count", TensorProto.INT64, [2])]
    one = numpy_helper.from_array(np.array(1.0, np.float32), "one")
    zero = numpy_helper.from_array(np.array(0.0, np.float32), "zero")
    nodes = [helper.make_node("Add", ["x", "one"], ["sum"]),
             helper.make_node("Neg", ["x"], ["neg"]),
             helper.make_node("Greater", ["x", "zero"], ["flag"]),
             helper.make_node("Shape", ["x"], ["count"])]
    g = helper.make_graph(nodes, "four_outputs", [x], outs, [one, zero])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="epctx-python-tests", producer_version="7.1",
                          domain="ai.epctx.test", model_version=42)
    helper.set_model_props(m, {"author": "tests/python", "purpose": "metadata"})
    return save(m, path)


def slow_model(path, size=128):
    """y = x @ W repeated n times in a Loop (n: an int64 input): a run whose
    length the test chooses, with a step boundary at every iteration where
    run options are checked. W is the identity, so y == x."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [size, size])
    n = helper.make_tensor_value_info("n", TensorProto.INT64, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [size, size])
    w = numpy_helper.from_array(np.eye(size, dtype=np.float32), "w")
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("MatMul", ["v_in", "w"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [size, size])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [size, size])])
    cond = numpy_helper.from_array(np.array(True), "cond")
    g = helper.make_graph([helper.make_node("Loop", ["n", "cond", "x"], ["y"], body=body)],
                          "slow", [x, n], [y], [w, cond])
    return save(helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)]), path)
