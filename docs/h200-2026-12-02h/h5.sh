# Session 15 call 5 (the final build: operand prologues for fp32 operands only, the Vulkan int64
# sign fix): h4.sh with one round of the A/B (call 4 ran two).
ROUNDS=1 bash "$(dirname "$0")/h4.sh"
