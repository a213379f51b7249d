"""The progress bar's figures: token-weighted mean loss and tokens/s since
the epoch (or the resumed part of it) started."""

import math

import numpy as np
import pytest

from seq2seq_attn.training.progress import EpochMeter, EpochProgress


def test_the_mean_loss_weighs_each_step_by_its_target_tokens():
    times = iter([10.0, 11.0, 12.5, 14.0])
    meter = EpochMeter(clock=lambda: next(times))
    assert math.isnan(meter.loss)
    losses, tokens = np.array([4.0, 3.0, 1.0]), np.array([100, 300, 50])
    for loss, count in zip(losses, tokens, strict=True):
        meter.add(float(loss), float(count))
    expected = float((losses * tokens).sum() / tokens.sum())
    assert meter.loss == pytest.approx(expected)
    assert meter.loss != pytest.approx(losses[-1])  # not the last batch's
    assert meter.perplexity == pytest.approx(math.exp(expected))
    assert meter.seconds == pytest.approx(4.0)  # first step's start to last
    assert meter.tokens_per_second == pytest.approx(450 / 4.0)


def test_a_resumed_bar_counts_the_steps_this_process_trains(capsys):
    # Resumed after step 4 of 12: the bar said 12/12 after 8 steps, and its
    # time per step divided 8 steps' time by 12.
    progress = EpochProgress(0, 12, done=4)
    for done in range(5, 13):
        progress.add(done, done, loss=1.0, tokens=10.0, learning_rate=0.1)
    bar = capsys.readouterr().out
    assert "8/8" in bar and "12/12" not in bar
    assert [row.split("\t")[0] for row in progress.rows] == [
        str(step) for step in range(5, 13)
    ]
