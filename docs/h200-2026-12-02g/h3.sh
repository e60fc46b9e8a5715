# Session 14 call 3: W4 and W6 with every system (IREE included), the final build.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
SIDE_ARGS='--quick --only W4,W6' timeout 545 scripts/h200_run.sh $OUT/side side 2>&1 | tail -70
rm -f $OUT/*/devices.txt
