# SPDX-License-Identifier: Apache-2.0
"""Peer benchmark: epctx against ONNX Runtime 1.30 on the same CPU, same
inputs, one sitting, over the model zoo (tests/bench/zoo/README.md).

For each model the driver compiles the ONNX model with epctx-compile for
each --ep (vnpu: the NPU package; none: the CPU fallback alone), starts one
worker process per contender (peer-bench-epctx on each _ctx.onnx and
peer-bench-ort on the original model, at each intra-op thread count), lets
each create its session and run once, then alternates rounds between them:
in round r every worker runs for --round-ms (at least one run), in an order
that rotates each round, so slow drifts of the shared machine (other load,
frequency) hit every contender alike. Every run is timed on its own inside
the worker (peer_worker.h has the protocol).

Reported per model: the median run time of each contender over all its runs,
the paired ratio epctx / ORT: the median over rounds of (epctx's median in
round r) / (ORT's median in round r), GFLOP/s of each, and how the vnpu
package is split (partitions, share of the MACs on the NPU). Then per ep and
thread count the median and the worst ratio over the zoo (tiny3, the per-run
overhead model, is left out of those). Output: two tables, then one JSON
document (also written to --json-out). No number is judged here. A model
that fails to compile or run is reported in its row and makes the exit
status 1 once every other model has run.

When the runtime knows session.intra_op_num_threads, epctx runs at the same
thread counts as ORT; until then it runs on the caller's thread and that one
measurement is paired with ORT at every thread count.

usage: peer_bench.py --build BUILD_DIR [--quick] [--rounds N] [--round-ms MS]
                     [--ep vnpu,none] [--threads 1,2]
                     [--models a,b,...|all|quick|zoo|int8|real|gemm]
                     [--baseline-worker PATH] [--json-out FILE]
--baseline-worker adds another build's peer-bench-epctx on the same packages
and prints this build's time over it per model (what got slower).
BUILD_DIR is a host build in which `ctest -R 'peer_bench|zoo'` has run once
(it fetches the models and ONNX Runtime, builds peer-bench-ort, makes tiny3
and the quick part of the zoo; `cmake --build BUILD_DIR --target zoo_models`
makes the whole zoo). --models all (the default) takes every model whose
inputs are there; int8 the quantized ones (zoo.json's family int8, which
zoo and all include), ORT running the same quantized ONNX file.
Any failure: one line "peer_bench.py: error: ..." and exit status 1.
"""
import argparse
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

REAL_MODELS = ["melspectrogram", "embedding_model", "hello_deepa", "ocr_cls", "ocr_det",
               "silero_vad_v5", "silero_vad_v6", "silero_vad_legacy"]
TINY = "tiny3"
ZOO_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo", "zoo.json")
# CI's quick subset besides the zoo.json entries marked quick.
QUICK_REAL = ["ocr_cls"]


class BenchError(Exception):
    pass


def read_manifest(path):
    """The ref manifest: input names and the --input-shape arguments
    (NAME:D0,D1,...)."""
    inputs, shapes = [], []
    try:
        with open(path) as f:
            for line in f:
                key, _, rest = line.strip().partition(" ")
                if key == "inputs":
                    inputs = rest.split()
                elif key == "input_shape":
                    shapes.append(rest)
    except OSError as e:
        raise BenchError(f"{path}: {e.strerror}") from None
    if not inputs:
        raise BenchError(f"{path}: no 'inputs' line")
    return inputs, shapes


