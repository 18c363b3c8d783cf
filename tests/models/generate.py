#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the end-to-end test models: one small ONNX model per op (with
attribute variants), a small CNN, control flow (If, Loop, Scan, an If inside a
Loop, bodies reading outer values), a "split" model that must compile into two
EPContext partitions around one CPU node, and hand-made bad context models.

Usage: generate.py OUT_DIR [--only CASE ...]

Per case OUT_DIR/<case>/ holds model.onnx, input_<i>.npy, expected_<i>.npy
and manifest.txt:
    case <name>
    inputs <name> <name> ...
    outputs <name> ...
    [vnpu_driver_nodes <n>]   expected node counts after --ep vnpu
    [vnpu_cpu_nodes <n>]
OUT_DIR/cases.txt lists the cases, one a line. OUT_DIR/bad/ holds
no_such_npu_ctx.onnx (an EPContext node with source="NoSuchNpu").

Run with /usr/bin/python3 (Debian python3-onnx 1.12 + numpy). Weights are
initializers, shapes are static, data is seeded: output is reproducible.
"""
import math
import os
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference as ref  # noqa: E402

OPSET = 13
F32 = TensorProto.FLOAT


class Case:
    """Collects one model's nodes, inputs and initializers, then writes it."""

    def __init__(self, name):
        self.name = name
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))
        self.nodes = []
        self.inputs = []   # (name, array)
        self.inits = []
        self.outputs = []  # (name, expected array)
        self.extra = {}
        self.opset = OPSET
        self.sorted = True  # False: nodes deliberately out of order (no checker)

    def input(self, name, shape, low=-1.0, high=1.0):
        a = self.rng.uniform(low, high, size=shape).astype(np.float32)
        self.inputs.append((name, a))
        return a

    def input_value(self, name, array):
        """An input of any dtype with a given value (a bool switch ...)."""
        a = np.asarray(array)
        self.inputs.append((name, a))
        return a

    def weight(self, name, shape, low=-1.0, high=1.0, dtype=np.float32):
        a = self.rng.uniform(low, high, size=shape).astype(dtype)
        self.inits.append(numpy_helper.from_array(a, name))
        return a

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return np.asarray(array)

    def node(self, op, inputs, outputs, name=None, **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs,
                                           name=name or f"{op.lower()}_{len(self.nodes)}",
                                           **attrs))

    def output(self, name, expected):
        self.outputs.append((name, np.ascontiguousarray(expected, dtype=np.float32)))

    def write(self, out_dir):
        graph = helper.make_graph(
            self.nodes, self.name,
            [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
             for n, a in self.inputs],
            [helper.make_tensor_value_info(n, F32, e.shape) for n, e in self.outputs],
            initializer=self.inits)
        model = helper.make_model(graph, producer_name="epctx-tests",
                                  opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = 8
        if self.sorted:
            onnx.checker.check_model(model, full_check=True)
        d = os.path.join(out_dir, self.name)
        os.makedirs(d, exist_ok=True)
        onnx.save(model, os.path.join(d, "model.onnx"))
        for i, (_, a) in enumerate(self.inputs):
            np.save(os.path.join(d, f"input_{i}.npy"), a)
        for i, (_, e) in enumerate(self.outputs):
            np.save(os.path.join(d, f"expected_{i}.npy"), e)
        with open(os.path.join(d, "manifest.txt"), "w") as f:
            f.write(f"case {self.name}\n")
            f.write("inputs " + " ".join(n for n, _ in self.inputs) + "\n")
            f.write("outputs " + " ".join(n for n, _ in self.outputs) + "\n")
            for k, v in self.extra.items():
                f.write(f"{k} {v}\n")


CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def conv_case(name, x_shape, w_shape, bias=True, **attrs):
    c = Case(name)
    x = c.input("x", x_shape)
    w = c.weight("w", w_shape, -0.5, 0.5)
    ins = ["x", "w"]
    b = None
    if bias:
        b = c.weight("b", (w_shape[0],))
        ins.append("b")
    c.node("Conv", ins, ["y"], kernel_shape=list(w_shape[2:]), **attrs)
    c.output("y", ref.conv(x, w, b, strides=attrs.get("strides", (1, 1)),
                           pads=attrs.get("pads"),
                           dilations=attrs.get("dilations", (1, 1)),
                           group=attrs.get("group", 1)))
    return c


@case
def conv_basic():
    return conv_case("conv_basic", (1, 3, 8, 8), (4, 3, 3, 3))


@case
def conv_pads_strides():
    return conv_case("conv_pads_strides", (1, 3, 9, 9), (8, 3, 3, 3),
                     pads=[1, 1, 1, 1], strides=[2, 2])


@case
def conv_asymmetric():
    return conv_case("conv_asymmetric", (2, 2, 7, 9), (3, 2, 2, 3), bias=False,
                     pads=[0, 1, 2, 1], strides=[1, 2])


@case
def conv_depthwise():
    return conv_case("conv_depthwise", (1, 4, 7, 7), (4, 1, 3, 3),
                     pads=[1, 1, 1, 1], group=4)


@case
def conv_groups():
    return conv_case("conv_groups", (1, 4, 6, 6), (6, 2, 3, 3), group=2)


@case
def conv_dilation():
    return conv_case("conv_dilation", (1, 2, 10, 10), (3, 2, 3, 3),
                     pads=[2, 2, 2, 2], dilations=[2, 2])


@case
def conv_pointwise():
    return conv_case("conv_pointwise", (1, 8, 5, 5), (16, 8, 1, 1))


@case
def gemm():
    c = Case("gemm")
    a = c.input("a", (2, 16))
    b = c.weight("b", (16, 8))
    bias = c.weight("c", (8,))
    c.node("Gemm", ["a", "b", "c"], ["y"])
    c.output("y", ref.gemm(a, b, bias))
    return c


@case
def gemm_transb_alpha_beta():
    c = Case("gemm_transb_alpha_beta")
    a = c.input("a", (3, 12))
    b = c.weight("b", (5, 12))
    bias = c.weight("c", (3, 5))
    c.node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)
    c.output("y", ref.gemm(a, b, bias, alpha=0.5, beta=2.0, trans_b=1))
    return c


