#!/usr/bin/env bash
# A/B of the Vulkan tiled-GEMM knobs (vulkan_backend.h: FUSOR_VK_GEMM_TILE, FUSOR_VK_GEMM_VEC4,
# FUSOR_VK_SPLIT_K, FUSOR_VK_GEMM_BK) on issue 12 / 16's GEMM-bound models, one line per run
# (median device us of `fusor bench --iters 200`, and the kernel notes that say which path ran),
# with fusor-cuda on the same models for the ratio. Models: the MLP block at batch 64 in fp32
# and bf16 (bench/mlp_fp32_model.py, numpy only), GPT-2 2L fp32 (FUSOR_SHARED or ../shared
# models/gpt2_tiny) and, where bench/half_models.py's folders travelled (.dev/half), its bf16
# and fp16 versions.
# Usage: bench/vk_gemm_ab.sh [FUSOR_BIN [OUTDIR]]     (default build/fusor, /tmp/vk_gemm_ab;
#        ITERS=N timed iterations, default 200; MODELS="..." other models instead)
set -uo pipefail
fz=${1:-build/fusor}
out=${2:-/tmp/vk_gemm_ab}
iters=${ITERS:-200}
mkdir -p "$out"
python3 "$(dirname "$0")/mlp_fp32_model.py" "$out/mlp64_fp32.onnx" 64 || exit 1
python3 "$(dirname "$0")/mlp_fp32_model.py" --bf16 "$out/mlp64_bf16.onnx" 64 || exit 1
models=("$out/mlp64_fp32.onnx" "$out/mlp64_bf16.onnx" "${FUSOR_SHARED:-../shared}/models/gpt2_tiny")
for d in .dev/half/gpt2*_bf16 .dev/half/gpt2*_fp16; do [ -d "$d" ] && models+=("$d"); done
if [ -n "${MODELS:-}" ]; then read -r -a models <<<"$MODELS"; fi  # MODELS="a.onnx dir ..." replaces the list
# Each configuration: environment assignments ("-" = the defaults).
configs=("-" "FUSOR_VK_GEMM_TILE=4x4" "FUSOR_VK_GEMM_TILE=4x4 FUSOR_VK_GEMM_VEC4=0" "FUSOR_VK_GEMM_TILE=8x8"
         "FUSOR_VK_GEMM_TILE=8x8 FUSOR_VK_GEMM_BK=8" "FUSOR_VK_GEMM_TILE=8x8 FUSOR_VK_GEMM_BK=32"
         "FUSOR_VK_GEMM_TILE=8x8 FUSOR_VK_SPLIT_K=32" "FUSOR_VK_SPLIT_K=1")
if [ -n "${CONFIGS:-}" ]; then  # CONFIGS="- A=1,B=2 ..." replaces the list (commas join one run's variables)
  read -r -a configs <<<"$CONFIGS"
  configs=("${configs[@]//,FUSOR/ FUSOR}")
fi
run() {  # model, backend, env...
  local m=$1 b=$2
  shift 2
  local log
  log=$(env "$@" "$fz" bench "$m" --backend "$b" --iters "$iters" 2>&1)
  local us notes
  us=$(sed -n 's/^device time *median \([0-9.]*\) us.*/\1/p' <<<"$log")
  notes=$(sed -n 's/^notes *//p' <<<"$log")
  printf '%-28s %-7s %-46s %10s us  %s\n' "$(basename "$m")" "$b" "${*:-defaults}" "${us:-FAILED}" "$notes"
  [ -n "$us" ] || tail -3 <<<"$log" | sed 's/^/    /'
}
for m in "${models[@]}"; do
  [ -e "$m" ] || { echo "missing: $m"; continue; }
  run "$m" cuda
  for c in "${configs[@]}"; do
    if [ "$c" = "-" ]; then run "$m" vulkan; else read -r -a kv <<<"$c"; run "$m" vulkan "${kv[@]}"; fi
  done
done 2>&1 | tee "$out/ab.txt"
