# Session 38, last call: where fp16 GPT-2 2L's time goes per kernel on each backend (the W7 row
# issue 16 misses), `fusor bench --trace` summarized by bench/trace_top.py, and the narrowed
# bindings A/B on the shared CNNs on whatever card this is.
#   bash docs/h100-2026-12-06c/jobp.sh   (after the .dev package)
. scripts/h200_job.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
h200_prep
b() { echo "$1 $2 ${3:-} | $(env ${3:-X=1} timeout 40 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time|rror|^notes' | head -2 | sed 's/(p10.*//;s/device time *//' | grep -oE '[0-9]+ dispatches, [0-9]+ barriers|median [0-9.]+ us' | tr '\n' ' ')"; }
for r in 1 2; do for m in /tmp/shared/models/squeezenet1_1 /tmp/shared/models/mobilenet_v3_small; do
  b $m cuda; b $m vulkan FUSOR_VK_NARROW_BINDINGS=1; b $m vulkan FUSOR_VK_NARROW_BINDINGS=0; done; done 2>&1 | tee $OUT/narrow_ab.txt
wait; tail -1 $OUT/prep.txt
for m in fp16 bf16 fp32; do for be in cuda vulkan; do
  echo "== gpt2 $m $be"; timeout 60 $fz bench /tmp/g2/$m --backend $be --iters 100 --trace $OUT/t.json 2>&1 | grep -E "^(device time|notes)"
  python3 bench/trace_top.py $OUT/t.json --top 30; done; done 2>&1 | tee $OUT/profile.txt
rm -f $OUT/t.json; h200_tidy
