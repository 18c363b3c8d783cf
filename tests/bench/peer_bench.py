# SPDX-License-Identifier: Apache-2.0
"""Peer benchmark: epctx against ONNX Runtime 1.30 on the same CPU, same
inputs, one sitting.

For each model the driver compiles the ONNX model with epctx-compile, starts
one worker process per contender (peer-bench-epctx on the _ctx.onnx,
peer-bench-ort on the original model at each intra-op thread count), lets
each create its session and run once, then alternates rounds between them:
in round r every worker runs for --round-ms (at least one run), in an order
that rotates each round, so slow drifts of the shared machine (other load,
frequency) hit every contender alike. Every run is timed on its own inside
the worker (peer_worker.h has the protocol).

Reported per model: the median run time of each contender over all its runs,
and the paired ratio epctx / ORT: the median over rounds of (epctx's median
in round r) / (ORT's median in round r). Output: a table, then one JSON
document (also written to --json-out). No number is judged here.

When the runtime knows session.intra_op_num_threads, epctx runs at the same
thread counts as ORT; until then it runs on the caller's thread and that one
measurement is paired with ORT at every thread count.

usage: peer_bench.py --build BUILD_DIR [--quick] [--rounds N] [--round-ms MS]
                     [--ep vnpu|none] [--threads 1,2] [--models a,b,...]
                     [--json-out FILE]
BUILD_DIR is a host build in which `ctest -R peer_bench` has run once (it
fetches the models and ONNX Runtime, builds peer-bench-ort and makes tiny3).
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

REAL_MODELS = ["melspectrogram", "embedding_model", "hello_deepa", "ocr_cls", "ocr_det"]
TINY = "tiny3"


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


def compile_model(cfg, name, onnx_path, shapes):
    work = os.path.join(cfg.work, f"{name}_{cfg.ep}")
    ctx = os.path.join(work, f"{name}_ctx.onnx")
    newest_input = max(os.path.getmtime(onnx_path), os.path.getmtime(cfg.compile))
    if os.path.exists(ctx) and os.path.getmtime(ctx) >= newest_input:
        return ctx
    os.makedirs(work, exist_ok=True)
    argv = [cfg.compile, onnx_path, "-o", ctx, "--ep", cfg.ep, "--embed-mode", "0",
            "--force", "--quiet"]
    for s in shapes:
        argv += ["--input-shape", s]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(ctx):
        msg = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
        raise BenchError(f"epctx-compile {name}: {msg}")
    return ctx


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


def model_paths(cfg, name):
    if name == TINY:
        return os.path.join(cfg.tiny, f"{TINY}.onnx"), os.path.join(cfg.tiny, TINY)
    return (os.path.join(cfg.cache, "models", f"{name}.onnx"),
            os.path.join(cfg.cache, "ref", name))


def bench_model(cfg, name):
    onnx_path, ref = model_paths(cfg, name)
    if not os.path.exists(onnx_path):
        raise BenchError(f"{onnx_path}: missing (run `ctest -R peer_bench` in the build first)")
    inputs, shapes = read_manifest(os.path.join(ref, "manifest.txt"))
    ctx = compile_model(cfg, name, onnx_path, shapes)
    in_args = []
    for i, n in enumerate(inputs):
        in_args += ["--input", f"{n}={os.path.join(ref, f'input_{i}.npy')}"]

    workers = []
    try:
        first = Worker("epctx", "epctx", cfg.threads[0],
                       [cfg.epctx_worker, ctx, "--threads", str(cfg.threads[0])] + in_args)
        workers.append(first)
        epctx_threaded = first.reported_threads != "caller"
        epctx_by_threads = {}
        for t in cfg.threads:
            if t == cfg.threads[0]:
                epctx_by_threads[t] = first
            elif epctx_threaded:
                w = Worker(f"epctx/{t}t", "epctx", t,
                           [cfg.epctx_worker, ctx, "--threads", str(t)] + in_args)
                workers.append(w)
                epctx_by_threads[t] = w
            else:
                epctx_by_threads[t] = first
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

    result = {"model": name, "ep": cfg.ep, "gflop": None, "gflop_unknown_nodes": None,
              "by_threads": []}
    flops = model_flops(onnx_path, shapes)
    if flops:
        result["gflop"], result["gflop_unknown_nodes"] = flops[0] / 1e9, flops[1]
    for t in cfg.threads:
        e, o = epctx_by_threads[t], ort_by_threads[t]
        result["by_threads"].append({
            "threads": t,
            "epctx_median_ms": statistics.median(e.times) / 1e3,
            "ort_median_ms": statistics.median(o.times) / 1e3,
            "ratio": paired_ratio(e, o),
            "epctx_runs": len(e.times), "ort_runs": len(o.times),
            "epctx_create_ms": e.create_ms, "ort_create_ms": o.create_ms,
            "epctx_threads": e.reported_threads,
        })
        if result["gflop"]:
            b = result["by_threads"][-1]
            b["epctx_gflops"] = result["gflop"] / (b["epctx_median_ms"] / 1e3)
            b["ort_gflops"] = result["gflop"] / (b["ort_median_ms"] / 1e3)
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


def table(results, threads):
    head = ["model", "ep", "GFLOP"]
    for t in threads:
        head += [f"epctx {t}t ms", f"ORT {t}t ms", f"ratio {t}t"]
    rows = [head]
    caller = False
    for r in results:
        row = [r["model"], r["ep"], f"{r['gflop']:.3g}" if r["gflop"] else "-"]
        for b in r["by_threads"]:
            mark = "*" if b["epctx_threads"] == "caller" and b["threads"] != 1 else ""
            caller |= bool(mark)
            row += [ms(b["epctx_median_ms"]) + mark, ms(b["ort_median_ms"]),
                    f"{b['ratio']:.2f}"]
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(row, widths))) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if caller:
        lines.append("* epctx has no session.intra_op_num_threads yet: runs on the caller's "
                     "thread, the same measurement paired with ORT at each thread count")
    lines.append("ratio: median over rounds of epctx/ORT round medians (< 1: epctx faster)")
    for r in results:
        if r["gflop"] and r["gflop"] >= 0.01:
            rates = ", ".join(f"ORT {b['threads']}t {b['ort_gflops']:.1f}" for b in r["by_threads"])
            partial = (f" ({r['gflop_unknown_nodes']} node(s) of unknown shape not counted)"
                       if r["gflop_unknown_nodes"] else "")
            lines.append(f"GFLOP/s {r['model']}: epctx {r['by_threads'][0]['epctx_gflops']:.1f}, "
                         f"{rates}{partial}")
    return "\n".join(lines)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="peer_bench.py", description=__doc__.split("\n")[0])
    p.add_argument("--build", help="host build tree (sets the paths below)")
    p.add_argument("--cache", help="real-models cache (fetch_models.sh + ort_reference.js)")
    p.add_argument("--tiny", help="folder gen_tiny_model.py wrote")
    p.add_argument("--compile", help="epctx-compile")
    p.add_argument("--epctx-worker", help="peer-bench-epctx")
    p.add_argument("--ort-worker", help="peer-bench-ort")
    p.add_argument("--ort-lib", help="libonnxruntime.so.1 (default: onnxruntime-node's in the cache)")
    p.add_argument("--work", help="where compiled models go")
    p.add_argument("--ep", default="vnpu", choices=["vnpu", "none"])
    p.add_argument("--threads", default="1,2", help="ORT intra-op thread counts (default 1,2)")
    p.add_argument("--models", default=",".join([TINY] + REAL_MODELS))
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
    cfg.models = [m for m in cfg.models.split(",") if m]
    for m in cfg.models:
        if m != TINY and m not in REAL_MODELS:
            p.error(f"--models: unknown model '{m}' (known: {', '.join([TINY] + REAL_MODELS)})")
    for key in ("compile", "epctx_worker", "ort_worker"):
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
        for m in cfg.models:
            results.append(bench_model(cfg, m))
            print(f"peer_bench: {m} done", file=sys.stderr, flush=True)
        name, flags = cpu_info()
        doc = {
            "benchmark": "epctx-peer", "ort_library": cfg.ort_lib, "cpu": name, "cpu_flags": flags,
            "cpus": os.cpu_count(), "loadavg_before": load_before,
            "loadavg_after": os.getloadavg(), "seconds": round(time.time() - start, 1),
            "rounds": cfg.rounds, "round_ms": cfg.round_ms, "quick": cfg.quick,
            "threads": cfg.threads, "models": results,
        }
    except BenchError as e:
        print(f"peer_bench.py: error: {e}", file=sys.stderr)
        return 1
    print(table(results, cfg.threads))
    print(json.dumps(doc, indent=1))
    if cfg.json_out:
        with open(cfg.json_out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
