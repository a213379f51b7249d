"""The report of benchmarks/joeynmt_side_by_side.sh, from its output folder.

    python benchmarks/side_by_side.py runs/side_by_side_e12

Reads JoeyNMT's train.log and test logs and our training log, validation.tsv
and decoding log, scores all four test2016 translations with the same
sacreBLEU call, and prints a Markdown table with ratios (ours / JoeyNMT).
"""

import argparse
import csv
import pathlib
import re

import sacrebleu

JOEY_EPOCH = re.compile(
    r"Epoch\s+(\d+), total training loss: [\d.]+, num\. of seqs: \d+, "
    r"num\. of tokens: (\d+), ([\d.]+)\[sec\]"
)
JOEY_VALID = re.compile(
    r"Evaluation result \(greedy\): bleu:\s*([\d.]+), loss:\s*[\d.]+, "
    r"ppl:\s*([\d.]+)"
)
JOEY_PARAMS = re.compile(r"Total params: (\d+)")
OURS_EPOCH = re.compile(
    r"epoch (\d+): ([\d,]+) target tokens in ([\d.]+) s of training"
)
OURS_PARAMS = re.compile(r"training \w+: ([\d,]+) parameters")
OURS_DECODE = re.compile(r"^(greedy|beam 5): ([\d.]+) sentences/s", re.M)


def _last_per_epoch(matches):
    """{epoch: (tokens, seconds)}, the last report of each epoch (a resumed
    epoch is reported again, for its remaining steps only: those add up)."""
    epochs = {}
    for epoch, tokens, seconds in matches:
        epochs.setdefault(int(epoch), []).append(
            (int(tokens.replace(",", "")), float(seconds))
        )
    return {
        epoch: tuple(map(sum, zip(*parts, strict=True)))
        for epoch, parts in epochs.items()
    }


def joey_figures(out):
    log = (out / "joey" / "train.log").read_text()
    epochs = _last_per_epoch(JOEY_EPOCH.findall(log))
    valid = [(float(b), float(p)) for b, p in JOEY_VALID.findall(log)]
    decode = {}
    for name, config in (("beam 5", "joey"), ("greedy", "joey_greedy")):
        text = (out / f"{config}_test.out").read_text()
        test_part = text[text.index("on test set") :]
        seconds = float(
            re.search(r"Generation took ([\d.]+)\[sec\]", test_part).group(1)
        )
        decode[name] = seconds
    return {
        "params": int(JOEY_PARAMS.search(log).group(1)),
        "epochs": epochs,
        "valid_bleu": [b for b, _ in valid],
        "valid_ppl": [p for _, p in valid],
        "decode_seconds": decode,
        "hypotheses": {
            "beam 5": out / "joey.hyp.test",
            "greedy": out / "joey_greedy.hyp.test",
        },
    }


def ours_figures(out, sentences):
    log = (out / "ours_train.out").read_text()
    with open(out / "ours" / "validation.tsv") as stream:
        rows = list(csv.DictReader(stream, delimiter="\t"))
    decode_log = (out / "ours_decode.out").read_text()
    speeds = {k: float(v) for k, v in OURS_DECODE.findall(decode_log)}
    return {
        "params": int(OURS_PARAMS.search(log).group(1).replace(",", "")),
        "epochs": _last_per_epoch(OURS_EPOCH.findall(log)),
        "valid_bleu": [float(row["bleu"]) for row in rows],
        "valid_ppl": [float(row["perplexity"]) for row in rows],
        "decode_seconds": {k: sentences / v for k, v in speeds.items()},
        "hypotheses": {
            "beam 5": out / "ours.beam5",
            "greedy": out / "ours.greedy",
        },
    }


def bleu(path, references, tokenize):
    hypotheses = path.read_text().splitlines()
    return sacrebleu.corpus_bleu(
        hypotheses, [references], tokenize=tokenize, force=True
    ).score


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    args = parser.parse_args()
    references = (args.out / "data" / "test2016.de").read_text().splitlines()
    sentences = len(references)
    joey = joey_figures(args.out)
    ours = ours_figures(args.out, sentences)

    def speed(figures):
        tokens = sum(t for t, _ in figures["epochs"].values())
        seconds = sum(s for _, s in figures["epochs"].values())
        return tokens, seconds, tokens / seconds

    rows = []

    def row(label, j, o, ratio=None, fmt="{:,.2f}"):
        cells = [fmt.format(j), fmt.format(o)]
        cells.append("" if ratio is None else f"{ratio:.2f}x")
        rows.append(f"| {label} | " + " | ".join(cells) + " |")

    row("parameters", joey["params"], ours["params"], fmt="{:,}")
    row("epochs", len(joey["epochs"]), len(ours["epochs"]), fmt="{:d}")
    (jt, js, jr), (ot, os_, orate) = speed(joey), speed(ours)
    row(
        "target tokens per epoch",
        jt / len(joey["epochs"]),
        ot / len(ours["epochs"]),
        fmt="{:,.0f}",
    )
    row(
        "training time (s, validation excluded)",
        js,
        os_,
        js / os_,
        fmt="{:,.0f}",
    )
    row("**training target tokens/s**", jr, orate, orate / jr, fmt="{:,.0f}")
    for name in ("beam 5", "greedy"):
        for tokenize in ("none", "13a"):
            row(
                f"test2016 BLEU, {name} (tokenize {tokenize})",
                bleu(joey["hypotheses"][name], references, tokenize),
                bleu(ours["hypotheses"][name], references, tokenize),
            )
    for name in ("beam 5", "greedy"):
        j = sentences / joey["decode_seconds"][name]
        o = sentences / ours["decode_seconds"][name]
        row(
            f"**{name} decoding, batch 64 (sentences/s)**",
            j,
            o,
            o / j,
            fmt="{:,.1f}",
        )
    print("| figure | JoeyNMT 2.3 | seq2seq_attn | ours / JoeyNMT |")
    print("|---|---:|---:|---:|")
    print("\n".join(rows))
    for name, figures in (("JoeyNMT", joey), ("seq2seq_attn", ours)):
        bleus = ", ".join(f"{b:.2f}" for b in figures["valid_bleu"])
        ppls = ", ".join(f"{p:.2f}" for p in figures["valid_ppl"])
        print(f"\n{name} validation greedy BLEU by epoch: {bleus}")
        print(f"{name} validation perplexity by epoch: {ppls}")


if __name__ == "__main__":
    main()
