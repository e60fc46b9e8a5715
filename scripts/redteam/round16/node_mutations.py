#!/usr/bin/env python3
"""Mutation fuzzing over the ONNX node suite, one hostile kind at a time (red-team round 16).

Each single-node case of the suite is mutated and run with `fusor run MODEL --backend B`
(seeded random inputs). A run is BAD when it dies by a signal, passes the time limit, or fails
without exactly one `fusor: error:` line of valid UTF-8 on stderr. Kinds:

  omit     each node input in turn replaced by "" (an omitted input)
  zerodim  each graph input's first, then last, dim set to 0
  redim    the last dim of input 0 (and every equal dim of the inputs) set to 7, then 33;
           `fusor diff` against ref (seeded random inputs): a divergence is BAD too
  f64      every float32 input, output and initializer made float64; `fusor diff` against ref
           at rtol 1e-13: more than 64 ulp of the largest |reference| is BAD (float64 computed
           in float32 shows as ~2^29)
  f16      the same in float16, BAD above 2 ulp (float16) of the largest |reference|: one op
           rounds once from float32 arithmetic, ref once from float64
  attrs    each attribute in turn set to hostile values: ints -1, 0, 2^31, -2^63, 2^62, 3;
           floats NaN, inf, -1, 0, 1e30; lists with the middle entry so, emptied or 9 long;
           strings with 0xff / NUL / newline bytes, or empty

Usage: node_mutations.py KIND --backend ref [--fusor build/fusor] [--suite DIR] [--out DIR]
       [--match SUBSTRING] [--shard I/N] [--only-accepted RESULTS]   (attrs: rerun only the mutations RESULTS shows rc=0 for)
Writes OUT/KIND_BACKEND[_IofN].txt (one line per run: ok|BAD, tag, rc, the error's last line) and
copies each BAD model to OUT/bad/TAG/model.onnx. Needs the `onnx` Python package.
"""
import argparse
import glob
import os
import re
import resource
import shutil
import subprocess

import onnx
import onnx.numpy_helper
from onnx import AttributeProto as A

INTS = [-1, 0, 2**31, -2**63, 2**62, 3]
FLOATS = [float("nan"), float("inf"), -1.0, 0.0, 1e30]
STRINGS = [b"\xff\x00\njunk", b""]


def limit_memory():
    # Host backends only: the CUDA driver reserves far more address space than it uses
    # (cuInit fails with CUDA_ERROR_OUT_OF_MEMORY under a 12 GiB RLIMIT_AS).
    resource.setrlimit(resource.RLIMIT_AS, (12 << 30, 12 << 30))


