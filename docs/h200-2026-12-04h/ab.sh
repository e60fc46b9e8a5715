# Session 26's A/B job (calls 1-4 ran it; the q*.sh files name each call's arguments):
#   ab.sh ROUNDS TRACE_MODEL TRACE_TAG TOP
# Gather fused into its readers (gathered loads). ONNX node suite on ref / cuda / vulkan; GPU
# gtests (GatherFusion with its NVRTC / SPIR-V kernels run, models, half types, row kernels,
# big buffers); the shared models and their fp16 / bf16 versions on both GPUs; then the A/B:
# FUSOR_GATHER_FUSION=0 (the lookup's own kernel, as before) against the default, in one
# binary, ROUNDS rounds, GPT-2 2L fp32 / fp16 / bf16, a 2-layer BERT-base, and the MLP block
# (no Gather: the control); per-kernel Vulkan traces of TRACE_MODEL into top_TRACE_TAG_vulkan.txt.
rounds=${1:-3}; trace_model=${2:-/tmp/bert2}; trace_tag=${3:-bert2}; top=${4:-20}
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(SHARD_TIMEOUT=150 timeout 330 scripts/h200_run.sh $OUT/node node > $OUT/node_step.txt 2>&1) &
(timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; timeout 150 python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1; timeout 120 python3 docs/h200-2026-12-04h/prep_bert.py >> $OUT/prep.txt 2>&1) &
FUSOR_VK_VALIDATION=0 timeout 300 .dev/fusor_tests --gtest_filter="GatherFusion*:GatherOfReshape*:Cuda.ModelsPass*:Vulkan.ModelsPass*:Half*:RowProduct*:InlineDot*:VulkanBigBuffers*:ContribOps*:Sequence.*:DataDependent.*" 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]|PASSED|FAILED|Failure' > $OUT/gtest.txt
tail -4 $OUT/gtest.txt
for be in cuda vulkan; do echo "== $be"; timeout 60 $fz conform /tmp/shared/models/* --backend $be --atol 1e-6 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_fp16 --backend $be --rtol 1e-2 --atol 2e-3 2>&1 | tail -1; timeout 60 $fz conform .dev/half/*_bf16 --backend $be --rtol 5e-2 --atol 2e-2 2>&1 | tail -1; done 2>&1 | tee $OUT/conform.txt
wait
cat $OUT/node/node_counts.txt $OUT/node/node_summary.txt 2>/dev/null | head -20 | tee $OUT/node_result.txt; cat $OUT/node/shard_errors.txt 2>/dev/null | head
for be in cuda vulkan; do timeout 60 $fz diff /tmp/bert2/model.onnx --backend ref --backend $be 2>&1 | head -8; done > $OUT/bert_diff.txt 2>&1
b() { echo "$1 $2 gather=$3 | $(FUSOR_GATHER_FUSION=$3 timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|^kernels per run|^notes' | sed 's/(p10.*//;s/device time *//;s/kernels per run */k=/;s/notes *//' | tr '\n' ' ')"; }
for r in $(seq $rounds); do for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/bert2 /tmp/w/mlp64_fp32 /tmp/w/mlp1_fp32; do for g in 0 1; do b $m cuda $g; b $m vulkan $g; done; done; done 2>&1 | tee $OUT/bench_ab.txt
for g in 0 1; do FUSOR_GATHER_FUSION=$g timeout 60 $fz bench $trace_model --backend vulkan --trace $OUT/t.json --iters 20 > /dev/null 2>&1; echo "== gather=$g"; python3 bench/trace_top.py $OUT/t.json --top $top 2>&1; rm -f $OUT/t.json; done > $OUT/top_${trace_tag}_vulkan.txt
rm -f $OUT/*/devices.txt $OUT/node/node.txt $OUT/node/shard_* $OUT/r/*.json 2>/dev/null