@case
def matmul():
    c = Case("matmul")
    a = c.input("a", (4, 8))
    b = c.weight("b", (8, 6))
    c.node("MatMul", ["a", "b"], ["y"])
    c.output("y", a.astype(np.float64) @ b)
    return c


@case
def matmul_batched():
    c = Case("matmul_batched")
    a = c.input("a", (2, 3, 8))
    b = c.input("b", (8, 5))
    c.node("MatMul", ["a", "b"], ["y"])
    c.output("y", a.astype(np.float64) @ b)
    return c


def binary_case(name, op, fn, a_shape, b_shape, b_is_weight, b_low=-1.0):
    c = Case(name)
    a = c.input("a", a_shape)
    b = c.weight("b", b_shape, b_low) if b_is_weight else c.input("b", b_shape, b_low)
    c.node(op, ["a", "b"], ["y"])
    c.output("y", fn(a.astype(np.float64), b.astype(np.float64)))
    return c


@case
def add():
    return binary_case("add", "Add", np.add, (2, 3, 4, 5), (3, 1, 5), False)


@case
def add_same_shape():
    return binary_case("add_same_shape", "Add", np.add, (2, 8), (2, 8), False)


@case
def sub():
    return binary_case("sub", "Sub", np.subtract, (2, 3, 4, 5), (4, 1), True)


@case
def mul():
    return binary_case("mul", "Mul", np.multiply, (2, 1, 4), (3, 1), False)


@case
def div():
    # Divisors kept in [0.5, 1.5] so the reference is well conditioned.
    return binary_case("div", "Div", np.divide, (3, 4, 5), (5,), True, b_low=0.5)


def unary_case(name, op, fn, shape=(2, 3, 4, 5), **attrs):
    c = Case(name)
    x = c.input("x", shape, -3.0, 3.0)
    c.node(op, ["x"], ["y"], **attrs)
    c.output("y", fn(x))
    return c


@case
def relu():
    return unary_case("relu", "Relu", ref.relu)


@case
def leaky_relu():
    return unary_case("leaky_relu", "LeakyRelu", lambda x: ref.leaky_relu(x, 0.1),
                      alpha=0.1)


