# Session 42, call 2 (same lease as jobc.sh): round 54's cliffs on the GPUs, the previous build
# (.dev/fusor_old, main at a8a8fbb) against this one, device time.
#   bash docs/h100-2026-12-06g/jobd.sh
for f in fusor fusor_old; do xz -dkf .dev/$f.xz && chmod +x .dev/$f; done
python3 docs/h100-2026-12-06g/cliffs.py /tmp/cl > /dev/null 2>&1
export LD_LIBRARY_PATH=$PWD/.dev/lib:/usr/local/cuda/lib64:$LD_LIBRARY_PATH VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
for m in bmm_3x3 bmm_2x3 resize_nearest resize_linear; do for be in cuda vulkan; do for b in fusor_old fusor; do
  printf "%-15s %-7s %-10s " $m $be $b; timeout 60 .dev/$b bench /tmp/cl/$m --backend $be 2>&1 | grep -E "device time|error" | cut -c1-90
done; done; done 2>&1 | tee $OUT/cliffs_ab.txt
for m in bmm_3x3 resize_linear; do for be in cuda vulkan; do timeout 60 .dev/fusor diff /tmp/cl/$m --backend ref --backend $be 2>&1 | tail -1; done; done | tee $OUT/cliffs_diff.txt
