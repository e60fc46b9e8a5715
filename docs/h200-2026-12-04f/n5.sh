# Session 24 call 5: the batch-1 GEMV's partial-sum tree (FZ_SKINNY 1: 64 K groups added in six
# barrier-separated rounds): without it (gvnored, wrong results: its upper bound) and as a 4-ary
# tree (gvred4, three rounds); MLP b1 fp32 / fp16 and one 1 x 4096 x 1024 layer, two rounds.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(timeout 150 python3 docs/h200-2026-12-04b/prep.py > $OUT/prep.txt 2>&1) &
mkdir -p /tmp/g/gv; python3 bench/fp16_gemm_model.py --dtype fp32 /tmp/g/gv/model.onnx 1 4096 1024 >> $OUT/prep.txt 2>&1
wait; tail -1 $OUT/prep.txt
for m in /tmp/g/gv /tmp/w/mlp1_fp32 /tmp/w/mlp1_fp16; do
  tag=$(echo $m | tr '/' '_'); mkdir -p /tmp/d$tag
  FUSOR_NO_DISK_CACHE=1 FUSOR_VK_DUMP_DIR=/tmp/d$tag timeout 60 $fz bench $m --backend vulkan --iters 3 > /dev/null 2>&1
  python3 docs/h200-2026-12-04f/variants.py /tmp/d$tag /tmp/v$tag | tail -1
done > $OUT/variants.txt 2>&1
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror' | head -1 | sed 's/(p10.*//;s/device time *//')"; }
{
for r in 1 2; do
  for m in /tmp/g/gv /tmp/w/mlp1_fp32 /tmp/w/mlp1_fp16; do
    tag=$(echo $m | tr '/' '_')
    b $m cuda; b $m vulkan; b $m vulkan FUSOR_VK_SOURCE_DIR=/tmp/v$tag/gvnored; b $m vulkan FUSOR_VK_SOURCE_DIR=/tmp/v$tag/gvred4
  done
done
} 2>&1 | tee $OUT/ab.txt
echo "diff mlp1 fp32 gvred4: $(FUSOR_VK_SOURCE_DIR=/tmp/v_tmp_w_mlp1_fp32/gvred4 timeout 60 $fz diff /tmp/w/mlp1_fp32 --backend cuda --backend vulkan 2>&1 | grep -E '^(first|no )|rror' | head -1)" | tee -a $OUT/ab.txt
rm -f $OUT/r/*.json $OUT/r/devices.txt 2>/dev/null
