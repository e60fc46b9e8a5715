#!/usr/bin/env bash
# Installs fusor's build and test dependencies on Debian 12 (idempotent: installs only what is missing).
set -euo pipefail
pkgs=(build-essential cmake ninja-build ccache pkg-config git
      libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools glslc libshaderc-dev
      spirv-tools glslang-dev glslang-tools libonnx-dev libprotobuf-dev protobuf-compiler
      googletest libgtest-dev libcli11-dev nlohmann-json3-dev libre2-dev graphviz python3-numpy
      python3 python3-dev python3-venv python3-pip
      clang libclang-rt-14-dev)  # clang + compiler-rt: the ASan/UBSan and libFuzzer stage (scripts/sanitize.sh)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "[setup] all Debian packages present"
fi
if [ -x /usr/local/cuda/bin/nvcc ]; then echo "[setup] CUDA toolkit: /usr/local/cuda"; else echo "[setup] CUDA toolkit not found in /usr/local/cuda: the cuda backend will be off"; fi

# The Python package (pip install . -> scikit-build-core + nanobind, tests with pytest): PyPI
# tools in a virtual environment, build/venv, over the python3 on PATH (Debian's python3 is
# externally managed, PEP 668; a pyenv python works the same). --system-site-packages keeps
# what is installed there (numpy, torch) visible. FUSOR_PYTHON picks another interpreter.
py=${FUSOR_PYTHON:-python3}
venv=build/venv
cd "$(dirname "$0")/.."
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  echo "[setup] creating $venv with $("$py" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  rm -rf "$venv"
  "$py" -m venv --system-site-packages "$venv"
fi
if "$venv/bin/python" -c 'import scikit_build_core, nanobind, numpy, pytest' >/dev/null 2>&1; then
  echo "[setup] python: scikit-build-core, nanobind, numpy, pytest present in $venv"
else
  echo "[setup] python: installing scikit-build-core nanobind numpy pytest into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "scikit-build-core>=0.10" "nanobind>=2.0" numpy pytest
fi
# onnx (the Python tests that write models with onnx.helper), ml_dtypes (bfloat16 arrays) and
# onnxruntime (the tests that compare with it): best effort, the tests that need them skip
# without them.
if ! "$venv/bin/python" -c 'import onnx, ml_dtypes, onnxruntime' >/dev/null 2>&1; then
  echo "[setup] python: installing onnx ml_dtypes onnxruntime into $venv (optional)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check onnx ml_dtypes onnxruntime ||
    echo "[setup] python: onnx / ml_dtypes / onnxruntime not installed; the Python tests that need them will skip"
fi
