# Session 37, call 1: the current build's correctness on the GPU (node suite on ref / cuda /
# vulkan; the GPU gtests of rounds 40-44, the capped kernel caches and the model tests; the
# shared models in fp32 / fp16 / bf16 on both GPUs with a cold, then a warm kernel cache), then
# the W4 / W6 graphs torch exports, for IREE's bundle (bench/iree_peer.py prepare runs here).
#   bash docs/h100-2026-12-06b/job1.sh   (after HALF_MODELS=... package_h200.sh)
. scripts/h200_job.sh
t0=$(date +%s)
rm -rf /tmp/fusor_cache
h200_node
GTEST_TIMEOUT=200 FUSOR_BIN=$fz h200_gtest 'DiskCache.*:VulkanCache.*:CudaCache.*:SessionCache*:Round4*:If.*:Cuda.ModelsPass*:Vulkan.ModelsPass*:-*NodeSuite*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
h200_conform; mv $OUT/conform.txt $OUT/conform_cold.txt; h200_conform
du -sh /tmp/fusor_cache/fusor/* 2>/dev/null
wait
h200_node_result
echo "correctness took $(( $(date +%s) - t0 )) s"
left=$(( 575 - ($(date +%s) - t0) ))
SIDE_ARGS='--quick --only W4,W6 --systems torch-eager --w6-layouts contiguous --save-graphs /tmp/graphs' \
  timeout $left scripts/h200_run.sh $OUT/g side 2>&1 | tail -5
tar -C /tmp -cJf $OUT/graphs.tar.xz graphs && ls -la $OUT/graphs.tar.xz
h200_tidy
