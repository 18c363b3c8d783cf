# SPDX-License-Identifier: Apache-2.0
"""The model zoo's generated half: standard architectures from torchvision
(Debian's python3-torchvision) and two small hand-built networks (a
BERT-style encoder, a recurrent speech model), exported with
torch.onnx.export at batch 1.

No weights are downloaded. Each network keeps torchvision's own
initialisation (what training starts from, so weight scales are those of a
real network), except that parameters initialised to exactly zero, such as
ViT's classification head, get small random values (a zero head would make
every output 0 and hide the last GEMM's work and errors). BatchNorm running
statistics are then measured on data: a few forward passes in training mode
over random inputs with the cumulative average (momentum None), so every BN
normalises what actually reaches it, as after training.

The models, their input shapes and opsets are zoo.json's entries of source
"torch"; the input is named "input", the output "output".

usage: gen_torch_models.py OUT_DIR [--models a,b,...] [--list]
Writes OUT_DIR/models/<name>.onnx (skipped when newer than this script and
zoo.json). --list prints the names and exits.
Any failure: one line "gen_torch_models.py: error: ..." and exit status 1.
"""
import argparse
import json
import os
import sys

ZOO_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo.json")


def load_zoo():
    """The torch entries of zoo.json, by name, in order."""
    with open(ZOO_JSON) as f:
        models = json.load(f)["models"]
    return {m["name"]: m for m in models if m["source"] == "torch"}


class Error(Exception):
    pass


def build(name):
    import torch
    import torchvision

    tv = torchvision.models
    if name == "bert_encoder":
        return BertEncoder()
    if name == "speech_rnn":
        return SpeechRnn()
    if name.startswith(("deeplabv3", "lraspp", "fcn")):
        seg = getattr(tv.segmentation, name)
        kwargs = {"weights": None, "weights_backbone": None, "num_classes": 21}
        if not name.startswith("lraspp"):
            kwargs["aux_loss"] = False
        return SegOut(seg(**kwargs))
    fn = getattr(tv, name, None)
    if fn is None:
        raise Error(f"torchvision {torchvision.__version__} has no model '{name}'")
    return fn(weights=None)


def _modules():
    import torch
    from torch import nn

    class BertEncoder(nn.Module):
        """BERT-style: token + position embeddings, LayerNorm, 4 encoder
        layers (hidden 512, 8 heads, FFN 2048 with erf GELU, post-norm),
        sequence 128: the shapes of a small BERT."""

        def __init__(self, vocab=8192, seq=128, hidden=512, heads=8, ffn=2048, layers=4):
            super().__init__()
            self.tok = nn.Embedding(vocab, hidden)
            self.pos = nn.Parameter(torch.randn(1, seq, hidden) * 0.02)
            self.norm = nn.LayerNorm(hidden)
            self.layers = nn.ModuleList(
                [EncoderLayer(hidden, heads, ffn) for _ in range(layers)])
            self.pool = nn.Linear(hidden, hidden)

        def forward(self, ids):
            x = self.norm(self.tok(ids) + self.pos)
            for layer in self.layers:
                x = layer(x)
            return torch.tanh(self.pool(x[:, 0]))

    class EncoderLayer(nn.Module):
        def __init__(self, hidden, heads, ffn):
            super().__init__()
            self.heads, self.dh = heads, hidden // heads
            self.qkv = nn.Linear(hidden, 3 * hidden)
            self.out = nn.Linear(hidden, hidden)
            self.norm1 = nn.LayerNorm(hidden)
            self.fc1 = nn.Linear(hidden, ffn)
            self.fc2 = nn.Linear(ffn, hidden)
            self.norm2 = nn.LayerNorm(hidden)

        def forward(self, x):
            b, s, h = x.shape
            q, k, v = self.qkv(x).reshape(b, s, 3, self.heads, self.dh).permute(2, 0, 3, 1, 4)
            att = torch.softmax(q @ k.transpose(-2, -1) / self.dh ** 0.5, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, s, h)
            x = self.norm1(x + self.out(y))
            return self.norm2(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))

    class SpeechRnn(nn.Module):
        """A keyword-spotting shape: 40 mel bins x 100 frames, Conv1d,
        two LSTM layers, a GRU, a classifier over the last frame."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(40, 64, 3, padding=1)
            self.lstm = nn.LSTM(64, 128, num_layers=2, batch_first=True)
            self.gru = nn.GRU(128, 128, batch_first=True)
            self.fc = nn.Linear(128, 12)

        def forward(self, x):
            x = torch.relu(self.conv(x)).transpose(1, 2)
            x, _ = self.lstm(x)
            x, _ = self.gru(x)
            return self.fc(x[:, -1])

    class SegOut(nn.Module):
        """torchvision's segmentation models return a dict; ONNX wants a tensor."""

        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)["out"]

    return BertEncoder, SpeechRnn, SegOut


