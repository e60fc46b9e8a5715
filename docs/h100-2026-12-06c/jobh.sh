# Session 38, a last try for issue 12's H200 run: on an H200, W1, W2, W3, W5 of the
# side-by-side with the IREE bundle (then jobh2.sh: W4, W6 on the same lease); on any other
# card it stops at once (the session's H100 calls are done).
#   bash docs/h100-2026-12-06c/jobh.sh   (after IREE_BUNDLE=... HALF_MODELS=... package_h200.sh)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
echo "$gpu" | grep -q H200 || exit 0
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
SIDE_ARGS='--quick --only W1,W2,W3,W5' timeout 500 scripts/h200_run.sh $OUT/side side 2>&1 | tail -40
rm -f $OUT/*/devices.txt
