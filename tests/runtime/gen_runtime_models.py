# SPDX-License-Identifier: Apache-2.0
"""Generates the small models the runtime C API tests load.

Run with Debian's python3 (python3-onnx, numpy): gen_runtime_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "models"))
from onnx_util import ep_node  # noqa: E402


def add_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    b = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "b")
    n1 = helper.make_node("Add", ["x", "b"], ["t"], name="add0")
    n2 = helper.make_node("Relu", ["t"], ["y"], name="relu0")
    g = helper.make_graph([n1, n2], "add_relu", [x], [y], [b])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def epcontext_model(source, embed_mode, cache, extra_attrs=None, with_source=True):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    attrs = {"embed_mode": embed_mode, "ep_cache_context": cache, "main_context": 1}
    if with_source:
        attrs["source"] = source
    attrs.update(extra_attrs or {})
    n = ep_node("ctx_node_0", ["x"], ["y"], **attrs)
    g = helper.make_graph([n], "ctx", [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                               helper.make_opsetid("com.microsoft", 1)])


def unknown_op_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    n = helper.make_node("NoSuchOp", ["x"], ["y"], name="mystery", domain="")
    g = helper.make_graph([n], "unknown", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    return m


def reverse_chain_model(n=100000):
    """n Neg nodes x -> t1 -> ... -> y, written last to first: a valid graph
    whose node list is in reverse order (issue 14 finding 7: ordering such a
    file was quadratic, 2.5 s for 40k nodes)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    names = ["x"] + ["t%d" % i for i in range(1, n)] + ["y"]
    nodes = [helper.make_node("Neg", [names[i]], [names[i + 1]], name="n%d" % i)
             for i in reversed(range(n))]
    g = helper.make_graph(nodes, "reverse_chain", [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def cycle_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="first"),
             helper.make_node("Neg", ["a"], ["b"], name="second"),
             helper.make_node("Identity", ["a"], ["y"], name="out")]
    g = helper.make_graph(nodes, "cycle", [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])

def bool_models():
    """Where(cond, x, b) with a bool graph input, and Where(c, x, b) with a
    bool initializer whose raw bytes hold a 2 (not a bool)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    b = numpy_helper.from_array(np.full(4, -1.0, dtype=np.float32), "b")
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [4])
    g = helper.make_graph([helper.make_node("Where", ["cond", "x", "b"], ["y"], name="where0")],
                          "bool_input", [cond, x], [y], [b])
    as_input = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    c = helper.make_tensor("c", TensorProto.BOOL, [4], bytes([1, 0, 2, 1]), raw=True)
    g = helper.make_graph([helper.make_node("Where", ["c", "x", "b"], ["y"], name="where0")],
                          "bool_init", [x], [y], [b, c])
    as_init = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    return as_input, as_init


def metadata_model():
    m = add_model()
    m.producer_name = "epctx-tests"
    m.producer_version = "1.2.3"
    m.domain = "org.example"
    m.model_version = 7
    helper.set_model_props(m, {"author": "runtime tests", "license": "Apache-2.0"})
    m.metadata_props.add(key="author", value="a duplicate key")
    return m


def endless_loop_model():
    """A Loop whose trip count is an input: with INT64_MAX it never ends on
    its own, so only run options can stop it."""
    one = helper.make_node("Constant", [], ["one"],
                           value=numpy_helper.from_array(np.ones([1], np.float32)))
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond"], ["cond_out"]), one,
         helper.make_node("Add", ["v", "one"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])])
    loop = helper.make_node("Loop", ["m", "", "v0"], ["v"], body=body, name="loop")
    g = helper.make_graph([loop], "endless",
                          [helper.make_tensor_value_info("m", TensorProto.INT64, []),
                           helper.make_tensor_value_info("v0", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("v", TensorProto.FLOAT, [1])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def formula_weights(shape):
    """Weights test_prepare.c computes again for the variant that takes
    them as a graph input: w[i] = ((i * 7919) % 17 - 8) / 8, exact in float."""
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.int64)
    return (((i * 7919) % 17 - 8) / 8.0).astype(np.float32).reshape(shape)


def prepare_models():
    """Conv, Gemm and MatMul each twice: weights a constant initializer
    (prepared at create) and the same weights as graph input "w"."""
    cases = {
        "conv": ("Conv", [1, 16, 24, 23], [24, 16, 3, 3], [1, 24, 24, 23],
                 dict(pads=[1, 1, 1, 1]), [24]),
        "gemm": ("Gemm", [5, 300], [400, 300], [5, 400],
                 dict(transB=1, alpha=0.5, beta=1.0), [400]),
        "matmul": ("MatMul", [3, 33, 200], [200, 530], [3, 33, 530], {}, None),
    }
    models = {}
    for name, (op, xs, ws, ys, attrs, bias) in cases.items():
        for const in (True, False):
            x = helper.make_tensor_value_info("x", TensorProto.FLOAT, xs)
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ys)
            inits = []
            inputs = [x]
            w = formula_weights(ws)
            if const:
                inits.append(numpy_helper.from_array(w, "w"))
            else:
                inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, ws))
            node_inputs = ["x", "w"]
            if bias:
                inits.append(numpy_helper.from_array(
                    np.linspace(-1, 1, bias[0]).astype(np.float32), "b"))
                node_inputs.append("b")
            n = helper.make_node(op, node_inputs, ["y"], name=name + "0", **attrs)
            g = helper.make_graph([n], name, inputs, [y], inits)
            models["prepare_%s_%s.onnx" % (name, "const" if const else "input")] = \
                helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    return models


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    onnx.save(add_model(), os.path.join(out, "add_relu.onnx"))
    onnx.save(metadata_model(), os.path.join(out, "metadata.onnx"))
    onnx.save(endless_loop_model(), os.path.join(out, "endless_loop.onnx"))
    data = open(os.path.join(out, "add_relu.onnx"), "rb").read()
    with open(os.path.join(out, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(out, "not_onnx.onnx"), "wb") as f:
        f.write(b"this is plainly not a protobuf model \xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
    onnx.save(epcontext_model("NoSuchNpu", 1, b"opaque"), os.path.join(out, "unknown_source.onnx"))
    onnx.save(epcontext_model("vnpu", 1, b"opaque", with_source=False), os.path.join(out, "no_source.onnx"))
    onnx.save(epcontext_model("vnpu", 0, "../outside.bin"), os.path.join(out, "escape.onnx"))
    onnx.save(epcontext_model("vnpu", 0, "/etc/passwd"), os.path.join(out, "absolute.onnx"))
    onnx.save(epcontext_model("vnpu", 0, "missing_vnpu.bin"), os.path.join(out, "missing_bin.onnx"))
    onnx.save(epcontext_model("vnpu", 1, b"EPCTXBIN" + b"\0" * 20), os.path.join(out, "bad_container.onnx"))
    onnx.save(epcontext_model("vnpu", 1, b"not a container"), os.path.join(out, "not_container.onnx"))
    onnx.save(unknown_op_model(), os.path.join(out, "unknown_op.onnx"))
    onnx.save(reverse_chain_model(), os.path.join(out, "reverse_chain.onnx"))
    onnx.save(cycle_model(), os.path.join(out, "cycle.onnx"))

    for fname, model in prepare_models().items():
        onnx.save(model, os.path.join(out, fname))

    bool_input, bool_init = bool_models()
    onnx.save(bool_input, os.path.join(out, "bool_input.onnx"))
    onnx.save(bool_init, os.path.join(out, "bool_init_byte2.onnx"))


if __name__ == "__main__":
    main()
