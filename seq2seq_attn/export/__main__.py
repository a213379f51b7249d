"""`python -m seq2seq_attn.export`: write a SavedModel for TF Serving.

    python -m seq2seq_attn.export --model_dir=runs/m30k_rnnsearch \
        --export_dir=exports/m30k_rnnsearch --beam_size=5

writes `EXPORT_DIR/<version>/` (the next integer, as TF Serving expects) with
the signatures `serving_default`, `translate_nbest` and `align`, and the
vocabularies in its assets. See `seq2seq_attn.export.exporter`.
"""

import sys

from absl import app, flags, logging

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "The trained model's directory.")
flags.DEFINE_string("export_dir", None, "Where the version folders go.")
flags.DEFINE_integer("version", 0, "Version folder (0: the next integer).")
flags.DEFINE_enum("checkpoint", "best", ["best", "latest"], "Which checkpoint.")
flags.DEFINE_integer("beam_size", 5, "Beam width; 1 is greedy search.")
flags.DEFINE_integer("nbest", 5, "Hypotheses of translate_nbest (<= beam).")
flags.DEFINE_enum(
    "length_penalty", "average", ["none", "average", "gnmt"], "Length scoring."
)
flags.DEFINE_float("alpha", 0.75, "Length penalty exponent.")
flags.DEFINE_float("beta", 0.0, "Coverage penalty weight.")
flags.DEFINE_float("max_length_a", 1.5, "Output limit: a * source length + b.")
flags.DEFINE_float("max_length_b", 5, "Output limit: a * source length + b.")
flags.DEFINE_integer("max_input_tokens", 100, "Inputs are cut to this length.")
flags.DEFINE_integer(
    "batch_size", 64, "Sentences per search; larger requests are split."
)
flags.mark_flags_as_required(["model_dir", "export_dir"])


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    logging.set_verbosity(logging.WARNING)
    from seq2seq_attn.decoding.scoring import Scoring
    from seq2seq_attn.export.exporter import TranslationModule, export
    from seq2seq_attn.model_dir import load_trained

    try:
        _, model, source, target = load_trained(
            FLAGS.model_dir, FLAGS.checkpoint
        )
        module = TranslationModule(
            model,
            source,
            target,
            beam_size=FLAGS.beam_size,
            scoring=Scoring(FLAGS.length_penalty, FLAGS.alpha, FLAGS.beta),
            nbest=min(FLAGS.nbest, FLAGS.beam_size),
            max_length_a=FLAGS.max_length_a,
            max_length_b=FLAGS.max_length_b,
            max_input_tokens=FLAGS.max_input_tokens,
            batch_size=FLAGS.batch_size,
        )
        path = export(module, FLAGS.export_dir, FLAGS.version or None)
    except (ValueError, FileNotFoundError, FileExistsError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    print(f"exported to {path}")


if __name__ == "__main__":
    app.run(main)
