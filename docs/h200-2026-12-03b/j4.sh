# Session 18 call 4: the build with the ai.onnx.ml ops and red-team round 15. ONNX node suite on
# ref / cuda / vulkan (four ai.onnx.ml cases newly run), the new GPU gtests (MlOps with the
# skl2onnx exports against onnxruntime's outputs, ContribOps with round 15's refusals,
# TrainingOps, TfIdfVectorizer), the CUDA kernels of the node suite's opaque ops NVRTC-compiled,
# and the shared models on both GPUs.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }  # tests/data through FUSOR_SOURCE_DIR
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor FUSOR_SHARED=/tmp/shared
(scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 280 .dev/fusor_tests --gtest_filter='MlOps*:ContribOps*:TrainingOps*:OpsMisc.TfIdf*:Cuda.ModelsPass*:Vulkan.ModelsPass*:CudaCodegen.CompilesNodeSuiteOpaqueKernels' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
.dev/fusor conform tests/data/skl2onnx --backend cuda --backend vulkan 2>&1 | tail -3
for b in cuda vulkan; do echo "skl2onnx rf on $b: $(.dev/fusor explain tests/data/skl2onnx/rf --backend $b 2>&1 | grep -E 'graph break' | head -2 | tr '\n' ' ')"; done
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null; cat $OUT/node/shard_errors.txt 2>/dev/null
.dev/fusor conform /tmp/shared/models --backend cuda --backend vulkan --atol 1e-6 2>&1 | tail -3
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