def mutations(kind, m):
    """Yields (tag, mutated model) for one case."""
    node = m.graph.node[0]
    if kind == "omit":
        for k, name in enumerate(node.input):
            if name:
                m2 = onnx.ModelProto()
                m2.CopyFrom(m)
                m2.graph.node[0].input[k] = ""
                yield f"in{k}", m2
    elif kind == "zerodim":
        inits = {i.name for i in m.graph.initializer}
        for k, vi in enumerate(m.graph.input):
            if vi.name in inits or not vi.type.HasField("tensor_type"):
                continue
            rank = len(vi.type.tensor_type.shape.dim)
            for d in sorted({0, rank - 1}) if rank else []:
                m2 = onnx.ModelProto()
                m2.CopyFrom(m)
                dim = m2.graph.input[k].type.tensor_type.shape.dim[d]
                dim.Clear()
                dim.dim_value = 0
                yield f"in{k}_d{d}", m2
    elif kind == "redim":
        inits = {i.name for i in m.graph.initializer}
        ins = [vi for vi in m.graph.input if vi.name not in inits and vi.type.HasField("tensor_type")]
        dims0 = ins[0].type.tensor_type.shape.dim if ins else []
        if len(dims0) and dims0[-1].HasField("dim_value") and dims0[-1].dim_value > 1:
            v = dims0[-1].dim_value
            for new in (7, 33):
                m2 = onnx.ModelProto()
                m2.CopyFrom(m)
                for vi in m2.graph.input:
                    if vi.name in inits or not vi.type.HasField("tensor_type"):
                        continue
                    for d in vi.type.tensor_type.shape.dim:
                        if d.HasField("dim_value") and d.dim_value == v:
                            d.dim_value = new
                for vo in m2.graph.output:
                    if vo.type.HasField("tensor_type"):
                        vo.type.tensor_type.ClearField("shape")
                yield f"{v}to{new}", m2
    elif kind in ("f64", "f16"):
        F, D = onnx.TensorProto.FLOAT, (onnx.TensorProto.DOUBLE if kind == "f64" else onnx.TensorProto.FLOAT16)
        vis = list(m.graph.input) + list(m.graph.output)
        if any(vi.type.tensor_type.elem_type == F for vi in vis if vi.type.HasField("tensor_type")):
            m2 = onnx.ModelProto()
            m2.CopyFrom(m)
            for vi in list(m2.graph.input) + list(m2.graph.output):
                if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type == F:
                    vi.type.tensor_type.elem_type = D
            for t in m2.graph.initializer:
                if t.data_type == F:
                    t.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(t).astype("float64" if kind == "f64" else "float16"), t.name))
            yield kind, m2
    elif kind == "attrs":
        for ai, a in enumerate(node.attribute):
            muts = []
            if a.type == A.INT:
                muts = [("i", v) for v in INTS]
            elif a.type == A.FLOAT:
                muts = [("f", v) for v in FLOATS]
            elif a.type == A.INTS and len(a.ints):
                muts = [("is", v) for v in INTS] + [("len", 0), ("len", 9)]
            elif a.type == A.FLOATS and len(a.floats):
                muts = [("fs", v) for v in FLOATS] + [("len", 0)]
            elif a.type == A.STRING:
                muts = [("s", v) for v in STRINGS]
            for what, v in muts:
                m2 = onnx.ModelProto()
                m2.CopyFrom(m)
                b = m2.graph.node[0].attribute[ai]
                if what == "i":
                    b.i = v
                elif what == "f":
                    b.f = v
                elif what == "is":
                    b.ints[len(b.ints) // 2] = v
                elif what == "fs":
                    b.floats[len(b.floats) // 2] = v
                elif what == "s":
                    b.s = v
                elif a.type == A.INTS:
                    del b.ints[:]
                    b.ints.extend([1] * v)
                else:
                    del b.floats[:]
                yield f"{a.name}_{what}{v if what != 's' else len(v)}", m2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["omit", "zerodim", "attrs", "redim", "f64", "f16"])
    ap.add_argument("--backend", default="ref")
    ap.add_argument("--fusor", default="build/fusor")
    ap.add_argument("--suite", default="../shared/onnx-tests/node")
    ap.add_argument("--out", default="/tmp/fusor_mutations")
    ap.add_argument("--only-accepted", help="a results file of the same kind: run only its rc=0 lines")
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--match", default="", help="only cases whose folder name contains this")
    ap.add_argument("--shard", default="0/1", help="I/N: only every N-th case from the I-th (parallel runs)")
    args = ap.parse_args()
    accepted = None
    if args.only_accepted:
        accepted = {line.split()[1] for line in open(args.only_accepted) if " rc=0" in line}
    os.makedirs(args.out, exist_ok=True)
    shard, shards = (int(x) for x in args.shard.split("/"))
    suffix = f"_{shard}of{shards}" if shards > 1 else ""
    work = os.path.join(args.out, f"work_{args.kind}_{args.backend}{suffix}")
    os.makedirs(work, exist_ok=True)
    bad_count = runs = 0
    with open(os.path.join(args.out, f"{args.kind}_{args.backend}{suffix}.txt"), "w") as out:
        for i, path in enumerate(sorted(glob.glob(os.path.join(args.suite, "*", "model.onnx")))):
            if i % shards != shard:
                continue
            case = os.path.basename(os.path.dirname(path))
            if args.match not in case:
                continue
            try:
                m = onnx.load(path)
            except Exception:
                continue
            if len(m.graph.node) != 1:
                continue
            for sub, m2 in mutations(args.kind, m):
                tag = f"{case}:{sub}"
                if accepted is not None and tag not in accepted:
                    continue
                onnx.save(m2, os.path.join(work, "model.onnx"))
                cmd = [args.fusor, "run", os.path.join(work, "model.onnx"), "--backend", args.backend]
                if args.kind in ("redim", "f64", "f16"):  # the backend against ref on seeded random inputs
                    cmd = [args.fusor, "diff", os.path.join(work, "model.onnx"), "--backend", "ref", "--backend", args.backend, "--seed", "1"]
                    if args.kind in ("f64", "f16"):  # computed as its dtype: any gap is measured in ulps below
                        cmd += ["--rtol", "1e-13", "--atol", "0"]
                try:
                    p = subprocess.run(cmd,
                                       capture_output=True, timeout=args.timeout,
                                       preexec_fn=limit_memory if args.backend in ("ref", "cpu") else None)
                    rc = p.returncode
                    try:
                        err = p.stderr.decode().strip()
                        utf8 = True
                    except UnicodeDecodeError:
                        err, utf8 = p.stderr.decode(errors="replace").strip(), False
                except subprocess.TimeoutExpired:
                    rc, err, utf8 = "TIMEOUT", "", True
                lines = [l for l in err.splitlines() if l.startswith("fusor: error:")]
                differs = args.kind in ("redim", "f64", "f16") and rc == 1
                if differs:  # within conform's bound (64 eps of the largest |reference|): summation order
                    mo = re.search(r"\(([0-9.e+]+) ulp of the largest", p.stdout.decode(errors="replace"))
                    differs = not (mo and float(mo.group(1)) <= (2 if args.kind == "f16" else 64))
                bad = (rc == "TIMEOUT" or rc < 0 or rc >= 128 or not utf8 or differs or (rc not in (0, 1) and len(lines) != 1))
                if differs:
                    err = next((l for l in p.stdout.decode(errors="replace").splitlines() if "diverge" in l or "first" in l), "differs")
                runs += 1
                if bad:
                    bad_count += 1
                    dst = os.path.join(args.out, "bad", tag.replace(":", "_"))
                    os.makedirs(dst, exist_ok=True)
                    shutil.copy(os.path.join(work, "model.onnx"), dst)
                last = err.splitlines()[-1][:160] if err else ""
                out.write(f"{'BAD' if bad else 'ok '} {tag} rc={rc} {last}\n")
                out.flush()
    print(f"{args.kind} on {args.backend}: {runs} runs, {bad_count} BAD")


if __name__ == "__main__":
    main()
