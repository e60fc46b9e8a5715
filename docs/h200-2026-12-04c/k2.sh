# Session 21 call 2: correctness with in-shader waits (the default on NVIDIA): GPU gtests and the
# ONNX node suite on ref / cuda / vulkan.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
FUSOR_VK_SYNC=flags timeout 150 .dev/fusor_tests --gtest_filter='Vulkan*:Half*:Cuda.ModelsPass*:MatMulPrologue*:-*Validation*:*Barrier*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
NODE_FILTER=. SHARD_TIMEOUT=120 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20; cat $OUT/node/shard_errors.txt 2>/dev/null | head
rm -f $OUT/*/devices.txt $OUT/node/shard_*