@case
def sigmoid():
    return unary_case("sigmoid", "Sigmoid", ref.sigmoid)


@case
def clip():
    c = Case("clip")
    x = c.input("x", (2, 3, 4, 5), -2.0, 2.0)
    c.const("lo", np.array(-0.5, dtype=np.float32))
    c.const("hi", np.array(0.75, dtype=np.float32))
    c.node("Clip", ["x", "lo", "hi"], ["y"])
    c.output("y", np.clip(x, -0.5, 0.75))
    return c


@case
def max_two():
    return binary_case("max_two", "Max", np.maximum, (2, 3, 4), (3, 4), False)


@case
def max_three():
    c = Case("max_three")
    a = c.input("a", (2, 3, 4))
    b = c.input("b", (1, 4))
    w = c.weight("w", (2, 1, 1))
    c.node("Max", ["a", "b", "w"], ["y"])
    c.output("y", np.maximum(np.maximum(a, b), w))
    return c


@case
def max_pool():
    c = Case("max_pool")
    x = c.input("x", (1, 3, 8, 8))
    c.node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    c.output("y", ref.max_pool(x, (2, 2), (2, 2)))
    return c


@case
def max_pool_pads():
    c = Case("max_pool_pads")
    x = c.input("x", (2, 2, 9, 7))
    c.node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
           pads=[1, 1, 1, 1])
    c.output("y", ref.max_pool(x, (3, 3), (2, 2), [1, 1, 1, 1]))
    return c


@case
def average_pool():
    c = Case("average_pool")
    x = c.input("x", (1, 3, 8, 8))
    c.node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    c.output("y", ref.average_pool(x, (2, 2), (2, 2)))
    return c


@case
def average_pool_pads():
    c = Case("average_pool_pads")
    x = c.input("x", (1, 2, 7, 7))
    c.node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[1, 1],
           pads=[1, 1, 1, 1])
    c.output("y", ref.average_pool(x, (3, 3), (1, 1), [1, 1, 1, 1], 0))
    return c


@case
def average_pool_include_pad():
    c = Case("average_pool_include_pad")
    x = c.input("x", (1, 2, 6, 6))
    c.node("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
           pads=[1, 1, 1, 1], count_include_pad=1)
    c.output("y", ref.average_pool(x, (3, 3), (2, 2), [1, 1, 1, 1], 1))
    return c


@case
def global_average_pool():
    c = Case("global_average_pool")
    x = c.input("x", (2, 5, 6, 7))
    c.node("GlobalAveragePool", ["x"], ["y"])
    c.output("y", ref.global_average_pool(x))
    return c


@case
def reshape():
    c = Case("reshape")
    x = c.input("x", (2, 3, 4))
    c.const("shape", np.array([4, -1], dtype=np.int64))
    c.node("Reshape", ["x", "shape"], ["y"])
    c.output("y", x.reshape(4, -1))
    return c


@case
def reshape_zero():
    c = Case("reshape_zero")
    x = c.input("x", (2, 3, 4))
    c.const("shape", np.array([0, 12], dtype=np.int64))
    c.node("Reshape", ["x", "shape"], ["y"])
    c.output("y", x.reshape(2, 12))
    return c


@case
def flatten():
    c = Case("flatten")
    x = c.input("x", (2, 3, 4, 5))
    c.node("Flatten", ["x"], ["y"], axis=1)
    c.output("y", ref.flatten(x, 1))
    return c


@case
def flatten_axis2():
    c = Case("flatten_axis2")
    x = c.input("x", (2, 3, 4, 5))
    c.node("Flatten", ["x"], ["y"], axis=2)
    c.output("y", ref.flatten(x, 2))
    return c


@case
def transpose():
    c = Case("transpose")
    x = c.input("x", (1, 3, 4, 5))
    c.node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])
    c.output("y", x.transpose(0, 2, 3, 1))
    return c


@case
def transpose_default():
    c = Case("transpose_default")
    x = c.input("x", (2, 3, 4))
    c.node("Transpose", ["x"], ["y"])
    c.output("y", x.transpose())
    return c


@case
def concat():
    c = Case("concat")
    a = c.input("a", (1, 2, 3, 3))
    b = c.input("b", (1, 3, 3, 3))
    w = c.weight("w", (1, 1, 3, 3))
    c.node("Concat", ["a", "b", "w"], ["y"], axis=1)
    c.output("y", np.concatenate([a, b, w], axis=1))
    return c


