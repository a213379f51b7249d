"""Peak memory of one very long input line, against a one-sentence request.

    python benchmarks/input_memory.py [--model_dir=runs/quickstart]
        [--megabytes=10]

Each case runs in a fresh process, whose peak RSS (`ru_maxrss` from
`os.wait4`) is printed:
- `serving_default` of the model's export, loaded with only TensorFlow and
  TF Text imported: one short sentence, then one line of `--megabytes` MB;
- `python -m seq2seq_attn.translate` on the same two inputs.
Without `--model_dir`, a small SentencePiece RNNsearch is trained for 20
steps on 2,000 Multi30k pairs from ../shared/data (what is measured is the
text processing, not the translation's quality).
"""

import argparse
import gzip
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "multi30k"
SENTENCE = "A man in a blue shirt is riding a bicycle down the street. "

SERVE = """
import sys
import tensorflow as tf
import tensorflow_text  # noqa: F401
text = open(sys.argv[2], encoding="utf-8").read()
serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
print(serve(text=tf.constant([text]))["translation"].numpy()[0][:60])
"""


def peak_rss_mb(command, stdin=None):
    """Runs `command`; returns its peak RSS in MB (it must succeed)."""
    with open(stdin or os.devnull, "rb") as source:
        process = subprocess.Popen(
            command,
            stdin=source,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(process.stderr.read().decode()[-2000:])
    return usage.ru_maxrss / 1024


def small_model(directory):
    """A 20-step SentencePiece RNNsearch on 2,000 Multi30k pairs."""
    files = {}
    for language in ("en", "de"):
        with gzip.open(DATA / f"train.{language}.gz", "rt") as stream:
            lines = [next(stream) for _ in range(2000)]
        files[language] = directory / f"train.{language}"
        files[language].write_text("".join(lines))
    model_dir = directory / "model"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.train",
            f"--model_dir={model_dir}",
            "--corpus=",
            f"--train_source_file={files['en']}",
            f"--train_target_file={files['de']}",
            "--source_vocab_size=1000",
            "--target_vocab_size=1000",
            "--hidden_units=64",
            "--embedding_dim=64",
            "--max_steps=20",
        ],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    return model_dir


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model_dir")
    parser.add_argument("--megabytes", type=float, default=10)
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="input_memory_"))
    model_dir = args.model_dir or small_model(work)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.export",
            f"--model_dir={model_dir}",
            f"--export_dir={work / 'export'}",
        ],
        check=True,
        capture_output=True,
        cwd=ROOT,
    )
    export = work / "export" / "1"
    inputs = {
        "one sentence": work / "short.txt",
        "long line": work / "long.txt",
    }
    inputs["one sentence"].write_text(SENTENCE.strip() + "\n")
    repeats = int(args.megabytes * 1e6 / len(SENTENCE))
    inputs["long line"].write_text(SENTENCE * repeats + "\n")
    size = inputs["long line"].stat().st_size / 1e6
    print(f"long line: {size:.1f} MB; peak RSS of a fresh process, MB")
    translate = [
        sys.executable,
        "-m",
        "seq2seq_attn.translate",
        f"--model_dir={model_dir}",
    ]
    for name, command_of in (
        (
            "serving_default",
            lambda p: (
                [sys.executable, "-c", SERVE, str(export), str(p)],
                None,
            ),
        ),
        ("translate", lambda p: (translate, p)),
    ):
        peaks = {
            case: peak_rss_mb(*command_of(path))
            for case, path in inputs.items()
        }
        print(
            f"{name:16s} one sentence {peaks['one sentence']:7.0f}   "
            f"long line {peaks['long line']:7.0f}   "
            f"difference {peaks['long line'] - peaks['one sentence']:+6.0f}"
        )


if __name__ == "__main__":
    main()
