# Session 50, call 1: where fp32 GPT-2 2L's Vulkan matmuls lose to cuBLASLt. cuBLASLt's chosen
# algorithms (FUSOR_CUDA_LT_TRACE=1), per-kernel traces on both backends, then whole-model device
# medians under the Vulkan tiling / split-K knobs (vk_tiles.cpp), alternating rounds.
#   bash docs/h100-2026-12-07j/sweep.sh   (after the .dev package)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
[ -f /tmp/g2/fp32/model.onnx ] || { timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; tail -1 $OUT/prep.txt; }
M=/tmp/g2/fp32
FUSOR_CUDA_LT_TRACE=1 timeout 60 $fz bench $M --backend cuda --iters 3 --warmup 1 2>&1 | grep -E "cublasLt algo|^notes" | tee $OUT/lt_algos.txt
for be in cuda vulkan; do echo "== gpt2 fp32 $be"; timeout 60 $fz bench $M --backend $be --iters 100 --trace $OUT/t.json 2>&1 | grep -E "^(device time|notes)"
  python3 bench/trace_top.py $OUT/t.json --top 30; done 2>&1 | tee $OUT/profile.txt
rm -f $OUT/t.json
cfgs=(X=1 FUSOR_VK_SPLIT_RULE=fill FUSOR_VK_SPLIT_PER_UNIT=2 "FUSOR_VK_SPLIT_PER_UNIT=2 FUSOR_VK_SPLIT_RULE=fill"
  FUSOR_VK_SPLIT_MIN_SLICE=128 FUSOR_VK_GEMM_TILES=32,64,2,4 FUSOR_VK_GEMM_TILES=32,64,4,4 FUSOR_VK_GEMM_TILES=64,32,4,2
  FUSOR_VK_GEMM_TILES=32,32,2,2 FUSOR_VK_GEMM_TILES=64,64,4,4 FUSOR_VK_GEMM_TILES=32,128,4,8 FUSOR_VK_GEMM_TILES=16,64,1,4
  FUSOR_VK_GEMM_SMALL_GRID=0 FUSOR_VK_GEMM_PREFETCH=1 "FUSOR_VK_GEMM_TILES=32,64,4,4 FUSOR_VK_SPLIT_PER_UNIT=2")
bb() { echo "$1 $2 | $(env $3 timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror|^notes' | head -2 | sed 's/(p10.*//;s/device time *//;s/CUDA context held (FUSOR_VK_HOLD_CUDA_CONTEXT)//' | tr '\n' ' ')"; }
for r in 1 2; do bb $M cuda X=1; for c in "${cfgs[@]}"; do echo "[$c]"; bb $M vulkan "$c"; done; done 2>&1 | tee $OUT/sweep.txt