@case
def concat_last_axis():
    c = Case("concat_last_axis")
    a = c.input("a", (2, 3))
    b = c.input("b", (2, 5))
    c.node("Concat", ["a", "b"], ["y"], axis=-1)
    c.output("y", np.concatenate([a, b], axis=-1))
    return c


@case
def softmax():
    c = Case("softmax")
    x = c.input("x", (2, 3, 10), -4.0, 4.0)
    c.node("Softmax", ["x"], ["y"], axis=-1)
    c.output("y", ref.softmax(x, -1))
    return c


@case
def softmax_axis1():
    c = Case("softmax_axis1")
    x = c.input("x", (2, 5, 3), -4.0, 4.0)
    c.node("Softmax", ["x"], ["y"], axis=1)
    c.output("y", ref.softmax(x, 1))
    return c


@case
def constant():
    c = Case("constant")
    x = c.input("x", (2, 3, 4))
    k = c.rng.uniform(-2, 2, size=(3, 4)).astype(np.float32)
    c.node("Constant", [], ["k"], value=numpy_helper.from_array(k, "k"))
    c.node("Mul", ["x", "k"], ["y"])
    c.output("y", x.astype(np.float64) * k)
    return c


@case
def small_cnn():
    """Conv+Relu+MaxPool+Conv+Relu+GlobalAveragePool+Flatten+Gemm+Softmax."""
    c = Case("small_cnn")
    x = c.input("x", (1, 3, 16, 16))
    w1 = c.weight("w1", (8, 3, 3, 3), -0.4, 0.4)
    b1 = c.weight("b1", (8,), -0.1, 0.1)
    w2 = c.weight("w2", (16, 8, 3, 3), -0.2, 0.2)
    b2 = c.weight("b2", (16,), -0.1, 0.1)
    wf = c.weight("wf", (10, 16), -0.5, 0.5)
    bf = c.weight("bf", (10,), -0.1, 0.1)
    c.node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3],
           pads=[1, 1, 1, 1])
    c.node("Relu", ["c1"], ["r1"], name="relu1")
    c.node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2])
    c.node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", kernel_shape=[3, 3],
           pads=[1, 1, 1, 1])
    c.node("Relu", ["c2"], ["r2"], name="relu2")
    c.node("GlobalAveragePool", ["r2"], ["g"], name="gap")
    c.node("Flatten", ["g"], ["f"], name="flatten", axis=1)
    c.node("Gemm", ["f", "wf", "bf"], ["logits"], name="fc", transB=1)
    c.node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1)
    h = ref.relu(ref.conv(x, w1, b1, pads=[1, 1, 1, 1]))
    h = ref.max_pool(h, (2, 2), (2, 2))
    h = ref.relu(ref.conv(h, w2, b2, pads=[1, 1, 1, 1]))
    h = ref.flatten(ref.global_average_pool(h), 1)
    c.output("probs", ref.softmax(ref.gemm(h, wf, bf, trans_b=1), -1))
    return c


@case
def split():
    """Conv->Relu->Softsign->Conv: vnpu has no Softsign, so --ep vnpu must give two
    EPContext partitions around one CPU node."""
    c = Case("split")
    x = c.input("x", (1, 3, 8, 8))
    w1 = c.weight("w1", (4, 3, 3, 3), -0.5, 0.5)
    b1 = c.weight("b1", (4,), -0.1, 0.1)
    w2 = c.weight("w2", (4, 4, 3, 3), -0.5, 0.5)
    b2 = c.weight("b2", (4,), -0.1, 0.1)
    c.node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3],
           pads=[1, 1, 1, 1])
    c.node("Relu", ["c1"], ["r1"], name="relu1")
    c.node("Softsign", ["r1"], ["s1"], name="softsign1")
    c.node("Conv", ["s1", "w2", "b2"], ["y"], name="conv2", kernel_shape=[3, 3],
           pads=[1, 1, 1, 1])
    h = ref.relu(ref.conv(x, w1, b1, pads=[1, 1, 1, 1]))
    h = h / (1 + np.abs(h))
    c.output("y", ref.conv(h, w2, b2, pads=[1, 1, 1, 1]))
    c.extra["vnpu_driver_nodes"] = 2
    c.extra["vnpu_cpu_nodes"] = 1
    return c


