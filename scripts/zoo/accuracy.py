#!/usr/bin/env python3
"""For a zoo case that misses the conformance tolerance: which side is off? Runs fusor on
test_data_set_0's inputs and prints, per output, max |x - fp64| for fusor and onnxruntime,
fp64 being the same torch module run in double (ref64/, written by export_zoo.py).

Usage: accuracy.py CASE [BACKEND ...] (needs onnx; run with the zoo venv's python)
"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def load(d):
    return [numpy_helper.to_array(onnx.load_tensor(f)).astype(np.float64)
            for f in sorted(glob.glob(os.path.join(d, "output_*.pb")), key=lambda p: int(p.split("_")[-1][:-3]))]


def main():
    case, backends = sys.argv[1], sys.argv[2:] or ["ref", "cpu", "vulkan"]
    fusor = os.environ.get("FUSOR", "build/fusor")
    ref64, ort = load(os.path.join(case, "ref64")), load(os.path.join(case, "test_data_set_0"))
    print(f"{case}: onnxruntime vs fp64: " + ", ".join(f"{np.abs(o - r).max():.2e}" for o, r in zip(ort, ref64)))
    for b in backends:
        with tempfile.TemporaryDirectory() as t:
            subprocess.run([fusor, "run", case, "--backend", b, "--inputs", os.path.join(case, "test_data_set_0"),
                            "--out", t], capture_output=True, check=False)
            got = load(t)
            if not got:
                print(f"  {b}: no outputs")
                continue
            print(f"  fusor {b} vs fp64: " + ", ".join(f"{np.abs(g - r).max():.2e}" for g, r in zip(got, ref64)))


if __name__ == "__main__":
    main()
