"""`python -m seq2seq_attn.export`: write a SavedModel for TF Serving.

    python -m seq2seq_attn.export --model_dir=runs/m30k_rnnsearch \
        --export_dir=exports/m30k_rnnsearch --beam_size=5

writes `EXPORT_DIR/<version>/` (the next integer, as TF Serving expects),
complete or not at all (it is renamed into place once written), with the
signatures `serving_default`, `translate_nbest` and `align`, and the
vocabularies in its assets. See `seq2seq_attn.export.exporter`.
"""

import sys

from absl import app, flags, logging

from seq2seq_attn import cli
from seq2seq_attn.cli import search_flags

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "The trained model's directory.")
flags.DEFINE_string("export_dir", None, "Where the version folders go.")
flags.DEFINE_integer("version", 0, "Version folder (0: the next integer).")
flags.DEFINE_enum("checkpoint", "best", ["best", "latest"], "Which checkpoint.")
flags.mark_flags_as_required(["model_dir", "export_dir"])
search_flags.use_command_defaults("export")


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    logging.set_verbosity(logging.WARNING)
    from seq2seq_attn.export.exporter import check_export_dir, export
    from seq2seq_attn.model_dir import load_translator

    try:
        check_export_dir(FLAGS.export_dir, FLAGS.version or None)
        search = search_flags.search_config_from_flags("export")
        translator = load_translator(
            FLAGS.model_dir, FLAGS.checkpoint, search=search
        )
        path = export(translator, FLAGS.export_dir, FLAGS.version or None)
    except (ValueError, FileNotFoundError, FileExistsError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    print(f"exported to {path}")


def command():
    """The command line: `main` under `cli.run`."""
    cli.run(main)


if __name__ == "__main__":
    command()
