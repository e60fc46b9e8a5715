#!/usr/bin/env python3
"""IREE (the PyPI packages iree-base-compiler / iree-base-runtime 3.13.0) as a peer system of
bench/side_by_side.py: `iree-cuda` and `iree-vulkan` on the W1, W4 and W6 graphs.

The GPU machine has no IREE compiler (its wheel is 84 MB) and the weights cannot travel, so the
work is split:

  here:   bench/iree_peer.py prepare --graphs DIR --out BUNDLE
            DIR/<name>/graph.onnx are the graphs side_by_side.py exported on the GPU machine, float
            initializers' data possibly cleared (names, dims and dtypes kept). Every float
            initializer of >= 2 elements becomes an external parameter (scope `model`, named
            after the initializer), so the compiled module holds no weights; the other
            initializers are compiled in as constants. Each graph is compiled for
            `cuda` (sm_80) and `vulkan` (ampere) at O3. BUNDLE gets the vmfbs, manifest.json
            (per model: function, inputs, outputs, parameter names, structure hash, vmfb per
            target or the compile error) and the runtime wheel re-zipped uncompressed (xz packs it
            ~3x better). W1 graphs missing in DIR (k=4, 16) are built with bench/workloads.py.
  there:  side_by_side.py --iree BUNDLE  (IreePeer below): installs the wheel, checks that the
            graph it exported has the compiled structure, writes that graph's initializers to an
            .irpa, runs the vmfb with it (iree-run-module) on the same input as torch, compares,
            and times it with iree-benchmark-module.
  here:   bench/iree_peer.py selftest [--graphs DIR] [--models w4_mlp1,w6_squeezenet1_1_1]
            The same import, parameter writer and tool runner with IREE's CPU target (llvm-cpu,
            driver local-task), random weights, output compared with onnxruntime. Needs
            iree-base-compiler, iree-base-runtime, onnx and onnxruntime (pip; ~100 MB, so it is
            not part of CI).

Requirements here: Python >= 3.12 (the IREE wheels are cp312-abi3), e.g.
  python3.12 -m venv /tmp/iree_venv && /tmp/iree_venv/bin/pip install iree-base-compiler==3.13.0 \
      iree-base-runtime==3.13.0 onnx onnxruntime
  /tmp/iree_venv/bin/python bench/iree_peer.py prepare --graphs /work/iree_graphs --out /tmp/iree_bundle
"""
import argparse, csv, glob, hashlib, io, json, os, re, shutil, subprocess, sys, tempfile, time, zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IREE_VERSION = "3.13.0"
SCOPE = "model"           # parameter scope of every externalized initializer
FLOAT_TYPES = {TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE}
OPT = ["--iree-opt-level=O3"]  # 3.13 defaults to O0
TARGETS = {
    # 3.13 has no sm_90 entry: the driver JITs the sm_80 PTX on first load on an H100/H200.
    "cuda": ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"] + OPT,
    "vulkan": ["--iree-hal-target-device=vulkan", "--iree-vulkan-target=ampere"] + OPT,
    "cpu": ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
            "--iree-llvmcpu-target-cpu=host"] + OPT,
}
DRIVER = {"cuda": "cuda", "vulkan": "vulkan", "cpu": "local-task"}
# Tried in order when a target's compile fails (the flags used are kept in the manifest and
# reported): IREE 3.13's CUDA vector-distribution pipelines fail on some depthwise-conv
# dispatches of mobilenet_v3_small ("'func.func' op failed to distribute").
FALLBACKS = {"cuda": [["--iree-codegen-llvmgpu-use-reduction-vector-distribution=false"],
                      ["--iree-codegen-llvmgpu-use-vector-distribution=false",
                       "--iree-codegen-llvmgpu-use-reduction-vector-distribution=false"]]}


# ---------------- graph side (numpy + onnx only) ----------------

def numel(t):
    n = 1
    for d in t.dims:
        n *= d
    return n


def is_param(t):
    """An initializer that travels as an external parameter (its data is not compiled in)."""
    return t.data_type in FLOAT_TYPES and numel(t) >= 2


