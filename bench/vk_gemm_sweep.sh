#!/usr/bin/env bash
# Sweep of the Vulkan GEMM templates' knobs on single-GEMM models (bench/fp16_gemm_model.py:
# y = Gelu(x @ W + b)) shaped like the MLP batch-64 layers, fp32 (the tiled template: tile,
# register block, K slice depth, split-K) and fp16 (the cooperative-matrix template: subgroup
# grid, K slice, split-K), with fusor-cuda on each model for the ratio. One line per run: the
# median device us of `fusor bench --iters ITERS` and the kernel notes.
# Usage: bench/vk_gemm_sweep.sh [FUSOR_BIN [OUTDIR]]   ITERS (default 100); SHAPES="M,K,N ..."
set -uo pipefail
fz=${1:-build/fusor}
out=${2:-/tmp/vk_gemm_sweep}
iters=${ITERS:-100}
here=$(dirname "$0")
mkdir -p "$out"
run() {  # model, backend, env...
  local m=$1 b=$2
  shift 2
  local log us notes
  log=$(env "$@" timeout 60 "$fz" bench "$m" --backend "$b" --iters "$iters" 2>&1)
  us=$(sed -n 's/^device time *median \([0-9.]*\) us.*/\1/p' <<<"$log")
  notes=$(sed -n 's/^notes *//p' <<<"$log")
  printf '%-22s %-7s %-52s %9s us  %s\n' "$(basename "$m" .onnx)" "$b" "${*:-defaults}" "${us:-FAILED}" "$notes"
  [ -n "$us" ] || tail -2 <<<"$log" | sed 's/^/    /'
}
# Each run is about 10 s on the H200 (model load, compile, warm-up): keep the lists short
# enough for one 600 s call. FUSOR_VK_GEMM_LITERAL=1: the tile sizes as literals (vulkan_backend.h).
# F32 / F16: space-separated lists of configurations ("-" the defaults, "A=1,B=2" one run with
# several variables) replacing the lists below.
f32=("-" "FUSOR_VK_SPLIT_RULE=fill" "FUSOR_VK_SPLIT_K=2" "FUSOR_VK_GEMM_LITERAL=1" "FUSOR_VK_GEMM_LITERAL=1 FUSOR_VK_GEMM_TILE=8x8"
     "FUSOR_VK_GEMM_LITERAL=1 FUSOR_VK_GEMM_TILES=64,64,8,8" "FUSOR_VK_GEMM_TILE=8x8" "FUSOR_VK_GEMM_TILES=64,64,8,4")
f16=("-" "FUSOR_VK_SPLIT_RULE=fill")
if [ -n "${F32:-}" ]; then read -r -a f32 <<<"$F32"; f32=("${f32[@]//,FUSOR/ FUSOR}"); fi
if [ -n "${F16:-}" ]; then read -r -a f16 <<<"$F16"; f16=("${f16[@]//,FUSOR/ FUSOR}"); fi
for shape in ${SHAPES:-64,1024,4096 64,4096,1024}; do
  IFS=, read -r M K N <<<"$shape"
  for dt in fp32 fp16; do
    mdl="$out/gemm_${dt}_${M}x${K}x${N}.onnx"
    python3 "$here/fp16_gemm_model.py" --dtype "$dt" "$mdl" "$M" "$K" "$N" || exit 1
    run "$mdl" cuda
    if [ "$dt" = fp32 ]; then cfgs=("${f32[@]}"); else cfgs=("${f16[@]}"); fi
    for c in "${cfgs[@]}"; do
      if [ "$c" = "-" ]; then run "$mdl" vulkan; else read -r -a kv <<<"$c"; run "$mdl" vulkan "${kv[@]}"; fi
    done
    rm -f "$mdl"
  done
done 2>&1 | tee "$out/sweep.txt"
