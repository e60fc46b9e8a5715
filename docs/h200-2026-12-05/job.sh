# The thirty-second session's job for the H200 (none was lent that session). Run first in the
# next session that has one, after FUSOR_PACKAGE_BUILD=build scripts/package_h200.sh and the
# half models (see docs/benchmarks.md):   bash docs/h200-2026-12-05/job.sh
# 1. Session 29's job (docs/h200-2026-12-04k/ab3.sh 1): every Numerics / GpuOpaqueOps test in
#    full (the scatter kernels, double CumSum, the serial bound, big Resize tables), the node
#    suite, the shared models fp32 / fp16 / bf16 on both GPUs, and the sums / Pow A/Bs.
# 2. The serial-work bound measured: each model of prep_serial.py on cuda and vulkan as fusor
#    runs it (host past the bound) and with FUSOR_SERIAL_BOUND=0 (the GPU kernel): the bound
#    (kMaxLaneCost = 2^15) is right where the host wins past it and the GPU below.
. docs/h200-2026-12-04k/ab3.sh 1  # sourced: its h200_job.sh helpers stay defined
GTEST_TIMEOUT=120 h200_gtest 'TypeConstraints.*:Hostile.HugeTrip*:HostileCli.Outputs*'
timeout 120 python3 docs/h200-2026-12-05/prep_serial.py
for m in /tmp/serial/*; do for be in cuda vulkan; do for bound in default 0; do
  echo "$(basename $m) $be bound=$bound | $(env FUSOR_SERIAL_BOUND=$([ $bound = 0 ] && echo 0) timeout 60 .dev/fusor bench $m --backend $be --iters 50 --warmup 5 2>&1 | grep -E '^host time|^device time|^graph break' | sed 's/(p10.*//' | cut -c1-120 | tr '\n' ' ')"
done; done; done 2>&1 | tee $OUT/serial_bound.txt
