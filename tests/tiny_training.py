"""The train command on a tiny Luong model and 400 Multi30k pairs, as the
tests of training and of resuming run it: its flags, the commands, and
what the run logged."""

import os
import pathlib
import sys

import commands

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

# For the runs whose tests read no validation: every run ends validated,
# and that validation traces a search (about 4 s of a tiny run's 10-14 s).
NO_VALIDATION = ("--valid_source_file=", "--valid_target_file=")


def train_command(model_dir, *extra):
    return [
        sys.executable,
        "-m",
        "seq2seq_attn.train",
        f"--model_dir={model_dir}",
        *TINY_FLAGS,
        *extra,
    ]


def command_env(**extra):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def attempt(command, env=None, timeout=600):
    """Runs `command` from the repository root; returns its result."""
    return commands.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env or command_env(),
        cwd=ROOT,
    )


def succeed(command, env=None, timeout=600):
    result = attempt(command, env, timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def logged_losses(model_dir):
    """The last logged loss of every step."""
    losses = {}
    lines = (pathlib.Path(model_dir) / "train_log.tsv").read_text().splitlines()
    for line in lines[1:]:
        step, _, loss, *_ = line.split("\t")
        losses[int(step)] = float(loss)
    return losses


def validation_rows(model_dir):
    lines = (pathlib.Path(model_dir) / "validation.tsv").read_text()
    return [line.split("\t")[:2] for line in lines.splitlines()[1:]]


def logged_steps(model_dir):
    lines = (pathlib.Path(model_dir) / "train_log.tsv").read_text()
    return [int(line.split("\t")[0]) for line in lines.splitlines()[1:]]
