# Session 48: issue 12 / 16's side-by-side with every system (IREE bundle included) on whatever
# card the device tool lends (an H100 this session; the tool keeps H200s for work that does not
# fit 78 GiB). Call 1: W4, W6; call 2: W1, W2, W3, W5, W7.
#   bash docs/h100-2026-12-07h/side.sh W4,W6   (after scripts/package_h200.sh with IREE_BUNDLE)
only=${1:-W1,W2,W3,W5,W7}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
SIDE_ARGS="--quick --only $only" timeout ${SIDE_T:-560} scripts/h200_run.sh $OUT/side side 2>&1 | tail -80
rm -f $OUT/*/devices.txt