def param_key(name):
    """The parameter name iree-import-onnx gives an initializer (its sanitize_name: ':' -> '_')."""
    return name.replace(":", "_")


def structure_hash(model):
    """sha256 over what the compiled module depends on: graph inputs/outputs with types, nodes
    (op, domain, inputs, outputs, attributes), every initializer's name, dims and dtype, and the
    data of the initializers that are compiled in (not parameters). Weight data is left out."""
    h = hashlib.sha256()
    def put(*parts):
        for p in parts:
            h.update(p if isinstance(p, bytes) else str(p).encode())
            h.update(b"\0")
    g = model.graph
    for vi in list(g.input) + list(g.output):
        put("io", vi.name, vi.type.SerializeToString(deterministic=True))
    for n in g.node:
        put("node", n.op_type, n.domain, *n.input, "->", *n.output)
        for a in sorted(n.attribute, key=lambda a: a.name):
            put("attr", a.SerializeToString(deterministic=True))
    for t in sorted(g.initializer, key=lambda t: t.name):
        put("init", t.name, t.data_type, *t.dims)
        if not is_param(t):
            put(numpy_helper.to_array(t).tobytes())
    return h.hexdigest()


def has_data(t):
    return bool(t.raw_data or t.float_data or t.double_data or t.int32_data or t.int64_data or t.external_data)


def zero_filled(model):
    """A copy whose parameters without data (cleared before the graph travelled) hold zeros of
    their shape: the importer references parameters by name and shape only, but ONNX shape
    inference wants complete tensors."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for t in m.graph.initializer:
        if is_param(t) and not has_data(t):
            t.CopyFrom(numpy_helper.from_array(np.zeros(tuple(t.dims), helper.tensor_dtype_to_np_dtype(t.data_type)), t.name))
    return m


def io_spec(model):
    init = {t.name for t in model.graph.initializer}
    def spec(vi):
        tt = vi.type.tensor_type
        return dict(name=vi.name, dtype=helper.tensor_dtype_to_np_dtype(tt.elem_type).name,
                    shape=[d.dim_value if d.HasField("dim_value") else d.dim_param for d in tt.shape.dim])
    return ([spec(v) for v in model.graph.input if v.name not in init], [spec(v) for v in model.graph.output])


def write_irpa(model, params, path):
    """Writes the .irpa the compiled module reads: for each {parameter key: initializer name} in
    `params`, that initializer's data from `model` (iree.runtime.ParameterIndex)."""
    import iree.runtime as rt
    inits = {t.name: t for t in model.graph.initializer}
    idx = rt.ParameterIndex()
    for key, name in params.items():
        if name not in inits:
            raise RuntimeError(f"[iree] initializer {name!r} (parameter {key}) missing in the graph")
        a = numpy_helper.to_array(inits[name])
        if a.size != numel(inits[name]):
            raise RuntimeError(f"[iree] initializer {name!r} has no data")
        idx.add_buffer(key, np.ascontiguousarray(a))
    idx.create_archive_file(path)


# ---------------- the IREE tools ----------------