@case
def pad_modes_reversed_slice():
    """An audio front end's glue (Silero VAD's STFT padding): a reflect Pad,
    a Slice with a negative step (reversed, every other sample, from the
    last), an edge Pad on two axes, a reversed Slice whose start and end lie
    outside the axis, and a Relu, all in one EPContext
    partition (vnpu stream 1.9)."""
    c = Case("pad_modes_reversed_slice")
    x = c.input("x", (1, 2, 10))
    c.const("p_reflect", np.array([0, 0, 3, 0, 0, 2], np.int64))
    c.const("p_edge", np.array([0, 1, 1, 0, 0, 2], np.int64))
    c.const("st", np.array([-1], np.int64))
    c.const("en", np.array([-(2 ** 63)], np.int64))
    c.const("ax", np.array([2], np.int64))
    c.const("sp", np.array([-2], np.int64))
    c.node("Pad", ["x", "p_reflect"], ["pr"], mode="reflect")
    c.node("Slice", ["pr", "st", "en", "ax", "sp"], ["rev"])
    c.node("Pad", ["rev", "p_edge"], ["pe"], mode="edge")
    # Starts past the end and ends before the start clamp as numpy's do.
    c.const("st2", np.array([100], np.int64))
    c.const("en2", np.array([-100], np.int64))
    c.const("sp2", np.array([-3], np.int64))
    c.node("Slice", ["pe", "st2", "en2", "ax", "sp2"], ["rev2"])
    c.node("Relu", ["rev2"], ["y"])
    pr = np.pad(x, [(0, 0), (0, 0), (3, 2)], mode="reflect")
    rev = pr[:, :, ::-2]
    pe = np.pad(rev, [(0, 0), (1, 0), (1, 2)], mode="edge")
    c.output("y", np.maximum(pe[:, :, 100:-100:-3], 0))
    c.extra["vnpu_driver_nodes"] = 1
    c.extra["vnpu_cpu_nodes"] = 0
    return c


