# SPDX-License-Identifier: Apache-2.0
"""The multiply-add work of a model's Conv, ConvTranspose, MatMul and Gemm
nodes (2 flops per multiply-add), for the GFLOP/s the peer benchmark prints.
Other ops are not counted: in the benchmark's models they are a few percent.

Needs python3-onnx (Debian's /usr/bin/python3): the graph's symbolic input
dimensions are fixed to the benchmark's shapes and ONNX shape inference gives
every node's shapes. A node whose shapes stay unknown is counted in
`unknown` instead, so a partial count never passes for a full one.
"""
import math

import onnx
from onnx import shape_inference


def _shape(vi):
    dims = vi.type.tensor_type.shape.dim
    return [d.dim_value if d.HasField("dim_value") else None for d in dims]


def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return a.i
    return default


def count(path, input_shapes):
    """path: an .onnx file; input_shapes: {input name: [dims]}.
    Returns (flops, unknown_nodes)."""
    m = onnx.load(path)
    for i in m.graph.input:
        if i.name in input_shapes:
            for d, v in zip(i.type.tensor_type.shape.dim, input_shapes[i.name]):
                d.ClearField("dim_param")
                d.dim_value = v
    m = shape_inference.infer_shapes(m)
    g = m.graph
    shapes = {vi.name: _shape(vi) for vi in list(g.value_info) + list(g.input) + list(g.output)}
    shapes.update({t.name: list(t.dims) for t in g.initializer})

    def known(name):
        s = shapes.get(name)
        return s if s and None not in s else None

    flops, unknown = 0, 0
    for n in g.node:
        if n.op_type not in ("Conv", "ConvTranspose", "MatMul", "Gemm"):
            continue
        a, b, y = known(n.input[0]), known(n.input[1]), known(n.output[0])
        if not (a and b and y):
            unknown += 1
        elif n.op_type == "Conv":
            # Every output element takes (C_in / group) * kernel taps.
            flops += 2 * math.prod(y) * math.prod(b[1:])
        elif n.op_type == "ConvTranspose":
            flops += 2 * math.prod(a) * math.prod(b[1:])
        else:
            k = a[-2] if n.op_type == "Gemm" and _attr(n, "transA", 0) else a[-1]
            flops += 2 * math.prod(y) * k
    return flops, unknown
