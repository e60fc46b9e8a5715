# Session 33, call 6: the final build (pairwise Einsum, the ArgMax / TopK bound) on the GPU.
#   bash docs/h200-2026-12-05b/job5.sh
. scripts/h200_job.sh
GTEST_TIMEOUT=120 h200_gtest 'Fusion.Einsum*:VulkanFloatControls.*:GpuOpaqueOps.LongRow*:GpuOpaqueOps.TopK*:Numerics.RowSums*'
timeout 60 python3 docs/h200-2026-12-05/prep_serial.py > /dev/null
for m in argmax_16384 argmax_40000 topk_10x8000 topk_64x4096; do for be in cuda vulkan; do
  echo "$m $be | $(timeout 40 $fz bench /tmp/serial/$m --backend $be --iters 50 --warmup 5 2>&1 | grep -E '^host time|^graph break' | sed 's/(p10.*//' | cut -c1-90 | tr '\n' ' ')"
done; done 2>&1 | tee $OUT/bound_final.txt
