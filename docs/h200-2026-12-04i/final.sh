# Session 27's final call (the H200), the build that lands: ONNX node suite on ref / cuda /
# vulkan; GPU gtests (GatherFusion with round 22's cases: the index-error word now keeps the
# first failing kernel, on CUDA and Vulkan; split-K, models, half types, row kernels, big
# buffers); the shared models and their fp16 / bf16 versions on both GPUs; one round of
# fusor bench on GPT-2 2L fp32 / fp16 / bf16 and the MLP block (b64, b1) on both GPUs (the
# session's refactors move code only: the timings should be call 1's and call 2's).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(SHARD_TIMEOUT=150 timeout 330 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
(timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; timeout 150 python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 300 .dev/fusor_tests --gtest_filter="GatherFusion*:GatherOfReshape*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:RowProduct*:InlineDot*:VulkanSplitK*:VulkanBigBuffers*:ContribOps*:Sequence.*:DataDependent.*:*Loop*:*Scan*" 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|Failure' > $OUT/gtest.txt
tail -4 $OUT/gtest.txt
for be in cuda vulkan; do echo "== $be"; timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_fp16 --backend $be --rtol 1e-2 --atol 2e-3 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_bf16 --backend $be --rtol 5e-2 --atol 2e-2 2>&1 | tail -1; done 2>&1 | tee $OUT/conform.txt
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20 | tee $OUT/node_result.txt; cat $OUT/node/shard_errors.txt 2>/dev/null | head
b() { echo "$1 $2 | $(timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|^kernels per run' | sed 's/(p10.*//;s/device time *//;s/kernels per run */k=/' | tr '\n' ' ')"; }
for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/w/mlp64_fp32 /tmp/w/mlp64_fp16 /tmp/w/mlp1_fp32; do b $m cuda; b $m vulkan; done 2>&1 | tee $OUT/bench.txt
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_* $OUT/r/*.json 2>/dev/null
