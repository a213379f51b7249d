"""One Markdown row per training run of benchmarks/train_multi30k.sh or
benchmarks/luong_table4.sh, for the paper tables of benchmarks/RESULTS.md.

    python benchmarks/runs_table.py runs/m30k_rnnsearch runs/t4_global_dot

Reads RUN/validation.tsv, RUN/eval/metrics.json and the run's log RUN.log
(training output, `evaluate` and `benchmarks/decoding_speed.py`), and prints:
parameters, epochs trained (and the one in best/, evaluated), training
time and target tokens/s (validation excluded; over all epochs, and of the
median epoch, which other work on the CPU disturbs less), validation
perplexity and greedy BLEU at that epoch, test2016 BLEU with beam 5
(`--tokenize none` on the tokenised text, and detokenised with sacremoses
against the raw references, `-lc 13a`: the models write lowercase) and
greedy, and beam-5 sentences/s. Needs `pip install -e ".[bench]"`.

    python benchmarks/runs_table.py --raw_ref=../shared/data/multi30k/\
        test_2016_flickr.de.gz runs/m30k_rnnsearch
"""

import argparse
import csv
import gzip
import json
import pathlib
import re
import statistics

import sacrebleu
from trainer_log import DECODE, EPOCH, PARAMS, per_epoch

VALID_SECONDS = re.compile(r"validation after epoch \d+: .*\[(\d+) s\]")


def detokenized_bleu(run, raw_references, language):
    """Beam-5 test BLEU of RUN/eval/hypotheses.txt, Moses-detokenised, on the
    raw (cased, untokenised) references, case-insensitive."""
    from sacremoses import MosesDetokenizer

    detokenizer = MosesDetokenizer(lang=language)
    lines = (run / "eval" / "hypotheses.txt").read_text().splitlines()
    hypotheses = [detokenizer.detokenize(line.split()) for line in lines]
    return sacrebleu.corpus_bleu(
        hypotheses, [raw_references], lowercase=True
    ).score


def run_row(run, raw_references, language):
    log = pathlib.Path(f"{run}.log").read_text(errors="replace")
    with open(run / "validation.tsv") as stream:
        validations = list(csv.DictReader(stream, delimiter="\t"))
    # The epoch of the checkpoint in best/ (the one evaluated), else the
    # best validation BLEU.
    best_epoch = json.loads((run / "best" / "metrics.json").read_text()).get(
        "epoch"
    )
    best = max(
        validations,
        key=lambda row: (int(row["epoch"]) == best_epoch, float(row["bleu"])),
    )
    # A resumed epoch's parts add up to one epoch.
    epochs = per_epoch(EPOCH.findall(log)).values()
    tokens = sum(epoch_tokens for epoch_tokens, _ in epochs)
    seconds = sum(epoch_seconds for _, epoch_seconds in epochs)
    rates = [
        epoch_tokens / epoch_seconds for epoch_tokens, epoch_seconds in epochs
    ]
    valid_seconds = sum(map(float, VALID_SECONDS.findall(log)))
    metrics = json.loads((run / "eval" / "metrics.json").read_text())
    decode = {name: (float(s), float(b)) for name, s, b in DECODE.findall(log)}
    params = PARAMS.findall(log)
    return {
        "run": run.name,
        "parameters": params[-1] if params else "?",
        "epochs": f"{len(validations)} ({best['epoch']})",
        "training": f"{seconds / 60:.0f} min (+{valid_seconds / 60:.0f} val)"
        if seconds
        else "?",
        "tokens/s": f"{tokens / seconds:,.0f}" if seconds else "?",
        "median epoch": f"{statistics.median(rates):,.0f}" if rates else "?",
        "val ppl": f"{float(best['perplexity']):.2f}",
        "val BLEU": f"{float(best['bleu']):.2f}",
        "BLEU beam 5": f"{metrics['bleu']:.2f}",
        "detok. -lc": f"{detokenized_bleu(run, raw_references, language):.2f}",
        "greedy": f"{decode['greedy'][1]:.2f}" if "greedy" in decode else "?",
        "beam 5 sent/s": f"{decode['beam 5'][0]:.1f}"
        if "beam 5" in decode
        else "?",
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=pathlib.Path)
    parser.add_argument(
        "--raw_ref", required=True, help="raw test2016 target text (.gz)"
    )
    parser.add_argument("--target_language", default="de")
    args = parser.parse_args()
    with gzip.open(args.raw_ref, "rt", encoding="utf-8") as stream:
        raw_references = [line.rstrip("\n") for line in stream]
    rows = [
        run_row(run, raw_references, args.target_language) for run in args.runs
    ]
    print("| " + " | ".join(rows[0]) + " |")
    print("|---|" + "---:|" * (len(rows[0]) - 1))
    for row in rows:
        print("| " + " | ".join(row.values()) + " |")


if __name__ == "__main__":
    main()
