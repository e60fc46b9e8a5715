# Session 44, call 3 (any card; session 45 added the node suite and the transcendental / conv
# padding tests): fp16 stores as the hardware conversion where the device
# promises round-to-nearest-even with fp16 subnormals kept (RoundingModeRTE + DenormPreserve 16;
# opt-in: FUSOR_VK_F16_RTE=1, exported below for the tests; the A/B passes 0 / 1). Correctness first (the GPU
# gtests of fp16 numerics, including every fp16 neighbourhood narrowed bit for bit; the half
# models' conformance), then device medians: the row-kernel models (.dev/rows) and W7's GPT-2 2L
# / MLP exported here, each on vulkan with and without, and cuda.
#   bash docs/h100-2026-12-07/job3.sh   (after the .dev package)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
export FUSOR_VK_F16_RTE=1
$fz devices 2>&1 | grep -i vulkan
h200_node
h200_prep
GTEST_TIMEOUT=150 FUSOR_BIN=$fz h200_gtest 'Numerics.Transcendentals*:SpecialValues.*:ContribDiffusion.*:Numerics.Hyperbolics*:ConvTranspose.NonFinite*:Numerics.Half*:Numerics.CastsToNarrowerFloatsRoundOnce:Half*:VulkanRowVec*:NumericsEpilogue.Half*:VulkanCoopmat*:VulkanFloatControls*:OutputForms*'
grep -E "FAILED|Failure|differ" -A3 $OUT/gtest.txt | cut -c1-300 | head -20
h200_conform
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror' | head -1 | sed 's/(p10.*//;s/device time *//')"; }
for m in ln_fp16_768 dec_fp16_768 ln_fp16_1024 ln_fp32_768; do b .dev/rows/$m vulkan; b .dev/rows/$m vulkan FUSOR_VK_F16_RTE=0; done 2>&1 | tee $OUT/rows_rte.txt
wait; tail -1 $OUT/prep.txt; h200_node_result
for r in 1 2; do for m in /tmp/g2/fp16 /tmp/w/mlp64_fp16; do
  b $m cuda; b $m vulkan; b $m vulkan FUSOR_VK_F16_RTE=0; b $m vulkan FUSOR_VK_BUILTIN_MATH=1; done; done 2>&1 | tee $OUT/w7_rte.txt
echo "diff fp16: $(timeout 60 $fz diff /tmp/g2/fp16 --backend cuda --backend vulkan 2>&1 | grep -E '^(first|no )|agree|rror' | head -1)" | tee -a $OUT/w7_rte.txt
h200_tidy
