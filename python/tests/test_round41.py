"""Red-team round 41 (docs/redteam.md): resource lifetimes and concurrency from Python."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import fusor
from test_fusor import onnx_model

# Twelve dependent MatMul + Tanh layers: long enough on cpu that a fork lands inside a run.
_LAYERS = 12
HEAVY = onnx_model(
    [n for i in range(_LAYERS) for n in (("MatMul", ["h%d" % i if i else "x", "w"], ["m%d" % i]),
                                         ("Tanh", ["m%d" % i], ["h%d" % (i + 1)]))],
    [("x", 1, None), ("w", 1, [256, 256])], [("h%d" % _LAYERS, 1, None)])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")
@pytest.mark.parametrize("backend", ["ref", "cpu"])
def test_a_child_forked_mid_run_runs_the_session(backend):
    # Was a hang: the child inherited the run lock held by a thread it does not have.
    rng = np.random.default_rng(41)
    w = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
    small = rng.standard_normal((4, 256)).astype(np.float32)
    big = rng.standard_normal((16384 if backend == "cpu" else 4096, 256)).astype(np.float32)  # ~1 s or more
    s = fusor.Session(HEAVY, backend=backend)
    (want,) = s.run(None, {"x": small, "w": w})
    t = threading.Thread(target=lambda: s.run(None, {"x": big, "w": w}))
    t.start()
    time.sleep(0.2)
    mid_run = t.is_alive()
    pid = os.fork()
    if pid == 0:  # the child: no pytest machinery, only an exit code
        signal.alarm(30)
        try:
            (got,) = s.run(None, {"x": small, "w": w})
            os._exit(0 if np.array_equal(got, want) else 3)
        except BaseException:
            os._exit(4)
    _, status = os.waitpid(pid, 0)
    t.join()
    assert mid_run, "the long run finished before the fork: make the model heavier"
    assert os.waitstatus_to_exitcode(status) == 0, "child exit %d (-14: hung)" % os.waitstatus_to_exitcode(status)


def test_no_leak_report_at_exit_with_a_module_level_session(tmp_path):
    # nanobind printed a dozen "leaked instances" lines when a daemon thread kept the interpreter
    # from collecting a module-level session; onnxruntime prints nothing.
    model = str(tmp_path / "add.onnx")
    with open(model, "wb") as f:
        f.write(onnx_model([("Add", ["x", "y"], ["z"])], [("x", 1, [2]), ("y", 1, [2])], [("z", 1, [2])]))
    code = textwrap.dedent(f"""
        import threading, time, numpy as np, fusor
        threading.Thread(target=lambda: time.sleep(100), daemon=True).start()
        s = fusor.Session({model!r}, backend="cpu")
        print(s.run(None, {{"x": np.ones(2, np.float32), "y": np.ones(2, np.float32)}})[0].tolist())
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[2.0, 2.0]"
    assert "leak" not in r.stderr, r.stderr


def test_an_output_asked_for_twice_is_two_arrays():
    # Was one array returned twice: writing into the first changed the second.
    m = onnx_model([("Add", ["x", "y"], ["z"])], [("x", 1, [2]), ("y", 1, [2])], [("z", 1, [2])])
    s = fusor.Session(m, backend="cpu")
    a, b = s.run(["z", "z"], {"x": np.ones(2, np.float32), "y": np.ones(2, np.float32)})
    assert a is not b
    a[0] = 7.0
    np.testing.assert_array_equal(b, [2.0, 2.0])
