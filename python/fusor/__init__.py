"""fusor: an operator-fusion runtime for ONNX models (CUDA, Vulkan/SPIR-V, CPU), from Python.

    import numpy as np, fusor
    sess = fusor.Session("model.onnx", backend="vulkan")        # or "cuda", "cpu", "ref"
    x = np.random.default_rng(0).standard_normal((1, 64), dtype=np.float32)
    (y,) = sess.run(None, {sess.get_inputs()[0].name: x})       # onnxruntime's calling convention

Inputs are NumPy arrays or any object with ``__dlpack__`` (torch, CuPy, JAX). On the ``cuda``
backend, device tensors are bound as the caller's own memory (no host copy) and
``run(..., output_device=True)`` returns device arrays (DLPack, e.g. ``torch.from_dlpack``);
``outputs={name: tensor}`` writes the results straight into the caller's device tensors.
Errors raise ``fusor.Error`` (``fusor.Unsupported`` for an op/dtype a backend does not run) with
fusor's one-line message, e.g. ``[run] input 'x' expects float32, got float64``.
"""
from __future__ import annotations

import numbers
import operator
import os
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Union

import numpy as np

from ._fusor import Error, Unsupported, __version__, _Session, backends, conform as _conform, devices
from ._fusor import explain as _explain
from ._fusor import read_tensor as _read_tensor

__all__ = ["Session", "NodeArg", "Error", "Unsupported", "backends", "devices", "conform", "explain", "best_backend", "read_tensor",
           "__version__"]


class NodeArg(NamedTuple):
    """A model input or output: name, shape (a list with None for a dimension the model leaves
    open; None itself when not even the rank is known: an output declared without a shape whose
    shape inference cannot fix, e.g. the model's inputs have open dims) and dtype (a NumPy dtype
    name: 'float32', 'int64', 'bool', ...)."""

    name: str
    shape: Optional[List[Optional[int]]]
    dtype: str


def _fs_path(p: Any, what: str) -> bytes:
    """A path as the bytes the OS takes (os.fsencode: names that are not UTF-8 work too)."""
    if not isinstance(p, (str, bytes, os.PathLike)):
        raise Error(f"[python] {what}: expected a path (str or os.PathLike), got {type(p).__name__}")
    b = os.fsencode(p)
    if b"\0" in b:  # C would read the name only up to the NUL: another file
        raise Error(f"[python] {what}: path {p!r} contains a NUL character")
    return b


def _model_path(p: Union[str, os.PathLike]) -> bytes:
    b = _fs_path(p, "model path")
    return os.path.join(b, b"model.onnx") if os.path.isdir(b) else b


# NumPy dtype kinds with a fusor dtype: bool, signed/unsigned integers, floats; complex is
# refused natively with its DLPack code. Anything else (object, str, datetime, records) is
# named here instead of as nanobind's "incompatible function arguments".
_ARRAY_KINDS = "biufc"

_capsule_is_valid = None


def _legacy_dlpack(x: Any) -> Any:
    """The framework's pre-__dlpack__ exporter, as nanobind used last: torch.utils.dlpack.to_dlpack
    (on a detached tensor: requires_grad tensors and tensors on another device than torch's
    current one refuse __dlpack__ but export this way), else x.detach().__dlpack__()."""
    if type(x).__module__.split(".")[0] == "torch":
        import torch.utils.dlpack
        return torch.utils.dlpack.to_dlpack(x.detach())
    if hasattr(x, "detach"):
        return x.detach().__dlpack__()
    raise TypeError("no legacy DLPack exporter")


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _dlpack_capsule(x: Any, what: str) -> Any:
    """Takes a device tensor's DLPack capsule here, so the native side imports a capsule it can
    mark as used: a producer returning a capsule that was already consumed (freed memory) is an
    error instead of a crash. Tries what nanobind tried, in its order, each after the one before
    raised: a versioned capsule, an unversioned one, the framework's legacy exporter."""
    global _capsule_is_valid
    errors: List[BaseException] = []
    cap = None
    for get in (lambda: x.__dlpack__(max_version=(1, 0)), lambda: x.__dlpack__(), lambda: _legacy_dlpack(x)):
        try:
            cap = get()
            break
        except Exception as e:  # TypeError: a producer predating DLPack 1.0; BufferError: requires_grad
            errors.append(e)
    else:
        # The producer's reason (BufferError: "use tensor.detach()") over "unexpected keyword".
        why = [e for e in errors if isinstance(e, BufferError)] or [e for e in errors if not isinstance(e, TypeError)] or errors
        raise Error(f"[python] {what}: cannot be taken over DLPack: {_one_line(why[0])}")
    if _capsule_is_valid is None:
        import ctypes
        f = ctypes.pythonapi.PyCapsule_IsValid
        f.argtypes, f.restype = [ctypes.py_object, ctypes.c_char_p], ctypes.c_int
        _capsule_is_valid = f
    if not any(_capsule_is_valid(cap, n) for n in (b"dltensor", b"dltensor_versioned") if type(cap).__name__ == "PyCapsule"):
        raise Error(f"[python] {what}: __dlpack__ returned {type(cap).__name__}, not an unused DLPack capsule "
                    "(a capsule can be consumed once)")
    return cap


