"""The report of benchmarks/joeynmt_side_by_side.sh, from its output folder.

    python benchmarks/side_by_side.py runs/side_by_side_e12

Reads JoeyNMT's train.log and test logs and, for each of our runs there
(`ours`, and `ours_bf16` if present), the training log, validation.tsv and
decoding logs; scores every test2016 translation with the same sacreBLEU call,
and prints two Markdown tables (training, decoding) with ratios to JoeyNMT;
training speed is compared on the median epoch of each. Where the folder has
alternating/alternating.log (benchmarks/training_alternating.sh), a third
table gives its last run's rounds: the training ratios of epochs run in the
same minutes, which the machine's drift does not skew.
"""

import argparse
import csv
import pathlib
import re
import statistics

import sacrebleu
from trainer_log import DECODE, EPOCH, PARAMS, per_epoch

JOEY_EPOCH = re.compile(
    r"Epoch\s+(\d+), total training loss: [\d.]+, num\. of seqs: \d+, "
    r"num\. of tokens: (\d+), ([\d.]+)\[sec\]"
)
JOEY_VALID = re.compile(
    r"Evaluation result \(greedy\): bleu:\s*([\d.]+), loss:\s*[\d.]+, "
    r"ppl:\s*([\d.]+)"
)
JOEY_PARAMS = re.compile(r"Total params: (\d+)")
OURS_RUNS = {"ours": "float32", "ours_bf16": "mixed_bfloat16"}
# training_alternating.sh's log: a header per run, a line per round.
ALTERNATING_RUN = re.compile(r"^== (\S+) commit (\w+),", re.MULTILINE)
ALTERNATING_ROUND = re.compile(
    r"^(\S+) round (\d+): JoeyNMT ([\d.]+), ours float32 ([\d.]+) "
    r"tokens/s \([\d.]+x\)(?:, mixed bfloat16 ([\d.]+) \([\d.]+x\))?$",
    re.MULTILINE,
)


def joey_training(out):
    log = (out / "joey" / "train.log").read_text()
    valid = JOEY_VALID.findall(log)
    return {
        "name": "JoeyNMT 2.3 (float32)",
        "params": int(JOEY_PARAMS.search(log).group(1)),
        "epochs": per_epoch(JOEY_EPOCH.findall(log)),
        "valid_bleu": [float(b) for b, _ in valid],
        "valid_ppl": [float(p) for _, p in valid],
    }


def ours_training(out, run, policy):
    log = (out / f"{run}_train.out").read_text()
    with open(out / run / "validation.tsv") as stream:
        rows = list(csv.DictReader(stream, delimiter="\t"))
    return {
        "name": f"seq2seq_attn ({policy})",
        "params": int(PARAMS.search(log).group(1).replace(",", "")),
        "epochs": per_epoch(EPOCH.findall(log)),
        "valid_bleu": [float(row["bleu"]) for row in rows],
        "valid_ppl": [float(row["perplexity"]) for row in rows],
    }


def joey_decoding(out, sentences):
    speeds, hypotheses = {}, {}
    for search, config in (("beam 5", "joey"), ("greedy", "joey_greedy")):
        text = (out / f"{config}_test.out").read_text()
        test_part = text[text.index("on test set") :]
        seconds = re.search(r"Generation took ([\d.]+)\[sec\]", test_part)
        speeds[search] = sentences / float(seconds.group(1))
        hypotheses[search] = out / f"{config}.hyp.test"
    return {"name": "JoeyNMT 2.3, float32", "speeds": speeds, "hyp": hypotheses}


def ours_decoding(out, run, precision):
    log = (out / f"{run}_{precision}_decode.out").read_text()
    suffix = "" if precision == "float32" else f".{precision}"
    return {
        "name": f"seq2seq_attn {run}, {precision} decoding",
        "speeds": {k: float(v) for k, v, _ in DECODE.findall(log)},
        "hyp": {
            "beam 5": out / f"{run}.beam5{suffix}",
            "greedy": out / f"{run}.greedy{suffix}",
        },
    }


def bleu(path, references, tokenize):
    hypotheses = path.read_text().splitlines()
    return sacrebleu.corpus_bleu(
        hypotheses, [references], tokenize=tokenize, force=True
    ).score


