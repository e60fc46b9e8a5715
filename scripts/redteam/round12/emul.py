"""emul.py KIND SEED: oracle for f16/bf16 graphs = f32 graph with every float result rounded through KIND (per-op rounding)"""
import sys, os, numpy as np, onnx
sys.path.insert(0, os.path.dirname(__file__))
import rgen, fuzz
from onnx import helper as oh
def emulated(kind, seed):
    s = rgen.gen(seed, kind)
    m, feeds = rgen.build(s, 'f32')
    nodes = []
    ft = {v.name for v in s.pool if v.dt == 'FT'} | {n.output[0] for n in s.nodes}
    for n in m.graph.node:
        o = n.output[0]
        n2 = onnx.NodeProto(); n2.CopyFrom(n); n2.output[0] = o + '_raw'
        nodes.append(n2)
        # round-trip only float outputs: decide by op
        if n.op_type in ('Less', 'Greater', 'Equal', 'LessOrEqual') or (n.op_type == 'Cast' and any(a.i != 1 for a in n.attribute)):
            nodes.append(oh.make_node('Identity', [o + '_raw'], [o]))
        else:
            nodes.append(oh.make_node('Cast', [o + '_raw'], [o + '_lp'], to=rgen.DT[kind]))
            nodes.append(oh.make_node('Cast', [o + '_lp'], [o], to=1))
    del m.graph.node[:]; m.graph.node.extend(nodes)
    res, src = fuzz.oracle(m, feeds)
    return res
if __name__ == '__main__':
    kind, seed = sys.argv[1], int(sys.argv[2])
    r = emulated(kind, seed)
    d = f'/tmp/rt12/fz/{kind}_{seed}'
    import onnx.numpy_helper as nh
    for b in ['ref', 'cpu', 'vulkan']:
        k = 0
        while os.path.exists(f'{d}/out_{b}/output_{k}.pb'):
            t = onnx.TensorProto(); t.ParseFromString(open(f'{d}/out_{b}/output_{k}.pb', 'rb').read())
            o = nh.to_array(t).astype(np.float64); e = np.asarray(r[k], np.float64)
            print(b, k, 'max abs diff vs emulated', np.abs(o - e).max(), 'maxabs', np.abs(e).max(), fuzz.cmp_float(o, e, 2e-2, 1e-2))
            k += 1
