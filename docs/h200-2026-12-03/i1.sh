# Session 16 call 1: inline contractions (attention's Q @ K^T computed in the Softmax row kernel,
# KernelSpec::dots). Node suite on ref / cuda / vulkan, GPU gtests of the touched areas, the
# shared models and their fp16 / bf16 versions, then GPT-2 2L (W4's export) fp32 / fp16 / bf16
# on both GPUs, inline on (default) and off (FUSOR_INLINE_DOT=0, same binary), alternating.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
[ -n "${SKIP_NODE:-}" ] || (scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='InlineDot*:MatMulPrologue*:GatherOfReshape*:Round12*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:NumericsEpilogue*:CpuInterp*:VulkanRowVec*:CudaGemm*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -40
$fz conform /tmp/shared/models --backend cuda --backend vulkan --atol 1e-6 2>&1 | tail -2
$fz conform .dev/half/*_fp16 --backend cuda --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -1
$fz conform .dev/half/*_bf16 --backend cuda --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tail -1
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null; cat $OUT/node/shard_errors.txt 2>/dev/null
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
python3 bench/export_gpt2_torch.py /tmp/g2 2>&1 | tail -1
for t in fp32 fp16 bf16; do echo "== $t plan (vulkan)"; $fz explain /tmp/g2/$t --backend vulkan 2>&1 | grep -E "MatMul\+|kernels [0-9]" | head -4; done
# Outputs with the inline products against without, same backend, same seeded ids.
for t in fp32 fp16 bf16; do for be in cuda vulkan; do
  $fz run /tmp/g2/$t --backend $be --seed 3 --out /tmp/o1_${t}_$be > /dev/null 2>&1
  FUSOR_INLINE_DOT=0 $fz run /tmp/g2/$t --backend $be --seed 3 --out /tmp/o0_${t}_$be > /dev/null 2>&1
  python3 -c "
import onnx, numpy as np, sys
from onnx import numpy_helper as h
a = h.to_array(onnx.load_tensor('/tmp/o0_${t}_$be/output_0.pb')).astype(np.float64); b = h.to_array(onnx.load_tensor('/tmp/o1_${t}_$be/output_0.pb')).astype(np.float64)
print('$t $be inline vs not: max abs', np.abs(a-b).max(), 'max |x|', np.abs(a).max())"
done; done
for round in $(seq ${ROUNDS:-2}); do for v in 1 0; do for t in fp32 fp16 bf16; do for be in cuda vulkan; do
  echo "$round inline=$v $t $be $(FUSOR_INLINE_DOT=$v $fz bench /tmp/g2/$t --backend $be --iters 300 --warmup 30 2>&1 | grep -E '^device time|dispatches' | tr '\n' ' ')"
done; done; done; done