class Tools:
    """iree-run-module / iree-benchmark-module from the runtime package in `bindir`, run with `env`."""

    def __init__(self, bindir, env=None):
        self.bindir, self.env = bindir, env or dict(os.environ)
        for t in ("iree-run-module", "iree-benchmark-module"):
            if not os.access(os.path.join(bindir, t), os.X_OK):
                raise RuntimeError(f"[iree] {t} missing in {bindir}")

    def _call(self, tool, args, timeout):
        try:
            r = subprocess.run([os.path.join(self.bindir, tool)] + args, capture_output=True, text=True,
                               env=self.env, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"{tool} timed out after {timeout} s")
        if r.returncode != 0:
            msg = " ".join((r.stderr.strip() or r.stdout.strip()).split())
            raise RuntimeError(f"{tool} rc={r.returncode}: {msg[-300:]}")
        return r.stdout

    @staticmethod
    def common(vmfb, device, func, inputs, irpa, flags=()):
        a = [f"--module={vmfb}", f"--device={device}", f"--function={func}", *flags]
        if irpa:
            a.append(f"--parameters={SCOPE}={irpa}")
        return a + [f"--input=@{p}" for p in inputs]

    def run(self, vmfb, device, func, inputs, irpa, out_npy, flags=(), timeout=180):
        """One call; the (single) output goes to out_npy. Returns the wall seconds of the whole
        tool run (load, parameter upload, first-use JIT and the call)."""
        t = time.perf_counter()
        self._call("iree-run-module", self.common(vmfb, device, func, inputs, irpa, flags) + [f"--output=@{out_npy}"], timeout)
        return time.perf_counter() - t

    def bench(self, vmfb, device, func, inputs, irpa, iters, flags=(), timeout=180):
        """Median wall time (ms) of one synchronous call over `iters` repetitions of one call each,
        inputs resident on the device (iree-benchmark-module real_time), after 0.2 s of warm-up."""
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            self._call("iree-benchmark-module", self.common(vmfb, device, func, inputs, irpa, flags) + [
                f"--benchmark_repetitions={iters}", "--benchmark_min_time=1x", "--benchmark_min_warmup_time=0.2",
                f"--benchmark_out={f.name}", "--benchmark_out_format=json"], timeout)
            j = json.load(open(f.name))
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
        ts = [b["real_time"] * unit[b.get("time_unit", "ns")] for b in j.get("benchmarks", [])
              if b.get("run_type") == "iteration"]
        if not ts:
            raise RuntimeError("iree-benchmark-module reported no iterations")
        return float(np.median(ts)), len(ts)


def rel_l2(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        raise RuntimeError(f"output shape {list(got.shape)} != {list(ref.shape)}")
    return float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-30))


# ---------------- GPU machine side (used by side_by_side.py) ----------------

def install_runtime(bundle, prefix):
    """Installs the bundle's runtime wheel into `prefix` (no index, no deps) and returns its tool
    directory. Falls back to unzipping the wheel when pip is missing."""
    whl = glob.glob(os.path.join(bundle, "iree_base_runtime-*.whl"))
    if not whl:
        raise RuntimeError(f"[iree] no iree_base_runtime wheel in {bundle}")
    if not os.path.isdir(os.path.join(prefix, "iree", "runtime")):
        r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", prefix, whl[0]],
                           capture_output=True, text=True)
        if r.returncode != 0:
            z = zipfile.ZipFile(whl[0])
            z.extractall(prefix)
            for i in z.infolist():
                if not i.is_dir():
                    os.chmod(os.path.join(prefix, i.filename), (i.external_attr >> 16) or 0o644)
    if prefix not in sys.path:
        sys.path.insert(0, prefix)
    return os.path.join(prefix, "iree", "_runtime_libs")


def libcuda_dir(work):
    """IREE's CUDA driver dlopens "libcuda.so" (no .1), which driver-only installs lack: returns a
    directory holding a libcuda.so link to the system libcuda.so.1 (None when not needed/found)."""
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    except OSError:
        out = ""
    if re.search(r"\blibcuda\.so \(", out):
        return None
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        if d and os.path.exists(os.path.join(d, "libcuda.so")):
            return None
    m = re.search(r"\blibcuda\.so\.1 \([^)]*\) => (\S+)", out)
    cands = [m.group(1)] if m else []
    cands += glob.glob("/usr/lib/x86_64-linux-gnu/libcuda.so.1") + glob.glob("/usr/lib64/libcuda.so.1") + \
        glob.glob("/usr/local/nvidia/lib64/libcuda.so.1")
    if not cands:
        return None
    d = os.path.join(work, "cudalib")
    os.makedirs(d, exist_ok=True)
    link = os.path.join(d, "libcuda.so")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(cands[0], link)
    return d


