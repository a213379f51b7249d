"""One Markdown row per training run of benchmarks/train_multi30k.sh or
benchmarks/luong_table4.sh, for the paper tables of benchmarks/RESULTS.md.

    python benchmarks/runs_table.py runs/m30k_rnnsearch runs/t4_global_dot

Reads RUN/validation.tsv, RUN/eval/metrics.json and the run's log RUN.log
(training output, `evaluate` and `benchmarks/decoding_speed.py`), and prints:
parameters, epochs trained (the best one), training time and target tokens/s
(validation excluded), validation perplexity and greedy BLEU at the best
epoch, test2016 BLEU with beam 5 and greedy, and beam-5 sentences/s.
"""

import argparse
import csv
import json
import pathlib
import re

PARAMS = re.compile(r"training \w+: ([\d,]+) parameters")
EPOCH = re.compile(r"epoch (\d+): ([\d,]+) target tokens in ([\d.]+) s")
VALID_SECONDS = re.compile(r"validation after epoch \d+: .*\[(\d+) s\]")
DECODE = re.compile(
    r"^(greedy|beam 5): ([\d.]+) sentences/s .*BLEU ([\d.]+)", re.M
)


def run_row(run):
    log = pathlib.Path(f"{run}.log").read_text(errors="replace")
    with open(run / "validation.tsv") as stream:
        validations = list(csv.DictReader(stream, delimiter="\t"))
    best = max(validations, key=lambda row: float(row["bleu"]))
    tokens = seconds = 0.0
    for _, epoch_tokens, epoch_seconds in EPOCH.findall(log):
        tokens += float(epoch_tokens.replace(",", ""))
        seconds += float(epoch_seconds)
    valid_seconds = sum(map(float, VALID_SECONDS.findall(log)))
    metrics = json.loads((run / "eval" / "metrics.json").read_text())
    decode = {name: (float(s), float(b)) for name, s, b in DECODE.findall(log)}
    params = PARAMS.findall(log)
    return {
        "run": run.name,
        "parameters": params[-1] if params else "?",
        "epochs": f"{len(validations)} ({best['epoch']})",
        "training": f"{seconds / 60:.0f} min (+{valid_seconds / 60:.0f} val)",
        "tokens/s": f"{tokens / seconds:,.0f}" if seconds else "?",
        "val ppl": f"{float(best['perplexity']):.2f}",
        "val BLEU": f"{float(best['bleu']):.2f}",
        "BLEU beam 5": f"{metrics['bleu']:.2f}",
        "greedy": f"{decode['greedy'][1]:.2f}" if "greedy" in decode else "?",
        "beam 5 sent/s": f"{decode['beam 5'][0]:.1f}"
        if "beam 5" in decode
        else "?",
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=pathlib.Path)
    args = parser.parse_args()
    rows = [run_row(run) for run in args.runs]
    print("| " + " | ".join(rows[0]) + " |")
    print("|---|" + "---:|" * (len(rows[0]) - 1))
    for row in rows:
        print("| " + " | ".join(row.values()) + " |")


if __name__ == "__main__":
    main()
