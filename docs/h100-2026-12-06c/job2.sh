# Session 38, call 2 (H200 only, right after job1.sh on the same lease): W4 and W6 of the
# side-by-side with the IREE bundle.
#   bash docs/h100-2026-12-06c/job2.sh   (after IREE_BUNDLE=... HALF_MODELS=... package_h200.sh)
nvidia-smi --query-gpu=name --format=csv,noheader | head -1
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
SIDE_ARGS='--quick --only W4,W6' timeout 575 scripts/h200_run.sh $OUT/side side 2>&1 | tail -80
rm -f $OUT/*/devices.txt
