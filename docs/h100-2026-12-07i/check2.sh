# Session 49, call 2 (short: little device time left): the build after red-team round 57's
# fixes (the memory plan's in-place rule, ceil-mode pooling windows longer than the input, the
# Flatten merge): its minimal repros and the Fusion / OpsNn gtests on both GPUs.
#   bash docs/h100-2026-12-07i/check2.sh
. scripts/h200_job.sh
# The repros were copied from the helper's /tmp/rt57/min into docs/h100-2026-12-07i/r57/ for the
# call (not kept: tests/test_fusion.cpp and tests/test_ops_nn.cpp hold the same cases).
for d in docs/h100-2026-12-07i/r57/*; do echo "$(basename $d): $(timeout 60 $fz conform $d --backend cuda --backend vulkan 2>&1 | tail -1)"; done 2>&1 | tee $OUT/r57.txt
GTEST_TIMEOUT=120 FUSOR_BIN=$fz h200_gtest 'Fusion.*:OpsNn.*:Cuda.ModelsPass*:Vulkan.ModelsPass*'
# Then, on the same warm H200, the new build's shufflenet_v2_x0_5 medians (h200_shuffle.txt):
#   bash /tmp/exp.sh (job.sh's export); h200_b /tmp/w6/shufflenet_b{1,32} {cuda,vulkan}, two rounds
