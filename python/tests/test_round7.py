"""Red-team round 7 (docs/redteam.md), the Python face: rank-0 inputs and outputs keep rank 0
(np.ascontiguousarray made them shape (1,)), and initializers that graph.input also lists
(ONNX IR >= 4) may be fed by name (the fed value wins, else the initializer), as in
onnxruntime. Models are written here with the onnx package (skips without it)."""
import numpy as np
import pytest

import fusor

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

BACKENDS = ["ref", "cpu"] + (["vulkan"] if any(d["backend"] == "vulkan" for d in fusor.devices()) else [])


def model(nodes, inputs, outputs, inits=(), ir=8):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = ir
    return m.SerializeToString()


def scalar_neg(dtype):
    t = TensorProto.FLOAT if dtype == np.float32 else TensorProto.INT64
    return model([helper.make_node("Neg", ["x"], ["y"]), helper.make_node("Unsqueeze", ["y", "ax"], ["y1"])],
                 [helper.make_tensor_value_info("x", t, [])],
                 [helper.make_tensor_value_info("y", t, []), helper.make_tensor_value_info("y1", t, [1])],
                 [numpy_helper.from_array(np.array([0], np.int64), "ax")])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("make", [
    lambda v, dt: np.array(v, dt),          # a 0-d array
    lambda v, dt: dt(v),                    # a NumPy scalar
    lambda v, dt: np.asarray(dt(v)),        # 0-d from a scalar
    lambda v, dt: np.array([[v]], dt)[0, 0, ...],  # a 0-d view of a bigger array
])
def test_rank0_inputs_and_outputs_keep_rank_0(backend, make):
    for dt, v in ((np.float32, 3.0), (np.int64, -7)):
        s = fusor.Session(scalar_neg(dt), backend=backend)
        x = make(v, dt)
        y, y1 = s.run(None, {"x": x})
        assert y.shape == () and y.dtype == dt and y == -v
        assert y1.shape == (1,) and y1[0] == -v


def test_rank0_python_numbers():
    # Python ints are int64 (NumPy's default); a float is float64, which the float32 model refuses by name.
    s = fusor.Session(scalar_neg(np.int64), backend="ref")
    (y, _) = s.run(None, {"x": 5})
    assert y.shape == () and y == -5
    with pytest.raises(fusor.Error, match=r"input 'x' expects float32, got float64"):
        fusor.Session(scalar_neg(np.float32), backend="ref").run(None, {"x": 2.5})


def test_rank0_loop_trip_count_from_python():
    # y = Loop(M, cond) summing 1 M times: M and cond are the scalars a Loop takes.
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "one"], ["s_out"]), helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_in", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), helper.make_tensor_value_info("s_out", TensorProto.INT64, [])],
        [numpy_helper.from_array(np.array(1, np.int64), "one")])
    m = model([helper.make_node("Loop", ["M", "cond", "s0"], ["s"], body=body)],
              [helper.make_tensor_value_info("M", TensorProto.INT64, []), helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
              [helper.make_tensor_value_info("s", TensorProto.INT64, [])],
              [numpy_helper.from_array(np.array(0, np.int64), "s0")])
    for backend in BACKENDS:
        s = fusor.Session(m, backend=backend)
        for n in (3, 0, 70):
            (r,) = s.run(None, {"M": np.int64(n), "cond": np.array(True)})
            assert r.shape == () and r == n


def override_model(ir=8):
    w = numpy_helper.from_array(np.array([1, 2, 3], np.float32), "w")
    return model([helper.make_node("Mul", ["x", "w"], ["y"])],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                  helper.make_tensor_value_info("w", TensorProto.FLOAT, [3])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w], ir=ir)


@pytest.mark.parametrize("backend", BACKENDS)
def test_overridable_initializer_is_fed_by_name(backend):
    s = fusor.Session(override_model(), backend=backend)
    assert [a.name for a in s.get_inputs()] == ["x"]
    assert s.get_overridable_initializers() == [fusor.NodeArg("w", [3], "float32")]
    x = np.array([[0, 1, 2], [3, 4, 5]], np.float32)
    w = np.array([10, 20, 30], np.float32)
    np.testing.assert_array_equal(s.run(None, {"x": x})[0], x * np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(s.run(None, {"x": x, "w": w})[0], [[0, 20, 60], [30, 80, 150]])
    np.testing.assert_array_equal(s.run(None, {"x": x})[0], x * np.array([1, 2, 3], np.float32))
    with pytest.raises(fusor.Error, match=r"input 'w' expects float32, got float64"):
        s.run(None, {"x": x, "w": w.astype(np.float64)})
    with pytest.raises(fusor.Error, match=r"missing input 'x'"):
        s.run(None, {"w": w})
    with pytest.raises(fusor.Error, match=r"unknown input 'v'.*overridable initializers \['w'\]"):
        s.run(None, {"x": x, "v": w})


def test_ir3_initializers_listed_as_inputs_stay_constants():
    s = fusor.Session(override_model(ir=3), backend="ref")
    assert s.get_overridable_initializers() == []
    with pytest.raises(fusor.Error, match=r"unknown input 'w'"):
        s.run(None, {"x": np.ones((2, 3), np.float32), "w": np.ones(3, np.float32)})
