# Session 22 call 3: 32 x 32 tiles for fp32 matmuls whose K is too short to split the blocked
# 64 x 64 grid over half the units (GPT-2's 64 x 768 x 768), A/B in one binary
# (FUSOR_VK_GEMM_SMALL_GRID=0 the previous choice), two rounds, per-kernel traces; W2 (Softmax /
# LayerNormalization against the copy) from the side-by-side.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
for v in FUSOR_VK_GEMM_SMALL_GRID=0 X=1; do echo "== $v"; env $v timeout 90 $fz conform /tmp/shared/models/* --backend vulkan --atol 1e-6 2>&1 | tail -1; done 2>&1 | tee $OUT/conform.txt
wait; tail -1 $OUT/prep.txt
b() { echo "$1 $2 $3 | $(env $3 timeout 60 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2 3; do for m in /tmp/g2/fp32 /tmp/w/mlp64_fp32; do b $m cuda X=1; b $m vulkan FUSOR_VK_GEMM_SMALL_GRID=0; b $m vulkan X=1; done; done 2>&1 | tee $OUT/ab.txt
for v in FUSOR_VK_GEMM_SMALL_GRID=0 X=1; do env $v timeout 60 $fz bench /tmp/g2/fp32 --backend vulkan --trace $OUT/t.json --iters 20 > /dev/null 2>&1; echo "== $v"; python3 bench/trace_top.py $OUT/t.json --top 30 2>&1; rm -f $OUT/t.json; done > $OUT/top_gpt2_fp32_vulkan.txt
echo "$(timeout 60 $fz diff /tmp/g2/fp32 --backend cuda --backend vulkan --rtol 1e-3 --atol 1e-5 2>&1 | grep -E '^(first|no )' | head -1)" | tee $OUT/diff.txt
SIDE_ARGS='--quick --only W2' timeout 300 scripts/h200_run.sh $OUT/side side > $OUT/side_log.txt 2>&1; grep -E "W2|copy" $OUT/side_log.txt | tail -12
rm -f $OUT/*/devices.txt $OUT/r/*.json 2>/dev/null
