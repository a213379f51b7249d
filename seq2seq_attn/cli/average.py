"""`python -m seq2seq_attn.average`: average a run's last checkpoints.

    python -m seq2seq_attn.average --model_dir=runs/quickstart --last=3 \
        --output_dir=runs/quickstart_avg3

writes a model directory (the run's config and vocabularies, and the mean
of the weights of its newest `--last` training checkpoints as `best/`) that
translate, evaluate and export read like any other. See
`seq2seq_attn.training.averaging`.
"""

import sys

from absl import app, flags, logging

from seq2seq_attn import cli

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "The run whose checkpoints to average.")
flags.DEFINE_integer(
    "last",
    5,
    "Average the newest this many training checkpoints (the run keeps "
    "--keep_checkpoints of them).",
)
flags.DEFINE_string("output_dir", None, "The new model directory to write.")
flags.mark_flags_as_required(["model_dir", "output_dir"])


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    logging.set_verbosity(logging.WARNING)
    from seq2seq_attn.training.averaging import average_checkpoints

    try:
        cli.check_writable_folder(FLAGS.output_dir)
        average_checkpoints(FLAGS.model_dir, FLAGS.output_dir, FLAGS.last)
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)


def command():
    """The command line: `main` under `cli.run`."""
    cli.run(main)


if __name__ == "__main__":
    command()
