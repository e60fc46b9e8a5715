#!/usr/bin/env python3
"""scikit-learn preprocessing as skl2onnx writes it, and the ai.onnx.ml ops it uses alone, with
onnxruntime's outputs stored as test_data_set_0, for tests/test_ml_ops.cpp (folder skl2onnx/,
next to make_skl2onnx.py's cases; red-team round 26 found these refused):
  imputer        SimpleImputer(mean) + LinearRegression (Imputer, NaN replaced)
  onehot         OneHotEncoder on int64 columns, handle_unknown='ignore', an unknown value
  ordinal        OrdinalEncoder on int64 columns (ArrayFeatureExtractor, LabelEncoder ml 2)
  kbins          KBinsDiscretizer(onehot-dense) (OneHotEncoder after ArgMax)
  label_float    LabelEncoder ml 2, float keys (a NaN key, which NaN does not match) -> float values
  label_tensor   LabelEncoder ml 4, int64 keys_tensor -> float values_tensor, default_tensor
  vectorizer     FeatureVectorizer of a float [N, 3] cut to 2 and a float [N, 2] padded to 4
  onehot_nan     OneHotEncoder of float input with NaN (no category; red-team round 28)
  label_nan4     LabelEncoder ml 4 with a NaN key, which NaN matches from ml 4 (round 28)
Seeded data, nothing downloaded. Needs scikit-learn, skl2onnx, onnxruntime.
Usage: python3 tests/data/make_skl2onnx_pre.py [OUTDIR (default: this folder/skl2onnx)]"""
import os, shutil, sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from skl2onnx import to_onnx
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, OrdinalEncoder

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "skl2onnx")
rng = np.random.default_rng(7)
X = rng.standard_normal((60, 4)).astype(np.float32)
X[::7, 1] = np.nan
y = rng.standard_normal(60).astype(np.float32)
Xi = rng.integers(0, 5, (60, 3)).astype(np.int64)
Xt = rng.standard_normal((9, 4)).astype(np.float32)
Xt[::3, 1] = np.nan
Xit = rng.integers(0, 5, (7, 3)).astype(np.int64)
Xit[2, 1] = 9  # a category the encoder never saw


def ml_model(node, inputs, outputs, ml_version, inits=()):
    g = h.make_graph([node], "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", ml_version)])


cases = {
    "imputer": (to_onnx(make_pipeline(SimpleImputer(strategy="mean"), LinearRegression()).fit(X, y), X[:1]), [Xt]),
    "onehot": (to_onnx(OneHotEncoder(sparse_output=False, handle_unknown="ignore").fit(Xi), Xi[:1]), [Xit]),
    "ordinal": (to_onnx(OrdinalEncoder().fit(Xi), Xi[:1]), [Xit % 5]),
    "kbins": (to_onnx(KBinsDiscretizer(n_bins=3, encode="onehot-dense").fit(X[:, [0, 2]]), X[:1, [0, 2]]), [Xt[:, [0, 2]]]),
    "label_float": (ml_model(h.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", keys_floats=[0.5, -1.0, float("nan"), 2.0],
                                         values_floats=[10.0, 20.0, 30.0, 40.0], default_float=-7.0),
                             [h.make_tensor_value_info("x", T.FLOAT, [2, 3])], [h.make_tensor_value_info("y", T.FLOAT, [2, 3])], 2),
                    [np.array([[0.5, 2.0, np.nan], [-1.0, 3.0, 0.5]], np.float32)]),
    "label_tensor": (ml_model(h.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml",
                                          keys_tensor=nh.from_array(np.array([3, 1, 4], np.int64)),
                                          values_tensor=nh.from_array(np.array([0.25, -0.5, 8.0], np.float32)),
                                          default_tensor=nh.from_array(np.array([1.5], np.float32))),
                              [h.make_tensor_value_info("x", T.INT64, [5])], [h.make_tensor_value_info("y", T.FLOAT, [5])], 4),
                     [np.array([4, 1, 9, 3, 3], np.int64)]),
    "vectorizer": (ml_model(h.make_node("FeatureVectorizer", ["a", "b"], ["y"], domain="ai.onnx.ml", inputdimensions=[2, 4]),
                            [h.make_tensor_value_info("a", T.FLOAT, [3, 3]), h.make_tensor_value_info("b", T.FLOAT, [3, 2])],
                            [h.make_tensor_value_info("y", T.FLOAT, [3, 6])], 1),
                   [np.arange(9, dtype=np.float32).reshape(3, 3) - 4, rng.standard_normal((3, 2)).astype(np.float32)]),
    "onehot_nan": (ml_model(h.make_node("OneHotEncoder", ["x"], ["y"], domain="ai.onnx.ml", cats_int64s=[0, 1, 3], zeros=1),
                            [h.make_tensor_value_info("x", T.FLOAT, [2, 3])], [h.make_tensor_value_info("y", T.FLOAT, [2, 3, 3])], 1),
                   [np.array([[np.nan, 0.0, 1.0], [3.7, -0.0, 2.0]], np.float32)]),
    "label_nan4": (ml_model(h.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml",
                                        keys_tensor=nh.from_array(np.array([np.nan, 7.0], np.float32)),
                                        values_tensor=nh.from_array(np.array([3, 4], np.int64)),
                                        default_tensor=nh.from_array(np.array([-1], np.int64))),
                            [h.make_tensor_value_info("x", T.FLOAT, [4])], [h.make_tensor_value_info("y", T.INT64, [4])], 4),
                   [np.array([np.nan, 7.0, 2.0, -np.nan], np.float32)]),
}
for name, (m, xin) in cases.items():
    feeds = {m.graph.input[k].name: v for k, v in enumerate(xin)}
    outs = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    d = os.path.join(out, name, "test_data_set_0")
    os.makedirs(d)
    onnx.save(m, os.path.join(out, name, "model.onnx"))
    for k, v in enumerate(xin):
        with open(os.path.join(d, f"input_{k}.pb"), "wb") as f:
            f.write(nh.from_array(v, m.graph.input[k].name).SerializeToString())
    for k, (o, vi) in enumerate(zip(outs, m.graph.output)):
        with open(os.path.join(d, f"output_{k}.pb"), "wb") as f:
            f.write(nh.from_array(np.asarray(o), vi.name).SerializeToString())
    print(name, sorted({n.op_type for n in m.graph.node}), [o.ravel()[:6] for o in outs])
