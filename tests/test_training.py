"""The train CLI for real: subprocesses, kill -9, strategies, flagfiles."""

import json
import os
import pathlib
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


def _run(command, env=None, timeout=600):
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or _env(),
        cwd=ROOT,
    )
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


@pytest.mark.slow
def test_kill_9_then_resume_matches_an_uninterrupted_run(text_files, tmp_path):
    straight = tmp_path / "straight"
    _run(_command(straight, *text_files))
    expected = _losses(straight)
    steps = max(expected)
    assert steps > 20 and (straight / "best" / "metrics.json").is_file()

    resumed = tmp_path / "resumed"
    process = subprocess.Popen(
        _command(resumed, *text_files),
        env=_env(),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    checkpoint = resumed / "checkpoints" / "ckpt-15.index"
    deadline = time.time() + 300
    while not checkpoint.exists() and time.time() < deadline:
        assert process.poll() is None, (
            "training ended before it could be killed"
        )
        time.sleep(0.05)
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
    model_dir = tmp_path / "mirrored"
    result = _run(
        _command(
            model_dir,
            *text_files,
            "--strategy=mirrored",
            "--num_cpu_devices=2",
            "--epochs=1",
        )
    )
    assert "2 replica(s)" in result.stdout
    losses = _losses(model_dir)
    assert all(np.isfinite(list(losses.values())))
    default = tmp_path / "default"
    _run(_command(default, *text_files, "--epochs=1"))
    # Splitting a batch across replicas leaves the loss and update the same.
    reference = _losses(default)
    for step in (1, 2, 3):
        assert abs(losses[step] - reference[step]) < 1e-4


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
    result = subprocess.run(
        _command(
            model_dir,
            *text_files,
            "--learning_rate=1e38",
            "--clip_norm=0",
            "--optimizer=sgd",
            "--schedule=constant",
        ),
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(),
        cwd=ROOT,
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
        return subprocess.run(
            _command(tmp_path / "bad", *flags),
            capture_output=True,
            text=True,
            timeout=300,
            env=_env(),
            cwd=ROOT,
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
    result = subprocess.run(
        _command(tmp_path / "jit", *text_files, "--jit_compile"),
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
        cwd=ROOT,
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
