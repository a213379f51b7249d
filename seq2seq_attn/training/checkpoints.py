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

# What reading a damaged checkpoint raises: a cut `.index` is "not an
# sstable" (OpError), a cut shard "Read less bytes than requested"
# (IndexError), a changed byte a checksum mismatch (DataLossError).
READ_ERRORS = (tf.errors.OpError, IndexError)


class DamagedCheckpointError(ValueError):
    """No intact checkpoint could be read."""


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


def restore_newest_intact(checkpoint, prefixes, log=print, partial=False):
    """Restores `checkpoint` (a `tf.train.Checkpoint`) from the first of
    `prefixes` that reads, saying in one line each which were damaged.

    Args:
        checkpoint: what to restore into.
        prefixes: candidates, the preferred first.
        log: where the lines about damaged checkpoints go.
        partial: the checkpoint may hold more than `checkpoint` (a training
            checkpoint read for its model only); every object of
            `checkpoint` must still be in it.

    Returns:
        The prefix restored, or None if `prefixes` is empty.

    Raises:
        DamagedCheckpointError: if every candidate is damaged.
    """
    damaged = []
    for prefix in prefixes:
        try:
            status = checkpoint.restore(prefix)
        except READ_ERRORS as error:
            found = damage(prefix) or f"{prefix}: {_first_line(error)}"
            damaged.append(found)
            log(f"warning: damaged checkpoint {found}; trying an older one")
            continue
        if partial:
            status.expect_partial().assert_existing_objects_matched()
        else:
            status.assert_consumed()
        if damaged:
            log(f"using {prefix}, the newest intact checkpoint")
        return prefix
    if damaged:
        raise DamagedCheckpointError(
            "every checkpoint is damaged: " + "; ".join(damaged)
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
