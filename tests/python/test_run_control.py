# SPDX-License-Identifier: Apache-2.0
"""Runs stopped by RunOptions (terminate, deadline) and the GIL released
while a run goes on, on a Loop model whose length the test picks
(models.slow_model: one MatMul step per iteration)."""
import threading
import time

import numpy as np
import pytest

import epctx
import models

SIZE = 128


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    path = models.slow_model(tmp_path_factory.mktemp("slow") / "slow.onnx", SIZE)
    # One thread: the run's length does not depend on the machine's cores.
    return epctx.InferenceSession(path, {"session.intra_op_num_threads": "1"})


def feed(iterations):
    x = np.random.default_rng(1).standard_normal((SIZE, SIZE)).astype(np.float32)
    return {"x": x, "n": np.array(iterations, np.int64)}, x


def iterations_for(slow, seconds):
    """Iterations that take about `seconds` on this machine."""
    f, _ = feed(50)
    t0 = time.monotonic()
    slow.run(None, f)
    per = (time.monotonic() - t0) / 50
    return max(100, int(seconds / max(per, 1e-6)))


def test_loop_model_computes_identity(slow):
    f, x = feed(3)
    (y,) = slow.run(None, f)
    np.testing.assert_allclose(y, x, rtol=1e-6, atol=1e-6)


def test_terminate_set_before_run_stops_it(slow):
    ro = epctx.RunOptions()
    ro.terminate = True
    f, _ = feed(10)
    with pytest.raises(epctx.RunTerminated) as e:
        slow.run(None, f, ro)
    assert e.value.code == 130 and e.value.code_name == "RUN_TERMINATED"
    ro.terminate = False  # ORT's RunOptionsUnsetTerminate: runs go on again
    (y,) = slow.run(None, f, ro)
    assert y.shape == (SIZE, SIZE)


def test_terminate_from_another_thread_stops_a_long_run(slow):
    n = iterations_for(slow, 5.0)
    ro = epctx.RunOptions()
    threading.Timer(0.2, lambda: setattr(ro, "terminate", True)).start()
    f, _ = feed(n)
    t0 = time.monotonic()
    with pytest.raises(epctx.RunTerminated):
        slow.run(None, f, ro)
    assert time.monotonic() - t0 < 2.5  # well before the 5 s the run would take


def test_deadline_stops_a_long_run(slow):
    n = iterations_for(slow, 5.0)
    ro = epctx.RunOptions()
    ro.timeout_ms = 100
    assert ro.timeout_us == 100000
    f, _ = feed(n)
    t0 = time.monotonic()
    with pytest.raises(epctx.RunDeadlineExceeded) as e:
        slow.run(None, f, ro)
    assert e.value.code == 131
    assert time.monotonic() - t0 < 2.5
    (y,) = slow.run(None, feed(3)[0], ro)  # a short run meets the deadline
    assert y.shape == (SIZE, SIZE)


def test_gil_is_released_during_run(slow):
    n = iterations_for(slow, 1.5)
    f, _ = feed(n)
    done = threading.Event()
    took = []

    def run():
        t0 = time.monotonic()
        slow.run(None, f)
        took.append(time.monotonic() - t0)
        done.set()

    t = threading.Thread(target=run)
    t.start()
    # This thread keeps running Python code while the other one runs the
    # model: the longest pause between two of its steps is far below the
    # run's length (with the GIL held it would be the whole run).
    stamps = [time.monotonic()]
    while not done.is_set():
        time.sleep(0.001)
        stamps.append(time.monotonic())
    t.join()
    gap = max(b - a for a, b in zip(stamps, stamps[1:]))
    assert took[0] > 0.3, f"the run took {took[0]:.3f} s, too short to tell"
    assert gap < took[0] / 4, f"longest pause {gap:.3f} s during a {took[0]:.3f} s run"
    assert len(stamps) > 50
