# Row-kernel models shaped like GPT-2 2L's residual + LayerNorm at seq 64 (issue 16: its fp16 /
# bf16 row kernels measured 8-10 us on Vulkan against 4.8 us for the same kernel in fp32):
# y = LayerNorm(a + b + c) over rows of N, in fp32, in fp16 (stash_type 1) and as the exporter
# writes it for fp16 (Cast to fp32, the decomposed mean / variance, Cast back).
#   python3 prep_rows.py OUTDIR
import os, sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

out = sys.argv[1]
rng = np.random.default_rng(7)
T = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}


def save(name, nodes, dt, n, inits, rows=64):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    ins = [helper.make_tensor_value_info(x, T[dt], [rows, n]) for x in ("a", "b", "c")]
    g = helper.make_graph(nodes, name, ins, [helper.make_tensor_value_info("y", T[dt], [rows, n])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(d, "model.onnx"))
    for i, x in enumerate(ins):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(rng.standard_normal((rows, n)).astype(dt), x.name).SerializeToString())


for n in (768, 1024):
    for dt, tag in ((np.float32, "fp32"), (np.float16, "fp16")):
        scale = numpy_helper.from_array(rng.uniform(0.5, 2, n).astype(dt), "scale")
        bias = numpy_helper.from_array(rng.uniform(-1, 1, n).astype(dt), "bias")
        adds = [helper.make_node("Add", ["a", "b"], ["s0"]), helper.make_node("Add", ["s0", "c"], ["s"])]
        save("ln_%s_%d" % (tag, n), adds + [helper.make_node("LayerNormalization", ["s", "scale", "bias"], ["y"], axis=-1, epsilon=1e-5)],
             dt, n, [scale, bias])
        # The exporter's form: mean, centred square mean, rsqrt (fp32 statistics when fp16).
        f32 = "s" if dt == np.float32 else "sf"
        nodes = list(adds)
        if dt == np.float16:
            nodes.append(helper.make_node("Cast", ["s"], ["sf"], to=TensorProto.FLOAT))
        nodes += [
            helper.make_node("ReduceMean", [f32], ["m"], axes=[-1]),
            helper.make_node("Sub", [f32, "m"], ["d"]),
            helper.make_node("Mul", ["d", "d"], ["d2"]),
            helper.make_node("ReduceMean", ["d2"], ["v"], axes=[-1]),
            helper.make_node("Add", ["v", "eps"], ["ve"]),
            helper.make_node("Sqrt", ["ve"], ["sd"]),
            helper.make_node("Div", ["d", "sd"], ["nf"]),
        ]
        if dt == np.float16:
            nodes.append(helper.make_node("Cast", ["nf"], ["n"], to=TensorProto.FLOAT16))
        else:
            nodes.append(helper.make_node("Identity", ["nf"], ["n"]))
        nodes += [helper.make_node("Mul", ["n", "scale"], ["ns"]), helper.make_node("Add", ["ns", "bias"], ["y"])]
        eps = numpy_helper.from_array(np.array(1e-5, np.float32), "eps")
        save("dec_%s_%d" % (tag, n), nodes, dt, n, [scale, bias, eps])
