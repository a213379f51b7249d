"""The train command stopped and run again: kill -9, kills at named points
(inside a validation, a checkpoint write), damaged logs and checkpoints, a
second trainer, flags changed on resume, early stopping that holds."""

import json
import pathlib
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
from tiny_training import (
    NO_VALIDATION,
    ROOT,
    attempt,
    command_env,
    logged_losses,
    logged_steps,
    succeed,
    train_command,
    validation_rows,
)


def _check_progress_bar(output):
    """The bar's last loss and tokens/s of each epoch are the epoch
    line's: the mean over the epoch's tokens, not the last batch's."""
    bars = re.findall(r"loss: ([\d.]+) - ppl: [\d.]+ - tok/s: ([\d.]+)", output)
    lines = re.findall(r"\(([\d,.]+) tokens/s, mean loss ([\d.]+)\)", output)
    assert len(bars) == len(lines) >= 2, output[-2000:]
    for (loss, speed), (line_speed, line_loss) in zip(bars, lines, strict=True):
        assert float(loss) == pytest.approx(float(line_loss), abs=1e-4)
        assert float(speed) == pytest.approx(
            float(line_speed.replace(",", "")), rel=1e-3
        )


def _training_until(
    command, model_dir, step, timeout=300, stderr=subprocess.DEVNULL
):
    """Starts the training `command` and returns its process once
    `model_dir` holds the checkpoint of `step` (killing it if it ends or
    times out before)."""
    process = subprocess.Popen(
        command,
        env=command_env(),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    checkpoint = model_dir / "checkpoints" / f"ckpt-{step}.index"
    deadline = time.time() + timeout
    while not checkpoint.exists():
        if process.poll() is not None or time.time() > deadline:
            process.kill()
            process.wait()
            raise AssertionError(f"training ended or timed out before {step}")
        time.sleep(0.05)
    return process


@pytest.mark.slow
def test_kill_9_then_resume_matches_an_uninterrupted_run(text_flags, tmp_path):
    straight = tmp_path / "straight"
    output = succeed(train_command(straight, *text_flags)).stdout
    _check_progress_bar(output)
    expected = logged_losses(straight)
    steps = max(expected)
    assert steps > 20 and (straight / "best" / "metrics.json").is_file()

    resumed = tmp_path / "resumed"
    process = _training_until(train_command(resumed, *text_flags), resumed, 15)
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed_at = max(logged_losses(resumed))
    assert killed_at < steps, "the run finished before the kill"

    result = succeed(train_command(resumed, *text_flags))
    assert "resuming from" in result.stdout
    got = logged_losses(resumed)
    assert sorted(got) == sorted(expected)
    for step in expected:
        assert abs(got[step] - expected[step]) <= 1e-5, (
            step,
            got[step],
            expected[step],
        )
    config = json.loads((resumed / "config.json").read_text())
    assert config["model"]["architecture"] == "luong"
    assert "--dropout=0.3" in (resumed / "flags.txt").read_text()


@pytest.mark.slow
def test_early_stopping_holds_when_the_command_is_run_again(
    text_flags, tmp_path
):
    model_dir = tmp_path / "early"
    flags = [
        *text_flags,
        "--early_stopping_patience=1",
        "--epochs=4",
        "--optimizer=adam",
        "--learning_rate=1e-12",
        "--schedule=constant",
    ]
    first = succeed(train_command(model_dir, *flags))
    assert "early stopping" in first.stdout
    steps = max(logged_losses(model_dir))
    assert steps < 4 * 13  # stopped before the 4 epochs of 13 steps
    again = succeed(train_command(model_dir, *flags))
    assert "early stopping" in again.stdout
    assert max(logged_losses(model_dir)) == steps


@pytest.mark.slow
def test_a_run_stopped_by_max_steps_is_validated_at_its_last_step(
    text_flags, tmp_path
):
    # 13 steps per epoch: 4 and 9 both stop in the middle of epoch 1.
    model_dir = tmp_path / "stopped"
    first = succeed(train_command(model_dir, *text_flags, "--max_steps=4"))
    assert validation_rows(model_dir) == [["1", "4"]]
    assert (model_dir / "best" / "metrics.json").is_file()
    assert "done: step 4," in first.stdout
    resumed = succeed(train_command(model_dir, *text_flags, "--max_steps=9"))
    assert validation_rows(model_dir) == [["1", "4"], ["1", "9"]]
    assert "done: step 9," in resumed.stdout
    # Without validation data, the step trained is still the last word.
    quiet = succeed(
        train_command(
            tmp_path / "unvalidated",
            *text_flags,
            "--max_steps=3",
            *NO_VALIDATION,
        )
    )
    assert "done: step 3, no validation data" in quiet.stdout


@pytest.mark.slow
def test_ctrl_c_says_where_to_resume_and_the_resumed_bar_counts_on(
    text_flags, tmp_path
):
    # Ctrl-C printed a 58-line traceback; the resumed run's bar said 26/26
    # after the steps that were left.
    model_dir = tmp_path / "interrupted"
    command = train_command(model_dir, *text_flags, *NO_VALIDATION)
    process = _training_until(command, model_dir, 15, stderr=subprocess.PIPE)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    stderr = stderr.decode()
    assert process.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    # It stops after the step in progress, and saves that step.
    saved = max(
        int(path.stem.split("-")[1])
        for path in (model_dir / "checkpoints").glob("ckpt-*.index")
    )
    assert stderr.strip().splitlines()[-1] == (
        f"interrupted at step {saved}; ckpt-{saved} saved; run the same "
        "command to resume"
    )
    assert 15 <= saved < 26 and logged_steps(model_dir)[-1] == saved
    resumed = succeed(command)
    in_epoch = saved - 13
    assert f"epoch 2/2, resumed after step {in_epoch} of 13" in resumed.stdout
    assert f"{13 - in_epoch}/{13 - in_epoch} - " in resumed.stdout
    assert logged_steps(model_dir) == list(range(1, 27))


# Recovery: kills at named points, placed by tests/killed_training.py (which
# patches the training process before `train.main` runs), not by timing.
KILLED_TRAINING = ROOT / "tests" / "killed_training.py"


def _killed(command, point):
    assert command[1:3] == ["-m", "seq2seq_attn.train"]
    killed = [command[0], str(KILLED_TRAINING), point, *command[3:]]
    result = attempt(killed)
    assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]


