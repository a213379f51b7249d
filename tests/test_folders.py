"""Folders that appear whole (`seq2seq_attn.folders`): the rename into
place, the mode under a umask, and which abandoned partial folders go."""

import os
import socket
import subprocess

import pytest

from seq2seq_attn.folders import partial_name, remove_abandoned, written_whole


@pytest.fixture
def umask():
    """Sets the process's umask for one test; puts the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    yield os.umask
    os.umask(old)


def _mode(path):
    return path.stat().st_mode & 0o777


@pytest.mark.parametrize("mask, mode", [(0o022, 0o755), (0o027, 0o750)])
def test_the_folder_appears_whole_with_the_umask_s_mode(
    tmp_path, umask, mask, mode
):
    umask(mask)
    target = tmp_path / "exports" / "1"
    with written_whole(target) as partial:
        assert partial.parent == target.parent and partial.name.startswith(
            ".1.partial-"
        )
        (partial / "saved_model.pb").write_bytes(b"graph")
        assert not target.exists()
    assert (target / "saved_model.pb").read_bytes() == b"graph"
    assert _mode(target) == mode
    assert sorted(p.name for p in target.parent.iterdir()) == ["1"]


def test_a_failed_write_leaves_nothing_and_an_empty_target_is_replaced(
    tmp_path,
):
    target = tmp_path / "average"
    with pytest.raises(RuntimeError, match="disk full"):
        with written_whole(target) as partial:
            (partial / "config.json").write_text("{")
            raise RuntimeError("disk full")
    assert list(tmp_path.iterdir()) == []
    target.mkdir()  # an empty folder named by the user is taken
    with written_whole(target) as partial:
        (partial / "config.json").write_text("{}")
    assert (target / "config.json").read_text() == "{}"


def test_a_target_with_files_is_kept_and_named(tmp_path):
    target = tmp_path / "1"
    target.mkdir()
    (target / "saved_model.pb").write_bytes(b"theirs")
    with pytest.raises(FileExistsError, match=f"{target}: exists"):
        with written_whole(target) as partial:
            (partial / "saved_model.pb").write_bytes(b"ours")
    assert (target / "saved_model.pb").read_bytes() == b"theirs"
    assert [p.name for p in tmp_path.iterdir()] == ["1"]


def _dead_pid():
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


def test_only_this_host_s_dead_writers_partials_are_removed(tmp_path):
    host, dead, alive = socket.gethostname(), _dead_pid(), os.getpid()
    names = {
        "dead here": f".1.partial-{dead}@{host}-0123abcd",
        "alive here": f".2.partial-{alive}@{host}-0123abcd",
        # A PID on another host says nothing about this host's processes.
        "dead elsewhere": f".3.partial-{dead}@{host}x.example-0123abcd",
        # 0.2.0 and before named no host: left alone.
        "no host": f".4.partial-{dead}-k3_9zq1x",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
    assert remove_abandoned(tmp_path) == [names["dead here"]]
    left = {p.name for p in tmp_path.iterdir()}
    assert left == set(names.values()) - {names["dead here"]}
    # The next writer into the folder removes them before it writes.
    (tmp_path / names["dead here"]).mkdir()
    with written_whole(tmp_path / "5"):
        assert not (tmp_path / names["dead here"]).exists()
    assert {p.name for p in tmp_path.iterdir()} == left | {"5"}


def test_partial_names_say_host_and_process(tmp_path):
    name = partial_name(tmp_path / "7")
    assert name.startswith(f".7.partial-{os.getpid()}@{socket.gethostname()}-")
    assert name != partial_name(tmp_path / "7")