def _as_array(x: Any, what: str) -> Any:
    """NumPy arrays (made C-contiguous, native byte order), host DLPack tensors as NumPy views,
    device DLPack tensors as capsules (the native side binds their memory)."""
    if isinstance(x, np.ndarray) and not isinstance(x, np.ma.MaskedArray):
        # Dtypes from outside NumPy (ml_dtypes: bfloat16, float8_*, int4, float4_e2m1fn, ...):
        # NumPy's DLPack has none of them. Most have kind 'V', but float8_e5m2 has kind 'f',
        # so the test is the scalar type's origin, not the kind.
        if x.dtype.fields is None and x.dtype.type is not np.void and (
                x.dtype.kind == "V" or getattr(x.dtype.type, "__module__", "numpy").split(".")[0] != "numpy"):
            if x.dtype.name == "bfloat16":  # ml_dtypes' (what bfloat16 outputs are): the native side takes its bits
                return x if x.flags.c_contiguous else np.ascontiguousarray(x)
            raise Error(f"[python] {what}: NumPy cannot hand over {x.dtype} arrays (its DLPack has no such dtype); "
                        "fusor takes bool, integer, float16/32/64 and ml_dtypes bfloat16 NumPy arrays")
        if x.dtype.kind not in _ARRAY_KINDS or x.dtype.fields is not None:
            raise Error(f"[python] {what}: NumPy dtype {x.dtype} has no fusor dtype (bool, integers and floats do)")
        if not x.dtype.isnative:  # big-endian data: the bytes are read as stored, so swap them first
            x = x.astype(x.dtype.newbyteorder("="))
        # Not np.ascontiguousarray: it returns at least 1-d, so a rank-0 input (a scalar trip
        # count, threshold or k) arrived as shape [1]. A 0-d array is always contiguous.
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)
    if isinstance(x, np.ma.MaskedArray):
        raise Error(f"[python] {what}: a masked array has no fusor equivalent (pass .filled() or .data)")
    if hasattr(x, "__dlpack__"):
        dev = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
        if dev == 1:  # kDLCPU
            try:
                return _as_array(np.from_dlpack(x), what)
            except (TypeError, BufferError, RuntimeError):
                pass  # a dtype NumPy lacks (bfloat16): the native side reads it via DLPack
        return _dlpack_capsule(x, what)
    if isinstance(x, (list, tuple, int, float, bool, np.generic)):
        return _as_array(np.asarray(x), what)
    raise Error(f"[python] {what}: expected a NumPy array or an object with __dlpack__, got {type(x).__name__}")


