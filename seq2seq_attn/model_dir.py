"""The layout of a model directory, and loading a trained model from it.

MODEL_DIR/
  config.json          RunConfig: model, data and training configs
  flags.txt            the train flags actually used
  vocab/source/        source tokenizer (see data.tokenizers)
  vocab/target/        target tokenizer
  checkpoints/         latest checkpoints (model, optimizer, step, data
                       iterator), every N steps and at each epoch's end
  best/                the checkpoint with the best validation BLEU,
                       and best/metrics.json
  logs/                TensorBoard events
  train_log.tsv        step, epoch, loss, learning rate, tokens/s
  validation.tsv       epoch, step, perplexity, BLEU
  data_identity.json   what the training data is (corpus or file sha256),
                       checked when the run is resumed
"""

import json
import pathlib
import sys

import tensorflow as tf

from seq2seq_attn.data.tokenizers import load_tokenizer
from seq2seq_attn.models.builder import build_model
from seq2seq_attn.training.checkpoints import (
    checkpoint_prefixes,
    restore_newest_intact,
)
from seq2seq_attn.training.config import RunConfig


class ModelDir:
    """Paths inside a model directory."""

    def __init__(self, path):
        self.path = pathlib.Path(path)
        self.config = self.path / "config.json"
        self.flags = self.path / "flags.txt"
        self.vocab = self.path / "vocab"
        self.checkpoints = self.path / "checkpoints"
        self.best = self.path / "best"
        self.logs = self.path / "logs"
        self.train_log = self.path / "train_log.tsv"
        self.validation_log = self.path / "validation.tsv"
        self.data_identity = self.path / "data_identity.json"

    def vocab_dir(self, side):
        """`vocab/source` or `vocab/target`."""
        return self.vocab / side

    def checkpoint_candidates(self, which="best"):
        """Checkpoint prefixes to try, the preferred first: "latest" is the
        training checkpoints, newest first; "best" is the best one, then
        those (so that a damaged or missing best falls back); any other
        value is a checkpoint path given as is."""
        if which not in ("best", "latest"):
            return [str(which)]
        found = checkpoint_prefixes(self.checkpoints)
        if which == "best":
            found = checkpoint_prefixes(self.best) + found
        if not found:
            raise FileNotFoundError(f"no checkpoint in {self.path}")
        return found

    def best_metrics(self):
        """The metrics of the best checkpoint, or None."""
        path = self.best / "metrics.json"
        return json.loads(path.read_text()) if path.is_file() else None


PRECISIONS = {
    "float32": "float32",
    "bfloat16": "mixed_bfloat16",
    "float16": "mixed_float16",
}


def build_with_precision(config, precision="float32"):
    """`build_model(config)` computing in `precision` ("float32", "bfloat16"
    or "float16"); the weights stay float32 and the logits come out float32.
    bfloat16 runs the matrix products on the CPU's bfloat16 units (AMX,
    AVX-512 BF16) where there are some."""
    import keras

    if precision not in PRECISIONS:
        raise ValueError(
            f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}"
        )
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(PRECISIONS[precision])
    try:
        return build_model(config)
    finally:
        keras.config.set_dtype_policy(previous)


def load_trained(model_dir, checkpoint="best", precision="float32"):
    """A trained model and its tokenizers, from `model_dir` alone.

    Args:
        model_dir: a directory written by `python -m seq2seq_attn.train`.
        checkpoint: "best" (by validation BLEU; the latest if none), "latest"
            or a checkpoint path. A damaged checkpoint is named on stderr
            and the next older one is used.
        precision: the compute precision of the rebuilt model (see
            `build_with_precision`); the checkpoint is the same.

    Returns:
        `(run_config, model, source_tokenizer, target_tokenizer)`.

    Raises:
        ValueError: if a tokenizer does not match the model's vocabulary,
            or no checkpoint reads (`DamagedCheckpointError`).
    """
    paths = ModelDir(model_dir)
    run = RunConfig.load(paths.path)
    source = load_tokenizer(paths.vocab_dir("source"))
    target = load_tokenizer(paths.vocab_dir("target"))
    source.check_vocab_size(run.model.source_vocab_size, "source")
    target.check_vocab_size(run.model.target_vocab_size, "target")
    model = build_with_precision(run.model, precision)
    try:
        # Every weight of the model must come from the checkpoint (a
        # training checkpoint also holds the optimizer: that part may stay).
        restore_newest_intact(
            tf.train.Checkpoint(model=model),
            paths.checkpoint_candidates(checkpoint),
            log=_warn,
            partial=True,
        )
    except AssertionError as error:
        raise ValueError(
            f"a checkpoint of {paths.path} does not hold every weight of the "
            f"{run.model.architecture} model (a Luong checkpoint written "
            "before StackedLSTM stored its weights as attributes lacks the "
            f"LSTM weights): {str(error).splitlines()[0]}"
        ) from error
    return run, model, source, target


def _warn(line):
    print(line, file=sys.stderr)
