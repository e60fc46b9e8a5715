# Session 17 call 2: the session's final build on the H200. ONNX node suite on ref / cuda / vulkan
# (FlexAttention, the training optimizers, Optional*, and the round-14 Pad / Scatter / Compress /
# InstanceNormalization fixes on the GPUs), the new GPU gtests (contrib ops with the
# onnxruntime-optimized BERT / GPT-2, FlexAttention, training ops, Round14, Optional), the CUDA
# kernels of the node suite's opaque ops NVRTC-compiled, and the shared models on both GPUs.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }  # tests/data through FUSOR_SOURCE_DIR
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor FUSOR_SHARED=/tmp/shared
(scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 280 .dev/fusor_tests --gtest_filter='ContribOps*:TrainingOps*:OpsMisc.TfIdf*:FlexAttention*:Optional*:If*:Round14*:Round13*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:CudaCodegen.CompilesNodeSuiteOpaqueKernels' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null; cat $OUT/node/shard_errors.txt 2>/dev/null
.dev/fusor conform /tmp/shared/models --backend cuda --backend vulkan --atol 1e-6 2>&1 | tail -3
for m in tests/data/ort_bert_small_opt tests/data/ort_gpt2_small_opt; do for b in cuda vulkan; do echo "$m $b: $(.dev/fusor bench $m --backend $b --dim b=2 --dim s=8 --iters 200 2>&1 | grep -E '^device time|^notes' | tr '\n' ' ' | cut -c1-200)"; done; done
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
