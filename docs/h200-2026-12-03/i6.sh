# Session 16 call 6: split-K's minimum K slice for the Vulkan tiled / coopmat matmuls
# (FUSOR_VK_SPLIT_MIN_SLICE, default 256) and per-unit target (FUSOR_VK_SPLIT_PER_UNIT) on GPT-2
# 2L fp32 / fp16 and the MLP block at batch 64 (fp32, fp16) and 1 (fp32), fusor bench device time.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
[ -f /tmp/g2/bf16/model.onnx ] || python3 bench/export_gpt2_torch.py /tmp/g2 2>&1 | tail -1
mkdir -p /tmp/mlp/b64 /tmp/mlp/b1 /tmp/mlp/h64
python3 bench/mlp_fp32_model.py /tmp/mlp/b64/model.onnx 64 > /dev/null; python3 bench/mlp_fp32_model.py /tmp/mlp/b1/model.onnx 1 > /dev/null
python3 bench/mlp_fp32_model.py --fp16 /tmp/mlp/h64/model.onnx 64 > /dev/null
for r in 1 2; do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/mlp/b64 /tmp/mlp/h64 /tmp/mlp/b1; do
  for e in X=0 FUSOR_VK_SPLIT_MIN_SLICE=192 "FUSOR_VK_SPLIT_MIN_SLICE=192 FUSOR_VK_SPLIT_PER_UNIT=1" FUSOR_VK_SPLIT_MIN_SLICE=160; do
    echo "$r $m $e | $(env $e $fz bench $m --backend vulkan --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//')"
  done
  [ $r = 1 ] && echo "$r $m cuda | $($fz bench $m --backend cuda --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//')"
done; done
