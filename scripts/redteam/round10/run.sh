#!/bin/bash
# Round-10 red team: regenerate every case under $RT10 (default /tmp/rt10/models) and check it on
# ref, cpu and vulkan against onnxruntime (lib10.py prints one TSV line per case / backend problem).
set -e
cd "$(dirname "$0")"; P=${PYTHON:-/work/zoo_venv/bin/python}
for g in gen_struct gen_torch gen_hf gen_quant gen_resize gen_det gen_rnn_convt gen_dynamic gen_torch_half gen_cli; do $P $g.py; done
$P lib10.py ${RT10:-/tmp/rt10}/models/* > ${RT10:-/tmp/rt10}/all.res
# fp16 / bf16 cases want looser tolerances: see the loops in the report (rtol = atol = 2e-2 / 0.1)
