#!/bin/bash
# Runs every model folder given through `fusor run` on each backend, one TSV line per run:
#   name  backend  exit-status  seconds  nl=<stderr lines>  last stderr line (or OK + output)
# A run is healthy when it exits 0, or exits 2 with one stderr line (a fusor::Error); anything
# else (a signal, 124/137 from the 60 s / 6 GiB limits, several lines) is a fault to look at.
# usage: scripts/redteam/run_all.sh OUT.tsv "ref cpu vulkan" DIR/models/* ...
out=$1; shift; bks=$1; shift
FUSOR=${FUSOR:-$(dirname "$0")/../../build/fusor}
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
: > "$out"
for d in "$@"; do
  for b in $bks; do
    s=$(date +%s.%N)
    timeout -s KILL 60 prlimit --as=$((6*1024*1024*1024)) "$FUSOR" run "$d" --backend "$b" > "$out.last.out" 2> "$out.last.err"
    rc=$?
    e=$(echo "$(date +%s.%N) - $s" | bc)
    nl=$(wc -l < "$out.last.err")
    msg=$(tail -1 "$out.last.err" | cut -c1-220)
    [ $rc = 0 ] && msg="OK $(head -c 150 "$out.last.out" | tr '\n' ' ')"
    printf "%s\t%s\t%s\t%.1fs\tnl=%s\t%s\n" "$(basename "$d")" "$b" $rc "$e" "$nl" "$msg" >> "$out"
  done
done
rm -f "$out.last.out" "$out.last.err"
