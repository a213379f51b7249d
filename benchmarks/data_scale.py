"""How the training data path grows with the corpus (issue #20).

    python benchmarks/data_scale.py [--data_dir ../shared/data] \
        [--work runs/data_scale] [--sizes 29000,1000000,4500000,12000000]

Makes synthetic corpora by repeating Multi30k's raw train (en-de) with a
seeded shuffle each round, to each size (line-aligned plain files, kept in
`--work` for reruns), builds the quickstart's SentencePiece vocabularies
once (`build_vocab` on the 29,000 pairs), then for each size trains
`configs/quickstart.flags` on the files with those vocabularies
(`--vocab_dir`): one step (its wall time is the time to the first step,
TensorFlow's start-up and one checkpoint included), then 30 more steps
resumed from it. Prints per size: time to the first step, the peak RSS of
either process, the size of the step-31 checkpoint, and the pipeline's
pairs/s (this worker's batches, read in-process) against the pairs/s that
training `configs/multi30k/joey_match.flags` consumes (measured first:
steps 41-80 of a run on Multi30k tok).

With `--vocab_in_run` (issue #33) it measures the vocabularies built in
the run instead: for each size, one step of `configs/quickstart.flags` on
the files with no `--vocab_dir`, so that the chief samples
`vocab_sample_lines` pairs and builds both SentencePiece vocabularies
before the step; prints per size the time to the first step, the peak RSS
and the run's vocabulary lines.
"""

import argparse
import gzip
import json
import os
import pathlib
import re
import subprocess
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data"


def make_corpus(data_dir, work, size, seed=2015):
    """`work/SIZE.en` and `.de`: Multi30k raw train repeated, each round in
    a seeded random order, cut at `size` lines."""
    paths = [work / f"{size}.{lang}" for lang in ("en", "de")]
    if all(path.is_file() for path in paths):
        return paths
    sides = []
    for lang in ("en", "de"):
        with gzip.open(data_dir / f"multi30k/train.{lang}.gz", "rb") as f:
            sides.append(f.read().rstrip(b"\n").split(b"\n"))
    rng = np.random.default_rng(seed)
    streams = [open(path, "wb") for path in paths]
    written = 0
    while written < size:
        order = rng.permutation(len(sides[0]))[: size - written]
        for stream, lines in zip(streams, sides, strict=True):
            stream.write(b"\n".join(lines[i] for i in order) + b"\n")
        written += len(order)
    for stream in streams:
        stream.close()
    return paths


def timed(command, log):
    """Runs `command`; returns (wall seconds, peak RSS in MB)."""
    started = time.perf_counter()
    with open(log, "a") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT
        )
        _, status, usage = os.wait4(process.pid, 0)
    if status:
        raise RuntimeError(f"{command} failed; see {log}")
    return time.perf_counter() - started, usage.ru_maxrss / 1024


def fresh_run(work, name):
    """`work/NAME` removed and `work/NAME.log` emptied: (model_dir, log)."""
    model_dir = work / name
    if model_dir.exists():
        subprocess.run(["rm", "-rf", str(model_dir)], check=True)
    log = work / f"{name}.log"
    log.unlink(missing_ok=True)
    return model_dir, log


def print_table(rows, columns):
    """A markdown table, one row per size; `columns` are (heading, key,
    unit, change): change "x" adds the ratio to the first size, "+" the
    difference from it, "" nothing."""
    headings = []
    for heading, _, _, change in columns:
        headings.append(heading)
        if change:
            headings.append("vs first size")
    print("\n| " + " | ".join(headings) + " |")
    print("|" + "---:|" * len(headings))
    base = rows[0]
    for row in rows:
        cells = []
        for _, key, unit, change in columns:
            value = row[key]
            shown = f"{value:,.1f}" if isinstance(value, float) else value
            cells.append(
                f"{shown:,}{unit}"
                if isinstance(shown, int)
                else f"{shown}{unit}"
            )
            if change == "x":
                cells.append(f"{value / base[key]:.2f}x")
            elif change == "+":
                cells.append(f"{value - base[key]:+,.0f}{unit}")
        print("| " + " | ".join(cells) + " |")


def train_command(model_dir, *flags):
    return [
        sys.executable,
        "-m",
        "seq2seq_attn.train",
        f"--model_dir={model_dir}",
        *flags,
    ]


def joey_match_pairs_per_second(data_dir, work):
    """Pairs/s consumed by joey_match training: its target tokens/s over
    steps 41-80 of a new run (the log's window restarts at step 40), over
    the mean target length of Multi30k tok (with </s>)."""
    model_dir = work / "joey_match"
    if not (model_dir / "train_log.tsv").is_file():
        timed(
            train_command(
                model_dir,
                "--flagfile=configs/multi30k/joey_match.flags",
                f"--data_dir={data_dir}",
                "--max_steps=80",
                "--log_every=40",
                "--checkpoint_every=80",
            ),
            work / "joey_match.log",
        )
    rows = (model_dir / "train_log.tsv").read_text().splitlines()[1:]
    speed = float(rows[79].split("\t")[4])
    with gzip.open(data_dir / "multi30k/tok/train.lc.norm.tok.de.gz") as f:
        lines = f.read().decode().splitlines()
    tokens_per_pair = np.mean([len(line.split()) + 1 for line in lines])
    return speed / tokens_per_pair