class Worker:
    """One contender: a worker process holding one session."""

    def __init__(self, label, runtime, threads, argv):
        self.label, self.runtime, self.threads = label, runtime, threads
        self.argv = argv
        self.times = []        # every run, microseconds
        self.round_medians = []
        # stderr goes to a file: a pipe nobody reads while the rounds run
        # could fill up and stall a chatty worker.
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, bufsize=1)
        line = self._read()
        fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
        if not line.startswith("ready") or "create_ms" not in fields:
            raise BenchError(f"{label}: expected a ready line, got '{line}'")
        self.create_ms = float(fields["create_ms"])
        self.reported_threads = fields.get("threads", "?")

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self.stderr.seek(0)
            err = self.stderr.read().strip().splitlines()
            why = err[-1] if err else f"exit status {self.proc.returncode}"
            raise BenchError(f"{self.label}: worker stopped: {why}")
        return line.strip()

    def round(self, max_runs, budget_ms):
        self.proc.stdin.write(f"run {max_runs} {budget_ms}\n")
        self.proc.stdin.flush()
        line = self._read()
        parts = line.split()
        if not parts or parts[0] != "times" or len(parts) < 2:
            raise BenchError(f"{self.label}: expected 'times ...', got '{line[:80]}'")
        t = [float(x) for x in parts[1:]]
        self.times.extend(t)
        self.round_medians.append(statistics.median(t))

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


def paired_ratio(a, b):
    return statistics.median(x / y for x, y in zip(a.round_medians, b.round_medians))


def compile_model(cfg, name, onnx_path, shapes, ep):
    """Returns (the _ctx.onnx path, the placement: partitions and MACs)."""
    work = os.path.join(cfg.work, f"{name}_{ep}")
    ctx = os.path.join(work, f"{name}_ctx.onnx")
    report = os.path.join(work, "compile.json")
    newest_input = max(os.path.getmtime(onnx_path), os.path.getmtime(cfg.compile))
    if not (os.path.exists(ctx) and os.path.exists(report) and
            os.path.getmtime(ctx) >= newest_input):
        os.makedirs(work, exist_ok=True)
        argv = [cfg.compile, onnx_path, "-o", ctx, "--ep", ep, "--embed-mode", "0",
                "--force", "--quiet", "--json"]
        for s in shapes:
            argv += ["--input-shape", s]
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0 or not os.path.exists(ctx):
            msg = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
            raise BenchError(f"epctx-compile --ep {ep} {name}: {msg}")
        with open(report, "w") as f:
            f.write(p.stdout)
    try:
        with open(report) as f:
            m = json.load(f)["models"][0]
        placement = {"partitions": len(m["partitions"]), "nodes_cpu": m["nodes_cpu"],
                     "macs_total": m["macs_total"], "macs_npu": m["macs_npu"]}
    except (OSError, ValueError, KeyError, IndexError) as e:
        raise BenchError(f"{report}: unreadable compile report ({e})") from None
    return ctx, placement


def model_flops(onnx_path, shapes):
    """(flops, unknown nodes) of the model's Conv/MatMul work, or None without
    python3-onnx (GFLOP/s are then left out)."""
    try:
        import model_flops as mf
    except ImportError:
        return None
    dims = {}
    for s in shapes:
        name, _, d = s.rpartition(":")
        dims[name] = [int(x) for x in d.split(",")]
    return mf.count(onnx_path, dims)


def catalog(cfg):
    """Every known model: name -> (group, .onnx path, reference folder), in
    table order: tiny3, the real models, then the zoo."""
    models = {TINY: ("tiny", os.path.join(cfg.tiny, f"{TINY}.onnx"), os.path.join(cfg.tiny, TINY))}
    for n in REAL_MODELS:
        models[n] = ("real", os.path.join(cfg.cache, "models", f"{n}.onnx"),
                     os.path.join(cfg.cache, "ref", n))
    for m in zoo_entries():
        group = "gemm" if m["source"] == "gemm" else "zoo"
        models[m["name"]] = (group, os.path.join(cfg.zoo, "models", f"{m['name']}.onnx"),
                             os.path.join(cfg.zoo, "ref", m["name"]))
    return models


def zoo_entries():
    try:
        with open(ZOO_JSON) as f:
            return json.load(f)["models"]
    except (OSError, ValueError, KeyError) as e:
        raise BenchError(f"{ZOO_JSON}: {e}") from None


