# Session 41, any card: the fp16 contrib-op fix (sums in float32, rounded once) and the session's
# other gtests on both GPUs, with the final build.
#   bash docs/h100-2026-12-06f/jobd.sh   (after scripts/package_h200.sh)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
GTEST_TIMEOUT=240 FUSOR_BIN=$fz h200_gtest 'ContribOps*:Round51*:MlOps*:Half*:Optimum*:-*NodeSuite*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
h200_tidy
