# The one-node (or few-node) model writer the round-45 generators share: a model of `nodes` with
# graph inputs `feeds` (name -> array, or name -> (array, TensorProto type) for bfloat16), outputs
# `outs` of types `ot` (float32 by default) and constant initializers `inits`, saved under
# root/name with its inputs as test_data_set_0/input_K.pb (no expected outputs: run.sh compares
# backends with `fusor diff`).
import numpy as np, onnx, os
from onnx import helper as H, TensorProto as T, numpy_helper as nh


def case(root, name, nodes, feeds, outs, inits=(), opset=18, ot=None):
    typed = {k: (v if isinstance(v, tuple) else (v, nh.helper.np_dtype_to_tensor_dtype(v.dtype))) for k, v in feeds.items()}
    ot = ot or [T.FLOAT] * len(outs)
    g = H.make_graph(nodes, name, [H.make_tensor_value_info(k, tt, v.shape) for k, (v, tt) in typed.items()],
                     [H.make_tensor_value_info(o, t, None) for o, t in zip(outs, ot)], [nh.from_array(v, k) for k, v in inits])
    m = H.make_model(g, opset_imports=[H.make_opsetid("", opset)]); m.ir_version = 8
    d = f"{root}/{name}"; os.makedirs(d + "/test_data_set_0", exist_ok=True); onnx.save(m, d + "/model.onnx")
    for i, (k, (v, tt)) in enumerate(typed.items()):
        t = nh.from_array(v, k)
        if tt == T.BFLOAT16:  # float32 values truncated to their bfloat16 bits
            t = H.make_tensor(k, T.BFLOAT16, v.shape, (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes(), raw=True)
        open(f"{d}/test_data_set_0/input_{i}.pb", "wb").write(t.SerializeToString())
