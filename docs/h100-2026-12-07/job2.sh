# Session 44, call 2 (any card): the fp16 row kernel's extra 3.5 us (call 1: GPT-2's residual +
# LayerNorm, 64 rows of 768, vulkan fp16 8.5-9.9 us vs fp32 5.2-6.1). The driver's pipeline
# statistics (registers, spills) of the fp16 and fp32 kernels, then the fp16 kernel with its
# software round-to-nearest-even (fz_round_f16) replaced by the plain conversion (.dev/v1, a
# hand-edited source through FUSOR_VK_SOURCE_DIR; timing only).
#   bash docs/h100-2026-12-07/job2.sh   (after the .dev package)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
for m in dec_fp16_768 dec_fp32_768 ln_fp16_768 ln_fp32_768; do
  echo "== stats $m"; FUSOR_VK_PIPELINE_STATS=1 timeout 40 $fz bench .dev/rows/$m --backend vulkan --iters 5 2>&1 | grep -iE "regist|spill|local|shared|instr" | head -8
done 2>&1 | tee $OUT/stats.txt
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 500 --warmup 50 2>&1 | grep -E '^device time|rror' | head -1 | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do
  b .dev/rows/dec_fp16_768 vulkan; b .dev/rows/dec_fp16_768 vulkan FUSOR_VK_SOURCE_DIR=$PWD/.dev/v1; b .dev/rows/dec_fp32_768 vulkan
done 2>&1 | tee $OUT/v1_ab.txt
h200_tidy
