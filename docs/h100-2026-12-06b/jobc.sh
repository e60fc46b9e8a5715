# Session 37, correctness call: the current build on the GPU (node suite on ref / cuda / vulkan;
# the GPU gtests of rounds 40-44, the capped kernel caches and the model tests; the shared
# models in fp32 / fp16 / bf16 on both GPUs with a cold, then a warm kernel cache).
#   bash docs/h100-2026-12-06b/jobc.sh   (after HALF_MODELS=... package_h200.sh)
. scripts/h200_job.sh
t0=$(date +%s)
rm -rf /tmp/fusor_cache
h200_node
GTEST_TIMEOUT=200 FUSOR_BIN=$fz h200_gtest 'DiskCache.*:VulkanCache.*:CudaCache.*:SessionCache*:Round4*:If.*:InlineDot.*:Cuda.ModelsPass*:Vulkan.ModelsPass*:-*NodeSuite*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
h200_conform; mv $OUT/conform.txt $OUT/conform_cold.txt; h200_conform
du -sh /tmp/fusor_cache/fusor/* 2>/dev/null
wait
h200_node_result
echo "correctness took $(( $(date +%s) - t0 )) s"
h200_tidy
