# Session 23 call 6: the GEMV unroll defaults at M = 1, 4 and 8 (one GEMV layer, 4096 -> 1024 with
# bias + GELU, bench/fp16_gemm_model.py), fp32 and fp16, against the previous values, one round.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor; mkdir -p /tmp/gv
for m in 1 4 8; do for dt in fp32 fp16; do python3 bench/fp16_gemm_model.py --dtype $dt /tmp/gv/m${m}_$dt.onnx $m 4096 1024 > /dev/null 2>&1; done; done
b() { echo "$1 $2 $3 | $(env $3 timeout 20 $fz bench $1 --backend $2 --iters 200 --warmup 20 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for m in 1 4 8; do for dt in fp32 fp16; do M=/tmp/gv/m${m}_$dt.onnx
  b $M cuda FUSOR_CUDA_GEMV_UNROLL=4; b $M cuda FUSOR_CUDA_GEMV_UNROLL=8; b $M cuda X=1
  b $M vulkan FUSOR_VK_GEMV_UNROLL=1; b $M vulkan FUSOR_VK_GEMV_UNROLL=8; b $M vulkan X=1
done; done 2>&1 | tee $OUT/bench.txt
rm -f $OUT/r/*.json $OUT/r/devices.txt 2>/dev/null
