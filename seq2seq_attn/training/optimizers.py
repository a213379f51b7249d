"""Optimizers and learning-rate schedules of the papers, from Keras."""

import keras
from keras import ops

from seq2seq_attn.serialization import register


@register
class HalvingSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """Luong et al. (2015), Sec. 4.1: the initial rate for the first
    `halve_after_epochs` epochs, then halved at the start of every epoch.

    Args:
        initial_learning_rate: 1.0 in the paper.
        steps_per_epoch: updates per epoch.
        halve_after_epochs: 5 (8 with dropout).
    """

    def __init__(
        self, initial_learning_rate, steps_per_epoch, halve_after_epochs
    ):
        self.initial_learning_rate = initial_learning_rate
        self.steps_per_epoch = steps_per_epoch
        self.halve_after_epochs = halve_after_epochs

    def __call__(self, step):
        epoch = ops.floor(ops.cast(step, "float32") / self.steps_per_epoch)
        halvings = ops.maximum(epoch - self.halve_after_epochs + 1, 0.0)
        return self.initial_learning_rate * ops.power(0.5, halvings)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "steps_per_epoch": self.steps_per_epoch,
            "halve_after_epochs": self.halve_after_epochs,
        }


def make_optimizer(train, steps_per_epoch):
    """The Keras optimizer of a `TrainConfig`, with global-norm clipping.

    Bahdanau B.2: Adadelta (rho 0.95, epsilon 1e-6), gradient norm clipped
    at 1. Luong 4.1: plain SGD at 1.0, halving schedule, norm rescaled above 5.
    """
    learning_rate = train.learning_rate
    if train.schedule == "halving":
        learning_rate = HalvingSchedule(
            train.learning_rate, steps_per_epoch, train.halve_after_epochs
        )
    clip = dict(global_clipnorm=train.clip_norm) if train.clip_norm else {}
    if train.optimizer == "adadelta":
        optimizer = keras.optimizers.Adadelta(
            learning_rate, rho=train.rho, epsilon=train.epsilon, **clip
        )
    elif train.optimizer == "sgd":
        optimizer = keras.optimizers.SGD(learning_rate, **clip)
    else:
        optimizer = keras.optimizers.Adam(learning_rate, **clip)
    if train.mixed_precision == "mixed_float16":
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


def inner_optimizer(optimizer):
    """The optimizer inside a `LossScaleOptimizer` (or the optimizer)."""
    return getattr(optimizer, "inner_optimizer", optimizer)


def learning_rate(optimizer):
    """The optimizer's current learning rate, a float."""
    rate = inner_optimizer(optimizer).learning_rate
    return float(keras.ops.convert_to_numpy(rate))
