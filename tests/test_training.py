"""The train command for real: strategies, precisions, flags and data, tied
vocabularies, the weight average. Resuming is in `test_resume.py`."""

import json
import shutil
import socket
import subprocess
import sys

import numpy as np
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


@pytest.mark.slow
def test_mirrored_on_two_cpu_devices(text_flags, tmp_path):
    # Without dropout, whose masks each replica draws for its own share
    # of the batch (and, skipping the padding, in its own length order).
    # A mirrored run's validation is the next test's.
    no_dropout = ("--epochs=1", "--dropout=0", *NO_VALIDATION)
    model_dir = tmp_path / "mirrored"
    result = succeed(
        train_command(
            model_dir,
            *text_flags,
            "--strategy=mirrored",
            "--num_cpu_devices=2",
            *no_dropout,
        )
    )
    assert "2 replica(s)" in result.stdout
    losses = logged_losses(model_dir)
    assert all(np.isfinite(list(losses.values())))
    default = tmp_path / "default"
    succeed(train_command(default, *text_flags, *no_dropout))
    # Splitting a batch across replicas leaves the loss and update the same.
    reference = logged_losses(default)
    for step in (1, 2, 3):
        assert abs(losses[step] - reference[step]) < 1e-5


@pytest.mark.slow
def test_accumulated_batches_count_updates_also_when_mirrored(
    text_flags, tmp_path
):
    # 13 batches of 32 per epoch; 2 per update: 6 updates an epoch, and the
    # validation after the 6th.
    model_dir = tmp_path / "accumulated"
    flags = [*text_flags, "--accumulate_batches=2", "--epochs=1"]
    result = succeed(
        train_command(
            model_dir, *flags, "--strategy=mirrored", "--num_cpu_devices=2"
        )
    )
    plan = "6 steps per epoch, 6 steps in all, 2 batches per step, 2 replica"
    assert plan in result.stdout
    assert logged_steps(model_dir) == [1, 2, 3, 4, 5, 6]
    assert validation_rows(model_dir) == [["1", "6"]]
    # The same updates on one replica.
    default = tmp_path / "default_accumulated"
    succeed(train_command(default, *flags, *NO_VALIDATION))
    reference = logged_losses(default)
    for step, loss in logged_losses(model_dir).items():
        np.testing.assert_allclose(loss, reference[step], rtol=1e-4)


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_multi_worker_with_two_local_workers(text_flags, tmp_path):
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
                train_command(
                    model_dir,
                    *text_flags,
                    "--strategy=multi_worker",
                    "--epochs=1",
                ),
                env=command_env(TF_CONFIG=tf_config),
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
    text_flags, tmp_path
):
    model_dir = tmp_path / "nan"
    result = attempt(
        train_command(
            model_dir,
            *text_flags,
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
    policy, text_flags, tmp_path
):
    model_dir = tmp_path / policy
    succeed(
        train_command(
            model_dir,
            *text_flags,
            f"--mixed_precision={policy}",
            "--max_steps=4",
            "--epochs=1",
            "--optimizer=adam",
            "--learning_rate=0.001",
            "--schedule=constant",
        )
    )
    losses = logged_losses(model_dir)
    assert sorted(losses) == [1, 2, 3, 4]
    assert all(np.isfinite(list(losses.values())))


def test_bad_flags_and_data_are_clear_errors(text_flags, tmp_path):
    def run(*flags):
        return attempt(
            train_command(tmp_path / "bad", *flags),
            timeout=300,
        )

    result = run(*text_flags, "--optimizer=rmsprop")
    assert (
        result.returncode == 2 and "optimizer must be one of" in result.stderr
    )
    short = tmp_path / "short.de"
    short.write_text("nur eine zeile\n")
    flags = [f for f in text_flags if not f.startswith("--train_target_file")]
    result = run(*flags, f"--train_target_file={short}")
    assert result.returncode == 2
    assert "short.de has 1" in result.stderr and "400 lines" in result.stderr
    assert not (tmp_path / "bad" / "checkpoints").exists()


def test_jit_compile_needs_buckets(text_flags, tmp_path):
    result = attempt(
        train_command(tmp_path / "jit", *text_flags, "--jit_compile"),
        timeout=300,
    )
    assert result.returncode == 2
    assert "jit_compile needs bucket_width" in result.stderr
    assert not (tmp_path / "jit" / "checkpoints").exists()


@pytest.mark.slow
def test_jit_compile_trains_like_the_graph_step(text_flags, tmp_path):
    # XLA compiles the forward and backward passes once per bucket shape;
    # on the same batches from the same initialisation, the losses follow
    # those of the ordinary graph step (XLA may fuse and reorder float ops).
    flags = [*text_flags, "--bucket_width=8", "--max_steps=12", *NO_VALIDATION]
    succeed(train_command(tmp_path / "graph", *flags, "--dropout=0"))
    succeed(
        train_command(tmp_path / "xla", *flags, "--dropout=0", "--jit_compile")
    )
    graph, xla = (
        logged_losses(tmp_path / "graph"),
        logged_losses(tmp_path / "xla"),
    )
    assert sorted(graph) == sorted(xla) and len(graph) >= 10
    np.testing.assert_allclose(
        [xla[step] for step in sorted(xla)],
        [graph[step] for step in sorted(graph)],
        rtol=1e-3,
    )


def test_bad_data_leaves_no_model_directory(text_flags, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    flags = [f for f in text_flags if "train_" not in f]
    result = attempt(
        train_command(
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
    succeed(
        train_command(
            tmp_path / "empty", *text_flags, "--max_steps=2", *NO_VALIDATION
        )
    )

    result = attempt(
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


def test_label_smoothing_trains_and_is_recorded(text_flags, tmp_path):
    model_dir = tmp_path / "smoothed"
    result = succeed(
        train_command(
            model_dir, *text_flags, "--label_smoothing=0.1", "--max_steps=2"
        )
    )
    assert "label smoothing 0.1 in the training loss" in result.stdout
    assert "validation perplexity without it" in result.stdout
    config = json.loads((model_dir / "config.json").read_text())
    assert config["train"]["label_smoothing"] == 0.1
    assert sorted(logged_losses(model_dir)) == [1, 2]


def test_a_joint_vocabulary_trains_all_tied_weights_and_translates(
    text_flags, tmp_path
):
    # build_vocab --joint_vocab: one vocabulary from both sides, written as
    # both; a run that ties all three matrices trains on it, and a fresh
    # process loads the model tied and translates.
    vocab = tmp_path / "joint"
    succeed(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.build_vocab",
            "--corpus=",
            *text_flags[:2],
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
    tied = ["--tie_embeddings=all", "--max_steps=2", *NO_VALIDATION]
    succeed(
        train_command(model_dir, *text_flags, f"--vocab_dir={vocab}", *tied)
    )
    config = json.loads((model_dir / "config.json").read_text())
    assert config["model"]["tie_embeddings"] == "all"
    sentences = tmp_path / "sentences.en"
    sentences.write_text("a man .\ntwo dogs .\n")
    translated = succeed(
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
    succeed(
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

    quiet = command_env()
    del quiet["TF_CPP_MIN_LOG_LEVEL"]
    refused = attempt(
        train_command(tmp_path / "separate", *text_flags, *tied), env=quiet
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
    refused = attempt(
        train_command(
            tmp_path / "separate", *text_flags, *tied, f"--vocab_dir={separate}"
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
    unequal = attempt(
        train_command(
            tmp_path / "unequal",
            *text_flags,
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
    text_flags, tmp_path, strategy
):
    import tensorflow as tf

    model_dir = tmp_path / "averaged"
    result = succeed(
        train_command(
            model_dir, *text_flags, "--ema_decay=0.9", "--epochs=1", *strategy
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
    if strategy:
        return
    # `average` of such a run means the moving averages, and says so (it
    # averaged the raw weights without a word).
    output = tmp_path / "mean"
    result = succeed(
        [
            sys.executable,
            "-m",
            "seq2seq_attn.average",
            f"--model_dir={model_dir}",
            "--last=2",
            f"--output_dir={output}",
        ]
    )
    assert "averaged the moving averages (--ema_decay=0.9) of 2" in (
        result.stdout
    )
    checkpoints = sorted(
        (model_dir / "checkpoints").glob("ckpt-*.index"),
        key=lambda path: int(path.stem.split("-")[1]),
    )[-2:]
    readers = [
        tf.train.load_checkpoint(str(p.with_suffix(""))) for p in checkpoints
    ]
    names = [
        n
        for n in reader.get_variable_to_shape_map()
        if n.startswith("weight_average/")
    ]
    mean = [
        (r0 + r1) / 2
        for r0, r1 in (
            (readers[0].get_tensor(n), readers[1].get_tensor(n)) for n in names
        )
    ]
    written = _checkpoint_weights(output / "best")
    assert all(holds(written, m) for m in mean)
    metrics = json.loads((output / "best" / "metrics.json").read_text())
    assert metrics["weights"] == "the moving averages (--ema_decay=0.9)"


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
