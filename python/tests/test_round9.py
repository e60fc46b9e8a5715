"""Red-team round 9 (docs/redteam.md), the Python face: arrays of ml_dtypes types NumPy's DLPack
lacks are one fusor.Error (float8_e5m2 has NumPy kind 'f' and reached nanobind's TypeError);
run(['y']) converts only the outputs asked for; get_outputs() never claims a scalar for an
output declared without a shape; a Session's executable cache is bounded. Models are written
here with the onnx package (skips without it)."""
import numpy as np
import pytest

import fusor

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

BACKENDS = ["ref", "cpu"] + (["vulkan"] if any(d["backend"] == "vulkan" for d in fusor.devices()) else [])


def model(nodes, inputs, outputs, inits=(), opset=21):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m.SerializeToString()


def relu(shape=(2, 4)):
    return model([helper.make_node("Relu", ["x"], ["y"])], [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])


def test_every_ml_dtypes_array_is_one_fusor_error():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes is not installed")
    s = fusor.Session(relu(), backend="ref")
    names = ["float8_e5m2", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu", "int4", "uint4",
             "float4_e2m1fn", "int2", "uint2", "float6_e2m3fn"]
    tried = 0
    for n in names:
        if not hasattr(ml_dtypes, n):
            continue
        tried += 1
        x = np.zeros((2, 4), np.float32).astype(getattr(ml_dtypes, n))
        # float8_e5m2 (NumPy kind 'f') was nanobind's "TypeError: run(): incompatible function arguments".
        with pytest.raises(fusor.Error, match=rf"input 'x': NumPy cannot hand over {n} arrays .*DLPack"):
            s.run(None, {"x": x})
    assert tried >= 2
    # bfloat16 arrays are taken (round 38: what bfloat16 outputs come back as); into a float32
    # input they are the dtype mismatch they are.
    with pytest.raises(fusor.Error, match=r"input 'x' expects float32, got bfloat16"):
        s.run(None, {"x": np.zeros((2, 4), ml_dtypes.bfloat16)})


def test_native_run_names_an_input_it_cannot_take():
    # What the front does not catch is still one fusor.Error naming the input (not a TypeError).
    s = fusor.Session(relu(), backend="ref")
    with pytest.raises(fusor.Error, match=r"input 'x': object cannot be handed over as an array"):
        s._impl.run([object()], False, [], [], [], False)


def small_outputs_model():
    # y = x + 1 (float32) beside y_small = Cast(x, int4), an output NumPy cannot hold.
    return model([helper.make_node("Add", ["x", "one"], ["y"]), helper.make_node("Cast", ["x"], ["y_small"], to=TensorProto.INT4)],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5]),
                  helper.make_tensor_value_info("y_small", TensorProto.INT4, [3, 5])],
                 [numpy_helper.from_array(np.array(1, np.float32), "one")])


@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_not_asked_for_are_not_converted(backend):
    s = fusor.Session(small_outputs_model(), backend=backend)
    x = np.random.default_rng(9).uniform(-6, 6, (3, 5)).astype(np.float32)
    (y,) = s.run(["y"], {"x": x})  # was Unsupported: output 'y_small': dtype int4 cannot be returned
    np.testing.assert_allclose(y, x + 1, rtol=1e-6)
    for every in (None, []):  # [] asks for every output, as onnxruntime (round 38; was [])
        with pytest.raises(fusor.Unsupported, match=r"output 'y_small': dtype int4 cannot be returned as an array"):
            s.run(every, {"x": x})
    with pytest.raises(fusor.Unsupported, match=r"output 'y_small'"):
        s.run(["y", "y_small"], {"x": x})
    with pytest.raises(fusor.Error, match=r"unknown output 'z'"):
        s.run(["y", "z"], {"x": x})


def conv_without_output_shape(x_shape):
    w = np.random.default_rng(1).standard_normal((6, 4, 3, 3)).astype(np.float16)
    return model([helper.make_node("Conv", ["x", "w"], ["y"])], [helper.make_tensor_value_info("x", TensorProto.FLOAT16, x_shape)],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)], [numpy_helper.from_array(w, "w")])


def test_get_outputs_infers_or_says_unknown_never_a_scalar():
    s = fusor.Session(conv_without_output_shape([2, 4, 9, 11]), backend="cpu")
    assert s.get_outputs()[0] == fusor.NodeArg("y", [2, 6, 7, 9], "float16")  # was shape=[] (a scalar)
    (y,) = s.run(None, {"x": np.ones((2, 4, 9, 11), np.float16)})
    assert list(y.shape) == s.get_outputs()[0].shape
    # An open batch dim: nothing to infer from, and the rank is not declared either.
    d = fusor.Session(conv_without_output_shape(["N", 4, 9, 11]), backend="cpu")
    assert d.get_outputs()[0].shape is None
    assert d.get_inputs()[0].shape == [None, 4, 9, 11]
    # An input declared without a shape is None too, not [].
    n = fusor.Session(model([helper.make_node("Relu", ["x"], ["y"])], [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]), backend="ref")
    assert n.get_inputs()[0].shape is None and n.get_outputs()[0].shape is None
    # Declared dims that are open but inferable (fixed inputs) are filled in.
    r = fusor.Session(model([helper.make_node("Relu", ["x"], ["y"])], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["M", None])]), backend="ref")
    assert r.get_outputs()[0].shape == [2, 3]


def nonzero_square():
    # y = x[x > 0] ** 2 for x [32]: every new mask is a new executable.
    return model([helper.make_node("Greater", ["x", "zero"], ["m"]), helper.make_node("NonZero", ["m"], ["nz"]),
                  helper.make_node("Squeeze", ["nz", "ax"], ["i"]), helper.make_node("Gather", ["x", "i"], ["g"]),
                  helper.make_node("Mul", ["g", "g"], ["y"])],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["K"])],
                 [numpy_helper.from_array(np.array(0, np.float32), "zero"), numpy_helper.from_array(np.array([0], np.int64), "ax")])


@pytest.mark.parametrize("backend", BACKENDS)
def test_executable_cache_is_bounded(backend):
    s = fusor.Session(nonzero_square(), backend=backend)
    rng = np.random.default_rng(0)
    for _ in range(30):  # was one executable kept per run, without bound
        x = rng.standard_normal(32).astype(np.float32)
        (y,) = s.run(None, {"x": x})
        np.testing.assert_allclose(y, x[x > 0] ** 2, rtol=1e-6)
    assert s._impl.cached_executables() == 16
    d = fusor.Session(relu(["N", 4]), backend=backend, max_executables=3)
    for n in range(1, 8):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        np.testing.assert_array_equal(d.run(None, {"x": x})[0], np.maximum(x, 0))
        assert d._impl.cached_executables() == min(n, 3)


@pytest.mark.parametrize("value", [0, -1, 2.5, True, "4"])
def test_max_executables_must_be_a_positive_int(value):
    with pytest.raises(fusor.Error, match=r"max_executables must be an int in \[1, 2\^31\)"):
        fusor.Session(relu(), backend="ref", max_executables=value)
