"""`python -m seq2seq_attn.translate`: translate lines of text.

    python -m seq2seq_attn.translate --model_dir=runs/quickstart \
        --input=sentences.txt --output=translations.txt --beam_size=5

Reads a file (or stdin) and writes exactly one line per input line, in
order; an empty input line gives an empty output line. With `--nbest N > 1`
each output line holds the N hypotheses separated by tabs. Several
`--model_dir`s (comma-separated) decode as an ensemble (Luong 4.2).
"""

import sys

from absl import app, flags, logging

from seq2seq_attn import cli
from seq2seq_attn.cli import search_flags, translator_flags

FLAGS = flags.FLAGS
flags.DEFINE_string(
    "input", "-", "Input file, one sentence per line; - is stdin."
)
flags.DEFINE_string("output", "-", "Output file; - is stdout.")
flags.DEFINE_bool("scores", False, "Prefix each hypothesis with its score.")


def read_lines(path, invalid_utf8="error"):
    """The lines of `path` (or stdin for "-"), split on "\\n" only; a line
    of invalid UTF-8 is an error, replaced (U+FFFD), or with "skip" read as
    an empty line (its translation is empty: one line out per line in)."""
    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    texts = []
    for number, line in enumerate(lines, 1):
        try:
            texts.append(line.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as error:
            if invalid_utf8 == "error":
                raise ValueError(
                    f"{path}:{number}: invalid UTF-8 at byte {error.start}; "
                    "pass --invalid_utf8=replace to translate it anyway (or "
                    "skip for an empty line)"
                ) from None
            skip = invalid_utf8 == "skip"
            texts.append(
                "" if skip else line.decode("utf-8", "replace").rstrip("\r")
            )
    return texts


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    logging.set_verbosity(logging.WARNING)
    try:
        if FLAGS.output == "-" and sys.stdout is None:
            # Started with its standard output closed (`>&-`).
            raise ValueError("standard output is closed; give --output=FILE")
        cli.check_writable_file(FLAGS.output)
        sentences = read_lines(FLAGS.input, FLAGS.invalid_utf8)
        translator = translator_flags.translator_from_flags("translate")
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    results = translator.translations(sentences, progress=FLAGS.input != "-")
    search_flags.warn_if_cut(results, translator.config.max_input_tokens)
    if FLAGS.output == "-":
        out = open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False)
    else:
        out = open(FLAGS.output, "w", encoding="utf-8")
    try:
        with out:
            for result in results:
                hypotheses = result.nbest[: FLAGS.nbest]
                if FLAGS.scores:
                    fields = [f"{s:.4f} {text}" for text, s in hypotheses]
                else:
                    fields = [text for text, _ in hypotheses]
                out.write("\t".join(fields) + "\n")
    except OSError as error:
        if error.filename is not None:
            raise
        # A write or the close (a full disk): name the file.
        raise OSError(error.errno, error.strerror, FLAGS.output) from error


def command():
    """The command line: `main` under `cli.run`."""
    cli.run(main)


if __name__ == "__main__":
    command()
