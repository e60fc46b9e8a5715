# Session 16 call 7: the final build (matmul split-K slices >= 192 on Vulkan; inline products
# off by default). Node suite on ref / cuda / vulkan, GPU gtests, then GPT-2 2L fp32 / fp16 and
# the MLP block with the new default against FUSOR_VK_SPLIT_MIN_SLICE=256 (the previous one).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor
fz=$PWD/.dev/fusor
(scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 150 .dev/fusor_tests --gtest_filter='VulkanSplitK*:VulkanGemm*:InlineDot*:MatMulPrologue*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -20
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null; cat $OUT/node/shard_errors.txt 2>/dev/null
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
[ -f /tmp/g2/bf16/model.onnx ] || python3 bench/export_gpt2_torch.py /tmp/g2 2>&1 | tail -1
mkdir -p /tmp/mlp/b64 /tmp/mlp/h64
[ -f /tmp/mlp/b64/model.onnx ] || python3 bench/mlp_fp32_model.py /tmp/mlp/b64/model.onnx 64 > /dev/null
[ -f /tmp/mlp/h64/model.onnx ] || python3 bench/mlp_fp32_model.py --fp16 /tmp/mlp/h64/model.onnx 64 > /dev/null
for r in 1 2; do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/mlp/b64 /tmp/mlp/h64; do
  for e in X=0 FUSOR_VK_SPLIT_MIN_SLICE=256; do
    echo "$r $m vulkan $e | $(env $e $fz bench $m --backend vulkan --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//')"
  done
  echo "$r $m cuda | $($fz bench $m --backend cuda --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//')"
done; done