def select_models(cfg, spec):
    """--models: names and the groups all (tiny3, real and zoo), real, zoo,
    int8 (the zoo's quantized models), gemm (the zoo's GEMM shapes as
    one-node models), quick; the groups take only the models whose inputs
    exist (a named one must)."""
    known = catalog(cfg)
    quick = [TINY] + QUICK_REAL + [m["name"] for m in zoo_entries() if m.get("quick")]
    int8 = [m["name"] for m in zoo_entries() if m.get("family") == "int8"]
    out = []
    for tok in [t for t in spec.split(",") if t]:
        if tok in ("all", "real", "zoo", "int8", "gemm", "quick"):
            names = [n for n, (g, _, ref) in known.items()
                     if ((tok == "all" and g != "gemm") or g == tok or
                         (tok == "quick" and n in quick) or (tok == "int8" and n in int8)) and
                     os.path.exists(os.path.join(ref, "manifest.txt"))]
        elif tok in known:
            names = [tok]
        else:
            raise BenchError(f"--models: unknown model '{tok}' (known: {', '.join(known)}; "
                             "groups all, real, zoo, int8, gemm, quick)")
        out += [n for n in names if n not in out]
    if not out:
        raise BenchError(f"--models {spec}: no model has its inputs (run `ctest -R peer_bench` "
                         f"in the build first; the zoo's are in {cfg.zoo}/ref)")
    return [(n,) + known[n] for n in out]


def bench_model(cfg, model):
    name, group, onnx_path, ref = model
    if not os.path.exists(onnx_path):
        raise BenchError(f"{onnx_path}: missing (run `ctest -R peer_bench` in the build first)")
    inputs, shapes = read_manifest(os.path.join(ref, "manifest.txt"))
    ctxs, placement = {}, None
    for ep in cfg.eps:
        ctxs[ep], placed = compile_model(cfg, name, onnx_path, shapes, ep)
        if ep != "none":
            placement = placed
    in_args = []
    for i, n in enumerate(inputs):
        in_args += ["--input", f"{n}={os.path.join(ref, f'input_{i}.npy')}"]

    workers = []
    try:
        epctx = {}  # (ep, threads) -> worker
        for ep in cfg.eps:
            for t in cfg.threads:
                w = Worker(f"epctx {ep}/{t}t", "epctx", t,
                           [cfg.epctx_worker, ctxs[ep], "--threads", str(t)] + in_args)
                workers.append(w)
                epctx[(ep, t)] = w
        base = {}  # (ep, threads) -> worker of --baseline-worker
        for ep in cfg.eps if cfg.baseline_worker else []:
            for t in cfg.threads:
                w = Worker(f"base {ep}/{t}t", "epctx", t,
                           [cfg.baseline_worker, ctxs[ep], "--threads", str(t)] + in_args)
                workers.append(w)
                base[(ep, t)] = w
        ort_by_threads = {}
        for t in cfg.threads:
            w = Worker(f"ort/{t}t", "ort", t, [cfg.ort_worker, onnx_path, "--lib", cfg.ort_lib,
                                                "--threads", str(t)] + in_args)
            workers.append(w)
            ort_by_threads[t] = w

        for r in range(cfg.rounds):
            k = r % len(workers)
            for w in workers[k:] + workers[:k]:
                w.round(cfg.max_runs, cfg.round_ms)
                # Lets ORT's spinning pool threads go idle before the next
                # contender starts its round.
                time.sleep(0.01)
    finally:
        for w in workers:
            w.close()

    result = {"model": name, "group": group, "gflop": None, "gflop_unknown_nodes": None,
              "placement": placement, "by_threads": []}
    flops = model_flops(onnx_path, shapes)
    if flops:
        result["gflop"], result["gflop_unknown_nodes"] = flops[0] / 1e9, flops[1]
    for t in cfg.threads:
        o = ort_by_threads[t]
        b = {"threads": t, "ort_median_ms": statistics.median(o.times) / 1e3,
             "ort_runs": len(o.times), "ort_create_ms": o.create_ms, "epctx": {}}
        for ep in cfg.eps:
            e = epctx[(ep, t)]
            b["epctx"][ep] = {
                "median_ms": statistics.median(e.times) / 1e3, "ratio": paired_ratio(e, o),
                "runs": len(e.times), "create_ms": e.create_ms, "threads": e.reported_threads}
            if (ep, t) in base:
                bw = base[(ep, t)]
                b["epctx"][ep]["baseline_median_ms"] = statistics.median(bw.times) / 1e3
                b["epctx"][ep]["vs_baseline"] = paired_ratio(e, bw)
        if result["gflop"]:
            b["ort_gflops"] = result["gflop"] / (b["ort_median_ms"] / 1e3)
            for v in b["epctx"].values():
                v["gflops"] = result["gflop"] / (v["median_ms"] / 1e3)
        result["by_threads"].append(b)
    return result


