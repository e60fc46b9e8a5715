#!/usr/bin/env bash
# Per-kernel device time of the models where fusor-vulkan trails fusor-cuda (issue 12/16):
# `fusor bench --trace` on both GPUs, summarized by bench/trace_top.py (largest kernels first).
# Usage: bench/kernel_profile.sh [FUSOR_BIN [OUTDIR]]   MODELS="a.onnx dir ..." replaces the list;
#        BACKENDS="cuda vulkan" (default); ITERS=N (default 50). Where torch and torchvision are
#        installed, W6's resnet18 b32 and squeezenet1_1 b1 are exported (random weights) too.
set -uo pipefail
fz=${1:-build/fusor}
out=${2:-/tmp/kernel_profile}
iters=${ITERS:-50}
here=$(dirname "$0")
mkdir -p "$out"
python3 "$here/mlp_fp32_model.py" "$out/mlp64_fp32.onnx" 64 || exit 1
python3 "$here/mlp_fp32_model.py" --bf16 "$out/mlp64_bf16.onnx" 64 || exit 1
models=("$out/mlp64_fp32.onnx" "$out/mlp64_bf16.onnx" "${FUSOR_SHARED:-../shared}/models/gpt2_tiny")
for d in .dev/half/gpt2*_fp16 .dev/half/gpt2*_bf16 .dev/half/mlp*_fp16; do [ -d "$d" ] && models+=("$d"); done
python3 - "$out" <<'PY' && models+=("$out/resnet18_32.onnx" "$out/squeezenet1_1_1.onnx")
import sys, torch, torchvision
out = sys.argv[1]
for arch, b in (("resnet18", 32), ("squeezenet1_1", 1)):
    m = getattr(torchvision.models, arch)(weights=None).eval()
    torch.onnx.export(m, torch.randn(b, 3, 224, 224), f"{out}/{arch}_{b}.onnx", opset_version=17, dynamo=False)
PY
if [ -n "${MODELS:-}" ]; then read -r -a models <<<"$MODELS"; fi
for m in "${models[@]}"; do
  [ -e "$m" ] || { echo "missing: $m"; continue; }
  for b in ${BACKENDS:-cuda vulkan}; do
    t="$out/$(basename "$m" .onnx).$b.json"
    echo "== $(basename "$m") on $b"
    "$fz" bench "$m" --backend "$b" --iters "$iters" --trace "$t" 2>&1 | grep -E "^(device time|notes|kernels)" | sed 's/^/   /'
    [ -f "$t" ] && python3 "$here/trace_top.py" "$t" --top "${TOP:-8}"
  done
done 2>&1 | tee "$out/profile.txt"
