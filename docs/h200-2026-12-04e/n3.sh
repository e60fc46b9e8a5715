# Session 23 call 3: the session's final build. ONNX node suite on ref / cuda / vulkan (max / min
# partials in row kernels), GPU gtests (row kernels; the first GEMV path with 1, 4, 8 and 16 K
# rounds issued together on both backends), the shared models and their fp16 / bf16 versions;
# then MLP b1 with each GEMV unroll (FUSOR_VK_GEMV_UNROLL / FUSOR_CUDA_GEMV_UNROLL), two rounds.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(SHARD_TIMEOUT=150 timeout 330 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
(python3 docs/h200-2026-12-04b/prep.py > $OUT/prep.txt 2>&1) &
{ FUSOR_VK_VALIDATION=0 timeout 100 .dev/fusor_tests --gtest_filter='VulkanRowVec*:SoftmaxOnline*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:RowProduct*:CudaGemv*:VulkanGemv*:VulkanTest.Gemv*' 2>&1 | grep -E '^\[ +(FAILED|SKIPPED) +\]|PASSED|FAILED'
  for u in 1 8 16; do echo "unroll $u: $(FUSOR_VK_GEMV_UNROLL=$u FUSOR_CUDA_GEMV_UNROLL=$u FUSOR_VK_VALIDATION=0 timeout 60 .dev/fusor_tests --gtest_filter='CudaGemv*:VulkanGemv*:VulkanTest.Gemv*' 2>&1 | grep -E '^\[  (PASSED|FAILED) ' | tr '\n' ' ')"; done; } 2>&1 | tee $OUT/gtest.txt
for be in cuda vulkan; do echo "== $be"; timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_fp16 --backend $be --rtol 1e-2 --atol 2e-3 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_bf16 --backend $be --rtol 5e-2 --atol 2e-2 2>&1 | tail -1; done 2>&1 | tee $OUT/conform.txt
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20 | tee $OUT/node_result.txt; cat $OUT/node/shard_errors.txt 2>/dev/null | head
b() { echo "$1 $2 $3 | $(env $3 timeout 30 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do for m in /tmp/w/mlp1_fp32 /tmp/w/mlp1_fp16; do for u in 1 4 8 16; do b $m cuda FUSOR_CUDA_GEMV_UNROLL=$u; b $m vulkan FUSOR_VK_GEMV_UNROLL=$u; done; b $m vulkan "FUSOR_VK_GEMV_UNROLL=8 FUSOR_VK_GEMV_THREADS=512"; done; done 2>&1 | tee $OUT/bench.txt
for u in 1 8; do echo "diff unroll $u: $(FUSOR_VK_GEMV_UNROLL=$u FUSOR_CUDA_GEMV_UNROLL=$u timeout 60 $fz diff /tmp/w/mlp1_fp32 --backend cuda --backend vulkan 2>&1 | grep -E '^(first|no )' | head -1)"; done | tee -a $OUT/bench.txt
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_* $OUT/r/*.json 2>/dev/null
