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

import os
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Union

import numpy as np

from ._fusor import Error, Unsupported, __version__, _Session, backends, conform as _conform, devices
from ._fusor import explain as _explain
from ._fusor import read_tensor

__all__ = ["Session", "NodeArg", "Error", "Unsupported", "backends", "devices", "conform", "explain", "best_backend", "read_tensor",
           "__version__"]


class NodeArg(NamedTuple):
    """A model input or output: name, shape (None for a dimension the model leaves open) and
    dtype (a NumPy dtype name: 'float32', 'int64', 'bool', ...)."""

    name: str
    shape: List[Optional[int]]
    dtype: str


def _model_path(p: Union[str, os.PathLike]) -> str:
    p = os.fspath(p)
    return os.path.join(p, "model.onnx") if os.path.isdir(p) else p


def _as_array(x: Any, what: str) -> Any:
    """NumPy arrays (made C-contiguous), host DLPack tensors as NumPy views, device DLPack
    tensors as they are (the native side binds their memory)."""
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x)
    if hasattr(x, "__dlpack__"):
        dev = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
        if dev == 1:  # kDLCPU
            try:
                return np.ascontiguousarray(np.from_dlpack(x))
            except (TypeError, BufferError, RuntimeError):
                return x  # a dtype NumPy lacks (bfloat16): the native side reads it via DLPack
        return x
    if isinstance(x, (list, tuple, int, float, bool, np.generic)):
        return np.ascontiguousarray(np.asarray(x))
    raise Error(f"[python] {what}: expected a NumPy array or an object with __dlpack__, got {type(x).__name__}")


class Session:
    """One ONNX model on one backend, compiled per input signature (like onnxruntime's
    InferenceSession). ``path_or_bytes`` is a model.onnx path (or its folder) or the serialized
    model; external data of an in-memory model is resolved from the current directory."""

    def __init__(self, path_or_bytes: Union[str, os.PathLike, bytes], backend: Optional[str] = None, device: int = 0,
                 fusion: bool = True, replay: bool = True):
        if backend is None:
            backend = best_backend()
        src = bytes(path_or_bytes) if isinstance(path_or_bytes, (bytes, bytearray, memoryview)) else _model_path(path_or_bytes)
        self._impl = _Session(src, backend, device, fusion, replay)
        self._inputs = [NodeArg(n, list(s), d) for n, s, d in self._impl.inputs()]
        self._outputs = [NodeArg(n, list(s), d) for n, s, d in self._impl.outputs()]

    @property
    def backend(self) -> str:
        return self._impl.backend

    def get_inputs(self) -> List[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        return list(self._outputs)

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any], run_options: Any = None, *,
            output_device: bool = False, outputs: Optional[Dict[str, Any]] = None) -> List[Any]:
        """Runs the model. ``output_names``: the outputs to return, in that order (None: all).
        ``input_feed``: {input name: array}. Returns NumPy arrays, or (cuda) device arrays with
        ``output_device=True``; an output given in ``outputs`` is written into that caller
        tensor (cuda device memory) and returned as that same object."""
        if not isinstance(input_feed, dict):
            raise Error("[python] run: input_feed must be a dict {input name: array}")
        names = [a.name for a in self._inputs]
        unknown = sorted(set(input_feed) - set(names))
        if unknown:
            raise Error(f"[run] unknown input '{unknown[0]}'; the model's inputs are {names}")
        arrays = []
        for n in names:
            if n not in input_feed:
                raise Error(f"[run] missing input '{n}'; the model's inputs are {names}")
            arrays.append(_as_array(input_feed[n], f"input '{n}'"))
        out_names = [a.name for a in self._outputs]
        outs_list: List[Any] = []
        if outputs:
            bad = sorted(set(outputs) - set(out_names))
            if bad:
                raise Error(f"[python] outputs: unknown output '{bad[0]}'; the model's outputs are {out_names}")
            outs_list = [outputs.get(n) for n in out_names]
        res = self._impl.run(arrays, output_device, outs_list)
        if output_names is None:
            return list(res)
        picked = []
        for n in output_names:
            if n not in out_names:
                raise Error(f"[run] unknown output '{n}'; the model's outputs are {out_names}")
            picked.append(res[out_names.index(n)])
        return picked


def best_backend() -> str:
    """'cuda' when a CUDA device is usable, else 'vulkan' when a Vulkan device is, else 'cpu'
    (what the CLI picks when --backend is left out)."""
    present = {d["backend"] for d in devices()}
    for b in ("cuda", "vulkan"):
        if b in present:
            return b
    return "cpu"


def conform(paths: Union[str, Sequence[str]], backends: Union[str, Sequence[str]] = ("ref",), rtol: float = -1.0,
            atol: float = -1.0) -> List[Dict[str, Any]]:
    """Runs ONNX backend-test cases (folders with model.onnx + test_data_set_*) on the backends;
    one dict per (case, backend): case, backend, status ('passed'|'failed'|'skipped'), detail,
    max_abs, max_rel. Never raises for a failing case (that is a result). Negative tolerances
    (the default): the CLI's, i.e. the dtype default (float32 rtol 1e-3, atol 1e-7) plus
    64 eps of each output's largest magnitude (README "Real models")."""
    paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    backends = [backends] if isinstance(backends, str) else list(backends)
    return _conform([os.fspath(p) for p in paths], backends, rtol, atol)


def explain(path: Union[str, os.PathLike], fusion: bool = True) -> Dict[str, Any]:
    """The fused plan as data (as `fusor explain`): {'kernels': [{'index', 'name', 'kind', 'ops',
    'nodes', 'inputs', 'bytes_read', 'bytes_written'}], 'onnx_nodes', 'primitive_nodes',
    'bytes_fused', 'bytes_unfused', 'arena_bytes', 'naive_bytes'}."""
    return _explain(os.fspath(path), fusion)
