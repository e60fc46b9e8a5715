#!/usr/bin/env python3
"""scikit-learn classifiers as skl2onnx writes them by default (zipmap on): the probabilities as
ai.onnx.ml ZipMap's seq(map(key, float)) and, for string classes, string labels
(classlabels_strings), with onnxruntime's outputs stored as test_data_set_0 (a sequence of maps
as a SequenceProto of MapProto), for tests/test_output_forms.cpp (folder skl2onnx/, zm_* cases):
  zm_logreg3        LogisticRegression, int classes 0..2 (LinearClassifier, Normalizer, ZipMap int64 keys)
  zm_logreg3_str    the same with string classes (labels through an Identity, ZipMap string keys)
  zm_rfc2_str       RandomForestClassifier, 2 string classes (TreeEnsembleClassifier's binary form)
  zm_gbc3_str       GradientBoostingClassifier, 3 string classes
  zm_svc3_str       SVC(probability=True), 3 string classes (SVMClassifier)
  zm_dtc2           DecisionTreeClassifier, int classes 10 and 11, a NaN feature in row 3
Seeded data, nothing downloaded. Needs scikit-learn, skl2onnx, onnxruntime.
Usage: python3 tests/data/make_skl2onnx_zipmap.py [OUTDIR (default: this folder/skl2onnx)]"""
import os, shutil, sys

import numpy as np
from skl2onnx import to_onnx
from skl2onnx_save import save_case
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "skl2onnx")
rng = np.random.default_rng(5)
X = rng.standard_normal((200, 5)).astype(np.float32)
Xt = rng.standard_normal((9, 5)).astype(np.float32)
Xnan = Xt.copy()
Xnan[3, 1] = np.nan
cls3 = np.digitize(X[:, 0] + 0.3 * X[:, 2], [-0.5, 0.5]).astype(np.int64)
cls2 = (X[:, 1] - X[:, 3] > 0).astype(np.int64)
names3 = np.array(["cat", "dog", "emu"])[cls3]
names2 = np.array(["no", "yes"])[cls2]
cases = {
    "zm_logreg3": (LogisticRegression(), cls3, Xt),
    "zm_logreg3_str": (LogisticRegression(), names3, Xt),
    "zm_rfc2_str": (RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0), names2, Xnan),
    "zm_gbc3_str": (GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0), names3, Xnan),
    "zm_svc3_str": (SVC(probability=True, random_state=0), names3, Xt),
    "zm_dtc2": (DecisionTreeClassifier(max_depth=4, random_state=0), cls2 + 10, Xnan),
}
for name, (model, target, xin) in cases.items():
    shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    model.fit(X, target)
    m = to_onnx(model, X[:1], target_opset={"": 17, "ai.onnx.ml": 3})
    outs = save_case(out, name, m, xin)
    print(name, sorted({n.op_type for n in m.graph.node}), outs[0][:3])
