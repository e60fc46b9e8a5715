# Session 26 call 3: call 2 plus the lookup counted as one stored value in the chain-cut estimates.
bash docs/h200-2026-12-04h/ab.sh 3 /tmp/bert2 bert2 20