@pytest.fixture(scope="module")
def recovered_runs(text_flags, tmp_path_factory):
    """Two runs of the same command, one killed inside the first validation,
    one inside the write of ckpt-10, each run again to the end."""
    directory = tmp_path_factory.mktemp("recovered")
    runs = {}
    for point in ("validation", "checkpoint_write@10", "checkpoint_write@5"):
        model_dir = directory / point.replace("@", "_")
        _killed(train_command(model_dir, *text_flags), point)
        after_kill = {
            "temp": sorted(p.name for p in model_dir.glob("*/*_temp")),
            "steps": logged_steps(model_dir),
            "validated": (model_dir / "validation.tsv").exists(),
        }
        result = succeed(train_command(model_dir, *text_flags))
        runs[point] = (model_dir, after_kill, result.stdout)
    return runs


@pytest.mark.slow
def test_a_validation_cut_short_runs_again_on_resume(recovered_runs):
    model_dir, after_kill, stdout = recovered_runs["validation"]
    assert not after_kill["validated"] and after_kill["steps"][-1] == 13
    assert "validation after epoch 1" in stdout
    assert validation_rows(model_dir) == [["1", "13"], ["2", "26"]]
    assert (model_dir / "best" / "metrics.json").is_file()
    assert "done: step 26" in stdout


@pytest.mark.slow
def test_a_kill_inside_a_checkpoint_write_leaves_no_trace(recovered_runs):
    model_dir, after_kill, stdout = recovered_runs["checkpoint_write@10"]
    # The kill landed inside the write: the shards of ckpt-10 in their
    # temporary folder, its log rows flushed before it.
    assert after_kill["temp"] == ["ckpt-10_temp"]
    assert after_kill["steps"] == list(range(1, 11))
    assert "resuming from" in stdout and "ckpt-5 (step 5)" in stdout
    assert not list(model_dir.glob("*/*_temp"))
    assert logged_steps(model_dir) == list(range(1, 27))
    assert validation_rows(model_dir) == [["1", "13"], ["2", "26"]]
    # Both recovered runs trained exactly as the uninterrupted one would.
    other, _, _ = recovered_runs["validation"]
    assert logged_losses(model_dir) == logged_losses(other)


@pytest.mark.slow
def test_a_kill_before_the_first_checkpoint_logs_no_step_twice(
    recovered_runs,
):
    model_dir, after_kill, stdout = recovered_runs["checkpoint_write@5"]
    assert after_kill["temp"] == ["ckpt-5_temp"]
    assert after_kill["steps"] == [1, 2, 3, 4, 5]
    # Nothing to resume from: the run starts over, its old rows cut.
    assert "resuming from" not in stdout
    assert "removed 5 row(s) of train_log.tsv" in stdout
    assert logged_steps(model_dir) == list(range(1, 27))
    other, _, _ = recovered_runs["validation"]
    assert logged_losses(model_dir) == logged_losses(other)


