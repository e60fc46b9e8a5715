# NOT RUN this session (the budget went to job1.sh and job3.sh).
# Session 37, call 2: W1, W2, W3, W5, W7 of the side-by-side with the IREE bundle.
#   bash docs/h100-2026-12-06b/job2.sh   (after IREE_BUNDLE=... HALF_MODELS=... package_h200.sh)
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
SIDE_ARGS='--quick --only W1,W2,W3,W5,W7' timeout 560 scripts/h200_run.sh $OUT/side side 2>&1 | tail -60
rm -f $OUT/*/devices.txt
