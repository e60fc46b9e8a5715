# Session 33, call 5: the same A/B with cooperative-matrix kernels also left unrolled by
# spirv-opt (default) against always (FUSOR_VK_SPIRV_UNROLL=1) and never (=0).
#   bash docs/h200-2026-12-05b/job4.sh
. scripts/h200_job.sh
h200_prep; prep=$!
for m in .dev/ln/ln768 .dev/ln/ln1000; do echo "auto $(basename $m) $(timeout 30 $fz run $m --backend vulkan --atol 0 --rtol 0 2>&1 | grep -E '^check|rror' | cut -c40-140)"; done | tee $OUT/ln_auto.txt
wait $prep
b() { echo "$1 $2 | $(env $2 timeout 60 $fz bench $1 --backend vulkan --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//' | tr '\n' ' ')"; }
for r in 1 2; do for m in /tmp/g2/bf16 /tmp/g2/fp16 /tmp/w/mlp64_fp16 /tmp/w/mlp64_bf16 /tmp/w/mlp1_bf16; do
  for k in X=0 FUSOR_VK_SPIRV_UNROLL=1 FUSOR_VK_SPIRV_UNROLL=0; do b $m $k; done; done; done 2>&1 | tee $OUT/unroll_coopmat.txt
timeout 100 $fz conform .dev/half/*_fp16 --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -1 | tee $OUT/conform.txt
timeout 100 $fz conform .dev/half/*_bf16 --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tail -1 | tee -a $OUT/conform.txt
h200_tidy
