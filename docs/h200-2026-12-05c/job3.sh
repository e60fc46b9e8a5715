# Session 34, call 3: the session's final build on the GPU: the CUDA status word reset on the
# executable's stream, the PDL fallback, the typed cuGraphAddDependencies_v2; the red-team round
# 34 fixes (MeanVarianceNormalization, Resize half_pixel_symmetric, Einsum '...') and the loop-nest
# budget. The node suite on ref / cuda / vulkan, the GPU gtests, the shared models and their
# fp16 / bf16 versions, then the PDL A/B once more on the models it moved most.
#   bash docs/h200-2026-12-05c/job3.sh   (after package_h200.sh)
. scripts/h200_job.sh
h200_node
GTEST_TIMEOUT=200 h200_gtest 'Cuda*:Numerics.*:Half*:SessionCache*:GpuOpaqueOps.*:Hostile.*:OpsExtra.Resize*:-*NodeSuite*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
h200_conform
wait
h200_node_result
b() { echo "$1 $2 | $(env $2 timeout 60 $fz bench $1 --backend cuda --iters 500 --warmup 50 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//' | tr '\n' ' ')"; }
for m in /tmp/shared/models/mobilenet_v3_small /tmp/shared/models/squeezenet1_1 /tmp/shared/models/mlp_block; do
  for k in X=0 FUSOR_CUDA_PDL=0; do b $m "$k"; done; done 2>&1 | tee $OUT/pdl_ab.txt
h200_tidy
