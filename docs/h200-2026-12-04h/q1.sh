# Session 26 call 1: Gather fused into its readers (gathered loads), every reader looking rows up itself.
bash docs/h200-2026-12-04h/ab.sh 2 /tmp/g2/fp32 gpt2_fp32 6
