# Session 12 call 2: barrier kinds (buffer / global / exec) x coopmat API (nv / khr).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
(python3 .gl/prep4.py > $OUT/prep.txt 2>&1) &
wait
b() { echo "$1 ${3:-} $(env ${3:-X=1} $fz bench $1 --backend ${2} ${4:---iters 200} 2>&1 | grep -E -o 'device time *median [0-9.]* us \(p10 [0-9.]*, p90 [0-9.]*\)|cooperative matrices \([^)]*\)' | tr '\n' ' ')"; }
{
for r in 1 2; do
for M in /tmp/w/gpt2_fp16 /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp32 /tmp/w/mlp1_fp32 /tmp/w/gpt2_bf16; do
  [ $r = 1 ] && b $M cuda
  b $M vulkan FUSOR_VK_COOPMAT_API=khr
  b $M vulkan "FUSOR_VK_COOPMAT_API=khr FUSOR_VK_BARRIER=global"
  b $M vulkan "FUSOR_VK_COOPMAT_API=khr FUSOR_VK_BARRIER=exec"
  b $M vulkan "FUSOR_VK_COOPMAT_API=khr FUSOR_VK_UNSAFE_NO_BARRIERS=1"
done; done
for M in /tmp/w/w2_Softmax /tmp/w/w2_LayerNormalization; do b $M vulkan X=1 "--warmup 20 --iters 50"; b $M vulkan FUSOR_VK_BARRIER=global "--warmup 20 --iters 50"; done
} 2>&1 | tee $OUT/ab.txt
FUSOR_VK_BARRIER=global FUSOR_VK_COOPMAT_API=khr $fz bench /tmp/w/gpt2_fp16 --backend vulkan --iters 50 --trace $OUT/t.json > /dev/null 2>&1
python3 bench/trace_top.py $OUT/t.json --top 40 > $OUT/top_gpt2_fp16_global.txt 2>&1; rm -f $OUT/t.json; tail -22 $OUT/top_gpt2_fp16_global.txt
export FUSOR_VK_BARRIER=global FUSOR_VK_COOPMAT_API=khr
$fz conform .dev/half/*_fp16 --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -1
$fz conform /tmp/shared/models/* --backend vulkan 2>&1 | tail -1
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='Vulkan*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -4; grep -A6 ': Failure$' $OUT/gtest.txt | head -12
