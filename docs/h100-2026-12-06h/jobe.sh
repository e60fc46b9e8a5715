# Session 43 (any card): ConvTranspose as a Conv of flipped sub-kernels. Correctness (node suite
# ref / cuda / vulkan, the GPU gtests of the change and the conv / half paths it reaches, the
# shared models cold then warm), then device time of five ConvTranspose layers (fp32 and fp16) on
# both GPUs with the decomposition off (FUSOR_CONVTRANSPOSE_AS_CONV=0: the direct kernel) and on,
# and torch eager (cuDNN) for the same layers; four 1-D and three 3-D Conv layers with
# FUSOR_CONV1D_AS_2D / FUSOR_CONV3D_AS_2D = 0 / 1.
#   bash docs/h100-2026-12-06h/jobe.sh   (after scripts/package_h200.sh)
. scripts/h200_job.sh
h200_correctness 'ConvTranspose*:ConvLift*:OpsNn.Conv*:GpuOpaqueOps*:Numerics*:Half*:Conv*:Cuda.ModelsPass*:Vulkan.ModelsPass*:-*NodeSuite*'
python3 docs/h100-2026-12-06h/convt.py /tmp/ct > $OUT/convt_prep.txt 2>&1
cp /tmp/ct/torch.txt $OUT/ 2>/dev/null; cat $OUT/torch.txt
for m in $(ls /tmp/ct | grep -v txt); do for be in cuda vulkan; do for e in 0 1; do
  printf "%-28s %-7s rewrite=%s " $m $be $e; FUSOR_CONVTRANSPOSE_AS_CONV=$e FUSOR_CONV1D_AS_2D=$e FUSOR_CONV3D_AS_2D=$e timeout 30 $fz bench /tmp/ct/$m --backend $be --iters 100 --warmup 10 2>&1 | grep "device time" | cut -c19-70
done; done; done 2>&1 | tee $OUT/convt_ab.txt
for m in $(ls /tmp/ct | grep -v txt); do for be in cuda vulkan; do printf "%-28s %-7s " $m $be
  tol=; case $m in *fp16) tol="--rtol 1e-2 --atol 2e-3";; esac
  timeout 90 $fz diff /tmp/ct/$m/model.onnx --backend ref --backend $be $tol 2>&1 | grep -E "divergence|error" | head -1; done; done 2>&1 | tee $OUT/convt_diff.txt
