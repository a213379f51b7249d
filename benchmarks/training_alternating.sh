#!/usr/bin/env bash
# Training speed against JoeyNMT, epochs alternating: one epoch of JoeyNMT,
# then one of ours in float32 (and one in mixed bfloat16 with BFLOAT16=1,
# also unsorted with UNSORTED=1),
# ROUNDS times, so that each ratio compares epochs of the same minutes. This
# machine's speed drifts by 10-50% within the hour, and
# joeynmt_side_by_side.sh trains each toolkit for all its epochs one after
# the other. With UNSORTED=1, each round also trains an epoch of ours with
# --sort_window=1: random batches, as JoeyNMT's, without Bahdanau's
# length-sorted windows. With EIGEN=1, each round also trains ours with
# TF_ENABLE_ONEDNN_OPTS=0 (and unsorted so with UNSORTED=1): TensorFlow's
# Eigen kernels instead of the oneDNN ones that `python -m
# seq2seq_attn.train` asks for on x86 (TensorFlow turns oneDNN on by itself
# only on CPUs with AVX-512 or AMX), so on an AVX2 machine this measures
# what the package's choice gives.
#
#   benchmarks/training_alternating.sh SIDE_BY_SIDE_DIR [ROUNDS]
#
# SIDE_BY_SIDE_DIR is an output of joeynmt_side_by_side.sh, whose data/ and
# joey.yaml are reused (ROUNDS defaults to 2). Every epoch is the first of a
# fresh model, in SIDE_BY_SIDE_DIR/alternating/ (a rerun replaces the model
# folders); alternating.log there has a line per epoch and each round's
# ratios, appended run after run. PYTHON and PEERS as for
# joeynmt_side_by_side.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ ! -f "$1/joey.yaml" ]; then
  echo "usage: $0 SIDE_BY_SIDE_DIR [ROUNDS] (a joeynmt_side_by_side.sh" \
    "output, with joey.yaml)" >&2
  exit 2
fi
dir=$1
rounds=${2:-2}
python=${PYTHON:-.venv/bin/python}
peers=${PEERS:-runs/peers}
out=$dir/alternating
mkdir -p "$out"
log=$out/alternating.log
say() { echo "$*" | tee -a "$log"; }
say "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD)," \
  "$(nproc) CPUs, $rounds rounds"

joey_epoch() {  # ROUND: prints target tokens/s
  rm -rf "${out:?}/joey_$1" # a fresh model, also when the script reruns
  sed -e "s|model_dir: .*|model_dir: \"$out/joey_$1\"|" \
    -e "s/epochs: .*/epochs: 1/" "$dir/joey.yaml" >"$out/joey_$1.yaml"
  "$peers/bin/python" -m joeynmt train "$out/joey_$1.yaml" --skip-test \
    >"$out/joey_$1.out" 2>&1
  # "Epoch   1, total training loss: ..., num. of tokens: N, S[sec]"
  grep -a "total training loss" "$out/joey_$1.out" | tail -1 |
    sed -E 's/.*num\. of tokens: ([0-9]+), ([0-9.]+)\[sec\].*/\1 \2/' |
    awk '{ printf "%.1f", $1 / $2 }'
}

# shellcheck source=benchmarks/train_on_side_by_side_data.sh
source benchmarks/train_on_side_by_side_data.sh
ours_epoch() {  # NAME ROUND [FLAGS...]: prints target tokens/s
  local name=$1 round=$2
  shift 2
  rm -rf "${out:?}/${name}_$round"
  train_on_side_by_side_data "$python" "$dir/data" "$out/${name}_$round" 1 \
    "$@" >"$out/${name}_$round.out"
  # "epoch 1: 389,706 target tokens in 240.2 s of training (1,622.4
  # tokens/s, mean loss 4.1234)"
  grep -a "^epoch 1: " "$out/${name}_$round.out" | tail -1 |
    sed -E 's/.*\(([0-9,.]+) tokens\/s.*/\1/' | tr -d ,
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }

for round in $(seq "$rounds"); do
  say "$(date -u +%T) round $round: JoeyNMT"
  joey=$(joey_epoch "$round")
  say "$(date -u +%T) round $round: JoeyNMT $joey tokens/s; ours, float32"
  ours=$(ours_epoch ours "$round")
  line="round $round: JoeyNMT $joey, ours float32 $ours tokens/s"
  line+=" ($(ratio "$ours" "$joey"))"
  if [ "${UNSORTED:-0}" = 1 ]; then
    say "$(date -u +%T) round $round: ours, float32, --sort_window=1"
    unsorted=$(ours_epoch ours_unsorted "$round" --sort_window=1)
    line+=", unsorted $unsorted ($(ratio "$unsorted" "$joey"))"
  fi
  if [ "${EIGEN:-0}" = 1 ]; then
    say "$(date -u +%T) round $round: ours, float32, TF_ENABLE_ONEDNN_OPTS=0"
    eigen=$(TF_ENABLE_ONEDNN_OPTS=0 ours_epoch ours_eigen "$round")
    line+=", Eigen $eigen ($(ratio "$eigen" "$joey"))"
    if [ "${UNSORTED:-0}" = 1 ]; then
      say "$(date -u +%T) round $round: ours, Eigen, --sort_window=1"
      eigen_unsorted=$(TF_ENABLE_ONEDNN_OPTS=0 ours_epoch \
        ours_eigen_unsorted "$round" --sort_window=1)
      line+=", Eigen unsorted $eigen_unsorted"
      line+=" ($(ratio "$eigen_unsorted" "$joey"))"
    fi
  fi
  if [ "${BFLOAT16:-0}" = 1 ]; then
    say "$(date -u +%T) round $round: ours, mixed bfloat16"
    bf16=$(ours_epoch ours_bf16 "$round" --mixed_precision=mixed_bfloat16)
    line+=", mixed bfloat16 $bf16"
    line+=" ($(ratio "$bf16" "$joey"))"
    if [ "${UNSORTED:-0}" = 1 ]; then
      say "$(date -u +%T) round $round: ours, mixed bfloat16, --sort_window=1"
      bf16_unsorted=$(ours_epoch ours_bf16_unsorted "$round" \
        --mixed_precision=mixed_bfloat16 --sort_window=1)
      line+=", mixed bfloat16 unsorted $bf16_unsorted"
      line+=" ($(ratio "$bf16_unsorted" "$joey"))"
    fi
  fi
  say "$(date -u +%T) $line"
done
