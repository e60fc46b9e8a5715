from h import *
def build(name, nodes, feeds, inits=(), opset=18, outs=None):
    ins = [vi(n, oh.np_dtype_to_tensor_dtype(x.dtype), list(x.shape)) for n, x in feeds.items()]
    outs = outs or [nodes[-1].output[0]]
    m = model(nodes, ins, [oh.make_value_info(o, onnx.TypeProto()) for o in outs], inits, opset=opset)
    mi = onnx.shape_inference.infer_shapes(m)
    vis = {v.name: v for v in list(mi.graph.value_info) + list(mi.graph.output)}
    del m.graph.output[:]
    for o in outs:
        v = vis[o]
        if not v.type.tensor_type.HasField('elem_type') or v.type.tensor_type.elem_type == 0:
            raise RuntimeError('no type for ' + o)
        m.graph.output.append(v)
    return m
def I(n, a): return nh.from_array(np.asarray(a, np.int64), n)
