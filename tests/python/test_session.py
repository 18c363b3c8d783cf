# SPDX-License-Identifier: Apache-2.0
"""epctx.InferenceSession against numpy: inputs, outputs, types, errors,
options and metadata, on models the tests build (models.py)."""
import threading
import tracemalloc

import numpy as np
import pytest
from onnx import TensorProto

import epctx
import models


@pytest.fixture(scope="module")
def four_outputs(tmp_path_factory):
    return models.two_outputs_model(tmp_path_factory.mktemp("m") / "four.onnx")


@pytest.fixture(scope="module")
def sess(four_outputs):
    return epctx.InferenceSession(four_outputs)


def test_inputs_and_outputs_are_described_as_ort_node_args(sess):
    (x,) = sess.get_inputs()
    assert (x.name, x.type, x.shape) == ("x", "tensor(float)", [None, 4])
    outs = [(o.name, o.type, o.shape) for o in sess.get_outputs()]
    assert outs == [("sum", "tensor(float)", [None, 4]), ("neg", "tensor(float)", [None, 4]),
                    ("flag", "tensor(bool)", [None, 4]), ("count", "tensor(int64)", [2])]


def test_run_none_returns_every_output_in_order_as_numpy(sess):
    x = np.array([[1, -2, 3, -4], [0.5, 0, -0.5, 2]], np.float32)
    s, n, f, c = sess.run(None, {"x": x})
    np.testing.assert_array_equal(s, x + 1)
    np.testing.assert_array_equal(n, -x)
    assert f.dtype == np.bool_ and f.tolist() == (x > 0).tolist()
    assert c.dtype == np.int64 and c.tolist() == [2, 4]
    assert s.dtype == np.float32 and s.shape == (2, 4)
    assert len(sess.run([], {"x": x})) == 4  # [] is every output too, as in ORT


def test_run_subset_of_outputs_in_the_order_asked(sess):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    count, neg = sess.run(["count", "neg"], {"x": x})
    assert count.tolist() == [3, 4]
    np.testing.assert_array_equal(neg, -x)


def test_outputs_own_their_tensor_without_a_copy(sess):
    (s,) = sess.run(["sum"], {"x": np.zeros((2, 4), np.float32)})
    # The array views the epctx tensor's memory and keeps it through its
    # base (a capsule that releases the tensor), instead of owning a copy.
    assert not s.flags.owndata
    assert type(s.base).__name__ == "PyCapsule"
    s[0, 0] = 7.0  # writable: the caller owns the output
    assert s[0, 0] == 7.0


def test_contiguous_input_is_borrowed_not_copied():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = epctx.OrtValue.ortvalue_from_numpy(a)
    assert v.data_ptr() == a.ctypes.data  # the tensor is the array's memory
    assert v.data_type() == "tensor(float)" and v.shape() == (2, 3)


def test_run_reads_contiguous_inputs_in_place(tmp_path):
    # numpy reports its buffers to tracemalloc; the outputs come from the
    # runtime's allocator, which it does not see. So the peak of a run is
    # what the binding allocates in Python: no 4 MiB copy for contiguous
    # inputs, one per input for strided ones (the control: the measure
    # does see copies).
    s = epctx.InferenceSession(models.add_model(tmp_path / "big.onnx", shape=(1024, 1024)))
    a = np.ones((1024, 1024), np.float32)
    wide = np.ones((1024, 2048), np.float32)
    s.run(None, {"a": a, "b": a})  # first run: the plan settles outside the measure
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        (y,) = s.run(None, {"a": a, "b": a})
        in_place = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        s.run(None, {"a": wide[:, ::2], "b": wide[:, 1::2]})
        copied = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert y[0, 0] == 2.0
    assert in_place < 256 * 1024, in_place
    assert copied >= 2 * a.nbytes, copied


def test_strided_or_byteswapped_input_is_copied_contiguous():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    v = epctx.OrtValue.ortvalue_from_numpy(a)
    assert v.data_ptr() != a.ctypes.data
    np.testing.assert_array_equal(v.numpy(), a)
    b = np.arange(4, dtype=">f4")
    vb = epctx.OrtValue.ortvalue_from_numpy(b)
    assert vb.numpy().dtype == np.float32 and vb.numpy().tolist() == [0, 1, 2, 3]


