# Session 28's job (the H200): compensated fp32 row sums (fz_csum pairs through the group,
# fz_cmean) against plain fp32 sums (FUSOR_PLAIN_SUMS=1), in one binary.
#   ab.sh ROUNDS
# ONNX node suite in the background; GPU gtests (Numerics with the new compensated-sum,
# subnormal-division and Pow cases, VulkanDiv, models, half types, row kernels); the shared
# models and their fp16 / bf16 versions on both GPUs; then ROUNDS rounds of fusor bench with
# each summation on both GPUs: W2 LayerNormalization [16384, 4096] and ReduceMean rows, GPT-2 2L
# fp32 / fp16, a 2-layer BERT-base, the MLP block b64 fp32 / fp16 and b1 fp32; and x * 1 over
# the W2 shape as the copy baseline.
rounds=${1:-2}
. scripts/h200_job.sh
h200_node
h200_prep docs/h200-2026-12-04h/prep_bert.py docs/h200-2026-12-04j/prep_rows.py
h200_gtest "Numerics.*:VulkanDiv.*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:RowProduct*:InlineDot*:Softmax*:*RowKernel*:*LayerNorm*:ContribOps*:GatherFusion*"
h200_conform
wait
h200_node_result
b() { echo "$1 $2 plain=$3 | $(FUSOR_PLAIN_SUMS=$3 timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|^kernels per run' | sed 's/(p10.*//;s/device time *//;s/kernels per run */k=/' | tr '\n' ' ')"; }
for r in $(seq $rounds); do for m in /tmp/rows/ln /tmp/rows/mean /tmp/rows/copy /tmp/g2/fp32 /tmp/g2/fp16 /tmp/bert2 /tmp/w/mlp64_fp32 /tmp/w/mlp64_fp16 /tmp/w/mlp1_fp32; do for be in cuda vulkan; do b $m $be 0; b $m $be 1; done; done; done 2>&1 | tee $OUT/bench_ab.txt
h200_tidy