class Session:
    """One ONNX model on one backend, compiled per input signature (like onnxruntime's
    InferenceSession). ``path_or_bytes`` is a model.onnx path (or its folder) or the serialized
    model; external data of an in-memory model is resolved from the current directory."""

    def __init__(self, path_or_bytes: Union[str, os.PathLike, bytes], backend: Optional[str] = None, device: int = 0,
                 fusion: bool = True, replay: bool = True, max_executables: int = 64):
        """``max_executables``: how many compiled input signatures the session keeps (least
        recently used out; one evicted and seen again is compiled again)."""
        if backend is None:
            backend = best_backend()
        if not isinstance(backend, str):
            raise Error(f"[python] backend must be a name (str) from fusor.backends(), got {type(backend).__name__}")
        try:  # ints and NumPy integers; not bools, floats or strings
            dev = operator.index(device) if not isinstance(device, (bool, np.bool_)) else None
        except TypeError:
            dev = None
        if dev is None or not 0 <= dev < 2**31:
            raise Error(f"[python] device must be an int in [0, 2^31), got {device!r}")
        device = int(dev)
        for name, v in (("fusion", fusion), ("replay", replay)):
            if not isinstance(v, (bool, np.bool_)):
                raise Error(f"[python] {name} must be True or False, got {v!r}")
        try:
            cap = operator.index(max_executables) if not isinstance(max_executables, (bool, np.bool_)) else None
        except TypeError:
            cap = None
        if cap is None or not 1 <= cap < 2**31:
            raise Error(f"[python] max_executables must be an int in [1, 2^31), got {max_executables!r}")
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._impl = _Session(bytes(path_or_bytes), backend, device, bool(fusion), bool(replay), max_executables=int(cap))
        else:
            self._impl = _Session(_model_path(path_or_bytes), backend, device, bool(fusion), bool(replay), is_path=True,
                                  max_executables=int(cap))
        self._inputs = [_node_arg(*a) for a in self._impl.inputs()]
        self._outputs = [_node_arg(*a) for a in self._impl.outputs()]
        self._outputs_inferred = False
        self._overridable = [_node_arg(*a) for a in self._impl.overridable()]
        self._codes: Optional[Dict[str, int]] = None  # string inputs' table (on first use)
        self._kept_strings: Optional[List[bool]] = None  # per input: strings the model computes on

    @property
    def backend(self) -> str:
        return self._impl.backend

    def _string_codes(self, x: Any, what: str) -> np.ndarray:
        """A string input's values as the int64 codes the model runs on (-1: a string it never compares with)."""
        a = np.asarray(x)
        if a.dtype.kind not in "OUS":
            raise Error(f"[run] {what} expects string, got {a.dtype}")
        if self._codes is None:
            self._codes = {s: i for i, s in enumerate(self._impl.input_strings())}
        values = a.ravel().tolist()
        if any(not isinstance(v, (str, bytes)) for v in values):
            raise Error(f"[run] {what}: every element of a string input must be str (or UTF-8 bytes)")
        try:
            flat = [self._codes.get(v.decode() if isinstance(v, bytes) else v, -1) for v in values]
        except UnicodeDecodeError:
            raise Error(f"[run] {what}: bytes that are not UTF-8") from None
        return np.array(flat, dtype=np.int64).reshape(a.shape)

    def _kept(self) -> List[bool]:
        if self._kept_strings is None:
            self._kept_strings = list(self._impl.kept_string_inputs())
        return self._kept_strings

    def _strings(self, x: Any, what: str) -> tuple:
        """A string input the model computes on, as (list of str, shape) for the binding."""
        a = np.asarray(x)
        if a.dtype.kind not in "OUS":
            raise Error(f"[run] {what} expects string, got {a.dtype}")
        values = a.ravel().tolist()
        if any(not isinstance(v, (str, bytes)) for v in values):
            raise Error(f"[run] {what}: every element of a string input must be str (or UTF-8 bytes)")
        try:
            return ([v.decode() if isinstance(v, bytes) else v for v in values], tuple(int(d) for d in a.shape))
        except UnicodeDecodeError:
            raise Error(f"[run] {what}: bytes that are not UTF-8") from None

    def get_inputs(self) -> List[NodeArg]:
        return _copies(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        """The outputs as the model declares them; a shape the model leaves open is filled by
        shape inference when the inputs' shapes are all fixed (as onnxruntime does), else its
        open dims are None (the whole shape None when not even the rank is known)."""
        if not self._outputs_inferred:  # on first use: inference costs what a first run's does
            self._outputs = [_node_arg(*a) for a in self._impl.outputs(infer=True)]
            self._outputs_inferred = True
        return _copies(self._outputs)

    def get_overridable_initializers(self) -> List[NodeArg]:
        """Initializers the model also lists as graph inputs (ONNX IR >= 4), as onnxruntime's
        method of that name: defaults that ``run`` may be fed by name (the fed value wins)."""
        return _copies(self._overridable)

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any], run_options: Any = None, *,
            output_device: bool = False, outputs: Optional[Dict[str, Any]] = None) -> List[Any]:
        """Runs the model. ``output_names``: the outputs to return, in that order (None: all).
        ``input_feed``: {input name: array}. Returns NumPy arrays, or (cuda) device arrays with
        ``output_device=True``; an output given in ``outputs`` is written into that caller
        tensor (cuda device memory) and returned as that same object."""
        if not isinstance(input_feed, dict):
            raise Error("[python] run: input_feed must be a dict {input name: array}")
        if outputs is not None and not isinstance(outputs, dict):
            raise Error(f"[python] run: outputs must be a dict {{output name: device array}}, got {type(outputs).__name__}")
        if not isinstance(output_device, (bool, np.bool_)):
            raise Error(f"[python] run: output_device must be True or False, got {output_device!r}")
        names = [a.name for a in self._inputs]
        over = [a.name for a in self._overridable]
        unknown = sorted((str(k) for k in set(input_feed) - set(names) - set(over)))
        if unknown:
            also = f" (and overridable initializers {over})" if over else ""
            raise Error(f"[run] unknown input '{unknown[0]}'; the model's inputs are {names}{also}")
        arrays = []
        for a in self._inputs:
            n = a.name
            if n not in input_feed:
                raise Error(f"[run] missing input '{n}'; the model's inputs are {names}")
            if a.dtype == "string" and self._kept()[len(arrays)]:  # the model computes on its strings (text ops)
                arrays.append(self._strings(input_feed[n], f"input '{n}'"))
            elif a.dtype == "string":  # a categorical column: its codes in the model's string table
                arrays.append(self._string_codes(input_feed[n], f"input '{n}'"))
            else:
                arrays.append(_as_array(input_feed[n], f"input '{n}'"))
        # Overridable initializers: the fed ones replace their defaults (None keeps a default).
        overrides = [_as_array(input_feed[n], f"input '{n}'") if n in input_feed else None for n in over]
        while overrides and overrides[-1] is None:
            overrides.pop()
        out_names = [a.name for a in self._outputs]
        # Only the outputs asked for are converted (an int4 output left out must not fail the run).
        wanted: List[int] = []
        if output_names is not None:
            if isinstance(output_names, (str, bytes)):  # a str is a sequence of one-letter names
                raise Error(f"[python] run: output_names must be a list of output names or None, got {output_names!r}")
            output_names = list(output_names)
            if not output_names:  # [] asks for every output, as onnxruntime's run
                output_names = None
            for n in output_names or []:
                if n not in out_names:
                    raise Error(f"[run] unknown output '{n}'; the model's outputs are {out_names}")
                wanted.append(out_names.index(n))
        outs_list: List[Any] = []
        if outputs:
            bad = sorted((str(k) for k in set(outputs) - set(out_names)))
            if bad:
                raise Error(f"[python] outputs: unknown output '{bad[0]}'; the model's outputs are {out_names}")
            # As capsules, like device inputs: the native side marks each one used, so a producer
            # handing out the same capsule twice is refused instead of written through freed memory.
            for n in out_names:
                o = outputs.get(n)
                if o is not None and not hasattr(o, "__dlpack__"):
                    raise Error(f"[python] output '{n}': outputs= takes device arrays (__dlpack__), got {type(o).__name__}")
                outs_list.append(None if o is None else _dlpack_capsule(o, f"output '{n}'"))
        res = list(self._impl.run(arrays, bool(output_device), outs_list, overrides, wanted,
                                  output_names is not None))
        for k, n in enumerate(out_names):  # the caller's own tensors (the native side leaves None there)
            if outs_list and outs_list[k] is not None:
                res[k] = outputs[n]
        if output_names is None:
            return res
        # A name asked for twice gets its own array the second time (onnxruntime returns two
        # arrays), so writing into one does not change the other.
        seen = set()
        picked = []
        for n in output_names:
            r = res[out_names.index(n)]
            if n in seen and isinstance(r, list):  # ZipMap's maps: a list of fresh dicts
                r = [dict(m) for m in r]
            picked.append(r.copy() if n in seen and isinstance(r, np.ndarray) else r)
            seen.add(n)
        return picked


