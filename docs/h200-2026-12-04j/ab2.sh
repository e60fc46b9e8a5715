# Session 28's second job (the H200): call 1 (ab.sh) found the compensated sums 8-9 us slower
# on GPT-2 and 30% slower on W2 ReduceMean on Vulkan, and two Numerics tests failing there. This
# build makes the finish cheaper (fz_cmean from the count's prepared reciprocal, one fma or
# Dekker residual; the cross-subgroup / cross-warp step a pairwise tree), and carries red-team
# round 25's and the review's fixes; the Numerics tests print in full (run this first).
#   ab2.sh ROUNDS
rounds=${1:-2}
. scripts/h200_job.sh
h200_prep docs/h200-2026-12-04h/prep_bert.py docs/h200-2026-12-04j/prep_rows.py
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='Numerics.*:VulkanDiv.*:ContribOps.FusedMatMul*:TopK.*:GpuOpaqueOps.*' > $OUT/numerics_full.txt 2>&1
grep -E "Failure|got|want|skipped|OK \]|FAILED" $OUT/numerics_full.txt | cut -c1-400 | head -40
wait
for m in ln copy; do echo "== $m"; timeout 60 $fz bench /tmp/rows/$m --backend cuda --iters 50 --warmup 5 2>&1 | tail -4; done
b() { echo "$1 $2 plain=$3 | $(FUSOR_PLAIN_SUMS=$3 timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|^kernels per run' | sed 's/(p10.*//;s/device time *//;s/kernels per run */k=/' | tr '\n' ' ')"; }
for r in $(seq $rounds); do for m in /tmp/rows/mean /tmp/g2/fp32 /tmp/g2/fp16 /tmp/bert2 /tmp/w/mlp64_fp32; do for be in cuda vulkan; do b $m $be 0; b $m $be 1; done; done; done 2>&1 | tee $OUT/bench_ab.txt
h200_tidy
