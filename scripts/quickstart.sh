#!/usr/bin/env bash
# Quick start, step 1: install dependencies, build, and run a real model (GPT-2, 2 layers,
# shipped in examples/) on the best backend present, checked against onnxruntime's outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh fusor_cli
# With no GPU, Vulkan runs on Mesa's lavapipe.
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ] && ! ls /usr/share/vulkan/icd.d/nvidia* >/dev/null 2>&1; then
  export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
fi
./build/fusor devices
# atol 1e-5: onnxruntime's own fp32 reference is off by up to 2.5e-7 from the float64 result
# on near-zero outputs of this model, more than the ONNX default atol of 1e-7 (README, Conformance).
./build/fusor run examples/gpt2_tiny --atol 1e-5
./build/fusor explain examples/gpt2_tiny | tail -3
