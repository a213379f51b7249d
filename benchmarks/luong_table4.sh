#!/usr/bin/env bash
# The analogue of Luong et al. (2015), Table 4, on Multi30k en->de: every row
# is configs/multi30k/luong_global_general_feed.flags (2 x 256 LSTMs, Adam at
# 3e-3 halved after epoch 5) with the attention changed, trained for the same
# 10 epochs (no early stopping) by benchmarks/train_multi30k.sh into
# runs/m30k_t4_ROW, then scored on test2016.
#
#   benchmarks/luong_table4.sh [DATA_DIR] [ROW ...]
#
# ROW is one of the names below (all of them by default; DRY_RUN=1 prints the
# runs instead of training them). Each takes about
# 35 minutes on 2 CPU cores; rerunning resumes. Then:
#   python benchmarks/runs_table.py runs/m30k_t4_*
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=${1:-../shared/data}
shift || true
declare -A attention=(
  [base]="--score=none,--input_feeding=false"
  [global_location]="--score=location"
  [global_dot]="--score=dot"
  [global_general]="--score=general"
  [global_concat]="--score=concat"
  [local_m_general]="--score=general,--attention_mode=local-m"
  [local_p_general]="--score=general,--attention_mode=local-p"
)
order=(base global_location global_dot global_general global_concat
  local_m_general local_p_general)
rows=("$@")
if [ ${#rows[@]} -eq 0 ]; then
  for row in "${order[@]}"; do
    rows+=("$row")
    [ "$row" != base ] && rows+=("${row}_feed")
  done
fi
entries=()
for row in "${rows[@]}"; do
  variant=${row%_feed}
  if [ -z "${attention[$variant]+set}" ] || [ "$row" = base_feed ]; then
    echo "unknown row '$row'; rows: ${order[*]} (and *_feed but base_feed)" >&2
    exit 2
  fi
  feeding=--input_feeding=false
  [[ $row == *_feed ]] && feeding=--input_feeding=true
  [ "$variant" = base ] && feeding=""
  flags="--early_stopping_patience=0,${attention[$variant]}"
  [ -n "$feeding" ] && flags+=",$feeding"
  entries+=("t4_${row}=luong_global_general_feed:${flags}")
done
if [ -n "${DRY_RUN:-}" ]; then
  printf '%s\n' "${entries[@]}"
  exit 0
fi
exec benchmarks/train_multi30k.sh "$data_dir" "${entries[@]}"
