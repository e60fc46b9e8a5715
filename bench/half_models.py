"""fp16 and bf16 versions of models checked against onnxruntime.

fp16: converts each model folder's model.onnx to float16 (onnxconverter-common, inputs and
outputs float16 too), runs onnxruntime (CPU) on seeded random inputs and writes an ONNX
backend-test folder (model.onnx + test_data_set_0) per model, so `fusor conform OUT/* --backend
...` compares every backend with onnxruntime.

bf16 (--bf16): the fp32 model with every float type, initializer, Constant and Cast retyped to
bfloat16 (values rounded to nearest even). onnxruntime's CPU provider has few bf16 kernels, so
the stored outputs come from the fp32 model whose weights and inputs are the same bf16 values
(exact math on the bf16 data): what a backend may differ by is bf16 rounding of intermediates,
judged with bf16 tolerances (README, conformance).
Usage: python3 bench/half_models.py [--bf16] OUT MODEL_DIR...
(needs onnx, onnxruntime, onnxconverter-common)"""
import os, sys
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, numpy_helper
from onnxconverter_common import float16

args = sys.argv[1:]
bf16 = "--bf16" in args
args = [a for a in args if a != "--bf16"]
out_root, dirs = args[0], args[1:]


def bf16_bits(x):
    """float32 array -> bf16 bit patterns (uint16), round to nearest even; NaN kept quiet."""
    x = np.asarray(x, np.float32)
    u = x.reshape(-1).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    r[np.isnan(x.reshape(-1))] = 0x7FC0
    return r.reshape(x.shape)


def bf16_round(x):
    return (bf16_bits(x).astype(np.uint32) << 16).view(np.float32)


def retype_tensor(t):
    """A FLOAT TensorProto retyped to BFLOAT16 in place."""
    if t.data_type != TensorProto.FLOAT:
        return
    v = numpy_helper.to_array(t).astype(np.float32)
    t.ClearField("int32_data"); t.ClearField("raw_data")
    t.data_type = TensorProto.BFLOAT16
    t.raw_data = bf16_bits(v).tobytes()


def retype_graph(g):
    for t in g.initializer:
        retype_tensor(t)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.BFLOAT16
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                retype_tensor(a.t)
            elif a.type == onnx.AttributeProto.GRAPH:
                retype_graph(a.g)
            elif a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.BFLOAT16


def fp32_with_bf16_weights(m32):
    """The fp32 model with every float initializer / Constant rounded to bf16 values."""
    m = onnx.ModelProto(); m.CopyFrom(m32)
    def fix(t):
        if t.data_type == TensorProto.FLOAT:
            v = bf16_round(numpy_helper.to_array(t))
            t.CopyFrom(numpy_helper.from_array(v, t.name))
    def walk(g):
        for t in g.initializer: fix(t)
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.TENSOR: fix(a.t)
                elif a.type == onnx.AttributeProto.GRAPH: walk(a.g)
    walk(m.graph)
    return m


def random_feeds(sess, dtype):
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess.get_inputs():
        shape = [s if isinstance(s, int) else 1 for s in i.shape]
        if i.type in ("tensor(float16)", "tensor(float)"):
            feeds[i.name] = rng.uniform(-1, 1, shape).astype(np.float32)
        elif i.type == "tensor(int64)":
            feeds[i.name] = rng.integers(0, 8, shape).astype(np.int64)
        else:
            raise SystemExit(f"input {i.name} has type {i.type}")
    return feeds


for d in dirs:
    m32 = onnx.load(os.path.join(d, "model.onnx"))
    m = onnx.ModelProto(); m.CopyFrom(m32)
    if not bf16:
        m = float16.convert_float_to_float16(m32, keep_io_types=False)
    name = os.path.basename(os.path.normpath(d)) + ("_bf16" if bf16 else "_fp16")
    od = os.path.join(out_root, name)
    os.makedirs(os.path.join(od, "test_data_set_0"), exist_ok=True)
    data = os.path.join(od, "test_data_set_0")
    if not bf16:
        onnx.save(m, os.path.join(od, "model.onnx"))
        sess = ort.InferenceSession(os.path.join(od, "model.onnx"), providers=["CPUExecutionProvider"])
        feeds = {k: (v.astype(np.float16) if v.dtype == np.float32 else v) for k, v in random_feeds(sess, np.float16).items()}
        ins = [numpy_helper.from_array(feeds[i.name], i.name) for i in sess.get_inputs()]
        outs = [numpy_helper.from_array(y, o.name) for o, y in zip(sess.get_outputs(), sess.run(None, feeds))]
    else:
        retype_graph(m.graph)
        onnx.save(m, os.path.join(od, "model.onnx"))
        sess = ort.InferenceSession(fp32_with_bf16_weights(m32).SerializeToString(), providers=["CPUExecutionProvider"])
        feeds = {k: (bf16_round(v) if v.dtype == np.float32 else v) for k, v in random_feeds(sess, np.float32).items()}
        def as_bf16(x, nm):
            if x.dtype != np.float32:
                return numpy_helper.from_array(x, nm)
            t = TensorProto(name=nm, data_type=TensorProto.BFLOAT16, dims=list(x.shape))
            t.raw_data = bf16_bits(x).tobytes()
            return t
        ins = [as_bf16(feeds[i.name], i.name) for i in sess.get_inputs()]
        # Outputs stay fp32 values rounded to bf16: the stored tensor has the model's dtype.
        outs = [as_bf16(y, o.name) for o, y in zip(sess.get_outputs(), sess.run(None, feeds))]
    for k, t in enumerate(ins):
        onnx.save_tensor(t, os.path.join(data, f"input_{k}.pb"))
    for k, t in enumerate(outs):
        onnx.save_tensor(t, os.path.join(data, f"output_{k}.pb"))
    print(name, [(t.name, t.data_type, list(t.dims)) for t in outs])
