#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the ONNX models the device-side reader tests parse.

Usage: gen_onnx_cases.py <out_dir>

The values written here are asserted by tests/onnx/test_*.cc; change both
together. Needs the Debian python3-onnx (1.12) and numpy.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "models"))
from onnx_util import ep_node  # noqa: E402

PAYLOAD_SIZE = 2 * 1024 * 1024


def payload(n):
    """The embedded EPContext blob: byte i is (7*i + 3) mod 256."""
    return ((np.arange(n, dtype=np.uint64) * 7 + 3) % 256).astype(np.uint8).tobytes()


def raw(name, dtype, dims, arr):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.raw_data = np.asarray(arr).tobytes()
    return t


def save(model, out_dir, name):
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(model.SerializeToString())


def basic(out_dir):
    inits = [
        raw("w_f32_raw", TensorProto.FLOAT, [2, 3], np.arange(6, dtype=np.float32) * 0.5),
        raw("w_i64_raw", TensorProto.INT64, [3], np.array([-1, 2, 1 << 40], dtype=np.int64)),
        raw("w_u8_raw", TensorProto.UINT8, [4], np.array([1, 2, 254, 255], dtype=np.uint8)),
        raw("scalar", TensorProto.FLOAT, [], np.array([3.0], dtype=np.float32)),
        helper.make_tensor("t_f32", TensorProto.FLOAT, [2, 2], [1.5, -2.25, 3.0, 4.0]),
        helper.make_tensor("t_i32", TensorProto.INT32, [3], [-7, 0, 2147483647]),
        helper.make_tensor("t_i8", TensorProto.INT8, [3], [-3, 127, -128]),
        helper.make_tensor("t_u8", TensorProto.UINT8, [2], [200, 7]),
        helper.make_tensor("t_i16", TensorProto.INT16, [2], [-300, 300]),
        helper.make_tensor("t_u16", TensorProto.UINT16, [2], [65535, 1]),
        helper.make_tensor("t_bool", TensorProto.BOOL, [3], [True, False, True]),
        helper.make_tensor("t_f16", TensorProto.FLOAT16, [2], [1.0, -2.0]),
        helper.make_tensor("t_i64", TensorProto.INT64, [2], [-5, 1 << 50]),
        helper.make_tensor("t_f64", TensorProto.DOUBLE, [2], [0.25, -1e300]),
        helper.make_tensor("t_u32", TensorProto.UINT32, [2], [4000000000, 1]),
        helper.make_tensor("t_u64", TensorProto.UINT64, [1], [2**64 - 1]),
        helper.make_tensor("t_str", TensorProto.STRING, [2], [b"ab", b"c"]),
    ]
    ext = TensorProto()
    ext.name = "ext"
    ext.data_type = TensorProto.FLOAT
    ext.dims.extend([4])
    ext.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "weights.bin"), ("offset", "64"), ("length", "16")):
        e = ext.external_data.add()
        e.key = k
        e.value = v
    inits.append(ext)

    body = helper.make_graph(
        [helper.make_node("Identity", ["a"], ["b"], name="inner")], "body",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("b", TensorProto.FLOAT, [1])])
    attrs = helper.make_node(
        "Custom", ["X", "", "w_f32_raw"], ["Y"], name="attrs", domain="test.domain",
        f=0.5, i=-42, s=b"hello",
        t=helper.make_tensor("tv", TensorProto.INT32, [2], [9, 10]),
        g=body, floats=[1.0, 2.5], ints=[1, -2, 3], strings=[b"a", b"bc"])
    relu = helper.make_node("Relu", ["Y"], ["Z"], name="relu")
    graph = helper.make_graph(
        [attrs, relu], "basic_graph",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 3, None])],
        [helper.make_tensor_value_info("Z", TensorProto.FLOAT, [2, 3])],
        initializer=inits,
        value_info=[helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(
        graph, producer_name="gen_onnx_cases", producer_version="1.0",
        domain="ai.epctx.test", model_version=3,
        opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("test.domain", 1)])
    model.ir_version = 8
    helper.set_model_props(model, {"author": "epctx", "k2": "v2"})
    save(model, out_dir, "basic.onnx")


