# Session 21 call 3: integer quantized contractions decomposed (QOperator models whole on the
# GPUs) and red-team round 18's fixes. The ONNX node suite; GPU gtests (Quant*, ContribOps*,
# RotaryEmbedding*); the quantized models (scripts/zoo/quantize_models.py, made on the CPU) on
# cuda and vulkan, and their device times (fusor bench) beside the float model.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
mkdir -p /tmp/quant && tar -C /tmp/quant -xJf .dev/quant.tar.xz
(SHARD_TIMEOUT=150 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='ContribOps*:RotaryEmbedding*:Quant*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
for d in /tmp/quant/*/; do timeout 120 $fz conform $d --backend cuda --backend vulkan 2>&1 | grep -E "^(PASS|FAIL|SKIP)" | cut -c1-170; done 2>&1 | tee $OUT/quant_conform.txt
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20; cat $OUT/node/shard_errors.txt 2>/dev/null | head
b() { echo "$1 $2 | $(timeout 100 $fz bench $1 --backend $2 --iters 200 --warmup 20 2>&1 | grep -E '^(device time|notes)' | sed 's/(p10.*//;s/device time *//' | tr '\n' ' ' | cut -c1-260)"; }
for r in 1 2; do for m in /tmp/shared/models/mobilenet_v3_small /tmp/quant/mobilenet_v3_small_qdq /tmp/quant/mobilenet_v3_small_qop /tmp/quant/mobilenet_v3_small_qop_pc /tmp/quant/squeezenet1_1_qop; do b $m cuda; b $m vulkan; done; done 2>&1 | tee $OUT/bench.txt
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
