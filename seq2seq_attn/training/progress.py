"""What the progress bar and the epoch's summary line say of the training
since the epoch started (or the run resumed within it)."""

import math
import time


def perplexity(loss):
    """exp(mean loss per token), capped at exp(50) so that a diverging
    loss gives a large number, not an overflow."""
    return math.exp(min(loss, 50.0))


class EpochMeter:
    """Token-weighted mean loss and target tokens per second, counted from
    the start of the epoch (or of the resumed part of it) to the last step.

    The loss of a step is the mean over its target tokens, so the epoch's
    mean weighs each step by its tokens: the mean over every target token
    trained on. The bar and the summary line read the same figures.
    """

    def __init__(self, clock=time.perf_counter):
        self._clock = clock
        self.start = self.last = clock()
        self.tokens = 0.0
        self._loss_sum = 0.0

    def add(self, loss, tokens):
        """Counts one step: its mean loss per token and its token count."""
        self._loss_sum += loss * tokens
        self.tokens += tokens
        self.last = self._clock()

    @property
    def loss(self):
        """Mean loss per target token so far (nan before any token)."""
        return self._loss_sum / self.tokens if self.tokens else math.nan

    @property
    def perplexity(self):
        """`perplexity` of the mean loss."""
        return perplexity(self.loss)

    @property
    def seconds(self):
        """From the start to the end of the last step."""
        return self.last - self.start

    @property
    def tokens_per_second(self):
        """Target tokens per second over `seconds`."""
        return self.tokens / max(self.seconds, 1e-9)
