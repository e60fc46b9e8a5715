# Session 33, call 3: the fixes of call 2 on the GPU, and what dropping spirv-opt's loop-unroll
# costs (FUSOR_VK_SPIRV_UNROLL=1 puts it back: the A/B in one binary, interleaved rounds).
#   bash docs/h200-2026-12-05b/job2.sh
. scripts/h200_job.sh
h200_node
h200_prep docs/h200-2026-12-04j/prep_rows.py; prep=$!
GTEST_TIMEOUT=240 h200_gtest 'VulkanFloatControls.*:Numerics.*:GpuOpaqueOps.GridSample*:VulkanDiv.*:Round9.Mod*:VulkanF64Math.*'
grep -E "differ|Failure|lost" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
for knob in X=0 FUSOR_VK_SPIRV_UNROLL=1; do for m in .dev/ln/ln*; do
  echo "$knob $(basename $m) $(env $knob timeout 30 $fz run $m --backend vulkan --atol 0 --rtol 0 2>&1 | grep -E '^check|rror' | cut -c40-140)"
done; done 2>&1 | tee $OUT/ln_knobs.txt
wait $prep  # the exports (the node suite runs on)
b() { echo "$1 $2 | $(env $2 timeout 60 $fz bench $1 --backend vulkan --iters 300 --warmup 30 2>&1 | grep -E '^device time|^compile' | sed 's/(p10.*//;s/device time *//;s/ with the disk cache warm//' | tr '\n' ' ')"; }
for r in 1 2; do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/w/mlp64_fp32 /tmp/w/mlp1_fp32 /tmp/w/mlp64_fp16 /tmp/rows/ln /tmp/shared/models/squeezenet1_1 /tmp/shared/models/mobilenet_v3_small; do
  for k in X=0 FUSOR_VK_SPIRV_UNROLL=1; do b $m $k; done; done; done 2>&1 | tee $OUT/unroll_ab.txt
h200_conform
wait
h200_node_result
h200_tidy
