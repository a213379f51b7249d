"""An exponential moving average of the weights, kept beside the training
weights and used in their place for validation, `best/` and so the export
(Polyak and Juditsky 1992; Marian's `--exponential-smoothing`, the decay
warm-up of TensorFlow's `tf.train.ExponentialMovingAverage` with
`num_updates`). `python -m seq2seq_attn.average` is the other kind of
averaging: the mean of a run's last checkpoints, after training."""

import contextlib

import numpy as np
import tensorflow as tf


class WeightAverage(tf.Module):
    """theta_avg <- d_t theta_avg + (1 - d_t) theta after update t (counted
    from 1), d_t = min(d, (1 + t) / (10 + t)), so that the first updates'
    average is not held at the initial weights. Starts as the weights it
    averages; create it under the strategy's scope, and it checkpoints with
    the training state.

    Args:
        variables: the weights to average (the model's trainable ones).
        decay: d, in (0, 1); 0.9999 is Marian's, and a shorter run wants
            a shorter memory (1 / (1 - d) updates).
    """

    def __init__(self, variables, decay):
        super().__init__(name="weight_average")
        if not 0.0 < decay < 1.0:
            raise ValueError(f"decay must be in (0, 1), got {decay}")
        self.decay = decay
        # One writer under tf.distribute: every replica holds the same
        # weights after an update, so the first replica's average is it.
        self.averages = [
            tf.Variable(
                tf.convert_to_tensor(variable),
                trainable=False,
                name=f"average_{index}",
                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA,
            )
            for index, variable in enumerate(variables)
        ]

    def update(self, variables, update_number):
        """Moves the averages towards `variables` after update number
        `update_number` (a scalar tensor, from 1); in a replica or a
        cross-replica context."""
        t = tf.cast(update_number, tf.float32)
        decay = tf.minimum(
            tf.constant(self.decay, tf.float32), (1 + t) / (10 + t)
        )
        for average, variable in zip(self.averages, variables, strict=True):
            value = tf.cast(tf.convert_to_tensor(variable), average.dtype)
            average.assign_sub(
                (1 - tf.cast(decay, average.dtype)) * (average - value)
            )

    @contextlib.contextmanager
    def swapped_in(self, variables):
        """Inside the block `variables` hold their averages; after it (also
        after an error) their own values again."""
        kept = [np.array(variable.numpy()) for variable in variables]
        for variable, average in zip(variables, self.averages, strict=True):
            variable.assign(average.numpy())
        try:
            yield
        finally:
            for variable, value in zip(variables, kept, strict=True):
                variable.assign(value)


def averaged_in(weight_average, variables):
    """`weight_average.swapped_in(variables)`, or a block that changes
    nothing where `weight_average` is None."""
    if weight_average is None:
        return contextlib.nullcontext()
    return weight_average.swapped_in(variables)
