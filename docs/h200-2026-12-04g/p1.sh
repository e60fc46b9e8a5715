# Session 25 call 1: the session's final build (sequence ops). ONNX node suite on ref / cuda /
# vulkan; GPU gtests (the sequence ops, Loop / If / Optional, models, half types, row kernels,
# GEMV, cooperative matrices); the stored sequence models (tests/data/sequence) and the shared
# models and their fp16 / bf16 versions on both GPUs; then one round of the W4 / W7 timings.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(SHARD_TIMEOUT=150 timeout 330 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
(timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; timeout 150 python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 400 .dev/fusor_tests --gtest_filter="Sequence.*:Loop*:If.*:Optional.*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:RowProduct*:InlineDot*:VulkanCoopmatGpu*:CudaGemv*:VulkanTest.Gemv*:SoftmaxOnline*" 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|Failure' > $OUT/gtest.txt
tail -4 $OUT/gtest.txt
for be in cuda vulkan; do echo "== $be"; timeout 60 $fz conform tests/data/sequence --backend $be --no-fallback 2>&1 | tail -1; timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_fp16 --backend $be --rtol 1e-2 --atol 2e-3 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_bf16 --backend $be --rtol 5e-2 --atol 2e-2 2>&1 | tail -1; done 2>&1 | tee $OUT/conform.txt
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20 | tee $OUT/node_result.txt; cat $OUT/node/shard_errors.txt 2>/dev/null | head
b() { echo "$1 $2 | $(timeout 30 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/w/mlp64_fp32 /tmp/w/mlp64_fp16 /tmp/w/mlp64_bf16 /tmp/w/mlp1_fp32; do b $m cuda; b $m vulkan; done 2>&1 | tee $OUT/bench.txt
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_* $OUT/r/*.json 2>/dev/null
