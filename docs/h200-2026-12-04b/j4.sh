# Session 20 call 4: QuantizeLinear / DequantizeLinear of activations decomposed into element-wise
# primitives (QDQ models fuse on the GPUs). Node suite, the quantization gtests, the quantized
# models on cuda and vulkan (host nodes and values), and their device times next to the fp32 model.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
mkdir -p /tmp/quant && tar -C /tmp/quant -xJf .dev/quant.tar.xz
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='Quant.*:ContribOps.QOperator*:DequantMatMul*:Cuda.ModelsPass*:Vulkan.ModelsPass*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
for d in /tmp/quant/*/; do $fz conform $d --backend cuda --backend vulkan 2>&1 | grep -E "^(PASS|FAIL|SKIP)" | cut -c1-150; done 2>&1 | tee $OUT/quant_conform.txt
b() { echo "$1 $2 | $($fz bench $1 --backend $2 --iters 200 --warmup 20 2>&1 | grep -E '^device time|^kernels' | sed 's/(p10.*//;s/device time *//' | tr '\n' ' ')"; }
for r in 1 2; do for m in /tmp/shared/models/mobilenet_v3_small /tmp/quant/mobilenet_v3_small_qdq /tmp/quant/mobilenet_v3_small_qdq_pc /tmp/quant/mobilenet_v3_small_qop /tmp/shared/models/squeezenet1_1 /tmp/quant/squeezenet1_1_qdq; do b $m cuda; b $m vulkan; done; done 2>&1 | tee $OUT/bench.txt
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20; cat $OUT/node/shard_errors.txt 2>/dev/null | head
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
