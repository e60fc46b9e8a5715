# Session 33, call 2: the three GPU-only numerics failures of call 1 (docs/benchmarks.md).
#   bash docs/h200-2026-12-05b/job1.sh   (after package_h200.sh; .dev/ln from prep_ln.py)
# 1. The fixed fp32 Div / Mod of subnormals (integer rounding instead of the driver's ldexp) and
#    GridSample's first differing element.
# 2. LayerNormalization of constant rows on vulkan per row length, with each knob that changes
#    the row kernel's sum or division, and the 768 kernel's GLSL.
. scripts/h200_job.sh
GTEST_TIMEOUT=200 h200_gtest 'GpuOpaqueOps.GridSample*:Numerics.RowSums*:Numerics.Subnormal*:VulkanDiv.*:Round9.Mod*:Numerics.Float64Fmod*:VulkanF64Math.*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -40
mkdir -p $OUT/dump
for knob in X=0 FUSOR_VK_DIV_FMA=0 FUSOR_VK_ROW_VEC4=0 FUSOR_ROW_REGISTERS=0 FUSOR_VK_SPIRV_OPT=0 FUSOR_ROW_MAX_PARTIALS=1 FUSOR_PLAIN_SUMS=1; do
  for m in .dev/ln/ln*; do
    echo "$knob $(basename $m) $(env $knob FUSOR_NO_DISK_CACHE=1 timeout 30 $fz run $m --backend vulkan --atol 0 --rtol 0 2>&1 | grep -E '^check|rror' | cut -c1-140)"
  done
done 2>&1 | tee $OUT/ln_knobs.txt
FUSOR_VK_DUMP_DIR=$OUT/dump FUSOR_NO_DISK_CACHE=1 $fz run .dev/ln/ln768 --backend vulkan --atol 0 --rtol 0 > /dev/null 2>&1
FUSOR_VK_DUMP_DIR=$OUT/dump/cuda FUSOR_NO_DISK_CACHE=1 $fz run .dev/ln/ln768 --backend cuda --atol 0 --rtol 0 2>&1 | grep check
ls $OUT/dump
h200_tidy
