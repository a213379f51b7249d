#!/usr/bin/env bash
# Training speed, A/B: two code trees take turns timing the trainer's step
# (benchmarks/training_step_speed.py: random batches and the recipe's sorted
# windows) on one model directory, ROUNDS times, the order swapped every
# round, so that each ratio compares figures from the same minutes.
#
#   benchmarks/training_step_ab.sh MODEL_DIR BEFORE_TREE AFTER_TREE [ROUNDS] [BATCHES]
#
# e.g. git clone -q . ../before && git -C ../before checkout -q HEAD~1, then
#   benchmarks/training_step_ab.sh runs/ab/joey_match ../before . 3 30
# (MODEL_DIR: `python -m seq2seq_attn.train --flagfile=... --max_steps=1`).
# Each side runs its own TREE/benchmarks/training_step_speed.py with TREE on
# PYTHONPATH. Prints every line and, at the end, each side's ms per step
# summed over the rounds, per sort window, and the ratio before / after.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '7p' "$0" | sed 's/^# */usage: /' >&2
  exit 2
fi
model_dir=$(realpath "$1")
before=$(realpath "$2")
after=$(realpath "$3")
rounds=${4:-3}
batches=${5:-30}
python=${PYTHON:-$(cd "$(dirname "$0")/.." && pwd)/.venv/bin/python}
log=$(mktemp)
side() {  # NAME TREE
  (cd "$2" && PYTHONPATH="$2" "$python" benchmarks/training_step_speed.py \
    "$model_dir" "$batches" "$1 $(git -C "$2" rev-parse --short HEAD)") |
    tee -a "$log"
}
echo "== $(date -u +%FT%TZ), $(nproc) CPUs, $rounds rounds of $batches batches"
for round in $(seq "$rounds"); do
  echo "-- round $round, $(date -u +%T)"
  if [ $((round % 2)) = 1 ]; then
    side before "$before"; side after "$after"
  else
    side after "$after"; side before "$before"
  fi
done
echo "-- summed over the rounds, ms per step ($(date -u +%T))"
awk '/ ms\/step/ { side = $1; sub(/:$/, "", $4); ms[side " " $4] += $5; windows[$4] = 1 }
  END { for (w in windows) printf "%s: before %.1f, after %.1f (%.2fx)\n", w,
    ms["before " w], ms["after " w], ms["before " w] / ms["after " w] }' "$log"
rm -f "$log"
