#!/usr/bin/env bash
# JoeyNMT 2.3 and configs/multi30k/joey_match.flags on the same Multi30k en-de
# data, one after the other on this machine, then benchmarks/side_by_side.py
# prints the comparison (training target tokens/s, BLEU on test2016 after the
# same number of epochs, beam-5 and greedy decoding speed at batch 64).
#
#   benchmarks/joeynmt_side_by_side.sh [DATA_DIR] [EPOCHS]
#
# DATA_DIR defaults to ../shared/data, EPOCHS to 12 (the anchor's run,
# ../shared/anchors/joeynmt_multi30k.md). JoeyNMT and a CPU build of PyTorch go
# into their own virtual environment ($PEERS, default runs/peers), never into
# the package's. Everything lands in runs/side_by_side_e$EPOCHS/; the log is
# side_by_side.log there. Rerunning skips a finished JoeyNMT training and
# resumes ours from its last checkpoint. With BFLOAT16=1 ours is trained and
# decoded a second time in bfloat16 (--mixed_precision=mixed_bfloat16,
# --precision=bfloat16), an extra column of the report. Then
# benchmarks/training_alternating.sh measures the training ratio once more
# with the toolkits' epochs alternating, ALTERNATING_ROUNDS times (default
# 2, about 20 minutes a round; 0 skips it), a table of the report.
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=$(realpath "${1:-../shared/data}")
epochs=${2:-12}
python=${PYTHON:-.venv/bin/python}
peers=${PEERS:-runs/peers}
out=runs/side_by_side_e${epochs}
mkdir -p "$out/data"
exec >> "$out/side_by_side.log" 2>&1
echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD)," \
  "$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"

if [ ! -x "$peers/bin/python" ]; then
  python3 -m venv "$peers"
  # JoeyNMT 2.3.0 imports importlib_metadata without depending on it.
  "$peers/bin/pip" install -q torch==2.13.0 joeynmt==2.3.0 importlib_metadata
fi

# JoeyNMT splits on single spaces: collapse runs of spaces (train.en line
# 16217 has two) and strip the ends. Ours reads the same files.
for pair in train:train val:val test_2016_flickr:test2016; do
  for lang in en de; do
    zcat "$data_dir/multi30k/tok/${pair%%:*}.lc.norm.tok.${lang}.gz" |
      sed -E 's/ +/ /g; s/^ //; s/ $//' > "$out/data/${pair#*:}.${lang}"
  done
done
sed -e "s|@DIR@|$out|g" -e "s|@EPOCHS@|$epochs|g" \
  benchmarks/joeynmt_multi30k.yaml > "$out/joey.yaml"
sed -e 's/beam_size: 5/beam_size: 1/' "$out/joey.yaml" > "$out/joey_greedy.yaml"

echo "== $(date -u +%FT%TZ) train JoeyNMT, $epochs epochs"
if ! grep -q "Training ended after" "$out/joey/train.log" 2>/dev/null; then
  rm -rf "$out/joey"
  "$peers/bin/python" -m joeynmt train "$out/joey.yaml" --skip-test \
    > "$out/joey_train.out" 2>&1
fi

# shellcheck source=benchmarks/train_on_side_by_side_data.sh
source benchmarks/train_on_side_by_side_data.sh
train_ours() {  # NAME [FLAGS...]
  local name=$1
  shift
  echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD):" \
    "train $name, $epochs epochs $*"
  train_on_side_by_side_data "$python" "$out/data" "$out/$name" "$epochs" \
    "$@" >> "$out/${name}_train.out"
}
train_ours ours
if [ "${BFLOAT16:-0}" = 1 ]; then
  train_ours ours_bf16 --mixed_precision=mixed_bfloat16
fi

echo "== $(date -u +%FT%TZ) decode test2016 with JoeyNMT (beam 5, greedy)"
for config in joey joey_greedy; do
  "$peers/bin/python" -m joeynmt test "$out/$config.yaml" \
    --output-path "$out/$config.hyp" > "$out/${config}_test.out" 2>&1
done

decode_ours() {  # NAME PRECISION
  echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD):" \
    "decode test2016 with $1 in $2 (beam 5, greedy)"
  "$python" benchmarks/decoding_speed.py --model_dir="$out/$1" \
    --data_dir="$data_dir" --batch_size=64 --length_penalty=gnmt --alpha=1.0 \
    --precision="$2" --output_prefix="$out/$1" \
    > "$out/${1}_${2}_decode.out" 2>&1
}
decode_ours ours float32
if [ "${BFLOAT16:-0}" = 1 ]; then
  decode_ours ours bfloat16
  decode_ours ours_bf16 bfloat16
fi

# The trainings above ran one after the other, so their speed ratio carries
# the machine's drift; alternating epochs compare the same minutes.
rounds=${ALTERNATING_ROUNDS:-2}
if [ "$rounds" -gt 0 ]; then
  echo "== $(date -u +%FT%TZ) training speed, epochs alternating"
  benchmarks/training_alternating.sh "$out" "$rounds"
fi
echo "== $(date -u +%FT%TZ) report"
"$python" benchmarks/side_by_side.py "$out" | tee "$out/report.md"
