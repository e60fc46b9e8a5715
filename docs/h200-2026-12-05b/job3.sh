# Session 33, call 4: loop-unroll kept where no precise arithmetic sits in an unrolled loop
# (auto), against always (FUSOR_VK_SPIRV_UNROLL=1, the old build's) and never (=0).
#   bash docs/h200-2026-12-05b/job3.sh
. scripts/h200_job.sh
h200_prep; prep=$!
GTEST_TIMEOUT=200 h200_gtest 'VulkanFloatControls.*:Numerics.RowSums*:Numerics.Subnormal*:GpuOpaqueOps.GridSample*:Vulkan.*:VulkanDiv.*'
for m in .dev/ln/ln*; do echo "auto $(basename $m) $(timeout 30 $fz run $m --backend vulkan --atol 0 --rtol 0 2>&1 | grep -E '^check|rror' | cut -c40-140)"; done | tee $OUT/ln_auto.txt
wait $prep
b() { echo "$1 $2 | $(env $2 timeout 60 $fz bench $1 --backend vulkan --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//' | tr '\n' ' ')"; }
for r in 1 2; do for m in /tmp/g2/fp32 /tmp/g2/bf16 /tmp/w/mlp64_fp32 /tmp/w/mlp1_fp32 /tmp/w/mlp1_fp16; do
  for k in X=0 FUSOR_VK_SPIRV_UNROLL=1 FUSOR_VK_SPIRV_UNROLL=0; do b $m $k; done; done; done 2>&1 | tee $OUT/unroll_auto.txt
timeout 120 $fz conform /tmp/shared/models/* --backend vulkan --atol 1e-6 2>&1 | tail -1 | tee $OUT/conform.txt
h200_tidy
