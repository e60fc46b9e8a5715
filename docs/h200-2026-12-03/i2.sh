# Session 16 call 2: the inline products' K loop unrolled (up to 64 terms). GPT-2 2L (W4's
# export) fp32 / fp16 / bf16 on both GPUs, inline on / off (FUSOR_INLINE_DOT=0), alternating;
# per-kernel traces of the fused Softmax kernels (bench/trace_top.py).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
[ -n "${SKIP_GTEST:-}" ] || FUSOR_VK_VALIDATION=0 timeout 100 .dev/fusor_tests --gtest_filter='InlineDot*:VulkanCompileDedup*:CudaNvrtcBatch*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -20
[ -f /tmp/g2/bf16/model.onnx ] || python3 bench/export_gpt2_torch.py /tmp/g2 2>&1 | tail -1
for round in $(seq ${ROUNDS:-2}); do for v in 1 0; do for t in fp32 fp16 bf16; do for be in cuda vulkan; do
  echo "$round inline=$v $t $be $(FUSOR_INLINE_DOT=$v $fz bench /tmp/g2/$t --backend $be --iters 300 --warmup 30 2>&1 | grep -E '^device time' | tr '\n' ' ')"
done; done; done; done
for v in 1 0; do for t in fp32 fp16; do for be in cuda vulkan; do
  FUSOR_INLINE_DOT=$v $fz bench /tmp/g2/$t --backend $be --iters 50 --trace $OUT/tr.json > /dev/null 2>&1
  echo "== inline=$v $t $be"; python3 bench/trace_top.py $OUT/tr.json --top 30 2>&1 | grep -E "MatMul_Reshape_Slice|input_MatMul|output_MatMul  |_Add_Sub_Exp|Cast_Sub_Exp|IsNaN|total" | head -8
done; done; done
rm -f $OUT/tr.json
