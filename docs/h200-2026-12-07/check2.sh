# Session 46, second correctness call (any card): this session's later numerics on the GPU —
# Gelu without the 1 + erf cancellation (CUDA normcdff, Vulkan fz_gelu), correctly rounded
# Vulkan sqrt in fp32 / fp64, Swish's split sigmoid — then the node suite, the shared models,
# and GPT-2 2L fp32 / fp16 timings (what the Gelu / sqrt helpers cost against call 2's medians).
#   bash docs/h200-2026-12-07/check2.sh   (after the .dev package)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
h200_node
h200_prep
GTEST_TIMEOUT=200 FUSOR_BIN=$fz h200_gtest 'Numerics.GeluTails*:SpecialValues.*:VulkanDiv.*:VulkanF64Math.*:NumericsEpilogue.*:Numerics.Transcendentals*:Numerics.Half*:Numerics.Hyperbolic*:ContribOps.*:ContribDiffusion.*:Cuda.ModelsPass*:Vulkan.ModelsPass*'
h200_conform
wait; tail -1 $OUT/prep.txt; h200_node_result
for r in 1 2; do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/w/mlp64_fp16; do h200_b $m cuda; h200_b $m vulkan; done; done 2>&1 | tee $OUT/w7.txt
h200_tidy
