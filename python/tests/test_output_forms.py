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


@pytest.mark.parametrize("backend", ["ref", "cpu"])
def test_string_inputs_as_onnxruntime_takes_them(backend):
    """A ColumnTransformer over string columns (tests/data/make_skl2onnx_strings.py): object and
    NumPy str arrays, strings the model never saw, against onnxruntime's stored outputs."""
    d = os.path.join(DATA, "st_coltrans")
    sess = fusor.Session(os.path.join(d, "model.onnx"), backend=backend)
    assert [a.dtype for a in sess.get_inputs()] == ["string", "string", "float32"]
    feeds = {a.name: fusor.read_tensor(os.path.join(d, "test_data_set_0", f"input_{k}.pb")) for k, a in enumerate(sess.get_inputs())}
    assert feeds["color"].dtype == object and "purple" in feeds["color"].ravel().tolist()
    label, probs = sess.run(None, feeds)
    np.testing.assert_array_equal(label, fusor.read_tensor(os.path.join(d, "test_data_set_0", "output_0.pb")))
    np.testing.assert_allclose(probs, fusor.read_tensor(os.path.join(d, "test_data_set_0", "output_1.pb")), rtol=1e-5, atol=1e-6)
    # NumPy's fixed-width str arrays and bytes give the same.
    feeds2 = dict(feeds, color=feeds["color"].astype(str), size=np.char.encode(feeds["size"].astype(str), "utf-8"))
    label2, probs2 = sess.run(None, feeds2)
    np.testing.assert_array_equal(label2, label)
    np.testing.assert_array_equal(probs2, probs)
    with pytest.raises(fusor.Error, match="expects string"):
        sess.run(None, dict(feeds, color=np.zeros((6, 1), np.float32)))
    with pytest.raises(fusor.Error, match="must be str"):
        sess.run(None, dict(feeds, color=np.array([[1], ["a"]], dtype=object)))


@pytest.mark.parametrize("case", ["tx_count_logreg", "tx_tfidf_bigrams", "tx_norm_label"])
@pytest.mark.parametrize("backend", ["ref", "cpu"])
def test_text_models_compute_on_their_strings(case, backend):
    """Text pipelines (tests/data/make_skl2onnx_text.py: StringNormalizer, Tokenizer,
    TfIdfVectorizer over strings, a string-to-string LabelEncoder) take their strings as such and
    match onnxruntime's stored outputs; str and UTF-8 bytes arrays give the same."""
    d = os.path.join(DATA, case)
    sess = fusor.Session(os.path.join(d, "model.onnx"), backend=backend)
    name = sess.get_inputs()[0].name
    x = fusor.read_tensor(os.path.join(d, "test_data_set_0", "input_0.pb"))
    outs = sess.run(None, {name: x})
    for k, o in enumerate(outs):
        want = fusor.read_tensor(os.path.join(d, "test_data_set_0", f"output_{k}.pb"))
        if want.dtype == object or want.dtype.kind in "iub":
            np.testing.assert_array_equal(o, want)
        else:
            np.testing.assert_allclose(o, want, rtol=1e-5, atol=1e-6)
    again = sess.run(None, {name: np.char.encode(x.astype(str), "utf-8")})
    for a, b in zip(again, outs):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(fusor.Error, match="expects string"):
        sess.run(None, {name: np.zeros(x.shape, np.float32)})


def test_unencodable_strings_are_one_error_naming_the_input():
    """A str with a lone surrogate (what surrogateescape decoding of non-UTF-8 bytes gives) or
    a non-str element is one fusor.Error naming the input, not a bare std::bad_cast."""
    d = os.path.join(DATA, "tx_norm_label")
    sess = fusor.Session(os.path.join(d, "model.onnx"), backend="ref")
    name = sess.get_inputs()[0].name
    x = fusor.read_tensor(os.path.join(d, "test_data_set_0", "input_0.pb"))
    bad = x.astype(object).copy()
    bad.flat[0] = "a\udcff b"
    with pytest.raises(fusor.Error, match=f"input '{name}'.*UTF-8"):
        sess.run(None, {name: bad})