class IreePeer:
    """The systems iree-cuda and iree-vulkan of side_by_side.py, from a bundle made by `prepare`."""

    SYSTEMS = {"iree-cuda": "cuda", "iree-vulkan": "vulkan"}

    def __init__(self, bundle, work, log=print):
        self.bundle, self.work, self.log = bundle, work, log
        self.manifest = json.load(open(os.path.join(bundle, "manifest.json")))
        bindir = install_runtime(bundle, os.path.join(work, "iree_rt"))
        env = dict(os.environ)
        cd = libcuda_dir(work)
        if cd:
            env["LD_LIBRARY_PATH"] = cd + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
            log(f"iree: libcuda.so -> {os.path.realpath(os.path.join(cd, 'libcuda.so'))} (link in {cd})")
        self.tools = Tools(bindir, env)
        log(f"iree: runtime {self.manifest.get('iree_version')} in {bindir}; compiled models: "
            + ", ".join(f"{n} ({'/'.join(t for t, v in m['vmfb'].items() if v) or 'none'})" for n, m in self.manifest["models"].items()))
        log("iree: timed = median over the same iteration count as fusor of the wall time of one synchronous call "
            "(iree-benchmark-module real_time, inputs and parameters resident on the device); fusor's ms is device "
            "time, so this comparison favours fusor by the per-call host overhead. iree-cuda keeps the better of "
            "CUDA streams and CUDA graphs (--cuda_use_streams=false), named in variant=")

    def run(self, name, model_path, inputs, ref, max_err, iters, systems):
        """Checks and times model `name` (the ONNX side_by_side exported at model_path) on the
        requested systems. inputs: numpy arrays in graph-input order; ref: torch's output.
        Returns {system: record fields} (ms/err/... or error=...)."""
        systems = [s for s in self.SYSTEMS if s in systems]
        if not systems:
            return {}
        m = self.manifest["models"].get(name)
        if m is None:
            return {s: dict(error=f"{name} is not in the IREE bundle") for s in systems}
        model = onnx.load(model_path)
        if structure_hash(model) != m["hash"]:
            return {s: dict(error="graph differs from the compiled one") for s in systems}
        d = os.path.join(self.work, "iree_" + name)
        os.makedirs(d, exist_ok=True)
        irpa = os.path.join(d, "params.irpa")
        try:
            write_irpa(model, m["params"], irpa)
            paths = []
            for i, (spec, x) in enumerate(zip(m["inputs"], inputs)):
                p = os.path.join(d, f"input_{i}.npy")
                np.save(p, np.ascontiguousarray(x, dtype=spec["dtype"]))
                paths.append(p)
        except Exception as e:
            return {s: dict(error=f"parameters/inputs: {str(e)[:150]}") for s in systems}
        res = {}
        for s in systems:
            target = self.SYSTEMS[s]
            res[s] = self.check_and_time(m, target, paths, irpa, ref, max_err, iters, d)
        shutil.rmtree(d, ignore_errors=True)   # W1's input alone is 256 MiB
        return res

    def check_and_time(self, m, target, inputs, irpa, ref, max_err, iters, d):
        vm = m["vmfb"].get(target)
        if not vm:
            return dict(error=f"compile failed: {m['errors'].get(target, '?')[:150]}")
        vm = os.path.join(self.bundle, vm)
        dev = DRIVER[target]
        out = os.path.join(d, f"out_{target}.npy")
        try:
            first_s = self.tools.run(vm, dev, m["function"], inputs, irpa, out)
            err = rel_l2(np.load(out), ref)
            os.remove(out)
            if not err <= max_err:
                return dict(error=f"output differs from torch: rel L2 {err:.3g} > {max_err}")
            kv = dict(err=err, first_run_s=first_s)
            if m.get("extra_flags", {}).get(target):   # compiled with a fallback (see FALLBACKS)
                kv["compile_flags"] = ",".join(m["extra_flags"][target])
            variants = [("streams", ()), ("graphs", ("--cuda_use_streams=false",))] if target == "cuda" else [("default", ())]
            best = None
            for label, flags in variants:
                try:
                    ms, n = self.tools.bench(vm, dev, m["function"], inputs, irpa, iters, flags)
                    kv[f"ms_{label}"] = ms
                    if best is None or ms < best[0]:
                        best = (ms, label)
                except Exception as e:
                    self.log(f"iree: {m['name']} {target} {label}: {str(e)[:200]}")
            if best is None:
                return dict(error="benchmark failed", err=err)
            return dict(ms=best[0], **kv, variant=best[1], timed="wall_per_call")
        except Exception as e:
            return dict(error=str(e)[:160])


