# Session 44, call 1. On an H200: issue 12's side-by-side, W1, W2, W3, W5 with the IREE bundle
# (job1.sh of docs/h200-2026-12-06e). On any other card: why Vulkan's fp16 row kernels take
# twice fp32's time (GPT-2's residual + LayerNorm, 64 rows of 768; .dev/rows from
# prep_rows.py): `fusor bench` device medians per model on cuda and vulkan, with the row-kernel
# knobs, two rounds.
#   bash docs/h100-2026-12-07/job1.sh   (after the .dev package)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
echo "GPU: $gpu"
if echo "$gpu" | grep -q H200; then
  bash docs/h200-2026-12-06e/job1.sh; exit 0
fi
. scripts/h200_job.sh
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 500 --warmup 50 2>&1 | grep -E '^device time|rror' | head -1 | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do for m in .dev/rows/*; do
  b $m cuda; b $m vulkan; b $m vulkan FUSOR_ROW_REGISTERS=0; b $m vulkan FUSOR_VK_SPIRV_OPT=0; b $m vulkan FUSOR_VK_ROW_VEC4=0
done; done 2>&1 | tee $OUT/rows_ab.txt
mkdir -p /tmp/dump; FUSOR_VK_DUMP_DIR=/tmp/dump $fz bench .dev/rows/dec_fp16_768 --backend vulkan --iters 5 > /dev/null 2>&1; cp /tmp/dump/*.comp $OUT/ 2>/dev/null
h200_tidy
