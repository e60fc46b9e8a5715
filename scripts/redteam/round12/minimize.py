"""minimize.py CASE_DIR KIND OUTNAME [backend-filter]: greedy graph reducer. Failure = check_case reports WRONG/DISAGREE/FAULT
(on a backend matching the filter). Expected values: ORT or onnx.reference (f64 version for floats not available here:
uses ORT on the case model itself; for bf16/f16 the backends' mutual disagreement)."""
import os, sys, copy, numpy as np, onnx, shutil
sys.path.insert(0, os.path.dirname(__file__))
import fuzz
from onnx import helper as oh, numpy_helper as nh, shape_inference


def load(d):
    m = onnx.load(os.path.join(d, 'model.onnx'))
    feeds = {}
    for k, i in enumerate(m.graph.input):
        t = onnx.TensorProto(); t.ParseFromString(open(os.path.join(d, 'inputs', f'input_{k}.pb'), 'rb').read())
        feeds[i.name] = nh.to_array(t)
    return m, feeds


def intermediates(m, feeds):
    mi = shape_inference.infer_shapes(m)
    vi = {v.name: v for v in list(mi.graph.value_info) + list(mi.graph.output)}
    m2 = copy.deepcopy(m)
    names = [o for n in m.graph.node for o in n.output if o in vi]
    del m2.graph.output[:]
    m2.graph.output.extend([vi[n] for n in names])
    res, _ = fuzz.oracle(m2, feeds)
    return dict(zip(names, res)) if res is not None else {}, vi


def prune(m):
    need = {o.name for o in m.graph.output}
    keep = []
    for n in reversed(m.graph.node):
        if any(o in need for o in n.output):
            keep.append(n); need |= set(i for i in n.input if i)
    keep.reverse()
    del m.graph.node[:]; m.graph.node.extend(keep)
    ins = [i for i in m.graph.input if i.name in need]
    del m.graph.input[:]; m.graph.input.extend(ins)
    ini = [i for i in m.graph.initializer if i.name in need]
    del m.graph.initializer[:]; m.graph.initializer.extend(ini)
    return m


def fails(m, feeds, kind, filt, tmp):
    feeds = {i.name: feeds[i.name] for i in m.graph.input}
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception:
        return False
    exp, _ = fuzz.oracle(m, feeds)
    if exp is None: return False
    exp64 = exp
    if kind in ('f16', 'bf16'):
        exp = None
    fuzz.save(tmp, m, feeds, exp64)
    lines = fuzz.check_case(tmp, kind, m, feeds, exp, [np.asarray(e) for e in exp64] if exp64 is not None else None)
    bad = [l for l in lines if l[1] in ('WRONG', 'DISAGREE', 'FAULT') and 'shape' not in l[2] and (not filt or l[0] in filt)]
    return bool(bad), lines


def minimize(d, kind, out, filt=()):
    m, feeds = load(d)
    tmp = '/tmp/rt12/scratch/_min'
    r = fails(m, feeds, kind, filt, tmp)
    assert r and r[0], f'does not fail: {r}'
    # 1. single output
    for o in list(m.graph.output):
        m2 = copy.deepcopy(m); del m2.graph.output[:]; m2.graph.output.extend([o]); prune(m2)
        r = fails(m2, feeds, kind, filt, tmp)
        if r and r[0]: m = m2; break
    changed = True
    while changed:
        changed = False
        inter, vi = intermediates(m, feeds)
        # 2. replace a node's output by a graph input (cut the graph above)
        for n in list(m.graph.node):
            for o in n.output:
                if o not in inter or o in [x.name for x in m.graph.output]: continue
                m2 = copy.deepcopy(m)
                m2.graph.input.append(vi[o])
                nodes = [x for x in m2.graph.node if x.output[0] != o]
                del m2.graph.node[:]; m2.graph.node.extend(nodes); prune(m2)
                f2 = dict(feeds); f2[o] = np.asarray(inter[o])
                r = fails(m2, f2, kind, filt, tmp)
                if r and r[0]:
                    m, feeds, changed = m2, f2, True; break
            if changed: break
        if changed: continue
        # 3. bypass a unary-ish node (output := its first input) when dtype/shape equal
        for n in list(m.graph.node):
            o = n.output[0]; i0 = n.input[0]
            m2 = copy.deepcopy(m)
            nodes = [x for x in m2.graph.node if x.output[0] != o]
            for x in nodes:
                for k, nm in enumerate(x.input):
                    if nm == o: x.input[k] = i0
            for x in m2.graph.output:
                if x.name == o:
                    x.name = i0
            del m2.graph.node[:]; m2.graph.node.extend(nodes); prune(m2)
            r = fails(m2, feeds, kind, filt, tmp)
            if r and r[0]:
                m, changed = m2, True; break
    feeds = {i.name: feeds[i.name] for i in m.graph.input}
    r = fails(m, feeds, kind, filt, out)
    print(onnx.printer.to_text(m.graph))
    for l in r[1]: print(l)
    return m, feeds


if __name__ == '__main__':
    minimize(sys.argv[1], sys.argv[2], sys.argv[3], tuple(sys.argv[4].split(',')) if len(sys.argv) > 4 else ())