def test_run_takes_ort_values_strided_arrays_and_lists(sess):
    x = np.arange(16, dtype=np.float32).reshape(4, 4)
    (y,) = sess.run(["neg"], {"x": epctx.OrtValue.ortvalue_from_numpy(x)})
    np.testing.assert_array_equal(y, -x)
    (y,) = sess.run(["neg"], {"x": x[::2]})  # not contiguous: copied once
    np.testing.assert_array_equal(y, -x[::2])
    (y,) = sess.run(["neg"], {"x": [[1, 2, 3, 4]]})  # a list: the declared type
    assert y.dtype == np.float32 and y.tolist() == [[-1, -2, -3, -4]]


@pytest.mark.parametrize("onnx_type,np_type", [
    (TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64),
    (TensorProto.INT32, np.int32), (TensorProto.INT64, np.int64),
    (TensorProto.FLOAT16, np.float16), (TensorProto.UINT8, np.uint8),
    (TensorProto.INT8, np.int8)])
def test_numpy_types_round_trip(tmp_path, onnx_type, np_type):
    s = epctx.InferenceSession(models.add_model(tmp_path / "add.onnx", onnx_type))
    a = np.array([[1, 2, 3], [4, 5, 6]], np_type)
    b = np.array([[6, 5, 4], [3, 2, 1]], np_type)
    (y,) = s.run(None, {"a": a, "b": b})
    assert y.dtype == np_type
    np.testing.assert_array_equal(y, a + b)


@pytest.mark.parametrize("np_type,ort_type", [
    (np.float32, "tensor(float)"), (np.float64, "tensor(double)"),
    (np.float16, "tensor(float16)"), (np.int8, "tensor(int8)"), (np.uint8, "tensor(uint8)"),
    (np.int16, "tensor(int16)"), (np.uint16, "tensor(uint16)"), (np.int32, "tensor(int32)"),
    (np.uint32, "tensor(uint32)"), (np.int64, "tensor(int64)"), (np.uint64, "tensor(uint64)"),
    (np.bool_, "tensor(bool)")])
def test_every_numpy_type_maps_to_its_ort_type_string(np_type, ort_type):
    assert epctx.OrtValue.ortvalue_from_numpy(np.zeros(3, np_type)).data_type() == ort_type


def test_numpy_type_without_tensor_type_raises_not_implemented(sess):
    with pytest.raises(epctx.NotImplemented, match="complex64"):
        sess.run(None, {"x": np.zeros((1, 4), np.complex64)})


def test_wrong_input_name_raises_invalid_argument(sess):
    with pytest.raises(epctx.InvalidArgument) as e:
        sess.run(None, {"nope": np.zeros((1, 4), np.float32)})
    assert e.value.code == 2 and e.value.code_name == "INVALID_ARGUMENT"
    assert "'nope' is not an input of the model" in e.value.message
    assert isinstance(e.value, epctx.EpctxError) and isinstance(e.value, RuntimeError)


def test_wrong_input_type_raises_invalid_argument_naming_both_types(sess):
    with pytest.raises(epctx.EpctxError) as e:
        sess.run(None, {"x": np.zeros((1, 4), np.float64)})
    assert e.value.code == 2
    assert "input 'x'" in e.value.message
    assert "Actual: (tensor(double)), expected: (tensor(float))" in e.value.message


def test_wrong_input_shape_raises_invalid_argument(sess):
    with pytest.raises(epctx.EpctxError) as e:
        sess.run(None, {"x": np.zeros((2, 5), np.float32)})
    assert e.value.code == 2, str(e.value)
    assert "input 'x': expected shape [-1,4] (-1 = any), found [2,5]" in e.value.message


def test_missing_input_raises_invalid_argument(tmp_path):
    s = epctx.InferenceSession(models.add_model(tmp_path / "add.onnx"))
    with pytest.raises(epctx.InvalidArgument):
        s.run(None, {"a": np.zeros((2, 3), np.float32)})


def test_wrong_output_name_raises_invalid_argument(sess):
    with pytest.raises(epctx.InvalidArgument, match="'nope' is not an output"):
        sess.run(["nope"], {"x": np.zeros((1, 4), np.float32)})


