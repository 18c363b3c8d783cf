# SPDX-License-Identifier: Apache-2.0
"""Cases for graphs as exporters and converters write them (issue 11): an
unsorted float16 graph whose Cast nodes a converter appended at the end, a
Reshape whose shape is a run-time int64 input, the PyTorch `view` pattern
whose shape folds to a constant, primitive LayerNormalization with axis 0 and
a negative axis (the ONNX function expansion), and a 1-D convolution in the
shape of an STFT. generate.py registers them with register()."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper
from onnx.backend.test.case.node import function_testcase_helper


def register(case, Case, ref):
    @case
    def unsorted_float16_casts():
        """A float16 converter's output: the body computes in float16 and the
        Cast nodes for the float32 graph input/output come last in the node
        list. Values are multiples of 1/4 and 1/8 so float16 and float32
        arithmetic give the same bits."""
        c = Case("unsorted_float16_casts")
        c.sorted = False
        x = (c.rng.integers(-8, 8, size=(2, 8)) / 4).astype(np.float32)
        c.inputs.append(("x", x))
        w = (c.rng.integers(-8, 8, size=(8, 4)) / 8).astype(np.float16)
        b = (c.rng.integers(-8, 8, size=(4,)) / 8).astype(np.float16)
        c.inits += [numpy_helper.from_array(w, "w16"), numpy_helper.from_array(b, "b16")]
        c.node("MatMul", ["x16", "w16"], ["m16"], name="matmul")
        c.node("Add", ["m16", "b16"], ["a16"], name="add")
        c.node("Relu", ["a16"], ["y16"], name="relu")
        c.node("Cast", ["x"], ["x16"], name="graph_input_cast", to=TensorProto.FLOAT16)
        c.node("Cast", ["y16"], ["y"], name="graph_output_cast", to=TensorProto.FLOAT)
        c.output("y", ref.relu(x.astype(np.float64) @ w.astype(np.float64) + b))
        return c

    @case
    def reshape_runtime_shape():
        """Reshape's shape is an int64 graph input: the vnpu takes the Relu,
        the CPU the Reshape, which reads the value at run time."""
        c = Case("reshape_runtime_shape")
        x = c.input("x", (2, 3, 4))
        shape = np.array([4, 6], dtype=np.int64)
        c.inputs.append(("shape", shape))
        c.node("Relu", ["x"], ["r"], name="relu")
        c.node("Reshape", ["r", "shape"], ["y"], name="reshape")
        c.output("y", ref.relu(x).reshape(4, 6))
        c.extra["vnpu_driver_nodes"] = 1
        c.extra["vnpu_cpu_nodes"] = 1
        return c

    @case
    def reshape_folded_shape():
        """PyTorch's x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze ->
        Concat -> Reshape. With static shapes the shape folds to a constant
        and the whole graph is one vnpu partition."""
        c = Case("reshape_folded_shape")
        x = c.input("x", (2, 3, 6, 6))
        w = c.weight("w", (4, 3, 3, 3), -0.5, 0.5)
        wf = c.weight("wf", (5, 64), -0.2, 0.2)
        c.const("zero", np.array(0, dtype=np.int64))
        c.const("minus_one", np.array([-1], dtype=np.int64))
        c.node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[3, 3])
        c.node("Shape", ["c"], ["s"], name="shape")
        c.node("Gather", ["s", "zero"], ["n"], name="gather", axis=0)
        c.const("axes0", np.array([0], dtype=np.int64))
        c.node("Unsqueeze", ["n", "axes0"], ["n1"], name="unsqueeze")
        c.node("Concat", ["n1", "minus_one"], ["target"], name="concat", axis=0)
        c.node("Reshape", ["c", "target"], ["flat"], name="reshape")
        c.node("Gemm", ["flat", "wf"], ["y"], name="fc", transB=1)
        h = ref.conv(x, w, None).reshape(2, -1)
        c.output("y", ref.gemm(h, wf, None, trans_b=1))
        c.extra["vnpu_driver_nodes"] = 1
        c.extra["vnpu_cpu_nodes"] = 0
        return c

    def layernorm_expanded(name, axis, shape):
        c = Case(name)
        c.opset = 17
        x = c.input("X", shape)
        w = c.weight("W", shape[axis:], 0.5, 1.5)
        b = c.weight("B", shape[axis:], -0.1, 0.1)
        node = helper.make_node("LayerNormalization", ["X", "W", "B"], ["Y"], axis=axis,
                                epsilon=1e-5)
        types = [helper.make_tensor_type_proto(TensorProto.FLOAT, s)
                 for s in (shape, w.shape, b.shape)]
        c.nodes += function_testcase_helper(node, types, name)
        axes = tuple(range(axis % len(shape), len(shape)))
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=axes, keepdims=True)
        var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
        c.output("Y", (x64 - mean) / np.sqrt(var + 1e-5) * w + b)
        return c

    @case
    def layernorm_primitive_negative_axis():
        return layernorm_expanded("layernorm_primitive_negative_axis", -2, (2, 3, 4))

    @case
    def layernorm_primitive_axis0():
        return layernorm_expanded("layernorm_primitive_axis0", 0, (2, 3, 4))

    @case
    def conv1d_stft():
        """An STFT written as Conv1d, as audio front ends export it: one input
        channel, a 64-tap kernel (512 in real models), stride 16, bias-free;
        then a 1-D grouped, dilated, padded convolution with ReLU."""
        c = Case("conv1d_stft")
        x = c.input("x", (1, 1, 400))
        w = c.weight("w", (8, 1, 64), -0.2, 0.2)
        w2 = c.weight("w2", (8, 4, 3), -0.5, 0.5)
        b2 = c.weight("b2", (8,), -0.1, 0.1)
        c.node("Conv", ["x", "w"], ["spec"], name="stft", kernel_shape=[64], strides=[16])
        c.node("Conv", ["spec", "w2", "b2"], ["c2"], name="conv1d", kernel_shape=[3],
               group=2, dilations=[2], pads=[2, 1])
        c.node("Relu", ["c2"], ["y"], name="relu")
        h = ref.conv(x[:, :, None, :], w[:, :, None, :], None, strides=(1, 16))
        h = ref.conv(h, w2[:, :, None, :], b2, pads=[0, 2, 0, 1], dilations=(1, 2), group=2)
        c.output("y", ref.relu(h)[:, :, 0, :])
        c.extra["vnpu_driver_nodes"] = 1
        c.extra["vnpu_cpu_nodes"] = 0
        return c

    def conv_transpose_ref(x, w, b, strides, pads, output_padding, group, dilations=(1, 1)):
        n, ci, h, wd = x.shape
        cog, kh, kw = w.shape[1], w.shape[2], w.shape[3]
        sh, sw = strides
        dh, dw = dilations
        full_h = (h - 1) * sh + (kh - 1) * dh + 1 + output_padding[0]
        full_w = (wd - 1) * sw + (kw - 1) * dw + 1 + output_padding[1]
        y = np.zeros((n, cog * group, full_h, full_w))
        cig = ci // group
        for c in range(ci):
            g = c // cig
            for i in range(h):
                for j in range(wd):
                    for k in range(kh):
                        for m in range(kw):
                            y[:, g * cog:(g + 1) * cog, i * sh + k * dh, j * sw + m * dw] += \
                                x[:, c, i, j][:, None] * w[c, :, k, m][None, :]
        y = y[:, :, pads[0]:full_h - pads[2], pads[1]:full_w - pads[3]]
        return y + (b.reshape(1, -1, 1, 1) if b is not None else 0)

    @case
    def conv_transpose_upsample():
        """A detector head's upsampling: ConvTranspose stride 2 with pads,
        output_padding and groups, fused ReLU; then a 1-D ConvTranspose."""
        c = Case("conv_transpose_upsample")
        x = c.input("x", (1, 4, 5, 6))
        w = c.weight("w", (4, 3, 3, 3), -0.5, 0.5)
        b = c.weight("b", (6,), -0.1, 0.1)
        w1 = c.weight("w1", (6, 2, 4), -0.5, 0.5)
        c.node("ConvTranspose", ["x", "w", "b"], ["up"], name="up", strides=[2, 2],
               pads=[1, 0, 1, 2], output_padding=[1, 1], group=2)
        c.node("Relu", ["up"], ["r"], name="relu")
        c.node("Reshape", ["r", "flat_shape"], ["r1"], name="to_1d")
        c.const("flat_shape", np.array([1, 6, -1], dtype=np.int64))
        c.node("ConvTranspose", ["r1", "w1"], ["y"], name="up1d", strides=[3], pads=[1, 2])
        h = ref.relu(conv_transpose_ref(x, w, b, (2, 2), (1, 0, 1, 2), (1, 1), 2))
        h = h.reshape(1, 6, 1, -1)
        y = conv_transpose_ref(h, w1[:, :, None, :], None, (1, 3), (0, 1, 0, 2), (0, 0), 1)
        c.output("y", y[:, :, 0, :])
        c.extra["vnpu_driver_nodes"] = 1
        c.extra["vnpu_cpu_nodes"] = 0
        return c
