# Session 41, correctness call (any card): this session's build on the GPU. The node suite on ref /
# cuda / vulkan; the GPU gtests of this session's fixes (lookup checks of unread lookups: the
# stand-in Gather kernels; Scan / Loop typing and unrolling; LabelEncoder tables) and the rounds
# they touch; the shared models in fp32 / fp16 / bf16 on both GPUs, cold then warm cache.
#   bash docs/h100-2026-12-06f/jobc.sh   (after HALF_MODELS=... package_h200.sh)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
t0=$(date +%s)
rm -rf /tmp/fusor_cache
h200_node
GTEST_TIMEOUT=240 FUSOR_BIN=$fz h200_gtest 'Round51*:Round49*:Round50*:MlOps*:DataDependent*:GatherFusion*:Hostile.Contractions*:Hostile.Large*:Hostile.Deeply*:Loop*:Scan*:If*:GpuOpaqueOps*:Cuda.ModelsPass*:Vulkan.ModelsPass*:-*NodeSuite*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
h200_conform; mv $OUT/conform.txt $OUT/conform_cold.txt; h200_conform
wait
h200_node_result
echo "correctness took $(( $(date +%s) - t0 )) s"
h200_tidy
