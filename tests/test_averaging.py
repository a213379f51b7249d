"""`python -m seq2seq_attn.average`: the mean of a run's last checkpoints,
as a model directory that translates."""

import os
import sys

import commands
import numpy as np
import pytest

from seq2seq_attn.model_dir import load_trained, load_translator
from seq2seq_attn.training.checkpoints import checkpoint_prefixes


def _average(*flags):
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return commands.run(
        [sys.executable, "-m", "seq2seq_attn.average", *flags],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def _weights(model_dir, checkpoint="best"):
    _, model, _, _ = load_trained(model_dir, checkpoint)
    return [v.numpy() for v in model.trainable_variables]


@pytest.mark.slow
def test_the_average_is_the_mean_of_the_last_checkpoints(
    trained_model_dir, tmp_path
):
    prefixes = checkpoint_prefixes(trained_model_dir / "checkpoints")[:2]
    assert len(prefixes) == 2
    output = tmp_path / "averaged"
    result = _average(
        f"--model_dir={trained_model_dir}", "--last=2", f"--output_dir={output}"
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "averaged the weights of 2 checkpoint(s)" in result.stdout
    each = [_weights(trained_model_dir, prefix) for prefix in prefixes]
    averaged = _weights(output)
    for index, value in enumerate(averaged):
        np.testing.assert_allclose(
            value, (each[0][index] + each[1][index]) / 2, rtol=1e-6, atol=1e-7
        )
    assert not all(np.array_equal(a, b) for a, b in zip(*each, strict=True))
    # A model directory like any other: it loads and translates.
    translator = load_translator(output, beam_size=2)
    assert isinstance(translator.translate("a man is riding a bike ."), str)


@pytest.mark.slow
def test_averaging_refuses_what_it_cannot_do(trained_model_dir, tmp_path):
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "file").write_text("x")
    for flags, message in [
        ([f"--output_dir={taken}"], f"{taken}: holds files already"),
        ([f"--output_dir={trained_model_dir}"], "is the model directory"),
        ([f"--output_dir={tmp_path / 'new'}", "--last=0"], "last must be"),
    ]:
        result = _average(f"--model_dir={trained_model_dir}", *flags)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2 and len(lines) == 1, result.stderr
        assert lines[0].startswith("error: ") and message in lines[0]
    assert not (tmp_path / "new").exists()
