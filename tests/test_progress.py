"""The progress bar's figures: token-weighted mean loss and tokens/s since
the epoch (or the resumed part of it) started."""

import math

import numpy as np
import pytest

from seq2seq_attn.training.progress import EpochMeter


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