# ---------------- here: prepare and selftest ----------------

def iree_bin(tool):
    """A compiler-side tool: beside this Python first (a venv's bin), then PATH."""
    p = os.path.join(os.path.dirname(sys.executable), tool)
    return p if os.access(p, os.X_OK) else (shutil.which(tool) or tool)


def import_graph(model, workdir):
    """Imports the graph to MLIR (torch-mlir's ONNX importer, as iree-import-onnx
    --externalize-params does) with exactly the parameters (is_param) as external references
    `#stream.parameter.named<"model"::"KEY">`; no .irpa is written, the weights come later.
    iree-import-onnx's own rule (an element-count threshold) also externalizes Constant nodes
    (e.g. the dynamo exporter's shape constants), which would then be missing at run time.
    Returns (mlir path, {parameter key: initializer name})."""
    from iree.compiler.extras import onnx_importer
    from iree.compiler.ir import Context
    from iree.compiler.tools.import_onnx.importer_externalization_overrides import IREENodeImporter, ParamData

    class Importer(IREENodeImporter):
        def import_initializer(self, initializer, extern_name=None):
            if extern_name is None and isinstance(initializer, onnx.TensorProto) and is_param(initializer):
                return super().import_initializer(initializer)
            return onnx_importer.NodeImporter.import_initializer(self, initializer, extern_name)

    # ONNX data propagation over a 2^26-element input hangs; it only helps computed shapes.
    big = any(np.prod([d.dim_value for d in v.type.tensor_type.shape.dim]) >= (1 << 24) for v in model.graph.input)
    m = onnx.shape_inference.infer_shapes(zero_filled(model), data_prop=not big)
    ctx = Context()
    info = onnx_importer.ModelInfo(m)
    mod = info.create_module(context=ctx).operation
    imp = Importer.define_function(info.main_graph, mod, ParamData(
        param_bit_threshold=None, num_elements_threshold=0, params_scope=SCOPE, data_dir=workdir,
        param_path="", input_index_threshold=None))
    imp.__class__ = Importer   # define_function builds an IREENodeImporter whatever cls is
    imp.import_all()
    mod.verify()
    mlir = os.path.join(workdir, "model.mlir")
    with open(mlir, "w") as f:
        f.write(mod.get_asm(assume_verified=True))
    text = open(mlir).read()
    keys = set(re.findall(r'#stream\.parameter\.named<"' + SCOPE + r'"::"([^"]*)">', text))
    want = {param_key(t.name): t.name for t in model.graph.initializer if is_param(t)}
    # An initializer no node reads is still imported; every imported key must be one of ours.
    unknown = keys - set(want)
    if unknown:
        raise RuntimeError(f"import: parameters not matching an initializer: {sorted(unknown)[:5]}")
    return mlir, {k: want[k] for k in sorted(keys)}


