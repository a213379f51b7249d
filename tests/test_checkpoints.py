"""Checkpoints on disk: damage is named, the newest intact one restored,
writes cut short removed; and the logs cut back on resume."""

import shutil

import pytest
import tensorflow as tf

from seq2seq_attn.training.checkpoints import (
    DamagedCheckpointError,
    checkpoint_prefixes,
    checkpoint_step,
    damage,
    remove_partial_writes,
    restore_newest_intact,
)
from seq2seq_attn.training.resume import truncate_log

HEADER = "step\tloss\n"


@pytest.fixture
def three_checkpoints(tmp_path):
    value = tf.Variable(0.0)
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(value=value), str(tmp_path), 5, "ckpt"
    )
    for step in (5, 10, 15):
        value.assign(float(step))
        manager.save(checkpoint_number=step)
    return tmp_path


def _truncate(path):
    with open(path, "r+b") as stream:
        stream.truncate(path.stat().st_size // 2)


def test_prefixes_come_newest_first_without_the_state_file(
    three_checkpoints,
):
    (three_checkpoints / "checkpoint").write_text("garbage")
    prefixes = checkpoint_prefixes(three_checkpoints)
    assert [checkpoint_step(p) for p in prefixes] == [15, 10, 5]
    assert all(damage(p) == "" for p in prefixes)


@pytest.mark.parametrize("part", ["index", "data-00000-of-00001"])
def test_the_damaged_file_is_named_and_an_older_one_restored(
    three_checkpoints, part
):
    damaged = three_checkpoints / f"ckpt-15.{part}"
    _truncate(damaged)
    prefixes = checkpoint_prefixes(three_checkpoints)
    assert damage(prefixes[0]).startswith(f"{damaged}: ")
    value, lines = tf.Variable(-1.0), []
    restored = restore_newest_intact(
        tf.train.Checkpoint(value=value), prefixes, log=lines.append
    )
    assert checkpoint_step(restored) == 10 and float(value.numpy()) == 10.0
    assert len(lines) == 2 and str(damaged) in lines[0]


def test_every_checkpoint_damaged_is_one_clear_error(three_checkpoints):
    for index in three_checkpoints.glob("*.index"):
        _truncate(index)
    with pytest.raises(DamagedCheckpointError, match="every checkpoint"):
        restore_newest_intact(
            tf.train.Checkpoint(value=tf.Variable(0.0)),
            checkpoint_prefixes(three_checkpoints),
            log=lambda line: None,
        )


def test_temporary_folders_of_cut_writes_are_removed(three_checkpoints):
    # What a write killed before its merge leaves: the shards in PREFIX_temp.
    temp = three_checkpoints / "ckpt-20_temp"
    temp.mkdir()
    shutil.copy(
        three_checkpoints / "ckpt-15.index", temp / "part-00000-of-00001.index"
    )
    assert remove_partial_writes(three_checkpoints) == ["ckpt-20_temp"]
    assert not temp.exists()
    assert len(checkpoint_prefixes(three_checkpoints)) == 3


def test_logs_are_cut_back_to_the_restored_step(tmp_path):
    log = tmp_path / "train_log.tsv"
    # Rows past the checkpoint's step 3, the last one cut short by a kill.
    log.write_text("step\tloss\n1\t5.0\n2\t4.0\n3\t3.0\n4\t2.5\n5\t2")
    assert truncate_log(log, HEADER, 0, 3) == (2, 0)
    assert log.read_text() == "step\tloss\n1\t5.0\n2\t4.0\n3\t3.0\n"
    assert truncate_log(log, HEADER, 0, 3) == (0, 0)
    # No checkpoint restored: back to the header alone.
    assert truncate_log(log, HEADER, 0, 0) == (3, 0)
    assert log.read_text() == HEADER


def test_a_damaged_log_row_is_dropped_and_counted(tmp_path):
    # One garbage value stopped the resume ("could not convert string to
    # float"): the row is dropped, and counted apart from those past.
    log = tmp_path / "train_log.tsv"
    log.write_text("step\tloss\n1\t5.0\n2\tgarbage\n3\t3.0\n4\t2.5\n")
    assert truncate_log(log, HEADER, 0, 3) == (1, 1)
    assert log.read_text() == "step\tloss\n1\t5.0\n3\t3.0\n"


@pytest.mark.parametrize(
    "left",
    ["", "ste", "1\t5.0\n2\t4.0\n", "step\tloss\n1\t5.0\n\x00\x00\t\x00\n"],
    ids=["empty", "header cut", "no header", "zeros of a full disk"],
)
def test_a_log_left_empty_or_cut_is_repaired(tmp_path, left):
    log = tmp_path / "train_log.tsv"
    log.write_text(left)
    truncate_log(log, HEADER, 0, 1)
    rows = log.read_text().splitlines()
    assert rows[0] == HEADER.strip()
    assert rows[1:] == (["1\t5.0"] if "1\t5.0" in left else [])
    assert truncate_log(log, HEADER, 0, 1) == (0, 0)
