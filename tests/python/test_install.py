# SPDX-License-Identifier: Apache-2.0
"""`cmake --install <build> --component python` writes an importable
package: imported from the install folder alone (no build tree on the
path), it runs a model and compiles one."""
import os
import subprocess
import sys

import pytest


def test_installed_package_imports_and_runs(tmp_path):
    cmake, build, subdir = (os.environ.get(k) for k in
                            ("EPCTX_CMAKE", "EPCTX_BUILD_DIR", "EPCTX_PYTHON_INSTALL_DIR"))
    if not (cmake and build and subdir):
        pytest.skip("EPCTX_CMAKE, EPCTX_BUILD_DIR, EPCTX_PYTHON_INSTALL_DIR not set")
    prefix = tmp_path / "prefix"
    subprocess.run([cmake, "--install", build, "--component", "python", "--prefix", str(prefix)],
                   check=True, capture_output=True)
    site = prefix / subdir
    assert sorted(p.name.split(".")[0] for p in (site / "epctx").iterdir()) == [
        "__init__", "_epctx", "_epctx_compile", "errors"]
    here = os.path.dirname(os.path.abspath(__file__))
    script = f"""
import sys; sys.path.insert(0, {here!r})
import numpy as np, epctx, models
assert epctx.__file__.startswith({str(site)!r}), epctx.__file__
src = models.add_model({str(tmp_path / 'add.onnx')!r})
epctx.compile(src, {str(tmp_path / 'add_ctx.onnx')!r}, ep="none")
s = epctx.InferenceSession({str(tmp_path / 'add_ctx.onnx')!r})
a = np.ones((2, 3), np.float32)
print(s.run(None, {{"a": a, "b": a}})[0].sum())
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "12.0"
