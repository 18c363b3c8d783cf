#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the ONNX node conformance suite from the onnx package's own
backend tests (onnx.backend.test, generate-data) and converts it into the
layout the C runner reads.

Usage: gen_node_suite.py OUT_DIR

Run with /usr/bin/python3 (Debian python3-onnx 1.12 + numpy). onnx 1.12's
test generators still use the numpy aliases numpy 1.24 removed (np.float,
np.int, np.bool, ...); they are put back before the generators run.

generate-data writes 922 node tests; the ones whose graph inputs and outputs
are all tensors (898) are the suite, the others (sequences, optionals) are
listed in OUT_DIR/excluded.txt with the reason. Per test, OUT_DIR/<test>/:
    model.onnx
    input_<i>.npy, expected_<i>.npy   from test_data_set_0 (the only set)
    manifest.txt:
        case <test>
        op <op type>        the op the test is about (for `_expanded`: the
                            function op, not the ops of its body)
        inputs <name> ...   outputs <name> ...
        input_dtypes <dtype> ...   output_dtypes <dtype> ...  (numpy names)
OUT_DIR/cases.txt lists the suite, one test a line.

.npy conventions for what numpy cannot hold (README.md in this folder):
bfloat16 is written as 2-byte void, descr '|V2', holding the raw bfloat16
bits; epctx_npy reads '|V2' / '<V2' as EPCTX_DTYPE_BFLOAT16. onnx 1.12 keeps
bfloat16 data as uint16 TensorProtos, so the model's declared elem type
decides. Strings are written as numpy byte or unicode strings ('|S<n>',
'<U<n>'), which epctx_npy refuses: the runtime has no string tensors.
"""
import glob
import os
import shutil
import sys
import warnings

import numpy as np

with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)  # hasattr(np, "object") warns
    for _name, _value in [("float", float), ("int", int), ("bool", bool),
                          ("object", object), ("complex", complex), ("str", str)]:
        if not hasattr(np, _name):
            setattr(np, _name, _value)

import onnx  # noqa: E402
from onnx import TensorProto, numpy_helper  # noqa: E402
from onnx.backend.test import cmd_tools  # noqa: E402


def to_array(tensor, declared):
    """The .npy array for one TensorProto; `declared` is the graph's elem type."""
    if declared == TensorProto.BFLOAT16 or tensor.data_type == TensorProto.BFLOAT16:
        if tensor.data_type == TensorProto.BFLOAT16:
            bits = (np.frombuffer(tensor.raw_data, dtype="<u2") if tensor.raw_data
                    else np.asarray(tensor.int32_data, dtype=np.uint16))
            bits = bits.reshape(tuple(tensor.dims))
        else:
            bits = numpy_helper.to_array(tensor).astype("<u2")
        return np.array(bits, order="C").view("V2")
    a = numpy_helper.to_array(tensor)
    if a.dtype == object:
        flat = a.ravel().tolist()
        kind = np.bytes_ if all(isinstance(v, bytes) for v in flat) else np.str_
        a = np.asarray(a.tolist(), dtype=kind).reshape(a.shape)
    return np.array(a, order="C")  # not ascontiguousarray: it makes scalars 1-D


def dtype_name(a):
    if a.dtype.kind == "V":
        return "bfloat16"
    if a.dtype.kind in "SU":
        return "string"
    return a.dtype.name


def read_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def non_tensor(values):
    return [v.name for v in values if not v.type.HasField("tensor_type")]


def convert(src, dst, name, op):
    """Writes one test's folder; returns None, or why it is not in the suite."""
    model = onnx.load(os.path.join(src, "model.onnx"))
    inits = {i.name for i in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in inits]
    outputs = list(model.graph.output)
    other = non_tensor(inputs + outputs)
    if other:
        kinds = sorted({v.type.WhichOneof("value") for v in inputs + outputs
                        if v.name in other})
        return "%s values (%s)" % ("/".join(k.replace("_type", "") for k in kinds),
                                   ", ".join(other))
    data = os.path.join(src, "test_data_set_0")
    os.makedirs(dst)
    shutil.move(os.path.join(src, "model.onnx"), os.path.join(dst, "model.onnx"))
    in_types, out_types = [], []
    for prefix, values, types, npy in [("input", inputs, in_types, "input"),
                                       ("output", outputs, out_types, "expected")]:
        for i, v in enumerate(values):
            a = to_array(read_pb(os.path.join(data, "%s_%d.pb" % (prefix, i))),
                         v.type.tensor_type.elem_type)
            np.save(os.path.join(dst, "%s_%d.npy" % (npy, i)), a, allow_pickle=False)
            types.append(dtype_name(a))
    with open(os.path.join(dst, "manifest.txt"), "w") as f:
        f.write("case %s\nop %s\n" % (name, op))
        f.write("inputs %s\n" % " ".join(v.name for v in inputs))
        f.write("outputs %s\n" % " ".join(v.name for v in outputs))
        f.write("input_dtypes %s\n" % " ".join(in_types))
        f.write("output_dtypes %s\n" % " ".join(out_types))
    return None


def op_of(node_dir, name):
    """The op a test is about: its single node's type; for `X_expanded`, X's."""
    base = name[:-len("_expanded")] if name.endswith("_expanded") else name
    path = os.path.join(node_dir, base, "model.onnx")
    if not os.path.exists(path):
        path = os.path.join(node_dir, name, "model.onnx")
    nodes = onnx.load(path).graph.node
    return nodes[0].op_type if len(nodes) == 1 else "(graph)"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_node_suite.py OUT_DIR")
    out = os.path.abspath(sys.argv[1])
    raw = out + ".raw"
    for d in (out, raw):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(out)
    sys.argv = ["backend-test-tools", "generate-data", "-o", raw]
    cmd_tools.main()
    node_dir = os.path.join(raw, "node")
    names = sorted(os.path.basename(d) for d in glob.glob(os.path.join(node_dir, "test_*")))
    ops = {n: op_of(node_dir, n) for n in names}  # before models move
    suite, excluded = [], []
    for n in names:
        why = convert(os.path.join(node_dir, n), os.path.join(out, n), n, ops[n])
        if why:
            excluded.append("%s %s" % (n, why))
        else:
            suite.append(n)
    with open(os.path.join(out, "excluded.txt"), "w") as f:
        f.write("".join(line + "\n" for line in excluded))
    shutil.rmtree(raw)
    # Written last: the build's output, so a failed run is generated again.
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("".join(n + "\n" for n in suite))
    print("node suite: %d tests generated, %d in the suite, %d excluded (%s)"
          % (len(names), len(suite), len(excluded), os.path.join(out, "excluded.txt")))


if __name__ == "__main__":
    main()
