"""Keeps the peer benchmark working: runs peer_bench.py once in --quick mode
on the build's workers and checks the table and JSON it prints (shape and
sanity of the values, never speed), plus the workers' and driver's errors.

usage: test_peer_bench.py PEER_BENCH_PY BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

MODELS = ["tiny3", "melspectrogram", "embedding_model", "hello_deepa", "ocr_cls", "ocr_det"]
PEER_BENCH, BUILD = None, None


class QuickRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.json_path = os.path.join(cls.tmp.name, "peer.json")
        cls.proc = subprocess.run(
            [sys.executable, PEER_BENCH, "--build", BUILD, "--quick", "--json-out", cls.json_path],
            capture_output=True, text=True, timeout=800)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_quick_run_exits_zero(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)

    def test_table_has_one_row_per_model_with_both_thread_counts(self):
        lines = self.proc.stdout.splitlines()
        head = lines[0].split()
        self.assertEqual(head[:3], ["model", "ep", "GFLOP"])
        self.assertIn("1t", head)
        self.assertIn("2t", head)
        rows = {ln.split()[0]: ln.split() for ln in lines[2:2 + len(MODELS)]}
        self.assertEqual(sorted(rows), sorted(MODELS))
        for name, cells in rows.items():
            self.assertEqual(cells[1], "vnpu", name)
            # GFLOP, then epctx, ORT, ratio at 1 and at 2 threads.
            self.assertEqual(len(cells), 9, name)
            self.assertEqual(cells[2] == "-", name == "tiny3", name)
            for c in cells[3:]:
                self.assertGreater(float(c.rstrip("*")), 0, name)

    def test_json_on_stdout_equals_the_file(self):
        out = self.proc.stdout
        printed = json.loads(out[out.index("\n{") + 1:])
        with open(self.json_path) as f:
            self.assertEqual(printed, json.load(f))

    def test_json_has_positive_medians_and_paired_ratios(self):
        with open(self.json_path) as f:
            doc = json.load(f)
        self.assertEqual(doc["benchmark"], "epctx-peer")
        self.assertTrue(doc["quick"])
        self.assertEqual(doc["threads"], [1, 2])
        self.assertEqual([m["model"] for m in doc["models"]], MODELS)
        for m in doc["models"]:
            self.assertEqual([b["threads"] for b in m["by_threads"]], [1, 2])
            # Conv/MatMul work from ONNX shape inference (tiny3 has none).
            if m["model"] == "tiny3":
                self.assertEqual(m["gflop"], 0)
            else:
                self.assertGreater(m["gflop"], 0, m["model"])
            for b in m["by_threads"]:
                for key in ("epctx_median_ms", "ort_median_ms", "ratio", "epctx_create_ms",
                            "ort_create_ms"):
                    self.assertGreater(b[key], 0, f"{m['model']} {key}")
                # Every round runs each worker at least once.
                self.assertGreaterEqual(b["epctx_runs"], doc["rounds"])
                self.assertGreaterEqual(b["ort_runs"], doc["rounds"])


class Errors(unittest.TestCase):
    def test_worker_rejects_a_malformed_request_with_one_line(self):
        ctx = os.path.join(BUILD, "tests", "bench", "peer-work", "tiny3_vnpu", "tiny3_ctx.onnx")
        npy = os.path.join(BUILD, "tests", "bench", "tiny", "tiny3", "input_0.npy")
        if not os.path.exists(ctx):
            subprocess.run([sys.executable, PEER_BENCH, "--build", BUILD, "--quick",
                            "--models", "tiny3"], capture_output=True, check=True)
        p = subprocess.run([os.path.join(BUILD, "tests", "bench", "peer-bench-epctx"), ctx,
                            "--input", f"x={npy}"], input="run 0 5\n", capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertTrue(p.stdout.startswith("ready create_ms="), p.stdout)
        err = p.stderr.strip().splitlines()
        self.assertEqual(len(err), 1, p.stderr)
        self.assertTrue(err[0].startswith("peer-bench-epctx: error: bad request 'run 0 5'"), err[0])

    def test_driver_names_a_missing_cache_in_one_line(self):
        p = subprocess.run([sys.executable, PEER_BENCH, "--build", BUILD, "--cache",
                            "/nonexistent/cache", "--models", "ocr_cls"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(p.stdout, "")
        self.assertRegex(p.stderr, r"^peer_bench.py: error: .*/nonexistent/cache.*\n$")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: test_peer_bench.py PEER_BENCH_PY BUILD_DIR")
    PEER_BENCH, BUILD = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
