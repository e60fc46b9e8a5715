# Session 38, correctness call: the current build on the GPU (node suite on ref / cuda / vulkan;
# the GPU gtests of rounds 40-44, the capped kernel caches and the model tests; the shared
# models in fp32 / fp16 / bf16 on both GPUs with a cold, then a warm kernel cache).
#   bash docs/h100-2026-12-06c/jobc.sh   (after HALF_MODELS=... package_h200.sh)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
t0=$(date +%s)
rm -rf /tmp/fusor_cache
h200_node
GTEST_TIMEOUT=200 FUSOR_BIN=$fz h200_gtest 'DiskCache.*:VulkanCache.*:CudaCache.*:SessionCache*:Round4*:If.*:InlineDot.*:Cuda.ModelsPass*:Vulkan.ModelsPass*:VulkanBigBuffers*:VulkanCoopmat*:MatMulPrologue*:Half*:GatherFusion*:-*NodeSuite*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
h200_conform; mv $OUT/conform.txt $OUT/conform_cold.txt; h200_conform
du -sh /tmp/fusor_cache/fusor/* 2>/dev/null
wait
h200_node_result
echo "correctness took $(( $(date +%s) - t0 )) s"
# Narrowed bindings (vk_windows.h narrowed: a fused Concat's writers without barriers between
# them) against whole-buffer bindings, the shared CNNs on vulkan, two rounds; cuda for scale.
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror|^notes' | head -2 | sed 's/(p10.*//;s/device time *//' | grep -oE '[0-9]+ dispatches, [0-9]+ barriers|median [0-9.]+ us' | tr '\n' ' ')"; }
for r in 1 2; do for m in /tmp/shared/models/squeezenet1_1 /tmp/shared/models/mobilenet_v3_small; do
  b $m cuda; b $m vulkan FUSOR_VK_NARROW_BINDINGS=1; b $m vulkan FUSOR_VK_NARROW_BINDINGS=0; done; done 2>&1 | tee $OUT/narrow_ab.txt
h200_tidy