def pipeline_pairs_per_second(files, vocab, work, batches=300):
    """Pairs/s of the training stream of the quickstart's data config."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from seq2seq_attn.config.run import DataConfig
    from seq2seq_attn.data.training_data import training_data

    flags = dict(
        re.findall(
            r"--(\w+)=(.*)", (ROOT / "configs/quickstart.flags").read_text()
        )
    )
    config = DataConfig(
        corpus=None,
        train_source_file=str(files[0]),
        train_target_file=str(files[1]),
        tokenizer="sentencepiece",
        vocab_dir=str(vocab),
        max_source_length=int(flags["max_source_length"]),
        max_target_length=int(flags["max_target_length"]),
        batch_size=int(flags["batch_size"]),
        sort_window=int(flags["sort_window"]),
    )
    directory = work / f"pipeline_{files[0].stem}"
    directory.mkdir(exist_ok=True)
    data = training_data(
        config, directory / "vocab", directory / "epoch.json", log=print
    )
    iterator = iter(data.train)
    for _ in range(20):
        next(iterator)
    pairs, started = 0, time.perf_counter()
    for _ in range(batches):
        (source, _), _ = next(iterator)
        pairs += int(source.shape[0])
    return pairs / (time.perf_counter() - started)


def vocabularies_in_the_run(data_dir, work, sizes):
    """Time to the first step and peak RSS of the quickstart on each size
    with its vocabularies built in the run; a table at the end."""
    rows = []
    for size in sizes:
        files = make_corpus(data_dir, work, size)
        model_dir, log = fresh_run(work, f"vocab_run_{size}")
        seconds, rss = timed(
            train_command(
                model_dir,
                "--flagfile=configs/quickstart.flags",
                "--corpus=",
                f"--train_source_file={files[0]}",
                f"--train_target_file={files[1]}",
                "--max_steps=1",
                "--checkpoint_every=1",
            ),
            log,
        )
        vocab_lines = [
            line.strip()
            for line in log.read_text().splitlines()
            if line.startswith(("sampled", "built the"))
        ]
        row = dict(
            pairs=size,
            first_step_s=seconds,
            peak_rss_mb=rss,
            vocabulary=vocab_lines,
        )
        rows.append(row)
        print(json.dumps(row), flush=True)
    print_table(
        rows,
        [
            ("pairs", "pairs", "", ""),
            ("time to first step", "first_step_s", " s", "x"),
            ("peak RSS", "peak_rss_mb", " MB", "+"),
        ],
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", type=pathlib.Path, default=DEFAULT_DATA)
    parser.add_argument(
        "--work", type=pathlib.Path, default=ROOT / "runs" / "data_scale"
    )
    parser.add_argument("--sizes", default="29000,1000000,4500000,12000000")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument(
        "--vocab_in_run",
        action="store_true",
        help="measure the vocabularies built in the run (one step each)",
    )
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    sizes = [int(size) for size in args.sizes.split(",")]
    if args.vocab_in_run:
        vocabularies_in_the_run(args.data_dir, work, sizes)
        return

    consumed = joey_match_pairs_per_second(args.data_dir, work)
    print(f"joey_match training consumes {consumed:.1f} pairs/s", flush=True)
    vocab = work / "vocab"
    if not (vocab / "target" / "tokenizer.json").is_file():
        files = make_corpus(args.data_dir, work, 29000)
        timed(
            [
                sys.executable,
                "-m",
                "seq2seq_attn.build_vocab",
                f"--source_file={files[0]}",
                f"--target_file={files[1]}",
                "--tokenizer=sentencepiece",
                "--vocab_size=4000",
                f"--output_dir={vocab}",
            ],
            work / "build_vocab.log",
        )
    rows = []
    for size in sizes:
        files = make_corpus(args.data_dir, work, size)
        model_dir, log = fresh_run(work, f"run_{size}")
        flags = [
            "--flagfile=configs/quickstart.flags",
            "--corpus=",
            f"--train_source_file={files[0]}",
            f"--train_target_file={files[1]}",
            f"--vocab_dir={vocab}",
            f"--checkpoint_every={args.steps + 1}",
        ]
        first, rss_first = timed(
            train_command(model_dir, *flags, "--max_steps=1"), log
        )
        rest, rss_rest = timed(
            train_command(model_dir, *flags, f"--max_steps={args.steps + 1}"),
            log,
        )
        checkpoint = sum(
            path.stat().st_size
            for path in (model_dir / "checkpoints").glob(
                f"ckpt-{args.steps + 1}.*"
            )
        )
        epoch = json.loads((model_dir / "epoch.json").read_text())
        rate = pipeline_pairs_per_second(files, vocab, work)
        row = dict(
            pairs=size,
            first_step_s=first,
            resumed_steps_s=rest,
            peak_rss_mb=max(rss_first, rss_rest),
            checkpoint_mb=checkpoint / 1e6,
            steps_per_epoch=epoch["steps_per_epoch"],
            pipeline_pairs_per_s=rate,
        )
        rows.append(row)
        print(json.dumps(row), flush=True)
    for row in rows:
        row["vs_joey_match"] = f"{row['pipeline_pairs_per_s'] / consumed:.0f}x"
    print_table(
        rows,
        [
            ("pairs", "pairs", "", ""),
            ("time to first step", "first_step_s", " s", "x"),
            ("peak RSS", "peak_rss_mb", " MB", "+"),
            ("checkpoint", "checkpoint_mb", " MB", "x"),
            ("steps/epoch", "steps_per_epoch", "", ""),
            ("pipeline pairs/s", "pipeline_pairs_per_s", "", ""),
            ("vs joey_match training", "vs_joey_match", "", ""),
        ],
    )


if __name__ == "__main__":
    main()
