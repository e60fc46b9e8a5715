#!/bin/bash
# run.sh NAME... : runs each model $NUMRT/models/NAME on ref, cpu and vulkan (lavapipe) and
# writes $NUMRT/out/NAME/<backend>/output_K.pb, <backend>.log and <backend>.rc.
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
D=${NUMRT:-/tmp/numrt}
F=${FUSOR:-$(dirname "$0")/../../../build/fusor}
for n in "$@"; do
  for b in ${BACKENDS:-ref cpu vulkan}; do
    o=$D/out/$n/$b; rm -rf $o; mkdir -p $o
    timeout 120 $F run $D/models/$n --backend $b --out $o > $o.log 2>&1; echo $? > $o.rc
  done
done
