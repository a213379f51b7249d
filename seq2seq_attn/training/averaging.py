"""Checkpoint averaging: the mean of the weights of a run's last N training
checkpoints, written as a model directory of its own (as OpenNMT-tf's
`average_checkpoints` and Marian's `--average` do; Vaswani et al. 2017,
Sec. 6.1, average the last 5 or 20). The average often translates better
than any one of the checkpoints it averages."""

import json
import shutil

import numpy as np
import tensorflow as tf

from seq2seq_attn.config import RunConfig
from seq2seq_attn.folders import written_whole
from seq2seq_attn.models.builder import build_model
from seq2seq_attn.training.checkpoints import (
    READ_ERRORS,
    checkpoint_prefixes,
    checkpoint_step,
)
from seq2seq_attn.training.layout import ModelDir
from seq2seq_attn.training.weight_average import WeightAverage


def average_checkpoints(model_dir, output_dir, last=5, log=print):
    """Writes the mean of the trainable weights of the newest `last`
    training checkpoints of `model_dir` (its other weights, such as
    dropout's random state, from the newest) to `output_dir`; of a run
    trained with `ema_decay`, the mean of their moving averages, the
    weights that its validation, `best/` and export use (and it says so).
    Written: the run's
    config, vocabularies and flags, and the average as its `best/`
    checkpoint, which `load_translator(output_dir)` reads. The folder
    appears whole (`folders.written_whole`) or not at all.

    Returns:
        The prefixes averaged, newest first.

    Raises:
        ValueError: `last` below 1, no checkpoint, a checkpoint that does
            not read (named), or an `output_dir` that is `model_dir` or
            holds files already.
    """
    if last < 1:
        raise ValueError(f"last must be >= 1, got {last}")
    source, target = ModelDir(model_dir), ModelDir(output_dir)
    if target.path.resolve() == source.path.resolve():
        raise ValueError(f"{target.path}: is the model directory averaged")
    if target.path.exists() and any(target.path.iterdir()):
        raise ValueError(f"{target.path}: holds files already; name a new one")
    run = RunConfig.load(source.path)
    prefixes = checkpoint_prefixes(source.checkpoints)[:last]
    if not prefixes:
        raise ValueError(f"no training checkpoint in {source.checkpoints}")
    if len(prefixes) < last:
        log(
            f"note: {source.checkpoints} keeps {len(prefixes)} checkpoint(s) "
            f"(--keep_checkpoints), not {last}: averaging those"
        )
    model = build_model(run.model)
    average = _mean_weights(model, prefixes, run.train.ema_decay)
    for variable, value in zip(model.trainable_variables, average, strict=True):
        variable.assign(value)
    step = checkpoint_step(prefixes[0])
    weights = (
        f"the moving averages (--ema_decay={run.train.ema_decay:g})"
        if run.train.ema_decay
        else "the weights"
    )
    with written_whole(target.path) as partial:
        _write(source, ModelDir(partial), run, model, step, prefixes, weights)
    log(
        f"averaged {weights} of {len(prefixes)} checkpoint(s) of "
        f"{source.path} (steps "
        f"{', '.join(str(checkpoint_step(p)) for p in prefixes)}) into "
        f"{target.path}"
    )
    return prefixes


def _mean_weights(model, prefixes, ema_decay=0.0):
    """The mean of `model`'s trainable weights over `prefixes` (float64
    sums), or with `ema_decay` of their `WeightAverage`s; the model keeps
    the newest checkpoint's weights."""
    variables = model.trainable_variables
    checkpoint = tf.train.Checkpoint(model=model)
    if ema_decay:
        average = WeightAverage(variables, ema_decay)
        checkpoint = tf.train.Checkpoint(model=model, weight_average=average)
        variables = average.averages
    total = [np.zeros(v.shape, np.float64) for v in variables]
    for prefix in reversed(prefixes):  # the newest last: it stays loaded
        try:
            status = checkpoint.restore(prefix).expect_partial()
            status.assert_existing_objects_matched()
        except (*READ_ERRORS, AssertionError) as error:
            first = str(error).strip().splitlines()[0][:200]
            raise ValueError(f"{prefix}: does not read ({first})") from None
        for index, variable in enumerate(variables):
            total[index] += variable.numpy().astype(np.float64)
    return [
        (value / len(prefixes)).astype(variable.numpy().dtype)
        for value, variable in zip(total, variables, strict=True)
    ]


def _write(source, target, run, model, step, prefixes, weights):
    shutil.copytree(source.vocab, target.vocab)
    if source.flags.is_file():
        shutil.copyfile(source.flags, target.flags)
    run.save(target.path)
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(
            model=model, step=tf.Variable(step, dtype=tf.int64)
        ),
        str(target.best),
        max_to_keep=1,
        checkpoint_name="ckpt",
    )
    manager.save(checkpoint_number=step)
    metrics = {
        "averaged": [str(p) for p in prefixes],
        "weights": weights,
        "step": step,
    }
    (target.best / "metrics.json").write_text(
        json.dumps(metrics, indent=2) + "\n"
    )