@case
def attention_block():
    """A pre-norm transformer block as torch exports it at opset 13:
    LayerNorm decomposed (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div,
    Mul, Add), a packed QKV MatMul + bias cut by Slice, heads split by
    Reshape + Transpose, scaled dot-product attention (Div, MatMul with K^T,
    Softmax, MatMul), heads merged, an exact-GELU MLP, a residual, a Split
    and a Gather of the first token: every op vnpu's stream 1.8 added, in
    one EPContext partition."""
    c = Case("attention_block")
    S, D, H = 6, 8, 2
    dh = D // H
    x = c.input("x", (S, D))
    g = c.weight("ln_g", (D,), 0.5, 1.5)
    b = c.weight("ln_b", (D,), -0.2, 0.2)
    wqkv = c.weight("wqkv", (D, 3 * D), -0.5, 0.5)
    bqkv = c.weight("bqkv", (3 * D,), -0.1, 0.1)
    wo = c.weight("wo", (D, D), -0.5, 0.5)
    w1 = c.weight("w1", (D, 2 * D), -0.5, 0.5)
    b1 = c.weight("b1", (2 * D,), -0.1, 0.1)
    c.const("two", np.array(2.0, np.float32))
    c.const("eps", np.array(1e-5, np.float32))
    c.const("rt2", np.array(1.4142135, np.float32))
    c.const("one", np.array(1.0, np.float32))
    c.const("half", np.array(0.5, np.float32))
    c.const("scale", np.array(np.sqrt(dh), np.float32))
    c.const("heads", np.array([S, H, dh], np.int64))
    c.const("merged", np.array([S, D], np.int64))
    for i, (lo, hi) in enumerate([(0, D), (D, 2 * D), (2 * D, 3 * D)]):
        c.const(f"s{i}", np.array([lo], np.int64))
        c.const(f"e{i}", np.array([hi], np.int64))
    c.const("ax1", np.array([1], np.int64))
    c.const("tok0", np.array(0, np.int64))
    c.node("ReduceMean", ["x"], ["mu"], axes=[-1])
    c.node("Sub", ["x", "mu"], ["d"])
    c.node("Pow", ["d", "two"], ["d2"])
    c.node("ReduceMean", ["d2"], ["var"], axes=[-1])
    c.node("Add", ["var", "eps"], ["ve"])
    c.node("Sqrt", ["ve"], ["sd"])
    c.node("Div", ["d", "sd"], ["nrm"])
    c.node("Mul", ["nrm", "ln_g"], ["lng"])
    c.node("Add", ["lng", "ln_b"], ["ln"])
    c.node("MatMul", ["ln", "wqkv"], ["qkv0"])
    c.node("Add", ["bqkv", "qkv0"], ["qkv"])
    for i, n in enumerate("qkv"):
        c.node("Slice", ["qkv", f"s{i}", f"e{i}", "ax1"], [f"{n}s"])
        c.node("Reshape", [f"{n}s", "heads"], [f"{n}h"])
    c.node("Transpose", ["qh"], ["qt"], perm=[1, 0, 2])
    c.node("Div", ["qt", "scale"], ["qd"])
    c.node("Transpose", ["kh"], ["kt"], perm=[1, 2, 0])
    c.node("Transpose", ["vh"], ["vt"], perm=[1, 0, 2])
    c.node("MatMul", ["qd", "kt"], ["sc"])
    c.node("Softmax", ["sc"], ["p"], axis=-1)
    c.node("MatMul", ["p", "vt"], ["o"])
    c.node("Transpose", ["o"], ["ot"], perm=[1, 0, 2])
    c.node("Reshape", ["ot", "merged"], ["om"])
    c.node("MatMul", ["om", "wo"], ["att"])
    c.node("Add", ["x", "att"], ["r"])
    c.node("MatMul", ["r", "w1"], ["h0"])
    c.node("Add", ["h0", "b1"], ["h"])
    c.node("Div", ["h", "rt2"], ["hu"])
    c.node("Erf", ["hu"], ["he"])
    c.node("Add", ["he", "one"], ["hp"])
    c.node("Mul", ["h", "hp"], ["hm"])
    c.node("Mul", ["hm", "half"], ["gel"])
    c.node("Split", ["gel"], ["ga", "gb"], axis=1)
    c.node("Add", ["ga", "gb"], ["gs"])
    c.node("Gather", ["gs", "tok0"], ["y"], axis=0)
    xd = x.astype(np.float64)
    mu = xd.mean(-1, keepdims=True)
    ln = (xd - mu) / np.sqrt(((xd - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b
    qkv = ln @ wqkv + bqkv
    q, k, v = (qkv[:, i * D:(i + 1) * D].reshape(S, H, dh).transpose(1, 0, 2) for i in range(3))
    sc = (q / np.sqrt(dh)) @ k.transpose(0, 2, 1)
    p = np.exp(sc - sc.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ v).transpose(1, 0, 2).reshape(S, D)
    r = xd + o @ wo
    h = r @ w1 + b1
    gel = h * (np.vectorize(math.erf)(h / np.sqrt(2)) + 1) * 0.5
    c.output("y", (gel[:, :D] + gel[:, D:])[0])
    c.extra["vnpu_driver_nodes"] = 1
    c.extra["vnpu_cpu_nodes"] = 0
    return c


def if_sample_rate_case(name, is_48k):
    """A sample-rate switch: an If on a graph input whose branches read
    top-level initializers and a value computed before the If."""
    c = Case(name)
    x = c.input("x", (1, 8))
    hi = c.input_value("is_48k", np.array(is_48k))
    gain = c.weight("gain", (1, 8), 0.5, 1.5)
    taps48 = c.weight("taps_48k", (1, 8))
    taps16 = c.weight("taps_16k", (1, 8))
    c.node("Mul", ["x", "gain"], ["pre"], name="pre_gain")
    vi = helper.make_tensor_value_info
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["pre", "taps_48k"], ["y48"], name="fir48")],
        "rate_48k", [], [vi("y48", F32, (1, 8))])
    else_g = helper.make_graph(
        [helper.make_node("Mul", ["pre", "taps_16k"], ["y16"], name="fir16")],
        "rate_16k", [], [vi("y16", F32, (1, 8))])
    c.node("If", ["is_48k"], ["filtered"], name="rate_switch", then_branch=then_g,
           else_branch=else_g)
    c.node("Relu", ["filtered"], ["y"], name="post_relu")
    pre = x.astype(np.float64) * gain
    c.output("y", ref.relu(pre * (taps48 if hi else taps16)))
    # Mul and Relu compile for vnpu, and each branch's Mul in its body; the
    # If stays on the CPU between them.
    c.extra["vnpu_driver_nodes"] = 4
    c.extra["vnpu_cpu_nodes"] = 1
    return c


