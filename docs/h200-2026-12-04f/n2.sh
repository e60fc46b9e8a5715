# Session 24 call 2: hand-edited inner loops of the M = 64 GEMMs (variants.py: hoist, pipe on the
# fp32 tiled kernels; cmfirst, cm2acc on the fp16 cooperative-matrix ones), tile sizes as
# literals (FUSOR_VK_GEMM_LITERAL=1, alone and with hoist), more cooperative-matrix split-K
# slices (FUSOR_VK_COOPMAT_SPLIT_K=6 / 12). fusor bench device medians, two rounds.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; timeout 150 python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
mkdir -p /tmp/g/g16 /tmp/g/g32
python3 bench/fp16_gemm_model.py --dtype fp16 --plain /tmp/g/g16/model.onnx 64 3072 768 >> $OUT/prep.txt 2>&1
python3 bench/fp16_gemm_model.py --dtype fp32 --plain /tmp/g/g32/model.onnx 64 3072 768 >> $OUT/prep.txt 2>&1
wait; tail -1 $OUT/prep.txt
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror' | head -1 | sed 's/(p10.*//;s/device time *//')"; }
for m in /tmp/g/g16 /tmp/g/g32 /tmp/w/mlp64_fp16 /tmp/g2/fp16 /tmp/w/mlp64_fp32 /tmp/g2/fp32; do
  tag=$(echo $m | tr '/' '_'); mkdir -p /tmp/d$tag /tmp/dl$tag
  FUSOR_NO_DISK_CACHE=1 FUSOR_VK_DUMP_DIR=/tmp/d$tag timeout 60 $fz bench $m --backend vulkan --iters 3 > /dev/null 2>&1
  FUSOR_VK_GEMM_LITERAL=1 FUSOR_NO_DISK_CACHE=1 FUSOR_VK_DUMP_DIR=/tmp/dl$tag timeout 60 $fz bench $m --backend vulkan --iters 3 > /dev/null 2>&1
  python3 docs/h200-2026-12-04f/variants.py /tmp/d$tag /tmp/v$tag | tail -1
  python3 docs/h200-2026-12-04f/variants.py /tmp/dl$tag /tmp/vl$tag | tail -1
done > $OUT/variants.txt 2>&1
{
for r in 1 2; do
  for m in /tmp/g/g32 /tmp/w/mlp64_fp32 /tmp/g2/fp32; do
    tag=$(echo $m | tr '/' '_')
    b $m cuda; b $m vulkan
    for v in hoist pipe; do b $m vulkan FUSOR_VK_SOURCE_DIR=/tmp/v$tag/$v; done
    b $m vulkan FUSOR_VK_GEMM_LITERAL=1; b $m vulkan FUSOR_VK_SOURCE_DIR=/tmp/vl$tag/hoist
  done
  for m in /tmp/g/g16 /tmp/w/mlp64_fp16 /tmp/g2/fp16; do
    tag=$(echo $m | tr '/' '_')
    b $m cuda; b $m vulkan
    for v in cmfirst cm2acc; do b $m vulkan FUSOR_VK_SOURCE_DIR=/tmp/v$tag/$v; done
    b $m vulkan FUSOR_VK_COOPMAT_SPLIT_K=6; b $m vulkan FUSOR_VK_COOPMAT_SPLIT_K=12
  done
done
} 2>&1 | tee $OUT/ab.txt
for v in hoist pipe; do echo "diff fp32 $v: $(FUSOR_VK_SOURCE_DIR=/tmp/v_tmp_g2_fp32/$v timeout 60 $fz diff /tmp/g2/fp32 --backend cuda --backend vulkan --rtol 1e-3 --atol 1e-5 2>&1 | grep -E '^(first|no )|rror' | head -1)"; done | tee -a $OUT/ab.txt
for v in cmfirst cm2acc; do echo "diff fp16 $v: $(FUSOR_VK_SOURCE_DIR=/tmp/v_tmp_g2_fp16/$v timeout 60 $fz diff /tmp/g2/fp16 --backend cuda --backend vulkan 2>&1 | grep -E '^(first|no )|rror' | head -1)"; done | tee -a $OUT/ab.txt
for v in "" hoist; do echo "stats fp32 $v: $(env ${v:+FUSOR_VK_SOURCE_DIR=/tmp/v_tmp_g_g32/$v} FUSOR_NO_DISK_CACHE=1 FUSOR_VK_PIPELINE_STATS=1 timeout 60 $fz bench /tmp/g/g32 --backend vulkan --iters 3 2>&1 | grep -o 'Register Count=[0-9]*\|Binary Size=[0-9]*' | head -2 | tr '\n' ' ')"; done | tee -a $OUT/ab.txt
rm -f $OUT/r/*.json $OUT/r/devices.txt 2>/dev/null
