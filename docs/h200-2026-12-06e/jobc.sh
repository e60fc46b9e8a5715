# Session 40, correctness call (any card): this session's build on the GPU. The node suite on ref /
# cuda / vulkan; the GPU gtests of this session's fixes (Resize taps read by the GPU kernels'
# tables, loops and scans folded at load, empty-output folding, large NonZero inputs) and the
# rounds they touch; the shared models in fp32 / fp16 / bf16 on both GPUs, cold then warm cache.
#   bash docs/h200-2026-12-06e/jobc.sh   (after HALF_MODELS=... package_h200.sh)
. scripts/h200_job.sh
h200_correctness 'Round49*:Round50*:Round11*:OpsExtra*:DataDependent*:GatherFusion*:Hostile.Contractions*:Hostile.Large*:Loop*:Scan*:GpuOpaqueOps*:Cuda.ModelsPass*:Vulkan.ModelsPass*:-*NodeSuite*'
