# Session 10 call 3 (final build a1725ee): GPU gtests, half conformance, W2 without / with an idle
# CUDA context alive, A/B vs the previous binary, and a knob sweep (no side_by_side: budget).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
xz -dkf .gl/fusor_old.xz; chmod +x .dev/fusor .dev/fusor_tests .gl/fusor_old
fz=$PWD/.dev/fusor; old=$PWD/.gl/fusor_old
(python3 .gl/prep3.py > /dev/null 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 150 .dev/fusor_tests --gtest_filter='VulkanCoopmatGpu*:Half*:NumericsEpilogue.*:VulkanSplitK*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) |tests ran' $OUT/gtest.txt | sort | uniq -c | tail -8
grep -B2 -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -30
$fz conform .dev/half/*_fp16 --backend vulkan --backend cuda --rtol 1e-2 --atol 2e-3 2>&1 | tail -2
wait
b() { echo "$1 $2 ${3:-} $(env ${3:-X=1} $2 bench $1 --backend ${5:-vulkan} ${4:---iters 200} 2>&1 | grep -E -o 'device time *median [0-9.]* us \(p10 [0-9.]*, p90 [0-9.]*\)|coopmat[^;]*' | tr '\n' ' ')" | sed "s#$PWD/##"; }
{
echo "== W2 vulkan, no CUDA context held"
b /tmp/w/w2_Softmax $fz X=1 "--warmup 20 --iters 50"; b /tmp/w/w2_LayerNormalization $fz X=1 "--warmup 20 --iters 50"
python3 -c "import torch,time; x=torch.zeros(1,device='cuda'); time.sleep(900)" & holder=$!; sleep 10
echo "== an idle CUDA context held from here on (pid $holder)"
b /tmp/w/w2_Softmax $fz X=1 "--warmup 20 --iters 50"; b /tmp/w/w2_LayerNormalization $fz X=1 "--warmup 20 --iters 50"
b /tmp/w/w2_Softmax $fz X=1 "--warmup 20 --iters 50" cuda; b /tmp/w/w2_LayerNormalization $fz X=1 "--warmup 20 --iters 50" cuda
for M in /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp16; do
  b $M $fz X=1 "--iters 200" cuda
  for r in 1 2; do b $M $old; b $M $fz; done
  for E in FUSOR_VK_COOPMAT_TILE=2,4,1,1,64 FUSOR_VK_COOPMAT_TILE=2,4,1,1,256 FUSOR_VK_COOPMAT_TILE=2,2,1,2,128 FUSOR_VK_COOPMAT_TILE=4,2,1,1,128 FUSOR_VK_COOPMAT_SPLIT_K=2 FUSOR_VK_TILE_ORDER=n; do b $M $fz $E; done
done
for M in /tmp/w/mlp64_fp32 /tmp/w/gpt2_fp32; do b $M $fz X=1 "--iters 200" cuda; b $M $fz; done
kill $holder
} 2>&1 | tee $OUT/ab.txt
