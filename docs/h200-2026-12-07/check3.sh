# Session 46, fourth call (any card): CUDA Gelu through normcdff above -12.5 and double normcdf
# below (check2 ran the all-double form), and the Gelu special values, on the GPU.
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
GTEST_TIMEOUT=120 FUSOR_BIN=$fz h200_gtest 'Numerics.Gelu*:SpecialValues.*:ContribOps.Gelu*:ContribDiffusion.BiasSplitGelu*'
h200_conform
h200_tidy
