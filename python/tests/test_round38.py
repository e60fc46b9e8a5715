"""Red-team round 38 (docs/redteam.md), the Python face: what an onnxruntime user does that
fusor got wrong. Models are written by hand (test_fusor.onnx_model), so no onnx package is needed."""
import os
import signal

import numpy as np
import pytest

import fusor
from test_fusor import onnx_model

ADD = onnx_model([("Add", ["x", "y"], ["z"])], [("x", 1, [2, 3]), ("y", 1, [2, 3])], [("z", 1, [2, 3])])
FEED = {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "y": np.full((2, 3), 0.5, np.float32)}


def test_empty_output_names_return_every_output():
    # Was []: onnxruntime's run treats [] like None.
    s = fusor.Session(ADD, backend="cpu")
    (z,) = s.run([], FEED)
    np.testing.assert_array_equal(z, FEED["x"] + FEED["y"])


def test_node_args_are_copies():
    # Editing a returned shape list rewrote the session's own description.
    s = fusor.Session(ADD, backend="cpu")
    for get in (s.get_inputs, s.get_outputs):
        first = get()
        first[0].shape[0] = 8
        assert get()[0].shape == [2, 3]


def test_bfloat16_outputs_are_ml_dtypes_arrays_or_one_error():
    # Was a 0-d object array holding a nanobind ndarray.
    m = onnx_model([("Cast", ["x"], ["b"], {"to": 16})], [("x", 1, [2, 3])], [("b", 16, [2, 3])])
    s = fusor.Session(m, backend="cpu")
    x = np.array([[1.0, -2.5, 3.140625], [1e-3, 65504.0, -0.0]], np.float32)
    try:
        import ml_dtypes
    except ImportError:
        with pytest.raises(fusor.Unsupported, match="ml_dtypes"):
            s.run(None, {"x": x})
        return
    (b,) = s.run(None, {"x": x})
    assert b.dtype == ml_dtypes.bfloat16 and b.shape == (2, 3)
    np.testing.assert_array_equal(b.astype(np.float32), x.astype(ml_dtypes.bfloat16).astype(np.float32))


def test_an_output_past_numpys_rank_is_one_error():
    # Rank 65..199 came back as an object array, 200+ aborted the process (nanobind).
    m = onnx_model([("Expand", ["x", "s"], ["y"])], [("x", 1, [1]), ("s", 7, [70])], [("y", 1, None)])
    s = fusor.Session(m, backend="cpu")
    with pytest.raises(fusor.Error, match="rank 70 is over 64"):
        s.run(None, {"x": np.ones(1, np.float32), "s": np.ones(70, np.int64)})


@pytest.mark.parametrize("call, msg", [
    (lambda: fusor.conform(None), "conform: paths must be a path or a list of them, got NoneType"),
    (lambda: fusor.conform(5), "conform: paths must be a path or a list of them, got int"),
    (lambda: fusor.conform(".", backends=None), "conform: backends must be a backend name or a list of them"),
])
def test_tool_arguments_that_are_not_lists_are_fusor_errors(call, msg):
    with pytest.raises(fusor.Error, match=msg):
        call()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_vulkan_in_a_forked_child_is_an_error_not_a_hang():
    # The child of a parent that had run a Vulkan session waited forever inside the driver.
    if "vulkan" not in {d["backend"] for d in fusor.devices()}:
        pytest.skip("no Vulkan device")
    s = fusor.Session(ADD, backend="vulkan")
    expected = s.run(None, FEED)[0]
    np.testing.assert_array_equal(expected, FEED["x"] + FEED["y"])
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only when both uses raise fusor.Error naming the fork
        signal.alarm(30)
        code = 0
        for use in (lambda: s.run(None, FEED), lambda: fusor.Session(ADD, backend="vulkan").run(None, FEED)):
            try:
                use()
                code = 1
            except fusor.Error as e:
                code = code if "fork" in str(e) else 2
            except BaseException:
                code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    np.testing.assert_array_equal(s.run(None, FEED)[0], expected)  # the parent's session still runs


def test_explain_reads_test_data_set_0_and_says_when_inputs_were_random(tmp_path):
    # A Reshape whose target comes from an input: random inputs made up a target ("shape entry
    # 1 is 0 ...") that named no input; test_data_set_0 next to the model was ignored.
    m = onnx_model([("Reshape", ["x", "s"], ["y"])], [("x", 1, [2, 6]), ("s", 7, [2])], [("y", 1, None)])
    (tmp_path / "model.onnx").write_bytes(m)
    with pytest.raises(fusor.Error, match=r"^\[shape\] .*\(with random inputs, seed 0: a shape that depends on an input's values"):
        fusor.explain(tmp_path)
    (tmp_path / "test_data_set_0").mkdir()
    np.save(tmp_path / "test_data_set_0" / "input_0.npy", np.arange(12, dtype=np.float32).reshape(2, 6))
    np.save(tmp_path / "test_data_set_0" / "input_1.npy", np.array([3, 4], np.int64))
    plan = fusor.explain(tmp_path)
    assert plan["kernels"] and plan["onnx_nodes"] == 1


def test_bfloat16_outputs_feed_another_session():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    to_bf16 = fusor.Session(onnx_model([("Cast", ["x"], ["b"], {"to": 16})], [("x", 1, [2, 3])], [("b", 16, [2, 3])]), backend="cpu")
    back = fusor.Session(onnx_model([("Cast", ["b"], ["x"], {"to": 1})], [("b", 16, [2, 3])], [("x", 1, [2, 3])]), backend="cpu")
    x = np.array([[1.0, -2.5, 3.140625], [1e-3, 65504.0, -0.0]], np.float32)
    (b,) = to_bf16.run(None, {"x": x})
    (y,) = back.run(None, {"b": b})
    np.testing.assert_array_equal(y, x.astype(ml_dtypes.bfloat16).astype(np.float32))
