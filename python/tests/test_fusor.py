"""Tests of the fusor Python package (NumPy only; torch tests skip when torch is absent and the
CUDA zero-copy test when there is no CUDA device). Run: python3 -m pytest python/tests"""
import os
import threading
import time

import numpy as np
import pytest

import fusor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GPT2 = os.path.join(ROOT, "examples", "gpt2_tiny")
GPT2_MODEL = os.path.join(GPT2, "model.onnx")
DATA = os.path.join(GPT2, "test_data_set_0")

DEVICE_BACKENDS = {d["backend"] for d in fusor.devices()}
GPU_BACKENDS = [b for b in ("vulkan", "cuda") if b in DEVICE_BACKENDS]


def stored():
    return fusor.read_tensor(os.path.join(DATA, "input_0.pb")), fusor.read_tensor(os.path.join(DATA, "output_0.pb"))


def random_ids(seed):
    return np.random.default_rng(seed).integers(0, 1000, size=(1, 32), dtype=np.int64)


def test_backends_and_devices():
    assert {"ref", "cpu"} <= set(fusor.backends())
    devs = fusor.devices()
    assert any(d["backend"] == "cpu" for d in devs)
    for d in devs:
        assert set(d) == {"backend", "index", "name", "details"}
        assert d["backend"] in fusor.backends()
    assert fusor.best_backend() in fusor.backends()
    assert fusor.__version__.count(".") == 2


def test_inputs_and_outputs_describe_the_model():
    x, y = stored()
    sess = fusor.Session(GPT2_MODEL, backend="cpu")
    (inp,) = sess.get_inputs()
    (out,) = sess.get_outputs()
    assert inp.dtype == str(x.dtype) == "int64"
    assert len(inp.shape) == x.ndim and all(d is None or d == s for d, s in zip(inp.shape, x.shape))
    assert out.dtype == str(y.dtype)
    assert sess.backend == "cpu"


@pytest.mark.parametrize("backend", ["ref", "cpu"] + GPU_BACKENDS)
def test_run_matches_onnxruntime_outputs(backend):
    # test_data_set_0 holds onnxruntime's output; atol 1e-6 as in the C++ conformance tests.
    x, y = stored()
    sess = fusor.Session(GPT2, backend=backend)
    res = sess.run(None, {sess.get_inputs()[0].name: x})
    assert len(res) == 1 and isinstance(res[0], np.ndarray)
    assert res[0].dtype == y.dtype and res[0].shape == y.shape
    np.testing.assert_allclose(res[0], y, rtol=1e-3, atol=1e-6)


@pytest.mark.parametrize("backend", ["cpu"] + GPU_BACKENDS)
def test_matches_onnxruntime_on_random_inputs(backend):
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")
    feed = {"input_ids": random_ids(8)}
    (y,) = fusor.Session(GPT2_MODEL, backend=backend).run(None, feed)
    (want,) = ort.InferenceSession(GPT2_MODEL, providers=["CPUExecutionProvider"]).run(None, feed)
    np.testing.assert_allclose(y, want, rtol=1e-3, atol=1e-5)


def test_fused_unfused_and_reference_agree_on_random_inputs():
    ids = random_ids(1)
    name = fusor.Session(GPT2_MODEL, backend="ref").get_inputs()[0].name
    want = fusor.Session(GPT2_MODEL, backend="ref").run(None, {name: ids})[0]
    for fusion in (True, False):
        got = fusor.Session(GPT2_MODEL, backend="cpu", fusion=fusion).run(None, {name: ids})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.isfinite(want).all() and np.abs(want).max() > 0


