# Session 17 call 1: correctness of the session-16 final build on the H200 (node suite on ref /
# cuda / vulkan, GPU gtests incl. Round13*), then batch-1 GEMV layers one by one: the MLP's
# 1 x 1024 x 4096 (+ bias, GELU) and 1 x 4096 x 1024 layers, fp32 and fp16, on the first GEMV
# path of both backends with 8 / 16 / 32 columns per workgroup (Vulkan also 512 / 1024
# threads), the whole MLP b1, and the device copy bandwidth in the same call.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache FUSOR_BIN=$PWD/.dev/fusor
fz=$PWD/.dev/fusor
(scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 200 .dev/fusor_tests --gtest_filter='Round13*:Round12*:CudaGemv*:VulkanGemv*:VulkanTest.Gemv*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:MatMulPrologue*' > $OUT/gtest.txt 2>&1; echo "gtest rc $?"
grep -E '^\[  (FAILED|PASSED|SKIPPED) ' $OUT/gtest.txt | sort | uniq -c | tail -8; grep -A8 ': Failure$' $OUT/gtest.txt | cut -c1-200 | head -20
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null; cat $OUT/node/shard_errors.txt 2>/dev/null
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_*
python3 -c "
import torch
x=torch.empty(64<<20,device='cuda');y=torch.empty_like(x)
for _ in range(3): y.copy_(x)
s,e=torch.cuda.Event(enable_timing=True),torch.cuda.Event(enable_timing=True)
s.record()
for _ in range(20): y.copy_(x)
e.record();torch.cuda.synchronize();print('copy GB/s %.0f'%(2*x.numel()*4*20/(s.elapsed_time(e)*1e-3)/1e9))"
mkdir -p /tmp/gv /tmp/mlp/b1 /tmp/mlp/h1
for dt in fp32 fp16; do for s in "1 1024 4096" "1 4096 1024"; do
  python3 bench/fp16_gemm_model.py --dtype $dt /tmp/gv/${dt}_${s// /x}.onnx $s; python3 bench/fp16_gemm_model.py --dtype $dt --plain /tmp/gv/${dt}_${s// /x}_plain.onnx $s; done; done
python3 bench/mlp_fp32_model.py /tmp/mlp/b1/model.onnx 1 > /dev/null; python3 bench/mlp_fp32_model.py --fp16 /tmp/mlp/h1/model.onnx 1 > /dev/null
b() { echo "$1 $2 $3 | $(env $3 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do
for m in /tmp/gv/*.onnx /tmp/mlp/b1 /tmp/mlp/h1; do
  for c in 8 16 32; do b $m cuda FUSOR_CUDA_GEMV_COLS=$c; done
  for c in 8 16 32; do for t in 512 1024; do b $m vulkan "FUSOR_VK_GEMV_COLS=$c FUSOR_VK_GEMV_THREADS=$t"; done; done
done; done
