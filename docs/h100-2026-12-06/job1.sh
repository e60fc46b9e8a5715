# Session 36, call 1: the current build's correctness on the GPU (node suite on ref / cuda /
# vulkan, the GPU gtests with rounds 30-40 and the If specialisation, the shared models in
# fp32 / fp16 / bf16 on both GPUs), then the W4 / W6 graphs exported by torch for IREE's bundle
# (bench/iree_peer.py prepare runs here, on the development machine).
#   bash docs/h200-2026-12-06/job1.sh   (after package_h200.sh with HALF_MODELS)
. scripts/h200_job.sh
t0=$(date +%s)
h200_node
GTEST_TIMEOUT=240 h200_gtest 'Cuda*:Vulkan*:Numerics.*:Half*:SessionCache*:GpuOpaqueOps.*:Hostile.*:ContribOps.*:OpsExtra.Resize*:Round3*:Round4*:If.*:-*NodeSuite*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
h200_conform
wait
h200_node_result
echo "correctness took $(( $(date +%s) - t0 )) s"
left=$(( 570 - ($(date +%s) - t0) ))
SIDE_ARGS='--quick --only W4,W6 --systems torch-eager --w6-layouts contiguous --save-graphs /tmp/graphs' \
  timeout $left scripts/h200_run.sh $OUT/g side 2>&1 | tail -5
tar -C /tmp -cJf $OUT/graphs.tar.xz graphs && ls -la $OUT/graphs.tar.xz
h200_tidy
