"""scikit-learn classifiers as skl2onnx exports them by default (tests/data/make_skl2onnx_zipmap.py):
string labels come back as an object array of str and ZipMap's probabilities as a list of dicts,
as onnxruntime returns them, matching its stored outputs."""
import os

import numpy as np
import pytest

import fusor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data", "skl2onnx")


def stored_maps(path):
    """A SequenceProto of MapProto (onnxruntime's ZipMap output) as a list of dicts."""
    import onnx
    from onnx import numpy_helper
    seq = onnx.SequenceProto()
    with open(path, "rb") as f:
        seq.ParseFromString(f.read())
    maps = []
    for m in seq.map_values:
        keys = [k.decode() for k in m.string_keys] if m.key_type == onnx.TensorProto.STRING else list(m.keys)
        vals = np.concatenate([numpy_helper.to_array(t).ravel() for t in m.values.tensor_values])
        maps.append(dict(zip(keys, vals.tolist())))
    return maps


@pytest.mark.parametrize("case,labels", [("zm_logreg3_str", ["cat", "dog", "emu"]), ("zm_rfc2_str", ["no", "yes"]),
                                         ("zm_logreg3", [0, 1, 2]), ("zm_dtc2", [10, 11])])
@pytest.mark.parametrize("backend", ["ref", "cpu"])
def test_labels_and_maps_as_onnxruntime_returns_them(case, labels, backend):
    pytest.importorskip("onnx")
    d = os.path.join(DATA, case)
    x = fusor.read_tensor(os.path.join(d, "test_data_set_0", "input_0.pb"))
    sess = fusor.Session(os.path.join(d, "model.onnx"), backend=backend)
    outs = sess.get_outputs()
    strings = isinstance(labels[0], str)
    assert outs[0].dtype == ("string" if strings else "int64")
    assert outs[1].dtype == "seq(map(%s, float))" % ("string" if strings else "int64")
    label, probs = sess.run(None, {sess.get_inputs()[0].name: x})
    if strings:
        assert label.dtype == object and all(isinstance(s, str) for s in label)
    want = stored_maps(os.path.join(d, "test_data_set_0", "output_1.pb"))
    assert isinstance(probs, list) and len(probs) == len(want) == x.shape[0]
    for got, exp in zip(probs, want):
        assert list(got) == labels and set(exp) == set(labels)
        assert all(isinstance(v, float) for v in got.values())
        np.testing.assert_allclose([got[k] for k in labels], [exp[k] for k in labels], rtol=1e-5, atol=1e-6)
    # The label is the key of the largest probability (scikit-learn's predict).
    for lab, got in zip(label, probs):
        assert lab == max(got, key=got.get)
    # Asked for by name (twice): fresh dicts the second time.
    a, b = sess.run(["output_probability", "output_probability"], {sess.get_inputs()[0].name: x})
    assert a == b and a[0] is not b[0]
