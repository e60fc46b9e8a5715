# Session 34, call 2: PDL with the implicit trigger (a kernel's blocks' exits launch its
# dependent; FZ_GRID_DEPENDENCY is griddepcontrol.wait alone) and no GEMV prefetch: the
# correctness checks of call 1 again and the FUSOR_CUDA_PDL=0 A/B, three interleaved rounds.
#   bash docs/h200-2026-12-05c/job2.sh   (after package_h200.sh)
. scripts/h200_job.sh
# the node suite ran in call 1 (PDL with the early trigger); left out here to keep the call short
h200_prep; prep=$!
GTEST_TIMEOUT=240 h200_gtest 'Cuda*:Numerics.*:Half*:SessionCache*:-*NodeSuite*'
grep -E "differ|Failure" -A3 $OUT/gtest.txt | cut -c1-300 | head -30
wait $prep
$fz bench /tmp/g2/fp32 --backend cuda --iters 10 2>&1 | grep -E "^notes" | tee $OUT/notes.txt
b() { echo "$1 $2 | $(env $2 timeout 60 $fz bench $1 --backend cuda --iters 500 --warmup 50 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//' | tr '\n' ' ')"; }
for r in 1 2; do for m in /tmp/w/mlp1_fp32 /tmp/w/mlp1_fp16 /tmp/w/mlp1_bf16 /tmp/w/mlp64_fp32 /tmp/w/mlp64_fp16 /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/shared/models/squeezenet1_1 /tmp/shared/models/mobilenet_v3_small /tmp/shared/models/gpt2_tiny; do
  for k in X=0 FUSOR_CUDA_PDL=0; do b $m "$k"; done; done; done 2>&1 | tee $OUT/pdl_ab.txt
h200_conform
wait

h200_tidy
