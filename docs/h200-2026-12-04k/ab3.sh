# Session 29's job (the H200; session 29 was lent none). Run first in the next session that is:
#   ab3.sh ROUNDS
# 1. Every Numerics test in full (RowSumsAreCompensated failed on the H200 in session 28's call 1,
#    case unknown; FloatPowIsRoundedOnceFromTheDoublePower is new) and the kernels that have only
#    run on lavapipe / NVRTC: GpuOpaqueOps (TopK, GridSample, CumProd, ReverseSequence, the
#    normalization decompositions), the Loop bodies bound per iteration, the ML preprocessing ops.
# 2. The ONNX node suite and the shared models (fp32 / fp16 / bf16) on both GPUs.
# 3. ROUNDS rounds of A/Bs in one binary: the compensated sums (FUSOR_PLAIN_SUMS=1 plain) and the
#    double Pow (FUSOR_DRIVER_POW=1 the driver's powf / GLSL pow: GPT-2's GELU is x^3).
rounds=${1:-2}
. scripts/h200_job.sh
h200_node
h200_prep docs/h200-2026-12-04h/prep_bert.py docs/h200-2026-12-04j/prep_rows.py
FUSOR_VK_VALIDATION=0 timeout 240 .dev/fusor_tests --gtest_filter='Numerics.*:VulkanDiv.*:GpuOpaqueOps.*:TopK.*:Loop.*:MlOps.*:OpsExtra.CropAnd*:ContribOps.FusedMatMul*' > $OUT/numerics_full.txt 2>&1
grep -E "Failure|got|want|skipped|OK \]|FAILED" $OUT/numerics_full.txt | cut -c1-400 | head -60
h200_conform
wait
h200_node_result
b() { echo "$1 $2 $3 | $(env $3 timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|^kernels per run' | sed 's/(p10.*//;s/device time *//;s/kernels per run */k=/' | tr '\n' ' ')"; }
for r in $(seq $rounds); do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/rows/mean /tmp/bert2 /tmp/w/mlp64_fp32; do for be in cuda vulkan; do
  b $m $be X=0; b $m $be FUSOR_PLAIN_SUMS=1; b $m $be FUSOR_DRIVER_POW=1; done; done; done 2>&1 | tee $OUT/bench_ab.txt
h200_tidy
