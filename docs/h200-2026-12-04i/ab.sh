# Session 27's job (the H200): the spread split-K hand-off (gemm.glsl / gemm_coopmat.glsl
# FZ_SPLIT_SPREAD, one counter per chunk of a tile) against the last-arrival hand-off
# (FUSOR_VK_SPLIT_HANDOFF=last), in one binary.
#   ab.sh ROUNDS NODE(1|0) TRACE(1|0)
# GPU gtests of the split-K paths (each compares the two hand-offs bit for bit), the shared
# models and their fp16 / bf16 versions on both GPUs, the ONNX node suite (NODE=1) in the
# background; then ROUNDS rounds of fusor bench: GPT-2 2L fp32 / fp16 / bf16, a 2-layer
# BERT-base, the MLP block at batch 64 (fp32 / fp16 / bf16) and 1 (no split-K: the control),
# fusor-cuda once and fusor-vulkan with each hand-off; per-kernel Vulkan traces of GPT-2 fp32
# with each (TRACE=1).
rounds=${1:-3}; node=${2:-1}; trace=${3:-1}
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
[ "$node" = 1 ] && (SHARD_TIMEOUT=150 timeout 330 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
(timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; timeout 150 python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1; timeout 120 python3 docs/h200-2026-12-04h/prep_bert.py >> $OUT/prep.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 240 .dev/fusor_tests --gtest_filter="VulkanSplitK*:VulkanCoopmatGpu*:VulkanGemm*:VulkanConvSplitK*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:VulkanBigBuffers*" 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|Failure|differ' > $OUT/gtest.txt
tail -4 $OUT/gtest.txt
for be in cuda vulkan; do echo "== $be"; timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_fp16 --backend $be --rtol 1e-2 --atol 2e-3 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_bf16 --backend $be --rtol 5e-2 --atol 2e-2 2>&1 | tail -1; done 2>&1 | tee $OUT/conform.txt
wait
[ "$node" = 1 ] && { cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20 | tee $OUT/node_result.txt; cat $OUT/node/shard_errors.txt 2>/dev/null | head; }
b() { echo "$1 $2 $3 | $(FUSOR_VK_SPLIT_HANDOFF=$3 timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|^kernels per run|^notes' | sed 's/(p10.*//;s/device time *//;s/kernels per run */k=/;s/notes *//' | tr '\n' ' ')"; }
for r in $(seq $rounds); do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/bert2 /tmp/w/mlp64_fp32 /tmp/w/mlp64_fp16 /tmp/w/mlp64_bf16 /tmp/w/mlp1_fp32; do b $m cuda spread; b $m vulkan last; b $m vulkan spread; done; done 2>&1 | tee $OUT/bench_ab.txt
if [ "$trace" = 1 ]; then for h in last spread; do FUSOR_VK_SPLIT_HANDOFF=$h timeout 60 $fz bench /tmp/g2/fp32 --backend vulkan --trace $OUT/t.json --iters 20 > /dev/null 2>&1; echo "== $h"; python3 bench/trace_top.py $OUT/t.json --top 12 2>&1; rm -f $OUT/t.json; done > $OUT/top_gpt2_fp32_vulkan.txt; fi
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_* $OUT/r/*.json 2>/dev/null
