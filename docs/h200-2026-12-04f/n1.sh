# Session 24 call 1: where the M = 64 GEMMs' time goes on NVIDIA's Vulkan driver. Every tiled
# (fp32) and cooperative-matrix (fp16) contraction kernel of GPT-2 2L, the MLP block at batch 64
# and one 64 x 768 x 3072 layer alone, dumped and rewritten by knockout.py (base, nocompute,
# noload, nobar, notail, onestep), run through FUSOR_VK_SOURCE_DIR; fusor bench device medians.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; timeout 150 python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
mkdir -p /tmp/g/g16 /tmp/g/g32
python3 bench/fp16_gemm_model.py --dtype fp16 --plain /tmp/g/g16/model.onnx 64 3072 768 >> $OUT/prep.txt 2>&1
python3 bench/fp16_gemm_model.py --dtype fp32 --plain /tmp/g/g32/model.onnx 64 3072 768 >> $OUT/prep.txt 2>&1
wait; tail -2 $OUT/prep.txt
V="base nocompute noload nobar notail onestep"
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror' | head -1 | sed 's/(p10.*//;s/device time *//')"; }
{
for m in /tmp/g/g16 /tmp/g/g32 /tmp/w/mlp64_fp16 /tmp/g2/fp16 /tmp/w/mlp64_fp32 /tmp/g2/fp32; do
  tag=$(echo $m | tr '/' '_')
  rm -rf /tmp/d$tag; mkdir -p /tmp/d$tag
  FUSOR_NO_DISK_CACHE=1 FUSOR_VK_DUMP_DIR=/tmp/d$tag timeout 60 $fz bench $m --backend vulkan --iters 3 > /dev/null 2>&1
  python3 docs/h200-2026-12-04f/knockout.py /tmp/d$tag /tmp/k$tag | tail -4
  b $m cuda; b $m vulkan
  for v in $V; do b $m vulkan FUSOR_VK_SOURCE_DIR=/tmp/k$tag/$v; done
  b $m vulkan
done
} 2>&1 | tee $OUT/ab.txt
mkdir -p $OUT/src; cp /tmp/d_tmp_g_g16/*.comp $OUT/src/ 2>/dev/null; cp /tmp/d_tmp_g_g32/*.comp $OUT/src/g32_$(ls /tmp/d_tmp_g_g32 | head -1) 2>/dev/null
rm -f $OUT/r/*.json $OUT/r/devices.txt 2>/dev/null
