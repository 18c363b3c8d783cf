# SPDX-License-Identifier: Apache-2.0
"""Models written the way exporters write them (issue 11), for
test_exporter_models: each is compiled for vnpu and compared with ONNX
Runtime 1.30 (ort_expected.js writes the expected outputs).

usage: /usr/bin/python3 generate.py OUT_DIR   (Debian's python3-onnx 1.12)

Writes OUT_DIR/models/<name>.onnx, OUT_DIR/ref/<name>/input_<i>.npy and
manifest.txt (the format of tests/models/generate.py), OUT_DIR/ref/cases.txt.

- if_sample_rate: torch.jit-scripted front ends switch on the sample rate
  with an `If` on a graph input; both branches read top-level initializers
  (the 1-D conv filter banks) from the outer scope.
- if_shape_body: the same switch with a symbolic audio length (fixed by
  --input-shape) and branches as torch.onnx writes them: Constant nodes, a
  Shape -> Gather -> Equal test of the length and an inner If on it, so
  only once the bodies are specialised (folded with the outer shapes) is
  each branch one static EPContext partition.
- loop_rnn: a scripted RNN cell in a `Loop`: the hidden state is
  loop-carried, each step's state is also a scan output.
- scan_accumulate: a `Scan` over time with an accumulating state (tf2onnx
  writes tf.scan this way).
- lstm_state: a streaming LSTM whose h/c state goes in and out as graph
  inputs and outputs, as streaming keyword spotters are exported (vnpu has
  no recurrent unit: epctx-compile unrolls it into MatMul/Add/Mul/Sigmoid/
  Tanh steps, a Split of X stays on the CPU).
- fp16_cast_tail: onnxconverter-common's float16 conversion with
  keep_io_types: float16 weights, the Cast nodes it adds appended at the END
  of the node list (the graph is not topologically sorted).
- layernorm_neg_axis: LayerNormalization as primitives (ReduceMean over
  axes=[-1], Sub, Pow, Sqrt, Div), the pre-opset-17 export, with the
  Shape/Slice/Concat/Reshape tail some exporters add around it.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper

OPSET = 15
RNG = np.random.default_rng(1107)


def rand(*shape, scale=1.0, dtype=np.float32):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def init(name, arr):
    return numpy_helper.from_array(arr, name)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


F = TensorProto.FLOAT


def if_sample_rate():
    # 16 kHz: a 64-tap filter bank; 8 kHz: 32 taps dilated by 2 (the same
    # time span). Both give 97 frames of 8 bands.
    w16 = init("fb16", rand(8, 1, 64, scale=0.2))
    w8 = init("fb8", rand(8, 1, 32, scale=0.2))
    proj = init("proj", rand(97, 16, scale=0.1))
    then_g = helper.make_graph(
        [helper.make_node("Conv", ["audio", "fb16"], ["t_conv"], strides=[16], name="conv16"),
         helper.make_node("Relu", ["t_conv"], ["t_out"], name="relu16")],
        "then_16k", [], [vi("t_out", F, [1, 8, 97])])
    else_g = helper.make_graph(
        [helper.make_node("Conv", ["audio", "fb8"], ["e_conv"], strides=[16], dilations=[2],
                          name="conv8"),
         helper.make_node("Relu", ["e_conv"], ["e_out"], name="relu8")],
        "else_8k", [], [vi("e_out", F, [1, 8, 97])])
    nodes = [
        helper.make_node("If", ["is_16k"], ["bands"], then_branch=then_g, else_branch=else_g,
                         name="sr_switch"),
        helper.make_node("MatMul", ["bands", "proj"], ["features"], name="proj"),
    ]
    g = helper.make_graph(nodes, "if_sample_rate",
                          [vi("audio", F, [1, 1, 1600]), vi("is_16k", TensorProto.BOOL, [])],
                          [vi("features", F, [1, 8, 16])], [w16, w8, proj])
    inputs = [rand(1, 1, 1600), np.array(True)]
    return g, inputs


def if_shape_body():
    w16 = init("fb16", rand(8, 1, 64, scale=0.2))
    w8 = init("fb8", rand(8, 1, 32, scale=0.2))
    proj = init("proj", rand(97, 16, scale=0.1))

    def branch(tag, conv):
        k2 = helper.make_tensor(tag + "_k2", TensorProto.INT64, [], [2])
        k1600 = helper.make_tensor(tag + "_k1600", TensorProto.INT64, [], [1600])
        inner_then = helper.make_graph(
            [helper.make_node("Relu", ["audio"], [tag + "_rl"], name=tag + "_relu_in")],
            tag + "_full", [], [vi(tag + "_rl", F, None)])
        inner_else = helper.make_graph(
            [helper.make_node("Neg", ["audio"], [tag + "_ng"], name=tag + "_neg_in")],
            tag + "_short", [], [vi(tag + "_ng", F, None)])
        nodes = [
            helper.make_node("Constant", [], [tag + "_two"], value=k2, name=tag + "_c2"),
            helper.make_node("Constant", [], [tag + "_len0"], value=k1600, name=tag + "_c1600"),
            helper.make_node("Shape", ["audio"], [tag + "_shape"], name=tag + "_shape"),
            helper.make_node("Gather", [tag + "_shape", tag + "_two"], [tag + "_len"],
                             name=tag + "_gather"),
            helper.make_node("Equal", [tag + "_len", tag + "_len0"], [tag + "_full"],
                             name=tag + "_eq"),
            helper.make_node("If", [tag + "_full"], [tag + "_x"], then_branch=inner_then,
                             else_branch=inner_else, name=tag + "_len_switch"),
            conv(tag + "_x", tag + "_conv"),
            helper.make_node("Relu", [tag + "_conv"], [tag + "_out"], name=tag + "_relu"),
        ]
        return helper.make_graph(nodes, tag, [], [vi(tag + "_out", F, None)])

    then_g = branch("t", lambda x, y: helper.make_node("Conv", [x, "fb16"], [y], strides=[16],
                                                       name="t_conv16"))
    else_g = branch("e", lambda x, y: helper.make_node("Conv", [x, "fb8"], [y], strides=[16],
                                                       dilations=[2], name="e_conv8"))
    nodes = [
        helper.make_node("If", ["is_16k"], ["bands"], then_branch=then_g, else_branch=else_g,
                         name="sr_switch"),
        helper.make_node("MatMul", ["bands", "proj"], ["features"], name="proj"),
    ]
    g = helper.make_graph(nodes, "if_shape_body",
                          [vi("audio", F, [1, 1, "samples"]), vi("is_16k", TensorProto.BOOL, [])],
                          [vi("features", F, [1, 8, 16])], [w16, w8, proj])
    return g, [rand(1, 1, 1600), np.array(False)]


def loop_rnn():
    H = 16
    w = init("W", rand(H, H, scale=0.3))
    u = init("U", rand(H, H, scale=0.3))
    b = init("b", rand(1, H, scale=0.1))
    body = helper.make_graph(
        [helper.make_node("MatMul", ["h_in", "W"], ["hw"], name="hw"),
         helper.make_node("MatMul", ["x", "U"], ["xu"], name="xu"),
         helper.make_node("Add", ["hw", "xu"], ["s1"], name="s1"),
         helper.make_node("Add", ["s1", "b"], ["s2"], name="s2"),
         helper.make_node("Tanh", ["s2"], ["h_out"], name="tanh"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="cond"),
         helper.make_node("Identity", ["h_out"], ["h_scan"], name="scan_out")],
        "rnn_step",
        [vi("iter", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
         vi("h_in", F, [1, H])],
        [vi("cond_out", TensorProto.BOOL, []), vi("h_out", F, [1, H]),
         vi("h_scan", F, [1, H])])
    trip = init("trip", np.array(5, dtype=np.int64))
    cond = init("cond", np.array(True))
    g = helper.make_graph(
        [helper.make_node("Loop", ["trip", "cond", "h0"], ["h_final", "h_all"], body=body,
                          name="rnn_loop")],
        "loop_rnn", [vi("x", F, [1, H]), vi("h0", F, [1, H])],
        [vi("h_final", F, [1, H]), vi("h_all", F, [5, 1, H])], [w, u, b, trip, cond])
    return g, [rand(1, H), rand(1, H, scale=0.5)]


def scan_accumulate():
    T, D = 6, 8
    w = init("Ws", rand(D, D, scale=0.3))
    body = helper.make_graph(
        [helper.make_node("MatMul", ["acc_in", "Ws"], ["aw"], name="aw"),
         helper.make_node("Add", ["aw", "x_t"], ["a1"], name="a1"),
         helper.make_node("Relu", ["a1"], ["acc_out"], name="relu"),
         helper.make_node("Identity", ["acc_out"], ["y_t"], name="y")],
        "acc_step", [vi("acc_in", F, [1, D]), vi("x_t", F, [D])],
        [vi("acc_out", F, [1, D]), vi("y_t", F, [1, D])])
    g = helper.make_graph(
        [helper.make_node("Scan", ["acc0", "xs"], ["acc", "ys"], body=body, num_scan_inputs=1,
                          name="acc_scan")],
        "scan_accumulate", [vi("acc0", F, [1, D]), vi("xs", F, [T, D])],
        [vi("acc", F, [1, D]), vi("ys", F, [T, 1, D])], [w])
    return g, [rand(1, D, scale=0.5), rand(T, D)]


def lstm_state():
    T, I, H = 4, 12, 16
    w = init("lstm_W", rand(1, 4 * H, I, scale=0.3))
    r = init("lstm_R", rand(1, 4 * H, H, scale=0.3))
    b = init("lstm_B", rand(1, 8 * H, scale=0.1))
    head = init("head_W", rand(H, 4, scale=0.3))
    nodes = [
        helper.make_node("LSTM", ["frames", "lstm_W", "lstm_R", "lstm_B", "", "h_in", "c_in"],
                         ["Y", "h_out", "c_out"], hidden_size=H, name="lstm"),
        helper.make_node("MatMul", ["h_out", "head_W"], ["logits"], name="head"),
    ]
    g = helper.make_graph(
        nodes, "lstm_state",
        [vi("frames", F, [T, 1, I]), vi("h_in", F, [1, 1, H]), vi("c_in", F, [1, 1, H])],
        [vi("logits", F, [1, 1, 4]), vi("h_out", F, [1, 1, H]), vi("c_out", F, [1, 1, H])],
        [w, r, b, head])
    return g, [rand(T, 1, I), rand(1, 1, H, scale=0.5), rand(1, 1, H, scale=0.5)]


def fp16_cast_tail():
    H16 = TensorProto.FLOAT16
    conv_w = init("conv_w", rand(8, 3, 3, 3, scale=0.2, dtype=np.float16))
    conv_b = init("conv_b", rand(8, scale=0.1, dtype=np.float16))
    fc = init("fc_w", rand(8 * 6 * 6, 10, scale=0.05, dtype=np.float16))
    shape = init("flat", np.array([1, 8 * 6 * 6], dtype=np.int64))
    nodes = [
        helper.make_node("Conv", ["x16", "conv_w", "conv_b"], ["c"], pads=[1, 1, 1, 1],
                         name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2],
                         name="pool"),
        helper.make_node("Reshape", ["p", "flat"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "fc_w"], ["y16"], name="fc"),
        # What the converter appends, after every node that uses them.
        helper.make_node("Cast", ["x"], ["x16"], to=H16, name="graph_input_cast0"),
        helper.make_node("Cast", ["y16"], ["y"], to=F, name="graph_output_cast0"),
    ]
    g = helper.make_graph(nodes, "fp16_cast_tail", [vi("x", F, [1, 3, 12, 12])],
                          [vi("y", F, [1, 10])], [conv_w, conv_b, fc, shape])
    return g, [rand(1, 3, 12, 12)]


def layernorm_neg_axis():
    D = 32
    w = init("fc1", rand(D, D, scale=0.2))
    gamma = init("ln_gamma", (1 + rand(D, scale=0.1)).astype(np.float32))
    beta = init("ln_beta", rand(D, scale=0.1))
    two = init("two", np.array(2.0, dtype=np.float32))
    eps = init("eps", np.array(1e-5, dtype=np.float32))
    w2 = init("fc2", rand(D, 8, scale=0.2))
    start = init("start", np.array([-1], dtype=np.int64))
    end = init("end", np.array([2**62], dtype=np.int64))
    zero = init("zero", np.array([0], dtype=np.int64))
    minus1 = init("minus1", np.array([-1], dtype=np.int64))
    nodes = [
        helper.make_node("MatMul", ["x", "fc1"], ["h"], name="fc1"),
        helper.make_node("ReduceMean", ["h"], ["mu"], axes=[-1], name="mean"),
        helper.make_node("Sub", ["h", "mu"], ["d"], name="sub"),
        helper.make_node("Pow", ["d", "two"], ["d2"], name="pow"),
        helper.make_node("ReduceMean", ["d2"], ["var"], axes=[-1], name="var"),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="add_eps"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="sqrt"),
        helper.make_node("Div", ["d", "sd"], ["n"], name="div"),
        helper.make_node("Mul", ["n", "ln_gamma"], ["ng"], name="gamma"),
        helper.make_node("Add", ["ng", "ln_beta"], ["ln"], name="beta"),
        # Flatten everything but the last axis: Shape -> Slice(-1:) -> Concat.
        helper.make_node("Shape", ["ln"], ["ln_shape"], name="shape"),
        helper.make_node("Slice", ["ln_shape", "start", "end", "zero"], ["last"], name="slice"),
        helper.make_node("Concat", ["minus1", "last"], ["new_shape"], axis=0, name="concat"),
        helper.make_node("Reshape", ["ln", "new_shape"], ["flat"], name="reshape"),
        helper.make_node("MatMul", ["flat", "fc2"], ["y"], name="fc2"),
    ]
    g = helper.make_graph(nodes, "layernorm_neg_axis", [vi("x", F, [2, 5, D])],
                          [vi("y", F, [10, 8])], [w, gamma, beta, two, eps, w2, start, end, zero,
                                                  minus1])
    return g, [rand(2, 5, D)]


# The floor of each case's vnpu MAC share where the ops keep it under the
# 90% goal (test_real_models reads min_vnpu_share.txt). None today: the
# LSTM is unrolled for vnpu (epctx_host/lstm_unroll.h).
MIN_VNPU_SHARE = {}

# The CPU-only compile of a case the CPU kernels cannot run yet must fail
# with this error (cpu_error.txt); vnpu runs it.
CPU_ERROR = {"fp16_cast_tail": "X has dtype float16, which this kernel does not support"}

# --input-shape lines of a case's manifest (its symbolic graph inputs).
INPUT_SHAPES = {"if_shape_body": ["audio:1,1,1600"]}

CASES = [if_sample_rate, if_shape_body, loop_rnn, scan_accumulate, lstm_state, fp16_cast_tail,
         layernorm_neg_axis]


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "models"), exist_ok=True)
    names = []
    for make in CASES:
        name = make.__name__
        g, inputs = make()
        model = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="epctx-tests-exporters")
        model.ir_version = 8
        if name != "fp16_cast_tail":  # the checker refuses the unsorted graph, ORT does not
            checker.check_model(model)
        with open(os.path.join(out, "models", name + ".onnx"), "wb") as f:
            f.write(model.SerializeToString())
        ref = os.path.join(out, "ref", name)
        os.makedirs(ref, exist_ok=True)
        for i, a in enumerate(inputs):
            np.save(os.path.join(ref, "input_%d.npy" % i), a)
        with open(os.path.join(ref, "manifest.txt"), "w") as f:
            f.write("case %s\n" % name)
            f.write("inputs %s\n" % " ".join(v.name for v in g.input))
            f.write("outputs %s\n" % " ".join(v.name for v in g.output))
            for spec in INPUT_SHAPES.get(name, []):
                f.write("input_shape %s\n" % spec)
        if name in MIN_VNPU_SHARE:
            with open(os.path.join(ref, "min_vnpu_share.txt"), "w") as f:
                f.write("%g\n" % MIN_VNPU_SHARE[name])
        if name in CPU_ERROR:
            with open(os.path.join(ref, "cpu_error.txt"), "w") as f:
                f.write(CPU_ERROR[name] + "\n")
        names.append(name)
    with open(os.path.join(out, "ref", "cases.txt"), "w") as f:
        f.write("\n".join(names) + "\n")


if __name__ == "__main__":
    main()
