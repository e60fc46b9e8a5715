# Session 40 (H200 only): issue 12's side-by-side with the IREE bundle, the binary built from
# main at this session's fixes: W1, W2, W3, W5 by default, then W4, W6 on the same lease.
#   bash docs/h200-2026-12-06e/job1.sh [W4,W6]   (after scripts/package_h200.sh; IREE_BUNDLE set)
only=${1:-W1,W2,W3,W5}
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
echo "GPU: $gpu"
echo "$gpu" | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
SIDE_ARGS="--quick --only $only" timeout 540 scripts/h200_run.sh $OUT/side side 2>&1 | tail -60
rm -f $OUT/*/devices.txt
