#!/usr/bin/env python3
"""scikit-learn's kernel SVMs as skl2onnx writes them (SVMRegressor / SVMClassifier, ai.onnx.ml 1),
with onnxruntime's outputs stored as test_data_set_0, for tests/test_ml_ops.cpp (folder
skl2onnx/, one case each, next to make_skl2onnx.py's):
  svm_svr_rbf, svm_nusvr_poly, svm_svr_linear   SVR (RBF, linear kernel) and NuSVR (POLY)
  svm_ocsvm                                      OneClassSVM (RBF; scores and +-1 labels)
  svm_svc2_rbf, svm_svc3_rbf                     SVC without probabilities, 2 and 3 classes
  svm_svc3_proba, svm_svc2_proba_poly            SVC(probability=True): Platt's pairwise
                                                 probabilities coupled (3 classes RBF, 2 POLY)
  svm_svc3_sigmoid, svm_nusvc4                   SVC SIGMOID (3 classes), NuSVC (4 classes, RBF)
  svm_svc4_proba                                 SVC(probability=True), 4 classes (6 pairs)
labels 10.., zipmap=False. Seeded data, nothing downloaded. Needs scikit-learn, skl2onnx,
onnxruntime.
Usage: python3 tests/data/make_skl2onnx_svm.py [OUTDIR (default: this folder/skl2onnx)]"""
import os, shutil, sys, warnings

import numpy as np
from skl2onnx import to_onnx
from skl2onnx_save import save_case
from sklearn.base import is_classifier
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

warnings.simplefilter("ignore", FutureWarning)  # probability=True is deprecated in scikit-learn 1.9
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "skl2onnx")
rng = np.random.default_rng(7)
X = rng.standard_normal((120, 5)).astype(np.float32)
y = (X[:, 0] * 2 + np.sin(X[:, 1]) + X[:, 2] * X[:, 3]).astype(np.float32)
Xt = rng.standard_normal((11, 5)).astype(np.float32)
cls2 = (X[:, 0] + X[:, 1] * 0.5 > 0).astype(np.int64) + 10
cls3 = np.digitize(X[:, 0], [-0.5, 0.5]).astype(np.int64) + 10
cls4 = np.digitize(X[:, 0] + 0.3 * X[:, 4], [-0.7, 0.0, 0.7]).astype(np.int64) + 10
cases = {
    "svm_svr_rbf": (SVR(kernel="rbf", C=2.0), y),
    "svm_nusvr_poly": (NuSVR(kernel="poly", degree=3, coef0=0.5), y),
    "svm_svr_linear": (SVR(kernel="linear"), y),
    "svm_ocsvm": (OneClassSVM(gamma=0.3, nu=0.2), None),
    "svm_svc2_rbf": (SVC(kernel="rbf"), cls2),
    "svm_svc3_rbf": (SVC(kernel="rbf", C=3.0), cls3),
    "svm_svc3_proba": (SVC(kernel="rbf", probability=True, random_state=0), cls3),
    "svm_svc2_proba_poly": (SVC(kernel="poly", degree=2, probability=True, random_state=0), cls2),
    "svm_svc3_sigmoid": (SVC(kernel="sigmoid", gamma=0.1), cls3),
    "svm_nusvc4": (NuSVC(nu=0.3), cls4),
    "svm_svc4_proba": (SVC(kernel="rbf", probability=True, random_state=0), cls4),
}
for name in cases:
    shutil.rmtree(os.path.join(out, name), ignore_errors=True)
for name, (model, target) in cases.items():
    model.fit(X, target) if target is not None else model.fit(X)
    options = {id(model): {"zipmap": False}} if is_classifier(model) else None
    m = to_onnx(model, X[:1], options=options, target_opset={"": 17, "ai.onnx.ml": 3})
    outs = save_case(out, name, m, Xt)
    print(name, sorted({n.op_type for n in m.graph.node}), [np.asarray(o).shape for o in outs])
