# Session 9 call 4 (final): GPU gtests of the merged build alone; W7 fp16 rows with BK=128.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(python3 .gl/prep3.py > /dev/null 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='NumericsEpilogue.*:VulkanDiv.*:RowRegisters.*:SoftmaxOnline*:CudaNvrtcBatch.*:CudaBackend*:*Coopmat*:VulkanSplitK*:Half*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) |tests ran' $OUT/gtest.txt | sort | uniq -c | tail -12
grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
wait
for M in /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp16; do for B in cuda vulkan cuda vulkan; do
  echo "$M $B $($fz bench $M --backend $B --iters 200 2>&1 | grep -E -o 'device time *median [0-9.]* us|coopmat[^;]*' | tr '\n' ' ')"; done; done | tee $OUT/w7.txt
