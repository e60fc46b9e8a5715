# Session 11 call 1: fused-fma division (W2 Softmax), Softmax vec4 variants, coopmat V1 (register
# double-buffer), devices (KHR coopmat list / bf16), GPU div + coopmat gtests.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
(python3 .gl/prep3.py > /dev/null 2>&1) &
$fz devices 2>&1 | grep -E "^vulkan|coopmat" | tee $OUT/devices.txt
V1=$PWD/.gl/v1_coopmat.glsl
FUSOR_VK_VALIDATION=0 timeout 120 .dev/fusor_tests --gtest_filter='VulkanDiv.*:VulkanCoopmatGpu*' > $OUT/gtest.txt 2>&1; echo "gtest default rc $?"
FUSOR_VK_COOPMAT_TEMPLATE=$V1 FUSOR_VK_VALIDATION=0 timeout 120 .dev/fusor_tests --gtest_filter='VulkanCoopmatGpu*' > $OUT/gtest_v1.txt 2>&1; echo "gtest V1 rc $?"
for f in $OUT/gtest.txt $OUT/gtest_v1.txt; do grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $f | sort | uniq -c | tail -4; grep -A6 ': Failure$' $f | head -12; done
wait
b() { echo "$1 ${3:-} $(env ${3:-X=1} $fz bench $1 --backend ${2} ${4:---iters 200} 2>&1 | grep -E -o 'device time *median [0-9.]* us \(p10 [0-9.]*, p90 [0-9.]*\)|coopmat[^;]*|source from' | tr '\n' ' ')"; }
{
for r in 1 2; do
for M in /tmp/w/w2_Softmax; do
  b $M vulkan X=1 "--warmup 20 --iters 50"
  b $M vulkan FUSOR_VK_DIV_FMA=0 "--warmup 20 --iters 50"
  for d in smA smB smC; do b $M vulkan FUSOR_VK_SOURCE_DIR=$PWD/.gl/$d "--warmup 20 --iters 50"; done
done
done
b /tmp/w/w2_LayerNormalization vulkan X=1 "--warmup 20 --iters 50"
b /tmp/w/w2_LayerNormalization vulkan FUSOR_VK_DIV_FMA=0 "--warmup 20 --iters 50"
b /tmp/w/w2_Softmax cuda X=1 "--warmup 20 --iters 50"
echo "smB correctness: $(FUSOR_VK_SOURCE_DIR=$PWD/.gl/smB timeout 120 $fz diff /tmp/w/w2_Softmax --backend cuda --backend vulkan --rtol 1e-5 --atol 0 2>&1 | grep -E 'Softmax|agree|differ' | head -3)"
for r in 1 2; do
for M in /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp16; do
  b $M vulkan; b $M vulkan FUSOR_VK_COOPMAT_TEMPLATE=$V1; b $M vulkan "FUSOR_VK_COOPMAT_TEMPLATE=$V1 FUSOR_VK_COOPMAT_TILE=2,4,1,1,64"
done; done
for M in /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp16; do b $M cuda;
  echo "V1 diff $M: $(FUSOR_VK_COOPMAT_TEMPLATE=$V1 timeout 120 $fz diff $M --backend cuda --backend vulkan 2>&1 | grep -E 'agree|differ|worst|error' | head -4 | tr '\n' ' ')"; done
for H in 1 0; do
  echo "gpt2_tiny vulkan cold HOLD=$H: $(FUSOR_NO_DISK_CACHE=1 FUSOR_VK_HOLD_CUDA_CONTEXT=$H $fz bench /tmp/shared/models/gpt2_tiny --backend vulkan --iters 3 --json 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print({k: j[k] for k in j if k.endswith("_ms")})')"
done
} 2>&1 | tee $OUT/ab.txt
