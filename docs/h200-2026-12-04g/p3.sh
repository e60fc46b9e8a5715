# Session 25 call 3: the session's last build (the ref cone's frontier, run-time If conditions
# computed on ref, the sequence red-team fixes). ONNX node suite on ref / cuda / vulkan; the
# sequence, data-dependent, control-flow and model GPU gtests; the stored sequence models, the
# shared models and SSDlite on both GPUs (the fp16 / bf16 models ran in call 1: with them the copy passes 64 MiB).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(SHARD_TIMEOUT=150 timeout 330 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 300 .dev/fusor_tests --gtest_filter="Sequence.*:DataDependent.*:Loop*:If.*:Optional.*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*" 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|Failure' > $OUT/gtest.txt
tail -4 $OUT/gtest.txt
mkdir -p /tmp/det && tar -C /tmp/det -xJf .dev/det.tar.xz
for be in cuda vulkan; do echo "== $be"; timeout 60 $fz conform tests/data/sequence --backend $be --no-fallback 2>&1 | tail -1; timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1; timeout 120 $fz conform /tmp/det/ssdlite320_mobilenet_v3_large --backend $be 2>&1 | grep -E "^(PASS|FAIL)" | cut -c1-200; done 2>&1 | tee $OUT/conform.txt
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20 | tee $OUT/node_result.txt; cat $OUT/node/shard_errors.txt 2>/dev/null | head
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_* $OUT/r/*.json 2>/dev/null
