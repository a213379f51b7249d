"""Stopping a run whose loss has diverged, finite or not."""

import collections
import math
import statistics


class TrainingDivergedError(FloatingPointError):
    """The training loss diverged; nothing was saved after that step."""


class NonFiniteLossError(TrainingDivergedError):
    """Training produced a NaN or infinite loss."""


class DivergenceGuard:
    """Tells a diverged loss: non-finite, or above `factor` times the median
    of the last `window` losses.

    A finite loss can run away too (Adam at a learning rate of 1e8 trains on
    at a loss of 1e27); the median of recent steps is robust to the odd hard
    batch, and a loss ten times it is far outside what a healthy run shows.

    Args:
        factor: the multiple of the median that counts as divergence (0:
            only non-finite losses do).
        window: how many recent losses the median is taken over.
        history: losses of the steps before (a resumed run's log).
    """

    def __init__(self, factor, window, history=()):
        self.factor = factor
        self.losses = collections.deque(history, maxlen=window)

    def check(self, loss, step, epoch=None, last_checkpoint=None):
        """Records `loss` of `step`; raises `TrainingDivergedError` (or
        `NonFiniteLossError`) if it diverged, saying what the run kept
        where `epoch` (from 0) is given: `last_checkpoint`, or none."""
        try:
            self._check(loss, step)
        except TrainingDivergedError as error:
            if epoch is None:
                raise
            kept = (
                f"the last checkpoint is {last_checkpoint}"
                if last_checkpoint
                else "no checkpoint was saved before it"
            )
            raise type(error)(
                f"{error} (epoch {epoch + 1}); nothing was saved after it, "
                f"{kept}"
            ) from None
        self.losses.append(loss)

    def _check(self, loss, step):
        if not math.isfinite(loss):
            raise NonFiniteLossError(f"non-finite loss {loss} at step {step}")
        if self.factor and self.losses:
            median = statistics.median(self.losses)
            if loss > self.factor * median:
                raise TrainingDivergedError(
                    f"loss {loss:.4g} at step {step} is over "
                    f"{self.factor:g} times the median {median:.4g} of the "
                    f"{len(self.losses)} steps before (divergence_factor, "
                    "divergence_window)"
                )
