#!/usr/bin/env bash
# Decoding speed, A/B: code trees (git worktrees of the commits compared)
# take turns decoding test2016 with one trained model, `ROUNDS` times, with
# JoeyNMT's beam-5 decode of the same test set in each round if asked, so
# that every ratio compares figures from the same minutes.
#
#   benchmarks/decode_ab.sh MODEL_DIR OUT_DIR NAME=TREE[:PRECISION] ...
#
# e.g. git worktree add /tmp/old 62dce59, then
#   JOEY_CONFIG=runs/side_by_side_e6/joey.yaml benchmarks/decode_ab.sh \
#     runs/side_by_side_e6/ours runs/decode_ab old=/tmp/old:bfloat16 \
#     new=.:bfloat16 new_fp32=.
#
# Each side runs TREE/benchmarks/decoding_speed.py with TREE on PYTHONPATH
# (greedy and beam 5, batch 64, JoeyNMT's length penalty); its lines go to
# OUT_DIR/log prefixed with the side's name and round, its translations to
# OUT_DIR/NAME.greedy and NAME.beam5 (.bfloat16 after each for bfloat16),
# which are compared (`cmp`) at the end with the first side's of the same
# precision. Paths are relative to the repository root, where it runs.
#
# Environment:
#   DATA_DIR      the corpora (default ../shared/data)
#   ROUNDS        rounds of alternation (default 2)
#   JOEY_CONFIG   a JoeyNMT config (benchmarks/joeynmt_side_by_side.sh writes
#                 one): `joeynmt test` on it runs once per round, with
#                 JOEY_PYTHON (default runs/peers/bin/python)
#   JOEY_GREEDY_CONFIG  the same with beam_size 1 (joey_greedy.yaml there):
#                 JoeyNMT's greedy decode, also once per round
#   PROFILE_OPS   after the rounds, profile each side (profile_decoding.py
#                 --ops=PROFILE_OPS: where a beam-search step's time goes)
#   QUIET_LOG     the log of a `seq2seq_attn.train` run in the background:
#                 wait until it starts a validation pass, stop the trainer
#                 (SIGSTOP) for the measurements and resume it (SIGCONT)
#                 after, so that neither disturbs the other (the pause falls
#                 in validation time, which its training tokens/s excludes)
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 3 ]; then
  sed -n '7p' "$0" | sed 's/^# */usage: /' >&2
  exit 2
fi
model_dir=$(realpath "$1")
out=$(realpath -m "$2")
shift 2
data_dir=$(realpath "${DATA_DIR:-../shared/data}")
# -s: a virtual environment's python is a link, to be kept.
python=$(realpath -s "${PYTHON:-.venv/bin/python}")
mkdir -p "$out"
joey_python=$(realpath -s "${JOEY_PYTHON:-runs/peers/bin/python}")

names=() trees=() precisions=()
for side in "$@"; do
  name=${side%%=*}
  spec=${side#*=}
  tree=${spec%%:*}
  precision=float32
  [[ $spec == *:* ]] && precision=${spec#*:}
  if [ "$name" = "$side" ] || [ ! -f "$tree/benchmarks/decoding_speed.py" ]; then
    echo "bad side '$side': want NAME=TREE[:PRECISION], TREE a checkout" >&2
    exit 2
  fi
  names+=("$name") trees+=("$(realpath "$tree")") precisions+=("$precision")
done

say() { echo "$*" | tee -a "$out/log"; }

in_tree() {  # INDEX SCRIPT [ARG ...]: a benchmark script of side INDEX
  local tree=${trees[$1]} precision=${precisions[$1]} script=$2
  shift 2
  (cd "$tree/benchmarks" && PYTHONPATH="$tree" "$python" "$script" \
    --model_dir="$model_dir" --data_dir="$data_dir" \
    --precision="$precision" "$@")
}

decode() {  # INDEX ROUND
  local name=${names[$1]} output="$out/${names[$1]}_$2.out"
  in_tree "$1" decoding_speed.py --batch_size=64 --length_penalty=gnmt \
    --alpha=1.0 --output_prefix="$out/$name" >"$output" 2>&1 ||
    say "$name round $2: failed, see $output"
  grep "sentences/s" "$output" | sed "s|^|$name round $2 |" | tee -a "$out/log"
}

joey() {  # ROUND CONFIG SEARCH
  local hyp="$out/joey.hyp" seconds sentences
  "$joey_python" -m joeynmt test "$2" \
    --output-path "$hyp" >"$out/joey_test.out" 2>&1
  # `joeynmt test` decodes dev, then test: the last "Generation took".
  seconds=$(grep -o "Generation took [0-9.]*" "$out/joey_test.out" |
    tail -1 | grep -o "[0-9.]*$")
  sentences=$(wc -l <"$hyp.test")
  if [ -z "$seconds" ]; then
    say "joey round $1 $3: failed, see $out/joey_test.out"
    return
  fi
  say "joey round $1 $3: $(awk -v n="$sentences" -v s="$seconds" \
    'BEGIN { printf "%.1f sentences/s (%d in %.2f s)", n / s, n, s }')"
}

trainer=""
if [ -n "${QUIET_LOG:-}" ]; then
  say "$(date -u +%T) waiting for a validation pass in $QUIET_LOG"
  until tail -1 "$QUIET_LOG" | grep -q '^epoch [0-9]*: .* tokens/s'; do
    sleep 2
  done
  trainer=$(pgrep -f "seq2seq_attn.train" | tr '\n' ' ')
  say "$(date -u +%T) stopping the trainer ($trainer) after: $(tail -1 "$QUIET_LOG")"
  # shellcheck disable=SC2086
  kill -STOP $trainer
  trap 'kill -CONT $trainer' EXIT
fi

say "$(date -u +%T) model $model_dir, $(nproc) CPUs; sides: $*"
for round in $(seq "${ROUNDS:-2}"); do
  for i in "${!names[@]}"; do
    say "$(date -u +%T) ${names[$i]} round $round"
    decode "$i" "$round"
  done
  [ -n "${JOEY_CONFIG:-}" ] && joey "$round" "$JOEY_CONFIG" "beam 5"
  [ -n "${JOEY_GREEDY_CONFIG:-}" ] &&
    joey "$round" "$JOEY_GREEDY_CONFIG" greedy
done
if [ -n "${PROFILE_OPS:-}" ]; then
  for i in "${!names[@]}"; do
    say "$(date -u +%T) profile of ${names[$i]}"
    in_tree "$i" profile_decoding.py --ops="$PROFILE_OPS" 2>&1 |
      grep -E "^ |ms|rows" | tee -a "$out/log"
  done
fi
for i in "${!names[@]}"; do
  for ((j = 0; j < i; j++)); do
    [ "${precisions[$i]}" = "${precisions[$j]}" ] || continue
    for search in greedy beam5; do
      # decoding_speed.py names its outputs PREFIX.SEARCH[.PRECISION].
      [ "${precisions[$i]}" = float32 ] || search+=".${precisions[$i]}"
      a="$out/${names[$j]}.$search" b="$out/${names[$i]}.$search"
      if cmp -s "$a" "$b"; then verdict=identical; else verdict=differ; fi
      say "${names[$i]} against ${names[$j]}: $search translations $verdict"
    done
    break
  done
done
say "$(date -u +%T) done"
