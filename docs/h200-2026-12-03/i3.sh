# Session 16 call 3: split-K constants on the Vulkan GEMMs of GPT-2 2L (M = 64) after the
# blocked register tiles: FUSOR_VK_SPLIT_MIN_SLICE (default 256) x FUSOR_VK_SPLIT_PER_UNIT
# (tiled default 2, coopmat 1) and FUSOR_VK_GEMM_BK, fp32 / fp16 / bf16, fusor bench device time.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
chmod +x .dev/fusor; fz=$PWD/.dev/fusor
[ -f /tmp/g2/bf16/model.onnx ] || python3 bench/export_gpt2_torch.py /tmp/g2 2>&1 | tail -1
run() { echo "$* | $(env "$@" $fz bench /tmp/g2/$T --backend vulkan --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//')"; }
for round in 1 2; do
  for T in fp32 fp16 bf16; do
    echo "== round $round $T"
    run X=0
    run FUSOR_VK_SPLIT_MIN_SLICE=128
    run FUSOR_VK_SPLIT_MIN_SLICE=64
    run FUSOR_VK_SPLIT_PER_UNIT=4
    run FUSOR_VK_SPLIT_MIN_SLICE=128 FUSOR_VK_SPLIT_PER_UNIT=4
    run FUSOR_VK_SPLIT_MIN_SLICE=64 FUSOR_VK_SPLIT_PER_UNIT=4
    [ $T = fp32 ] && run FUSOR_VK_GEMM_BK=32 && run FUSOR_VK_GEMM_BK=8 && run FUSOR_VK_SPLIT_RULE=fill
  done
done
