# Session 35, call A: the current build's correctness on the GPU (the node suite on ref / cuda /
# vulkan, the GPU gtests, the shared models in fp32 / fp16 / bf16 on both GPUs: the checks the
# session-34 build's last CUDA changes never had), then W4 and W7 of the side-by-side.
#   bash docs/h100-2026-12-05d/jobA.sh   (after package_h200.sh)
. scripts/h200_job.sh
t0=$(date +%s)
h200_node
GTEST_TIMEOUT=200 h200_gtest 'Cuda*:Numerics.*:Half*:SessionCache*:GpuOpaqueOps.*:Hostile.*:ContribOps.*:OpsExtra.Resize*:-*NodeSuite*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
h200_conform
wait
h200_node_result
echo "correctness took $(( $(date +%s) - t0 )) s"
left=$(( 560 - ($(date +%s) - t0) ))
SIDE_ARGS='--quick --only W4,W7' timeout $left scripts/h200_run.sh $OUT/side side 2>&1 | tail -40
h200_tidy