@case
def if_sample_rate_48k():
    return if_sample_rate_case("if_sample_rate_48k", True)


@case
def if_sample_rate_16k():
    return if_sample_rate_case("if_sample_rate_16k", False)


@case
def loop_carried_scan():
    """Loop (M from an initializer, cond given) with a carried state, a scan
    output, and a body that reads a graph input, an initializer and the
    iteration number: s = s * decay + x + i; scan output 2 * s."""
    c = Case("loop_carried_scan")
    x = c.input("x", (2, 3))
    s0 = c.input("s0", (2, 3))
    decay = c.weight("decay", (2, 3), 0.2, 0.9)
    c.const("trips", np.array(5, dtype=np.int64))
    c.const("go", np.array(True))
    c.const("two", np.array(2.0, dtype=np.float32))
    vi = helper.make_tensor_value_info
    body = helper.make_graph([
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
        helper.make_node("Mul", ["s_in", "decay"], ["decayed"], name="decay_mul"),
        helper.make_node("Add", ["decayed", "x"], ["fed"], name="feed"),
        helper.make_node("Cast", ["i"], ["i_f"], name="iter_float", to=F32),
        helper.make_node("Add", ["fed", "i_f"], ["s_out"], name="add_iter"),
        helper.make_node("Mul", ["s_out", "two"], ["scan_out"], name="double"),
    ], "loop_body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
         vi("s_in", F32, (2, 3))],
        [vi("cond_out", TensorProto.BOOL, []), vi("s_out", F32, (2, 3)),
         vi("scan_out", F32, (2, 3))])
    c.node("Loop", ["trips", "go", "s0"], ["s_final", "history"], name="accumulate", body=body)

    def step(i, cond, s):
        s = s * decay + x + i
        return cond, s, 2 * s
    (s_final,), (history,) = ref.loop(5, True, [s0.astype(np.float64)], step)
    c.output("s_final", s_final)
    c.output("history", history)
    # the Loop stays on the CPU; its body's one partition on vnpu
    c.extra["vnpu_driver_nodes"] = 1
    c.extra["vnpu_cpu_nodes"] = 1
    return c


@case
def scan_state():
    """Scan-9+ with a state, a forward scan input along axis 0, a reversed
    one along axis 1, scan outputs along axes 0 and 1 (one reversed), and a
    body reading a top-level initializer."""
    c = Case("scan_state")
    s0 = c.input("s0", (4,))
    xs = c.input("xs", (6, 4))
    zs = c.input("zs", (4, 6))
    w = c.weight("w", (4,))
    vi = helper.make_tensor_value_info
    body = helper.make_graph([
        helper.make_node("Add", ["s_in", "x_t"], ["sx"], name="add_x"),
        helper.make_node("Add", ["sx", "z_t"], ["s_out"], name="add_z"),
        helper.make_node("Mul", ["s_out", "w"], ["y_t"], name="weigh"),
        helper.make_node("Identity", ["s_out"], ["s_copy"], name="copy"),
    ], "scan_body",
        [vi("s_in", F32, (4,)), vi("x_t", F32, (4,)), vi("z_t", F32, (4,))],
        [vi("s_out", F32, (4,)), vi("y_t", F32, (4,)), vi("s_copy", F32, (4,))])
    c.node("Scan", ["s0", "xs", "zs"], ["s_final", "ys", "states"], name="running_sum",
           body=body, num_scan_inputs=2, scan_input_axes=[0, 1], scan_input_directions=[0, 1],
           scan_output_axes=[1, 0], scan_output_directions=[0, 1])

    def step(s, x_t, z_t):
        s = s + x_t + z_t
        return s, s * w, s
    (s_final,), (ys, states) = ref.scan(
        [s0.astype(np.float64)], [xs, zs], step, in_axes=[0, 1], in_dirs=[0, 1],
        out_axes=[1, 0], out_dirs=[0, 1])
    c.output("s_final", s_final)
    c.output("ys", ys)
    c.output("states", states)
    # the Scan stays on the CPU; its body's one partition on vnpu
    c.extra["vnpu_driver_nodes"] = 1
    c.extra["vnpu_cpu_nodes"] = 1
    return c


