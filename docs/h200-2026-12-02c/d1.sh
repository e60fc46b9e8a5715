# Session 10 call 1: W2 on Vulkan (bimodal?), coopmat split/tile sweep on W7 fp16 rows, GPT-2 fp16 profile.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor .dev/fusor_tests
fz=$PWD/.dev/fusor
python3 .gl/prep3.py > $OUT/prep.txt 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,pstate --format=csv | tee $OUT/smi.txt
b() { echo "$1 $2 ${3:-} $(env ${3:-X=1} $fz bench $1 --backend $2 ${4:---iters 100} 2>&1 | grep -E -o 'device time *median [0-9.]* us \(p10 [0-9.]*, p90 [0-9.]*\)|coopmat[^;]*|split-K[^;]*' | tr '\n' ' ')"; }
for M in /tmp/w/w2_Softmax /tmp/w/w2_LayerNormalization; do
  b $M vulkan X=1 "--warmup 5 --iters 20"; b $M vulkan X=1 "--warmup 50 --iters 200"; b $M cuda X=1 "--warmup 5 --iters 20"
done 2>&1 | tee $OUT/w2.txt
for M in /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp16; do
  b $M cuda
  for E in X=1 FUSOR_VK_COOPMAT_SPLIT_K=2 FUSOR_VK_COOPMAT_SPLIT_K=4 FUSOR_VK_COOPMAT_SPLIT_K=8 FUSOR_VK_SPLIT_PER_UNIT=2 FUSOR_VK_SPLIT_PER_UNIT=4 \
      "FUSOR_VK_SPLIT_PER_UNIT=2 FUSOR_VK_SPLIT_MIN_SLICE=128" FUSOR_VK_COOPMAT_TILE=4,4,1,1,128 FUSOR_VK_COOPMAT_TILE=4,2,1,1,128 FUSOR_VK_COOPMAT_TILE=2,2,1,1,128 \
      "FUSOR_VK_COOPMAT_TILE=2,2,1,1,128 FUSOR_VK_SPLIT_PER_UNIT=2" "FUSOR_VK_COOPMAT_TILE=2,2,1,1,128 FUSOR_VK_SPLIT_PER_UNIT=4" FUSOR_VK_COOPMAT_TILE=2,4,1,1,64 \
      "FUSOR_VK_COOPMAT_TILE=2,4,1,1,64 FUSOR_VK_SPLIT_PER_UNIT=2" FUSOR_VK_COOPMAT_TILE=4,4,1,1,64 FUSOR_VK_COOPMAT_TILE=2,4,2,1,128 "FUSOR_VK_COOPMAT_TILE=2,4,2,1,128 FUSOR_VK_SPLIT_PER_UNIT=2"; do
    b $M vulkan "$E"
  done
done 2>&1 | tee $OUT/sweep.txt
for M in /tmp/w/gpt2_fp16 /tmp/w/gpt2_fp32; do for B in cuda vulkan; do
  echo "== $M $B"; $fz bench $M --backend $B --iters 50 --trace $OUT/t.json 2>&1 | grep -E "^(device time|notes)"; python3 bench/trace_top.py $OUT/t.json --top 14; done; done 2>&1 | tee $OUT/prof.txt
rm -f $OUT/t.json
