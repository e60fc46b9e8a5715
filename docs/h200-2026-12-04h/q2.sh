# Session 26 call 2: call 1 plus a lookup read by several kernels stored once by its first reader.
bash docs/h200-2026-12-04h/ab.sh 3 /tmp/g2/fp32 gpt2_fp32 20
