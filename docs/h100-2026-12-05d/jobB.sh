# Session 35, call B: W1, W2, W3, W5 and W6 of the side-by-side (no IREE bundle this time).
#   bash docs/h100-2026-12-05d/jobB.sh   (after package_h200.sh)
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
SIDE_ARGS='--quick --only W1,W2,W3,W5,W6' timeout 570 scripts/h200_run.sh $OUT/side side 2>&1 | tail -80
rm -f $OUT/*/devices.txt
