# Session 21 call 4: the session's final build. The ONNX node suite on ref / cuda / vulkan; GPU
# gtests of this session's ops (ContribOps*: MatMulNBits, GatherBlockQuantized, MHA, GQA,
# RotaryEmbedding, FusedConv / FusedGemm; Quant*; RotaryEmbedding*); the shared models.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(SHARD_TIMEOUT=150 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 240 .dev/fusor_tests --gtest_filter='ContribOps*:RotaryEmbedding*:Quant*:Cuda.ModelsPass*:Vulkan.ModelsPass*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
for d in tests/data/ort_fused/* tests/data/ort_matmul_nbits/gbq*; do timeout 120 $fz conform $d --backend cuda --backend vulkan 2>&1 | grep -E "^(PASS|FAIL|SKIP)" | cut -c1-170; done > $OUT/ort_cases.txt 2>&1
grep -c "^PASS" $OUT/ort_cases.txt; grep -v "^PASS" $OUT/ort_cases.txt | head -20
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20; cat $OUT/node/shard_errors.txt 2>/dev/null | head
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
