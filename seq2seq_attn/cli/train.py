"""`python -m seq2seq_attn.train`: train a model into a model directory.

    python -m seq2seq_attn.train --recipe=quickstart \
        --model_dir=runs/quickstart
    python -m seq2seq_attn.train --flagfile=my.flags --model_dir=runs/mine

`--recipe=NAME` reads one of the package's recipes (`seq2seq_attn.recipes`:
`python -m seq2seq_attn.recipes` lists them), as `--flagfile` would; flags
after it override it.

Every field of `ModelConfig`, `DataConfig` and `TrainConfig` is a flag of
the same name (the vocabulary sizes of the model come from the tokenizers).
The flags actually used are written to `MODEL_DIR/flags.txt` and the configs
to `MODEL_DIR/config.json`. Running the same command again on a model
directory with a checkpoint resumes from it.
"""

import sys

from absl import app, flags, logging

from seq2seq_attn import cli, recipes
from seq2seq_attn.cli.config_flags import (
    define_config_flags,
    resolve_corpus,
)
from seq2seq_attn.config.model import IGNORED_FIELDS, ModelConfig
from seq2seq_attn.config.run import (
    SECTIONS,
    DataConfig,
    RunConfig,
    TrainConfig,
)

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "Directory of the run.")
flags.DEFINE_bool(
    "print_params", False, "Build the model, print its size, exit."
)
flags.DEFINE_string(
    "recipe",
    None,
    "A recipe of the package by name (python -m seq2seq_attn.recipes lists "
    "them): read where it stands, as --flagfile=PATH would be.",
)
flags.mark_flag_as_required("model_dir")

# Model fields that are not flags: they come from the tokenizers.
_DERIVED = {"source_vocab_size", "target_vocab_size"}
FLAG_SECTIONS = define_config_flags(
    SECTIONS, __name__, skip={"model": _DERIVED}
)


def run_config_from_flags():
    """The `RunConfig` the flags describe (vocabulary sizes left as data's)."""
    values = {section: {} for section in SECTIONS}
    for name, section in FLAG_SECTIONS.items():
        values[section][name] = FLAGS[name].value
    resolve_corpus(values["data"])
    _refuse_ignored_model_flags(values["model"].get("architecture"))
    data = DataConfig(**values["data"])
    model = ModelConfig(
        source_vocab_size=data.source_vocab_size,
        target_vocab_size=data.target_vocab_size,
        **values["model"],
    )
    return RunConfig(
        model=model, data=data, train=TrainConfig(**values["train"])
    )


def _refuse_ignored_model_flags(architecture):
    """Refuses, by name, model flags given for an architecture that does
    not read them (`--attention_mode=local-p` for rnnsearch)."""
    given = [
        name
        for name in IGNORED_FIELDS.get(architecture, ())
        if name in FLAG_SECTIONS and FLAGS[name].present
    ]
    if given:
        names = ", ".join(f"--{name}" for name in given)
        raise ValueError(
            f"model: {names} {'has' if len(given) == 1 else 'have'} no "
            f"effect on architecture={architecture}; remove "
            f"{'it' if len(given) == 1 else 'them'}"
        )


def flags_text():
    """`--name=value` for every flag of the run, one per line."""
    names = ["model_dir", *FLAG_SECTIONS]
    return "".join(FLAGS[name].serialize() + "\n" for name in names)


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    logging.set_verbosity(logging.WARNING)
    try:
        run = run_config_from_flags()
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    from seq2seq_attn.training.strategy import make_strategy

    strategy = make_strategy(run.train.strategy, run.train.num_cpu_devices)
    if FLAGS.print_params:
        from seq2seq_attn.models.builder import build_model

        count = build_model(run.model).count_params()
        print(f"{run.model.architecture}: {count:,} parameters")
        return
    from seq2seq_attn.data.download import DownloadError
    from seq2seq_attn.training.divergence import TrainingDivergedError
    from seq2seq_attn.training.interruption import TrainingInterrupted
    from seq2seq_attn.training.run_lock import RunDirectoryLockedError
    from seq2seq_attn.training.trainer import Trainer

    try:
        trainer = Trainer(
            run, FLAGS.model_dir, strategy=strategy, flags_text=flags_text()
        )
    except KeyboardInterrupt:
        print(
            "interrupted before training; run the same command to start",
            file=sys.stderr,
        )
        sys.exit(130)
    except (
        ValueError,
        FileNotFoundError,
        DownloadError,
        RunDirectoryLockedError,
    ) as error:
        # Bad data or a model_dir of another run: say what, lose nothing.
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    try:
        metrics = trainer.fit()
    except TrainingDivergedError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(3)
    except TrainingInterrupted as interrupted:
        print(interrupted, file=sys.stderr)
        sys.exit(130)
    except KeyboardInterrupt:  # a second Ctrl-C: at once
        print(
            f"interrupted at step {int(trainer.step.numpy())}; run the same "
            "command to resume from the last checkpoint",
            file=sys.stderr,
        )
        sys.exit(130)
    if metrics:
        print(
            f"done: step {metrics['step']}, validation perplexity "
            f"{metrics['perplexity']:.2f}, greedy BLEU {metrics['bleu']:.2f}"
        )
    else:
        print(f"done: step {int(trainer.step.numpy())}, no validation data")


def run_config_from_flagfile(path, *extra_flags):
    """The `RunConfig` a flagfile describes (flags parsed afresh)."""
    FLAGS.unparse_flags()
    FLAGS(["train", f"--flagfile={path}", "--model_dir=unused", *extra_flags])
    try:
        return run_config_from_flags()
    finally:
        FLAGS.unparse_flags()


def command():
    """The command line: `--recipe=NAME` expanded into its flagfile, then
    `main` under `cli.run`."""
    try:
        argv = recipes.expand_recipe_flags(sys.argv)
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
    cli.run(main, argv)


if __name__ == "__main__":
    command()
