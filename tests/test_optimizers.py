import keras
import pytest

from seq2seq_attn.config.run import TrainConfig
from seq2seq_attn.training.optimizers import HalvingSchedule, make_optimizer


def test_luong_halving_schedule():
    # Luong 4.1: rate 1 for 5 epochs, then halved at the start of each epoch.
    schedule = HalvingSchedule(1.0, steps_per_epoch=10, halve_after_epochs=5)
    rates = [float(schedule(epoch * 10 + 3)) for epoch in range(8)]
    assert rates == [1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 0.25, 0.125]
    assert float(schedule(49)) == 1.0 and float(schedule(50)) == 0.5
    clone = HalvingSchedule.from_config(schedule.get_config())
    assert float(clone(63)) == 0.25


@pytest.mark.parametrize(
    "options,kind",
    [
        (
            dict(optimizer="adadelta", learning_rate=1.0),
            keras.optimizers.Adadelta,
        ),
        (
            dict(optimizer="sgd", learning_rate=1.0, schedule="halving"),
            keras.optimizers.SGD,
        ),
        (dict(optimizer="adam"), keras.optimizers.Adam),
        (
            dict(optimizer="adam", mixed_precision="mixed_float16"),
            keras.optimizers.LossScaleOptimizer,
        ),
    ],
)
def test_make_optimizer(options, kind):
    optimizer = make_optimizer(TrainConfig(**options), steps_per_epoch=100)
    assert isinstance(optimizer, kind)
    inner = getattr(optimizer, "inner_optimizer", optimizer)
    assert inner.global_clipnorm == 1.0
    if options["optimizer"] == "adadelta":
        assert (inner.rho, inner.epsilon) == (0.95, 1e-6)


def test_bad_train_values_are_named():
    with pytest.raises(ValueError, match="optimizer must be one of"):
        TrainConfig(optimizer="rmsprop")
    with pytest.raises(ValueError, match="strategy must be one of"):
        TrainConfig(strategy="tpu")
