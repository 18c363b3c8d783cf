# SPDX-License-Identifier: Apache-2.0
"""Quantised test models for the vnpu int8 level, written the way
onnxruntime's quantisers write them (Debian's python3-onnx 1.12):

  qdq_static   static QDQ format (quantize_static): per-tensor uint8
               activations with non-zero zero points, per-channel int8 Conv
               and Gemm weights, int32 biases in the accumulator's scale;
               Conv+Relu, MaxPool, a second Conv, a residual Add, a Concat of
               differently quantised inputs, Flatten, Gemm, MatMul.
  qdq_swish    SiLU and HardSwish as two nodes between DequantizeLinear and
               QuantizeLinear, a residual Add then Relu.
  qdq_mixed    signed int8 activations; AveragePool, GlobalAveragePool and an
               Add of a dequantised constant inside the QDQ graph.
  qlinear      QLinearConv and QLinearMatMul as quantised-operator-format
               models have them.
  dyn_quant    dynamic quantisation (quantize_dynamic): DynamicQuantizeLinear
               + MatMulInteger (int8 weights) and + ConvInteger (uint8 weights
               with a zero point), each followed by Cast, the scale Mul and the
               bias Add.

usage: gen_int8_models.py OUT_DIR
Writes OUT_DIR/<case>/{model.onnx, input_<i>.npy, manifest.txt, atol.txt}
(atol.txt: one quantisation step of each output, the comparison tolerance),
reference.onnx for the cases with integer-GEMM ops (onnx_semantics) and
OUT_DIR/cases.txt. ort_int8.js adds ONNX Runtime's expected outputs.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


class Builder:
    def __init__(self):
        self.nodes, self.inits = [], []
        self.n = 0

    def node(self, op, ins, outs=None, **attrs):
        self.n += 1
        outs = outs or [f"{op.lower()}_{self.n}"]
        self.nodes.append(helper.make_node(op, ins, outs, name=f"{op}_{self.n}", **attrs))
        return outs[0] if len(outs) == 1 else outs

    def init(self, name, arr):
        self.inits.append(const(name, arr))
        return name

    def q(self, x, scale, zp, dtype=np.uint8):
        tag = f"q{self.n + 1}"
        return self.node("QuantizeLinear", [x, self.init(tag + "_s", np.float32(scale)),
                                            self.init(tag + "_z", dtype(zp))])

    def dq(self, xq, scale, zp, dtype=np.uint8):
        tag = f"dq{self.n + 1}"
        return self.node("DequantizeLinear", [xq, self.init(tag + "_s", np.float32(scale)),
                                              self.init(tag + "_z", dtype(zp))])

    def qweight(self, name, w, axis):
        """Per-channel symmetric int8 weights, as quantize_static(per_channel=True)."""
        amax = np.abs(w).max(axis=tuple(i for i in range(w.ndim) if i != axis))
        s = (np.maximum(amax, 1e-8) / 127.0).astype(np.float32)
        shape = [1] * w.ndim
        shape[axis] = -1
        q = np.clip(np.round(w / s.reshape(shape)), -127, 127).astype(np.int8)
        out = self.node("DequantizeLinear", [self.init(name + "_q", q), self.init(name + "_s", s),
                                             self.init(name + "_z", np.zeros_like(s, np.int8))],
                        axis=axis)
        return out, s

    def qbias(self, name, b, sx, sw):
        s = (np.float32(sx) * sw).astype(np.float32)
        q = np.round(b / s).astype(np.int32)
        return self.node("DequantizeLinear", [self.init(name + "_q", q), self.init(name + "_s", s),
                                              self.init(name + "_z", np.zeros_like(q))], axis=0)


def qdq_static(rng):
    b = Builder()
    sx, zx = 2.0 / 255, 128
    s1, s2, s3, s4, s5, s6 = 3.0 / 255, 8.0 / 255, 10.0 / 255, 10.0 / 255, 16.0 / 255, 12.0 / 255
    x = b.dq(b.q("x", sx, zx), sx, zx)
    w1, sw1 = b.qweight("w1", rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), 0)
    c1 = b.node("Conv", [x, w1, b.qbias("b1", rng.normal(0, 0.1, 8), sx, sw1)],
                kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    r1 = b.dq(b.q(b.node("Relu", [c1]), s1, 0), s1, 0)
    p1 = b.q(b.node("MaxPool", [r1], kernel_shape=[2, 2], strides=[2, 2]), s1, 0)
    pa, pb = b.dq(p1, s1, 0), b.dq(p1, s1, 0)  # one DequantizeLinear per consumer, as ORT writes
    w2, sw2 = b.qweight("w2", rng.normal(0, 0.1, (8, 8, 3, 3)).astype(np.float32), 0)
    c2 = b.dq(b.q(b.node("Conv", [pa, w2, b.qbias("b2", rng.normal(0, 0.1, 8), s1, sw2)],
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]), s2, 128), s2, 128)
    add = b.dq(b.q(b.node("Add", [c2, pb]), s3, 100), s3, 100)
    pc = b.dq(p1, s1, 0)
    cat = b.q(b.node("Concat", [add, pc], axis=1), s4, 100)  # inputs requantised to s4
    flat = b.dq(b.q(b.node("Flatten", [b.dq(cat, s4, 100)], axis=1), s4, 100), s4, 100)
    w3, sw3 = b.qweight("w3", rng.normal(0, 0.03, (10, 16 * 8 * 8)).astype(np.float32), 0)
    g = b.node("Gemm", [flat, w3, b.qbias("b3", rng.normal(0, 0.1, 10), s4, sw3)], transB=1)
    gq = b.dq(b.q(g, s5, 128), s5, 128)
    w4, sw4 = b.qweight("w4", rng.normal(0, 0.3, (10, 6)).astype(np.float32), 1)
    mm = b.node("MatMul", [gq, w4])
    b.node("DequantizeLinear", [b.q(mm, s6, 128), b.init("out_s", np.float32(s6)),
                                b.init("out_z", np.uint8(128))], ["y"])
    graph = helper.make_graph(
        b.nodes, "qdq_static", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6])], b.inits)
    inputs = {"x": rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)}
    return graph, inputs, [s6]


def dyn_quant(rng):
    b = Builder()
    # MatMul branch: [4, 64] x int8 [64, 32] + bias.
    xq, xs, xz = b.node("DynamicQuantizeLinear", ["a"], ["a_q", "a_s", "a_z"])
    wm = rng.normal(0, 0.2, (64, 32)).astype(np.float32)
    wms = np.float32(np.abs(wm).max() / 127)
    mi = b.node("MatMulInteger", [xq, b.init("wm_q", np.round(wm / wms).astype(np.int8)), xz,
                                  b.init("wm_z", np.int8(0))])
    scale = b.node("Mul", [xs, b.init("wm_s", wms)])
    y1 = b.node("Add", [b.node("Mul", [b.node("Cast", [mi], to=TensorProto.FLOAT), scale]),
                        b.init("bm", rng.normal(0, 0.1, 32).astype(np.float32))], ["y_mm"])
    # Conv branch: [1, 4, 12, 12], uint8 weights [6, 4, 3, 3] with zero point 128.
    cq, cs, cz = b.node("DynamicQuantizeLinear", ["c"], ["c_q", "c_s", "c_z"])
    wc = rng.normal(0, 0.2, (6, 4, 3, 3)).astype(np.float32)
    wcs = np.float32(np.abs(wc).max() / 127)
    ci = b.node("ConvInteger", [cq, b.init("wc_q", (np.round(wc / wcs) + 128).astype(np.uint8)), cz,
                                b.init("wc_z", np.uint8(128))], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                strides=[2, 2])
    cscale = b.node("Mul", [cs, b.init("wc_s", wcs)])
    y2 = b.node("Add", [b.node("Mul", [b.node("Cast", [ci], to=TensorProto.FLOAT), cscale]),
                        b.init("bc", rng.normal(0, 0.1, (1, 6, 1, 1)).astype(np.float32))], ["y_conv"])
    graph = helper.make_graph(
        b.nodes, "dyn_quant",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [4, 64]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [1, 4, 12, 12])],
        [helper.make_tensor_value_info(y1, TensorProto.FLOAT, [4, 32]),
         helper.make_tensor_value_info(y2, TensorProto.FLOAT, [1, 6, 6, 6])], b.inits)
    inputs = {"a": rng.uniform(-2, 1.5, (4, 64)).astype(np.float32),
              "c": rng.uniform(-1, 1, (1, 4, 12, 12)).astype(np.float32)}
    # One step of the input's quantisation through the largest weight.
    step = lambda x, w: float((max(x.max(), 0) - min(x.min(), 0)) / 255 * np.abs(w).max())
    return graph, inputs, [step(inputs["a"], wm), step(inputs["c"], wc)]


def qlinear(rng):
    """QLinearConv (uint8 activations, per-channel int8 weights, int32 bias)
    and QLinearMatMul (uint8 weights with a zero point), between a
    QuantizeLinear and a DequantizeLinear each."""
    b = Builder()
    sx, zx, sy, zy = 2.0 / 255, 128, 6.0 / 255, 120
    w = rng.normal(0, 0.3, (5, 3, 3, 3)).astype(np.float32)
    sw = (np.abs(w).max(axis=(1, 2, 3)) / 127).astype(np.float32)
    wq = np.round(w / sw.reshape(-1, 1, 1, 1)).astype(np.int8)
    bias = np.round(rng.normal(0, 0.1, 5) / (sx * sw)).astype(np.int32)
    conv = b.node("QLinearConv", [b.q("x", sx, zx), b.init("x_s", np.float32(sx)), b.init("x_z", np.uint8(zx)),
                                  b.init("w_q", wq), b.init("w_s", sw), b.init("w_z", np.zeros(5, np.int8)),
                                  b.init("y_s", np.float32(sy)), b.init("y_z", np.uint8(zy)), b.init("w_b", bias)],
                  kernel_shape=[3, 3], pads=[1, 0, 1, 2], strides=[2, 1])
    b.node("DequantizeLinear", [conv, b.init("o1_s", np.float32(sy)), b.init("o1_z", np.uint8(zy))], ["y_conv"])
    sa, za, sm, zm = 3.0 / 255, 100, 10.0 / 255, 128
    m = rng.normal(0, 0.3, (16, 7)).astype(np.float32)
    sbm = np.float32(np.abs(m).max() / 127)
    mm = b.node("QLinearMatMul", [b.q("a", sa, za), b.init("a_s", np.float32(sa)), b.init("a_z", np.uint8(za)),
                                  b.init("m_q", (np.round(m / sbm) + 130).astype(np.uint8)),
                                  b.init("m_s", np.float32(sbm)), b.init("m_z", np.uint8(130)),
                                  b.init("mm_s", np.float32(sm)), b.init("mm_z", np.uint8(zm))])
    b.node("DequantizeLinear", [mm, b.init("o2_s", np.float32(sm)), b.init("o2_z", np.uint8(zm))], ["y_mm"])
    graph = helper.make_graph(
        b.nodes, "qlinear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 9, 7]),
         helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 5, 16])],
        [helper.make_tensor_value_info("y_conv", TensorProto.FLOAT, [1, 5, 5, 7]),
         helper.make_tensor_value_info("y_mm", TensorProto.FLOAT, [2, 5, 7])], b.inits)
    inputs = {"x": rng.uniform(-1, 1, (1, 3, 9, 7)).astype(np.float32),
              "a": rng.uniform(-1, 1, (2, 5, 16)).astype(np.float32)}
    return graph, inputs, [sy, sm]


def qdq_mixed(rng):
    """Signed int8 activations (as recent quantize_static defaults) and ops
    without an int8 unit between DequantizeLinear and QuantizeLinear
    (AveragePool, GlobalAveragePool, an Add of a dequantised constant): those
    run on vnpu in float32 between DEQUANTIZE and QUANTIZE; Sigmoid is a
    lookup table."""
    b = Builder()
    s0, s1, s2, s3 = 2 / 255, 1.5 / 255, 4 / 255, 1 / 255
    x = b.dq(b.q("x", s0, -3, np.int8), s0, -3, np.int8)
    ap = b.dq(b.q(b.node("AveragePool", [x], kernel_shape=[2, 2], strides=[1, 1]), s1, 5, np.int8),
              s1, 5, np.int8)
    w, _ = b.qweight("w", rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32), 0)
    c = b.dq(b.q(b.node("Conv", [ap, w], kernel_shape=[3, 3]), s2, 0, np.int8), s2, 0, np.int8)
    sg = b.dq(b.q(b.node("Sigmoid", [c]), s3, -128, np.int8), s3, -128, np.int8)
    k = b.node("DequantizeLinear", [b.init("k_q", np.int8(50)), b.init("k_s", np.float32(0.01)),
                                    b.init("k_z", np.int8(0))])
    b.node("Add", [b.node("GlobalAveragePool", [sg]), k], ["y"])
    graph = helper.make_graph(
        b.nodes, "qdq_mixed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 1, 1])], b.inits)
    inputs = {"x": rng.uniform(-1, 1, (1, 3, 10, 10)).astype(np.float32)}
    return graph, inputs, [s3]


def qdq_swish(rng):
    """The activations exporters write as two nodes between DequantizeLinear
    and QuantizeLinear: SiLU (x * Sigmoid(x)) and HardSwish (x *
    HardSigmoid(x)), each one lookup table on vnpu; and a residual Add then
    Relu (one QBINARY_CLAMPED). Three outputs, each dequantised."""
    b = Builder()
    s0, s1, s2, s3, s4 = 2 / 255, 3 / 255, 1.2 / 255, 1.5 / 255, 2.5 / 255
    x = b.dq(b.q("x", s0, 128), s0, 128)
    w1, _ = b.qweight("w1", rng.normal(0, 0.3, (8, 4, 3, 3)).astype(np.float32), 0)
    w2, _ = b.qweight("w2", rng.normal(0, 0.3, (8, 4, 1, 1)).astype(np.float32), 0)
    c1 = b.dq(b.q(b.node("Conv", [x, w1], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), s1, 120), s1,
              120)
    c2 = b.dq(b.q(b.node("Conv", [x, w2], kernel_shape=[1, 1]), s1, 130), s1, 130)
    silu = b.node("Mul", [c1, b.node("Sigmoid", [c1])])
    b.node("DequantizeLinear", [b.q(silu, s2, 30), b.init("y1_s", np.float32(s2)),
                                b.init("y1_z", np.uint8(30))], ["y1"])
    hsw = b.node("Mul", [c1, b.node("HardSigmoid", [c1], alpha=1 / 6, beta=0.5)])
    b.node("DequantizeLinear", [b.q(hsw, s3, 40), b.init("y2_s", np.float32(s3)),
                                b.init("y2_z", np.uint8(40))], ["y2"])
    res = b.node("Relu", [b.node("Add", [c1, c2])])
    b.node("DequantizeLinear", [b.q(res, s4, 0), b.init("y3_s", np.float32(s4)),
                                b.init("y3_z", np.uint8(0))], ["y3"])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 8, 6, 6]) for n in ("y1", "y2", "y3")]
    graph = helper.make_graph(
        b.nodes, "qdq_swish", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        outs, b.inits)
    inputs = {"x": rng.uniform(-1, 1, (1, 4, 6, 6)).astype(np.float32)}
    return graph, inputs, [s2, s3, s4]


def onnx_semantics(model):
    """The model with its integer-GEMM ops (QLinearConv, QLinearMatMul,
    MatMulInteger, ConvInteger) written as the float ops the ONNX spec
    defines them by: integer operands minus zero points as float (exact:
    every sum here stays below 2^24), float Conv/MatMul, then
    QuantizeLinear or Cast to int32. ONNX Runtime runs it op by op
    (ort_int8.js) where its own int8 kernels would saturate; None when the
    model has none of these ops."""
    g = model.graph
    if not any(n.op_type in ("QLinearConv", "QLinearMatMul", "MatMulInteger", "ConvInteger")
               for n in g.node):
        return None
    nodes = []
    count = [0]

    def add(op, ins, **attrs):
        count[0] += 1
        out = f"ref_{op.lower()}_{count[0]}"
        nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def per_channel(v):  # a Conv weight's scale or zero point: [C] -> [C, 1, 1, 1]
        return add("Reshape", [v, add("Constant", [], value=const("s", np.array([-1, 1, 1, 1])))])

    def centred(x, zp, conv_weight=False):  # float(x) - float(zp)
        f = add("Cast", [x], to=TensorProto.FLOAT)
        if not zp:
            return f
        z = add("Cast", [zp], to=TensorProto.FLOAT)
        return add("Sub", [f, per_channel(z) if conv_weight else z])

    for n in g.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        i = list(n.input) + [""] * 9
        if n.op_type in ("QLinearConv", "QLinearMatMul"):
            xf = add("Mul", [centred(i[0], i[2]), i[1]])
            if n.op_type == "QLinearConv":
                wf = add("Mul", [centred(i[3], i[5], True), per_channel(i[4])])
                ins = [xf, wf]
                if i[8]:
                    ins.append(add("Mul", [add("Cast", [i[8]], to=TensorProto.FLOAT), add("Mul", [i[1], i[4]])]))
                y = add("Conv", ins, **attrs)
                nodes.append(helper.make_node("QuantizeLinear", [y, i[6], i[7]], list(n.output)))
            else:
                y = add("MatMul", [xf, add("Mul", [centred(i[3], i[5]), i[4]])])
                nodes.append(helper.make_node("QuantizeLinear", [y, i[6], i[7]], list(n.output)))
        elif n.op_type in ("MatMulInteger", "ConvInteger"):
            op = "MatMul" if n.op_type == "MatMulInteger" else "Conv"
            y = add(op, [centred(i[0], i[2]), centred(i[1], i[3], op == "Conv")], **attrs)
            nodes.append(helper.make_node("Cast", [y], list(n.output), to=TensorProto.INT32))
        else:
            nodes.append(n)
    ref = onnx.ModelProto()
    ref.CopyFrom(model)
    del ref.graph.node[:]
    ref.graph.node.extend(nodes)
    onnx.checker.check_model(ref)
    return ref


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    cases = []
    for fn in (qdq_static, dyn_quant, qlinear, qdq_mixed, qdq_swish):
        graph, inputs, atols = fn(rng)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="epctx-tests-int8")
        model.ir_version = 7
        onnx.checker.check_model(model)
        d = os.path.join(out, graph.name)
        os.makedirs(d, exist_ok=True)
        onnx.save(model, os.path.join(d, "model.onnx"))
        ref = onnx_semantics(model)
        if ref is not None:
            onnx.save(ref, os.path.join(d, "reference.onnx"))
        for i, (name, arr) in enumerate(inputs.items()):
            np.save(os.path.join(d, f"input_{i}.npy"), arr)
        with open(os.path.join(d, "manifest.txt"), "w") as f:
            f.write(f"case {graph.name}\ninputs {' '.join(inputs)}\n"
                    f"outputs {' '.join(o.name for o in graph.output)}\n")
        with open(os.path.join(d, "atol.txt"), "w") as f:
            f.write("".join(f"{a!r}\n" for a in atols))
        cases.append(graph.name)
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")
    # A float model (no reference needed) for the weight-sharing group test.
    n = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    g = helper.make_graph([n], "float_conv",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [const("w", rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 7
    os.makedirs(os.path.join(out, "float_conv"), exist_ok=True)
    onnx.save(m, os.path.join(out, "float_conv", "model.onnx"))


if __name__ == "__main__":
    main()