@pytest.mark.slow
def test_empty_and_cut_logs_are_repaired_on_resume(
    recovered_runs, text_flags, tmp_path
):
    import shutil

    model_dir = tmp_path / "full_disk"
    shutil.copytree(recovered_runs["validation"][0], model_dir)
    (model_dir / "train_log.tsv").write_text("")  # what a full disk leaves
    validation = model_dir / "validation.tsv"
    validation.write_text(validation.read_text()[:-3])  # the last row cut
    result = succeed(train_command(model_dir, *text_flags))
    assert "resuming from" in result.stdout
    assert (model_dir / "train_log.tsv").read_text().startswith("step\t")
    assert validation_rows(model_dir) == [["1", "13"]]
    # One garbage value in the train log stopped the resume ("could not
    # convert string to float"): the row is dropped and said.
    edited = tmp_path / "edited"
    shutil.copytree(recovered_runs["validation"][0], edited)
    log = edited / "train_log.tsv"
    rows = log.read_text().split("\n")
    rows[3] = "\t".join(["3", "1", "garbage", *rows[3].split("\t")[3:]])
    log.write_text("\n".join(rows))
    result = succeed(train_command(edited, *text_flags))
    assert f"removed 1 damaged row(s) of {log}" in result.stdout
    assert 3 not in logged_steps(edited) and len(logged_steps(edited)) == 25
    # A damaged JSON file is named ("Expecting value: line 1 column 1").
    for name in ("epoch.json", "config.json"):
        damaged = tmp_path / name
        shutil.copytree(recovered_runs["validation"][0], damaged)
        (damaged / name).write_text("")
        result = attempt(train_command(damaged, *text_flags))
        assert result.returncode == 2
        assert f"error: {damaged / name}: damaged, not JSON" in result.stderr


def test_a_checkpoint_of_another_model_is_refused_on_resume(
    recovered_runs, text_flags, tmp_path
):
    import shutil

    import tensorflow as tf

    from seq2seq_attn.config import ModelConfig
    from seq2seq_attn.models import build_model

    model_dir = tmp_path / "another"
    shutil.copytree(recovered_runs["validation"][0], model_dir)
    other = build_model(
        ModelConfig(
            architecture="luong",
            source_vocab_size=500,
            target_vocab_size=500,
            embedding_dim=16,
            hidden_units=20,
            score="general",
        )
    )
    newest = model_dir / "checkpoints" / "ckpt-99"
    tf.train.Checkpoint(model=other).write(str(newest))
    before = _snapshot(model_dir / "checkpoints")
    log = (model_dir / "train_log.tsv").read_text()
    result = attempt(train_command(model_dir, *text_flags, "--epochs=3"))
    assert result.returncode == 2, result.stderr[-2000:]
    assert f"error: {newest}: a checkpoint of another model" in result.stderr
    assert "this run does not train over it" in result.stderr
    # Neither trained over nor rotated away.
    assert _snapshot(model_dir / "checkpoints") == before
    assert (model_dir / "train_log.tsv").read_text() == log


