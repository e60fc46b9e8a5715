# Session 20 call 3: the final build on the H200. The ONNX node suite on ref / cuda / vulkan;
# GPU gtests (the QOperator ops against onnxruntime's outputs, prologues, half, models); the
# quantized models (scripts/zoo/quantize_models.py, made here on the CPU) on cuda and vulkan; W4
# GPT-2 2L / MLP in fp16 and bf16 with the new default (fp16 operands without prologues).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
mkdir -p /tmp/quant && tar -C /tmp/quant -xJf .dev/quant.tar.xz
FUSOR_VK_VALIDATION=0 timeout 240 .dev/fusor_tests --gtest_filter='ContribOps*:MatMulPrologue*:Half*:Cuda.ModelsPass*:Vulkan.ModelsPass*:VulkanCoopmatGpu*:Round16*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
for d in /tmp/quant/*/; do $fz conform $d --backend cuda --backend vulkan 2>&1 | grep -E "^(PASS|FAIL|SKIP)" | cut -c1-150; done 2>&1 | tee $OUT/quant_conform.txt
[ -d /tmp/g2/fp16 ] || (python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1)
b() { echo "$1 $2 $3 | $(env $3 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/w/mlp64_fp16 /tmp/w/mlp64_bf16; do b $m cuda X=1; b $m vulkan X=1; done; done 2>&1 | tee $OUT/bench.txt
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20; cat $OUT/node/shard_errors.txt 2>/dev/null | head
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
