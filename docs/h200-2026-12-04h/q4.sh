# Session 26 call 4: the final build: call 3 plus the lookup rule after the cost rule (BERT keeps its layer plans).
bash docs/h200-2026-12-04h/ab.sh 3 /tmp/bert2 bert2 20
