# Session 42, correctness call (any card): this session's build on the GPU (thread-per-row kernels
# for many short rows, SVMRegressor / SVMClassifier). The node suite on ref / cuda / vulkan; the GPU
# gtests of the change and the row kernels they touch; the shared models in fp32 / fp16 / bf16 on
# both GPUs, cold then warm; then the short-row A/B: the previous build (.dev/fusor_old.xz, main at
# a8a8fbb) against this one, device time on both GPUs.
#   bash docs/h100-2026-12-06g/jobc.sh   (after HALF_MODELS=... package_h200.sh)
. scripts/h200_job.sh
h200_correctness 'ThreadRows*:SoftmaxOnline*:RowRegisters*:MlOps*:Round54*:GpuOpaqueOps*:Numerics*:Round51*:Half*:Cuda.ModelsPass*:Vulkan.ModelsPass*:-*NodeSuite*'
xz -dkf .dev/fusor_old.xz && chmod +x .dev/fusor_old
python3 docs/h100-2026-12-06g/short_rows.py /tmp/sr > /dev/null 2>&1
for m in short_sum short_ln short_softmax; do for be in cuda vulkan; do for b in fusor_old fusor; do
  printf "%-14s %-7s %-10s " $m $be $b; timeout 60 .dev/$b bench /tmp/sr/$m --backend $be 2>&1 | grep "device time" | cut -c19-70
done; done; done 2>&1 | tee $OUT/short_rows_ab.txt
