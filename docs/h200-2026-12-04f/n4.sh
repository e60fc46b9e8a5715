# Session 24 call 4: the fp32 tiled GEMMs with each warp on 8 x 4 of the 16 x 16 threads
# (variants.py swz: two shared-memory wavefronts per k instead of three; same bits), and the
# 64 x 128 tiles of 4 x 8 blocks (FUSOR_VK_GEMM_TILE=8x8, K slices of 16 and 32), two rounds.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; timeout 150 python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
mkdir -p /tmp/g/g32; python3 bench/fp16_gemm_model.py --dtype fp32 --plain /tmp/g/g32/model.onnx 64 3072 768 >> $OUT/prep.txt 2>&1
wait; tail -1 $OUT/prep.txt
for m in /tmp/g/g32 /tmp/w/mlp64_fp32 /tmp/g2/fp32; do
  tag=$(echo $m | tr '/' '_'); mkdir -p /tmp/d$tag
  FUSOR_NO_DISK_CACHE=1 FUSOR_VK_DUMP_DIR=/tmp/d$tag timeout 60 $fz bench $m --backend vulkan --iters 3 > /dev/null 2>&1
  python3 docs/h200-2026-12-04f/variants.py /tmp/d$tag /tmp/v$tag | tail -1
done > $OUT/variants.txt 2>&1
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror' | head -1 | sed 's/(p10.*//;s/device time *//')"; }
{
for r in 1 2; do
  for m in /tmp/g/g32 /tmp/w/mlp64_fp32 /tmp/g2/fp32; do
    tag=$(echo $m | tr '/' '_')
    b $m cuda; b $m vulkan; b $m vulkan FUSOR_VK_SOURCE_DIR=/tmp/v$tag/swz
    b $m vulkan FUSOR_VK_GEMM_TILE=8x8; b $m vulkan "FUSOR_VK_GEMM_TILE=8x8 FUSOR_VK_GEMM_BK=32"
  done
done
} 2>&1 | tee $OUT/ab.txt
echo "diff fp32 swz: $(FUSOR_VK_SOURCE_DIR=/tmp/v_tmp_g2_fp32/swz timeout 60 $fz diff /tmp/g2/fp32 --backend cuda --backend vulkan --rtol 1e-3 --atol 1e-5 2>&1 | grep -E '^(first|no )|rror' | head -1)" | tee -a $OUT/ab.txt
for v in "" swz; do echo "stats $v: $(env ${v:+FUSOR_VK_SOURCE_DIR=/tmp/v_tmp_g_g32/$v} FUSOR_NO_DISK_CACHE=1 FUSOR_VK_PIPELINE_STATS=1 timeout 60 $fz bench /tmp/g/g32 --backend vulkan --iters 3 2>&1 | grep -o 'Register Count=[0-9]*\|Binary Size=[0-9]*' | head -2 | tr '\n' ' ')"; done | tee -a $OUT/ab.txt
rm -f $OUT/r/*.json $OUT/r/devices.txt 2>/dev/null
