# SPDX-License-Identifier: Apache-2.0
"""The model zoo's quantized half: zoo networks quantized after training
the two ways a user ships int8 to an NPU.

static (PyTorch's own post-training flow, Debian's python3-torch 1.13):
  the float network exactly as gen_torch_models.py builds it (torchvision's
  initialisation, BatchNorm statistics measured on data), then
  torch.ao.quantization.quantize_fx: prepare_fx with torch's default x86
  ("fbgemm") QConfigMapping whose global qconfig is replaced by per-channel
  symmetric int8 weights and per-tensor affine uint8 activations over the
  full 0..255 range (HistogramObserver without fbgemm's reduce_range, which
  only protects an AVX2 kernel and ONNX does not have); the fixed-qparams
  ops (Sigmoid, Hardsigmoid, Softmax, Tanh) keep torch's fixed observers.
  Calibration: CALIB_BATCHES seeded batches of the zoo input's noise;
  convert_fx, then torch.onnx.export at opset 13, which writes the QDQ
  format: QuantizeLinear -> Cast -> DequantizeLinear around each float op,
  int8 weights and int32 biases behind their DequantizeLinear. An entry
  with "linear_only" quantizes only its nn.Linear layers (the encoder:
  embeddings, LayerNorm, softmax and GELU stay float).
  Two exporter gaps are bridged without changing what is computed:
  torch.cat of quantized tensors becomes quantized::cat at the shared
  qparams FX already gave its inputs (the exporter has no quantized
  aten::cat), and ShuffleNet's `x1, x2 = x.chunk(2)` indexes the chunks
  (FX cannot unpack a traced value).

dynamic (onnxruntime's quantize_dynamic, whose output torch 1.13 cannot
  export): the float ONNX model of gen_torch_models.py rewritten with
  python3-onnx as quantize_dynamic writes it (IntegerOps, defaults): each
  MatMul whose B is a 2-D float initializer becomes
  DynamicQuantizeLinear(A) -> MatMulInteger(A_q, B_q, A_zp, B_zp) ->
  Cast(float) -> Mul(by A_scale * B_scale), B quantized to int8 per tensor,
  symmetric (zero point 0, scale max|B| / 127). MatMuls of two activations
  and Gemm stay float, as quantize_dynamic leaves them.

The models are zoo.json's entries of source "quant": "float" names the
zoo network, "scheme" is static or dynamic. Input "input", output
"output", like the float models.

usage: gen_quant_models.py OUT_DIR [--models a,b,...] [--list]
Writes OUT_DIR/models/<name>.onnx (skipped when newer than this script,
gen_torch_models.py and zoo.json). --list prints the names and exits.
Any failure: one line "gen_quant_models.py: error: ..." and exit status 1.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_torch_models as gtm  # noqa: E402

ZOO_JSON = gtm.ZOO_JSON
CALIB_BATCHES = 4
CALIB_SEED = 4321


class Error(Exception):
    pass


def load_zoo():
    """The quant entries of zoo.json, by name, and every entry by name."""
    with open(ZOO_JSON) as f:
        models = json.load(f)["models"]
    return ({m["name"]: m for m in models if m["source"] == "quant"},
            {m["name"]: m for m in models})


def qconfig_mapping(linear_only):
    import torch
    from torch.ao.quantization import (HistogramObserver, PerChannelMinMaxObserver, QConfig,
                                       QConfigMapping, get_default_qconfig_mapping)

    qconfig = QConfig(
        activation=HistogramObserver.with_args(dtype=torch.quint8,
                                               qscheme=torch.per_tensor_affine,
                                               reduce_range=False),
        weight=PerChannelMinMaxObserver.with_args(dtype=torch.qint8,
                                                  qscheme=torch.per_channel_symmetric))
    if linear_only:
        return QConfigMapping().set_object_type(torch.nn.Linear, qconfig)
    return get_default_qconfig_mapping("fbgemm").set_global(qconfig)


def _qcat(tensors, dim=0):
    import torch

    # FX gives every input of a cat the output's observer: the qparams
    # of the first input are the output's.
    return torch.ops.quantized.cat(list(tensors), dim, tensors[0].q_scale(),
                                   tensors[0].q_zero_point())


def quantized_cats(gm):
    """torch.cat nodes of a converted GraphModule as quantized::cat."""
    import torch

    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target is torch.cat:
            n.target = _qcat
    gm.recompile()
    return gm


def fx_traceable(model, x):
    """FX cannot trace Python unpacking of a traced value (ShuffleNet's
    `x.chunk(2)` and `out.size()`, the encoder's `x.shape` and q, k, v),
    and the exporter has no Shape of a quantized tensor: those blocks get
    an equivalent forward that indexes instead of unpacking and takes the
    static shapes a float pass over `x` measured. ShuffleNet's chunk
    becomes a split of static sizes: the exporter writes a chunk of a
    dequantized tensor as Shape -> Gather -> Slice (one Split for the float
    model)."""
    import torch
    from torch.nn import functional as F
    from torchvision.models import shufflenetv2

    def shuffle_block(self, x):
        _, c, h, w = self.io_shape
        if self.stride == 1:
            halves = torch.split(x, [c // 2, c // 2], dim=1)
            out = torch.cat((halves[0], self.branch2(halves[1])), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return out.reshape(-1, 2, c // 2, h, w).transpose(1, 2).reshape(-1, c, h, w)

    def encoder_layer(self, x):
        _, s, h = self.io_shape
        qkv = self.qkv(x).reshape(-1, s, 3, self.heads, self.dh).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = torch.softmax(q @ k.transpose(-2, -1) / self.dh ** 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(-1, s, h)
        x = self.norm1(x + self.out(y))
        return self.norm2(x + self.fc2(F.gelu(self.fc1(x))))

    patches = [(m, shuffle_block) for m in model.modules()
               if isinstance(m, shufflenetv2.InvertedResidual)]
    patches += [(m, encoder_layer) for m in model.modules()
                if type(m).__name__ == "EncoderLayer"]
    hooks = [m.register_forward_hook(lambda m, i, o: setattr(m, "io_shape", tuple(o.shape)))
             for m, _ in patches]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    for m, forward in patches:
        m.forward = forward.__get__(m)
    return model


def static(entry, float_entry, path):
    import torch
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    shape, dtype = float_entry["shape"], float_entry.get("dtype", "float32")
    torch.manual_seed(0)
    model = gtm.prepare(gtm.build(float_entry["name"]), shape, dtype)
    x = gtm.example(shape, dtype, torch.Generator().manual_seed(7))
    model = fx_traceable(model, x)
    g = torch.Generator().manual_seed(CALIB_SEED)
    with torch.no_grad():
        prepared = prepare_fx(model, qconfig_mapping(entry.get("linear_only", False)), (x,))
        for _ in range(CALIB_BATCHES):
            prepared(gtm.example(shape, dtype, g, batch=2))
        quantized = quantized_cats(convert_fx(prepared))
        torch.onnx.export(quantized, (x,), path, input_names=["input"],
                          output_names=["output"], opset_version=entry["opset"],
                          do_constant_folding=True)


def dynamic(entry, float_entry, out_dir, path):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    gtm.export(float_entry, out_dir)
    model = onnx.load(os.path.join(out_dir, "models", f"{float_entry['name']}.onnx"))
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    nodes, quantized = [], 0
    for n in g.node:
        b = inits.get(n.input[1]) if n.op_type == "MatMul" else None
        if b is None or b.data_type != TensorProto.FLOAT or len(b.dims) != 2:
            nodes.append(n)
            continue
        w = numpy_helper.to_array(b)
        scale = np.float32(max(float(np.abs(w).max()), 1e-8) / 127.0)
        wq = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        t = f"{n.name or n.output[0]}_dq"
        g.initializer.extend([numpy_helper.from_array(wq, b.name + "_quantized"),
                              numpy_helper.from_array(scale, b.name + "_scale"),
                              numpy_helper.from_array(np.int8(0), b.name + "_zero_point")])
        a = n.input[0]
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [a], [f"{t}/a_q", f"{t}/a_s", f"{t}/a_zp"],
                             name=f"{t}/DynamicQuantizeLinear"),
            helper.make_node("MatMulInteger", [f"{t}/a_q", b.name + "_quantized", f"{t}/a_zp",
                                               b.name + "_zero_point"], [f"{t}/acc"],
                             name=f"{t}/MatMulInteger"),
            helper.make_node("Mul", [f"{t}/a_s", b.name + "_scale"], [f"{t}/scale"],
                             name=f"{t}/ScaleMul"),
            helper.make_node("Cast", [f"{t}/acc"], [f"{t}/acc_f"], to=TensorProto.FLOAT,
                             name=f"{t}/Cast"),
            helper.make_node("Mul", [f"{t}/acc_f", f"{t}/scale"], [n.output[0]],
                             name=f"{t}/Mul"),
        ]
        quantized += 1
    if not quantized:
        raise Error(f"{entry['name']}: {float_entry['name']} has no MatMul with a weight")
    used = {i for n in nodes for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(keep)
    del g.value_info[:]
    onnx.checker.check_model(model)
    onnx.save(model, path)


def export(entry, every, out_dir):
    name = entry["name"]
    path = os.path.join(out_dir, "models", f"{name}.onnx")
    newest = max(os.path.getmtime(p) for p in (__file__, gtm.__file__, ZOO_JSON))
    if os.path.exists(path) and os.path.getmtime(path) >= newest:
        return
    float_entry = every.get(entry.get("float", ""))
    if not float_entry or float_entry["source"] != "torch":
        raise Error(f"{name}: 'float' must name a torch model of zoo.json")
    tmp = path + ".tmp"
    try:
        if entry.get("scheme") == "static":
            static(entry, float_entry, tmp)
        elif entry.get("scheme") == "dynamic":
            dynamic(entry, float_entry, out_dir, tmp)
        else:
            raise Error(f"{name}: scheme must be static or dynamic")
    except Error:
        raise
    except Exception as e:  # torch raises many kinds; each becomes one line
        msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise Error(f"{name}: {type(e).__name__}: {msg}") from None
    os.replace(tmp, path)
    if entry.get("scheme") == "dynamic":
        # ORT's MatMulInteger saturates on CPUs without VNNI (u8 x s8 pairs
        # in int16): its reference runs this, the same computation as the
        # float ops ONNX defines the integer ops by (tests/int8).
        import onnx

        sys.path.insert(0, os.path.join(HERE, "..", "..", "int8"))
        import gen_int8_models  # onnx_semantics

        ref = gen_int8_models.onnx_semantics(onnx.load(path))
        onnx.save(ref, os.path.join(out_dir, "models", f"{name}.reference.onnx"))


def main(argv):
    p = argparse.ArgumentParser(prog="gen_quant_models.py", description=__doc__.split("\n")[0])
    p.add_argument("out_dir", nargs="?")
    p.add_argument("--models", help="default: every quant model of zoo.json")
    p.add_argument("--list", action="store_true")
    a = p.parse_args(argv)
    models, every = load_zoo()
    if a.list:
        print("\n".join(models))
        return 0
    if not a.out_dir:
        p.error("OUT_DIR is required")
    names = [m for m in (a.models or ",".join(models)).split(",") if m]
    try:
        for m in names:
            if m not in models:
                raise Error(f"unknown model '{m}' (known: {', '.join(models)})")
        try:
            import onnx  # noqa: F401
            import torch  # noqa: F401
            import torchvision  # noqa: F401
        except ImportError as e:
            raise Error(f"{e} (apt-get install python3-torch python3-torchvision "
                        "python3-onnx)") from None
        gtm.BertEncoder, gtm.SpeechRnn, gtm.SegOut = gtm._modules()
        os.makedirs(os.path.join(a.out_dir, "models"), exist_ok=True)
        for m in names:
            export(models[m], every, a.out_dir)
            print(f"gen_quant_models: {m}", file=sys.stderr, flush=True)
    except Error as e:
        print(f"gen_quant_models.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
