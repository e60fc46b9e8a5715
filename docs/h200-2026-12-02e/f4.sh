# Session 12 call 4 (final build): fp16/bf16 4-wide rows A/B, KHR default, GPU gtests, conformance, W7 + fp32 rows.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
(python3 .gl/prep4.py > $OUT/prep.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='VulkanRowVec*:VulkanCoopmat*:Half*:NumericsEpilogue*:VulkanDiv*:Vulkan.ModelsPass*:Cuda.ModelsPass*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -4; grep -A6 ': Failure$' $OUT/gtest.txt | head -12
$fz conform .dev/half/*_bf16 --backend cuda --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tee $OUT/conform.txt | tail -1
$fz conform .dev/half/*_fp16 --backend cuda --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tee -a $OUT/conform.txt | tail -1
$fz conform /tmp/shared/models/* --backend cuda --backend vulkan 2>&1 | tee -a $OUT/conform.txt | tail -1
wait
b() { echo "$1 ${3:-} $(env ${3:-X=1} $fz bench $1 --backend ${2} ${4:---iters 200} 2>&1 | grep -E -o 'device time *median [0-9.]* us \(p10 [0-9.]*, p90 [0-9.]*\)|cooperative matrices \([^)]*\)|[0-9]+ dispatches, [0-9]+ barriers' | tr '\n' ' ')"; }
{
for r in 1 2; do
for M in /tmp/w/mlp64_fp16 /tmp/w/mlp64_bf16 /tmp/w/gpt2_fp16 /tmp/w/gpt2_bf16 /tmp/w/mlp1_fp16; do b $M vulkan; b $M vulkan FUSOR_VK_ROW_VEC4=0; b $M cuda; done
done
for M in /tmp/w/mlp64_fp32 /tmp/w/gpt2_fp32 /tmp/w/mlp1_fp32; do b $M vulkan; b $M cuda; done
for M in /tmp/w/w2_Softmax /tmp/w/w2_LayerNormalization; do b $M vulkan X=1 "--warmup 20 --iters 50"; b $M cuda X=1 "--warmup 20 --iters 50"; done
} 2>&1 | tee $OUT/ab.txt
