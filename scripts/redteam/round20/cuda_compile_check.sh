#!/bin/bash
# Red-team round 20: compiles every CUDA kernel fusor generates for a model (sm_90, PTX only,
# no GPU needed) with nvcc, e.g. over the folders fuzz.py wrote:
#   for d in OUT/*_*/; do cuda_compile_check.sh $d; cuda_compile_check.sh $d FUSOR_INLINE_DOT=1; done
# Usage: cuda_compile_check.sh MODEL_DIR [ENV=VALUE...]   (FUSOR=path of the binary, default build/fusor)
# Prints NVCC-FAIL / EXPLAIN-FAIL lines for failures and "done DIR N" with the kernel count.
d=$1; shift
fusor=${FUSOR:-build/fusor}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
env "$@" timeout 120 "$fusor" explain "$d" --backend cuda --source cuda > "$out/all.txt" 2>&1 || { echo "EXPLAIN-FAIL $d $(tail -1 "$out/all.txt")"; exit 1; }
awk -v o="$out" '/^\/\/ ---- /{n++; f=sprintf("%s/k%02d.cu", o, n)} n>0{print > f}' "$out/all.txt"
rc=0
for f in "$out"/k*.cu; do
  [ -e "$f" ] || continue
  if ! timeout 120 "${NVCC:-/usr/local/cuda/bin/nvcc}" -arch=sm_90 -ptx -std=c++17 -o /dev/null "$f" > "$f.log" 2>&1; then
    echo "NVCC-FAIL $d $(basename "$f") $(grep -m1 error "$f.log")"; rc=1
  fi
done
echo "done $d $(ls "$out"/k*.cu 2>/dev/null | wc -l)"
exit $rc
