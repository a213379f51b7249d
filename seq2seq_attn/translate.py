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

FLAGS = flags.FLAGS
flags.DEFINE_list(
    "model_dir", None, "Model directory, or several for an ensemble."
)
flags.DEFINE_string(
    "input", "-", "Input file, one sentence per line; - is stdin."
)
flags.DEFINE_string("output", "-", "Output file; - is stdout.")
flags.DEFINE_enum("checkpoint", "best", ["best", "latest"], "Which checkpoint.")
flags.DEFINE_integer("beam_size", 5, "Beam width; 1 is greedy search.")
flags.DEFINE_enum(
    "length_penalty", "average", ["none", "average", "gnmt"], "Length scoring."
)
flags.DEFINE_float("alpha", 0.75, "Length penalty exponent.")
flags.DEFINE_float("beta", 0.0, "Coverage penalty weight (GNMT).")
flags.DEFINE_integer("nbest", 1, "Hypotheses per sentence (<= beam_size).")
flags.DEFINE_bool("scores", False, "Prefix each hypothesis with its score.")
flags.DEFINE_bool(
    "replace_unk", False, "Replace <unk> by the attended source word."
)
flags.DEFINE_string(
    "unk_dictionary", None, "source<TAB>target word dictionary."
)
flags.DEFINE_float("max_length_a", 1.5, "Output limit: a * source length + b.")
flags.DEFINE_float("max_length_b", 5, "Output limit: a * source length + b.")
flags.DEFINE_integer("max_input_tokens", 0, "Cut longer inputs (0: no limit).")
flags.DEFINE_integer("batch_size", 64, "Sentences per search call.")
flags.DEFINE_enum(
    "invalid_utf8", "error", ["error", "replace"], "Invalid UTF-8 in the input."
)
flags.mark_flag_as_required("model_dir")


def read_lines(path, invalid_utf8="error"):
    """The lines of `path` (or stdin for "-"), split on "\\n" only."""
    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    texts = []
    for number, line in enumerate(lines, 1):
        try:
            texts.append(line.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as error:
            if invalid_utf8 != "replace":
                raise ValueError(
                    f"{path}:{number}: invalid UTF-8 at byte {error.start}; "
                    "pass --invalid_utf8=replace to translate it anyway"
                ) from None
            texts.append(line.decode("utf-8", errors="replace").rstrip("\r"))
    return texts


def load_translator(model_dirs, checkpoint="best", **options):
    """A `Translator` for one model directory, or an ensemble of several
    (which must share their vocabularies)."""
    from seq2seq_attn.decoding.ensemble import EnsembleForm
    from seq2seq_attn.decoding.translator import Translator
    from seq2seq_attn.model_dir import load_trained

    loaded = [load_trained(path, checkpoint) for path in model_dirs]
    _, model, source, target = loaded[0]
    for path, (_, _, other_source, other_target) in zip(
        model_dirs[1:], loaded[1:], strict=True
    ):
        if (other_source.fingerprint(), other_target.fingerprint()) != (
            source.fingerprint(),
            target.fingerprint(),
        ):
            raise ValueError(
                f"{path} has other vocabularies than {model_dirs[0]}: "
                "an ensemble needs shared vocabularies"
            )
    if len(loaded) > 1:
        model = EnsembleForm([entry[1] for entry in loaded])
    return Translator(model, source, target, **options)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    logging.set_verbosity(logging.WARNING)
    from seq2seq_attn.decoding.scoring import Scoring
    from seq2seq_attn.decoding.unk_replacement import load_dictionary

    sentences = read_lines(FLAGS.input, FLAGS.invalid_utf8)
    translator = load_translator(
        FLAGS.model_dir,
        FLAGS.checkpoint,
        beam_size=FLAGS.beam_size,
        scoring=Scoring(FLAGS.length_penalty, FLAGS.alpha, FLAGS.beta),
        nbest=FLAGS.nbest,
        max_length_a=FLAGS.max_length_a,
        max_length_b=FLAGS.max_length_b,
        batch_size=FLAGS.batch_size,
        max_input_tokens=FLAGS.max_input_tokens or None,
        replace_unk=FLAGS.replace_unk,
        dictionary=load_dictionary(FLAGS.unk_dictionary)
        if FLAGS.unk_dictionary
        else None,
    )
    results = translator.translate(sentences, progress=FLAGS.input != "-")
    if FLAGS.output == "-":
        out = open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False)
    else:
        out = open(FLAGS.output, "w", encoding="utf-8")
    with out:
        for result in results:
            hypotheses = result.nbest[: FLAGS.nbest]
            if FLAGS.scores:
                fields = [f"{score:.4f} {text}" for text, score in hypotheses]
            else:
                fields = [text for text, _ in hypotheses]
            out.write("\t".join(fields) + "\n")


if __name__ == "__main__":
    app.run(main)