def training_table(systems):
    joey_median = _speed(systems[0])[3]
    lines = [
        "| training | parameters | epochs | target tokens/epoch | training "
        "s (validation excluded) | target tokens/s, all epochs | "
        "**target tokens/s, median epoch** | vs JoeyNMT |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for system in systems:
        tokens, seconds, speed, median = _speed(system)
        epochs = len(system["epochs"])
        lines.append(
            f"| {system['name']} | {system['params']:,} | {epochs} | "
            f"{tokens / epochs:,.0f} | {seconds:,.0f} | {speed:,.0f} | "
            f"{median:,.0f} | {median / joey_median:.2f}x |"
        )
    return "\n".join(lines)


def _speed(system):
    """Tokens, seconds and tokens/s of all epochs, and the tokens/s of the
    median epoch (robust to an epoch slowed by something else running)."""
    tokens = sum(t for t, _ in system["epochs"].values())
    seconds = sum(s for _, s in system["epochs"].values())
    rates = sorted(t / s for t, s in system["epochs"].values())
    return tokens, seconds, tokens / seconds, statistics.median(rates)


def decoding_table(systems, references):
    joey = systems[0]["speeds"]
    lines = [
        "| test2016, batch 64 | BLEU beam 5 | (13a) | BLEU greedy | "
        "**beam 5 sentences/s** | vs JoeyNMT | greedy sentences/s | "
        "vs JoeyNMT |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for system in systems:
        beam, greedy = system["speeds"]["beam 5"], system["speeds"]["greedy"]
        lines.append(
            f"| {system['name']} | "
            f"{bleu(system['hyp']['beam 5'], references, 'none'):.2f} | "
            f"{bleu(system['hyp']['beam 5'], references, '13a'):.2f} | "
            f"{bleu(system['hyp']['greedy'], references, 'none'):.2f} | "
            f"{beam:.1f} | {beam / joey['beam 5']:.2f}x | {greedy:.1f} | "
            f"{greedy / joey['greedy']:.2f}x |"
        )
    return "\n".join(lines)


def alternating_table(log_path):
    """The last run of training_alternating.sh in `log_path`, as a table
    of JoeyNMT's and our tokens/s by round (None if no round finished)."""
    text = log_path.read_text()
    runs = list(ALTERNATING_RUN.finditer(text))
    if not runs:
        return None
    started, commit = runs[-1].groups()
    rounds = ALTERNATING_ROUND.findall(text[runs[-1].end() :])
    if not rounds:
        return None
    bfloat16 = all(row[4] for row in rounds)
    header = "| round (ended) | JoeyNMT tokens/s | ours float32 | vs JoeyNMT |"
    rule = "|---|---:|---:|---:|"
    if bfloat16:
        header += " ours mixed bfloat16 | vs JoeyNMT |"
        rule += "---:|---:|"
    lines = [
        f"Training, epochs alternating (run of {started}, commit {commit}):",
        "",
        header,
        rule,
    ]
    for ended, number, *speeds in rounds:
        joey, ours = float(speeds[0]), float(speeds[1])
        line = (
            f"| {number} ({ended}) | {joey:,.0f} | {ours:,.0f} | "
            f"{ours / joey:.2f}x |"
        )
        if bfloat16:
            ours = float(speeds[2])
            line += f" {ours:,.0f} | {ours / joey:.2f}x |"
        lines.append(line)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    args = parser.parse_args()
    out = args.out
    references = (out / "data" / "test2016.de").read_text().splitlines()
    runs = [run for run in OURS_RUNS if (out / f"{run}_train.out").exists()]
    training = [joey_training(out)] + [
        ours_training(out, run, OURS_RUNS[run]) for run in runs
    ]
    decoding = [joey_decoding(out, len(references))]
    for run in runs:
        for precision in ("float32", "bfloat16"):
            if (out / f"{run}_{precision}_decode.out").exists():
                decoding.append(ours_decoding(out, run, precision))
    print(training_table(training))
    print()
    alternating = out / "alternating" / "alternating.log"
    table = alternating_table(alternating) if alternating.exists() else None
    if table:
        print(table)
        print()
    print(decoding_table(decoding, references))
    for system in training:
        bleus = ", ".join(f"{b:.2f}" for b in system["valid_bleu"])
        ppls = ", ".join(f"{p:.2f}" for p in system["valid_ppl"])
        print(f"\n{system['name']}, validation greedy BLEU by epoch: {bleus}")
        print(f"{system['name']}, validation perplexity by epoch: {ppls}")


if __name__ == "__main__":
    main()