def _node_arg(name: str, shape: Optional[List[Optional[int]]], dtype: str) -> NodeArg:
    return NodeArg(name, None if shape is None else list(shape), dtype)


def _copies(args: List[NodeArg]) -> List[NodeArg]:
    """Fresh NodeArgs (their shape lists too): a caller editing one must not edit the session's."""
    return [_node_arg(*a) for a in args]


def _names(v: Any, what: str, kind: str) -> List[Any]:
    """v as a list (one str / path is a list of one); Error naming the argument otherwise."""
    if isinstance(v, (str, bytes, os.PathLike)):
        return [v]
    try:
        return list(v)
    except TypeError:
        raise Error(f"[python] {what} must be {kind} or a list of them, got {type(v).__name__}") from None


def best_backend() -> str:
    """'cuda' when a CUDA device is usable, else 'vulkan' when a Vulkan device is, else 'cpu'
    (what the CLI picks when --backend is left out)."""
    present = {d["backend"] for d in devices()}
    for b in ("cuda", "vulkan"):
        if b in present:
            return b
    return "cpu"


def conform(paths: Union[str, Sequence[str]], backends: Union[str, Sequence[str]] = ("ref",), rtol: Optional[float] = None,
            atol: Optional[float] = None) -> List[Dict[str, Any]]:
    """Runs ONNX backend-test cases (folders with model.onnx + test_data_set_*) on the backends;
    one dict per (case, backend): case, backend, status ('passed'|'failed'|'skipped'), detail,
    max_abs, max_rel. Never raises for a failing case (that is a result). Tolerances left as
    None (the default) are the CLI's: the dtype default (float32 rtol 1e-3, atol 1e-7) plus,
    when both are None, 64 eps of each output's largest magnitude (README "Real models")."""
    paths = _names(paths, "conform: paths", "a path")
    backends = [backends] if isinstance(backends, str) else _names(backends, "conform: backends", "a backend name")
    if not all(isinstance(b, str) for b in backends):
        raise Error(f"[python] conform: backends must be names (str) from fusor.backends(), got {backends!r}")
    tol = []
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v is None:
            tol.append(-1.0)  # the native side's "default"
            continue
        # numbers.Real takes NumPy scalars (np.float32(1e-2)); bools are refused.
        ok = isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
        try:
            ok = ok and bool(np.isfinite(float(v))) and float(v) >= 0
        except OverflowError:  # an int past float's range
            ok = False
        if not ok:
            raise Error(f"[python] conform: {name} must be a finite number >= 0 (or None for the default), got {v!r}")
        tol.append(float(v))
    return _conform([_fs_path(p, "conform path") for p in paths], backends, tol[0], tol[1])


def explain(path: Union[str, os.PathLike], fusion: bool = True) -> Dict[str, Any]:
    """The fused plan as data (as `fusor explain`): {'kernels': [{'index', 'name', 'kind', 'ops',
    'nodes', 'inputs', 'bytes_read', 'bytes_written'}], 'onnx_nodes', 'primitive_nodes',
    'bytes_fused', 'bytes_unfused', 'arena_bytes', 'naive_bytes'}. The shapes are those of
    test_data_set_0 next to the model when there is one, else of seeded random inputs."""
    if not isinstance(fusion, (bool, np.bool_)):  # bool("no") is True
        raise Error(f"[python] explain: fusion must be True or False, got {fusion!r}")
    return _explain(_fs_path(path, "explain path"), bool(fusion))


def read_tensor(path: Union[str, os.PathLike]) -> np.ndarray:
    """Reads an ONNX TensorProto (.pb) or NumPy .npy file into a NumPy array."""
    return _read_tensor(_fs_path(path, "read_tensor path"))
