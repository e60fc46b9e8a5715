# Session 47: one entry point per device call. On an H200, issue 12 / 16's side-by-side with the
# IREE bundle (call 1: W4, W6; call 2: W1, W2, W3, W5, W7), through docs/h200-2026-12-06e/job1.sh;
# on any other card the correctness call instead (check.sh).
#   bash docs/h200-2026-12-07b/call.sh side1|side2|check   (after package_h200.sh; .dev/iree.tar.xz)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu ($(date -u +%H:%M:%S))"
case "$1" in
  side1|side2)
    if echo "$gpu" | grep -q H200; then
      [ "$1" = side1 ] && only=W4,W6 || only=W1,W2,W3,W5,W7
      bash docs/h200-2026-12-06e/job1.sh $only
    else
      echo "not an H200: the correctness call instead"; bash docs/h200-2026-12-07b/check.sh
    fi ;;
  check) bash docs/h200-2026-12-07b/check.sh ;;
esac
