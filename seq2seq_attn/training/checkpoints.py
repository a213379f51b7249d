"""Checkpoints on disk: finding them, telling a damaged one, and restoring
the newest intact one.

A checkpoint is a prefix (`ckpt-500`) with an `.index` file and data shards
(`ckpt-500.data-00000-of-00001`). A process killed while TensorFlow writes one
leaves a `ckpt-500_temp/` folder beside them (the shards before they are
merged), and a disk that fills up or a copy that stops early leaves files
cut short. Neither must cost a run more than the checkpoints it damaged.
"""

import pathlib
import re
import shutil

import tensorflow as tf

from seq2seq_attn.training.weight_average import WeightAverage

# What reading a damaged checkpoint raises: a cut `.index` is "not an
# sstable" (OpError), a cut shard "Read less bytes than requested"
# (IndexError), a changed byte a checksum mismatch (DataLossError).
READ_ERRORS = (tf.errors.OpError, IndexError)


class DamagedCheckpointError(ValueError):
    """No intact checkpoint could be read; `of_another_model` says whether
    some of those tried are of another model rather than damaged."""

    def __init__(self, message, of_another_model=False):
        super().__init__(message)
        self.of_another_model = of_another_model


class CheckpointMismatchError(ValueError):
    """A checkpoint that reads, but is not of the model restored into it
    (another architecture or size): `prefix` names it."""

    def __init__(self, prefix, error):
        super().__init__(
            f"{prefix}: a checkpoint of another model ({_first_line(error)})"
        )
        self.prefix = prefix


def checkpoint_prefixes(directory):
    """The checkpoint prefixes in `directory`, newest (highest number)
    first; found from the `.index` files, so a damaged `checkpoint` state
    file does not hide them."""
    numbered = []
    for index in pathlib.Path(directory).glob("*.index"):
        match = re.fullmatch(r"(.+)-(\d+)", index.stem)
        if match:
            numbered.append((int(match.group(2)), str(index.with_suffix(""))))
    return [prefix for _, prefix in sorted(numbered, reverse=True)]


def checkpoint_step(prefix):
    """The number at the end of a prefix: `ckpt-500` -> 500."""
    return int(str(prefix).rsplit("-", 1)[1])


def damage(prefix):
    """What is wrong with the checkpoint at `prefix` ("" if it reads):
    the damaged file and the reader's first line, e.g. "ckpt-5.index: not
    an sstable (bad magic number)"."""
    index = pathlib.Path(f"{prefix}.index")
    if not index.is_file():
        return f"{index} is missing"
    try:
        reader = tf.train.load_checkpoint(str(prefix))
    except READ_ERRORS as error:
        return f"{index}: {_first_line(error)}"
    try:
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
    except READ_ERRORS as error:
        shards = sorted(index.parent.glob(f"{index.stem}.data-*"))
        names = ", ".join(str(shard) for shard in shards) or "its data shard"
        return f"{names}: {_first_line(error)}"
    return ""


def _first_line(error):
    message = getattr(error, "message", None) or str(error)
    return message.strip().splitlines()[0] if message.strip() else repr(error)


def restore_newest_intact(
    checkpoint, prefixes, log=print, partial=False, skip_others=False
):
    """Restores `checkpoint` (a `tf.train.Checkpoint`) from the first of
    `prefixes` that reads, saying in one line each which were damaged.

    Args:
        checkpoint: what to restore into.
        prefixes: candidates, the preferred first.
        log: where the lines about skipped checkpoints go.
        partial: the checkpoint may hold more than `checkpoint` (a training
            checkpoint read for its model only); every object of
            `checkpoint` must still be in it.
        skip_others: a checkpoint of another model (another architecture
            or size) is skipped with a warning, as a damaged one is;
            otherwise it is a `CheckpointMismatchError`.

    Returns:
        The prefix restored, or None if `prefixes` is empty.

    Raises:
        DamagedCheckpointError: if every candidate is damaged (or, with
            `skip_others`, of another model).
        CheckpointMismatchError: the newest that reads is of another model
            (without `skip_others`).
    """
    skipped, others = [], 0
    for prefix in prefixes:
        try:
            status = checkpoint.restore(prefix)
            if partial:
                status.expect_partial().assert_existing_objects_matched()
            else:
                status.assert_consumed()
        except READ_ERRORS as error:
            found = damage(prefix) or f"{prefix}: {_first_line(error)}"
            skipped.append(found)
            log(f"warning: damaged checkpoint {found}; trying an older one")
            continue
        except (ValueError, AssertionError) as error:
            mismatch = CheckpointMismatchError(prefix, error)
            if not skip_others:
                raise mismatch from None
            skipped.append(str(mismatch))
            others += 1
            log(f"warning: {mismatch}; trying an older one")
            continue
        if skipped:
            log(f"using {prefix}, the newest intact checkpoint")
        return prefix
    if skipped:
        what = "of another model or damaged" if others else "damaged"
        raise DamagedCheckpointError(
            f"every checkpoint is {what}: " + "; ".join(skipped),
            of_another_model=bool(others),
        )
    return None


