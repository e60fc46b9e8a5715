# Session 11 call 3: 4-wide rows with restrict + shift (W2 Softmax vs the hand-made variant),
# half conformance (conform, as h200_run.sh), bf16 coopmat tile sweep, GPU gtests.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
(python3 .gl/prep3.py > /dev/null 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='VulkanCoopmatGpu*:VulkanRowVec.*:VulkanDiv.*:Half*:NumericsEpilogue*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -4; grep -E -A6 ': Failure$' $OUT/gtest.txt | head -30
echo "== half conformance"
$fz conform .dev/half/*_fp16 --backend cuda --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tee $OUT/half.txt | tail -3
$fz conform .dev/half/*_bf16 --backend cuda --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tee -a $OUT/half.txt | tail -3
wait
mkdir -p $OUT/dump
b() { echo "$1 ${3:-} $(env ${3:-X=1} $fz bench $1 --backend ${2} ${4:---iters 200} 2>&1 | grep -E -o 'device time *median [0-9.]* us \(p10 [0-9.]*, p90 [0-9.]*\)|cooperative matrices \([^)]*\)' | tr '\n' ' ')"; }
{
FUSOR_NO_DISK_CACHE=1 FUSOR_VK_DUMP_DIR=$OUT/dump $fz bench /tmp/w/w2_Softmax --backend vulkan --iters 2 > /dev/null 2>&1
for r in 1 2; do
  b /tmp/w/w2_Softmax vulkan X=1 "--warmup 20 --iters 50"; b /tmp/w/w2_Softmax vulkan FUSOR_VK_ROW_VEC4=0 "--warmup 20 --iters 50"
  b /tmp/w/w2_Softmax vulkan FUSOR_VK_SOURCE_DIR=$PWD/.gl/smB "--warmup 20 --iters 50"
  b /tmp/w/w2_LayerNormalization vulkan X=1 "--warmup 20 --iters 50"
done
b /tmp/w/w2_Softmax cuda X=1 "--warmup 20 --iters 50"
for M in /tmp/w/mlp64_bf16 /tmp/w/gpt2_bf16; do
  b $M vulkan; for T in 2,2,1,1 2,4,1,1,64 2,2,1,2 1,4,2,1 2,4,1,1,256; do b $M vulkan FUSOR_VK_COOPMAT_TILE=$T; done
  b $M vulkan FUSOR_VK_TILE_ORDER=m; b $M cuda
done
} 2>&1 | tee $OUT/ab.txt
