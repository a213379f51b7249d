"""The divergence guard: a loss far above the recent median stops a run."""

import math

import pytest

from seq2seq_attn.training.divergence import (
    DivergenceGuard,
    NonFiniteLossError,
    TrainingDivergedError,
)


def test_a_loss_over_factor_times_the_median_is_divergence():
    guard = DivergenceGuard(factor=10, window=3, history=[5.0, 4.0, 100.0])
    guard.check(45.0, step=4)  # median of 5, 4, 100 is 5: 45 < 50
    # The window now holds 4, 100, 45: median 45.
    guard.check(449.0, step=5)
    with pytest.raises(TrainingDivergedError, match="at step 6") as caught:
        guard.check(1001.0, step=6)  # median of 100, 45, 449 is 100
    assert "median 100 of the 3 steps before" in str(caught.value)


def test_non_finite_losses_always_stop_and_factor_0_turns_the_rest_off():
    guard = DivergenceGuard(factor=0, window=5, history=[1.0])
    guard.check(1e30, step=2)
    for value in (math.nan, math.inf):
        with pytest.raises(NonFiniteLossError, match="non-finite loss"):
            guard.check(value, step=3)


def test_the_first_step_has_nothing_to_compare_with():
    guard = DivergenceGuard(factor=10, window=100)
    guard.check(1e6, step=1)
    with pytest.raises(TrainingDivergedError):
        guard.check(1e8, step=2)