def remove_partial_writes(directory):
    """Removes the `*_temp` folders that a write cut short left in
    `directory`; returns their names."""
    removed = []
    for temp in sorted(pathlib.Path(directory).glob("*_temp")):
        if temp.is_dir():
            shutil.rmtree(temp)
            removed.append(temp.name)
    return removed


def restore_training_state(checkpoint, state, directory, log=print):
    """Restores the newest intact training checkpoint of `directory` into
    `checkpoint` (its `state` and the data iterator); returns its prefix
    (None for a new run). A checkpoint whose data iterator does not read
    (one written before the streaming pipeline) restores the rest of its
    `state`, and says that the data start over.

    Raises:
        DamagedCheckpointError: no checkpoint of `directory` reads.
        ValueError: the newest checkpoint that reads is of another model:
            named, and refused (the run neither trains over it nor rotates
            it away).
    """
    prefixes, lines = checkpoint_prefixes(directory), []
    try:
        prefix = restore_newest_intact(checkpoint, prefixes, lines.append)
        for line in lines:
            log(line)
        return prefix
    except DamagedCheckpointError as error:
        try:
            prefix = restore_newest_intact(
                tf.train.Checkpoint(**state),
                prefixes,
                log=lambda line: None,
                partial=True,
            )
        except (DamagedCheckpointError, CheckpointMismatchError):
            for line in lines:
                log(line)
            raise error from None
        log(
            f"warning: {prefix} holds a data iterator this version cannot "
            "read (written before training data were streamed); resuming "
            "its model and optimizer with the training pairs in a new order"
        )
        return prefix
    except CheckpointMismatchError as error:
        raise ValueError(
            f"{error}: this run does not train over it; move it out of "
            f"{directory} to resume from an older checkpoint, or train into "
            "another --model_dir"
        ) from None


class TrainingCheckpoints:
    """A run's checkpoints: the whole training `state` and the data
    `iterator` in `directory` (the newest `keep`), and the best model by
    validation BLEU in `best_directory`. On construction, writes a kill cut
    short are removed and the newest intact checkpoint is restored (`last`,
    None for a new run; `restore_training_state`).

    Args:
        state: a dict of trackables with at least `model` and `step`.
    """

    def __init__(
        self, state, iterator, directory, best_directory, keep, log=print
    ):
        for folder in (directory, best_directory):
            for name in remove_partial_writes(folder):
                log(f"removed {pathlib.Path(folder) / name}, a write cut short")
        checkpoint = tf.train.Checkpoint(iterator=iterator, **state)
        self._latest = tf.train.CheckpointManager(
            checkpoint, str(directory), max_to_keep=keep, checkpoint_name="ckpt"
        )
        self._best = tf.train.CheckpointManager(
            tf.train.Checkpoint(model=state["model"], step=state["step"]),
            str(best_directory),
            max_to_keep=1,
            checkpoint_name="ckpt",
        )
        self.last = restore_training_state(checkpoint, state, directory, log)

    def save(self, step):
        """Writes the training state as `ckpt-<step>`; returns its prefix."""
        self.last = self._latest.save(checkpoint_number=step)
        return self.last

    def save_best(self, step):
        """Writes the model as the best one (`best/ckpt-<step>`)."""
        return self._best.save(checkpoint_number=step)


def training_state(model, optimizer, ema_decay=0.0):
    """What a training checkpoint holds besides the data iterator (created
    under the strategy's scope): the model, the optimizer, the step, the
    best validation BLEU and the validations since, the step of the last
    validation whose results were recorded (one a kill cut short runs
    again on resume), dropout's random state (Keras keeps it out of the
    model's checkpoint, but a resumed run must draw the same masks), and
    with `ema_decay` the `WeightAverage` of the weights."""
    state = dict(
        model=model,
        optimizer=optimizer,
        step=tf.Variable(0, dtype=tf.int64, trainable=False),
        best_bleu=tf.Variable(-1.0, dtype=tf.float64, trainable=False),
        bad_validations=tf.Variable(0, dtype=tf.int64, trainable=False),
        validated_step=tf.Variable(0, dtype=tf.int64, trainable=False),
        seed_states={
            str(i): v
            for i, v in enumerate(model.non_trainable_variables)
            if "seed_generator" in v.path
        },
    )
    if ema_decay:
        state["weight_average"] = WeightAverage(
            model.trainable_variables, ema_decay
        )
    return state
