# Session 41, correctness call (any card): this session's build on the GPU. The node suite on ref /
# cuda / vulkan; the GPU gtests of this session's fixes (lookup checks of unread lookups: the
# stand-in Gather kernels; Scan / Loop typing and unrolling; LabelEncoder tables) and the rounds
# they touch; the shared models in fp32 / fp16 / bf16 on both GPUs, cold then warm cache.
#   bash docs/h100-2026-12-06f/jobc.sh   (after HALF_MODELS=... package_h200.sh)
. scripts/h200_job.sh
h200_correctness 'Round51*:Round49*:Round50*:MlOps*:DataDependent*:GatherFusion*:Hostile.Contractions*:Hostile.Large*:Hostile.Deeply*:Loop*:Scan*:If*:GpuOpaqueOps*:Cuda.ModelsPass*:Vulkan.ModelsPass*:-*NodeSuite*'
