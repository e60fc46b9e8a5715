#!/usr/bin/env python3
"""scikit-learn pipelines over string (categorical) columns as skl2onnx exports them, and
CategoryMapper alone, with onnxruntime's outputs stored as test_data_set_0, for
tests/test_output_forms.cpp (folder skl2onnx/, st_* cases; string inputs run as codes,
ir/output_forms.h). Each test set holds strings the model never saw.
  st_coltrans   ColumnTransformer: OneHotEncoder(handle_unknown='ignore') on 'color' (Gather,
                OneHotEncoder cats_strings), OrdinalEncoder(unknown -> -1) on 'size'
                (LabelEncoder keys_strings), a float column passed through; LogisticRegression,
                zipmap off
  st_ordinal_rf OrdinalEncoder on two string columns of one input, RandomForestClassifier with
                string classes and ZipMap (string labels and maps out, strings in)
  st_catmap     CategoryMapper (strings -> int64, default_int64 -7) alone
Seeded data, nothing downloaded. Needs scikit-learn, skl2onnx, onnxruntime, pandas.
Usage: python3 tests/data/make_skl2onnx_strings.py [OUTDIR (default: this folder/skl2onnx)]"""
import os, sys

import numpy as np
import pandas as pd
from onnx import TensorProto as T
from onnx import helper as h
from skl2onnx import to_onnx
from skl2onnx.common.data_types import FloatTensorType, StringTensorType
from skl2onnx_save import save_feeds
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, OrdinalEncoder

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "skl2onnx")


def save(name, m, feeds):
    outs = save_feeds(out, name, m, feeds)
    print(name, sorted({n.op_type for n in m.graph.node}), [np.asarray(o).ravel()[:6] if not isinstance(o, list) else o[:1] for o in outs])


rng = np.random.default_rng(3)
N = 120
df = pd.DataFrame({"color": rng.choice(["red", "green", "blue"], N), "size": rng.choice(["S", "M", "L", "XL"], N),
                   "w": rng.standard_normal(N).astype(np.float32)})
y = ((df["w"] > 0) ^ (df["color"] == "red")).astype(np.int64)
ct = ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore"), ["color"]),
                        ("ord", OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1), ["size"])],
                       remainder="passthrough")
pipe = make_pipeline(ct, LogisticRegression()).fit(df, y)
m = to_onnx(pipe, initial_types=[("color", StringTensorType([None, 1])), ("size", StringTensorType([None, 1])),
                                 ("w", FloatTensorType([None, 1]))], options={id(pipe.steps[-1][1]): {"zipmap": False}},
            target_opset={"": 17, "ai.onnx.ml": 3})
feeds = {"color": np.array([["red"], ["blue"], ["purple"], ["green"], ["red"], [""]], dtype=object),
         "size": np.array([["M"], ["XL"], ["S"], ["XXL"], ["L"], ["M"]], dtype=object),
         "w": rng.standard_normal((6, 1)).astype(np.float32)}
save("st_coltrans", m, feeds)

X2 = np.stack([rng.choice(["a", "b", "c", "d"], N), rng.choice(["x", "y"], N)], 1).astype(object)
y2 = np.where((X2[:, 0] == "a") | (X2[:, 1] == "y"), "hit", "miss")
pipe2 = make_pipeline(OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1),
                      RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)).fit(X2, y2)
m2 = to_onnx(pipe2, initial_types=[("X", StringTensorType([None, 2]))], target_opset={"": 17, "ai.onnx.ml": 3})
save("st_ordinal_rf", m2, {"X": np.array([["a", "x"], ["b", "y"], ["c", "x"], ["zz", "x"], ["d", "q"]], dtype=object)})

g = h.make_graph([h.make_node("CategoryMapper", ["s"], ["y"], domain="ai.onnx.ml", cats_strings=["one", "two", "three"],
                              cats_int64s=[1, 2, 3], default_int64=-7)], "catmap",
                 [h.make_tensor_value_info("s", T.STRING, [2, 3])], [h.make_tensor_value_info("y", T.INT64, [2, 3])])
m3 = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 1)])
save("st_catmap", m3, {"s": np.array([["one", "three", "four"], ["two", "", "one"]], dtype=object)})