def test_missing_model_raises_with_the_no_such_file_code(tmp_path):
    with pytest.raises(epctx.EpctxError) as e:
        epctx.InferenceSession(str(tmp_path / "absent.onnx"))
    assert e.value.code == 3 and e.value.code_name == "NO_SUCHFILE"
    assert "absent.onnx" in e.value.message


def test_model_from_bytes_runs(four_outputs):
    with open(four_outputs, "rb") as f:
        s = epctx.InferenceSession(f.read())
    (y,) = s.run(["sum"], {"x": np.ones((1, 4), np.float32)})
    assert y.tolist() == [[2, 2, 2, 2]]


def test_config_entries_as_dict_and_session_options(four_outputs):
    s = epctx.InferenceSession(four_outputs, {"epctx.load_mode": "read",
                                              "session.intra_op_num_threads": 1})
    assert s.get_session_options().config == {"epctx.load_mode": "read",
                                              "session.intra_op_num_threads": "1"}
    o = epctx.SessionOptions()
    o.intra_op_num_threads = 2
    o.add_session_config_entry("epctx.advise", "willneed")
    assert o.get_session_config_entry("epctx.advise") == "willneed"
    assert o.intra_op_num_threads == 2
    (y,) = epctx.InferenceSession(four_outputs, o).run(["neg"], {"x": np.ones((1, 4), np.float32)})
    assert y.tolist() == [[-1, -1, -1, -1]]


def test_unknown_config_key_raises_invalid_argument_naming_it(four_outputs):
    with pytest.raises(epctx.InvalidArgument, match="no.such.key"):
        epctx.InferenceSession(four_outputs, {"no.such.key": "1"})
    with pytest.raises(epctx.InvalidArgument, match="no.such.key"):
        epctx.SessionOptions().add_session_config_entry("no.such.key", "1")
    with pytest.raises(epctx.InvalidArgument):
        epctx.SessionOptions().add_session_config_entry("epctx.load_mode", "sideways")
    with pytest.raises(epctx.InvalidArgument):
        epctx.SessionOptions().get_session_config_entry("epctx.load_mode")


def test_session_config_keys_lists_ort_and_epctx_keys():
    keys = epctx.session_config_keys()
    assert keys["ep.context_file_path"] == {"scope": "BOTH", "default": ""}
    assert keys["epctx.load_mode"] == {"scope": "RUN", "default": "mmap"}
    assert "session.intra_op_num_threads" in keys


def test_modelmeta_fields(sess):
    m = sess.get_modelmeta()
    assert (m.producer_name, m.producer_version, m.domain) == (
        "epctx-python-tests", "7.1", "ai.epctx.test")
    assert m.graph_name == "four_outputs" and m.version == 42 and m.ir_version > 0
    assert m.custom_metadata_map == {"author": "tests/python", "purpose": "metadata"}
    assert m.description == ""


def test_providers_version_and_code_names(four_outputs):
    assert epctx.get_available_providers() == ["EpctxExecutionProvider", "CPUExecutionProvider"]
    s = epctx.InferenceSession(four_outputs, providers=["CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    with pytest.raises(ValueError, match="CUDAExecutionProvider"):
        epctx.InferenceSession(four_outputs, providers=["CUDAExecutionProvider"])
    assert epctx.__version__.count(".") == 2 and epctx.get_version_string() == epctx.__version__
    assert epctx.code_name(131) == "RUN_DEADLINE_EXCEEDED"


def test_one_session_runs_from_many_threads_at_once(sess):
    xs = [np.full((i + 1, 4), i, np.float32) for i in range(8)]
    results = [None] * len(xs)

    def run(i):
        for _ in range(20):
            results[i] = sess.run(["sum"], {"x": xs[i]})[0]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, y in zip(xs, results):
        np.testing.assert_array_equal(y, x + 1)


def test_add_decryption_key_checks_id_and_length():
    with pytest.raises(epctx.InvalidArgument, match="32-byte data key"):
        epctx.add_decryption_key("py-key", b"short")
    with pytest.raises(epctx.InvalidArgument, match="key id"):
        epctx.add_decryption_key("not an id", bytes(32))
    epctx.add_decryption_key("py-key", bytes(range(32)))
    epctx.add_decryption_key("py-key", bytes(range(32)))  # the same key again
    assert epctx.code_name(124) == "KEY_MISSING"
    assert epctx.errors.DecryptionFailed.code == 125
