# Session 15 call 2: A/B of the attention-block fusion in one call: W4 and W7 (fusor systems
# only) with this session's build, then with the build before it (.dev/fusor_old, the stop-34
# main), then again with this build (order effects).
scripts/h200_run.sh $OUT/r none > /dev/null 2>&1
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export XDG_CACHE_HOME=/tmp/fusor_cache
xz -dkf .dev/fusor_old.xz; chmod +x .dev/fusor .dev/fusor_old
for b in fusor fusor_old fusor; do
  echo "== $b"; PYTHONUNBUFFERED=1 timeout 170 python3 bench/side_by_side.py --fusor $PWD/.dev/$b --out $OUT/ab_$b --quick --only W4,W7 --systems fusor-cuda,fusor-vulkan 2>&1 | grep -iE "gpt|mlp|W4|W7" | grep -v "^\s*$" | tail -14
done
