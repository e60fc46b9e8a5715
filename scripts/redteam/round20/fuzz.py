#!/usr/bin/env python3
"""Red-team round 20: random small models over the newest row-kernel and GEMV fusions.

Patterns (one generator each, seeded; every input random and non-zero):
  attn      Softmax / LogSoftmax(Q @ K^T [* or / scale] [+ mask]) [@ V]: heads, batch and key
            broadcasting, -inf masks (causal, padding, wholly masked rows, an input mask),
            -1e4 masks, K or V transposed by Transpose nodes or given so, Cast to / from
            float16 / bfloat16 around the block, NaN / +-inf / +-0 among q, k, v (sp > 0),
            heads merged by Transpose / Reshape (row products, inline scores)
  rowprod   a row kernel's element output (Softmax, masked Softmax, LogSoftmax, LayerNorm,
            RMSNorm, Hardmax, x - max, x / sum|x|) times a small B (constant, input, transposed,
            computed, x itself, broadcast) at the limits' edges (rows 31 / 32, K 2047-2049,
            N 255-257), with and without an epilogue
  attnrp, rowprodrp  the same, retried until the shape and dtypes are ones a row product takes
  rowred    ReduceMax / ReduceMin / Softmax / LogSoftmax / Hardmax over rows with NaN, +-inf,
            +-0 (from memory: lavapipe folds x * literal 0.0), all-zero and negated rows
            (max / min partial accumulators)
  mean      LayerNormalization, ReduceMean, LayerNorm / GroupNorm decompositions,
            GroupNormalization-21, InstanceNormalization (means dividing by a prepared count)
  gemv      MatMul / Gemm with M <= 8 rows: odd K and N, transB, alpha / beta, bias, activation,
            residual, float16 / bfloat16 weights through Cast, a second layer
  gemv2     1-D operands, Gemm transA, batched and broadcast weights, K = 1, Softmax into a GEMV

Each model is written with test_data_set_0 inputs; `fusor run --out` gives each backend's
outputs, which are compared with ref's (and ref with onnxruntime where it runs the model):
fp32 within --tol32 ulps (64) of the largest |ref|, and where the model computes in float16 /
bfloat16 within --tol16 (4) of that dtype's ulps there; NaN and inf positions must agree. Each
backend also runs with the pattern's fusion knobs flipped (FUSOR_ROW_PRODUCT=0,
FUSOR_INLINE_DOT=0 / 1, FUSOR_ROW_MAX_PARTIALS=1, FUSOR_ROW_REGISTERS=0, FUSOR_ONLINE_SOFTMAX=0,
FUSOR_VK_ROW_VEC4=0, FUSOR_VK_GEMV_UNROLL=1 / 2 / 16, FUSOR_VK_GEMV_COLS=8, FUSOR_VK_GEMV=new),
and `fusor explain --backend cpu` says which fusions the plan took ({ROWPROD, DOT (default rule),
DOT1 (FUSOR_INLINE_DOT=1), REGROWS} at the end of each line).

Usage: fuzz.py --out DIR [--n N] [--seed S] [--patterns attn,rowprod,...] [--fusor build/fusor]
Writes DIR/results.txt (one line per model x backend x knob: ok | BAD (fusor against ref) |
ORT (ref against onnxruntime) | ERR (a one-line refusal) | gen (onnx rejected the combination),
the tag, the detail). Needs onnx, numpy (and onnxruntime for its comparison); exports
VK_DRIVER_FILES for lavapipe.
"""
import argparse
import os
import re
import subprocess
import sys
import traceback

import numpy as np
import onnx
from onnx import TensorProto as TP, helper as h, numpy_helper as nh

F32, F16, BF16 = TP.FLOAT, TP.FLOAT16, TP.BFLOAT16
VK_ENV = {"VK_DRIVER_FILES": "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"}


