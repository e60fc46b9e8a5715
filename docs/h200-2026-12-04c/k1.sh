# Session 21 call 1: dependencies as in-shader waits (FUSOR_VK_SYNC=flags, vk_sync.h) against
# pipeline barriers, A/B in one binary on W4's GPT-2 2L and MLP (fp32 / fp16 / bf16), two
# rounds; then correctness with flags: the shared models (20 repeats, races would show as
# sporadic failures), their fp16 / bf16 versions, GPT-2 2L against cuda.
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1; chmod +x .dev/fusor .dev/fusor_tests
[ -d /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH XDG_CACHE_HOME=/tmp/fusor_cache
fz=$PWD/.dev/fusor
(python3 bench/export_gpt2_torch.py /tmp/g2 > $OUT/prep.txt 2>&1; python3 docs/h200-2026-12-04b/prep.py >> $OUT/prep.txt 2>&1) &
# Smoke first: a hang here must not eat the call.
for s in barriers flags; do echo "== $s"; FUSOR_VK_SYNC=$s timeout 60 $fz conform /tmp/shared/models/* --backend vulkan --atol 1e-6 2>&1 | tail -5; done | tee $OUT/smoke.txt
wait; tail -2 $OUT/prep.txt
for m in /tmp/g2/fp32 /tmp/w/mlp1_fp32; do echo "$m: $(FUSOR_VK_SYNC=flags timeout 60 $fz bench $m --backend vulkan --iters 5 2>&1 | grep -E '^notes' | cut -c1-300)"; done
b() { echo "$1 $2 $3 | $(env $3 timeout 60 $fz bench $1 --backend $2 --iters 300 --warmup 30 2>&1 | grep -E '^device time' | sed 's/(p10.*//;s/device time *//')"; }
for r in 1 2; do
  for m in /tmp/g2/fp32 /tmp/g2/fp16 /tmp/g2/bf16 /tmp/w/mlp64_fp32 /tmp/w/mlp64_fp16 /tmp/w/mlp64_bf16 /tmp/w/mlp1_fp32 /tmp/w/mlp1_fp16; do
    b $m cuda X=1; b $m vulkan FUSOR_VK_SYNC=barriers; b $m vulkan FUSOR_VK_SYNC=flags
  done
done 2>&1 | tee $OUT/ab.txt
for m in fp32 fp16; do FUSOR_VK_SYNC=flags timeout 60 $fz bench /tmp/g2/$m --backend vulkan --trace $OUT/trace_$m.json --iters 20 > /dev/null 2>&1; python3 bench/trace_top.py $OUT/trace_$m.json > $OUT/top_gpt2_${m}_flags.txt 2>&1; rm -f $OUT/trace_$m.json; done
# Correctness with flags (the default on NVIDIA now): repeats catch races.
for i in $(seq 1 20); do FUSOR_VK_SYNC=flags timeout 60 $fz conform /tmp/shared/models/* .dev/half/*_fp16 --backend vulkan --rtol 1e-2 --atol 2e-3 2>&1 | tail -1; done | sort | uniq -c | tee $OUT/repeat.txt
FUSOR_VK_SYNC=flags timeout 60 $fz conform .dev/half/*_bf16 --backend vulkan --rtol 5e-2 --atol 2e-2 2>&1 | tail -1 | tee -a $OUT/repeat.txt
for m in /tmp/g2/fp32 /tmp/g2/fp16; do echo "$m $(FUSOR_VK_SYNC=flags timeout 60 $fz diff $m --backend cuda --backend vulkan 2>&1 | tail -2 | tr '\n' ' ')"; done | tee -a $OUT/repeat.txt
rm -f $OUT/*/devices.txt