def prepare(model, shape, dtype):
    """Zero-initialised weights get small random values; BatchNorm
    statistics come from data (see the module docstring)."""
    import torch
    from torch import nn

    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for pname, p in model.named_parameters():
            if p.dim() >= 2 and not p.any():
                fan_in = p[0].numel()
                p.copy_(torch.randn(p.shape, generator=g) / fan_in ** 0.5)
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if bns:
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the passes
        model.train()
        with torch.no_grad():
            for _ in range(4):
                model(example(shape, dtype, g, batch=2))
    model.eval()
    return model


def example(shape, dtype, g, batch=1):
    import torch

    shape = [batch] + list(shape[1:])
    if dtype == "int64":
        return torch.randint(0, 8192, shape, generator=g)
    return torch.randn(shape, generator=g)


def export(entry, out_dir):
    import torch

    name, shape, opset = entry["name"], entry["shape"], entry["opset"]
    dtype = entry.get("dtype", "float32")
    path = os.path.join(out_dir, "models", f"{name}.onnx")
    newest = max(os.path.getmtime(__file__), os.path.getmtime(ZOO_JSON))
    if os.path.exists(path) and os.path.getmtime(path) >= newest:
        return
    torch.manual_seed(0)
    model = prepare(build(name), shape, dtype)
    x = example(shape, dtype, torch.Generator().manual_seed(7))
    tmp = path + ".tmp"
    # With gradients enabled: nn.MultiheadAttention (ViT) takes its fused
    # fast path, which has no ONNX export, only when they are off.
    try:
        torch.onnx.export(model, (x,), tmp, input_names=["input"], output_names=["output"],
                          opset_version=opset, do_constant_folding=True)
    except Exception as e:  # torch raises many kinds; each becomes one line
        msg = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise Error(f"{name}: torch.onnx.export: {msg}") from None
    os.replace(tmp, path)


def main(argv):
    p = argparse.ArgumentParser(prog="gen_torch_models.py", description=__doc__.split("\n")[0])
    p.add_argument("out_dir", nargs="?")
    p.add_argument("--models", help="default: every torch model of zoo.json")
    p.add_argument("--list", action="store_true")
    a = p.parse_args(argv)
    MODELS = load_zoo()
    if a.list:
        print("\n".join(MODELS))
        return 0
    if not a.out_dir:
        p.error("OUT_DIR is required")
    names = [m for m in (a.models or ",".join(MODELS)).split(",") if m]
    try:
        for m in names:
            if m not in MODELS:
                raise Error(f"unknown model '{m}' (known: {', '.join(MODELS)})")
        try:
            import torch  # noqa: F401
            import torchvision  # noqa: F401
        except ImportError as e:
            raise Error(f"{e} (apt-get install python3-torch python3-torchvision)") from None
        global BertEncoder, SpeechRnn, SegOut
        BertEncoder, SpeechRnn, SegOut = _modules()
        os.makedirs(os.path.join(a.out_dir, "models"), exist_ok=True)
        for m in names:
            export(MODELS[m], a.out_dir)
            print(f"gen_torch_models: {m}", file=sys.stderr, flush=True)
    except Error as e:
        print(f"gen_torch_models.py: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
