# Session 36, call 2: the GPU gtests call 1's time limit cut short (rounds 30-40, If, numerics,
# half types, Vulkan), then W1, W2, W3, W5, W7 of the side-by-side with the IREE bundle.
#   bash docs/h200-2026-12-06/job2.sh   (after IREE_BUNDLE=... HALF_MODELS=... package_h200.sh)
. scripts/h200_job.sh
t0=$(date +%s)
GTEST_TIMEOUT=80 h200_gtest 'Round4*:If.*:Numerics.*:Half*:-*NodeSuite*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
echo "gtests took $(( $(date +%s) - t0 )) s"
left=$(( 500 - ($(date +%s) - t0) ))
SIDE_ARGS='--quick --only W1,W2,W3,W5,W7' timeout $left scripts/h200_run.sh $OUT/side side 2>&1 | tail -60
h200_tidy
