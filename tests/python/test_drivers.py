# SPDX-License-Identifier: Apache-2.0
"""The process's env from Python: an NPU driver loaded from a shared
library (hal/samples/hello_npu, y = 2 x) serves the sessions created after
it; trusted keys and driver paths that fail raise with the runtime's code.
Its own process (CTest python_drivers): a loaded driver stays for the
process's life."""
import os

import numpy as np
import pytest

import epctx


def test_driver_library_serves_later_sessions():
    lib, gen = os.environ.get("EPCTX_HELLO_NPU"), os.environ.get("EPCTX_HAL_GEN")
    if not (lib and gen):
        pytest.skip("EPCTX_HELLO_NPU, EPCTX_HAL_GEN not set")
    model = os.path.join(gen, "hello_ctx.onnx")
    with pytest.raises(epctx.NotImplemented, match="hello_npu"):
        epctx.InferenceSession(model)  # no driver takes its EPContext node yet
    epctx.load_driver_library(lib)
    s = epctx.InferenceSession(model)
    x = np.arange(8, dtype=np.float32)
    (y,) = s.run(None, {"x": x})
    assert s.driver_node_count == 1
    np.testing.assert_array_equal(y, 2 * x)


def test_env_settings_that_fail_raise_with_the_code(tmp_path):
    with pytest.raises(epctx.NoSuchFile, match="libabsent.so"):
        epctx.load_driver_library(str(tmp_path / "libabsent.so"))
    with pytest.raises(epctx.KeyRejected):
        epctx.add_trusted_key(b"not a key")