def _snapshot(directory):
    """Every file under `directory` with its size and modification time."""
    return {
        str(path.relative_to(directory)): (
            path.stat().st_size,
            path.stat().st_mtime_ns,
        )
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


@pytest.mark.slow
def test_a_second_trainer_is_refused_and_a_killed_one_leaves_no_lock(
    text_flags, tmp_path
):
    model_dir = tmp_path / "one_writer"
    command = train_command(model_dir, *text_flags, *NO_VALIDATION)
    first = _training_until(command, model_dir, 5)
    try:
        # Stopped, so that only the second process could change the files.
        first.send_signal(signal.SIGSTOP)
        before = _snapshot(model_dir)
        # TensorFlow's start-up lines hidden, as the command hides them.
        quiet = {
            k: v
            for k, v in command_env().items()
            if k != "TF_CPP_MIN_LOG_LEVEL"
        }
        second = attempt(command, quiet, 300)
        assert _snapshot(model_dir) == before
    finally:
        first.kill()
        first.wait()
    assert second.returncode == 2, second.stderr[-2000:]
    assert second.stdout == ""
    lines = [line for line in second.stderr.splitlines() if line.strip()]
    assert lines == [
        f"error: {model_dir.resolve()} is being trained by PID {first.pid} "
        f"on {socket.gethostname()} (it holds "
        f"{model_dir.resolve() / 'train.lock'}); wait for it to end, or stop "
        "it and run this command again to resume"
    ], second.stderr
    # kill -9 left no stale lock: the same command resumes at once.
    resumed = succeed(command)
    assert "resuming from" in resumed.stdout
    assert "done: step 26" in resumed.stdout


def _truncate(path):
    with open(path, "r+b") as stream:
        stream.truncate(path.stat().st_size // 2)


@pytest.mark.slow
def test_a_damaged_newest_checkpoint_is_named_and_an_older_one_used(
    recovered_runs, text_flags, tmp_path
):
    import shutil

    model_dir = tmp_path / "damaged"
    shutil.copytree(recovered_runs["validation"][0], model_dir)
    newest = model_dir / "checkpoints" / "ckpt-26.data-00000-of-00001"
    _truncate(newest)
    sentences = tmp_path / "in.txt"
    sentences.write_text("a man .\n")
    translate = [
        sys.executable,
        "-m",
        "seq2seq_attn.translate",
        f"--model_dir={model_dir}",
        "--checkpoint=latest",
        f"--input={sentences}",
    ]
    result = succeed(translate)
    assert len(result.stdout.splitlines()) == 1
    warnings = [line for line in result.stderr.splitlines() if "ckpt" in line]
    assert len(warnings) == 2, result.stderr
    assert f"damaged checkpoint {newest}" in warnings[0]
    assert "ckpt-25, the newest intact checkpoint" in warnings[1]

    resumed = succeed(train_command(model_dir, *text_flags, "--epochs=3"))
    assert "resuming from" in resumed.stdout
    assert "ckpt-25 (step 25)" in resumed.stdout
    assert "--epochs: 2 -> 3" in resumed.stdout
    assert logged_steps(model_dir) == list(range(1, 40))
    assert validation_rows(model_dir) == [
        ["1", "13"],
        ["2", "26"],
        ["3", "39"],
    ]

    for index in (model_dir / "checkpoints").glob("*.index"):
        _truncate(index)
    broken = attempt(translate)
    assert broken.returncode == 2
    assert "Traceback" not in broken.stderr
    assert "error: every checkpoint is damaged" in broken.stderr


@pytest.mark.slow
def test_resume_applies_what_may_change_and_names_what_may_not(
    text_flags, tmp_path
):
    model_dir = tmp_path / "changed"
    adam = ["--optimizer=adam", "--schedule=constant", "--clip_norm=0"]
    succeed(
        train_command(
            model_dir,
            *text_flags,
            *adam,
            "--learning_rate=0.001",
            "--max_steps=6",
            *NO_VALIDATION,
        )
    )

    def resume(*flags):
        return attempt(
            train_command(
                model_dir, *text_flags, *adam, *flags, *NO_VALIDATION
            ),
        )

    # A new learning rate takes effect (and diverges: Adam at 1e8), is
    # recorded, and the divergence guard stops the run with the last good
    # checkpoint kept.
    result = resume("--learning_rate=1e8")
    assert result.returncode == 3, result.stderr[-2000:]
    assert "--learning_rate: 0.001 -> 100000000.0" in result.stdout
    assert "times the median" in result.stderr
    assert "the last checkpoint is" in result.stderr
    assert "ckpt-6" in result.stderr
    assert (model_dir / "checkpoints" / "ckpt-6.index").is_file()
    config = json.loads((model_dir / "config.json").read_text())
    assert config["train"]["learning_rate"] == 1e8

    result = resume(
        "--learning_rate=0.001", "--batch_size=16", "--hidden_units=20"
    )
    assert result.returncode == 2
    assert "--hidden_units was 16, now 20" in result.stderr
    assert "--batch_size was 32, now 16" in result.stderr

    # The data may move, not change.
    source = next(f for f in text_flags if "train_source" in f).split("=")[1]
    moved = tmp_path / "moved.en"
    moved.write_bytes(pathlib.Path(source).read_bytes())
    flags = [f for f in text_flags if "train_source" not in f]
    result = resume(
        *flags,
        f"--train_source_file={moved}",
        "--learning_rate=0.001",
        "--max_steps=6",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "--train_source_file:" in result.stdout
    moved.write_text("another sentence\n" + moved.read_text().split("\n", 1)[1])
    result = resume(
        *flags,
        f"--train_source_file={moved}",
        "--learning_rate=0.001",
        "--max_steps=6",
    )
    assert result.returncode == 2
    assert "the training data differ" in result.stderr
    assert "train_source_file sha256" in result.stderr
