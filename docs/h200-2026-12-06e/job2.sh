# Session 40 (H200 only, right after job1.sh on the same lease): issue 12's side-by-side, W4
# and W6 with the IREE bundle, the binary built from main at this session's fixes.
#   bash docs/h200-2026-12-06e/job2.sh   (after scripts/package_h200.sh; IREE_BUNDLE set)
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
echo "GPU: $gpu"
echo "$gpu" | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
SIDE_ARGS='--quick --only W4,W6' timeout 540 scripts/h200_run.sh $OUT/side side 2>&1 | tail -60
rm -f $OUT/*/devices.txt
