"""The train CLI for real: subprocesses, kill -9, strategies, flagfiles."""

import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest
from conftest import multi30k_file_flags, multi30k_slice

ROOT = pathlib.Path(__file__).resolve().parents[1]
TINY_FLAGS = [
    "--architecture=luong",
    "--num_layers=1",
    "--embedding_dim=16",
    "--hidden_units=16",
    "--score=general",
    "--dropout=0.3",
    "--initializer=luong",
    "--corpus=",
    "--tokenizer=word",
    "--source_vocab_size=500",
    "--target_vocab_size=500",
    "--batch_size=32",
    "--sort_window=4",
    "--optimizer=sgd",
    "--learning_rate=1.0",
    "--schedule=halving",
    "--halve_after_epochs=1",
    "--clip_norm=5",
    "--epochs=2",
    "--checkpoint_every=5",
    "--seed=7",
]


@pytest.fixture(scope="module")
def text_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("text")
    return multi30k_file_flags(multi30k_slice(directory, train=400, val=40))


def _command(model_dir, *extra):
    return [
        sys.executable,
        "-m",
        "seq2seq_attn.train",
        f"--model_dir={model_dir}",
        *TINY_FLAGS,
        *extra,
    ]


def _env(**extra):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def _attempt(command, env=None, timeout=600):
    """Runs `command` from the repository root; returns its result."""
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or _env(),
        cwd=ROOT,
    )