@case
def if_in_loop():
    """A nested If inside a Loop body: iteration 0 takes the else branch
    (adds a value the body computed), later ones the then branch (scale by a
    top-level initializer, read two scopes out)."""
    c = Case("if_in_loop")
    s0 = c.input("s0", (3,))
    bias = c.input("bias", (3,))
    scale = c.weight("scale", (3,), 0.5, 1.5)
    c.const("trips", np.array(4, dtype=np.int64))
    vi = helper.make_tensor_value_info
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["s_in", "scale"], ["scaled"], name="scale")],
        "later", [], [vi("scaled", F32, (3,))])
    else_g = helper.make_graph([helper.make_node("Add", ["s_in", "half_bias"], ["biased"],
                                                 name="bias")],
                               "first", [], [vi("biased", F32, (3,))])
    body = helper.make_graph([
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
        helper.make_node("Cast", ["i"], ["not_first"], name="not_first", to=TensorProto.BOOL),
        helper.make_node("Mul", ["bias", "half"], ["half_bias"], name="halve"),
        helper.make_node("If", ["not_first"], ["s_out"], name="branch", then_branch=then_g,
                         else_branch=else_g),
    ], "loop_body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
         vi("s_in", F32, (3,))],
        [vi("cond_out", TensorProto.BOOL, []), vi("s_out", F32, (3,))],
        initializer=[numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half")])
    c.node("Loop", ["trips", "", "s0"], ["s_final"], name="outer_loop", body=body)

    def step(i, cond, s):
        return cond, (s * scale if i else s + 0.5 * bias)
    (s_final,), _ = ref.loop(4, True, [s0.astype(np.float64)], step)
    c.output("s_final", s_final)
    # the Loop stays on the CPU; its body's partitions (the If's
    # branches too) on vnpu
    c.extra["vnpu_driver_nodes"] = 3
    c.extra["vnpu_cpu_nodes"] = 1
    return c


import hygiene  # noqa: E402  (graphs as exporters write them)
hygiene.register(case, Case, ref)


def write_bad_models(out_dir):
    """A context model no driver claims: source="NoSuchNpu"."""
    d = os.path.join(out_dir, "bad")
    os.makedirs(d, exist_ok=True)
    node = helper.make_node(
        "EPContext", ["x"], ["y"], name="no_such_npu_node", domain="com.microsoft",
        main_context=1, embed_mode=1, ep_cache_context=b"not a context binary",
        source="NoSuchNpu", partition_name="no_such_npu_node")
    graph = helper.make_graph(
        [node], "no_such_npu",
        [helper.make_tensor_value_info("x", F32, (1, 4))],
        [helper.make_tensor_value_info("y", F32, (1, 4))])
    model = helper.make_model(graph, producer_name="epctx-tests", opset_imports=[
        helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.save(model, os.path.join(d, "no_such_npu_ctx.onnx"))
    np.save(os.path.join(d, "x.npy"), np.ones((1, 4), dtype=np.float32))


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.stderr.write("usage: generate.py OUT_DIR [--only CASE ...]\n")
        return 2
    out_dir = argv[1]
    only = set(argv[3:]) if len(argv) > 2 and argv[2] == "--only" else None
    os.makedirs(out_dir, exist_ok=True)
    names = []
    for fn in CASES:
        if only is not None and fn.__name__ not in only:
            continue
        c = fn()
        c.write(out_dir)
        names.append(c.name)
    if only is not None:
        missing = only - set(names)
        if missing:
            sys.stderr.write(f"generate.py: error: unknown case(s): {sorted(missing)}\n")
            return 1
        return 0
    write_bad_models(out_dir)
    with open(os.path.join(out_dir, "cases.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
