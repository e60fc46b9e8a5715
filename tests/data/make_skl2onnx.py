#!/usr/bin/env python3
"""scikit-learn models as skl2onnx writes them (ai.onnx.ml ops), with onnxruntime's outputs
stored as test_data_set_0, for tests/test_ml_ops.cpp (folder skl2onnx/, one case each):
  dtree, rf, gbr, et   DecisionTree / RandomForest / GradientBoosting / ExtraTrees regressors
                       (TreeEnsembleRegressor, ml 3), a NaN feature in row 3
  rf2                  a RandomForest with two targets
  ridge_pipe           StandardScaler + Ridge (Scaler, LinearRegressor)
  norm_pipe            Normalizer + MinMaxScaler + LinearRegression (Normalizer, Mul / Add)
  bin_pipe             Binarizer + LinearRegression
  logreg2, logreg3     LogisticRegression, 2 and 3 classes (LinearClassifier [+ Normalizer]),
                       zipmap=False
  svc2                 LinearSVC, 2 classes (LinearClassifier, ArrayFeatureExtractor)
  dtc2, rfc3, gbc2, gbc3  DecisionTree / RandomForest / GradientBoosting classifiers
                       (TreeEnsembleClassifier, onnxruntime's binary and multiclass forms),
                       labels 10.. , a NaN feature in row 3, zipmap=False
Seeded data, nothing downloaded. Needs scikit-learn, skl2onnx, onnxruntime.
Usage: python3 tests/data/make_skl2onnx.py [OUTDIR (default: this folder/skl2onnx)]"""
import os, shutil, sys

import numpy as np
from skl2onnx import to_onnx
from skl2onnx_save import save_case
from sklearn.ensemble import (ExtraTreesRegressor, GradientBoostingClassifier, GradientBoostingRegressor, RandomForestClassifier,
                              RandomForestRegressor)
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Binarizer, MinMaxScaler, Normalizer, StandardScaler
from sklearn.svm import LinearSVC
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "skl2onnx")
rng = np.random.default_rng(1)
X = rng.standard_normal((200, 6)).astype(np.float32)
y = (X[:, 0] * 2 + np.sin(X[:, 1]) + X[:, 2] * X[:, 3]).astype(np.float32)
Xt = rng.standard_normal((9, 6)).astype(np.float32)
Xnan = Xt.copy()
Xnan[3, 2] = np.nan
cls2 = (X[:, 0] + X[:, 1] * 0.5 > 0).astype(np.int64)
cls3 = np.digitize(X[:, 0], [-0.5, 0.5]).astype(np.int64)
cases = {
    "dtree": (DecisionTreeRegressor(max_depth=5, random_state=0), y, Xnan),
    "rf": (RandomForestRegressor(n_estimators=4, max_depth=4, random_state=0), y, Xnan),
    "gbr": (GradientBoostingRegressor(n_estimators=8, max_depth=3, random_state=0), y, Xnan),
    "et": (ExtraTreesRegressor(n_estimators=3, max_depth=4, random_state=0), y, Xnan),
    "rf2": (RandomForestRegressor(n_estimators=3, max_depth=3, random_state=0), np.stack([y, X[:, 4] - X[:, 5]], 1), Xnan),
    "ridge_pipe": (make_pipeline(StandardScaler(), Ridge()), y, Xt),
    "norm_pipe": (make_pipeline(Normalizer(), MinMaxScaler(), LinearRegression()), y, Xt),
    "bin_pipe": (make_pipeline(Binarizer(threshold=0.2), LinearRegression()), y, Xt),
    "logreg2": (LogisticRegression(), cls2, Xt),
    "logreg3": (LogisticRegression(), cls3, Xt),
    "svc2": (LinearSVC(random_state=0), cls2, Xt),
    "dtc2": (DecisionTreeClassifier(max_depth=4, random_state=0), cls2 + 10, Xnan),
    "rfc3": (RandomForestClassifier(n_estimators=4, max_depth=3, random_state=0), cls3 + 10, Xnan),
    "gbc2": (GradientBoostingClassifier(n_estimators=4, max_depth=2, random_state=0), cls2 + 10, Xnan),
    "gbc3": (GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0), cls3 + 10, Xnan),
}
shutil.rmtree(out, ignore_errors=True)
for name, (model, target, xin) in cases.items():
    model.fit(X, target)
    options = {id(model): {"zipmap": False}} if hasattr(model, "predict_proba") else None
    m = to_onnx(model, X[:1], options=options, target_opset={"": 17, "ai.onnx.ml": 3})
    outs = save_case(out, name, m, xin)
    print(name, sorted({n.op_type for n in m.graph.node}))