def _run(command, env=None, timeout=600):
    result = _attempt(command, env, timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def _losses(model_dir):
    """The last logged loss of every step."""
    losses = {}
    lines = (pathlib.Path(model_dir) / "train_log.tsv").read_text().splitlines()
    for line in lines[1:]:
        step, _, loss, *_ = line.split("\t")
        losses[int(step)] = float(loss)
    return losses


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


def _training_until(command, model_dir, step, timeout=300):
    """Starts the training `command` and returns its process once
    `model_dir` holds the checkpoint of `step` (killing it if it ends or
    times out before)."""
    process = subprocess.Popen(
        command,
        env=_env(),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
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
def test_kill_9_then_resume_matches_an_uninterrupted_run(text_files, tmp_path):
    straight = tmp_path / "straight"
    output = _run(_command(straight, *text_files)).stdout
    _check_progress_bar(output)
    expected = _losses(straight)
    steps = max(expected)
    assert steps > 20 and (straight / "best" / "metrics.json").is_file()

    resumed = tmp_path / "resumed"
    process = _training_until(_command(resumed, *text_files), resumed, 15)
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed_at = max(_losses(resumed))
    assert killed_at < steps, "the run finished before the kill"

    result = _run(_command(resumed, *text_files))
    assert "resuming from" in result.stdout
    got = _losses(resumed)
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
def test_mirrored_on_two_cpu_devices(text_files, tmp_path):
    # Without dropout, whose masks each replica draws for its own share
    # of the batch (and, skipping the padding, in its own length order).
    no_dropout = ("--epochs=1", "--dropout=0")
    model_dir = tmp_path / "mirrored"
    result = _run(
        _command(
            model_dir,
            *text_files,
            "--strategy=mirrored",
            "--num_cpu_devices=2",
            *no_dropout,
        )
    )
    assert "2 replica(s)" in result.stdout
    losses = _losses(model_dir)
    assert all(np.isfinite(list(losses.values())))
    default = tmp_path / "default"
    _run(_command(default, *text_files, *no_dropout))
    # Splitting a batch across replicas leaves the loss and update the same.
    reference = _losses(default)
    for step in (1, 2, 3):
        assert abs(losses[step] - reference[step]) < 1e-5


@pytest.mark.slow
def test_accumulated_batches_count_updates_also_when_mirrored(
    text_files, tmp_path
):
    # 13 batches of 32 per epoch; 2 per update: 6 updates an epoch, and the
    # validation after the 6th.
    model_dir = tmp_path / "accumulated"
    flags = [*text_files, "--accumulate_batches=2", "--epochs=1"]
    result = _run(
        _command(
            model_dir, *flags, "--strategy=mirrored", "--num_cpu_devices=2"
        )
    )
    plan = "6 steps per epoch, 6 steps in all, 2 batches per step, 2 replica"
    assert plan in result.stdout
    assert _logged_steps(model_dir) == [1, 2, 3, 4, 5, 6]
    assert _validation_rows(model_dir) == [["1", "6"]]
    # The same updates on one replica.
    default = tmp_path / "default_accumulated"
    _run(_command(default, *flags))
    reference = _losses(default)
    for step, loss in _losses(model_dir).items():
        np.testing.assert_allclose(loss, reference[step], rtol=1e-4)


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_multi_worker_with_two_local_workers(text_files, tmp_path):
    ports = [_free_port(), _free_port()]
    cluster = {"worker": [f"127.0.0.1:{port}" for port in ports]}
    model_dir = tmp_path / "multi"
    processes = []
    for index in range(2):
        tf_config = json.dumps(
            {"cluster": cluster, "task": {"type": "worker", "index": index}}
        )
        processes.append(
            subprocess.Popen(
                _command(
                    model_dir,
                    *text_files,
                    "--strategy=multi_worker",
                    "--epochs=1",
                ),
                env=_env(TF_CONFIG=tf_config),
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outputs = [process.communicate(timeout=600) for process in processes]
    for process, (_, stderr) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, stderr[-3000:]
    assert "2 replica(s)" in outputs[0][0]
    chief = _checkpoint_weights(model_dir / "checkpoints")
    worker = _checkpoint_weights(model_dir / "workers" / "1" / "ckpt")
    assert chief.keys() == worker.keys()
    for name in chief:
        np.testing.assert_array_equal(chief[name], worker[name], err_msg=name)
    # The worker read the chief's vocabularies (it builds none of its own)
    # and took as many steps, on its own share of the pairs.
    assert not list((model_dir / "workers").rglob("tokenizer.json"))
    assert "built the" not in outputs[1][0]
    steps = "steps per epoch (counted;"
    assert steps in outputs[0][0] and steps in outputs[1][0]


def _checkpoint_weights(directory):
    import tensorflow as tf

    reader = tf.train.load_checkpoint(
        tf.train.latest_checkpoint(str(directory))
    )
    return {
        name: reader.get_tensor(name)
        for name in reader.get_variable_to_shape_map()
        if name.startswith("model/") and "OPTIMIZER" not in name
    }


def test_non_finite_loss_stops_with_the_step_and_saves_nothing(
    text_files, tmp_path
):
    model_dir = tmp_path / "nan"
    result = _attempt(
        _command(
            model_dir,
            *text_files,
            "--learning_rate=1e38",
            "--clip_norm=0",
            "--optimizer=sgd",
            "--schedule=constant",
            "--divergence_factor=0",
        ),
    )
    assert result.returncode == 3, result.stderr[-2000:]
    assert "non-finite loss" in result.stderr and "at step" in result.stderr
    checkpoints = list((model_dir / "checkpoints").glob("ckpt-*.index"))
    step = int(result.stderr.split("at step ")[1].split()[0])
    assert all(int(path.stem.split("-")[1]) < step for path in checkpoints)


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_trains_with_float32_logits(
    policy, text_files, tmp_path
):
    model_dir = tmp_path / policy
    _run(
        _command(
            model_dir,
            *text_files,
            f"--mixed_precision={policy}",
            "--max_steps=4",
            "--epochs=1",
            "--optimizer=adam",
            "--learning_rate=0.001",
            "--schedule=constant",
        )
    )
    losses = _losses(model_dir)
    assert sorted(losses) == [1, 2, 3, 4]
    assert all(np.isfinite(list(losses.values())))


def test_bad_flags_and_data_are_clear_errors(text_files, tmp_path):
    def run(*flags):
        return _attempt(
            _command(tmp_path / "bad", *flags),
            timeout=300,
        )

    result = run(*text_files, "--optimizer=rmsprop")
    assert (
        result.returncode == 2 and "optimizer must be one of" in result.stderr
    )
    short = tmp_path / "short.de"
    short.write_text("nur eine zeile\n")
    flags = [f for f in text_files if not f.startswith("--train_target_file")]
    result = run(*flags, f"--train_target_file={short}")
    assert result.returncode == 2
    assert "short.de has 1" in result.stderr and "400 lines" in result.stderr
    assert not (tmp_path / "bad" / "checkpoints").exists()


def test_jit_compile_needs_buckets(text_files, tmp_path):
    result = _attempt(
        _command(tmp_path / "jit", *text_files, "--jit_compile"),
        timeout=300,
    )
    assert result.returncode == 2
    assert "jit_compile needs bucket_width" in result.stderr
    assert not (tmp_path / "jit" / "checkpoints").exists()


@pytest.mark.slow
def test_jit_compile_trains_like_the_graph_step(text_files, tmp_path):
    # XLA compiles the forward and backward passes once per bucket shape;
    # on the same batches from the same initialisation, the losses follow
    # those of the ordinary graph step (XLA may fuse and reorder float ops).
    flags = [*text_files, "--bucket_width=8", "--max_steps=12"]
    _run(_command(tmp_path / "graph", *flags, "--dropout=0"))
    _run(_command(tmp_path / "xla", *flags, "--dropout=0", "--jit_compile"))
    graph, xla = _losses(tmp_path / "graph"), _losses(tmp_path / "xla")
    assert sorted(graph) == sorted(xla) and len(graph) >= 10
    np.testing.assert_allclose(
        [xla[step] for step in sorted(xla)],
        [graph[step] for step in sorted(graph)],
        rtol=1e-3,
    )


@pytest.mark.slow
def test_early_stopping_holds_when_the_command_is_run_again(
    text_files, tmp_path
):
    model_dir = tmp_path / "early"
    flags = [
        *text_files,
        "--early_stopping_patience=1",
        "--epochs=4",
        "--optimizer=adam",
        "--learning_rate=1e-12",
        "--schedule=constant",
    ]
    first = _run(_command(model_dir, *flags))
    assert "early stopping" in first.stdout
    steps = max(_losses(model_dir))
    assert steps < 4 * 13  # stopped before the 4 epochs of 13 steps
    again = _run(_command(model_dir, *flags))
    assert "early stopping" in again.stdout
    assert max(_losses(model_dir)) == steps


# Recovery: kills at named points, placed by tests/killed_training.py (which
# patches the training process before `train.main` runs), not by timing.
KILLED_TRAINING = ROOT / "tests" / "killed_training.py"


def _killed(command, point):
    assert command[1:3] == ["-m", "seq2seq_attn.train"]
    killed = [command[0], str(KILLED_TRAINING), point, *command[3:]]
    result = _attempt(killed)
    assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]


def _validation_rows(model_dir):
    lines = (pathlib.Path(model_dir) / "validation.tsv").read_text()
    return [line.split("\t")[:2] for line in lines.splitlines()[1:]]


def _logged_steps(model_dir):
    lines = (pathlib.Path(model_dir) / "train_log.tsv").read_text()
    return [int(line.split("\t")[0]) for line in lines.splitlines()[1:]]


@pytest.fixture(scope="module")
def recovered_runs(text_files, tmp_path_factory):
    """Two runs of the same command, one killed inside the first validation,
    one inside the write of ckpt-10, each run again to the end."""
    directory = tmp_path_factory.mktemp("recovered")
    runs = {}
    for point in ("validation", "checkpoint_write@10", "checkpoint_write@5"):
        model_dir = directory / point.replace("@", "_")
        _killed(_command(model_dir, *text_files), point)
        after_kill = {
            "temp": sorted(p.name for p in model_dir.glob("*/*_temp")),
            "steps": _logged_steps(model_dir),
            "validated": (model_dir / "validation.tsv").exists(),
        }
        result = _run(_command(model_dir, *text_files))
        runs[point] = (model_dir, after_kill, result.stdout)
    return runs


@pytest.mark.slow
def test_a_validation_cut_short_runs_again_on_resume(recovered_runs):
    model_dir, after_kill, stdout = recovered_runs["validation"]
    assert not after_kill["validated"] and after_kill["steps"][-1] == 13
    assert "validation after epoch 1" in stdout
    assert _validation_rows(model_dir) == [["1", "13"], ["2", "26"]]
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
    assert _logged_steps(model_dir) == list(range(1, 27))
    assert _validation_rows(model_dir) == [["1", "13"], ["2", "26"]]
    # Both recovered runs trained exactly as the uninterrupted one would.
    other, _, _ = recovered_runs["validation"]
    assert _losses(model_dir) == _losses(other)


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
    assert _logged_steps(model_dir) == list(range(1, 27))
    other, _, _ = recovered_runs["validation"]
    assert _losses(model_dir) == _losses(other)


@pytest.mark.slow
def test_empty_and_cut_logs_are_repaired_on_resume(
    recovered_runs, text_files, tmp_path
):
    import shutil

    model_dir = tmp_path / "full_disk"
    shutil.copytree(recovered_runs["validation"][0], model_dir)
    (model_dir / "train_log.tsv").write_text("")  # what a full disk leaves
    validation = model_dir / "validation.tsv"
    validation.write_text(validation.read_text()[:-3])  # the last row cut
    result = _run(_command(model_dir, *text_files))
    assert "resuming from" in result.stdout
    assert (model_dir / "train_log.tsv").read_text().startswith("step\t")
    assert _validation_rows(model_dir) == [["1", "13"]]


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
    text_files, tmp_path
):
    model_dir = tmp_path / "one_writer"
    first = _training_until(_command(model_dir, *text_files), model_dir, 5)
    try:
        # Stopped, so that only the second process could change the files.
        first.send_signal(signal.SIGSTOP)
        before = _snapshot(model_dir)
        # TensorFlow's start-up lines hidden, as the command hides them.
        quiet = {k: v for k, v in _env().items() if k != "TF_CPP_MIN_LOG_LEVEL"}
        second = _attempt(_command(model_dir, *text_files), quiet, 300)
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
    resumed = _run(_command(model_dir, *text_files))
    assert "resuming from" in resumed.stdout
    assert "done: step 26" in resumed.stdout


def _truncate(path):
    with open(path, "r+b") as stream:
        stream.truncate(path.stat().st_size // 2)


@pytest.mark.slow
def test_a_damaged_newest_checkpoint_is_named_and_an_older_one_used(
    recovered_runs, text_files, tmp_path
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
    result = _run(translate)
    assert len(result.stdout.splitlines()) == 1
    warnings = [line for line in result.stderr.splitlines() if "ckpt" in line]
    assert len(warnings) == 2, result.stderr
    assert f"damaged checkpoint {newest}" in warnings[0]
    assert "ckpt-25, the newest intact checkpoint" in warnings[1]

    resumed = _run(_command(model_dir, *text_files, "--epochs=3"))
    assert "resuming from" in resumed.stdout
    assert "ckpt-25 (step 25)" in resumed.stdout
    assert "--epochs: 2 -> 3" in resumed.stdout
    assert _logged_steps(model_dir) == list(range(1, 40))
    assert _validation_rows(model_dir) == [
        ["1", "13"],
        ["2", "26"],
        ["3", "39"],
    ]

    for index in (model_dir / "checkpoints").glob("*.index"):
        _truncate(index)
    broken = _attempt(translate)
    assert broken.returncode == 2
    assert "Traceback" not in broken.stderr
    assert "error: every checkpoint is damaged" in broken.stderr


@pytest.mark.slow
def test_resume_applies_what_may_change_and_names_what_may_not(
    text_files, tmp_path
):
    model_dir = tmp_path / "changed"
    adam = ["--optimizer=adam", "--schedule=constant", "--clip_norm=0"]
    _run(
        _command(
            model_dir,
            *text_files,
            *adam,
            "--learning_rate=0.001",
            "--max_steps=6",
        )
    )

    def resume(*flags):
        return _attempt(
            _command(model_dir, *text_files, *adam, *flags),
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
    source = next(f for f in text_files if "train_source" in f).split("=")[1]
    moved = tmp_path / "moved.en"
    moved.write_bytes(pathlib.Path(source).read_bytes())
    flags = [f for f in text_files if "train_source" not in f]
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


def test_bad_data_leaves_no_model_directory(text_files, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    flags = [f for f in text_files if "train_" not in f]
    result = _attempt(
        _command(
            tmp_path / "empty",
            *flags,
            f"--train_source_file={empty}",
            f"--train_target_file={empty}",
        ),
        timeout=300,
    )
    assert result.returncode == 2
    assert "no sentence pairs to train on" in result.stderr
    assert not (tmp_path / "empty").exists()
    # The same directory then trains on good data (no 4-entry vocabulary
    # left behind to refuse it).
    _run(_command(tmp_path / "empty", *text_files, "--max_steps=2"))

    result = _attempt(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.train",
            f"--model_dir={tmp_path / 'nodata'}",
            "--corpus=multi30k",
            f"--data_dir={tmp_path / 'missing'}",
        ],
        timeout=300,
    )
    assert result.returncode == 2 and "is not in --data_dir" in result.stderr
    assert not (tmp_path / "nodata").exists()


def test_label_smoothing_trains_and_is_recorded(text_files, tmp_path):
    model_dir = tmp_path / "smoothed"
    result = _run(
        _command(
            model_dir, *text_files, "--label_smoothing=0.1", "--max_steps=2"
        )
    )
    assert "label smoothing 0.1 in the training loss" in result.stdout
    assert "validation perplexity without it" in result.stdout
    config = json.loads((model_dir / "config.json").read_text())
    assert config["train"]["label_smoothing"] == 0.1
    assert sorted(_losses(model_dir)) == [1, 2]


def test_a_joint_vocabulary_trains_all_tied_weights_and_translates(
    text_files, tmp_path
):
    # build_vocab --joint_vocab: one vocabulary from both sides, written as
    # both; a run that ties all three matrices trains on it, and a fresh
    # process loads the model tied and translates.
    vocab = tmp_path / "joint"
    _run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.build_vocab",
            "--corpus=",
            *text_files[:2],
            "--tokenizer=word",
            "--vocab_size=600",
            "--joint_vocab",
            f"--output_dir={vocab}",
        ]
    )
    source, target = (
        (vocab / side / "vocab.txt").read_text().splitlines()
        for side in ("source", "target")
    )
    assert source == target
    assert {"a", "ein", "man", "mann"} <= set(source)
    model_dir = tmp_path / "tied"
    tied = ["--tie_embeddings=all", "--max_steps=2"]
    _run(_command(model_dir, *text_files, f"--vocab_dir={vocab}", *tied))
    config = json.loads((model_dir / "config.json").read_text())
    assert config["model"]["tie_embeddings"] == "all"
    sentences = tmp_path / "sentences.en"
    sentences.write_text("a man .\ntwo dogs .\n")
    translated = _run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.translate",
            f"--model_dir={model_dir}",
            f"--input={sentences}",
            "--beam_size=2",
        ]
    )
    assert len(translated.stdout.splitlines()) == 2
    from seq2seq_attn.export.ops import disallowed_ops

    export_dir = tmp_path / "export"
    _run(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.export",
            f"--model_dir={model_dir}",
            f"--export_dir={export_dir}",
            "--beam_size=2",
        ]
    )
    assert disallowed_ops(export_dir / "1") == []

    quiet = _env()
    del quiet["TF_CPP_MIN_LOG_LEVEL"]
    refused = _attempt(
        _command(tmp_path / "separate", *text_files, *tied), env=quiet
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "error: model: tie_embeddings=all shares one embedding between the "
        "sides, so both need one vocabulary: add --joint_vocab (or a joint "
        "--vocab_dir from build_vocab --joint_vocab)"
    ]
    separate = tmp_path / "separate_vocab"
    shutil.copytree(vocab, separate)
    reordered = target[:4] + target[:3:-1]  # the reserved ids stay first
    (separate / "target" / "vocab.txt").write_text("\n".join(reordered) + "\n")
    refused = _attempt(
        _command(
            tmp_path / "separate", *text_files, *tied, f"--vocab_dir={separate}"
        ),
        env=quiet,
    )
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "error: model: tie_embeddings=all shares one embedding between the "
        "sides, but the vocabularies of "
        f"{tmp_path / 'separate/vocab/source'} and "
        f"{tmp_path / 'separate/vocab/target'} differ: build one joint "
        "vocabulary (--joint_vocab)"
    ]
    unequal = _attempt(
        _command(
            tmp_path / "unequal",
            *text_files,
            "--joint_vocab",
            "--target_vocab_size=400",
        ),
        env=quiet,
    )
    assert unequal.returncode == 2
    assert unequal.stderr.strip().splitlines() == [
        "error: data: joint_vocab builds one vocabulary for both sides: "
        "source_vocab_size (500) and target_vocab_size (400) must be equal"
    ]
    for name in ("separate", "unequal"):
        assert not (tmp_path / name).exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "strategy", [[], ["--strategy=mirrored", "--num_cpu_devices=2"]]
)
def test_weight_average_is_validated_and_kept_as_best(
    text_files, tmp_path, strategy
):
    import tensorflow as tf

    model_dir = tmp_path / "averaged"
    result = _run(
        _command(
            model_dir, *text_files, "--ema_decay=0.9", "--epochs=1", *strategy
        )
    )
    assert "weights averaged, decay 0.9" in result.stdout
    assert json.loads((model_dir / "config.json").read_text())["train"][
        "ema_decay"
    ] == pytest.approx(0.9)
    reader = tf.train.load_checkpoint(
        tf.train.latest_checkpoint(str(model_dir / "checkpoints"))
    )
    averages = [
        reader.get_tensor(name)
        for name in reader.get_variable_to_shape_map()
        if name.startswith("weight_average/")
    ]
    trained = _checkpoint_weights(model_dir / "checkpoints")
    best = _checkpoint_weights(model_dir / "best")

    def holds(weights, array):
        return any(
            w.shape == array.shape and np.allclose(w, array)
            for w in weights.values()
        )

    # best/ (validated at the epoch's end) holds the average; the training
    # checkpoint, which resumes, the weights themselves.
    assert averages and all(holds(best, a) for a in averages)
    assert not all(holds(trained, a) for a in averages)


@pytest.mark.both_ends
def test_the_shared_model_trained_and_wrote_its_summaries(raw_model_dir):
    # TensorFlow 2.21 no longer installs TensorBoard, which tf.summary needs.
    import tensorflow as tf

    assert (raw_model_dir / "best" / "checkpoint").is_file()
    tags = set()
    for events in (raw_model_dir / "logs" / "train").glob("*tfevents*"):
        for event in tf.compat.v1.train.summary_iterator(str(events)):
            tags.update(value.tag for value in event.summary.value)
    assert {"loss", "perplexity", "learning_rate"} <= tags
