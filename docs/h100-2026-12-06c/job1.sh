# Session 38, call 1. On an H200: W1, W2, W3, W5, W7 of the side-by-side with the IREE bundle
# (issue 12's / 16's reference run, calls 1-3 back to back on one lease). On any other card:
# the correctness call (jobc.sh) instead.
#   bash docs/h100-2026-12-06c/job1.sh   (after IREE_BUNDLE=... HALF_MODELS=... package_h200.sh)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
if echo "$gpu" | grep -q H200; then
  scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
  SIDE_ARGS='--quick --only W1,W2,W3,W5,W7' timeout 565 scripts/h200_run.sh $OUT/side side 2>&1 | tail -60
  rm -f $OUT/*/devices.txt
else
  bash docs/h100-2026-12-06c/jobc.sh
fi
