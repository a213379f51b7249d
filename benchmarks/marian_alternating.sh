#!/usr/bin/env bash
# Training speed against Marian (pymarian 1.12.42, C++), alternating: its
# RNNsearch-like `s2s` model trained for UPDATES updates by
# ../shared/anchors/marian_side_by_side.sh, then our RNNsearch of the same
# sizes timed on as many batches by benchmarks/training_step_speed.py,
# ROUNDS times, so that each ratio compares the same minutes.
#
#   benchmarks/marian_alternating.sh [DIM] [UPDATES] [ROUNDS]
#
# DIM (default 256) is Marian's --dim-rnn, one GRU size for each encoder
# direction and the decoder; ours gets --encoder_units, --hidden_units,
# --attention_units and --maxout_units of DIM on joey_match's recipe
# (configs/multi30k/joey_match.flags: Multi30k tok, word vocabularies of
# the words seen twice, embeddings of 256, batches of 64 in sorted windows
# of 20, Adam at 3e-4, dropout 0.3), as Marian's script sets its own. Both
# figures are target tokens (with </s>) per second of training once the
# first batches are past: Marian's "target tok/s, after 1st interval",
# ours training_step_speed.py's (3 batches to trace and warm up, then
# UPDATES - 50 timed, optimizer included). Marian trains with 2 threads
# (--cpu-threads 2 --sync-sgd), ours with TensorFlow's default pools.
# Everything goes to runs/marian/; the log is runs/marian/alternating.log.
set -euo pipefail
cd "$(dirname "$0")/.."
dim=${1:-256}
updates=${2:-200}
rounds=${3:-2}
if [ "$updates" -le 50 ]; then
  echo "UPDATES must be over 50: Marian's first 50 and our first batches" \
    "are not timed" >&2
  exit 2
fi
python=${PYTHON:-.venv/bin/python}
anchor=$(cd .. && pwd)/shared/anchors/marian_side_by_side.sh
data=$(cd .. && pwd)/shared/data
work=runs/marian
log=$work/alternating.log
mkdir -p "$work"
ours=$work/ours_$dim
say() { echo "$*" | tee -a "$log"; }
say "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD), dim $dim," \
  "$updates updates, $rounds rounds"
if [ ! -f "$ours/config.json" ]; then
  "$python" -m seq2seq_attn.train \
    --flagfile=configs/multi30k/joey_match.flags --model_dir="$ours" \
    --data_dir="$data" --encoder_units="$dim" --hidden_units="$dim" \
    --attention_units="$dim" --maxout_units="$dim" --max_steps=1 \
    --valid_max_sentences=10 >"$work/ours_$dim.train.log" 2>&1
  grep "parameters" "$work/ours_$dim.train.log" | tee -a "$log"
fi
for round in $(seq "$rounds"); do
  DECODE_VARIANTS=greedy bash "$anchor" "$data/multi30k/tok" "$updates" \
    "$dim" 2 "$work/s2s_$dim" >"$work/marian_$round.log" 2>&1
  marian=$(grep "target tok/s, after 1st interval" "$work/marian_$round.log" |
    awk '{print $NF}')
  params=$(grep "parameters (model.npz)" "$work/marian_$round.log" |
    awk '{print $NF}')
  WINDOWS=20 "$python" benchmarks/training_step_speed.py "$ours" \
    $((updates - 50)) >"$work/ours_$round.log" 2>&1
  line=$(tail -1 "$work/ours_$round.log")
  say "round $round ($(date -u +%H:%M) UTC): Marian $marian target" \
    "tokens/s ($params parameters); ours: $line"
done
