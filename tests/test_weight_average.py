"""The exponential moving average of the weights (`--ema_decay`): the
average the training step keeps against the same recursion in NumPy, and
the weights swapped in and out."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from test_train_step import _batch

from seq2seq_attn.config import ModelConfig, TrainConfig
from seq2seq_attn.models import build_model
from seq2seq_attn.training.checkpoints import training_state
from seq2seq_attn.training.losses import training_loss
from seq2seq_attn.training.step import make_train_step
from seq2seq_attn.training.weight_average import WeightAverage

DECAY = 0.6


def _model():
    keras.utils.set_random_seed(3)
    return build_model(
        ModelConfig(
            architecture="luong",
            source_vocab_size=30,
            target_vocab_size=31,
            embedding_dim=6,
            hidden_units=8,
            dropout=0.0,
        )
    )


def test_the_average_follows_the_weights_as_the_equation_says(rng):
    model = _model()
    optimizer = keras.optimizers.SGD(learning_rate=1.0)
    optimizer.build(model.trainable_variables)
    state = training_state(model, optimizer, ema_decay=DECAY)
    average = state["weight_average"]
    variables = model.trainable_variables
    train_step = make_train_step(
        model,
        optimizer,
        tf.distribute.get_strategy(),
        training_loss(),
        state["step"],
        weight_average=average,
    )
    expected = [v.numpy().astype(np.float64) for v in variables]
    batches = iter([_batch(rng, 4, 7, 30) for _ in range(16)])
    for t in range(1, 17):
        train_step(batches)
        # d_t = min(d, (1 + t) / (10 + t)): the warm-up, then d.
        decay = min(DECAY, (1 + t) / (10 + t))
        expected = [
            decay * e + (1 - decay) * v.numpy()
            for e, v in zip(expected, variables, strict=True)
        ]
    for e, a in zip(expected, average.averages, strict=True):
        np.testing.assert_allclose(a.numpy(), e, rtol=1e-5, atol=1e-6)
    # The average is not the weights (the test can fail).
    assert any(
        not np.allclose(a.numpy(), v.numpy(), atol=1e-4)
        for a, v in zip(average.averages, variables, strict=True)
    )


def test_swapped_in_holds_the_average_and_restores_the_weights():
    model = _model()
    variables = model.trainable_variables
    average = WeightAverage(variables, DECAY)
    own = [v.numpy().copy() for v in variables]
    for a in average.averages:
        a.assign(a + 1.0)
    with pytest.raises(RuntimeError), average.swapped_in(variables):
        for v, o in zip(variables, own, strict=True):
            np.testing.assert_array_equal(v.numpy(), o + 1.0)
        raise RuntimeError("validation failed")
    for v, o in zip(variables, own, strict=True):
        np.testing.assert_array_equal(v.numpy(), o)


@pytest.mark.parametrize("decay", [-0.1, 1.0])
def test_a_decay_outside_the_range_is_named(decay):
    with pytest.raises(ValueError, match="ema_decay must be in"):
        TrainConfig(ema_decay=decay)
