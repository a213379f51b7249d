"""Loading a trained model directory (`training.layout.ModelDir`): the
model, its tokenizers, and a `Translator` over one model or an ensemble.

This module sits above `decoding/` and `export/`: it builds what they take
from the files training wrote, so that every import arrow points down.
"""

import os
import sys

import tensorflow as tf

from seq2seq_attn.config.run import RunConfig
from seq2seq_attn.data.tokenizers import load_tokenizer
from seq2seq_attn.decoding.ensemble import EnsembleForm
from seq2seq_attn.decoding.translator import Translator
from seq2seq_attn.models.builder import build_model
from seq2seq_attn.training.checkpoints import (
    DamagedCheckpointError,
    restore_newest_intact,
)
from seq2seq_attn.training.layout import ModelDir

__all__ = [
    "ModelDir",
    "build_with_precision",
    "load_trained",
    "load_translator",
]


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
            or a checkpoint path. A damaged checkpoint, or one of another
            model, is named on stderr and the next older one is used.
        precision: the compute precision of the rebuilt model (see
            `build_with_precision`); the checkpoint is the same.

    Returns:
        `(run_config, model, source_tokenizer, target_tokenizer)`.

    Raises:
        ValueError: if a tokenizer does not match the model's vocabulary,
            or no checkpoint reads (`DamagedCheckpointError`).
    """
    paths = ModelDir(model_dir)
    if paths.path.exists() and not paths.path.is_dir():
        raise ValueError(f"{paths.path}: is a file, not a model directory")
    run = RunConfig.load(paths.path)
    if run.data.corpus == "multi30k" and run.data.variant == "tok":
        _warn(
            f"note: {paths.path} was trained on Multi30k's tok/ text "
            "(lowercased, Moses-tokenised): give it input in that form, or "
            "train on raw text (--recipe=quickstart) to read sentences "
            "as people write them"
        )
    source = load_tokenizer(paths.vocab_dir("source"))
    target = load_tokenizer(paths.vocab_dir("target"))
    source.check_vocab_size(run.model.source_vocab_size, "source")
    target.check_vocab_size(run.model.target_vocab_size, "target")
    paths.check_vocab_checksums({"source": source, "target": target})
    model = build_with_precision(run.model, precision)
    # Every weight of the model must come from the checkpoint (a training
    # checkpoint also holds the optimizer: that part may stay); one of
    # another model is skipped, as a damaged one is.
    try:
        restore_newest_intact(
            tf.train.Checkpoint(model=model),
            paths.checkpoint_candidates(checkpoint),
            log=_warn,
            partial=True,
            skip_others=True,
        )
    except DamagedCheckpointError as error:
        if run.model.architecture != "luong" or not error.of_another_model:
            raise
        raise DamagedCheckpointError(
            f"{error} (a Luong checkpoint written before StackedLSTM stored "
            "its weights as attributes lacks the LSTM weights)",
            of_another_model=True,
        ) from None
    return run, model, source, target


def _warn(line):
    print(line, file=sys.stderr)


def load_translator(
    model_dirs, checkpoint="best", precision="float32", **options
):
    """A `Translator` (strings in, strings out) for a trained model.

    Args:
        model_dirs: a directory written by `python -m seq2seq_attn.train`,
            or a list of them: an ensemble, which must share vocabularies.
        checkpoint: "best", "latest" or a checkpoint path (`load_trained`).
        precision: "float32", "bfloat16" or "float16".
        **options: for `Translator`: search options (`beam_size=5`, `nbest`,
            `scoring`, `max_length_a`, `max_length_b`, `no_repeat_ngram_size`,
            `max_input_tokens`, `batch_size`), or `replace_unk` and
            `dictionary`.

    Example:
        translator = seq2seq_attn.load_translator("runs/quickstart")
        translator.translate("Ein Hund rennt.")  # -> one string
        translator.translate(["Ein Hund.", "Zwei Katzen."])  # -> a list
    """
    if isinstance(model_dirs, (str, os.PathLike)):
        model_dirs = [model_dirs]
    model_dirs = list(model_dirs)
    if not model_dirs:
        raise ValueError("load_translator needs a model directory, got none")
    loaded = [load_trained(path, checkpoint, precision) for path in model_dirs]
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