def bf16_bits(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    r[np.isnan(a)] = 0x7FC0
    return r


def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def tensor(name, arr, dt):
    arr = np.asarray(arr)
    if dt == F32:
        return nh.from_array(arr.astype(np.float32), name)
    if dt == F16:
        return nh.from_array(arr.astype(np.float16), name)
    if dt == BF16:
        t = TP()
        t.name, t.data_type = name, BF16
        t.dims.extend(arr.shape)
        t.raw_data = bf16_bits(arr).tobytes()
        return t
    if dt == TP.INT64:
        return nh.from_array(arr.astype(np.int64), name)
    raise ValueError(dt)


def to_np(t):
    if t.data_type == BF16:
        raw = np.frombuffer(t.raw_data, dtype=np.uint16) if t.raw_data else np.array(t.int32_data, dtype=np.uint16)
        return bf16_to_f32(raw).reshape(tuple(t.dims)), BF16
    a = nh.to_array(t)
    return a, t.data_type


class G:
    """A tiny graph builder."""

    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.inputs, self.feeds, self.n = rng, [], [], [], [], 0

    def name(self, p="t"):
        self.n += 1
        return f"{p}{self.n}"

    def input(self, shape, dt=F32, lo=-2.0, hi=2.0, specials=0.0, value=None):
        nm = self.name("in")
        a = self.rng.uniform(lo, hi, size=shape).astype(np.float32)
        a[a == 0] = 0.5
        if value is not None:
            a = np.full(shape, value, dtype=np.float32)
        if specials > 0 and a.size:
            sp = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=np.float32)
            msk = self.rng.random(a.shape) < specials
            a[msk] = self.rng.choice(sp, size=int(msk.sum()))
        self.inputs.append(h.make_tensor_value_info(nm, dt, list(shape)))
        self.feeds.append(tensor(nm, a, dt))
        return nm

    def const(self, arr, dt=F32):
        nm = self.name("c")
        self.inits.append(tensor(nm, arr, dt))
        return nm

    def op(self, op, ins, n_out=1, **attrs):
        outs = [self.name() for _ in range(n_out)]
        self.nodes.append(h.make_node(op, ins, outs, name=self.name(op), **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, outs, opset):
        g = h.make_graph(self.nodes, "g", self.inputs, [h.make_tensor_value_info(o, 0, None) for o in outs], self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
        m.ir_version = 8 if opset <= 18 else 9
        m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        # outputs typed from inference
        vi = {v.name: v for v in list(m.graph.value_info) + list(m.graph.output)}
        del m.graph.output[:]
        for o in outs:
            v = vi.get(o)
            if (v is None or not v.type.tensor_type.HasField("shape")) and o in getattr(self, "out_types", {}):
                v = h.make_tensor_value_info(o, *self.out_types[o])  # ops onnx infers no shape for (GroupNormalization-21)
            m.graph.output.append(v)
        onnx.checker.check_model(m, full_check=True)
        return m


ODD = [1, 2, 3, 7, 8, 16, 31, 32, 33, 63, 64, 65, 129, 257]


def pick(rng, xs):
    return xs[int(rng.integers(len(xs)))]


# ---------------------------------------------------------------------------------- patterns
def gen_attn(rng):
    g = G(rng)
    sp = float(pick(rng, [0.0, 0.0, 0.0, 0.01, 0.05]))  # NaN / +-inf / +-0 among q, k, v
    _inp = g.input
    g.input = lambda shape, dt=F32, lo=-2.0, hi=2.0, specials=0.0, value=None: _inp(shape, dt, lo, hi, max(specials, sp), value)
    opset = int(rng.integers(13, 22))
    B = pick(rng, [1, 1, 2, 3])
    H = pick(rng, [1, 2, 3, 4, 5])
    S = pick(rng, [1, 3, 7, 8, 16, 31, 33, 64, 65])
    L = pick(rng, [1, 2, 3, 7, 31, 33, 63, 64, 65, 129, 257])
    D = pick(rng, [1, 3, 7, 8, 16, 31, 33, 64])
    Dv = D if rng.random() < 0.6 else pick(rng, [1, 3, 5, 17, 33, 65, 129, 255, 256])
    io = pick(rng, [F32, F32, F32, F16, BF16])  # dtype of the graph's inputs
    work = io if rng.random() < 0.5 else pick(rng, [F32, F16, BF16])  # dtype the block computes in
    if opset < 13 or (BF16 in (io, work) and opset < 13):
        pass
    desc = [f"op{opset}", f"B{B}H{H}S{S}L{L}D{D}Dv{Dv}", f"io{io}w{work}", f"sp{sp}"]

    def cast(x, to):
        return g.op("Cast", [x], to=to)

    qshape = [B, H, S, D]
    kmode = pick(rng, ["kT_node", "kT_given", "k_perm_merge"])
    q = g.input(qshape, io)
    if kmode == "kT_given":
        k = g.input([B, H, D, L], io)
    elif kmode == "k_perm_merge":  # k as [B, L, H, D] -> [B, H, D, L]
        k = g.input([B, L, H, D], io)
    else:
        kb = B if rng.random() < 0.7 else 1  # broadcast keys over the batch
        k = g.input([kb, H, L, D], io)
    desc.append(kmode)
    if work != io:
        q, k = cast(q, work), cast(k, work)
    if kmode == "kT_node":
        k = g.op("Transpose", [k], perm=[0, 1, 3, 2])
    elif kmode == "k_perm_merge":
        k = g.op("Transpose", [k], perm=[0, 2, 3, 1])
    sc = float(rng.choice([0.125, 0.35, 1 / np.sqrt(max(D, 1))]))
    where = pick(rng, ["q", "k", "scores", "div", "none"])
    desc.append("scale_" + where)
    if where == "q":
        q = g.op("Mul", [q, g.const(np.array(sc), work)])
    elif where == "k":
        k = g.op("Mul", [k, g.const(np.array(sc), work)])
    x = g.op("MatMul", [q, k])
    if where == "scores":
        x = g.op("Mul", [x, g.const(np.array(sc), work)])
    elif where == "div":
        x = g.op("Div", [x, g.const(np.array(1 / sc), work)])
    mm = pick(rng, ["none", "causal", "pad", "full_inf_row", "input_mask", "neg_big"])
    desc.append("mask_" + mm)
    if mm != "none":
        if mm == "causal":
            m = np.where(np.arange(L)[None, :] <= np.arange(S)[:, None] + (L - S), 0.0, -np.inf)
        elif mm == "pad":
            m = np.zeros((B, 1, 1, L))
            for b in range(B):
                m[b, 0, 0, int(rng.integers(1, L + 1)):] = -np.inf
        elif mm == "full_inf_row":
            m = np.where(rng.random((S, L)) < 0.3, -np.inf, 0.0)
            m[int(rng.integers(S))] = -np.inf
        elif mm == "neg_big":
            m = np.where(rng.random((1, H, S, L)) < 0.5, -1e4, 0.0)
        if mm == "input_mask":
            mk = g.input([B, 1, S, L], work, lo=-3, hi=3)
        else:
            mk = g.const(m, work)
        x = g.op("Add", [x, mk])
    sm = pick(rng, ["Softmax"] * 4 + ["LogSoftmax"])
    desc.append(sm)
    p = g.op(sm, [x], axis=-1)
    outs = [p]
    if rng.random() < 0.85:
        vmode = pick(rng, ["v", "vT_node", "v2d", "v_bcast"])
        desc.append(vmode)
        if vmode == "v":
            v = g.input([B, H, L, Dv], io)
        elif vmode == "vT_node":
            v = g.input([B, H, Dv, L], io)
        elif vmode == "v2d":
            v = g.input([L, Dv], io)
        else:
            v = g.input([1, H, L, Dv], io)
        if work != io:
            v = cast(v, work)
        if vmode == "vT_node":
            v = g.op("Transpose", [v], perm=[0, 1, 3, 2])
        o = g.op("MatMul", [p, v])
        if rng.random() < 0.5:
            o = g.op("Transpose", [o], perm=[0, 2, 1, 3])
            if rng.random() < 0.5:
                o = g.op("Reshape", [o, g.const(np.array([B, S, H * Dv]), TP.INT64)])
        if work != io and rng.random() < 0.7:
            o = cast(o, io)
        outs = [o]
        if rng.random() < 0.1:
            outs.append(p)  # the weights are an output too: no row product
            desc.append("p_out")
    return g, g.model(outs, opset), " ".join(desc), {"specials": sp > 0, "work": work, "knobs": ["FUSOR_ROW_PRODUCT=0", "FUSOR_INLINE_DOT=0", "FUSOR_INLINE_DOT=1", "FUSOR_ROW_REGISTERS=0",
                                                                  "FUSOR_ROW_MAX_PARTIALS=1"]}


def gen_rowred(rng):
    g = G(rng)
    opset = int(rng.integers(13, 22))
    rank = pick(rng, [2, 3, 4])
    shape = [pick(rng, [1, 2, 3, 5]) for _ in range(rank - 1)] + [pick(rng, ODD + [100, 513, 1000, 2049, 4097])]
    if rng.random() < 0.3:
        shape[-2] = pick(rng, [31, 33, 64, 65])
    dt = pick(rng, [F32, F32, F16, BF16])
    spec = pick(rng, [0.0, 0.02, 0.1, 0.5, 1.0])
    x = g.input(shape, dt, lo=-5, hi=5, specials=spec)
    if rng.random() < 0.3:  # all-equal / signed-zero rows (the zero read from memory: lavapipe folds x * literal 0.0)
        z = float(pick(rng, [0.0, -0.0]))
        x = g.op("Mul", [x, g.input([1], dt, value=z)]) if rng.random() < 0.5 else g.op("Neg", [x])

    op = pick(rng, ["ReduceMax", "ReduceMin", "Softmax", "LogSoftmax", "Hardmax", "ReduceMaxMin", "SoftmaxMid"])
    desc = [f"op{opset}", str(shape), f"dt{dt}", f"spec{spec}", op, g.nodes[-1].op_type if g.nodes else ""]
    keep = int(rng.integers(2))
    if op in ("ReduceMax", "ReduceMin", "ReduceMaxMin"):
        ax = [-1] if rng.random() < 0.8 else [rank - 2, rank - 1]

        def red(o, x):
            if opset >= 18:
                return g.op(o, [x, g.const(np.array(ax), TP.INT64)], keepdims=keep)
            return g.op(o, [x], axes=ax, keepdims=keep)
        if op == "ReduceMaxMin":
            a, b = red("ReduceMax", x), red("ReduceMin", x)
            y = g.op("Sub", [a, b])
            outs = [y, a]
        else:
            y = red(op, x)
            if rng.random() < 0.5:  # an epilogue / the max subtracted (a hand-written softmax)
                y2 = g.op("Exp", [g.op("Sub", [x, y if keep else g.op("Unsqueeze", [y, g.const(np.array(ax), TP.INT64)]) if opset >= 13 else y])])
                outs = [y, y2]
            else:
                outs = [y]
    elif op == "SoftmaxMid":
        outs = [g.op("Softmax", [x], axis=int(rng.integers(0, rank)))]
    else:
        outs = [g.op(op, [x], axis=-1)]
    return g, g.model(outs, opset), " ".join(desc), {"specials": spec > 0, "knobs": ["FUSOR_ROW_MAX_PARTIALS=1", "FUSOR_VK_ROW_VEC4=0", "FUSOR_ROW_REGISTERS=0", "FUSOR_ONLINE_SOFTMAX=0"]}


def gen_mean(rng):
    g = G(rng)
    opset = int(rng.integers(17, 22))
    kind = pick(rng, ["LayerNorm", "ReduceMean", "GroupNormDecomp", "InstanceNorm", "LayerNormDecomp", "GroupNorm"])
    dt = pick(rng, [F32, F32, F16, BF16])
    if kind == "InstanceNorm" and dt == BF16:
        dt = F16  # InstanceNormalization has no bfloat16
    desc = [f"op{opset}", kind, f"dt{dt}"]
    if kind in ("LayerNorm", "LayerNormDecomp"):
        shape = [pick(rng, [1, 2, 3]), pick(rng, [1, 3, 7, 33, 65])] + [pick(rng, ODD + [384, 768, 1000, 1025])]
        x = g.input(shape, dt, lo=-3, hi=5)
        C = shape[-1]
        w = g.const(rng.uniform(-2, 2, C), dt)
        b = g.const(rng.uniform(-2, 2, C), dt)
        eps = float(pick(rng, [1e-5, 1e-12, 1e-3]))
        if kind == "LayerNorm":
            ax = -1 if rng.random() < 0.8 else -2
            if ax == -2:
                w = g.const(rng.uniform(-2, 2, shape[-2:]), dt)
                b = g.const(rng.uniform(-2, 2, shape[-2:]), dt)
            y = g.op("LayerNormalization", [x, w, b], axis=ax, epsilon=eps, **({"stash_type": 1} if rng.random() < 0.5 else {}))
        else:
            axc = g.const(np.array([-1]), TP.INT64)
            mu = g.op("ReduceMean", [x, axc]) if opset >= 18 else g.op("ReduceMean", [x], axes=[-1])
            d = g.op("Sub", [x, mu])
            var = g.op("ReduceMean", [g.op("Mul", [d, d]), axc]) if opset >= 18 else g.op("ReduceMean", [g.op("Mul", [d, d])], axes=[-1])
            y = g.op("Div", [d, g.op("Sqrt", [g.op("Add", [var, g.const(np.array(eps), dt)])])])
            y = g.op("Add", [g.op("Mul", [y, w]), b])
        desc.append(str(shape))
        outs = [y]
    elif kind == "ReduceMean":
        rank = pick(rng, [2, 3, 4])
        shape = [pick(rng, [1, 2, 3, 5, 7]) for _ in range(rank - 1)] + [pick(rng, ODD + [1000, 3001])]
        x = g.input(shape, dt, lo=-1, hi=9)
        ax = pick(rng, [[-1], [-1], [rank - 2, rank - 1], [0], list(range(rank))])
        keep = int(rng.integers(2))
        y = g.op("ReduceMean", [x, g.const(np.array(ax), TP.INT64)], keepdims=keep) if opset >= 18 else g.op("ReduceMean", [x], axes=ax, keepdims=keep)
        if rng.random() < 0.5:
            y = g.op("Mul", [y, g.const(np.array(3.0), dt)])
        desc += [str(shape), str(ax), f"keep{keep}"]
        outs = [y]
    else:
        N = pick(rng, [1, 2])
        G_ = pick(rng, [1, 2, 3, 4, 8])
        C = G_ * pick(rng, [1, 2, 3, 5])
        HW = [pick(rng, [1, 3, 7, 8, 15]), pick(rng, [1, 5, 9, 16])]
        shape = [N, C] + HW
        x = g.input(shape, dt, lo=-2, hi=6)
        eps = 1e-5
        desc += [str(shape), f"groups{G_}"]
        if kind == "InstanceNorm":
            y = g.op("InstanceNormalization", [x, g.const(rng.uniform(-2, 2, C), dt), g.const(rng.uniform(-2, 2, C), dt)], epsilon=eps)
        elif kind == "GroupNorm" and opset >= 21:
            y = g.op("GroupNormalization", [x, g.const(rng.uniform(-2, 2, C), dt), g.const(rng.uniform(-2, 2, C), dt)], epsilon=eps, num_groups=G_)
            g.out_types = {y: (dt, shape)}
        else:
            r = g.op("Reshape", [x, g.const(np.array([N, G_, -1]), TP.INT64)])
            axc = g.const(np.array([-1]), TP.INT64)
            rm = (lambda t: g.op("ReduceMean", [t, axc])) if opset >= 18 else (lambda t: g.op("ReduceMean", [t], axes=[-1]))
            mu = rm(r)
            d = g.op("Sub", [r, mu])
            var = rm(g.op("Pow", [d, g.const(np.array(2.0), dt)]))
            y = g.op("Div", [d, g.op("Sqrt", [g.op("Add", [var, g.const(np.array(eps), dt)])])])
            y = g.op("Reshape", [y, g.const(np.array(shape), TP.INT64)])
            y = g.op("Add", [g.op("Mul", [y, g.const(rng.uniform(-2, 2, (C, 1, 1)), dt)]), g.const(rng.uniform(-2, 2, (C, 1, 1)), dt)])
        outs = [y]
    return g, g.model(outs, opset), " ".join(desc), {"knobs": ["FUSOR_VK_ROW_VEC4=0"]}


def gen_gemv(rng):
    g = G(rng)
    opset = int(rng.integers(13, 22))
    M = pick(rng, [1, 1, 1, 2, 3, 4, 5, 7, 8])
    K = pick(rng, [1, 2, 3, 7, 15, 16, 17, 31, 33, 63, 64, 65, 129, 257, 511, 768, 1000, 1023, 2049])
    N = pick(rng, [1, 2, 3, 7, 16, 31, 33, 65, 129, 257, 384, 1000])
    act_dt = pick(rng, [F32, F32, F16, BF16])
    w_dt = act_dt if rng.random() < 0.6 else pick(rng, [F16, BF16])
    use_gemm = rng.random() < 0.4
    transB = int(rng.integers(2)) if use_gemm else 0
    lead = [] if use_gemm else pick(rng, [[], [1], [1, 1], [2]])
    if lead == [2]:
        M = min(M, 4)
    desc = [f"op{opset}", f"M{M}K{K}N{N}", f"lead{lead}", f"act{act_dt}", f"w{w_dt}", "Gemm" if use_gemm else "MatMul", f"tB{transB}"]
    x = g.input(lead + [M, K], act_dt, lo=-1, hi=1)
    wshape = [N, K] if transB else [K, N]
    w = g.const(rng.uniform(-1, 1, wshape) / np.sqrt(K), w_dt)
    if w_dt != act_dt:
        w = g.op("Cast", [w], to=act_dt)
    if rng.random() < 0.15 and not use_gemm:  # a weight given as an input
        w = g.input(wshape, act_dt, lo=-1, hi=1)
        desc.append("w_input")
    bias = None
    if rng.random() < 0.6:
        bias = g.const(rng.uniform(-1, 1, pick(rng, [[N], [1, N], [1]] if use_gemm else [[N], [1, N]])), act_dt)
    if use_gemm:
        attrs = {"transB": transB}
        if rng.random() < 0.4:
            attrs["alpha"] = float(pick(rng, [0.5, 2.0, -1.0]))
        if bias is not None and rng.random() < 0.4:
            attrs["beta"] = float(pick(rng, [0.5, 2.0, 0.0]))
        y = g.op("Gemm", [x, w] + ([bias] if bias is not None else []), **attrs)
        desc.append(str(attrs))
    else:
        y = g.op("MatMul", [x, w])
        if bias is not None:
            y = g.op("Add", [y, bias] if rng.random() < 0.5 else [bias, y])
    act = pick(rng, ["none", "Relu", "Sigmoid", "Tanh", "Gelu", "GeluErf", "LeakyRelu", "Clip"])
    desc.append(act)
    if act == "Relu" or act == "Sigmoid" or act == "Tanh":
        y = g.op(act, [y])
    elif act == "Gelu" and opset >= 20:
        y = g.op("Gelu", [y], approximate="tanh")
    elif act in ("Gelu", "GeluErf"):
        e = g.op("Erf", [g.op("Mul", [y, g.const(np.array(1 / np.sqrt(2)), act_dt)])])
        y = g.op("Mul", [g.op("Mul", [y, g.const(np.array(0.5), act_dt)]), g.op("Add", [e, g.const(np.array(1.0), act_dt)])])
    elif act == "LeakyRelu":
        y = g.op("LeakyRelu", [y], alpha=0.1)
    elif act == "Clip":
        y = g.op("Clip", [y, g.const(np.array(-0.3), act_dt), g.const(np.array(0.4), act_dt)])
    if rng.random() < 0.4:
        r = g.input(lead + [M, N], act_dt)
        y = g.op("Add", [y, r])
        desc.append("residual")
    outs = [y]
    if rng.random() < 0.2:  # a second linear layer (chained GEMVs)
        N2 = pick(rng, [1, 5, 33, 64])
        w2 = g.const(rng.uniform(-1, 1, [N, N2]) / np.sqrt(N), act_dt)
        outs = [g.op("MatMul", [y, w2])] if not use_gemm else [g.op("Gemm", [y, w2])]
        desc.append(f"then_N2{N2}")
    return g, g.model(outs, opset), " ".join(desc), {"knobs": ["FUSOR_VK_GEMV_UNROLL=1", "FUSOR_VK_GEMV_UNROLL=16", "FUSOR_VK_GEMV_UNROLL=2", "FUSOR_VK_GEMV_COLS=8", "FUSOR_VK_GEMV=new", "FUSOR_GEMV_TREE_RADIX=2",
                                                        "FUSOR_VK_GEMV_THREADS=64", "FUSOR_VK_GEMV_THREADS=128", "FUSOR_VK_GEMV_COLS=32"]}


def gen_rowprod(rng):
    """A row kernel's element output (Softmax, LogSoftmax, LayerNorm, RMSNorm, Hardmax, x - max,
    x / sum) times a small B: row products beyond attention, at the limits' edges."""
    g = G(rng)
    sp = float(pick(rng, [0.0, 0.0, 0.0, 0.01, 0.05]))
    _inp = g.input
    g.input = lambda shape, dt=F32, lo=-2.0, hi=2.0, specials=0.0, value=None: _inp(shape, dt, lo, hi, max(specials, sp), value)
    opset = int(rng.integers(17, 22))
    rows = pick(rng, [31, 32, 33, 64, 65, 96, 257, 1000, 4097])
    K = pick(rng, [2, 3, 7, 31, 33, 64, 65, 129, 255, 257, 1000, 2047, 2048, 2049])
    N = pick(rng, [1, 2, 3, 7, 16, 31, 33, 64, 65, 129, 255, 256, 257])
    while rows * K * N > (1 << 24) * 1.2:
        rows = max(31, rows // 4)
    lead = pick(rng, [[rows], [1, rows], [rows // 8 or 1, 8] if rows % 8 == 0 else [rows], [2, rows // 2] if rows % 2 == 0 else [rows]])
    dt = pick(rng, [F32, F32, F32, F16, BF16])
    pdt = dt if rng.random() < 0.7 else pick(rng, [F32, F16, BF16])  # P cast to this before the product
    desc = [f"op{opset}", f"lead{lead}K{K}N{N}", f"dt{dt}p{pdt}", f"sp{sp}"]
    x = g.input(lead + [K], dt, lo=-4, hi=4)
    rop = pick(rng, ["Softmax", "LogSoftmax", "LayerNorm", "RMSNorm", "Hardmax", "SubMax", "DivSum", "SoftmaxMasked"])
    desc.append(rop)
    axc = g.const(np.array([-1]), TP.INT64)
    if rop in ("Softmax", "LogSoftmax", "Hardmax"):
        p = g.op(rop, [x], axis=-1)
    elif rop == "SoftmaxMasked":
        m = np.where(rng.random(lead + [K]) < 0.4, -np.inf, 0.0)
        m.reshape(-1, K)[int(rng.integers(m.size // K))] = -np.inf  # one row wholly masked
        p = g.op("Softmax", [g.op("Add", [x, g.const(m, dt)])], axis=-1)
    elif rop == "LayerNorm":
        p = g.op("LayerNormalization", [x, g.const(rng.uniform(-2, 2, K), dt), g.const(rng.uniform(-2, 2, K), dt)], axis=-1, epsilon=1e-5)
    elif rop == "RMSNorm":
        ms = g.op("ReduceMean", [g.op("Mul", [x, x]), axc]) if opset >= 18 else g.op("ReduceMean", [g.op("Mul", [x, x])], axes=[-1])
        p = g.op("Mul", [g.op("Div", [x, g.op("Sqrt", [g.op("Add", [ms, g.const(np.array(1e-6), dt)])])]), g.const(rng.uniform(-2, 2, K), dt)])
    elif rop == "SubMax":
        mx = g.op("ReduceMax", [x, axc]) if opset >= 18 else g.op("ReduceMax", [x], axes=[-1])
        p = g.op("Sub", [x, mx])
    else:
        sm = g.op("ReduceSum", [g.op("Abs", [x]), axc])
        p = g.op("Div", [x, sm])
    if pdt != dt:
        p = g.op("Cast", [p], to=pdt)
    bmode = pick(rng, ["const", "input", "inputT", "computed", "self", "bcast"])
    desc.append("B_" + bmode)
    if bmode == "const":
        b = g.const(rng.uniform(-1, 1, [K, N]), pdt)
    elif bmode == "input":
        b = g.input([K, N], pdt)
    elif bmode == "inputT":
        b = g.op("Transpose", [g.input([N, K], pdt)], perm=[1, 0])
    elif bmode == "computed":  # B from a kernel of its own (Tanh of an input)
        b = g.op("Tanh", [g.input([K, N], pdt)])
    elif bmode == "self" and len(lead) == 1 and lead[0] == K:
        b = g.op("Cast", [x], to=pdt) if pdt != dt else x
        N = K
    else:
        bl = [1] * (len(lead) - 1) if len(lead) > 1 else []
        b = g.input(bl + [K, N], pdt)
    y = g.op("MatMul", [p, b])
    tail = pick(rng, ["none", "none", "cast", "transpose", "bias", "relu"])
    desc.append(tail)
    if tail == "cast":
        y = g.op("Cast", [y], to=F32)
    elif tail == "transpose" and len(lead) >= 2:
        y = g.op("Transpose", [y], perm=list(range(len(lead) - 2)) + [len(lead) - 1, len(lead) - 2, len(lead)])
    elif tail == "bias":
        y = g.op("Add", [y, g.const(rng.uniform(-1, 1, [N]), pdt)])
    elif tail == "relu":
        y = g.op("Relu", [y])
    outs = [y]
    low = BF16 if BF16 in (dt, pdt) else F16 if F16 in (dt, pdt) else F32
    return g, g.model(outs, opset), " ".join(desc), {"specials": sp > 0, "work": low, "knobs": ["FUSOR_ROW_PRODUCT=0", "FUSOR_ROW_MAX_PARTIALS=1", "FUSOR_VK_ROW_VEC4=0", "FUSOR_ROW_REGISTERS=0"]}


def gen_gemv2(rng):
    """GEMV shapes the first generator leaves out: 1-D operands, Gemm transA, batched weights,
    a scalar-row A broadcast against batched B, K = 1, chained through a row kernel."""
    g = G(rng)
    opset = int(rng.integers(13, 22))
    K = pick(rng, [1, 2, 3, 5, 17, 33, 64, 65, 127, 257, 1025])
    N = pick(rng, [1, 2, 3, 5, 16, 17, 63, 65, 256, 300])
    dt = pick(rng, [F32, F32, F16, BF16])
    kind = pick(rng, ["a1d", "b1d", "ab1d", "transA", "batchedW", "bcastA", "softmax_then"])
    desc = [f"op{opset}", f"K{K}N{N}", f"dt{dt}", kind]
    if kind == "a1d":
        y = g.op("MatMul", [g.input([K], dt), g.const(rng.uniform(-1, 1, [K, N]), dt)])
    elif kind == "b1d":
        M = pick(rng, [1, 2, 5, 8])
        y = g.op("MatMul", [g.input([M, K], dt), g.const(rng.uniform(-1, 1, [K]), dt)])
    elif kind == "ab1d":
        y = g.op("MatMul", [g.input([K], dt), g.input([K], dt)])
    elif kind == "transA":
        M = pick(rng, [1, 3, 8])
        tb = int(rng.integers(2))
        y = g.op("Gemm", [g.input([K, M], dt), g.const(rng.uniform(-1, 1, [N, K] if tb else [K, N]), dt), g.const(rng.uniform(-1, 1, [M, N]), dt)],
                 transA=1, transB=tb, alpha=0.75, beta=-1.5)
    elif kind == "batchedW":
        Bt = pick(rng, [2, 3])
        M = pick(rng, [1, 2, 4])
        y = g.op("MatMul", [g.input([Bt, M, K], dt), g.input([Bt, K, N], dt)])
    elif kind == "bcastA":
        Bt = pick(rng, [2, 3])
        y = g.op("MatMul", [g.input([1, 1, K], dt), g.input([Bt, K, N], dt)])
    else:  # a one-row Softmax feeding a GEMV (too few rows for a row product)
        M = pick(rng, [1, 2, 7])
        p = g.op("Softmax", [g.input([M, K], dt, lo=-4, hi=4)], axis=-1)
        y = g.op("MatMul", [p, g.const(rng.uniform(-1, 1, [K, N]), dt)])
        y = g.op("Add", [y, g.input([M, N], dt)])
    return g, g.model([y], opset), " ".join(desc), {"knobs": ["FUSOR_VK_GEMV_UNROLL=1", "FUSOR_VK_GEMV_UNROLL=16", "FUSOR_VK_GEMV=new", "FUSOR_GEMV_TREE_RADIX=2", "FUSOR_VK_GEMV_THREADS=512"]}


def retry(gen, ok, tries=50):
    """gen's first model whose description satisfies ok (patterns biased to where a fusion applies)."""
    def f(rng):
        for _ in range(tries):
            r = gen(rng)
            if ok(r[2]):
                return r
        return r
    return f


def _attn_fusable(d):
    m = re.search(r"B(\d+)H(\d+)S(\d+)L(\d+)D(\d+)Dv(\d+)", d)
    B, H, S, L = (int(m.group(i)) for i in range(1, 5))
    io = re.search(r"io(\d+)w(\d+)", d)
    return B * H * S >= 32 and L > 1 and io.group(1) == io.group(2) and " p_out" not in d and re.search(r" (v|vT_node|v2d|v_bcast)( |$)", d)


def _rowprod_fusable(d):
    m = re.search(r"K(\d+)N(\d+) dt(\d+)p(\d+)", d)
    return int(m.group(2)) <= 256 and int(m.group(1)) <= 2048 and m.group(3) == m.group(4) and (d.endswith(" none") or d.endswith(" transpose"))


GENS = {"attn": gen_attn, "rowred": gen_rowred, "mean": gen_mean, "gemv": gen_gemv, "rowprod": gen_rowprod, "gemv2": gen_gemv2,
        "attnrp": retry(gen_attn, _attn_fusable), "rowprodrp": retry(gen_rowprod, _rowprod_fusable)}


# ---------------------------------------------------------------------------------- checking
def ulp_bits(dt):
    return 23 if dt == F32 else 10 if dt == F16 else 7


def compare(got, want, dt, ulps):
    """None when got matches want; else a one-line reason."""
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    gn, wn = np.isnan(g), np.isnan(w)
    if (gn != wn).any():
        i = np.argwhere(gn != wn)[0]
        return f"NaN mismatch at {tuple(i)}: got {g[tuple(i)]} want {w[tuple(i)]} ({int((gn != wn).sum())} elems)"
    gi, wi = np.isinf(g), np.isinf(w)
    if (gi != wi).any() or (g[wi] != w[wi]).any():
        bad = (gi != wi) | (wi & (g != w))
        i = np.argwhere(bad)[0]
        return f"inf mismatch at {tuple(i)}: got {g[tuple(i)]} want {w[tuple(i)]} ({int(bad.sum())} elems)"
    fin = ~(wn | wi)
    if not fin.any():
        return None
    mx = np.abs(w[fin]).max()
    err = np.abs(g[fin] - w[fin])
    e = err.max()
    if mx == 0:
        return None if e == 0 else f"err {e} with max 0"
    ulp = 2.0 ** (np.floor(np.log2(mx)) - ulp_bits(dt))
    if e / ulp > ulps:
        idx = np.argwhere(fin)[int(err.argmax())]
        return f"err {e:.3g} = {e / ulp:.1f} ulp of max {mx:.3g} at {tuple(idx)}: got {g[tuple(idx)]} want {w[tuple(idx)]}"
    return None


def read_outputs(d, n):
    res = []
    for k in range(n):
        t = onnx.load_tensor(os.path.join(d, f"output_{k}.pb"))
        res.append(to_np(t))
    return res


def run_fusor(fusor, mdir, backend, outdir, env_extra, timeout=120):
    env = dict(os.environ)
    env.update(VK_ENV)
    for kv in env_extra:
        k, v = kv.split("=", 1)
        env[k] = v
    os.makedirs(outdir, exist_ok=True)
    cmd = ["timeout", str(timeout), fusor, "run", mdir, "--backend", backend, "--inputs", os.path.join(mdir, "test_data_set_0"), "--out", outdir]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, errors="replace")
    return p.returncode, (p.stderr.strip().splitlines() or [""])[-1]


def explain(fusor, mdir, backend, env_extra):
    env = dict(os.environ)
    env.update(VK_ENV)
    for kv in env_extra:
        k, v = kv.split("=", 1)
        env[k] = v
    p = subprocess.run(["timeout", "120", fusor, "explain", mdir, "--backend", backend], env=env, capture_output=True, text=True, errors="replace")
    return p.stdout


def ort_outputs(mdir, m, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(os.path.join(mdir, "model.onnx"), so, providers=["CPUExecutionProvider"])
    fd = {}
    for t in feeds:
        a, dt = to_np(t)
        if dt == BF16:
            raise RuntimeError("bf16 input")
        fd[t.name] = a
    return s.run(None, fd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--patterns", default="attn,rowred,mean,gemv")
    ap.add_argument("--fusor", default="build/fusor")
    ap.add_argument("--backends", default="cpu,vulkan")
    ap.add_argument("--no-knobs", action="store_true")
    ap.add_argument("--tol32", type=float, default=64.0, help="fp32 ulps of the largest |ref|")
    ap.add_argument("--tol16", type=float, default=4.0, help="fp16 / bf16 ulps of the largest |ref|")
    a = ap.parse_args()
    fusor = os.path.abspath(a.fusor)
    os.makedirs(a.out, exist_ok=True)
    log = open(os.path.join(a.out, "results.txt"), "a")

    def rep(status, tag, detail):
        line = f"{status}\t{tag}\t{detail}"
        log.write(line + "\n")
        log.flush()
        if status != "ok":
            print(line, flush=True)

    for pat in a.patterns.split(","):
        for i in range(a.n):
            seed = a.seed * 100000 + i
            rng = np.random.default_rng([hash(pat) % 1000 if False else sum(map(ord, pat)), seed])
            tag = f"{pat}_{seed}"
            try:
                g, m, desc, meta = GENS[pat](rng)
            except Exception as e:  # a generator combination onnx rejects
                rep("gen", tag, f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
                continue
            mdir = os.path.join(a.out, tag)
            os.makedirs(os.path.join(mdir, "test_data_set_0"), exist_ok=True)
            onnx.save(m, os.path.join(mdir, "model.onnx"))
            for k, t in enumerate(g.feeds):
                with open(os.path.join(mdir, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
                    f.write(t.SerializeToString())
            with open(os.path.join(mdir, "desc.txt"), "w") as f:
                f.write(desc + "\n")
            nout = len(m.graph.output)

            def tdt(dt):  # judge by the least precise dtype the model computes in
                w = meta.get("work", dt)
                return BF16 if BF16 in (dt, w) else F16 if F16 in (dt, w) else dt
            ex = explain(fusor, mdir, "cpu", [])
            ex1 = explain(fusor, mdir, "cpu", ["FUSOR_INLINE_DOT=1"])
            fl = []
            if "multiplies each row by" in ex:
                fl.append("ROWPROD")
            if " inline, element by element" in ex:
                fl.append("DOT")
            if " inline, element by element" in ex1:
                fl.append("DOT1")
            if "keeps its rows in registers" in ex:
                fl.append("REGROWS")
            desc += " {" + ",".join(fl) + "}"
            rc, err = run_fusor(fusor, mdir, "ref", os.path.join(mdir, "o_ref"), [])
            if rc != 0:
                rep("ERR" if rc < 124 else "BAD", tag + ":ref", f"rc={rc} {err} | {desc}")
                continue
            want = read_outputs(os.path.join(mdir, "o_ref"), nout)
            try:
                ro = ort_outputs(mdir, m, g.feeds)
                for k, (w, dt) in enumerate(want):
                    if dt in (F32, F16):
                        r = compare(ro[k].astype(np.float32), w, tdt(dt), a.tol32 if tdt(dt) == F32 else a.tol16)
                        if r is not None and meta.get("specials"):
                            r = "(NaN inputs: onnxruntime's min / max skip NaN) " + r
                        rep("ok" if r is None else "ORT", tag + f":ref_vs_ort:o{k}", (r or "") + " | " + desc)
            except Exception as e:
                rep("ok", tag + ":ort_skip", f"{type(e).__name__}: {str(e).splitlines()[0][:150]}")
            variants = [(b, []) for b in a.backends.split(",")]
            if not a.no_knobs:
                for b in a.backends.split(","):
                    for kn in meta["knobs"]:
                        if kn.startswith(("FUSOR_VK_", "FUSOR_GEMV_")) and b != "vulkan":
                            continue
                        variants.append((b, [kn]))
            for b, env in variants:
                vt = tag + ":" + b + ("[" + ",".join(env) + "]" if env else "")
                od = os.path.join(mdir, "o_" + b + "_" + "_".join(e.replace("=", "") for e in env))
                rc, err = run_fusor(fusor, mdir, b, od, env)
                if rc != 0:
                    rep("BAD" if rc >= 124 or rc < 0 or "error" not in err else "ERR", vt, f"rc={rc} {err} | {desc}")
                    continue
                got = read_outputs(od, nout)
                for k, ((gg, gdt), (w, dt)) in enumerate(zip(got, want)):
                    r = f"dtype {gdt} != {dt}" if gdt != dt else compare(gg, w, tdt(dt), a.tol32 if tdt(dt) == F32 else a.tol16)
                    rep("ok" if r is None else "BAD", vt + f":o{k}", (r or "") + " | " + desc)


if __name__ == "__main__":
    main()