# The vector extensions ORT's MLAS picks kernels by: the same model runs at
# very different speeds on an AVX2 and on an AVX-512 machine.
CPU_FLAGS = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16",
             "amx_tile", "asimd", "asimddp", "sve"]


def cpu_info():
    name, flags = "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key in ("model name", "Model name") and name == "unknown":
                    name = value.strip()
                elif key in ("flags", "Features") and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    return name, [f for f in CPU_FLAGS if f in flags]


def ms(v):
    """Four significant digits, never in exponent form: 0.0004355, 441.2."""
    decimals = max(0, 3 - math.floor(math.log10(v))) if v > 0 else 0
    return f"{v:.{decimals}f}"


def render(rows, left=1):
    """Aligned columns: the first `left` left-aligned, the rest right."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i < left else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def summary(results, eps, threads):
    """Per set (the models: real and zoo; the GEMM shapes), ep and thread
    count: median and worst ratio, and the models at or above 1.0. tiny3,
    the per-run overhead, is in neither."""
    out = {}
    for kind, ep, t in [(k, e, t) for k in ("models", "gemm") for e in eps for t in threads]:
        pairs = [(b["epctx"][ep]["ratio"], r["model"]) for r in results
                 if r["group"] != "tiny" and (r["group"] == "gemm") == (kind == "gemm")
                 and not r.get("error")
                 for b in r["by_threads"] if b["threads"] == t]
        if not pairs:
            continue
        worst = max(pairs)
        key = f"{ep}_{t}t" if kind == "models" else f"gemm_{ep}_{t}t"
        out[key] = {"set": kind, "ep": ep, "threads": t, "models": len(pairs),
                    "median": statistics.median(p[0] for p in pairs),
                    "worst": worst[0], "worst_model": worst[1],
                    "slower": sorted(m for v, m in pairs if v >= 1.0)}
    return out


def table(results, eps, threads, stats):
    head = ["model", "GFLOP", "parts", "npu%"]
    for t in threads:
        head += [f"{ep} {t}t ms" for ep in eps] + [f"ORT {t}t ms"]
        head += [f"{ep}/ORT {t}t" for ep in eps]
    rows = [head]
    for r in results:
        pl = r.get("placement")
        row = [r["model"], f"{r['gflop']:.3g}" if r.get("gflop") else "-",
               str(pl["partitions"]) if pl else "-",
               f"{100.0 * pl['macs_npu'] / pl['macs_total']:.1f}" if pl and pl["macs_total"] else "-"]
        if r.get("error"):
            rows.append(row + ["FAILED"] + [""] * (len(head) - len(row) - 1))
            continue
        for b in r["by_threads"]:
            row += [ms(b["epctx"][ep]["median_ms"]) for ep in eps] + [ms(b["ort_median_ms"])]
            row += [f"{b['epctx'][ep]['ratio']:.2f}" for ep in eps]
        rows.append(row)
    lines = render(rows)
    lines.append("ratio: median over rounds of epctx/ORT round medians (< 1: epctx faster); "
                 "parts, npu%: the vnpu package's partitions and share of MACs")
    for r in results:
        if r.get("error"):
            lines.append(f"FAILED {r['model']}: {r['error']}")
    for v in stats.values():
        slower = f"; >= 1.0: {', '.join(v['slower'])}" if v["slower"] else ""
        what = "models" if v["set"] == "models" else "GEMM shapes"
        lines.append(f"{v['ep']}/ORT {v['threads']}t over {v['models']} {what}: median "
                     f"{v['median']:.2f}, worst {v['worst']:.2f} ({v['worst_model']}){slower}")
    based = [r for r in results if not r.get("error") and
             "vs_baseline" in r["by_threads"][0]["epctx"][eps[0]]]
    if based:
        head = ["vs baseline"] + [f"{ep} {t}t" for t in threads for ep in eps]
        rows = [head]
        for r in based:
            rows.append([r["model"]] + [f"{b['epctx'][ep]['vs_baseline']:.2f}"
                                        for b in r["by_threads"] for ep in eps])
        lines.append("")
        lines += render(rows)
        for ep, t in [(e, t) for t in threads for e in eps]:
            v = [(b["epctx"][ep]["vs_baseline"], r["model"]) for r in based
                 if r["group"] not in ("tiny", "gemm") for b in r["by_threads"]
                 if b["threads"] == t]
            if v:
                slower = sorted(m for x, m in v if x > 1.03)
                lines.append(f"{ep} {t}t vs baseline over {len(v)} models: median "
                             f"{statistics.median(x for x, _ in v):.2f}, worst {max(v)[0]:.2f} "
                             f"({max(v)[1]}); slower by over 3%: {', '.join(slower) or 'none'}")
        lines.append("vs baseline: median over rounds of this build's / --baseline-worker's "
                     "round medians, same packages, same sitting (< 1: faster)")
    rated = [r for r in results if r.get("gflop") and r["gflop"] >= 0.01 and not r.get("error")]
    if rated:
        head = ["GFLOP/s"]
        for t in threads:
            head += [f"{ep} {t}t" for ep in eps] + [f"ORT {t}t"]
        rows = [head]
        for r in rated:
            row = [r["model"] + ("*" if r["gflop_unknown_nodes"] else "")]
            for b in r["by_threads"]:
                row += [f"{b['epctx'][ep]['gflops']:.1f}" for ep in eps]
                row += [f"{b['ort_gflops']:.1f}"]
            rows.append(row)
        lines.append("")
        lines += render(rows)
        lines.append("GFLOP/s: Conv, ConvTranspose, MatMul and Gemm work by ONNX shape inference "
                     "over the median run time (* some nodes of unknown shape not counted)")
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="peer_bench.py", description=__doc__.split("\n")[0])
    p.add_argument("--build", help="host build tree (sets the paths below)")
    p.add_argument("--cache", help="real-models cache (fetch_models.sh + ort_reference.js)")
    p.add_argument("--tiny", help="folder gen_tiny_model.py wrote")
    p.add_argument("--compile", help="epctx-compile")
    p.add_argument("--epctx-worker", help="peer-bench-epctx")
    p.add_argument("--ort-worker", help="peer-bench-ort")
    p.add_argument("--baseline-worker",
                   help="another build's peer-bench-epctx, run beside this one on the same "
                        "packages (what got faster or slower, in the same sitting)")
    p.add_argument("--ort-lib", help="libonnxruntime.so.1 (default: onnxruntime-node's in the cache)")
    p.add_argument("--work", help="where compiled models go")
    p.add_argument("--zoo", help="the generated zoo (gen_torch_models.py + references)")
    p.add_argument("--ep", default="vnpu,none",
                   help="epctx-compile backends, comma-separated (default vnpu,none)")
    p.add_argument("--threads", default="1,2", help="ORT intra-op thread counts (default 1,2)")
    p.add_argument("--models", default="all",
                   help="names, or the groups all, real, zoo, int8, gemm, quick (default all)")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--round-ms", type=float, default=300.0, help="time per worker per round")
    p.add_argument("--max-runs", type=int, default=2000, help="most runs per worker per round")
    p.add_argument("--quick", action="store_true", help="3 rounds of 20 ms: checks it works")
    p.add_argument("--json-out", help="also write the JSON document here")
    cfg = p.parse_args(argv)
    if cfg.quick:
        cfg.rounds, cfg.round_ms, cfg.max_runs = 3, 20.0, 50
    b = cfg.build
    defaults = {
        "cache": b and os.path.join(b, "real-models-cache"),
        "tiny": b and os.path.join(b, "tests", "bench", "tiny"),
        "compile": b and os.path.join(b, "host_tools", "epctx-compile"),
        "epctx_worker": b and os.path.join(b, "tests", "bench", "peer-bench-epctx"),
        "ort_worker": b and os.path.join(b, "tests", "bench", "peer-bench-ort"),
        "work": b and os.path.join(b, "tests", "bench", "peer-work"),
        "zoo": b and os.path.join(b, "tests", "bench", "zoo"),
    }
    for key, value in defaults.items():
        if getattr(cfg, key) is None:
            if value is None:
                p.error(f"--{key.replace('_', '-')} or --build is required")
            setattr(cfg, key, value)
    if cfg.ort_lib is None:
        found = sorted(glob.glob(os.path.join(cfg.cache, "node_modules", "onnxruntime-node", "bin",
                                              "napi-v*", "linux", "x64", "libonnxruntime.so.1")))
        if not found:
            raise BenchError(f"no libonnxruntime.so.1 under {cfg.cache}/node_modules/"
                             "onnxruntime-node (run tests/real/fetch_models.sh)")
        cfg.ort_lib = found[-1]
    try:
        cfg.threads = [int(t) for t in cfg.threads.split(",")]
    except ValueError:
        p.error(f"--threads: expected a list like 1,2, found '{cfg.threads}'")
    if not cfg.threads or min(cfg.threads) < 1 or cfg.rounds < 1 or cfg.round_ms < 0:
        p.error("--threads, --rounds must be positive")
    cfg.eps = [e for e in cfg.ep.split(",") if e]
    if not cfg.eps or any(e not in ("vnpu", "none") for e in cfg.eps):
        p.error(f"--ep: expected vnpu, none or both, found '{cfg.ep}'")
    for key in ("compile", "epctx_worker", "ort_worker") + (
            ("baseline_worker",) if cfg.baseline_worker else ()):
        if not os.access(getattr(cfg, key), os.X_OK):
            raise BenchError(f"{getattr(cfg, key)}: not built (cmake --build ... --target "
                             f"{os.path.basename(getattr(cfg, key))})")
    return cfg


def main(argv):
    try:
        cfg = parse_args(argv)
        load_before = os.getloadavg()
        start = time.time()
        results = []
        for m in select_models(cfg, cfg.models):
            try:
                results.append(bench_model(cfg, m))
            except BenchError as e:
                results.append({"model": m[0], "group": m[1], "error": str(e)})
            print(f"peer_bench: {m[0]} {'FAILED' if results[-1].get('error') else 'done'}",
                  file=sys.stderr, flush=True)
        stats = summary(results, cfg.eps, cfg.threads)
        name, flags = cpu_info()
        doc = {
            "benchmark": "epctx-peer", "ort_library": cfg.ort_lib, "cpu": name, "cpu_flags": flags,
            "cpus": os.cpu_count(), "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(), "seconds": round(time.time() - start, 1),
            "rounds": cfg.rounds, "round_ms": cfg.round_ms, "quick": cfg.quick,
            "threads": cfg.threads, "eps": cfg.eps, "summary": stats, "models": results,
        }
    except BenchError as e:
        print(f"peer_bench.py: error: {e}", file=sys.stderr)
        return 1
    print(table(results, cfg.eps, cfg.threads, stats))
    print(json.dumps(doc, indent=1))
    if cfg.json_out:
        with open(cfg.json_out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    failed = [r["model"] for r in results if r.get("error")]
    if failed:
        print(f"peer_bench.py: error: {len(failed)} model(s) failed: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
