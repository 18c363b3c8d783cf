# SPDX-License-Identifier: Apache-2.0
"""epctx.compile over the compile library: the generated small CNN compiled
for vnpu, run from Python and compared with numpy's reference and with
epctx-run on the same package."""
import os
import subprocess

import numpy as np
import pytest

import epctx
import models


def case(models_dir, name):
    d = os.path.join(models_dir, name)
    return (os.path.join(d, "model.onnx"), np.load(os.path.join(d, "input_0.npy")),
            np.load(os.path.join(d, "expected_0.npy")))


def test_compile_for_vnpu_produces_a_package_that_runs(models_dir, tmp_path):
    model, x, expected = case(models_dir, "small_cnn")
    out = tmp_path / "small_cnn_ctx.onnx"
    report = epctx.compile(model, out, ep="vnpu")
    assert report.output_path == str(out) and out.exists()
    assert os.path.exists(report.binary_path) and report.binary_bytes > 0
    assert report.nodes_npu > 0 and report.partitions >= 1
    sess = epctx.InferenceSession(out)
    assert sess.driver_node_count == report.partitions
    (y,) = sess.run(None, {sess.get_inputs()[0].name: x})
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


def test_compiled_package_matches_epctx_run(models_dir, epctx_run, tmp_path):
    model, x, _ = case(models_dir, "small_cnn")
    out = tmp_path / "cnn_ctx.onnx"
    epctx.compile(model, out, embed_mode=1)
    (y,) = epctx.InferenceSession(out).run(None, {"x": x})
    np.save(tmp_path / "x.npy", x)
    subprocess.run([epctx_run, str(out), "-i", f"x={tmp_path / 'x.npy'}",
                    "-o", str(tmp_path / "cli")], check=True, capture_output=True)
    cli = np.load(tmp_path / "cli" / "probs.npy")
    np.testing.assert_array_equal(y, cli)


def test_compile_from_bytes_returns_the_model_in_memory(models_dir):
    model, x, expected = case(models_dir, "small_cnn")
    with open(model, "rb") as f:
        report = epctx.compile(f.read(), None, embed_mode=True)
    assert report.model_data and report.files_written == []
    (y,) = epctx.InferenceSession(report.model_data).run(None, {"x": x})
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)


def test_compile_errors_carry_the_compiler_code(models_dir, tmp_path):
    model, _, _ = case(models_dir, "small_cnn")
    with pytest.raises(epctx.InvalidArgument, match="no.such.key"):
        epctx.compile(model, tmp_path / "a_ctx.onnx", config={"no.such.key": "1"})
    with pytest.raises(epctx.EpctxError) as e:
        epctx.compile(str(tmp_path / "absent.onnx"), tmp_path / "b_ctx.onnx")
    assert e.value.code == 3 and "absent.onnx" in e.value.message
    with pytest.raises(TypeError, match="colour"):
        epctx.compile(model, tmp_path / "c_ctx.onnx", colour="blue")


def test_compile_for_cpu_only_runs_every_node_on_the_cpu(tmp_path):
    src = models.add_model(tmp_path / "add.onnx")
    report = epctx.compile(src, tmp_path / "add_ctx.onnx", ep="none")
    assert report.nodes_npu == 0 and report.nodes_cpu == 1
    s = epctx.InferenceSession(tmp_path / "add_ctx.onnx")
    a = np.ones((2, 3), np.float32)
    (y,) = s.run(None, {"a": a, "b": a})
    assert s.driver_node_count == 0 and y.tolist() == [[2] * 3] * 2


def test_missing_context_binary_is_invalid_graph_caused_by_no_such_file(models_dir, tmp_path):
    model, _, _ = case(models_dir, "small_cnn")
    report = epctx.compile(model, tmp_path / "cnn_ctx.onnx")
    os.remove(report.binary_path)
    with pytest.raises(epctx.InvalidGraph) as e:  # ORT's contract for a context that fails
        epctx.InferenceSession(tmp_path / "cnn_ctx.onnx")
    assert (e.value.code, e.value.cause, e.value.cause_name) == (10, 3, "NO_SUCHFILE")
    assert os.path.basename(report.binary_path) in e.value.message
