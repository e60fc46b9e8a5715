#!/usr/bin/env bash
# Red-team round 45: special values across backends. Builds small models of inf / NaN / -0 /
# subnormal / huge fp32 values (special_f32.py), integer extremes of every width
# (special_int.py) and fp16 / bf16 specials (special_half.py), runs each on ref and on the
# backends given (default: cpu vulkan) with `fusor diff`, and prints every model where one
# diverges from ref; then the fp32 transcendentals' ulp per magnitude band.
#   scripts/redteam/round45/run.sh [BACKEND...]   (needs build/venv with onnx: scripts/setup.sh)
set -uo pipefail
cd "$(dirname "$0")/../../.."
py=build/venv/bin/python
backends=("$@"); [ $# -eq 0 ] && backends=(cpu vulkan)
rm -rf /tmp/sv3 /tmp/sv4 /tmp/sv5 /tmp/trig
$py scripts/redteam/round45/special_f32.py && $py scripts/redteam/round45/special_int.py && $py scripts/redteam/round45/special_half.py
for m in /tmp/sv3/* /tmp/sv4/* /tmp/sv5/*; do
  for b in "${backends[@]}"; do
    r=$(timeout 120 build/fusor diff "$m" --backend ref --backend "$b" --rtol 1e-2 2>&1 | grep -E "^no divergence|verdict|rror" | head -1)
    case "$r" in "no divergence"* | *"does not allow"*) ;; *) echo "$(basename "$m") $b: $r" ;; esac
  done
done
mkdir -p /tmp/trig && cp scripts/redteam/round45/transcendental_bands.py /tmp/trig/gen.py && $py /tmp/trig/gen.py
for b in "${backends[@]}"; do
  for op in $(ls /tmp/trig | grep -v gen.py); do
    build/fusor run /tmp/trig/$op --backend "$b" --inputs /tmp/trig/$op/in --out /tmp/trig/$op/out_$b > /dev/null 2>&1
  done
  $py scripts/redteam/round45/transcendental_ulp.py /tmp/trig "$b"
done
