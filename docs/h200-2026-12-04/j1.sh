# Session 19 call 1: the build with round 16's fixes (required inputs, ai.onnx.ml review, UTF-8
# errors, GridSample). ONNX node suite on ref / cuda / vulkan; the round's GPU gtests; then the
# mutation fuzz (scripts/redteam/round16/node_mutations.py) of the node suite on cuda and on
# NVIDIA's Vulkan: omitted inputs and zero dims, sharded over the cores.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }  # tests/data through FUSOR_SOURCE_DIR
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor FUSOR_SHARED=/tmp/shared
(scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='Round16*:MlOps*:ContribOps*:OpsMisc.GridSample:Cuda.ModelsPass*:Vulkan.ModelsPass*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null; cat $OUT/node/shard_errors.txt 2>/dev/null
.dev/fusor conform /tmp/shared/models --backend cuda --backend vulkan --atol 1e-6 2>&1 | tail -2
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
n=$(nproc); mkdir -p $OUT/fz
for kind in omit zerodim; do
  for b in cuda vulkan; do
    for i in $(seq 0 $((n / 2 - 1))); do
      timeout 120 python3 scripts/redteam/round16/node_mutations.py $kind --backend $b --fusor .dev/fusor --suite /tmp/shared/onnx-tests/node --out $OUT/fz --shard $i/$((n / 2)) > /dev/null 2>&1 &
    done
  done
  wait
  for b in cuda vulkan; do echo "$kind $b: $(cat $OUT/fz/${kind}_${b}_*.txt | wc -l) runs, $(cat $OUT/fz/${kind}_${b}_*.txt | grep -c '^BAD') BAD"; done
  cat $OUT/fz/${kind}_*_*.txt | grep '^BAD' | head -20
done
rm -rf $OUT/fz/work_*
