"""What the progress bar and the epoch's summary line say of the training
since the epoch started (or the run resumed within it)."""

import math
import sys
import time

import keras
import tensorflow as tf


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


class EpochProgress:
    """One epoch's progress: the bar (a line per epoch when stdout is not a
    terminal), its `EpochMeter`, the rows of `train_log.tsv` not yet
    written, and the target tokens per second since the last summary.

    A resumed run's bar counts the steps left from the restored one (80/80
    for the last 80 of 120), so that its count and time per step are those
    of the steps this process trained.

    Args:
        epoch: the epoch's number, from 0.
        steps: the steps of this epoch.
        done: the steps already trained in it (a resumed run).
    """

    def __init__(self, epoch, steps, done=0):
        self.epoch = epoch
        self.done_before = done
        self.meter = EpochMeter()
        self.rows = []
        self.bar = keras.utils.Progbar(
            steps - done,
            stateful_metrics=["loss", "ppl", "tok/s"],
            verbose=1 if sys.stdout.isatty() else 2,
        )
        self.restart_window()

    def restart_window(self):
        """Starts counting the tokens per second of the next summary."""
        self._window = [0.0, time.perf_counter()]

    def add(self, done, step, loss, tokens, learning_rate):
        """Counts step `step` (the `done`-th of the epoch); returns the
        tokens per second since the last summary."""
        self._window[0] += tokens
        self.meter.add(loss, tokens)
        speed = self._window[0] / max(
            time.perf_counter() - self._window[1], 1e-9
        )
        self.rows.append(
            f"{step}\t{self.epoch + 1}\t{loss:.6f}\t"
            f"{learning_rate:.6g}\t{speed:.1f}\n"
        )
        self.bar.update(
            done - self.done_before,
            [
                ("loss", self.meter.loss),
                ("ppl", self.meter.perplexity),
                ("tok/s", self.meter.tokens_per_second),
            ],
        )
        return speed

    def summary(self):
        """The epoch's closing line."""
        meter = self.meter
        return (
            f"epoch {self.epoch + 1}: {meter.tokens:,.0f} target tokens in "
            f"{meter.seconds:.1f} s of training "
            f"({meter.tokens_per_second:,.1f} tokens/s, mean loss "
            f"{meter.loss:.4f})"
        )


def write_summaries(writer, step, loss, norm, speed, learning_rate):
    """A training step's TensorBoard scalars."""
    with writer.as_default(step=step):
        tf.summary.scalar("loss", loss)
        tf.summary.scalar("perplexity", perplexity(loss))
        tf.summary.scalar("learning_rate", learning_rate)
        tf.summary.scalar("gradient_norm", float(norm.numpy()))
        tf.summary.scalar("target_tokens_per_second", speed)