def compile_mlir(mlir, target, vmfb, extra=(), timeout=3600):
    """iree-compile for `target` (+ extra flags); returns (seconds, None) or (None, error)."""
    t = time.perf_counter()
    try:
        r = subprocess.run([iree_bin("iree-compile"), mlir, *TARGETS[target], *extra, "-o", vmfb],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        if os.path.exists(vmfb): os.remove(vmfb)
        return None, f"iree-compile timed out after {timeout} s"
    if r.returncode != 0:
        if os.path.exists(vmfb): os.remove(vmfb)
        text = (r.stderr or r.stdout).replace(mlir, "model.mlir")
        lines = [l for l in text.splitlines() if "error" in l.lower()] or text.splitlines()
        return None, " ".join(" ".join(lines[:3]).split())[:400]
    return time.perf_counter() - t, None


def prepare_model(name, model, out, targets, log=print, old=None, timeout=3600):
    """Imports and compiles one graph into `out`; returns its manifest entry. Targets that `old`
    (the entry of an earlier run, same structure) has compiled are kept."""
    ins, outs = io_spec(model)
    e = dict(name=name, function=model.graph.name, inputs=ins, outputs=outs, scope=SCOPE,
             hash=structure_hash(model), params={}, vmfb={t: None for t in targets}, errors={}, compile_s={},
             extra_flags={}, notes={})
    if old and old["hash"] == e["hash"]:
        for t in targets:
            if old["vmfb"].get(t) and os.path.exists(os.path.join(out, old["vmfb"][t])):
                for k in ("vmfb", "compile_s", "extra_flags", "notes"):
                    if t in old.get(k, {}):
                        e[k][t] = old[k][t]
        targets = [t for t in targets if not e["vmfb"][t]]
        if not targets:
            return e
    with tempfile.TemporaryDirectory(prefix="iree_imp_") as wd:
        try:
            mlir, e["params"] = import_graph(model, wd)
        except Exception as ex:
            for t in targets:
                e["errors"][t] = str(ex)[:400]
            log(f"{name}: {ex}")
            return e
        for t in targets:
            vm = f"{name}.{t}.vmfb"
            first_err = None
            for extra in [[]] + FALLBACKS.get(t, []):
                secs, err = compile_mlir(mlir, t, os.path.join(out, vm), extra, timeout)
                if err and "timed out" in err:
                    first_err = first_err or err
                    break
                if not err:
                    break
                first_err = first_err or err
                log(f"{name} {t} {' '.join(extra)}: FAILED {err[:200]}")
            if err:
                e["errors"][t] = first_err
            else:
                e["vmfb"][t], e["compile_s"][t] = vm, round(secs, 1)
                if extra:
                    e["extra_flags"][t] = extra
                    e["notes"][t] = "default flags failed: " + first_err[:200]
                log(f"{name} {t}{''.join(' ' + x for x in extra)}: {secs:.1f} s, {os.path.getsize(os.path.join(out, vm)) / 1e6:.2f} MB")
    return e


def load_graphs(graphs_dir, names=None):
    """{name: ModelProto} from DIR/<name>/graph.onnx, plus the W1 chains of a full run that
    DIR lacks (built with bench/workloads.py, as side_by_side.py builds them)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from workloads import W1_KS, W1_N, chain_onnx
    gs = {}
    for p in sorted(glob.glob(os.path.join(graphs_dir, "*", "graph.onnx"))):
        gs[os.path.basename(os.path.dirname(p))] = p
    for k in W1_KS:
        gs.setdefault(f"w1_k{k}", lambda k=k: chain_onnx(W1_N, k, f"w1_k{k}"))
    if names:
        missing = [n for n in names if n not in gs]
        if missing:
            raise SystemExit(f"[iree] no graph {missing} in {graphs_dir}")
        gs = {n: gs[n] for n in names}
    for n in gs:
        gs[n] = onnx.load(gs[n]) if isinstance(gs[n], str) else gs[n]()
    return gs


def repack_wheel(src, dst):
    """Re-zips a wheel uncompressed (members, order, bytes and modes unchanged, so RECORD still
    holds) and checks the RECORD hashes: the outer .tar.xz then compresses it ~3x better."""
    import base64
    zi = zipfile.ZipFile(src)
    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_STORED) as zo:
        for info in zi.infolist():
            ni = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            ni.external_attr, ni.create_system, ni.compress_type = info.external_attr, info.create_system, zipfile.ZIP_STORED
            zo.writestr(ni, zi.read(info))
    b = zipfile.ZipFile(dst)
    rec = [n for n in b.namelist() if n.endswith(".dist-info/RECORD")][0]
    for row in csv.reader(io.StringIO(b.read(rec).decode())):
        if len(row) >= 2 and row[1]:
            algo, want = row[1].split("=", 1)
            got = base64.urlsafe_b64encode(hashlib.new(algo, b.read(row[0])).digest()).rstrip(b"=").decode()
            if got != want:
                raise RuntimeError(f"[iree] repacked wheel: RECORD hash of {row[0]} differs")


def runtime_wheel(wheel, cache):
    """The cp312 manylinux x86_64 runtime wheel: `wheel` if given, else downloaded with pip."""
    if wheel:
        return wheel
    os.makedirs(cache, exist_ok=True)
    got = glob.glob(os.path.join(cache, f"iree_base_runtime-{IREE_VERSION}-*manylinux*x86_64.whl"))
    if not got:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--python-version", "3.12",
                        "--only-binary=:all:", "--platform", "manylinux_2_28_x86_64", "-d", cache,
                        f"iree-base-runtime=={IREE_VERSION}"], check=True)
        got = glob.glob(os.path.join(cache, f"iree_base_runtime-{IREE_VERSION}-*.whl"))
    return got[0]


def cmd_prepare(a):
    os.makedirs(a.out, exist_ok=True)
    targets = a.targets.split(",")
    mpath = os.path.join(a.out, "manifest.json")
    man = json.load(open(mpath)) if os.path.exists(mpath) and a.resume else dict(models={})
    man.update(iree_version=IREE_VERSION, targets={t: TARGETS[t] for t in targets}, scope=SCOPE)
    graphs = load_graphs(a.graphs, a.models.split(",") if a.models else None)
    # Batch-32 CNNs last: on Vulkan they compile for many minutes (mobilenet_v3_small: > 15).
    for name in sorted(graphs, key=lambda n: (n.endswith("_32"), n)):
        man["models"][name] = prepare_model(name, graphs[name], a.out, targets, old=man["models"].get(name),
                                            timeout=a.compile_timeout)
        json.dump(man, open(mpath, "w"), indent=1)   # after each model: a long run can be resumed
    whl = runtime_wheel(a.wheel, os.path.join(tempfile.gettempdir(), "iree_wheels"))
    for old in glob.glob(os.path.join(a.out, "iree_base_runtime-*.whl")):
        os.remove(old)
    repack_wheel(whl, os.path.join(a.out, os.path.basename(whl)))
    json.dump(man, open(mpath, "w"), indent=1)
    ok = [f"{n}.{t}" for n, m in man["models"].items() for t, v in m["vmfb"].items() if v]
    bad = [f"{n}.{t}: {e[:120]}" for n, m in man["models"].items() for t, e in m["errors"].items()]
    print(f"compiled {len(ok)}: {' '.join(ok)}")
    print(f"failed {len(bad)}:" + "".join("\n  " + b for b in bad))


def random_weights(model, seed):
    """A copy of `model` whose parameters hold seeded random values (the non-parameter
    initializers, e.g. shapes, are kept)."""
    rng = np.random.default_rng(seed)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for i, t in enumerate(m.graph.initializer):
        if is_param(t):
            dt = helper.tensor_dtype_to_np_dtype(t.data_type)
            a = (rng.standard_normal(tuple(t.dims)) * 0.1).astype(dt)
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(a, t.name))
    return m


def cmd_selftest(a):
    """prepare's import and compile (CPU target), then IreePeer, the GPU machine's code path:
    runtime wheel installed with pip --target, structure hash, .irpa from the graph's
    initializers, iree-run-module check, iree-benchmark-module timing; the reference is
    onnxruntime on the same random weights and input. Also checks that a changed graph and a
    wrong output are error rows, and that the weights really come from the .irpa."""
    import onnxruntime as ort
    graphs = load_graphs(a.graphs, a.models.split(","))
    fails = 0
    def verdict(ok, what):
        nonlocal fails
        fails += not ok
        print(("PASS " if ok else "FAIL ") + what, flush=True)
    with tempfile.TemporaryDirectory(prefix="iree_selftest_") as wd:
        bundle, work = os.path.join(wd, "bundle"), os.path.join(wd, "work")
        os.makedirs(bundle); os.makedirs(work)
        man = dict(iree_version=IREE_VERSION, models={})
        for name, cleared in graphs.items():
            man["models"][name] = prepare_model(name, cleared, bundle, ["cpu"])
        json.dump(man, open(os.path.join(bundle, "manifest.json"), "w"))
        repack_wheel(runtime_wheel(a.wheel, os.path.join(tempfile.gettempdir(), "iree_wheels")),
                     os.path.join(bundle, f"iree_base_runtime-{IREE_VERSION}-cp312-abi3-manylinux_2_28_x86_64.whl"))
        peer = IreePeer(bundle, work)
        peer.SYSTEMS = {"iree-cpu": "cpu"}
        verdict(peer.tools.bindir.startswith(work), f"runtime installed from the bundle's wheel: {peer.tools.bindir}")
        for name, cleared in graphs.items():
            e = man["models"][name]
            model = random_weights(cleared, seed=1)
            verdict(structure_hash(model) == e["hash"], f"{name}: structure hash independent of weight data")
            rng = np.random.default_rng(2)
            xs = [rng.integers(0, 1000, s["shape"]).astype(s["dtype"]) if s["dtype"].startswith("int")
                  else rng.standard_normal(s["shape"]).astype(s["dtype"]) for s in e["inputs"]]
            sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            ref = sess.run(None, {s["name"]: x for s, x in zip(e["inputs"], xs)})[0]
            path = os.path.join(work, f"{name}.onnx")
            onnx.save(model, path)
            r = peer.run(name, path, xs, ref, 1e-4, 5, ["iree-cpu"])["iree-cpu"]
            verdict("ms" in r, f"{name}: {len(e['params'])} parameters, {r}")
            if e["params"]:   # all-zero weights: the output must change and be an error row
                zero = onnx.ModelProto(); zero.CopyFrom(model)
                for t in zero.graph.initializer:
                    if is_param(t):
                        t.CopyFrom(numpy_helper.from_array(np.zeros(tuple(t.dims), helper.tensor_dtype_to_np_dtype(t.data_type)), t.name))
                onnx.save(zero, path)
                r = peer.run(name, path, xs, ref, 1e-4, 5, ["iree-cpu"])["iree-cpu"]
                verdict("output differs" in r.get("error", ""), f"{name}: zero weights from the .irpa -> {r}")
            changed = onnx.ModelProto(); changed.CopyFrom(model)
            changed.graph.node[-1].output[0] += "_"   # a renamed tensor is another graph
            changed.graph.output[0].name += "_"
            onnx.save(changed, path)
            r = peer.run(name, path, xs, ref, 1e-4, 5, ["iree-cpu"])["iree-cpu"]
            verdict(r.get("error") == "graph differs from the compiled one", f"{name}: changed graph -> {r}")
    print(f"{len(graphs)} models; {fails} failed" if fails else f"{len(graphs)} models; all checks passed")
    return 1 if fails else 0


def main():
    P = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = P.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare", help="import + compile the graphs, write the bundle")
    p.add_argument("--graphs", required=True, help="DIR/<name>/graph.onnx")
    p.add_argument("--out", required=True)
    p.add_argument("--models", default="", help="comma-separated names (default: all in --graphs, plus W1 k=1,4,8,16)")
    p.add_argument("--targets", default="cuda,vulkan")
    p.add_argument("--wheel", default="", help="iree_base_runtime cp312 manylinux x86_64 wheel (default: pip download)")
    p.add_argument("--compile-timeout", type=int, default=3600, help="seconds per iree-compile (a timeout is a compile failure)")
    p.add_argument("--resume", action="store_true", help="keep what --out has compiled for the same graph (failures are retried)")
    s = sub.add_parser("selftest", help="CPU check of import, parameters and runner against onnxruntime")
    s.add_argument("--graphs", default="/work/iree_graphs")
    s.add_argument("--models", default="w4_mlp1,w6_squeezenet1_1_1")
    s.add_argument("--wheel", default="", help="iree_base_runtime wheel (default: pip download)")
    a = P.parse_args()
    sys.exit(cmd_prepare(a) if a.cmd == "prepare" else cmd_selftest(a))


if __name__ == "__main__":
    main()