def test_output_names_select_and_errors_name_things():
    sess = fusor.Session(GPT2_MODEL, backend="cpu")
    iname, oname = sess.get_inputs()[0].name, sess.get_outputs()[0].name
    x, _ = stored()
    a = sess.run([oname], {iname: x})
    b = sess.run(None, {iname: x})
    np.testing.assert_array_equal(a[0], b[0])
    with pytest.raises(fusor.Error, match=r"^\[run\] unknown output 'nope'"):
        sess.run(["nope"], {iname: x})
    with pytest.raises(fusor.Error, match=r"^\[run\] missing input '" + iname):
        sess.run(None, {})
    with pytest.raises(fusor.Error, match=r"^\[run\] input '" + iname + "' expects int64, got float64"):
        sess.run(None, {iname: x.astype(np.float64)})
    with pytest.raises(fusor.Error, match=r"^\[onnx\].*missing\.onnx"):
        fusor.Session(os.path.join(ROOT, "missing.onnx"), backend="cpu")
    with pytest.raises(fusor.Error, match=r"^\[backend\]"):
        fusor.Session(GPT2_MODEL, backend="tpu")
    assert issubclass(fusor.Unsupported, fusor.Error)


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _field(num, payload):  # a length-delimited protobuf field
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def onnx_model(nodes, inputs, outputs):
    """A serialized ONNX ModelProto (opset 17) written by hand, so the tests need no onnx
    package. nodes: (op_type, [inputs], [outputs]) or (op_type, [inputs], [outputs], {int
    attribute: value}); inputs/outputs: (name, elem_type, [dims] or None) with ONNX TensorProto elem
    types (1 float, 6 int32, 7 int64, 9 bool, 16 bfloat16)."""

    def value_info(name, elem, dims):
        tensor_type = bytes([0x08]) + _varint(elem)
        if dims is not None:  # None: no shape at all
            tensor_type += _field(2, b"".join(_field(1, bytes([0x08]) + _varint(d)) for d in dims))  # TensorShapeProto.dim
        return _field(1, name.encode()) + _field(2, _field(1, tensor_type))

    graph = b""
    for i, (op, ins, outs, *attrs) in enumerate(nodes):
        node = b"".join(_field(1, x.encode()) for x in ins) + b"".join(_field(2, x.encode()) for x in outs)
        for name, v in (attrs[0] if attrs else {}).items():  # AttributeProto: name, i, type INT (2)
            node += _field(5, _field(1, name.encode()) + bytes([0x18]) + _varint(v) + _varint(20 << 3) + _varint(2))
        graph += _field(1, node + _field(3, f"n{i}".encode()) + _field(4, op.encode()))
    graph += _field(2, b"g")
    graph += b"".join(_field(11, value_info(*v)) for v in inputs)
    graph += b"".join(_field(12, value_info(*v)) for v in outputs)
    opset = _field(1, b"") + bytes([0x10, 17])
    return bytes([0x08, 8]) + _field(7, graph) + _field(8, opset)


def test_unsupported_op_raises_unsupported():
    model = onnx_model([("NoSuchOp", ["x"], ["y"])], [("x", 1, [2])], [("y", 1, [2])])
    with pytest.raises(fusor.Unsupported, match=r"NoSuchOp"):
        sess = fusor.Session(model, backend="cpu")
        sess.run(None, {"x": np.ones(2, np.float32)})


@pytest.mark.parametrize("backend", ["ref", "cpu"] + GPU_BACKENDS)
def test_integers_wrap_and_bools_come_back_exactly(backend):
    model = onnx_model([("Add", ["a", "b"], ["s"]), ("Greater", ["a", "b"], ["g"]), ("Not", ["g"], ["ng"])],
                       [("a", 6, [6]), ("b", 6, [6])], [("s", 6, [6]), ("g", 9, [6]), ("ng", 9, [6])])
    sess = fusor.Session(model, backend=backend)
    assert [o.dtype for o in sess.get_outputs()] == ["int32", "bool", "bool"]
    a = np.array([2**31 - 1, -5, 7, 0, -(2**31), 123456], np.int32)
    b = np.array([1, 3, 7, -1, -1, -654321], np.int32)
    s, g, ng = sess.run(None, {"a": a, "b": b})
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(s, a + b)  # two's-complement wrap-around, as NumPy
    assert s.dtype == np.int32 and g.dtype == np.bool_ and ng.dtype == np.bool_
    np.testing.assert_array_equal(g, a > b)
    np.testing.assert_array_equal(ng, ~(a > b))


def test_model_from_bytes_resolves_external_data_from_cwd(monkeypatch):
    x, y = stored()
    with open(GPT2_MODEL, "rb") as f:
        blob = f.read()
    monkeypatch.chdir(GPT2)  # model.onnx.data is found relative to the current directory
    sess = fusor.Session(blob, backend="cpu")
    np.testing.assert_allclose(sess.run(None, {sess.get_inputs()[0].name: x})[0], y, rtol=1e-3, atol=1e-6)


