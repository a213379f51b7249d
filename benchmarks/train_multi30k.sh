#!/usr/bin/env bash
# Trains configs/multi30k/NAME.flags into runs/m30k_NAME, then scores the
# best checkpoint on test2016 (beam 5; cased 13a sacreBLEU on raw runs,
# --tokenize none on tok runs) and times
# decoding. Usage: benchmarks/train_multi30k.sh [DATA_DIR] ENTRY [ENTRY ...]
# where ENTRY is NAME, or RUN=NAME:FLAGS to train NAME.flags with extra
# comma-separated FLAGS into runs/m30k_RUN (see benchmarks/luong_table4.sh;
# English-French RNNsearch: rnnsearch_en_fr=rnnsearch:--target=fr).
# Logs go to runs/m30k_RUN.log; rerunning resumes from the last checkpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=${1:-../shared/data}
shift
python=${PYTHON:-.venv/bin/python}
for entry in "$@"; do
  run=${entry%%=*}
  spec=${entry#*=}
  name=${spec%%:*}
  extra=()
  if [[ $spec == *:* ]]; then
    IFS=, read -r -a extra <<< "${spec#*:}"
  fi
  model_dir=runs/m30k_${run}
  {
    echo "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD): train ${run}"
    echo "== python -m seq2seq_attn.train --flagfile=configs/multi30k/${name}.flags ${extra[*]}"
    /usr/bin/time -v "$python" -m seq2seq_attn.train \
      --flagfile="configs/multi30k/${name}.flags" "${extra[@]}" \
      --model_dir="$model_dir" --data_dir="$data_dir"
    test_dir=$(mktemp -d)
    # The run's languages (en-de, or en-fr with --target=fr) and text: raw
    # runs are scored cased (13a) against the raw references, tok runs with
    # --tokenize none against the tokenised ones (the Multi30k convention).
    read -r src tgt variant < <("$python" -c "import json, sys
data = json.load(open(sys.argv[1]))['data']
print(data['source'], data['target'], data['variant'])" "$model_dir/config.json")
    for lang in "$src" "$tgt"; do
      if [[ $variant == raw ]]; then
        zcat "$data_dir/multi30k/test_2016_flickr.${lang}.gz"
      else
        zcat "$data_dir/multi30k/tok/test_2016_flickr.lc.norm.tok.${lang}.gz"
      fi > "$test_dir/test2016.${lang}"
    done
    bleu_tokenize=$([[ $variant == raw ]] && echo 13a || echo none)
    "$python" -m seq2seq_attn.evaluate --model_dir="$model_dir" \
      --src="$test_dir/test2016.$src" --ref="$test_dir/test2016.$tgt" \
      --bleu_tokenize="$bleu_tokenize" --beam_size=5
    "$python" benchmarks/decoding_speed.py --model_dir="$model_dir" \
      --data_dir="$data_dir"
    echo "== $(date -u +%FT%TZ) done ${run}"
  } >> "runs/m30k_${run}.log" 2>&1
done
