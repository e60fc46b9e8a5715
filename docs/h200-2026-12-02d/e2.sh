# Session 11 call 2: bf16 on cooperative matrices (KHR + VK_KHR_shader_bfloat16), 4-wide row
# kernels (W2), GPU gtests, half-model conformance.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
(python3 .gl/prep3.py > /dev/null 2>&1) &
$fz devices 2>&1 | grep -E "^vulkan" | tee $OUT/devices.txt
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='VulkanCoopmatGpu*:VulkanRowVec.*:VulkanDiv.*:VulkanTest.*:Vulkan.*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -4; grep -E -A6 ': Failure$' $OUT/gtest.txt | head -30
grep -E "Bf16|bf16" $OUT/gtest.txt | head -5
echo "== half conformance (vulkan, cuda)"
for m in .dev/half/*; do for be in vulkan cuda; do echo "$(basename $m) $be: $(timeout 120 $fz run $m --backend $be 2>&1 | grep -E 'PASS|FAIL|error' | head -1 | cut -c1-150)"; done; done
wait
b() { echo "$1 ${3:-} $(env ${3:-X=1} $fz bench $1 --backend ${2} ${4:---iters 200} 2>&1 | grep -E -o 'device time *median [0-9.]* us \(p10 [0-9.]*, p90 [0-9.]*\)|cooperative matrices \([^)]*\)' | tr '\n' ' ')"; }
{
for r in 1 2; do
  for M in /tmp/w/w2_Softmax /tmp/w/w2_LayerNormalization; do
    b $M vulkan X=1 "--warmup 20 --iters 50"; b $M vulkan FUSOR_VK_ROW_VEC4=0 "--warmup 20 --iters 50"
  done
done
for M in /tmp/w/w2_Softmax /tmp/w/w2_LayerNormalization; do b $M cuda X=1 "--warmup 20 --iters 50"; done
for r in 1 2; do
for M in /tmp/w/mlp64_bf16 /tmp/w/gpt2_bf16; do b $M vulkan; b $M vulkan FUSOR_VK_COOPMAT=0; b $M cuda; done
done
for M in /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp16 /tmp/w/mlp64_fp32 /tmp/w/gpt2_fp32; do b $M vulkan; b $M cuda; done
for M in /tmp/w/mlp64_bf16 /tmp/w/gpt2_bf16; do
  echo "bf16 diff $M: $(timeout 120 $fz diff $M --backend cuda --backend vulkan 2>&1 | grep -E 'agree|differ|verdict|error' | head -3 | tr '\n' ' ')"; done
echo "W2 vec4 correctness: $(timeout 120 $fz diff /tmp/w/w2_LayerNormalization --backend cuda --backend vulkan 2>&1 | grep -E 'agree|differ|verdict' | head -2 | tr '\n' ' ')"
} 2>&1 | tee $OUT/ab.txt
