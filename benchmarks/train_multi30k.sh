#!/usr/bin/env bash
# Trains configs/multi30k/NAME.flags into runs/m30k_NAME, then scores the
# best checkpoint on test2016 (beam 5, sacrebleu --tokenize none) and times
# decoding. Usage: benchmarks/train_multi30k.sh [DATA_DIR] NAME [NAME ...]
# Logs go to runs/m30k_NAME.log; rerunning resumes from the last checkpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=${1:-../shared/data}
shift
python=${PYTHON:-.venv/bin/python}
for name in "$@"; do
  model_dir=runs/m30k_${name}
  {
    echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD): train ${name}"
    /usr/bin/time -v "$python" -m seq2seq_attn.train \
      --flagfile="configs/multi30k/${name}.flags" \
      --model_dir="$model_dir" --data_dir="$data_dir"
    test_dir=$(mktemp -d)
    for lang in en de; do
      zcat "$data_dir/multi30k/tok/test_2016_flickr.lc.norm.tok.${lang}.gz" \
        > "$test_dir/test2016.${lang}"
    done
    "$python" -m seq2seq_attn.evaluate --model_dir="$model_dir" \
      --src="$test_dir/test2016.en" --ref="$test_dir/test2016.de" \
      --bleu_tokenize=none --beam_size=5
    "$python" benchmarks/decoding_speed.py --model_dir="$model_dir" \
      --data_dir="$data_dir"
    echo "== $(date -u +%FT%TZ) done ${name}"
  } >> "runs/m30k_${name}.log" 2>&1
done
