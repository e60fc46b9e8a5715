# Session 27's final call (the H200), the build that lands: ONNX node suite on ref / cuda /
# vulkan; GPU gtests (Numerics with round 23's casts and signed zeros; GatherFusion with round 22's cases: the index-error word now keeps the
# first failing kernel, on CUDA and Vulkan; split-K, models, half types, row kernels, big
# buffers, Loop / Scan after their file split); the shared models and their fp16 / bf16 versions
# on both GPUs; one round of fusor bench on GPT-2 2L fp32 / fp16 / bf16 and the MLP block (b64,
# b1) on both GPUs (the session's refactors move code only: the timings should be call 1's and 2's).
. scripts/h200_job.sh
h200_node
h200_prep
h200_gtest "Numerics.*:GatherFusion*:GatherOfReshape*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:RowProduct*:InlineDot*:VulkanSplitK*:VulkanBigBuffers*:ContribOps*:Sequence.*:DataDependent.*:*Loop*:*Scan*"
h200_conform
wait
h200_node_result
b() { echo "$1 $2 | $(timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|^kernels per run' | sed 's/(p10.*//;s/device time *//;s/kernels per run */k=/' | tr '\n' ' ')"; }
for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/w/mlp64_fp32 /tmp/w/mlp64_fp16 /tmp/w/mlp1_fp32; do b $m cuda; b $m vulkan; done 2>&1 | tee $OUT/bench.txt
h200_tidy
