# Session 24 call 6: the session's final build. ONNX node suite on ref / cuda / vulkan, GPU gtests
# (cooperative matrices with the opt-in direct fragments compared bit for bit, GEMVs with both
# partial-sum trees, row kernels, models), the shared models and their fp16 / bf16 versions on both
# GPUs; then the GEMV tree (FUSOR_GEMV_TREE_RADIX 2 / 4) on MLP b1 on both backends and the
# session's model timings, two rounds.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(SHARD_TIMEOUT=150 timeout 330 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
(timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; timeout 150 python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
{ FUSOR_VK_VALIDATION=0 timeout 150 .dev/fusor_tests --gtest_filter="VulkanCoopmat*:Half*:Cuda.ModelsPass*:Vulkan.ModelsPass*:CudaGemv*:VulkanGemv*:VulkanTest.Gemv*:RowProduct*:InlineDot*:VulkanRowVec*:SoftmaxOnline*${EXTRA_GTEST:-}" 2>&1 | grep -E '^\[ +(FAILED|SKIPPED) +\]|PASSED|FAILED|Failure'
  for r in 2 4; do echo "radix $r: $(FUSOR_GEMV_TREE_RADIX=$r FUSOR_VK_VALIDATION=0 timeout 60 .dev/fusor_tests --gtest_filter='CudaGemv*:VulkanGemv*:VulkanTest.Gemv*' 2>&1 | grep -E '^\[  (PASSED|FAILED) ' | tr '\n' ' ')"; done; } 2>&1 | tee $OUT/gtest.txt
for be in cuda vulkan; do echo "== $be"; timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_fp16 --backend $be --rtol 1e-2 --atol 2e-3 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_bf16 --backend $be --rtol 5e-2 --atol 2e-2 2>&1 | tail -1; done 2>&1 | tee $OUT/conform.txt
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20 | tee $OUT/node_result.txt; cat $OUT/node/shard_errors.txt 2>/dev/null | head
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 30 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
{
for r in 1 2; do
  for m in /tmp/w/mlp1_fp32 /tmp/w/mlp1_fp16; do for x in 2 4; do b $m cuda FUSOR_GEMV_TREE_RADIX=$x; b $m vulkan FUSOR_GEMV_TREE_RADIX=$x; done; done
  for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/w/mlp64_fp32 /tmp/w/mlp64_fp16 /tmp/w/mlp64_bf16; do b $m cuda; b $m vulkan; done
done
} 2>&1 | tee $OUT/bench.txt
for m in /tmp/g2/fp32 /tmp/w/mlp1_fp32; do echo "diff $m: $(timeout 60 $fz diff $m --backend cuda --backend vulkan --rtol 1e-3 --atol 1e-5 2>&1 | grep -E '^(first|no )' | head -1)"; done | tee -a $OUT/bench.txt
for m in /tmp/g2/fp16 /tmp/w/mlp1_fp16; do echo "diff $m: $(timeout 60 $fz diff $m --backend cuda --backend vulkan --rtol 2e-2 --atol 2e-3 2>&1 | grep -E '^(first|no )' | head -1)"; done | tee -a $OUT/bench.txt
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_* $OUT/r/*.json 2>/dev/null
