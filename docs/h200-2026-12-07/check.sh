# Session 46, correctness of this session's build (any card): fp16 stores as the hardware
# conversion are now the default where the device rounds them exactly; in-register fp16
# rounding stays software (the H100 call before showed NVIDIA folding float(float16_t(x))).
# Node suite, the fp16 / epilogue / row GPU gtests, the shared models, then the A/B
# FUSOR_VK_F16_RTE=0 on the row models and W7's GPT-2 2L / MLP b64 fp16.
. scripts/h200_job.sh
$fz devices 2>&1 | grep -i vulkan | grep -o "preserves=.*"
h200_node
h200_prep
GTEST_TIMEOUT=150 FUSOR_BIN=$fz h200_gtest 'VulkanDiv.*:Numerics.Transcendentals*:NumericsEpilogue.*:Numerics.Half*:Numerics.CastsToNarrowerFloatsRoundOnce:Half*:VulkanRowVec*:VulkanFloatControls*:VulkanCoopmat*:ContribDiffusion.*:SpecialValues.*'
h200_conform
for m in ln_fp16_768 dec_fp16_768; do h200_b .dev/rows/$m vulkan; h200_b .dev/rows/$m vulkan FUSOR_VK_F16_RTE=0; done 2>&1 | tee $OUT/rows_rte.txt
wait; tail -1 $OUT/prep.txt; h200_node_result
for m in /tmp/g2/fp16 /tmp/w/mlp64_fp16; do h200_b $m cuda; h200_b $m vulkan; h200_b $m vulkan FUSOR_VK_F16_RTE=0; done 2>&1 | tee $OUT/w7_rte.txt
# What the correctly rounded transcendentals and sqrt cost (GPT-2's LayerNorm, GELU): builtins A/B.
for r in 1 2; do h200_b /tmp/g2/fp32 vulkan; h200_b /tmp/g2/fp32 vulkan FUSOR_VK_BUILTIN_MATH=1; done 2>&1 | tee $OUT/math_ab.txt
h200_tidy
