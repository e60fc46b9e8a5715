# NOT RUN: the device tool started no machine for it (the refused starts spent the budget).
# Session 36, call 4: the session's later changes on the GPU (the capped compile caches and
# their folder, the CLI's conform changes, fork-safe sessions): cache / CLI gtests, the shared
# models in fp32 / fp16 / bf16 on both GPUs twice (a cold, then a warm kernel cache).
#   bash docs/h100-2026-12-06/job4.sh   (after HALF_MODELS=... package_h200.sh)
. scripts/h200_job.sh
rm -rf /tmp/fusor_cache
NODE_FILTER='loop|sequence|scan|if|embedding' h200_node
GTEST_TIMEOUT=150 FUSOR_BIN=$fz h200_gtest 'DiskCache.*:VulkanCache.*:CudaCache.*:SessionCache*:Round43.*:Round44.*:Cuda.ModelsPass*:Vulkan.ModelsPass*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
h200_conform; mv $OUT/conform.txt $OUT/conform_cold.txt; h200_conform
ls /tmp/fusor_cache/fusor/*/ | head -3; du -sh /tmp/fusor_cache/fusor/* 2>/dev/null
wait; h200_node_result
h200_tidy