class DLPackOnly:
    """An array that only speaks DLPack (as a CuPy/JAX array would)."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_and_strided_inputs_give_the_same_results():
    sess = fusor.Session(GPT2_MODEL, backend="cpu")
    name = sess.get_inputs()[0].name
    ids = random_ids(2)
    want = sess.run(None, {name: ids})[0]
    np.testing.assert_array_equal(sess.run(None, {name: DLPackOnly(ids)})[0], want)
    strided = np.asfortranarray(np.concatenate([ids, ids]))[:1]  # a non-contiguous view
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(sess.run(None, {name: strided})[0], want)


def test_results_own_their_memory():
    sess = fusor.Session(GPT2_MODEL, backend="cpu")
    name = sess.get_inputs()[0].name
    first = sess.run(None, {name: random_ids(3)})[0]
    keep = first.copy()
    sess.run(None, {name: random_ids(4)})  # a later run must not write into an earlier result
    np.testing.assert_array_equal(first, keep)
    first[...] = 0  # and results are writable


def test_device_outputs_need_cuda():
    sess = fusor.Session(GPT2_MODEL, backend="cpu")
    with pytest.raises(fusor.Error, match=r"^\[python\] .*cuda"):
        sess.run(None, {sess.get_inputs()[0].name: random_ids(5)}, output_device=True)


def test_gil_is_released_while_fusor_compiles_and_runs():
    # The cpu backend interprets the plan on the host: a first run (compile + run) of this
    # model takes a few hundred ms, long against this thread's 1 ms ticks.
    sess = fusor.Session(GPT2_MODEL, backend="cpu")
    name = sess.get_inputs()[0].name
    ids = random_ids(6)
    spans = []

    def work():
        for _ in range(3):
            t = time.perf_counter()
            sess.run(None, {name: ids})
            spans.append(time.perf_counter() - t)

    worker = threading.Thread(target=work)
    ticks = [time.perf_counter()]
    worker.start()
    while worker.is_alive():
        time.sleep(0.001)
        ticks.append(time.perf_counter())
    worker.join()
    # With the GIL held through a native call this thread would stall for the whole call.
    longest_gap = max(b - a for a, b in zip(ticks, ticks[1:]))
    assert len(spans) == 3
    assert longest_gap < 0.5 * max(spans), (longest_gap, spans)


def test_explain_returns_the_plan():
    p = fusor.explain(GPT2)
    u = fusor.explain(GPT2, fusion=False)
    assert 0 < len(p["kernels"]) < len(u["kernels"])
    assert p["bytes_fused"] == sum(k["bytes_read"] + k["bytes_written"] for k in p["kernels"])
    assert p["bytes_fused"] < p["bytes_unfused"]
    k = p["kernels"][0]
    assert set(k) >= {"index", "name", "kind", "ops", "nodes", "bytes_read", "bytes_written"}
    assert any(len(k["ops"]) > 1 for k in p["kernels"])  # something was fused


def test_conform_reports_structured_results():
    res = fusor.conform([GPT2], ["ref", "cpu"], rtol=1e-3, atol=1e-6)
    assert [r["backend"] for r in res] == ["ref", "cpu"]
    for r in res:
        assert r["status"] == "passed", r
        assert r["case"].endswith("gpt2_tiny")
        assert 0 <= r["max_abs"] <= 1e-5
    strict = fusor.conform(GPT2, "cpu", rtol=0.0, atol=0.0)
    assert strict[0]["status"] == "failed" and strict[0]["detail"]


try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
needs_cuda = pytest.mark.skipif(
    torch is None or not torch.cuda.is_available() or "cuda" not in DEVICE_BACKENDS,
    reason="needs torch with CUDA and fusor's cuda backend with a device")


@needs_torch
def test_torch_cpu_tensors_go_through_dlpack():
    sess = fusor.Session(GPT2_MODEL, backend="cpu")
    name = sess.get_inputs()[0].name
    ids = random_ids(7)
    want = sess.run(None, {name: ids})[0]
    got = sess.run(None, {name: torch.from_numpy(ids)})[0]
    np.testing.assert_array_equal(got, want)


@needs_cuda
def test_cuda_zero_copy_writes_into_the_callers_tensor():
    x, y = stored()
    sess = fusor.Session(GPT2_MODEL, backend="cuda")
    iname, oname = sess.get_inputs()[0].name, sess.get_outputs()[0].name
    xd = torch.from_numpy(x).cuda()
    out = torch.full(tuple(y.shape), float("nan"), device="cuda", dtype=torch.float32)  # poisoned
    torch.cuda.synchronize()
    res = sess.run(None, {iname: xd}, outputs={oname: out})
    assert res[0] is out
    torch.cuda.synchronize()
    assert not torch.isnan(out).any()
    np.testing.assert_allclose(out.cpu().numpy(), y, rtol=1e-3, atol=1e-6)
    # A second buffer set: results land in the new tensor, the old one is left alone.
    out2 = torch.full_like(out, float("nan"))
    before = out.clone()
    sess.run(None, {iname: xd}, outputs={oname: out2})
    torch.cuda.synchronize()
    np.testing.assert_allclose(out2.cpu().numpy(), y, rtol=1e-3, atol=1e-6)
    assert torch.equal(out, before)
    # Device outputs fusor allocates, handed over through DLPack.
    (dev,) = sess.run(None, {iname: xd}, output_device=True)
    t = torch.from_dlpack(dev)
    assert t.is_cuda
    np.testing.assert_allclose(t.cpu().numpy(), y, rtol=1e-3, atol=1e-6)
