# Session 10 call 4 (final build): the CUDA-context hold (FUSOR_VK_HOLD_CUDA_CONTEXT) measured
# on W2 with GPU clocks sampled; coopmat column-strip default; W4/W7 fusor rows; startup cost.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))" 2>/dev/null); export LD_LIBRARY_PATH=$cudnn:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor .dev/fusor_tests; fz=$PWD/.dev/fusor
(python3 .gl/prep3.py > /dev/null 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 100 .dev/fusor_tests --gtest_filter='VulkanCoopmatGpu*:VulkanCudaContextHold.*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -5; grep -A6 ': Failure$' $OUT/gtest.txt | head -20
$fz devices 2>&1 | grep -o "vulkan.*H200.*" | grep -o "cuda_context=[a-z]*"
wait; sleep 20
clk() { sort -t, -k2 -n "$1" | awk -F, 'NR==1{lo=$2} {hi=$2; p[$3]++} END{printf "mem MHz %s..%s pstates", lo, hi; for (k in p) printf " %s:%d", k, p[k]; print ""}'; }
b() { echo "$1 ${3:-} $(env ${3:-X=1} $fz bench $1 --backend ${2} ${4:---iters 200} 2>&1 | grep -E -o 'device time *median [0-9.]* us \(p10 [0-9.]*, p90 [0-9.]*\)|coopmat[^;]*' | tr '\n' ' ')"; }
{
for H in 0 1; do for M in /tmp/w/w2_Softmax /tmp/w/w2_LayerNormalization; do
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,pstate --format=csv,noheader,nounits -lms 100 > /tmp/clk.txt & s=$!
  r=$(b $M vulkan FUSOR_VK_HOLD_CUDA_CONTEXT=$H "--warmup 20 --iters 50"); kill $s; echo "$r | $(clk /tmp/clk.txt)"
done; done
for M in /tmp/w/w2_Softmax /tmp/w/w2_LayerNormalization; do b $M cuda X=1 "--warmup 20 --iters 50"; done
for M in /tmp/w/mlp64_fp16 /tmp/w/gpt2_fp16 /tmp/w/mlp64_bf16 /tmp/w/gpt2_bf16 /tmp/w/mlp64_fp32 /tmp/w/gpt2_fp32; do
  b $M cuda; b $M vulkan; b $M vulkan FUSOR_VK_TILE_ORDER=m; b $M vulkan FUSOR_VK_HOLD_CUDA_CONTEXT=0
done
for H in 1 0 1 0; do
  echo "gpt2_tiny vulkan cold (no disk cache) HOLD=$H: $(FUSOR_NO_DISK_CACHE=1 FUSOR_VK_HOLD_CUDA_CONTEXT=$H $fz bench /tmp/shared/models/gpt2_tiny --backend vulkan --iters 3 --json 2>/dev/null | python3 -c 'import json,sys; j=json.load(sys.stdin); print({k: j[k] for k in j if k.endswith("_ms")})')"
done
} 2>&1 | tee $OUT/ab.txt
