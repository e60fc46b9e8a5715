#!/usr/bin/env bash
# The model zoo end to end: a venv with torch / torchvision / transformers / onnxruntime (PyPI),
# the export (random weights, tiny configs; nothing from a model hub), then every case on ref,
# cpu and vulkan (lavapipe when there is no GPU). See docs/model_zoo.md.
#   scripts/zoo/zoo.sh [ZOO_DIR]      (default /work/zoo; VENV=... overrides /work/zoo_venv)
set -euo pipefail
cd "$(dirname "$0")/../.."
ZOO=${1:-/work/zoo}
VENV=${VENV:-/work/zoo_venv}
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q torch torchvision transformers onnx onnxruntime onnxscript
fi
[ -x build/fusor ] || { cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null && ninja -C build fusor_cli; }
mkdir -p "$ZOO"
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$VENV/bin/python" scripts/zoo/export_zoo.py --out "$ZOO" | tee "$ZOO/export.log"
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$VENV/bin/python" scripts/zoo/extra_cases.py "$ZOO" "$ZOO/../zoo_big"
# No GPU: Vulkan on lavapipe.
command -v nvidia-smi >/dev/null || export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
python3 scripts/zoo/run_zoo.py --zoo "$ZOO" --timeout 240 --json "$ZOO/results.json" | tee "$ZOO/results.md"
python3 scripts/zoo/run_zoo.py --zoo "$ZOO/../zoo_big" --timeout 600 | tee -a "$ZOO/results.md"
