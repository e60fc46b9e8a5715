# Session 27 call 2 (the H200): fewer dependent dispatches in the half-precision attention block,
# with the existing knobs, in one binary. fp16 GPT-2 2L's default plan stores Q (scaled) and K
# ([D, L]) in two loop kernels before the attention row kernel; with fp16 operand prologues
# (FUSOR_VK_HALF_PROLOGUES=all) and inline scores for any key layout (FUSOR_INLINE_DOT=1) the
# block is one kernel after the QKV matmul. Also: bf16 / fp32 with inline scores forced, fp16 /
# bf16 without the cooperative-matrix split-K. ROUNDS rounds of fusor bench; the half models'
# conformance under each variant; per-kernel Vulkan traces of fp16 GPT-2 (default, variant).
#   ab2.sh ROUNDS
rounds=${1:-3}
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
timeout 200 python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1
V1="FUSOR_VK_HALF_PROLOGUES=all FUSOR_INLINE_DOT=1"
for v in "X=0" "$V1" "FUSOR_INLINE_DOT=1" "FUSOR_VK_HALF_PROLOGUES=all"; do echo "== $v"; for d in fp16 bf16; do env $v timeout 60 $fz conform .dev/half/*_$d --backend vulkan --rtol $([ $d = fp16 ] && echo 1e-2 || echo 5e-2) --atol $([ $d = fp16 ] && echo 2e-3 || echo 2e-2) 2>&1 | tail -1; done; done > $OUT/conform.txt 2>&1
cat $OUT/conform.txt
b() { m=$1; be=$2; shift 2; echo "$m $be $* | $(env "$@" timeout 40 $fz bench $m --backend $be --iters 300 --warmup 30 2>&1 | grep -E '^device time|^kernels per run|^notes' | sed 's/(p10.*//;s/device time *//;s/kernels per run */k=/;s/notes *//;s/CUDA context held (FUSOR_VK_HOLD_CUDA_CONTEXT)//' | tr '\n' ' ')"; }
for r in $(seq $rounds); do
  b /tmp/g2/fp16 cuda X=0; b /tmp/g2/fp16 vulkan X=0; b /tmp/g2/fp16 vulkan $V1; b /tmp/g2/fp16 vulkan FUSOR_INLINE_DOT=1; b /tmp/g2/fp16 vulkan FUSOR_VK_HALF_PROLOGUES=all; b /tmp/g2/fp16 vulkan FUSOR_VK_COOPMAT_SPLIT_K=0
  b /tmp/g2/bf16 cuda X=0; b /tmp/g2/bf16 vulkan X=0; b /tmp/g2/bf16 vulkan FUSOR_INLINE_DOT=1; b /tmp/g2/bf16 vulkan FUSOR_VK_COOPMAT_SPLIT_K=0
  b /tmp/g2/fp32 cuda X=0; b /tmp/g2/fp32 vulkan X=0; b /tmp/g2/fp32 vulkan FUSOR_INLINE_DOT=1
done 2>&1 | tee $OUT/bench_ab.txt
for v in "X=0" "$V1"; do env $v timeout 60 $fz bench /tmp/g2/fp16 --backend vulkan --trace $OUT/t.json --iters 20 > /dev/null 2>&1; echo "== $v"; python3 bench/trace_top.py $OUT/t.json --top 20 2>&1; rm -f $OUT/t.json; done > $OUT/top_gpt2_fp16_vulkan.txt
rm -f $OUT/*/devices.txt $OUT/r/*.json 2>/dev/null
