#!/usr/bin/env python3
"""Text models over string tensors, with onnxruntime's outputs stored as test_data_set_0, for
tests/test_strings.cpp (folder skl2onnx/, tx_* cases; the string nodes run on the host,
ir/ops/strings.cpp). Each test set holds words the model never saw.
  tx_count_logreg   CountVectorizer + LogisticRegression as skl2onnx exports them
                    (StringNormalizer, com.microsoft Tokenizer with a token expression,
                    TfIdfVectorizer over pool_strings), zipmap off
  tx_tfidf_bigrams  TfidfVectorizer(ngram_range=(1, 2)) + LogisticRegression with
                    string classes (labels out as strings), zipmap off
  tx_tok_seps       Tokenizer alone: two separators, mincharnum 2, mark, pad "#"
  tx_tok_chars      Tokenizer alone: character tokens (separators [""]), [N, C] input
  tx_norm_label     StringNormalizer(UPPER, stopwords) -> LabelEncoder strings to strings
  tx_tok_longest    Tokenizer, tokenexp "a|ab" (RE2 longest match: "ab" is one token), mincharnum 1
  tx_tok_order      Tokenizer, separators ["b", "ab"] (split by each separator in turn)
  tx_tok_dot        Tokenizer, tokenexp "." (characters, newline included), mark
  tx_mixed_coltrans ColumnTransformer: OneHotEncoder on a categorical string column (codes, on
                    the device) and CountVectorizer on a text column (strings, on the host),
                    LogisticRegression, zipmap off
Seeded data, nothing downloaded. Needs scikit-learn, skl2onnx, onnxruntime.
Usage: python3 tests/data/make_skl2onnx_text.py [OUTDIR (default: this folder/skl2onnx)]"""
import os, sys

import numpy as np
import pandas as pd
from onnx import TensorProto as T
from onnx import helper as h
from skl2onnx import to_onnx
from skl2onnx.common.data_types import StringTensorType
from skl2onnx_save import save_feeds
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.preprocessing import OneHotEncoder
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "skl2onnx")


def save(name, m, feeds):
    outs = save_feeds(out, name, m, feeds)
    print(name, sorted({n.op_type for n in m.graph.node}), [np.asarray(o).ravel()[:6] if not isinstance(o, list) else o[:1] for o in outs])


rng = np.random.default_rng(5)
words = ["good", "bad", "great", "awful", "fine", "movie", "plot", "actor", "the", "a", "really", "not"]
docs, labels = [], []
for _ in range(200):
    w = list(rng.choice(words, rng.integers(3, 9)))
    docs.append(" ".join(w))
    labels.append(int(sum(x in ("good", "great", "fine") for x in w) > sum(x in ("bad", "awful") for x in w)))
docs = np.array(docs, dtype=object)
y = np.array(labels)
test_docs = np.array([["Good movie, GREAT actor"], ["awful plot"], ["unseen words only"], [""], ["not bad, really not bad"]],
                     dtype=object)

pipe = make_pipeline(CountVectorizer(), LogisticRegression(max_iter=500)).fit(docs, y)
m = to_onnx(pipe, initial_types=[("text", StringTensorType([None, 1]))], options={id(pipe.steps[-1][1]): {"zipmap": False}},
            target_opset={"": 17, "ai.onnx.ml": 3})
save("tx_count_logreg", m, {"text": test_docs})

ys = np.where(y == 1, "pos", "neg")
pipe2 = make_pipeline(TfidfVectorizer(ngram_range=(1, 2)), LogisticRegression(max_iter=500)).fit(docs, ys)
m2 = to_onnx(pipe2, initial_types=[("text", StringTensorType([None, 1]))], options={id(pipe2.steps[-1][1]): {"zipmap": False}},
             target_opset={"": 17, "ai.onnx.ml": 3})
save("tx_tfidf_bigrams", m2, {"text": test_docs})


def single(name, node, x, out_shape=None):
    g = h.make_graph([node], name, [h.make_tensor_value_info("x", T.STRING, list(x.shape))],
                     [h.make_tensor_value_info("y", T.STRING, out_shape)])
    mm = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1), h.make_opsetid("ai.onnx.ml", 2)])
    save(name, mm, {"x": x})


single("tx_tok_seps", h.make_node("Tokenizer", ["x"], ["y"], domain="com.microsoft", mark=1, mincharnum=2, pad_value="#",
                                  separators=[" ", ",;"]),
       np.array(["a bc,;def  g", ",;", "hello world,;x yz", "üñí cödé"], dtype=object))
single("tx_tok_chars", h.make_node("Tokenizer", ["x"], ["y"], domain="com.microsoft", mark=0, mincharnum=1, pad_value="_",
                                   separators=[""]),
       np.array([["ab", "é€"], ["", "xyz"]], dtype=object))
g = h.make_graph([h.make_node("StringNormalizer", ["x"], ["n"], case_change_action="UPPER", stopwords=["the", "a"]),
                  h.make_node("LabelEncoder", ["n"], ["y"], domain="ai.onnx.ml", keys_strings=["CAT", "DOG"],
                              values_strings=["meow", "woof"], default_string="?")], "tx_norm_label",
                 [h.make_tensor_value_info("x", T.STRING, [5])], [h.make_tensor_value_info("y", T.STRING, None)])
save("tx_norm_label", h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 2)]),
     {"x": np.array(["The", "cat", "A", "dog", "bird"], dtype=object)})

single("tx_tok_longest", h.make_node("Tokenizer", ["x"], ["y"], domain="com.microsoft", mark=0, mincharnum=1, pad_value="#",
                                     tokenexp="a|ab"),
       np.array(["ab", "xaby", "aab ab", ""], dtype=object))
single("tx_tok_order", h.make_node("Tokenizer", ["x"], ["y"], domain="com.microsoft", mark=0, mincharnum=1, pad_value="#",
                                   separators=["b", "ab"]),
       np.array(["xaby", "abab", "cbd", "b"], dtype=object))
single("tx_tok_dot", h.make_node("Tokenizer", ["x"], ["y"], domain="com.microsoft", mark=1, mincharnum=1, pad_value="~",
                                 tokenexp="."),
       np.array([["a\nb", "é"], ["", "xyz"]], dtype=object))

df = pd.DataFrame({"cat": rng.choice(["red", "green", "blue"], 200), "text": docs})
ct = ColumnTransformer([("oh", OneHotEncoder(handle_unknown="ignore"), ["cat"]), ("txt", CountVectorizer(), "text")])
pipe3 = make_pipeline(ct, LogisticRegression(max_iter=500)).fit(df, y)
m3 = to_onnx(pipe3, initial_types=[("cat", StringTensorType([None, 1])), ("text", StringTensorType([None, 1]))],
             options={id(pipe3.steps[-1][1]): {"zipmap": False}}, target_opset={"": 17, "ai.onnx.ml": 3})
save("tx_mixed_coltrans", m3, {"cat": np.array([["red"], ["blue"], ["purple"], ["green"], ["red"]], dtype=object), "text": test_docs})
