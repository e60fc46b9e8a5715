#!/bin/bash
# usage: runone.sh MODEL_DIR [backends...]; appends to /tmp/rt24/logs/results.tsv
d=$1; shift; bs=${@:-ref cpu vulkan}
export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
n=$(basename $d)
for b in $bs; do
  s=$(date +%s.%N)
  timeout -s KILL ${TMO:-300} nice -n 10 /tmp/rt24/fusor run $d --backend $b > /tmp/rt24/logs/$n.$b.out 2>/tmp/rt24/logs/$n.$b.err
  rc=$?; e=$(date +%s.%N); t=$(echo "$e - $s" | bc)
  nl=$(wc -l < /tmp/rt24/logs/$n.$b.err)
  msg=$(grep -v '^note:' /tmp/rt24/logs/$n.$b.err | tail -1 | cut -c1-250)
  if [ $rc = 0 ] || grep -q "^check" /tmp/rt24/logs/$n.$b.out; then np=$(grep -c ": PASS" /tmp/rt24/logs/$n.$b.out); nf=$(grep -c ": FAIL" /tmp/rt24/logs/$n.$b.out); msg="PASS=$np FAIL=$nf $(grep -o 'max abs [0-9.e+-]*' /tmp/rt24/logs/$n.$b.out | sort -g -k3 | tail -1) $(grep -m1 ': FAIL' /tmp/rt24/logs/$n.$b.out | cut -c1-300) $msg"; fi
  printf "%s\t%s\trc=%s\t%.1fs\tnl=%s\t%s\n" $n $b $rc $t $nl "$msg" | tee -a /tmp/rt24/logs/results.tsv
done