def small(out_dir):
    """A few hundred bytes whose last field is the only opset_import, so no
    proper prefix of it is a valid model."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["X", "B"], ["Y"], name="add", note="x")], "small",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 2])],
        initializer=[raw("B", TensorProto.FLOAT, [2], np.array([1, 2], dtype=np.float32))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    save(model, out_dir, "small.onnx")


def ctx_model(nodes, inputs, outputs):
    graph = helper.make_graph(
        nodes, "ctx",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4]) for n in outputs])
    model = helper.make_model(graph, producer_name="epctx-compile", opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


def epcontext(out_dir):
    save(ctx_model([ep_node(
        "ctx_main", ["X"], ["Y"], main_context=1, embed_mode=1,
        ep_cache_context=payload(PAYLOAD_SIZE), source="vnpu", ep_sdk_version="1.2.3",
        hardware_architecture="vnpu-v1", partition_name="part0",
        onnx_model_filename="model.onnx", notes="n", max_size=4096, vendor_flag=7)],
        ["X"], ["Y"]), out_dir, "epctx_embed.onnx")
    save(ctx_model([ep_node("ctx_defaults", ["X"], ["Y"], ep_cache_context=b"BLOB",
                            source="vnpu")], ["X"], ["Y"]), out_dir, "epctx_defaults.onnx")
    save(ctx_model([ep_node("ctx_ext", ["X"], ["Y"], embed_mode=0,
                            ep_cache_context="model_vnpu.bin", source="vnpu")],
                   ["X"], ["Y"]), out_dir, "epctx_external.onnx")
    save(ctx_model([
        ep_node("ctx_main", [], ["Y"], main_context=1, embed_mode=0,
                ep_cache_context="ctx.bin", source="vnpu"),
        ep_node("ctx_sub", [], ["Z"], main_context=0, partition_name="p1", source="vnpu"),
    ], [], ["Y", "Z"]), out_dir, "epctx_zero_input.onnx")
    save(ctx_model([
        ep_node("bad_embed", ["X"], ["Y1"], embed_mode=2, ep_cache_context=b"B"),
        ep_node("bad_type", ["X"], ["Y2"], embed_mode="1", ep_cache_context=b"B"),
        ep_node("missing_cache", ["X"], ["Y3"], main_context=1, source="vnpu"),
        ep_node("bad_main", ["X"], ["Y4"], main_context=5, ep_cache_context=b"B"),
        ep_node("bad_cache_type", ["X"], ["Y5"], ep_cache_context=3),
    ], ["X"], ["Y1", "Y2", "Y3", "Y4", "Y5"]), out_dir, "epctx_bad.onnx")


def big(out_dir):
    """About 5 MB and 700 nodes: the parse-time budget case."""
    inits = []
    for k in range(100):
        inits.append(raw("w%d" % k, TensorProto.FLOAT, [125, 100],
                         np.full(12500, k, dtype=np.float32)))
    nodes = []
    prev = "X"
    for k in range(700):
        out = "h%d" % k
        if k % 2 == 0:
            nodes.append(helper.make_node(
                "Conv", [prev, "w%d" % (k % 100)], [out], name="conv_%d" % k,
                kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1], group=1))
        else:
            nodes.append(helper.make_node("Relu", [prev], [out], name="relu_%d" % k))
        prev = out
    graph = helper.make_graph(
        nodes, "big", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 3, 8, 8])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    save(model, out_dir, "big.onnx")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    basic(out_dir)
    small(out_dir)
    epcontext(out_dir)
    big(out_dir)
    with open(os.path.join(out_dir, "stamp"), "w") as f:
        f.write("ok\n")


if __name__ == "__main__":
    main()
