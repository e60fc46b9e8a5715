# Session 12 call 1: fp16 on KHR coopmat, barrier cost, per-kernel traces (GPT-2, MLP b64, MLP b1).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
(python3 .gl/prep4.py > $OUT/prep.txt 2>&1) &
ls /usr/local/cuda/bin | grep -E "nsys|ncu" | tr '\n' ' '; which nsys ncu; echo
FUSOR_VK_COOPMAT_API=khr $fz devices 2>&1 | grep -E "^vulkan" | cut -c1-400
FUSOR_VK_COOPMAT_API=khr FUSOR_VK_VALIDATION=0 timeout 120 .dev/fusor_tests --gtest_filter='VulkanCoopmatGpu*' > $OUT/gtest_khr.txt 2>&1; echo "gtest khr rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest_khr.txt | sort | uniq -c | tail -4; grep -A6 ': Failure$' $OUT/gtest_khr.txt | head -12
wait
b() { echo "$1 ${3:-} $(env ${3:-X=1} $fz bench $1 --backend ${2} ${4:---iters 200} 2>&1 | grep -E -o 'device time *median [0-9.]* us \(p10 [0-9.]*, p90 [0-9.]*\)|cooperative matrices \([^)]*\)' | tr '\n' ' ')"; }
{
for r in 1 2; do
for M in /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp16; do
  b $M vulkan; b $M vulkan FUSOR_VK_COOPMAT_API=khr; b $M vulkan "FUSOR_VK_COOPMAT_API=khr FUSOR_VK_COOPMAT_SHAPE=16x16x16"
done; done
for M in /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp16 /tmp/w/mlp64_bf16 /tmp/w/gpt2_bf16 /tmp/w/mlp64_fp32 /tmp/w/gpt2_fp32 /tmp/w/mlp1_fp32 /tmp/w/mlp1_fp16; do
  b $M cuda; b $M vulkan; b $M vulkan FUSOR_VK_UNSAFE_NO_BARRIERS=1
done
echo "khr fp16 agrees: $(FUSOR_VK_COOPMAT_API=khr timeout 120 $fz diff /tmp/w/gpt2_fp16 --backend cuda --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -2 | tr '\n' ' ')"
} 2>&1 | tee $OUT/ab.txt
for M in gpt2_fp16 gpt2_fp32 mlp64_fp16 mlp1_fp32; do for be in cuda vulkan; do
  $fz bench /tmp/w/$M --backend $be --iters 50 --trace $OUT/t_${M}_$be.json > /dev/null 2>&1
  python3 bench/trace_top.py $OUT/t_${M}_$be.json --top 40 > $OUT/top_${M}_$be.txt 2>&1
  echo "== $M $be"; head -14 $OUT/top_${M}_$be.txt
done; done
rm -f $OUT/t_*.json
