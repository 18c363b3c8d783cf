# SPDX-License-Identifier: Apache-2.0
"""Hand-made EPContext models for the loading tests (tests/loading).

Run with Debian's python3 (python3-onnx, numpy):
    gen_loading_models.py OUTDIR CONTAINER_FBS

Layout written:
    OUTDIR/outside.bin              a file outside the model folder
    OUTDIR/m/*.onnx                 the models
    OUTDIR/m/*.bin, m/sub/...       their external context files
    OUTDIR/m/link_out.bin           symlink escaping to ../outside.bin
    OUTDIR/m/link_in.bin            symlink staying inside (-> ctx_a.bin)
    OUTDIR/m/fifo.bin, m/adir       a FIFO and a directory

Test-driver blobs ("tqnn", tests/loading/tqnn_driver.c) are text:
    b"TQNN\\n" + one line per graph: "<name> <inputs> <outputs> <dtype> <dim>\\n"
Containers (runtime/schema/container.fbs) are assembled here: the metadata
with flatc from JSON, header and segments by hand (alignment 64).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "models"))
from onnx_util import ep_node  # noqa: E402

MS = "com.microsoft"
QNN = "QNNExecutionProvider"
F = TensorProto.FLOAT


def blob(*graphs):
    """graphs: (name, n_in, n_out, dtype, dim)"""
    return b"TQNN\n" + b"".join(b"%s %d %d %d %d\n" % (g[0].encode(), g[1], g[2], g[3], g[4])
                                 for g in graphs)


def model(nodes, inputs, outputs, opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                               helper.make_opsetid(MS, 1)])


def vi(name, dtype=F, dim=4):
    return helper.make_tensor_value_info(name, dtype, [1, dim])


def single(cache, name="ctx0", dtype=F, **attrs):
    """x -> EPContext -> y"""
    a = {"ep_cache_context": cache}
    a.update(attrs)
    return model([ep_node(name, ["x"], ["y"], **a)], [vi("x", dtype)], [vi("y", dtype)])


def container(source, graphs, sdk=None, hw=None, min_driver=None, weights=b"W" * 100,
              fbs=None, truncate=0):
    """graphs: [(name, payload bytes)] -> container bytes."""
    align = 64

    def ver(v):
        return {"major": v[0], "minor": v[1], "patch": v[2]}

    def meta(offsets):
        d = {"source": source, "producer": "gen_loading_models",
             "producer_version": ver((0, 9, 1)),
             "weights": {"offset": offsets[0], "size": len(weights)},
             "graphs": [{"name": n, "payload": {"offset": offsets[i + 1], "size": len(p)}}
                        for i, (n, p) in enumerate(graphs)]}
        if sdk:
            d["sdk_version"] = ver(sdk)
        if hw:
            d["hardware_architecture"] = hw
        if min_driver:
            d["min_driver_version"] = ver(min_driver)
        with tempfile.TemporaryDirectory() as tmp:
            js = os.path.join(tmp, "c.json")
            with open(js, "w") as f:
                json.dump(d, f)
            subprocess.check_call(["flatc", "-b", "-o", tmp, fbs, js])
            return open(os.path.join(tmp, "c.bin"), "rb").read()

    def up(n):
        return (n + align - 1) // align * align

    m = meta([1 << 40] * (len(graphs) + 1))  # offsets do not change the size
    off = up(64 + len(m))
    offsets = []
    for seg in [weights] + [p for _, p in graphs]:
        offsets.append(off)
        off = up(off + len(seg))
    m = meta(offsets)
    out = bytearray(offsets[-1] + len(([weights] + [p for _, p in graphs])[-1]))
    out[0:8] = b"EPCTXBIN"
    struct.pack_into("<HHIQQQII", out, 8, 1, 0, 64, len(out), 64, len(m), align, 0)
    out[64:64 + len(m)] = m
    for o, seg in zip(offsets, [weights] + [p for _, p in graphs]):
        out[o:o + len(seg)] = seg
    out = bytes(out)
    return out[:len(out) - truncate] if truncate else out


def main():
    out, fbs = sys.argv[1], sys.argv[2]
    m = os.path.join(out, "m")
    os.makedirs(os.path.join(m, "sub", "deeper"), exist_ok=True)
    os.makedirs(os.path.join(m, "adir"), exist_ok=True)

    def save(mod, name):
        onnx.save(mod, os.path.join(m, name))

    def write(rel, data):
        with open(os.path.join(m, rel), "wb") as f:
            f.write(data)

    with open(os.path.join(out, "outside.bin"), "wb") as f:
        f.write(blob(("ctx0", 1, 1, F, 4)))

    # Two primaries, embedded and external (items 31, 9.7), chained x -> a -> t -> b -> y.
    def two(ca, cb, embed):
        a = ep_node("ctx_a", ["x"], ["t"], main_context=1, embed_mode=embed, ep_cache_context=ca,
                    source=QNN)
        b = ep_node("ctx_b", ["t"], ["y"], main_context=1, embed_mode=embed, ep_cache_context=cb,
                    source=QNN)
        return model([a, b], [vi("x")], [vi("y")])
    blob_a, blob_b = blob(("ctx_a", 1, 1, F, 4)), blob(("ctx_b", 1, 1, F, 4))
    save(two(blob_a, blob_b, 1), "two_primaries_embed.onnx")
    write("ctx_a.bin", blob_a)
    write("sub/deeper/ctx_b.bin", blob_b)
    save(two("ctx_a.bin", "sub/deeper/ctx_b.bin", 0), "two_primaries_external.onnx")

    # Single graph whose name differs from the node's (item 30).
    save(single(blob(("graph_in_bin", 1, 1, F, 4)), name="QnnNodeNotMatching", source=QNN),
         "single_graph_mismatch.onnx")

    # main_context=0 binding by partition_name and by node name; dangling.
    three = blob(("g1", 1, 1, F, 4), ("g2", 1, 1, F, 4), ("g3", 1, 1, F, 4))
    n1 = ep_node("g1", ["x"], ["t1"], main_context=1, ep_cache_context=three, source=QNN)
    n2 = ep_node("n2", ["t1"], ["t2"], main_context=0, partition_name="g2", source=QNN)
    n3 = ep_node("g3", ["t2"], ["y"], main_context=0, source=QNN)
    save(model([n1, n2, n3], [vi("x")], [vi("y")]), "main0_binding.onnx")
    n3 = ep_node("dangling", ["t2"], ["y"], main_context=0, partition_name="nope", source=QNN)
    save(model([n1, n2, n3], [vi("x")], [vi("y")]), "main0_dangling.onnx")
    # Same node name twice (merged models).
    d1 = ep_node("dup", ["x"], ["t"], ep_cache_context=blob(("dup", 1, 1, F, 4)), source=QNN)
    d2 = ep_node("dup", ["t"], ["y"], ep_cache_context=blob(("dup", 1, 1, F, 4)), source=QNN)
    save(model([d1, d2], [vi("x")], [vi("y")]), "duplicate_names.onnx")

    # Routing.
    b1 = blob(("ctx0", 1, 1, F, 4))
    save(single(b1, source="TensorrtExecutionProvider"), "unknown_source.onnx")
    save(single(b1), "no_source.onnx")
    save(single(b1, source="qnn"), "alias_lowercase.onnx")
    # Schema: only ep_cache_context (defaults main_context=1, embed_mode=1), extra attributes.
    save(single(b1, source="QNN"), "defaults.onnx")
    save(single(b1, source=QNN, notes="hi", max_size=7, future_attr=3, other_text="z",
                onnx_model_filename="orig.onnx"), "extra_attrs.onnx")
    z = ep_node("ctx0", [], ["y"], ep_cache_context=blob(("ctx0", 0, 1, F, 4)), source=QNN)
    save(model([z], [], [vi("y")]), "zero_input.onnx")
    # Two inputs (item 29), external, loaded from a buffer with ep.context_file_path.
    write("add2.bin", blob(("add2", 2, 1, F, 4)))
    a2 = ep_node("add2", ["x1", "x2"], ["y"], embed_mode=0, ep_cache_context="add2.bin", source=QNN)
    save(model([a2], [vi("x1"), vi("x2")], [vi("y")]), "two_inputs.onnx")
    types = {"bool": TensorProto.BOOL, "int8": TensorProto.INT8, "int16": TensorProto.INT16,
             "int32": TensorProto.INT32, "int64": TensorProto.INT64, "uint8": TensorProto.UINT8,
             "uint16": TensorProto.UINT16, "uint32": TensorProto.UINT32,
             "uint64": TensorProto.UINT64, "float16": TensorProto.FLOAT16, "float": F,
             "double": TensorProto.DOUBLE, "bfloat16": TensorProto.BFLOAT16}
    for tn, t in types.items():
        save(single(blob(("ctx0", 1, 1, t, 4)), dtype=t, source=QNN), "type_%s.onnx" % tn)

    # embed_mode=0 paths.
    def ext(path, name):
        save(single(path, embed_mode=0, source=QNN), name)
    write("sub/deeper/ctx0.bin", b1)
    write("a..b.bin", b1)
    ext("sub/deeper/ctx0.bin", "ext_subfolder.onnx")
    ext("a..b.bin", "ext_dotdot_in_name.onnx")
    ext("link_in.bin", "ext_symlink_inside.onnx")
    ext(os.path.abspath(os.path.join(m, "ctx_a.bin")), "ext_absolute.onnx")
    ext("../outside.bin", "ext_parent.onnx")
    ext("sub/../../outside.bin", "ext_parent_inner.onnx")
    ext("", "ext_empty.onnx")
    ext(b"ctx_a.bin\x00.txt", "ext_nul.onnx")
    ext("link_out.bin", "ext_symlink_escape.onnx")
    ext("fifo.bin", "ext_fifo.onnx")
    ext("adir", "ext_directory.onnx")
    ext("missing.bin", "ext_missing.onnx")
    for link, target in (("link_in.bin", "ctx_a.bin"), ("link_out.bin", "../outside.bin")):
        p = os.path.join(m, link)
        if os.path.lexists(p):
            os.remove(p)
        os.symlink(target, p)
    fifo = os.path.join(m, "fifo.bin")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)

    # Needs compilation: an op without a CPU kernel beside an EPContext node
    # (a contrib op on strings, which the CPU fallback will not run).
    nc = helper.make_node("Tokenizer", ["t"], ["y"], name="tok_0", domain=MS)
    save(model([ep_node("ctx0", ["x"], ["t"], ep_cache_context=b1, source=QNN), nc],
               [vi("x")], [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
               opset=11), "needs_compilation.onnx")

    # Versions. The test driver defaults to driver 1.5.0, SDK 2.3.1, "tq-1.2".
    g = [("cx", blob(("cx", 1, 1, F, 4)))]
    ok = container("QNN", g, sdk=(2, 3, 0), hw="tq-1.2", min_driver=(1, 5, 0), fbs=fbs)
    save(single(ok, name="cx", source=QNN, ep_sdk_version="2.3.0", hardware_architecture="tq-1.2"),
         "cx_ok.onnx")
    save(single(ok, name="cx", source=QNN), "cx_header_only.onnx")
    save(single(ok, name="cx", source=QNN, ep_sdk_version="2.2.0"), "cx_disagree_sdk.onnx")
    save(single(ok, name="cx", source=QNN, hardware_architecture="tq-1.1"), "cx_disagree_hw.onnx")
    # The same container as a file two models share (context groups).
    write("cx_shared.bin", ok)
    save(single("cx_shared.bin", name="cx", embed_mode=0, source=QNN, ep_sdk_version="2.3.0",
                hardware_architecture="tq-1.2"), "cx_shared_ok.onnx")
    save(single("cx_shared.bin", name="cx", embed_mode=0, source=QNN, ep_sdk_version="2.2.0"),
         "cx_shared_disagree_sdk.onnx")
    save(single(blob(("cx", 1, 1, F, 4)), name="cx", source=QNN, ep_sdk_version="two"),
         "cx_bad_sdk_string.onnx")
    save(single(blob(("cx", 1, 1, F, 4)), name="cx", source=QNN, hardware_architecture="tq1.2"),
         "cx_bad_hw_string.onnx")
    write("cx_ok.bin", ok)
    save(single("not_there.bin", name="cx", source=QNN, embed_mode=0, ep_sdk_version="2.3.0"),
         "cx_external_missing.onnx")
    # Truncated container (9.16): header promises more bytes than there are.
    save(single(container("QNN", g, fbs=fbs, truncate=10), name="cx", source=QNN),
         "cx_truncated.onnx")

    # vnpu-sourced nodes for epctx-inspect / epctx-run (payloads are never run).
    vb = container("vnpu", [("vnode", b"\0" * 32)], sdk=(1, 0, 0), hw="vnpu-1.0",
                   min_driver=(1, 2, 0), fbs=fbs)
    write("vnpu_ctx.bin", vb)
    v1 = ep_node("vnode", ["x"], ["t"], source="vnpu", ep_cache_context=vb, ep_sdk_version="1.0.0",
                 hardware_architecture="vnpu-1.0", embed_mode=1, main_context=1)
    v2 = ep_node("vext", ["t"], ["t2"], source="vnpu", ep_cache_context="vnpu_ctx.bin",
                 embed_mode=0, main_context=1)
    relu = helper.make_node("Relu", ["t2"], ["y"], name="relu_0")
    save(model([v1, v2, relu], [vi("x")], [vi("y")]), "vnpu_inspect.onnx")
    save(single(b"opaque", name="vnode", source="vnpu", ep_sdk_version="1.0.0",
                hardware_architecture="vnpu-1.0"), "vnpu_node.onnx")


if __name__ == "__main__":
    main()
