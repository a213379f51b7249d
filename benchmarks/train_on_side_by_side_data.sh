# Sourced by joeynmt_side_by_side.sh and training_alternating.sh, so that
# both train ours the same way: configs/multi30k/joey_match.flags on the
# files joeynmt_side_by_side.sh prepares (DATA_DIR/{train,val}.{en,de}).
#
#   train_on_side_by_side_data PYTHON DATA_DIR MODEL_DIR EPOCHS [FLAGS...]
#
# Runs from the repository root; prints the training output without its
# progress bars.
train_on_side_by_side_data() {
  local python=$1 data=$2 model_dir=$3 epochs=$4
  shift 4
  "$python" -m seq2seq_attn.train \
    --flagfile=configs/multi30k/joey_match.flags --epochs="$epochs" \
    --model_dir="$model_dir" \
    --train_source_file="$data/train.en" \
    --train_target_file="$data/train.de" \
    --valid_source_file="$data/val.en" \
    --valid_target_file="$data/val.de" \
    --corpus= "$@" 2>&1 | tr '\r' '\n' | grep -v '^ *[0-9]*/[0-9]* \['
}
