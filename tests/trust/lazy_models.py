# SPDX-License-Identifier: Apache-2.0
"""Models for the lazy-verification test (tests/trust/test_lazy.cc).

  lazy_models.py chain OUT_MODEL [N]
      x[1,256] -> N x (Add c_i, Tanh) -> Relu -> Softsign -> 96 x (Add d_i, Tanh)
      -> y (N = 96 by default). vnpu has no Softsign, so epctx-compile makes two EPContext
      partitions in one context binary, each with a command stream of tens
      of KiB (several 4 KiB manifest chunks).
  lazy_models.py one CTX_MODEL INDEX OUT_MODEL SOURCE_MODEL
      A model whose only node is EPContext node INDEX of CTX_MODEL, made the
      primary of the same context binary: a session of it binds one graph of
      a container that holds two. Also writes OUT_MODEL.cpu.onnx, the same
      sub-graph cut from SOURCE_MODEL for the CPU kernels (the reference),
      and OUT_MODEL.graph, the name of the graph the node binds.

Run with /usr/bin/python3 (Debian python3-onnx 1.12 + numpy).
"""
import sys

import numpy as np
import onnx
import onnx.utils
from onnx import TensorProto, helper, numpy_helper

N = 96
W = 256


def chain(out, n=N):
    rng = np.random.default_rng(7)
    nodes, inits = [], []
    cur = "x"

    def half(tag):
        nonlocal cur
        for i in range(n):
            c = f"{tag}{i}"
            inits.append(numpy_helper.from_array(
                rng.uniform(-0.5, 0.5, size=(1, W)).astype(np.float32), c))
            nodes.append(helper.make_node("Add", [cur, c], [f"{c}_a"], name=f"add_{c}"))
            nodes.append(helper.make_node("Tanh", [f"{c}_a"], [f"{c}_t"], name=f"tanh_{c}"))
            cur = f"{c}_t"

    half("c")
    nodes.append(helper.make_node("Relu", [cur], ["r"], name="relu"))
    nodes.append(helper.make_node("Softsign", ["r"], ["s"], name="softsign"))
    cur = "s"
    half("d")
    nodes.append(helper.make_node("Identity", [cur], ["y"], name="out"))
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, (1, W))
    graph = helper.make_graph(nodes, "lazy_chain", [vi("x")], [vi("y")], initializer=inits)
    model = helper.make_model(graph, producer_name="epctx-tests",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


def one(src, index, out, source):
    m = onnx.load(src)
    g = m.graph
    eps = [n for n in g.node if n.op_type == "EPContext"]
    primary = next(n for n in eps if any(a.name == "main_context" and a.i == 1
                                         for a in n.attribute))
    keep = eps[index]
    attrs = {a.name: a for a in keep.attribute}
    for a in primary.attribute:
        if a.name in ("ep_cache_context", "embed_mode", "source", "ep_sdk_version",
                      "hardware_architecture") and a.name not in attrs:
            keep.attribute.append(a)
    for a in keep.attribute:
        if a.name == "main_context":
            a.i = 1
    shapes = {v.name: v for v in list(g.input) + list(g.output) + list(g.value_info)}
    node = onnx.NodeProto()
    node.CopyFrom(keep)
    graph = helper.make_graph([node], g.name + "_one", [shapes[i] for i in node.input],
                              [shapes[o] for o in node.output])
    model = helper.make_model(graph, opset_imports=list(m.opset_import),
                              producer_name=m.producer_name)
    model.ir_version = m.ir_version
    onnx.save(model, out)
    onnx.utils.extract_model(source, out + ".cpu.onnx", list(node.input), list(node.output))
    name = next((a.s.decode() for a in node.attribute if a.name == "partition_name"), "")
    with open(out + ".graph", "w") as f:
        f.write(name or node.name)


if __name__ == "__main__":
    if sys.argv[1] == "chain":
        chain(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else N)
    else:
        one(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
