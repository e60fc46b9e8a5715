# Session 40 (H200 only): issue 12's side-by-side, W1, W2, W3, W5 with the IREE bundle (W4, W6
# next: job2.sh on the same lease), the binary built from main at this session's fixes.
#   bash docs/h200-2026-12-06e/job1.sh   (after scripts/package_h200.sh; IREE_BUNDLE set)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
echo "GPU: $gpu"
echo "$gpu" | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
SIDE_ARGS='--quick --only W1,W2,W3,W5' timeout 540 scripts/h200_run.sh $OUT/side side 2>&1 | tail -60
rm -f $OUT/*/devices.txt
